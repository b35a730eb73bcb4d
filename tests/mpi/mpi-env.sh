# Shared setup of the MPI test scripts (sourced, not run): finds mpirun and
# Open MPI's component directory, checks that the component and the test
# program PROG_NAME are built, and sets
#   builddir, mpirun, limit, dso, prog, logdir, component_path, base
# (base: mpirun arguments that load genx from the build tree, before Open
# MPI's own components).  Exits 77 without mpirun, 1 when something is
# missing.  Environment: GENX_BUILDDIR, GENX_MPIRUN, GENX_OMPI_INFO,
# GENX_OMPI_COMPONENT_DIR, GENX_MPI_TIMEOUT (seconds per mpirun, default 300).
# shellcheck shell=bash
builddir=${GENX_BUILDDIR:-.}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
ompi_info=${GENX_OMPI_INFO:-$(command -v ompi_info || true)}
limit=${GENX_MPI_TIMEOUT:-300}

if [ -z "$mpirun" ] || ! [ -x "$mpirun" ]; then
    echo "SKIP: mpirun not found (install openmpi-bin or set GENX_MPIRUN)"
    exit 77
fi
if [ -z "$ompi_info" ] || ! [ -x "$ompi_info" ]; then
    echo "FAIL: ompi_info not found next to mpirun (set GENX_OMPI_INFO)"
    exit 1
fi
ompi_dir=${GENX_OMPI_COMPONENT_DIR:-$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')}
builddir=$(cd "$builddir" && pwd)
dso=$builddir/.libs/mca_coll_genx.so
prog=$builddir/tests/mpi/$PROG_NAME
for f in "$dso" "$prog"; do
    if ! [ -e "$f" ]; then
        echo "FAIL: $f is missing: run make (and make check builds $PROG_NAME) first"
        exit 1
    fi
done

# Open MPI refuses root unless told; beyond the core count it needs
# --oversubscribe.  Harmless when not root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No site directory (docs/site.md) unless a run names one with --mca
# coll_genx_site: a site installed on this machine would change the
# decisions the tests expect.
export OMPI_MCA_coll_genx_site=""

logdir=$builddir/tests/mpi/logs
mkdir -p "$logdir"
component_path="$builddir/.libs:$ompi_dir"
base=(--oversubscribe --mca mca_base_component_path "$component_path")

# run LOG NP MPIRUN-ARGS...: the test program on NP ranks, bounded by the
# timeout, its command line first in LOG (results.sh's fail shows it).
run() {
    local log=$1 np=$2
    shift 2
    echo "+ $mpirun -np $np ${base[*]} $* $prog" > "$log"
    timeout -k 10 "$limit" "$mpirun" -np "$np" "${base[@]}" "$@" "$prog" >> "$log" 2>&1
}

# genx_lines LOG: genx's own output lines, without opal_output's
# "[host:pid] " prefix and without the command line at the top of LOG.
genx_lines() {
    tail -n +2 "$1" | sed -n 's/^\[[^]]*\] //; /^genx: /p'
}
