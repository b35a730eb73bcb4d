#!/bin/sh
# The product's shape: the component carries no test-support code (the
# loopback transport, the fake device, the C table over a C++ transport:
# tests/support/), and no function is
# too long to hold (universal-ctags gives each function's first and last
# line): none over 150 lines.
# Run by `make check` from the build directory.
set -u
so=${GENX_BUILDDIR:-.}/.libs/mca_coll_genx.so
fails=0
if [ ! -f "$so" ]; then
    echo "FAIL: $so not built"
    exit 1
fi
found=$(nm -C "$so" | grep -Ei 'FakeDevice|Loopback|run_ranks|transport_ops_for' || true)
if [ -n "$found" ]; then
    echo "FAIL: test-support symbols in $so:"
    echo "$found" | sed 's/^/    /'
    fails=$((fails + 1))
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v ctags >/dev/null 2>&1 || ! ctags --version 2>/dev/null | grep -q Universal; then
    echo "FAIL: universal-ctags is needed to measure function lengths"
    exit 1
fi
# length file:line name, for every C and C++ function of the code folders.
lengths=$(cd "$top" && ctags --fields=+ne --c++-kinds=f --c-kinds=f -o - -R \
        common genx plan runtime tuning tune topology sim tools ompi_coll_genx 2>/dev/null |
    awk -F'\t' '{ line = ""; end = ""
        for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
        if (line != "" && end != "") print end - line + 1, $2 ":" line, $1 }')
nfun=$(printf '%s\n' "$lengths" | grep -c .)
if [ "$nfun" -lt 500 ]; then
    echo "FAIL: ctags found only $nfun functions; the measurement is broken"
    fails=$((fails + 1))
fi
long=$(printf '%s\n' "$lengths" | awk '$1 > 150')
if [ -n "$long" ]; then
    echo "FAIL: functions over the limit (lines, place, name):"
    printf '%s\n' "$long" | sed 's/^/    /'
    fails=$((fails + 1))
fi
longest=$(printf '%s\n' "$lengths" | sort -rn | head -n 1)
[ "$fails" -eq 0 ] && echo "code shape: $so holds no test-support symbols; $nfun functions, the longest $longest"
exit "$fails"
