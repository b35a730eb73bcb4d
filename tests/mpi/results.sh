# PASS/FAIL bookkeeping shared by the MPI, stress, sanitizer and valgrind
# test scripts (sourced, not run).
#   pass NAME [DETAIL]        counts a pass
#   fail NAME WHY [LOG]       counts a failure, prints it; with LOG, the
#                             command to reproduce (LOG's first line when it
#                             is "+ command") and LOG's last 30 lines,
#                             without lines matching $results_hide (an
#                             extended regex) when the script sets it
# npass, nfail and summary (one "PASS  ..." / "FAIL  ..." line each) are
# for the script's closing report.
# shellcheck shell=bash
npass=0
nfail=0
summary=()
pass() { npass=$((npass + 1)); summary+=("PASS  $1${2:+ ($2)}"); }
fail() {
    nfail=$((nfail + 1))
    summary+=("FAIL  $1: $2")
    echo "FAIL: $1: $2${3:+ (log: $3)}"
    [ -n "${3:-}" ] && [ -f "$3" ] || return 0
    if head -n 1 "$3" | grep -q '^+ '; then
        echo "      reproduce: $(head -n 1 "$3" | sed 's/^+ //')"
    fi
    if [ -n "${results_hide:-}" ]; then
        tail -n +2 "$3" | grep -Ev "$results_hide" | tail -n 30 | sed 's/^/    | /'
    else
        tail -n 30 "$3" | sed 's/^/    | /'
    fi
}
