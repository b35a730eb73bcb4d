#!/usr/bin/env bash
# build-ompi5.sh: Open MPI 5.0 in a private prefix on Debian 12, for
# building and testing genx's Open MPI 5.0 glue (tests/ompi5/README.md).
#
# Debian 12 ships Open MPI 4.1.4 only.  This script takes Open MPI 5.0 from
# Debian 13's (trixie) source package without touching the system's apt
# configuration: a deb-src entry for trixie in a sources file of its own,
# with its own package lists and cache, read by apt-get through
# -o Dir::Etc::sourcelist / Dir::Etc::sourceparts / Dir::State::Lists /
# Dir::Cache.  Then:
#   1. installs the build dependencies it needs from Debian 12 (apt-get,
#      only those missing: a C compiler, make, perl, libevent-dev,
#      libhwloc-dev, zlib1g-dev, xz-utils);
#   2. apt-get update (trixie's Sources index only, into WORKDIR/apt);
#   3. apt-get source --download-only openmpi (into WORKDIR/src) and
#      unpacks upstream's tarball (openmpi_5.0.*.orig.tar.xz; Debian's
#      packaging, debian.tar.xz, is not applied);
#   4. configures a VPATH build in WORKDIR/build with --prefix=PREFIX,
#      --with-devel-headers (ompi_config.h and the coll framework's headers,
#      which genx's component compiles against) and only what genx needs:
#      no Fortran bindings, no OpenSHMEM, no ROMIO; PMIx and PRRTE built
#      from the copies inside the tarball; libevent and hwloc from Debian 12
#      (Open MPI's other optional parts follow what configure finds);
#   5. make -j JOBS (the machine's cores by default), make install;
#   6. adds the headers of the threads and timer components that 5.0.7's
#      install leaves out although its opal_config.h names them (without
#      them no coll component compiles against the installation).
# Each step is skipped when its result is already there, so the script can
# be run again after an interruption.
#
# Usage: tests/ompi5/build-ompi5.sh [-w WORKDIR] [-p PREFIX] [-j JOBS] [-n] [-d]
#   -w WORKDIR  where sources, apt lists and the build go (default: $HOME/ompi5)
#   -p PREFIX   installation prefix (default: WORKDIR/install)
#   -j JOBS     parallel make jobs (default: nproc)
#   -n          nice the configure and build (for a busy machine)
#   -d          stop after step 3 (fetch and unpack the source only)
# Environment: OMPI5_WORK, OMPI5_PREFIX, JOBS (the same, as defaults).
# Afterwards: tests/ompi5/run-ompi5.sh -p PREFIX builds genx against it and
# runs the tests.  Needs root or sudo for apt-get (steps 1 to 3) and the
# network (deb.debian.org); about 30 to 60 minutes of build on 2 cores.
set -euo pipefail

work=${OMPI5_WORK:-$HOME/ompi5}
prefix=${OMPI5_PREFIX:-}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
nice=()
fetch_only=0
suite=trixie
mirror=http://deb.debian.org/debian

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
while getopts "w:p:j:ndh" opt; do
    case $opt in
    w) work=$OPTARG ;;
    p) prefix=$OPTARG ;;
    j) jobs=$OPTARG ;;
    n) nice=(nice -n 19) ;;
    d) fetch_only=1 ;;
    h) usage 0 ;;
    *) usage 2 >&2 ;;
    esac
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=${prefix:-$work/install}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

say() { printf 'build-ompi5: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# shellcheck source=tests/openmpi-source.sh
. "$(dirname "$0")/../openmpi-source.sh"

# ------------------------------------------------------------ 1. deps
install_build_deps

# ------------------------- 2.-3. trixie's source package, unpacked
fetch_openmpi_source "$work" "$suite" "$mirror" 5.0
if [ "$fetch_only" = 1 ]; then
    say "Open MPI $version's source is in $srcdir (-d: not building)"
    exit 0
fi

# -------------------------------------------------------- 4. configure
builddir=$work/build-$version
config_args=(--prefix="$prefix" --with-devel-headers
             --disable-mpi-fortran --disable-oshmem --disable-io-romio
             --with-hwloc=external --with-libevent=external
             --with-pmix=internal --with-prrte=internal)
mkdir -p "$builddir"
if [ ! -f "$builddir/Makefile" ]; then
    say "configuring Open MPI $version in $builddir: ${config_args[*]}"
    (cd "$builddir" && "${nice[@]}" "$srcdir/configure" "${config_args[@]}" > configure.out 2>&1) ||
        die "configure failed: see $builddir/configure.out and config.log"
fi

# ---------------------------------------------------- 5. build, install
if [ ! -x "$prefix/bin/ompi_info" ] || [ "$builddir/Makefile" -nt "$prefix/bin/ompi_info" ]; then
    say "building Open MPI $version with $jobs jobs (log: $builddir/make.out)"
    "${nice[@]}" make -C "$builddir" -j "$jobs" > "$builddir/make.out" 2>&1 ||
        die "make failed: see the end of $builddir/make.out"
    say "installing into $prefix"
    make -C "$builddir" install > "$builddir/install.out" 2>&1 ||
        die "make install failed: see $builddir/install.out"
fi

# ---------------------------------------------- 6. complete the headers
# Open MPI 5.0.7's `make install --with-devel-headers` leaves out the
# headers of the components opal_config.h names as implementations
# (MCA_threads_*_HEADER: opal/mca/threads/pthreads/*.h, and
# MCA_timer_IMPLEMENTATION_HEADER: opal/mca/timer/linux/*.h), which
# opal/mca/threads/mutex.h and others include, so no coll component can be
# compiled against the installation.  Copy each missing one's directory of
# headers from the source tree (new files only, nothing is overwritten).
inc=$prefix/include/openmpi
for h in $(sed -n 's/^#define MCA_[A-Za-z_]*_HEADER "\(.*\.h\)"$/\1/p' "$inc/opal_config.h" | sort -u); do
    if [ ! -f "$inc/$h" ] && [ -f "$srcdir/$h" ]; then
        d=$(dirname "$h")
        say "adding $d/*.h to $inc (missing from Open MPI's install)"
        mkdir -p "$inc/$d"
        for f in "$srcdir/$d"/*.h; do
            [ -e "$inc/$d/$(basename "$f")" ] || cp "$f" "$inc/$d/"
        done
    fi
done

found=$("$prefix/bin/ompi_info" --parsable 2>/dev/null | sed -n 's/^ompi:version:full://p')
[ -f "$prefix/include/openmpi/ompi/mca/coll/coll.h" ] ||
    die "$prefix has no ompi/mca/coll/coll.h: was Open MPI configured with --with-devel-headers?"
say "Open MPI $found installed in $prefix (devel headers in $prefix/include/openmpi)"
say "next: tests/ompi5/run-ompi5.sh -p $prefix"
