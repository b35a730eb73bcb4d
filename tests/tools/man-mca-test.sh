#!/usr/bin/env bash
# genx(7) documents exactly the MCA parameters the component registers:
# every mca_base_component_var_register(c, "NAME", ...) in ompi_coll_genx/
# has a ".B coll_genx_NAME" entry under MCA PARAMETERS, and every such entry
# is registered.  The check is proven able to fail on a copy of the page
# with one parameter's entry removed, and on one with a planted entry.
set -u
srcdir=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check PAGE: compares PAGE with the registered names; prints what differs.
check() {
    python3 - "$1" "$srcdir"/ompi_coll_genx/*.c <<'PY'
import re, sys
page, sources = sys.argv[1], sys.argv[2:]
registered = set()
for f in sources:
    registered |= set(re.findall(r'mca_base_component_var_register\s*\(\s*\w+\s*,\s*"(\w+)"',
                                 open(f, encoding="utf-8").read()))
if not registered:
    print("FAIL: no mca_base_component_var_register(c, \"NAME\", ...) found in ompi_coll_genx/*.c")
    sys.exit(1)
documented, section = set(), ""
for line in open(page, encoding="utf-8"):
    if line.startswith(".SH"):
        section = line[3:].strip().strip('"')
    elif section == "MCA PARAMETERS":
        m = re.match(r'\.B\s+coll_genx_(\w+)', line)
        if m:
            documented.add(m.group(1))
bad = False
for n in sorted(registered - documented):
    print("FAIL: coll_genx_%s is registered but %s does not document it (.B coll_genx_%s under MCA PARAMETERS)" % (n, page, n))
    bad = True
for n in sorted(documented - registered):
    print("FAIL: %s documents coll_genx_%s, which the component does not register" % (page, n))
    bad = True
if bad:
    sys.exit(1)
print("ok: %s documents the %d registered parameters: %s" % (page, len(registered), " ".join(sorted(registered))))
PY
}

check "$srcdir/man/genx.7" || exit 1

# The check can fail: remove the entry of the last documented parameter...
last=$(sed -n '/^\.SH MCA PARAMETERS/,/^\.SH [^M]/p' "$srcdir/man/genx.7" | grep -o '^\.B coll_genx_[a-z_]*' | tail -1 | cut -d' ' -f2)
[ -n "$last" ] || { echo "FAIL: no .B coll_genx_ entry under MCA PARAMETERS"; exit 1; }
grep -v "^\.B $last\b" "$srcdir/man/genx.7" >"$tmp/removed.7"
if out=$(check "$tmp/removed.7"); then
    echo "FAIL: a copy of genx.7 without $last was accepted: $out"; exit 1
fi
grep -q "FAIL: $last is registered" <<<"$out" || { echo "FAIL: removing $last was not named: $out"; exit 1; }
# ... and plant one the component does not register.
sed '/^\.SH MCA PARAMETERS/a .TP\n.B coll_genx_no_such_parameter\nPlanted.' "$srcdir/man/genx.7" >"$tmp/planted.7"
if out=$(check "$tmp/planted.7"); then
    echo "FAIL: a copy of genx.7 documenting coll_genx_no_such_parameter was accepted: $out"; exit 1
fi
grep -q "documents coll_genx_no_such_parameter" <<<"$out" || { echo "FAIL: the planted parameter was not named: $out"; exit 1; }

# genx(7) points to the rules file format.
grep -q '^\.BR genx\\-rules (5)' "$srcdir/man/genx.7" || { echo "FAIL: genx.7 does not point to genx-rules(5)"; exit 1; }
echo "PASS: genx.7 and the registered MCA parameters agree; a removed and a planted parameter are caught"
