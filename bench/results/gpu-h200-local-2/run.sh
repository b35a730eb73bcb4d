#!/bin/bash
# One device call: the small-message table on 4, 7 and 8 local ranks (not
# oversubscribed) with the context check, and one-rank communicators
# taking any forced algorithm.
set -u
root=$(pwd); B=$root/build/gpucarry; t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup; date -u; uptime
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 200 bench/small-messages $B $OUT/sm 5 local:4 local:7 local:8
for n in 4 7 8; do grep -h "CUDA driver" $OUT/sm/local$n/logs/genx-auto.validate.log | head -1; grep -A3 "^| size | genx-auto |" $OUT/sm/local$n/table.md | head -0; grep -c "rows discarded" $OUT/sm/local$n/results.json; done
tar czf $OUT/raw.tgz -C $OUT sm
uptime; stamp end
