// ring2d (plan/ring2d.hpp): checker proofs on tori and meshes from 1x1 to
// 8x8 through dims= and grid views, the step count, one-hop transfers on a
// torus, both dimensions busy when X = Y, the ring's bandwidth-optimal
// bytes, real int64 sums on the loopback transport, candidates and errors.
#include <catch2/catch.hpp>

#include "sum_check.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "plan/checker.hpp"
#include "plan/netgraph.hpp"
#include "plan/print.hpp"
#include "plan/registry.hpp"
#include "plan/ring2d.hpp"
#include "plan/stats.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"

using namespace genx;

namespace {

std::string grid_name(const char* kind, int X, int Y) {
    return std::string(kind) + ":" + std::to_string(X) + "x" + std::to_string(Y);
}

// The view of preset `name` with host_of_rank[r] = "n<place[r]>" (rank r on
// host n<r> when `place` is empty), `ppn` ranks per host.
TopologyView preset_view(const std::string& name, std::vector<int> place = {}, int ppn = 1) {
    Topology topo;
    const Status st = topology_preset(name, &topo);
    INFO(name << ": " << st.message());
    REQUIRE(st);
    const int hosts = static_cast<int>(topo.grid_host.size());
    if (place.empty())
        for (int r = 0; r < hosts * ppn; ++r) place.push_back(r / ppn);
    std::vector<std::string> names;
    for (int h : place) names.push_back("n" + std::to_string(h));
    TopologyView v;
    REQUIRE(to_view(topo, names, &v));
    return v;
}

Status try_plan(int P, const std::string& params, const TopologyView* v, Plan* out) {
    ParamMap pm;
    GENX_RETURN_IF_ERROR(parse_params(params, &pm));
    return generate("ring2d", P, pm, v, out);
}

Plan ring2d_plan(int P, const std::string& params, const TopologyView* v) {
    Plan p;
    const Status st = try_plan(P, params, v, &p);
    INFO("ring2d P=" << P << " '" << params << "': " << st.message());
    REQUIRE(st);
    return p;
}

void require_valid(const Plan& p, const std::string& what) {
    const CheckResult c = check_plan(p);
    INFO(what << ": " << c.message);
    REQUIRE(c.ok);
    const CheckResult s = check_symmetry(p);
    INFO(what << " symmetry: " << s.message);
    REQUIRE(s.ok);
    const CheckResult r = check_representatives(p);
    INFO(what << " representatives: " << r.message);
    REQUIRE(r.ok);
}

// Grid coordinates of every rank on a grid view.
std::vector<std::pair<int, int>> coords(const TopologyView& v) {
    std::vector<std::pair<int, int>> c(static_cast<size_t>(v.nranks()));
    const int X = v.grid[0];
    for (size_t i = 0; i < v.grid_host.size(); ++i)
        for (int r : v.nodes[static_cast<size_t>(v.grid_host[i])].ranks)
            c[static_cast<size_t>(r)] = {static_cast<int>(i) % X, static_cast<int>(i) / X};
    return c;
}


std::string error_of(int P, const std::string& params, const TopologyView* v) {
    Plan p;
    const Status st = try_plan(P, params, v, &p);
    CHECK(st.code() == Code::InvalidArgument);
    return st.message();
}

}  // namespace

TEST_CASE("ring2d passes the checker on every torus and mesh up to 8x8, by dims and by grid", "[ring2d]") {
    int plans = 0;
    for (int X = 1; X <= 8; ++X)
        for (int Y = 1; Y <= 8; ++Y) {
            const int P = X * Y;
            const int steps = 2 * (X - 1) + 2 * (Y - 1);
            const std::string dims = std::to_string(X) + "x" + std::to_string(Y);
            const Plan byparam = ring2d_plan(P, "dims=" + dims, nullptr);
            require_valid(byparam, "dims=" + dims);
            CHECK(byparam.max_steps() == steps);
            CHECK(byparam.nblocks == 2 * P);
            CHECK(byparam.params == "dims=" + dims);
            CHECK(!byparam.symmetry.empty());
            ++plans;
            for (const char* kind : {"torus", "mesh"}) {
                const TopologyView v = preset_view(grid_name(kind, X, Y));
                const Plan p = ring2d_plan(P, "", &v);
                require_valid(p, grid_name(kind, X, Y));
                CHECK(p.max_steps() == steps);
                CHECK(p.params.empty());
                // Ranks in grid order: the same programs as dims=XxY.
                for (int r = 0; r < P; ++r)
                    CHECK(format_program(p, r) == format_program(byparam, r));
                ++plans;
            }
        }
    CHECK(plans == 3 * 64);
}

TEST_CASE("ring2d follows the hosts' coordinates, not rank order", "[ring2d]") {
    std::mt19937 rng(7);
    for (auto [X, Y] : {std::pair{3, 5}, {4, 4}, {2, 3}, {7, 2}, {1, 6}}) {
        const int P = X * Y;
        std::vector<int> place(static_cast<size_t>(P));
        for (int r = 0; r < P; ++r) place[static_cast<size_t>(r)] = r;
        std::shuffle(place.begin(), place.end(), rng);
        const TopologyView v = preset_view(grid_name("torus", X, Y), place);
        const Plan p = ring2d_plan(P, "", &v);
        INFO("torus " << X << "x" << Y);
        require_valid(p, "shuffled torus");
        CHECK(p.symmetry.empty());  // rank order is not grid order
        const auto c = coords(v);
        // Every send goes to a + neighbour, every receive comes from a − neighbour.
        for (int r = 0; r < P; ++r) {
            const auto [x, y] = c[static_cast<size_t>(r)];
            const std::set<std::pair<int, int>> plus = {{(x + 1) % X, y}, {x, (y + 1) % Y}};
            const std::set<std::pair<int, int>> minus = {{(x + X - 1) % X, y}, {x, (y + Y - 1) % Y}};
            for (const Step& s : p.programs[static_cast<size_t>(r)].steps) {
                for (const Transfer& t : s.sends) CHECK(plus.count(c[static_cast<size_t>(t.peer)]) == 1);
                for (const Transfer& t : s.recvs) CHECK(minus.count(c[static_cast<size_t>(t.peer)]) == 1);
            }
        }
        // A rank's own program (what a running rank builds) is the plan's.
        for (int r = 0; r < P; ++r) {
            PlanHeader h;
            Program prog;
            REQUIRE(generate_rank("ring2d", P, r, {}, &v, &h, &prog));
            CHECK(format_program(prog, r) == format_program(p, r));
        }
        const Status st = run_sum(p, {0, 1, static_cast<size_t>(P) + 1, 1001});
        INFO(st.message());
        CHECK(st);
    }
}

TEST_CASE("ring2d transfers cross one link on a torus, wrap links included", "[ring2d]") {
    for (auto [X, Y] : {std::pair{2, 2}, {2, 3}, {3, 3}, {3, 5}, {4, 4}, {5, 7}, {8, 8}, {1, 5}, {4, 1}}) {
        const TopologyView v = preset_view(grid_name("torus", X, Y));
        NetGraph g;
        REQUIRE(build_net_graph(&v, X * Y, &g));
        const Plan p = ring2d_plan(X * Y, "", &v);
        int wraps = 0, transfers = 0;
        for (int r = 0; r < p.nranks; ++r)
            for (const Step& s : p.programs[static_cast<size_t>(r)].steps)
                for (const Transfer& t : s.sends) {
                    INFO("torus " << X << "x" << Y << " rank " << r << " -> " << t.peer);
                    CHECK(net_distance(g, r, t.peer) == 1);
                    ++transfers;
                    wraps += (r % X == X - 1 && X > 2 && t.peer == r - (X - 1)) ||
                             (r / X == Y - 1 && Y > 2 && t.peer == r % X);
                }
        CHECK(transfers > 0);
        // The rings close over the wrap-around links.
        if (X > 2 || Y > 2) CHECK(wraps > 0);
    }
    // On a mesh every transfer crosses one link but those that close a
    // ring (x = X-1 to 0, y = Y-1 to 0), which have no link of their own.
    const TopologyView mesh = preset_view("mesh:5x3");
    NetGraph g;
    REQUIRE(build_net_graph(&mesh, 15, &g));
    const Plan p = ring2d_plan(15, "", &mesh);
    int closing = 0;
    for (int r = 0; r < 15; ++r)
        for (const Step& s : p.programs[static_cast<size_t>(r)].steps)
            for (const Transfer& t : s.sends) {
                const bool closes = (r % 5 == 4 && t.peer == r - 4) || (r / 5 == 2 && t.peer == r % 5);
                INFO("mesh:5x3 rank " << r << " -> " << t.peer);
                CHECK((net_distance(g, r, t.peer) == 1) == !closes);
                closing += closes;
            }
    CHECK(closing > 0);
}

TEST_CASE("ring2d keeps both dimensions busy in every step when X = Y", "[ring2d]") {
    for (int n : {2, 3, 4, 5, 8}) {
        const TopologyView v = preset_view(grid_name("torus", n, n));
        const Plan p = ring2d_plan(n * n, "", &v);
        REQUIRE(p.max_steps() == 4 * (n - 1));
        for (int r = 0; r < p.nranks; ++r) {
            const int x = r % n, y = r / n;
            const int xpeer = (x + 1) % n + n * y, ypeer = x + n * ((y + 1) % n);
            const auto& steps = p.programs[static_cast<size_t>(r)].steps;
            REQUIRE(static_cast<int>(steps.size()) == 4 * (n - 1));
            for (size_t s = 0; s < steps.size(); ++s) {
                INFO(n << "x" << n << " rank " << r << " step " << s);
                std::set<int> peers;
                for (const Transfer& t : steps[s].sends) peers.insert(t.peer);
                CHECK(peers == std::set<int>{xpeer, ypeer});
            }
        }
    }
    // X != Y: some steps run both halves along the longer dimension, in
    // one merged transfer per peer (the IR's one send per peer per step).
    const Plan p = ring2d_plan(10, "dims=5x2", nullptr);
    int merged = 0;
    for (const Step& s : p.programs[0].steps)
        for (const Transfer& t : s.sends) {
            const bool a = std::any_of(t.blocks.begin(), t.blocks.end(), [](int b) { return b < 10; });
            const bool b = std::any_of(t.blocks.begin(), t.blocks.end(), [](int b) { return b >= 10; });
            merged += a && b;
        }
    CHECK(merged > 0);
}

TEST_CASE("ring2d moves the ring's bandwidth-optimal 2(P-1)/P S per rank", "[ring2d]") {
    for (auto [X, Y] : {std::pair{2, 2}, {2, 3}, {3, 5}, {4, 4}, {5, 7}, {7, 7}, {8, 8}, {1, 5}, {4, 1}, {6, 2}}) {
        const int P = X * Y;
        const Plan p = ring2d_plan(P, "dims=" + std::to_string(X) + "x" + std::to_string(Y), nullptr);
        for (size_t k : {size_t{1}, size_t{3}}) {
            const size_t count = 2 * static_cast<size_t>(P) * k;
            const size_t S = count * 8;
            const size_t want = 2 * static_cast<size_t>(P - 1) * S / static_cast<size_t>(P);
            const PlanStats st = compute_stats(p, count, 8);
            INFO(X << "x" << Y << " count " << count);
            REQUIRE(st.per_rank.size() == static_cast<size_t>(P));
            for (const auto& steps : st.per_rank) {
                size_t sent = 0, received = 0;
                for (const StepStats& s : steps) {
                    sent += s.bytes_sent;
                    received += s.bytes_received;
                }
                CHECK(sent == want);
                CHECK(received == want);
            }
            // The ring's number, in 2(X+Y-2) steps instead of 2(P-1).
            const Plan ring = [&] {
                Plan r;
                REQUIRE(generate("ring", P, {}, &r));
                return r;
            }();
            CHECK(compute_stats(ring, count, 8).max_bytes_sent_per_rank == st.max_bytes_sent_per_rank);
            CHECK(st.steps == 2 * (X + Y - 2));
        }
    }
}

TEST_CASE("ring2d sums int64 vectors on the loopback transport", "[ring2d]") {
    for (auto [X, Y] : {std::pair{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 5}, {4, 4}, {1, 5}, {4, 1}, {5, 7}}) {
        const int P = X * Y;
        const std::vector<size_t> counts = {0, 1, static_cast<size_t>(P) - 1, static_cast<size_t>(P),
                                            2 * static_cast<size_t>(P) + 3, 1001};
        const TopologyView torus = preset_view(grid_name("torus", X, Y));
        for (const Plan& p : {ring2d_plan(P, "", &torus),
                              ring2d_plan(P, "dims=" + std::to_string(X) + "x" + std::to_string(Y), nullptr)}) {
            const Status st = run_sum(p, counts);
            INFO(X << "x" << Y << " '" << p.params << "': " << st.message());
            CHECK(st);
        }
    }
}

TEST_CASE("ring2d offers itself on 2-D grids with one rank per host", "[ring2d]") {
    auto offered = [](const TopologyView* v, int P) {
        CandidateContext ctx;
        ctx.nranks = P;
        ctx.topology = v;
        std::vector<std::string> out;
        ring2d_candidates(ctx, &out);
        return out;
    };
    const TopologyView torus = preset_view("torus:4x4"), mesh = preset_view("mesh:3x5");
    CHECK(offered(&torus, 16) == std::vector<std::string>{""});
    CHECK(offered(&mesh, 15) == std::vector<std::string>{""});
    const TopologyView big = preset_view("torus:16x16");
    CHECK(offered(&big, 256) == std::vector<std::string>{""});
    CHECK(offered(nullptr, 16).empty());
    const TopologyView two_per_host = preset_view("torus:2x2", {}, 2);
    CHECK(offered(&two_per_host, 8).empty());
    const TopologyView cube = preset_view("torus:2x2x2");
    CHECK(offered(&cube, 8).empty());
    const TopologyView line = preset_view("torus:5");  // a 1-D grid: prepared, not offered
    CHECK(offered(&line, 5).empty());
    const Plan p = ring2d_plan(5, "", &line);
    require_valid(p, "torus:5");
    CHECK(p.max_steps() == 8);
    Topology sw;
    REQUIRE(topology_preset("switch:4", &sw));
    std::vector<std::string> hosts;
    for (int h : sw.hosts()) hosts.push_back(sw.nodes[static_cast<size_t>(h)].name);
    TopologyView swv;
    REQUIRE(to_view(sw, hosts, &swv));
    CHECK(offered(&swv, 4).empty());
}

TEST_CASE("ring2d's errors say what is wrong", "[ring2d]") {
    // Neither a grid nor dims.
    CHECK_THAT(error_of(16, "", nullptr), Catch::Contains("no topology is known") &&
                                              Catch::Contains("dims=XxY") && Catch::Contains("torus:AxB"));
    // dims: wrong product, wrong shape, not a number.
    CHECK_THAT(error_of(16, "dims=3x5", nullptr), Catch::Contains("hold 15 ranks, not 16"));
    CHECK_THAT(error_of(8, "dims=2x2x2", nullptr), Catch::Contains("two dimensions"));
    CHECK_THAT(error_of(16, "dims=4xa", nullptr), Catch::Contains("not a positive integer"));
    CHECK_THAT(error_of(16, "dims=0x16", nullptr), Catch::Contains("X·Y must equal P"));
    // A 3-D grid.
    const TopologyView cube = preset_view("torus:2x2x2");
    CHECK_THAT(error_of(8, "", &cube), Catch::Contains("3-D grid (2x2x2)"));
    // Several ranks on a grid host.
    const TopologyView two = preset_view("torus:2x2", {}, 2);
    CHECK_THAT(error_of(8, "", &two), Catch::Contains("grid host 'n0' holds 2 ranks"));
    // dims against a grid.
    const TopologyView t44 = preset_view("torus:4x4");
    CHECK_THAT(error_of(16, "dims=2x8", &t44), Catch::Contains("disagree with the topology's grid 4x4"));
    CHECK(ring2d_plan(16, "dims=4x4", &t44).params == "dims=4x4");
    // A direct network that is not a grid (a graph file).
    Topology graph;
    REQUIRE(parse_graph(R"({"genx_graph": 1,
        "classes": {"wan": {"rate": "10 Gbit/s", "latency": "20 ms"}},
        "hosts": ["a", "b", "c"],
        "links": [{"a": "a", "b": "b", "class": "wan"}, {"a": "b", "b": "c", "class": "wan"}]})",
                        "triangle.json", &graph));
    TopologyView gv;
    REQUIRE(to_view(graph, {"a", "b", "c"}, &gv));
    REQUIRE(gv.direct);
    CHECK_THAT(error_of(3, "", &gv), Catch::Contains("direct network without grid coordinates"));
    CHECK_THAT(error_of(3, "dims=3x1", &gv), Catch::Contains("direct network"));
    // A switch tree: dims lay the ranks out in rank order; without, an error.
    Topology sw;
    REQUIRE(topology_preset("switch:6", &sw));
    std::vector<std::string> hosts;
    for (int h : sw.hosts()) hosts.push_back(sw.nodes[static_cast<size_t>(h)].name);
    TopologyView swv;
    REQUIRE(to_view(sw, hosts, &swv));
    CHECK_THAT(error_of(6, "", &swv), Catch::Contains("the topology is a switch tree"));
    require_valid(ring2d_plan(6, "dims=3x2", &swv), "switch:6 dims=3x2");
    // Unknown keys are the registry's.
    CHECK_THAT(error_of(4, "dims=2x2,depth=2", nullptr), Catch::Contains("no parameter 'depth'"));
}
