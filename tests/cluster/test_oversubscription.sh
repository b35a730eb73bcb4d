#!/usr/bin/env bash
# Hosts under different leaves share their leaf's uplink as configured.
#
# tree:2x2 with host links of 50 Mbit/s and --oversub 2: each leaf has 2 x 50
# Mbit/s of hosts over a 50 Mbit/s uplink.  Two flows that cross from leaf0
# to leaf1 at once share that uplink (together at most the uplink rate, 5 %
# allowed for the two 4 s measurements not starting at the same instant; each
# well below its own link's rate); two flows that stay inside their leaves
# each get their full link rate.
set -u
. "${srcdir:-$(dirname "$0")/../..}/tests/cluster/lib.sh"
require_cluster_support

name=$(cname ov)
up "$name" tree:2x2 --rate 50M --oversub 2

topo=$(timeout 30 python3 "$GC" --name "$name" status --json)
doc=$(cat "$(json_get "$topo" 'd["topology_file"]')")
uplink=$(json_get "$doc" '[l["rate_bps"] for l in d["links"] if {l["a"], l["b"]} == {"leaf0", "root"}][0]')
check "$uplink == 50e6" "leaf0's uplink is 50 Mbit/s (2 hosts x 50 Mbit/s / oversubscription 2)"
hosts_under=$(json_get "$doc" '",".join(h["name"]+"@"+h["switch"] for h in d["hosts"])')
[ "$hosts_under" = "h0@leaf0,h1@leaf0,h2@leaf1,h3@leaf1" ] || fail "unexpected host placement $hosts_under"
echo "ok: hosts placed $hosts_under"

# flows PAIR PAIR: concurrent goodputs as "a b"
flows() {
    local out
    out=$(timeout 60 python3 "$GC" --name "$name" probe rate "$1" "$2" --seconds 4) || fail "probe rate $1 $2 failed"
    echo "$out" | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["goodput_bps"]) for l in sys.stdin))'
}

for attempt in 1 2; do
    read -r x1 x2 <<< "$(flows h0:h2 h1:h3)"
    read -r l1 l2 <<< "$(flows h0:h1 h2:h3)"
    echo "cross-leaf flows: $x1 $x2 bit/s; same-leaf flows: $l1 $l2 bit/s (attempt $attempt)"
    if python3 -c "import sys; sys.exit(0 if (0.8*$uplink <= $x1+$x2 <= 1.05*$uplink and max($x1,$x2) <= 0.7*50e6
                    and min($l1,$l2) >= 0.85*50e6) else 1)"; then
        echo "ok: two cross-leaf flows share the 50 Mbit/s uplink (sum within [0.8, 1.05] x uplink, each <= 0.7 x host link)"
        echo "ok: same-leaf flows each get >= 0.85 x their 50 Mbit/s links"
        echo "PASS"
        exit 0
    fi
done
fail "oversubscription not visible as configured (cross $x1 + $x2 vs uplink $uplink; same-leaf $l1, $l2)"
