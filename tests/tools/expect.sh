# Shared by the command-line tests (sourced, not run): expect RC PATTERN
# ARGS... runs "$tool" ARGS, and counts a failure in $fails unless it exits
# with RC and PATTERN (grep -E) is in its stdout+stderr (kept in "$out").
expect() {
    want_rc=$1 pattern=$2
    shift 2
    "$tool" "$@" >"$out" 2>&1
    rc=$?
    if [ "$rc" -ne "$want_rc" ] || ! grep -Eq -- "$pattern" "$out"; then
        echo "FAIL: $(basename "$tool") $* -> exit $rc (want $want_rc), output lacks /$pattern/:"
        sed 's/^/    /' "$out"
        fails=$((fails + 1))
    fi
}
