// Each rank's locality inside its node (host, package and NUMA node of its
// binding, and what the host has: packages, NUMA nodes, NICs), as the
// component gathers it once per job, and the intra-node levels it adds to
// a communicator's topology view.
//
// Why: a topology file or Slurm's addresses stop at the host; ranks of one
// host on different packages talk over the inter-socket link, which GenTree
// and the model can follow only when the view says where each rank is.
// The record is what one rank can know about itself without asking anyone
// (hwloc's loaded topology and its binding, sysfs and libfabric for NICs);
// the glue gathers the records in its agreement exchange (docs/design.md
// §6.5).  Nothing here invents a rate: the levels inside a host take the
// view's intra class, unrated unless a file rated it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"
#include "topology/hwloc_host.hpp"
#include "topology/nic_rates.hpp"

namespace genx {

struct RankLocality {
    uint64_t host = 0;   // an id every rank computes alike for one host (hash of its name); 0 unknown
    int package = -1;    // logical index of the package of the binding; -1 unbound, spanning, unknown
    int numa = -1;       // logical index of its NUMA node; -1 likewise
    int packages = 0;    // the host's packages, NUMA nodes and NICs; 0 unknown
    int numa_nodes = 0;
    int nics = 0;
    double nic_rate = 0;  // the fastest NIC's rate, bytes/s; 0 unknown
};

// What this process says of itself: `host_name` hashed, the binding's
// package and NUMA node from `hw`, the NIC count and fastest rate of `nics`.
RankLocality locality_of(const std::string& host_name, const HostHardware& hw,
                         const std::vector<NicInfo>& nics);

// Adds the levels inside each host to `view` for the communicator whose
// rank r has locality[r]: host → package → NUMA node → ranks where every
// rank of the host is bound to one package (and, for the NUMA level, one
// NUMA node); a level with one child is left out.  A host with an unbound
// rank stays one level (said in `notes`).  `view` empty (no topology
// file): the hosts, grouped by locality's host id, go under one root with
// an unrated link class.  The inner levels' edges take the view's intra
// class (added unrated when the view has none) and are marked in_host, so
// that switch levels and depth still count the network only.  A host the
// view left with no NIC count gets the records'.  Every rank gets the same
// view from the same records.
Status add_rank_locality(const std::vector<RankLocality>& locality, TopologyView* view,
                         std::vector<std::string>* notes);

// Packs a record into the 4 words the glue exchanges, and back.  Word 0 is
// never 0 for a packed record, so an empty slot reads as "no record".
constexpr int kLocalityWords = 4;
void pack_locality(const RankLocality& r, uint64_t* words);
RankLocality unpack_locality(const uint64_t* words);

}  // namespace genx
