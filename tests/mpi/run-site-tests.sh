#!/usr/bin/env bash
# coll_genx_site (docs/site.md) under mpirun: a site directory whose
# topology.conf names this host, an overlay and a rules file running ring.
#   - fitting: one verbose-1 line says the three files are used, the ranks
#     are placed on the site's tree, the site's rules run ring;
#   - tuned against another Open MPI: the reason is said, the network is
#     kept, the rules are not (the built-in defaults leave one node to the
#     displaced component, so nothing runs ring);
#   - a malformed site.json: reported at verbosity 0 with file:line and
#     field, the job completes with correct results;
#   - with Slurm's per-task switch addresses: the site's topology.conf
#     places the ranks, and without one the addresses do, rated by the
#     site's overlay.json;
#   - a directory that does not exist: nothing said at verbosity 1.
# Every run must compute correct results (allreduce_check).
# Environment: GENX_BUILDDIR (the build tree, default .), GENX_MPIRUN,
# GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR, GENX_MPI_TIMEOUT (mpi-env.sh).
# Exit: 0 all passed, 1 a check failed, 77 skipped (no mpirun).
set -u

PROG_NAME=allreduce_check
# shellcheck source=tests/mpi/mpi-env.sh
. "$(dirname "$0")/mpi-env.sh"
unset SLURM_TOPOLOGY_ADDR SLURM_TOPOLOGY_ADDR_PATTERN
# shellcheck source=tests/mpi/results.sh
. "$(dirname "$0")/results.sh"

# check NAME LOG RC [present REGEX WHY | absent REGEX WHY]...: the run
# passed allreduce_check, and genx's lines hold (or lack) each REGEX.
check() {
    local name=$1 log=$2 rc=$3
    shift 3
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$name" "mpirun did not finish within ${limit}s" "$log"
        return
    fi
    if [ "$rc" -ne 0 ] || ! grep -q '^allreduce_check: PASS' "$log"; then
        fail "$name" "allreduce_check failed (exit $rc)" "$log"
        return
    fi
    while [ $# -ge 3 ]; do
        local found=0
        genx_lines "$log" | grep -q -- "$2" && found=1
        if { [ "$1" = present ] && [ $found -eq 0 ]; } || { [ "$1" = absent ] && [ $found -eq 1 ]; }; then
            fail "$name" "$3" "$log"
            return
        fi
        shift 3
    done
    pass "$name"
}

genx_version=$(sed -n 's/^PACKAGE_VERSION = //p' "$builddir/Makefile")
mpi_version=$("$ompi_info" --parsable | sed -n "s/^ompi:version:full://p")
if [ -z "$genx_version" ] || [ -z "$mpi_version" ]; then
    echo "FAIL: cannot tell genx's version (Makefile) or Open MPI's (ompi_info --parsable)"
    exit 1
fi
this_host=$(hostname | cut -d. -f1)
sites=$logdir/sites
rm -rf "$sites"
mkdir -p "$sites"

# make_site DIR MPI_VERSION: a site for this host, tuned with this genx
# against MPI_VERSION.
make_site() {
    local dir=$1 mpi=$2
    mkdir -p "$dir"
    printf 'SwitchName=leaf0 Nodes=%s,other[1-3]\nSwitchName=leaf1 Nodes=far[1-4]\nSwitchName=root Switches=leaf[0-1]\n' \
        "$this_host" > "$dir/topology.conf"
    printf '{"version": 1, "levels": {"1": {"rate": "10 Gbit/s", "latency": "5 us"}, "2": {"rate": "20 Gbit/s", "latency": "10 us"}}}\n' \
        > "$dir/overlay.json"
    printf '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "ring"}]}\n' > "$dir/rules.json"
    cat > "$dir/site.json" <<EOF
{
  "format": "genx-site",
  "version": 1,
  "genx_version": "$genx_version",
  "mpi_version": "$mpi",
  "date": "2026-11-29T08:00:00Z",
  "command": "genx-tune --site $dir",
  "hosts": ["$this_host"],
  "topology": "topology.conf",
  "overlay": "overlay.json",
  "rules": "rules.json"
}
EOF
}

# A site that fits: everything used.
site=$sites/fits
make_site "$site" "$mpi_version"
log=$logdir/site-fits.log
run "$log" 4 --mca coll_genx_site "$site" --mca coll_genx_verbose 1
check "P=4 coll_genx_site: a fitting site's network and rules are used" "$log" $? \
    present "site $site (tuned 2026-11-29 on 1 hosts with genx $genx_version, Open MPI $mpi_version): topology.conf, overlay.json, rules.json used; link rates: from $site/overlay.json" \
    "no line saying the site's three files are used" \
    present "topology $site/topology.conf + $site/overlay.json: 4 ranks on 1 hosts" \
    "the ranks were not placed on the site's topology.conf" \
    present "allreduce [0-9]* B (size class [^)]*) on 4 ranks: ring (" \
    "no call ran the site's rules (ring)" \
    absent "does not fit" "a fitting site was called stale"

# Tuned against another Open MPI: network kept, rules not.
site=$sites/stale
make_site "$site" 0.0.0
log=$logdir/site-stale.log
run "$log" 4 --mca coll_genx_site "$site" --mca coll_genx_verbose 1
check "P=4 coll_genx_site: a site tuned against another Open MPI keeps its network, not its rules" \
    "$log" $? \
    present "site $site does not fit this job: it was tuned against Open MPI 0.0.0, this job runs Open MPI $mpi_version; its rules are not used" \
    "the stale reason was not said" \
    present "rules.json not used (tuned for other software: built-in defaults)" \
    "the sources line does not say the rules were left out" \
    present "topology $site/topology.conf + $site/overlay.json: 4 ranks on 1 hosts" \
    "the stale site's network was not used" \
    absent "on 4 ranks: ring (" "the stale site's rules (ring) ran"

# A malformed site.json: reported without verbosity, the job completes.
site=$sites/malformed
make_site "$site" "$mpi_version"
sed -i 's/"hosts": \[.*\]/"hosts": "'"$this_host"'"/' "$site/site.json"
log=$logdir/site-malformed.log
run "$log" 4 --mca coll_genx_site "$site"
check "P=4 coll_genx_site: a malformed site.json is reported with file:line, the site ignored" \
    "$log" $? \
    present "$site/site.json:8: field 'hosts' must be a list of host names; genx ignores the site directory $site and uses its built-in defaults" \
    "no error naming site.json:8, the field and what genx does instead" \
    absent "topology $site" "the ignored site's topology was used"

# Slurm's per-task SLURM_TOPOLOGY_ADDR (two app contexts stand for two
# nodes under two leaf switches, as in run-mpi-tests.sh): a site's
# topology.conf places the ranks, so the addresses are not used; a site
# without one lets them place the ranks, with the site's overlay.json.
slurm_run() {  # slurm_run LOG [mpirun args...]
    local log=$1
    shift
    local pat=SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
    echo "+ $mpirun $* -np 2 (spine.leaf1.n1) $prog : -np 2 (spine.leaf2.n2) $prog" > "$log"
    timeout -k 10 "$limit" "$mpirun" "${base[@]}" --mca coll_genx_verbose 1 "$@" \
        -np 2 -x SLURM_TOPOLOGY_ADDR=spine.leaf1.n1 -x "$pat" "$prog" : \
        -np 2 -x SLURM_TOPOLOGY_ADDR=spine.leaf2.n2 -x "$pat" "$prog" >> "$log" 2>&1
}
site=$sites/fits
log=$logdir/site-slurm-topology.log
slurm_run "$log" --mca coll_genx_site "$site"
check "P=4 coll_genx_site with SLURM_TOPOLOGY_ADDR: the site's topology.conf places the ranks" \
    "$log" $? \
    present "topology $site/topology.conf + $site/overlay.json: 4 ranks on 1 hosts" \
    "the ranks were not placed on the site's topology.conf" \
    absent "topology SLURM_TOPOLOGY_ADDR" "the Slurm addresses placed the ranks over the site's file"
site=$sites/overlay-only
make_site "$site" "$mpi_version"
rm "$site/topology.conf"
sed -i '/"topology":/d' "$site/site.json"
log=$logdir/site-slurm-overlay.log
slurm_run "$log" --mca coll_genx_site "$site"
check "P=4 coll_genx_site with SLURM_TOPOLOGY_ADDR: no topology.conf, the addresses place the ranks with the site's overlay" \
    "$log" $? \
    present "topology SLURM_TOPOLOGY_ADDR + $site/overlay.json: 4 ranks on 2 hosts" \
    "the addresses did not place the ranks with the site's overlay.json" \
    present "site $site (tuned [^)]*): overlay.json, rules.json used; no topology.conf; link rates: from $site/overlay.json" \
    "the sources line does not say the site has no topology.conf"

# A site whose model leaves 4-16 KiB to tuned but prices genx's butterfly
# ahead of it (a "model" rule with measured scales, as genx-tune --site
# writes for shapes it did not time): the first blocking calls of those
# sizes time both, every result stays exact, and rank 0 says what the trial
# kept; coll_genx_trial_rounds 0 turns trials off.
site=$sites/trial
make_site "$site" "$mpi_version"
printf '{"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model", "families": ["fallback", "ring", "rd", "rhd", "butterfly"], "margin": 0.95, "scale": {"fallback": 1.0}}]}\n' \
    > "$site/rules.json"
log=$logdir/site-trial.log
run "$log" 4 --mca coll_genx_site "$site" --mca coll_genx_verbose 1
check "P=4 coll_genx_site: first-call trials time the plans the model prices ahead, results exact" \
    "$log" $? \
    present "allreduce 4K-8K B on 4 ranks: first-call trial, 10 timed calls each (each candidate's median, the slowest rank's): the displaced component [0-9.]* [mu]*s, butterfly ([^)]*) [0-9.]* [mu]*s[,;] " \
    "no line saying what the 4K-8K trial measured and kept" \
    present "fallback to [a-z]*: first-call trial, the displaced component's turn: rule [^ ]*:1 (allreduce\[0\]): left to the component genx displaced" \
    "the displaced component's turn does not name the rule that deferred the size (bench/compare accepts deferrals by that form)"
log=$logdir/site-trial-off.log
run "$log" 4 --mca coll_genx_site "$site" --mca coll_genx_verbose 1 --mca coll_genx_trial_rounds 0
check "P=4 coll_genx_site, coll_genx_trial_rounds 0: no trial" "$log" $? \
    absent "first-call trial" "a trial ran with coll_genx_trial_rounds 0"

# A directory that does not exist: silent at verbosity 1.
log=$logdir/site-missing.log
run "$log" 4 --mca coll_genx_site "$sites/none" --mca coll_genx_verbose 1
check "P=4 coll_genx_site: a missing directory is silent at verbosity 1" "$log" $? \
    absent "site " "a missing site directory was mentioned"

echo
echo "genx site directory tests ($mpirun, component path $component_path):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "  $npass passed, $nfail failed; logs in $logdir"
[ "$nfail" -eq 0 ]
