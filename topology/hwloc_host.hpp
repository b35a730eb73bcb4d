// The inside of one host from hwloc 2: packages, NUMA nodes, cores, the
// network and OpenFabrics devices and the NVIDIA GPUs with their PCI
// locality, and the calling rank's binding.
//
// Why hwloc, and why behind an interface: hwloc is what Open MPI already
// uses for locality, and it sees I/O devices when asked to keep them
// (HWLOC_TYPE_FILTER_KEEP_IMPORTANT).  Debian's hwloc has no CUDA or NVML
// plugin, so a GPU is an NVIDIA PCI device (vendor 0x10de, class 0x03xx)
// and its locality is its package.  hwloc gives no link rates; those come
// from nic_rates.hpp.  Tests load XML fixtures under tests/topology/, never
// this machine's topology; on an XML topology hwloc reports the whole
// machine as the binding, so the binding is injected (a cpu list like
// "2-3", as in /proc/self/status).  In the component, Open MPI's loaded
// topology can be handed over through the same HostHardware record.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "topology/nic_rates.hpp"
#include "topology/topology.hpp"

struct hwloc_topology;

namespace genx {

struct HostDevice {
    std::string name;       // ib0, mlx5_0, eth0; gpu0, gpu1 ... for GPUs
    std::string kind;       // "network", "openfabrics", "gpu"
    std::string pci_busid;  // "0000:03:00.0"; empty when not on PCI
    int package = -1;       // logical index of the package it hangs from; -1 unknown
    unsigned vendor_id = 0, device_id = 0, class_id = 0;
};

struct HostCore {
    int index = 0;  // logical core index
    int package = -1;
    int numa = -1;
    std::vector<int> cpus;  // OS indices of its PUs
};

struct HostHardware {
    int packages = 0;
    int numa_nodes = 0;
    std::vector<HostCore> cores;
    std::vector<HostDevice> devices;
    // The rank's binding: the cores it may run on, and the package and NUMA
    // node when they are a single one (-1 when it spans several or is
    // unknown).  `binding` says in words what was found.
    std::vector<int> bound_cores;
    int bound_package = -1;
    int bound_numa = -1;
    std::string binding;
};

class HostSource {
  public:
    virtual ~HostSource() = default;
    virtual Status load(HostHardware* out) = 0;
};

class HwlocHostSource : public HostSource {
  public:
    // Empty `xml_path`: this machine.  Non-empty `binding_cpus` (a cpu
    // list, "0-1,4"): the binding to report instead of asking hwloc.
    // `io` false: no I/O devices (hwloc's PCI plugin is not run: faster,
    // and inside MPI processes it leaves no libpciaccess allocations).
    HwlocHostSource(std::string xml_path, std::string binding_cpus, bool io = true)
        : xml_(std::move(xml_path)), binding_(std::move(binding_cpus)), io_(io) {}
    Status load(HostHardware* out) override;

  private:
    std::string xml_;
    std::string binding_;
    bool io_;
};

// A topology someone else loaded and keeps (inside the component, Open
// MPI's opal_hwloc_topology): read, never destroyed.  It has the I/O
// objects its loader kept (Open MPI keeps the important ones when asked).
// `this_system`: hwloc may report this process's binding from it.
class HwlocLoadedSource : public HostSource {
  public:
    HwlocLoadedSource(struct hwloc_topology* topo, bool this_system, std::string binding_cpus = "")
        : topo_(topo), this_system_(this_system), binding_(std::move(binding_cpus)) {}
    Status load(HostHardware* out) override;

  private:
    struct hwloc_topology* topo_;
    bool this_system_;
    std::string binding_;
};

// Hangs packages → NUMA nodes → cores, the NICs (with rates from `nics`,
// matched by name) and the GPUs below host node `host`, and places `rank`
// (when ≥ 0) on its bound cores.  NICs that `nics` knows but hwloc does not
// (a veth, a bridge) are added too, without PCI locality.
Status add_host_hardware(Topology* topo, int host, const HostHardware& hw,
                         const std::vector<NicInfo>& nics, int rank = -1);

}  // namespace genx
