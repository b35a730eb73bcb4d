#!/usr/bin/env bash
# genx under MPI_THREAD_MULTIPLE (make check runs this): thread_check (4
# threads per rank, each on its own duplicate of MPI_COMM_WORLD, 300 rounds
# of MPI_Allreduce, MPI_Iallreduce and a persistent allreduce request
# (MPI_Allreduce_init; MPIX_Allreduce_init in Open MPI 4.1), every result
# exact) under mpirun with genx loaded from the build
# tree, with genx's plans forced (ring at P = 2 and 3, butterfly r=1 at
# P = 3, rhd at P = 4), so that every call runs through genx: the run passes
# and genx's verbose lines show the forced family running each kind of
# call, and a communicator whose first call is an MPI_Iallreduce leaves it to
# the fallback (genx cannot wait for the ranks' agreement inside Open MPI's
# progress engine, where Open MPI itself calls MPI_Iallreduce at every
# communicator creation; before this rule, every MPI_Comm_dup of a
# THREAD_MULTIPLE program hung).  Environment: as run-mpi-tests.sh.  Exit: 0 passed, 1 failed, 77
# skipped (no mpirun, or no MPI_THREAD_MULTIPLE).
set -u

PROG_NAME=thread_check
. "$(dirname "$0")/mpi-env.sh"
results_hide='^\[[^]]*\] genx: '
. "$(dirname "$0")/results.sh"

skipped=0
for spec in 2:ring: 3:ring: 3:butterfly:r=1 4:rhd:; do
    np=${spec%%:*} rest=${spec#*:}
    alg=${rest%%:*} params=${rest#*:}
    name="P=$np, 4 threads: $alg${params:+ $params} forced"
    log=$logdir/thread-p$np-$alg.log
    args=(--mca coll_genx_allreduce_algorithm "$alg" --mca coll_genx_verbose 1)
    [ -z "$params" ] || args+=(--mca coll_genx_allreduce_params "$params")
    echo "+ $mpirun -np $np ${base[*]} ${args[*]} $prog 4 300" > "$log"
    timeout -k 10 "$limit" "$mpirun" -np "$np" "${base[@]}" "${args[@]}" "$prog" 4 300 >> "$log" 2>&1
    rc=$?
    if grep -q '^thread_check: SKIP' "$log"; then
        skipped=1
        pass "$name" "skipped: $(sed -n 's/^thread_check: SKIP: //p' "$log")"
        continue
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s (a hang?)" "$log"
    elif [ "$rc" -ne 0 ] || ! grep -q '^thread_check: PASS' "$log"; then
        fail "$name" "thread_check failed (exit $rc)" "$log"
    else
        missing=""
        for call in allreduce iallreduce "persistent allreduce"; do
            grep -q "genx: $call [0-9]* B (size class [^)]*) on $np ranks: $alg " "$log" ||
                missing="$missing, $call"
        done
        grep -q "genx: iallreduce .*MPI_THREAD_MULTIPLE: the ranks' agreement" "$log" ||
            missing="$missing, the fallback of a first MPI_Iallreduce under MPI_THREAD_MULTIPLE"
        if [ -n "$missing" ]; then
            fail "$name" "no genx line shows $alg running${missing#,}" "$log"
        else
            pass "$name" "$(sed -n 's/^thread_check: PASS: //p' "$log")"
        fi
    fi
done

echo
echo "genx MPI_THREAD_MULTIPLE tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
