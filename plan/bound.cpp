// The network's allreduce bound (plan/bound.hpp).
#include "plan/bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <vector>

#include "common/text_util.hpp"

namespace genx {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string rate_text(double bytes_per_s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g Gbit/s", bytes_per_s * 8 / 1e9);
    return buf;
}

// "the 1 rank ... receives" / "the 4 ranks ... receive".
std::string ranks_text(int n) { return n == 1 ? "the 1 rank" : "the " + std::to_string(n) + " ranks"; }
std::string receive(int n) { return n == 1 ? " receives" : " receive"; }

std::string node_name(const TopologyView& v, int n) {
    const std::string& s = v.nodes[static_cast<size_t>(n)].name;
    return s.empty() ? "node " + std::to_string(n) : s;
}

// A switch tree: the largest single-link cut.  Each tree link splits the
// ranks into those below it (n) and the rest (N - n); the side with fewer
// ranks receives the larger number of blocks over the link.
Status tree_bound(const TopologyView& v, AllreduceBound* b) {
    const int total = v.nranks();
    double worst = -1;
    for (size_t n = 1; n < v.nodes.size(); ++n) {
        const TopoNode& node = v.nodes[n];
        const int below = static_cast<int>(v.ranks_under(static_cast<int>(n)).size());
        if (below == 0 || below == total) continue;
        if (node.up_class < 0 || !(v.link_classes[static_cast<size_t>(node.up_class)].rate > 0))
            return Status::invalid("the link above " + node_name(v, static_cast<int>(n)) +
                                   " has no rate: the bound needs every link rated (an overlay)");
        const TopoLinkClass& cls = v.link_classes[static_cast<size_t>(node.up_class)];
        const double rate = cls.rate * std::max(1, node.is_host() ? node.nics : 1);
        const int outside = std::max(below, total - below);
        if (outside / rate <= worst) continue;
        worst = outside / rate;
        b->outside = outside;
        b->cut_rate = rate;
        const std::string name = node_name(v, static_cast<int>(n));
        const std::string link = " over the link above " + name + " (class " + cls.name + ", " +
                                 rate_text(rate) + ")";
        b->cut = outside == total - below
                     ? ranks_text(below) + " under " + name + receive(below) + " the other " +
                           std::to_string(outside) + link
                     : ranks_text(total - below) + " outside " + name + receive(total - below) + " the " +
                           std::to_string(below) + " under it" + link;
    }
    // Ranks sharing a host reach each other over the intra-host link.
    if (v.intra_class >= 0 && v.link_classes[static_cast<size_t>(v.intra_class)].rate > 0) {
        const double rate = v.link_classes[static_cast<size_t>(v.intra_class)].rate;
        for (const TopoNode& node : v.nodes)
            if (node.is_host() && node.ranks.size() >= 2 && (total - 1) / rate > worst) {
                worst = (total - 1) / rate;
                b->outside = total - 1;
                b->cut_rate = rate;
                b->cut = "one rank of " + node.name + " receives the other " + std::to_string(total - 1) +
                         " over its intra-host link (" + rate_text(rate) + ")";
            }
    }
    if (worst < 0) return Status::invalid("the bound needs ranks on at least two sides of a link");
    b->method = "switch tree: the largest single-link cut (exact)";
    return Status::ok();
}

// Dinic's maximum flow on a small graph with real capacities.
class MaxFlow {
  public:
    explicit MaxFlow(int n) : head_(static_cast<size_t>(n), -1), level_(static_cast<size_t>(n)), it_(static_cast<size_t>(n)) {}
    void add(int u, int v, double cap) {
        edges_.push_back({v, head_[static_cast<size_t>(u)], cap});
        head_[static_cast<size_t>(u)] = static_cast<int>(edges_.size()) - 1;
        edges_.push_back({u, head_[static_cast<size_t>(v)], 0});
        head_[static_cast<size_t>(v)] = static_cast<int>(edges_.size()) - 1;
    }
    double run(int s, int t) {
        double flow = 0;
        while (bfs(s, t)) {
            it_ = head_;
            for (double f; (f = dfs(s, t, kInf)) > 0;) flow += f;
        }
        return flow;
    }
    // After run(): whether node n is on the source side of the minimum cut.
    bool source_side(int n) const { return level_[static_cast<size_t>(n)] >= 0; }

  private:
    struct Edge {
        int to, next;
        double cap;
    };
    bool bfs(int s, int t) {
        std::fill(level_.begin(), level_.end(), -1);
        std::queue<int> q;
        level_[static_cast<size_t>(s)] = 0;
        q.push(s);
        while (!q.empty()) {
            const int u = q.front();
            q.pop();
            for (int e = head_[static_cast<size_t>(u)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
                const Edge& ed = edges_[static_cast<size_t>(e)];
                if (ed.cap > kEps && level_[static_cast<size_t>(ed.to)] < 0) {
                    level_[static_cast<size_t>(ed.to)] = level_[static_cast<size_t>(u)] + 1;
                    q.push(ed.to);
                }
            }
        }
        return level_[static_cast<size_t>(t)] >= 0;
    }
    double dfs(int u, int t, double f) {
        if (u == t) return f;
        for (int& e = it_[static_cast<size_t>(u)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
            Edge& ed = edges_[static_cast<size_t>(e)];
            if (ed.cap > kEps && level_[static_cast<size_t>(ed.to)] == level_[static_cast<size_t>(u)] + 1) {
                const double got = dfs(ed.to, t, std::min(f, ed.cap));
                if (got > 0) {
                    ed.cap -= got;
                    edges_[static_cast<size_t>(e ^ 1)].cap += got;
                    return got;
                }
            }
        }
        return 0;
    }
    static constexpr double kEps = 1e-12;
    std::vector<Edge> edges_;
    std::vector<int> head_, level_, it_;
};

struct Cut {
    std::vector<bool> in;  // per view node: inside S
    double rate = 0;       // bytes/s entering S
    int outside = 0;       // ranks outside S
};

// A direct network's links as (a, b, bytes/s), both directions alike.
struct Graph {
    int nodes = 0;
    std::vector<int> weight;  // ranks per node
    std::vector<std::tuple<int, int, double>> links;
};

double rate_into(const Graph& g, const std::vector<bool>& in) {
    double r = 0;
    for (const auto& [a, b, rate] : g.links)
        if (in[static_cast<size_t>(a)] != in[static_cast<size_t>(b)]) r += rate;
    return r;
}

// The S minimising y * rate_in(S) + ranks inside S with host `out` outside
// and host `in` inside; returns its value.
double min_cut(const Graph& g, double y, int out, int in, Cut* cut) {
    const int s = g.nodes, t = g.nodes + 1;
    MaxFlow f(g.nodes + 2);
    for (int n = 0; n < g.nodes; ++n)
        if (g.weight[static_cast<size_t>(n)] > 0) f.add(s, n, n == out ? kInf : g.weight[static_cast<size_t>(n)]);
    f.add(in, t, kInf);
    for (const auto& [a, b, rate] : g.links) {
        f.add(a, b, y * rate);
        f.add(b, a, y * rate);
    }
    const double value = f.run(s, t);
    cut->in.assign(static_cast<size_t>(g.nodes), false);
    cut->outside = 0;
    for (int n = 0; n < g.nodes; ++n) {
        cut->in[static_cast<size_t>(n)] = !f.source_side(n);
        if (!cut->in[static_cast<size_t>(n)]) cut->outside += g.weight[static_cast<size_t>(n)];
    }
    cut->rate = rate_into(g, cut->in);
    return value;
}

std::string cut_text(const TopologyView& v, const Graph& g, const Cut& c) {
    std::string side;
    int inside = 0, named = 0;
    std::vector<bool> linked(static_cast<size_t>(g.nodes), false);
    for (const auto& [a, b, rate] : g.links) linked[static_cast<size_t>(a)] = linked[static_cast<size_t>(b)] = true;
    for (int n = 0; n < g.nodes; ++n)
        if (c.in[static_cast<size_t>(n)] && linked[static_cast<size_t>(n)]) {
            inside += g.weight[static_cast<size_t>(n)];
            if (named++ < 6) side += (side.empty() ? "" : ", ") + node_name(v, n);
        }
    if (named > 6) side += ", ... (" + std::to_string(named) + " nodes)";
    return ranks_text(inside) + " on {" + side + "}" + receive(inside) + " the other " +
           std::to_string(c.outside) + " over the links entering them (" + rate_text(c.rate) + ")";
}

Status direct_bound(const TopologyView& v, AllreduceBound* b) {
    Graph g;
    g.nodes = static_cast<int>(v.nodes.size());
    g.weight.assign(v.nodes.size(), 0);
    for (size_t n = 0; n < v.nodes.size(); ++n) g.weight[n] = static_cast<int>(v.nodes[n].ranks.size());
    for (const TopoLink& l : v.links) {
        if (l.cls < 0 || !(v.link_classes[static_cast<size_t>(l.cls)].rate > 0))
            return Status::invalid("the link " + node_name(v, l.a) + " - " + node_name(v, l.b) +
                                   " has no rate: the bound needs every link rated");
        g.links.emplace_back(l.a, l.b, v.link_classes[static_cast<size_t>(l.cls)].rate * l.units);
    }
    std::vector<int> hosts;
    for (int n = 0; n < g.nodes; ++n)
        if (g.weight[static_cast<size_t>(n)] > 0) hosts.push_back(n);
    const int total = v.nranks();
    if (hosts.size() < 2) return Status::invalid("the bound needs ranks on two hosts or more");
    // Start from the single-host cuts.
    Cut best;
    double y = -1;
    for (int h : hosts) {
        Cut c;
        c.in.assign(static_cast<size_t>(g.nodes), false);
        c.in[static_cast<size_t>(h)] = true;
        c.rate = rate_into(g, c.in);
        c.outside = total - g.weight[static_cast<size_t>(h)];
        if (!(c.rate > 0)) return Status::invalid(node_name(v, h) + " has no link: the network is disconnected");
        if (c.outside / c.rate > y) y = c.outside / c.rate, best = c;
    }
    b->method = "direct network: the single-host cuts only (a valid bound, possibly looser; exact "
                "up to " + std::to_string(kExactBoundNodes) + " nodes)";
    if (g.nodes <= kExactBoundNodes) {
        // Dinkelbach: a cut with y * rate_in(S) + inside(S) < N holds more
        // ranks outside than y allows; its ratio is the next y.
        for (int iter = 0; iter < 64; ++iter) {
            bool improved = false;
            const int pin = hosts[0];
            for (size_t i = 1; i < hosts.size(); ++i)
                for (int dir = 0; dir < 2; ++dir) {
                    Cut c;
                    const double value = dir == 0 ? min_cut(g, y, pin, hosts[i], &c)
                                                  : min_cut(g, y, hosts[i], pin, &c);
                    if (value < total * (1 - 1e-9) && c.rate > 0 && c.outside / c.rate > y * (1 + 1e-9)) {
                        y = c.outside / c.rate;
                        best = c;
                        improved = true;
                    }
                }
            if (!improved) break;
        }
        b->method = "direct network: every cut, by minimum cuts (exact)";
    }
    b->outside = best.outside;
    b->cut_rate = best.rate;
    b->cut = cut_text(v, g, best);
    return Status::ok();
}

}  // namespace

Status allreduce_bound(const TopologyView& view, double bytes, AllreduceBound* out) {
    if (view.empty()) return Status::invalid("the bound needs a topology");
    if (const std::string why = view.validate(); !why.empty()) return Status::invalid(why);
    AllreduceBound b;
    GENX_RETURN_IF_ERROR(view.direct ? direct_bound(view, &b) : tree_bound(view, &b));
    const double block = bytes / view.nranks();
    b.allgather_s = block * b.outside / b.cut_rate;
    // Links are full duplex and rated alike both ways: the reduce-scatter's
    // cut (the same side, its links leaving it) binds alike.
    b.seconds = 2 * b.allgather_s;
    *out = std::move(b);
    return Status::ok();
}

}  // namespace genx
