#!/usr/bin/env bash
# The layering of docs/design.md, checked on the sources: each folder's
# files may include genx headers only from the folders listed for it.  A
# new include that breaks the layering fails here with file and line.
#   common/   nothing of genx
#   plan/     common/
#   runtime/  common/ plan/
#   tuning/   common/ plan/ topology/
#   topology/ common/ plan/ (plan/ for the TopologyView it builds)
#   genx/     common/ plan/ runtime/ tuning/ topology/
#   ompi_coll_genx/  common/ genx/ (the C API only)
#   sim/      common/ plan/ runtime/ tuning/ topology/
#   tune/     common/ plan/ runtime/ tuning/ topology/ tools/ (plot.hpp)
# (so neither tuning/ nor tune/ may include ompi_coll_genx/); mpi.h only in
# runtime/'s MPI transport (runtime/mpi_*.cpp, runtime/mpi_native.hpp), the
# glue, bench/ and tests/;
# and SimGrid's headers (<simgrid/...>, <xbt/...>) only in sim/,
# tools/genx_sim.cpp and tests/sim/: nothing else may depend on SimGrid,
# the component least of all.
set -u
top=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
declare -A allowed=(
    [common]="common"
    [plan]="common plan"
    [runtime]="common plan runtime"
    [tuning]="common plan tuning topology"
    [topology]="common plan topology"
    [genx]="common plan runtime tuning topology genx"
    [ompi_coll_genx]="common genx ompi_coll_genx"
    [sim]="common plan runtime tuning topology sim"
    [tune]="common plan runtime tuning topology tune tools"
)
bad=0
checked=0
for dir in "${!allowed[@]}"; do
    [ -d "$top/$dir" ] || { echo "FAIL: $dir/ is missing"; bad=$((bad + 1)); continue; }
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        inc=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<< "$rest")
        checked=$((checked + 1))
        layer=${inc%%/*}
        [ "$layer" = "$inc" ] && continue  # same-folder or generated header
        [ -d "$top/$layer" ] || continue   # not a genx folder
        case " ${allowed[$dir]} " in
            *" $layer "*) ;;
            *) echo "FAIL: ${file#"$top"/}:$line: $dir/ includes $inc ($dir/ may include: ${allowed[$dir]})"
               bad=$((bad + 1)) ;;
        esac
    done < <(grep -rn '#include "' "$top/$dir" --include='*.c' --include='*.h' --include='*.cpp' --include='*.hpp')
done
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    rel=${file#"$top"/}
    case "$rel" in
        sim/*|tools/genx_sim.cpp|tests/sim/*) ;;
        *) echo "FAIL: $rel:${rest%%:*}: includes SimGrid (only sim/, tools/genx_sim.cpp and tests/sim/ may)"
           bad=$((bad + 1)) ;;
    esac
done < <(grep -rnE '#include <(simgrid|xbt)/' "$top" --include='*.c' --include='*.h' --include='*.cpp' \
             --include='*.hpp' --include='*.cu' --exclude-dir=build --exclude-dir='build-*' --exclude-dir=.git)
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    rel=${file#"$top"/}
    case "$rel" in
        runtime/mpi_*.cpp|runtime/mpi_native.hpp|ompi_coll_genx/*|bench/*|tests/*) ;;
        *) echo "FAIL: $rel:${rest%%:*}: includes mpi.h (only runtime/mpi_*.cpp and runtime/mpi_native.hpp, the glue, bench/ and tests/ may; the tools use runtime/mpi_comm.hpp)"
           bad=$((bad + 1)) ;;
    esac
done < <(grep -rnE '#include [<"]mpi\.h[>"]' "$top" --include='*.c' --include='*.h' --include='*.cpp' \
             --include='*.hpp' --include='*.cu' --exclude-dir=build --exclude-dir='build-*' --exclude-dir=.git)
if [ "$checked" -lt 50 ]; then
    echo "FAIL: only $checked includes found under $top; wrong source directory?"
    exit 1
fi
[ "$bad" -eq 0 ] && echo "layering: $checked includes checked, all within their layer's rules"
exit "$bad"
