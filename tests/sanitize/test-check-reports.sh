#!/usr/bin/env bash
# check-reports.py against fixture logs (tests/sanitize/fixtures): planted
# genx errors must fail it, Open MPI's must not.  The fixtures are real
# logs of Open MPI 4.1.4 on Debian 12 (addresses kept, this machine's paths
# replaced) and planted genx reports in the same formats; genx's sources
# are taken to live in /src/genx (--srcdir).  make check runs this.
# Exit: 0 all as expected, 1 otherwise, 77 without python3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
checker=$here/check-reports.py
fx=$here/fixtures
if ! command -v python3 > /dev/null; then
    echo "SKIP: python3 not found"
    exit 77
fi

nfail=0
# expect NAME EXIT SUMMARY-REGEX ARGS...: check-reports.py ARGS exits EXIT
# and its last line matches SUMMARY-REGEX (grep -E).
expect() {
    local name=$1 want=$2 pattern=$3 out rc
    shift 3
    out=$(python3 "$checker" "$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $name: exit $rc, expected $want"
        sed 's/^/    | /' <<< "$out"
        nfail=$((nfail + 1))
    elif ! tail -n 1 <<< "$out" | grep -Eq -- "$pattern"; then
        echo "FAIL: $name: summary does not match /$pattern/"
        sed 's/^/    | /' <<< "$out"
        nfail=$((nfail + 1))
    else
        echo "PASS: $name: $(tail -n 1 <<< "$out")"
    fi
}

src=(--srcdir /src/genx)
# ---- AddressSanitizer / LeakSanitizer / UBSan
expect "Open MPI leaks only (ompi/runtime/ is not genx's runtime/)" 0 \
    '0 report\(s\) in genx code, 4 elsewhere .*3 direct leak, 1 indirect leak' \
    "${src[@]}" asan "$fx/asan-openmpi-leaks.log"
expect "genx leak: an unsymbolized frame in mca_coll_genx.so" 1 \
    '1 report\(s\) in genx code, 1 elsewhere' "${src[@]}" asan "$fx/asan-genx-leak.log"
expect "genx heap-buffer-overflow: genx:: and genx_ functions" 1 \
    '1 report\(s\) in genx code, 0 elsewhere' "${src[@]}" asan "$fx/asan-genx-overflow.log"
expect "genx UB: source path ../runtime/reduce.cpp only" 1 \
    '1 report\(s\) in genx code, 0 elsewhere' "${src[@]}" asan "$fx/ubsan-genx.log"
expect "several logs: one genx report among them fails" 1 \
    '3 log\(s\), 1 report\(s\) in genx code, 9 elsewhere' \
    "${src[@]}" asan "$fx/asan-openmpi-leaks.log" "$fx/asan-genx-leak.log" "$fx/asan-openmpi-leaks.log"
# ---- valgrind
expect "valgrind: Open MPI and PMIx errors only" 0 \
    '0 report\(s\) in genx code, 3 elsewhere .*1 definitely lost, 1 uninitialised condition, 1 uninitialised syscall param' \
    "${src[@]}" valgrind "$fx/valgrind-openmpi.log"
expect "valgrind: invalid write under frames of mca_coll_genx.so" 1 \
    '1 report\(s\) in genx code' "${src[@]}" valgrind "$fx/valgrind-genx-object.log"
expect "valgrind: invalid read in a genx source file" 1 \
    '1 report\(s\) in genx code' "${src[@]}" valgrind "$fx/valgrind-genx-source.log"
expect "valgrind: the same file outside genx's source tree is not genx's" 0 \
    '0 report\(s\) in genx code, 1 elsewhere' --srcdir /elsewhere valgrind "$fx/valgrind-genx-source.log"
expect "valgrind: definite leak allocated by genx" 1 \
    '1 report\(s\) in genx code' "${src[@]}" valgrind "$fx/valgrind-genx-leak.log"
expect "valgrind: a rank that died under valgrind (no ERROR SUMMARY)" 1 \
    '0 report\(s\) in genx code, 1 elsewhere' "${src[@]}" valgrind "$fx/valgrind-incomplete.log"
# ---- usage
expect "no log named" 2 'usage' asan
expect "unreadable log" 2 'cannot read' asan "$fx/no-such.log"

[ "$nfail" -eq 0 ]
