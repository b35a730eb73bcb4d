#!/usr/bin/env bash
# valgrind memcheck on short MPI runs through the (uninstrumented) component.
#
# allreduce_check runs under mpirun with every rank under valgrind and
# mca_coll_genx.so loaded from the build tree.  A run fails when
#   - allreduce_check does not pass, or genx did not run the algorithm (so
#     that a component that failed to load cannot pass unseen),
#   - a rank's valgrind log has an error or a definite leak with a genx frame
#     (mca_coll_genx.so, genx's functions or sources: check-reports.py), or
#     a log has no ERROR SUMMARY (the rank did not finish under valgrind).
# Errors elsewhere (Open MPI, PMIx, hwloc, libevent) are counted, not
# failed; valgrind.supp hides the known ones of Open MPI 4.1.4 on Debian 12.
#
# Usage: tests/sanitize/run-valgrind.sh [BUILDDIR]   (default: build)
#   BUILDDIR must be a build without --enable-sanitizers.
# Environment:
#   GENX_VALGRIND_RUNS      "NP ALGORITHM [PARAMS]" entries separated by ';'
#                           (default: "2 ring segment=4K;3 butterfly r=1;4 auto;
#                           3 defaults"; make check: "3 butterfly r=1")
#   GENX_VALGRIND_TIMEOUT   seconds per mpirun (default 240)
#   GENX_MPIRUN, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR, GENX_BUILDDIR
#                           as for run-mpi-tests.sh
#   GENX_CHECK_LONG         0 (make check): the butterfly run only (about 20 s;
#                           the four take a minute and a half of both cores);
#                           make check-long, ./dev.sh valgrind and a run by
#                           hand leave it unset or 1: all four
# Exit: 0 clean, 1 a failure, 77 skipped (no valgrind, no mpirun, or a build
# with --enable-sanitizers).  make check and make check-long run it.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${1:-${GENX_BUILDDIR:-$top/build}}
limit=${GENX_VALGRIND_TIMEOUT:-240}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
ompi_info=${GENX_OMPI_INFO:-$(command -v ompi_info || true)}
checker=$here/check-reports.py
supp=$here/valgrind.supp

if ! command -v valgrind > /dev/null; then
    echo "SKIP: valgrind not found (install the Debian package valgrind)"
    exit 77
fi
if [ -z "$mpirun" ] || ! [ -x "$mpirun" ]; then
    echo "SKIP: mpirun not found (install openmpi-bin or set GENX_MPIRUN)"
    exit 77
fi
die() { echo "FAIL: $*"; exit 1; }
[ -x "$ompi_info" ] || die "ompi_info not found (set GENX_OMPI_INFO)"
command -v python3 > /dev/null || die "python3 is needed for check-reports.py"
builddir=$(cd "$builddir" && pwd) || die "no build directory"
dso=$builddir/.libs/mca_coll_genx.so
prog=$builddir/tests/mpi/allreduce_check
for f in "$dso" "$prog"; do
    [ -e "$f" ] || die "$f is missing: run make and make check TESTS= first"
done
if readelf -d "$dso" | grep -q 'NEEDED.*libasan'; then
    echo "SKIP: $dso is built with --enable-sanitizers; valgrind needs an uninstrumented build"
    exit 77
fi
ompi_dir=${GENX_OMPI_COMPONENT_DIR:-$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
logdir=$builddir/tests/sanitize/valgrind-logs
rm -rf "$logdir"
mkdir -p "$logdir"
component_path="$builddir/.libs:$ompi_dir"

# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/../mpi/results.sh"

all_runs="2 ring segment=4K;3 butterfly r=1;4 auto;3 defaults"
[ "${GENX_CHECK_LONG:-1}" != 0 ] || all_runs="3 butterfly r=1"
IFS=';' read -r -a runs <<< "${GENX_VALGRIND_RUNS:-$all_runs}"
for spec in "${runs[@]}"; do
    read -r np alg params <<< "$spec"
    params=${params:-}
    name="P=$np $alg${params:+ $params} under valgrind"
    prefix=$logdir/p$np-$alg${params:+-${params//[=,]/_}}
    args=(--mca coll_genx_verbose 1)
    # auto: genx chooses, with a rules file that lets the model pick among
    # every family at every size (the built-in defaults would leave one
    # node's calls to tuned and run nothing of genx's).
    # defaults: the built-in defaults, which on one node defer every size:
    # genx hands the communicator's slots back to tuned and libnbc at the
    # first call (the reference counts of both modules change hands).
    if [ "$alg" = auto ]; then
        echo '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model"}]}' > "$logdir/model-rules.json"
        args+=(--mca coll_genx_rules "$logdir/model-rules.json")
    elif [ "$alg" = defaults ]; then
        :
    else
        args+=(--mca coll_genx_allreduce_algorithm "$alg")
    fi
    [ -z "$params" ] || args+=(--mca coll_genx_allreduce_params "$params")
    # --fullpath-after= prints whole source paths, so that genx's sources
    # are told from Open MPI's files of the same name.  --keep-debuginfo:
    # Open MPI dlopens and dlcloses components, and a later one can be
    # mapped where an earlier one was; without it a leak record (printed at
    # exit) is symbolized with whatever was mapped there last, which
    # attributed leaks of another component's constructors to genx.  No
    # --error-exitcode: a rank exiting non-zero over Open MPI's own leaks
    # makes mpirun kill the others before valgrind writes their summaries
    # (seen as a log without ERROR SUMMARY); the verdict comes from the logs.
    cmd=("$mpirun" -np "$np" --oversubscribe --mca mca_base_component_path "$component_path"
        "${args[@]}"
        valgrind --tool=memcheck --leak-check=full
        --show-leak-kinds=definite --errors-for-leak-kinds=definite
        --fullpath-after= --keep-debuginfo=yes --num-callers=30 --suppressions="$supp"
        --log-file="$prefix.vg.%p" "$prog")
    echo "+ ${cmd[*]}" > "$prefix.out"
    start=$SECONDS
    timeout -k 10 "$limit" "${cmd[@]}" >> "$prefix.out" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    shopt -s nullglob
    logs=("$prefix".vg.*)
    shopt -u nullglob
    verdict=""
    crc=0
    if [ ${#logs[@]} -ne "$np" ]; then
        verdict="expected $np valgrind logs, found ${#logs[@]}"
        crc=1
    else
        verdict=$(python3 "$checker" --srcdir "$top" valgrind "${logs[@]}")
        crc=$?
    fi
    echo "$verdict" > "$prefix.check"
    ran=$(tail -n +2 "$prefix.out" | sed -n 's/^\[[^]]*\] //; /^genx: /p' | grep -v fallback |
        case $alg in
            auto) grep -c ' ranks: ' ;;
            defaults) grep -c 'genx steps aside' ;;
            *) grep -c "\b$alg\b" ;;
        esac)
    if [ "$crc" -ne 0 ]; then
        fail "$name" "valgrind found errors in genx code: $(tail -n 1 <<< "$verdict")" "$prefix.check"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$prefix.out"
    elif ! grep -q '^allreduce_check: PASS' "$prefix.out"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$prefix.out"
    elif [ "$ran" -eq 0 ]; then
        fail "$name" "no genx line shows genx running $alg: was the component loaded?" "$prefix.out"
    else
        pass "$name" "${secs}s, exit $rc; $(tail -n 1 <<< "$verdict")"
    fi
done

echo
echo "genx under valgrind memcheck ($builddir):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
