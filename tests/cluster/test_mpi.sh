#!/usr/bin/env bash
# MPI jobs run unmodified on the emulated cluster, one rank per emulated
# host, and their traffic crosses the shaped links: Open MPI (and genx's
# component when it is built), and MPICH when it is installed.
set -u
. "${srcdir:-$(dirname "$0")/../..}/tests/cluster/lib.sh"
require_cluster_support
builddir=${GENX_BUILDDIR:-$(pwd)}
bench="$builddir/bench/genx-bench"
require_mpi_program "$bench" genx-bench

name=$(cname mp)
tmp=$(mktemp -d)
trap 'cleanup; rm -rf "$tmp"' EXIT
up "$name" switch:3 --rate 100M

gc() { timeout 120 python3 "$GC" --name "$name" "$@"; }
tx() { for h in h0 h1 h2; do gc exec "$h" -- cat /sys/class/net/eth0/statistics/tx_bytes; done | tr '\n' ' '; }

# Each emulated host is its own node: its own hostname, one rank each.
names=$(gc run --timeout 60 -- mpirun -np 3 hostname | sort | tr '\n' ' ')
[ "$names" = "h0 h1 h2 " ] || fail "ranks ran on '$names', not on h0 h1 h2"
echo "ok: mpirun placed one rank on each emulated host: $names"

# --order: rank i runs on the i-th host named.
placed=$(gc run --timeout 60 --order h2,h0,h1 -- mpirun -np 3 sh -c 'echo $OMPI_COMM_WORLD_RANK $(hostname)' |
    sort -n | tr '\n' ' ')
[ "$placed" = "0 h2 1 h0 2 h1 " ] || fail "--order h2,h0,h1 placed ranks as '$placed'"
gc run --timeout 60 --order h0,h7 -- true 2>"$tmp/order.err" && fail "--order with an unknown host ran"
grep -q "no host h7" "$tmp/order.err" || fail "--order h0,h7: no message naming h7: $(cat "$tmp/order.err")"
echo "ok: --order places rank i on the i-th host named, and refuses unknown hosts"

# bench_over_links LABEL RUN-ARGS... -- LAUNCHER...: a validated 1 MiB allreduce
# (1 warm-up + 3 timed calls); every host must have sent at least the
# (P-1)/P x 1 MiB per call that any allreduce needs from it.
bench_over_links() {
    local label=$1; shift
    local before after out
    before=($(tx))
    out=$("$@" -m 1M:1M -i 3 -x 1 -u 0 -c -T int 2>&1) || fail "$label: the run failed: $out"
    after=($(tx))
    echo "$out" | grep -Eq '^1048576 +[0-9.]+ +Pass$' || fail "$label: no validated 1 MiB row in: $out"
    for i in 0 1 2; do
        local sent=$(( after[i] - before[i] ))
        [ "$sent" -ge $(( 4 * 2 * 1048576 / 3 )) ] ||
            fail "$label: h$i sent only $sent bytes on its link; the ranks did not talk over the network"
    done
    echo "ok: $label: 1 MiB allreduce validated, each host sent >= 4 x 2/3 MiB on its link (${after[0]} - ${before[0]} on h0)"
}

bench_over_links "Open MPI" gc run --timeout 120 -- mpirun -np 3 --mca coll ^genx "$bench"

so="$builddir/.libs/mca_coll_genx.so"
if [ -e "$so" ]; then
    path="$builddir/.libs:$(ompi_info --parsable --path pkglibdir | cut -d: -f3)"
    bench_over_links "genx" gc run --timeout 120 -- mpirun -np 3 --mca mca_base_component_path "$path" "$bench"
    # Open MPI's hostfile names the hosts, so genx finds the ranks on the
    # cluster's topology.conf (with addresses it could not: no file names them).
    dir="${GENX_CLUSTER_STATE:-/run/genx-cluster}/$name"
    out=$(gc run --timeout 120 -- mpirun -np 3 --mca mca_base_component_path "$path" \
        --mca coll_genx_verbose 1 --mca coll_genx_topology_file "$dir/topology.conf" \
        --mca coll_genx_topology_overlay "$dir/topology-overlay.json" "$bench" -m 1M:1M -i 1 -x 0 2>&1) ||
        fail "genx with the cluster's topology.conf: the run failed: $out"
    echo "$out" | grep -q "3 ranks on 3 hosts, 1 switch level" ||
        fail "genx did not place the ranks on the cluster's topology.conf: $out"
    echo "ok: genx placed the 3 ranks on the cluster's topology.conf by host name"
else
    echo "note: genx's component is not built ($so): its part is not run"
fi

# MPICH's part is opt-in (GENX_TEST_MPICH=1): the README's setup does not
# install MPICH, and under the emulated links its hydra run currently exits
# non-zero after printing a validated row (open problem, see the issue notes).
if [ "${GENX_TEST_MPICH:-0}" = 1 ] && command -v mpiexec.mpich >/dev/null 2>&1 &&
    command -v mpicc.mpich >/dev/null 2>&1; then
    mpicc.mpich -O2 -std=gnu11 -o "$tmp/genx-bench.mpich" "$top/bench/genx_bench.c" ||
        fail "cannot build genx-bench with mpicc.mpich"
    names=$(gc run --mpich --timeout 60 -- mpiexec.mpich -n 3 hostname | sort | tr '\n' ' ')
    [ "$names" = "h0 h1 h2 " ] || fail "MPICH ranks ran on '$names', not on h0 h1 h2"
    echo "ok: mpiexec.mpich placed one rank on each emulated host"
    bench_over_links "MPICH" gc run --mpich --timeout 120 -- mpiexec.mpich -n 3 "$tmp/genx-bench.mpich"
else
    echo "note: MPICH's part not run (needs GENX_TEST_MPICH=1 and the Debian packages mpich, libmpich-dev)"
fi
echo "PASS"
