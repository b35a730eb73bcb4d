#!/bin/sh
# The product's shape: the component carries no test-support code (the
# loopback transport, the fake device: tests/support/).
# Run by `make check` from the build directory.
set -u
so=${GENX_BUILDDIR:-.}/.libs/mca_coll_genx.so
fails=0
if [ ! -f "$so" ]; then
    echo "FAIL: $so not built"
    exit 1
fi
found=$(nm -C "$so" | grep -Ei 'FakeDevice|Loopback|run_ranks' || true)
if [ -n "$found" ]; then
    echo "FAIL: test-support symbols in $so:"
    echo "$found" | sed 's/^/    /'
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "code shape: $so holds no test-support symbols"
exit "$fails"
