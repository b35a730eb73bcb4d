#!/usr/bin/env bash
# genx-tune --site on local ranks (make check runs this), with a small
# budget and grid so it stays short:
#   - one 4-rank run writes the whole site: site.json (checked by
#     genx-tune --check-site, which reads it as the component does),
#     topology.conf and overlay.json (genx-topo --check), rules.json
#     (--check-rules), rules.csv, rules.svg and README; no staged file is
#     left; the manifest lists this host; the README has the date and hosts;
#     progress lines and the install lines are printed;
#   - into a directory holding a file a site run did not write, it refuses
#     with exit 2, names the file and writes nothing;
#   - with --force it writes the site there and keeps the other file.
#
# Environment: GENX_BUILDDIR (default .), GENX_MPIRUN (default: PATH).
# Exit: 0 passed, 1 failed, 77 skipped (no mpirun).
set -u

builddir=${GENX_BUILDDIR:-.}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
if [ -z "$mpirun" ] || ! [ -x "$mpirun" ]; then
    echo "SKIP: mpirun not found"
    exit 77
fi
builddir=$(cd "$builddir" && pwd)
tune=$builddir/genx-tune
topo=$builddir/genx-topo
for p in "$tune" "$topo"; do
    if ! [ -x "$p" ]; then
        echo "FAIL: $p is missing: run make first"
        exit 1
    fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failed=0
fail() { echo "FAIL: $*"; failed=1; }

small=(--comm-sizes 4 --max-bytes 16K --p2p-max 16K --reduce-bytes 64K --reduce-max-k 4
       --cps-bytes 4K,16K --target 0.02 --ompi-algorithms recursive_doubling,ring)
site() { timeout 120 "$mpirun" --oversubscribe -np 4 --mca coll '^genx' "$tune" "$@"; }

if ! site --site site --max-time 20 "${small[@]}" >site.out 2>site.err; then
    cat site.out site.err
    echo "FAIL: genx-tune --site run"
    exit 1
fi
for f in site.json topology.conf overlay.json rules.json rules.csv rules.svg README; do
    [ -s "site/$f" ] || fail "--site did not write $f"
done
ls -A site | grep -q '^\.genx-site-new\.' && fail "staged files left behind: $(ls -A site)"
"$tune" --check-site site >check.out 2>&1 || fail "--check-site rejects the site: $(cat check.out)"
"$tune" --check-rules site/rules.json >/dev/null 2>&1 || fail "--check-rules rejects rules.json"
"$topo" --check site/topology.conf --overlay site/overlay.json >/dev/null 2>&1 ||
    fail "genx-topo --check rejects topology.conf with overlay.json"
host=${SLURMD_NODENAME:-$(hostname)}
python3 - site/site.json "$host" <<'PY' || fail "site.json does not describe this run"
import json, re, sys
m = json.load(open(sys.argv[1]))
ok = sys.argv[2] in m["hosts"] and m["hosts"] == sorted(set(m["hosts"]))
ok = ok and re.fullmatch(r"\d+\.\d+\.\d+", m["mpi_version"]) is not None
ok = ok and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", m["date"]) is not None
ok = ok and m["command"].startswith("genx-tune --site site ")
print(m)
sys.exit(0 if ok else 1)
PY
# Shapes nothing was measured on (rules without comm_size, covering every
# size once): each defers, or lets the model displace the displaced
# component only by its margin (docs/genx-tune.md, "Decisions").
python3 - site/rules.json <<'PY' || fail "rules.json's rules for unmeasured shapes are not fallback or fallback-incumbent model rules"
import json, sys
rest = [r for r in json.load(open(sys.argv[1]))["allreduce"] if "comm_size" not in r]
ok, lo = bool(rest), "0"
for r in rest:
    a, _, b = r["bytes"].partition("-")
    ok = ok and a == lo
    lo = b
    if r["algorithm"] != "fallback":
        ok = ok and r["algorithm"] == "model" and r["families"][0] == "fallback"
        ok = ok and len(r["families"]) >= 2 and 0.1 <= r["margin"] <= 0.5
ok = ok and lo == "inf"
print("rules for unmeasured shapes:", [(r["bytes"], r["algorithm"], r.get("families")) for r in rest])
sys.exit(0 if ok else 1)
PY
date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["date"])' site/site.json)
grep -qF "$date" site/README || fail "README lacks the date $date"
grep -qF "$host" site/README || fail "README lacks the host $host"
grep -q 'site: network (probed) done: .* elapsed, .* left of 20 s' site.err ||
    fail "no progress line for the network phase"
grep -q 'coll_genx_site = .*/site$' site.out || fail "no openmpi-mca-params.conf line printed"
grep -q 'cp -r .*/site/\. .*/genx/$' site.out || fail "no install copy line printed"

# A directory with a file a site run did not write: refused, nothing written.
mkdir other && echo mine >other/notes.txt
site --site other --max-time 20 "${small[@]}" >other.out 2>other.err
rc=$?
[ "$rc" = 2 ] || fail "--site into a directory with a foreign file: exit $rc, expected 2"
grep -q 'other: holds 1 file(s) a site run did not write (notes.txt).*--force' other.err ||
    fail "no clear refusal: $(cat other.err)"
[ "$(ls -A other)" = notes.txt ] || fail "refused run wrote into the directory: $(ls -A other)"

# --force: the site is written beside the foreign file.
if ! site --site other --force --max-time 15 "${small[@]}" >force.out 2>force.err; then
    cat force.out force.err
    fail "--site --force run"
fi
"$tune" --check-site other >/dev/null 2>&1 || fail "--force wrote no valid site"
[ -f other/notes.txt ] || fail "--force removed the foreign file"

[ "$failed" = 0 ] && echo "PASS: genx-tune --site"
exit "$failed"
