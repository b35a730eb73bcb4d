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
    CHECK(v.validate() == "node 3 (h0) has no link class to node 1 (leafA)");
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

#include "genx/plan_cache.hpp"
#include "plan/registry.hpp"
#include "tuning/decision_table.hpp"

TEST_CASE("[topology_view] the view reaches generators, plan caches and the rank map", "[topology_view]") {
    const TopologyView v = two_leaves();  // 6 ranks; h0: 0 2, h1: 1 3, h2: 4 5
    genx::RankGenerator gen;
    // A view for another number of ranks is refused, naming both counts.
    const genx::Status st = genx::prepare("ring", 4, {}, &v, &gen);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("places 6 ranks, not 4") != std::string::npos);
    CHECK(genx::prepare("ring", 6, {}, &v, &gen).is_ok());
    // Families that ignore the view share their cached plans with
    // communicators that have none.
    CHECK(genx::rank_plan("ring", "", 6, 1, &v) == genx::rank_plan("ring", "", 6, 1));
    // The rank map follows the hosts, not the rank order.
    const genx::RankMap m = genx::rank_map_for(genx::CommShape(6, 3, 2, std::make_shared<TopologyView>(v)));
    CHECK(m.same_node(0, 2));
    CHECK(m.same_node(1, 3));
    CHECK_FALSE(m.same_node(0, 1));
    CHECK(m.same_node(4, 5));
    // Without a view, ppn 2 means consecutive ranks share a node.
    const genx::RankMap by_slot = genx::rank_map_for(genx::CommShape(6, 3, 2));
    CHECK(by_slot.same_node(0, 1));
}
