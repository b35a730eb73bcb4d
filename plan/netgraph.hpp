// The network as the graph families (MultiTree, MTREE) see it: a directed
// multigraph built from a TopologyView, whose endpoints are the ranks and
// whose other vertices forward.
//
//   switch tree                       direct network (torus:2x2)
//      spine (fwd)                     0 ⇄ 1       every host one rank: the
//      /       \    uplink units       ⇅   ⇅       ranks are the vertices
//   leaf0     leaf1  (oversub.)        2 ⇄ 3       and arcs are the links
//   /  \      /  \                                  (endpoints never forward)
//  0    1   h2(fwd)  3   a host of several ranks forwards between them
//           /  \   ranks 2 and 4 on host h2
//          2    4
//
// Vertices 0..nranks-1 are ranks; the rest (switches, hosts of several
// ranks, and in a direct network a host of several ranks) forward traffic.
// Every physical link becomes two arcs, one per direction, each with the
// link's `units` (MultiTree's capacity unit: a switch port or a link of
// the base rate; a wider link has more).  Units:
//   - a direct network's link: its units (topology file, 1 for presets);
//   - a host's link to its switch: its NICs (at least 1);
//   - a switch uplink: the units of its children's links together divided
//     by its oversubscription (at least 1), or the sum when unknown;
//   - a rank's link to its host (several ranks on a host): 1.
// Arcs out of a vertex are kept in preference order: on a grid, the
// highest dimension first and + before − in each (the paper's "Y then X");
// elsewhere children before the parent, in the view's order, and links in
// the order the file lists them.  A forwarder's arcs down to ranks are
// visited rotated by the sending rank (for_rotated_out): the paper leaves
// the order on switched networks open, and a fixed order makes every rank
// of a switch pick the same partner, which wastes ports (one switch of 13
// ranks: 15 steps per phase with a fixed order, 12 = P - 1 rotated).
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

struct NetArc {
    int from = -1, to = -1;
    int units = 1;
    int cls = -1;  // the view's link class, -1 when none is known
};

struct NetGraph {
    int nranks = 0;
    std::vector<std::string> names;     // per vertex, for messages
    std::vector<NetArc> arcs;
    std::vector<std::vector<int>> out;  // per vertex, arc indices in preference order
    // Rotation keys of a forwarder's arcs towards ranks (rotated_out()):
    // the first rotated[v] arcs of out[v] lead down to ranks, key[arc] is
    // the lowest rank that way, and they are sorted by it.
    std::vector<int> rotated;
    std::vector<int> key;

    int nvertices() const { return static_cast<int>(names.size()); }
    bool forwards(int v) const { return v >= nranks; }
};

// The arcs out of forwarder v as seen by traffic from rank `from`: the arcs
// down to ranks starting after `from` and wrapping around (the ring's "my
// next neighbour first", which keeps the ranks of one switch from all
// choosing the same partner), then the rest in preference order.  Calls
// fn(arc) until it returns true.
template <typename Fn>
void for_rotated_out(const NetGraph& g, int v, int from, Fn&& fn) {
    const std::vector<int>& out = g.out[static_cast<size_t>(v)];
    const size_t k = g.rotated.empty() ? 0 : static_cast<size_t>(g.rotated[static_cast<size_t>(v)]);
    size_t start = 0;
    while (start < k && g.key[static_cast<size_t>(out[start])] <= from) ++start;
    for (size_t i = 0; i < k; ++i)
        if (fn(out[(start + i) % k])) return;
    for (size_t i = k; i < out.size(); ++i)
        if (fn(out[i])) return;
}

// The graph of `view` for its ranks; without a view (null or empty), one
// switch joining `nranks` ranks.  Errors when the view does not hold
// exactly nranks ranks.
Status build_net_graph(const TopologyView* view, int nranks, NetGraph* out);

// Hops (arcs) of the shortest path from rank a to rank b through
// forwarders only (also through ranks when `ranks_forward`: a direct
// network's routing); -1 when none.  For tests and lower bounds.
int net_distance(const NetGraph& g, int a, int b, bool ranks_forward = false);

}  // namespace genx
