// The network's allreduce bound: closed forms on one switch, an
// oversubscribed two-level tree, 2dc, a ring and a 2-D torus, an exact cut
// that is no single host on a graph file, and the binding cut named.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>

#include "plan/bound.hpp"
#include "topology/placement.hpp"

using namespace genx;

namespace {

std::string fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}

// One rank on each of `hosts` hosts named PREFIX0, PREFIX1, ...
std::shared_ptr<const TopologyView> placed(const std::string& topo, const std::string& prefix, int hosts,
                                           const std::string& overlay = "") {
    std::vector<std::string> names;
    for (int i = 0; i < hosts; ++i) names.push_back(prefix + std::to_string(i));
    std::shared_ptr<const TopologyView> v;
    const Status st = place_ranks(topo, overlay, names, &v);
    INFO(st.message());
    REQUIRE(st.is_ok());
    return v;
}

constexpr double kGbit = 1e9 / 8;

}  // namespace

TEST_CASE("on one switch the bound is the wire bound 2(N-1)/N S/B", "[bound]") {
    const double S = 64.0 * (1 << 20);
    AllreduceBound b;
    REQUIRE(allreduce_bound(*placed("switch:8", "h", 8), S, &b).is_ok());
    CHECK(b.seconds == Approx(2.0 * 7 / 8 * S / (10 * kGbit)).epsilon(1e-12));
    CHECK(b.allgather_s == Approx(b.seconds / 2));
    CHECK(b.outside == 7);
    CHECK(b.cut.find("the 1 rank under h0 receives the other 7") != std::string::npos);
    CHECK(b.method.find("exact") != std::string::npos);
}

TEST_CASE("an oversubscribed tree is bound by its uplinks", "[bound]") {
    const double S = 16.0 * (1 << 20);
    AllreduceBound b;
    // 2 leaves of 4 hosts at 10 Gbit/s, uplinks 4*10/8 = 5 Gbit/s: the 4
    // ranks under a leaf receive the other 4 at 5 Gbit/s (4/5 > 7/10).
    REQUIRE(allreduce_bound(*placed("tree:2x4/8", "h", 8), S, &b).is_ok());
    CHECK(b.seconds == Approx(2 * (S / 8) * 4 / (5 * kGbit)).epsilon(1e-12));
    CHECK(b.cut.find("under leaf") != std::string::npos);
    CHECK(b.cut.find("5 Gbit/s") != std::string::npos);
    // Non-blocking (uplinks 4*10/1 = 40 Gbit/s): the host links bind again.
    REQUIRE(allreduce_bound(*placed("tree:2x4", "h", 8), S, &b).is_ok());
    CHECK(b.seconds == Approx(2.0 * 7 / 8 * S / (10 * kGbit)).epsilon(1e-12));
}

TEST_CASE("2dc is bound by its cross-datacenter link", "[bound]") {
    // Two 2x2 trees (200 Mbit/s links) joined by 50 Mbit/s: the 4 ranks of
    // one datacenter receive the other 4 over it.
    const double S = 1 << 20;
    AllreduceBound b;
    REQUIRE(allreduce_bound(*placed(fixture("twodc.conf"), "h", 8, fixture("twodc-overlay.json")), S, &b)
                .is_ok());
    CHECK(b.seconds == Approx(2 * (S / 8) * 4 / (50e6 / 8)).epsilon(1e-9));
    CHECK(b.cut.find("xdc") != std::string::npos);
}

TEST_CASE("a ring and a 2-D torus are bound by one host's links", "[bound]") {
    const double S = 1 << 24, link = 16e9;  // the presets' 16 GB/s links
    AllreduceBound b;
    // A ring of 6: each host receives the other 5 blocks over 2 links; half
    // the ring (3 outside over 2 links) binds less.
    REQUIRE(allreduce_bound(*placed("torus:6", "n", 6), S, &b).is_ok());
    CHECK(b.seconds == Approx(2 * (S / 6) * 5 / (2 * link)).epsilon(1e-9));
    // 4x4 torus: 15 blocks over 4 links; a bisection (8 over 8 links) less.
    REQUIRE(allreduce_bound(*placed("torus:4x4", "n", 16), S, &b).is_ok());
    CHECK(b.seconds == Approx(2 * (S / 16) * 15 / (4 * link)).epsilon(1e-9));
    CHECK(b.outside == 15);
    CHECK(b.method.find("exact") != std::string::npos);
}

TEST_CASE("on a graph the exact bound finds a cut that is no single host", "[bound]") {
    // graph-ring.json: the single-host cuts give at most 5 blocks over
    // 6.25 GB/s; {dc4, dc5} receives 4 blocks over two 10 Gbit/s wan links.
    AllreduceBound b;
    REQUIRE(allreduce_bound(*placed(fixture("graph-ring.json"), "dc", 6), 6e9, &b).is_ok());
    CHECK(b.outside == 4);
    CHECK(b.cut_rate == Approx(2 * 10 * kGbit));
    INFO(b.cut);
    CHECK(b.cut.find("{dc4, dc5}") != std::string::npos);
    CHECK(b.seconds == Approx(2 * 1e9 * 4 / (20 * kGbit)));
}

TEST_CASE("a link without a rate has no bound", "[bound]") {
    AllreduceBound b;
    const Status st = allreduce_bound(*placed(fixture("twodc.conf"), "h", 8), 1e6, &b);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("has no rate") != std::string::npos);
}
