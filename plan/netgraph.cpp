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

// No topology: every rank on one switch, whose arcs to the ranks rotate
// by rank.
void single_switch(int nranks, NetGraph* g) {
    const int sw = add_vertex(g, "switch");
    for (int r = 0; r < nranks; ++r) add_link(g, r, sw, 1, -1);
    g->key.assign(g->arcs.size(), -1);
    for (int a : g->out[static_cast<size_t>(sw)]) g->key[static_cast<size_t>(a)] = g->arcs[static_cast<size_t>(a)].to;
    g->rotated.assign(static_cast<size_t>(g->nvertices()), 0);
    g->rotated[static_cast<size_t>(sw)] = nranks;
}

// Vertex of each view node: a host of one rank is that rank; a host of
// several ranks, and a switch, a forwarder (linked to its ranks); -1 for
// a direct network's container and a host without ranks.
std::vector<int> add_vertices(const TopologyView& view, NetGraph* g) {
    const size_t nn = view.nodes.size();
    std::vector<int> vertex(nn, -1);
    for (size_t i = 0; i < nn; ++i) {
        const TopoNode& n = view.nodes[i];
        if (n.is_host()) {
            if (n.ranks.size() == 1) {
                vertex[i] = n.ranks[0];
            } else if (n.ranks.size() > 1) {
                vertex[i] = add_vertex(g, n.name);
                const int intra = view.intra_class >= 0 ? view.intra_class : n.up_class;
                for (int r : n.ranks) add_link(g, r, vertex[i], 1, intra);
            }
        } else if (!(view.direct && i == 0)) {
            vertex[i] = add_vertex(g, n.name);
        }
    }
    return vertex;
}

// Preference order on a grid: highest dimension first, + before −.
void sort_grid_arcs(const TopologyView& view, const std::vector<int>& vertex, NetGraph* g) {
    const size_t nn = view.nodes.size();
    std::vector<int> coord_of(nn, -1);
    for (size_t k = 0; k < view.grid_host.size(); ++k)
        coord_of[static_cast<size_t>(view.grid_host[k])] = static_cast<int>(k);
    std::vector<int> cell(static_cast<size_t>(g->nvertices()), -1);
    for (size_t i = 0; i < nn; ++i)
        if (vertex[i] >= 0 && coord_of[i] >= 0) cell[static_cast<size_t>(vertex[i])] = coord_of[i];
    const auto key = [&](int arc) {
        const NetArc& a = g->arcs[static_cast<size_t>(arc)];
        const int cu = cell[static_cast<size_t>(a.from)], cv = cell[static_cast<size_t>(a.to)];
        if (cu < 0 || cv < 0) return 1 << 20;  // a rank's arc to its host: last
        const int D = static_cast<int>(view.grid.size());
        long stride = 1;
        for (int d = 0; d < D; ++d) {
            const int size = view.grid[static_cast<size_t>(d)];
            const long xu = (cu / stride) % size, xv = (cv / stride) % size;
            if (xu != xv) {
                const bool plus = ((xv - xu) % size + size) % size == 1;
                return (D - 1 - d) * 2 + (plus ? 0 : 1);
            }
            stride *= size;
        }
        return 1 << 20;
    };
    for (auto& arcs : g->out)
        std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) { return key(x) < key(y); });
}

// A direct network's links between the vertices, in grid preference order
// where the network is a grid.
void add_direct_links(const TopologyView& view, const std::vector<int>& vertex, NetGraph* g) {
    for (const TopoLink& l : view.links) {
        const int a = vertex[static_cast<size_t>(l.a)], b = vertex[static_cast<size_t>(l.b)];
        if (a >= 0 && b >= 0) add_link(g, a, b, l.units, l.cls);
    }
    if (!view.grid.empty()) sort_grid_arcs(view, vertex, g);
}

// Each node's uplink units, bottom-up over `order` (parents first): a
// host's NICs, a switch's children's sum over its oversubscription.
std::vector<int> uplink_units(const TopologyView& view, const std::vector<int>& order) {
    std::vector<int> units(view.nodes.size(), 1);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const TopoNode& n = view.nodes[static_cast<size_t>(*it)];
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
    return units;
}

// A switch tree's edges, with units that sum the children's.
void add_tree_links(const TopologyView& view, const std::vector<int>& vertex, NetGraph* g) {
    std::vector<int> order;  // parents before children
    std::vector<int> stack{0};
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        order.push_back(n);
        for (int c : view.nodes[static_cast<size_t>(n)].children) stack.push_back(c);
    }
    const std::vector<int> units = uplink_units(view, order);
    // Children before the parent in each switch's arc list: add the down
    // links in tree order (parents first), then each vertex's uplink goes
    // after the arcs to its children.
    for (int n : order) {
        const TopoNode& tn = view.nodes[static_cast<size_t>(n)];
        for (int c : tn.children) {
            const int vc = vertex[static_cast<size_t>(c)], vp = vertex[static_cast<size_t>(n)];
            if (vc < 0 || vp < 0) continue;
            add_link(g, vp, vc, units[static_cast<size_t>(c)],
                     view.nodes[static_cast<size_t>(c)].up_class);
        }
    }
    for (auto& arcs : g->out)
        std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) {
            // Arcs towards a vertex created later (a child) before the
            // one towards the parent (created earlier); ranks first.
            const auto down = [&](int a) {
                const NetArc& arc = g->arcs[static_cast<size_t>(a)];
                return !g->forwards(arc.to) || arc.to > arc.from;
            };
            return down(x) && !down(y);
        });
}

// Rotation keys: a forwarder's arcs that lead away from the root of the
// tree (down to a rank, or to a forwarder whose ranks are all below it)
// carry the lowest rank that way; in a direct network, its arcs to ranks
// carry the rank.
void set_rotation_keys(bool direct, int nranks, NetGraph* g) {
    g->key.assign(g->arcs.size(), -1);
    if (direct) {
        for (int v = nranks; v < g->nvertices(); ++v)
            for (int a : g->out[static_cast<size_t>(v)]) {
                const int to = g->arcs[static_cast<size_t>(a)].to;
                if (!g->forwards(to)) g->key[static_cast<size_t>(a)] = to;
            }
        return;
    }
    // Lowest rank below each vertex, leaves up (forwarders were created
    // parents first, so children have larger ids: walk ids downwards).
    std::vector<int> low(static_cast<size_t>(g->nvertices()), 1 << 30);
    for (int r = 0; r < nranks; ++r) low[static_cast<size_t>(r)] = r;
    for (int v = g->nvertices() - 1; v >= nranks; --v)
        for (int a : g->out[static_cast<size_t>(v)]) {
            const int to = g->arcs[static_cast<size_t>(a)].to;
            if (!g->forwards(to) || to > v) low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], low[static_cast<size_t>(to)]);
        }
    for (int v = nranks; v < g->nvertices(); ++v)
        for (int a : g->out[static_cast<size_t>(v)]) {
            const int to = g->arcs[static_cast<size_t>(a)].to;
            if (!g->forwards(to) || to > v) g->key[static_cast<size_t>(a)] = low[static_cast<size_t>(to)];
        }
}

// Each forwarder's keyed arcs first, by key, and how many there are.
void sort_by_rotation(int nranks, NetGraph* g) {
    g->rotated.assign(static_cast<size_t>(g->nvertices()), 0);
    for (int v = nranks; v < g->nvertices(); ++v) {
        auto& arcs = g->out[static_cast<size_t>(v)];
        std::stable_sort(arcs.begin(), arcs.end(), [&](int x, int y) {
            const int kx = g->key[static_cast<size_t>(x)], ky = g->key[static_cast<size_t>(y)];
            if ((kx >= 0) != (ky >= 0)) return kx >= 0;
            return kx >= 0 && kx < ky;
        });
        int k = 0;
        for (int a : arcs) k += g->key[static_cast<size_t>(a)] >= 0;
        g->rotated[static_cast<size_t>(v)] = k;
    }
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
        single_switch(nranks, &g);
        *out = std::move(g);
        return Status::ok();
    }
    if (view->nranks() != nranks)
        return Status::invalid("the topology places " + std::to_string(view->nranks()) +
                               " ranks, the plan is for " + std::to_string(nranks));
    const std::vector<int> vertex = add_vertices(*view, &g);
    if (view->direct)
        add_direct_links(*view, vertex, &g);
    else
        add_tree_links(*view, vertex, &g);
    set_rotation_keys(view->direct, nranks, &g);
    sort_by_rotation(nranks, &g);
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
