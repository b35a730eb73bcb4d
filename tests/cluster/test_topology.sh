#!/usr/bin/env bash
# Topologies: presets, the text and JSON formats, the topology file as
# input, and the errors a bad description gets.  `up --dry-run` builds
# nothing, so this test needs neither root nor namespaces.
set -u
top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
GC="$top/bench/genx-cluster"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (genx-cluster needs it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dry() { timeout 30 python3 "$GC" up --dry-run "$@"; }
# q JSON EXPR: a Python expression over the topology document d
q() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
expect() {   # FILE EXPR WANT MESSAGE
    local got
    got=$(q "$1" "$2") || fail "$4: cannot evaluate $2"
    [ "$got" = "$3" ] || fail "$4: got $got, want $3"
    echo "ok: $4"
}

dry switch:5 > "$tmp/s5.json" || fail "switch:5"
expect "$tmp/s5.json" 'len(d["hosts"]), len(d["switches"]), len(d["links"])' "(5, 1, 5)" "switch:5 is 5 hosts on 1 switch"
expect "$tmp/s5.json" 'sorted(set(l["rate_bps"] for l in d["links"]))' "[200000000]" "default host links run at 200 Mbit/s"
expect "$tmp/s5.json" 'd["mtu"], [h["address"] for h in d["hosts"]][4]' "(9000, '10.200.0.5')" "MTU 9000, host addresses in rank order"

dry tree:3x2 --rate 100M > "$tmp/t.json" || fail "tree:3x2"
expect "$tmp/t.json" 'len(d["hosts"]), len(d["switches"])' "(6, 4)" "tree:3x2 is 6 hosts under 3 leaves and a root"
expect "$tmp/t.json" '[l["rate_bps"] for l in d["links"] if l["b"] == "root"]' "[100000000, 100000000, 100000000]" \
    "tree:3x2 uplinks: 2 hosts x 100M / oversubscription 2"
dry tree:2x4 --rate 100M --oversub 4 > "$tmp/t4.json" || fail "tree:2x4 --oversub 4"
expect "$tmp/t4.json" '[l["rate_bps"] for l in d["links"] if l["b"] == "root"]' "[100000000, 100000000]" \
    "tree:2x4 --oversub 4 uplinks: 4 x 100M / 4"
dry tree:2x2 --uplink-rate 123M --uplink-delay 1ms > "$tmp/tu.json" || fail "--uplink-rate"
expect "$tmp/tu.json" '[(l["rate_bps"], l["delay_us"]) for l in d["links"] if l["b"] == "root"]' \
    "[(123000000, 1000.0), (123000000, 1000.0)]" "--uplink-rate and --uplink-delay"

dry asym > "$tmp/a.json" || fail "asym"
expect "$tmp/a.json" '[sum(1 for h in d["hosts"] if h["switch"] == s) for s in ("leaf0", "leaf1", "leaf2")]' "[4, 2, 1]" \
    "asym: leaves of 4, 2 and 1 hosts"
dry asym:3,1 > "$tmp/a2.json" || fail "asym:3,1"
expect "$tmp/a2.json" 'len(d["hosts"])' "4" "asym:3,1 has 4 hosts"

dry 2dc > "$tmp/d.json" || fail "2dc"
expect "$tmp/d.json" 'len(d["hosts"]), len(d["switches"])' "(8, 6)" "2dc: two tree:2x2"
expect "$tmp/d.json" '[(l["rate_bps"], l["delay_us"]) for l in d["links"] if {l["a"], l["b"]} == {"a-root", "b-root"}]' \
    "[(50000000, 2000.0)]" "2dc: one 50 Mbit/s, 2 ms link joins the roots"
dry 2dc:1x3 --wan-rate 10M --wan-delay 20ms > "$tmp/d2.json" || fail "2dc:1x3"
expect "$tmp/d2.json" 'len(d["hosts"]), [l["delay_us"] for l in d["links"] if l["a"] == "a-root"]' "(6, [20000.0])" \
    "2dc:1x3 with --wan-delay 20ms"

# The text and JSON formats describe the same network; the topology file reads back.
cat > "$tmp/net.txt" <<'EOF'
defaults rate=200M queue=50p mtu=1500   # a comment
switch core edge1 edge2
link edge1 core rate=400M
link core edge2 rate=400M delay=1ms
host h0 edge1
host h1 edge1 rate=100M
host h2 edge2 queue=64k
EOF
cat > "$tmp/net.json" <<'EOF'
{"defaults": {"rate": "200M", "queue": "50p", "mtu": 1500},
 "switches": ["core", "edge1", "edge2"],
 "hosts": [{"name": "h0", "switch": "edge1"}, {"name": "h1", "switch": "edge1", "rate": "100M"},
           {"name": "h2", "switch": "edge2", "queue": "64k"}],
 "links": [{"a": "edge1", "b": "core", "rate": "400M"}, {"a": "core", "b": "edge2", "rate": "400M", "delay": "1ms"}]}
EOF
links='sorted((min(l["a"], l["b"]), max(l["a"], l["b"]), l["rate_bps"], l["delay_us"], l["queue_bytes"]) for l in d["links"])'
dry "$tmp/net.txt" > "$tmp/net-txt.json" || fail "the text topology"
dry "$tmp/net.json" > "$tmp/net-json.json" || fail "the JSON topology"
[ "$(q "$tmp/net-txt.json" "$links")" = "$(q "$tmp/net-json.json" "$links")" ] ||
    fail "text and JSON differ: $(q "$tmp/net-txt.json" "$links") vs $(q "$tmp/net-json.json" "$links")"
expect "$tmp/net-txt.json" "$links" \
    "[('core', 'edge1', 400000000, 0.0, 75700), ('core', 'edge2', 400000000, 1000.0, 75700), ('edge1', 'h0', 200000000, 0.0, 75700), ('edge1', 'h1', 100000000, 0.0, 75700), ('edge2', 'h2', 200000000, 0.0, 65536)]" \
    "text and JSON give the same links (50p at MTU 1500 = 75700 B, 64k = 65536 B)"
dry "$tmp/net-txt.json" > "$tmp/again.json" || fail "the topology file as input"
[ "$(q "$tmp/again.json" "$links")" = "$(q "$tmp/net-txt.json" "$links")" ] || fail "the topology file does not read back"
echo "ok: the topology file reads back as the same network"

# Bad descriptions: refused with exit status 2 and a message that says why (and where).
refuse() {   # WANT-IN-MESSAGE TOPOLOGY-TEXT
    printf '%s\n' "$2" > "$tmp/bad.txt"
    local out rc
    out=$(dry "$tmp/bad.txt" 2>&1)
    rc=$?
    [ "$rc" -eq 2 ] || fail "accepted (rc $rc): $2"
    echo "$out" | grep -q -- "$1" || fail "message for '$2' lacks '$1': $out"
    echo "ok: refused: $(echo "$out" | head -n 1)"
}
refuse "bad.txt:3: bad rate 'fast'" $'switch s\nhost h0 s\nhost h1 s rate=fast'
refuse "unknown key 'speed'" $'switch s\nhost h0 s speed=1G'
refuse "names unknown node 'nowhere'" $'switch s\nhost h0 nowhere'
refuse "must be a tree" $'switch a b c\nlink a b\nlink b c\nlink c a\nhost h0 a'
refuse "not connected" $'switch a b c d\nlink a b\nlink b c\nlink c a\nhost h0 a\nhost h1 d'
refuse "used twice" $'switch s\nhost s s'
refuse "1-12 characters" $'switch s\nhost averyveryverylongname s'
refuse "unknown statement 'router'" $'router r'
out=$(dry nosuchpreset:3 2>&1) && fail "an unknown preset was accepted"
echo "$out" | grep -q "neither a preset" || fail "unknown preset message: $out"
echo "ok: an unknown preset is refused"
echo "PASS"
