#!/usr/bin/env bash
# AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer on genx.
#
# Needs a build configured with --enable-sanitizers (./dev.sh sanitize makes
# one in build-sanitize/ and runs this script on it).  It runs
#   1. the unit tests (genx-unit): every report fails, leaks included;
#   2. allreduce_check under mpirun on a few P with ring, butterfly, hcps,
#      rhd, rb, cps forced and with auto, the instrumented component loaded
#      from the build tree.  Open MPI and allreduce_check are not
#      instrumented, so the ranks get libasan through LD_PRELOAD (passed
#      with mpirun -x): the ASan runtime must come first in the process.
#      Each run must pass allreduce_check, show genx running the algorithm
#      (proof that the instrumented component was loaded and used), and
#      leave no sanitizer report with a genx frame (check-reports.py).
#      Reports elsewhere (Open MPI, PMIx, hwloc) are counted, not failed;
#      Open MPI's own known leaks are suppressed by lsan.supp.
#
# Usage: tests/sanitize/run-sanitizers.sh [BUILDDIR]   (default: build-sanitize)
# Environment:
#   GENX_SANITIZE_TIMEOUT   seconds per program run (default 300)
#   GENX_SANITIZE_QUICK=1   only P=3 ring and P=4 auto for the MPI part
#   GENX_MPIRUN, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR   as run-mpi-tests.sh
# Logs: BUILDDIR/tests/sanitize/logs.  Exit: 0 clean, 1 a failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${1:-${GENX_BUILDDIR:-$top/build-sanitize}}
limit=${GENX_SANITIZE_TIMEOUT:-300}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
ompi_info=${GENX_OMPI_INFO:-$(command -v ompi_info || true)}
checker=$here/check-reports.py
supp=$here/lsan.supp

die() { echo "run-sanitizers: $*" >&2; exit 1; }

[ -d "$builddir" ] || die "no build directory $builddir (./dev.sh sanitize makes one)"
builddir=$(cd "$builddir" && pwd)
dso=$builddir/.libs/mca_coll_genx.so
unit=$builddir/tests/unit/genx-unit
prog=$builddir/tests/mpi/allreduce_check
for f in "$dso" "$unit" "$prog"; do
    [ -e "$f" ] || die "$f is missing: build with make and make check TESTS= first"
done
if ! readelf -d "$dso" | grep -q 'NEEDED.*libasan'; then
    die "$dso is not instrumented (no libasan among its libraries): configure with --enable-sanitizers"
fi
libasan=$(sed -n 's/^GENX_LIBASAN = //p' "$builddir/Makefile")
[ -n "$libasan" ] || libasan=$(${CXX:-g++} -print-file-name=libasan.so)
[ -f "$libasan" ] || die "libasan not found ($libasan)"
[ -x "$mpirun" ] || die "mpirun not found (install openmpi-bin or set GENX_MPIRUN)"
[ -x "$ompi_info" ] || die "ompi_info not found (set GENX_OMPI_INFO)"
command -v python3 > /dev/null || die "python3 is needed for check-reports.py"
ompi_dir=${GENX_OMPI_COMPONENT_DIR:-$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')}

logdir=$builddir/tests/sanitize/logs
rm -rf "$logdir"
mkdir -p "$logdir"
# Keeps mca_coll_genx.so mapped after MPI_Finalize, so that LeakSanitizer
# can name genx's frames (no-dlclose.c says why).
nodlclose=$builddir/tests/sanitize/no-dlclose.so
${CC:-gcc} -shared -fPIC -O2 -o "$nodlclose" "$here/no-dlclose.c" || die "cannot compile no-dlclose.c"

# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/../mpi/results.sh"

# Sanitizer settings.  ASan errors abort the process (abort_on_error), so
# a run with one fails whoever is at fault.  Leak records do not change the
# exit status (exitcode=0; errors still abort): check-reports.py decides
# from the logs, failing genx's and counting Open MPI's.  UB is not
# recoverable (-fno-sanitize-recover=undefined) and exits 1.  Each runtime
# writes one log per process: NAME.asan.PID and NAME.ubsan.PID.
asan_options() { # LOGPREFIX
    echo "abort_on_error=1:exitcode=0:detect_leaks=1:log_path=$1.asan:fast_unwind_on_malloc=0:malloc_context_size=30"
}
ubsan_options() {
    echo "print_stacktrace=1:halt_on_error=1:log_path=$1.ubsan"
}
lsan_options="suppressions=$supp:print_suppressions=1"

# checker NAME PREFIX: no genx report in the logs of PREFIX; prints the
# checker's summary line.  Returns 1 on a genx report.
check_logs() {
    local -a logs=()
    local f
    for f in "$2".asan.* "$2".ubsan.*; do
        [ -e "$f" ] && logs+=("$f")
    done
    if [ ${#logs[@]} -eq 0 ]; then
        echo "asan: no sanitizer output (no report)"
        return 0
    fi
    python3 "$checker" --srcdir "$top" asan "${logs[@]}"
}

# ----------------------------------------------------------- unit tests
# Everything in genx-unit is genx's: any report at all fails, leaks too
# (LeakSanitizer's default exit code 23).
name="genx-unit under ASan+UBSan"
prefix=$logdir/unit
echo "+ $unit" > "$prefix.out"
start=$SECONDS
timeout -k 10 "$limit" env ASAN_OPTIONS="detect_leaks=1:log_path=$prefix.asan" \
    UBSAN_OPTIONS="$(ubsan_options "$prefix")" "$unit" >> "$prefix.out" 2>&1
rc=$?
secs=$((SECONDS - start))
reports=$(cat "$prefix".asan.* "$prefix".ubsan.* 2>/dev/null | grep -c -E 'ERROR: (Address|Leak)Sanitizer|runtime error:')
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "$name" "did not finish within ${limit}s" "$prefix.out"
elif [ "$reports" -ne 0 ]; then
    fail "$name" "$reports sanitizer report(s), exit $rc"
    cat "$prefix".asan.* "$prefix".ubsan.* 2>/dev/null | head -n 60 | sed 's/^/    | /'
elif [ "$rc" -ne 0 ]; then
    fail "$name" "exit $rc" "$prefix.out"
else
    pass "$name" "${secs}s; $(grep -E '^All tests passed|test cases' "$prefix.out" | tail -n 1)"
fi

# ------------------------------------------------------ MPI integration
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
component_path="$builddir/.libs:$ompi_dir"

# run_mpi NP ALGORITHM PARAMS: allreduce_check on NP ranks with ALGORITHM
# forced (auto: genx decides) and the sanitizer runtime in every rank.
run_mpi() {
    local np=$1 alg=$2 params=$3
    local name="P=$np $alg${params:+ $params}"
    local prefix=$logdir/mpi-p$np-$alg${params:+-${params//[=,]/_}}
    local -a args=(--mca coll_genx_verbose 1)
    # auto: genx chooses, with a rules file that lets the model pick among
    # every family at every size (the built-in defaults would leave one
    # node's calls to tuned and run nothing of genx's).
    if [ "$alg" = auto ]; then
        echo '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model"}]}' > "$logdir/model-rules.json"
        args+=(--mca coll_genx_rules "$logdir/model-rules.json")
    else
        args+=(--mca coll_genx_allreduce_algorithm "$alg")
    fi
    [ -z "$params" ] || args+=(--mca coll_genx_allreduce_params "$params")
    local -a cmd=("$mpirun" -np "$np" --oversubscribe
        --mca mca_base_component_path "$component_path" "${args[@]}"
        -x LD_PRELOAD="$libasan:$nodlclose"
        -x ASAN_OPTIONS="$(asan_options "$prefix")"
        -x LSAN_OPTIONS="$lsan_options"
        -x UBSAN_OPTIONS="$(ubsan_options "$prefix")"
        "$prog")
    echo "+ ${cmd[*]}" > "$prefix.out"
    local start=$SECONDS
    timeout -k 10 "$limit" "${cmd[@]}" >> "$prefix.out" 2>&1
    local rc=$?
    local secs=$((SECONDS - start))
    local verdict
    verdict=$(check_logs "$name" "$prefix")
    local crc=$?
    echo "$verdict" > "$prefix.check"
    # genx's own lines, without opal_output's "[host:pid] " prefix.
    local ran
    if [ "$alg" = auto ]; then
        ran=$(tail -n +2 "$prefix.out" | sed -n 's/^\[[^]]*\] //; /^genx: /p' | grep -v fallback | grep -c ' ranks: ')
    else
        ran=$(tail -n +2 "$prefix.out" | sed -n 's/^\[[^]]*\] //; /^genx: /p' | grep -v fallback | grep -c "\b$alg\b")
    fi
    if [ "$crc" -ne 0 ]; then
        fail "$name" "sanitizer report(s) in genx code" "$prefix.check"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$prefix.out"
    elif [ "$rc" -ne 0 ] || ! grep -q '^allreduce_check: PASS' "$prefix.out"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$prefix.out"
    elif [ "$ran" -eq 0 ]; then
        fail "$name" "no genx line shows genx running $alg: was the instrumented component loaded?" "$prefix.out"
    else
        pass "$name" "${secs}s; $(tail -n 1 <<< "$verdict")"
    fi
}

if [ "${GENX_SANITIZE_QUICK:-0}" = 1 ]; then
    runs=("3 ring" "4 auto")
else
    runs=("2 ring" "3 ring" "5 butterfly r=2" "8 butterfly group=xor,r=3" "6 butterfly r=0"
        "6 hcps factors=3x2" "5 rhd" "4 rb root=0" "4 cps" "3 auto" "7 auto")
fi
for spec in "${runs[@]}"; do
    read -r np alg params <<< "$spec"
    run_mpi "$np" "$alg" "${params:-}"
done

# Totals over every rank of every MPI run (what lsan.supp hid, and what
# was left outside genx).
shopt -s nullglob
all_logs=("$logdir"/mpi-*.asan.* "$logdir"/mpi-*.ubsan.*)
shopt -u nullglob
totals="no sanitizer output"
[ ${#all_logs[@]} -eq 0 ] || totals=$(python3 "$checker" --srcdir "$top" asan "${all_logs[@]}" | tail -n 2)

echo
echo "genx sanitizer runs ($builddir, libasan $libasan):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  all MPI runs:"
sed 's/^/    /' <<< "$totals"
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
