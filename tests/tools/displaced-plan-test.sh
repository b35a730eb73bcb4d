#!/bin/sh
# genx-plan --displaced-plan: Open MPI 4.1 tuned's fixed allreduce choice
# at (P, bytes) and the genx plans it is priced as (tuning/displaced.hpp),
# as text and JSON, the plan tuned runs at the element count, the refusals;
# and bench/bound-sim's Open MPI default, which reads the same table
# through this option (no simulation is run).
# Run by `make check` from the build directory (where genx-plan is built).
set -u
plan=${GENX_PLAN:-${GENX_BUILDDIR:-.}/genx-plan}
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fails=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

tool=$plan
. "$src/tests/tools/expect.sh"

# 96 ranks (tree:8x12's), 16 MiB: rabenseifner, Open MPI's halving order;
# on 12 ranks at 8 KiB, 4 elements of 2 KiB (a derived type) are fewer than
# 8: basic_linear.
expect 0 '^tuned-4.1, 96 ranks, 16M B: rabenseifner → rhd \(distance=doubling\)$' --displaced-plan -P 96 --bytes 16M
expect 0 '^also priced: rb \(root=0\), basic_linear, as tuned runs it for fewer elements than 2\^floor\(log2 P\)$' \
    --displaced-plan -P 96 --bytes 16M
expect 0 '^runs at 4194304 elements of 4 B: rhd \(distance=doubling\)$' --displaced-plan -P 96 --bytes 16M
expect 0 '^tuned-4.1, 12 ranks, 8K B: rabenseifner → ' --displaced-plan -P 12 --bytes 8K
expect 0 '^runs at 4 elements of 2048 B: rb \(root=0\)$' --displaced-plan -P 12 --bytes 8K --dtype-size 2048
# 4 ranks, 12 bytes: ring, which runs recursive doubling for 3 elements.
expect 0 '^tuned-4.1, 4 ranks, 12 B: ring → ring$' --displaced-plan -P 4 --bytes 12
expect 0 '^runs at 3 elements of 4 B: rd$' --displaced-plan -P 4 --bytes 12
expect 0 '^runs at 12 elements of 1 B: ring$' --displaced-plan -P 4 --bytes 12 --dtype-size 1
# 8 ranks, 100 bytes: recursive doubling, nothing else priced.
expect 0 '^tuned-4.1, 8 ranks, 100 B: recursive_doubling → rd$' --displaced-plan -P 8 --bytes 100
if grep -q 'also priced' "$out"; then
    echo "FAIL: recursive_doubling is priced as rd alone"; sed 's/^/    /' "$out"; fails=$((fails + 1))
fi
# 10^4 ranks: segmented_ring below 16 KiB, recursive doubling to 32 KiB.
expect 0 '^tuned-4.1, 10000 ranks, 8K B: segmented_ring → ring$' --displaced-plan -P 10000 --bytes 8K
expect 0 '^tuned-4.1, 10000 ranks, 16K B: recursive_doubling → rd$' --displaced-plan -P 10000 --bytes 16K
# 200 ranks, 64 KiB: nonoverlapping, with stand-ins.
expect 0 '^tuned-4.1, 200 ranks, 64K B: nonoverlapping → rb \(root=0\), a stand-in for tuned.s reduce and bcast trees$' \
    --displaced-plan -P 200 --bytes 64K
expect 0 '^runs at 16384 elements of 4 B: nonoverlapping, which no genx plan follows$' --displaced-plan -P 200 --bytes 64K
# JSON: one object on stdout.
expect 0 '"tuned_algorithm": "segmented_ring"' --displaced-plan -P 2 --bytes 64K --json
expect 0 '"tuned_id": 5' --displaced-plan -P 2 --bytes 64K --json
expect 0 '"algorithm": "ring"' --displaced-plan -P 2 --bytes 64K --json
expect 0 '"stand_in": true' --displaced-plan -P 200 --bytes 64K --json
expect 0 '"runs": null' --displaced-plan -P 200 --bytes 64K --json
expect 0 '"params": "distance=doubling"' --displaced-plan -P 1024 --bytes 1M --json
# Refusals (exit 2).
expect 2 'the unknown component has no decision genx knows' --displaced-plan -P 8 --displaced unknown
expect 2 '--displaced-plan takes --ranks, --bytes, --dtype-size, --displaced and --json only, not --decisions$' --displaced-plan -P 8 --decisions
expect 2 '--displaced-plan takes --ranks, --bytes, --dtype-size, --displaced and --json only, not --algorithm$' --displaced-plan -P 8 -a ring
expect 2 '--displaced-plan takes --ranks, --bytes, --dtype-size, --displaced and --json only, not --topology$' --displaced-plan -P 8 --topology switch:8
expect 2 'only, not --hosts$' --displaced-plan -P 8 --hosts 'h[0-7]'
expect 2 '--ranks must be a positive number' --displaced-plan
expect 2 'not a multiple of --dtype-size 4' --displaced-plan -P 8 --bytes 10

# bench/bound-sim's Open MPI default is this table's choice, not a copy.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$src/bench/bound-sim" "$plan" <<'PY' || fails=$((fails + 1))
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("bound_sim", sys.argv[1])
bs = importlib.util.module_from_spec(importlib.util.spec_from_loader("bound_sim", loader))
loader.exec_module(bs)
want = {(8, 1 << 20): ("rabenseifner", ("rhd", "distance=doubling")),
        (3, 65536): ("segmented_ring", ("ring", "")),
        (200, 65536): ("nonoverlapping", ("rb", "root=0")),
        (96, 4096): ("recursive_doubling", ("rd", ""))}
bad = 0
for (p, b), w in want.items():
    got = bs.ompi_tuned_allreduce(sys.argv[2], p, b)
    if got != w:
        print("FAIL: bound-sim's Open MPI default at %d ranks, %d bytes: %r, want %r" % (p, b, got, w))
        bad += 1
sys.exit(1 if bad else 0)
PY
fi

[ "$fails" -eq 0 ] && echo "genx-plan --displaced-plan: all checks passed"
exit "$fails"
