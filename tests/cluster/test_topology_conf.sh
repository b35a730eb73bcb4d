#!/usr/bin/env bash
# The Slurm topology.conf and genx overlay that `genx-cluster up` writes
# next to topology.json, printed through `up --dry-run --print slurm|overlay`
# (the same function writes the files; needs neither root nor namespaces),
# then read back by genx-topo --check, which must accept them and find the
# shaped rates: oversubscription on tree:2x4 --oversub 4, the cross-DC link
# on 2dc.
set -u
top=${GENX_SRCDIR:-${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
GC="$top/bench/genx-cluster"
TOPO=${GENX_TOPO:-${GENX_BUILDDIR:-.}/genx-topo}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (genx-cluster needs it)"
[ -x "$TOPO" ] || fail "genx-topo not found at $TOPO (set GENX_BUILDDIR)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dry() { timeout 30 python3 "$GC" up --dry-run "$@"; }

dry tree:2x4 --rate 100M --oversub 4 --print slurm > "$tmp/t.conf" || fail "tree:2x4 --print slurm"
cat > "$tmp/want.conf" <<'END'
# Slurm topology.conf (tree form) written by genx-cluster for cluster dry-run (tree:2x4).
# Link rates and delays are in topology-overlay.json next to this file.
SwitchName=root Switches=leaf[0-1]
SwitchName=leaf0 Nodes=h[0-3]
SwitchName=leaf1 Nodes=h[4-7]
END
diff -u "$tmp/want.conf" "$tmp/t.conf" || fail "tree:2x4 topology.conf differs"
echo "ok: tree:2x4 topology.conf"
dry tree:2x4 --rate 100M --oversub 4 --print overlay > "$tmp/t.json" || fail "tree:2x4 --print overlay"
"$TOPO" --check "$tmp/t.conf" --overlay "$tmp/t.json" > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "genx-topo rejects tree:2x4's files"; }
grep -q "^ok: .*: 3 switch(es), 8 host(s), 2 level(s), 2 link class(es), fingerprint" "$tmp/out" ||
    { cat "$tmp/out"; fail "tree:2x4: unexpected check line"; }
"$TOPO" "$tmp/t.conf" --overlay "$tmp/t.json" > "$tmp/tree" 2>&1 || fail "genx-topo cannot print tree:2x4"
grep -q '^  leaf0 \[switch, level 1\]  up: uplink  oversubscription 4:1$' "$tmp/tree" ||
    { cat "$tmp/tree"; fail "tree:2x4 --oversub 4: leaf0's uplink is not 4:1 oversubscribed"; }
grep -q '^  leaf: rate 100 Mbit/s, latency unknown \[overlay ' "$tmp/tree" ||
    { cat "$tmp/tree"; fail "tree:2x4: host links are not 100 Mbit/s"; }
echo "ok: tree:2x4 overlay read by genx-topo (4:1 uplinks, 100 Mbit/s hosts)"

dry 2dc --print slurm > "$tmp/d.conf" || fail "2dc --print slurm"
dry 2dc --print overlay > "$tmp/d.json" || fail "2dc --print overlay"
grep -q '^SwitchName=a-root Switches=a-leaf\[0-1\],b-root$' "$tmp/d.conf" || { cat "$tmp/d.conf"; fail "2dc: b-root is not under a-root"; }
"$TOPO" "$tmp/d.conf" --overlay "$tmp/d.json" > "$tmp/dc" 2>&1 || { cat "$tmp/dc"; fail "genx-topo rejects 2dc's files"; }
grep -q '^  xdc: rate 50 Mbit/s, latency 2 ms, cross-datacenter \[overlay ' "$tmp/dc" ||
    { cat "$tmp/dc"; fail "2dc: the WAN link is not a 50 Mbit/s, 2 ms cross-datacenter class"; }
grep -q '^  b-root \[switch, level 2\]  up: xdc' "$tmp/dc" || { cat "$tmp/dc"; fail "2dc: b-root's uplink is not xdc"; }
echo "ok: 2dc files read by genx-topo (cross-datacenter link 50 Mbit/s, 2 ms)"

for t in switch:3 asym tree:3x2; do
    dry "$t" --print slurm > "$tmp/x.conf" && dry "$t" --print overlay > "$tmp/x.json" || fail "$t: dry run"
    "$TOPO" --check "$tmp/x.conf" --overlay "$tmp/x.json" > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$t: genx-topo rejects the files"; }
    echo "ok: $t files accepted by genx-topo"
done
