#!/bin/sh
# Every recorded result under bench/results that is JSON parses as JSON:
# scripts (bench/compare --from-results, the paired-ratio tables in
# bench/RESULTS.md) read them back, and a sanitising edit once left 19 of
# them with an unquoted string.
set -u
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
[ -d "$src/bench/results" ] || { echo "FAIL: $src/bench/results is missing"; exit 1; }
python3 - "$src/bench/results" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
files = sorted(root.rglob("*.json"))
bad = []
for f in files:
    try:
        json.loads(f.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        bad.append("%s: %s" % (f.relative_to(root.parent.parent), e))
for b in bad:
    print("FAIL:", b)
if not files:
    print("FAIL: no JSON under", root)
    sys.exit(1)
print("%s: %d of %d JSON files parse" % ("PASS" if not bad else "FAIL", len(files) - len(bad), len(files)))
sys.exit(1 if bad else 0)
PY
