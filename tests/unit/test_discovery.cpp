// Discovery sources, each faked: sysfs read from the fake tree under
// tests/topology/sysfs, libfabric entries built by hand, hwloc loaded from
// the XML fixture tests/topology/host-2pkg.xml with the binding injected.
// Never this machine's own topology.
#include <hwloc.h>
#include <rdma/fabric.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "topology/hwloc_host.hpp"
#include "topology/nic_rates.hpp"
#include "topology/topology.hpp"

using namespace genx;

namespace {
std::string fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}

std::vector<NicInfo> sysfs_nics() {
    SysfsNicSource src(fixture("sysfs"));
    std::vector<NicInfo> out;
    REQUIRE(src.list(&out).is_ok());
    return out;
}

NicInfo fake(const std::string& name, double rate, const std::string& source) {
    NicInfo n;
    n.name = name;
    n.rate = rate;
    n.source = source;
    n.kind = "openfabrics";
    n.detail = "fake";
    return n;
}
}  // namespace

TEST_CASE("[discovery] sysfs: netdev speeds in Mb/s, InfiniBand port rates, unknowns stay unknown",
          "[discovery]") {
    const std::vector<NicInfo> n = sysfs_nics();
    REQUIRE(n.size() == 6);  // lo skipped
    CHECK(n[0].name == "down0");
    CHECK(n[0].rate == 0);
    CHECK(n[0].detail == "speed -1 (unknown or link down)");
    CHECK(n[1].name == "eth0");
    CHECK(n[1].rate == Approx(3.125e9));
    CHECK(n[1].pci_busid == "0000:04:00.0");
    CHECK(n[1].source == "sysfs");
    CHECK(n[2].name == "ib0");
    CHECK(n[2].rate == 0);
    CHECK(n[2].detail == "speed unreadable (no link settings)");
    CHECK(n[3].name == "veth0");
    CHECK(n[3].rate == Approx(1.25e9));
    CHECK(n[3].pci_busid.empty());
    CHECK(n[4].name == "mlx5_0");
    CHECK(n[4].port == 1);
    CHECK(n[4].kind == "openfabrics");
    CHECK(n[4].rate == Approx(12.5e9));
    CHECK(n[4].pci_busid == "0000:03:00.0");
    CHECK(n[4].detail == "rate 100 Gb/sec (4X EDR)");
    CHECK(n[5].port == 2);
    CHECK(n[5].rate == 0);
    CHECK(n[5].detail == "rate 10 Gb/sec (4X SDR), state 1: DOWN (rate not used)");
    std::vector<NicInfo> none;
    CHECK(SysfsNicSource(fixture("no-such-dir")).list(&none).is_ok());
    CHECK(none.empty());
    // A `device` link with no uevent behind it (dangling here): the bus id
    // is the last component of its target.
    char tmpl[] = "/tmp/genx-sysfs-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string root = tmpl;
    const std::string dev = root + "/class/net/eth9";
    REQUIRE(std::system(("mkdir -p '" + dev + "' && echo 40000 > '" + dev + "/speed' && echo 1 > '" +
                         dev + "/type' && ln -s ../../../devices/pci0000:00/0000:05:00.0 '" + dev +
                         "/device'")
                            .c_str()) == 0);
    std::vector<NicInfo> linked;
    REQUIRE(SysfsNicSource(root).list(&linked).is_ok());
    REQUIRE(linked.size() == 1);
    CHECK(linked[0].pci_busid == "0000:05:00.0");
    CHECK(linked[0].rate == Approx(5e9));
    REQUIRE(std::system(("rm -rf '" + root + "'").c_str()) == 0);
}

TEST_CASE("[discovery] InfiniBand rate strings", "[discovery]") {
    double v = 0;
    REQUIRE(parse_ib_rate("2.5 Gb/sec (1X SDR)", &v).is_ok());
    CHECK(v == Approx(2.5e9 / 8));
    REQUIRE(parse_ib_rate("200 Gb/sec (4X HDR)", &v).is_ok());
    CHECK(v == Approx(25e9));
    CHECK(parse_ib_rate("fast", &v).message() ==
          "InfiniBand rate 'fast' does not start with a number and a unit");
    CHECK(parse_ib_rate("100 furlongs", &v).message() ==
          "InfiniBand rate '100 furlongs' has an unknown unit 'furlongs'");
}

TEST_CASE("[discovery] libfabric entries: link speed in bit/s, no NIC means unknown",
          "[discovery]") {
    struct fi_fabric_attr fab = {};
    char verbs[] = "verbs", tcp[] = "tcp", dom_name[] = "mlx5_0", eth[] = "eth0";
    fab.prov_name = verbs;
    struct fi_domain_attr dom = {};
    dom.name = dom_name;
    struct fi_device_attr dev = {};
    dev.name = dom_name;
    struct fi_link_attr link = {};
    link.speed = 100000000000ULL;  // 100 Gbit/s
    link.state = FI_LINK_UP;
    struct fi_bus_attr bus = {};
    bus.bus_type = FI_BUS_PCI;
    bus.attr.pci.domain_id = 0;
    bus.attr.pci.bus_id = 0x3b;
    bus.attr.pci.device_id = 0;
    bus.attr.pci.function_id = 1;
    struct fid_nic nic = {};
    nic.device_attr = &dev;
    nic.link_attr = &link;
    nic.bus_attr = &bus;
    struct fi_info info = {};
    info.fabric_attr = &fab;
    info.domain_attr = &dom;
    info.nic = &nic;
    NicInfo n = nic_from_fi_info(&info);
    CHECK(n.name == "mlx5_0");
    CHECK(n.rate == Approx(12.5e9));
    CHECK(n.pci_busid == "0000:3b:00.1");
    CHECK(n.source == "libfabric");
    CHECK(n.detail == "provider verbs, link speed 100000000000 bit/s");
    link.state = FI_LINK_DOWN;
    CHECK(nic_from_fi_info(&info).rate == 0);
    link.state = FI_LINK_UP;
    link.speed = 0;
    CHECK(nic_from_fi_info(&info).detail == "provider verbs gives no link speed (rate unknown)");
    // tcp: no NIC attributes at all; the rate stays unknown.
    fab.prov_name = tcp;
    dom.name = eth;
    info.nic = nullptr;
    n = nic_from_fi_info(&info);
    CHECK(n.name == "eth0");
    CHECK(n.rate == 0);
    CHECK(n.detail == "provider tcp gives no NIC attributes (rate unknown)");
}

TEST_CASE(
    "[discovery] an fi_getinfo list: one entry per provider and NIC, no layered, shm or loopback",
    "[discovery]") {
    char verbs[] = "verbs", rxm[] = "ofi_rxm;verbs", shm[] = "shm", tcp[] = "tcp";
    char mlx[] = "mlx5_0", shmname[] = "shm", lo[] = "lo", eth[] = "eth0";
    struct fi_fabric_attr f_verbs = {}, f_rxm = {}, f_shm = {}, f_tcp = {};
    f_verbs.prov_name = verbs;
    f_rxm.prov_name = rxm;
    f_shm.prov_name = shm;
    f_tcp.prov_name = tcp;
    struct fi_domain_attr d_mlx = {}, d_shm = {}, d_lo = {}, d_eth = {};
    d_mlx.name = mlx;
    d_shm.name = shmname;
    d_lo.name = lo;
    d_eth.name = eth;
    struct fi_info e[7] = {};
    struct fi_fabric_attr* fabs[7] = {&f_verbs, &f_verbs, &f_rxm, &f_shm, &f_tcp, &f_tcp, &f_tcp};
    struct fi_domain_attr* doms[7] = {&d_mlx, &d_mlx, &d_mlx, &d_shm, &d_lo, &d_eth, &d_eth};
    for (int i = 0; i < 7; ++i) {
        e[i].fabric_attr = fabs[i];
        e[i].domain_attr = doms[i];
        e[i].next = i + 1 < 7 ? &e[i + 1] : nullptr;
    }
    const std::vector<NicInfo> n = nics_from_fi_info_list(&e[0]);
    REQUIRE(n.size() == 2);
    CHECK(n[0].name == "mlx5_0");
    CHECK(n[0].detail == "provider verbs gives no NIC attributes (rate unknown)");
    CHECK(n[1].name == "eth0");
    CHECK(n[1].detail == "provider tcp gives no NIC attributes (rate unknown)");
    CHECK(nics_from_fi_info_list(nullptr).empty());
}

TEST_CASE("[discovery] merging sources: first known rate wins, disagreements and unknowns reported",
          "[discovery]") {
    const std::vector<NicInfo> fab = {fake("mlx5_0", 12.5e9, "libfabric"),
                                      fake("eth0", 1.25e9, "libfabric"),
                                      fake("hfi1_0", 0, "libfabric")};
    std::vector<std::string> notes;
    const std::vector<NicInfo> m = merge_nic_rates({sysfs_nics(), fab}, &notes);
    REQUIRE(m.size() == 7);
    CHECK(m[1].name == "eth0");
    CHECK(m[1].source == "sysfs");
    CHECK(m[1].rate == Approx(3.125e9));
    CHECK(m[4].name == "mlx5_0");
    CHECK(m[4].port == 1);
    CHECK(m[6].name == "hfi1_0");
    REQUIRE(notes.size() == 5);
    CHECK(notes[0] == "down0: no source gives a rate (sysfs: speed -1 (unknown or link down))");
    CHECK(notes[1] == "eth0: sysfs says 25 Gbit/s, libfabric says 10 Gbit/s; genx uses sysfs's");
    CHECK(notes[2] == "ib0: no source gives a rate (sysfs: speed unreadable (no link settings))");
    CHECK(notes[3] ==
          "mlx5_0 port 2: no source gives a rate (sysfs: rate 10 Gb/sec (4X SDR), state 1: DOWN "
          "(rate not used))");
    CHECK(notes[4] == "hfi1_0: no source gives a rate (libfabric: fake)");
    // Order decides: with libfabric first, its number is used and sysfs's
    // is the one reported as disagreeing.
    notes.clear();
    const std::vector<NicInfo> m2 = merge_nic_rates({fab, sysfs_nics()}, &notes);
    CHECK(m2[1].name == "eth0");
    CHECK(m2[1].rate == Approx(1.25e9));
    CHECK(
        std::find(notes.begin(), notes.end(),
                  "eth0: libfabric says 10 Gbit/s, sysfs says 25 Gbit/s; genx uses libfabric's") !=
        notes.end());
    // A source with no rate does not hide another's.
    notes.clear();
    const std::vector<NicInfo> m3 =
        merge_nic_rates({{fake("x", 0, "a")}, {fake("x", 1e9, "b")}}, &notes);
    CHECK(m3[0].rate == 1e9);
    CHECK(m3[0].source == "b");
    CHECK(notes.empty());
}

TEST_CASE("[discovery] UCX interfaces: one NIC per network device, the best transport's model",
          "[discovery]") {
    auto iface = [](const char* tl, const char* dev, bool net, double dedicated, double shared,
                    const char* bdf = "") {
        UctIfaceFacts f;
        f.tl_name = tl;
        f.dev_name = dev;
        f.network = net;
        f.dedicated = dedicated;
        f.shared = shared;
        f.latency = 1e-6;
        f.pci_busid = bdf;
        return f;
    };
    const std::vector<NicInfo> n = nics_from_uct({
        iface("posix", "memory", false, 0, 12e9),            // shared memory: not a NIC
        iface("tcp", "eth0", true, 11.8e6, 0),               // UCT's 100 Mb/s assumption
        iface("rc_verbs", "mlx5_0:1", true, 11.5e9, 0, "0000:03:00.0"),
        iface("ud_verbs", "mlx5_0:1", true, 0, 11.9e9),      // better: this one is kept
        iface("rc_verbs", "mlx5_0:2", true, 0, 0),           // no bandwidth: rate unknown
        iface("tcp", "", true, 1e9, 0),                      // no device name: skipped
    });
    REQUIRE(n.size() == 3);
    CHECK(n[0].name == "eth0");
    CHECK(n[0].port == 0);
    CHECK(n[0].kind == "network");
    CHECK(n[0].source == "ucx");
    CHECK(n[0].rate == Approx(11.8e6));
    CHECK(n[1].name == "mlx5_0");
    CHECK(n[1].port == 1);
    CHECK(n[1].kind == "openfabrics");
    CHECK(n[1].rate == Approx(11.9e9));
    CHECK(n[1].pci_busid == "0000:03:00.0");  // from the transport that gave it
    CHECK(n[1].detail.find("not a measurement") != std::string::npos);
    CHECK(n[1].detail.find("rc_verbs: ") != std::string::npos);
    CHECK(n[1].detail.find("ud_verbs: ") != std::string::npos);
    CHECK(n[2].port == 2);
    CHECK(n[2].rate == 0);
    // Last in the merge: sysfs's number wins where it has one, UCX's
    // disagreement is reported, and a rate only UCX gives is said to be
    // its model.
    std::vector<std::string> notes;
    const std::vector<NicInfo> m =
        merge_nic_rates({{fake("mlx5_0", 12.5e9, "sysfs")}, n}, &notes);
    REQUIRE(m.size() == 3);
    CHECK(m[0].source == "sysfs");
    CHECK(std::find(notes.begin(), notes.end(),
                    "mlx5_0: sysfs says 100 Gbit/s, ucx says 95.2 Gbit/s; genx uses sysfs's") !=
          notes.end());
    CHECK(m[1].name == "eth0");
    CHECK(m[1].source == "ucx");
    CHECK(std::count_if(notes.begin(), notes.end(), [](const std::string& x) {
              return x.rfind("eth0: only UCX gives a rate, 94.4 Mbit/s: UCT's bandwidth model", 0) == 0;
          }) == 1);
}

TEST_CASE(
    "[discovery] hwloc from XML: packages, NUMA, cores, NICs and GPUs with locality, injected "
    "binding",
    "[discovery]") {
    HostHardware hw;
    Status s = HwlocHostSource(fixture("host-2pkg.xml"), "2-3").load(&hw);
    INFO(s.message());
    REQUIRE(s.is_ok());
    CHECK(hw.packages == 2);
    CHECK(hw.numa_nodes == 2);
    REQUIRE(hw.cores.size() == 4);
    CHECK(hw.cores[3].package == 1);
    CHECK(hw.cores[3].numa == 1);
    CHECK(hw.cores[3].cpus == std::vector<int>{3});
    CHECK(hw.bound_cores == std::vector<int>{2, 3});
    CHECK(hw.bound_package == 1);
    CHECK(hw.bound_numa == 1);
    CHECK(hw.binding == "cpus 2-3 (given)");
    REQUIRE(hw.devices.size() == 4);  // ib0, mlx5_0, eth0, one GPU (not the ASPEED VGA)
    CHECK(hw.devices[0].name == "ib0");
    CHECK(hw.devices[0].kind == "network");
    CHECK(hw.devices[0].pci_busid == "0000:03:00.0");
    CHECK(hw.devices[0].package == 0);
    CHECK(hw.devices[1].name == "mlx5_0");
    CHECK(hw.devices[1].kind == "openfabrics");
    CHECK(hw.devices[2].name == "eth0");
    CHECK(hw.devices[2].pci_busid == "0000:04:00.0");
    CHECK(hw.devices[3].kind == "gpu");
    CHECK(hw.devices[3].pci_busid == "0000:81:00.0");
    CHECK(hw.devices[3].package == 1);
    CHECK(hw.devices[3].class_id == 0x0302);

    REQUIRE(HwlocHostSource(fixture("host-2pkg.xml"), "1-2").load(&hw).is_ok());
    CHECK(hw.bound_cores == std::vector<int>{1, 2});
    CHECK(hw.bound_package == -1);  // spans both packages
    CHECK(hw.bound_numa == -1);
    REQUIRE(HwlocHostSource(fixture("host-2pkg.xml"), "").load(&hw).is_ok());
    CHECK(hw.bound_cores.empty());
    CHECK(hw.binding == "unknown (not this machine's topology, and no binding given)");
    CHECK(HwlocHostSource(fixture("host-2pkg.xml"), "9").load(&hw).message() ==
          "binding '9' names cpus the host does not have");
    CHECK(HwlocHostSource(fixture("host-2pkg.xml"), "x").load(&hw).message() ==
          "binding 'x' is not a cpu list like 0-3,8");
    CHECK(HwlocHostSource(fixture("no-such.xml"), "").load(&hw).message() ==
          fixture("no-such.xml") + ": hwloc cannot read it as an XML topology");
}

TEST_CASE(
    "[discovery] hwloc: a topology loaded elsewhere (as Open MPI's) reads the same, and is not "
    "freed",
    "[discovery]") {
    hwloc_topology_t t = nullptr;
    REQUIRE(hwloc_topology_init(&t) == 0);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    REQUIRE(hwloc_topology_set_xml(t, fixture("host-2pkg.xml").c_str()) == 0);
    REQUIRE(hwloc_topology_load(t) == 0);
    HostHardware a, b;
    REQUIRE(HwlocHostSource(fixture("host-2pkg.xml"), "2-3").load(&a).is_ok());
    REQUIRE(HwlocLoadedSource(t, false, "2-3").load(&b).is_ok());
    CHECK(b.cores.size() == a.cores.size());
    CHECK(b.bound_cores == a.bound_cores);
    CHECK(b.bound_package == 1);
    REQUIRE(b.devices.size() == a.devices.size());
    for (size_t i = 0; i < a.devices.size(); ++i) {
        CHECK(b.devices[i].name == a.devices[i].name);
        CHECK(b.devices[i].pci_busid == a.devices[i].pci_busid);
        CHECK(b.devices[i].package == a.devices[i].package);
    }
    // Still usable: the source did not destroy it.
    CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) == 4);
    hwloc_topology_destroy(t);
    CHECK(HwlocLoadedSource(nullptr, true).load(&b).message() ==
          "no loaded hwloc topology was given");
}

TEST_CASE(
    "[discovery] a host's hardware in the model: one NIC per PCI device, rates by source, GPUs",
    "[discovery]") {
    HostHardware hw;
    REQUIRE(HwlocHostSource(fixture("host-2pkg.xml"), "2-3").load(&hw).is_ok());
    Topology t;
    const int leaf = t.class_index("leaf");
    const int sw = t.add_node(TopoKind::Switch, "sw", -1);
    const int host = t.add_node(TopoKind::Host, "a", sw, leaf);
    std::vector<std::string> notes;
    const std::vector<NicInfo> nics = merge_nic_rates({sysfs_nics()}, &notes);
    REQUIRE(add_host_hardware(&t, host, hw, nics, 7).is_ok());
    REQUIRE(t.validate() == "");
    const std::string text = t.to_text();
    INFO(text);
    CHECK(
        text.find(
            "\n    package 1\n      numa 1\n        core 2  ranks 7\n        core 3  ranks 7\n") !=
        std::string::npos);
    CHECK(text.find("\n    nic ib0/mlx5_0 (openfabrics, pci 0000:03:00.0, package 0) 100 Gbit/s "
                    "[sysfs]\n") != std::string::npos);
    CHECK(text.find("\n    nic eth0 (network, pci 0000:04:00.0, package 0) 25 Gbit/s [sysfs]\n") !=
          std::string::npos);
    CHECK(text.find("\n    gpu gpu0 (pci 0000:81:00.0, package 1)\n") != std::string::npos);
    TopologyView v;
    REQUIRE(to_view(t, {"a"}, &v).is_ok());
    CHECK(v.nodes[1].nics == 2);
    CHECK(add_host_hardware(&t, sw, hw, nics).message() == "node 0 is not a host");
    // No NIC seen by hwloc: the rate sources' devices with a rate are kept.
    Topology t2;
    const int sw2 = t2.add_node(TopoKind::Switch, "sw", -1);
    const int h2 = t2.add_node(TopoKind::Host, "b", sw2, t2.class_index("leaf"));
    REQUIRE(add_host_hardware(&t2, h2, HostHardware(), {fake("veth0", 1.25e9, "sysfs")}).is_ok());
    CHECK(
        t2.to_text().find("\n    nic veth0 (openfabrics) 10 Gbit/s [sysfs, not seen by hwloc]\n") !=
        std::string::npos);
}
