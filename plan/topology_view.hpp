// What a generator may know of the network: the communicator's ranks as the
// leaves of a switch tree.
//
// This is the "topology view" of DESIGN §3: pure data, no discovery and no
// MPI.  topology/ builds it from what it discovers (hwloc, sysfs, a Slurm
// topology.conf and its JSON overlay) and the ranks' host names; tests and
// genx-plan build it by hand or from a file.  Generators that follow the
// network (GenTree) read it; the others ignore it.
//
//   root switch (node 0)            link class of an edge = the class of the
//    ├── leaf switch A              link from the child up to its parent:
//    │    ├── host h0: ranks 0 2     host→leaf "leaf", leaf→root "root",
//    │    └── host h1: ranks 1 3     rank→host "intra" (shared memory)
//    └── leaf switch B
//         └── host h2: ranks 4 5
//
// Nodes are stored in one vector; node 0 is the root.  A host is a node
// with ranks and no children; a switch has children and no ranks.  Ranks
// are communicator ranks, listed in the order the host's ranks should be
// used (ascending unless a generator is told otherwise).  Ranks need not
// follow tree order: a round-robin placement puts ranks 0 and 1 under
// different leaves, and generators must build from where ranks are.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace genx {

// One class of links; the cost model prices each class with its own
// α, β, ε, w_t (tuning/cost_model.hpp).  Names are free text, conventionally
// "intra" (ranks of one host), "leaf" (host to its switch), "root"/"l2"/…
// (switch to switch), "xdc" (a cross-datacenter link).
struct TopoLinkClass {
    std::string name;
    double rate = 0;      // bytes/s, 0 = unknown
    double latency = 0;   // s, 0 = unknown
    bool cross_dc = false;
};

struct TopoNode {
    std::string name;            // switch or host name, for printing
    int parent = -1;             // -1 for the root
    int up_class = -1;           // index into link_classes of the edge to the parent (-1 for the root)
    std::vector<int> children;   // switch: child node indices
    std::vector<int> ranks;      // host: communicator ranks placed on it
    // For a switch uplink: the sum of its children's rates divided by the
    // uplink's (1 = non-blocking, 4 = 4:1 oversubscribed); 0 = unknown.
    double oversubscription = 0;
    // NICs of a host (several NICs add their rates); 0 = unknown, taken as 1.
    int nics = 0;
    // A level inside a host (topology/locality.hpp): 1 a package, 2 a NUMA
    // node; 0 for switches and hosts.  Such a node's host has children, so
    // it is no leaf, but depth() and switch levels count the network only.
    int in_host = 0;

    bool is_host() const { return children.empty(); }
};

// A link of a network that is not a switch tree: a direct network's link
// between two hosts (a torus, a mesh) or a general graph's link between two
// sites.  Full duplex; `units` parallel links of class `cls` (the paper's
// multigraph for wider links: MultiTree allocates one unit per tree edge
// per step).
struct TopoLink {
    int a = -1, b = -1;  // node indices (hosts)
    int cls = -1;        // index into link_classes
    int units = 1;
};

// `root` and every node below it, parents before children, children in
// their listed order (an explicit stack: trees may be deep and callers may
// run on small thread stacks).  Out-of-range indices are skipped.
template <class Node>
std::vector<int> preorder(const std::vector<Node>& nodes, int root) {
    std::vector<int> out;
    std::vector<int> stack{root};
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        if (n < 0 || n >= static_cast<int>(nodes.size())) continue;
        out.push_back(n);
        const std::vector<int>& ch = nodes[static_cast<size_t>(n)].children;
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
    }
    return out;
}

// What the structural checks read of one node of a network (a view's, or
// topology::Topology's, whose nodes also describe the inside of hosts).
struct ShapeNode {
    std::string who;                      // how errors name it: "host h0", "node 3 (h0)"
    int parent = -1;
    int up_class = -1;
    const std::vector<int>* children = nullptr;
    bool host = false;            // may end a link or fill a grid cell
    bool needs_up_class = false;  // its edge to the parent must name a link class
};

// The one structural check of a network: node 0 is the root, parents and
// children agree, every node is reached from the root exactly once (no
// cycle, no orphan), up classes, links and grid cells are valid.  Empty
// when well formed, else what is wrong.  TopologyView::validate adds the
// placement of ranks, Topology::validate its node kinds.
std::string validate_shape(const std::vector<ShapeNode>& nodes, int nclasses, int intra_class, bool direct,
                           const std::vector<TopoLink>& links, const std::vector<int>& grid,
                           const std::vector<int>& grid_host);

struct TopologyView {
    std::vector<TopoLinkClass> link_classes;
    // Class of links between two ranks of one host; -1 = none declared
    // (then generators treat same-host pairs as the host's up_class).
    int intra_class = -1;
    std::vector<TopoNode> nodes;  // nodes[0] is the root; empty = no view
    // A direct network (topology/graph.hpp): the hosts talk over `links`
    // only.  Node 0 is then a container, not a switch: the hosts hang below
    // it with up_class -1 and no link to it.  Families that need a switch
    // tree (GenTree) refuse a direct view; graph families (multitree,
    // ring2d) read `links` and `grid`.  False for a switch tree, whose
    // links are its edges.
    bool direct = false;
    std::vector<TopoLink> links;  // direct only
    // A grid's dimensions, x first (torus:4x4 -> {4, 4}), when the view is a
    // whole torus or mesh: host of coordinates (x, y, z) is the host named
    // by grid index x + X·(y + Y·z), grid_host[index] its node.  Empty
    // otherwise.
    std::vector<int> grid;
    bool grid_wrap = false;       // torus (true) or mesh
    std::vector<int> grid_host;   // node index of each grid index
    // The same view without the levels inside hosts (without_inner()), for
    // the families that read hosts as leaves (GeneratorInfo::inner_levels
    // false); set by add_rank_locality, null when there are none.  Not part
    // of the fingerprint (it follows from the rest).
    std::shared_ptr<const TopologyView> network;

    bool empty() const { return nodes.empty(); }
    int nranks() const;
    // Host node index of each rank (size nranks()); -1 where a rank is on no host.
    std::vector<int> host_of_rank() const;
    // Every rank below `node`, in tree order (children in order, a host's
    // ranks in their listed order).
    std::vector<int> ranks_under(int node) const;
    // Number of switch levels above the hosts on the deepest path (a single
    // switch over its hosts is 1); levels inside hosts do not count.
    int depth() const;
    // Whether node n is a host of the network: a leaf, or a node whose
    // children are levels inside it (in_host).
    bool is_machine(int n) const;
    // Whether any node is a level inside a host.
    bool has_inner() const;
    // The view without the levels inside hosts: each host holds its ranks
    // again (ascending).  What the model's rank map reads, so that ranks
    // of one host are priced as one host whatever their package.
    TopologyView without_inner() const;
    // Empty when the view is well formed (validate_shape, no node with both
    // children and ranks, every rank 0..nranks()-1 on exactly one host).
    // Otherwise what is wrong.
    std::string validate() const;
    // A stable hash of the shape, the classes and the rank placement:
    // equal views give equal fingerprints on every rank and every run.
    uint64_t fingerprint() const;
};

}  // namespace genx
