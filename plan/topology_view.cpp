#include "plan/topology_view.hpp"
#include "common/hash.hpp"

#include <algorithm>
#include <functional>
#include <sstream>

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

std::vector<int> TopologyView::ranks_under(int node) const {
    std::vector<int> out;
    // Explicit stack: a tree may be deep (one switch per level) and callers
    // may run on small thread stacks.
    std::vector<int> stack{node};
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        if (n < 0 || n >= static_cast<int>(nodes.size())) continue;
        const TopoNode& tn = nodes[static_cast<size_t>(n)];
        out.insert(out.end(), tn.ranks.begin(), tn.ranks.end());
        for (auto it = tn.children.rbegin(); it != tn.children.rend(); ++it) stack.push_back(*it);
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
        if (tn.is_host()) {
            best = std::max(best, d);
            continue;
        }
        for (int c : tn.children) stack.push_back({c, d + 1});
    }
    return best;
}

std::string TopologyView::validate() const {
    if (nodes.empty()) return "the view has no nodes";
    std::ostringstream err;
    const int nn = static_cast<int>(nodes.size());
    const int nc = static_cast<int>(link_classes.size());
    if (nodes[0].parent != -1) return "node 0 (the root) has a parent";
    if (intra_class < -1 || intra_class >= nc) {
        err << "intra_class " << intra_class << " names no link class (there are " << nc << ")";
        return err.str();
    }
    for (int i = 0; i < nn; ++i) {
        const TopoNode& n = nodes[static_cast<size_t>(i)];
        const std::string who = "node " + std::to_string(i) + " (" + n.name + ")";
        if (i != 0) {
            if (n.parent < 0 || n.parent >= nn) return who + " has no valid parent";
            const auto& sib = nodes[static_cast<size_t>(n.parent)].children;
            if (std::count(sib.begin(), sib.end(), i) != 1) return who + " is not listed once among its parent's children";
            const bool linkless = direct && n.parent == 0 && n.up_class == -1;
            if (!linkless && (n.up_class < 0 || n.up_class >= nc))
                return who + ": up_class names no link class";
        }
        if (!n.children.empty() && !n.ranks.empty()) return who + " has both children and ranks";
        for (int c : n.children) {
            if (c <= 0 || c >= nn) return who + " has a child index out of range";
            if (nodes[static_cast<size_t>(c)].parent != i) return who + " lists a child whose parent is another node";
        }
    }
    // Reachability from the root without revisits: no cycle, no orphan.
    std::vector<char> seen(static_cast<size_t>(nn), 0);
    std::vector<int> stack{0};
    int reached = 0;
    while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        if (seen[static_cast<size_t>(n)]) return "node " + std::to_string(n) + " is reached twice (a cycle)";
        seen[static_cast<size_t>(n)] = 1;
        ++reached;
        for (int c : nodes[static_cast<size_t>(n)].children) stack.push_back(c);
    }
    if (reached != nn) return std::to_string(nn - reached) + " node(s) are not reachable from the root";
    if (!direct && !links.empty()) return "links are given but the view is not a direct network";
    for (size_t i = 0; i < links.size(); ++i) {
        const TopoLink& l = links[i];
        const std::string who = "link " + std::to_string(i);
        if (l.a <= 0 || l.a >= nn || l.b <= 0 || l.b >= nn || l.a == l.b ||
            !nodes[static_cast<size_t>(l.a)].is_host() || !nodes[static_cast<size_t>(l.b)].is_host())
            return who + " does not join two distinct hosts";
        if (l.cls < 0 || l.cls >= nc) return who + " names no link class";
        if (l.units < 1) return who + " has " + std::to_string(l.units) + " units (at least 1)";
    }
    if (!grid.empty()) {
        long cells = 1;
        for (int d : grid) {
            if (d < 1) return "grid dimension " + std::to_string(d) + " is not positive";
            cells *= d;
        }
        if (static_cast<long>(grid_host.size()) != cells)
            return "grid_host has " + std::to_string(grid_host.size()) + " entries for " +
                   std::to_string(cells) + " grid cells";
        for (int h : grid_host)
            if (h <= 0 || h >= nn || !nodes[static_cast<size_t>(h)].is_host())
                return "grid_host names a node that is not a host";
    }
    const int p = nranks();
    std::vector<int> count(static_cast<size_t>(p), 0);
    for (const TopoNode& n : nodes)
        for (int r : n.ranks) {
            if (r < 0 || r >= p) {
                err << "rank " << r << " on host " << n.name << " is outside 0.." << p - 1;
                return err.str();
            }
            if (++count[static_cast<size_t>(r)] > 1) {
                err << "rank " << r << " is placed twice";
                return err.str();
            }
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
