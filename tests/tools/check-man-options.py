#!/usr/bin/env python3
"""Compare a tool's man page with its --help, in both directions.

    check-man-options.py PAGE TOOL [LAUNCHER...]

PAGE is a section-1 roff page (man/NAME.1); TOOL the program or script
(run as LAUNCHER... TOOL --help when a launcher is given).  The options the
page documents are the tags (.TP) of its OPTIONS and GLOBAL OPTIONS
sections; a tool with subcommands (argparse's {a,b,...} in its usage line)
documents each one as ".SS NAME" under COMMANDS, with that subcommand's
options as the tags below it.  From --help, the options are the first
column of each option line ("  -a,--algorithm TEXT", "  -m, --message-size
SIZE", "      --busbw", "  --rate RATE").

Fails (exit 1), naming each difference, when an option --help prints is
missing from the page, when the page documents an option --help does not
know, or when the subcommands differ.  For a subcommand, the options the
page documents globally (--name, -h/--help) need not be repeated.
Exit 2: the tool's --help could not be read.
"""
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w/.-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")


def run_help(cmd):
    try:
        r = subprocess.run(cmd + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("check-man-options: cannot run %s --help: %s" % (" ".join(cmd), e))
        sys.exit(2)
    if r.returncode != 0:
        print("check-man-options: %s --help exited %d:\n%s" % (" ".join(cmd), r.returncode, r.stdout))
        sys.exit(2)
    return r.stdout


def help_options(text):
    """Options named in the first column of --help's option lines."""
    found = set()
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if not body.startswith("-") or indent > 8:
            continue
        first = re.split(r"\s{2,}", body, maxsplit=1)[0]
        for piece in re.split(r"[,\s]+", first):
            m = OPT.fullmatch(piece)
            if m:
                found.add(m.group(1))
    return found


def subcommands(text):
    """argparse's {a,b,...} in the usage block (up to the first blank line)."""
    usage = text.strip().split("\n\n", 1)[0]
    if not usage.lower().startswith("usage"):
        return []
    m = re.search(r"\{([A-Za-z0-9_,-]+)\}", usage)
    return m.group(1).split(",") if m else []


def roff_text(line):
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)
    line = line.replace("\\-", "-").replace("\\(mu", "x").replace("\\&", "").replace('"', " ")
    return line


def page_options(path):
    """{scope: set of options}; scope None = the command itself."""
    scopes = {}
    scope = False           # False: not an options section
    section = ""
    tag_next = False
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if line.startswith(".SH"):
            section = roff_text(line[3:]).strip().upper()
            scope = None if section in ("OPTIONS", "GLOBAL OPTIONS") else False
            if scope is None:
                scopes.setdefault(None, set())
            tag_next = False
            continue
        if line.startswith(".SS") and section == "COMMANDS":
            scope = roff_text(line[3:]).split()[0]
            scopes.setdefault(scope, set())
            tag_next = False
            continue
        if line.startswith(".TP"):
            tag_next = True
            continue
        if tag_next:
            tag_next = False
            if scope is False:
                continue
            text = roff_text(line)
            if text.startswith("."):
                text = text.split(None, 1)[1] if " " in text else ""
            scopes[scope].update(OPT.findall(text))
    return scopes


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check-man-options.py PAGE TOOL [LAUNCHER...]")
    page, tool, launcher = sys.argv[1], sys.argv[2], sys.argv[3:]
    cmd = launcher + [tool]
    main_help = run_help(cmd)
    want = {None: help_options(main_help)}
    for sub in subcommands(main_help):
        want[sub] = help_options(run_help(cmd + [sub]))
    if len(want[None]) < 2:
        print("check-man-options: %s --help lists no options:\n%s" % (tool, main_help))
        sys.exit(2)
    have = page_options(page)
    errors = []
    if None not in have:
        errors.append("%s has no OPTIONS section" % page)
    glob = have.get(None, set())
    for scope in sorted(set(want) | set(have), key=lambda s: (s is not None, s or "")):
        where = "%s %s" % (tool.rsplit("/", 1)[-1], scope) if scope else tool.rsplit("/", 1)[-1]
        if scope not in want:
            errors.append("%s documents a subcommand '%s' that --help does not list" % (page, scope))
            continue
        if scope not in have:
            errors.append("%s does not document the subcommand '%s' (.SS %s under COMMANDS)"
                          % (page, scope, scope))
            continue
        w, h = want[scope], have[scope]
        if scope is not None:
            w = w - glob
            h = h - glob
        for o in sorted(w - h):
            errors.append("%s --help has %s, %s does not document it" % (where, o, page))
        for o in sorted(h - w):
            errors.append("%s documents %s, which %s --help does not know" % (page, o, where))
    for e in errors:
        print("FAIL: " + e)
    if errors:
        sys.exit(1)
    n = sum(len(v) for v in want.values())
    print("ok: %s matches %s --help (%d options%s)" % (
        page, tool.rsplit("/", 1)[-1], n,
        ", subcommands " + ",".join(s for s in want if s) if len(want) > 1 else ""))


if __name__ == "__main__":
    main()
