#!/usr/bin/env python3
"""Sorts sanitizer and valgrind reports into genx's and everybody else's.

    check-reports.py [--srcdir DIR] asan     LOG...   AddressSanitizer / LeakSanitizer /
                                       UndefinedBehaviorSanitizer text logs
    check-reports.py [--srcdir DIR] valgrind LOG...   valgrind memcheck text logs

A report (one ASan error, one leak record, one UBSan runtime error, one
valgrind error or loss record) is genx's when any frame of any of its stacks
(where it happened, where the memory was allocated or freed), or the source
location UBSan names, is genx code:
  - the object is mca_coll_genx.so or one of genx's programs (genx-unit,
    genx-plan, genx-tune);
  - the function is genx's: the C glue's genx_* and mca_coll_genx_*, the
    core's genx:: namespace and its C API (genx_core_*);
  - the source file lies in one of genx's source directories (common/, plan/,
    runtime/, tuning/, genx/, ompi_coll_genx/, tools/), named relative to a build
    directory (../runtime/executor.cpp) or absolute under --srcdir (default:
    the source tree this script is in).
Every genx report is printed in full; the others (Open MPI, PMIx, hwloc,
libc...) are only counted, by kind.

Exit status: 0 no genx report, 1 at least one genx report (or, for valgrind,
a log that does not end with valgrind's ERROR SUMMARY, i.e. a rank that did
not finish under valgrind), 2 usage error or no log to read.
"""
import re
import sys

import os

GENX_OBJECT = re.compile(r'mca_coll_genx\.so|/genx-(unit|plan|tune)\b')
GENX_FUNCTION = re.compile(r'(^|[^A-Za-z0-9_])(genx::|genx_|mca_coll_genx)')
GENX_DIRS = r'(common|plan|runtime|tuning|genx|ompi_coll_genx|tools)/[^/\s:()]+\.(c|cc|cpp|cxx|h|hpp):\d+'
# Relative to a build directory of genx (what the compiler was given in a
# VPATH build: ../plan/ring.cpp), or absolute under genx's source tree.  A
# path with another directory before these names (Open MPI's
# ompi/runtime/ompi_mpi_init.c) is not genx's.
GENX_SOURCE_REL = re.compile(r'(^|[\s(])(\./|\.\./)*' + GENX_DIRS)
GENX_SOURCE_ABS = None


def set_srcdir(srcdir):
    global GENX_SOURCE_ABS
    GENX_SOURCE_ABS = re.compile(re.escape(os.path.realpath(srcdir)) + '/' + GENX_DIRS)


def is_genx(line):
    return bool(GENX_OBJECT.search(line) or GENX_FUNCTION.search(line)
                or GENX_SOURCE_REL.search(line)
                or (GENX_SOURCE_ABS is not None and GENX_SOURCE_ABS.search(line)))


class Report:
    def __init__(self, path, kind, first_line):
        self.path = path
        self.kind = kind
        self.lines = [first_line]
        self.genx = False

    def add(self, line):
        self.lines.append(line)

    def text(self):
        return '\n'.join(self.lines)


# ------------------------------------------------------------------ ASan
ASAN_ERROR = re.compile(r'^==\d+==\s*ERROR: (AddressSanitizer|LeakSanitizer): ([\w-]+)')
ASAN_LEAK = re.compile(r'^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\)')
UBSAN = re.compile(r'^(\S+:\d+(:\d+)?): runtime error: (.*)')
FRAME = re.compile(r'^\s*#\d+ 0x[0-9a-f]+')
ASAN_END = re.compile(r'^(SUMMARY: |==\d+==ABORTING)')


SUPPRESSED = re.compile(r'^\s+(\d+)\s+(\d+)\s+(\S+)$')


def parse_asan(path, lines, suppressed):
    """Returns the reports of one log.  A leak report of LeakSanitizer holds
    one record per leaked allocation site; each record is a report here.
    Adds the leak records LeakSanitizer suppressed (its "Suppressions used"
    table, printed with print_suppressions=1) to suppressed, by pattern."""
    reports = []
    cur = None
    in_table = False
    for raw in lines:
        line = raw.rstrip('\n')
        if line.startswith('Suppressions used:'):
            in_table, cur = True, None
            continue
        if in_table:
            m = SUPPRESSED.match(line)
            if m:
                suppressed[m.group(3)] = suppressed.get(m.group(3), 0) + int(m.group(1))
                continue
            if 'count' in line and 'template' in line:
                continue
            in_table = False
        m = ASAN_ERROR.match(line)
        if m:
            cur = None
            if m.group(2) != 'detected':  # "detected memory leaks": records follow
                cur = Report(path, m.group(1) + ' ' + m.group(2), line)
                reports.append(cur)
            continue
        m = ASAN_LEAK.match(line)
        if m:
            cur = Report(path, m.group(1).lower() + ' leak', line)
            cur.bytes = int(m.group(2))
            reports.append(cur)
            continue
        m = UBSAN.match(line)
        if m:
            cur = Report(path, 'UndefinedBehaviorSanitizer: ' + re.sub(r'[-0-9]+', 'N', m.group(3))[:60], line)
            cur.genx = is_genx(m.group(1) + ' ')
            reports.append(cur)
            continue
        if cur is None:
            continue
        if ASAN_END.match(line):
            cur.add(line)
            if line.startswith('SUMMARY: ') and 'UndefinedBehaviorSanitizer' in line:
                cur.genx = cur.genx or is_genx(line)
            cur = None
            continue
        cur.add(line)
        if FRAME.match(line) and is_genx(line):
            cur.genx = True
    return reports


# -------------------------------------------------------------- valgrind
VG_PREFIX = re.compile(r'^==(\d+)== ?(.*)$')
VG_FRAME = re.compile(r'^\s+(at|by) 0x[0-9A-Fa-f]+: ')
VG_LOSS = re.compile(r'^([\d,]+) (\([\d,]+ direct, [\d,]+ indirect\) )?bytes in [\d,]+ blocks are (definitely|indirectly|possibly) lost')


def valgrind_kind(msg):
    m = VG_LOSS.match(msg)
    if m:
        return m.group(3) + ' lost'
    for pat, kind in ((r'^Invalid read', 'invalid read'), (r'^Invalid write', 'invalid write'),
                      (r'^Invalid free', 'invalid free'), (r'^Mismatched free', 'mismatched free'),
                      (r'^Conditional jump or move depends on uninitialised', 'uninitialised condition'),
                      (r'^Use of uninitialised value', 'uninitialised value'),
                      (r'^Syscall param .* uninitialised', 'uninitialised syscall param'),
                      (r'^Syscall param .* unaddressable', 'unaddressable syscall param'),
                      (r'^Source and destination overlap', 'overlapping copy'),
                      (r'^Argument .* of function .* has a fishy', 'fishy argument'),
                      (r'^Invalid', 'invalid access')):
        if re.match(pat, msg):
            return kind
    return None


def parse_valgrind(path, lines):
    """Returns (reports, complete): an error is a message line of a known
    kind and the indented stacks under it, up to the next blank line."""
    reports = []
    cur = None
    complete = False
    header = False
    for raw in lines:
        m = VG_PREFIX.match(raw.rstrip('\n'))
        if not m:
            continue
        msg = m.group(2)
        if 'Memcheck, a memory error detector' in msg:
            header = True
        if msg.startswith('ERROR SUMMARY:'):
            complete = True
        if msg.strip() == '':
            cur = None
            continue
        if cur is not None and (msg.startswith(' ') or msg.startswith('\t')):
            cur.add(raw.rstrip('\n'))
            if VG_FRAME.match(msg) and is_genx(msg):
                cur.genx = True
            continue
        if cur is not None and re.match(r'^(Address|Block|Uninitialised value was created)', msg):
            # the second part of an error: where the block came from
            cur.add(raw.rstrip('\n'))
            continue
        kind = valgrind_kind(msg)
        cur = None
        if kind:
            cur = Report(path, kind, raw.rstrip('\n'))
            reports.append(cur)
    return reports, header and complete


def main(argv):
    srcdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    if len(argv) >= 3 and argv[1] == '--srcdir':
        srcdir = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] not in ('asan', 'valgrind'):
        sys.stderr.write('usage: check-reports.py [--srcdir DIR] {asan|valgrind} LOG...\n')
        return 2
    set_srcdir(srcdir)
    mode, paths = argv[1], argv[2:]
    genx, others, incomplete, suppressed = [], {}, [], {}
    for path in paths:
        try:
            with open(path, errors='replace') as f:
                lines = f.readlines()
        except OSError as e:
            sys.stderr.write('check-reports: cannot read %s: %s\n' % (path, e))
            return 2
        if mode == 'asan':
            reports = parse_asan(path, lines, suppressed)
        else:
            reports, complete = parse_valgrind(path, lines)
            if not complete:
                incomplete.append(path)
        for r in reports:
            if r.genx:
                genx.append(r)
            else:
                others[r.kind] = others.get(r.kind, 0) + 1
    for r in genx:
        print('GENX REPORT (%s) in %s:' % (r.kind, r.path))
        for line in r.lines:
            print('    | ' + line)
    for path in incomplete:
        print('INCOMPLETE: %s has no valgrind ERROR SUMMARY (the process did not finish under valgrind)' % path)
    if suppressed:
        print('suppressed leak records (lsan.supp): ' +
              ', '.join('%s %d' % (k, n) for k, n in sorted(suppressed.items())))
    nothers = sum(others.values())
    detail = ', '.join('%d %s' % (n, k) for k, n in sorted(others.items()))
    print('%s: %d log(s), %d report(s) in genx code, %d elsewhere (not genx)%s'
          % (mode, len(paths), len(genx), nothers, ': ' + detail if detail else ''))
    return 1 if genx or incomplete else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
