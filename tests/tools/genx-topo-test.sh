#!/bin/sh
# genx-topo's command line: exit codes (0 ok, 1 invalid topology, 2 bad
# command line), the FILE:LINE of every planted error in tests/topology/,
# the printed tree, JSON, SVG, rank placement, and this-host discovery from
# the fake sysfs tree and the hwloc XML fixture (never this machine's,
# except that --ucx asks this machine's UCX).
# Run by `make check` from the build directory (where genx-topo is built).
set -u
topo=${GENX_TOPO:-${GENX_BUILDDIR:-.}/genx-topo}
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fx=$src/tests/topology
fails=0
out=$(mktemp)
dir=$(mktemp -d)
trap 'rm -rf "$out" "$dir"' EXIT

tool=$topo
. "$src/tests/tools/expect.sh"

# Valid files.
expect 0 "^ok: $fx/tree.conf: 3 switch\(es\), 8 host\(s\), 2 level\(s\), 2 link class\(es\) \(2 without a rate\), fingerprint 0x[0-9a-f]{16}$" \
    --check "$fx/tree.conf"
expect 0 "^ok: $fx/tree.conf with $fx/tree-overlay.json: 3 switch\(es\), 8 host\(s\), 2 level\(s\), 4 link class\(es\), fingerprint" \
    --check "$fx/tree.conf" --overlay "$fx/tree-overlay.json"
expect 0 "^note: $fx/multi-root.conf: 2 root switches \(dcA, dcB\); genx added a virtual root" --check "$fx/multi-root.conf"
# --probe's options, refused before any MPI starts.
expect 2 '--probe measures the network; it takes no topology file' --probe "$fx/tree.conf"
expect 2 '--probe measures between hosts; --sysfs-root' --probe --binding 0
expect 2 '--out, --overlay-out and --pings need --probe' --pings 3
expect 2 '--out, --overlay-out and --pings need --probe' "$fx/tree.conf" --out x.conf
expect 0 '^  xdc: rate 50 Mbit/s, latency 20 ms, cross-datacenter \[overlay ' "$fx/tree.conf" --overlay "$fx/tree-overlay.json"
expect 0 '^  leaf2 \[switch, level 1\]  up: xdc  oversubscription 1000:1$' "$fx/tree.conf" --overlay "$fx/tree-overlay.json"
expect 0 '^    node02 \[host\]  up: leaf$' "$fx/tree.conf"
expect 0 '"name": "r2n1"' "$fx/tree.conf" --json
expect 0 '^    extra \[host\]  up: leaf  ranks 2 3$' "$fx/tree.conf" --ranks 'node0[1-2],extra,extra'

# Planted errors: exit 1 and FILE:LINE.
expect 1 "^genx-topo: $fx/bad-both.conf:3: SwitchName=spine has both Switches= and Nodes=" --check "$fx/bad-both.conf"
expect 1 "^genx-topo: $fx/bad-cycle.conf:1: Switches=: the switches form a cycle" --check "$fx/bad-cycle.conf"
expect 1 "^genx-topo: $fx/bad-unknown-key.conf:3: unknown key 'Bandwidth'" --check "$fx/bad-unknown-key.conf"
expect 1 "^genx-topo: $fx/bad-no-children.conf:2: SwitchName=spine has no children" --check "$fx/bad-no-children.conf"
expect 1 "^genx-topo: $fx/bad-undefined.conf:2: Switches=: switch 'leaf2' is not defined" --check "$fx/bad-undefined.conf"
expect 1 "^genx-topo: $fx/bad-two-switches.conf:2: Nodes=: node n04 is already under switch leaf1 \(line 1\)" \
    --check "$fx/bad-two-switches.conf"
expect 1 "^genx-topo: $fx/bad-hostlist.conf:1: Nodes=: hostlist 'n\[1-2' has an unclosed" "$fx/bad-hostlist.conf"
expect 1 "^genx-topo: $fx/bad-overlay-switch.json: switches.leaf\[1-3\]: no switch named 'leaf3'" \
    --check "$fx/tree.conf" --overlay "$fx/bad-overlay-switch.json"
expect 1 "^genx-topo: $fx/bad-overlay-syntax.json:4: not valid JSON" --check "$fx/tree.conf" --overlay "$fx/bad-overlay-syntax.json"
expect 1 "^genx-topo: $dir/none.conf: cannot be read$" --check "$dir/none.conf"
expect 1 "^genx-topo: --ranks: rank 1 runs on host 'zz', which the topology does not hold$" "$fx/tree.conf" --ranks node01,zz

# Bad command lines: exit 2.
expect 2 'give the file either with --check or alone' "$fx/tree.conf" --check "$fx/tree.conf"
expect 2 '--overlay and --ranks need a topology.conf' --overlay "$fx/tree-overlay.json"
expect 2 'do not apply to a topology.conf' "$fx/tree.conf" --binding 0
expect 2 '--check prints no tree' --check "$fx/tree.conf" --json
expect 2 'nope' --nope

# SVG drawing.
if ! "$topo" "$fx/tree.conf" --overlay "$fx/tree-overlay.json" --svg "$dir/t.svg" ||
    ! grep -q '>leaf2</text>' "$dir/t.svg" || ! grep -q 'stroke-dasharray="6,3"' "$dir/t.svg"; then
    echo "FAIL: --svg did not draw leaf2 and its cross-datacenter link"
    fails=$((fails + 1))
fi

# This host, from fixtures.
here="--sysfs-root $fx/sysfs --hwloc-xml $fx/host-2pkg.xml --binding 2-3 --no-libfabric --host-name h0"
# shellcheck disable=SC2086
expect 0 '^h0 \[host\]$' $here
# shellcheck disable=SC2086
expect 0 '^  nic ib0/mlx5_0 \(openfabrics, pci 0000:03:00.0, package 0\) 100 Gbit/s \[sysfs\]$' $here
# shellcheck disable=SC2086
expect 0 '^      core 2  ranks 0$' $here
# shellcheck disable=SC2086
expect 0 '^note: binding of this process \(rank 0 here\): cpus 2-3 \(given\)$' $here
# shellcheck disable=SC2086
expect 0 '^note: down0: no source gives a rate \(sysfs: speed -1 \(unknown or link down\)\)$' $here
expect 1 '^genx-topo: hwloc: binding .9. names cpus the host does not have$' \
    --sysfs-root "$fx/sysfs" --hwloc-xml "$fx/host-2pkg.xml" --binding 9 --no-libfabric

# UCX, opt-in: it only describes this host.  --ucx is the one check here
# that asks this machine (its UCX, whatever devices it has): the walk must
# run, end and leave the fixtures' tree as it was (what UCX's numbers do in
# the merge is tested in test_discovery.cpp).
expect 2 'and --ucx describe this host; they do not apply to a topology.conf' "$fx/tree.conf" --ucx
expect 2 '--no-libfabric and --ucx describe this host' --probe --ucx
# shellcheck disable=SC2086
expect 0 '^  nic ib0/mlx5_0 \(openfabrics, pci 0000:03:00.0, package 0\) 100 Gbit/s \[sysfs\]$' $here --ucx
if grep -q '^note: ucx: [^n]' "$out"; then
    echo "FAIL: genx-topo --ucx could not walk UCX's interfaces:"
    sed 's/^/    /' "$out"
    fails=$((fails + 1))
fi

# --probe names hosts as genx reads a topology file back (SLURMD_NODENAME,
# else the host name): two local ranks given different SLURMD_NODENAMEs are
# two hosts, and the topology.conf it writes names them (by the host name
# alone, both would be one host and the probe would stop with exit 1).
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
if [ -n "$mpirun" ] && [ -x "$mpirun" ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 "$mpirun" \
        --oversubscribe --mca coll '^genx' \
        -np 1 -x SLURMD_NODENAME=probe-a "$topo" --probe --pings 5 --out "$dir/probe.conf" : \
        -np 1 -x SLURMD_NODENAME=probe-b "$topo" --probe --pings 5 --out "$dir/probe.conf" \
        >"$out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -Eq '^SwitchName=.*Nodes=probe-(a,probe-b|\[a-b\])' "$dir/probe.conf" 2>/dev/null; then
        echo "FAIL: genx-topo --probe with SLURMD_NODENAME probe-a/probe-b -> exit $rc, topology.conf:"
        sed 's/^/    /' "$dir/probe.conf" "$out" 2>/dev/null
        fails=$((fails + 1))
    fi
else
    echo "note: mpirun not found; --probe's host naming not checked"
fi

if [ "$fails" -ne 0 ]; then
    echo "genx-topo: $fails check(s) failed"
    exit 1
fi
echo "genx-topo: all checks passed"
