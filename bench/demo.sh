#!/usr/bin/env bash
# The README's demo: genx against Open MPI's default allreduce on an
# emulated tree:2x4 cluster (2 leaf switches of 4 hosts, one rank per host),
# or on 4 local ranks, with a message, where network namespaces are not
# available (not root, or a kernel/container without them).
#   bench/demo.sh BUILD_DIR [more bench/compare options]
# Results (table.md, plot.svg, results.json, logs) go to BUILD_DIR/demo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: demo.sh BUILD_DIR [compare options]}
shift
build=$(cd "$build" && pwd)
configs=ompi-default
if [ -e "$build/.libs/mca_coll_genx.so" ]; then
    configs=genx-auto,ompi-default
else
    echo "demo: genx's component is not built in $build; showing Open MPI alone" >&2
fi
exec python3 "$here/compare" --build "$build" --topology tree:2x4 --fallback-local \
    --configs "$configs" --sizes 8:4M --rounds 5 --max-time 0.3 --timeout 300 \
    --out "$build/demo" "$@"
