// Hop distances (hops.hpp).
#include "plan/hops.hpp"

namespace genx {

std::vector<int> hop_distances(const Adjacency& adj, int source, const std::function<bool(int)>& passes) {
    std::vector<int> dist(adj.size(), -1);
    if (source < 0 || static_cast<size_t>(source) >= adj.size()) return dist;
    std::vector<int> queue{source};
    dist[static_cast<size_t>(source)] = 0;
    for (size_t k = 0; k < queue.size(); ++k) {
        const int u = queue[k];
        if (u != source && passes && !passes(u)) continue;
        for (int v : adj[static_cast<size_t>(u)])
            if (dist[static_cast<size_t>(v)] < 0) {
                dist[static_cast<size_t>(v)] = dist[static_cast<size_t>(u)] + 1;
                queue.push_back(v);
            }
    }
    return dist;
}

Adjacency link_adjacency(const TopologyView& view) {
    Adjacency adj(view.nodes.size());
    for (const TopoLink& l : view.links) {
        if (l.a < 0 || l.b < 0 || static_cast<size_t>(l.a) >= adj.size() || static_cast<size_t>(l.b) >= adj.size())
            continue;
        adj[static_cast<size_t>(l.a)].push_back(l.b);
        adj[static_cast<size_t>(l.b)].push_back(l.a);
    }
    return adj;
}

}  // namespace genx
