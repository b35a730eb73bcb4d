#!/bin/bash
# One device call: genx on local ranks that are NOT oversubscribed (16 cores):
# the small-message table at P = 4, 7, 8 and the safe-defaults bar at P = 4, 8.
set -u
root=$(pwd); B=$root/build/gpucarry; t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup; date -u; mpirun --version | head -1; nproc; python3 --version; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)'
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
uptime
stamp small-messages
timeout 330 bench/small-messages $B $OUT/sm 5 local:4 local:7 local:8
stamp safe-defaults
timeout 150 bench/safe-defaults $B $OUT/sd 5 local:4 local:8
uptime
tar czf $OUT/raw.tgz -C $OUT sm sd 2>/dev/null; ls -la $OUT
stamp end
