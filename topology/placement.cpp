#include "topology/placement.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "topology/graph.hpp"
#include "topology/slurm_topology.hpp"
#include "topology/topology.hpp"

namespace genx {

namespace {

// The tree read from a pair of files, or the error reading it gave.
struct Loaded {
    Status status;
    std::shared_ptr<const Topology> topo;
};

Loaded load(const std::string& file, const std::string& overlay) {
    static std::mutex m;
    static std::map<std::pair<std::string, std::string>, Loaded> cache;
    std::lock_guard<std::mutex> lock(m);
    const auto key = std::make_pair(file, overlay);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    Loaded out;
    auto topo = std::make_shared<Topology>();
    out.status = load_network(file, overlay, topo.get());
    if (out.status) out.topo = std::move(topo);
    cache.emplace(key, out);
    return out;
}

}  // namespace

Status place_ranks_by_topology_addrs(const std::vector<std::string>& addrs,
                                     const std::vector<std::string>& patterns,
                                     const std::string& overlay_file,
                                     std::shared_ptr<const TopologyView>* out) {
    Topology topo;
    Status st = build_from_topology_addrs(addrs, patterns, &topo);  // errors name the address
    if (!st) return st;
    if (!overlay_file.empty()) GENX_RETURN_IF_ERROR(load_overlay(overlay_file, &topo));
    std::vector<std::string> host_of_rank;
    host_of_rank.reserve(addrs.size());
    for (const std::string& a : addrs) host_of_rank.push_back(a.substr(a.rfind('.') + 1));
    auto view = std::make_shared<TopologyView>();
    st = to_view(topo, host_of_rank, view.get());
    if (!st) return Status(st.code(), "SLURM_TOPOLOGY_ADDR: " + st.message());
    *out = std::move(view);
    return Status::ok();
}

Status expand_host_list(const std::string& expr, std::vector<std::string>* out) {
    return expand_hostlist(expr, out);
}

Status topology_host_names(const std::string& topology_file, const std::string& overlay_file,
                           std::vector<std::string>* out) {
    const Loaded l = load(topology_file, overlay_file);
    GENX_RETURN_IF_ERROR(l.status);
    out->clear();
    for (int h : l.topo->hosts()) out->push_back(l.topo->nodes[static_cast<size_t>(h)].name);
    return Status::ok();
}

Status place_ranks(const std::string& topology_file, const std::string& overlay_file,
                   const std::vector<std::string>& host_of_rank,
                   std::shared_ptr<const TopologyView>* out) {
    const Loaded l = load(topology_file, overlay_file);
    GENX_RETURN_IF_ERROR(l.status);
    auto view = std::make_shared<TopologyView>();
    const Status st = to_view(*l.topo, host_of_rank, view.get());
    if (!st) return Status(st.code(), "topology " + topology_file + ": " + st.message());
    *out = std::move(view);
    return Status::ok();
}

}  // namespace genx
