#!/usr/bin/env bash
# MPI_Iallreduce and persistent allreduce through genx (make check runs
# this): iallreduce_check (exact results against a reference communicator
# without genx, 8 operations in flight on two communicators with a blocking
# allreduce among them, a peer that starts 200 ms late: MPI_Iallreduce must
# return at once (under 1 ms of CPU time and 20 ms of wall time; it takes
# microseconds) and MPI_Test stay
# false until the peer arrives; and
# persistent allreduce requests (MPI_Allreduce_init; MPIX_Allreduce_init
# in Open MPI 4.1) started again and again) under mpirun with
# genx loaded from the build tree:
#   - ring forced at P = 2, 3, 4, 5, butterfly r=1 at P = 3 and rhd at P = 4:
#     the run passes and genx's verbose lines show the forced family
#     running MPI_Iallreduce and the persistent allreduce (not the
#     fallback);
#   - genx's built-in defaults on one node: passes, and every iallreduce
#     goes to the displaced component with the rule that says so.
# Environment: as run-mpi-tests.sh.  Exit: 0 passed, 1 failed, 77 skipped.
set -u

PROG_NAME=iallreduce_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
results_hide='^\[[^]]*\] genx: '
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

run() {
    local log=$1 np=$2
    shift 2
    echo "+ $mpirun -np $np ${base[*]} --mca coll_genx_verbose 1 $* $prog" > "$log"
    timeout -k 10 "$limit" "$mpirun" -np "$np" "${base[@]}" --mca coll_genx_verbose 1 "$@" "$prog" >> "$log" 2>&1
}

for spec in 2:ring: 3:ring: 4:ring: 5:ring: 3:butterfly:r=1 4:rhd:; do
    np=${spec%%:*} rest=${spec#*:}
    alg=${rest%%:*} params=${rest#*:}
    name="P=$np iallreduce, $alg${params:+ $params} forced"
    log=$logdir/iallreduce-p$np-$alg.log
    args=(--mca coll_genx_allreduce_algorithm "$alg")
    [ -z "$params" ] || args+=(--mca coll_genx_allreduce_params "$params")
    run "$log" "$np" "${args[@]}"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q '^iallreduce_check: PASS' "$log"; then
        fail "$name" "iallreduce_check failed (exit $rc)" "$log"
    elif ! grep -q "genx: iallreduce [0-9]* B (size class [^)]*) on $np ranks: $alg " "$log"; then
        fail "$name" "no genx line shows $alg running MPI_Iallreduce" "$log"
    elif grep -q 'genx: iallreduce .*failed' "$log"; then
        fail "$name" "an iallreduce failed" "$log"
    elif ! grep -q '^iallreduce_check: user-defined op on a derived datatype OK' "$log"; then
        fail "$name" "the user-defined op part did not run" "$log"
    elif ! grep -q '^iallreduce_check: persistent allreduce OK' "$log"; then
        fail "$name" "the persistent allreduce part did not run" "$log"
    elif ! grep -q "genx: persistent allreduce [0-9]* B (size class [^)]*) on $np ranks: $alg " "$log"; then
        fail "$name" "no genx line shows $alg running a persistent allreduce (MPI_Allreduce_init; MPIX_Allreduce_init in 4.1)" "$log"
    elif grep -q 'genx: persistent allreduce .*\(failed\|cannot start\)' "$log"; then
        fail "$name" "a persistent allreduce failed" "$log"
    else
        pass "$name" "$(sed -n 's/^iallreduce_check: rank 0: //p' "$log")"
    fi
done

name="P=4 iallreduce, built-in defaults on one node: left to the displaced component"
log=$logdir/iallreduce-p4-auto.log
run "$log" 4
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^iallreduce_check: PASS' "$log"; then
    fail "$name" "iallreduce_check failed (exit $rc)" "$log"
elif grep -q 'genx: \(iallreduce\|persistent allreduce\) [0-9]* B (size class' "$log"; then
    fail "$name" "genx ran a plan on one node" "$log"
elif ! grep -q 'fallback to [a-z]*: rule built-in defaults' "$log"; then
    fail "$name" "no fallback line names the built-in rule" "$log"
else
    pass "$name"
fi


# Blocking and non-blocking calls have decision tables of their own, and
# each kind steps aside by itself where every one of its sizes defers: a
# rules file that runs rd for one kind only hands the other kind's slots
# back to the displaced component at the first call, and genx keeps
# running its plan for the first kind.
rules_dir=$(mktemp -d)
trap 'rm -rf "$rules_dir"' EXIT
for kind in nonblocking blocking; do
    cat > "$rules_dir/$kind.json" <<JSON
{"format": "genx-rules", "version": 1,
 "allreduce": [
  {"call": "$kind", "algorithm": "rd"},
  {"algorithm": "fallback"}
 ]}
JSON
    name="P=4 rules with rd for $kind calls only: the other kind steps aside"
    log=$logdir/iallreduce-p4-$kind-only.log
    run "$log" 4 --mca coll_genx_rules "$rules_dir/$kind.json"
    rc=$?
    if [ "$kind" = nonblocking ]; then
        aside='every MPI_Allreduce size defers (.*); genx steps aside for it: this communicator.s MPI_Allreduce now calls tuned directly; MPI_Iallreduce stays with genx'
        runs='genx: iallreduce [0-9]* B (size class [^)]*) on 4 ranks: rd '
    else
        aside='every MPI_Iallreduce size defers (.*); genx steps aside for it: this communicator.s MPI_Iallreduce and persistent allreduce now call libnbc directly; MPI_Allreduce stays with genx'
        runs='genx: allreduce [0-9]* B (size class [^)]*) on 4 ranks: rd '
    fi
    if [ "$rc" -ne 0 ] || ! grep -q '^iallreduce_check: PASS' "$log"; then
        fail "$name" "iallreduce_check failed (exit $rc)" "$log"
    elif ! grep -q "$aside" "$log"; then
        fail "$name" "no line says the $( [ "$kind" = blocking ] && echo non-blocking || echo blocking) calls step aside" "$log"
    elif ! grep -q "$runs" "$log"; then
        fail "$name" "genx ran no rd for the $kind calls" "$log"
    elif [ "$kind" = blocking ] && grep -q 'genx: \(iallreduce\|persistent allreduce\) [0-9]* B (size class' "$log"; then
        fail "$name" "genx ran a non-blocking plan its rules leave to libnbc" "$log"
    else
        pass "$name"
    fi
done
echo
echo "genx MPI_Iallreduce tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
