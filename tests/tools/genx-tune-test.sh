#!/usr/bin/env bash
# genx-tune end to end on local ranks (make check runs this), with a small
# budget and grid so it stays short:
#   - a 3-rank run writes a rules file, a CSV and an SVG, prints the fit and
#     its held-out error, and the rules file passes --check-rules;
#   - its --export-tuned file is accepted by Open MPI's tuned: with the file
#     every MPI_Allreduce succeeds, and with the last rule's algorithm
#     replaced by an invalid id (99) exactly the sizes at and above that
#     rule's threshold fail with MPI_ERR_ARG, so tuned really parsed it and
#     applies its thresholds (tuned discards bad files silently: notes §1.1);
#   - --check-rules reports a broken file with file, line and field;
#   - --print-defaults prints a file --check-rules accepts;
#   - --verify times the displaced component (fallback) at every point, and
#     warns and does not where genx's own component is loaded.
#
# Environment: GENX_BUILDDIR (default .), GENX_MPIRUN (default: PATH).
# Exit: 0 passed, 1 failed, 77 skipped (no mpirun).
set -u

builddir=${GENX_BUILDDIR:-.}
mpirun=${GENX_MPIRUN:-$(command -v mpirun || true)}
if [ -z "$mpirun" ] || ! [ -x "$mpirun" ]; then
    echo "SKIP: mpirun not found"
    exit 77
fi
builddir=$(cd "$builddir" && pwd)
tune=$builddir/genx-tune
if ! [ -x "$tune" ]; then
    echo "FAIL: $tune is missing: run make first"
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# genx must not take allreduce in the probes: tuned is what is checked.
run() { timeout 300 "$mpirun" --oversubscribe --mca coll '^genx' "$@"; }

if ! run -np 3 "$tune" --max-time 40 -o tune.json --comm-sizes all --export-tuned tuned.rules \
        --max-bytes 64K --p2p-max 64K --reduce-bytes 256K --reduce-max-k 6 \
        --cps-bytes 16K,64K --target 0.05 --verify --ompi-algorithms all >tune.out 2>tune.err; then
    cat tune.out tune.err
    echo "FAIL: genx-tune run"
    exit 1
fi
for f in tune.json tune.csv tune.svg tuned.rules; do
    [ -s "$f" ] || fail "genx-tune did not write $f"
done
grep -q '^held-out points: [1-9]' tune.out || fail "no held-out error printed"
grep -q 'genx-tune .* p2p-intra' tune.err || fail "no progress on stderr"
grep -q '^reduce,reduce k=6,' tune.csv || fail "CSV lacks the reduce benchmark"
grep -q '^cps,cps P=3,' tune.csv || fail "CSV lacks the cps benchmark at 3 ranks"
grep -q '^shift,shift P=3,shift,x=3,3,4096,' tune.csv || fail "CSV lacks the shift benchmark at 3 ranks"
# One node: the shift benchmark identifies the intra class's alpha_shift.
grep -q '^  no data for:.*alpha_shift_intra' tune.out && fail "alpha_shift_intra not identified: $(grep 'no data' tune.out)"
grep -q '<svg' tune.svg || fail "SVG is not an SVG"
# --verify measures, at every size, the plan kept at the size before: each
# verified decision interval's first point lists the previous interval's
# plan among those it measured.
python3 - tune.out <<'PY' || fail "a verified point did not measure the plan kept before it"
import re, sys
prev, bad, checked = {}, 0, 0
for line in open(sys.argv[1]):
    m = re.match(r"\s+comm_size (\d+)\s+nodes \d+\s+ppn \d+\s+bytes \S+\s+(.*?)\s+\[at \S+: (.*)\]$", line)
    if not m:
        continue
    size, plan, note = m.groups()
    if size in prev and note.startswith("verified:"):
        checked += 1
        items = note[len("verified: "):].split(" measured", 1)[0]  # the paired tests' notes follow
        measured = [x.replace(" (no time left)", "").rsplit(" ", 2)[0] if "(no time left)" not in x else x.replace(" (no time left)", "") for x in items.split(" vs ")]
        # An Open MPI algorithm kept ("fallback base=NAME") is measured as
        # "ompi NAME".
        kept = prev[size]
        if kept.startswith("fallback base="):
            kept = "ompi " + kept[len("fallback base="):]
        if kept not in measured:
            print("comm_size %s: %r kept before, not measured at: %s" % (size, prev[size], note))
            bad += 1
    prev[size] = plan
print("verified intervals checked: %d" % checked)
sys.exit(1 if bad or checked == 0 else 0)
PY
# --verify also measures, at every point, the fastest genx plan measured at
# the point before, kept or not, and it leads the point: the first plan
# listed (the CSV has every verify measurement in the point's order; a
# plan the budget left untimed has an empty measured_s).
python3 - tune.csv <<'PY' || fail "a verified point did not measure the fastest genx plan of the point before"
import csv, sys
points = {}  # ranks -> bytes -> {(algorithm, params): seconds}
for r in csv.DictReader(open(sys.argv[1])):
    if r["kind"] == "verify" and r["algorithm"] != "fallback":
        points.setdefault(r["ranks"], {}).setdefault(int(r["bytes"]), {})[(r["algorithm"], r["params"])] = float(r["measured_s"] or 0)
bad = checked = 0
for ranks, by in points.items():
    sizes = sorted(by)
    for a, b in zip(sizes, sizes[1:]):
        timed = {k: v for k, v in by[a].items() if v > 0}
        if not timed:
            continue
        fastest = min(timed, key=timed.get)
        checked += 1
        if fastest not in by[b]:
            print("P=%s: %s %s fastest at %d B, not measured at %d B (measured: %s)"
                  % (ranks, fastest[0], fastest[1], a, b, sorted(by[b])))
            bad += 1
        elif next(iter(by[b])) != fastest:
            print("P=%s: %s %s fastest at %d B does not lead %d B (first: %s)"
                  % (ranks, fastest[0], fastest[1], a, b, next(iter(by[b]))))
            bad += 1
print("consecutive verified points checked: %d" % checked)
sys.exit(1 if bad or checked == 0 else 0)
PY
# --verify also times MPI_Allreduce itself (the displaced component) and
# Open MPI's own algorithms ("ompi NAME") at every point; a genx plan keeps
# a point only if it measured --verify-margin (5 %) faster than the
# displaced component on the median and in every one of at least 5 paired
# batches (the note's "PLAN faster than fallback in 5 of 5 batches: kept
# PLAN"), a decision defers ("fallback") only where no genx plan did
# (none faster on the median, or the note counts a slower batch or fewer
# than 5), and names an Open MPI algorithm ("fallback base=NAME") only
# where that one was the fastest of them (or, kept at the size before,
# within the margin of it) and the margin faster than the displaced
# component and the plan kept, on the medians and in every batch.
python3 - tune.out <<'PY' || fail "a verified decision and its measurements disagree about the fallback"
import re, sys
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
margin = 0.05  # genx-tune's --verify-margin default
bad = checked = deferred = based = unresolved = 0
clause_re = re.compile(r"(.+?) faster than fallback in (\d+) of (\d+) batches(?: \(\d+ needed\))?"
                       r"(?:, than (.+?) in (\d+) of (\d+))?: kept (.+)$")
for line in open(sys.argv[1]):
    m = re.match(r"\s+comm_size (\d+)\s+nodes \d+\s+ppn \d+\s+bytes \S+\s+(.*?)\s+\[at (\S+): verified: (.*?) measured((?:; .*)?)\]$", line)
    if not m:
        continue
    size, plan, at, items, tail = m.groups()
    # The paired tests' notes: who -> (faster, pairs, [(faster, pairs) against the plan kept], kept).
    paired = {}
    for c in tail.split("; ")[1:]:
        cm = clause_re.match(c)
        if not cm:
            print("P=%s at %s: unreadable paired note %r" % (size, at, c)); bad += 1
            continue
        who, w, n, _, w2, n2, kept = cm.groups()
        paired[who] = (int(w), int(n), [(int(w2), int(n2))] if w2 else [], kept)
    def resolved(who):
        # Every paired batch faster, at least 5 of them (tune/paired.hpp;
        # --verify runs at most 5 batches, so no slower one is allowed).
        w, n, more, _ = paired[who]
        return n >= 5 and w == n and all(b >= 5 and a == b for a, b in more)
    t = {}
    for x in items.split(" vs "):
        if x.endswith("(no time left)") or x.endswith("(not timed)"):
            continue
        name, value, u = x.rsplit(" ", 2)
        t[name] = float(value) * unit[u]
    if "fallback (no time left)" in items:
        continue  # the budget ran out before the displaced component's turn
    checked += 1
    ompi = {k[5:]: v for k, v in t.items() if k.startswith("ompi ")}
    genx = [v for k, v in t.items() if k != "fallback" and not k.startswith("ompi ")]
    if "fallback" not in t:
        print("P=%s at %s: the displaced component was not measured: %s" % (size, at, items)); bad += 1
        continue
    if len(ompi) != 5 and "(not timed)" not in items:
        print("P=%s at %s: Open MPI's five algorithms were not measured: %s" % (size, at, items)); bad += 1
    f = t["fallback"]
    best_ompi = min(ompi.values()) if ompi else None
    ompi_paired = [k for k in paired if k.startswith("ompi ")]
    # An Open MPI algorithm faster on the medians but not in every batch.
    ompi_unresolved = any(not resolved(k) and paired[k][3] != "fallback base=" + k[5:] for k in ompi_paired)
    unresolved += sum(1 for k in paired if not resolved(k))
    if plan.startswith("fallback base="):
        based += 1
        name = plan[len("fallback base="):]
        # The fastest of them, or the one kept at the size before if it is
        # within the margin of the fastest.
        if name not in ompi or ompi[name] * (1 - margin) > best_ompi * 1.01 or ompi[name] > f * (1 - margin) * 1.01:
            print("P=%s at %s: chose Open MPI's %s, not the fastest of them (within the margin) or not %g%% faster than the displaced component: %s" % (size, at, name, 100 * margin, items)); bad += 1
        if "ompi " + name not in paired or not resolved("ompi " + name) or paired["ompi " + name][3] != plan:
            print("P=%s at %s: chose Open MPI's %s, not faster in every paired batch: %s" % (size, at, name, line.strip())); bad += 1
    elif plan == "fallback":
        deferred += 1
        genx_unresolved = any(not resolved(k) and paired[k][3] == "fallback" for k in paired if not k.startswith("ompi "))
        if (not genx or not f * (1 - margin) <= min(genx) * 1.01) and not genx_unresolved:
            print("P=%s at %s: deferred, but a genx plan measured faster: %s" % (size, at, line.strip())); bad += 1
        if best_ompi is not None and best_ompi * 1.01 < f * (1 - margin) and not ompi_unresolved:
            print("P=%s at %s: deferred, but an Open MPI algorithm measured %g%% faster: %s" % (size, at, 100 * margin, line.strip())); bad += 1
    elif plan not in t or t[plan] > f * (1 - margin) * 1.01:
        print("P=%s at %s: kept %s, not %g%% faster than the displaced component: %s" % (size, at, plan, 100 * margin, items)); bad += 1
    elif plan not in paired or not resolved(plan) or paired[plan][3] != plan:
        print("P=%s at %s: kept %s, not faster than the displaced component in every paired batch: %s" % (size, at, plan, line.strip())); bad += 1
    elif best_ompi is not None and best_ompi * 1.01 < min(t[plan], f) * (1 - margin) and not ompi_unresolved:
        print("P=%s at %s: kept %s, but an Open MPI algorithm measured %g%% faster: %s" % (size, at, plan, 100 * margin, line.strip())); bad += 1
print("verified decisions checked: %d (%d deferred, %d to an Open MPI algorithm, %d faster on a median but not in every batch)" % (checked, deferred, based, unresolved))
sys.exit(1 if bad or checked == 0 else 0)
PY
"$tune" --check-rules tune.json >check.out 2>&1 || { cat check.out; fail "--check-rules rejects genx-tune's own file"; }
# Shapes nothing was measured on: rules without comm_size cover every size
# once, in order; at verified sizes a "model" rule with a "scale" lists
# only families measured at a verified grid point in its range or the
# displaced component's own (tuned's ring, rd, rhd, rb), each with a scale
# and the displaced component's too; one without lists only families with
# a plan measured --verify-margin faster than the displaced component (on
# the median; the paired batches are stricter) there (tune/rest_rules.hpp),
# and a "fallback" rule sits only where points were verified.  The CSV has
# every verify measurement.
python3 - tune.json tune.csv <<'PY' || fail "the rules for unmeasured shapes do not follow the measurements"
import csv, json, re, sys
mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
def nbytes(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    return int(m.group(1)) * mult[m.group(2)]
rules = [r for r in json.load(open(sys.argv[1]))["allreduce"] if "comm_size" not in r]
fb, plans = {}, {}  # (ranks, bytes) -> displaced seconds; -> [(algorithm, seconds)]
for r in csv.DictReader(open(sys.argv[2])):
    if r["kind"] != "verify" or not r["measured_s"]:
        continue
    key = (r["ranks"], int(r["bytes"]))
    if r["algorithm"] == "fallback":
        if r["params"] == "":
            fb[key] = float(r["measured_s"])
    else:
        plans.setdefault(key, []).append((r["algorithm"], float(r["measured_s"])))
bad, lo, checked = 0, 0, 0
if not rules:
    print("no rule for unmeasured shapes"); sys.exit(1)
for r in rules:
    a, _, b = r["bytes"].partition("-")
    a, b = nbytes(a), (None if b == "inf" else nbytes(b))
    if a != lo:
        print("rule %s starts at %d, not where the one before ended (%d)" % (r["bytes"], a, lo)); bad += 1
    lo = b
    inside = [k for k in fb if k[1] >= a and (b is None or k[1] < b)]
    fams = [f for f in r.get("families", []) if f != "fallback"]
    if r["algorithm"] == "fallback" and not inside:
        print("rule %s defers but no point in it was verified" % r["bytes"]); bad += 1
    if r["algorithm"] == "model" and inside:
        checked += 1
        scale = r.get("scale", {})
        if scale:
            if "fallback" not in scale:
                print("rule %s scales its families but not the displaced component" % r["bytes"]); bad += 1
            for f in fams:
                measured = any(alg == f for k in inside for alg, _ in plans.get(k, []))
                if f not in scale or not (measured or f in ("ring", "rd", "rhd", "rb")):
                    print("rule %s offers %s, unscaled or never measured there" % (r["bytes"], f)); bad += 1
            continue
        for f in fams:
            if not any(alg == f and s <= fb[k] * 0.95 * 1.01 for k in inside for alg, s in plans.get(k, [])):
                print("rule %s offers %s, never measured 5 %% faster than the displaced component there" % (r["bytes"], f)); bad += 1
if lo is not None:
    print("the last rule for unmeasured shapes ends at %d, not inf" % lo); bad += 1
print("rules for unmeasured shapes: %d, %d over verified sizes checked" % (len(rules), checked))
sys.exit(1 if bad else 0)
PY
# Explicit decisions for comm sizes 2 and 3, then the model for the rest.
grep -q '"comm_size":"2"' tune.json || fail "no rule for 2 ranks"
grep -q '"comm_size":"3"' tune.json || fail "no rule for 3 ranks"

# tuned accepts the export...
if ! run -np 3 --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_dynamic_rules_filename "$work/tuned.rules" \
        "$tune" --probe-allreduce --max-bytes 64K >probe.out 2>&1; then
    cat probe.out
    fail "MPI_Allreduce failed with the exported tuned rules"
fi
# ...and applies it: poison the last rule of the last section (3 ranks).
last=$(grep -nE '^[0-9]+ [0-9]+ 0 0' tuned.rules | tail -n 1)
line=${last%%:*}
threshold=$(echo "${last#*:}" | awk '{print $1}')
sed -E "${line}s/^([0-9]+) [0-9]+ 0 0/\\1 99 0 0/" tuned.rules >poison.rules
run -np 3 --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_dynamic_rules_filename "$work/poison.rules" \
    "$tune" --probe-allreduce --max-bytes 64K >poison.out 2>&1
while read -r _ bytes _ _ rc _; do
    if [ "$bytes" -ge "$threshold" ]; then
        [ "$rc" = 13 ] || fail "poisoned rule (>= $threshold B) not applied at $bytes B: rc $rc"
    else
        [ "$rc" = 0 ] || fail "poisoned rule (>= $threshold B) applied below it at $bytes B: rc $rc"
    fi
done < <(grep '^allreduce' poison.out)
grep -q '^allreduce' poison.out || { cat poison.out; fail "probe printed nothing"; }

# Errors name file, line and field.
sed 's/"bytes":"0-/"bytes":"x-/' tune.json >broken.json
if "$tune" --check-rules broken.json >broken.out 2>&1; then
    fail "--check-rules accepted a broken byte range"
fi
grep -qE '^broken.json:[0-9]+: allreduce\[[0-9]+\]\.bytes: ' broken.out || { cat broken.out; fail "error does not name file:line: field"; }

"$tune" --print-defaults >defaults.json || fail "--print-defaults"
"$tune" --check-rules defaults.json >/dev/null 2>&1 || fail "the built-in defaults do not pass --check-rules"

# With genx's component loaded, MPI_Allreduce is genx: --verify cannot time
# the displaced component, says so, and never decides "fallback".
ompi_info=$(dirname "$mpirun")/ompi_info
dso=$builddir/.libs/mca_coll_genx.so
if [ -x "$ompi_info" ] && [ -f "$dso" ]; then
    ompi_dir=$("$ompi_info" --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
    timeout 300 "$mpirun" --oversubscribe --mca mca_base_component_path "$builddir/.libs:$ompi_dir" \
        -np 2 "$tune" -o loaded.json --max-time 20 --max-bytes 256 --p2p-max 1K --reduce-bytes 4K \
        --reduce-max-k 2 --cps-bytes 1K --target 0.02 --verify >loaded.out 2>loaded.err ||
        { cat loaded.out loaded.err; fail "genx-tune with genx loaded"; }
    grep -q "genx's component is loaded in this job" loaded.err ||
        fail "no warning that MPI_Allreduce times genx itself: $(cat loaded.err)"
    grep -q '"algorithm":"fallback"' loaded.json && fail "a fallback decision measured on genx itself"
    grep -q 'vs fallback' loaded.out && fail "the displaced component was timed with genx loaded"
else
    echo "note: $dso or ompi_info missing: genx-loaded check skipped"
fi

if [ "$failed" = 0 ]; then
    echo "PASS: genx-tune (fit, rules file, CSV, SVG, tuned export accepted and applied)"
    sed -n '/^fitted GenModel/,/^held-out points/p' tune.out
fi
exit "$failed"
