#!/bin/sh
# bench/compare --oracle-for on stored runs, and its checks in
# bench/check-results.
#
# 0. The hosts of a run on some of a cluster's hosts, and its bounds.
# 1. On copies of bench/results/site-2dc and site-tree2x4-rr: "Against the
#    oracle" for genx-site is in table.md and in results.json (the rest of
#    which is unchanged); every size's oracle is another configuration of
#    the run, chosen once per round; the verdicts follow from the interval
#    and the bar; the geometric mean is that of the median ratios; a second
#    --from-results without --oracle-for writes the same files again, and
#    one on results without an oracle adds none; an unknown configuration
#    is refused.
# 2. check-results, in a copy of bench/ with a site-subcomm run made of
#    those two results: the oracle table and summary.md are OK as rendered;
#    a changed summary row, or an "oracle" in results.json that is not what
#    compare computes, DIFFERS.
set -u
src=${GENX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 0. The hosts a run on fewer hosts than the cluster's is on (meta "hosts"),
#    and its bounds from those hosts: on 2dc, h0,h2,h4 span the 2 ms link.
python3 - "$src/bench/compare" "$src/bench/results/site-2dc/results.json" <<'PY' || exit 1
import importlib.machinery, importlib.util, json, sys, types
loader = importlib.machinery.SourceFileLoader("compare", sys.argv[1])
compare = importlib.util.module_from_spec(importlib.util.spec_from_loader("compare", loader))
loader.exec_module(compare)
topo = json.load(open(sys.argv[2]))["meta"]["topology"]
got = [compare.run_hosts(topo, order, 3, 1) for order in ("h6,h2,h4,h0", "rr", None)]
want = [["h6", "h2", "h4"], ["h0", "h2", "h4"], ["h0", "h1", "h2"]]
if got != want:
    sys.exit("FAIL: run_hosts on 2dc for 3 ranks: %s, want %s" % (got, want))
lat = {}
for hosts in (["h0", "h2", "h4"], ["h0", "h1", "h2"]):
    args = types.SimpleNamespace(np=3, ppn=1, link_rate=None, link_delay=None, latency_floor=None, hosts=hosts)
    lat[hosts[1]] = compare.bounds(args, topo, 1 << 20)[1]
if lat != {"h2": 2000.0, "h1": None}:
    sys.exit("FAIL: latency bounds %s: h0,h2,h4 cross the 2 ms link, h0,h1,h2 do not" % lat)
print("ok: a run's hosts (an --order list, rr, topology order) and the latency bound of those hosts")
PY
for run in site-2dc site-tree2x4-rr; do
    mkdir "$tmp/$run"
    cp "$src/bench/results/$run/results.json" "$tmp/$run/"
    python3 "$src/bench/compare" --from-results "$tmp/$run" --oracle-for genx-site >/dev/null 2>"$tmp/err" ||
        fail "$run: compare --from-results --oracle-for genx-site: $(cat "$tmp/err")"
    python3 - "$src/bench/results/$run/results.json" "$tmp/$run" <<'PY' || exit 1
import json, math, os, sys
stored, d = sys.argv[1], sys.argv[2]
orig = json.load(open(stored))
doc = json.load(open(os.path.join(d, "results.json")))
table = open(os.path.join(d, "table.md")).read()
name = os.path.basename(d)
a = doc.pop("oracle", None)


def need(ok, what):
    if not ok:
        print("FAIL: %s: %s" % (name, what))
        sys.exit(1)


need(a is not None, "no \"oracle\" in results.json")
need(doc == orig, "results.json changed beyond its \"oracle\"")
need("### Against the oracle: genx-site" in table, "no oracle section in table.md")
need(a["candidates"] == [c for c in orig["configs"] if c != "genx-site"], "candidates %s" % a["candidates"])
rows = [r for r in a["sizes"] if r["rounds"]]
need(len(rows) == len(orig["meta"]["sizes"]), "%d of %d sizes have a ratio" % (len(rows), len(orig["meta"]["sizes"])))
for r in rows:
    need(set(r["oracle"]) <= set(a["candidates"]) and sum(r["oracle"].values()) == r["rounds"],
         "size %d: oracle %s over %d rounds" % (r["size"], r["oracle"], r["rounds"]))
    lo, hi = r["ci"]
    want = "met" if hi <= a["bar"] else "missed" if lo > a["bar"] else "not resolved"
    need(r["verdict"] == want and r["min"] <= r["median"] <= r["max"],
         "size %d: verdict %s, CI %s, bar %.2f" % (r["size"], r["verdict"], r["ci"], a["bar"]))
    need((r["size"] in a["missed"]) == (want == "missed"), "size %d: missed list" % r["size"])
g = math.exp(sum(math.log(r["median"]) for r in rows) / len(rows))
need(abs(g - a["geomean"]) < 1e-12 and ("over %d sizes: %.3f" % (len(rows), g)) in table,
     "geometric mean %.4f, table says otherwise" % a["geomean"])
print("ok: %s: genx-site / oracle geometric mean %.3f, resolved above %.2f: %s"
      % (name, g, a["bar"], a["missed"] or "none"))
PY
    cp "$tmp/$run/table.md" "$tmp/$run.table" && cp "$tmp/$run/results.json" "$tmp/$run.json"
    python3 "$src/bench/compare" --from-results "$tmp/$run" >/dev/null 2>&1 || fail "$run: second --from-results failed"
    cmp -s "$tmp/$run/table.md" "$tmp/$run.table" && cmp -s "$tmp/$run/results.json" "$tmp/$run.json" ||
        fail "$run: --from-results without --oracle-for did not keep the oracle as it was"
done
echo "ok: --from-results without --oracle-for renders the stored oracle again, byte for byte"
mkdir "$tmp/plain"
cp "$src/bench/results/site-2dc/results.json" "$tmp/plain/"
python3 "$src/bench/compare" --from-results "$tmp/plain" >/dev/null 2>"$tmp/err" || fail "--from-results: $(cat "$tmp/err")"
! grep -q "Against the oracle" "$tmp/plain/table.md" && cmp -s "$tmp/plain/results.json" "$src/bench/results/site-2dc/results.json" &&
    cmp -s "$tmp/plain/table.md" "$src/bench/results/site-2dc/table.md" ||
    fail "--from-results without an oracle anywhere changed the table or results.json"
echo "ok: without --oracle-for and none stored: the stored table.md again, results.json untouched"
python3 "$src/bench/compare" --from-results "$tmp/site-2dc" --oracle-for genx-nope >/dev/null 2>"$tmp/err" &&
    fail "--oracle-for genx-nope was accepted"
grep -q "genx-nope: no such configuration" "$tmp/err" || fail "--oracle-for genx-nope: $(cat "$tmp/err")"
echo "ok: --oracle-for a configuration not in the run is refused"

# 2. check-results on a copy of bench/ holding a site-subcomm run.
root=$tmp/root
mkdir -p "$root/bench/results/sub"
for f in compare check-results site-subcomm genx-cluster; do cp "$src/bench/$f" "$root/bench/"; done
k=3
for run in site-2dc site-tree2x4-rr; do
    mkdir "$root/bench/results/sub/n$k"
    cp "$tmp/$run/results.json" "$tmp/$run/table.md" "$tmp/$run/plot.svg" "$root/bench/results/sub/n$k/"
    k=5
done
cat >"$root/bench/results/sub/subcomm.json" <<'EOF'
{"topology": "2dc", "up_args": "", "placement": "spread", "ppn": 1, "site": "bench/results/site-2dc/site",
 "site_hosts": ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"],
 "configs": ["genx-site", "ompi-default"],
 "runs": [{"k": 3, "hosts": ["h0", "h2", "h4"], "dir": "n3", "site_fit": "fits"},
          {"k": 5, "hosts": ["h0", "h2", "h4", "h6", "h1"], "dir": "n5", "site_fit": "fits"}]}
EOF
bash "$root/bench/site-subcomm" --summary "$root/bench/results/sub" >/dev/null || fail "site-subcomm --summary failed"
grep -q "^| 3 | h0,h2,h4 | fits | 8 | " "$root/bench/results/sub/summary.md" ||
    fail "summary.md has no row for K=3: $(cat "$root/bench/results/sub/summary.md")"
{
    echo "<!-- table: bench/results/sub/n3/table.md; render: compare; section: Against the oracle -->"
    sed -n '/^### Against the oracle/,$p' "$root/bench/results/sub/n3/table.md" | grep '^|'
    echo
    echo "<!-- table: bench/results/sub/summary.md; render: site-subcomm --summary -->"
    grep '^|' "$root/bench/results/sub/summary.md"
} >"$tmp/doc.md"
python3 "$root/bench/check-results" "$tmp/doc.md" >"$tmp/out" 2>&1 || fail "check-results: $(cat "$tmp/out")"
[ "$(grep -c '^OK ' "$tmp/out")" -eq 2 ] || fail "check-results: $(cat "$tmp/out")"
echo "ok: check-results: the oracle table and site-subcomm's summary.md are what the renderers write"
summary=$root/bench/results/sub/summary.md
cp "$summary" "$tmp/summary.bak"
sed -i 's/^| 5 | \([^|]*\) | fits |/| 5 | \1 | moved |/' "$summary"
python3 "$root/bench/check-results" "$tmp/doc.md" >"$tmp/out" 2>&1 && fail "a changed summary.md passed"
grep -q "DIFFERS .*summary.md is not what bench/site-subcomm --summary writes" "$tmp/out" ||
    fail "a changed summary.md: $(cat "$tmp/out")"
cp "$tmp/summary.bak" "$summary"
python3 - "$root/bench/results/sub/n3/results.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["oracle"]["geomean"] *= 0.9
json.dump(doc, open(sys.argv[1], "w"), indent=1)
PY
python3 "$root/bench/check-results" "$tmp/doc.md" >"$tmp/out" 2>&1 && fail "a changed oracle in results.json passed"
[ "$(grep -c "DIFFERS .*results.json's \"oracle\" is not what bench/compare computes" "$tmp/out")" -eq 2 ] ||
    fail "a changed oracle in results.json: $(cat "$tmp/out")"
echo "ok: check-results: a changed summary row or results.json oracle DIFFERS"
