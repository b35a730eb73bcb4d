#include "plan/topology_view.hpp"
#include "common/hash.hpp"

#include <algorithm>
#include <functional>

namespace genx {

int TopologyView::nranks() const {
    int n = 0;
    for (const TopoNode& node : nodes) n += static_cast<int>(node.ranks.size());
    return n;
}

std::vector<int> TopologyView::host_of_rank() const {
    std::vector<int> host(static_cast<size_t>(nranks()), -1);
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int r : nodes[i].ranks)
            if (r >= 0 && r < static_cast<int>(host.size())) host[static_cast<size_t>(r)] = static_cast<int>(i);
    return host;
}

bool TopologyView::is_machine(int n) const {
    if (n < 0 || n >= static_cast<int>(nodes.size())) return false;
    const TopoNode& tn = nodes[static_cast<size_t>(n)];
    if (tn.in_host > 0) return false;
    if (tn.is_host()) return n != 0 || tn.ranks.size() > 0;
    return nodes[static_cast<size_t>(tn.children[0])].in_host > 0;
}

bool TopologyView::has_inner() const {
    for (const TopoNode& n : nodes)
        if (n.in_host > 0) return true;
    return false;
}

TopologyView TopologyView::without_inner() const {
    TopologyView out = *this;
    out.network = nullptr;
    if (!has_inner()) return out;
    std::vector<int> index(nodes.size(), -1);
    out.nodes.clear();
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].in_host > 0) continue;
        index[i] = static_cast<int>(out.nodes.size());
        out.nodes.push_back(nodes[i]);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (index[i] < 0) continue;
        TopoNode& n = out.nodes[static_cast<size_t>(index[i])];
        if (n.parent >= 0) n.parent = index[static_cast<size_t>(n.parent)];
        std::vector<int> kids;
        for (int c : nodes[i].children)
            if (index[static_cast<size_t>(c)] >= 0) kids.push_back(index[static_cast<size_t>(c)]);
        n.children = kids;
        if (is_machine(static_cast<int>(i)) && !nodes[i].children.empty()) {
            n.ranks = ranks_under(static_cast<int>(i));
            std::sort(n.ranks.begin(), n.ranks.end());
        }
    }
    for (int& h : out.grid_host) h = index[static_cast<size_t>(h)];
    return out;
}

std::vector<int> TopologyView::ranks_under(int node) const {
    std::vector<int> out;
    for (int n : preorder(nodes, node)) {
        const std::vector<int>& r = nodes[static_cast<size_t>(n)].ranks;
        out.insert(out.end(), r.begin(), r.end());
    }
    return out;
}

int TopologyView::depth() const {
    if (nodes.empty()) return 0;
    int best = 0;
    std::vector<std::pair<int, int>> stack{{0, 0}};
    while (!stack.empty()) {
        auto [n, d] = stack.back();
        stack.pop_back();
        const TopoNode& tn = nodes[static_cast<size_t>(n)];
        if (is_machine(n)) {
            best = std::max(best, d);
            continue;
        }
        for (int c : tn.children) stack.push_back({c, d + 1});
    }
    return best;
}

namespace {

std::string check_links(const std::vector<ShapeNode>& nodes, int nclasses, const std::vector<TopoLink>& links) {
    const int nn = static_cast<int>(nodes.size());
    for (size_t i = 0; i < links.size(); ++i) {
        const TopoLink& l = links[i];
        const std::string who = "link " + std::to_string(i);
        if (l.a < 0 || l.a >= nn || l.b < 0 || l.b >= nn || l.a == l.b || !nodes[static_cast<size_t>(l.a)].host ||
            !nodes[static_cast<size_t>(l.b)].host)
            return who + " does not join two distinct hosts";
        if (l.cls < 0 || l.cls >= nclasses) return who + " names no link class";
        if (l.units < 1) return who + " has " + std::to_string(l.units) + " units (at least 1)";
    }
    return "";
}

std::string check_grid(const std::vector<ShapeNode>& nodes, const std::vector<int>& grid,
                       const std::vector<int>& grid_host) {
    if (grid.empty()) return "";
    long cells = 1;
    for (int d : grid) {
        if (d < 1) return "grid dimension " + std::to_string(d) + " is not positive";
        cells *= d;
    }
    if (static_cast<long>(grid_host.size()) != cells)
        return "the grid has " + std::to_string(cells) + " cells but " + std::to_string(grid_host.size()) +
               " hosts";
    for (int h : grid_host)
        if (h <= 0 || h >= static_cast<int>(nodes.size()) || !nodes[static_cast<size_t>(h)].host)
            return "a grid cell names a node that is not a host";
    return "";
}

// Every node reached from the root exactly once.
std::string check_reach(const std::vector<ShapeNode>& nodes) {
    const size_t nn = nodes.size();
    std::vector<char> seen(nn, 0);
    std::vector<int> stack{0};
    size_t reached = 0;
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        if (seen[static_cast<size_t>(n)]) return nodes[static_cast<size_t>(n)].who + " is reached twice (a cycle)";
        seen[static_cast<size_t>(n)] = 1;
        ++reached;
        for (int c : *nodes[static_cast<size_t>(n)].children) stack.push_back(c);
    }
    if (reached != nn) return std::to_string(nn - reached) + " node(s) are not reachable from the root";
    return "";
}

}  // namespace

std::string validate_shape(const std::vector<ShapeNode>& nodes, int nclasses, int intra_class, bool direct,
                           const std::vector<TopoLink>& links, const std::vector<int>& grid,
                           const std::vector<int>& grid_host) {
    if (nodes.empty()) return "no nodes";
    const int nn = static_cast<int>(nodes.size());
    if (nodes[0].parent != -1) return nodes[0].who + " has a parent (node 0 must be the root)";
    if (intra_class < -1 || intra_class >= nclasses)
        return "intra_class " + std::to_string(intra_class) + " names no link class (there are " +
               std::to_string(nclasses) + ")";
    // How often each node is listed among its own parent's children: one
    // pass, where counting in the parent's list per node is quadratic in a
    // direct network's 10⁴ hosts below one container.
    std::vector<int> listed(static_cast<size_t>(nn), 0);
    for (int i = 0; i < nn; ++i)
        for (int c : *nodes[static_cast<size_t>(i)].children)
            if (c > 0 && c < nn && nodes[static_cast<size_t>(c)].parent == i) ++listed[static_cast<size_t>(c)];
    for (int i = 0; i < nn; ++i) {
        const ShapeNode& n = nodes[static_cast<size_t>(i)];
        if (i != 0) {
            if (n.parent < 0 || n.parent >= nn) return n.who + " has no parent (a second root)";
            const ShapeNode& p = nodes[static_cast<size_t>(n.parent)];
            if (listed[static_cast<size_t>(i)] != 1)
                return n.who + " is not listed once among the children of " + p.who;
            if (n.needs_up_class && (n.up_class < 0 || n.up_class >= nclasses))
                return n.who + " has no link class to " + p.who;
        }
        for (int c : *n.children) {
            if (c <= 0 || c >= nn) return n.who + " has a child index out of range";
            if (nodes[static_cast<size_t>(c)].parent != i) return n.who + " lists a child whose parent is another node";
        }
    }
    std::string err = check_reach(nodes);
    if (err.empty() && !direct && !links.empty()) err = "links are given but the network is not a direct one";
    if (err.empty()) err = check_links(nodes, nclasses, links);
    if (err.empty()) err = check_grid(nodes, grid, grid_host);
    return err;
}

std::string TopologyView::validate() const {
    if (nodes.empty()) return "the view has no nodes";
    std::vector<ShapeNode> shape(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const TopoNode& n = nodes[i];
        ShapeNode& s = shape[i];
        s.who = "node " + std::to_string(i) + " (" + n.name + ")";
        s.parent = n.parent;
        s.up_class = n.up_class;
        s.children = &n.children;
        s.host = i != 0 && n.is_host();
        // A direct network's hosts hang below the container with no link.
        s.needs_up_class = i != 0 && !(direct && n.parent == 0 && n.up_class == -1);
        if (!n.children.empty() && !n.ranks.empty()) return s.who + " has both children and ranks";
    }
    const std::string err = validate_shape(shape, static_cast<int>(link_classes.size()), intra_class, direct, links,
                                           grid, grid_host);
    if (!err.empty()) return err;
    const int p = nranks();
    std::vector<int> count(static_cast<size_t>(p), 0);
    for (const TopoNode& n : nodes)
        for (int r : n.ranks) {
            if (r < 0 || r >= p)
                return "rank " + std::to_string(r) + " on host " + n.name + " is outside 0.." + std::to_string(p - 1);
            if (++count[static_cast<size_t>(r)] > 1) return "rank " + std::to_string(r) + " is placed twice";
        }
    return "";
}

uint64_t TopologyView::fingerprint() const {
    FnvHasher f;
    hash_link_classes(f, link_classes);
    f.i64(intra_class);
    f.i64(static_cast<int64_t>(nodes.size()));
    for (const TopoNode& n : nodes) {
        f.str(n.name);
        f.i64(n.parent);
        f.i64(n.up_class);
        f.f64(n.oversubscription * 1e3);
        f.i64(n.nics);
        f.i64(static_cast<int64_t>(n.children.size()));
        for (int c : n.children) f.i64(c);
        f.i64(static_cast<int64_t>(n.ranks.size()));
        for (int r : n.ranks) f.i64(r);
    }
    // Levels inside hosts only when present, for the same reason.
    bool inner = false;
    for (const TopoNode& n : nodes) inner = inner || n.in_host > 0;
    if (inner) {
        f.str("in_host");
        for (const TopoNode& n : nodes) f.i64(n.in_host);
    }
    // Graph fields only when present, so that a switch tree's fingerprint
    // is what it was before graphs existed.
    if (direct || !grid.empty()) {
        f.str("graph");
        f.i64(direct);
        f.i64(static_cast<int64_t>(links.size()));
        for (const TopoLink& l : links) {
            f.i64(l.a);
            f.i64(l.b);
            f.i64(l.cls);
            f.i64(l.units);
        }
        f.i64(static_cast<int64_t>(grid.size()));
        for (int d : grid) f.i64(d);
        f.i64(grid_wrap);
        for (int h : grid_host) f.i64(h);
    }
    return f.h;
}

}  // namespace genx
