#!/bin/bash
# One device call: genx's context check (ContextWatch) on the real driver,
# the GPU tests that cover device buffers (steps b, c on 2 ranks), and
# genx-auto on 4 and 8 local ranks (not oversubscribed) with the check,
# without any query (coll_genx_cuda=0), Open MPI's default and an A/A.
set -u
root=$(pwd); B=$root/build/gpucarry; t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup; date -u; uptime
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BUILD_DIR=$B GENX_GPU_TIMEOUT=100
stamp gpu-tests-b
GENX_GPU_STEPS="b" GENX_GPU_OUT=$OUT/b timeout 150 tests/gpu/run-gpu-tests.sh > $OUT/b.log 2>&1; echo rc=$?
grep -E "PASS|FAIL|SKIP|context|ns|# " $OUT/b.log | head -40
stamp gpu-tests-c
GENX_GPU_STEPS=c GENX_GPU_CHECK_RANKS="2" GENX_GPU_OUT=$OUT/c timeout 120 tests/gpu/run-gpu-tests.sh 2>&1 | tail -4; echo rc=${PIPESTATUS[0]}
for np in 4 8; do
  stamp compare-local$np
  timeout 200 python3 bench/compare --build $B --np $np -m 8:16M --size-factor 4 -r 7 --max-time 0.3 \
    --genx-variant nocuda:coll_genx_cuda=0 \
    --configs genx-auto,genx-auto-nocuda,ompi-default,ompi-default-again --out $OUT/local$np > $OUT/local$np.log 2>&1
  echo rc=$?
  grep "CUDA driver" $OUT/local$np/logs/genx-auto.validate.log | head -1
  sed -n '/^| size | genx-auto |/,/^$/p' $OUT/local$np/table.md
done
tar czf $OUT/raw.tgz -C $OUT local4 local8 local4.log local8.log b.log b c 2>/dev/null
uptime; stamp end
