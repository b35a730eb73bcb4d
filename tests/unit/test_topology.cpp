// The topology model: building, validation, rank placement, fingerprint,
// printing, units, and the conversion to the generators' view (pruning the
// hosts a communicator does not use).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "topology/topology.hpp"

using namespace genx;

namespace {
// spine -> {leaf1 -> {a, b}, leaf2 -> {c}}; host a holds a package, a core
// and a NIC.
Topology small_tree() {
    Topology t;
    const int leaf = t.class_index("leaf");
    const int l2 = t.class_index("l2");
    t.classes[static_cast<size_t>(leaf)].rate = 1.25e9;
    t.classes[static_cast<size_t>(leaf)].latency = 5e-6;
    t.classes[static_cast<size_t>(l2)].rate = 1.25e9;
    t.intra_class = t.class_index("intra");
    const int spine = t.add_node(TopoKind::Switch, "spine", -1);
    const int leaf1 = t.add_node(TopoKind::Switch, "leaf1", spine, l2);
    const int a = t.add_node(TopoKind::Host, "a", leaf1, leaf);
    t.add_node(TopoKind::Host, "b", leaf1, leaf);
    const int leaf2 = t.add_node(TopoKind::Switch, "leaf2", spine, l2);
    t.add_node(TopoKind::Host, "c", leaf2, leaf);
    const int pkg = t.add_node(TopoKind::Package, "package0", a);
    t.nodes[static_cast<size_t>(pkg)].index = 0;
    const int core = t.add_node(TopoKind::Core, "core3", pkg);
    t.nodes[static_cast<size_t>(core)].index = 3;
    const int nic = t.add_node(TopoKind::Nic, "eth0", a);
    t.nodes[static_cast<size_t>(nic)].rate = 1.25e9;
    t.nodes[static_cast<size_t>(nic)].rate_source = "sysfs";
    t.nodes[static_cast<size_t>(nic)].device_kind = "network";
    t.compute_levels();
    t.compute_oversubscription();
    return t;
}
}  // namespace

TEST_CASE("[topology] levels, oversubscription, hosts in tree order", "[topology]") {
    Topology t = small_tree();
    REQUIRE(t.validate() == "");
    CHECK(t.nodes[0].level == 2);
    CHECK(t.nodes[static_cast<size_t>(t.find("leaf1"))].level == 1);
    // leaf1: two 10 Gbit/s hosts over one 10 Gbit/s uplink.
    CHECK(t.nodes[static_cast<size_t>(t.find("leaf1"))].oversubscription == Approx(2.0));
    CHECK(t.nodes[static_cast<size_t>(t.find("leaf2"))].oversubscription == Approx(1.0));
    CHECK(t.nodes[0].oversubscription == 0);  // the root has no uplink
    std::vector<std::string> names;
    for (int h : t.hosts()) names.push_back(t.nodes[static_cast<size_t>(h)].name);
    CHECK(names == std::vector<std::string>{"a", "b", "c"});
    CHECK(t.find("core3") == -1);  // find() names switches and hosts only
}

TEST_CASE("[topology] validate names what is wrong", "[topology]") {
    Topology t = small_tree();
    t.nodes[static_cast<size_t>(t.find("c"))].up_class = 9;
    CHECK(t.validate() == "host c has no link class to switch leaf2");
    t = small_tree();
    t.add_node(TopoKind::Switch, "empty", 0, 0);
    CHECK(t.validate() == "switch empty has no children");
    t = small_tree();
    t.add_node(TopoKind::Host, "stray", -1);
    CHECK(t.validate() == "host stray has no parent (a second root)");
    t = small_tree();
    t.add_node(TopoKind::Core, "core9", 0);
    CHECK(t.validate() == "core core9 hangs directly below switch spine");
}

TEST_CASE("[topology] map_ranks places ranks and refuses unknown hosts", "[topology]") {
    Topology t = small_tree();
    REQUIRE(t.map_ranks({"c", "a", "a", "b"}).is_ok());
    CHECK(t.nodes[static_cast<size_t>(t.find("a"))].ranks == std::vector<int>{1, 2});
    CHECK(t.nodes[static_cast<size_t>(t.find("c"))].ranks == std::vector<int>{0});
    const Status s = t.map_ranks({"a", "zz"});
    CHECK(s.code() == Code::NotFound);
    CHECK(s.message() == "rank 1 runs on host 'zz', which the topology does not hold");
    // A failed placement leaves the previous one in place.
    CHECK(t.nodes[static_cast<size_t>(t.find("a"))].ranks == std::vector<int>{1, 2});
}

TEST_CASE("[topology] the fingerprint is stable and follows the network, not the hosts' insides",
          "[topology]") {
    const uint64_t base = network_view(small_tree()).fingerprint();
    CHECK(network_view(small_tree()).fingerprint() == base);
    Topology inside = small_tree();
    inside.add_node(TopoKind::Gpu, "gpu0", inside.find("b"));
    CHECK(network_view(inside).fingerprint() == base);
    Topology rate = small_tree();
    rate.classes[1].rate = 6.25e6;
    CHECK(network_view(rate).fingerprint() != base);
    Topology placed = small_tree();
    REQUIRE(placed.map_ranks({"a", "b"}).is_ok());
    Topology swapped = small_tree();
    REQUIRE(swapped.map_ranks({"b", "a"}).is_ok());
    CHECK(network_view(placed).fingerprint() != base);
    CHECK(network_view(placed).fingerprint() != network_view(swapped).fingerprint());
    // Pinned: the hash must not change between builds or platforms, or
    // ranks built from different binaries would disagree.
    CHECK(base == 0x1b0c378c53874057ULL);
}

TEST_CASE("[topology] text, JSON and SVG output", "[topology]") {
    Topology t = small_tree();
    REQUIRE(t.map_ranks({"a", "b", "c", "a"}).is_ok());
    const std::string text = t.to_text();
    CHECK(text.find("topology: 3 switch(es), 3 host(s), fingerprint 0x") == 0);
    CHECK(text.find("  leaf: rate 10 Gbit/s, latency 5 us\n") != std::string::npos);
    CHECK(text.find("  l2: rate 10 Gbit/s, latency unknown\n") != std::string::npos);
    CHECK(text.find(
              "\nspine [switch, level 2]\n  leaf1 [switch, level 1]  up: l2  oversubscription 2:1\n"
              "    a [host]  up: leaf  ranks 0 3\n      package 0\n        core 3\n"
              "      nic eth0 (network) 10 Gbit/s [sysfs]\n    b [host]  up: leaf  ranks 1\n") !=
          std::string::npos);
    const auto j = nlohmann::json::parse(t.to_json());
    CHECK(j["nodes"].size() == t.nodes.size());
    CHECK(j["nodes"][2]["name"] == "a");
    CHECK(j["nodes"][2]["ranks"] == nlohmann::json({0, 3}));
    CHECK(j["link_classes"][0]["rate_bytes_per_s"] == 1.25e9);
    CHECK(j["intra_class"] == "intra");
    CHECK(j["nodes"][1]["oversubscription"] == 2.0);
    const std::string svg = t.to_svg();
    CHECK(svg.find("<svg ") == 0);
    CHECK(svg.find(">leaf1</text>") != std::string::npos);
    CHECK(svg.find(">ranks 0 3</text>") != std::string::npos);
    CHECK(svg.find("eth0") == std::string::npos);  // the inside of hosts is not drawn
}

TEST_CASE("[topology] rates and latencies with units", "[topology]") {
    double v = 0;
    REQUIRE(parse_rate("10Gbit/s", &v).is_ok());
    CHECK(v == Approx(1.25e9));
    REQUIRE(parse_rate("50 Mbit/s", &v).is_ok());
    CHECK(v == Approx(6.25e6));
    REQUIRE(parse_rate("100 Gbps", &v).is_ok());
    CHECK(v == Approx(12.5e9));
    REQUIRE(parse_rate("1.5 GB/s", &v).is_ok());
    CHECK(v == Approx(1.5e9));
    REQUIRE(parse_rate("1000", &v).is_ok());
    CHECK(v == 1000);
    CHECK(parse_rate("10 Gfoo", &v).message().find("unknown unit 'Gfoo'") != std::string::npos);
    CHECK(!parse_rate("fast", &v).is_ok());
    CHECK(!parse_rate("-3 Gbit/s", &v).is_ok());
    REQUIRE(parse_latency("5us", &v).is_ok());
    CHECK(v == Approx(5e-6));
    REQUIRE(parse_latency("20 ms", &v).is_ok());
    CHECK(v == Approx(0.02));
    CHECK(parse_latency("3 days", &v).message().find("unknown unit 'days'") != std::string::npos);
    CHECK(format_rate(6.25e6) == "50 Mbit/s");
    CHECK(format_rate(0) == "unknown");
    CHECK(format_latency(2e-5) == "20 us");
}

TEST_CASE("[topology] to_view keeps the communicator's hosts and their switches", "[topology]") {
    Topology t = small_tree();
    TopologyView v;
    // Ranks on a and c only: host b is pruned; leaf1 and leaf2 stay.
    REQUIRE(to_view(t, {"c", "a", "c"}, &v).is_ok());
    REQUIRE(v.validate() == "");
    CHECK(v.nranks() == 3);
    CHECK(v.nodes.size() == 5);
    CHECK(v.nodes[0].name == "spine");
    CHECK(v.nodes[1].name == "leaf1");
    CHECK(v.nodes[2].name == "a");
    CHECK(v.nodes[2].ranks == std::vector<int>{1});
    CHECK(v.nodes[2].nics == 1);
    CHECK(v.nodes[4].name == "c");
    CHECK(v.nodes[4].ranks == std::vector<int>{0, 2});
    CHECK(v.nodes[4].nics == 0);
    CHECK(v.link_classes[static_cast<size_t>(v.nodes[2].up_class)].name == "leaf");
    CHECK(v.link_classes[static_cast<size_t>(v.nodes[2].up_class)].rate == 1.25e9);
    CHECK(v.intra_class == t.intra_class);
    CHECK(v.nodes[1].oversubscription == Approx(2.0));
    CHECK(v.depth() == 2);
    // Ranks under one leaf only: the other leaf disappears.
    REQUIRE(to_view(t, {"b", "a"}, &v).is_ok());
    CHECK(v.nodes.size() == 4);
    CHECK(v.ranks_under(0) == std::vector<int>{1, 0});
    const Status s = to_view(t, {"a", "nowhere"}, &v);
    CHECK(s.message() == "rank 1 runs on host 'nowhere', which the topology does not hold");
    CHECK(v.empty());
    CHECK(!to_view(t, {}, &v).is_ok());
}

TEST_CASE("[topology] a rank's host name: SLURMD_NODENAME, else the hostname", "[topology]") {
    const char* old = std::getenv("SLURMD_NODENAME");
    const std::string saved = old ? old : "";
    setenv("SLURMD_NODENAME", "node07", 1);
    CHECK(local_host_name() == "node07");
    unsetenv("SLURMD_NODENAME");
    char buf[HOST_NAME_MAX + 1] = {0};
    REQUIRE(gethostname(buf, sizeof buf - 1) == 0);
    CHECK(local_host_name() == buf);
    if (old) setenv("SLURMD_NODENAME", saved.c_str(), 1);
}
