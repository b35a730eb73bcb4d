#!/usr/bin/env bash
# run-ompi5.sh: genx against Open MPI 5.0 (tests/ompi5/README.md).
#
# Builds genx in a build directory of its own with ./configure
# --with-ompi=PREFIX (an Open MPI 5.0 installed with devel headers, e.g. by
# tests/ompi5/build-ompi5.sh), runs genx's unit tests and its MPI
# integration tests there on local ranks (the scripts make check runs in
# tests/mpi, plus genx-tune's and genx-bench's, all under PREFIX's mpirun),
# then times MPI_Allreduce of genx against Open MPI's own components
# (bench/compare, local ranks, rounds alternated).  `make check` of an
# ordinary build keeps using the system's Open MPI (4.1 on Debian 12).
#
# Usage: tests/ompi5/run-ompi5.sh -p PREFIX [-b BUILDDIR] [-n NP] [-r ROUNDS]
#                                 [-m SIZES] [-c CONFIGS] [-j JOBS] [-T] [-B]
#   -p PREFIX    Open MPI 5.0's installation prefix (required)
#   -b BUILDDIR  genx's build directory (default: build-ompi5 in the source tree)
#   -n NP        ranks for the timing (default 2)
#   -r ROUNDS    alternated rounds of the timing (default 5)
#   -m SIZES     MIN:MAX bytes of the timing (default 8:4M)
#   -c CONFIGS   bench/compare configurations (default genx-auto,genx-ring,genx-rhd,ompi-default)
#   -j JOBS      make jobs (default: nproc)
#   -T           skip the tests (timing only)
#   -B           skip the timing (tests only)
# Environment: GENX_OMPI5_TESTS overrides the list of tests run.
# Results: BUILDDIR/ompi5-tests.log (make check's summary and logs),
# BUILDDIR/ompi5-compare/ (table.md, results.json, plot.svg).  Exit status:
# 0 when every test passed (or was skipped) and the timing ran.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
prefix=""
builddir=""
np=2
rounds=5
sizes=8:4M
configs=genx-auto,genx-ring,genx-rhd,ompi-default
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
run_tests=1
run_bench=1

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
while getopts "p:b:n:r:m:c:j:TBh" opt; do
    case $opt in
    p) prefix=$OPTARG ;;
    b) builddir=$OPTARG ;;
    n) np=$OPTARG ;;
    r) rounds=$OPTARG ;;
    m) sizes=$OPTARG ;;
    c) configs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    T) run_tests=0 ;;
    B) run_bench=0 ;;
    h) usage 0 ;;
    *) usage 2 >&2 ;;
    esac
done
say() { printf 'run-ompi5: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ -n "$prefix" ] || usage 2 >&2
prefix=$(cd "$prefix" && pwd)
[ -x "$prefix/bin/ompi_info" ] || die "$prefix/bin/ompi_info not found: is PREFIX an Open MPI installation?"
version=$("$prefix/bin/ompi_info" --parsable 2>/dev/null | sed -n 's/^ompi:version:full://p')
case $version in
5.0.*) ;;
*) die "$prefix holds Open MPI ${version:-of unknown version}, not 5.0" ;;
esac
builddir=${builddir:-$top/build-ompi5}
mkdir -p "$builddir"
builddir=$(cd "$builddir" && pwd)
# Open MPI 5's mpirun, ompi_info and libraries first: the test scripts and
# bench/compare find them on PATH (configure records them too).
export PATH="$prefix/bin:$PATH"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ------------------------------------------------------------ build
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
   [ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
    say "regenerating the build system (autoreconf)"
    (cd "$top" && autoreconf -fi >/dev/null)
fi
if [ ! -f "$builddir/Makefile" ] || [ "$top/configure" -nt "$builddir/config.status" ]; then
    say "configuring genx in $builddir against Open MPI $version"
    (cd "$builddir" && "$top/configure" -q --with-ompi="$prefix")
fi
grep -q '^GENX_OMPI_GLUE = 50$' "$builddir/Makefile" ||
    die "$builddir is not configured for Open MPI 5.0's glue (GENX_OMPI_GLUE in its Makefile)"
say "building genx ($jobs jobs)"
make -C "$builddir" -j "$jobs" >/dev/null

status=0
# ------------------------------------------------------------ tests
if [ "$run_tests" = 1 ]; then
    tests=${GENX_OMPI5_TESTS:-"tests/unit/genx-unit tests/mpi/run-mpi-tests.sh \
tests/mpi/run-iallreduce-tests.sh tests/mpi/run-thread-tests.sh tests/mpi/run-solo-tests.sh \
tests/mpi/run-stress.sh tests/tools/genx-tune-test.sh tests/tools/man-mca-test.sh \
tests/bench/test_genx_bench.sh"}
    say "make check against Open MPI $version: $(echo $tests)"
    log=$builddir/ompi5-tests.log
    if make -C "$builddir" -j 1 check TESTS="$tests" > "$log" 2>&1; then
        say "tests passed (summary in $log)"
    else
        status=1
        say "tests FAILED: see $log and the .log files next to each test in $builddir"
    fi
    sed -n '/^=\{10,\}/,/^=\{10,\}/p; /^\(PASS\|FAIL\|SKIP\|XFAIL\|XPASS\|ERROR\):/p' "$log" >&2 || true
fi

# ------------------------------------------------------------ timing
if [ "$run_bench" = 1 ]; then
    out=$builddir/ompi5-compare
    rm -rf "$out"
    say "timing: $configs on $np local ranks, $sizes, $rounds alternated rounds (into $out)"
    if "$top/bench/compare" --build "$builddir" -n "$np" -r "$rounds" -m "$sizes" \
        --configs "$configs" -o "$out"; then
        cat "$out/table.md"
    else
        status=1
        say "the timing failed"
    fi
fi
exit $status
