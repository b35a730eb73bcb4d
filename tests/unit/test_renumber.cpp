// Rank numberings (order=): every numbering of butterfly, rd and rhd is an
// allreduce on many P (primes and 2^k ± 1 included), a rank's program is
// the whole plan's, representatives still cover every workload, and the
// numberings keep the largest exchanges off the uplinks they are for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/checker.hpp"
#include "plan/hops.hpp"
#include "plan/link_traffic.hpp"
#include "plan/print.hpp"
#include "plan/registry.hpp"
#include "plan/renumber.hpp"
#include "topology/placement.hpp"

using namespace genx;

namespace {

// P ranks round-robin over the leaves of a tree of ⌈P/4⌉ leaves of 4 hosts
// (4:1 uplinks), or in order.
std::shared_ptr<const TopologyView> tree_view(int P, bool round_robin) {
    const int leaves = (P + 3) / 4;
    std::vector<std::string> hosts;
    for (int r = 0; r < P; ++r) {
        const int h = round_robin ? (r % leaves) * 4 + r / leaves : r;
        hosts.push_back("h" + std::to_string(h));
    }
    std::shared_ptr<const TopologyView> v;
    const Status st = place_ranks("tree:" + std::to_string(leaves) + "x4/4", "", hosts, &v);
    INFO(st.message());
    REQUIRE(st.is_ok());
    return v;
}

// P ranks round-robin over the cells of a torus preset ("torus:4x4"): when
// P fills every cell the view keeps its grid (hosts may hold one rank more
// than others), below that it is a partial torus without one.
std::shared_ptr<const TopologyView> torus_view(int P, const std::string& preset, int cells) {
    std::vector<std::string> hosts;
    for (int r = 0; r < P; ++r) hosts.push_back("n" + std::to_string(r % cells));
    std::shared_ptr<const TopologyView> v;
    const Status st = place_ranks(preset, "", hosts, &v);
    INFO(st.message());
    REQUIRE(st.is_ok());
    return v;
}

std::vector<std::string> family_params(const std::string& family, int P) {
    if (family != "butterfly") return {""};
    return (P & (P - 1)) == 0 ? std::vector<std::string>{"group=xor,r=0", "group=xor,r=1"}
                              : std::vector<std::string>{"r=0"};
}

std::vector<std::string> orders(int P) {
    return (P & (P - 1)) == 0 ? std::vector<std::string>{"identity", "topo", "topo-rev", "bine"}
                              : std::vector<std::string>{"identity", "topo"};
}

// Every order of every family on `view` (P ranks) is an allreduce, and a
// rank's program is the whole plan's.
void check_numberings(int P, const std::shared_ptr<const TopologyView>& view, const std::string& where) {
    for (const std::string family : {"butterfly", "rd", "rhd"})
        for (const std::string& base : family_params(family, P))
            for (const std::string& order : orders(P)) {
                ParamMap pm;
                REQUIRE(parse_params(base, &pm).is_ok());
                pm[kOrderKey] = order;
                RankGenerator gen;
                const Status st = prepare(family, P, pm, view.get(), &gen);
                INFO(family << " " << base << " order=" << order << " P=" << P << " " << where << ": "
                            << st.message());
                REQUIRE(st.is_ok());
                CHECK(gen.header.params.find("order=" + order) != std::string::npos);
                Plan plan;
                REQUIRE(generate(gen, &plan).is_ok());
                const CheckResult ok = check_plan(plan);
                INFO(ok.message);
                CHECK(ok.ok);
                CHECK(check_representatives(plan).ok);
                // Per rank, as the component generates it.
                for (int r : {0, P / 2, P - 1}) {
                    PlanHeader h;
                    Program prog;
                    REQUIRE(generate_rank(family, P, r, pm, view.get(), &h, &prog).is_ok());
                    CHECK(format_program(prog, r) == format_program(plan, r));
                }
            }
}

}  // namespace

TEST_CASE("every numbering of the pairwise families is an allreduce", "[renumber]") {
    for (int P : {2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 64})
        for (bool rr : {false, true}) check_numberings(P, tree_view(P, rr), rr ? "tree, round-robin" : "tree, in order");
}

TEST_CASE("every numbering of the pairwise families is an allreduce on a torus", "[renumber]") {
    // Below 16 ranks a partial torus (row-major order), from 16 the whole
    // grid in Gray-coded Z-order, with up to 5 ranks a host.
    for (int P : {2, 3, 5, 7, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 64, 80})
        check_numberings(P, torus_view(P, "torus:4x4", 16), "torus:4x4");
    for (int P : {64, 65, 96, 128}) check_numberings(P, torus_view(P, "torus:8x8", 64), "torus:8x8");
    for (int P : {32, 36}) check_numberings(P, torus_view(P, "torus:4x8", 32), "torus:4x8");
    for (int P : {36, 72}) check_numberings(P, torus_view(P, "torus:6x6", 36), "torus:6x6");
}

TEST_CASE("a numbering that does not apply is named", "[renumber]") {
    RankGenerator gen;
    Status st = prepare("rhd", 6, {{"order", "bine"}}, nullptr, &gen);
    CHECK(st.message() == "algorithm 'rhd': order=bine: Bine's remapping needs a power-of-two number of ranks, not 6");
    st = prepare("rd", 8, {{"order", "topo"}}, nullptr, &gen);
    CHECK(st.message().find("order=topo needs the network") != std::string::npos);
    st = prepare("butterfly", 8, {{"order", "spiral"}}, nullptr, &gen);
    CHECK(st.message().find("expected identity, topo, topo-rev or bine") != std::string::npos);
    CHECK_FALSE(prepare("ring", 8, {{"order", "topo"}}, nullptr, &gen).is_ok());
}

TEST_CASE("Bine's remapping is a permutation with the paper's values", "[renumber]") {
    for (int P : {2, 4, 8, 16, 64, 256}) {
        std::vector<int> perm;
        REQUIRE(rank_numbering("bine", P, nullptr, &perm).is_ok());
        std::vector<int> seen(static_cast<size_t>(P), 0);
        for (int r : perm) seen[static_cast<size_t>(r)] += 1;
        CHECK(std::count(seen.begin(), seen.end(), 1) == P);
    }
    // ν(r) for P = 8 and 16, computed apart from genx from the definition (negabinary,
    // Gray-decoded, bit-reversed): rank r runs program ν(r).
    const std::map<int, std::vector<int>> nu = {{8, {0, 4, 6, 1, 3, 7, 5, 2}},
                                                {16, {0, 8, 12, 2, 5, 14, 9, 7, 3, 11, 15, 1, 6, 13, 10, 4}}};
    for (const auto& [P, want] : nu) {
        std::vector<int> perm;
        REQUIRE(rank_numbering("bine", P, nullptr, &perm).is_ok());
        for (int r = 0; r < P; ++r) CHECK(perm[static_cast<size_t>(want[static_cast<size_t>(r)])] == r);
    }
}

TEST_CASE("the numberings keep the largest exchanges under one switch", "[renumber]") {
    // tree:2x4 with 4:1 uplinks, 16 MiB: what crosses the uplinks.
    auto uplink = [](const std::string& family, const std::string& params, bool rr) {
        const auto view = tree_view(8, rr);
        ParamMap pm;
        REQUIRE(parse_params(params, &pm).is_ok());
        RankGenerator gen;
        REQUIRE(prepare(family, 8, pm, view.get(), &gen).is_ok());
        LinkTraffic t;
        REQUIRE(link_traffic(gen, 4 << 20, 4, *view, &t).is_ok());
        return t.class_bytes["uplink"];
    };
    // Round-robin ranks: butterfly's first, largest step pairs ranks 0 and 1
    // across the uplinks; the network's order keeps it under a leaf.
    const double bf = uplink("butterfly", "group=xor,r=0", true);
    CHECK(uplink("butterfly", "group=xor,order=topo,r=0", true) <= 0.7 * bf);
    // Ranks in order: rhd's first step pairs ranks 4 apart, across; the
    // reversed order keeps it under a leaf.
    const double rhd = uplink("rhd", "", false);
    CHECK(uplink("rhd", "order=topo-rev", false) <= 0.7 * rhd);
    CHECK(uplink("rhd", "order=topo-rev", false) == Approx(rhd / 4));
}

namespace {

// Mean links between the hosts of numbers v and v ^ 2^b under `order`, per
// bit b (P a power of two).
std::vector<double> hops_per_bit(const std::string& order, int P, const TopologyView& view) {
    std::vector<int> perm;
    REQUIRE(rank_numbering(order, P, &view, &perm).is_ok());
    const Adjacency adj = link_adjacency(view);
    const std::vector<int> host = view.host_of_rank();
    std::vector<double> out;
    for (int bit = 1; bit < P; bit <<= 1) {
        double sum = 0;
        for (int v = 0; v < P; ++v) {
            const int a = host[static_cast<size_t>(perm[static_cast<size_t>(v)])];
            const int b = host[static_cast<size_t>(perm[static_cast<size_t>(v ^ bit)])];
            sum += hop_distances(adj, a)[static_cast<size_t>(b)];
        }
        out.push_back(sum / P);
    }
    return out;
}

double torus_bytes(const std::string& family, const std::string& params, const TopologyView& view,
                   double* sent = nullptr) {
    ParamMap pm;
    REQUIRE(parse_params(params, &pm).is_ok());
    RankGenerator gen;
    REQUIRE(prepare(family, view.nranks(), pm, &view, &gen).is_ok());
    LinkTraffic t;
    REQUIRE(link_traffic(gen, 4 << 20, 4, view, &t).is_ok());
    if (sent != nullptr) {
        *sent = 0;
        for (int r = 0; r < view.nranks(); ++r)
            for (const Step& st : gen.program(r).steps)
                for (const Transfer& x : st.sends)
                    for (int b : x.blocks) *sent += 4.0 * block_elems(4 << 20, gen.header.nblocks, b);
    }
    return t.class_bytes["torus"];
}

}  // namespace

TEST_CASE("on a torus the network's order moves each bit along one dimension, Gray-coded", "[renumber]") {
    // torus:4x4 is the 4-cube: with each coordinate in Gray code, every xor
    // partner is a neighbour, so butterfly's bytes cross one link each (the
    // least any numbering can do with one rank a host).
    const auto t4 = torus_view(16, "torus:4x4", 16);
    for (const std::string order : {"topo", "topo-rev"})
        for (double h : hops_per_bit(order, 16, *t4)) CHECK(h == 1.0);
    CHECK(hops_per_bit("identity", 16, *t4) == std::vector<double>{1, 2, 1, 2});
    double sent = 0;
    CHECK(torus_bytes("butterfly", "group=xor,r=0,order=topo", *t4, &sent) == sent);
    CHECK(torus_bytes("rhd", "order=topo-rev", *t4, &sent) == sent);
    CHECK(sent == Approx(0.6 * torus_bytes("rhd", "", *t4)));
    // torus:8x8: bits alternate x, y; a ring of 8 in Gray code puts the
    // partners of its three bits 1, 2 and 2 links apart (4 in row-major
    // order for the top bit).  topo-rev gives the short distances to the
    // high bits.
    const auto t8 = torus_view(64, "torus:8x8", 64);
    CHECK(hops_per_bit("identity", 64, *t8) == std::vector<double>{1, 2, 4, 1, 2, 4});
    CHECK(hops_per_bit("topo", 64, *t8) == std::vector<double>{1, 1, 2, 2, 2, 2});
    CHECK(hops_per_bit("topo-rev", 64, *t8) == std::vector<double>{2, 2, 2, 2, 1, 1});
    CHECK(torus_bytes("butterfly", "group=xor,r=0,order=topo", *t8) <
          0.75 * torus_bytes("butterfly", "group=xor,r=0", *t8));
    CHECK(torus_bytes("rhd", "order=topo-rev", *t8) < 0.45 * torus_bytes("rhd", "", *t8));
    CHECK(torus_bytes("rd", "order=topo", *t8) < 0.75 * torus_bytes("rd", "", *t8));
}
