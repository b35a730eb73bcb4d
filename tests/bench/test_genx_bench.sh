#!/usr/bin/env bash
# genx-bench prints OSU 7.4 osu_allreduce's table byte for byte, takes OSU's
# options, and its validation catches a wrong element.
set -u
builddir=${GENX_BUILDDIR:-$(pwd)}
bench="$builddir/bench/genx-bench"
mpirun=${GENX_MPIRUN:-mpirun}
mpicc=${GENX_MPICC:-mpicc}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$bench" ] || skip "genx-bench is not built ($bench)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (used to check the format)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { timeout 120 "$mpirun" -np 2 --oversubscribe --bind-to none --mca coll ^genx "$@"; }

# --size-factor: the sizes step by F from MIN, none above MAX.
sizes=$(run "$bench" -m 8:5000 --size-factor 8 -i 2 -x 1 2>&1 | awk '/^[0-9]/ {print $1}' | tr '\n' ' ')
[ "$sizes" = "8 64 512 4096 " ] || fail "--size-factor 8 on 8:5000 gave sizes '$sizes', want 8 64 512 4096"
run "$bench" --size-factor 1 >"$tmp/sf.out" 2>&1 && fail "--size-factor 1 was accepted"
grep -q "bad --size-factor '1'" "$tmp/sf.out" || fail "--size-factor 1: no clear error: $(cat "$tmp/sf.out")"
echo "ok: --size-factor"

# expect_format FILE TYPES SIZES COLUMNS: every line is what OSU's printf
# formats would produce from the values in it.
expect_format() {
    python3 - "$@" <<'EOF' || exit 1
import sys
path, types, sizes, cols = sys.argv[1], sys.argv[2].split(","), [int(s) for s in sys.argv[3].split(",")], sys.argv[4]
lines = open(path).read().split("\n")
assert lines[-1] == "", "output does not end with a newline"
lines = lines[:-1]
want = ["", "# OSU MPI Allreduce Latency Test v7.4"]
head = "%-10s%18s" % ("# Size", "Avg Latency(us)")
if "f" in cols:
    head += "%18s%18s%12s" % ("Min Latency(us)", "Max Latency(us)", "Iterations")
if "c" in cols:
    head += "%18s" % "Validation"
i = 0
def bad(msg):
    print("FAIL: line %d %r: %s" % (i + 1, lines[i] if i < len(lines) else None, msg)); sys.exit(1)
for w in want:
    if i >= len(lines) or lines[i] != w: bad("expected %r" % w)
    i += 1
for t in types:
    for w in ("# Datatype: %s." % t, head):
        if i >= len(lines) or lines[i] != w: bad("expected %r" % w)
        i += 1
    for s in sizes:
        if i >= len(lines): bad("missing row for size %d" % s)
        f = lines[i].split()
        try:
            line = "%-10d%18.2f" % (int(f[0]), float(f[1]))
            k = 2
            if "f" in cols:
                line += "%18.2f%18.2f%12d" % (float(f[2]), float(f[3]), int(f[4])); k = 5
            if "c" in cols:
                line += "%18s" % f[k]; k += 1
        except (ValueError, IndexError):
            bad("not a data row")
        if int(f[0]) != s: bad("size %s where %d was due" % (f[0], s))
        if line != lines[i] or k != len(f): bad("differs from OSU's format %r" % line)
        i += 1
if i != len(lines): bad("unexpected extra line")
EOF
}

# 1. Defaults: MPI_CHAR, sizes doubling from 1; exactly OSU's two columns.
run "$bench" -m 16 -i 5 -x 1 > "$tmp/default.out" 2> "$tmp/err" || fail "default run failed: $(cat "$tmp/err")"
expect_format "$tmp/default.out" MPI_CHAR 1,2,4,8,16 ""
echo "ok: default output is OSU's: header lines, '%-10d%18.2f' rows for 1..16 B"

# 2. -f -c with two types, each its own table; a 4 B int/float is one element.
run "$bench" -m 2:64 -i 5 -x 1 -f -c -T float,mpi_int > "$tmp/full.out" 2> "$tmp/err" || fail "-f -c run failed: $(cat "$tmp/err")"
expect_format "$tmp/full.out" MPI_FLOAT,MPI_INT 4,8,16,32,64 fc
grep -q " Fail$" "$tmp/full.out" && fail "validation failed on a correct MPI"
echo "ok: -f -c -T float,mpi_int: Min/Max/Iterations/Validation columns, one table per type, all Pass"
awk 'NR>4 && !/^#/ && $5 != 5 {exit 1}' "$tmp/full.out" || fail "-i 5 not honoured in the Iterations column"
echo "ok: -i 5 shows as 5 iterations"

# 3. -T all, in place, validated: every type passes; double needs 8 B.
run "$bench" -m 4:32 -i 3 -x 1 -c -l -T all > "$tmp/all.out" 2> "$tmp/err" || fail "-T all -l -c failed: $(cat "$tmp/err")"
[ "$(grep -c '^# Datatype' "$tmp/all.out")" -eq 4 ] || fail "-T all did not print four tables"
[ "$(grep -c ' Pass$' "$tmp/all.out")" -eq 15 ] || fail "-T all -l -c: expected 15 passing rows, got: $(cat "$tmp/all.out")"
grep -A2 'MPI_DOUBLE' "$tmp/all.out" | tail -n 1 | grep -q '^8 ' || fail "MPI_DOUBLE's first row is not 8 B"
echo "ok: -T all -l -c: char, int, float, double in place all pass; double starts at 8 B"

# 4. Extra columns only on request.
run "$bench" -m 1K:1K -i 3 -x 1 --busbw --link-rate 200M > "$tmp/extra.out" 2> "$tmp/err" || fail "--busbw failed: $(cat "$tmp/err")"
grep -q "Busbw(MB/s)" "$tmp/extra.out" && grep -q "Frac of bound" "$tmp/extra.out" || fail "extra columns missing"
[ "$(awk '/^1024 /{print NF}' "$tmp/extra.out")" -eq 5 ] || fail "extra row does not have 5 fields"
echo "ok: --busbw --link-rate add their columns (and only then)"

# 5. --max-time caps the iterations of a slow size.
run "$bench" -m 1M:1M -f --max-time 0.001 > "$tmp/cap.out" 2> "$tmp/err" || fail "--max-time failed: $(cat "$tmp/err")"
its=$(awk '/^1048576 /{print $5}' "$tmp/cap.out")
[ -n "$its" ] && [ "$its" -ge 1 ] && [ "$its" -lt 100 ] || fail "--max-time 0.001 ran $its iterations of 1 MiB"
echo "ok: --max-time 0.001 ran $its timed iterations of 1 MiB instead of 100"
#    A slow first call (a component's one-time set-up: genx builds its
#    decision table at a communicator's first allreduce) is not priced: a
#    PMPI shim sleeping 1.5 s in the first MPI_Allreduce must not cut the
#    size to one timed iteration under --max-time 1 (a second, so that on a
#    loaded machine, at tens of ms per call, the count stays well above 5).
cat > "$tmp/slowfirst.c" <<'EOF'
#include <mpi.h>
#include <unistd.h>
static int calls;
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    if (calls++ == 0)
        usleep(1500000);
    return PMPI_Allreduce(s, r, n, t, op, c);
}
EOF
"$mpicc" -shared -fPIC -o "$tmp/libslowfirst.so" "$tmp/slowfirst.c" || skip "cannot build the PMPI shim with $mpicc"
run -x LD_PRELOAD="$tmp/libslowfirst.so" "$bench" -m 8:8 -f --max-time 1 > "$tmp/slow.out" 2> "$tmp/err" ||
    fail "--max-time with a slow first call failed: $(cat "$tmp/err")"
its=$(awk '/^8 /{print $5}' "$tmp/slow.out")
# Priced with it, the size would get one timed call (1.5 s > 1 s).
[ -n "$its" ] && [ "$its" -ge 5 ] ||
    fail "a slow first call cut 8 B to $its timed iterations under --max-time 1: $(cat "$tmp/slow.out")"
echo "ok: a slow first call is not priced ($its timed iterations of 8 B)"

# 6. Bad options are refused with a message and exit status 1.
if run "$bench" -T quad > "$tmp/bad.out" 2>&1; then fail "-T quad accepted"; fi
grep -q "unknown type 'quad'" "$tmp/bad.out" || fail "no message for -T quad: $(cat "$tmp/bad.out")"
if run "$bench" -m 64:8 > "$tmp/bad.out" 2>&1; then fail "-m 64:8 accepted"; fi
echo "ok: bad -T and -m are refused"

# 7. Validation catches one wrong element: a PMPI shim corrupts the last
#    element of rank 0's int results.
cat > "$tmp/corrupt.c" <<'EOF'
#include <mpi.h>
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    int rc = PMPI_Allreduce(s, r, n, t, op, c), rank;
    PMPI_Comm_rank(c, &rank);
    if (rank == 0 && t == MPI_INT && n > 1)
        ((int *) r)[n - 1] += 1;
    return rc;
}
EOF
"$mpicc" -shared -fPIC -o "$tmp/libcorrupt.so" "$tmp/corrupt.c" || skip "cannot build the corrupting PMPI shim with $mpicc"
if run -x LD_PRELOAD="$tmp/libcorrupt.so" "$bench" -m 64:64 -i 2 -x 0 -c -T int > "$tmp/corrupt.out" 2> "$tmp/corrupt.err"; then
    fail "a corrupted result passed validation (exit 0): $(cat "$tmp/corrupt.out")"
fi
grep -Eq '^64 +[0-9.]+ +Fail$' "$tmp/corrupt.out" || fail "no Fail row for the corrupted result: $(cat "$tmp/corrupt.out")"
grep -q "DATA VALIDATION ERROR" "$tmp/corrupt.err" || fail "no DATA VALIDATION ERROR message"
echo "ok: one wrong element in 16 is caught (Fail, DATA VALIDATION ERROR, exit 1)"
# 7b. --iallreduce: osu_iallreduce's table (header lines, the columns,
#     overlap within 0..100, Pure Comm. between Min and Max Comm.), the same
#     exact validation (a PMPI shim corrupting one element after MPI_Wait
#     must fail it), and --probes refused without --iallreduce.
run "$bench" --iallreduce -m 4:64 -i 20 -x 2 -c -f -T int > "$tmp/nb.out" 2> "$tmp/nb.err" ||
    fail "genx-bench --iallreduce failed: $(cat "$tmp/nb.out" "$tmp/nb.err")"
python3 - "$tmp/nb.out" <<'EOF' || fail "genx-bench --iallreduce output is malformed: $(cat "$tmp/nb.out")"
import sys
lines = open(sys.argv[1]).read().split("\n")
want = ["", "# OSU MPI Non-blocking Allreduce Latency Test v7.4",
        "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait", "", "# Datatype: MPI_INT.",
        "%-10s%18s%18s%18s%18s%18s%18s%12s%18s" % ("# Size", "Overall(us)", "Compute(us)", "Pure Comm.(us)",
        "Overlap(%)", "Min Comm.(us)", "Max Comm.(us)", "Iterations", "Validation")]
assert lines[:len(want)] == want, lines[:len(want)]
rows = [l.split() for l in lines[len(want):] if l]
assert [int(r[0]) for r in rows] == [4, 8, 16, 32, 64], rows
for r in rows:
    overall, comp, pure, ov, lo, hi = map(float, r[1:7])
    assert 0 <= ov <= 100 and lo <= pure + 0.01 and pure <= hi + 0.01 and overall > 0, r
    assert r[7] == "20" and r[8] == "Pass", r
EOF
cat > "$tmp/icorrupt.c" <<'EOF'
#include <mpi.h>
static void *last;
static int last_n, last_rank;
int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q)
{
    PMPI_Comm_rank(c, &last_rank);
    last = (t == MPI_INT && n > 1) ? r : 0;
    last_n = n;
    return PMPI_Iallreduce(s, r, n, t, op, c, q);
}
int MPI_Wait(MPI_Request *q, MPI_Status *st)
{
    int rc = PMPI_Wait(q, st);
    if (last && last_rank == 0)
        ((int *) last)[last_n - 1] += 1;
    last = 0;
    return rc;
}
EOF
"$mpicc" -shared -fPIC -o "$tmp/libicorrupt.so" "$tmp/icorrupt.c" || skip "cannot build the PMPI shim with $mpicc"
if run -x LD_PRELOAD="$tmp/libicorrupt.so" "$bench" --iallreduce -m 64:64 -i 2 -x 0 -c -T int > "$tmp/icorrupt.out" 2>&1; then
    fail "a corrupted MPI_Iallreduce result passed validation: $(cat "$tmp/icorrupt.out")"
fi
grep -Eq '^64 .* Fail$' "$tmp/icorrupt.out" || fail "no Fail row for the corrupted iallreduce: $(cat "$tmp/icorrupt.out")"
if run "$bench" --probes 3 -m 8 > "$tmp/probes.out" 2>&1 || ! grep -q -- "--probes needs --iallreduce" "$tmp/probes.out"; then
    fail "--probes without --iallreduce was not refused: $(cat "$tmp/probes.out")"
fi
echo "ok: --iallreduce prints osu_iallreduce's table, validates every result, refuses --probes alone"
# 7c. --phases: four more columns, MPI_Iallreduce's and MPI_Wait's mean
#     times in each pass; they are parts of the timed calls only (warm-up
#     and validation calls excluded: -c adds 5 untimed calls before each
#     timed one), so Start + Wait is the pure time and Ov. Start + Compute +
#     Ov. Wait the overall time.  Refused alone.
run "$bench" --iallreduce --phases -c -m 8:32 -i 50 -x 5 -T float > "$tmp/ph.out" 2> "$tmp/ph.err" ||
    fail "genx-bench --iallreduce --phases failed: $(cat "$tmp/ph.out" "$tmp/ph.err")"
python3 - "$tmp/ph.out" <<'EOF' || fail "genx-bench --phases output is wrong: $(cat "$tmp/ph.out")"
import sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
head = [l for l in lines if l.startswith("# Size")]
assert head == ["%-10s%18s%18s%18s%18s%18s%18s%18s%18s%18s" % ("# Size", "Overall(us)", "Compute(us)",
                "Pure Comm.(us)", "Overlap(%)", "Validation", "Start(us)", "Wait(us)",
                "Ov. Start(us)", "Ov. Wait(us)")], head
rows = [l.split() for l in lines if not l.startswith("#")]
assert [int(r[0]) for r in rows] == [8, 16, 32], rows
for r in rows:
    assert r[5] == "Pass", r
    overall, comp, pure, ov = map(float, r[1:5])
    start, wait, ostart, owait = map(float, r[6:10])
    assert min(start, wait, ostart, owait) >= 0, r
    assert abs(start + wait - pure) <= 0.02 + 0.02 * pure, ("pure is not start + wait", r)
    assert abs(ostart + comp + owait - overall) <= 0.02 + 0.02 * overall, ("overall", r)
EOF
if run "$bench" --phases -m 8 > "$tmp/phases.out" 2>&1 || ! grep -q -- "--phases needs --iallreduce" "$tmp/phases.out"; then
    fail "--phases without --iallreduce was not refused: $(cat "$tmp/phases.out")"
fi
echo "ok: --phases splits both passes into MPI_Iallreduce and MPI_Wait, adding up to their totals"
# 8. compare: a forced algorithm's parameters may hold commas (the params
#    MCA value is key=value,...): each reaches mpirun whole.
compare="$(dirname "$0")/../../bench/compare"
if [ -e "$builddir/.libs/mca_coll_genx.so" ] && [ -f "$compare" ]; then
    python3 "$compare" --build "$builddir" -n 3 --dry-run -o "$tmp/cmp" \
        --genx-algorithms 'ring,butterfly:group=3,r=1,rhd' \
        --configs 'genx-butterfly:group=3,r=1,genx-rhd' > "$tmp/cmp.out" 2>&1 ||
        fail "compare --dry-run failed: $(cat "$tmp/cmp.out")"
    [ "$(grep -c 'genx-bench' "$tmp/cmp.out")" = 2 ] || fail "compare ran not 2 configurations: $(cat "$tmp/cmp.out")"
    grep -q -- '--mca coll_genx_allreduce_algorithm butterfly --mca coll_genx_allreduce_params group=3,r=1 ' "$tmp/cmp.out" ||
        fail "butterfly's params did not reach mpirun whole: $(cat "$tmp/cmp.out")"
    grep -q -- '--mca coll_genx_allreduce_algorithm rhd ' "$tmp/cmp.out" || fail "rhd not run: $(cat "$tmp/cmp.out")"
    echo "ok: compare keeps 'butterfly:group=3,r=1' whole in --genx-algorithms and --configs"
    # Timed runs load genx as the baselines load theirs: no verbose output.
    ! grep -q coll_genx_verbose "$tmp/cmp.out" || fail "a timed run sets coll_genx_verbose: $(cat "$tmp/cmp.out")"
    echo "ok: compare's timed runs are not verbose"
    # The validation run's check: what counts as genx running.
    python3 - "$compare" <<'PY' || fail "compare's validation check (genx_ran) misjudged a log"
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("compare", sys.argv[1])
spec = importlib.util.spec_from_loader("compare", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
ring = m.Config("genx-ring", "ompi", [], "genx", forced="ring")
auto = m.Config("genx-auto", "ompi", [], "genx")
ran = "[h:1] genx: allreduce 8 B (size class 8) on 4 ranks: ring (segment=1M,window=4) [forced]\n"
deferred = ("[h:1] genx: allreduce 8 B on comm 0 (4 ranks): fallback to tuned: rule built-in "
            "defaults:14 (allreduce[0]): left to the component genx displaced (one node)\n")
declined = "[h:1] genx: allreduce 8 B on 4 ranks declined, using the fallback: op is not commutative\n"
differ = "[h:1] genx: comm 3 (4 ranks): the ranks' allreduce decisions differ\n"
cases = [(ring, ran, True), (ring, ran + deferred, False), (ring, "", False),
         (auto, ran, True), (auto, deferred, True), (auto, ran + deferred, True),
         (auto, ran + declined, False), (auto, deferred + differ, False), (auto, "", False)]
bad = [(c.name, t) for c, t, ok in cases if (m.genx_ran(c, t) is None) != ok]
sys.exit("misjudged: %r" % bad if bad else 0)
PY
    echo "ok: the validation run accepts deferred sizes only when genx chooses by itself"
    # --iallreduce: genx-bench gets it, tuned's forced configurations and HAN are dropped.
    python3 "$compare" --build "$builddir" -n 3 --dry-run -o "$tmp/cmpnb" --iallreduce --probes 2 \
        --genx-algorithms ring > "$tmp/cmpnb.out" 2>&1 || fail "compare --iallreduce --dry-run failed: $(cat "$tmp/cmpnb.out")"
    grep -q -- 'genx-bench .*--iallreduce --probes 2' "$tmp/cmpnb.out" || fail "compare --iallreduce did not pass --iallreduce: $(cat "$tmp/cmpnb.out")"
    ! grep -q -- 'coll_tuned_allreduce_algorithm\|coll_han_priority' "$tmp/cmpnb.out" ||
        fail "compare --iallreduce runs tuned or HAN configurations: $(cat "$tmp/cmpnb.out")"
    echo "ok: compare --iallreduce runs genx-bench --iallreduce on genx and libnbc only"
    # fault-cluster (a long bench script): its arguments are checked before
    # it touches any namespace.
    fc="$(dirname "$0")/../../bench/fault-cluster"
    python3 "$fc" --help > "$tmp/fc.out" 2>&1 || fail "fault-cluster --help failed: $(cat "$tmp/fc.out")"
    if python3 "$fc" "$builddir" --faults flood > "$tmp/fc.out" 2>&1 || ! grep -q "unknown fault 'flood'" "$tmp/fc.out"; then
        fail "fault-cluster accepted an unknown fault: $(cat "$tmp/fc.out")"
    fi
    echo "ok: fault-cluster's help works and an unknown fault is refused"
else
    fail "cannot check compare's algorithm lists: no genx component in $builddir/.libs or no bench/compare"
fi
echo "PASS"
