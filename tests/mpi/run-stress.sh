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
#     families at every size ("model": genx must run plans); and each plain
#     family forced in turn (ring, ring with small segments, butterfly r=0
#     and r=1, rb, cps, hcps, rhd, rd) at P = 3 and 4 (oversubscribed; make
#     check: each run at one of them in turn, GENX_CHECK_LONG below);
#   - the families that plan on a network, on the topologies they need (all
#     ranks run on this host, so the network is named for them):
#       forced: gentree on a topology file (coll_genx_topology_file, a Slurm
#       topology.conf of two leaves naming this host: all ranks on one host
#       of it); mtree and multitree without a file (one switch over the
#       ranks); ring2d with dims=XxY of the P ranks (row-major order: it
#       serves only communicators of all P ranks and steps aside on the
#       others);
#       on virtual hosts: gentree, mtree, multitree and ring2d chosen by a
#       rules file with every rank given its own SLURM_TOPOLOGY_ADDR (one
#       app context per host), which places the ranks on a two-leaf switch
#       tree of P-1 hosts at P >= 4 (two ranks on the first) and P hosts
#       below, every communicator on the hosts of its own ranks (ring2d's
#       rules give each communicator size its dims); a forced algorithm
#       cannot use that placement (it is built when the communicator is
#       created, before the addresses are gathered), so a rule chooses it;
#     these runs make GENX_STRESS_NET_CALLS calls each (mtree's half that:
#     its plans cost several times the others' per small call);
#   every run must pass and, for a forced or rule-chosen family, genx's
#   verbose lines must show that family running (on the communicator of all
#   P ranks for the network families; it falls back by itself on
#   communicators it cannot serve, which is fine), and on virtual hosts a
#   line must place the P ranks on their SLURM_TOPOLOGY_ADDR tree;
#   - the test can fail: a run with an error planted in one expected value
#     (--plant-error) must exit non-zero and describe that mismatch.
# Each run uses its own seed (GENX_STRESS_SEED + run number), printed in the
# summary with the command that reproduces it.
#
# Environment (make check sets the first four, as for run-mpi-tests.sh):
#   GENX_BUILDDIR, GENX_MPIRUN, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR
#   GENX_MPI_TIMEOUT     seconds per mpirun (default 300)
#   GENX_STRESS_SEED     first seed (default 1)
#   GENX_STRESS_CALLS    allreduce calls per run (default 10000; 6000 under
#                        make check, GENX_CHECK_LONG=0, to keep its time)
#   GENX_STRESS_NET_CALLS  calls per run of a network family (gentree,
#                        multitree, ring2d; mtree half that; default half
#                        of GENX_STRESS_CALLS)
#   GENX_STRESS_NP       process counts (default "3 4")
#   GENX_STRESS_ARGS     more allreduce_stress options for every run
#   GENX_CHECK_LONG      1 (make check-long, and the default by hand): every
#                        run at every process count; 0 (make check): each
#                        run at one of them, in turn (same seeds and names)
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

seed0=${GENX_STRESS_SEED:-1}
long=${GENX_CHECK_LONG:-1}
if [ "$long" = 1 ]; then calls=${GENX_STRESS_CALLS:-10000}; else calls=${GENX_STRESS_CALLS:-6000}; fi
net_calls=${GENX_STRESS_NET_CALLS:-$((calls / 2))}
nps=${GENX_STRESS_NP:-3 4}
read -r -a extra <<< "${GENX_STRESS_ARGS:-}"

PROG_NAME=allreduce_stress
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
base+=(--mca coll_genx_verbose 1)

# A launcher inside a Slurm allocation would hand every rank its own switch
# address; only the runs on virtual hosts give them, one per rank.
unset SLURM_TOPOLOGY_ADDR SLURM_TOPOLOGY_ADDR_PATTERN

# Failure excerpts leave out genx's verbose lines (there are many).
results_hide='^\[[^]]*\] genx: '
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# split_args MPIRUN-ARGS... -- PROGRAM-ARGS...: sets margs and pargs.
split_args() {
    margs=() pargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    pargs=("$@")
}

# bounded LOG COMMAND...: COMMAND under the time limit, its command line on
# LOG's first line.
bounded() {
    local log=$1
    shift
    echo "+ $*" > "$log"
    timeout -k 10 "$limit" "$@" >> "$log" 2>&1
}

# run LOG NP SEED MPIRUN-ARGS... -- PROGRAM-ARGS...
run() {
    local log=$1 np=$2 seed=$3
    shift 3
    split_args "$@"
    bounded "$log" "$mpirun" -np "$np" "${base[@]}" "${margs[@]}" "$prog" --seed "$seed" "${pargs[@]}"
}

# run_hosts LOG SEED ADDRS MPIRUN-ARGS... -- PROGRAM-ARGS...: as run, one
# rank per word of ADDRS (a SLURM_TOPOLOGY_ADDR, switch.switch.host), ranks
# with the same address in one app context.
run_hosts() {
    local log=$1 seed=$2 addrs=$3
    shift 3
    split_args "$@"
    local cmd=("$mpirun" "${base[@]}" "${margs[@]}") a prev="" n=0
    for a in $addrs ""; do
        if [ -n "$prev" ] && [ "$a" != "$prev" ]; then
            cmd+=(-np "$n" -x "SLURM_TOPOLOGY_ADDR=$prev" -x SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
                "$prog" --seed "$seed" "${pargs[@]}")
            [ -z "$a" ] || cmd+=(:)
            n=0
        fi
        prev=$a n=$((n + 1))
    done
    bounded "$log" "${cmd[@]}"
}

genx_lines() {
    tail -n +2 "$1" | sed -n 's/^\[[^]]*\] //; /^genx: /p'
}

# "calls, collectives, communicators, time" from the program's totals line.
totals() {
    sed -n 's/^allreduce_stress: seed [0-9]*: \([0-9]*\) calls in [0-9]* steps, \([0-9]*\) collective .*; \([0-9]*\) communicator creations made \([0-9]*\) communicators.*; \([0-9.]*\) s$/\1 calls (\2 collective allreduces), \4 communicators (\3 creations), \5 s/p' "$1"
}

# verdict NAME LOG RC ALG NP [REGEX WHY]...: counts the run's pass or
# failure.  It must have finished and passed; with the built-in defaults
# (auto) a fallback line must name them, with the model a decision line
# must show genx choosing; otherwise a line that is no fallback must show
# ALG running, and every REGEX must match a line that is no fallback (WHY
# says what is missing when one does not).
verdict() {
    local name=$1 log=$2 rc=$3 alg=$4 np=$5
    shift 5
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$log"
        return
    elif [ "$rc" -ne 0 ] || ! grep -q '^allreduce_stress: PASS' "$log"; then
        fail "$name" "allreduce_stress failed (exit $rc)" "$log"
        return
    elif [ "$alg" = auto ] && ! genx_lines "$log" | grep -q "($np ranks): fallback to [a-z]*: rule built-in defaults"; then
        fail "$name" "no fallback line names the built-in defaults on $np ranks" "$log"
        return
    elif [ "$alg" = model ] && ! genx_lines "$log" | grep -q "on $np ranks: [a-z]"; then
        fail "$name" "no genx decision line on $np ranks" "$log"
        return
    elif [ "$alg" != auto ] && [ "$alg" != model ] &&
        ! genx_lines "$log" | grep -v fallback | grep -q "ranks: $alg\b"; then
        fail "$name" "no genx line shows $alg running" "$log"
        return
    fi
    while [ $# -ge 2 ]; do
        if ! genx_lines "$log" | grep -v fallback | grep -q "$1"; then
            fail "$name" "$2" "$log"
            return
        fi
        shift 2
    done
    pass "$name: $(totals "$log")"
    total_calls=$((total_calls + $(totals "$log" | sed 's/ calls.*//')))
}

# calls_of ALG: the calls of a network family's run; mtree's plans cost
# several times the others' per small call, so it makes half as many.
calls_of() {
    if [ "$1" = mtree ]; then echo $((net_calls / 2)); else echo "$net_calls"; fi
}

# dims_of P: XxY for ring2d with X·Y = P, as square as P allows (Y <= X).
dims_of() {
    local p=$1 d y=1
    for ((d = 1; d * d <= p; d++)); do
        [ $((p % d)) -ne 0 ] || y=$d
    done
    echo "$((p / y))x$y"
}

# addrs_of P: one SLURM_TOPOLOGY_ADDR per rank, virtual hosts h0, h1, ...
# on two leaf switches under one spine (the first half of the hosts, rounded
# up, on leaf1): P hosts for P < 4; from P = 4 on, ranks 0 and 1 share h0,
# so that hosts of one rank and of two meet in one tree.
addrs_of() {
    local p=$1 r h nh out=()
    nh=$p
    [ "$p" -lt 4 ] || nh=$((p - 1))
    for ((r = 0; r < p; r++)); do
        h=$r
        [ "$p" -lt 4 ] || [ "$r" -eq 0 ] || h=$((r - 1))
        out+=("spine.leaf$((h < (nh + 1) / 2 ? 1 : 2)).h$h")
    done
    echo "${out[*]}"
}

model_rules=$logdir/stress-model-rules.json
echo '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model"}]}' > "$model_rules"
# gentree forced needs a switch tree when the communicator is created: a
# topology.conf naming this host (Open MPI's name for it: every rank is on
# it), one of two leaves under a root.
topo_file=$logdir/stress-topology.conf
printf '# two leaves under a root; every rank runs on %s\nSwitchName=leaf0 Nodes=%s,other[1-3]\nSwitchName=leaf1 Nodes=far[1-4]\nSwitchName=root Switches=leaf[0-1]\n' \
    "$(hostname | cut -d. -f1)" "$(hostname | cut -d. -f1)" > "$topo_file"

read -r -a np_list <<< "$nps"
# taken NP-INDEX RUN-INDEX: whether this run happens at this process count
# (make check spreads a group's runs over the counts, in turn).
taken() { [ "$long" = 1 ] || [ $(($2 % ${#np_list[@]})) -eq "$1" ]; }

k=0
total_calls=0
npi=-1
for np in $nps; do
    npi=$((npi + 1))
    # The plain families: no network needed.
    j=0
    for spec in auto: model: ring: ring:segment=4K,window=2 butterfly:r=0 butterfly:r=1 rb: cps: hcps: rhd: rd:; do
        alg=${spec%%:*} params=${spec#*:}
        seed=$((seed0 + k))
        k=$((k + 1))
        j=$((j + 1))
        taken "$npi" $((j - 1)) || continue
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
        verdict "$name" "$log" $? "$alg" "$np"
    done

    # The network families forced, all ranks on this host.
    j=0
    for alg in gentree mtree multitree ring2d; do
        seed=$((seed0 + k))
        k=$((k + 1))
        j=$((j + 1))
        taken "$npi" $((j - 1)) || continue
        margs=(--mca coll_genx_allreduce_algorithm "$alg")
        need=()
        case $alg in
        gentree)
            margs+=(--mca coll_genx_topology_file "$topo_file")
            name="P=$np gentree forced on a topology file (1 host) seed=$seed"
            log=$logdir/stress-p$np-gentree-file.log
            need=("topology .*stress-topology\.conf: $np ranks on 1 hosts, 2 switch level(s)"
                "no line places the $np ranks on stress-topology.conf") ;;
        ring2d)
            margs+=(--mca coll_genx_allreduce_params "dims=$(dims_of "$np")")
            name="P=$np ring2d dims=$(dims_of "$np") forced seed=$seed"
            log=$logdir/stress-p$np-ring2d-dims_$(dims_of "$np").log ;;
        *)
            name="P=$np $alg forced, no topology file seed=$seed"
            log=$logdir/stress-p$np-$alg.log ;;
        esac
        run "$log" "$np" "$seed" "${margs[@]}" -- --calls "$(calls_of "$alg")" "${extra[@]}"
        verdict "$name" "$log" $? "$alg" "$np" "on $np ranks: $alg (" \
            "no genx line shows $alg running on the $np ranks" "${need[@]}"
    done

    # The network families on virtual hosts: each rank its own
    # SLURM_TOPOLOGY_ADDR, the family chosen by a rules file.
    addrs=$(addrs_of "$np")
    nh=$(tr ' ' '\n' <<< "$addrs" | sort -u | wc -l)
    # Shifted by one: gentree on the hosts where two ranks share one.
    j=1
    for alg in gentree mtree multitree ring2d; do
        seed=$((seed0 + k))
        k=$((k + 1))
        j=$((j + 1))
        taken "$npi" $((j - 1)) || continue
        rules=$logdir/stress-p$np-$alg-rules.json
        if [ "$alg" = ring2d ]; then
            # ring2d lays the ranks out by dims=XxY, one rule per size.
            rs=""
            for ((s = 2; s <= np; s++)); do
                rs+="${rs:+, }{\"comm_size\": $s, \"algorithm\": \"ring2d\", \"params\": \"dims=$(dims_of $s)\"}"
            done
            echo "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [$rs]}" > "$rules"
        else
            echo "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [{\"algorithm\": \"$alg\"}]}" > "$rules"
        fi
        name="P=$np $alg by rule on $nh virtual hosts, 2 leaves (SLURM_TOPOLOGY_ADDR) seed=$seed"
        log=$logdir/stress-p$np-$alg-hosts.log
        run_hosts "$log" "$seed" "$addrs" --mca coll_genx_rules "$rules" -- --calls "$(calls_of "$alg")" "${extra[@]}"
        verdict "$name" "$log" $? "$alg" "$np" "on $np ranks: $alg (" \
            "no genx line shows $alg running on the $np ranks" \
            "topology SLURM_TOPOLOGY_ADDR: $np ranks on $nh hosts, 2 switch level(s)" \
            "no line places the $np ranks on $nh hosts of their SLURM_TOPOLOGY_ADDR tree"
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
