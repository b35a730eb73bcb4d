#!/usr/bin/env bash
# Locality inside nodes (docs/design.md §6.5) under make check.
#
# Checks, with locality_check (world, then a split and a duplicate, every
# result compared with its closed form) and coll_genx_verbose 2:
#   - 4 ranks, --bind-to none: PASS; every rank says its locality once
#     ("genx: locality of this rank"), gathers once on the world
#     communicator ("gathered locality (gather 1 of this process)", no
#     second gather), and the split and the duplicate take the records
#     from the process's cache (8 "no gather" lines);
#   - 2 ranks, --bind-to core: PASS; each rank's binding is one cpu;
#   - coll_genx_discover 0: PASS, and no locality line at all;
#   - the decisions genx logs at verbose 1 are the same with and without
#     discovery on one host (its links are unrated, so nothing changes).
# Environment: as run-mpi-tests.sh (GENX_BUILDDIR, GENX_MPIRUN,
# GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR, GENX_MPI_TIMEOUT).
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

PROG_NAME=locality_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# count LOG REGEX: genx lines of LOG matching REGEX.
count() {
    genx_lines "$1" | grep -cE "$2"
}

# expect NAME LOG RC WHAT REGEX N: passes when LOG's genx lines match REGEX
# exactly N times.
expect() {
    local name=$1 log=$2 regex=$3 n=$4 got
    got=$(count "$log" "$regex")
    if [ "$got" -ne "$n" ]; then
        fail "$name" "$got line(s) match '$regex', expected $n" "$log"
        return 1
    fi
    return 0
}

passed_run() {
    local name=$1 log=$2 rc=$3
    if [ "$rc" -ne 0 ] || ! grep -q '^PASS$' "$log"; then
        fail "$name" "locality_check exited $rc without PASS" "$log"
        return 1
    fi
    return 0
}

v2=(--mca coll_genx_verbose 2)

log=$logdir/locality-unbound.log
run "$log" 4 --bind-to none "${v2[@]}"
rc=$?
passed_run "4 ranks unbound" "$log" "$rc" &&
    expect "4 ranks unbound" "$log" '^genx: locality of this rank \(' 4 &&
    expect "4 ranks unbound" "$log" 'gathered locality \(gather 1 of this process\)' 4 &&
    expect "4 ranks unbound" "$log" 'gathered locality \(gather [2-9]' 0 &&
    expect "4 ranks unbound" "$log" "locality from this process's cache, no gather" 8 &&
    pass "4 ranks unbound" "one gather per process; split and duplicate from the cache"

log=$logdir/locality-bound.log
run "$log" 2 --bind-to core "${v2[@]}"
rc=$?
passed_run "2 ranks bound to cores" "$log" "$rc" &&
    expect "2 ranks bound to cores" "$log" \
        '^genx: locality of this rank .*bound to package 0 NUMA node 0 \(cpus [0-9]+ \(hwloc_get_cpubind\)\)' 2 &&
    expect "2 ranks bound to cores" "$log" 'gathered locality \(gather 1 of this process\)' 2 &&
    pass "2 ranks bound to cores" "each rank's binding is one cpu"

log=$logdir/locality-off.log
run "$log" 4 --bind-to none "${v2[@]}" --mca coll_genx_discover 0
rc=$?
passed_run "coll_genx_discover 0" "$log" "$rc" &&
    expect "coll_genx_discover 0" "$log" 'locality' 0 &&
    pass "coll_genx_discover 0" "no locality line"

# The decisions rank 0 logs at verbose 1, without the topology line (which
# says where the view came from) and without process ids.
decisions() {
    tail -n +2 "$1" | sed -n 's/^\[[^]]*\] //; /^genx: /p' | grep -v -e 'topology' -e 'locality' | sort
}
on=$logdir/locality-decisions-on.log
off=$logdir/locality-decisions-off.log
run "$on" 4 --bind-to none --mca coll_genx_verbose 1
rc_on=$?
run "$off" 4 --bind-to none --mca coll_genx_verbose 1 --mca coll_genx_discover 0
rc_off=$?
if passed_run "decisions unchanged" "$on" "$rc_on" && passed_run "decisions unchanged" "$off" "$rc_off"; then
    if [ "$(decisions "$on" | wc -l)" -eq 0 ]; then
        fail "decisions unchanged" "no decision line at verbose 1" "$on"
    elif ! diff <(decisions "$off") <(decisions "$on") > "$logdir/locality-decisions.diff"; then
        fail "decisions unchanged" "the decisions differ ($logdir/locality-decisions.diff)" "$on"
    else
        pass "decisions unchanged" "$(decisions "$on" | wc -l) decision line(s) alike"
    fi
fi

printf '%s\n' "${summary[@]}"
[ "$nfail" -eq 0 ]
