#!/usr/bin/env bash
# The rate and delay a link is configured with are what a transfer sees.
#
# Tolerances (stated in bench/README.md):
#  - TCP goodput over a link of rate R is within [0.85, 1.00] x R; the ideal
#    is 0.956 x R at MTU 1500 (TCP/IP headers with timestamps and the
#    Ethernet header are 66 of every 1514 bytes tbf counts).
#  - the minimum round trip over a path with one-way configured delay D is
#    within [2D, 2D x 1.05 + 1 ms]; never below 2D.
# A measurement that misses is repeated once (the machine may be busy).
set -u
. "${srcdir:-$(dirname "$0")/../..}/tests/cluster/lib.sh"
require_cluster_support

name=$(cname sh)
tmp=$(mktemp -d)
trap 'cleanup; rm -rf "$tmp"' EXIT
cat > "$tmp/topo.txt" <<'EOF'
# one switch; h0 is far away, h2 is slow
defaults rate=50M queue=100p
switch sw
host h0 sw delay=2ms
host h1 sw
host h2 sw rate=20M
EOF
up "$name" "$tmp/topo.txt"

topo=$(timeout 30 python3 "$GC" --name "$name" status --json)
tf=$(json_get "$topo" 'd["topology_file"]')
doc=$(cat "$tf")
check "$(json_get "$doc" '[l["rate_bps"] for l in d["links"] if "h2" in (l["a"], l["b"])][0]') == 20e6" \
    "topology file records h2's link at 20 Mbit/s"
check "$(json_get "$doc" '[l["delay_us"] for l in d["links"] if "h0" in (l["a"], l["b"])][0]') == 2000" \
    "topology file records h0's link delay of 2 ms"
check "$(json_get "$doc" 'len(set(h["address"] for h in d["hosts"]))') == 3" \
    "topology file gives three distinct host addresses"

# rate_ok SRC DST RATE: goodput within [0.85, 1.00] x RATE, one retry
rate_ok() {
    local src=$1 dst=$2 rate=$3 attempt out got
    for attempt in 1 2; do
        out=$(timeout 60 python3 "$GC" --name "$name" probe rate "$src:$dst" --seconds 3) ||
            fail "probe rate $src:$dst failed"
        got=$(json_get "$out" 'd["goodput_bps"]')
        echo "goodput $src->$dst: $got bit/s (link $rate bit/s, attempt $attempt)"
        python3 -c "import sys; sys.exit(0 if 0.85*$rate <= $got <= 1.0*$rate else 1)" && {
            echo "ok: $src->$dst goodput within [0.85, 1.00] x $rate"; return 0; }
    done
    fail "$src->$dst goodput $got is outside [0.85, 1.00] x $rate"
}

# rtt_ok SRC DST ONE_WAY_US: minimum round trip within [2D, 2D*1.05 + 1ms], one retry
rtt_ok() {
    local src=$1 dst=$2 d=$3 attempt out got
    for attempt in 1 2; do
        out=$(timeout 60 python3 "$GC" --name "$name" probe rtt "$src" "$dst" --count 30) ||
            fail "probe rtt $src $dst failed"
        got=$(json_get "$out" 'd["min_us"]')
        echo "min rtt $src<->$dst: $got us (configured one-way $d us, attempt $attempt)"
        python3 -c "import sys; sys.exit(0 if 2*$d <= $got <= 2*$d*1.05 + 1000 else 1)" && {
            echo "ok: $src<->$dst round trip within [2D, 2D*1.05+1ms], D=$d us"; return 0; }
    done
    fail "$src<->$dst minimum round trip $got us is outside [2D, 2D*1.05+1ms] for D=$d us"
}

rate_ok h1 h0 50e6      # through the delayed link: its rate holds with the delay line in the path
rate_ok h1 h2 20e6      # the slow host link is the bottleneck
rtt_ok h1 h2 0
rtt_ok h0 h1 2000

# --pace: after an idle gap tbf's bucket of two frames leaves at veth speed;
# paced, only the first frame does and the rest follows at the link's rate.
# 30,000 bytes each way over h2's 20 Mbit/s link: at least 2 x 0.85 x
# (30,000 - one 9,014-byte frame) x 8 / 20e6 = 14.3 ms for the round trip
# (0.85: the goodput tolerance above).  Unpaced, 18 KB of it leave at once.
min_rtt() {
    local out
    out=$(timeout 60 python3 "$GC" --name "$1" probe rtt h1 h2 --count 20 --size 30000) ||
        fail "probe rtt h1 h2 --size 30000 on $1 failed"
    json_get "$out" 'd["min_us"]'
}
unpaced=$(min_rtt "$name")
echo "unpaced: 30,000-byte round trip h1<->h2 min $unpaced us"
timeout 60 python3 "$GC" --name "$name" down >/dev/null 2>&1 || fail "down $name failed"
name=$(cname sp)
up "$name" "$tmp/topo.txt" --pace
for ns in $(ip netns list | awk '{print $1}' | grep "^$name-"); do
    for dev in $(tc -n "$ns" qdisc show | awk '$2 == "tbf" {print $5}'); do
        tc -n "$ns" qdisc show dev "$dev" | grep -q "peakrate" || fail "--pace: $ns $dev has no peakrate"
    done
done
echo "ok: --pace: every shaped link has a peak rate"
check "$(json_get "$(timeout 30 python3 "$GC" --name "$name" status --json)" 'd["paced"]') == True" \
    "--pace is recorded in the cluster's state"
paced=$(min_rtt "$name")
echo "paced: 30,000-byte round trip h1<->h2 min $paced us"
check "$paced >= 2 * 0.85 * (30000 - 9014) * 8 / 20e6 * 1e6" \
    "--pace: the round trip ($paced us) is paced at h2's 20 Mbit/s beyond the first frame"
rate_ok h1 h2 20e6      # pacing keeps the rate
echo "PASS"
