#!/usr/bin/env bash
# `mpirun --mca coll genx` (genx named alone) under make check.
#
# The `coll` MCA variable is an include list, so naming genx alone would
# leave Open MPI without a component for anything but MPI_Allreduce; genx
# then adds Open MPI's own coll components at open (coll_genx_alone.c).
# Checks:
#   - allreduce_check --others passes at P = 2 and 3 with --mca coll genx
#     alone: genx says which components it added (tuned, libnbc, basic,
#     self and inter among them), genx really runs MPI_Allreduce (ring
#     forced, its decisions logged), and MPI_Barrier, MPI_Bcast,
#     MPI_Allgather, MPI_Reduce, MPI_Alltoall, MPI_Ibarrier, MPI_Ibcast and
#     an intercommunicator's MPI_Allreduce and MPI_Barrier work;
#   - iallreduce_check passes at P = 3 with --mca coll genx alone;
#   - genx adds nothing when the list names several components or excludes
#     some (^sm);
#   - with no other coll component in mca_base_component_path, genx prints
#     one line saying so and naming the list to use (the job then fails
#     as Open MPI makes it).
#
# Environment: as run-mpi-tests.sh (GENX_BUILDDIR, GENX_MPIRUN,
# GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR, GENX_MPI_TIMEOUT).
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

PROG_NAME=allreduce_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"

# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# run LOG NP MPIRUN-ARGS... -- PROGRAM-AND-ARGS...: bounded mpirun.
run() {
    local log=$1 np=$2
    shift 2
    local -a margs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        margs+=("$1")
        shift
    done
    shift
    echo "+ $mpirun -np $np ${base[*]} ${margs[*]} $*" > "$log"
    timeout -k 10 "$limit" "$mpirun" -np "$np" "${base[@]}" "${margs[@]}" "$@" >> "$log" 2>&1
}

# genx's own output lines, without opal_output's "[host:pid] " prefix.
genx_lines() {
    tail -n +2 "$1" | sed -n 's/^\[[^]]*\] //; /^genx: /p'
}

finished() {
    local name=$1 log=$2 rc=$3
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$log"
        return 1
    fi
    return 0
}

added='^genx: --mca coll genx: .* added Open MPI.s coll components '

# ------------------------------------------- allreduce_check --others
for np in 2 3; do
    name="P=$np --mca coll genx alone: allreduce_check --others"
    log=$logdir/solo-p$np.log
    run "$log" "$np" --mca coll genx --mca coll_genx_allreduce_algorithm ring \
        --mca coll_genx_verbose 1 -- "$prog" --others
    rc=$?
    finished "$name" "$log" "$rc" || continue
    components=$(genx_lines "$log" | sed -n "s/$added\([a-z0-9_,]*\) .*/\1/p")
    missing=""
    for c in tuned libnbc basic self inter; do
        case ",$components," in *",$c,"*) ;; *) missing="$missing $c" ;; esac
    done
    if [ "$rc" -ne 0 ] || ! grep -q '^allreduce_check: PASS' "$log"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$log"
    elif [ -z "$components" ]; then
        fail "$name" "no genx line naming the coll components it added" "$log"
    elif [ "$(genx_lines "$log" | grep -c "$added")" -ne 1 ]; then
        fail "$name" "expected the added-components line once (first process, verbosity 1)" "$log"
    elif [ -n "$missing" ]; then
        fail "$name" "genx did not add:$missing (added $components)" "$log"
    elif ! genx_lines "$log" | grep -v fallback | grep -q "on $np ranks: ring ("; then
        fail "$name" "no genx decision shows ring running on $np ranks" "$log"
    elif ! grep -q '^allreduce_check: other collectives OK' "$log"; then
        fail "$name" "the other collectives were not checked" "$log"
    else
        pass "$name" "added $components"
    fi
done

# ------------------------------------------------------ iallreduce_check
name="P=3 --mca coll genx alone: iallreduce_check"
log=$logdir/solo-iallreduce.log
iprog=$builddir/tests/mpi/iallreduce_check
if ! [ -x "$iprog" ]; then
    fail "$name" "$iprog is missing: run make check"
else
    run "$log" 3 --mca coll genx --mca coll_genx_allreduce_algorithm ring \
        --mca coll_genx_verbose 1 -- "$iprog"
    rc=$?
    if finished "$name" "$log" "$rc"; then
        if [ "$rc" -ne 0 ] || ! grep -q '^iallreduce_check: PASS' "$log"; then
            fail "$name" "iallreduce_check failed (exit $rc)" "$log"
        elif ! genx_lines "$log" | grep -q "$added"; then
            fail "$name" "no genx line naming the coll components it added" "$log"
        elif ! genx_lines "$log" | grep -v fallback | grep -q '^genx: iallreduce .* on 3 ranks: ring ('; then
            fail "$name" "no genx decision shows its iallreduce running ring" "$log"
        else
            pass "$name"
        fi
    fi
fi

# --------------------------------- other lists: genx leaves them alone
for list in genx,tuned,libnbc,basic,self '^sm'; do
    name="P=2 --mca coll $list: genx adds nothing"
    log=$logdir/solo-list-${list//[^a-z]/_}.log
    # ring forced: the built-in defaults would step aside on one node.
    run "$log" 2 --mca coll "$list" --mca coll_genx_allreduce_algorithm ring \
        --mca coll_genx_verbose 1 -- "$prog"
    rc=$?
    finished "$name" "$log" "$rc" || continue
    if [ "$rc" -ne 0 ] || ! grep -q '^allreduce_check: PASS' "$log"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$log"
    elif genx_lines "$log" | grep -q '^genx: --mca coll genx'; then
        fail "$name" "genx changed the component set" "$log"
    elif ! genx_lines "$log" | grep -v fallback | grep -q '^genx: allreduce .* on 2 ranks: ring ('; then
        fail "$name" "genx did not run" "$log"
    else
        pass "$name"
    fi
done

# ------------------- nothing to add: one clear line instead of a mystery
# Open MPI's component directory without its coll components, so that
# mpirun and the other frameworks still work.
name="P=2 --mca coll genx, no other coll component: one clear line"
log=$logdir/solo-nothing.log
if ! compgen -G "$ompi_dir/mca_coll_*.so" >/dev/null; then
    # Open MPI 5.0 links its components into libmpi by default: its coll
    # components cannot be left out, and genx adds them from libmpi
    # (framework_static_components) as the other cases show.
    summary+=("SKIP  $name: $ompi_dir has no mca_coll_*.so (Open MPI's coll components are in libmpi)")
else
nocoll=$(mktemp -d)
trap 'rm -rf "$nocoll"' EXIT
for f in "$ompi_dir"/*; do
    case ${f##*/} in mca_coll_*) ;; *) ln -s "$f" "$nocoll/" ;; esac
done
echo "+ $mpirun -np 2 --oversubscribe --mca mca_base_component_path $builddir/.libs:$nocoll --mca coll genx $prog" > "$log"
timeout -k 10 "$limit" "$mpirun" -np 2 --oversubscribe \
    --mca mca_base_component_path "$builddir/.libs:$nocoll" --mca coll genx "$prog" >> "$log" 2>&1
rc=$?
if finished "$name" "$log" "$rc"; then
    n=$(genx_lines "$log" | grep -c '^genx: --mca coll genx: .*no other coll component could be loaded.*--mca coll genx,tuned,libnbc,basic,self')
    if [ "$rc" -eq 0 ]; then
        fail "$name" "the job succeeded without any component for the other collectives" "$log"
    elif [ "$n" -ne 1 ]; then
        fail "$name" "expected genx's explanation once, saw it $n times" "$log"
    else
        pass "$name"
    fi
fi
fi

echo
echo "genx --mca coll genx tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
