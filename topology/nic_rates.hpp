// NIC link rates, each source behind one small interface so that tests can
// fake it, and a merge that says which source gave each number and where
// two sources disagree.
//
// Why several sources, in this order:
//   1. Linux sysfs (/sys/class/net/IF/speed in Mbit/s, -1 when unknown;
//      /sys/class/infiniband/HCA/ports/N/rate as "100 Gb/sec (4X EDR)"):
//      present on every Linux host, no library needed.  The reader takes a
//      root directory so that tests point it at a fake tree.
//   2. libfabric (fi_getinfo, fi_info->nic->link_attr->speed in bit/s):
//      filled only by providers tied to a hardware NIC (verbs, efa, psm3);
//      tcp, udp, shm leave `nic` NULL, which is reported as "unknown",
//      never replaced by a guess.
//   3. UCX (UCT interface attributes), opt-in only (genx-topo --ucx): the
//      bandwidth UCT reports is its own model, not a measurement (on TCP
//      of unknown speed it assumes 100 Mbit/s; on InfiniBand it derives
//      the rate from the port's width and speed, less protocol overhead),
//      and UCT's API is not promised stable across releases.  It comes
//      last, so it gives a number only where sysfs and libfabric give none,
//      and every disagreement is reported.  Its code lives in
//      topology/ucx_nics.cpp, linked into genx-topo only: the component
//      never loads UCT through genx.
//
// Nominal rates are what the hardware negotiated, not what a shaped or
// shared link delivers: a veth says 10 Gbit/s whatever tc limits it to.
// The topology overlay (docs/topology.md) overrides them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"

struct fi_info;

namespace genx {

struct NicInfo {
    std::string name;       // netdev (eth0) or HCA (mlx5_0)
    int port = 0;           // InfiniBand port; 0 for a netdev
    std::string kind;       // "network" or "openfabrics"
    double rate = 0;        // bytes/s; 0 = unknown
    std::string source;     // "sysfs", "libfabric", ...
    std::string pci_busid;  // "0000:03:00.0"; empty when unknown
    std::string detail;     // what the source said, verbatim where useful
};

class NicRateSource {
  public:
    virtual ~NicRateSource() = default;
    virtual std::string name() const = 0;
    // Every NIC the source knows, with rate 0 where it knows no rate.
    virtual Status list(std::vector<NicInfo>* out) = 0;
};

// Reads ROOT/class/net/* and ROOT/class/infiniband/*/ports/* (ROOT is
// "/sys" on a live system).  Loopback devices (type 772) are skipped.
class SysfsNicSource : public NicRateSource {
  public:
    explicit SysfsNicSource(std::string root = "/sys") : root_(std::move(root)) {}
    std::string name() const override { return "sysfs"; }
    Status list(std::vector<NicInfo>* out) override;

  private:
    std::string root_;
};

// Parses an InfiniBand port rate ("100 Gb/sec (4X EDR)", "2.5 Gb/sec
// (1X SDR)") into bytes/s.
Status parse_ib_rate(const std::string& text, double* bytes_per_s);

// fi_getinfo over every provider.  One entry per (provider, domain).
class LibfabricNicSource : public NicRateSource {
  public:
    std::string name() const override { return "libfabric"; }
    Status list(std::vector<NicInfo>* out) override;
};

// One fi_info entry as a NicInfo (rate 0 and a detail saying why when the
// provider gives no link attributes).  Exposed for tests, which build
// fi_info structures by hand.
NicInfo nic_from_fi_info(const struct fi_info* info);
// The NICs of an fi_getinfo list: one per (provider, name), without the
// utility providers layered over a core one ("ofi_rxm;verbs" repeats
// verbs), the shared-memory providers (shm, sm2: not NICs) and loopback.
std::vector<NicInfo> nics_from_fi_info_list(const struct fi_info* head);

// What UCT says of one transport on one device (uct_tl_resource_desc_t
// and uct_iface_attr_t, copied out so that tests need no UCX).
struct UctIfaceFacts {
    std::string tl_name;    // "tcp", "rc_verbs", "ud_mlx5", ...
    std::string dev_name;   // "eth0", "mlx5_0:1"
    bool network = false;   // dev_type == UCT_DEVICE_TYPE_NET
    double dedicated = 0;   // bandwidth.dedicated, bytes/s
    double shared = 0;      // bandwidth.shared, bytes/s
    double latency = 0;     // latency.c, seconds
    std::string pci_busid;  // ucs_topo_sys_device_bdf_name; "" when unknown
};

// A UCT device name as sysfs names the NIC: "mlx5_0:1" is HCA mlx5_0 port
// 1 (true: an OpenFabrics port), "eth0" a netdev (false, port 0).
bool split_uct_device(const std::string& dev_name, std::string* name, int* port);

// The NICs of UCT's interfaces: one per network device (shared-memory,
// self and accelerator transports are not NICs), named as sysfs names them
// ("mlx5_0:1" is HCA mlx5_0 port 1), with the largest bandwidth any
// transport reports for it (one process: dedicated + shared), and in
// `detail` every transport's figures and that they are UCT's model.
std::vector<NicInfo> nics_from_uct(const std::vector<UctIfaceFacts>& ifaces);

// Opens every UCT component, memory domain and network interface (as
// `ucx_info -d` does) and asks each its attributes.  Defined in
// topology/ucx_nics.cpp.
class UcxNicSource : public NicRateSource {
  public:
    std::string name() const override { return "ucx"; }
    Status list(std::vector<NicInfo>* out) override;
    // What list() could not open or query and could not attach to a NIC
    // it lists ("memory domain mlx5_1: No such device", "eth2: tcp: ...").
    const std::vector<std::string>& notes() const { return notes_; }

  private:
    std::vector<std::string> notes_;
};

// Merges the sources' lists, the first source (by order) with a known rate
// winning for each NIC (matched by name and port; an HCA's port 1 also
// matches a source that gives no port).  Every disagreement of more than 1%
// between known rates, and every NIC no source gives a rate for, is added
// to `notes`, naming the sources and their numbers.
std::vector<NicInfo> merge_nic_rates(const std::vector<std::vector<NicInfo>>& by_source,
                                     std::vector<std::string>* notes);

}  // namespace genx
