// Placing a communicator's ranks on a topology file: what the core needs
// from topology/ (genx/capi.cpp), without the Topology model's types.
//
// The topology (a Slurm topology.conf, tree form, with its optional JSON
// overlay; a graph file; or a preset name: topology/graph.hpp's
// load_network) is read once per process; every communicator of the job names the same
// files.  The ranks are placed by host name (host_of_rank[r] for rank r).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

// The view for ranks on `host_of_rank` (topology.hpp to_view()).  Errors
// name the file, line and field (topology.conf, overlay) or the rank whose
// host the file does not hold.
Status place_ranks(const std::string& topology_file, const std::string& overlay_file,
                   const std::vector<std::string>& host_of_rank,
                   std::shared_ptr<const TopologyView>* out);

// The view for ranks placed by Slurm's per-task SLURM_TOPOLOGY_ADDR
// (addrs[r], patterns[r]: rank r's address and SLURM_TOPOLOGY_ADDR_PATTERN,
// gathered from the ranks; slurm_topology.hpp build_from_topology_addrs):
// rank r's host is its address's last component, and `overlay_file`, when
// not empty, gives the switches' links their rates as for topology.conf.
// Errors name the address (or the overlay's file and field).
Status place_ranks_by_topology_addrs(const std::vector<std::string>& addrs,
                                     const std::vector<std::string>& patterns,
                                     const std::string& overlay_file,
                                     std::shared_ptr<const TopologyView>* out);

// Expands a Slurm hostlist ("node[01-04],r[1-2]n[1-2],extra"), errors
// naming what is malformed (slurm_topology.hpp's expand_hostlist).
Status expand_host_list(const std::string& expr, std::vector<std::string>* out);

// The file's host names in tree order (the order genx-plan places ranks in
// without an explicit host list).
Status topology_host_names(const std::string& topology_file, const std::string& overlay_file,
                           std::vector<std::string>* out);

}  // namespace genx
