#!/usr/bin/env bash
# The Debian package, built and installed (debian/README.source).
# Builds the .deb with `make deb` in the build directory (or takes one:
# --deb FILE), runs lintian on it, installs it with apt-get in a root of
# its own, and there checks that ompi_info lists genx, that genx-bench's
# exact validation passes under `mpirun -np 2 --mca coll genx,...` with a
# genx plan forced and with no --mca at all, and that the tools, man pages
# and docs are there; then purges it and checks that the component is gone.
#
# Roots (--root):
#   overlay  (default) a copy-on-write view of this machine's root in a
#            mount namespace of its own: nothing is installed on the machine
#            and no other process sees the package (needs root, unshare,
#            overlayfs)
#   clean    the same over a minimal Debian 12 (debootstrap, kept in the
#            work directory): apt-get must pull in every dependency from the
#            archive, so the package's Depends are proven complete
#   host     this machine itself (a CI machine): installed, then purged
# Options: --deb FILE (test FILE, build nothing), --no-lintian.
# Environment:
#   GENX_DEB_ROOT     the default for --root (make check-deb GENX_DEB_ROOT=clean)
#   GENX_BUILDDIR     the configured build directory `make deb` runs in
#                     (default: build/ of this tree)
#   GENX_DEB_WORK     work directory (default BUILDDIR/packaging)
#   GENX_DEB_MIRROR   Debian mirror for --root clean (http://deb.debian.org/debian)
#   DEB_BUILD_OPTIONS for the package build (default "nocheck": the test
#                     suite is make check's job, not this test's)
# Missing Debian packages it needs (debhelper, dpkg-dev, fakeroot, lintian;
# debootstrap for --root clean) are installed with apt-get.
# Exit: 0 passed, 1 failed, 77 skipped (not root, or the root cannot be made).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srcroot=$(cd "$here/../.." && pwd)
builddir=${GENX_BUILDDIR:-$srcroot/build}
mirror=${GENX_DEB_MIRROR:-http://deb.debian.org/debian}
mode=${GENX_DEB_ROOT:-overlay}
deb=
lintian=1

say() { printf 'test-deb: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }

while [ $# -gt 0 ]; do
    case $1 in
        --root) mode=${2:-}; shift 2 ;;
        --root=*) mode=${1#--root=}; shift ;;
        --deb) deb=${2:-}; shift 2 ;;
        --deb=*) deb=${1#--deb=}; shift ;;
        --no-lintian) lintian=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "usage: $0 [--root overlay|clean|host] [--deb FILE] [--no-lintian]" >&2; exit 2 ;;
    esac
done
case $mode in overlay|clean|host) ;; *) die "--root takes overlay, clean or host, not '$mode'" ;; esac
[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
start=$SECONDS

# deps PACKAGE...: install those not installed yet (as dev.sh does).
deps() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing missing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

tools=(dpkg-dev fakeroot)
[ -n "$deb" ] || tools+=(debhelper)
[ "$lintian" -eq 0 ] || tools+=(lintian)
[ "$mode" != clean ] || tools+=(debootstrap)
deps "${tools[@]}"

if [ -z "$deb" ]; then
    [ -f "$builddir/Makefile" ] || die "no configured build directory $builddir (set GENX_BUILDDIR, or pass --deb FILE)"
    builddir=$(cd "$builddir" && pwd)
    say "building the package (make deb in $builddir)"
    export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS-nocheck}
    log=$builddir/deb-build.log
    make -C "$builddir" deb > "$log" 2>&1 || { tail -n 40 "$log" >&2; die "make deb failed (log: $log)"; }
    deb=$(sed -n 's/^make deb: built \(.*\/genx_[^/]*\.deb\)$/\1/p' "$log" | head -n 1)
    [ -f "$deb" ] || die "make deb named no genx_*.deb (log: $log)"
    say "built $deb in $((SECONDS - start)) s"
fi
[ -f "$deb" ] || die "no such package: $deb"
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
if [ -d "$builddir" ]; then work=${GENX_DEB_WORK:-$builddir/packaging}; else work=${GENX_DEB_WORK:-$(dirname "$deb")/packaging}; fi
mkdir -p "$work" && work=$(cd "$work" && pwd)

if [ "$lintian" -eq 1 ]; then
    # Errors and warnings fail (debian/genx.lintian-overrides holds those
    # accepted, each with its reason); infos and pedantic tags are shown.
    say "lintian $(basename "$deb")"
    lintian --info --display-info --fail-on error,warning "$deb" >&2 || die "lintian reports errors or warnings"
fi

# The checks run inside the root, as root, with the package at /genx-test/.
cat > "$work/inside.sh" <<'INSIDE'
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
deb=$1 update=$2
say() { printf 'test-deb: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
# quietly: apt-get's and dpkg's output is shown only when they fail.
apt() { local out; out=$(apt-get -q -o Dpkg::Use-Pty=0 "$@" 2>&1) || { echo "$out" >&2; return 1; }; }
[ "$update" = no ] || apt update || die "apt-get update failed"
before=$(dpkg-query -W | wc -l)
apt install -y --no-install-recommends "$deb" || die "apt-get install $deb failed"
say "installed $(dpkg-query -W -f='${Package} ${Version}' genx) and $(($(dpkg-query -W | wc -l) - before - 1)) packages it needs with apt-get"
dir=$(ompi_info --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
[ -f "$dir/mca_coll_genx.so" ] || die "mca_coll_genx.so is not in Open MPI's component directory $dir"
line=$(ompi_info | grep genx) || die "ompi_info does not list genx"
say "ompi_info: $(echo $line)"
# An exact allreduce (genx-bench -c: every element of every call compared)
# with genx named and its ring forced, then with no --mca at all (installed,
# genx is on by default); its verbose lines show that genx decided.
for args in "--mca coll genx,tuned,libnbc,basic,self --mca coll_genx_allreduce_algorithm ring" ""; do
    # shellcheck disable=SC2086 # args are words
    out=$(timeout 120 mpirun -np 2 $args --mca coll_genx_verbose 1 \
          genx-bench -c -T int,double -m 4:256K --size-factor 16 -i 5 -x 1 2>&1) ||
        { echo "$out" >&2; die "mpirun -np 2 ${args:-(no --mca)} genx-bench -c failed"; }
    echo "$out" | grep -q 'genx: allreduce' || { echo "$out" >&2; die "genx made no decision under ${args:-no --mca}"; }
    [ -z "$args" ] || echo "$out" | grep -q 'ring (.*forced' || { echo "$out" >&2; die "genx did not run its ring"; }
    sizes=$(echo "$out" | grep -c '^[0-9]') pass=$(echo "$out" | grep -c '^[0-9].* Pass$')
    [ "$sizes" -ge 8 ] && [ "$pass" -eq "$sizes" ] || { echo "$out" >&2; die "genx-bench: $pass of $sizes sizes passed"; }
    say "mpirun -np 2 ${args:-(no --mca)} genx-bench -c: $pass sizes and types exact"
done
for t in genx-plan genx-tune genx-topo genx-sim genx-bench genx-cluster; do
    timeout 60 "$t" --help > /dev/null 2>&1 || die "$t --help failed"
    [ -f "/usr/share/man/man1/$t.1.gz" ] || die "no man page for $t"
done
genx-plan --algorithm ring --ranks 7 --check | grep -q '^ok:' || die "genx-plan --check failed"
for f in /usr/share/man/man7/genx.7.gz /usr/share/man/man5/genx-rules.5.gz /usr/share/doc/genx/README.md \
         /usr/share/doc/genx/rules.md /usr/share/doc/genx/example-model.json /usr/share/doc/genx/copyright; do
    [ -f "$f" ] || die "$f is missing"
done
say "tools, man pages and docs are there"
apt purge -y genx || die "apt-get purge genx failed"
[ ! -e "$dir/mca_coll_genx.so" ] || die "mca_coll_genx.so is still there after purge"
! ompi_info | grep -q genx || die "ompi_info still lists genx after purge"
! dpkg-query -W genx > /dev/null 2>&1 || die "genx is still known to dpkg after purge"
say "purged: the component and the tools are gone"
INSIDE

run=$(mktemp -d "$work/run.XXXXXX")
installed_on_host=0
cleanup() {
    local rc=$?
    if [ "$installed_on_host" -eq 1 ] && dpkg-query -W -f='${Status}' genx 2>/dev/null | grep -q installed; then
        say "purging genx from this machine"
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q genx >&2 || rc=1
    fi
    rm -rf "$run"
    exit "$rc"
}
trap cleanup EXIT

# lower: the root the overlay copies on write (/, or the debootstrapped
# Debian 12 for --root clean, made once and kept pristine under WORK).
case $mode in
    host)
        ! dpkg-query -W -f='${Status}' genx 2>/dev/null | grep -q installed ||
            die "genx is installed on this machine already: purge it first, or use --root overlay"
        cp "$deb" "$run/"
        installed_on_host=1
        say "installing on this machine"
        bash "$work/inside.sh" "$run/$(basename "$deb")" no
        ;;
    overlay|clean)
        command -v unshare > /dev/null || skip "unshare (util-linux) not found"
        grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlayfs in this kernel"
        lower=/ update=no
        if [ "$mode" = clean ]; then
            lower=$work/bookworm
            if [ ! -x "$lower/usr/bin/apt-get" ]; then
                say "debootstrap a minimal Debian 12 into $lower ($mirror)"
                rm -rf "$lower"
                debootstrap --variant=minbase bookworm "$lower.tmp" "$mirror" > "$work/debootstrap.log" 2>&1 ||
                    { tail -n 20 "$work/debootstrap.log" >&2; rm -rf "$lower.tmp"; die "debootstrap failed (log: $work/debootstrap.log)"; }
                mv "$lower.tmp" "$lower"
            fi
            update=yes
        fi
        mkdir -p "$run/upper" "$run/ovl" "$run/root"
        say "installing in a throwaway root over ${lower}"
        # The new mount namespace's mounts vanish with it; nothing is
        # mounted on the machine.
        # shellcheck disable=SC2016 # expanded by the inner bash
        unshare --mount --propagation private bash -euo pipefail -c '
            run=$1 lower=$2 deb=$3 inside=$4 update=$5
            mount -t overlay overlay -o "lowerdir=$lower,upperdir=$run/upper,workdir=$run/ovl" "$run/root"
            r=$run/root
            mount -t proc proc "$r/proc"
            mount --rbind /sys "$r/sys"
            mount --rbind /dev "$r/dev"
            mount -t tmpfs tmpfs "$r/dev/shm"
            mount -t tmpfs tmpfs "$r/tmp"
            mount -t tmpfs tmpfs "$r/run"
            # The clean root resolves names as this machine does (its
            # resolv.conf replaced, not written through if it is a link).
            [ "$lower" = / ] || cp -L --remove-destination /etc/resolv.conf "$r/etc/resolv.conf"
            mkdir -p "$r/genx-test"
            cp "$deb" "$inside" "$r/genx-test/"
            exec chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb bash /genx-test/inside.sh \
                "/genx-test/$(basename "$deb")" "$update"
        ' unshare "$run" "$lower" "$deb" "$work/inside.sh" "$update"
        ;;
esac
say "PASS ($mode root) in $((SECONDS - start)) s"
