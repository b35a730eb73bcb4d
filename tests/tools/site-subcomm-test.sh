#!/bin/bash
# bench/site-subcomm without a cluster: --dry-run on the stored sites.
#
# The hosts of each K (spread: genx-cluster's round-robin across the
# leaves; first: topology order), the compare command per K (-n, --order
# with exactly those hosts, the configurations, --oracle-for genx-site,
# OUT/nK, the arguments after -- last), the genx-cluster up options the
# site's run recorded; and the refusals before any cluster: a host the
# site did not measure, another genx version, another topology, other up
# options, a host count the cluster does not have.  Writes nothing in OUT.
set -u
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${GENX_BUILDDIR:-$(pwd)}
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
command -v ompi_info >/dev/null 2>&1 || { echo "SKIP: ompi_info is not installed"; exit 77; }
if [ ! -f "$build/.libs/mca_coll_genx.so" ] || [ ! -x "$build/bench/genx-bench" ]; then
    echo "SKIP: genx is not built in $build"
    exit 77
fi
bash -n "$src/bench/site-subcomm" || fail "bash -n bench/site-subcomm"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The script runs from a copy of bench/ whose genx-cluster does only what
# needs no cluster (up --dry-run, and being loaded for its host order): any
# other call is recorded and refused, so a broken --dry-run cannot bring a
# cluster up on a machine that is timing something else.
mkdir "$tmp/bench"
cp "$src/bench/site-subcomm" "$src/bench/compare" "$tmp/bench/"
cat >"$tmp/bench/genx-cluster" <<EOF
#!/usr/bin/env python3
import sys
if __name__ == "__main__" and "--dry-run" not in sys.argv:
    open("$tmp/cluster-calls", "a").write(" ".join(sys.argv[1:]) + "\n")
    sys.exit("genx-cluster: refused in this test: " + " ".join(sys.argv[1:]))
exec(compile(open("$src/bench/genx-cluster").read(), "$src/bench/genx-cluster", "exec"))
EOF
script=$tmp/bench/site-subcomm
cp -r "$src/bench/results/site-2dc" "$tmp/2dc"
cp -r "$src/bench/results/site-tree2x4-rr" "$tmp/tree"
# The stored sites were tuned with this build's genx and Open MPI versions
# only if they still match: the dry run checks that, so the copies say so.
ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
mpi=$(ompi_info --parsable | sed -n 's/^ompi:version:full://p' | head -n 1)
for d in 2dc tree; do
    python3 - "$tmp/$d/site/site.json" "$ver" "$mpi" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["genx_version"], m["mpi_version"] = sys.argv[2], sys.argv[3]
json.dump(m, open(sys.argv[1], "w"), indent=2)
PY
done
out=$tmp/out

dry() {  # TOPOLOGY SITE OUT [ARGS]: the dry run's output in $tmp/dry, its errors in $tmp/err
    bash "$script" "$build" "$1" "$2" "$3" --dry-run "${@:4}" >"$tmp/dry" 2>"$tmp/err"
}
line_for() {  # K: the compare command of K
    grep -- " -n $1 " "$tmp/dry"
}

dry 2dc "$tmp/2dc/site" "$out" -- -r 7 || fail "dry run on 2dc: $(cat "$tmp/err")"
[ ! -e "$out" ] || fail "--dry-run created $out"
[ "$(grep -c '/bench/compare ' "$tmp/dry")" -eq 4 ] || fail "not one compare per K: $(cat "$tmp/dry")"
head -n 1 "$tmp/dry" | grep -q "genx-cluster up 2dc --name gxss[0-9]* --lifetime 43200 -q " ||
    fail "no genx-cluster up first: $(head -n 1 "$tmp/dry")"
tail -n 1 "$tmp/dry" | grep -q "genx-cluster --name gxss[0-9]* down$" || fail "no down last: $(tail -n 1 "$tmp/dry")"
for want in "3 h0,h2,h4" "5 h0,h2,h4,h6,h1" "6 h0,h2,h4,h6,h1,h3" "7 h0,h2,h4,h6,h1,h3,h5"; do
    k=${want% *} hosts=${want#* }
    l=$(line_for "$k") || fail "no compare for K=$k"
    for part in "--ppn 1 --order $hosts " "--genx-site $tmp/2dc/site " "--oracle-for genx-site " \
        "--configs genx-site,genx-ring,genx-gentree,genx-mtree,genx-butterfly,genx-rhd,genx-rd,ompi-default,tuned-ring,tuned-recursive_doubling,tuned-rabenseifner,tuned-segmented_ring,han " \
        "-o $out/n$k -m 8:16M --size-factor 8 -r 5 -r 7"; do
        case $l in *"$part"*) ;; *) fail "K=$k: no '$part' in: $l" ;; esac
    done
    case $l in *" -r 7") ;; *) fail "K=$k: the arguments after -- are not last: $l" ;; esac
done
echo "ok: 2dc, spread: K=3,5,6,7 on h0,h2,h4 ... (both datacenters from K=3), one compare each, -- args last"

dry 2dc "$tmp/2dc/site" "$out" --placement first --counts 3 || fail "--placement first: $(cat "$tmp/err")"
line_for 3 | grep -q -- "--order h0,h1,h2 " || fail "--placement first, K=3: $(line_for 3)"
dry 2dc "$tmp/2dc/site" "$out" --placement h7,h6,h0 --counts 2 --genx-plans "butterfly:group=xor,r=1,ring" ||
    fail "--placement h7,h6,h0: $(cat "$tmp/err")"
line_for 2 | grep -q -- "--order h7,h6 .*--configs genx-site,genx-butterfly:group=xor,r=1,genx-ring,ompi-default" ||
    fail "--placement h7,h6,h0 --genx-plans with parameters: $(line_for 2)"
echo "ok: --placement first (h0,h1,h2) and a host list; plan parameters split as compare splits them"

dry tree:2x4 "$tmp/tree/site" "$out" --counts 3,5 || fail "tree:2x4: $(cat "$tmp/err")"
head -n 1 "$tmp/dry" | grep -q -- " --oversub 4$" || fail "the site's --oversub 4 not used: $(head -n 1 "$tmp/dry")"
line_for 3 | grep -q -- "--order h0,h4,h1 " || fail "tree:2x4, K=3: $(line_for 3)"
echo "ok: tree:2x4: the site's up options (--oversub 4), K=3 on h0,h4,h1"

refused() {  # WHAT PATTERN ARGS...: the dry run fails before any cluster, saying PATTERN
    local what=$1 pattern=$2
    shift 2
    dry "$@" && fail "$what was accepted"
    grep -q -- "$pattern" "$tmp/err" || fail "$what: $(cat "$tmp/err")"
    ! grep -q "genx-cluster up" "$tmp/dry" || fail "$what: commands printed"
    echo "ok: refused: $what"
}
refused "another topology" "the site was tuned on 2dc" tree:2x4 "$tmp/2dc/site" "$out"
refused "other up options" "the site was tuned on a cluster brought up with '--oversub 4'" \
    tree:2x4 "$tmp/tree/site" "$out" --up-args "--oversub 2"
refused "9 hosts of 8" "not a host count from 2 to 8" 2dc "$tmp/2dc/site" "$out" --counts 3,9
refused "an unknown Open MPI configuration" "compare refused the configurations" \
    2dc "$tmp/2dc/site" "$out" --ompi-configs ompi-default,tuned-nope
python3 - "$tmp/2dc/site/site.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["hosts"] = ["h0", "h1", "h2", "h3", "h4"]
json.dump(m, open(sys.argv[1], "w"), indent=2)
PY
refused "a host the site did not measure" "K=5: hosts h6 are not among the site's" \
    2dc "$tmp/2dc/site" "$out" --counts 3,5
sed -i 's/"genx_version": "[^"]*"/"genx_version": "0.0.0-other"/' "$tmp/2dc/site/site.json"
refused "another genx version" "tuned with genx 0.0.0-other.*would not use its rules" 2dc "$tmp/2dc/site" "$out" --counts 3
[ ! -e "$tmp/cluster-calls" ] || fail "genx-cluster was called for more than a dry run: $(cat "$tmp/cluster-calls")"
echo "ok: no genx-cluster call but up --dry-run"
