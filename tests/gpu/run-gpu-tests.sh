#!/usr/bin/env bash
# GPU tests and benchmark of genx's CUDA device-buffer support, for a node
# with an NVIDIA GPU.  Not part of make check (which has no GPU to count
# on); tests/gpu/README.md says how to run it.
#
# Usage: from a configured build directory where make check has built the
# programs,  ../tests/gpu/run-gpu-tests.sh  (or BUILD_DIR=DIR anywhere).
#
# Steps, each printing PASS, FAIL or SKIP (a step skips when what it runs
# was not built):
#   a. tests/gpu/cuda_kernel_test BUILD/libgenx-cuda.so: the CUDA library's
#      kernels against the host's
#   b. GENX_TEST_DEVICE=cuda tests/unit/genx-unit "[device]": the core's
#      device tests; then tests/gpu/device_query_cost: what asking a
#      pointer's memory space costs per call; then tests/gpu/device_rates:
#      the bus, copy, kernel and reduction figures of coll_genx_cuda_rates
#   c. gpu_allreduce_check under mpirun on 1, 2, 3 and 4 ranks, genx loaded
#      from the build tree
#   d. the benchmark (unless GENX_GPU_NO_BENCH=1): GENX_GPU_ROUNDS rounds,
#      each "genx: gpu_bench --device" (once per GENX_GPU_SITES entry) then
#      "fallback: --mca coll ^genx gpu_bench --app-staged", and per size
#      the median latency of each and their ratio
#
# Environment:
#   BUILD_DIR              build directory (default: GENX_BUILDDIR, else .)
#   GENX_CUDA_LIBRARY      libgenx-cuda.so (default: BUILD/libgenx-cuda.so,
#                          else BUILD/.libs/libgenx-cuda.so)
#   GENX_MPIRUN, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR   as tests/mpi
#   GENX_GPU_MPIRUN_ARGS   more mpirun arguments for steps c and d (e.g.
#                          --mca coll_genx_allreduce_algorithm ring)
#   GENX_GPU_TIMEOUT       seconds per mpirun (default 300)
#   GENX_GPU_NO_BENCH=1    skip step d
#   GENX_GPU_STEPS         the steps to run (default "a b c d")
#   GENX_GPU_CHECK_RANKS   rank counts of step c (default "1 2 3 4")
#   GENX_GPU_SITES         step d's genx runs, one per coll_genx_cuda_reduce
#                          value (default "auto"; "host device auto"
#                          compares where staged calls reduce)
#   GENX_GPU_FALLBACK      step d's baseline: app-staged (default: the
#                          application copies to host memory around Open
#                          MPI's allreduce) or device (Open MPI's own
#                          components on the device buffers: a CUDA-aware
#                          Open MPI, whose coll/cuda stages them)
#   GENX_GPU_BENCH_RANKS   rank counts of step d (default "2"; e.g. "2 4")
#   GENX_GPU_ROUNDS        rounds per rank count (default 5, at least 1)
#   GENX_GPU_BENCH_ARGS    gpu_bench's size and iteration options (default
#                          "-m 8:268435456 -i 200 -x 20 -I 100 -X 10": about
#                          a minute per rank count and round pair on one
#                          H200 with 2 ranks)
#   GENX_GPU_OUT           logs, raw benchmark outputs and tables (default
#                          ./gpu-results)
# Exit: 0 every step passed or skipped, 1 a step failed, 77 no GPU
# (nvidia-smi missing, failing, or listing none).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${BUILD_DIR:-${GENX_BUILDDIR:-.}}
if ! builddir=$(cd "$builddir" 2>/dev/null && pwd); then
    echo "FAIL: build directory ${BUILD_DIR:-${GENX_BUILDDIR:-.}} does not exist"
    exit 1
fi
if ! [ -f "$builddir/config.status" ]; then
    echo "FAIL: $builddir is not a configured build directory (run from one, or set BUILD_DIR)"
    exit 1
fi

# ------------------------------------------------------------- a GPU?
if ! command -v nvidia-smi > /dev/null 2>&1; then
    echo "SKIP: nvidia-smi not found (no NVIDIA driver on this machine)"
    exit 77
fi
gpus=$(nvidia-smi -L 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "SKIP: nvidia-smi -L failed (exit $rc)${gpus:+: $gpus}"
    exit 77
fi
if ! grep -q '^GPU [0-9]' <<< "$gpus"; then
    echo "SKIP: nvidia-smi -L lists no GPU${gpus:+ ($gpus)}"
    exit 77
fi

out=${GENX_GPU_OUT:-./gpu-results}
if ! mkdir -p "$out" || ! out=$(cd "$out" && pwd); then
    echo "FAIL: cannot create $out"
    exit 1
fi
limit=${GENX_GPU_TIMEOUT:-300}
# shellcheck source=tests/mpi/results.sh
. "$here/../mpi/results.sh"
say_pass() { echo "PASS: $1${2:+ ($2)}"; pass "$@"; }
skip() { echo "SKIP: $1: $2"; summary+=("SKIP  $1: $2"); }
steps=" ${GENX_GPU_STEPS:-a b c d} "
want() { [[ $steps == *" $1 "* ]]; }

echo "GPUs (nvidia-smi -L):"
while IFS= read -r line; do echo "  $line"; done <<< "$gpus"
nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n 1 |
    sed 's/^/  driver /'

cudalib=${GENX_CUDA_LIBRARY:-}
if [ -z "$cudalib" ]; then
    for c in "$builddir/libgenx-cuda.so" "$builddir/.libs/libgenx-cuda.so"; do
        if [ -e "$c" ]; then cudalib=$c; break; fi
    done
fi

# --------------------------------------------- a. the CUDA library's kernels
name="cuda_kernel_test"
prog=$builddir/tests/gpu/cuda_kernel_test
log=$out/cuda_kernel_test.log
if ! want a; then
    skip "$name" "not in GENX_GPU_STEPS"
elif ! [ -x "$prog" ]; then
    skip "$name" "$prog not built"
elif [ -z "$cudalib" ]; then
    fail "$name" "libgenx-cuda.so not found in $builddir or $builddir/.libs (set GENX_CUDA_LIBRARY)"
else
    echo "+ $prog $cudalib" > "$log"
    timeout -k 10 "$limit" "$prog" "$cudalib" >> "$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then say_pass "$name"; else fail "$name" "exit $rc" "$log"; fi
fi

# ------------------------------------------------ b. the core's device tests
name="genx-unit [device] (GENX_TEST_DEVICE=cuda)"
unit=$builddir/tests/unit/genx-unit
log=$out/genx-unit-device.log
if ! want b; then
    skip "$name" "not in GENX_GPU_STEPS"
elif ! [ -x "$unit" ]; then
    skip "$name" "$unit not built"
else
    # Catch2 v2 ends its listing with "N matching test case(s)"; its exit
    # status is that count, so the text is what is read.
    ntests=$("$unit" --list-tests "[device]" 2>&1 | sed -n 's/^\([0-9][0-9]*\) matching test case.*/\1/p')
    if [ -z "$ntests" ] || [ "$ntests" -eq 0 ]; then
        skip "$name" "genx-unit has no [device] tests"
    else
        echo "+ GENX_TEST_DEVICE=cuda GENX_CUDA_LIBRARY=$cudalib GENX_SRCDIR=$srcdir $unit [device]" > "$log"
        GENX_TEST_DEVICE=cuda GENX_CUDA_LIBRARY=$cudalib GENX_SRCDIR=$srcdir \
            timeout -k 10 "$limit" "$unit" "[device]" >> "$log" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ]; then say_pass "$name" "$ntests test cases"; else fail "$name" "exit $rc" "$log"; fi
    fi
fi

# ---------- b2. what the pointer query costs; b3. the estimate's figures
# device_query_cost: ns per pointer-space query; device_rates: the bus,
# copy, kernel and reduction figures of coll_genx_cuda_rates.
for name in device_query_cost device_rates; do
    prog=$builddir/tests/gpu/$name
    log=$out/$name.log
    if ! want b; then
        skip "$name" "not in GENX_GPU_STEPS"
    elif ! [ -x "$prog" ]; then
        skip "$name" "$prog not built"
    else
        timeout -k 10 "$limit" "$prog" "$cudalib" > "$log" 2>&1
        rc=$?
        sed 's/^/  /' "$log"
        if [ "$rc" -eq 0 ]; then say_pass "$name"; else fail "$name" "exit $rc" "$log"; fi
    fi
done

# ------------------------------------------------------------ Open MPI setup
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
ompi_info=${GENX_OMPI_INFO:-$(command -v ompi_info || true)}
if [ -z "$mpirun" ] || ! [ -x "$mpirun" ] || [ -z "$ompi_info" ] || ! [ -x "$ompi_info" ]; then
    fail "mpirun" "mpirun or ompi_info not found (set GENX_MPIRUN and GENX_OMPI_INFO): steps c and d not run"
    mpirun=""
fi
if [ -n "$mpirun" ]; then
    ompi_dir=${GENX_OMPI_COMPONENT_DIR:-$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')}
    # As tests/mpi/mpi-env.sh: root needs Open MPI's consent.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Open MPI refuses to start, even for ranks on this node only, when its
    # remote launcher (ssh or rsh) is missing, as on bare GPU images.  It is
    # never called for local ranks, so any existing program will do.
    if [ -z "${OMPI_MCA_plm_rsh_agent:-}" ] && ! command -v ssh > /dev/null 2>&1 &&
        ! command -v rsh > /dev/null 2>&1; then
        export OMPI_MCA_plm_rsh_agent=false
    fi
    # genx from the build tree first, then Open MPI's own components.
    base=(--oversubscribe --mca mca_base_component_path "$builddir/.libs:$ompi_dir")
    [ -z "$cudalib" ] || base+=(--mca coll_genx_cuda_library "$cudalib")
    # shellcheck disable=SC2206 # word splitting of the user's arguments is wanted
    extra=(${GENX_GPU_MPIRUN_ARGS:-})
    if ! [ -e "$builddir/.libs/mca_coll_genx.so" ]; then
        fail "mpirun" "$builddir/.libs/mca_coll_genx.so is missing (run make): steps c and d not run"
        mpirun=""
    fi
fi

# -------------------------------------------- c. gpu_allreduce_check on P ranks
check=$builddir/tests/gpu/gpu_allreduce_check
if [ -n "$mpirun" ] && ! want c; then
    skip "gpu_allreduce_check" "not in GENX_GPU_STEPS"
elif [ -n "$mpirun" ]; then
    for np in ${GENX_GPU_CHECK_RANKS:-1 2 3 4}; do
        name="gpu_allreduce_check P=$np"
        log=$out/gpu_allreduce_check-p$np.log
        if ! [ -x "$check" ]; then
            fail "$name" "$check not built (configure without CUDA, or make check not run)"
            continue
        fi
        cmd=("$mpirun" -np "$np" "${base[@]}" --mca coll_genx_verbose 1 "${extra[@]}" "$check")
        echo "+ ${cmd[*]}" > "$log"
        timeout -k 10 "$limit" "${cmd[@]}" >> "$log" 2>&1
        rc=$?
        line=$(grep '^gpu_allreduce_check: [0-9]* cases' "$log" | tail -n 1)
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            fail "$name" "mpirun did not finish within ${limit}s" "$log"
        elif [ "$rc" -eq 0 ] && grep -q ', 0 failures on ' <<< "$line"; then
            say_pass "$name" "${line#gpu_allreduce_check: }"
        elif grep -q '^SKIP' "$log"; then
            # nvidia-smi saw a GPU, so a rank that finds none is a failure.
            fail "$name" "$(grep -m1 '^SKIP' "$log")" "$log"
        else
            fail "$name" "exit $rc${line:+: ${line#gpu_allreduce_check: }}" "$log"
        fi
    done
fi

# ------------------------------------------------------------ d. benchmark
bench=$builddir/tests/gpu/gpu_bench
# median_table DIR SITE...: per size the median Avg latency of each
# DIR/genx-SITE-*.txt and of DIR/fallback-*.txt, and each genx median's
# ratio to the fallback's (below 1: genx faster).
median_table() {
    local dir=$1
    shift
    local files=() s
    for s in "$@"; do files+=("$dir"/genx-"$s"-*.txt); done
    awk '
    function median(m, s,    n, i, j, t, a) {
        n = cnt[m, s]
        if (n == 0) return -1
        for (i = 1; i <= n; i++) a[i] = val[m, s, i] + 0
        for (i = 2; i <= n; i++) {
            t = a[i]
            for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
            a[j + 1] = t
        }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    FNR == 1 {
        m = FILENAME
        sub(/^.*\//, "", m)
        sub(/-[0-9]+\.txt$/, "", m)
        if (!(m in known)) { known[m] = 1; if (m != "fallback") sites[++nsites] = m }
    }
    /^[0-9]/ {
        if (!(($1) in seen)) { seen[$1] = 1; order[++ns] = $1 }
        val[m, $1, ++cnt[m, $1]] = $2
    }
    END {
        printf "%-10s", "# Size"
        for (i = 1; i <= nsites; i++) printf " %16s %8s", sites[i] "(us)", "ratio"
        printf " %16s %7s\n", "fallback(us)", "rounds"
        for (k = 1; k <= ns; k++) {
            s = order[k]; f = median("fallback", s)
            printf "%-10s", s
            for (i = 1; i <= nsites; i++) {
                g = median(sites[i], s)
                printf " %16.2f %8s", g, (g >= 0 && f > 0) ? sprintf("%.3f", g / f) : "-"
            }
            printf " %16.2f %3d/%-3d\n", f, cnt[sites[1], s], cnt["fallback", s]
        }
    }' "${files[@]}" "$dir"/fallback-*.txt
}

if [ "${GENX_GPU_NO_BENCH:-0}" = 1 ] || ! want d; then
    skip "benchmark" "GENX_GPU_NO_BENCH=1 or not in GENX_GPU_STEPS"
elif [ -n "$mpirun" ]; then
    read -r -a sites <<< "${GENX_GPU_SITES:-auto}"
    sides=()
    for s in "${sites[@]}"; do sides+=("genx-$s"); done
    sides+=(fallback)
    rounds=${GENX_GPU_ROUNDS:-5}
    # shellcheck disable=SC2206
    bench_args=(${GENX_GPU_BENCH_ARGS:--m 8:268435456 -i 200 -x 20 -I 100 -X 10})
    for np in ${GENX_GPU_BENCH_RANKS:-2}; do
        name="benchmark P=$np"
        dir=$out/bench-p$np
        rm -rf "$dir" && mkdir -p "$dir"
        if ! [ -x "$bench" ]; then
            fail "$name" "$bench not built"
            continue
        fi
        bad=""
        for ((r = 1; r <= rounds; r++)); do
            # Alternating within each round, so that drift of the machine
            # (clocks, other tenants) hits both sides alike.
            for side in "${sides[@]}"; do
                if [ "$side" != fallback ]; then
                    cmd=("$mpirun" -np "$np" "${base[@]}" "${extra[@]}"
                        --mca coll_genx_cuda_reduce "${side#genx-}" "$bench" --device "${bench_args[@]}")
                else
                    cmd=("$mpirun" -np "$np" "${base[@]}" "${extra[@]}" --mca coll '^genx' "$bench"
                        "--${GENX_GPU_FALLBACK:-app-staged}" "${bench_args[@]}")
                fi
                # .txt: gpu_bench's output alone (osu_allreduce's format);
                # .err: the command line, then what went to stderr.
                f=$dir/$side-$r.txt
                err=$dir/$side-$r.err
                echo "+ ${cmd[*]}" > "$err"
                start=$SECONDS
                timeout -k 10 "$limit" "${cmd[@]}" > "$f" 2>> "$err"
                rc=$?
                if [ "$rc" -ne 0 ]; then
                    bad="$side round $r exited $rc"
                    cat "$f" >> "$err"
                    break 2
                fi
                echo "  P=$np round $r/$rounds: $side done ($((SECONDS - start)) s)"
            done
        done
        if [ -n "$bad" ]; then
            fail "$name" "$bad" "$err"
            continue
        fi
        median_table "$dir" "${sites[@]}" > "$dir/table.txt"
        say_pass "$name" "$rounds rounds; raw outputs and table in $dir"
        echo "Median Avg latency over $rounds rounds, P=$np (genx: --device on genx with"
        echo "coll_genx_cuda_reduce = each column's; fallback: --mca coll ^genx, --${GENX_GPU_FALLBACK:-app-staged};"
        echo "ratio to the fallback, below 1: genx faster):"
        sed 's/^/  /' "$dir/table.txt"
    done
fi

echo
echo "genx GPU tests (build $builddir, outputs in $out):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
