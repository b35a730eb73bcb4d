#!/bin/bash
# One device call: GPU regression at this commit, and a probe of the
# 8 B-16 KiB latency floor (~165-220 us) of GPU runs 1-4.
set -u
root=$(pwd); B=$root/build/gpucarry; t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup; date; nvidia-smi -L; mpirun --version | head -1; nproc
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BUILD_DIR=$B GENX_GPU_TIMEOUT=150
stamp ab
GENX_GPU_STEPS="a b" GENX_GPU_OUT=$OUT/ab timeout 200 tests/gpu/run-gpu-tests.sh 2>&1 | tail -9; echo rc=${PIPESTATUS[0]}
stamp c-default
GENX_GPU_STEPS=c GENX_GPU_CHECK_RANKS="1 2 3 4" GENX_GPU_OUT=$OUT/c-default timeout 240 tests/gpu/run-gpu-tests.sh 2>&1 | tail -7; echo rc=${PIPESTATUS[0]}
# The floor: Open MPI alone (--mca coll ^genx), the application staging by
# hand, 1 and 2 ranks, and two 1-rank jobs at once (two processes sharing
# the GPU without MPI between them); host-memory MPI_Allreduce on 2 ranks.
P=$OUT/floor; mkdir -p $P
MR="mpirun --bind-to none --mca coll ^genx"
GB=$B/tests/gpu/gpu_bench
ARGS="-m 8:262144 -i 200 -x 20"
for r in 1 2 3; do
  stamp floor-round-$r
  timeout 60 $MR -np 1 $GB --app-staged $ARGS > $P/p1-$r.txt 2>&1
  timeout 60 $MR -np 1 $GB --app-staged $ARGS > $P/p1x2a-$r.txt 2>&1 &
  timeout 60 $MR -np 1 $GB --app-staged $ARGS > $P/p1x2b-$r.txt 2>&1
  wait
  timeout 60 $MR -np 2 $GB --app-staged $ARGS > $P/p2-$r.txt 2>&1
  timeout 60 $MR -np 2 $B/bench/genx-bench -m 8:262144 -i 2000 -x 200 > $P/host-p2-$r.txt 2>&1
done
for f in p1 p1x2a p1x2b p2 host-p2; do echo "--- $f: size, avg us of rounds 1..3"; awk '$1 ~ /^[0-9]+$/ {v[$1] = v[$1] " " $2; if (!($1 in o)) {o[$1]; k[++n] = $1}} END {for (i = 1; i <= n; i++) print k[i] v[k[i]]}' $P/$f-1.txt $P/$f-2.txt $P/$f-3.txt; done
stamp bench-p2
GENX_GPU_STEPS=d GENX_GPU_ROUNDS=5 GENX_GPU_BENCH_ARGS="-m 8:262144 -i 200 -x 20" GENX_GPU_OUT=$OUT/d timeout 200 tests/gpu/run-gpu-tests.sh 2>&1 | tail -22; echo rc=${PIPESTATUS[0]}
stamp end
