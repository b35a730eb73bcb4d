#!/bin/sh
# genx-plan's command line: outputs, exit codes and error messages.
# Run by `make check` from the build directory (where genx-plan is built).
set -u
plan=${GENX_PLAN:-${GENX_BUILDDIR:-.}/genx-plan}
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fails=0
out=$(mktemp)
dir=$(mktemp -d)
trap 'rm -rf "$out" "$dir"' EXIT

tool=$plan
. "$src/tests/tools/expect.sh"

expect 0 '^ring +ring reduce-scatter' --list
expect 0 '^rank 6 step 11: recv b\[1\] from 5 -> result \| send b\[2\] to 0 from result$' \
    --algorithm ring --ranks 7
expect 0 '^ok: allreduce for P=7 \(order preserving: no\)$' -a ring -P 7 --check
expect 0 '^ok: allreduce for P=1 \(order preserving: yes\)$' -a ring -P 1 --check
# 7 one-byte elements over 7 ranks: every block is 1 byte, 12 sent per rank.
expect 0 '"max_bytes_sent_per_rank": 12' -a ring -P 7 --bytes 7 --dtype-size 1 --json
expect 0 '^steps: +12$' -a ring -P 7 --bytes 1K --stats
expect 0 '"bytes": 65536' -a ring -P 3 --bytes 64k --json

expect 2 "unknown algorithm 'nope'; known algorithms: ring" -a nope -P 4
expect 2 "algorithm 'ring' has no parameter 'x'" -a ring -P 4 --param x=1
expect 2 "item 'x' in 'x' is not key=value" -a ring -P 4 --param x
expect 2 "key 'k' is given twice" -a ring -P 4 -p k=1 -p k=2
expect 2 "size '3Q' has an unknown suffix" -a ring -P 4 --bytes 3Q
expect 2 'not a multiple of --dtype-size 4' -a ring -P 4 --bytes 10
expect 2 '--ranks must be a positive number' -a ring
expect 2 '--algorithm is required' -P 4
expect 2 'ranks' -a ring -P many

# --model takes a rules file (its model) or a bare model file.  Latency only:
# cps on 4 ranks is 2 steps of 3 messages each way, 2*(alpha + 2*alpha_msg) = 28 us.
cat >"$dir/rules.json" <<'EOF'
{"format": "genx-rules", "version": 1,
 "provenance": {"genx_version": "test", "topology": "*"},
 "model": {"links": {"inter": {"alpha": 1e-5, "beta": 0, "alpha_msg": 2e-6}},
           "host": {"gamma": 0, "delta": 0}},
 "allreduce": [{"algorithm": "model"}]}
EOF
cat >"$dir/model.json" <<'EOF'
{"links": {"inter": {"alpha": 1e-5, "beta": 0}}, "host": {"gamma": 0, "delta": 0}}
EOF
expect 0 '^cps +- +28\.0000 +28\.0000 +0\.0000' -a cps -P 4 --model "$dir/rules.json" --bytes 1K
expect 0 'extra messages intra 0 inter 4,' -a cps -P 4 --model "$dir/rules.json" --bytes 1K
expect 0 '^ring +- +60\.0000 +60\.0000' -a ring -P 4 --model "$dir/model.json" --bytes 1K
expect 0 '^butterfly +group=xor,r=2 +20\.0000' -P 4 --model "$dir/rules.json" --bytes 8 --candidates
echo '{"format": "genx-rules", "version": 1, "model": {"links": {"inter": {"alpha": 1}}}}' \
    >"$dir/bad.json"
expect 2 'bad\.json:1: model\.host: required field is missing' -a cps -P 4 --model "$dir/bad.json"
expect 2 'cannot open' -a cps -P 4 --model "$dir/missing.json"
expect 2 '--candidates and --rank-map need --model' -P 4 --candidates

# One rank of a large plan: its program only, the plan's statistics.
expect 0 '^rank 3 step 0: recv b\[2\] from 2 -> slot0' -a ring -P 1000 --rank 3
expect 0 '"steps": 199998' -a ring -P 100000 --rank 5 --stats --json
expect 0 '"rank": 5' -a ring -P 100000 --rank 5 --json
expect 0 '"programs_read": 1' -a butterfly -P 100000 -p r=2 --rank 0 --json
expect 0 '"steps": 32' -a butterfly -P 100000 -p r=2 --rank 0 --json
expect 0 'ok: 8 sampled ranks of P=100000' -a hcps -P 100000 --check --sample 8
expect 0 'ok: 4 sampled ranks of P=100000' -a rhd -P 100000 --check --sample 4
expect 2 '--rank 7 is not a rank in 0..6' -a ring -P 7 --rank 7
expect 2 '--sample needs --check' -a ring -P 7 --sample 3

# The decision table a communicator gets, at a scale no test machine has.
expect 0 '^# decisions for 4096 ranks, 8 per node, built-in defaults' -P 4096 --ppn 8 --decisions
expect 0 '^0-1 ' -P 1000 --decisions
expect 2 'cannot open' -P 8 --decisions --rules "$dir/missing.json"
# A site's rules made on another cluster: shown as there, the provenance
# reported (the component here would ignore the file).
printf '{"format": "genx-rules", "version": 1,\n "provenance": {"topology": "x86_64; No Such CPU; 999 cpus"},\n "allreduce": [{"algorithm": "ring"}]}\n' \
    >"$dir/elsewhere.json"
expect 0 'note: .*elsewhere\.json:2: provenance\.topology: the file was made for "x86_64; No Such CPU; 999 cpus" but this host is .*; the decisions below are the file.s' \
    -P 8 --decisions --rules "$dir/elsewhere.json"
expect 0 '^0-1 +ring +\[rule .*elsewhere\.json:3 ' -P 8 --decisions --rules "$dir/elsewhere.json"
# MPI_Iallreduce's table: rd below 8 KiB on 6 nodes of one rank, where
# MPI_Allreduce's defers to tuned.
expect 0 '^# non-blocking decisions for 6 ranks, 1 per node' -P 6 --ppn 1 --decisions --nonblocking
expect 0 '^4K-8K +rd +\[rule built-in defaults' -P 6 --ppn 1 --decisions --nonblocking
expect 0 '^4K-8K +fallback ' -P 6 --ppn 1 --decisions
# What a "fallback" incumbent is priced as: tuned's fixed choice by default
# (96 ranks: rabenseifner from 256 KiB), or, unknown, Open MPI's best.
expect 0 '^16M-32M +gentree .*against Open MPI tuned.s fixed choice \(rabenseifner → rhd \(distance=doubling\)\)' \
    -P 96 --topology tree:8x12 --decisions
expect 0 '^16M-32M +fallback .*not 20 % faster than Open MPI.s best modelled \(ring\)' \
    -P 96 --topology tree:8x12 --decisions --displaced unknown
expect 0 'displaced component tuned-4.1$' -P 96 --topology tree:8x12 --decisions
expect 2 'displaced: tuned not in' -P 8 --decisions --displaced tuned

# --topology FILE: a Slurm topology.conf the ranks sit on (one per host in
# the file's order, --ppn K per host, or --hosts); errors name file and line,
# or the rank whose host the file lacks.
topo_src=${GENX_SRCDIR:-$(dirname "$0")/../..}/tests/topology
expect 0 '^ok: allreduce for P=8 ' -a ring -P 8 --topology "$topo_src/tree.conf" --check
expect 0 '^ok: allreduce for P=16 ' -a ring -P 16 --ppn 2 --topology "$topo_src/tree.conf" --check
expect 2 "9 ranks at 1 per host need 9 hosts; .*tree\.conf has 8" -a ring -P 9 --topology "$topo_src/tree.conf"
# GenTree plans on the file's tree (one and two ranks per host, hosts placed
# out of tree order); without a topology it says what it needs.
expect 0 '^ok: allreduce for P=8 ' -a gentree -P 8 --topology "$topo_src/tree.conf" --check
expect 0 '^ok: allreduce for P=16 ' -a gentree -P 16 --ppn 2 --topology "$topo_src/tree.conf" --check
expect 0 '^ok: allreduce for P=4 ' -a gentree -P 4 --topology "$topo_src/tree.conf" \
    --hosts 'node01,r1n1,node02,r1n2' --check
expect 2 'gentree: needs a topology' -a gentree -P 4
expect 2 "rank 3 runs on host 'nowhere', which the topology does not hold" \
    -a ring -P 4 --topology "$topo_src/tree.conf" --hosts 'node[01-03],nowhere'
expect 2 '--hosts names 2 hosts for 4 ranks' -a ring -P 4 --topology "$topo_src/tree.conf" --hosts 'node[01-02]'
expect 2 'bad-both\.conf:3: SwitchName=spine has both Switches= and Nodes=' \
    -a ring -P 2 --topology "$topo_src/bad-both.conf"
expect 2 '--hosts and --overlay need --topology FILE' -a ring -P 4 --hosts x
# Graph families on direct networks and graph files (topology/graph.hpp).
expect 0 '^steps: +10$' -a multitree -P 16 --topology torus:4x4 --stats
expect 0 '^ok: allreduce for P=16' -a multitree -P 16 --topology mesh:4x4 --check
expect 0 '^ok: allreduce for P=12' -a multitree -P 12 --topology "$topo_src/graph-ring.json" --ppn 2 --check
expect 0 '"steps": 10' -a multitree -P 16 --topology torus:4x4 --stats --json
expect 2 "preset 'torus:0x4': dimensions must be positive integers" -a multitree -P 4 --topology torus:0x4
svgt=$(mktemp --suffix=.svg)
expect 0 'svg-trees: wrote .* \(16 distinct trees\)' -a multitree -P 16 --topology torus:4x4 --svg-trees "$svgt"
grep -q '16 broadcast tree(s) of 16 blocks' "$svgt" || { echo "FAIL: --svg-trees drew no trees"; fails=$((fails + 1)); }
rm -f "$svgt"
expect 2 'rank 2 cannot be reached' -a multitree -P 3 --topology "$topo_src/graph-split.json"
# MultiTree as translates of one tree on a torus: ceil(15/4) = 4 steps per
# phase on 4x4, the default beyond 1024 ranks (10^4 sampled against peers).
expect 0 '^steps: +8$' -a multitree -p trees=translate -P 16 --topology torus:4x4 --stats
expect 0 '^ok: allreduce for P=35' -a multitree -p trees=translate -P 35 --topology torus:5x7 --check
expect 2 'trees=translate needs a torus .*: the topology is a mesh' -a multitree -p trees=translate -P 16 --topology mesh:4x4
expect 2 'trees=turns\) for at most 1024 ranks' -a multitree -p over=hosts -P 2048 --topology tree:32x64
# Beyond 1024 ranks on a switch tree: Algorithm 1 over the leaf switches.
expect 0 'ok: 4 sampled ranks of P=2048' -a multitree -P 2048 --topology tree:32x64 --check --sample 4
expect 0 'ok: 4 sampled ranks of P=10000' -a mtree -P 10000 --topology tree:100x100 --check --sample 4
expect 0 'ok: 4 sampled ranks of P=10000' -a multitree -P 10000 --topology torus:100x100 --check --sample 4

# The network's bound (plan/bound.hpp): the wire bound on one switch, the
# uplinks of an oversubscribed tree, a link without a rate named.
expect 0 'binding cut: the 1 rank under h0 receives the other 7' -P 8 --bound --topology switch:8 --bytes 16M
expect 0 '"bound_s": 0.0016777216' -P 8 --bound --topology tree:2x4/8 --bytes 1M --json
expect 0 '"cut": "the 4 ranks under leaf0 receive the other 4' -P 8 --bound --topology tree:2x4/8 --json
expect 2 'the link above aleaf0 has no rate' -P 8 --bound --topology "$topo_src/twodc.conf"
expect 2 '--bound needs --topology' -P 8 --bound

# The JSON document alone is on stdout, even with --check.
"$plan" -a ring -P 5 --json --check 2>/dev/null | head -n 1 | grep -q '^{$' || {
    echo "FAIL: --json --check does not start stdout with the JSON document"
    fails=$((fails + 1))
}

[ "$fails" -eq 0 ] && echo "genx-plan CLI: all checks passed"
exit "$fails"
