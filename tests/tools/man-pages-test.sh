#!/usr/bin/env bash
# Every installed tool has a section-1 page (man/NAME.1), every such page is
# installed, and each page's options are exactly those of the tool's --help
# (tests/tools/check-man-options.py, both directions).  Then the checker is
# proven able to fail: for each page, a copy with one documented option
# removed, and a copy documenting an option the tool does not have, must
# both be rejected, naming the option.  Pages must render without groff
# warnings, and genx(7) must point to each of them.
#
# Environment (from make check): GENX_BUILDDIR, GENX_SRCDIR,
# GENX_INSTALLED_TOOLS (bin_PROGRAMS and bin scripts, paths as in
# Makefile.am), GENX_MAN_PAGES (dist_man_MANS and man_MANS),
# GENX_TOOLS_NOT_BUILT (optional tools this configuration does not build,
# genx-sim without SimGrid: their pages are neither installed nor checked).
set -u
builddir=${GENX_BUILDDIR:-$(pwd)}
srcdir=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tools=${GENX_INSTALLED_TOOLS:-}
pages=${GENX_MAN_PAGES:-}
not_built=${GENX_TOOLS_NOT_BUILT:-}
checker="$srcdir/tests/tools/check-man-options.py"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -n "$tools" ] && [ -n "$pages" ] || { echo "FAIL: run from make check (GENX_INSTALLED_TOOLS, GENX_MAN_PAGES)"; exit 1; }
# genx-bench calls MPI_Init before it parses its options: a singleton run.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tool_path NAME: the built program or the source script installed as NAME.
declare -A path
for t in $tools; do
    name=${t##*/}
    if [ -x "$builddir/$t" ]; then path[$name]="$builddir/$t"
    elif [ -x "$srcdir/$t" ]; then path[$name]="$srcdir/$t"
    else bad "$t is installed by make install but not built (run make)"; fi
done

# 1. tools <-> pages <-> dist_man_MANS.
for name in "${!path[@]}"; do
    [ -f "$srcdir/man/$name.1" ] || bad "$name is installed but has no man page man/$name.1"
done
for p in "$srcdir"/man/*.1; do
    [ -e "$p" ] || continue
    name=$(basename "$p" .1)
    case " $not_built " in *" $name "*) echo "note: $name is not built here; man/$name.1 not checked"; continue;; esac
    case " $pages " in *" man/$name.1 "*) ;; *) bad "man/$name.1 is not in dist_man_MANS (not installed)";; esac
    [ -n "${path[$name]:-}" ] || bad "man/$name.1 documents $name, which make install does not install"
done

# 2. Each page against its tool's --help.
checked=0
for name in $(printf '%s\n' "${!path[@]}" | sort); do
    page="$srcdir/man/$name.1"
    [ -f "$page" ] || continue
    if ! timeout 300 python3 "$checker" "$page" "${path[$name]}"; then
        bad "man/$name.1 and $name --help differ (above)"
        continue
    fi
    checked=$((checked + 1))

    # 3. The comparison can fail: drop the last documented option tag, then
    # plant an option the tool does not have; both copies must be rejected.
    python3 - "$page" "$tmp/$name.removed.1" "$tmp/$name.removed" "$tmp/$name.planted.1" <<'PY' || { bad "cannot make fixtures from man/$name.1"; continue; }
import re, sys
src, removed, removed_list, planted = sys.argv[1:]
lines = open(src, encoding="utf-8").read().split("\n")
section, last = "", None
for i, l in enumerate(lines):
    if l.startswith(".SH"):
        section = l[3:].replace('"', "").strip()
    if l.startswith(".TP") and i + 1 < len(lines) and section in ("OPTIONS", "COMMANDS") \
            and re.search(r"\\-\\-[a-z]", lines[i + 1]):
        last = i
assert last is not None, "no option tag found"
tag = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", lines[last + 1]).replace("\\-", "-")
opts = re.findall(r"(?<![\w/.-])(--?[A-Za-z0-9][A-Za-z0-9-]*)", tag.split(None, 1)[1])
open(removed, "w", encoding="utf-8").write("\n".join(lines[:last] + lines[last + 2:]))
open(removed_list, "w").write("\n".join(opts) + "\n")
out = lines[:last] + [".TP", ".B \\-\\-no\\-such\\-option", "Planted."] + lines[last:]
open(planted, "w", encoding="utf-8").write("\n".join(out))
PY
    out=$(python3 "$checker" "$tmp/$name.removed.1" "${path[$name]}" 2>&1); rc=$?
    if [ "$rc" -ne 1 ]; then
        bad "a copy of man/$name.1 without $(tr '\n' ' ' <"$tmp/$name.removed") was accepted (rc $rc): $out"
    else
        while read -r o; do
            grep -q -- "has $o," <<<"$out" || bad "removing $o from man/$name.1: the checker did not name it: $out"
        done <"$tmp/$name.removed"
    fi
    out=$(python3 "$checker" "$tmp/$name.planted.1" "${path[$name]}" 2>&1); rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q -- "documents --no-such-option" <<<"$out"; then
        bad "a copy of man/$name.1 documenting --no-such-option was not rejected (rc $rc): $out"
    fi
done
[ "$checked" -gt 0 ] || bad "no page was checked"

# 4. Every page renders without warnings, and genx(7) points to each one.
if command -v groff >/dev/null 2>&1; then
    for p in $pages; do
        w=$(groff -man -ww -z -Tutf8 "$srcdir/$p" 2>&1)
        [ -z "$w" ] || bad "$p: groff warnings: $w"
    done
else
    echo "note: groff is not installed, pages not rendered"
fi
for p in $pages; do
    base=${p##*/}; name=${base%.*}; sec=${base##*.}
    [ "$name" = genx ] && continue
    grep -q "^\.BR $(sed 's/-/\\\\-/g' <<<"$name") ($sec)" "$srcdir/man/genx.7" ||
        bad "man/genx.7 does not point to $name($sec) (.BR $name ($sec) under SEE ALSO)"
done

[ "$fail" -eq 0 ] && echo "PASS: $checked pages match their tools' --help; removed and planted options are caught"
exit "$fail"
