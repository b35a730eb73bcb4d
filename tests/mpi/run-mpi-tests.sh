#!/usr/bin/env bash
# MPI integration tests of the built component (make check runs this).
#
# Loads mca_coll_genx.so from the build tree through mca_base_component_path
# (the build's .libs first, then Open MPI's own component directory, so the
# stock components stay available) and checks:
#   - allreduce_check passes for P = 2 3 4 5 7 8 (make check: 2 3 5 8) with the ring algorithm
#     forced and no --mca coll list, i.e. genx is chosen by its priority;
#     the verbose log shows genx running ring and falling back (with the
#     reason) for the non-commutative op and the MPI_Type_vector datatype;
#   - butterfly (several r and groups) and the GenModel families forced;
#   - selection: the built-in defaults leave every call on one node to the
#     displaced component and say so; a rules file's rules are applied and
#     cited by file:line, sizes without a rule fall through to the model; a bad
#     file is reported by file:line (defaults used) or aborts the job with
#     coll_genx_rules_strict=1; ranks whose decisions differ (a file on
#     half of them) make genx step aside; a "fallback" incumbent is priced
#     as tuned's fixed choice, or with tuned's dynamic rules on as Open
#     MPI's best modelled algorithm;
#   - an explicit component list naming genx works the same way (with small
#     segments, so that many messages per pair are in flight);
#   - the reference communicator of allreduce_check (info key
#     ompi_comm_coll_preference=^genx) really is served without genx;
#   - --mca coll ^genx: passes and genx says nothing, so it was not loaded;
#   - a bad algorithm name and bad params: the program still passes (genx
#     steps aside) and a clear error naming the value is printed without
#     any verbose setting;
#   - ompi_info lists genx's parameters with their help texts.
#
# Environment (make check sets them; defaults work from the top build dir):
#   GENX_BUILDDIR            build tree holding .libs/mca_coll_genx.so and
#                            tests/mpi/allreduce_check (default: .)
#   GENX_MPIRUN, GENX_OMPI_INFO   (default: from PATH)
#   GENX_OMPI_COMPONENT_DIR  Open MPI's pkglibdir (default: asked from ompi_info)
#   GENX_MPI_TIMEOUT         seconds per mpirun (default 300)
#   GENX_CHECK_LONG          0 (make check): the forced families at a share of
#                            their P and r; 1 (make check-long, and the
#                            default by hand): every entry below
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

PROG_NAME=allreduce_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"

# A launcher inside a Slurm allocation would hand every rank its own switch
# address; the runs below set them where they mean to.
unset SLURM_TOPOLOGY_ADDR SLURM_TOPOLOGY_ADDR_PATTERN

# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# Checks common to every run that should compute correct results.
check_passed() {
    local name=$1 log=$2 rc=$3
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$log"
        return 1
    fi
    if [ "$rc" -ne 0 ] || ! grep -q '^allreduce_check: PASS' "$log"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$log"
        return 1
    fi
    return 0
}

# Distinct size classes (bit lengths) of the MPI_Type_vector cases of
# allreduce_check (8 bytes per element, counts 1 P-1 P P+1 1000 65537; MPI
# returns before any component for count 0): genx reports its fallback once
# per communicator, size class and reason, and only rank 0 does at
# verbosity 1, so exactly this many lines must name it.
vector_classes() {
    local np=$1 c b n
    local -a classes=()
    for c in 1 $((np - 1)) "$np" $((np + 1)) 1000 65537; do
        [ "$c" -gt 0 ] || continue
        b=$((8 * c)) n=0
        while [ "$b" -gt 0 ]; do b=$((b >> 1)) n=$((n + 1)); done
        classes+=("$n")
    done
    printf '%s\n' "${classes[@]}" | sort -u | wc -l
}

long=${GENX_CHECK_LONG:-1}
# pick LONG-LIST SHORT-LIST: the list this run covers.
pick() { if [ "$long" = 1 ]; then echo "$1"; else echo "$2"; fi; }

# ------------------------------------------------ P sweep, ring forced
for np in $(pick "2 3 4 5 7 8" "2 3 5 8"); do
    name="P=$np ring, genx chosen by priority"
    log=$logdir/ring-p$np.log
    run "$log" "$np" --mca coll_genx_allreduce_algorithm ring --mca coll_genx_verbose 1
    rc=$?
    check_passed "$name" "$log" "$rc" || continue
    if ! genx_lines "$log" | grep -v fallback | grep -q '\bring\b'; then
        fail "$name" "no genx line shows the ring algorithm running" "$log"
    elif ! genx_lines "$log" | grep -q 'fallback to [a-z]*: datatype is not contiguous'; then
        fail "$name" "no fallback line for the MPI_Type_vector datatype" "$log"
    elif ! genx_lines "$log" | grep -q 'fallback.*not commutative'; then
        fail "$name" "no fallback line for the non-commutative user op" "$log"
    elif [ "$(genx_lines "$log" | grep -c 'datatype is not contiguous')" -ne "$(vector_classes "$np")" ]; then
        fail "$name" "expected $(vector_classes "$np") MPI_Type_vector fallback lines (one per size class)" "$log"
    else
        pass "$name"
    fi
done

# ------------------------------- butterfly forced, several r per P
# Every P of issue 3 with r = 0 (bandwidth-optimal), r = L (latency-optimal)
# and a middle value where one exists, plus the XOR group at P = 8.  The
# butterfly does not preserve rank order, so the non-commutative op must
# still go to the fallback.
# make check: each P once, r = 0, L and a middle value among them.
for spec in $(pick "2:r=0 2:r=1 3:r=0 3:r=1 3:r=2 5:r=0 5:r=2 5:r=3 6:r=0 6:r=3
    7:r=0 7:r=1 7:r=3 8:r=0 8:r=3 8:group=xor,r=0 8:group=xor,r=3 12:r=0 12:r=2 12:r=4" \
    "2:r=1 3:r=2 5:r=0 6:r=3 7:r=1 8:group=xor,r=3 12:r=2"); do
    np=${spec%%:*} params=${spec#*:}
    name="P=$np butterfly $params"
    log=$logdir/butterfly-p$np-${params//[=,]/_}.log
    run "$log" "$np" --mca coll_genx_allreduce_algorithm butterfly \
        --mca coll_genx_allreduce_params "$params" --mca coll_genx_verbose 1
    rc=$?
    check_passed "$name" "$log" "$rc" || continue
    if ! genx_lines "$log" | grep -v fallback | grep -q "\bbutterfly\b"; then
        fail "$name" "no genx line shows the butterfly algorithm running" "$log"
    elif ! genx_lines "$log" | grep -q 'fallback.*not commutative'; then
        fail "$name" "no fallback line for the non-commutative user op" "$log"
    else
        pass "$name"
    fi
done

# ------------------------------ GenModel families and rd forced (issue 4)
# rb with root 0 preserves rank order (the checker proves it), so genx runs
# the non-commutative op itself there; the others must hand it over.
for spec in $(pick "rb:3:root=0 rb:5:root=2 cps:4: cps:7: hcps:6:factors=3x2 hcps:8:factors=2x2x2
    hcps:12:factors=4x3 rhd:5: rhd:6: rhd:8: rd:3: rd:6: rd:7:" \
    "rb:3:root=0 rb:5:root=2 cps:7: hcps:12:factors=4x3 rhd:6: rd:7:"); do
    IFS=: read -r alg np params <<< "$spec"
    name="P=$np $alg ${params:-(defaults)}"
    log=$logdir/$alg-p$np-${params//[=,]/_}.log
    args=(--mca coll_genx_allreduce_algorithm "$alg" --mca coll_genx_verbose 1)
    [ -z "$params" ] || args+=(--mca coll_genx_allreduce_params "$params")
    run "$log" "$np" "${args[@]}"
    rc=$?
    check_passed "$name" "$log" "$rc" || continue
    if ! genx_lines "$log" | grep -v fallback | grep -q "\b$alg\b"; then
        fail "$name" "no genx line shows $alg running" "$log"
    elif [ "$spec" != rb:3:root=0 ] && ! genx_lines "$log" | grep -q 'fallback.*not commutative'; then
        fail "$name" "no fallback line for the non-commutative user op" "$log"
    elif [ "$spec" = rb:3:root=0 ] && genx_lines "$log" | grep -q 'fallback.*not commutative'; then
        fail "$name" "order-preserving rb root=0 handed the non-commutative op to the fallback" "$log"
    else
        pass "$name"
    fi
done

# -------------------------------------- rules files and selection (issue 4)
# require_lines NAME LOG RC PATTERN WHY [PATTERN WHY ...]: the run passed and
# genx's lines match every PATTERN (grep BRE); else fail with its WHY and
# return 1.
require_lines() {
    local name=$1 log=$2 rc=$3
    shift 3
    check_passed "$name" "$log" "$rc" || return 1
    while [ $# -ge 2 ]; do
        if ! genx_lines "$log" | grep -q -- "$1"; then
            fail "$name" "$2" "$log"
            return 1
        fi
        shift 2
    done
    pass "$name"
}

# auto with the built-in defaults on one node: every call is left to the
# displaced component (docs/model.md, "Built-in defaults"), the decline
# names the built-in rule and why, genx hands the communicator's allreduce
# slots back to tuned and libnbc at the first call, and runs nothing.
log=$logdir/rules-defaults.log
run "$log" 4 --mca coll_genx_verbose 1
if require_lines "P=4 auto: built-in defaults leave one node to tuned" "$log" $? \
    '(4 ranks): fallback to [a-z]*: rule built-in defaults:[0-9]* .*left to the component genx displaced (one node' \
    "no decline names the built-in one-node rule" \
    'comm [0-9]* (4 ranks): every message size defers (.*one node.*); genx steps aside: this communicator.s MPI_Allreduce now calls tuned directly, MPI_Iallreduce libnbc' \
    "genx did not step aside on a communicator whose every size defers"; then
    if genx_lines "$log" | grep -q 'on 4 ranks: [a-z]* ('; then
        fail "P=4 auto: built-in defaults run no genx plan on one node" "genx ran a plan" "$log"
    else
        pass "P=4 auto: built-in defaults run no genx plan on one node"
    fi
fi

rules_dir=$(mktemp -d)
trap 'rm -rf "$rules_dir"' EXIT
# Line numbers matter: the decision lines cite the rule by file:line.
cat > "$rules_dir/good.json" <<'JSON'
{"format": "genx-rules", "version": 1,
 "provenance": {"genx_version": "test", "topology": "*"},
 "allreduce": [
  {"comm_size": 4, "bytes": "0-1K", "algorithm": "rhd"},
  {"comm_size": 4, "algorithm": "ring", "params": "segment=64K"},
  {"algorithm": "model"}
 ]}
JSON
log=$logdir/rules-good.log
run "$log" 4 --mca coll_genx_rules "$rules_dir/good.json" --mca coll_genx_verbose 1
require_lines "P=4 coll_genx_rules: explicit rules by size, cited by file:line" "$log" $? \
    '(size class 8) on 4 ranks: rhd (.*\[rule .*good\.json:4 ' \
    "size class 8 did not run rhd citing good.json:4" \
    'on 4 ranks: ring (segment=64K.*\[rule .*good\.json:5 ' \
    "large sizes did not run ring (segment=64K) citing good.json:5"
# The same file on 3 ranks: no rule for 3 but the last, so the model decides.
log=$logdir/rules-fallthrough.log
run "$log" 3 --mca coll_genx_rules "$rules_dir/good.json" --mca coll_genx_verbose 1
require_lines "P=3 coll_genx_rules: rules for another size fall through to the model" "$log" $? \
    'on 3 ranks: .*good\.json:6 .*model predicts ' "decisions on 3 ranks do not cite the model rule good.json:6"

cat > "$rules_dir/bad.json" <<'JSON'
{"format": "genx-rules", "version": 1,
 "allreduce": [
  {"comm_size": 4, "algoritm": "rhd"}
 ]}
JSON
log=$logdir/rules-bad.log
run "$log" 3 --mca coll_genx_rules "$rules_dir/bad.json"
require_lines "P=3 coll_genx_rules: a bad file is reported with file:line and the defaults used" \
    "$log" $? \
    'bad\.json:3: allreduce\[0\]\.algoritm: unknown key' "no error naming bad.json:3 and the unknown key" \
    'built-in defaults' "the error does not say genx continues with its built-in defaults"

name="P=3 coll_genx_rules_strict=1: a bad file aborts the job"
log=$logdir/rules-strict.log
run "$log" 3 --mca coll_genx_rules "$rules_dir/bad.json" --mca coll_genx_rules_strict 1
rc=$?
if [ "$rc" -eq 0 ]; then
    fail "$name" "the job succeeded" "$log"
elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "$name" "mpirun did not finish within ${limit}s" "$log"
elif ! genx_lines "$log" | grep -q "bad\.json:3: .*aborting because rules_strict is set"; then
    fail "$name" "no error naming the file and the strict abort" "$log"
else
    pass "$name"
fi

# A "fallback" rule naming one of Open MPI's own allreduce algorithms
# (coll/base, what tuned runs when forced): blocking calls run it through
# genx's module, with every type, op and in-place case of allreduce_check
# correct; genx keeps MPI_Allreduce (the sizes are its choice) and hands
# MPI_Iallreduce back to libnbc (its table never names an algorithm), and
# ring and rabenseifner, which combine out of rank order, leave the
# non-commutative user op to the displaced component.
for alg in basic_linear nonoverlapping recursive_doubling ring rabenseifner; do
    cat > "$rules_dir/base.json" <<JSON
{"format": "genx-rules", "version": 1,
 "allreduce": [
  {"bytes": "0-1M", "algorithm": "fallback", "params": "base=$alg"},
  {"algorithm": "fallback"}
 ]}
JSON
    name="P=4 coll_genx_rules: fallback base=$alg runs Open MPI's $alg"
    log=$logdir/rules-base-$alg.log
    run "$log" 4 --mca coll_genx_rules "$rules_dir/base.json" --mca coll_genx_verbose 1
    rc=$?
    # MPI_Allreduce stays with genx (its sizes run Open MPI's algorithm);
    # MPI_Iallreduce, whose table never names one, is handed back to libnbc.
    if [ "$rc" -eq 0 ] && genx_lines "$log" | grep -q "MPI_Allreduce now calls"; then
        fail "$name" "genx handed MPI_Allreduce back although sizes run Open MPI's $alg" "$log"
        continue
    fi
    base_line="(4 ranks): fallback to coll/base: rule .*base\\.json:3 .*left to Open MPI's $alg (coll/base)"
    nb_aside="(4 ranks): every MPI_Iallreduce size defers (.*base\\.json:[34].*); genx steps aside for it: .*now call libnbc directly; MPI_Allreduce stays with genx"
    tuned_line="(4 ranks): fallback to tuned: rule .*base\\.json:3 .*left to Open MPI's $alg"
    case $alg in
    ring|rabenseifner)
        # The matrix product of allreduce_check does not commute.
        require_lines "$name" "$log" $rc \
            "$base_line" "no call names Open MPI's $alg and the rule base.json:3" \
            "$tuned_line.*the op is not commutative" "the non-commutative op was not left to tuned" \
            "$nb_aside" "MPI_Iallreduce, which never runs Open MPI's $alg, was not handed back to libnbc" ;;
    *)
        # These keep rank order: no call of the rule's sizes goes to tuned.
        if [ "$rc" -eq 0 ] && genx_lines "$log" | grep -q "$tuned_line"; then
            fail "$name" "a call was left to tuned although $alg takes every op" "$log"
            continue
        fi
        require_lines "$name" "$log" $rc \
            "$base_line" "no call names Open MPI's $alg and the rule base.json:3" \
            "$nb_aside" "MPI_Iallreduce, which never runs Open MPI's $alg, was not handed back to libnbc" ;;
    esac
done

# A "fallback" incumbent is priced as what the displaced component runs
# (docs/rules.md, "The fallback incumbent"): on Open MPI 4.1 with tuned
# below genx, tuned's fixed choice at each size (recursive doubling below
# 8 KiB on 4 ranks, rabenseifner from 8 KiB); with tuned's dynamic rules on,
# or on another Open MPI, Open MPI's best modelled algorithm.  A 50 % margin
# over a ring leaves every size the test calls to tuned, and each decline
# says why (the ring beyond 1 GiB keeps genx on the communicator).
cat > "$rules_dir/displaced.json" <<'JSON'
{"format": "genx-rules", "version": 1,
 "allreduce": [
  {"bytes": "0-1G", "algorithm": "model", "families": ["fallback", "ring"], "margin": 0.5},
  {"algorithm": "ring"}
 ]}
JSON
ompi_version=$("$ompi_info" --parsable | sed -n 's/^ompi:version:full://p')
declined="(4 ranks): fallback to tuned: rule .*displaced\\.json:3.*left to the component genx displaced; .* is not 50 % faster than"
name="P=4 a fallback incumbent is priced as tuned's fixed choice"
log=$logdir/displaced-tuned.log
run "$log" 4 --mca coll_genx_rules "$rules_dir/displaced.json" --mca coll_genx_verbose 1
case $ompi_version in
4.1.*)
    require_lines "$name" "$log" $? \
        "$declined Open MPI tuned's fixed choice (recursive_doubling → rd) " \
        "no small size was priced as tuned's recursive doubling" \
        "$declined Open MPI tuned's fixed choice (rabenseifner → rhd (distance=doubling)) " \
        "no large size was priced as tuned's rabenseifner" ;;
*)
    require_lines "$name (Open MPI $ompi_version: not known)" "$log" $? \
        "$declined Open MPI's best modelled (" "the incumbent was not priced as Open MPI's best modelled" ;;
esac
name="P=4 tuned's dynamic rules: the incumbent is Open MPI's best modelled"
log=$logdir/displaced-dynamic.log
run "$log" 4 --mca coll_genx_rules "$rules_dir/displaced.json" --mca coll_genx_verbose 1 \
    --mca coll_tuned_use_dynamic_rules 1
rc=$?
if [ "$rc" -eq 0 ] && genx_lines "$log" | grep -q "tuned's fixed choice"; then
    fail "$name" "a size was priced as tuned's fixed choice although its dynamic rules are on" "$log"
else
    require_lines "$name" "$log" $rc \
        "$declined Open MPI's best modelled (" "the incumbent was not priced as Open MPI's best modelled"
fi

# ------------------------------------------------------------ topology file
# coll_genx_topology_file places the ranks on a Slurm topology.conf by host
# name (Open MPI's name for this host: every local rank is on it).  A file
# genx cannot use, or a host it does not name, is reported with file and
# line (or rank) and the job goes on with hosts grouped by name.
topo_dir=$logdir/topology
mkdir -p "$topo_dir"
this_host=$(hostname | cut -d. -f1)
printf '# two leaves under a root\nSwitchName=leaf0 Nodes=%s,other[1-3]\nSwitchName=leaf1 Nodes=far[1-4]\nSwitchName=root Switches=leaf[0-1]\n' \
    "$this_host" > "$topo_dir/good.conf"
log=$logdir/topology-good.log
run "$log" 3 --mca coll_genx_topology_file "$topo_dir/good.conf" --mca coll_genx_verbose 1 \
    --mca coll_genx_allreduce_algorithm ring
require_lines "P=3 coll_genx_topology_file: the ranks are placed on the file's tree" "$log" $? \
    'topology .*good\.conf: 3 ranks on 1 hosts, 2 switch level(s) (fingerprint [0-9a-f]*)' \
    "no line saying where the 3 ranks sit on good.conf"
# GenTree on that placement: every result bit-exact (the checks of
# allreduce_check), every call through gentree.
log=$logdir/topology-gentree.log
run "$log" 4 --mca coll_genx_topology_file "$topo_dir/good.conf" --mca coll_genx_verbose 1 \
    --mca coll_genx_allreduce_algorithm gentree
require_lines "P=4 gentree forced on coll_genx_topology_file's tree" "$log" $? \
    'allreduce [0-9]* B (size class [^)]*) on 4 ranks: gentree (' "no call ran gentree"
# The graph families forced without a topology file (one switch over the
# ranks): every result bit-exact; mtree sends each pipeline chunk as one
# message of its own size (Transfer::segment_blocks) through the PML.
for alg in mtree multitree; do
    log=$logdir/forced-$alg.log
    run "$log" 4 --mca coll_genx_verbose 1 --mca coll_genx_allreduce_algorithm "$alg"
    require_lines "P=4 $alg forced" "$log" $? \
        "allreduce [0-9]* B (size class [^)]*) on 4 ranks: $alg (" "no call ran $alg"
done
printf 'SwitchName=leaf0 Nodes=%s\nSwitchName=root Switches=leaf0 Nodes=x1\n' "$this_host" > "$topo_dir/bad.conf"
log=$logdir/topology-bad.log
run "$log" 3 --mca coll_genx_topology_file "$topo_dir/bad.conf" --mca coll_genx_allreduce_algorithm ring
require_lines "P=3 coll_genx_topology_file: a bad file is reported with file:line, hosts grouped by name" \
    "$log" $? \
    'bad\.conf:2: .*genx groups hosts by name instead' "no error naming bad.conf:2 and what genx does instead"
printf 'SwitchName=leaf0 Nodes=elsewhere[1-2]\n' > "$topo_dir/elsewhere.conf"
log=$logdir/topology-elsewhere.log
run "$log" 2 --mca coll_genx_topology_file "$topo_dir/elsewhere.conf" --mca coll_genx_allreduce_algorithm ring
require_lines "P=2 coll_genx_topology_file: a rank on a host the file does not name is reported" \
    "$log" $? \
    "elsewhere\.conf: .*rank 0.*$this_host.*genx groups hosts by name instead" \
    "no error naming the rank, its host and what genx does instead"

# Slurm's per-task SLURM_TOPOLOGY_ADDR, no topology file: gathered at each
# communicator's first call, the ranks are placed on the switch tree the
# addresses describe (two app contexts stand for two nodes under two leaf
# switches).  Addresses that do not form a tree are reported and hosts stay
# grouped by name; ranks without an address leave it off (no rank waits).
slurm_run() {  # slurm_run LOG ADDR-A ADDR-B [mpirun args...]
    local log=$1 a=$2 b=$3
    shift 3
    local pat=SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
    local ea=() eb=()
    [ -z "$a" ] || ea=(-x "SLURM_TOPOLOGY_ADDR=$a" -x "$pat")
    [ -z "$b" ] || eb=(-x "SLURM_TOPOLOGY_ADDR=$b" -x "$pat")
    echo "+ $mpirun $* -np 2 ${ea[*]} $prog : -np 2 ${eb[*]} $prog" > "$log"
    timeout -k 10 "$limit" "$mpirun" "${base[@]}" --mca coll_genx_verbose 1 "$@" \
        -np 2 "${ea[@]}" "$prog" : -np 2 "${eb[@]}" "$prog" >> "$log" 2>&1
}
# A rules file chooses gentree (a forced gentree needs its topology when the
# communicator is created, before any address is gathered).
cat > "$rules_dir/gentree.json" <<'JSON'
{"format": "genx-rules", "version": 1, "allreduce": [{"comm_size": 4, "algorithm": "gentree"}]}
JSON
log=$logdir/slurm-addr.log
slurm_run "$log" spine.leaf1.n1 spine.leaf2.n2 --mca coll_genx_rules "$rules_dir/gentree.json"
require_lines "P=4 SLURM_TOPOLOGY_ADDR: the ranks are placed on the addresses' tree, gentree runs on it" \
    "$log" $? \
    'topology SLURM_TOPOLOGY_ADDR: 4 ranks on 2 hosts, 2 switch level(s)' \
    "no line placing the ranks by SLURM_TOPOLOGY_ADDR" \
    'allreduce [0-9]* B (size class [^)]*) on 4 ranks: gentree (' "no call ran gentree"
log=$logdir/slurm-addr-bad.log
slurm_run "$log" s1.leaf.n1 s2.leaf.n2 --mca coll_genx_allreduce_algorithm ring
require_lines "P=4 SLURM_TOPOLOGY_ADDR that is not a tree: reported, hosts grouped by name" "$log" $? \
    "SLURM_TOPOLOGY_ADDR 's2.leaf.n2': 'leaf' is under 's2' here but under 's1'.*genx groups hosts by name instead" \
    "no error naming the address and what genx does instead"
log=$logdir/slurm-addr-half.log
slurm_run "$log" spine.leaf1.n1 "" --mca coll_genx_allreduce_algorithm ring
rc=$?
if check_passed "P=4 SLURM_TOPOLOGY_ADDR on half the ranks: no placement, no wait" "$log" "$rc"; then
    if genx_lines "$log" | grep -q 'topology SLURM_TOPOLOGY_ADDR'; then
        fail "P=4 SLURM_TOPOLOGY_ADDR on half the ranks" "ranks were placed although two had no address" "$log"
    else
        pass "P=4 SLURM_TOPOLOGY_ADDR on half the ranks: no placement, no wait"
    fi
fi

# Ranks that decide differently (a rules file on some nodes only) would
# run different plans and hang: genx must notice and step aside.  Two app
# contexts, one with the file and one without.
log=$logdir/rules-disagree.log
echo "+ $mpirun -np 2 -x OMPI_MCA_coll_genx_rules=good.json $prog : -np 2 $prog" > "$log"
timeout -k 10 "$limit" "$mpirun" "${base[@]}" --mca coll_genx_verbose 1 \
    -np 2 -x OMPI_MCA_coll_genx_rules="$rules_dir/good.json" "$prog" : -np 2 "$prog" >> "$log" 2>&1
require_lines "P=4 rules on half the ranks: decisions differ, genx steps aside" "$log" $? \
    "decisions differ .*leaves this communicator's MPI_Allreduce to" \
    "no line saying the decisions differ and genx steps aside"

# ----------------------------------------- explicit component list
# Small segments also put many messages in flight per pair over the PML.
name="P=4 --mca coll self,basic,libnbc,tuned,genx, segment=4K"
log=$logdir/explicit-list.log
run "$log" 4 --mca coll self,basic,libnbc,tuned,genx \
    --mca coll_genx_allreduce_algorithm ring --mca coll_genx_allreduce_params segment=4K \
    --mca coll_genx_verbose 1
rc=$?
if check_passed "$name" "$log" "$rc"; then
    if genx_lines "$log" | grep -v fallback | grep -q '\bring (segment=4K'; then
        pass "$name"
    else
        fail "$name" "genx did not run ring" "$log"
    fi
fi

# ------------------- the reference communicator is served without genx
# At verbosity 2 genx names every communicator it is enabled on; only
# MPI_COMM_WORLD (cid 0) may appear, not the ^genx duplicate.
name="P=3 reference communicator excludes genx"
log=$logdir/reference.log
run "$log" 3 --mca coll_genx_verbose 2
rc=$?
if check_passed "$name" "$log" "$rc"; then
    enabled=$(genx_lines "$log" | grep -c '^genx: comm 0 (3 ranks): enabled')
    others=$(genx_lines "$log" | grep '^genx: comm [0-9]* ([0-9]* ranks): enabled' | grep -vc '^genx: comm 0 ')
    if [ "$enabled" -ne 3 ]; then
        fail "$name" "expected genx enabled on MPI_COMM_WORLD on 3 ranks, saw $enabled" "$log"
    elif [ "$others" -ne 0 ]; then
        fail "$name" "genx was enabled on another communicator" "$log"
    else
        pass "$name"
    fi
fi

# ------------------------------------------------------ genx excluded
name="P=4 --mca coll ^genx"
log=$logdir/excluded.log
run "$log" 4 --mca coll '^genx' --mca coll_genx_verbose 1
rc=$?
if check_passed "$name" "$log" "$rc"; then
    if [ -n "$(genx_lines "$log")" ]; then
        fail "$name" "genx printed output although excluded" "$log"
    else
        pass "$name"
    fi
fi

# ------------------------------------------------- bad configuration
name="P=3 bad algorithm name"
log=$logdir/bad-algorithm.log
run "$log" 3 --mca coll_genx_allreduce_algorithm no_such_algorithm
rc=$?
if check_passed "$name" "$log" "$rc"; then
    n=$(genx_lines "$log" | grep -c 'no_such_algorithm.*genx is disabled')
    if [ "$n" -ne 3 ]; then
        fail "$name" "expected one error naming the algorithm per process (3), saw $n" "$log"
    else
        pass "$name"
    fi
fi

name="P=3 bad params"
log=$logdir/bad-params.log
run "$log" 3 --mca coll_genx_allreduce_algorithm ring --mca coll_genx_allreduce_params no_such_key=1
rc=$?
if check_passed "$name" "$log" "$rc"; then
    n=$(genx_lines "$log" | grep -c 'no_such_key.*genx is disabled')
    if [ "$n" -ne 3 ]; then
        fail "$name" "expected one error naming the parameter per process (3), saw $n" "$log"
    else
        pass "$name"
    fi
fi

# ------------------------------------------------------------ ompi_info
name="ompi_info lists genx parameters"
log=$logdir/ompi_info.log
# ompi_info 4.1 opens its components before it reads --mca from its own
# command line, so the path goes through the environment.
OMPI_MCA_mca_base_component_path="$component_path" \
    "$ompi_info" --param coll genx --level 9 > "$log" 2>&1
missing=""
for p in priority verbose allreduce_algorithm allreduce_params rules rules_strict topology_file topology_overlay; do
    grep -q "MCA coll genx: parameter \"coll_genx_$p\"" "$log" || missing="$missing coll_genx_$p"
done
if [ -n "$missing" ]; then
    fail "$name" "missing:$missing" "$log"
elif ! grep -q 'MCA coll genx: parameter "coll_genx_priority" (current value: "40"' "$log"; then
    fail "$name" "coll_genx_priority does not default to 40" "$log"
elif ! grep -A3 'coll_genx_allreduce_algorithm' "$log" | grep -q 'ring'; then
    fail "$name" "coll_genx_allreduce_algorithm's help does not list the algorithms" "$log"
else
    pass "$name"
fi

echo
echo "genx MPI integration tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
