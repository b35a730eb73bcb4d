#!/usr/bin/env bash
# MPICH's own collective tests against genx (tests/peer/README.md).
# Fetches MPICH's source package from Debian's archive (apart from the
# system's apt configuration, cached in the work directory), builds the
# tests of its test/mpi/coll that call a reduction with Open MPI's mpicc,
# and runs each at P = 2..7 (oversubscribed) in these configurations:
#   ompi     Open MPI's own components (--mca coll ^genx): the baseline
#   genx     genx from the build tree with its built-in defaults
#   FAMILY   genx with --mca coll_genx_allreduce_algorithm FAMILY
# A run passes when it exits 0 and prints MPICH's " No Errors".  Verdict:
# every (test, P) that passes under ompi passes in every genx
# configuration.  Forced families run only the tests that call an
# allreduce (the others never reach genx) unless GENX_PEER_FORCED_TESTS=all.
# Environment:
#   GENX_BUILDDIR           genx's build directory (default: build/ of this tree)
#   GENX_PEER_WORK          source, binaries, logs, summary.md (default BUILDDIR/peer)
#   GENX_PEER_NP            process counts (default "2 3 4 5 6 7")
#   GENX_PEER_CONFIGS       configurations (default "ompi genx ring butterfly
#                           rd rb cps hcps rhd"; ompi always runs)
#   GENX_PEER_TESTS         test names or shell patterns (default: all built)
#   GENX_PEER_FORCED_TESTS  allreduce (default) or all
#   GENX_PEER_TIMEOUT       seconds per mpirun (default 60)
#   GENX_PEER_MCA           extra mpirun arguments for every run ("--mca op ^avx")
#   GENX_PEER_SUITE, GENX_PEER_MIRROR  where MPICH comes from (bookworm,
#                           http://deb.debian.org/debian)
#   GENX_MPIRUN, GENX_MPICC, GENX_OMPI_INFO, GENX_OMPI_COMPONENT_DIR
# Exit: 0 passed, 1 failed (a regression, genx never loaded, nothing
# built), 77 skipped (no mpirun or mpicc, MPICH's source not reachable).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcroot=$(cd "$here/../.." && pwd)
builddir=${GENX_BUILDDIR:-$srcroot/build}
nps=${GENX_PEER_NP:-2 3 4 5 6 7}
configs=${GENX_PEER_CONFIGS:-ompi genx ring butterfly rd rb cps hcps rhd}
read -r -a patterns <<< "${GENX_PEER_TESTS:-*}"
forced_tests=${GENX_PEER_FORCED_TESTS:-allreduce}
limit=${GENX_PEER_TIMEOUT:-60}
read -r -a extra <<< "${GENX_PEER_MCA:-}"
suite=${GENX_PEER_SUITE:-bookworm}
mirror=${GENX_PEER_MIRROR:-http://deb.debian.org/debian}

# Which tests: every coll/*.c that calls a reduction; those that call an
# allreduce (blocking, non-blocking, persistent) are the ones genx serves.
reduction_re='\b(mpi|mtest)_i?(allreduce|reduce|reduce_local|reduce_scatter|reduce_scatter_block|scan|exscan)(_init)?\b|\bmpi_op_create\b'
allreduce_re='\b(mpi|mtest)_(allreduce|iallreduce|allreduce_init)\b'

say() { printf 'run-peer: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }
# shellcheck disable=SC2034 # read by openmpi-source.sh: its apt-get writes
# only under the work directory, so needs no sudo
sudo=()

# find_tools: mpirun, mpicc, Open MPI's component directory, genx's build.
find_tools() {
    mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
    mpicc=${GENX_MPICC:-$(command -v mpicc || true)}
    local ompi_info=${GENX_OMPI_INFO:-$(command -v ompi_info || true)} ompi_dir
    [ -x "${mpirun:-/nonexistent}" ] || skip "mpirun not found (install openmpi-bin or set GENX_MPIRUN)"
    [ -x "${mpicc:-/nonexistent}" ] || skip "mpicc not found (install libopenmpi-dev or set GENX_MPICC)"
    [ -x "${ompi_info:-/nonexistent}" ] || die "ompi_info not found next to mpirun (set GENX_OMPI_INFO)"
    ompi_dir=${GENX_OMPI_COMPONENT_DIR:-$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')}
    ompi_version=$("$ompi_info" --version 2>/dev/null | sed -n 's/^Open MPI v//p')
    [ -d "$builddir" ] || die "no build directory $builddir (set GENX_BUILDDIR)"
    builddir=$(cd "$builddir" && pwd)
    [ -e "$builddir/.libs/mca_coll_genx.so" ] || die "$builddir/.libs/mca_coll_genx.so is missing: run make first"
    work=${GENX_PEER_WORK:-$builddir/peer}
    mkdir -p "$work" && work=$(cd "$work" && pwd)
    # shellcheck disable=SC2054 # the commas are the coll list's
    genx_args=(--mca mca_base_component_path "$builddir/.libs:$ompi_dir"
               --mca coll genx,tuned,libnbc,basic,self --mca coll_genx_verbose 1)
    # Open MPI refuses root unless told; harmless when not root.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# fetch_mpich: MPICH's source package in WORK/src (fetched once), and the
# parts of its test suite the tests need unpacked there; sets mpich_version
# and mpich_test (its test/mpi).
fetch_mpich() {
    local dsc orig top f
    # shellcheck source=tests/openmpi-source.sh
    . "$here/../openmpi-source.sh"
    # in a subshell: its die (and cd) stay there, and a failure is a skip
    dsc=$(die() { say "$*"; exit 1; }
          fetch_debian_source "$work" "$suite" "$mirror" mpich 'mpich_*.dsc' >&2 && echo "$dsc") ||
        skip "MPICH's source package could not be fetched from $mirror $suite"
    mpich_version=$(sed -n 's/^Version: \([0-9.]*\)-.*/\1/p' "$work/src/$dsc")
    [ -n "$mpich_version" ] || die "$work/src/$dsc names no version"
    top=mpich-$mpich_version
    mpich_test=$work/src/$top/test/mpi
    if [ ! -f "$mpich_test/util/mtest.c" ]; then
        orig=
        for f in "$work/src/mpich_$mpich_version".orig.tar.*; do [ -f "$f" ] && orig=$f; done
        [ -n "$orig" ] || die "MPICH's upstream tarball is missing next to $dsc"
        say "unpacking test/mpi of $orig"
        tar -xf "$orig" -C "$work/src" "$top/test/mpi/coll" "$top/test/mpi/util" \
            "$top/test/mpi/include" "$top/test/mpi/dtpools/include" || die "cannot unpack $orig"
    fi
}

# list_tests: one line per test program, "NAME|SOURCE|CPPFLAGS|ARGUMENTS",
# as MPICH's coll/Makefile.am and testlist.in build and run them.
list_tests() {
    local f name coll=$mpich_test/coll
    for f in "$coll"/*.c; do
        grep -qiE "$reduction_re" "$f" || continue
        name=$(basename "$f" .c)
        if [ "$name" = allred ]; then   # needs -count= (testlist.in: 10 and 100)
            echo "allred-count10|allred.c||-count=10"
            echo "allred-count100|allred.c||-count=100"
        else
            echo "$name|$name.c||"
        fi
    done
    # Makefile.am's variants: the same sources with non-blocking collectives
    # (mpicolltest.h's MTest_ wrappers) and uoplong with large vectors.
    for name in icallreduce icreduce redscat redscat3 redscatinter; do
        [ -f "$coll/$name.c" ] && echo "nb$name|$name.c|-DUSE_MTEST_NBC|"
    done
    [ -f "$coll/uoplong.c" ] && echo "uoplong_large|uoplong.c|-DOP_LARGE|"
}

# selected NAME: whether GENX_PEER_TESTS names the test.
selected() {
    local p
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053 # a pattern on purpose
        [[ $1 == $p ]] && return 0
    done
    return 1
}

# compile OUTPUT LOG ARGS...: mpicc with the tests' include path, the
# hand-written mpitestconf.h and the MPI 4 compat header.
compile() {
    local out=$1 log=$2
    shift 2
    LC_ALL=C "$mpicc" -O2 -g -include "$here/mpi4-compat.h" -I"$here" -I"$mpich_test/include" \
        -I"$mpich_test/dtpools/include" -o "$out" "$@" > "$log" 2>&1
}

# build_util: MPICH's test harness (mtest.c, mtest_common.c,
# mtest_single.c), compiled once into WORK/obj.
build_util() {
    local f
    mkdir -p "$work/obj" "$work/bin" "$work/build-logs"
    util_objs=()
    for f in mtest mtest_common mtest_single; do
        util_objs+=("$work/obj/$f.o")
        if [ ! "$work/obj/$f.o" -nt "$mpich_test/util/$f.c" ] || [ "$here/mpitestconf.h" -nt "$work/obj/$f.o" ]; then
            compile "$work/obj/$f.o" "$work/build-logs/util-$f.log" -c "$mpich_test/util/$f.c" ||
                die "MPICH's util/$f.c does not build with $mpicc: $work/build-logs/util-$f.log"
        fi
    done
}

# portable_source NAME SOURCE: sets source_path, the file to compile.
# MPICH's handles are ints, Open MPI's pointers: a test that keeps
# datatypes in int arrays (nonblocking2.c, nonblocking3.c: int *sendtypes)
# truncates them and crashes in MPI_(I)alltoallw, so it is compiled from a
# copy in WORK/fixed with those arrays declared MPI_Datatype *, and
# fixed[NAME] says so.
portable_source() {
    local src=$mpich_test/coll/$2 int_types='\bint \*(send|recv)types\b'
    source_path=$src
    grep -qE "$int_types" "$src" || return 0
    source_path=$work/fixed/$2
    mkdir -p "$work/fixed"
    [ "$source_path" -nt "$src" ] || sed -E "s/$int_types/MPI_Datatype *\\1types/" "$src" > "$source_path"
    fixed[$1]="built from a copy whose int *sendtypes, *recvtypes are MPI_Datatype * (MPICH's handles are ints, Open MPI's pointers)"
}

# not_built_reason LOG: why a test does not build: the MPI call Open MPI's
# mpi.h lacks (an MPI 4 call, say), or the compiler's first error.
not_built_reason() {
    local call
    call=$(grep -m 1 -oE "implicit declaration of function '[A-Za-z0-9_]+'" "$1" | cut -d "'" -f 2)
    if [ -n "$call" ]; then
        echo "calls $call, which Open MPI $ompi_version's mpi.h does not declare"
    else
        grep -m 1 'error:' "$1" | sed 's/^[^ ]*: //'
    fi
}

# build_tests: every selected test into WORK/bin (again only when a source
# or header is newer); fills names, args_of, group_of, and not_built
# (NAME -> why) for those Open MPI cannot build.
build_tests() {
    local name src cppflags args bin log h stale
    build_util
    while IFS='|' read -r name src cppflags args; do
        selected "$name" || continue
        bin=$work/bin/$name log=$work/build-logs/$name.log
        portable_source "$name" "$src"
        stale=0
        for h in "$source_path" "$here/mpitestconf.h" "$here/mpi4-compat.h" "${util_objs[@]}"; do
            [ "$bin" -nt "$h" ] || stale=1
        done
        # shellcheck disable=SC2086 # CPPFLAGS is a word list
        if [ "$stale" -eq 1 ] && ! compile "$bin" "$log" $cppflags "$source_path" "${util_objs[@]}" -lm; then
            not_built[$name]=$(not_built_reason "$log")
            rm -f "$bin"
            continue
        fi
        names+=("$name")
        args_of[$name]=$args
        group_of[$name]=reduce
        grep -qiE "$allreduce_re" "$source_path" && group_of[$name]=allreduce
    done < <(list_tests)
    say "built ${#names[@]} tests of MPICH $mpich_version's test/mpi/coll (${#not_built[@]} not built) in $work/bin"
}

# mpirun_cmd CONFIG NAME NP [ARGS...]: sets cmd, the command line of one
# run (ARGS: mpirun arguments that replace the configuration's).
mpirun_cmd() {
    local config=$1 name=$2 np=$3 cargs
    shift 3
    case $config in
        ompi) cargs=(--mca coll ^genx) ;;
        genx) cargs=("${genx_args[@]}") ;;
        *) cargs=("${genx_args[@]}" --mca coll_genx_allreduce_algorithm "$config") ;;
    esac
    [ $# -eq 0 ] || cargs=("$@")
    # shellcheck disable=SC2206 # the test's arguments are a word list
    cmd=("$mpirun" -np "$np" --oversubscribe "${cargs[@]}" "${extra[@]}" "$work/bin/$name" ${args_of[$name]})
}

# run_one CONFIG NAME NP LOG [ARGS...]: one bounded run; prints its status:
# pass, timeout, or fail (exit N) / fail (no " No Errors").
run_one() {
    local config=$1 name=$2 np=$3 log=$4 rc
    shift 4
    mpirun_cmd "$config" "$name" "$np" "$@"
    printf '+ %s\n' "${cmd[*]}" > "$log"
    timeout -k 10 "$limit" "${cmd[@]}" >> "$log" 2>&1 < /dev/null
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo timeout
    elif [ "$rc" -ne 0 ]; then
        echo "fail (exit $rc)"
    elif grep -q '^ No Errors' "$log"; then
        echo pass
    else
        echo 'fail (no " No Errors")'
    fi
}

# configs_for NAME: the configurations NAME runs in, ompi first.
configs_for() {
    local c
    echo ompi
    for c in $configs; do
        case $c in
            ompi) continue ;;
            genx) ;;
            *) [ "${group_of[$1]}" = allreduce ] || [ "$forced_tests" = all ] || continue ;;
        esac
        echo "$c"
    done
}

# run_all: every test at every P in each of its configurations; fills
# status (CONFIG/NAME/NP -> run_one's status) and ran (CONFIG/NAME/NP -> 1
# when genx's verbose lines show the forced family running an allreduce).
run_all() {
    local name np config log i=0 line
    for name in "${names[@]}"; do
        i=$((i + 1))
        line=
        for config in $(configs_for "$name"); do
            mkdir -p "$work/logs/$config"
            for np in $nps; do
                log=$work/logs/$config/$name-p$np.log
                status[$config/$name/$np]=$(run_one "$config" "$name" "$np" "$log")
                [ "$config" = ompi ] || ! grep -q '\] genx: ' "$log" || genx_loaded=1
                case $config in ompi | genx) ;; *)
                    grep -qE "genx: (allreduce|iallreduce|persistent allreduce) [0-9]+ B .* ranks: $config " "$log" &&
                        ran[$config/$name/$np]=1 ;;
                esac
            done
            line+=" $config $(count_passes "$config" "$name")"
        done
        say "[$i/${#names[@]}] $name:$line"
    done
}

# count_passes CONFIG NAME: "passed/run" over the process counts.
count_passes() {
    local np n=0 ok=0
    for np in $nps; do
        [ -n "${status[$1/$2/$np]:-}" ] || continue
        n=$((n + 1))
        [ "${status[$1/$2/$np]}" = pass ] && ok=$((ok + 1))
    done
    echo "$ok/$n"
}

# program_lines LOG: what the test itself printed: LOG without the command
# line, mpirun's and Open MPI's banners, rank prefixes ("(3) ") and repeats.
program_lines() {
    grep -v -e '^+ ' -e '^-----' -e '^\[' -e '^ *$' "$1" |
        grep -v -E 'Primary job|non-zero exit code|mpirun (detected|noticed|has exited)|the job to be terminated|Process name:|Exit code:|MPI_ABORT was invoked|with errorcode|NOTE: invoking|You may or may not|exactly when Open MPI' |
        sed -E 's/^\([0-9]+\) //; s/^ +//' | awk '!seen[$0]++'
}

# failure_reason LOG STATUS: one line saying why a run failed: a failed
# assertion, the signal and the MPI call it hit, or the status and the
# test's first lines of output (the same for every P where the cause is).
failure_reason() {
    local log=$1 st=$2 r
    [ "$st" = timeout ] && { echo "timed out after ${limit} s"; return; }
    r=$(grep -m 1 -oE "Assertion \`.*' failed" "$log")
    [ -n "$r" ] && { echo "$r"; return; }
    r=$(grep -m 1 -oE 'Signal: [A-Za-z ]*[A-Za-z]' "$log")
    if [ -n "$r" ]; then
        echo "${r#Signal: } in $(grep -m 1 -oE '\((P?MPI_[A-Za-z_]+|mca_[a-z_]+)\+' "$log" | tr -d '(+')"
        return
    fi
    # MTest's "Found N errors" only when the test said nothing else
    r=$(program_lines "$log" | grep -v -E '^Found [0-9]+ errors' | head -n 3)
    [ -n "$r" ] || r=$(program_lines "$log" | head -n 3)
    r=$(printf '%s\n' "$r" | paste -sd ';' | sed 's/;/; /g' | cut -c 1-200)
    echo "$st${r:+: $r}"
}

# explain_ompi_failures: ompi_reason (NAME/NP -> why) for each run that
# fails under Open MPI's own components, and what the same run does with
# --mca op ^avx: a failure that goes away is Open MPI's AVX reduction
# component (4.1.4 sums 8-bit integers wrongly).
explain_ompi_failures() {
    local name np st log why
    for name in "${names[@]}"; do
        for np in $nps; do
            st=${status[ompi/$name/$np]:-pass}
            [ "$st" = pass ] && continue
            log=$work/logs/ompi/$name-p$np.log
            why=$(failure_reason "$log" "$st")
            if [[ " ${extra[*]} " != *" op "* ]]; then
                st=$(run_one ompi "$name" "$np" "${log%.log}-noavx.log" --mca coll ^genx --mca op ^avx)
                if [ "$st" = pass ]; then
                    why+=" -- passes with --mca op ^avx (Open MPI's AVX op component)"
                elif [ "$(failure_reason "${log%.log}-noavx.log" "$st")" != "$why" ]; then
                    why+=" -- with --mca op ^avx: $(failure_reason "${log%.log}-noavx.log" "$st")"
                fi
            fi
            ompi_reason[$name/$np]=$why
        done
    done
}

# check_regressions: every run genx failed where ompi passed, in
# regressions (one entry each: what failed and why, whether it fails
# again, whether genx's component list without genx fails too, the log,
# the command).
check_regressions() {
    local key config name np st again list
    for key in $(printf '%s\n' "${!status[@]}" | sort -t / -k 2,2 -k 3,3n -k 1,1); do
        IFS=/ read -r config name np <<< "$key"
        st=${status[$key]}
        if [ "$config" = ompi ] || [ "$st" = pass ] || [ "${status[ompi/$name/$np]}" != pass ]; then
            continue
        fi
        again=$(run_one "$config" "$name" "$np" "$work/logs/$config/$name-p$np-again.log")
        list=$(run_one ompi "$name" "$np" "$work/logs/ompi/$name-p$np-list.log" --mca coll tuned,libnbc,basic,self)
        mpirun_cmd "$config" "$name" "$np"
        regressions+=("$name P=$np $config: $(failure_reason "$work/logs/$config/$name-p$np.log" "$st");
  run again: $again; with --mca coll tuned,libnbc,basic,self (genx's list without genx): $list;
  log: $work/logs/$config/$name-p$np.log;
  reproduce: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ${cmd[*]}")
    done
}

# table: the markdown table of passes per test and configuration (legend
# in report).
table() {
    local name config cell all=ompi c np bad mark
    for c in $configs; do [ "$c" = ompi ] || all+=" $c"; done
    # shellcheck disable=SC2086 # one column per configuration
    { printf '| test | calls |'; printf ' %s |' $all; echo; }
    # shellcheck disable=SC2086
    { printf '|---|---|'; printf -- '---|%.0s' $all; echo; }
    for name in "${names[@]}"; do
        printf '| %s | %s |' "$name" "${group_of[$name]}"
        for config in $all; do
            cell=$(count_passes "$config" "$name") bad='' mark=''
            for np in $nps; do
                [ "$config" != ompi ] && [ "${status[ompi/$name/$np]:-}" = pass ] &&
                    [ -n "${status[$config/$name/$np]:-}" ] && [ "${status[$config/$name/$np]}" != pass ] && bad=!
                [ -n "${ran[$config/$name/$np]:-}" ] && mark=ran
            done
            case $config in ompi | genx) mark=ran ;; esac
            if [ "$cell" = 0/0 ]; then cell=-; elif [ -z "$mark" ]; then cell="$cell*"; fi
            printf ' %s%s |' "$cell" "$bad"
        done
        echo
    done
}

# ompi_failures: one line per test and reason, the process counts joined.
ompi_failures() {
    local name np why
    local -A at
    local -a order
    for name in "${names[@]}"; do
        at=() order=()
        for np in $nps; do
            why=${ompi_reason[$name/$np]:-}
            [ -n "$why" ] || continue
            [ -n "${at[$why]:-}" ] || order+=("$why")
            at[$why]+="${at[$why]:+,}$np"
        done
        for why in "${order[@]}"; do
            echo "- $name, P=${at[$why]}: $why"
        done
    done
}

# report: the summary (markdown) on standard output and in WORK/summary.md.
report() {
    local name r
    {
        echo "## MPICH $mpich_version test/mpi/coll against genx"
        echo
        echo "Open MPI $ompi_version ($mpirun), P = $nps, --oversubscribe, timeout $limit s" \
            "per run${extra[*]:+, extra mpirun arguments: ${extra[*]}}; genx from $builddir."
        echo "Cells: runs that passed / runs, over P.  \"-\": not run (forced families run the" \
            "tests that call an allreduce); \"!\": genx failed where Open MPI passed;" \
            "\"*\": genx's log never shows the forced family running (genx left every call to another component)."
        echo
        table
        echo
        echo "### Not built (${#not_built[@]})"
        for name in $(printf '%s\n' "${!not_built[@]}" | sort); do echo "- $name: ${not_built[$name]}"; done
        echo
        echo "### Built with a portability fix (${#fixed[@]})"
        for name in $(printf '%s\n' "${!fixed[@]}" | sort); do echo "- $name: ${fixed[$name]}"; done
        echo
        echo "### Failing under Open MPI's own components"
        ompi_failures
        echo
        echo "### genx failed where Open MPI passed (${#regressions[@]})"
        for r in "${regressions[@]}"; do echo "- $r"; done
    } | tee "$work/summary.md"
}

main() {
    # shellcheck disable=SC2034 # ran: set in run_all, read in table
    declare -gA not_built=() fixed=() args_of=() group_of=() status=() ran=() ompi_reason=()
    declare -ga names=() regressions=()
    local start=$SECONDS
    genx_loaded=0
    find_tools
    fetch_mpich
    build_tests
    [ ${#names[@]} -gt 0 ] || die "no test built (GENX_PEER_TESTS='${patterns[*]}'; logs in $work/build-logs)"
    # shellcheck disable=SC2086 # configs is a word list
    say "running ${#names[@]} tests at P = $nps in: $(printf '%s\n' ompi $configs | awk '!seen[$0]++' | paste -sd ' ')" \
        "(forced families: $forced_tests tests; logs in $work/logs)"
    run_all
    explain_ompi_failures
    check_regressions
    report
    say "took $((SECONDS - start)) s; summary in $work/summary.md"
    if [ "$configs" != ompi ] && [ "$genx_loaded" -eq 0 ]; then
        die "genx's verbose lines appear in no log: genx never loaded from $builddir/.libs"
    fi
    if [ ${#regressions[@]} -gt 0 ]; then
        say "FAIL: genx failed ${#regressions[@]} runs that pass with Open MPI's own components"
        exit 1
    fi
    say "PASS: every run that passes with Open MPI's own components passes with genx"
}

main "$@"
