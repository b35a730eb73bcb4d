#!/usr/bin/env bash
# Random stress of the built component (make check runs this): the seeded
# allreduce program generator tests/mpi/allreduce_stress (blocking and
# non-blocking calls interleaved, random counts, types, ops, in place or
# not, communicators split, duplicated and freed mid-run; every element
# checked against a locally computed exact result) under mpirun, with genx
# loaded from the build tree as in run-mpi-tests.sh:
#   - genx choosing by itself: with its built-in defaults (which leave every
#     call on one node to the displaced component: the fallback lines must
#     say so) and with a rules file that lets the model choose among all
#     families at every size ("model": genx must run plans); and each family
#     forced in turn (ring,
#     ring with small segments, butterfly r=0 and r=1, rb, cps, hcps, rhd)
#     at P = 3 and 4 (oversubscribed); every run must pass and, for a forced
#     family, genx's verbose lines must show that family running (it falls
#     back by itself on communicators it cannot serve, which is fine);
#   - the test can fail: a run with an error planted in one expected value
#     (--plant-error) must exit non-zero and describe that mismatch.
# Each run uses its own seed (GENX_STRESS_SEED + run number), printed in the
# summary with the command that reproduces it.
#
# Environment (make check sets the first four, as for run-mpi-tests.sh):
#   GENX_BUILDDIR, GENX_MPIRUN, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR
#   GENX_MPI_TIMEOUT     seconds per mpirun (default 300)
#   GENX_STRESS_SEED     first seed (default 1)
#   GENX_STRESS_CALLS    allreduce calls per run (default 10000)
#   GENX_STRESS_NP       process counts (default "3 4")
#   GENX_STRESS_ARGS     more allreduce_stress options for every run
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

seed0=${GENX_STRESS_SEED:-1}
calls=${GENX_STRESS_CALLS:-10000}
nps=${GENX_STRESS_NP:-3 4}
read -r -a extra <<< "${GENX_STRESS_ARGS:-}"

PROG_NAME=allreduce_stress
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
base+=(--mca coll_genx_verbose 1)

# Failure excerpts leave out genx's verbose lines (there are many).
results_hide='^\[[^]]*\] genx: '
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# run LOG NP SEED MPIRUN-ARGS... -- PROGRAM-ARGS...: bounded, command on line 1.
run() {
    local log=$1 np=$2 seed=$3
    shift 3
    local margs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    local cmd=("$mpirun" -np "$np" "${base[@]}" "${margs[@]}" "$prog" --seed "$seed" "$@")
    echo "+ ${cmd[*]}" > "$log"
    timeout -k 10 "$limit" "${cmd[@]}" >> "$log" 2>&1
}

genx_lines() {
    tail -n +2 "$1" | sed -n 's/^\[[^]]*\] //; /^genx: /p'
}

# "calls, collectives, communicators, time" from the program's totals line.
totals() {
    sed -n 's/^allreduce_stress: seed [0-9]*: \([0-9]*\) calls in [0-9]* steps, \([0-9]*\) collective .*; \([0-9]*\) communicator creations made \([0-9]*\) communicators.*; \([0-9.]*\) s$/\1 calls (\2 collective allreduces), \4 communicators (\3 creations), \5 s/p' "$1"
}

model_rules=$logdir/stress-model-rules.json
echo '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model"}]}' > "$model_rules"

k=0
total_calls=0
for np in $nps; do
    for spec in auto: model: ring: ring:segment=4K,window=2 butterfly:r=0 butterfly:r=1 rb: cps: hcps: rhd:; do
        alg=${spec%%:*} params=${spec#*:}
        seed=$((seed0 + k))
        k=$((k + 1))
        name="P=$np $alg${params:+ $params} seed=$seed"
        log=$logdir/stress-p$np-$alg${params:+-${params//[=,]/_}}.log
        margs=()
        case $alg in
        auto) ;;
        model) margs+=(--mca coll_genx_rules "$model_rules") ;;
        *) margs+=(--mca coll_genx_allreduce_algorithm "$alg") ;;
        esac
        [ -z "$params" ] || margs+=(--mca coll_genx_allreduce_params "$params")
        run "$log" "$np" "$seed" "${margs[@]}" -- --calls "$calls" "${extra[@]}"
        rc=$?
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            fail "$name" "mpirun did not finish within ${limit}s" "$log"
        elif [ "$rc" -ne 0 ] || ! grep -q '^allreduce_stress: PASS' "$log"; then
            fail "$name" "allreduce_stress failed (exit $rc)" "$log"
        elif [ "$alg" = auto ] && ! genx_lines "$log" | grep -q "($np ranks): fallback to [a-z]*: rule built-in defaults"; then
            fail "$name" "no fallback line names the built-in defaults on $np ranks" "$log"
        elif [ "$alg" = model ] && ! genx_lines "$log" | grep -q "on $np ranks: [a-z]"; then
            fail "$name" "no genx decision line on $np ranks" "$log"
        elif [ "$alg" != auto ] && [ "$alg" != model ] &&
            ! genx_lines "$log" | grep -v fallback | grep -q "ranks: $alg\b"; then
            fail "$name" "no genx line shows $alg running" "$log"
        else
            pass "$name: $(totals "$log")"
            total_calls=$((total_calls + $(totals "$log" | sed 's/ calls.*//')))
        fi
    done
done

# ------------------------------------------- the test can fail (planted)
name="P=3 planted wrong expectation is reported"
log=$logdir/stress-planted.log
run "$log" 3 "$seed0" -- --calls 1000 --plant-error 500
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "$name" "mpirun did not finish within ${limit}s" "$log"
elif [ "$rc" -eq 0 ]; then
    fail "$name" "the run succeeded" "$log"
elif ! grep -q "^allreduce_stress: MISMATCH seed=$seed0 call=[0-9]* comm=#[0-9]* .* count=[0-9]* type=MPI_[A-Z0-9_]* op=[A-Z]* in_place=[01] MPI_I*[Aa]llreduce rank=0 .* index=[0-9]*: result: got .*, expected " "$log"; then
    fail "$name" "no MISMATCH line naming seed, call, comm, count, type, op, rank, index" "$log"
elif ! grep -q "^allreduce_stress: FAIL: seed $seed0: 1 mismatches" "$log"; then
    fail "$name" "the summary does not report exactly the one planted mismatch" "$log"
else
    pass "$name"
fi

echo
echo "genx random stress ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; $total_calls allreduce calls checked in passing runs; logs in $logdir"
[ "$nfail" -eq 0 ]
