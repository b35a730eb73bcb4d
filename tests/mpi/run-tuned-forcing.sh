#!/usr/bin/env bash
# Open MPI's allreduce algorithms forced through MPI_T (runtime/mpi_tuned.hpp,
# what genx-tune --ompi-algorithms times) really run as forced:
# tuned_forcing_check on 4 ranks without genx.
# Environment: GENX_BUILDDIR (default .), GENX_MPIRUN (default: PATH).
# Exit: 0 passed, 1 failed, 77 skipped (no mpirun, or tuned cannot be forced).
set -u
builddir=${GENX_BUILDDIR:-.}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
if [ -z "$mpirun" ] || ! [ -x "$mpirun" ]; then
    echo "SKIP: mpirun not found"
    exit 77
fi
prog=$builddir/tests/mpi/tuned_forcing_check
if ! [ -x "$prog" ]; then
    echo "FAIL: $prog is missing: run make check first"
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 120 "$mpirun" -np 4 --oversubscribe --mca coll '^genx' "$prog"
