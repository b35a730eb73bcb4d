#!/bin/sh
# genx-sim's command line: exit codes (0 ok, 1 simulation failed, 2 bad
# input), the JSON keys, CM02's closed form through the whole tool, a
# topology file with its overlay, and error messages naming what is wrong.
# Also: no program but genx-sim and the [sim] tests links SimGrid.
# Skips (77) when configure did not find SimGrid and genx-sim was not built.
set -u
builddir=${GENX_BUILDDIR:-.}
sim=${GENX_SIM:-$builddir/genx-sim}
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fx=$src/tests/topology
[ -x "$sim" ] || { echo "SKIP: $sim was not built (configure found no SimGrid)"; exit 77; }
fails=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

tool=$sim
. "$src/tests/tools/expect.sh"

# Runs.
expect 0 '^ratio      [0-9.]+ \(simulated / model\)$' --preset switch:4 -a ring --bytes 1M
expect 0 '^simulated  [0-9.e-]+ s \([0-9]+ messages' --preset tree:2x2/2 -a gentree --bytes 4M
expect 0 '"engine": "simgrid 3\.[0-9]+' --preset switch:4 -a rhd --bytes 64K --json
for key in simulated_s model_s ranks algorithm bytes network_model; do
    expect 0 "\"$key\": " --preset switch:3 -a cps --bytes 3000 --json
done
expect 0 '"ranks": 8' --preset switch:4 -a hcps --ranks-per-host 2 --bytes 1M --json
expect 0 '"network_model": "LV08"' --preset switch:2 -a ring --bytes 1K --json
# The network's bound beside every run; no simulated run is faster than it.
expect 0 '^bound      [0-9.e-]+ s \(0\.[0-9]+ of it reached; binding cut: the 4 ranks under leaf0' \
    --topology tree:2x4/8 -a gentree --bytes 4M
for spec in "switch:6 -a ring" "tree:2x4/8 -a rhd" "torus:4x4 -a multitree"; do
    # shellcheck disable=SC2086
    frac=$("$sim" --topology $spec --bytes 8M --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["fraction_of_bound"])')
    python3 -c "import sys; sys.exit(0 if 0 < float('$frac') <= 1 else 1)" 2>/dev/null ||
        { echo "FAIL: genx-sim --topology $spec: fraction_of_bound '$frac' not in (0, 1]"; fails=$((fails + 1)); }
done
# CM02 without corrections: unsegmented ring on one switch is GenModel's
# closed form exactly (alpha = 2 x 10 us, beta = 1 / 10 Gbit/s).
expect 0 '^ratio      1 \(simulated / model\)$' --preset switch:8 -a ring -p segment=0 --bytes 64M \
    --network-model CM02
expect 0 '"bytes": 1000,' --preset switch:2 -a ring --bytes 1000 --json
# A topology file with its overlay: 8 hosts, leaf2 behind a 50 Mbit/s link.
expect 0 '8 ranks on 8 hosts of .*tree\.conf' --topology "$fx/tree.conf" --overlay "$fx/tree-overlay.json" \
    -a ring --bytes 64K
# GenModel prices the switch links per class as the simulator runs them: under
# CM02 its prediction is the simulated time exactly on the ring and on GenTree,
# pipelined or not (the ring crosses leaf2's 50 Mbit/s, 20 ms link every step;
# a model without the tree's links would miss it by orders of magnitude), and
# on tree:2x4 with 4:1 uplinks and round-robin ranks, where four flows share
# each uplink.
for alg in ring gentree gentree:pipeline=4 cps; do
    a=${alg%%:*}
    p=$(echo "$alg" | sed -n 's/^[^:]*://p')
    expect 0 '^ratio      1 \(simulated / model\)$' --topology "$fx/tree.conf" --overlay "$fx/tree-overlay.json" \
        -a "$a" ${p:+-p "$p"} --bytes 1M --network-model CM02
done
expect 0 '^ratio      1 \(simulated / model\)$' --preset tree:2x4/4 --hosts h0,h4,h1,h5,h2,h6,h3,h7 \
    -a ring --bytes 1M --network-model CM02
# rhd on 6 of those hosts: ranks 0 and 2 fold into 1 and 3 across the
# uplinks while rank 4 waits for rank 1; the model adds up a link's load
# from the sends that overlap in time, as the simulation shares it (added up
# by step index the model was 1.52x the simulation here); within 0.5 %.
expect 0 '^ratio      (0\.99[5-9][0-9]*|1|1\.00[0-4][0-9]*) ' --preset tree:2x4/4 --hosts h0,h4,h1,h5,h2,h6 \
    -a rhd --bytes 1M --network-model CM02
# Pipelined there the model is 0.90-1 of the simulation, never below it: it
# adds up a link's load by step index, as if every rank ran in lock step,
# while in the simulation some ranks run ahead and share the uplinks less.
expect 0 '^ratio      0\.9[0-9]* \(simulated / model\)$' --preset tree:2x4/4 --hosts h0,h4,h1,h5,h2,h6,h3,h7 \
    -a gentree -p pipeline=8 --bytes 1M --network-model CM02
# At scale, on the paper's cross-datacenter tree (384 ranks, Table 5's links):
# the ring's every step crosses the 6.58 ms cross-DC link, and the model says
# so (a model without the tree's links predicted 1/6 of the simulated time).
expect 0 '^ratio      1 \(simulated / model\)$' --preset CDC384 -a ring -p segment=0 --bytes 40000000 \
    --network-model CM02
# Above kFloydMaxNodes a switch tree is routed by Dijkstra (cached) instead of
# Floyd's all-pairs table: same routes, so still GenModel's time exactly
# (1057 nodes; with Floyd, 4161 nodes took 70 s to set up).
expect 0 '^ratio      1 \(simulated / model\)$' --preset tree:32x32 -a rhd --bytes 4M --network-model CM02
expect 0 '"model_source": ".*example-model\.json"' --preset switch:4 -a ring --bytes 1M \
    --model "$src/docs/example-model.json" --json
# Incast: on when --model's inter epsilon is above 0 (example-model.json:
# 3e-11), off without --model or with --no-incast.
expect 0 '"incast": true' --preset switch:4 -a rb --bytes 1M --model "$src/docs/example-model.json" --json
expect 0 '"incast": false' --preset switch:4 -a rb --bytes 1M --model "$src/docs/example-model.json" \
    --no-incast --json
expect 0 '"incast": false' --preset switch:4 -a rb --bytes 1M --json
expect 0 'CM02, incast$' --preset switch:4 -a rb --bytes 1M --model "$src/docs/example-model.json" \
    --network-model CM02
# Unsegmented rb into a root with 11 senders (w = 12 > w_t = 9) under CM02:
# the simulated incast is GenModel's, ratio 1 within 0.5 %; without it the
# simulation is faster than the model by its epsilon term.
expect 0 '^ratio      (0\.99[5-9][0-9]*|1|1\.00[0-4][0-9]*) ' --preset switch:12 -a rb --bytes 12M -p segment=0 \
    --model "$src/docs/example-model.json" --network-model CM02
expect 0 '^ratio      0\.9[0-7][0-9]* ' --preset switch:12 -a rb --bytes 12M -p segment=0 \
    --model "$src/docs/example-model.json" --network-model CM02 --no-incast
# The paper's Figure 11 platforms: each runs, with Table 5's parameters as
# the model (incast on: Table 5's epsilon is above 0).
# (recursive doubling: log2 P steps, where a ring of 512 simulates 10^5
# messages for the same check).
for p in SS24 SS32 SYM384 SYM512 ASY384 CDC384; do
    expect 0 "\"model_source\": \"Table 5 \\($p\\)\"" --preset "$p" -a rd --bytes 1M --json
done
expect 0 '"ranks": 384' --preset CDC384 -a rd --bytes 1M --json
expect 0 '"incast": true' --preset SS24 -a ring --bytes 1M --json
# On one switch under CM02 the ring is Table 5's GenModel exactly.
expect 0 '^ratio      1 \(simulated / model\)$' --preset SS24 -a ring --bytes 1M --network-model CM02

# Bad input: exit 2, saying what is wrong.
# Direct networks: MultiTree on a 4x4 torus is 2 x 5 steps of one hop,
# each moving 1/16 of 1 MiB over its own 16 GB/s link of 150 ns (the NI
# drives all four links): exactly 10 x (150 ns + 65536 B / 16 GB/s).
expect 0 '^simulated  4\.246e-05 s \(480 messages' --topology torus:4x4 -a multitree --bytes 1M \
    --network-model CM02
expect 0 '^simulated  4\.246e-05 s' --preset torus:4x4 -a multitree --bytes 1M --network-model CM02
# A ring in snake order on the torus is one hop everywhere: 30 steps of
# exactly 150 ns + 65536 B / 16 GB/s, what GenModel predicts.
expect 0 '^ratio      1 \(simulated / model\)$' --topology torus:4x4 -a ring --bytes 1M --network-model CM02 \
    --hosts 'n[0-3],n7,n6,n5,n4,n[8-11],n15,n14,n13,n12'
expect 0 '^simulated  0\.00012738 s' --topology torus:4x4 -a ring --bytes 1M --network-model CM02 \
    --hosts 'n[0-3],n7,n6,n5,n4,n[8-11],n15,n14,n13,n12'
expect 2 "--hosts: rank 1's host 'x9' is not a host of torus:4x4" --topology torus:4x4 -a ring --hosts n0,x9
# A heterogeneous graph (the B4-like WAN: links of 10-100 Gbit/s, 8-50 ms)
# is priced link by link: the ring's routes and busiest links are what
# SimGrid simulates (ratio 1), MultiTree's within 5 %.  Before per-link
# pricing GenModel said 0.27 and 0.17 of the simulated times.
expect 0 '^ratio      1 \(simulated / model\)$' --topology "$fx/b4.json" -a ring \
    -p segment=0 --bytes 64M --network-model CM02
expect 0 '^ratio      0\.9[5-9][0-9]* \(simulated / model\)$' --topology "$fx/b4.json" \
    -a multitree -p segment=0 --bytes 64M --network-model CM02
# Routes that hold more than 4 segments of 1 MiB in flight (the WAN): the
# executor's default is unsegmented there, as in the component; a --param
# segment or window keeps the user's choice.
expect 0 '"exec": "segment=0,window=4"' --topology "$fx/b4.json" -a ring --bytes 1M --json
expect 0 '"exec": "segment=1M,window=4"' --topology "$fx/b4.json" -a ring -p window=4 --bytes 1M --json
expect 0 '"exec": "segment=1M,window=4"' --preset tree:8x12 -a ring --bytes 1M --json
# MTREE sends each chunk as one message (segment_blocks), so even with
# 1 MiB segments and 4 in flight (given explicitly: b4's routes would
# otherwise default to unsegmented) the window does not bind it on 8-50 ms
# links: 256 MiB in well under a second (6.7 s when chunks were cut into
# segments).
expect 0 '^simulated  0\.[0-9]+ s' --topology "$fx/b4.json" -a mtree -p bytes=256M,segment=1M,window=4 \
    --bytes 256M --network-model CM02
expect 0 '"ranks": 12' --topology "$fx/graph-ring.json" -a multitree --ranks-per-host 2 --bytes 1M --json
expect 2 'gentree: needs a switch tree, and the topology is a direct network' --topology mesh:2x2 \
    -a gentree --bytes 1M

# A graph in two parts: an error naming the unreachable host, not a crash
# inside SimGrid; ranks on one part only still run.
expect 2 "host c cannot be reached from host a over the network's links" --topology "$fx/graph-split.json" -a ring
expect 0 '^simulated ' --topology "$fx/graph-split.json" -a ring --hosts a,b
expect 2 'give exactly one of --topology FILE and --preset NAME' -a ring
expect 2 'give exactly one of --topology FILE and --preset NAME' -a ring --preset switch:2 --topology "$fx/tree.conf"
expect 2 "preset 'ring:4': unknown preset \(presets: switch:N, tree:AxB, tree:AxB/O, torus:AxB\[xC\], mesh:AxB\[xC\], SS24, SS32, SYM384, SYM512, ASY384, CDC384\)" \
    --preset ring:4 -a ring
expect 2 "preset 'switch:0': N must be a positive integer" --preset switch:0 -a ring
expect 2 '--algorithm is required' --preset switch:2
expect 2 "unknown algorithm|no generator|'nosuch'" --preset switch:2 -a nosuch
expect 2 '^genx-sim: --bytes: ' --preset switch:2 -a ring --bytes 12Q
expect 2 'is not a multiple of --dtype-size 4' --preset switch:2 -a ring --bytes 1001
expect 2 "--network-model: network model 'XY': expected LV08 or CM02" --preset switch:2 -a ring --network-model XY
expect 2 '--ranks-per-host must be at least 1' --preset switch:2 -a ring --ranks-per-host 0
expect 2 '--overlay needs --topology FILE' --preset switch:2 -a ring --overlay "$fx/tree-overlay.json"
expect 2 "link class '[a-z0-9-]+' \(the link from '.*' up\) has no rate: give it in the overlay" \
    --topology "$fx/tree.conf" -a ring
expect 2 "^genx-sim: --topology: .*bad-both\.conf:3: " --topology "$fx/bad-both.conf" -a ring
expect 2 '^genx-sim: --model: ' --preset switch:2 -a ring --model /nonexistent/model.json

# --sweep: one simulation per process, a Markdown table of every algorithm at
# every size (per-algorithm parameters after a colon), and with --out the
# table, every run's JSON and the plot; --progress adds a line per run.
expect 0 '^\| 2097152 \| [0-9.e-]+ / [0-9.e-]+ \(1\.000\) \| [0-9.e-]+ / [0-9.e-]+ \(0\.9[0-9]+\) \|$' \
    --preset tree:2x2 -a ring,gentree:pipeline=2 --sweep 1M:2M --network-model CM02
expect 0 '^\| bytes \| ring \| gentree pipeline=2,plans=cps/cps/cps \|$' --preset tree:2x2 \
    -a ring,gentree:pipeline=2,plans=cps/cps/cps --sweep 1M:1M
expect 0 'sweep 2/2: cps 65536 B: simulated ' --preset switch:3 -a cps --sweep 32K:64K --progress
swdir=$(mktemp -d)
expect 0 '4 ranks on 4 hosts of switch:4' --preset switch:4 -a ring,rhd --sweep 64K:256K --out "$swdir/o"
for f in table.md results.json plot.svg; do
    [ -s "$swdir/o/$f" ] || { echo "FAIL: --sweep --out wrote no $f"; fails=$((fails + 1)); }
done
[ "$(grep -o '"simulated_s"' "$swdir/o/results.json" | wc -l)" -eq 6 ] ||
    { echo "FAIL: results.json should hold 6 runs"; fails=$((fails + 1)); }
[ "$(grep -c '<circle' "$swdir/o/plot.svg")" -eq 6 ] ||
    { echo "FAIL: plot.svg should mark 6 simulations"; fails=$((fails + 1)); }
rm -rf "$swdir"
expect 0 '^genx-sim: done: simulated [0-9.e-]+ s, [0-9]+ messages, 4 ranks$' --preset switch:4 -a ring \
    --bytes 1M --progress
expect 2 "--sweep '1M': expected MIN:MAX bytes" --preset switch:2 -a ring --sweep 1M
expect 2 "--sweep '2M:1M': expected MIN:MAX bytes" --preset switch:2 -a ring --sweep 2M:1M
expect 2 '--out needs --sweep MIN:MAX' --preset switch:2 -a ring --out x
expect 2 '--sweep sets the sizes; drop --bytes' --preset switch:2 -a ring --sweep 1K:2K --bytes 1K
expect 2 '--dtype-size must be at least 1' --preset switch:2 -a ring --sweep 1K:2K --dtype-size 0
expect 2 "--algorithm: 'r=2' comes before any algorithm name" --preset switch:2 -a r=2,ring --sweep 1K:2K
expect 2 'unknown algorithm' --preset switch:2 -a nosuch --sweep 1K:2K

# Only genx-sim and the [sim] tests may need SimGrid.
if command -v readelf >/dev/null 2>&1; then
    for f in "$builddir/.libs/mca_coll_genx.so" "$builddir/genx-plan" "$builddir/genx-topo" \
             "$builddir/genx-tune" "$builddir/tests/unit/genx-unit"; do
        [ -e "$f" ] || continue
        if readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*simgrid'; then
            echo "FAIL: $f links SimGrid"
            fails=$((fails + 1))
        fi
    done
    readelf -d "$sim" | grep -q 'NEEDED.*simgrid' || { echo "FAIL: genx-sim does not link SimGrid?"; fails=$((fails + 1)); }
fi

[ "$fails" -eq 0 ] && echo "PASS: genx-sim command line"
exit "$fails"
