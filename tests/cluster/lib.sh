# Shared by tests/cluster/*.sh (sourced, not run).  Each test builds its own
# cluster with a unique name, removes it on any exit, and is bounded in time.

top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
GC="$top/bench/genx-cluster"
clusters=()

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

require_cluster_support() {
    command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (genx-cluster needs it)"
    [ "$(id -u)" -eq 0 ] || skip "not root: the emulated cluster needs network namespaces (run as root)"
    command -v ip >/dev/null 2>&1 || skip "iproute2's ip is not installed"
    local why
    why=$(timeout 60 python3 "$GC" check 2>&1) || skip "this machine cannot host an emulated cluster: $why"
}

# MPI jobs on the cluster: Open MPI's mpirun (allowed to run as root) and
# the built program PATH (NAME in the skip message); skips otherwise.
require_mpi_program() {
    local path=$1 name=$2
    command -v mpirun >/dev/null 2>&1 || skip "Open MPI's mpirun is not installed"
    [ -x "$path" ] || skip "$name is not built ($path)"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

cleanup() {
    local c
    for c in "${clusters[@]}"; do
        timeout 60 python3 "$GC" --name "$c" down --force >/dev/null 2>&1 || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# up NAME ARGS...: bring up a cluster that cleanup removes.
up() {
    local name=$1; shift
    clusters+=("$name")
    timeout 120 python3 "$GC" up --name "$name" -q --lifetime 600 "$@" >/dev/null ||
        fail "genx-cluster up $* failed"
}

# unique cluster name: two letters of the test, then the pid
cname() { printf '%s%d' "$1" $(( $$ % 100000 )); }

# json_get JSON EXPR: evaluate a Python expression over the parsed JSON `d`
json_get() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

# check COND MESSAGE: COND is a Python expression (floats only)
check() {
    python3 -c "import sys; sys.exit(0 if ($1) else 1)" || fail "$2"
    echo "ok: $2"
}
