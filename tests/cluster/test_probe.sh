#!/usr/bin/env bash
# genx-topo --probe finds the switch tree of an emulated cluster it is not
# told about: tree:2x2 with 1 ms on each uplink (so a round trip across the
# root is 4 ms above one inside a leaf) and 2:1 oversubscribed uplinks, one
# rank per host.  The topology.conf it writes must put h0,h1 under one leaf
# and h2,h3 under another, both under the root; its overlay must read back
# (genx-topo --check) with uplinks measured below the two hosts' links
# together.
set -u
. "${srcdir:-$(dirname "$0")/../..}/tests/cluster/lib.sh"
require_cluster_support
builddir=${GENX_BUILDDIR:-$(pwd)}
topo="$builddir/genx-topo"
require_mpi_program "$topo" genx-topo

name=$(cname pr)
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'cleanup; rm -rf "$tmp"' EXIT
up "$name" tree:2x2 --rate 100M --oversub 2 --uplink-delay 1ms
gc() { timeout 300 python3 "$GC" --name "$name" "$@"; }

gc run --timeout 240 -- mpirun -np 4 --mca coll ^genx "$topo" --probe --pings 20 \
    --out "$tmp/probe.conf" --overlay-out "$tmp/probe.json" 2>"$tmp/err" ||
    fail "genx-topo --probe failed: $(cat "$tmp/err")"
grep -q "round-trip times" "$tmp/err" || fail "no progress on stderr: $(cat "$tmp/err")"
conf=$(grep -v '^#' "$tmp/probe.conf")
leaf_of() { echo "$conf" | grep -E "Nodes=([^ ]*,)?$1(,|$)" | sed -E 's/^SwitchName=([^ ]+).*/\1/'; }
l0=$(leaf_of h0) l1=$(leaf_of h1) l2=$(leaf_of h2) l3=$(leaf_of h3)
[ -n "$l0" ] && [ "$l0" = "$l1" ] && [ -n "$l2" ] && [ "$l2" = "$l3" ] && [ "$l0" != "$l2" ] ||
    fail "hosts grouped as h0:$l0 h1:$l1 h2:$l2 h3:$l3 in: $(cat "$tmp/probe.conf")"
echo "$conf" | grep -Eq "^SwitchName=probe-root Switches=($l0,$l2|$l2,$l0)$" ||
    fail "the root does not hold both leaves: $(cat "$tmp/probe.conf")"
echo "ok: --probe grouped h0,h1 and h2,h3 under two leaves of one root"
out=$("$topo" --check "$tmp/probe.conf" --overlay "$tmp/probe.json" 2>&1) ||
    fail "genx-topo --check refuses what --probe wrote: $out"
json=$("$topo" "$tmp/probe.conf" --overlay "$tmp/probe.json" --json) || fail "genx-topo --json failed"
# Host links measured near 100 Mbit/s; each uplink carried about one host's
# rate with two sending (2:1): oversubscription well above 1.
python3 - "$json" <<'PY' || fail "measured rates: $(cat "$tmp/probe.conf")"
import json, sys
t = json.loads(sys.argv[1])
nodes = t["nodes"]
classes = {c["name"]: c for c in t["link_classes"]}
host = [n for n in nodes if n["kind"] == "host"][0]
hr = classes[host["up_class"]]["rate_bytes_per_s"]
assert 0.6 * 12.5e6 <= hr <= 1.1 * 12.5e6, "host rate %g B/s" % hr
leaves = [n for n in nodes if n["kind"] == "switch" and n["parent"] >= 0]
assert len(leaves) == 2, leaves
for l in leaves:
    assert (l["oversubscription"] or 0) >= 1.4, "uplink oversubscription %s" % l["oversubscription"]
print("rates: host %.0f Mbit/s, uplink oversubscription %s" % (hr * 8 / 1e6, [l["oversubscription"] for l in leaves]))
PY
echo "ok: the overlay reads back; host links near 100 Mbit/s, uplinks oversubscribed"
