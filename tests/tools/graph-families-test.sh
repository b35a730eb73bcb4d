#!/bin/sh
# The graph families (multitree, mtree, ring2d) on the networks the
# emulated clusters build (bench/genx-cluster's asym, 2dc and tree:2x4 with
# 4:1 uplinks, written by `up --dry-run`, which needs no root) and on the
# presets: genx-plan proves every plan with the checker, and their step
# counts stay where the docs say.  Run by `make check` from the build
# directory.
set -u
plan=${GENX_PLAN:-${GENX_BUILDDIR:-.}/genx-plan}
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cluster=$src/bench/genx-cluster
fails=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
command -v python3 >/dev/null || { echo "SKIP: needs python3 for bench/genx-cluster"; exit 77; }

# check ALG PARAMS P ARGS...: genx-plan --check passes; prints the steps.
check() {
    alg=$1 params=$2 P=$3
    shift 3
    if [ -n "$params" ]; then set -- -p "$params" "$@"; fi
    if ! "$plan" -a "$alg" -P "$P" "$@" --check --stats >"$dir/out" 2>&1 ||
        ! grep -q "^ok: allreduce for P=$P " "$dir/out"; then
        echo "FAIL: genx-plan -a $alg -P $P $*:"
        sed 's/^/    /' "$dir/out"
        fails=$((fails + 1))
        return
    fi
    sed -n 's/^steps: *//p' "$dir/out"
}

for spec in asym 2dc "tree:2x4 --oversub 4"; do
    # shellcheck disable=SC2086
    python3 "$cluster" --name check up $spec --dry-run --print slurm >"$dir/t.conf" &&
        python3 "$cluster" --name check up $spec --dry-run --print overlay >"$dir/t.json" || {
        echo "FAIL: genx-cluster up $spec --dry-run"
        fails=$((fails + 1))
        continue
    }
    hosts=$(grep -o 'h[0-9]*' "$dir/t.conf" | sort -u | wc -l)
    for alg in multitree "multitree:order=height" mtree; do
        name=${alg%%:*} params=
        [ "$name" = "$alg" ] || params=${alg#*:}
        check "$name" "$params" "$hosts" --topology "$dir/t.conf" --overlay "$dir/t.json" >/dev/null
        check "$name" "$params" "$((2 * hosts))" --topology "$dir/t.conf" --overlay "$dir/t.json" --ppn 2 >/dev/null
    done
done

# Step counts on the presets (docs/design.md): MultiTree 2 x 5 on a 4x4
# torus, 2 x 4 as translates of one tree, and 2 x 9 on a 4x4 mesh with
# order=height; ring2d 2(X-1) + 2(Y-1).
s=$(check multitree "" 16 --topology torus:4x4)
[ "$s" = 10 ] || { echo "FAIL: multitree on torus:4x4 takes '$s' steps, not 10"; fails=$((fails + 1)); }
s=$(check multitree order=height 16 --topology mesh:4x4)
[ "$s" = 18 ] || { echo "FAIL: multitree order=height on mesh:4x4 takes '$s' steps, not 18"; fails=$((fails + 1)); }
s=$(check multitree trees=translate 16 --topology torus:4x4)
[ "$s" = 8 ] || { echo "FAIL: multitree trees=translate on torus:4x4 takes '$s' steps, not 8"; fails=$((fails + 1)); }
check multitree trees=translate 60 --topology torus:3x4x5 >/dev/null
s=$(check ring2d "" 32 --topology torus:4x8)
[ "$s" = 20 ] || { echo "FAIL: ring2d on torus:4x8 takes '$s' steps, not 20"; fails=$((fails + 1)); }
check mtree "" 12 --topology "$src/tests/topology/b4.json" >/dev/null
check mtree k=1,chunks=8 12 --topology "$src/tests/topology/b4.json" >/dev/null
check multitree "" 27 --topology torus:3x3x3 >/dev/null

[ "$fails" -eq 0 ] || { echo "$fails graph-family check(s) failed"; exit 1; }
echo "PASS: graph families on the emulated clusters' networks and the presets"
