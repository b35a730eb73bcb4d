// MTREE (plan/mtree.hpp): GRTH with its fix, the corrected chunk size
// against a brute-force minimisation, the paper's four-node example, rates
// within capacities and block counts in proportion, checker proofs on
// tori, meshes, random weighted graphs, switch trees and several ranks per
// host, real sums on the loopback transport, and the errors.
#include <catch2/catch.hpp>

#include "sum_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "plan/checker.hpp"
#include "plan/lanes.hpp"
#include "common/min_bitset.hpp"
#include "plan/mtree.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"
#include "topology/graph.hpp"
#include "tuning/cost_model.hpp"
#include "topology/topology.hpp"

using namespace genx;

namespace {

std::string srcdir() {
    const char* env = std::getenv("GENX_SRCDIR");
    return env != nullptr ? env : GENX_TEST_SRCDIR;
}

// A view of `topo` with `ppn` consecutive ranks on each of its hosts (in
// node order), or on the hosts named in `hosts`.
TopologyView view_of(const Topology& topo, int ppn = 1) {
    std::vector<std::string> names;
    for (size_t i = 0; i < topo.nodes.size(); ++i)
        if (topo.nodes[i].kind == TopoKind::Host)
            for (int k = 0; k < ppn; ++k) names.push_back(topo.nodes[i].name);
    TopologyView v;
    const Status st = to_view(topo, names, &v);
    INFO(st.message());
    REQUIRE(st);
    return v;
}

TopologyView preset_view(const std::string& name, int ppn = 1) {
    Topology t;
    const Status st = topology_preset(name, &t);
    INFO(name << ": " << st.message());
    REQUIRE(st);
    return view_of(t, ppn);
}

TopologyView graph_view(const std::string& json, int ppn = 1) {
    Topology t;
    const Status st = parse_graph(json, "test.json", &t);
    INFO(st.message());
    REQUIRE(st);
    return view_of(t, ppn);
}

// The paper's Figure 2 as we read it: A-B=1, B-C=1, C-D=1, D-A=1, B-D=2
// (bytes/s), unit latencies.
const char* kFigure2 = R"({"genx_graph": 1,
  "classes": {"one": {"rate": 1, "latency": 1}, "two": {"rate": 2, "latency": 1}},
  "hosts": ["A", "B", "C", "D"],
  "links": [{"a": "A", "b": "B", "class": "one"}, {"a": "B", "b": "C", "class": "one"},
            {"a": "C", "b": "D", "class": "one"}, {"a": "D", "b": "A", "class": "one"},
            {"a": "B", "b": "D", "class": "two"}]})";

// A random connected graph of n hosts: a random spanning tree plus `extra`
// edges, rates multiples of 10 Mbit/s in [100, 300] and latencies in
// [50, 400] ms roughly inverse to the rate (the paper's setup).
std::string random_graph_json(std::mt19937& rng, int n, int extra) {
    std::set<std::pair<int, int>> edges;
    for (int v = 1; v < n; ++v) {
        const int u = std::uniform_int_distribution<int>(0, v - 1)(rng);
        edges.insert({u, v});
    }
    for (int tries = 0; static_cast<int>(edges.size()) < n - 1 + extra && tries < 1000; ++tries) {
        int a = std::uniform_int_distribution<int>(0, n - 1)(rng);
        int b = std::uniform_int_distribution<int>(0, n - 1)(rng);
        if (a == b) continue;
        edges.insert({std::min(a, b), std::max(a, b)});
    }
    std::string classes, links, hosts;
    int k = 0;
    for (const auto& [a, b] : edges) {
        const int rate = 10 * std::uniform_int_distribution<int>(10, 30)(rng);
        const double lat = 50 + 350.0 * (300 - rate) / 200.0;
        const std::string c = "c" + std::to_string(k++);
        classes += (classes.empty() ? "" : ", ") + std::string("\"") + c + "\": {\"rate\": \"" +
                   std::to_string(rate) + " Mbit/s\", \"latency\": \"" + std::to_string(lat) + " ms\"}";
        links += (links.empty() ? "" : ", ") + std::string("{\"a\": \"s") + std::to_string(a) +
                 "\", \"b\": \"s" + std::to_string(b) + "\", \"class\": \"" + c + "\"}";
    }
    for (int v = 0; v < n; ++v) hosts += (v ? ", " : "") + std::string("\"s") + std::to_string(v) + "\"";
    return "{\"genx_graph\": 1, \"classes\": {" + classes + "}, \"hosts\": [" + hosts + "], \"links\": [" +
           links + "]}";
}

// Switch trees by hand (as the GenTree tests build them).
struct ViewBuilder {
    TopologyView v;
    int next_rank = 0;
    int cls(const std::string& name, double rate = 1.25e9) {
        for (size_t i = 0; i < v.link_classes.size(); ++i)
            if (v.link_classes[i].name == name) return static_cast<int>(i);
        v.link_classes.push_back({name, rate, 5e-6, false});
        return static_cast<int>(v.link_classes.size() - 1);
    }
    int node(int parent, const std::string& name, const std::string& up) {
        const int id = static_cast<int>(v.nodes.size());
        TopoNode n;
        n.name = name;
        n.parent = parent;
        n.up_class = parent < 0 ? -1 : cls(up);
        v.nodes.push_back(n);
        if (parent >= 0) v.nodes[static_cast<size_t>(parent)].children.push_back(id);
        return id;
    }
    int host(int parent, const std::string& up, int k = 1) {
        const int h = node(parent, "h" + std::to_string(v.nodes.size()), up);
        for (int i = 0; i < k; ++i) v.nodes[static_cast<size_t>(h)].ranks.push_back(next_rank++);
        return h;
    }
};

// Leaves of `per_leaf` hosts with `ppn` ranks each under one spine.
TopologyView switch_tree(const std::vector<int>& per_leaf, int ppn = 1, double uplink = 2.5e9) {
    ViewBuilder b;
    b.cls("leaf");
    b.cls("up", uplink);
    b.cls("intra", 20e9);
    b.v.intra_class = 2;
    const int root = b.node(-1, "spine", "");
    for (size_t l = 0; l < per_leaf.size(); ++l) {
        const int leaf = per_leaf.size() == 1 ? root : b.node(root, "leaf" + std::to_string(l), "up");
        for (int h = 0; h < per_leaf[l]; ++h) b.host(leaf, "leaf", ppn);
    }
    REQUIRE(b.v.validate() == "");
    return b.v;
}

Plan mtree_plan(const TopologyView* v, int P, const std::string& params = "") {
    ParamMap pm;
    REQUIRE(parse_params(params, &pm));
    Plan plan;
    const Status st = generate("mtree", P, pm, v, &plan);
    INFO("P=" << P << " params '" << params << "': " << st.message());
    REQUIRE(st);
    return plan;
}

void require_valid(const Plan& plan, const std::string& what) {
    const CheckResult res = check_plan(plan);
    INFO(what << " P=" << plan.nranks << ": " << res.message);
    REQUIRE(res.ok);
}

// The per-rank generator of mtree with its default params on every rank
// of `v` (for views too large to generate whole).
RankGenerator prepared_mtree(const TopologyView& v) {
    RankGenerator gen;
    const Status st = prepare("mtree", v.nranks(), ParamMap{}, &v, &gen);
    INFO(st.message());
    REQUIRE(st);
    return gen;
}

MTreeSolution solve(const TopologyView* v, int P, const MTreeParams& p = {}) {
    MTreeSolution s;
    const Status st = solve_mtree(v, P, p, &s);
    INFO(st.message());
    REQUIRE(st);
    return s;
}

// Σ over trees of rate × uses ≤ capacity for every resource; block counts
// within one of N·w_i; trees' blocks tile [0, N).
void require_rates_and_blocks(const MTreeSolution& s, const std::string& what) {
    INFO(what);
    std::vector<double> load(s.graph.capacity.size(), 0);
    double total = 0;
    for (const MTreeTree& t : s.trees) {
        REQUIRE(t.rate > 0);
        total += t.rate;
        for (int e : t.edges)
            for (int r : s.graph.edges[static_cast<size_t>(e)].res) load[static_cast<size_t>(r)] += t.rate;
    }
    for (size_t r = 0; r < load.size(); ++r) CHECK(load[r] <= s.graph.capacity[r] * (1 + 1e-9));
    int next = 0;
    for (const MTreeTree& t : s.trees) {
        CHECK(t.block_begin == next);
        next += t.nblocks;
        CHECK(std::fabs(t.nblocks - s.lane_blocks * t.rate / total) < 1.0 + 1e-9);
        CHECK(t.chunks >= 1);
        CHECK(t.chunks <= t.nblocks);
        // A spanning tree of the hosts.
        CHECK(static_cast<int>(t.edges.size()) == s.graph.n - 1);
    }
    if (!s.trees.empty()) CHECK(next == s.lane_blocks);
    CHECK(s.nblocks == std::max(1, s.lanes) * s.lane_blocks);
    CHECK(static_cast<int>(s.trees.size()) <= 4);
}


// Eccentricities of a weighted tree by brute force (BFS from every vertex).
std::vector<int> eccentricities(const std::vector<std::vector<std::pair<int, int>>>& adj,
                                const std::vector<char>& in) {
    std::vector<int> ecc(adj.size(), 0);
    for (size_t s = 0; s < adj.size(); ++s) {
        if (!in[s]) continue;
        std::vector<int> dist(adj.size(), -1);
        std::deque<int> q{static_cast<int>(s)};
        dist[s] = 0;
        while (!q.empty()) {
            const int x = q.front();
            q.pop_front();
            ecc[s] = std::max(ecc[s], dist[static_cast<size_t>(x)]);
            for (const auto& [y, w] : adj[static_cast<size_t>(x)])
                if (dist[static_cast<size_t>(y)] < 0) {
                    dist[static_cast<size_t>(y)] = dist[static_cast<size_t>(x)] + w;
                    q.push_back(y);
                }
        }
    }
    return ecc;
}

}  // namespace

TEST_CASE("GRTH keeps every eccentricity, the attachment vertex included", "[mtree]") {
    using Adj = std::vector<std::vector<std::pair<int, int>>>;
    Adj adj(4);
    std::vector<int> D(4, 0);
    // Vertex 1 joins 0 over latency 1: both are at eccentricity 1.  The
    // paper's Algorithm 2 as printed leaves D[0] at 0.
    D = mtree_grth(adj, D, 0, 1, 1);
    CHECK(D == std::vector<int>{1, 1, 0, 0});
    adj[0].push_back({1, 1});
    adj[1].push_back({0, 1});
    // 2 joins 1 over latency 2: path 0 -1- 1 -2- 2.
    D = mtree_grth(adj, D, 1, 2, 2);
    CHECK(D == std::vector<int>{3, 2, 3, 0});
    adj[1].push_back({2, 2});
    adj[2].push_back({1, 2});
    // 3 joins 1 over latency 1: ecc(3) = dist to 2 = 3.
    D = mtree_grth(adj, D, 1, 3, 1);
    CHECK(D == std::vector<int>{3, 2, 3, 3});

    // Random trees grown one vertex at a time agree with brute force.
    std::mt19937 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        const int n = std::uniform_int_distribution<int>(2, 14)(rng);
        Adj a(static_cast<size_t>(n));
        std::vector<char> in(static_cast<size_t>(n), 0);
        std::vector<int> d(static_cast<size_t>(n), 0);
        in[0] = 1;
        for (int v = 1; v < n; ++v) {
            const int u = std::uniform_int_distribution<int>(0, v - 1)(rng);
            const int q = std::uniform_int_distribution<int>(1, 5)(rng);
            d = mtree_grth(a, d, u, v, q);
            a[static_cast<size_t>(u)].push_back({v, q});
            a[static_cast<size_t>(v)].push_back({u, q});
            in[static_cast<size_t>(v)] = 1;
            REQUIRE(d == eccentricities(a, in));
        }
    }
}

TEST_CASE("the corrected chunk size minimises Eq. 3", "[mtree]") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u01(0, 1);
    for (int iter = 0; iter < 300; ++iter) {
        const int l = std::uniform_int_distribution<int>(2, 10)(rng);
        std::vector<double> alpha(static_cast<size_t>(l));
        for (double& a : alpha) a = std::pow(10.0, -6 + 5 * u01(rng));   // 1 µs .. 100 ms
        const double beta = std::pow(10.0, -11 + 4 * u01(rng));         // 12.5 GB/s .. 10 MB/s
        const double v = std::pow(10.0, 3 + 7 * u01(rng));              // 1 KB .. 10 GB
        const double mx = *std::max_element(alpha.begin(), alpha.end());
        // Brute force: golden-section search of the convex t(μ) on a log
        // scale over (0, v].
        double lo = std::log(v) - 40, hi = std::log(v);
        const auto t = [&](double x) { return mtree_pipeline_time(alpha, beta, v, std::exp(x)); };
        for (int k = 0; k < 200; ++k) {
            const double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
            if (t(m1) < t(m2))
                hi = m2;
            else
                lo = m1;
        }
        const double brute = std::exp((lo + hi) / 2);
        const double mu = std::min(mtree_best_chunk(alpha, beta, v), v);
        INFO("l=" << l << " beta=" << beta << " v=" << v << " max alpha=" << mx);
        CHECK(std::fabs(mu - brute) <= 1e-4 * brute);
        CHECK(mtree_pipeline_time(alpha, beta, v, mu) <= t(std::log(brute)) * (1 + 1e-12));
        // The printed Eq. 7 (without v) is far off whenever v is not about 1.
        const double printed = std::sqrt(mx / ((l - 1) * beta));
        if (v > 1e4 && printed < v) CHECK(mtree_pipeline_time(alpha, beta, v, printed) > t(std::log(brute)));
        // μ# = max α / ((l − 1)β) is where pipelining stops paying off.
        const double mu_sharp = mx / ((l - 1) * beta);
        if (mu_sharp < v)
            CHECK(std::fabs(mtree_pipeline_time(alpha, beta, v, mu_sharp) -
                            mtree_pipeline_time(alpha, beta, v, v)) <=
                  1e-9 * mtree_pipeline_time(alpha, beta, v, v));
    }
    // One link: nothing to pipeline.
    CHECK(mtree_best_chunk({1e-3}, 1e-9, 1e6) == 1e6);
}

TEST_CASE("the rate LP finds the largest total rate", "[mtree]") {
    // x + 2y ≤ 4, 3x + y ≤ 6: the optimum is the corner (1.6, 1.2).
    std::vector<double> x = mtree_max_rates({{1, 2}, {3, 1}}, {4, 6});
    REQUIRE(x.size() == 2);
    CHECK(x[0] == Approx(1.6));
    CHECK(x[1] == Approx(1.2));
    // Random two-variable LPs against every feasible corner.
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(0, 1);
    for (int iter = 0; iter < 500; ++iter) {
        const int m = std::uniform_int_distribution<int>(1, 6)(rng);
        std::vector<std::vector<double>> A;
        std::vector<double> b;
        for (int j = 0; j < m; ++j) {
            A.push_back({std::floor(u(rng) * 4), std::floor(u(rng) * 4)});
            b.push_back(1 + 9 * u(rng));
        }
        // Keep it bounded.
        A.push_back({1, 1});
        b.push_back(20);
        std::vector<std::array<double, 3>> lines;  // a x + b y = c, axes included
        for (size_t j = 0; j < A.size(); ++j) lines.push_back({A[j][0], A[j][1], b[j]});
        lines.push_back({1, 0, 0});
        lines.push_back({0, 1, 0});
        double best = 0;
        for (size_t p = 0; p < lines.size(); ++p)
            for (size_t q = p + 1; q < lines.size(); ++q) {
                const double det = lines[p][0] * lines[q][1] - lines[p][1] * lines[q][0];
                if (std::fabs(det) < 1e-12) continue;
                const double px = (lines[p][2] * lines[q][1] - lines[p][1] * lines[q][2]) / det;
                const double py = (lines[p][0] * lines[q][2] - lines[p][2] * lines[q][0]) / det;
                bool ok = px >= -1e-9 && py >= -1e-9;
                for (size_t j = 0; j < A.size(); ++j) ok = ok && A[j][0] * px + A[j][1] * py <= b[j] + 1e-9;
                if (ok) best = std::max(best, px + py);
            }
        x = mtree_max_rates(A, b);
        CHECK(x[0] + x[1] == Approx(best).epsilon(1e-9));
        for (size_t j = 0; j < A.size(); ++j) CHECK(A[j][0] * x[0] + A[j][1] * x[1] <= b[j] * (1 + 1e-9));
    }
}

TEST_CASE("the paper's four-node example gives two stars rooted at B and D", "[mtree]") {
    const TopologyView v = graph_view(kFigure2);
    MTreeGraph g;
    REQUIRE(build_mtree_graph(&v, 4, &g));
    REQUIRE(g.n == 4);
    REQUIRE(g.names == std::vector<std::string>{"A", "B", "C", "D"});
    REQUIRE(g.edges.size() == 5);
    for (const MTreeEdge& e : g.edges) CHECK(e.q == 1);
    // The paper's rate rule (r* = the smallest remaining capacity) with
    // r̄ = 1, then genx's default (steps of 1/8 of the largest capacity,
    // r̄ automatic): the same two stars.
    MTreeOptions o;
    o.rmin = 1;
    o.step_fraction = 0;
    const auto stars = [&](const std::vector<MTreeTree>& ts) {
        REQUIRE(ts.size() == 2);
        std::set<int> roots;
        double total = 0;
        for (const MTreeTree& t : ts) {
            roots.insert(t.root);
            total += t.rate;
            CHECK(t.height == 1);
            for (int x = 0; x < 4; ++x)
                if (x != t.root) CHECK(t.parent[static_cast<size_t>(x)] == t.root);
            CHECK(t.rate == Approx(1.0));
        }
        CHECK(roots == std::set<int>{1, 3});
        CHECK(total == Approx(2.0));
    };
    for (int H : {1, 2, 3}) stars(mtree_gbst(g, H, o));
    MTreeGost gost;
    REQUIRE(mtree_gost(g, o, &gost));
    CHECK(gost.H0 == 3);
    CHECK(gost.HU == 1);
    stars(gost.trees);
    // (Steps of 2/8: each star is found four times and merged.)
    for (int H : {1, 2, 3}) stars(mtree_gbst(g, H, MTreeOptions{}));
    MTreeGost fine;
    REQUIRE(mtree_gost(g, MTreeOptions{}, &fine));
    CHECK(fine.HU == 1);
    stars(fine.trees);
    // The rates the selection re-derives on the original capacities.
    const std::vector<MTreeTree> sel = mtree_select(g, gost.trees, 4);
    stars(sel);
    // With K = 1 one star at rate 1 remains.
    const std::vector<MTreeTree> one = mtree_select(g, gost.trees, 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].rate == Approx(1.0));

    // The plan: equal halves of the blocks, both trees of height 1.
    const MTreeSolution s = solve(&v, 4);
    REQUIRE(s.trees.size() == 2);
    CHECK(s.trees[0].nblocks == s.trees[1].nblocks);
    require_rates_and_blocks(s, "figure 2");
    const Plan p = mtree_plan(&v, 4);
    require_valid(p, "figure 2");
    CHECK(p.max_steps() == s.steps);
    CHECK(s.steps == std::max(s.trees[0].chunks, s.trees[1].chunks) + 1);
    CHECK(run_sum(p, {0, 1, 3, 4, 11, 1001}).is_ok());
}

TEST_CASE("mtree pipelines chunks leaf to root and back down", "[mtree]") {
    // A path of five sites: one tree (the path) rooted at the middle,
    // height 2; three chunks take 3 + 2·2 − 1 = 6 steps.
    const char* path = R"({"genx_graph": 1,
      "classes": {"wan": {"rate": "10 Gbit/s", "latency": "10 ms"}},
      "hosts": ["a", "b", "c", "d", "e"],
      "links": [{"a": "a", "b": "b", "class": "wan"}, {"a": "b", "b": "c", "class": "wan"},
                {"a": "c", "b": "d", "class": "wan"}, {"a": "d", "b": "e", "class": "wan"}]})";
    const TopologyView v = graph_view(path);
    MTreeParams mp;
    mp.chunks = 3;
    const MTreeSolution s = solve(&v, 5, mp);
    REQUIRE(s.trees.size() == 1);
    CHECK(s.trees[0].root == 2);
    CHECK(s.trees[0].height == 2);
    CHECK(s.trees[0].chunks == 3);
    CHECK(s.steps == 6);
    const Plan p = mtree_plan(&v, 5, "chunks=3");
    require_valid(p, "path");
    REQUIRE(p.max_steps() == 6);
    // Rank 0 (depth 2) sends chunk c up at step c and gets it back at step c + 3.
    const Program& leaf = p.programs[0];
    for (int c = 0; c < 3; ++c) {
        REQUIRE(leaf.steps[static_cast<size_t>(c)].sends.size() == 1);
        CHECK(leaf.steps[static_cast<size_t>(c)].sends[0].peer == 1);
        REQUIRE(leaf.steps[static_cast<size_t>(c + 3)].recvs.size() == 1);
        CHECK(leaf.steps[static_cast<size_t>(c + 3)].recvs[0].buffer == kResult);
        CHECK(leaf.steps[static_cast<size_t>(c)].sends[0].blocks ==
              leaf.steps[static_cast<size_t>(c + 3)].recvs[0].blocks);
    }
    // The root folds both children's copies of a chunk in one fused reduce.
    const Program& root = p.programs[2];
    // Step 2: chunk 1 arrives from both children (sent at c + h − d = 1 + 2 − 1)
    // while chunk 0 goes back down.
    const Step& fold = root.steps[2];
    REQUIRE(fold.recvs.size() == 2);
    CHECK(fold.recvs[0].buffer != fold.recvs[1].buffer);
    REQUIRE(fold.ops.size() == 1);
    CHECK(fold.ops[0].kind == OpKind::Reduce);
    CHECK(fold.ops[0].srcs.size() == 2);
    CHECK(run_sum(p, {0, 1, 4, 5, 13, 1001}).is_ok());
    // Automatic chunking: a 64 MiB message over 10 ms links pipelines
    // sqrt(v (l − 1) β / α) ≈ sqrt(64 MiB · 3 / 1.25 GB/s / 10 ms) ≈ 4 chunks.
    const MTreeSolution a = solve(&v, 5);
    REQUIRE(a.trees.size() == 1);
    const double lambda = std::sqrt(64.0 * (1 << 20) * 3 / 1.25e9 / 10e-3);
    CHECK(a.trees[0].chunks == static_cast<int>(std::lround(lambda)));
}

TEST_CASE("mtree plans pass the checker on tori and meshes", "[mtree]") {
    // Steps where one peer sends a rank both partial sums (it is a child
    // in one tree) and finished blocks (its parent in another): one
    // receive into a slot, then a copy.  Some plans below have them.
    size_t copies = 0;
    for (const char* kind : {"torus", "mesh"})
        for (int x = 2; x <= 6; ++x)
            for (int y = 2; y <= 6; ++y) {
                const std::string name = std::string(kind) + ":" + std::to_string(x) + "x" + std::to_string(y);
                const TopologyView v = preset_view(name);
                const Plan p = mtree_plan(&v, x * y);
                require_valid(p, name);
                for (const Program& prog : p.programs)
                    for (const Step& st : prog.steps)
                        for (const LocalOp& op : st.ops) copies += op.kind == OpKind::Copy;
                require_rates_and_blocks(solve(&v, x * y), name);
            }
    CHECK(copies > 0);
    // Several ranks per host, and a 3D torus.
    const TopologyView t2 = preset_view("torus:3x3", 2);
    require_valid(mtree_plan(&t2, 18), "torus:3x3 x2");
    const TopologyView t3 = preset_view("torus:2x2x3");
    require_valid(mtree_plan(&t3, 12), "torus:2x2x3");
}

TEST_CASE("mtree plans pass the checker on random weighted graphs", "[mtree][random]") {
    std::mt19937 rng(20261126);
    for (int P : {2, 3, 5, 7, 8, 12, 13, 16, 17}) {
        for (int iter = 0; iter < 4; ++iter) {
            const int extra = std::uniform_int_distribution<int>(0, P)(rng);
            const std::string json = random_graph_json(rng, P, extra);
            const TopologyView v = graph_view(json);
            const std::string what = "random graph P=" + std::to_string(P) + " #" + std::to_string(iter);
            const MTreeSolution s = solve(&v, P);
            require_rates_and_blocks(s, what);
            // Every tree is rooted at its centre: no vertex has a smaller
            // eccentricity (quantised latencies).
            for (const MTreeTree& t : s.gost.trees) {
                std::vector<std::vector<std::pair<int, int>>> adj(static_cast<size_t>(P));
                for (int e : t.edges) {
                    const MTreeEdge& ed = s.graph.edges[static_cast<size_t>(e)];
                    adj[static_cast<size_t>(ed.u)].push_back({ed.v, ed.q});
                    adj[static_cast<size_t>(ed.v)].push_back({ed.u, ed.q});
                }
                const std::vector<int> ecc = eccentricities(adj, std::vector<char>(static_cast<size_t>(P), 1));
                CHECK(ecc[static_cast<size_t>(t.root)] == *std::min_element(ecc.begin(), ecc.end()));
                CHECK(t.qheight == ecc[static_cast<size_t>(t.root)]);
            }
            CHECK(s.gost.HU <= s.gost.H0);
            const Plan p = mtree_plan(&v, P);
            require_valid(p, what);
            // k = 1 and a fixed chunk count too; two ranks per host.
            require_valid(mtree_plan(&v, P, "k=1,chunks=5"), what + " k=1");
            if (iter == 0) {
                const TopologyView v2 = graph_view(json, 2);
                require_valid(mtree_plan(&v2, 2 * P, "k=2"), what + " x2");
            }
        }
    }
}

TEST_CASE("mtree plans pass the checker on switch trees", "[mtree]") {
    for (int P : {2, 3, 5, 7, 8, 12, 13, 16, 17}) {
        const TopologyView one = switch_tree({P});
        const MTreeSolution s = solve(&one, P);
        require_rates_and_blocks(s, "switch:" + std::to_string(P));
        require_valid(mtree_plan(&one, P), "one switch");
        const int a = (P + 1) / 2;
        const TopologyView two = switch_tree({a, P - a > 0 ? P - a : 1});
        require_rates_and_blocks(solve(&two, two.nranks()), "two leaves");
        require_valid(mtree_plan(&two, two.nranks()), "two leaves");
    }
    // Several ranks per host, uneven: 3 hosts of 3, 1 and 4 ranks.
    ViewBuilder b;
    b.cls("leaf");
    b.cls("intra", 20e9);
    b.v.intra_class = 1;
    const int root = b.node(-1, "sw", "");
    b.host(root, "leaf", 3);
    b.host(root, "leaf", 1);
    b.host(root, "leaf", 4);
    const MTreeSolution s = solve(&b.v, 8);
    CHECK(s.intra_steps == 2);
    CHECK(s.steps == 4 + s.pipeline_steps);
    const Plan p = mtree_plan(&b.v, 8);
    require_valid(p, "3 hosts of 3, 1, 4 ranks");
    CHECK(run_sum(p, {0, 1, 7, 8, 19, 1001}).is_ok());
    // The contraction: hosts under one leaf are joined over their two host
    // links; across leaves also over both leaves' uplinks, and the
    // latencies add up.
    {
        const TopologyView two = switch_tree({2, 2});
        MTreeGraph g;
        REQUIRE(build_mtree_graph(&two, 4, &g));
        REQUIRE(g.edges.size() == 6);
        for (const MTreeEdge& e : g.edges) {
            const bool same_leaf = e.u / 2 == e.v / 2;
            CHECK(e.res.size() == (same_leaf ? 2u : 4u));
            CHECK(e.latency == Approx(same_leaf ? 10e-6 : 20e-6));
            CHECK(e.q == (same_leaf ? 1 : 2));
        }
    }
    // Trees crossing a thin uplink share it: rates respect the uplink.
    const TopologyView thin = switch_tree({4, 4}, 1, 1e9);
    const MTreeSolution st = solve(&thin, 8);
    require_rates_and_blocks(st, "thin uplink");
    // Without a view: one switch of P ranks.
    for (int P : {1, 2, 6}) require_valid(mtree_plan(nullptr, P), "no view");
}

TEST_CASE("mtree computes sums on the loopback transport", "[mtree][loopback]") {
    std::mt19937 rng(5);
    std::vector<std::pair<std::string, TopologyView>> views = {
        {"torus:3x3", preset_view("torus:3x3")},
        {"torus:4x4", preset_view("torus:4x4")},  // tori have slot-then-copy receives
        {"mesh:2x3", preset_view("mesh:2x3")},
        {"random 7", graph_view(random_graph_json(rng, 7, 4))},
        {"random 13 x2", graph_view(random_graph_json(rng, 13, 6), 2)},
        {"two leaves x3", switch_tree({2, 3}, 3)},
    };
    Topology b4;
    REQUIRE(load_graph_file(srcdir() + "/tests/topology/b4.json", &b4));
    views.push_back({"b4", view_of(b4)});
    for (const auto& [name, v] : views) {
        const int P = v.nranks();
        for (const std::string params : {"", "chunks=7,k=3"}) {
            const Plan p = mtree_plan(&v, P, params);
            require_valid(p, name);
            const Status st = run_sum(p, {0, 1, static_cast<size_t>(P - 1), static_cast<size_t>(P),
                                          static_cast<size_t>(2 * P + 3), 1001});
            INFO(name << " " << params << ": " << st.message());
            CHECK(st.is_ok());
        }
    }
}

TEST_CASE("mtree on the B4-like graph", "[mtree]") {
    Topology b4;
    REQUIRE(load_graph_file(srcdir() + "/tests/topology/b4.json", &b4));
    CHECK(b4.links.size() == 19);
    const TopologyView v = view_of(b4);
    REQUIRE(v.nranks() == 12);
    const MTreeSolution s = solve(&v, 12);
    // Latencies in multiples of the shortest link's (8 ms), rounded.
    REQUIRE(s.graph.edges.size() == 19);
    for (const MTreeEdge& e : s.graph.edges)
        CHECK(e.q == static_cast<int>(std::lround(e.latency / 8e-3)));
    require_rates_and_blocks(s, "b4");
    REQUIRE(!s.trees.empty());
    // More than one tree, and more total rate than the best single tree.
    double total = 0, best = 0;
    for (const MTreeTree& t : s.trees) total += t.rate;
    for (const MTreeTree& t : mtree_select(s.graph, s.gost.trees, 1)) best = t.rate;
    CHECK(s.trees.size() >= 2);
    CHECK(total > best);
    require_valid(mtree_plan(&v, 12), "b4");
    // The same graph with four ranks per site.
    const TopologyView v4 = view_of(b4, 4);
    require_valid(mtree_plan(&v4, 48), "b4 x4");
}

TEST_CASE("mtree sends each chunk as one message", "[mtree]") {
    Topology b4;
    REQUIRE(load_graph_file(srcdir() + "/tests/topology/b4.json", &b4));
    // Four ranks per site: binomial transfers inside a site, trees between.
    const TopologyView v4 = view_of(b4, 4);
    const std::vector<int> host = v4.host_of_rank();
    for (const std::string params : {"k=2,chunks=4", "k=1,chunks=1", ""}) {
        const Plan plan = mtree_plan(&v4, 48, params);
        require_valid(plan, "b4 x4 " + params);  // matched ends agree on segment_blocks
        int between = 0, inside = 0;
        for (int r = 0; r < 48; ++r)
            for (const Step& st : plan.programs[static_cast<size_t>(r)].steps)
                for (const auto* list : {&st.sends, &st.recvs})
                    for (const Transfer& t : *list) {
                        INFO(params << ": rank " << r << " peer " << t.peer);
                        if (host[static_cast<size_t>(r)] == host[static_cast<size_t>(t.peer)]) {
                            CHECK(t.segment_blocks == 0);  // the plan-wide segment size
                            ++inside;
                        } else {
                            CHECK(t.segment_blocks >= 1);
                            CHECK(t.segment_blocks <= static_cast<int>(t.blocks.size()));
                            // One tree in one chunk: the whole vector.
                            if (params == "k=1,chunks=1") CHECK(t.segment_blocks == plan.nblocks);
                            ++between;
                        }
                    }
        CHECK(inside > 0);
        CHECK(between > 0);
    }
}

TEST_CASE("mtree errors name the vertex and the key", "[mtree]") {
    const char* split = R"({"genx_graph": 1,
      "classes": {"wan": {"rate": "10 Gbit/s", "latency": "10 ms"}},
      "hosts": ["a", "b", "c"],
      "links": [{"a": "a", "b": "b", "class": "wan"}]})";
    const TopologyView v = graph_view(split);
    Plan plan;
    Status st = generate("mtree", 3, ParamMap{}, &v, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("'c'") != std::string::npos);
    const TopologyView ok = graph_view(kFigure2);
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"k", "0"}, {"k", "x"}, {"k", "17"}, {"chunks", "65"}, {"chunks", "-1"},
             {"rho", "0"}, {"rho", "1.5"}, {"rho", "abc"}, {"bytes", "12Q"}, {"bytes", "0"}}) {
        st = generate("mtree", 4, ParamMap{{key, value}}, &ok, &plan);
        INFO(key << "=" << value << ": " << st.message());
        REQUIRE_FALSE(st);
        CHECK(st.message().find(key) != std::string::npos);
    }
    st = generate("mtree", 4, ParamMap{{"height", "3"}}, &ok, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("'height'") != std::string::npos);
    // The canonical params name the resolved defaults.
    REQUIRE(generate("mtree", 4, ParamMap{{"k", "2"}}, &ok, &plan));
    CHECK(plan.params == "bytes=67108864,k=2");
}

TEST_CASE("mtree is offered only with a topology and up to kWholePlanMaxRanks", "[mtree]") {
    const GeneratorInfo* g = find_generator("mtree");
    REQUIRE(g != nullptr);
    CHECK(g->uses_topology);
    const TopologyView v = preset_view("torus:4x4");
    CandidateContext ctx;
    ctx.nranks = 16;
    std::vector<std::string> out;
    g->candidates(ctx, &out);
    CHECK(out.empty());
    ctx.topology = &v;
    g->candidates(ctx, &out);
    CHECK(out == std::vector<std::string>{""});
    out.clear();
    ctx.nranks = kWholePlanMaxRanks + 1;
    g->candidates(ctx, &out);
    CHECK(out.empty());
}

TEST_CASE("the cost model prices a heterogeneous graph link by link", "[mtree][model]") {
    // A line A - B - C: A-B 1 GB/s and 1 ms, B-C 0.1 GB/s and 10 ms.
    const TopologyView v = graph_view(R"({"genx_graph": 1,
        "classes": {"fast": {"rate": "1 GB/s", "latency": "1 ms"},
                    "slow": {"rate": "100 MB/s", "latency": "10 ms"}},
        "hosts": ["A", "B", "C"],
        "links": [{"a": "A", "b": "B", "class": "fast"}, {"a": "B", "b": "C", "class": "slow"}]})");
    RankMap ranks;
    ranks.node = v.host_of_rank();
    ranks.direct = direct_network(v);
    REQUIRE(ranks.direct != nullptr);
    CHECK(ranks.direct->heterogeneous);
    const std::vector<int>& host = ranks.node;
    // C to A: B-C crossed from its b end, then A-B from its b end.
    std::vector<uint32_t> route;
    ranks.direct->route(host[2], host[0], &route);
    CHECK(route == std::vector<uint32_t>{(1u << 1) | 1u, (0u << 1) | 1u});
    route.clear();
    ranks.direct->route(host[0], host[2], &route);
    CHECK(route == std::vector<uint32_t>{0u << 1, 1u << 1});
    // inter's α and β price nothing here: every link's class is declared.
    ModelParams m;
    m.inter = LinkParams{5e-3, 1 / 1e6, 0, 0};
    m.intra = m.inter;
    m.host = HostParams{0, 0};
    RankGenerator gen;
    REQUIRE(prepare("ring", 3, {}, &gen));
    PlanModel pm;
    REQUIRE(PlanModel::build(gen, ranks, &pm));
    CHECK_FALSE(pm.quotient());
    // Every step of the ring (4 of them) sends a block on every link in
    // each direction (2 -> 0 crosses both), so each takes the slow link's
    // block time plus the two-hop route's latency.
    const size_t count = 3u << 20;
    const double block = static_cast<double>(count) / 3 * 4;
    const Prediction p = pm.predict(count, 4, m);
    REQUIRE(p.status);
    CHECK(p.seconds == Approx(4 * (11e-3 + block / 100e6)).epsilon(1e-9));
    CHECK(p.terms.alpha == Approx(4 * 11e-3).epsilon(1e-9));
    CHECK(p.coefficients.steps_inter == 0);
    CHECK(p.coefficients.route_seconds == Approx(p.seconds).epsilon(1e-9));
    // A class named in the model overrides the declared one.
    ModelParams named = m;
    named.classes["slow"] = LinkParams{20e-3, 1 / 50e6, 0, 0};
    CHECK(pm.predict(count, 4, named).seconds == Approx(4 * (21e-3 + block / 50e6)).epsilon(1e-9));
    // The same line with one class everywhere is uniform (and so keeps the
    // per-node estimate: inter's α per hop, β per byte).
    const TopologyView u = graph_view(R"({"genx_graph": 1,
        "classes": {"fast": {"rate": "1 GB/s", "latency": "1 ms"}},
        "hosts": ["A", "B", "C"],
        "links": [{"a": "A", "b": "B", "class": "fast"}, {"a": "B", "b": "C", "class": "fast"}]})");
    CHECK_FALSE(direct_network(u)->heterogeneous);
}

TEST_CASE("mtree over the leaf switches: lanes, rings and the leaves' trees", "[mtree][leaves]") {
    // (hosts per leaf, leaves, ranks per host): one leaf (no trees), one
    // host per leaf, two (the ring's two neighbours are one host), primes
    // and 2^k ± 1 rank counts (7, 17, 9, 15, 33, 45).
    struct Case {
        int B, L, ppn;
    };
    for (const Case& c : std::vector<Case>{{5, 1, 1}, {1, 7, 1}, {1, 17, 1}, {2, 2, 1}, {3, 3, 1}, {5, 3, 1},
                                           {3, 4, 2}, {2, 3, 3}, {11, 3, 1}, {5, 3, 3}, {4, 5, 1}}) {
        const TopologyView v = switch_tree(std::vector<int>(static_cast<size_t>(c.L), c.B), c.ppn);
        const int P = v.nranks();
        const std::string what = std::to_string(c.L) + " leaves of " + std::to_string(c.B) + " hosts x" +
                                 std::to_string(c.ppn) + " (P=" + std::to_string(P) + ")";
        MTreeParams mp;
        mp.over = MTreeOver::Leaves;
        const MTreeSolution s = solve(&v, P, mp);
        INFO(what);
        CHECK(s.lanes == c.B);
        CHECK(s.graph.n == c.L);
        CHECK(s.ring_steps == c.B - 1);
        CHECK(s.steps == 2 * s.intra_steps + 2 * (c.B - 1) + s.pipeline_steps);
        if (c.L > 1) require_rates_and_blocks(s, what);
        for (const std::string params : {"over=leaves", "over=leaves,chunks=7,k=3"}) {
            const Plan p = mtree_plan(&v, P, params);
            CHECK(p.params.find("over=leaves") != std::string::npos);
            require_valid(p, what + " " + params);
            const Status st = run_sum(p, {0, 1, static_cast<size_t>(P - 1), static_cast<size_t>(P),
                                          static_cast<size_t>(2 * P + 3), 1001});
            INFO(params << ": " << st.message());
            CHECK(st.is_ok());
        }
    }
}

TEST_CASE("mtree over the leaf switches: the leaf graph shares each up-link among the lanes",
          "[mtree][leaves]") {
    // Two leaves of 4 hosts under a 1 GB/s spine link: a lane's trees may
    // use a quarter of each up-link, its hosts' links whole.
    const TopologyView v = switch_tree({4, 4}, 1, 1e9);
    LeafLayout lay;
    REQUIRE(leaf_layout(&v, 8, "mtree", &lay));
    REQUIRE(lay.leaves() == 2);
    REQUIRE(lay.lanes() == 4);
    const auto& hosts = lay.hosts;
    const TopologyView lanes = lane_view(v, lay, 1.0 / 4);
    REQUIRE(lanes.validate() == "");
    REQUIRE(lanes.nranks() == 2);
    MTreeGraph g;
    REQUIRE(build_mtree_graph(&lanes, 2, &g));
    REQUIRE(g.n == 2);
    REQUIRE(hosts.size() == 2);
    CHECK(hosts[1].size() == 4);
    CHECK(hosts[1][2] == std::vector<int>{6});
    REQUIRE(g.edges.size() == 1);
    const MTreeEdge& e = g.edges[0];
    REQUIRE(e.res.size() == 4);  // host link, up-link, up-link, host link
    CHECK(g.capacity[static_cast<size_t>(e.res[0])] == Approx(1.25e9));
    CHECK(g.capacity[static_cast<size_t>(e.res[3])] == Approx(1.25e9));
    CHECK(g.capacity[static_cast<size_t>(e.res[1])] == Approx(1e9 / 4));
    CHECK(g.capacity[static_cast<size_t>(e.res[2])] == Approx(1e9 / 4));
    CHECK(e.latency == Approx(20e-6));
    // The trees' rate stays within a lane's share of the up-link.
    MTreeParams mp;
    mp.over = MTreeOver::Leaves;
    const MTreeSolution s = solve(&v, 8, mp);
    double total = 0;
    for (const MTreeTree& t : s.trees) total += t.rate;
    CHECK(total <= 1e9 / 4 * (1 + 1e-9));
    CHECK(total > 0);
}

TEST_CASE("mtree over the leaf switches: errors name what differs", "[mtree][leaves]") {
    Plan plan;
    const TopologyView ragged = switch_tree({3, 2});
    Status st = generate("mtree", 5, ParamMap{{"over", "leaves"}}, &ragged, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("'leaf0' has 3, 'leaf1' has 2") != std::string::npos);
    const TopologyView torus = preset_view("torus:3x3");
    st = generate("mtree", 9, ParamMap{{"over", "leaves"}}, &torus, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("needs a switch tree") != std::string::npos);
    st = generate("mtree", 5, ParamMap{{"over", "racks"}}, &ragged, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("over 'racks' must be hosts or leaves") != std::string::npos);
    // Over the hosts, beyond kMTreeMaxHosts: refused, naming over=leaves.
    const TopologyView wide = switch_tree(std::vector<int>(33, 16));
    st = generate("mtree", wide.nranks(), ParamMap{{"over", "hosts"}}, &wide, &plan);
    REQUIRE_FALSE(st);
    CHECK(st.message().find("528 hosts") != std::string::npos);
    CHECK(st.message().find("over=leaves") != std::string::npos);
}

TEST_CASE("mtree beyond kMTreeMaxHosts hosts goes over the leaf switches, to 10^4 ranks",
          "[mtree][leaves][scale]") {
    // 33 leaves of 16 hosts (528 > 512): the default is over=leaves, and
    // the whole plan passes the checker.
    const TopologyView wide = switch_tree(std::vector<int>(33, 16));
    const Plan p = mtree_plan(&wide, wide.nranks());
    CHECK(p.params.find("over=leaves") != std::string::npos);
    require_valid(p, "33 leaves of 16");
    // tree:100x100: 10^4 ranks; a rank's program comes from its host, leaf
    // and lane alone.
    const TopologyView big = preset_view("tree:100x100");
    REQUIRE(big.nranks() == 10000);
    const RankGenerator gen = prepared_mtree(big);
    CHECK(gen.header.params.find("over=leaves") != std::string::npos);
    CHECK(gen.header.nblocks % 100 == 0);
    for (int r : {0, 4321, 9999}) {
        Program prog;
        gen.emit(r, &prog);
        INFO("rank " << r);
        // 99 reduce-scatter and 99 all-gather steps, each one send and one
        // receive of a lane chunk, and the trees' steps between.
        REQUIRE(prog.steps.size() >= 198u);
        int ring_sends = 0;
        for (size_t i = 0; i < 99; ++i) ring_sends += static_cast<int>(prog.steps[i].sends.size());
        CHECK(ring_sends == 99);
        CHECK(prog.steps[0].recvs.size() == 1u);
        CHECK(prog.steps[0].sends[0].blocks.size() == static_cast<size_t>(gen.header.nblocks / 100));
    }
}

namespace {

// GBST's trees and rates, compared field by field.
void require_same_trees(const std::vector<MTreeTree>& a, const std::vector<MTreeTree>& b,
                        const std::string& what) {
    INFO(what);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("tree " << i);
        CHECK(a[i].edges == b[i].edges);
        CHECK(a[i].root == b[i].root);
        CHECK(a[i].parent == b[i].parent);
        CHECK(a[i].height == b[i].height);
        CHECK(a[i].qheight == b[i].qheight);
        CHECK(a[i].rate == b[i].rate);
    }
}

}  // namespace

TEST_CASE("MinBitset finds the least member as a sorted set does", "[mtree][scale]") {
    // Sizes that end a word, span one level, and need three.
    std::mt19937 rng(7);
    for (size_t n : {size_t{1}, size_t{64}, size_t{65}, size_t{4096}, size_t{4097}, size_t{300000}}) {
        MinBitset b(n);
        std::set<size_t> ref;
        std::uniform_int_distribution<size_t> pick(0, n - 1);
        for (int op = 0; op < 20000; ++op) {
            const size_t i = pick(rng);
            if (rng() % 3 == 0) {
                b.erase(i);
                ref.erase(i);
            } else {
                b.insert(i);
                ref.insert(i);
            }
            REQUIRE(b.size() == ref.size());
            REQUIRE(b.empty() == ref.empty());
            if (!ref.empty()) REQUIRE(b.first() == *ref.begin());
        }
        while (!ref.empty()) {  // drain in order
            REQUIRE(b.first() == *ref.begin());
            b.erase(*ref.begin());
            ref.erase(ref.begin());
        }
        CHECK(b.empty());
    }
}

TEST_CASE("GBST by its frontier queue grows the paper's scan's trees on direct networks", "[mtree][scale]") {
    // Uniform tori and meshes (ties everywhere: the first edge must win),
    // and random graphs of distinct rates and latencies, at height bounds
    // from ones that fail to the unbounded one.
    std::vector<std::pair<std::string, MTreeGraph>> graphs;
    for (const char* preset : {"torus:4x4", "torus:5x7", "mesh:6x6", "torus:8x8", "mesh:3x9"}) {
        const TopologyView v = preset_view(preset);
        MTreeGraph g;
        REQUIRE(build_mtree_graph(&v, v.nranks(), &g));
        graphs.push_back({preset, std::move(g)});
    }
    std::mt19937 rng(20261130);
    for (int n : {5, 9, 17, 33, 65}) {
        const TopologyView v = graph_view(random_graph_json(rng, n, n));
        MTreeGraph g;
        REQUIRE(build_mtree_graph(&v, n, &g));
        graphs.push_back({"random n=" + std::to_string(n), std::move(g)});
    }
    MTreeOptions heap, scan;
    scan.scan_every_edge = true;
    int compared = 0, memo_checked = 0;
    size_t replayed = 0;
    for (const auto& [name, g] : graphs) {
        int qmax = 1;
        for (const MTreeEdge& e : g.edges) qmax = std::max(qmax, e.q);
        const int H0 = (g.n - 1) * qmax;
        int widest = 0;
        const std::vector<MTreeTree> unbounded = mtree_gbst(g, H0, heap, &widest);
        REQUIRE_FALSE(unbounded.empty());
        // Runs sharing a memo (GbstMemo) replay earlier runs' rounds, up
        // the bounds here and down them in the second memo.
        GbstMemo up, down;
        const std::vector<int> bounds{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, H0 / 2, H0};
        for (auto H = bounds.rbegin(); H != bounds.rend(); ++H)
            if (*H >= 1 && *H <= H0) mtree_gbst(g, *H, heap, nullptr, &down);
        for (int H : bounds) {
            if (H < 1 || H > H0) continue;
            int w = 0;
            const std::vector<MTreeTree> a = mtree_gbst(g, H, heap, &w);
            require_same_trees(a, mtree_gbst(g, H, scan), name + " H=" + std::to_string(H));
            require_same_trees(a, mtree_gbst(g, H, heap, nullptr, &up), name + " H=" + std::to_string(H) + " (memo up)");
            require_same_trees(a, mtree_gbst(g, H, heap, nullptr, &down), name + " H=" + std::to_string(H) + " (memo down)");
            ++compared;
            // A bound the unbounded run's trees never reached grows them again.
            if (2L * H >= widest) {
                require_same_trees(a, unbounded, name + " H=" + std::to_string(H) + " (memo)");
                ++memo_checked;
            }
        }
        replayed += up.replayed + down.replayed;
        MTreeGost x, y;
        REQUIRE(mtree_gost(g, heap, &x));
        REQUIRE(mtree_gost(g, scan, &y));
        CHECK(x.HU == y.HU);
        require_same_trees(x.trees, y.trees, name + " gost");
        // ITH as the paper runs it, every bound's GBST by scan (mtree_gost
        // skips the bounds the unbounded trees never came near).
        double total = 0;
        std::vector<MTreeTree> best = mtree_gbst(g, H0, scan);
        for (const MTreeTree& t : best) total += t.rate;
        int lo = 1, hi = H0;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            std::vector<MTreeTree> ts = mtree_gbst(g, mid, scan);
            double sum = 0;
            for (const MTreeTree& t : ts) sum += t.rate;
            if (!ts.empty() && sum >= heap.rho * total * (1 - 1e-12)) {
                hi = mid;
                best = std::move(ts);
            } else {
                lo = mid + 1;
            }
        }
        CHECK(x.HU == hi);
        require_same_trees(x.trees, best, name + " ITH without skipping");
    }
    CHECK(compared > 80);
    CHECK(memo_checked > 10);
    CHECK(replayed > 100);
}

TEST_CASE("mtree_select's subsets solve the LP mtree_rates builds", "[mtree][scale]") {
    // Trees of thousands of edges, so the LPs have more than
    // kMTreeMergeRows rows and merge them, which mtree_select does from
    // resources grouped once across the candidates: a torus, and a random
    // graph of many rates, where merged rows' capacities differ.
    std::mt19937 rng(20261201);
    for (const TopologyView& v : {preset_view("torus:64x64"), graph_view(random_graph_json(rng, 5000, 1000))}) {
        MTreeGraph g;
        REQUIRE(build_mtree_graph(&v, v.nranks(), &g));
        MTreeGost gost;
        REQUIRE(mtree_gost(g, MTreeOptions{}, &gost));
        REQUIRE(gost.trees.size() >= 2);
        for (int k : {1, 2, 4, 8}) {
            const std::vector<MTreeTree> sel = mtree_select(g, gost.trees, k);
            REQUIRE_FALSE(sel.empty());
            CHECK(sel.size() <= static_cast<size_t>(k));
            const std::vector<double> rates = mtree_rates(g, sel);
            REQUIRE(rates.size() == sel.size());
            for (size_t i = 0; i < sel.size(); ++i) {
                INFO(v.nranks() << " hosts, k=" << k << ", tree " << i);
                CHECK(sel[i].rate > 0);
                CHECK(sel[i].rate == rates[i]);
            }
        }
    }
}

TEST_CASE("mtree spans the hosts of a 10^4-host torus", "[mtree][scale]") {
    // Beyond kMTreeMaxHosts on a direct network: GBST by its frontier queue, and each
    // rank's events built when its program is.
    const TopologyView big = preset_view("torus:100x100");
    REQUIRE(big.nranks() == 10000);
    RankGenerator gen = prepared_mtree(big);
    CHECK(gen.header.params.find("over=leaves") == std::string::npos);
    SampleOptions so;
    so.samples = 6;
    const CheckResult r = check_sampled(gen, so);
    INFO(r.message);
    CHECK(r.ok);
    // Above the limit the error says so.
    const TopologyView over = preset_view("torus:101x100");
    CHECK_FALSE(prepare("mtree", 10100, ParamMap{}, &over, &gen));
}
