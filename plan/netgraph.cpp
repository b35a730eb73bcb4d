// Network graphs for the graph families (design in netgraph.hpp).
#include "plan/netgraph.hpp"
#include "plan/hops.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

namespace genx {

namespace {

void add_link(NetGraph* g, int a, int b, int units, int cls) {
    g->arcs.push_back({a, b, units, cls});
    g->out[static_cast<size_t>(a)].push_back(static_cast<int>(g->arcs.size()) - 1);
    g->arcs.push_back({b, a, units, cls});
    g->out[static_cast<size_t>(b)].push_back(static_cast<int>(g->arcs.size()) - 1);
}

int add_vertex(NetGraph* g, const std::string& name) {
    g->names.push_back(name);
    g->out.emplace_back();
    return g->nvertices() - 1;
}

}  // namespace

Status build_net_graph(const TopologyView* view, int nranks, NetGraph* out) {
    NetGraph g;
    g.nranks = nranks;
    for (int r = 0; r < nranks; ++r) {
        g.names.push_back("rank " + std::to_string(r));
        g.out.emplace_back();
    }
    if (view == nullptr || view->empty()) {
        const int sw = add_vertex(&g, "switch");
        for (int r = 0; r < nranks; ++r) add_link(&g, r, sw, 1, -1);
        g.key.assign(g.arcs.size(), -1);
        for (int a : g.out[static_cast<size_t>(sw)]) g.key[static_cast<size_t>(a)] = g.arcs[static_cast<size_t>(a)].to;
        g.rotated.assign(static_cast<size_t>(g.nvertices()), 0);
        g.rotated[static_cast<size_t>(sw)] = nranks;
        *out = std::move(g);
        return Status::ok();
    }
    if (view->nranks() != nranks)
        return Status::invalid("the topology places " + std::to_string(view->nranks()) +
                               " ranks, the plan is for " + std::to_string(nranks));
    const size_t nn = view->nodes.size();
    // Vertex of each view node: a host of one rank is that rank; a host of
    // several ranks, and a switch, a forwarder.
    std::vector<int> vertex(nn, -1);
    for (size_t i = 0; i < nn; ++i) {
        const TopoNode& n = view->nodes[i];
        if (n.is_host()) {
            if (n.ranks.size() == 1) {
                vertex[i] = n.ranks[0];
            } else if (n.ranks.size() > 1) {
                vertex[i] = add_vertex(&g, n.name);
                const int intra = view->intra_class >= 0 ? view->intra_class : n.up_class;
                for (int r : n.ranks) add_link(&g, r, vertex[i], 1, intra);
            }
        } else if (!(view->direct && i == 0)) {
            vertex[i] = add_vertex(&g, n.name);
        }
    }
    if (view->direct) {
        for (const TopoLink& l : view->links) {
            const int a = vertex[static_cast<size_t>(l.a)], b = vertex[static_cast<size_t>(l.b)];
            if (a >= 0 && b >= 0) add_link(&g, a, b, l.units, l.cls);
        }
        if (!view->grid.empty()) {
            // Preference order on a grid: highest dimension first, + before −.
            std::vector<int> coord_of(nn, -1);
            for (size_t k = 0; k < view->grid_host.size(); ++k)
                coord_of[static_cast<size_t>(view->grid_host[k])] = static_cast<int>(k);
            std::vector<int> cell(static_cast<size_t>(g.nvertices()), -1);
            for (size_t i = 0; i < nn; ++i)
                if (vertex[i] >= 0 && coord_of[i] >= 0) cell[static_cast<size_t>(vertex[i])] = coord_of[i];
            const auto key = [&](int arc) {
                const NetArc& a = g.arcs[static_cast<size_t>(arc)];
                const int cu = cell[static_cast<size_t>(a.from)], cv = cell[static_cast<size_t>(a.to)];
                if (cu < 0 || cv < 0) return 1 << 20;  // a rank's arc to its host: last
                const int D = static_cast<int>(view->grid.size());
                long stride = 1;
                for (int d = 0; d < D; ++d) {
                    const int size = view->grid[static_cast<size_t>(d)];
                    const long xu = (cu / stride) % size, xv = (cv / stride) % size;
                    if (xu != xv) {
                        const bool plus = ((xv - xu) % size + size) % size == 1;
                        return (D - 1 - d) * 2 + (plus ? 0 : 1);
                    }
                    stride *= size;
                }
                return 1 << 20;
            };
            for (auto& arcs : g.out)
                std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) { return key(x) < key(y); });
        }
    } else {
        // Tree edges, bottom-up so that uplink units can sum the children's.
        std::vector<int> units(nn, 1);
        std::vector<int> order;
        std::vector<int> stack{0};
        while (!stack.empty()) {
            const int n = stack.back();
            stack.pop_back();
            order.push_back(n);
            for (int c : view->nodes[static_cast<size_t>(n)].children) stack.push_back(c);
        }
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const TopoNode& n = view->nodes[static_cast<size_t>(*it)];
            if (n.is_host()) {
                units[static_cast<size_t>(*it)] = std::max(1, n.nics);
                continue;
            }
            int sum = 0;
            for (int c : n.children) sum += units[static_cast<size_t>(c)];
            units[static_cast<size_t>(*it)] =
                n.oversubscription > 0
                    ? std::max(1, static_cast<int>(std::lround(sum / n.oversubscription)))
                    : std::max(1, sum);
        }
        // Children before the parent in each switch's arc list: add the
        // down links in tree order (parents first), then each vertex's
        // uplink goes after the arcs to its children.
        for (int n : order) {
            const TopoNode& tn = view->nodes[static_cast<size_t>(n)];
            for (int c : tn.children) {
                const int vc = vertex[static_cast<size_t>(c)], vp = vertex[static_cast<size_t>(n)];
                if (vc < 0 || vp < 0) continue;
                add_link(&g, vp, vc, units[static_cast<size_t>(c)],
                         view->nodes[static_cast<size_t>(c)].up_class);
            }
        }
        for (auto& arcs : g.out)
            std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) {
                // Arcs towards a vertex created later (a child) before the
                // one towards the parent (created earlier); ranks first.
                const auto down = [&](int a) {
                    const NetArc& arc = g.arcs[static_cast<size_t>(a)];
                    return !g.forwards(arc.to) || arc.to > arc.from;
                };
                return down(x) && !down(y);
            });
    }
    // Rotation keys: a forwarder's arcs that lead away from the root of the
    // tree (down to a rank, or to a forwarder whose ranks are all below it)
    // carry the lowest rank that way; sorted first, by key.
    g.key.assign(g.arcs.size(), -1);
    g.rotated.assign(static_cast<size_t>(g.nvertices()), 0);
    if (!view->direct) {
        // Lowest rank below each vertex, leaves up (forwarders were created
        // parents first, so children have larger ids: walk ids downwards).
        std::vector<int> low(static_cast<size_t>(g.nvertices()), 1 << 30);
        for (int r = 0; r < nranks; ++r) low[static_cast<size_t>(r)] = r;
        for (int v = g.nvertices() - 1; v >= nranks; --v)
            for (int a : g.out[static_cast<size_t>(v)]) {
                const int to = g.arcs[static_cast<size_t>(a)].to;
                if (!g.forwards(to) || to > v) low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], low[static_cast<size_t>(to)]);
            }
        for (int v = nranks; v < g.nvertices(); ++v)
            for (int a : g.out[static_cast<size_t>(v)]) {
                const int to = g.arcs[static_cast<size_t>(a)].to;
                if (!g.forwards(to) || to > v) g.key[static_cast<size_t>(a)] = low[static_cast<size_t>(to)];
            }
    } else {
        for (int v = nranks; v < g.nvertices(); ++v)
            for (int a : g.out[static_cast<size_t>(v)]) {
                const int to = g.arcs[static_cast<size_t>(a)].to;
                if (!g.forwards(to)) g.key[static_cast<size_t>(a)] = to;
            }
    }
    for (int v = nranks; v < g.nvertices(); ++v) {
        auto& arcs = g.out[static_cast<size_t>(v)];
        std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) {
            const int kx = g.key[static_cast<size_t>(x)], ky = g.key[static_cast<size_t>(y)];
            if ((kx >= 0) != (ky >= 0)) return kx >= 0;
            return kx >= 0 && kx < ky;
        });
        int k = 0;
        for (int a : arcs) k += g.key[static_cast<size_t>(a)] >= 0;
        g.rotated[static_cast<size_t>(v)] = k;
    }
    *out = std::move(g);
    return Status::ok();
}

int net_distance(const NetGraph& g, int a, int b, bool ranks_forward) {
    if (a < 0 || a >= g.nvertices() || b < 0 || b >= g.nvertices()) return -1;
    Adjacency adj(static_cast<size_t>(g.nvertices()));
    for (int u = 0; u < g.nvertices(); ++u)
        for (int arc : g.out[static_cast<size_t>(u)]) adj[static_cast<size_t>(u)].push_back(g.arcs[static_cast<size_t>(arc)].to);
    const std::vector<int> dist =
        hop_distances(adj, a, [&](int v) { return ranks_forward || g.forwards(v); });
    return dist[static_cast<size_t>(b)];
}

}  // namespace genx
