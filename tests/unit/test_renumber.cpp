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

std::vector<std::string> family_params(const std::string& family, int P) {
    if (family != "butterfly") return {""};
    return (P & (P - 1)) == 0 ? std::vector<std::string>{"group=xor,r=0", "group=xor,r=1"}
                              : std::vector<std::string>{"r=0"};
}

std::vector<std::string> orders(int P) {
    return (P & (P - 1)) == 0 ? std::vector<std::string>{"identity", "topo", "topo-rev", "bine"}
                              : std::vector<std::string>{"identity", "topo"};
}

}  // namespace

TEST_CASE("every numbering of the pairwise families is an allreduce", "[renumber]") {
    for (int P : {2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 64})
        for (const std::string family : {"butterfly", "rd", "rhd"})
            for (const std::string& base : family_params(family, P))
                for (const std::string& order : orders(P))
                    for (bool rr : {false, true}) {
                        const auto view = tree_view(P, rr);
                        ParamMap pm;
                        REQUIRE(parse_params(base, &pm).is_ok());
                        pm[kOrderKey] = order;
                        RankGenerator gen;
                        const Status st = prepare(family, P, pm, view.get(), &gen);
                        INFO(family << " " << base << " order=" << order << " P=" << P
                                    << (rr ? " round-robin" : " in order") << ": " << st.message());
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
