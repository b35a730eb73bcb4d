#include <catch2/catch.hpp>

#include "plan/topology_view.hpp"

using genx::TopologyView;

namespace {
// root -> {leafA -> {h0: 0 2, h1: 1 3}, leafB -> {h2: 4 5}}
TopologyView two_leaves() {
    TopologyView v;
    v.link_classes = {{"intra", 0, 0, false}, {"leaf", 1.25e9, 5e-6, false}, {"root", 1.25e9, 10e-6, false}};
    v.intra_class = 0;
    v.nodes.resize(6);
    v.nodes[0] = {"root", -1, -1, {1, 2}, {}, 0, 0};
    v.nodes[1] = {"leafA", 0, 2, {3, 4}, {}, 1, 0};
    v.nodes[2] = {"leafB", 0, 2, {5}, {}, 1, 0};
    v.nodes[3] = {"h0", 1, 1, {}, {0, 2}, 0, 1};
    v.nodes[4] = {"h1", 1, 1, {}, {1, 3}, 0, 1};
    v.nodes[5] = {"h2", 2, 1, {}, {4, 5}, 0, 1};
    return v;
}
}  // namespace

TEST_CASE("[topology_view] a well-formed view answers ranks, hosts, depth", "[topology_view]") {
    TopologyView v = two_leaves();
    REQUIRE(v.validate() == "");
    CHECK(v.nranks() == 6);
    CHECK(v.depth() == 2);
    CHECK(v.ranks_under(0) == std::vector<int>{0, 2, 1, 3, 4, 5});
    CHECK(v.ranks_under(1) == std::vector<int>{0, 2, 1, 3});
    CHECK(v.host_of_rank() == std::vector<int>{3, 4, 3, 4, 5, 5});
}

TEST_CASE("[topology_view] validate names what is wrong", "[topology_view]") {
    TopologyView v = two_leaves();
    v.nodes[5].ranks = {4, 4};
    CHECK(v.validate().find("placed twice") != std::string::npos);
    v = two_leaves();
    v.nodes[5].ranks = {4, 9};
    CHECK(v.validate().find("outside") != std::string::npos);
    v = two_leaves();
    v.nodes[2].children.clear();  // h2 orphaned: its parent no longer lists it
    CHECK(v.validate().find("not listed once") != std::string::npos);
    v = two_leaves();
    v.nodes[3].up_class = 7;
    CHECK(v.validate().find("up_class") != std::string::npos);
    CHECK(TopologyView{}.validate() != "");
}

TEST_CASE("[topology_view] the fingerprint follows shape, classes and placement", "[topology_view]") {
    const TopologyView a = two_leaves();
    CHECK(a.fingerprint() == two_leaves().fingerprint());
    TopologyView b = two_leaves();
    std::swap(b.nodes[3].ranks, b.nodes[4].ranks);
    CHECK(b.fingerprint() != a.fingerprint());
    TopologyView c = two_leaves();
    c.link_classes[2].rate = 6.25e6;
    CHECK(c.fingerprint() != a.fingerprint());
}
