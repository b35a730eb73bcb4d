#!/usr/bin/env bash
# genx developer entry point: the two commands of the README.
#   ./dev.sh demo   install what is missing, build, run the allreduce comparison
#   ./dev.sh test   install what is missing, build, run the whole test suite
# Other verbs: deps (install Debian packages only), build,
#   test-long  as test, with make check-long: every entry of the long test
#              matrices, valgrind's MPI runs and the [.long] unit tests
#   sanitize   build with --enable-sanitizers in build-sanitize/ and run
#              tests/sanitize/run-sanitizers.sh (ASan, LSan, UBSan)
#   valgrind   build, run tests/sanitize/run-valgrind.sh (memcheck)
# BUILD_DIR (default: build, build-sanitize for sanitize) is where the VPATH
# build lives.
set -euo pipefail
cd "$(dirname "$0")"
top=$(pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# ./configure's arguments (the sanitize verb adds --enable-sanitizers).
# -g1: line tables for backtraces and valgrind at a third less compile time
# than -g (autoconf's default, which a plain ./configure keeps).
configure_args=(-q "CFLAGS=-g1 -O2" "CXXFLAGS=-g1 -O2")

# Debian 12 packages genx needs to build, test and benchmark.
packages=(
    g++ make autoconf automake libtool pkg-config
    openmpi-bin libopenmpi-dev
    catch2 nlohmann-json3-dev libcli11-dev libhwloc-dev libfabric-dev libucx-dev
    libsimgrid-dev
    iproute2 procps man-db python3 valgrind universal-ctags
)

say() { printf 'genx: %s\n' "$*" >&2; }

deps() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    say "installing missing Debian packages: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
    deps
    if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
        say "regenerating the build system (autoreconf)"
        autoreconf -fi >/dev/null
    fi
    mkdir -p "$build"
    # Reconfigure also when the build directory was configured with other
    # arguments (config.status --config prints them, -q left out).
    local want have
    want=$(printf '%s\n' "${configure_args[@]}" | { grep -vx -- -q || true; } | tr '\n' ' ')
    have=$([ -x "$build/config.status" ] && "$build/config.status" --config | tr -d "'" | tr ' ' '\n' | grep -v '^$' | tr '\n' ' ' || true)
    if [ ! -f "$build/Makefile" ] || [ configure -nt "$build/config.status" ] || [ "$want" != "$have" ]; then
        say "configuring in $build (${configure_args[*]})"
        (cd "$build" && "$top/configure" "${configure_args[@]}")
    fi
    say "building with $jobs jobs"
    make -C "$build" -j"$jobs" -s
    make -C "$build" -j"$jobs" -s check-programs
}

run_tests() {
    local target=${1:-check}
    build
    say "running the test suite (make $target)"
    local rc=0
    make -C "$build" -j"$jobs" "$target" || rc=$?
    local log="$build/test-suite.log"
    local pass fail skip
    pass=$(sed -n 's/^# PASS: *//p' "$log" | head -n 1)
    fail=$(sed -n 's/^# FAIL: *//p' "$log" | head -n 1)
    skip=$(sed -n 's/^# SKIP: *//p' "$log" | head -n 1)
    err=$(sed -n 's/^# ERROR: *//p' "$log" | head -n 1)
    [ "$rc" -eq 0 ] || cat "$log" >&2
    echo "check: ${pass:-0} passed, $(( ${fail:-0} + ${err:-0} )) failed, ${skip:-0} skipped"
    # The release tarball must carry every file git tracks (make dist's
    # dist-hook names any it lacks): checked here so that CI catches a new
    # file left out of Makefile.am.
    if [ "$rc" -eq 0 ] && [ -e "$top/.git" ]; then
        say "checking the release tarball (make dist)"
        if ! make -C "$build" dist > "$build/dist-check.log" 2>&1; then
            grep -A50 "^make dist:" "$build/dist-check.log" >&2 ||
                tail -n 30 "$build/dist-check.log" >&2
            echo "make dist failed (log: $build/dist-check.log)" >&2
            rc=1
        fi
        rm -f "$build"/genx-*.tar.gz
    fi
    return "$rc"
}

demo() {
    build
    exec "$top/bench/demo.sh" "$build" "$@"
}

# A separate build with ASan, LSan and UBSan, and the runs on it
# (docs/reliability.md).  Not part of ./dev.sh test: it needs a second build.
sanitize() {
    build=${BUILD_DIR:-$top/build-sanitize}
    configure_args=(-q "CFLAGS=-g1 -O2" "CXXFLAGS=-g1 -O2" --enable-sanitizers)
    build
    say "running the sanitizer checks (tests/sanitize/run-sanitizers.sh)"
    "$top/tests/sanitize/run-sanitizers.sh" "$build"
}

valgrind_check() {
    build
    say "running valgrind memcheck on MPI runs (tests/sanitize/run-valgrind.sh)"
    "$top/tests/sanitize/run-valgrind.sh" "$build"
}

case "${1:-}" in
    deps) deps ;;
    build) build ;;
    test) run_tests ;;
    test-long) run_tests check-long ;;
    demo) shift; demo "$@" ;;
    sanitize) sanitize ;;
    valgrind) valgrind_check ;;
    *) echo "usage: $0 {demo|test|test-long|build|deps|sanitize|valgrind}" >&2; exit 2 ;;
esac
