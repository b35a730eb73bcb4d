// Ranks' locality records and the levels they add inside hosts: records
// built from the synthetic XML topology tests/topology/host-2pkg2numa.xml
// (2 packages x 2 NUMA nodes x 2 cores; cpus 0-1 NUMA 0, 2-3 NUMA 1 on
// package 0, 4-5 and 6-7 on package 1) with injected bindings, and NIC
// counts from the fake sysfs tree.  Never this machine's topology.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>

#include "genx/genx_core.h"
#include "plan/checker.hpp"
#include "plan/registry.hpp"
#include "topology/locality.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/rules.hpp"

using namespace genx;

namespace {
std::string fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}

// The record of a rank on host `host` bound to `cpus` ("" = unknown binding).
RankLocality rank_on(const std::string& host, const std::string& cpus) {
    HostHardware hw;
    REQUIRE(HwlocHostSource(fixture("host-2pkg2numa.xml"), cpus).load(&hw).is_ok());
    return locality_of(host, hw, {});
}

int find(const TopologyView& v, const std::string& name) {
    for (size_t i = 0; i < v.nodes.size(); ++i)
        if (v.nodes[i].name == name) return static_cast<int>(i);
    return -1;
}
}  // namespace

TEST_CASE("[locality] bound ranks: host -> package -> NUMA -> ranks, no rate invented", "[locality]") {
    // Ranks 0-3 on host a, 4-7 on host b, each bound to cpu 0, 2, 4, 6.
    std::vector<RankLocality> loc;
    for (const char* h : {"a", "b"})
        for (const char* cpu : {"0", "2", "4", "6"}) loc.push_back(rank_on(h, cpu));
    CHECK(loc[0].packages == 2);
    CHECK(loc[0].numa_nodes == 4);
    CHECK(loc[2].package == 1);
    CHECK(loc[2].numa == 2);
    TopologyView v;
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality(loc, &v, &notes).is_ok());
    CHECK(notes.empty());
    CHECK(v.validate().empty());
    const int a = find(v, "node0"), b = find(v, "node1");
    REQUIRE(a > 0);
    REQUIRE(b > 0);
    CHECK(v.ranks_under(a) == std::vector<int>{0, 1, 2, 3});
    CHECK(v.ranks_under(b) == std::vector<int>{4, 5, 6, 7});
    const int p1 = find(v, "node0/package1");
    REQUIRE(p1 > 0);
    CHECK(v.nodes[static_cast<size_t>(p1)].in_host == 1);
    CHECK(v.ranks_under(p1) == std::vector<int>{2, 3});
    const int n3 = find(v, "node1/package1/numa3");
    REQUIRE(n3 > 0);
    CHECK(v.nodes[static_cast<size_t>(n3)].in_host == 2);
    CHECK(v.nodes[static_cast<size_t>(n3)].ranks == std::vector<int>{7});
    CHECK(v.nodes[static_cast<size_t>(n3)].up_class == v.intra_class);
    // Unknown stays unknown: the root's links and the intra class are unrated,
    // so the levels count as no switch levels.
    REQUIRE(v.intra_class >= 0);
    CHECK(v.link_classes[static_cast<size_t>(v.intra_class)].rate == 0);
    CHECK(v.depth() == 1);
    CHECK(v.is_machine(a));
    CHECK_FALSE(v.is_machine(p1));
    CHECK(CommShape(8, 2, 4, std::make_shared<TopologyView>(v)).switch_levels() == 0);
}

TEST_CASE("[locality] one package: NUMA levels straight under the host", "[locality]") {
    TopologyView v;
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality({rank_on("a", "0"), rank_on("a", "1"), rank_on("a", "2")}, &v, &notes)
                .is_ok());
    CHECK(find(v, "node0/package0") < 0);
    const int n0 = find(v, "node0/numa0"), n1 = find(v, "node0/numa1");
    REQUIRE(n0 > 0);
    REQUIRE(n1 > 0);
    CHECK(v.nodes[static_cast<size_t>(n0)].ranks == std::vector<int>{0, 1});
    CHECK(v.nodes[static_cast<size_t>(n1)].ranks == std::vector<int>{2});
}

TEST_CASE("[locality] an unbound rank keeps its host one level, and says so", "[locality]") {
    // Rank 1 spans both packages (cpus 0-7).
    const std::vector<RankLocality> loc{rank_on("a", "0"), rank_on("a", "0-7"), rank_on("b", "4")};
    CHECK(loc[1].package == -1);
    CHECK(loc[1].numa == -1);
    TopologyView v;
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality(loc, &v, &notes).is_ok());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "host node0: rank 1 is not bound to one package (unbound or spanning "
                      "several); the node stays one level");
    const int a = find(v, "node0");
    CHECK(v.nodes[static_cast<size_t>(a)].ranks == std::vector<int>{0, 1});
    CHECK(v.nodes[static_cast<size_t>(a)].children.empty());
}

TEST_CASE("[locality] a rated switch tree keeps its switch levels under inner levels", "[locality]") {
    // root -> two hosts, its links rated at 10 Gbit/s: one switch level.
    TopologyView v;
    v.link_classes.push_back({"leaf", 1.25e9, 1e-6, false});
    v.nodes.resize(3);
    v.nodes[0].name = "sw";
    v.nodes[0].children = {1, 2};
    for (int h : {1, 2}) {
        v.nodes[static_cast<size_t>(h)].name = h == 1 ? "a" : "b";
        v.nodes[static_cast<size_t>(h)].parent = 0;
        v.nodes[static_cast<size_t>(h)].up_class = 0;
    }
    v.nodes[1].ranks = {0, 2};
    v.nodes[2].ranks = {1, 3};
    REQUIRE(CommShape(4, 2, 2, std::make_shared<TopologyView>(v)).switch_levels() == 1);
    const uint64_t before = v.fingerprint();
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality({rank_on("a", "0"), rank_on("b", "0"), rank_on("a", "4"), rank_on("b", "4")},
                              &v, &notes)
                .is_ok());
    CHECK(v.fingerprint() != before);
    CHECK(v.nodes[static_cast<size_t>(find(v, "a/package0"))].ranks == std::vector<int>{0});
    CHECK(v.nodes[static_cast<size_t>(find(v, "b/package1"))].ranks == std::vector<int>{3});
    CHECK(CommShape(4, 2, 2, std::make_shared<TopologyView>(v)).switch_levels() == 1);
    CHECK(v.depth() == 1);
    // The model's rank map sees hosts, not packages: ranks 0 and 2 share host a.
    const RankMap m = rank_map_for(CommShape(4, 2, 2, std::make_shared<TopologyView>(v)));
    REQUIRE(m.node.size() == 4);
    CHECK(m.node[0] == m.node[2]);
    CHECK(m.node[0] != m.node[1]);
    CHECK(v.without_inner().nodes.size() == 3);
    CHECK(v.without_inner().nodes[1].ranks == std::vector<int>{0, 2});
    // Records for a different number of ranks than the view holds.
    TopologyView w;
    w.nodes = {TopoNode{}};
    w.nodes[0].ranks = {0};
    CHECK(add_rank_locality({rank_on("a", "0"), rank_on("a", "1")}, &w, &notes).message() ==
          "the view holds 1 ranks, the records 2");
}

TEST_CASE("[locality] records pack into four words and back; NIC counts from sysfs", "[locality]") {
    std::vector<NicInfo> nics;
    REQUIRE(SysfsNicSource(fixture("sysfs")).list(&nics).is_ok());
    REQUIRE(nics.size() >= 2);
    HostHardware hw;
    REQUIRE(HwlocHostSource(fixture("host-2pkg2numa.xml"), "6").load(&hw).is_ok());
    const RankLocality r = locality_of("h", hw, nics);
    CHECK(r.nics == static_cast<int>(nics.size()));
    CHECK(r.nic_rate > 0);
    uint64_t w[kLocalityWords];
    pack_locality(r, w);
    CHECK(w[0] != 0);
    const RankLocality u = unpack_locality(w);
    CHECK(u.host == r.host);
    CHECK(u.package == 1);
    CHECK(u.numa == 3);
    CHECK(u.packages == 2);
    CHECK(u.numa_nodes == 4);
    CHECK(u.nics == r.nics);
    CHECK(u.nic_rate == Approx(r.nic_rate).epsilon(1e-6));
    RankLocality unbound;
    unbound.host = 7;
    pack_locality(unbound, w);
    CHECK(unpack_locality(w).package == -1);
    CHECK(unpack_locality(w).numa == -1);
    // The host's NIC count reaches the view where nothing declared one.
    TopologyView v;
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality({r, r}, &v, &notes).is_ok());
    CHECK(v.nodes[static_cast<size_t>(find(v, "node0"))].nics == r.nics);
}

TEST_CASE("[locality] unrated inner levels leave the built-in decisions as they were", "[locality]") {
    // n hosts of 2 ranks, one on each package: the hosts under an unrated
    // root with package levels.  The built-in defaults must decide exactly
    // as for hosts grouped by name.
    for (int hosts = 2; hosts <= 6; ++hosts) {
        std::vector<RankLocality> loc;
        for (int h = 0; h < hosts; ++h)
            for (const char* cpu : {"0", "4"}) loc.push_back(rank_on("h" + std::to_string(h), cpu));
        TopologyView v;
        std::vector<std::string> notes;
        REQUIRE(add_rank_locality(loc, &v, &notes).is_ok());
        REQUIRE(v.has_inner());
        const int size = 2 * hosts;
        DecisionTable plain, placed;
        REQUIRE(DecisionTable::build(builtin_rules(), CommShape(size, hosts, 2), TableOptions{}, &plain, nullptr)
                    .is_ok());
        REQUIRE(DecisionTable::build(builtin_rules(), CommShape(size, hosts, 2, std::make_shared<TopologyView>(v)),
                                     TableOptions{}, &placed, nullptr)
                    .is_ok());
        INFO(hosts << " hosts");
        CHECK(placed.format() == plain.format());
    }
}

namespace {
std::vector<std::string> said;
void keep(void*, int, const char* msg) { said.push_back(msg); }

// Communicator rank r's packed record, for genx_comm_place_locality.
std::vector<uint64_t> words_of(const std::vector<RankLocality>& loc) {
    std::vector<uint64_t> w(loc.size() * GENX_LOCALITY_WORDS);
    for (size_t r = 0; r < loc.size(); ++r) pack_locality(loc[r], &w[r * GENX_LOCALITY_WORDS]);
    return w;
}
}  // namespace

TEST_CASE("[locality] the C API places the records once, and says where a host is unbound",
          "[locality]") {
    static_assert(GENX_LOCALITY_WORDS == kLocalityWords, "the glue exchanges kLocalityWords words");
    genx_config cfg{};
    cfg.verbose = 1;
    cfg.log = keep;
    said.clear();
    char err[256] = "";
    genx_comm* c = genx_comm_create(0, 4, 2, 2, nullptr, &cfg, err, sizeof err);
    REQUIRE(c != nullptr);
    CHECK(genx_comm_topology(c) == 0);
    // Host a bound across packages, host b with an unbound rank.
    const std::vector<uint64_t> w =
        words_of({rank_on("a", "0"), rank_on("a", "4"), rank_on("b", "0"), rank_on("b", "0-7")});
    CHECK(genx_comm_place_locality(c, w.data()) == 1);
    const uint64_t fp = genx_comm_topology(c);
    CHECK(fp != 0);
    bool unbound = false, placed = false;
    for (const std::string& l : said) {
        unbound = unbound || l == "genx: locality: host node1: rank 3 is not bound to one package "
                                  "(unbound or spanning several); the node stays one level";
        placed = placed || l.find("genx: topology the ranks' locality (no topology file): 4 ranks on 2 hosts") == 0;
    }
    CHECK(unbound);
    CHECK(placed);
    CHECK(genx_comm_place_locality(c, w.data()) == 0);
    CHECK(genx_comm_topology(c) == fp);
    CHECK(genx_comm_prepare(c, err, sizeof err) == GENX_OK);
    genx_comm_destroy(c);
    // Nothing inside any host: no view where there was none.
    c = genx_comm_create(0, 2, 1, 2, nullptr, &cfg, err, sizeof err);
    REQUIRE(c != nullptr);
    const std::vector<uint64_t> one = words_of({rank_on("a", "0"), rank_on("a", "1")});
    CHECK(genx_comm_place_locality(c, one.data()) == 0);
    CHECK(genx_comm_topology(c) == 0);
    genx_comm_destroy(c);
}

TEST_CASE("[locality] GenTree follows the inner levels, the other families see hosts", "[locality]") {
    // 2 hosts x 4 ranks, one on each NUMA node.
    std::vector<RankLocality> loc;
    for (const char* h : {"a", "b"})
        for (const char* cpu : {"0", "2", "4", "6"}) loc.push_back(rank_on(h, cpu));
    TopologyView v;
    std::vector<std::string> notes;
    REQUIRE(add_rank_locality(loc, &v, &notes).is_ok());
    REQUIRE(v.network != nullptr);
    CHECK_FALSE(v.network->has_inner());
    CHECK(v.network->nodes.size() == 3);
    const GeneratorInfo* gentree = find_generator("gentree");
    const GeneratorInfo* mtree = find_generator("mtree");
    REQUIRE(gentree != nullptr);
    REQUIRE(mtree != nullptr);
    CHECK(view_for_family(*gentree, &v) == &v);
    CHECK(view_for_family(*mtree, &v) == v.network.get());
    for (const char* family : {"gentree", "mtree", "multitree", "ring"}) {
        INFO(family);
        Plan plan;
        REQUIRE(generate(family, 8, {}, &v, &plan).is_ok());
        CHECK(check_plan(plan).ok);
    }
}
