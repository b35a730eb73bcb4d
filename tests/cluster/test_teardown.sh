#!/usr/bin/env bash
# The root namespace is never touched; down, an interrupted up and a run
# that overstays its timeout leave no namespace, veth, bridge or process
# behind; up refuses to clobber a cluster that exists.
set -u
. "${srcdir:-$(dirname "$0")/../..}/tests/cluster/lib.sh"
require_cluster_support

# The root namespace's links (veths and bridges included), addresses and routes.
root_state() {
    ip -o link show | sed 's/^[0-9]*: //; s/ state [A-Z]*//; s/ qlen [0-9]*//' | awk '{print $1, $2}' | sort
    ip -o addr show | awk '{print $2, $3, $4}' | sort
    ip route show table all | sort
}
ours() { ip netns list | awk '{print $1}' | grep "^$1-" || true; }
state_dir() { echo "${GENX_CLUSTER_STATE:-/run/genx-cluster}/$1"; }

before=$(root_state)

# 1. up (with delay lines: a delayed uplink), the root namespace unchanged while it is up.
a=$(cname td)
up "$a" tree:2x2 --rate 50M --uplink-delay 1ms
[ -n "$(ours "$a")" ] || fail "no namespaces named $a-* after up"
n_ns=$(ours "$a" | wc -l)
[ "$n_ns" -eq 9 ] || fail "expected 9 namespaces (4 hosts, 3 switches, 2 delayed links), found $n_ns"
echo "ok: $n_ns namespaces for tree:2x2 with delayed uplinks"
[ "$(root_state)" = "$before" ] || fail "the root namespace changed while $a is up: $(diff <(echo "$before") <(root_state))"
echo "ok: root namespace links, addresses and routes unchanged while the cluster is up"
pids=$(timeout 30 python3 "$GC" --name "$a" status --json | python3 -c 'import json,sys; print(" ".join(str(d["pid"]) for d in json.load(sys.stdin)["daemons"]))')
[ -n "$pids" ] || fail "no delay-line/reaper daemons recorded"
for p in $pids; do kill -0 "$p" 2>/dev/null || fail "daemon $p is not running"; done
echo "ok: daemons running: $pids"

# 2. up refuses to clobber an existing cluster and leaves it intact.
if timeout 60 python3 "$GC" up --name "$a" -q switch:2 >/dev/null 2>&1; then
    fail "up --name $a succeeded over an existing cluster"
fi
[ "$(ours "$a" | wc -l)" -eq "$n_ns" ] || fail "the refused up changed cluster $a"
echo "ok: up refuses to clobber $a and leaves it intact"

# 3. a run past its timeout is stopped, with everything it started in the hosts.
t0=$(date +%s)
# setsid: a process outside the run's process group, as daemons started through the agent are.
timeout 60 python3 "$GC" --name "$a" run --timeout 2 -- sh -c 'setsid sleep 300 & sleep 300' >/dev/null 2>&1
rc=$?
[ "$rc" -eq 124 ] || fail "run past its timeout returned $rc, not 124"
[ $(( $(date +%s) - t0 )) -lt 30 ] || fail "run --timeout 2 took more than 30 s"
for ns in $(ours "$a" | grep -E -- "-h[0-9]+$"); do
    [ -z "$(ip netns pids "$ns")" ] || fail "processes left in $ns after a timed-out run: $(ip netns pids "$ns")"
done
echo "ok: run --timeout 2 was stopped (rc 124) and left no process in the hosts"

# 4. down removes everything.
timeout 60 python3 "$GC" --name "$a" down >/dev/null 2>&1 || fail "down $a failed"
[ -z "$(ours "$a")" ] || fail "namespaces left after down: $(ours "$a")"
for p in $pids; do ! kill -0 "$p" 2>/dev/null || fail "daemon $p still running after down"; done
[ ! -e "$(state_dir "$a")" ] || fail "state directory $(state_dir "$a") left after down"
[ "$(root_state)" = "$before" ] || fail "root namespace changed after down"
echo "ok: down left no namespace, veth, bridge, process or state behind"

# 5. an up interrupted half-way cleans up after itself.
b=$(cname ti)
clusters+=("$b")
python3 "$GC" up --name "$b" -q tree:2x4 --rate 50M --uplink-delay 1ms >/dev/null 2>&1 &
upid=$!
for _ in $(seq 1 100); do [ -n "$(ours "$b")" ] && break; sleep 0.05; done
sleep 0.3
kill -INT "$upid" 2>/dev/null
timeout 60 tail --pid="$upid" -f /dev/null
wait "$upid"
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "note: up finished before the interrupt; removing it normally"
    timeout 60 python3 "$GC" --name "$b" down >/dev/null 2>&1
fi
[ -z "$(ours "$b")" ] || fail "interrupted up left namespaces: $(ours "$b")"
[ ! -e "$(state_dir "$b")" ] || fail "interrupted up left its state directory"
[ "$(root_state)" = "$before" ] || fail "root namespace changed after the interrupted up"
echo "ok: an interrupted up (rc $rc) left nothing behind"

# 6. a topology that cannot be built is refused before anything is made.
tmp=$(mktemp -d)
trap 'cleanup; rm -rf "$tmp"' EXIT
printf 'switch s1 s2 s3\nlink s1 s2\nlink s2 s3\nlink s3 s1\nhost h0 s1\n' > "$tmp/loop.txt"
c=$(cname tl)
if out=$(timeout 60 python3 "$GC" up --name "$c" -q "$tmp/loop.txt" 2>&1); then
    clusters+=("$c")
    fail "a topology with a loop was accepted"
fi
echo "$out" | grep -q "tree" || fail "the loop's error does not say why: $out"
[ -z "$(ours "$c")" ] || fail "a refused topology left namespaces"
echo "ok: a looped topology is refused with: $(echo "$out" | head -n 1)"
echo "PASS"
