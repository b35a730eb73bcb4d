#!/usr/bin/env bash
# The legal-program rules (make check runs this): legal_check's programs,
# which MPI requires to complete (MPI_Iallreduce on fresh communicators
# started in opposite orders, a non-blocking start on A before a blocking
# collective on B while the other ranks do the reverse, a rank 300 ms
# late, and the same for persistent allreduce; tests/mpi/legal_check.c),
# under mpirun with genx loaded from the build tree:
#   - with genx's built-in defaults (one node: every call goes to the
#     displaced component, started on the tag its call drew) at P = 2, 3;
#   - with every family forced: ring, butterfly, rd, rb, cps, hcps, rhd at
#     P = 3; gentree, mtree, multitree on a topology file at P = 4; ring2d
#     (dims=2x2) at P = 4; where the family must show in genx's verbose
#     lines running MPI_Iallreduce calls that were queued for the ranks'
#     agreement, and persistent allreduce;
#   - each also under MPI_THREAD_MULTIPLE with two threads (legal_check
#     --threads), where the family must show running persistent allreduce;
#     make check (GENX_CHECK_LONG=0) runs the forced families in one of
#     the two modes each, in turn, and the defaults in both; make
#     check-long and a run by hand, every family in both.
# A hang is a failure (each mpirun bounded by GENX_LEGAL_TIMEOUT, default
# 60 s).  Environment: as run-mpi-tests.sh.  Exit: 0 passed, 1 failed, 77
# skipped (no mpirun).
set -u

PROG_NAME=legal_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
results_hide='^\[[^]]*\] genx: '
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"
limit=${GENX_LEGAL_TIMEOUT:-60}

topo_dir=$logdir/legal-topology
mkdir -p "$topo_dir"
this_host=$(hostname | cut -d. -f1)
printf 'SwitchName=leaf0 Nodes=%s,other[1-3]\nSwitchName=leaf1 Nodes=far[1-4]\nSwitchName=root Switches=leaf[0-1]\n' \
    "$this_host" > "$topo_dir/tree.conf"

# check NAME LOG RC NP ALG MODE: the verdict on one run.
check() {
    local name=$1 log=$2 rc=$3 np=$4 alg=$5 mode=$6 line
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s: a legal program hung" "$log"
        return
    fi
    if [ "$mode" = threads ] && grep -q '^legal_check: SKIP' "$log"; then
        pass "$name" "skipped: $(sed -n 's/^legal_check: SKIP: //p' "$log")"
        return
    fi
    if [ "$rc" -ne 0 ] || ! grep -q '^legal_check: PASS' "$log"; then
        fail "$name" "legal_check failed (exit $rc)" "$log"
        return
    fi
    if [ "$alg" = auto ]; then
        line='genx: iallreduce [0-9]* B on comm [0-9]* ([0-9]* ranks): fallback to libnbc: rule built-in defaults'
        [ "$mode" = threads ] && line='genx: iallreduce .*MPI_THREAD_MULTIPLE: the ranks. agreement'
        grep -q "$line" "$log" || { fail "$name" "no genx line says where its iallreduces went" "$log"; return; }
    else
        grep -q "genx: persistent allreduce [0-9]* B (size class [^)]*) on $np ranks: $alg " "$log" ||
            { fail "$name" "no genx line shows $alg running a persistent allreduce" "$log"; return; }
        if [ "$mode" = single ] && ! grep -q "genx: iallreduce [0-9]* B (size class [^)]*) on $np ranks: $alg " "$log"; then
            fail "$name" "no genx line shows $alg running an MPI_Iallreduce" "$log"
            return
        fi
    fi
    pass "$name" "$(sed -n 's/^legal_check: rank 0 thread 0: *//p' "$log" | head -n 1)"
}

long=${GENX_CHECK_LONG:-1}
i=0
for spec in 2:auto: 3:auto: 3:ring: 3:butterfly: 3:rd: 3:rb: 3:cps: 3:hcps: 3:rhd: \
            4:gentree:@ 4:mtree:@ 4:multitree:@ 4:ring2d:dims=2x2; do
    i=$((i + 1))
    np=${spec%%:*} rest=${spec#*:}
    alg=${rest%%:*} params=${rest#*:}
    args=(--mca coll_genx_verbose 1)
    [ "$alg" = auto ] || args+=(--mca coll_genx_allreduce_algorithm "$alg")
    if [ "$params" = @ ]; then
        args+=(--mca coll_genx_topology_file "$topo_dir/tree.conf")
    elif [ -n "$params" ]; then
        args+=(--mca coll_genx_allreduce_params "$params")
    fi
    shown=${params/#@/on a topology file}
    modes="single threads"
    if [ "$long" != 1 ] && [ "$alg" != auto ]; then
        modes=single
        [ $((i % 2)) -eq 0 ] || modes=threads
    fi
    for mode in $modes; do
        prog_args=()
        [ "$mode" = threads ] && prog_args=(--threads)
        name="P=$np $alg${shown:+ ($shown)}, one thread"
        [ "$mode" = threads ] && name="P=$np $alg${shown:+ ($shown)}, MPI_THREAD_MULTIPLE, 2 threads"
        log=$logdir/legal-p$np-$alg-$mode.log
        echo "+ $mpirun -np $np ${base[*]} ${args[*]} $prog ${prog_args[*]}" > "$log"
        timeout -k 10 "$limit" "$mpirun" -np "$np" "${base[@]}" "${args[@]}" "$prog" \
            "${prog_args[@]}" >> "$log" 2>&1
        check "$name" "$log" $? "$np" "$alg" "$mode"
    done
done

echo
echo "genx legal-program tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
