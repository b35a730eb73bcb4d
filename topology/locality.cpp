// Ranks' locality records and the intra-node levels they add to a view;
// why and what: locality.hpp.
#include "topology/locality.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "common/hash.hpp"

namespace genx {

RankLocality locality_of(const std::string& host_name, const HostHardware& hw,
                         const std::vector<NicInfo>& nics) {
    RankLocality r;
    FnvHasher f;
    f.str(host_name);
    r.host = f.h != 0 ? f.h : 1;
    r.package = hw.bound_package;
    r.numa = hw.bound_numa;
    r.packages = hw.packages;
    r.numa_nodes = hw.numa_nodes;
    r.nics = static_cast<int>(nics.size());
    for (const NicInfo& n : nics) r.nic_rate = std::max(r.nic_rate, n.rate);
    return r;
}

namespace {

// 16 bits of a small count or index, -1 kept as 0xffff.
uint64_t field16(int v) { return static_cast<uint64_t>(static_cast<uint16_t>(v)); }
int unfield16(uint64_t w) {
    const uint16_t v = static_cast<uint16_t>(w & 0xffff);
    return v == 0xffff ? -1 : static_cast<int>(v);
}

// A group of ranks of one host by a key (package or NUMA node), in order
// of first rank.
std::map<int, std::vector<int>> group_by(const std::vector<int>& ranks,
                                         const std::vector<RankLocality>& loc, bool numa) {
    std::map<int, std::vector<int>> g;
    for (int r : ranks) {
        const RankLocality& l = loc[static_cast<size_t>(r)];
        g[numa ? l.numa : l.package].push_back(r);
    }
    return g;
}

// Moves the ranks of node `n` into children, one per group, named
// "<host>/<what><index>", marked in_host `depth`.  Returns the new nodes.
std::vector<int> split(TopologyView* view, int n, const std::map<int, std::vector<int>>& groups,
                       const char* what, int depth) {
    std::vector<int> made;
    const std::string base = view->nodes[static_cast<size_t>(n)].name;
    view->nodes[static_cast<size_t>(n)].ranks.clear();
    for (const auto& [key, ranks] : groups) {
        TopoNode c;
        c.name = base + "/" + what + std::to_string(key);
        c.parent = n;
        c.up_class = view->intra_class;
        c.ranks = ranks;
        c.in_host = depth;
        const int id = static_cast<int>(view->nodes.size());
        view->nodes.push_back(c);
        view->nodes[static_cast<size_t>(n)].children.push_back(id);
        made.push_back(id);
    }
    return made;
}

// The hosts of a view built from the records alone: one root (its links
// unrated), the hosts grouped by host id in order of first rank.
void hosts_by_id(const std::vector<RankLocality>& loc, TopologyView* view) {
    view->link_classes.push_back({"node", 0, 0, false});
    TopoNode root;
    root.name = "nodes";
    view->nodes.push_back(root);
    std::map<uint64_t, int> node_of;
    for (size_t r = 0; r < loc.size(); ++r) {
        auto it = node_of.find(loc[r].host);
        if (it == node_of.end()) {
            TopoNode h;
            h.name = "node" + std::to_string(view->nodes.size() - 1);
            h.parent = 0;
            h.up_class = 0;
            it = node_of.emplace(loc[r].host, static_cast<int>(view->nodes.size())).first;
            view->nodes[0].children.push_back(it->second);
            view->nodes.push_back(h);
        }
        view->nodes[static_cast<size_t>(it->second)].ranks.push_back(static_cast<int>(r));
    }
}

// Levels inside host node `h`: packages, then NUMA nodes, each only where
// it splits the host's ranks.  A note where the host's ranks are unbound.
void split_host(TopologyView* view, int h, const std::vector<RankLocality>& loc,
                std::vector<std::string>* notes) {
    const std::vector<int> ranks = view->nodes[static_cast<size_t>(h)].ranks;
    const std::string name = view->nodes[static_cast<size_t>(h)].name;
    for (int r : ranks) {
        if (loc[static_cast<size_t>(r)].host != loc[static_cast<size_t>(ranks[0])].host) {
            notes->push_back("host " + name + ": ranks " + std::to_string(ranks[0]) + " and " +
                             std::to_string(r) + " report different hosts; the node stays one level");
            return;
        }
        if (loc[static_cast<size_t>(r)].package < 0) {
            notes->push_back("host " + name + ": rank " + std::to_string(r) +
                             " is not bound to one package (unbound or spanning several); the "
                             "node stays one level");
            return;
        }
    }
    std::vector<int> parts{h};
    const auto pkgs = group_by(ranks, loc, false);
    if (pkgs.size() > 1) parts = split(view, h, pkgs, "package", 1);
    for (int p : parts) {
        const std::vector<int> pr = view->nodes[static_cast<size_t>(p)].ranks;
        bool all_numa = true;
        for (int r : pr) all_numa = all_numa && loc[static_cast<size_t>(r)].numa >= 0;
        const auto numas = group_by(pr, loc, true);
        if (all_numa && numas.size() > 1) split(view, p, numas, "numa", 2);
    }
}

}  // namespace

void pack_locality(const RankLocality& r, uint64_t* w) {
    w[0] = r.host != 0 ? r.host : 1;
    w[1] = field16(r.package) | field16(r.numa) << 16 | field16(r.packages) << 32 |
           field16(r.numa_nodes) << 48;
    w[2] = field16(r.nics);
    // Mbit/s: 2^64 of them is more than any NIC.
    w[3] = static_cast<uint64_t>(std::llround(r.nic_rate * 8 / 1e6));
}

RankLocality unpack_locality(const uint64_t* w) {
    RankLocality r;
    r.host = w[0];
    r.package = unfield16(w[1]);
    r.numa = unfield16(w[1] >> 16);
    r.packages = std::max(0, unfield16(w[1] >> 32));
    r.numa_nodes = std::max(0, unfield16(w[1] >> 48));
    r.nics = std::max(0, unfield16(w[2]));
    r.nic_rate = static_cast<double>(w[3]) * 1e6 / 8;
    return r;
}

Status add_rank_locality(const std::vector<RankLocality>& loc, TopologyView* view,
                         std::vector<std::string>* notes) {
    for (size_t r = 0; r < loc.size(); ++r)
        if (loc[r].host == 0) return Status::invalid("rank " + std::to_string(r) + " has no locality record");
    if (view->empty())
        hosts_by_id(loc, view);
    else if (view->nranks() != static_cast<int>(loc.size()))
        return Status::invalid("the view holds " + std::to_string(view->nranks()) + " ranks, the records " +
                               std::to_string(loc.size()));
    if (view->direct) {
        notes->push_back("a direct network's hosts keep no inner levels");
        return Status::ok();
    }
    for (const TopoNode& n : view->nodes)
        if (n.in_host > 0) return Status::invalid("the view already has levels inside its hosts");
    if (view->intra_class < 0) {
        view->link_classes.push_back({"intra", 0, 0, false});
        view->intra_class = static_cast<int>(view->link_classes.size()) - 1;
    }
    const size_t before = view->nodes.size();
    for (size_t h = 1; h < before; ++h) {
        if (!view->nodes[h].is_host() || view->nodes[h].ranks.empty()) continue;
        const RankLocality& first = loc[static_cast<size_t>(view->nodes[h].ranks[0])];
        if (view->nodes[h].nics == 0 && first.nics > 0) view->nodes[h].nics = first.nics;
        split_host(view, static_cast<int>(h), loc, notes);
    }
    const std::string bad = view->validate();
    if (!bad.empty()) return Status::internal("the view with the hosts' inner levels is not well formed: " + bad);
    view->network = view->has_inner() ? std::make_shared<const TopologyView>(view->without_inner()) : nullptr;
    return Status::ok();
}

}  // namespace genx
