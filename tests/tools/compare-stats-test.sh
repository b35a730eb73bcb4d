#!/bin/sh
# bench/compare's statistics on synthetic rounds.
#
# The held-out "best other configuration" (held_out_ratios):
# on synthetic rounds where genx-tuned and nine Open MPI configurations are
# drawn from one distribution, the best-of-nine taken on the same rounds
# reads genx several percent slow (selection bias) and the held-out ratio
# reads parity; where genx-tuned is 20 % slower, the held-out ratio says
# so.  A held-out choice that peeked at the compared round, a ratio taken
# upside down, or rounds paired out of order breaks one of the checks.
#
# The median's confidence interval (median_interval) and the paired tables'
# verdicts: the order statistics the sign test gives, a coverage of at
# least 90 % on simulated noise, "missed" where a configuration is 20 %
# slower than the reference and almost never where it is not.
#
# The oracle (oracle_analysis): parity where every configuration shares one
# distribution; a forced plan 20 % faster is chosen at every size and
# genx-site reads 1.25, missed; the subject and the A/A control are never
# candidates; with Open MPI's configurations only it is held_out_best.
#
# Reading a running job's output (written): complete and in order while
# the job writes.
set -u
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
python3 - "$src/bench/compare" <<'PY'
import importlib.machinery, importlib.util, math, random, statistics, sys

loader = importlib.machinery.SourceFileLoader("compare", sys.argv[1])
spec = importlib.util.spec_from_loader("compare", loader)
compare = importlib.util.module_from_spec(spec)
loader.exec_module(compare)

ROUNDS, SIZES = 7, [8 << i for i in range(80)]
BASE = ["ompi-default", "han"] + ["tuned-%d" % i for i in range(7)]
configs = ([compare.Config("genx-tuned", "ompi", (), "genx"),
            compare.Config("ompi-default-again", "ompi", (), "control")]
           + [compare.Config(n, "ompi", (), "baseline") for n in BASE])
failures = []


def check(what, ok, value):
    print("%s: %s (%.3f)" % ("PASS" if ok else "FAIL", what, value))
    if not ok:
        failures.append(what)


def runs(genx_factor, seed, noise=0.1):
    rng = random.Random(seed)
    res = {c.name: [] for c in configs}
    for r in range(ROUNDS):
        # A round-wide drift shared by every configuration (what pairing by
        # round cancels), and each run's own noise.
        drift = {s: rng.lognormvariate(0, 0.2) for s in SIZES}
        for c in configs:
            f = genx_factor if c.name == "genx-tuned" else 1.0
            res[c.name].append({"rc": 0, "rows": {str(s): 100.0 * s ** 0.1 * f * drift[s] *
                                                  rng.lognormvariate(0, noise) for s in SIZES}})
    return res


def geomean_heldout(res, subject):
    t = compare.held_out_ratios(configs, res, SIZES)
    return math.exp(statistics.mean(math.log(statistics.median(t[(subject, s)][0])) for s in SIZES))


def geomean_naive(res, subject):
    def med(n, s):
        return statistics.median(r["rows"][str(s)] for r in res[n])
    return math.exp(statistics.mean(math.log(med(subject, s) / min(med(b, s) for b in BASE))
                                    for s in SIZES))


for seed in (1, 2, 3):
    same = runs(1.0, seed)
    check("seed %d, one distribution: best-of-9 on the same rounds is biased slow" % seed,
          geomean_naive(same, "genx-tuned") > 1.03, geomean_naive(same, "genx-tuned"))
    for subject in ("genx-tuned", "ompi-default-again"):
        g = geomean_heldout(same, subject)
        check("seed %d, one distribution: held-out %s reads parity" % (seed, subject),
              0.98 < g < 1.02, g)
    slow = runs(1.2, seed)
    g = geomean_heldout(slow, "genx-tuned")
    check("seed %d, genx 20 %% slower: held-out reads it" % seed, 1.15 < g < 1.25, g)
    g = geomean_heldout(slow, "ompi-default-again")
    check("seed %d, genx 20 %% slower: the control still reads parity" % seed, 0.98 < g < 1.02, g)

# The sign-test interval for the median: order statistics.
xs = [float(i) for i in range(1, 21)]
for n, want in ((4, None), (5, (1.0, 5.0)), (7, (1.0, 7.0)), (8, (2.0, 7.0)), (9, (2.0, 8.0)), (20, (6.0, 15.0))):
    got = compare.median_interval(list(reversed(xs[:n])))
    check("median_interval of %d values is %s (got %s)" % (n, want, got), got == want, float(n))
rng = random.Random(7)
for n in (5, 7, 8, 9, 15):
    hits = 0
    for _ in range(4000):
        lo, hi = compare.median_interval([rng.lognormvariate(0, 0.3) for _ in range(n)])
        hits += lo <= 1.0 <= hi
    check("median_interval of %d values covers the true median >= 90 %% of the time" % n,
          hits / 4000 >= 0.89, hits / 4000)
for ci, bar, want in (((0.9, 1.04), 1.05, "met"), ((1.06, 1.3), 1.05, "**missed**"),
                      ((0.95, 1.10), 1.05, "not resolved"), (None, 1.05, "too few rounds")):
    check("verdict(%s, %.2f) is %s" % (ci, bar, want), compare.verdict(ci, bar) == want, bar)


def verdicts(md, subject):
    """The verdict column of one paired table in the markdown."""
    sect = md.split("### %s / " % subject, 1)[1].split("###", 1)[0]
    return [line.split("|")[6].strip() for line in sect.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() not in ("size", "---:")]


# 2 % noise per run: 20 % is resolved in 7 rounds.
res = runs(1.2, 8, noise=0.02)
paired = compare.paired_ratios(configs, res, SIZES, reference="ompi-default")
v = verdicts(paired, "genx-tuned")
check("genx 20 %% slower than the reference: missed at every size (%d of %d)"
      % (v.count("**missed**"), len(SIZES)), v.count("**missed**") == len(SIZES), len(v))
# The A/A at 10 % noise: most intervals reach above 1.05, almost none lie
# wholly above it (a verdict read from the wrong end says "missed" at most
# sizes).
v = verdicts(compare.paired_ratios(configs, runs(1.0, 9), SIZES), "ompi-default-again")
check("A/A at 10 %% noise: missed at no more than 2 of %d sizes (%d)" % (len(SIZES), v.count("**missed**")),
      len(v) == len(SIZES) and v.count("**missed**") <= 2, len(v))
other = compare.paired_ratios(configs, res, SIZES, reference="tuned-3")
check("--paired-against another configuration: a table for every other one",
      all("### %s / tuned-3, paired" % c.name in other for c in configs if c.name != "tuned-3"),
      float(len(configs)))
check("--paired-against a configuration not in the run: no table",
      compare.paired_ratios(configs, res, SIZES, reference="mpich") == "", 0.0)

# The table names the subjects, the chosen configurations and a geomean.
md = compare.held_out_best(configs, runs(1.0, 4), SIZES)
for needle in ("genx-tuned: median", "ompi-default-again: median", "Geometric mean"):
    check("the table has %r" % needle, needle in md, 1.0)
# Fewer than 3 rounds: nothing to hold out, no table.
two = {n: v[:2] for n, v in runs(1.0, 5).items()}
check("2 rounds: no table", compare.held_out_best(configs, two, SIZES) == "", 0.0)
# The oracle (oracle_analysis): the fastest of every other configuration,
# genx's forced plans and Open MPI's alike, chosen on held-out rounds.
OCONF = ([compare.Config("genx-site", "ompi", (), "genx"),
          compare.Config("ompi-default-again", "ompi", (), "control")]
         + [compare.Config("genx-" + n, "ompi", (), "genx", forced=n) for n in ("ring", "rd", "rhd")]
         + [compare.Config(n, "ompi", (), "baseline") for n in BASE])


def oracle_runs(seed, site=1.0, fast=None, noise=0.1, rounds=ROUNDS):
    """Rounds where every configuration shares one distribution, but genx-site
    runs `site` times it and `fast` (NAME, FACTOR) that configuration FACTOR times."""
    rng = random.Random(seed)
    res = {c.name: [] for c in OCONF}
    for r in range(rounds):
        drift = {s: rng.lognormvariate(0, 0.2) for s in SIZES}
        for c in OCONF:
            f = site if c.name == "genx-site" else (fast[1] if fast and c.name == fast[0] else 1.0)
            res[c.name].append({"rc": 0, "rows": {str(s): 100.0 * f * drift[s] * rng.lognormvariate(0, noise)
                                                  for s in SIZES}})
    return res


for seed in (1, 2):
    a = compare.oracle_analysis(OCONF, oracle_runs(seed), SIZES, "genx-site")
    check("seed %d, one distribution: the oracle held out reads parity over 11 candidates" % seed,
          0.97 < a["geomean"] < 1.03, a["geomean"])
    chosen = set(b for r in a["sizes"] for b in r["oracle"])
    check("seed %d: neither genx-site itself nor the A/A control is ever the oracle" % seed,
          not chosen & {"genx-site", "ompi-default-again"}, float(len(chosen)))
    check("seed %d: genx's forced plans and Open MPI's both serve as the oracle" % seed,
          any(b.startswith("genx-") for b in chosen) and any(b in BASE for b in chosen), float(len(chosen)))
# A forced genx plan 20 % faster than everything: it is the oracle at every
# size, and genx-site at parity with the rest reads 1/0.8 and is resolved
# above 1.10 everywhere (2 % noise); missed and verdicts agree.
a = compare.oracle_analysis(OCONF, oracle_runs(3, fast=("genx-rd", 0.8), noise=0.02), SIZES, "genx-site")
check("a plan 20 % faster is the oracle in every round of every size",
      all(r["oracle"] == {"genx-rd": ROUNDS} for r in a["sizes"]), float(len(a["sizes"])))
check("against it, genx-site reads 1.25", 1.22 < a["geomean"] < 1.28, a["geomean"])
check("... missed (resolved above 1.10) at every size",
      a["missed"] == SIZES and all(r["verdict"] == "missed" for r in a["sizes"]), float(len(a["missed"])))
a = compare.oracle_analysis(OCONF, oracle_runs(4, site=0.8, noise=0.02), SIZES, "genx-site", bar=1.10)
check("genx-site 20 % faster than all: met at every size, nothing missed or unresolved",
      not a["missed"] and not a["not_resolved"] and a["geomean"] < 0.85, a["geomean"])
md = compare.oracle_section(a)
for needle in ("### Against the oracle: genx-site", "| vs 1.10 |", "Geometric mean of the median ratios over %d sizes"
               % len(SIZES), "Resolved above 1.10 (missed): none"):
    check("the oracle section has %r" % needle, needle in md, 1.0)
# The held-out choice is the one held_out_best makes: with only Open MPI's
# configurations as candidates, the oracle's ratios are its table's.
res = oracle_runs(5)
base_only = [c for c in OCONF if c.family != "genx" or c.name == "genx-site"]
a = compare.oracle_analysis(base_only, res, SIZES, "genx-site")
t = compare.held_out_ratios(base_only, res, SIZES)
check("with Open MPI's configurations only, the oracle is held_out_best's best",
      all(abs(r["median"] - statistics.median(t[("genx-site", r["size"])][0])) < 1e-12 for r in a["sizes"]),
      float(len(a["sizes"])))
a = compare.oracle_analysis(OCONF, oracle_runs(6, rounds=2), SIZES, "genx-site")
check("2 rounds: no oracle, and the section says why",
      a["geomean"] is None and "No oracle" in compare.oracle_section(a), 0.0)
# Reading a job's output while it runs (written): a job printing 2,000
# lines, read back after every poll, loses none and garbles none.  Reading
# it with seek(0) and read() moved the offset the job shares, so its next
# line overwrote the start of the file (half the lines lost here).
import subprocess, tempfile
job = "import time\nfor i in range(2000):\n    print('line %05d' % i, flush=True)\n    time.sleep(0.0005)"
with tempfile.TemporaryFile() as out:
    proc = subprocess.Popen([sys.executable, "-c", job], stdout=out)
    polls = 0
    while proc.poll() is None:
        compare.written(out)
        polls += 1
    text = compare.written(out)
check("a running job's output read %d times while it writes is complete and in order" % polls,
      text.splitlines() == ["line %05d" % i for i in range(2000)], float(len(text.splitlines())))
print("%s: %d failure(s)" % ("FAIL" if failures else "PASS", len(failures)))
sys.exit(1 if failures else 0)
PY
