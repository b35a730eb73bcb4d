# shellcheck shell=bash
# Sourced by tests/ompi5/build-ompi5.sh, tests/gpu/build-cuda-ompi.sh and
# tests/peer/run-peer.sh: the Debian 12 build dependencies of an Open MPI
# build, and a source package (Open MPI's, MPICH's) fetched from a Debian
# suite's deb-src index without touching the system's apt configuration.
# The caller defines say() and die() and the array sudo (empty for root,
# (sudo) otherwise).

# install_build_deps: installs what is missing of a C/C++ toolchain and the
# libraries both builds take from Debian 12 (libevent, hwloc, zlib).
install_build_deps() {
    local packages=(gcc g++ make perl pkg-config libevent-dev libhwloc-dev zlib1g-dev xz-utils
                    ca-certificates)
    local missing=() p
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing Debian 12 packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        "${sudo[@]}" apt-get update -q
        "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
}

# fetch_debian_source WORK SUITE MIRROR PACKAGE PATTERN: downloads the
# source package PACKAGE from SUITE's deb-src index into WORK/src, unless a
# .dsc matching PATTERN (a glob, e.g. 'openmpi_4.1.*.dsc') is already
# there, and sets `dsc` to the newest such file.  The index is kept in
# WORK/apt, apart from the system's (its own sources file, no
# sources.list.d, its own lists and cache).  Leaves the caller in WORK/src.
fetch_debian_source() {
    local work=$1 suite=$2 mirror=$3 package=$4 pattern=$5
    local aptdir=$work/apt
    mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$work/src"
    echo "deb-src $mirror $suite main" > "$aptdir/sources.list"
    local apt_opts=(-o "Dir::Etc::sourcelist=$aptdir/sources.list" -o "Dir::Etc::sourceparts=-"
                    -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache"
                    -o "APT::Get::List-Cleanup=0")
    cd "$work/src" || die "cannot enter $work/src"
    # shellcheck disable=SC2086 # PATTERN is a glob
    dsc=$(ls $pattern 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$dsc" ]; then
        say "fetching Debian $suite's source index ($mirror) into $aptdir"
        "${sudo[@]}" apt-get "${apt_opts[@]}" update -q
        say "apt-get source --download-only $package ($suite) into $work/src"
        "${sudo[@]}" apt-get "${apt_opts[@]}" source --download-only "$package"
        # shellcheck disable=SC2086
        dsc=$(ls $pattern 2>/dev/null | sort -V | tail -n 1 || true)
        [ -n "$dsc" ] || die "$suite's $package source package does not match $pattern ($(ls "$package"_*.dsc 2>/dev/null))"
    fi
}

# fetch_openmpi_source WORK SUITE MIRROR SERIES: the newest openmpi
# source package of SERIES (4.1, 5.0) in SUITE's deb-src index, downloaded
# to WORK/src (fetch_debian_source) and its upstream tarball unpacked
# there; sets `version` and `srcdir`.  Nothing is fetched when the package
# is already there.
fetch_openmpi_source() {
    local work=$1 suite=$2 mirror=$3 series=$4 orig dsc
    fetch_debian_source "$work" "$suite" "$mirror" openmpi "openmpi_$series.*.dsc"
    version=$(sed -n 's/^Version: \([0-9.]*\)-.*/\1/p' "$dsc")
    [ -n "$version" ] || die "$dsc names no version"
    orig=openmpi_$version.orig.tar.xz
    srcdir=$work/src/openmpi-$version
    [ -f "$orig" ] || die "$orig is missing next to $dsc"
    if [ ! -x "$srcdir/configure" ]; then
        say "unpacking $orig"
        tar -xJf "$orig"
    fi
    [ -x "$srcdir/configure" ] || die "$orig did not unpack to $srcdir"
}
