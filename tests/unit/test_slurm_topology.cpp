// Slurm topology.conf (tree form) and the JSON overlay: hostlists, the tree
// built from fixture files under tests/topology/, and every error naming
// the exact FILE:LINE and field.  The bad-*.conf and bad-overlay-*.json
// fixtures each plant one mistake.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "topology/slurm_topology.hpp"

using namespace genx;

namespace {
std::string fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}

std::vector<std::string> hl(const std::string& expr) {
    std::vector<std::string> out;
    const Status s = expand_hostlist(expr, &out);
    INFO(s.message());
    REQUIRE(s.is_ok());
    return out;
}

std::string hl_error(const std::string& expr) {
    std::vector<std::string> out;
    const Status s = expand_hostlist(expr, &out);
    REQUIRE(!s.is_ok());
    return s.message();
}

std::string load_error(const std::string& name) {
    Topology t;
    const Status s = load_slurm_topology(fixture(name), &t);
    REQUIRE(!s.is_ok());
    return s.message();
}

std::string overlay_error(const std::string& name) {
    Topology t;
    REQUIRE(load_slurm_topology(fixture("tree.conf"), &t).is_ok());
    const Status s = load_overlay(fixture(name), &t);
    REQUIRE(!s.is_ok());
    return s.message();
}

std::string host_names(const Topology& t) {
    std::string out;
    for (int h : t.hosts()) out += (out.empty() ? "" : " ") + t.nodes[static_cast<size_t>(h)].name;
    return out;
}
}  // namespace

TEST_CASE("[slurm_topology] hostlist expressions expand as Slurm's", "[slurm_topology]") {
    CHECK(hl("node[01-03,10]") == std::vector<std::string>{"node01", "node02", "node03", "node10"});
    CHECK(hl("n[8-11]") == std::vector<std::string>{"n8", "n9", "n10", "n11"});
    CHECK(hl("n[008-010]") == std::vector<std::string>{"n008", "n009", "n010"});
    CHECK(hl("r[1-2]n[1-2]") == std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"});
    CHECK(hl("a,b[1-2],c") == std::vector<std::string>{"a", "b1", "b2", "c"});
    CHECK(hl("rack[1-2]-x") == std::vector<std::string>{"rack1-x", "rack2-x"});
    CHECK(hl("plain") == std::vector<std::string>{"plain"});
    CHECK(hl_error("n[1-2") == "hostlist 'n[1-2' has an unclosed '['");
    CHECK(hl_error("n1-2]") == "hostlist 'n1-2]' has a ']' without '['");
    CHECK(hl_error("n[5-2]") == "hostlist 'n[5-2]': range '5-2' runs backwards");
    CHECK(hl_error("n[a-c]") == "hostlist 'n[a-c]': 'a-c' is not a number or a range lo-hi");
    CHECK(hl_error("a,,b") == "hostlist 'a,,b' has an empty name");
    CHECK(hl_error("n[]") == "hostlist 'n[]' has an empty bracket []");
    CHECK(hl_error("n[0-99999999]") == "hostlist 'n[0-99999999]': range '0-99999999' is too large");
}

TEST_CASE("[slurm_topology] a two-level file builds the tree in file order", "[slurm_topology]") {
    Topology t;
    const Status s = load_slurm_topology(fixture("tree.conf"), &t);
    INFO(s.message());
    REQUIRE(s.is_ok());
    REQUIRE(t.validate() == "");
    CHECK(t.nodes[0].name == "spine");
    CHECK(t.nodes[0].level == 2);
    CHECK(host_names(t) == "node01 node02 node03 r1n1 r1n2 r2n1 r2n2 extra");
    const Node& leaf2 = t.nodes[static_cast<size_t>(t.find("leaf2"))];
    CHECK(leaf2.level == 1);
    CHECK(t.classes[static_cast<size_t>(leaf2.up_class)].name == "l2");
    const Node& extra = t.nodes[static_cast<size_t>(t.find("extra"))];
    CHECK(t.classes[static_cast<size_t>(extra.up_class)].name == "leaf");
    CHECK(t.nodes[static_cast<size_t>(extra.parent)].name == "leaf2");
    // Without an overlay, no rate is known and none is invented.
    for (const LinkClass& c : t.classes) CHECK(c.rate == 0);
    CHECK(leaf2.oversubscription == 0);
    CHECK(t.notes.empty());
}

TEST_CASE("[slurm_topology] several roots get a virtual root, and a note says so",
          "[slurm_topology]") {
    Topology t;
    REQUIRE(load_slurm_topology(fixture("multi-root.conf"), &t).is_ok());
    REQUIRE(t.validate() == "");
    CHECK(t.nodes[0].name == "genx-virtual-root");
    CHECK(t.nodes[0].is_virtual);
    CHECK(t.nodes[0].level == 2);
    CHECK(host_names(t) == "a0 a1 b0 b1");
    const Node& dcb = t.nodes[static_cast<size_t>(t.find("dcB"))];
    CHECK(t.classes[static_cast<size_t>(dcb.up_class)].name == "virtual");
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0] ==
          fixture("multi-root.conf") +
              ": 2 root switches (dcA, dcB); genx added a virtual root 'genx-virtual-root' above "
              "them, with link class 'virtual' (rate unknown: the file does not say how the roots "
              "connect)");
}

TEST_CASE("[slurm_topology] each planted error names FILE:LINE and the field", "[slurm_topology]") {
    CHECK(load_error("bad-both.conf") == fixture("bad-both.conf") +
                                             ":3: SwitchName=spine has both Switches= and Nodes= "
                                             "(a switch holds switches or nodes, not both)");
    CHECK(load_error("bad-cycle.conf") ==
          fixture("bad-cycle.conf") +
              ":1: Switches=: the switches form a cycle, not a tree (each lists "
              "the next: b, c, a, b)");
    CHECK(load_error("bad-unknown-key.conf") ==
          fixture("bad-unknown-key.conf") +
              ":3: unknown key 'Bandwidth' (topology.conf's tree form has SwitchName, Switches, "
              "Nodes, LinkSpeed)");
    CHECK(load_error("bad-no-children.conf") ==
          fixture("bad-no-children.conf") +
              ":2: SwitchName=spine has no children: it needs Switches= or Nodes=");
    CHECK(load_error("bad-undefined.conf") ==
          fixture("bad-undefined.conf") +
              ":2: Switches=: switch 'leaf2' is not defined (no SwitchName=leaf2 line)");
    CHECK(load_error("bad-two-switches.conf") ==
          fixture("bad-two-switches.conf") +
              ":2: Nodes=: node n04 is already under switch leaf1 (line 1); genx needs one switch "
              "per node");
    CHECK(load_error("bad-hostlist.conf") ==
          fixture("bad-hostlist.conf") + ":1: Nodes=: hostlist 'n[1-2' has an unclosed '['");
    CHECK(load_error("no-such-file.conf") == fixture("no-such-file.conf") + ": cannot be read");
}

TEST_CASE("[slurm_topology] parser details: duplicates, self-reference, empty file",
          "[slurm_topology]") {
    std::vector<SlurmSwitch> sws;
    Topology t;
    CHECK(parse_slurm_topology("SwitchName=a Nodes=n1 nodes=n2\n", "f", &sws).message() ==
          "f:1: nodes= is given twice");
    CHECK(parse_slurm_topology("Nodes=n1\n", "f", &sws).message() ==
          "f:1: the line has no SwitchName=");
    CHECK(parse_slurm_topology("\n\nSwitchName=a Nodes=n1 LinkSpeed=fast\n", "f", &sws).message() ==
          "f:3: LinkSpeed=fast is not a whole number");
    CHECK(parse_slurm_topology("SwitchName=a[1-2] Nodes=n1\n", "f", &sws).message() ==
          "f:1: SwitchName=a[1-2]: one switch a line (a name, not a hostlist)");
    REQUIRE(parse_slurm_topology("SwitchName=a Switches=a\n", "f", &sws).is_ok());
    CHECK(build_slurm_topology(sws, "f", &t).message() ==
          "f:1: Switches=: switch a lists itself (a cycle)");
    REQUIRE(
        parse_slurm_topology("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", "f", &sws).is_ok());
    CHECK(build_slurm_topology(sws, "f", &t).message() ==
          "f:2: SwitchName=a is already defined on line 1");
    REQUIRE(parse_slurm_topology(
                "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n2\nSwitchName=c Switches=a,b\n"
                "SwitchName=d Switches=b\n",
                "f", &sws)
                .is_ok());
    CHECK(build_slurm_topology(sws, "f", &t).message() ==
          "f:4: Switches=: switch b is already under switch c (line 3); a tree gives each switch "
          "one parent");
    // A trailing backslash continues a line; an error names its first line.
    REQUIRE(
        parse_slurm_topology("SwitchName=a \\\n  Nodes=n[1-2]\nSwitchName=b Nodes=n3\n", "f", &sws)
            .is_ok());
    REQUIRE(sws.size() == 2);
    CHECK(sws[0].nodes == std::vector<std::string>{"n1", "n2"});
    CHECK(sws[1].line == 3);
    REQUIRE(parse_slurm_topology("SwitchName=a \\\r\n Nodes=n1\r\n", "f", &sws).is_ok());
    CHECK(sws[0].nodes == std::vector<std::string>{"n1"});
    CHECK(parse_slurm_topology("SwitchName=a \\\n Nodes=n1 Foo=1\n", "f", &sws).message() ==
          "f:1: unknown key 'Foo' (topology.conf's tree form has SwitchName, Switches, Nodes, "
          "LinkSpeed)");
    REQUIRE(parse_slurm_topology("# only a comment\n", "f", &sws).is_ok());
    CHECK(build_slurm_topology(sws, "f", &t).message() ==
          "f: no SwitchName= line (an empty topology)");
}

TEST_CASE("[slurm_topology] the overlay gives rates per level, per switch, cross-DC and intra-host",
          "[slurm_topology]") {
    Topology t;
    REQUIRE(load_slurm_topology(fixture("tree.conf"), &t).is_ok());
    const Status s = load_overlay(fixture("tree-overlay.json"), &t);
    INFO(s.message());
    REQUIRE(s.is_ok());
    REQUIRE(t.validate() == "");
    const Node& leaf1 = t.nodes[static_cast<size_t>(t.find("leaf1"))];
    const Node& leaf2 = t.nodes[static_cast<size_t>(t.find("leaf2"))];
    const Node& host = t.nodes[static_cast<size_t>(t.find("node02"))];
    const LinkClass& l2 = t.classes[static_cast<size_t>(leaf1.up_class)];
    const LinkClass& xdc = t.classes[static_cast<size_t>(leaf2.up_class)];
    const LinkClass& leaf = t.classes[static_cast<size_t>(host.up_class)];
    CHECK(leaf.name == "leaf");
    CHECK(leaf.rate == Approx(1.25e9));
    CHECK(leaf.latency == Approx(5e-6));
    CHECK(l2.name == "l2");
    CHECK(l2.rate == Approx(2.5e9));
    CHECK(xdc.name == "xdc");
    CHECK(xdc.rate == Approx(6.25e6));
    CHECK(xdc.latency == Approx(0.02));
    CHECK(xdc.cross_dc);
    CHECK(!l2.cross_dc);
    CHECK(xdc.source == "overlay " + fixture("tree-overlay.json"));
    REQUIRE(t.intra_class >= 0);
    CHECK(t.classes[static_cast<size_t>(t.intra_class)].rate == Approx(8e9));
    // Oversubscription: leaf1 carries 3 x 10 Gbit/s over 20; leaf2 5 x 10
    // Gbit/s over the 50 Mbit/s cross-DC link.
    CHECK(leaf1.oversubscription == Approx(1.5));
    CHECK(leaf2.oversubscription == Approx(1000));
    CHECK(t.classes.size() == 4);  // leaf, l2, xdc, intra
    // The view carries the same classes.
    TopologyView v;
    REQUIRE(to_view(t, {"node01", "extra"}, &v).is_ok());
    const TopoNode& vleaf2 =
        v.nodes[static_cast<size_t>(v.nodes[static_cast<size_t>(v.host_of_rank()[1])].parent)];
    CHECK(vleaf2.name == "leaf2");
    CHECK(v.link_classes[static_cast<size_t>(vleaf2.up_class)].cross_dc);
}

TEST_CASE("[slurm_topology] overlay errors name the file and the field", "[slurm_topology]") {
    CHECK(overlay_error("bad-overlay-switch.json") ==
          fixture("bad-overlay-switch.json") +
              ": switches.leaf[1-3]: no switch named 'leaf3' in the topology");
    CHECK(overlay_error("bad-overlay-unit.json") ==
          fixture("bad-overlay-unit.json") +
              ": levels.1.rate: rate '10 Gfoo/s' has an unknown unit 'Gfoo/s' (use bit/s, kbit/s, "
              "Mbit/s, Gbit/s, "
              "Tbit/s, B/s, kB/s, MB/s, GB/s, TB/s)");
    CHECK(overlay_error("bad-overlay-key.json") ==
          fixture("bad-overlay-key.json") +
              ": intra_host.bandwith: unknown key (known: rate, latency, cross_dc)");
    const std::string syntax = overlay_error("bad-overlay-syntax.json");
    CHECK(syntax.rfind(fixture("bad-overlay-syntax.json") + ":4: not valid JSON (", 0) == 0);
    Topology t;
    REQUIRE(load_slurm_topology(fixture("tree.conf"), &t).is_ok());
    CHECK(apply_overlay("{\"version\": 2}", "o.json", &t).message() ==
          "o.json: \"version\": must be 1 (the overlay schema of docs/topology.md)");
    CHECK(apply_overlay("{\"version\": 1, \"levels\": {\"3\": {}}}", "o.json", &t).message() ==
          "o.json: levels.3: the topology's highest switch level is 2");
    CHECK(apply_overlay("{\"version\": 1, \"switches\": {\"spine\": {\"rate\": 1}}}", "o.json", &t)
              .message() == "o.json: switches.spine: 'spine' is the root and has no uplink");
    CHECK(apply_overlay("{\"version\": 1, \"hosts\": {\"leaf1\": {\"rate\": 1}}}", "o.json", &t)
              .message() == "o.json: hosts.leaf1: no host named 'leaf1' in the topology");
    CHECK(apply_overlay("{\"version\": 1, \"links\": {}}", "o.json", &t).message() ==
          "o.json: \"links\": unknown key (known: version, levels, switches, hosts, intra_host)");
}

TEST_CASE("[slurm_topology] load_topology: file and overlay together, the first error wins",
          "[slurm_topology]") {
    Topology t;
    REQUIRE(load_topology(fixture("tree.conf"), fixture("tree-overlay.json"), &t).is_ok());
    CHECK(t.classes.size() == 4);
    REQUIRE(load_topology(fixture("tree.conf"), "", &t).is_ok());
    CHECK(t.classes.size() == 2);
    CHECK(load_topology(fixture("bad-both.conf"), fixture("tree-overlay.json"), &t)
              .message()
              .rfind(fixture("bad-both.conf") + ":3: ", 0) == 0);
    CHECK(load_topology(fixture("tree.conf"), fixture("bad-overlay-key.json"), &t)
              .message()
              .rfind(fixture("bad-overlay-key.json") + ": intra_host.bandwith", 0) == 0);
    CHECK(t.empty());  // no half-applied topology is left behind
}

TEST_CASE("[slurm_topology] SLURM_TOPOLOGY_ADDR: the tree from the ranks' addresses",
          "[slurm_topology]") {
    Topology t;
    // Four ranks on three nodes (n1 twice), two leaves under one spine.
    Status s = build_from_topology_addrs(
        {"spine.leaf1.n1", "spine.leaf2.n3", "spine.leaf1.n1", "spine.leaf1.n2"}, {}, &t);
    INFO(s.message());
    REQUIRE(s.is_ok());
    REQUIRE(t.validate() == "");
    CHECK(t.nodes[0].name == "spine");
    CHECK(t.nodes[0].level == 2);
    CHECK(host_names(t) == "n1 n2 n3");
    CHECK(t.classes[static_cast<size_t>(t.nodes[static_cast<size_t>(t.find("leaf2"))].up_class)]
              .name == "l2");
    CHECK(
        t.classes[static_cast<size_t>(t.nodes[static_cast<size_t>(t.find("n2"))].up_class)].name ==
        "leaf");
    TopologyView v;
    REQUIRE(to_view(t, {"n1", "n3", "n1", "n2"}, &v).is_ok());
    CHECK(v.ranks_under(0) == std::vector<int>{0, 2, 3, 1});
    // The same tree as the equivalent topology.conf: same fingerprint.
    std::vector<SlurmSwitch> sws;
    Topology fromfile;
    REQUIRE(
        parse_slurm_topology("SwitchName=spine Switches=leaf[1-2]\nSwitchName=leaf1 Nodes=n1,n2\n"
                             "SwitchName=leaf2 Nodes=n3\n",
                             "f", &sws)
            .is_ok());
    REQUIRE(build_slurm_topology(sws, "f", &fromfile).is_ok());
    CHECK(network_view(fromfile).fingerprint() == network_view(t).fingerprint());

    // A fat tree's spines named as a range, and two top switches.
    REQUIRE(build_from_topology_addrs({"sp[1-2].l1.a", "sp[1-2].l2.b", "other.c"},
                                      {"switch.switch.node", "switch.switch.node", "switch.node"},
                                      &t)
                .is_ok());
    CHECK(t.nodes[0].name == "genx-virtual-root");
    CHECK(t.nodes[0].level == 3);
    REQUIRE(t.notes.size() == 2);
    CHECK(t.notes[1] ==
          "SLURM_TOPOLOGY_ADDR: 'sp[1-2]' names several switches at one level; genx treats them as "
          "one switch");

    CHECK(build_from_topology_addrs({"s.l1.a", "s.l2.a"}, {}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 's.l2.a': 'a' is under 'l2' here but under 'l1' in 's.l1.a' (a node "
          "with two "
          "addresses)");
    CHECK(build_from_topology_addrs({"s1.l.a", "s2.l.b"}, {}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 's2.l.b': 'l' is under 's2' here but under 's1' in 's1.l.a' (not a "
          "tree)");
    CHECK(build_from_topology_addrs({"s..a"}, {}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 's..a' has an empty or blank component");
    CHECK(build_from_topology_addrs({"a"}, {}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 'a' names no switch (topology/tree gives switch.….node)");
    CHECK(build_from_topology_addrs({"s.a"}, {"node.switch"}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 's.a': pattern 'node.switch' is not switch.….node with one kind per "
          "component");
    CHECK(build_from_topology_addrs({"s.a", "a.b"}, {}, &t).message() ==
          "SLURM_TOPOLOGY_ADDR 'a.b': 'a' is both a switch and a node");
    CHECK(build_from_topology_addrs({}, {}, &t).message() == "no SLURM_TOPOLOGY_ADDR was given");
}

// ------------------------------------------------------ genx-topo --probe

#include <random>

#include "topology/probe.hpp"

namespace {

// Hosts h0..h{n-1}, RTT from a function of the two hosts, with a few
// percent of deterministic noise; then the tree built back from the
// topology.conf (and overlay) the probe writes.
struct Probed {
    genx::ProbeTree tree;
    genx::Topology topo;
};

template <typename F>
Probed probe(int n, F rtt_of, double noise = 0.05) {
    std::vector<std::string> hosts;
    for (int i = 0; i < n; ++i) hosts.push_back("h" + std::to_string(i));
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(1 - noise, 1 + noise);
    std::vector<double> rtt(static_cast<size_t>(n) * static_cast<size_t>(n), 0);
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            if (a != b) rtt[static_cast<size_t>(a * n + b)] = rtt_of(a, b) * u(rng);
    Probed p;
    REQUIRE(genx::group_by_rtt(hosts, rtt, genx::ProbeOptions{}, &p.tree).is_ok());
    p.tree.host_rate = 25e6;
    // Each switch its own measured rate: 50, 51, 52 ... MB/s.
    for (size_t i = 1; i < p.tree.switches.size(); ++i)
        p.tree.switches[i].rate = 50e6 + 1e6 * static_cast<double>(i - 1);
    std::vector<genx::SlurmSwitch> sw;
    const std::string conf = genx::probe_topology_conf(p.tree, {"test"});
    INFO(conf);
    REQUIRE(genx::parse_slurm_topology(conf, "probe.conf", &sw).is_ok());
    REQUIRE(genx::build_slurm_topology(sw, "probe.conf", &p.topo).is_ok());
    const genx::Status ov = genx::apply_overlay(genx::probe_overlay_json(p.tree), "probe.json", &p.topo);
    INFO(ov.message());
    REQUIRE(ov.is_ok());
    REQUIRE(p.topo.validate() == "");
    return p;
}

std::string parent_of(const genx::Topology& t, const std::string& node) {
    const genx::Node& n = t.nodes[static_cast<size_t>(t.find(node))];
    return n.parent < 0 ? "" : t.nodes[static_cast<size_t>(n.parent)].name;
}

}  // namespace

TEST_CASE("[probe] two leaves found by round-trip time (tree:2x4)", "[slurm_topology][probe]") {
    const Probed p = probe(8, [](int a, int b) { return a / 4 == b / 4 ? 100e-6 : 300e-6; });
    REQUIRE(p.tree.switches.size() == 3);
    for (int h = 0; h < 8; ++h) {
        CHECK(parent_of(p.topo, "h" + std::to_string(h)) ==
              parent_of(p.topo, "h" + std::to_string(h / 4 * 4)));
        CHECK(parent_of(p.topo, parent_of(p.topo, "h" + std::to_string(h))) == "probe-root");
    }
    CHECK(parent_of(p.topo, "h0") != parent_of(p.topo, "h4"));
    // The overlay's measured rates land on the links.
    const genx::Node& h0 = p.topo.nodes[static_cast<size_t>(p.topo.find("h0"))];
    CHECK(p.topo.classes[static_cast<size_t>(h0.up_class)].rate == Approx(25e6));
    // Each leaf keeps its own measured rate (no class shared between them).
    for (const char* h : {"h0", "h4"}) {
        const genx::Node& host = p.topo.nodes[static_cast<size_t>(p.topo.find(h))];
        const genx::Node& leaf = p.topo.nodes[static_cast<size_t>(host.parent)];
        const int s = std::stoi(leaf.name.substr(std::string("probe-s").size()));
        CHECK(p.topo.classes[static_cast<size_t>(leaf.up_class)].rate == Approx(50e6 + 1e6 * (s - 1)));
        CHECK(leaf.oversubscription == Approx(4 * 25e6 / (50e6 + 1e6 * (s - 1))));
    }
}

TEST_CASE("[probe] two datacenters: three levels", "[slurm_topology][probe]") {
    // Leaves of 2 hosts, two leaves per datacenter, a 4 ms link between.
    const Probed p = probe(8, [](int a, int b) {
        if (a / 2 == b / 2) return 100e-6;
        if (a / 4 == b / 4) return 200e-6;
        return 4100e-6;
    });
    REQUIRE(p.tree.switches.size() == 7);  // root, 2 datacenters, 4 leaves
    CHECK(p.tree.level_rtt.size() == 3);
    const std::string leaf0 = parent_of(p.topo, "h0"), dc0 = parent_of(p.topo, leaf0);
    CHECK(parent_of(p.topo, "h1") == leaf0);
    CHECK(parent_of(p.topo, parent_of(p.topo, "h2")) == dc0);
    CHECK(parent_of(p.topo, parent_of(p.topo, "h4")) != dc0);
    CHECK(parent_of(p.topo, dc0) == "probe-root");
}

TEST_CASE("[probe] one switch, and a host alone behind a slower path", "[slurm_topology][probe]") {
    // Noise below the break: everything on one switch.
    const Probed flat = probe(6, [](int, int) { return 100e-6; }, 0.1);
    CHECK(flat.tree.switches.size() == 1);
    for (int h = 0; h < 6; ++h) CHECK(parent_of(flat.topo, "h" + std::to_string(h)) == "probe-root");
    // asym: leaves {0-3}, {4, 5}, and h6 alone under a leaf of its own.
    const Probed asym = probe(7, [](int a, int b) {
        auto leaf = [](int h) { return h < 4 ? 0 : h < 6 ? 1 : 2; };
        return leaf(a) == leaf(b) ? 100e-6 : 300e-6;
    });
    CHECK(asym.tree.switches.size() == 4);
    CHECK(parent_of(asym.topo, parent_of(asym.topo, "h6")) == "probe-root");
    CHECK(parent_of(asym.topo, "h6") != parent_of(asym.topo, "h4"));
    CHECK(parent_of(asym.topo, "h4") == parent_of(asym.topo, "h5"));
    CHECK(parent_of(asym.topo, "h4") != parent_of(asym.topo, "h0"));
    // Small absolute differences are not levels (abs_gap 20 us).
    const Probed near = probe(4, [](int a, int b) { return a / 2 == b / 2 ? 10e-6 : 20e-6; }, 0);
    CHECK(near.tree.switches.size() == 1);
}

TEST_CASE("[probe] malformed measurements are refused", "[slurm_topology][probe]") {
    genx::ProbeTree t;
    CHECK(genx::group_by_rtt({"a", "b"}, {0, 1e-4, 1e-4}, {}, &t).message() ==
          "probe: 3 round-trip times for 2 hosts (expected 4)");
    CHECK(genx::group_by_rtt({"a", "b"}, {0, 0, 0, 0}, {}, &t).message() ==
          "probe: round-trip time between a and b is not a positive number");
    CHECK(genx::group_by_rtt({}, {}, {}, &t).message() == "probe: no hosts");
}
