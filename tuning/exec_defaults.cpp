// Executor options a network calls for (exec_defaults.hpp).
#include "tuning/exec_defaults.hpp"

#include <algorithm>

#include "plan/hops.hpp"

namespace genx {

double route_bdp_bytes(const TopologyView& view) {
    if (view.empty()) return 0;
    const auto& cls = view.link_classes;
    auto known = [&](int c) { return c >= 0 && static_cast<size_t>(c) < cls.size(); };
    double rate = 0, latency = 0;
    if (view.direct) {
        const size_t n = view.nodes.size();
        double max_lat = 0;
        const Adjacency adj = link_adjacency(view);
        for (const TopoLink& l : view.links) {
            if (l.a < 0 || l.b < 0 || static_cast<size_t>(l.a) >= n || static_cast<size_t>(l.b) >= n ||
                !known(l.cls))
                continue;
            rate = std::max(rate, cls[static_cast<size_t>(l.cls)].rate * std::max(l.units, 1));
            max_lat = std::max(max_lat, cls[static_cast<size_t>(l.cls)].latency);
        }
        if (rate <= 0 || max_lat <= 0) return 0;
        // The diameter in links is at most twice one node's eccentricity
        // (one BFS, O(n + m)); per connected part, the largest.
        int bound = 0;
        std::vector<char> seen(n, 0);
        for (size_t s = 0; s < n; ++s) {
            if (adj[s].empty() || seen[s]) continue;
            int ecc = 0;
            const std::vector<int> dist = hop_distances(adj, static_cast<int>(s));
            for (size_t v = 0; v < n; ++v)
                if (dist[v] >= 0) {
                    seen[v] = 1;
                    ecc = std::max(ecc, dist[v]);
                }
            bound = std::max(bound, 2 * ecc);
        }
        latency = bound * max_lat;
    } else {
        // Latency from each host up to the root; a route joins two of them.
        double first = 0, second = 0;
        for (size_t i = 0; i < view.nodes.size(); ++i) {
            const TopoNode& node = view.nodes[i];
            if (!node.is_host() || node.ranks.empty()) continue;
            // A route from this host runs at most at its first declared
            // rate on the way up (its own link, where declared).
            double up = 0, first_rate = 0;
            int guard = 0;
            for (int v = static_cast<int>(i); v > 0 && guard < 64; ++guard) {
                const TopoNode& x = view.nodes[static_cast<size_t>(v)];
                if (known(x.up_class)) {
                    const TopoLinkClass& c = cls[static_cast<size_t>(x.up_class)];
                    up += c.latency;
                    if (first_rate <= 0) first_rate = c.rate;
                }
                v = x.parent;
            }
            rate = std::max(rate, first_rate);
            if (up > first) {
                second = first;
                first = up;
            } else if (up > second) {
                second = up;
            }
        }
        latency = first + second;
    }
    return rate * latency;
}

bool long_fat_routes(const TopologyView* view) {
    return view != nullptr &&
           route_bdp_bytes(*view) > static_cast<double>(kDefaultWindow) * static_cast<double>(kDefaultSegmentBytes);
}

void add_network_exec_defaults(bool long_routes, ParamMap* params) {
    if (long_routes && params->count(kSegmentKey) == 0 && params->count(kWindowKey) == 0)
        (*params)[kSegmentKey] = "0";
}

}  // namespace genx
