// Graph topologies (topology/graph.hpp: torus and mesh presets, graph
// files), the network graph (plan/netgraph.hpp) and MultiTree
// (plan/multitree.hpp): the paper's 2x2 mesh worked example, the step
// counts of Algorithm 1 on tori and meshes, the construction's invariants,
// checker proofs on many graphs and P, and real sums on the loopback
// transport.
#include <catch2/catch.hpp>

#include "sum_check.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "plan/checker.hpp"
#include "plan/multitree.hpp"
#include "plan/netgraph.hpp"
#include "plan/registry.hpp"
#include "plan/stats.hpp"
#include "plan/svg.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"
#include "tuning/cost_model.hpp"

using namespace genx;

namespace {

// The view of a topology with `per_host` consecutive ranks on each host,
// hosts in tree order (all of them unless `hosts` is smaller).
TopologyView view_of(const Topology& t, int per_host = 1, int hosts = -1) {
    std::vector<std::string> names;
    const std::vector<int> hs = t.hosts();
    const int n = hosts < 0 ? static_cast<int>(hs.size()) : hosts;
    for (int h = 0; h < n; ++h)
        for (int k = 0; k < per_host; ++k) names.push_back(t.nodes[static_cast<size_t>(hs[static_cast<size_t>(h)])].name);
    TopologyView v;
    const Status st = to_view(t, names, &v);
    INFO(st.message());
    REQUIRE(st);
    return v;
}

TopologyView preset_view(const std::string& name, int per_host = 1) {
    Topology t;
    const Status st = topology_preset(name, &t);
    INFO(name << ": " << st.message());
    REQUIRE(st);
    return view_of(t, per_host);
}

MultiTreeSchedule schedule_of(const TopologyView* v, int P) {
    NetGraph g;
    REQUIRE(build_net_graph(v, P, &g));
    MultiTreeSchedule s;
    const Status st = build_multitree(g, &s);
    INFO(st.message());
    REQUIRE(st);
    return s;
}

Plan multitree_plan(const TopologyView* v, int P) {
    Plan plan;
    const Status st = generate("multitree", P, {}, v, &plan);
    INFO(st.message());
    REQUIRE(st);
    return plan;
}

void require_valid(const Plan& plan, const std::string& what) {
    const CheckResult res = check_plan(plan);
    INFO(what << " P=" << plan.nranks << ": " << res.message);
    REQUIRE(res.ok);
}


// The construction's invariants (multitree.hpp): every tree spans the
// ranks from its own root, a parent joined before its child, no arc
// carries more tree edges in one step than it has units, and each path
// runs from the parent to the child through forwarders only.
void require_invariants(const NetGraph& g, const MultiTreeSchedule& s, const std::string& what) {
    INFO(what);
    const int P = g.nranks;
    std::vector<std::map<int, int>> joined(static_cast<size_t>(P));  // tree -> rank -> step
    for (int i = 0; i < P; ++i) joined[static_cast<size_t>(i)][i] = 0;
    std::map<std::pair<int, int>, int> use;  // (step, arc) -> edges
    REQUIRE(s.edges.size() == static_cast<size_t>(P) * static_cast<size_t>(P - 1));
    for (const MultiTreeEdge& e : s.edges) {
        auto& tree = joined[static_cast<size_t>(e.tree)];
        REQUIRE(tree.count(e.parent) == 1);
        REQUIRE(tree.at(e.parent) < e.step);  // the parent joined in an earlier step
        REQUIRE(tree.count(e.child) == 0);    // each rank joins each tree once
        tree[e.child] = e.step;
        REQUIRE(e.step >= 1);
        REQUIRE(e.step <= s.steps);
        REQUIRE_FALSE(e.arcs.empty());
        int at = e.parent;
        for (size_t k = 0; k < e.arcs.size(); ++k) {
            const NetArc& a = g.arcs[static_cast<size_t>(e.arcs[k])];
            REQUIRE(a.from == at);
            if (k + 1 < e.arcs.size()) REQUIRE(g.forwards(a.to));
            at = a.to;
            ++use[{e.step, e.arcs[k]}];
        }
        REQUIRE(at == e.child);
    }
    for (const auto& [key, n] : use) REQUIRE(n <= g.arcs[static_cast<size_t>(key.second)].units);
    for (int i = 0; i < P; ++i) REQUIRE(joined[static_cast<size_t>(i)].size() == static_cast<size_t>(P));
}

}  // namespace

TEST_CASE("[graph] torus and mesh presets: hosts in grid order, wrap links, one link per pair of a 2-dimension", "[graph]") {
    Topology t;
    REQUIRE(topology_preset("torus:4x3", &t));
    CHECK(t.direct);
    CHECK(t.grid == std::vector<int>{4, 3});
    CHECK(t.grid_wrap);
    CHECK(t.hosts().size() == 12);
    CHECK(t.links.size() == 24);  // 2 links per host on a torus of sides > 2
    Topology m;
    REQUIRE(topology_preset("mesh:4x3", &m));
    CHECK(m.links.size() == 3 * 3 + 4 * 2);
    Topology two;
    REQUIRE(topology_preset("torus:2x2", &two));
    CHECK(two.links.size() == 4);  // the wrap link would join the same pair again
    Topology ring;
    REQUIRE(topology_preset("torus:5", &ring));
    CHECK(ring.links.size() == 5);
    Topology cube;
    REQUIRE(topology_preset("torus:3x3x3", &cube));
    CHECK(cube.links.size() == 81);
    CHECK(t.validate().empty());
    // The first host's links: (1,0) and (3,0) along x, (0,1) and (0,2) along y.
    std::set<std::string> n0;
    for (const GraphLink& l : t.links) {
        const std::string a = t.nodes[static_cast<size_t>(l.a)].name, b = t.nodes[static_cast<size_t>(l.b)].name;
        if (a == "n0") n0.insert(b);
        if (b == "n0") n0.insert(a);
    }
    CHECK(n0 == std::set<std::string>{"n1", "n3", "n4", "n8"});
    // The text names the grid and lists links; fingerprints tell torus from mesh.
    CHECK(t.to_text().find("torus 4x3") != std::string::npos);
    CHECK(t.to_text().find("n0 -- n1") != std::string::npos);
    CHECK(network_view(t).fingerprint() != network_view(m).fingerprint());
    for (const char* bad : {"torus:", "torus:4x", "torus:0x4", "mesh:2x2x2x2", "torus:axb", "ring:4"}) {
        Topology x;
        const Status st = topology_preset(bad, &x);
        INFO(bad);
        CHECK_FALSE(st);
        CHECK(st.message().find("preset") != std::string::npos);
    }
}

TEST_CASE("[graph] graph files: classes, units, intra-host class; errors name the field", "[graph]") {
    const std::string good = R"({"genx_graph": 1,
        "classes": {"wan": {"rate": "10 Gbit/s", "latency": "20 ms", "cross_dc": true},
                    "lan": {"rate": 1e9, "latency": 1e-5}},
        "hosts": ["a", "b", "c"],
        "links": [{"a": "a", "b": "b", "class": "wan", "units": 2},
                  {"a": "b", "b": "c", "class": "lan"}],
        "intra_host": {"rate": "20 GB/s", "latency": "1 us"}})";
    Topology t;
    const Status st = parse_graph(good, "g.json", &t);
    INFO(st.message());
    REQUIRE(st);
    CHECK(t.direct);
    REQUIRE(t.links.size() == 2);
    CHECK(t.links[0].units == 2);
    CHECK(t.classes[static_cast<size_t>(t.links[0].cls)].cross_dc);
    CHECK(t.classes[static_cast<size_t>(t.links[0].cls)].rate == Approx(1.25e9));
    CHECK(t.classes[static_cast<size_t>(t.intra_class)].rate == Approx(20e9));
    const TopologyView v = view_of(t, 2);
    CHECK(v.direct);
    CHECK(v.links.size() == 2);
    CHECK(v.nranks() == 6);
    CHECK(v.validate().empty());

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"genx_graph\": 1,\n \"hosts\": [\"a\",]}", "g.json:2: not valid JSON"},
        {R"({"genx_graph": 2, "hosts": ["a"], "links": []})", "\"genx_graph\": must be 1"},
        {R"({"genx_graph": 1, "hosts": [], "links": []})", "hosts: must be a non-empty array"},
        {R"({"genx_graph": 1, "hosts": ["a", "a"], "links": []})", "hosts[1]: 'a' is listed twice"},
        {R"({"genx_graph": 1, "hosts": ["a", "b"], "links": [{"a": "a", "b": "x", "class": "c"}]})",
         "links[0].b: 'x' is not in hosts"},
        {R"({"genx_graph": 1, "hosts": ["a", "b"], "links": [{"a": "a", "b": "b", "class": "c"}]})",
         "links[0].class: no class named 'c'"},
        {R"({"genx_graph": 1, "classes": {"c": {"rate": 1}}, "hosts": ["a", "b"],
             "links": [{"a": "a", "b": "b", "class": "c", "units": 0}]})",
         "links[0].units: must be an integer in 1..1024"},
        {R"({"genx_graph": 1, "classes": {"c": {"rate": 1}}, "hosts": ["a", "b"],
             "links": [{"a": "a", "b": "b", "class": "c"}, {"a": "b", "b": "a", "class": "c"}]})",
         "links[1]: a second link between b and a"},
        {R"({"genx_graph": 1, "classes": {"c": {"latency": "1 ms"}}, "hosts": ["a"], "links": []})",
         "classes.c: needs a rate above 0"},
        {R"({"genx_graph": 1, "classes": {"c": {"rate": "fast"}}, "hosts": ["a"], "links": []})",
         "classes.c.rate: rate 'fast'"},
        {R"({"genx_graph": 1, "hosts": ["a"], "links": [], "switches": []})", "\"switches\": unknown key"},
    };
    for (const auto& [text, want] : bad) {
        Topology x;
        const Status s = parse_graph(text, "g.json", &x);
        INFO(text << " -> " << s.message());
        CHECK_FALSE(s);
        CHECK(s.message().find(want) != std::string::npos);
    }
}

TEST_CASE("[graph] the network graph: grid preference order, switch ports, uplink units", "[graph]") {
    // 2x2 mesh: rank = host = y*2 + x; arcs out of rank 0 prefer y (to 2)
    // over x (to 1), as the paper's "Y then X".
    const TopologyView mesh = preset_view("mesh:2x2");
    NetGraph g;
    REQUIRE(build_net_graph(&mesh, 4, &g));
    CHECK(g.nvertices() == 4);
    CHECK(g.arcs.size() == 8);
    REQUIRE(g.out[0].size() == 2);
    CHECK(g.arcs[static_cast<size_t>(g.out[0][0])].to == 2);
    CHECK(g.arcs[static_cast<size_t>(g.out[0][1])].to == 1);
    // On a torus of side 4: +y, -y, +x, -x.
    const TopologyView torus = preset_view("torus:4x4");
    REQUIRE(build_net_graph(&torus, 16, &g));
    std::vector<int> to;
    for (int a : g.out[5]) to.push_back(g.arcs[static_cast<size_t>(a)].to);
    CHECK(to == std::vector<int>{9, 1, 6, 4});
    CHECK(net_distance(g, 0, 10, true) == 4);
    CHECK(net_distance(g, 0, 3, true) == 1);
    CHECK(net_distance(g, 0, 10) == -1);  // ranks never forward
    // A tree of 2 leaves of 4 hosts, 4:1 oversubscribed: each uplink is
    // one unit, each host link one; ranks reach each other through switches.
    const TopologyView tree = preset_view("tree:2x4/4");
    REQUIRE(build_net_graph(&tree, 8, &g));
    CHECK(g.nvertices() == 8 + 3);
    for (const NetArc& a : g.arcs) CHECK(a.units == 1);
    CHECK(net_distance(g, 0, 1) == 2);
    CHECK(net_distance(g, 0, 4) == 4);
    // Non-blocking: the uplink has the units of its four hosts.
    const TopologyView nb = preset_view("tree:2x4");
    REQUIRE(build_net_graph(&nb, 8, &g));
    int max_units = 0;
    for (const NetArc& a : g.arcs) max_units = std::max(max_units, a.units);
    CHECK(max_units == 4);
    // Two ranks per host: the host forwards between them.
    const TopologyView pp = preset_view("switch:3", 2);
    REQUIRE(build_net_graph(&pp, 6, &g));
    CHECK(g.nvertices() == 6 + 1 + 3);
    CHECK(net_distance(g, 0, 1) == 2);
    CHECK(net_distance(g, 0, 2) == 4);
    // Without a view: one switch.
    REQUIRE(build_net_graph(nullptr, 5, &g));
    CHECK(g.nvertices() == 6);
    CHECK(net_distance(g, 1, 4) == 2);
}

TEST_CASE("multitree reproduces the paper's 2x2 mesh example (Figures 3-5)", "[multitree]") {
    const TopologyView mesh = preset_view("mesh:2x2");
    NetGraph g;
    REQUIRE(build_net_graph(&mesh, 4, &g));
    MultiTreeSchedule s;
    REQUIRE(build_multitree(g, &s));
    CHECK(s.steps == 2);
    REQUIRE(s.edges.size() == 12);
    // Time step 1 uses all 8 directed links; the last is 3 -> 2 in tree 3.
    int first = 0;
    for (const MultiTreeEdge& e : s.edges) first += e.step == 1;
    CHECK(first == 8);
    CHECK(std::make_tuple(s.edges[7].tree, s.edges[7].parent, s.edges[7].child, s.edges[7].step) ==
          std::make_tuple(3, 3, 2, 1));
    // Every tree edge (tree, parent, child, step) of Figure 5's schedule tables.
    std::set<std::tuple<int, int, int, int>> got, want = {
        {0, 0, 1, 1}, {0, 0, 2, 1}, {0, 2, 3, 2},  //
        {1, 1, 0, 1}, {1, 1, 3, 1}, {1, 3, 2, 2},  //
        {2, 2, 0, 1}, {2, 2, 3, 1}, {2, 0, 1, 2},  //
        {3, 3, 1, 1}, {3, 3, 2, 1}, {3, 1, 0, 2}};
    for (const MultiTreeEdge& e : s.edges) got.insert({e.tree, e.parent, e.child, e.step});
    CHECK(got == want);
    // The plan: reduce-scatter in steps 0-1, all-gather in steps 2-3.  Node
    // 0 sends its tree-3 partial to 1 first (a leaf of tree 3 at step 1),
    // and its tree-2 partial to 2 only after folding in 1's.
    const Plan p = multitree_plan(&mesh, 4);
    require_valid(p, "2x2 mesh");
    REQUIRE(p.max_steps() == 4);
    const Program& n0 = p.programs[0];
    REQUIRE(n0.steps[0].sends.size() == 1);
    CHECK(n0.steps[0].sends[0].peer == 1);
    CHECK(n0.steps[0].sends[0].blocks == std::vector<int>{3});
    CHECK(n0.steps[0].recvs.size() == 1);  // 1's tree-2 partial
    CHECK(n0.steps[0].recvs[0].peer == 1);
    CHECK(n0.steps[0].recvs[0].blocks == std::vector<int>{2});
    bool sends_tree2_to_2 = false;
    for (const Transfer& t : n0.steps[1].sends)
        sends_tree2_to_2 = sends_tree2_to_2 || (t.peer == 2 && t.blocks == std::vector<int>{2});
    CHECK(sends_tree2_to_2);
    // All-gather: node 0 is tree 0's root and sends block 0 to 1 and 2 at step 2.
    std::set<int> roots_to;
    for (const Transfer& t : n0.steps[2].sends)
        if (t.blocks == std::vector<int>{0}) roots_to.insert(t.peer);
    CHECK(roots_to == std::set<int>{1, 2});
}

TEST_CASE("multitree step counts on tori and meshes (Algorithm 1, root-ID turns, Y then X)", "[multitree]") {
    // tot_t per phase; tori near the lower bound max(diameter,
    // ceil(N(N-1)/directed links)), meshes far from it (the paper warns).
    const std::vector<std::tuple<std::string, int, int>> cases = {
        {"mesh:2x2", 4, 2}, {"torus:4x4", 16, 5}, {"torus:8x8", 64, 17},
        {"mesh:4x4", 16, 10}, {"mesh:8x8", 64, 32}, {"torus:16x16", 256, 64},
    };
    for (const auto& [name, P, steps] : cases) {
        const TopologyView v = preset_view(name);
        NetGraph g;
        REQUIRE(build_net_graph(&v, P, &g));
        const MultiTreeSchedule s = schedule_of(&v, P);
        INFO(name);
        CHECK(s.steps == steps);
        int diameter = 0;
        for (int a = 0; a < P; a += std::max(1, P / 8))
            for (int b = 0; b < P; ++b) diameter = std::max(diameter, net_distance(g, a, b, true));
        const long bound = (static_cast<long>(P) * (P - 1) + static_cast<long>(g.arcs.size()) - 1) /
                           static_cast<long>(g.arcs.size());
        CHECK(s.steps >= std::max<long>(diameter, bound));
        if (P <= 64) require_invariants(g, s, name);
    }
    // The issue's target: on a 4x4 torus far fewer steps than ring's 30.
    const TopologyView t44 = preset_view("torus:4x4");
    const Plan p = multitree_plan(&t44, 16);
    CHECK(p.max_steps() <= 15);
}

TEST_CASE("multitree on switches: P - 1 steps per phase, same-switch partners first", "[multitree]") {
    for (int P : {2, 3, 5, 8, 13}) {
        const MultiTreeSchedule s = schedule_of(nullptr, P);
        CHECK(s.steps == P - 1);
    }
    // Non-blocking switch trees: P - 1, the paper's "same number of steps"
    // as the ring on fat trees.
    for (const auto& [name, P] : std::vector<std::pair<std::string, int>>{{"tree:2x4", 8}, {"tree:4x4", 16}, {"tree:8x8", 64}}) {
        const TopologyView v = preset_view(name);
        INFO(name);
        CHECK(schedule_of(&v, P).steps == P - 1);
    }
    // 4:1 oversubscribed uplinks of one unit: every tree must cross, one
    // tree edge per step and direction, and the greedy needs more steps
    // than the ring's 7 (the cost model prices that; the selector then
    // keeps the ring).
    const TopologyView tree = preset_view("tree:2x4/4");
    NetGraph g;
    REQUIRE(build_net_graph(&tree, 8, &g));
    const MultiTreeSchedule s = schedule_of(&tree, 8);
    require_invariants(g, s, "tree:2x4/4");
    CHECK(s.steps > 7);
    // In the first step, each rank's first child is on its own leaf switch.
    std::set<int> seen_tree;
    for (const MultiTreeEdge& e : s.edges) {
        if (e.step != 1 || !seen_tree.insert(e.tree).second) continue;
        CHECK(e.parent / 4 == e.child / 4);
        CHECK(e.arcs.size() == 2);
    }
    CHECK(seen_tree.size() == 8);
    // The one-unit uplink carries one tree edge per step each way.
    std::map<int, int> up;
    for (const MultiTreeEdge& e : s.edges)
        if (e.parent / 4 == 0 && e.child / 4 == 1) ++up[e.step];
    CHECK(up.size() >= 4);  // four trees rooted on leaf 0 cross, in different steps
    for (const auto& [step, n] : up) CHECK(n == 1);
}

TEST_CASE("multitree passes the checker on tori, meshes, switch trees and random graphs", "[multitree][check]") {
    std::vector<std::string> presets = {"torus:2x2", "torus:2x3", "torus:3x3", "torus:3x5", "torus:5x7",
                                        "torus:7x7", "torus:4x8", "torus:8x8", "mesh:1x2", "mesh:3x4",
                                        "mesh:5x5", "mesh:6x6", "torus:5", "torus:7", "torus:17",
                                        "torus:2x2x2", "torus:3x3x3", "mesh:2x3x4", "switch:1",
                                        "switch:2", "switch:3", "switch:9", "switch:17", "switch:31",
                                        "switch:33", "tree:2x4", "tree:3x5/2", "tree:4x4/4"};
    for (const std::string& name : presets) {
        const TopologyView v = preset_view(name);
        const int P = v.nranks();
        NetGraph g;
        REQUIRE(build_net_graph(&v, P, &g));
        require_invariants(g, schedule_of(&v, P), name);
        require_valid(multitree_plan(&v, P), name);
    }
    // Several ranks per host: hosts forward between their ranks.
    for (const std::string& name : {std::string("torus:3x3"), std::string("switch:3"), std::string("tree:2x3")}) {
        const TopologyView v = preset_view(name, 3);
        require_valid(multitree_plan(&v, v.nranks()), name + " x3 ranks");
    }
    // No topology: one switch, any P (primes and 2^k +- 1).
    for (int P : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33})
        require_valid(multitree_plan(nullptr, P), "no topology");
    // Random connected graphs with multi-unit links.
    std::mt19937 rng(20261126);
    for (int iter = 0; iter < 40; ++iter) {
        const int n = std::uniform_int_distribution<int>(2, 24)(rng);
        std::string text = R"({"genx_graph": 1, "classes": {"c": {"rate": "10 Gbit/s", "latency": "1 ms"}}, "hosts": [)";
        for (int h = 0; h < n; ++h) text += (h ? ",\"s" : "\"s") + std::to_string(h) + "\"";
        text += "], \"links\": [";
        std::set<std::pair<int, int>> have;
        std::string links;
        auto add = [&](int a, int b) {
            if (a == b || !have.insert({std::min(a, b), std::max(a, b)}).second) return;
            links += std::string(links.empty() ? "" : ",") + "{\"a\": \"s" + std::to_string(a) +
                     "\", \"b\": \"s" + std::to_string(b) + "\", \"class\": \"c\", \"units\": " +
                     std::to_string(std::uniform_int_distribution<int>(1, 3)(rng)) + "}";
        };
        for (int h = 1; h < n; ++h) add(h, std::uniform_int_distribution<int>(0, h - 1)(rng));  // spanning
        const int extra = std::uniform_int_distribution<int>(0, n)(rng);
        for (int k = 0; k < extra; ++k)
            add(std::uniform_int_distribution<int>(0, n - 1)(rng), std::uniform_int_distribution<int>(0, n - 1)(rng));
        text += links + "]}";
        Topology t;
        const Status st = parse_graph(text, "random.json", &t);
        INFO(text << ": " << st.message());
        REQUIRE(st);
        const int per = 1 + iter % 2;
        const TopologyView v = view_of(t, per);
        NetGraph g;
        REQUIRE(build_net_graph(&v, v.nranks(), &g));
        const std::string what = "random graph " + std::to_string(iter);
        require_invariants(g, schedule_of(&v, v.nranks()), what);
        require_valid(multitree_plan(&v, v.nranks()), what);
    }
}

TEST_CASE("multitree is bandwidth optimal and computes sums on the loopback transport", "[multitree][loopback]") {
    for (const std::string& name : {std::string("torus:3x3"), std::string("mesh:2x3"), std::string("tree:2x3/3"),
                                    std::string("torus:2x2x2")}) {
        const TopologyView v = preset_view(name);
        const Plan p = multitree_plan(&v, v.nranks());
        const size_t P = static_cast<size_t>(p.nranks);
        // Every block crosses P - 1 tree edges per phase: each rank sends
        // 2(P-1)/P of the vector, as the ring does.
        size_t blocks_sent = 0;
        for (const Program& prog : p.programs)
            for (const Step& step : prog.steps)
                for (const Transfer& t : step.sends) blocks_sent += t.blocks.size();
        CHECK(blocks_sent == 2 * P * (P - 1));
        const PlanStats st = compute_stats(p, 64 * P, 8);
        CHECK(st.max_bytes_sent_per_rank >= 2 * (P - 1) * 64 * 8);
        const Status s = run_sum(p, {0, 1, P - 1, P, 2 * P + 3, 1001});
        INFO(name << ": " << s.message());
        CHECK(s);
    }
    const TopologyView v = preset_view("switch:3", 2);
    const Status s = run_sum(multitree_plan(&v, 6), {0, 5, 6, 77});
    INFO(s.message());
    CHECK(s);
}

TEST_CASE("multitree errors: a rank nothing reaches, too many ranks; gentree refuses direct networks", "[multitree]") {
    Topology t;
    REQUIRE(parse_graph(R"({"genx_graph": 1, "classes": {"c": {"rate": 1e9}}, "hosts": ["a", "b", "c"],
                           "links": [{"a": "a", "b": "b", "class": "c"}]})",
                        "split.json", &t));
    const TopologyView v = view_of(t);
    Plan p;
    Status st = generate("multitree", 3, {}, &v, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("rank 2 cannot be reached from rank 0") != std::string::npos);
    st = generate("multitree", kMultiTreeMaxRanks + 1, {}, nullptr, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("at most") != std::string::npos);
    const TopologyView torus = preset_view("torus:3x3");
    st = generate("gentree", 9, {}, &torus, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("direct network") != std::string::npos);
    // The selector offers multitree only where a topology is known, and
    // gentree not on a direct network.
    std::vector<std::string> c;
    multitree_candidates(CandidateContext{9, 1, 0, nullptr}, &c);
    CHECK(c.empty());
    multitree_candidates(CandidateContext{9, 1, 0, &torus}, &c);
    CHECK(c == std::vector<std::string>{"", "order=height", "trees=translate"});
    const GeneratorInfo* gt = find_generator("gentree");
    REQUIRE(gt != nullptr);
    std::vector<std::string> g;
    gt->candidates(CandidateContext{9, 1, 0, &torus}, &g);
    CHECK(g.empty());
}

TEST_CASE("the cost model prices a direct network one link per peer, and the selector picks multitree on a torus", "[multitree][model]") {
    const TopologyView torus = preset_view("torus:4x4");
    ModelParams m;
    m.inter.alpha = 150e-9;
    m.inter.beta = 1 / 16e9;
    m.inter.w_t = 64;
    m.intra = m.inter;
    RankGenerator gen;
    REQUIRE(prepare("multitree", 16, {}, &torus, &gen));
    RankMap direct;
    direct.node = torus.host_of_rank();
    direct.direct = direct_network(torus);
    REQUIRE(direct.direct != nullptr);
    CHECK(direct.direct->hop(torus.host_of_rank()[0], torus.host_of_rank()[10]) == 4);
    CHECK(direct.direct->units[0] == 4);
    PlanModel pm;
    REQUIRE(PlanModel::build(gen, direct, &pm));
    // 10 steps of one hop, each link carrying at most one block of 1/16:
    // what SimGrid simulates for the same plan (genx-sim-test.sh).
    const size_t count = (size_t{1} << 20) / 4;
    const Prediction p = pm.predict(count, 4, m);
    REQUIRE(p.status);
    CHECK(p.seconds == Approx(10 * (150e-9 + 65536 / 16e9)).epsilon(1e-9));
    // At one NIC per host the same plan costs the sum of a step's peers.
    RankMap nic = direct;
    nic.direct = nullptr;
    PlanModel pn;
    REQUIRE(PlanModel::build(gen, nic, &pn));
    CHECK(pn.predict(count, 4, m).seconds > 2 * p.seconds);
    // The ring in rank order pays 30 steps, and two hops where a row ends
    // (3 -> 4 crosses the wrap-around and a column link).
    RankGenerator ring;
    REQUIRE(prepare("ring", 16, {}, &ring));
    PlanModel pr;
    REQUIRE(PlanModel::build(ring, direct, &pr));
    CHECK(pr.predict(count, 4, m).seconds == Approx(30 * (2 * 150e-9 + 65536 / 16e9)).epsilon(1e-9));
    // hcps 4x4: the row exchange sends 3 quarters to peers 1, 2 and 1 hops
    // away over the 2 row links: 4 quarter-hops over 2 links per node.
    RankGenerator hcps;
    REQUIRE(prepare("hcps", 16, {{"factors", "4x4"}}, &hcps));
    PlanModel ph;
    REQUIRE(PlanModel::build(hcps, direct, &ph));
    const double quarter = (1 << 20) / 4.0, sixteenth = (1 << 20) / 16.0;
    CHECK(ph.predict(count, 4, m).seconds ==
          Approx(2 * (2 * 150e-9 + 2 * quarter / 16e9) + 2 * (2 * 150e-9 + 2 * sixteenth / 16e9)).epsilon(1e-6));
    // Among every family's candidates, multitree is the fastest on the torus.
    CandidateOptions co;
    co.topology = &torus;
    std::vector<RankedCandidate> ranked;
    REQUIRE(best_candidates(16, count, 4, m, direct, &ranked, co));
    REQUIRE_FALSE(ranked.empty());
    INFO(format_prediction_table(ranked));
    CHECK(ranked.front().candidate.algorithm == "multitree");
}

namespace {

// The one-node quotient applies to `gen` on `map` and prices it as the
// full model does, at counts that are multiples of `unit` (every block the
// same size); returns the model parameters it used.
ModelParams check_quotient_equals_full(const RankGenerator& gen, const RankMap& map, size_t unit) {
    PlanModel q, full;
    REQUIRE(PlanModel::build(gen, map, &q, true));
    REQUIRE(PlanModel::build(gen, map, &full, false));
    CHECK(q.quotient());
    CHECK_FALSE(full.quotient());
    ModelParams m;
    m.inter.alpha = 150e-9;
    m.inter.beta = 1 / 16e9;
    m.intra = m.inter;
    for (size_t count : {unit, unit << 10, unit << 16}) {
        const Prediction a = q.predict(count, 4, m), b = full.predict(count, 4, m);
        REQUIRE(a.status);
        REQUIRE(b.status);
        CHECK(a.seconds == Approx(b.seconds).epsilon(1e-12));
    }
    return m;
}

}  // namespace

TEST_CASE("[graph] a grid's hops in closed form, and the one-node quotient on a torus", "[graph][model]") {
    for (const std::string& name : {std::string("torus:6x4"), std::string("mesh:3x5"), std::string("torus:2x3x3"),
                                    std::string("torus:7"), std::string("mesh:2x2x3")}) {
        const TopologyView v = preset_view(name);
        const auto d = direct_network(v);
        REQUIRE(d != nullptr);
        CHECK(d->hops.empty());
        CHECK(d->grid == v.grid);
        NetGraph g;
        REQUIRE(build_net_graph(&v, v.nranks(), &g));
        const std::vector<int> host = v.host_of_rank();
        INFO(name);
        for (int a = 0; a < v.nranks(); ++a)
            for (int b = 0; b < v.nranks(); ++b)
                CHECK(d->hop(host[static_cast<size_t>(a)], host[static_cast<size_t>(b)]) ==
                      std::max(1, net_distance(g, a, b, true)));
    }
    // 10^4 hosts: farthest pairs 100 hops apart, not the one hop assumed
    // for large networks without a grid.
    const TopologyView big = preset_view("torus:100x100");
    const auto d = direct_network(big);
    REQUIRE(d != nullptr);
    const std::vector<int> host = big.host_of_rank();
    CHECK(d->hop(host[0], host[50 + 100 * 50]) == 100);
    CHECK(d->hop(host[0], host[99 + 100 * 99]) == 2);
    // The quotient needs translations that map the torus's links onto
    // links: ring2d's Z_6 x Z_4 on torus:6x4 does, a ring's Z_24 does not
    // (rank 5 -> 6 crosses a row end).
    const TopologyView t64 = preset_view("torus:6x4");
    RankMap d64;
    d64.node = t64.host_of_rank();
    d64.direct = direct_network(t64);
    RankGenerator r2d, ring;
    REQUIRE(prepare("ring2d", 24, {}, &t64, &r2d));
    REQUIRE(prepare("ring", 24, {}, &ring));
    CHECK(PlanModel::quotient_applies(r2d.header, d64));
    CHECK_FALSE(PlanModel::quotient_applies(ring.header, d64));
    (void)check_quotient_equals_full(r2d, d64, 48);
}

TEST_CASE("multitree order=height: the paper's remaining-height priority for asymmetric networks", "[multitree]") {
    // 4x4 mesh: 10 steps per phase in root order, 9 with the trees of
    // larger remaining height first; a torus is symmetric and keeps 5.
    const TopologyView mesh = preset_view("mesh:4x4");
    NetGraph g;
    REQUIRE(build_net_graph(&mesh, 16, &g));
    MultiTreeSchedule root, height;
    REQUIRE(build_multitree(g, &root, MultiTreeOrder::Root));
    REQUIRE(build_multitree(g, &height, MultiTreeOrder::Height));
    CHECK(root.steps == 10);
    CHECK(height.steps == 9);
    require_invariants(g, height, "mesh:4x4 height");
    const TopologyView torus = preset_view("torus:4x4");
    REQUIRE(build_net_graph(&torus, 16, &g));
    REQUIRE(build_multitree(g, &height, MultiTreeOrder::Height));
    CHECK(height.steps == 5);
    // The oversubscribed tree: crossing trees go first, fewer steps.
    const TopologyView tree = preset_view("tree:2x4/4");
    REQUIRE(build_net_graph(&tree, 8, &g));
    REQUIRE(build_multitree(g, &root, MultiTreeOrder::Root));
    REQUIRE(build_multitree(g, &height, MultiTreeOrder::Height));
    CHECK(height.steps < root.steps);
    require_invariants(g, height, "tree:2x4/4 height");
    for (const std::string& name : {std::string("mesh:4x4"), std::string("mesh:3x5"), std::string("tree:2x4/4"),
                                    std::string("torus:2x3")}) {
        const TopologyView v = preset_view(name);
        Plan p;
        REQUIRE(generate("multitree", v.nranks(), {{"order", "height"}}, &v, &p));
        CHECK(p.params == "order=height");
        require_valid(p, name + " order=height");
    }
    Plan p;
    const Status st = generate("multitree", 4, {{"order", "random"}}, nullptr, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("order=random: expected root or height") != std::string::npos);
}

TEST_CASE("block trees: MultiTree's trees and a ring's chains, drawn as SVG", "[multitree][svg]") {
    const TopologyView mesh = preset_view("mesh:2x2");
    const Plan p = multitree_plan(&mesh, 4);
    const std::vector<BlockTree> trees = block_trees(p);
    REQUIRE(trees.size() == 4);
    // Tree of block 0 is the paper's T0: 0 -> 1, 0 -> 2 in the first
    // all-gather step (2), 2 -> 3 in the second (3).
    CHECK(trees[0].blocks == std::vector<int>{0});
    CHECK(trees[0].root == 0);
    CHECK(trees[0].parent == std::vector<int>{-1, 0, 0, 2});
    CHECK(trees[0].step == std::vector<int>{-1, 2, 2, 3});
    for (const BlockTree& t : trees) CHECK(t.root == t.blocks[0]);
    // A ring of 5: each block's final value travels a chain of 4 hops.
    Plan ring;
    REQUIRE(generate("ring", 5, {}, &ring));
    const std::vector<BlockTree> chains = block_trees(ring);
    REQUIRE(chains.size() == 5);
    for (const BlockTree& t : chains) {
        int depth = 0;
        for (int r = 0; r < 5; ++r) {
            int d = 0;
            for (int q = r; t.parent[static_cast<size_t>(q)] >= 0; q = t.parent[static_cast<size_t>(q)]) ++d;
            depth = std::max(depth, d);
        }
        CHECK(depth == 4);
    }
    // Blocks with one tree share a panel: cps's P blocks each have a star
    // of their own; a plan of one rank has one tree with no edges.
    const std::string svg = block_trees_to_svg(p);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("4 broadcast tree(s) of 4 blocks") != std::string::npos);
    CHECK(svg.find("block 3, root 3") != std::string::npos);
    const std::string few = block_trees_to_svg(ring, 2);
    CHECK(few.find("3 more tree(s) not drawn") != std::string::npos);
}

namespace {

// A torus preset's view with rank perm[h] on grid host h (not grid order).
TopologyView permuted_view(const std::string& name, const std::vector<int>& perm) {
    Topology t;
    REQUIRE(topology_preset(name, &t));
    const std::vector<int> hs = t.hosts();
    REQUIRE(hs.size() == perm.size());
    std::vector<std::string> names(perm.size());
    for (size_t h = 0; h < perm.size(); ++h)
        names[static_cast<size_t>(perm[h])] = t.nodes[static_cast<size_t>(hs[h])].name;
    TopologyView v;
    REQUIRE(to_view(t, names, &v));
    return v;
}

Plan translate_plan(const TopologyView* v, int P) {
    Plan plan;
    const Status st = generate("multitree", P, {{"trees", "translate"}}, v, &plan);
    INFO(st.message());
    REQUIRE(st);
    return plan;
}

}  // namespace

TEST_CASE("multitree trees=translate: T0 takes ceil((P-1)/D) steps and its translates never share an arc", "[multitree][translate]") {
    // {dims, directions D}; a dimension of 2 has one direction, of 1 none.
    const std::vector<std::pair<std::vector<int>, int>> tori = {
        {{4, 4}, 4},  {{8, 8}, 4},  {{16, 16}, 4}, {{32, 32}, 4}, {{3, 5}, 4},    {{5, 7}, 4},
        {{7, 9}, 4},  {{3, 17}, 4}, {{5, 13}, 4},  {{2, 8}, 3},   {{2, 2}, 2},    {{3, 3}, 4},
        {{7}, 2},     {{8}, 2},     {{1, 6}, 2},   {{2, 2, 2}, 3}, {{3, 3, 3}, 6}, {{4, 4, 4}, 6},
        {{5, 5, 7}, 6}, {{100, 100}, 4}};
    for (const auto& [dims, D] : tori) {
        TranslateTree t;
        REQUIRE(build_translate_tree(dims, &t));
        const int P = t.nnodes();
        const std::string name = "torus:" + format_factors(dims);
        INFO(name);
        REQUIRE(static_cast<int>(t.directions.size()) == D);
        // At most D nodes join per step, so ceil((P-1)/D) is a lower bound;
        // the greedy meets it on all of these.
        CHECK(t.steps == (P - 1 + D - 1) / D);
        // Per step, each direction at most once, each parent joined earlier.
        std::map<std::pair<int, int>, int> used;
        for (int v = 1; v < P; ++v) {
            const int j = t.via[static_cast<size_t>(v)];
            REQUIRE(j >= 0);
            CHECK(++used[{t.step[static_cast<size_t>(v)], j}] == 1);
            CHECK(t.step[static_cast<size_t>(t.move(v, j, -1))] < t.step[static_cast<size_t>(v)]);
        }
        // All P trees, materialised: Algorithm 1's invariants on the
        // network graph (spanning, parents first, one tree edge per arc and
        // step).
        if (P > 64 || dims[0] == 1) continue;
        const TopologyView v = preset_view(name);
        NetGraph g;
        REQUIRE(build_net_graph(&v, P, &g));
        require_invariants(g, expand_translates(t, g), name + " translates");
    }
    // Against Algorithm 1 on the same tori: never more steps (4x4: 4
    // against 5, 8x8: 16 against 17).
    for (const std::string& name : {std::string("torus:4x4"), std::string("torus:8x8"), std::string("torus:16x16")}) {
        const TopologyView v = preset_view(name);
        TranslateTree t;
        REQUIRE(build_translate_tree(v.grid, &t));
        INFO(name);
        CHECK(t.steps <= schedule_of(&v, v.nranks()).steps);
    }
    TranslateTree t;
    CHECK_FALSE(build_translate_tree({4, 0}, &t));
}

TEST_CASE("multitree trees=translate passes the checker, declares the torus's symmetry and sums on the loopback transport", "[multitree][translate][check]") {
    for (const char* name : {"torus:3x5", "torus:5x7", "torus:4x4", "torus:8x8", "torus:7x9", "torus:16x16",
                                    "torus:3x17", "torus:2x8", "torus:2x2", "torus:2x3", "torus:3x3", "torus:5",
                                    "torus:17", "torus:2x2x2", "torus:3x3x3", "torus:3x4x5"}) {
        const TopologyView v = preset_view(name);
        const int P = v.nranks();
        const Plan p = translate_plan(&v, P);
        INFO(name);
        CHECK(p.params == "trees=translate");
        require_valid(p, std::string(name) + " trees=translate");
        std::vector<int> sym;
        for (int d : v.grid)
            if (d > 1) sym.push_back(d);
        CHECK(p.symmetry == sym);
        const CheckResult cs = check_symmetry(p);
        INFO(cs.message);
        CHECK(cs.ok);
        CHECK(check_representatives(p).ok);
        // 2·tot_t steps; every block crosses P - 1 tree edges per phase.
        TranslateTree t;
        REQUIRE(build_translate_tree(v.grid, &t));
        CHECK(p.max_steps() == 2 * t.steps);
        size_t blocks_sent = 0;
        for (const Program& prog : p.programs)
            for (const Step& step : prog.steps)
                for (const Transfer& x : step.sends) {
                    blocks_sent += x.blocks.size();
                    CHECK(x.blocks.size() == 1);
                }
        CHECK(blocks_sent == 2 * static_cast<size_t>(P) * static_cast<size_t>(P - 1));
        if (P <= 36) {
            const size_t n = static_cast<size_t>(P);
            const Status s = run_sum(p, {0, 1, n - 1, n, 3 * n + 2, 1001});
            INFO(s.message());
            CHECK(s);
        }
    }
    // Ranks not in grid order: the same trees on the hosts, no symmetry
    // declared, still a valid plan with the right sums.
    std::vector<int> perm(15);
    for (int h = 0; h < 15; ++h) perm[static_cast<size_t>(h)] = (7 * h + 3) % 15;
    const TopologyView shuffled = permuted_view("torus:3x5", perm);
    const Plan p = translate_plan(&shuffled, 15);
    CHECK(p.symmetry.empty());
    require_valid(p, "torus:3x5 shuffled");
    CHECK(check_representatives(p).ok);
    const Status s = run_sum(p, {0, 15, 47});
    INFO(s.message());
    CHECK(s);
}

TEST_CASE("multitree trees=translate: the default beyond kMultiTreeMaxRanks on a torus, errors elsewhere, candidates, quotient pricing", "[multitree][translate]") {
    // Beyond the limit, a torus gets translates by default.
    const TopologyView big = preset_view("torus:40x30");
    RankGenerator gen;
    REQUIRE(prepare("multitree", 1200, {}, &big, &gen));
    CHECK(gen.header.params == "trees=translate");
    CHECK(gen.header.symmetry == std::vector<int>{40, 30});
    const Program p0 = gen.program(0);
    CHECK(p0.steps.size() == 2 * static_cast<size_t>((1200 - 1 + 3) / 4));
    // Elsewhere beyond the limit: the error names the way out.
    Plan p;
    Status st = generate("multitree", kMultiTreeMaxRanks + 1, {}, nullptr, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("trees=translate on a torus") != std::string::npos);
    st = prepare("multitree", 1200, {{"trees", "turns"}}, &big, &gen);
    CHECK_FALSE(st);
    CHECK(st.message().find("at most 1024") != std::string::npos);
    // Bad params and networks that are no torus of one rank per host.
    const TopologyView mesh = preset_view("mesh:3x3"), sw = preset_view("switch:4"), two = preset_view("torus:2x2", 2);
    const std::vector<std::tuple<const TopologyView*, int, ParamMap, std::string>> bad = {
        {&mesh, 9, {{"trees", "translate"}}, "mesh (no wrap-around links)"},
        {&sw, 4, {{"trees", "translate"}}, "switch tree"},
        {nullptr, 4, {{"trees", "translate"}}, "no topology is known"},
        {&two, 8, {{"trees", "translate"}}, "one rank per host: the torus holds 4 hosts for 8 ranks"},
        {&mesh, 9, {{"trees", "forest"}}, "trees=forest: expected turns or translate"},
        {&mesh, 9, {{"trees", "translate"}, {"order", "height"}}, "applies to trees=turns only"},
    };
    for (const auto& [view, P, params, want] : bad) {
        st = generate("multitree", P, params, view, &p);
        INFO(want << ": " << st.message());
        CHECK_FALSE(st);
        CHECK(st.message().find(want) != std::string::npos);
    }
    // trees=turns is Algorithm 1 itself.
    const TopologyView t44 = preset_view("torus:4x4");
    REQUIRE(generate("multitree", 16, {{"trees", "turns"}}, &t44, &p));
    CHECK(p.params == "trees=turns");
    CHECK(p.max_steps() == 10);
    // Offered on a torus at any size, Algorithm 1 up to kWholePlanMaxRanks.
    std::vector<std::string> c;
    multitree_candidates(CandidateContext{16, 1, 0, &t44}, &c);
    CHECK(c == std::vector<std::string>{"", "order=height", "trees=translate"});
    c.clear();
    multitree_candidates(CandidateContext{1200, 1, 0, &big}, &c);
    CHECK(c == std::vector<std::string>{"trees=translate"});
    c.clear();
    multitree_candidates(CandidateContext{9, 1, 0, &mesh}, &c);
    CHECK(c == std::vector<std::string>{"", "order=height"});
    // The cost model prices it from rank 0's program alone, as it prices
    // every program (count a multiple of P).
    const TopologyView t88 = preset_view("torus:8x8");
    REQUIRE(prepare("multitree", 64, {{"trees", "translate"}}, &t88, &gen));
    RankMap direct;
    direct.node = t88.host_of_rank();
    direct.direct = direct_network(t88);
    REQUIRE(PlanModel::quotient_applies(gen.header, direct));
    const ModelParams m = check_quotient_equals_full(gen, direct, 64);
    // 16 steps per phase of one hop, one block of 1/64 per link.
    PlanModel full;
    REQUIRE(PlanModel::build(gen, direct, &full, false));
    CHECK(full.predict(size_t{64} << 16, 4, m).seconds == Approx(32 * (150e-9 + (4 << 16) / 16e9)).epsilon(1e-9));
}

TEST_CASE("multitree over=leaves: Algorithm 1 over the leaf switches, one lane per host position",
          "[multitree][leaves]") {
    // (preset, ranks per host): one leaf, primes and 2^k ± 1 rank counts.
    for (const auto& [name, ppn] : std::vector<std::pair<std::string, int>>{
             {"tree:2x2", 1}, {"tree:3x3", 1}, {"tree:5x3", 1}, {"tree:3x5", 3}, {"tree:4x4", 2},
             {"tree:17x1", 1}, {"tree:7x1", 1}, {"switch:5", 1}, {"tree:2x3", 3}}) {
        const TopologyView v = preset_view(name, ppn);
        const int P = v.nranks();
        Plan p;
        const Status st = generate("multitree", P, {{"over", "leaves"}}, &v, &p);
        INFO(name << " x" << ppn << " (P=" << P << "): " << st.message());
        REQUIRE(st);
        CHECK(p.params == "over=leaves");
        require_valid(p, name);
        CHECK(run_sum(p, {0, 1, static_cast<size_t>(P - 1), static_cast<size_t>(2 * P + 3), 1001}).is_ok());
        Plan h;
        REQUIRE(generate("multitree", P, {{"over", "leaves"}, {"order", "height"}}, &v, &h));
        CHECK(h.params == "order=height,over=leaves");
        require_valid(h, name + " height");
    }
    // Leaves of unequal host counts, a torus: errors naming why.
    Plan p;
    const TopologyView torus = preset_view("torus:3x3");
    Status st = generate("multitree", 9, {{"over", "leaves"}}, &torus, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("needs a switch tree") != std::string::npos);
    st = generate("multitree", 9, {{"over", "racks"}}, &torus, &p);
    CHECK_FALSE(st);
    CHECK(st.message().find("over=racks: expected hosts or leaves") != std::string::npos);
}

TEST_CASE("multitree beyond kMultiTreeMaxRanks on a switch tree goes over the leaves, to 10^4 ranks",
          "[multitree][leaves][scale]") {
    const TopologyView big = preset_view("tree:100x100");
    RankGenerator gen;
    const Status st = prepare("multitree", 10000, {}, &big, &gen);
    INFO(st.message());
    REQUIRE(st);
    CHECK(gen.header.params == "over=leaves");
    CHECK(gen.header.nblocks == 100 * 100);  // 100 lanes of Algorithm 1's 100 blocks
    for (int r : {0, 5678, 9999}) {
        const Program prog = gen.program(r);
        INFO("rank " << r);
        // 99 ring steps each way around Algorithm 1's 2 x 99 steps over
        // the 100 leaves of one switch level.
        CHECK(prog.steps.size() == 4u * 99u);
        CHECK(prog.steps[0].sends.size() == 1u);
        CHECK(prog.steps[0].sends[0].blocks.size() == 100u);
    }
    // The whole plan passes the checker at 1,089 ranks (33 leaves of 33).
    const TopologyView wide = preset_view("tree:33x33");
    Plan p;
    REQUIRE(generate("multitree", 1089, {}, &wide, &p));
    CHECK(p.params == "over=leaves");
    require_valid(p, "tree:33x33");
}
