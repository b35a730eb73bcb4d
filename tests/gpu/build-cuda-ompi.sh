#!/usr/bin/env bash
# build-cuda-ompi.sh: a CUDA-aware Open MPI 4.1 in a private prefix, built on
# Debian 12 from Debian 12's own source package, for testing genx's
# device-resident path (tests/gpu/README.md).
#
# Debian 12's openmpi packages are built without CUDA support
# (MPIX_Query_cuda_support() returns 0), so on them genx stages device
# buffers through host memory and its device-resident path, taken when the
# Open MPI underneath is CUDA-aware, is never run.  This script builds the
# same release, Open MPI 4.1.4, from bookworm's source package with
# --with-cuda.  Open MPI 4.1 needs only the toolkit's cuda.h to build; it
# dlopens the driver's libcuda.so.1 at run time, and where there is none (a
# machine without a GPU) it runs as before.  The steps:
#   1. installs the build dependencies it needs from Debian 12 (apt-get,
#      only those missing: a C compiler, make, perl, pkg-config,
#      libevent-dev, libhwloc-dev, zlib1g-dev, xz-utils);
#   2. apt-get update of bookworm's Sources index alone, without touching
#      the system's apt configuration: a deb-src entry in a sources file of
#      its own, with its own package lists and cache, read by apt-get
#      through -o Dir::Etc::sourcelist / Dir::Etc::sourceparts /
#      Dir::State::Lists / Dir::Cache (in WORKDIR/apt);
#   3. apt-get source --download-only openmpi (into WORKDIR/src) and
#      unpacks upstream's tarball (openmpi_4.1.*.orig.tar.xz; Debian's
#      patches, debian.tar.xz, concern packaging and other architectures
#      and are not applied);
#   4. configures a VPATH build in WORKDIR/build-VERSION with
#      --prefix=PREFIX --with-cuda=CUDA_DIR, --with-devel-headers
#      (ompi_config.h and the coll framework's headers, which genx's
#      component compiles against) and only what genx needs: no Fortran
#      bindings, no OpenSHMEM, no ROMIO; hwloc and libevent from Debian 12
#      (--with-hwloc=external --with-libevent=external, as Debian's own
#      build), PMIx from the tarball (--with-pmix=internal, PMIx 3.2, built
#      into the installation: unlike Debian's build, which links Debian's
#      libpmix2, the result does not depend on the PMIx of the machine it
#      runs on, e.g. a GPU node of another distribution with PMIx 5).  No
#      network transports that could take over from ob1 and smcuda, the
#      CUDA-aware path on one node, or that bring libraries of their own
#      (--without-ucx --without-ofi --without-verbs --without-psm
#      --without-psm2): a UCX built without CUDA would take device
#      pointers for host memory;
#   5. make -j JOBS, make install;
#   6. checks that ompi_info says mpi_built_with_cuda_support:value:true.
# Each step is skipped when its result is already there, so the script can
# be run again after an interruption.
#
# Usage: tests/gpu/build-cuda-ompi.sh [-w WORKDIR] [-p PREFIX] [-c CUDA_DIR]
#                                     [-j JOBS] [-n] [-d]
#   -w WORKDIR   where sources, apt lists and the build go
#                (default: $HOME/ompi-cuda)
#   -p PREFIX    installation prefix (default: /opt/genx-ompi-cuda; build
#                it at the path it will have on the GPU node, Open MPI is
#                not relocated without OPAL_PREFIX)
#   -c CUDA_DIR  the CUDA toolkit, where include/cuda.h is
#                (default: /usr/local/cuda)
#   -j JOBS      parallel make jobs (default: nproc)
#   -n           nice the configure and build (for a busy machine)
#   -d           stop after step 3 (fetch and unpack the source only)
# Environment: OMPI_CUDA_WORK, OMPI_CUDA_PREFIX, CUDA_DIR, JOBS (the same,
# as defaults).
# Afterwards: ./configure --with-ompi=PREFIX --with-cuda=CUDA_DIR builds genx
# against it.  Needs root or sudo for apt-get (steps 1 to 3) and for a
# PREFIX that is not writable, and the network (deb.debian.org); no GPU.
# About 6 minutes of build on 2 cores.
set -euo pipefail

work=${OMPI_CUDA_WORK:-$HOME/ompi-cuda}
prefix=${OMPI_CUDA_PREFIX:-/opt/genx-ompi-cuda}
cuda=${CUDA_DIR:-/usr/local/cuda}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
nice=()
fetch_only=0
suite=bookworm
mirror=http://deb.debian.org/debian

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
while getopts "w:p:c:j:ndh" opt; do
    case $opt in
    w) work=$OPTARG ;;
    p) prefix=$OPTARG ;;
    c) cuda=$OPTARG ;;
    j) jobs=$OPTARG ;;
    n) nice=(nice -n 19) ;;
    d) fetch_only=1 ;;
    h) usage 0 ;;
    *) usage 2 >&2 ;;
    esac
done
mkdir -p "$work"
work=$(cd "$work" && pwd)

say() { printf 'build-cuda-ompi: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# shellcheck source=tests/openmpi-source.sh
. "$(dirname "$0")/../openmpi-source.sh"

# ------------------------------------------------------------ 1. deps
install_build_deps

# ------------------------- 2.-3. bookworm's source package, unpacked
fetch_openmpi_source "$work" "$suite" "$mirror" 4.1
if [ "$fetch_only" = 1 ]; then
    say "Open MPI $version's source is in $srcdir (-d: not building)"
    exit 0
fi

# -------------------------------------------------------- 4. configure
[ -f "$cuda/include/cuda.h" ] || die "no CUDA toolkit in $cuda ($cuda/include/cuda.h is missing; -c CUDA_DIR)"
cuda=$(cd "$cuda" && pwd)
cuda_version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h" | head -n 1)
builddir=$work/build-$version
config_args=(--prefix="$prefix" --with-devel-headers --with-cuda="$cuda"
             --disable-mpi-fortran --disable-oshmem --disable-io-romio
             --with-hwloc=external --with-libevent=external --with-pmix=internal
             --without-ucx --without-ofi --without-verbs --without-psm --without-psm2)
mkdir -p "$builddir"
if [ ! -f "$builddir/Makefile" ]; then
    say "configuring Open MPI $version (CUDA ${cuda_version:-?} in $cuda) in $builddir: ${config_args[*]}"
    (cd "$builddir" && "${nice[@]}" "$srcdir/configure" "${config_args[@]}" > configure.out 2>&1) ||
        die "configure failed: see $builddir/configure.out and config.log"
fi
grep -q '^#define OPAL_CUDA_SUPPORT 1' "$builddir/opal/include/opal_config.h" ||
    die "configure did not enable CUDA support (OPAL_CUDA_SUPPORT in $builddir/opal/include/opal_config.h)"

# ---------------------------------------------------- 5. build, install
if [ ! -x "$prefix/bin/ompi_info" ] || [ "$builddir/Makefile" -nt "$prefix/bin/ompi_info" ]; then
    say "building Open MPI $version with $jobs jobs (log: $builddir/make.out)"
    "${nice[@]}" make -C "$builddir" -j "$jobs" > "$builddir/make.out" 2>&1 ||
        die "make failed: see the end of $builddir/make.out"
    say "installing into $prefix"
    inst=()
    mkdir -p "$prefix" 2>/dev/null && [ -w "$prefix" ] || inst=("${sudo[@]}")
    "${inst[@]}" mkdir -p "$prefix"
    "${inst[@]}" make -C "$builddir" install > "$builddir/install.out" 2>&1 ||
        die "make install failed: see $builddir/install.out"
fi

# ------------------------------------------------------------- 6. check
found=$("$prefix/bin/ompi_info" --parsable 2>/dev/null | sed -n 's/^ompi:version:full://p')
[ -f "$prefix/include/openmpi/ompi/mca/coll/coll.h" ] ||
    die "$prefix has no ompi/mca/coll/coll.h: was Open MPI configured with --with-devel-headers?"
"$prefix/bin/ompi_info" --parsable --all 2>/dev/null |
    grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true$' ||
    die "$prefix/bin/ompi_info does not say mpi_built_with_cuda_support:value:true"
say "CUDA-aware Open MPI $found installed in $prefix (devel headers in $prefix/include/openmpi)"
say "next: configure genx with --with-ompi=$prefix --with-cuda=$cuda"
