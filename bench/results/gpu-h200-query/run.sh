#!/bin/bash
# One device call: what a cheaper memory-space test could cost, and
# genx-auto on 4 local ranks (not oversubscribed) with and without the
# pointer query, against Open MPI's default and an A/A control.
set -u
root=$(pwd); B=$root/build/gpucarry; t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup; date -u; nvidia-smi -L; uptime
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
stamp query-cost
timeout 60 $B/tests/gpu/device_query_cost $B/libgenx-cuda.so 2>&1 | tee $OUT/query-cost.txt
stamp compare-local4
timeout 300 python3 bench/compare --build $B --np 4 -m 8:16M --size-factor 4 -r 7 --max-time 0.3 \
  --genx-variant nocuda:coll_genx_cuda=0 \
  --configs genx-auto,genx-auto-nocuda,ompi-default,ompi-default-again --out $OUT/local4 > $OUT/local4.log 2>&1
echo rc=$?
sed -n '/^| size | genx-auto |/,/^$/p' $OUT/local4/table.md
tar czf $OUT/raw.tgz -C $OUT local4 local4.log query-cost.txt
uptime; stamp end
