// hwloc 2 discovery of one host and its placement in the topology model;
// why and what: hwloc_host.hpp.
#include "topology/hwloc_host.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "common/text_util.hpp"

namespace genx {

namespace {

struct TopoHandle {
    hwloc_topology_t t = nullptr;
    ~TopoHandle() {
        if (t) hwloc_topology_destroy(t);
    }
};

struct BitmapHandle {
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    ~BitmapHandle() { hwloc_bitmap_free(b); }
};

bool is_type(hwloc_obj_t o, hwloc_obj_osdev_type_t type) {
#if HWLOC_API_VERSION >= 0x00030000
    // hwloc 3 turned the OS device type into a bit mask.
    return (o->attr->osdev.types & type) != 0;
#else
    return o->attr->osdev.type == type;
#endif
}

std::string busid(hwloc_obj_t pci) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain,
                  pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    return buf;
}

// Logical index of the package above an I/O object's CPU-side ancestor.
int package_of_io(hwloc_topology_t t, hwloc_obj_t io) {
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, io);
    if (!a) return -1;
    if (a->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(a->logical_index);
    hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, a);
    return p ? static_cast<int>(p->logical_index) : -1;
}

}  // namespace

namespace {
// Reads a loaded topology.  `this_system`: the topology is this machine's,
// so hwloc can report the process's binding.
Status read_topology(hwloc_topology_t t, const std::string& binding_, bool this_system,
                     HostHardware* out) {
    *out = HostHardware();
    out->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    out->numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    const int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    for (int i = 0; i < ncores; ++i) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
        HostCore hc;
        hc.index = static_cast<int>(c->logical_index);
        hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, c);
        hc.package = p ? static_cast<int>(p->logical_index) : -1;
        // NUMA nodes are memory children in hwloc 2, not tree levels: the
        // core's node is the one whose cpuset contains the core's.
        for (int n = 0; n < out->numa_nodes; ++n) {
            hwloc_obj_t numa =
                hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
            if (hwloc_bitmap_isincluded(c->cpuset, numa->cpuset)) {
                hc.numa = static_cast<int>(numa->logical_index);
                break;
            }
        }
        int cpu = -1;
        hwloc_bitmap_foreach_begin(cpu, c->cpuset) hc.cpus.push_back(cpu);
        hwloc_bitmap_foreach_end();
        out->cores.push_back(hc);
    }
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
        HostDevice d;
        if (is_type(o, HWLOC_OBJ_OSDEV_NETWORK))
            d.kind = "network";
        else if (is_type(o, HWLOC_OBJ_OSDEV_OPENFABRICS))
            d.kind = "openfabrics";
        else
            continue;
        d.name = o->name ? o->name : "";
        hwloc_obj_t pci = o->parent;
        while (pci && pci->type != HWLOC_OBJ_PCI_DEVICE && hwloc_obj_type_is_io(pci->type))
            pci = pci->parent;
        if (pci && pci->type == HWLOC_OBJ_PCI_DEVICE) {
            d.pci_busid = busid(pci);
            d.vendor_id = pci->attr->pcidev.vendor_id;
            d.device_id = pci->attr->pcidev.device_id;
            d.class_id = pci->attr->pcidev.class_id;
        }
        d.package = package_of_io(t, o);
        out->devices.push_back(d);
    }
    int gpus = 0;
    for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o)) {
        if (o->attr->pcidev.vendor_id != 0x10de || (o->attr->pcidev.class_id >> 8) != 0x03)
            continue;
        HostDevice d;
        d.kind = "gpu";
        d.name = "gpu" + std::to_string(gpus++);
        d.pci_busid = busid(o);
        d.vendor_id = o->attr->pcidev.vendor_id;
        d.device_id = o->attr->pcidev.device_id;
        d.class_id = o->attr->pcidev.class_id;
        d.package = package_of_io(t, o);
        out->devices.push_back(d);
    }

    // The binding: injected, or asked of hwloc (this machine only).
    BitmapHandle set;
    if (!binding_.empty()) {
        if (hwloc_bitmap_list_sscanf(set.b, binding_.c_str()) != 0 || hwloc_bitmap_iszero(set.b))
            return Status::invalid("binding '" + binding_ + "' is not a cpu list like 0-3,8");
        out->binding = "cpus " + binding_ + " (given)";
    } else if (this_system) {
        if (hwloc_get_cpubind(t, set.b, HWLOC_CPUBIND_PROCESS) != 0) {
            out->binding = "unknown (hwloc_get_cpubind failed)";
            return Status::ok();
        }
        char* s = nullptr;
        hwloc_bitmap_list_asprintf(&s, set.b);
        out->binding = std::string("cpus ") + (s ? s : "?") + " (hwloc_get_cpubind)";
        std::free(s);
    } else {
        out->binding = "unknown (not this machine's topology, and no binding given)";
        return Status::ok();
    }
    if (!hwloc_bitmap_isincluded(set.b, hwloc_get_root_obj(t)->cpuset))
        return Status::invalid("binding '" + binding_ + "' names cpus the host does not have");
    std::vector<int> pkgs, numas;
    for (const HostCore& c : out->cores) {
        bool in = false;
        for (int cpu : c.cpus) in = in || hwloc_bitmap_isset(set.b, static_cast<unsigned>(cpu));
        if (!in) continue;
        out->bound_cores.push_back(c.index);
        if (std::find(pkgs.begin(), pkgs.end(), c.package) == pkgs.end()) pkgs.push_back(c.package);
        if (std::find(numas.begin(), numas.end(), c.numa) == numas.end()) numas.push_back(c.numa);
    }
    out->bound_package = pkgs.size() == 1 ? pkgs[0] : -1;
    out->bound_numa = numas.size() == 1 ? numas[0] : -1;
    return Status::ok();
}

}  // namespace

Status HwlocHostSource::load(HostHardware* out) {
    *out = HostHardware();
    TopoHandle h;
    if (hwloc_topology_init(&h.t) != 0) return Status::internal("hwloc_topology_init failed");
    if (io_) hwloc_topology_set_io_types_filter(h.t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (!xml_.empty() && hwloc_topology_set_xml(h.t, xml_.c_str()) != 0)
        return Status::io_error(xml_ + ": hwloc cannot read it as an XML topology");
    if (hwloc_topology_load(h.t) != 0)
        return Status::io_error(xml_.empty()
                                    ? std::string("hwloc cannot load this machine's topology")
                                    : xml_ + ": hwloc cannot load it");
    return read_topology(h.t, binding_, xml_.empty(), out);
}

Status HwlocLoadedSource::load(HostHardware* out) {
    *out = HostHardware();
    if (!topo_) return Status::invalid("no loaded hwloc topology was given");
    return read_topology(topo_, binding_, this_system_, out);
}

Status add_host_hardware(Topology* topo, int host, const HostHardware& hw,
                         const std::vector<NicInfo>& nics, int rank) {
    if (host < 0 || host >= static_cast<int>(topo->nodes.size()) ||
        topo->nodes[static_cast<size_t>(host)].kind != TopoKind::Host)
        return Status::invalid("node " + std::to_string(host) + " is not a host");
    std::map<int, int> pkg_node, numa_node;
    for (int p = 0; p < hw.packages; ++p) {
        const int id = topo->add_node(TopoKind::Package, "package" + std::to_string(p), host);
        topo->nodes[static_cast<size_t>(id)].index = p;
        pkg_node[p] = id;
    }
    for (const HostCore& c : hw.cores) {
        int parent = host;
        if (pkg_node.count(c.package)) parent = pkg_node[c.package];
        if (c.numa >= 0) {
            if (!numa_node.count(c.numa)) {
                const int id =
                    topo->add_node(TopoKind::Numa, "numa" + std::to_string(c.numa), parent);
                topo->nodes[static_cast<size_t>(id)].index = c.numa;
                numa_node[c.numa] = id;
            }
            parent = numa_node[c.numa];
        }
        const int id = topo->add_node(TopoKind::Core, "core" + std::to_string(c.index), parent);
        Node& n = topo->nodes[static_cast<size_t>(id)];
        n.index = c.index;
        if (rank >= 0 && std::find(hw.bound_cores.begin(), hw.bound_cores.end(), c.index) !=
                             hw.bound_cores.end())
            n.ranks.push_back(rank);
    }
    // One NIC node per PCI device: a ConnectX shows as a netdev (ib0) and
    // an HCA (mlx5_0), one physical NIC.
    std::vector<std::pair<std::string, std::vector<const HostDevice*>>> by_pci;
    for (const HostDevice& d : hw.devices) {
        if (d.kind == "gpu") continue;
        const std::string key = d.pci_busid.empty() ? "name:" + d.name : d.pci_busid;
        auto it = std::find_if(by_pci.begin(), by_pci.end(),
                               [&](const auto& e) { return e.first == key; });
        if (it == by_pci.end())
            by_pci.push_back({key, {&d}});
        else
            it->second.push_back(&d);
    }
    for (const auto& [key, devs] : by_pci) {
        std::vector<std::string> names;
        for (const HostDevice* d : devs) names.push_back(d->name);
        std::string name;
        for (const std::string& s : names) name += (name.empty() ? "" : "/") + s;
        const int id = topo->add_node(TopoKind::Nic, name, host);
        Node& n = topo->nodes[static_cast<size_t>(id)];
        n.pci_busid = devs[0]->pci_busid;
        n.near_package = devs[0]->package;
        n.device_kind = devs[0]->kind;
        for (const HostDevice* d : devs)
            if (d->kind == "openfabrics") n.device_kind = "openfabrics";
        // The rate: the first of this device's names a source knows, the
        // HCA's (openfabrics) first, since an IPoIB netdev's speed is not
        // the fabric's.
        for (int pass = 0; pass < 2 && n.rate <= 0; ++pass)
            for (const HostDevice* d : devs) {
                if ((pass == 0) != (d->kind == "openfabrics")) continue;
                for (const NicInfo& ni : nics)
                    if (ni.name == d->name && ni.rate > 0 && n.rate <= 0) {
                        n.rate = ni.rate;
                        n.rate_source = ni.source;
                    }
            }
    }
    if (by_pci.empty()) {
        // hwloc saw no NIC (no I/O objects, or only virtual devices): keep
        // the rate sources' devices that have a rate, without locality.
        for (const NicInfo& ni : nics) {
            if (ni.rate <= 0) continue;
            const int id = topo->add_node(TopoKind::Nic, ni.name, host);
            Node& n = topo->nodes[static_cast<size_t>(id)];
            n.pci_busid = ni.pci_busid;
            n.device_kind = ni.kind;
            n.rate = ni.rate;
            n.rate_source = ni.source + ", not seen by hwloc";
        }
    }
    for (const HostDevice& d : hw.devices) {
        if (d.kind != "gpu") continue;
        const int id = topo->add_node(TopoKind::Gpu, d.name, host);
        Node& n = topo->nodes[static_cast<size_t>(id)];
        n.pci_busid = d.pci_busid;
        n.near_package = d.package;
        n.device_kind = "pci";
    }
    return Status::ok();
}

}  // namespace genx
