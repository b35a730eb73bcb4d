// MTREE generator (description, cost and differences from the paper in
// mtree.hpp).
#include "plan/mtree.hpp"
#include "common/hash.hpp"
#include "common/min_bitset.hpp"
#include "plan/hops.hpp"
#include "plan/lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

namespace genx {

namespace {

constexpr double kDefaultLatency = 1e-6;  // s, when no class says

// Relative comparison of capacities: equal within 1e-9.
bool cap_equal(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

// ------------------------------------------------------------------ graph

void quantise_mtree_latencies(MTreeGraph* g) {
    double lo = 0;
    for (const MTreeEdge& e : g->edges)
        if (e.latency > 0 && (lo == 0 || e.latency < lo)) lo = e.latency;
    for (MTreeEdge& e : g->edges) {
        const double x = lo > 0 ? std::round(e.latency / lo) : 1.0;
        e.q = static_cast<int>(std::clamp(x, 1.0, static_cast<double>(kMTreeMaxQuantum)));
    }
}

namespace {

// Rates and latencies of a view's link classes, unknown ones replaced
// (mtree.hpp: the fastest known rate, the smallest known latency).
struct ClassInfo {
    const TopologyView* view;
    double max_rate = 0, min_lat = 0;
    explicit ClassInfo(const TopologyView* v) : view(v) {
        for (const TopoLinkClass& c : v->link_classes) {
            max_rate = std::max(max_rate, c.rate);
            if (c.latency > 0 && (min_lat == 0 || c.latency < min_lat)) min_lat = c.latency;
        }
        if (max_rate <= 0) max_rate = 1.0;
        if (min_lat <= 0) min_lat = kDefaultLatency;
    }
    const TopoLinkClass* cls(int c) const {
        return c >= 0 && c < static_cast<int>(view->link_classes.size()) ? &view->link_classes[static_cast<size_t>(c)]
                                                                         : nullptr;
    }
    double rate(int c) const { return cls(c) != nullptr && cls(c)->rate > 0 ? cls(c)->rate : max_rate; }
    double lat(int c) const { return cls(c) != nullptr && cls(c)->latency > 0 ? cls(c)->latency : min_lat; }
};

// A switch tree's up-links: every node's depth and its up-link capacity,
// computed bottom-up (a switch without a known rate: its children's sum
// over its oversubscription).
struct UpLinks {
    std::vector<int> depth;
    std::vector<double> cap;
};

UpLinks up_links(const TopologyView* view, const ClassInfo& ci) {
    const size_t nn = view->nodes.size();
    UpLinks u;
    u.depth.assign(nn, 0);
    u.cap.assign(nn, 0);
    std::vector<int> order;
    std::vector<int> stack{0};
    while (!stack.empty()) {
        const int x = stack.back();
        stack.pop_back();
        order.push_back(x);
        for (int c : view->nodes[static_cast<size_t>(x)].children) {
            u.depth[static_cast<size_t>(c)] = u.depth[static_cast<size_t>(x)] + 1;
            stack.push_back(c);
        }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const TopoNode& node = view->nodes[static_cast<size_t>(*it)];
        double& cap = u.cap[static_cast<size_t>(*it)];
        const bool known = ci.cls(node.up_class) != nullptr && ci.cls(node.up_class)->rate > 0;
        if (node.is_host()) {
            cap = ci.rate(node.up_class) * std::max(1, node.nics);
        } else if (known) {
            cap = ci.rate(node.up_class);
        } else {
            double sum = 0;
            for (int c : node.children) sum += u.cap[static_cast<size_t>(c)];
            cap = sum / (node.oversubscription > 0 ? node.oversubscription : 1.0);
            if (!(cap > 0)) cap = ci.max_rate;
        }
    }
    return u;
}

// Adds the up-links of the path between nodes a and b to e (a's side
// first, then b's from the top down) and their latencies.
void add_path(const TopologyView* view, const ClassInfo& ci, const UpLinks& up, const std::vector<int>& res_of,
              int a, int b, MTreeEdge* e) {
    std::vector<int> up_b;
    while (a != b) {
        int& deeper = up.depth[static_cast<size_t>(a)] >= up.depth[static_cast<size_t>(b)] ? a : b;
        const TopoNode& node = view->nodes[static_cast<size_t>(deeper)];
        if (&deeper == &a)
            e->res.push_back(res_of[static_cast<size_t>(deeper)]);
        else
            up_b.push_back(res_of[static_cast<size_t>(deeper)]);
        e->latency += ci.lat(node.up_class);
        deeper = node.parent;
    }
    e->res.insert(e->res.end(), up_b.rbegin(), up_b.rend());
}

}  // namespace

Status build_mtree_graph(const TopologyView* view, int nranks, MTreeGraph* out) {
    MTreeGraph g;
    if (view == nullptr || view->empty()) {
        // One switch: host links of unit rate; edge (u, v) uses both.
        g.n = nranks;
        for (int r = 0; r < nranks; ++r) {
            g.names.push_back("rank " + std::to_string(r));
            g.ranks.push_back({r});
            g.capacity.push_back(1.0);
        }
        for (int u = 0; u < nranks; ++u)
            for (int v = u + 1; v < nranks; ++v) g.edges.push_back({u, v, 2 * kDefaultLatency, 1, {u, v}});
        quantise_mtree_latencies(&g);
        *out = std::move(g);
        return Status::ok();
    }
    if (view->nranks() != nranks)
        return Status::invalid("the topology places " + std::to_string(view->nranks()) +
                               " ranks, the plan is for " + std::to_string(nranks));
    const ClassInfo ci(view);
    const size_t nn = view->nodes.size();
    std::vector<int> vertex(nn, -1);
    for (size_t i = 0; i < nn; ++i) {
        const TopoNode& node = view->nodes[i];
        if (!node.is_host() || node.ranks.empty()) continue;
        if (view->direct && i == 0) continue;
        vertex[i] = g.n++;
        g.names.push_back(node.name);
        g.ranks.push_back(node.ranks);
    }
    if (view->direct) {
        for (const TopoLink& l : view->links) {
            if (l.a < 0 || l.b < 0 || static_cast<size_t>(l.a) >= nn || static_cast<size_t>(l.b) >= nn) continue;
            const int a = vertex[static_cast<size_t>(l.a)], b = vertex[static_cast<size_t>(l.b)];
            if (a < 0 || b < 0 || a == b) continue;
            g.capacity.push_back(ci.rate(l.cls) * std::max(1, l.units));
            g.edges.push_back({std::min(a, b), std::max(a, b), ci.lat(l.cls), 1,
                               {static_cast<int>(g.capacity.size()) - 1}});
        }
    } else {
        // Resources: the up-link of every node below the root.
        const UpLinks up = up_links(view, ci);
        std::vector<int> res_of(nn, -1);
        for (size_t i = 1; i < nn; ++i) {
            if (view->nodes[i].parent < 0) continue;
            res_of[i] = static_cast<int>(g.capacity.size());
            g.capacity.push_back(up.cap[i]);
        }
        std::vector<int> host_node;
        for (size_t i = 0; i < nn; ++i)
            if (vertex[i] >= 0) host_node.push_back(static_cast<int>(i));
        for (int u = 0; u < g.n; ++u)
            for (int v = u + 1; v < g.n; ++v) {
                MTreeEdge e;
                e.u = u;
                e.v = v;
                add_path(view, ci, up, res_of, host_node[static_cast<size_t>(u)], host_node[static_cast<size_t>(v)], &e);
                g.edges.push_back(std::move(e));
            }
    }
    quantise_mtree_latencies(&g);
    *out = std::move(g);
    return Status::ok();
}

int mtree_host_count(const TopologyView* view, int nranks) {
    if (view == nullptr || view->empty()) return nranks;
    int n = 0;
    for (size_t i = 0; i < view->nodes.size(); ++i)
        if (view->nodes[i].is_host() && !view->nodes[i].ranks.empty() && !(view->direct && i == 0)) ++n;
    return n;
}

// ------------------------------------------------------------------- GOST

std::vector<int> mtree_grth(const std::vector<std::vector<std::pair<int, int>>>& adj,
                            const std::vector<int>& D, int u, int v, int q) {
    std::vector<int> Dj = D;
    // The fix: the attachment vertex is at distance q from v.
    Dj[static_cast<size_t>(u)] = std::max(Dj[static_cast<size_t>(u)], q);
    std::vector<char> visited(D.size(), 0);
    std::deque<std::pair<int, int>> queue{{u, q}};
    visited[static_cast<size_t>(u)] = 1;
    int ell = q;
    while (!queue.empty()) {
        const auto [p, t] = queue.front();
        queue.pop_front();
        ell = std::max(ell, t);
        for (const auto& [next, w] : adj[static_cast<size_t>(p)]) {
            if (visited[static_cast<size_t>(next)]) continue;
            visited[static_cast<size_t>(next)] = 1;
            Dj[static_cast<size_t>(next)] = std::max(Dj[static_cast<size_t>(next)], t + w);
            queue.push_back({next, t + w});
        }
    }
    Dj[static_cast<size_t>(v)] = ell;
    return Dj;
}

namespace {

// Roots `edges` (a spanning tree of g) at `root`: parent, depth, heights.
void root_tree(const MTreeGraph& g, MTreeTree* t) {
    // The tree's adjacency in one array (each vertex's edges at [at[x], at[x + 1])).
    const size_t n = static_cast<size_t>(g.n);
    std::vector<int> at(n + 1, 0), adj(2 * t->edges.size());
    for (int e : t->edges) {
        ++at[static_cast<size_t>(g.edges[static_cast<size_t>(e)].u) + 1];
        ++at[static_cast<size_t>(g.edges[static_cast<size_t>(e)].v) + 1];
    }
    for (size_t x = 0; x < n; ++x) at[x + 1] += at[x];
    std::vector<int> fill(at.begin(), at.end() - 1);
    for (int e : t->edges) {
        adj[static_cast<size_t>(fill[static_cast<size_t>(g.edges[static_cast<size_t>(e)].u)]++)] = e;
        adj[static_cast<size_t>(fill[static_cast<size_t>(g.edges[static_cast<size_t>(e)].v)]++)] = e;
    }
    t->parent.assign(n, -1);
    t->depth.assign(n, -1);
    std::vector<int> qd(n, 0), queue{t->root};
    queue.reserve(n);
    t->depth[static_cast<size_t>(t->root)] = 0;
    t->height = t->qheight = 0;
    t->max_latency = 0;
    for (size_t head = 0; head < queue.size(); ++head) {
        const int x = queue[head];
        for (int i = at[static_cast<size_t>(x)]; i < at[static_cast<size_t>(x) + 1]; ++i) {
            const int e = adj[static_cast<size_t>(i)];
            const MTreeEdge& ed = g.edges[static_cast<size_t>(e)];
            const int y = ed.u == x ? ed.v : ed.u;
            if (t->depth[static_cast<size_t>(y)] >= 0) continue;
            t->parent[static_cast<size_t>(y)] = x;
            t->depth[static_cast<size_t>(y)] = t->depth[static_cast<size_t>(x)] + 1;
            qd[static_cast<size_t>(y)] = qd[static_cast<size_t>(x)] + ed.q;
            t->height = std::max(t->height, t->depth[static_cast<size_t>(y)]);
            t->qheight = std::max(t->qheight, qd[static_cast<size_t>(y)]);
            t->max_latency = std::max(t->max_latency, ed.latency);
            queue.push_back(y);
        }
    }
}

double max_capacity(const MTreeGraph& g) {
    double m = 0;
    for (double c : g.capacity) m = std::max(m, c);
    return m;
}

double edge_capacity(const MTreeEdge& e, const std::vector<double>& R, const std::vector<int>& mult) {
    double c = std::numeric_limits<double>::infinity();
    for (int r : e.res) c = std::min(c, R[static_cast<size_t>(r)] / (mult[static_cast<size_t>(r)] + 1));
    return e.res.empty() ? 0 : c;
}

double rmin_of(const MTreeGraph& g, const MTreeOptions& o) {
    return o.rmin > 0 ? o.rmin : max_capacity(g) / 1024;
}

// Resource uses of a tree: (resource, count) pairs.
std::vector<std::pair<int, int>> tree_uses(const MTreeGraph& g, const MTreeTree& t) {
    std::vector<int> all;
    for (int e : t.edges)
        for (int r : g.edges[static_cast<size_t>(e)].res) all.push_back(r);
    std::sort(all.begin(), all.end());
    std::vector<std::pair<int, int>> out;
    for (int r : all) {
        if (out.empty() || out.back().first != r) out.push_back({r, 0});
        ++out.back().second;
    }
    return out;
}

// One GBST round's tree from `start` as the paper grows it: each join scans
// every edge for the largest capacity (resources the tree already holds
// shared with it), then the smallest diameter, and GRTH updates the
// eccentricities D.  Fills `chosen`, *root (the first vertex of least D)
// and *diam_out, as grow_by_queue does.
void scan_grow(const MTreeGraph& g, const std::vector<double>& R, double rmin, long d, int start,
               std::vector<int>* chosen, int* root, int* diam_out) {
    const size_t n = static_cast<size_t>(g.n);
    std::vector<int> D(n, 0), mult(g.capacity.size(), 0);
    std::vector<char> in(n, 0);
    in[static_cast<size_t>(start)] = 1;
    std::vector<std::vector<std::pair<int, int>>> adj(n);
    int diam = 0;
    for (size_t size = 1; size < n; ++size) {
        int best = -1;
        double best_c = 0;
        int best_diam = 0;
        for (size_t ei = 0; ei < g.edges.size(); ++ei) {
            const MTreeEdge& e = g.edges[ei];
            if (in[static_cast<size_t>(e.u)] == in[static_cast<size_t>(e.v)]) continue;
            const double c = edge_capacity(e, R, mult);
            if (c < rmin) continue;
            const int u = in[static_cast<size_t>(e.u)] ? e.u : e.v;
            const int nd = std::max(diam, D[static_cast<size_t>(u)] + e.q);
            if (nd > d) continue;
            if (best < 0 || (c > best_c && !cap_equal(c, best_c)) || (cap_equal(c, best_c) && nd < best_diam)) {
                best = static_cast<int>(ei);
                best_c = c;
                best_diam = nd;
            }
        }
        if (best < 0) break;
        const MTreeEdge& e = g.edges[static_cast<size_t>(best)];
        const int u = in[static_cast<size_t>(e.u)] ? e.u : e.v;
        const int v = u == e.u ? e.v : e.u;
        D = mtree_grth(adj, D, u, v, e.q);
        adj[static_cast<size_t>(u)].push_back({v, e.q});
        adj[static_cast<size_t>(v)].push_back({u, e.q});
        in[static_cast<size_t>(v)] = 1;
        for (int r : e.res) ++mult[static_cast<size_t>(r)];
        chosen->push_back(best);
        diam = best_diam;
    }
    *root = static_cast<int>(std::min_element(D.begin(), D.end()) - D.begin());
    *diam_out = diam;
}

// Whether no resource serves two edges (a direct network: each link its
// own).  Then a frontier edge draws on nothing the growing tree holds, and
// its capacity stays put for the whole round.
bool resources_private(const MTreeGraph& g) {
    std::vector<char> used(g.capacity.size(), 0);
    for (const MTreeEdge& e : g.edges)
        for (int r : e.res) {
            if (r < 0 || static_cast<size_t>(r) >= used.size() || used[static_cast<size_t>(r)]) return false;
            used[static_cast<size_t>(r)] = 1;
        }
    return true;
}

// A tree grown a leaf at a time that answers eccentricities (in quantised
// latency) in O(log n): in a tree every vertex is farthest from one end of
// a diameter, and a new leaf lengthens the diameter only to itself.
// Distances come from depths and lowest common ancestors (binary lifting;
// keeping every vertex's distance to both ends instead costs a walk of
// the tree each time an end moves, slower on a torus of 10⁴).
class GrowingTree {
  public:
    GrowingTree(int n, int root)
        : depth_(static_cast<size_t>(n), 0), qdepth_(depth_), end_dist_(static_cast<size_t>(n)) {
        while ((1 << levels_) < n) ++levels_;
        width_ = static_cast<size_t>(levels_) + 1;
        up_.assign(static_cast<size_t>(n) * width_, root);
        end_[0] = end_[1] = root;
    }
    void add_leaf(int u, int v, int q) {
        const size_t x = static_cast<size_t>(v);
        depth_[x] = depth_[static_cast<size_t>(u)] + 1;
        qdepth_[x] = qdepth_[static_cast<size_t>(u)] + q;
        int* row = &up_[x * width_];
        row[0] = u;
        // Ancestors beyond the depth stay the root, as the table starts.
        for (size_t k = 1; k < width_ && (1 << k) <= depth_[x]; ++k)
            row[k] = up_[static_cast<size_t>(row[k - 1]) * width_ + k - 1];
        // A leaf is its parent's distance plus q from either end.
        EndDist& c = end_dist_[x];
        for (int i = 0; i < 2; ++i) {
            c.dist[i] = to_end(u, i) + q - shift_[i];
            c.version[i] = version_[i];
        }
        const int da = c.dist[0] + shift_[0], db = c.dist[1] + shift_[1];
        if (std::max(da, db) > diameter_) {
            diameter_ = std::max(da, db);
            const int moved = da >= db ? 1 : 0;  // v replaces the nearer end
            // Where v extends that end, every other vertex is q farther
            // from v than from it: the kept distances shift, none is lost.
            if (end_[moved] == u)
                shift_[moved] += q;
            else
                ++version_[moved];
            end_[moved] = v;
            c.dist[moved] = -shift_[moved];
            c.version[moved] = version_[moved];
        }
    }
    int ecc(int x) { return std::max(to_end(x, 0), to_end(x, 1)); }
    int diameter() const { return diameter_; }
    // The lowest-numbered vertex of least eccentricity.  With every q ≥ 1
    // those lie on the path between the diameter's ends (a vertex off it
    // is farther from both than where it joins it).
    int center() {
        int best = -1, best_ecc = 0;
        const auto consider = [&](int x) {
            const int e = ecc(x);
            if (best < 0 || e < best_ecc || (e == best_ecc && x < best)) {
                best = x;
                best_ecc = e;
            }
        };
        const int top = lca(end_[0], end_[1]);
        for (int i = 0; i < 2; ++i)
            for (int x = end_[i]; x != top; x = anc(x, 0)) consider(x);
        consider(top);
        return best;
    }

  private:
    // x's distance to end i, kept until that end moves other than by
    // extending (distances between vertices already in the tree never
    // change); kept less shift_[i], what extensions have added since.
    int to_end(int x, int i) {
        EndDist& c = end_dist_[static_cast<size_t>(x)];
        if (c.version[i] != version_[i]) {
            c.dist[i] = dist(x, end_[i]) - shift_[i];
            c.version[i] = version_[i];
        }
        return c.dist[i] + shift_[i];
    }
    int dist(int x, int y) const {
        return qdepth_[static_cast<size_t>(x)] + qdepth_[static_cast<size_t>(y)] -
               2 * qdepth_[static_cast<size_t>(lca(x, y))];
    }
    int anc(int x, int k) const { return up_[static_cast<size_t>(x) * width_ + static_cast<size_t>(k)]; }
    int lca(int x, int y) const {
        if (depth_[static_cast<size_t>(x)] < depth_[static_cast<size_t>(y)]) std::swap(x, y);
        // Lift x by the depth difference's bits, then both from the
        // highest level their depth reaches.
        for (int diff = depth_[static_cast<size_t>(x)] - depth_[static_cast<size_t>(y)], k = 0; diff != 0; diff >>= 1, ++k)
            if (diff & 1) x = anc(x, k);
        if (x == y) return x;
        int top = 0;
        while (top < levels_ && (2 << top) <= depth_[static_cast<size_t>(x)]) ++top;
        for (int k = top; k >= 0; --k)
            if (anc(x, k) != anc(y, k)) {
                x = anc(x, k);
                y = anc(y, k);
            }
        return anc(x, 0);
    }
    int levels_ = 0;
    size_t width_ = 1;
    std::vector<int> depth_, qdepth_;
    std::vector<int> up_;  // vertex x's 2^k-th ancestor at x · width_ + k
    struct EndDist {
        int dist[2] = {0, 0};
        long version[2] = {-1, -1};
    };
    std::vector<EndDist> end_dist_;
    int end_[2] = {0, 0};        // a diameter's ends
    long version_[2] = {0, 0};   // bumped when an end moves other than to a child of its own
    int shift_[2] = {0, 0};      // what end i's extensions have added to every kept distance
    int diameter_ = 0;
};

// The frontier's bounds, as bits: capacity classes, diameters, edges.
constexpr int kClassBits = 12, kDiamBits = 26, kEdgeBits = 26;
static_assert(kClassBits + kDiamBits + kEdgeBits == 64, "a key is 64 bits");

// The edges' capacity classes for a round, from their capacities `cap`
// (0 the largest; -1 below rmin),
// where the scan's choice (largest capacity, then smallest diameter, then
// first edge) is a plain lexicographic order: no two usable capacities
// within cap_equal's tolerance unless equal.  False where they are not.
bool capacity_classes(const std::vector<double>& cap, double rmin, std::vector<int>* cls) {
    // A network has few link rates: collect them by a scan while few.
    std::vector<double> distinct;
    size_t last = 0;  // where the previous capacity was found: neighbours share rates
    for (double x : cap) {
        if (x < rmin || (last < distinct.size() && distinct[last] == x)) continue;
        const auto it = std::find(distinct.begin(), distinct.end(), x);
        last = static_cast<size_t>(it - distinct.begin());
        if (it != distinct.end()) continue;
        distinct.push_back(x);
        if (distinct.size() > 64) break;
    }
    if (distinct.size() > 64) {
        distinct.clear();
        for (double x : cap)
            if (x >= rmin) distinct.push_back(x);
    }
    std::sort(distinct.begin(), distinct.end(), std::greater<double>());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() > (size_t{1} << kClassBits)) return false;  // more than a key holds
    for (size_t i = 1; i < distinct.size(); ++i)
        if (cap_equal(distinct[i], distinct[i - 1])) return false;
    cls->assign(cap.size(), -1);
    for (size_t ei = 0; ei < cap.size(); ++ei)
        if (cap[ei] >= rmin)
            (*cls)[ei] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), cap[ei],
                                                           std::greater<double>()) -
                                          distinct.begin());
    return true;
}


// How many capacity classes capacity_classes made.
int classes_of(const std::vector<int>& cls) {
    int top = -1;
    for (int c : cls) top = std::max(top, c);
    return top + 1;
}

// Whether a graph's keys fit those bits and every q is at least 1 (else
// the scan grows its trees).
bool keys_fit(const MTreeGraph& g, long d) {
    for (const MTreeEdge& e : g.edges)
        if (e.q < 1) return false;
    return g.edges.size() < (size_t{1} << kEdgeBits) && d < (1L << kDiamBits);
}

// GBST's frontier in one round (grow_by_queue): the edges offered, each
// under its key (capacity class, the diameter it would make, index), by
// class and in two parts.  `low` holds a class's edges whose own diameter
// ecc(u) + q the tree's diameter D covered when filed: their key is
// (class, D, index), so the least index among them leads and a longer D
// re-keys none of them.  `high` holds the others under the own diameter
// they were filed with, in (D, D + max q] (an eccentricity never exceeds
// the diameter); once D reaches it they join low.  Keys never decrease,
// so an edge found stale is filed again, and the first current edge taken
// is the one of least key: the scan's choice.
class GbstFrontier {
  public:
    GbstFrontier(const std::vector<int>& cls, int classes)
        : cls_(cls), local_(cls.size(), -1), edge_of_(static_cast<size_t>(classes)),
          low_(static_cast<size_t>(classes)), high_(static_cast<size_t>(classes)),
          listed_(static_cast<size_t>(classes), 0), live_(static_cast<size_t>(classes)) {
        for (size_t ei = 0; ei < cls.size(); ++ei)
            if (cls[ei] >= 0) {
                std::vector<int>& of = edge_of_[static_cast<size_t>(cls[ei])];
                local_[ei] = static_cast<int>(of.size());
                of.push_back(static_cast<int>(ei));
            }
        for (size_t c = 0; c < edge_of_.size(); ++c) low_[c].reset(edge_of_[c].size());
    }

    // Files edge ei, whose own diameter is o (at most the bound), under
    // tree diameter D.
    void file(int ei, int o, int D) {
        const size_t c = static_cast<size_t>(cls_[static_cast<size_t>(ei)]);
        if (o <= D) {
            low_[c].insert(static_cast<size_t>(local_[static_cast<size_t>(ei)]));
        } else {
            if (!listed_[c]) {
                listed_[c] = 1;
                high_classes_.push_back(static_cast<int>(c));
            }
            high_[c][o].push_back(ei);
        }
        live_.insert(c);
    }

    // The edge of least current key, taken out, or -1 when none is left
    // within bound d.  own(ei): its own diameter now; spans(ei): both its
    // ends in the tree.  *pruned: set where the bound turned one away.
    template <class Own, class Spans>
    int take(int D, long d, const Own& own, const Spans& spans, bool* pruned) {
        cover(D);
        while (!live_.empty()) {
            const size_t c = live_.first();
            if (!low_[c].empty()) {
                const size_t at = low_[c].first();
                low_[c].erase(at);
                settle(c);
                const int ei = edge_of_[c][at];
                if (spans(ei)) continue;
                const int o = own(ei);
                if (o > d) {
                    *pruned = true;  // diameters only grow: never again
                    continue;
                }
                if (o <= D) return ei;
                file(ei, o, D);
                continue;
            }
            // The least own diameter filed, then the least index whose
            // own diameter is still that; the rest wait for D to reach it.
            auto slot = high_[c].begin();
            const int nd = slot->first;
            std::vector<int> wait = std::move(slot->second), later;
            high_[c].erase(slot);
            std::sort(wait.begin(), wait.end());
            int best = -1;
            std::vector<std::pair<int, int>> refile;
            for (int ei : wait) {
                if (best >= 0) {
                    later.push_back(ei);
                    continue;
                }
                if (spans(ei)) continue;
                const int o = own(ei);
                if (o > d)
                    *pruned = true;
                else if (o != nd)
                    refile.push_back({ei, o});
                else
                    best = ei;
            }
            if (!later.empty()) high_[c][nd] = std::move(later);
            for (const auto& [ei, o] : refile) file(ei, o, D);
            settle(c);
            if (best >= 0) return best;
        }
        return -1;
    }

  private:
    // Moves high's edges that diameter D covers into low.
    void cover(int D) {
        if (D <= covered_) return;
        covered_ = D;
        for (size_t k = 0; k < high_classes_.size();) {
            const size_t c = static_cast<size_t>(high_classes_[k]);
            std::map<int, std::vector<int>>& h = high_[c];
            while (!h.empty() && h.begin()->first <= D) {
                for (int ei : h.begin()->second) low_[c].insert(static_cast<size_t>(local_[static_cast<size_t>(ei)]));
                h.erase(h.begin());
            }
            if (h.empty()) {
                listed_[c] = 0;
                high_classes_[k] = high_classes_.back();
                high_classes_.pop_back();
            } else {
                ++k;
            }
        }
    }
    // Keeps live_ to the classes with an edge filed.
    void settle(size_t c) {
        if (low_[c].empty() && high_[c].empty()) live_.erase(c);
    }

    const std::vector<int>& cls_;
    std::vector<int> local_;                       // an edge's index within its class
    std::vector<std::vector<int>> edge_of_;        // a class's edges by that index
    std::vector<MinBitset> low_;                   // per class
    std::vector<std::map<int, std::vector<int>>> high_;  // per class: own diameter -> edges
    std::vector<int> high_classes_;                // the classes with high edges (and some emptied since)
    std::vector<char> listed_;                     // whether a class is in high_classes_
    MinBitset live_;                               // the classes with any edge
    int covered_ = -1;                             // the diameter high was last moved under
};

// One GBST round's tree from `start` by the frontier above instead of a
// scan of every edge per join: the same choice where resources are
// private and the capacity classes plain (capacity_classes).  Fills
// `chosen` as the scan does and *root with the vertex the scan's
// eccentricities make the root (every q ≥ 1: keys_fit).  *pruned: whether
// the bound d ever turned an edge away that the choice had to pass (else
// any bound from the tree's diameter up grows the same tree).
void grow_by_queue(const MTreeGraph& g, const std::vector<std::vector<int>>& edges_at,
                   const std::vector<int>& cls, int classes, long d, int start, std::vector<int>* chosen,
                   int* root, int* diam, bool* pruned) {
    const size_t n = static_cast<size_t>(g.n);
    std::vector<char> in(n, 0);
    GrowingTree tree(g.n, start);
    GbstFrontier frontier(cls, classes);
    const auto spans = [&](int ei) {
        const MTreeEdge& e = g.edges[static_cast<size_t>(ei)];
        return in[static_cast<size_t>(e.u)] && in[static_cast<size_t>(e.v)];
    };
    const auto own = [&](int ei) {
        const MTreeEdge& e = g.edges[static_cast<size_t>(ei)];
        return tree.ecc(in[static_cast<size_t>(e.u)] ? e.u : e.v) + e.q;
    };
    const auto offer = [&](int x) {
        const int ex = tree.ecc(x);  // every edge offered leaves from x
        for (int ei : edges_at[static_cast<size_t>(x)]) {
            if (cls[static_cast<size_t>(ei)] < 0 || spans(ei)) continue;
            const int o = ex + g.edges[static_cast<size_t>(ei)].q;
            if (o > d)
                *pruned = true;
            else
                frontier.file(ei, o, tree.diameter());
        }
    };
    in[static_cast<size_t>(start)] = 1;
    offer(start);
    for (size_t size = 1; size < n; ++size) {
        const int best = frontier.take(tree.diameter(), d, own, spans, pruned);
        if (best < 0) break;
        const MTreeEdge& e = g.edges[static_cast<size_t>(best)];
        const int u = in[static_cast<size_t>(e.u)] ? e.u : e.v;
        const int v = u == e.u ? e.v : e.u;
        tree.add_leaf(u, v, e.q);
        in[static_cast<size_t>(v)] = 1;
        chosen->push_back(best);
        offer(v);
    }
    *root = tree.center();
    *diam = tree.diameter();
}

// A round's edges in index order: a pass over marks where the tree holds
// a good share of the graph's edges (a 10^4-host torus: half), else a sort.
void sort_edges(std::vector<int>* edges, std::vector<char>* marks) {
    if (marks->size() > 8 * edges->size()) {
        std::sort(edges->begin(), edges->end());
        return;
    }
    for (int e : *edges) (*marks)[static_cast<size_t>(e)] = 1;
    size_t k = 0;
    for (size_t e = 0; e < marks->size(); ++e)
        if ((*marks)[e]) {
            (*edges)[k++] = static_cast<int>(e);
            (*marks)[e] = 0;
        }
}

// Whether a round recorded under diameter bound `was` grows the same tree
// under bound d: a bound between the tree's diameter and `was` removes only
// edges the round never chose, and one above `was` changes nothing where
// `was` turned no edge away (the run's only branches on the bound).
bool admits(const GbstRound& r, long was, long d) {
    return r.diam <= d && (d <= was || !r.pruned);
}

// The longest prefix of a recorded run that bound d admits, round by round
// (equal prefixes leave equal remaining capacities behind them).
std::pair<const GbstMemo::Run*, size_t> replayable(const GbstMemo* memo, long d) {
    std::pair<const GbstMemo::Run*, size_t> best{nullptr, 0};
    if (memo == nullptr) return best;
    for (const GbstMemo::Run& run : memo->runs) {
        size_t k = 0;
        while (k < run.rounds.size() && admits(run.rounds[k], run.d, d)) ++k;
        if (k > best.second) best = {&run, k};
    }
    return best;
}

}  // namespace

std::vector<MTreeTree> mtree_gbst(const MTreeGraph& g, int H, const MTreeOptions& o, int* widest, GbstMemo* memo) {
    if (widest != nullptr) *widest = std::numeric_limits<int>::max();
    std::vector<MTreeTree> out;
    if (g.n < 2) return out;
    const size_t n = static_cast<size_t>(g.n);
    const double rmin = rmin_of(g, o);
    const double floor_rate = max_capacity(g) / 64;
    const long d = 2L * H;
    std::vector<double> R = g.capacity;
    const std::vector<int> zero(g.capacity.size(), 0);
    std::map<std::vector<int>, size_t> seen;  // edge set -> index in out
    std::vector<char> marks(g.edges.size(), 0);  // sort_edges's
    // Where no resource serves two edges, a frontier queue grows the same
    // trees in about O(m) a round instead of the scan's O(n · m).
    const bool shared_free = resources_private(g);
    const bool by_queue = !o.scan_every_edge && shared_free && keys_fit(g, d);
    bool ordered = true;  // every round's choice lexicographic (capacity_classes)
    int most = 0;         // the largest diameter a round reached
    std::vector<std::vector<int>> edges_at(by_queue ? n : 0);
    for (size_t ei = 0; by_queue && ei < g.edges.size(); ++ei) {
        edges_at[static_cast<size_t>(g.edges[ei].u)].push_back(static_cast<int>(ei));
        edges_at[static_cast<size_t>(g.edges[ei].v)].push_back(static_cast<int>(ei));
    }
    // Rounds grown by queue are recorded (while every round is) and replayed
    // where another run's bound admits them.
    const auto [replay, replay_rounds] = replayable(by_queue ? memo : nullptr, d);
    GbstMemo::Run record{d, {}};
    bool recording = memo != nullptr && by_queue;
    for (int round = 0; round < kMTreeMaxRounds; ++round) {
        // A replayed round needs only the capacities: its recording run
        // grew it by queue from the same capacities, so they were apart.
        const bool replaying = static_cast<size_t>(round) < replay_rounds;
        std::vector<double> cap(g.edges.size()), incident(replaying ? 0 : n, 0);
        for (size_t ei = 0; ei < g.edges.size(); ++ei) {
            const MTreeEdge& e = g.edges[ei];
            const double c = cap[ei] = edge_capacity(e, R, zero);
            if (c < rmin || replaying) continue;
            incident[static_cast<size_t>(e.u)] += c;
            incident[static_cast<size_t>(e.v)] += c;
        }
        // Start vertex: most remaining usable incident capacity.
        int start = 0;
        for (size_t v = 1; v < incident.size(); ++v)
            if (incident[v] > incident[static_cast<size_t>(start)] && !cap_equal(incident[v], incident[static_cast<size_t>(start)]))
                start = static_cast<int>(v);
        std::vector<int> chosen, cls;
        const bool apart = replaying || capacity_classes(cap, rmin, &cls);
        // Where resources are shared the scan weighs capacities that change
        // within the round, which the classes do not see: no memo there.
        ordered = ordered && apart && shared_free;
        int diam = 0, root = -1;
        bool pruned = false;
        if (replaying) {
            const GbstRound& r = replay->rounds[static_cast<size_t>(round)];
            chosen = r.chosen;
            root = r.root;
            diam = r.diam;
            pruned = r.pruned || d < replay->d;  // unknown below the bound it was grown under
            ++memo->replayed;
        } else if (by_queue && apart) {
            grow_by_queue(g, edges_at, cls, classes_of(cls), d, start, &chosen, &root, &diam, &pruned);
        } else {
            scan_grow(g, R, rmin, d, start, &chosen, &root, &diam);
            recording = false;
        }
        if (recording) record.rounds.push_back({chosen, root, diam, pruned});
        std::vector<int> mult(g.capacity.size(), 0);  // the tree's uses of each resource
        for (int e : chosen)
            for (int r : g.edges[static_cast<size_t>(e)].res) ++mult[static_cast<size_t>(r)];
        most = std::max(most, diam);
        if (widest != nullptr) *widest = ordered ? most : std::numeric_limits<int>::max();
        if (chosen.size() + 1 != n) break;  // no tree within H spans the hosts
        MTreeTree t;
        sort_edges(&chosen, &marks);
        t.edges = chosen;
        t.root = root;
        double bottleneck = std::numeric_limits<double>::infinity();
        for (size_t r = 0; r < mult.size(); ++r)
            if (mult[r] > 0) bottleneck = std::min(bottleneck, R[r] / mult[r]);
        double global_min = std::numeric_limits<double>::infinity();
        for (double c : cap)
            if (c >= rmin) global_min = std::min(global_min, c);
        const double step = o.step_fraction > 0 ? std::min(global_min, o.step_fraction * max_capacity(g)) : global_min;
        const double rate = std::min(bottleneck, std::max(step, floor_rate));
        if (!(rate >= rmin)) break;
        for (size_t r = 0; r < mult.size(); ++r) R[r] -= rate * mult[r];
        auto it = seen.find(t.edges);
        if (it != seen.end()) {
            out[it->second].rate += rate;
            continue;
        }
        t.rate = rate;
        root_tree(g, &t);
        seen[t.edges] = out.size();
        out.push_back(std::move(t));
    }
    if (recording && !record.rounds.empty()) memo->runs.push_back(std::move(record));
    return out;
}

Status mtree_gost(const MTreeGraph& g, const MTreeOptions& o, MTreeGost* out) {
    MTreeGost r;
    if (!(o.rho > 0 && o.rho <= 1)) return Status::invalid("mtree: rho must be in (0, 1]");
    if (g.n >= 2) {
        // Connected over usable edges?
        const double rmin = rmin_of(g, o);
        const std::vector<int> zero(g.capacity.size(), 0);
        Adjacency nb(static_cast<size_t>(g.n));
        for (const MTreeEdge& e : g.edges)
            if (edge_capacity(e, g.capacity, zero) >= rmin) {
                nb[static_cast<size_t>(e.u)].push_back(e.v);
                nb[static_cast<size_t>(e.v)].push_back(e.u);
            }
        const std::vector<int> dist = hop_distances(nb, 0);
        for (int v = 0; v < g.n; ++v)
            if (dist[static_cast<size_t>(v)] < 0)
                return Status::invalid("mtree: host '" + g.names[static_cast<size_t>(v)] +
                                       "' cannot be reached from host '" + g.names[0] +
                                       "' over the network graph (is it connected?)");
        int qmax = 1;
        for (const MTreeEdge& e : g.edges) qmax = std::max(qmax, e.q);
        r.H0 = (g.n - 1) * qmax;
        // A bound no round's tree came near turns away none of the edges
        // GBST chose: any H with 2H ≥ widest grows the H0 trees again.
        int widest = 0;
        GbstMemo memo;
        r.trees = mtree_gbst(g, r.H0, o, &widest, &memo);
        for (const MTreeTree& t : r.trees) r.total += t.rate;
        if (r.trees.empty())
            return Status::internal("mtree: no spanning tree found on a connected graph");
        const double want = o.rho * r.total;
        const std::vector<MTreeTree> unbounded = r.trees;
        int lo = 1, hi = r.H0;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            std::vector<MTreeTree> ts =
                2L * mid >= widest ? unbounded : mtree_gbst(g, mid, o, nullptr, &memo);
            double total = 0;
            for (const MTreeTree& t : ts) total += t.rate;
            if (!ts.empty() && total >= want * (1 - 1e-12)) {
                hi = mid;
                r.trees = std::move(ts);
                r.total = total;
            } else {
                lo = mid + 1;
            }
        }
        r.HU = hi;
    }
    *out = std::move(r);
    return Status::ok();
}

// ------------------------------------------------------------------ rates

std::vector<double> mtree_max_rates(const std::vector<std::vector<double>>& A, const std::vector<double>& b) {
    // Dictionary simplex (Chvátal): basic variable of row j = rhs[j] −
    // Σ_k a[j][k] · nonbasic k; z = z0 + Σ_k c[k] · nonbasic k.  Variables
    // 0..K−1 are the rates, K..K+m−1 the slacks.  The origin is feasible
    // (b ≥ 0), so no first phase; Bland's rule (smallest index enters and
    // leaves) rules out cycling.
    const size_t K = A.empty() ? 0 : A[0].size(), m = A.size();
    double scale = 0;
    for (double x : b) scale = std::max(scale, x);
    if (K == 0) return {};
    if (!(scale > 0)) return std::vector<double>(K, 0);
    std::vector<std::vector<double>> a = A;
    std::vector<double> rhs(m), c(K, 1.0);
    for (size_t j = 0; j < m; ++j) rhs[j] = std::max(0.0, b[j]) / scale;
    std::vector<size_t> basic(m), nonbasic(K);
    for (size_t j = 0; j < m; ++j) basic[j] = K + j;
    for (size_t k = 0; k < K; ++k) nonbasic[k] = k;
    constexpr double eps = 1e-12;
    for (int iter = 0; iter < 100000; ++iter) {
        size_t enter = K;
        for (size_t k = 0; k < K; ++k)
            if (c[k] > eps && (enter == K || nonbasic[k] < nonbasic[enter])) enter = k;
        if (enter == K) break;
        size_t leave = m;
        double best = 0;
        for (size_t j = 0; j < m; ++j) {
            if (a[j][enter] <= eps) continue;
            const double ratio = rhs[j] / a[j][enter];
            if (leave == m || ratio < best - eps || (ratio <= best + eps && basic[j] < basic[leave])) {
                leave = j;
                best = ratio;
            }
        }
        if (leave == m) break;  // unbounded: a rate on no resource (not built)
        const double piv = a[leave][enter];
        std::vector<double>& row = a[leave];
        for (size_t k = 0; k < K; ++k) row[k] = k == enter ? 1.0 / piv : row[k] / piv;
        rhs[leave] /= piv;
        for (size_t j = 0; j < m; ++j) {
            if (j == leave) continue;
            const double f = a[j][enter];
            if (f == 0) continue;
            std::vector<double>& aj = a[j];
            for (size_t k = 0; k < K; ++k) aj[k] -= f * row[k];  // no branch: vectorises
            aj[enter] = -f * row[enter];
            rhs[j] = std::max(0.0, rhs[j] - f * rhs[leave]);
        }
        const double f = c[enter];
        for (size_t k = 0; k < K; ++k) c[k] -= f * row[k];
        c[enter] = -f * row[enter];
        std::swap(basic[leave], nonbasic[enter]);
    }
    std::vector<double> x(K, 0);
    for (size_t j = 0; j < m; ++j)
        if (basic[j] < K) x[basic[j]] = rhs[j] * scale;
    return x;
}

namespace {

// Resources above which the rate LP first merges rows of the same uses
// (keeping the smallest capacity): the same feasible set and total, and
// far fewer rows on a large torus, whose links mostly carry the same
// subsets of trees.  Below it the LP is solved as built, as before.
constexpr size_t kMTreeMergeRows = 4096;

// The rate LP over trees given by their resource uses (tree_uses): rows
// are the resources some tree uses, in order of first use; a[j][i] = uses
// of resource j by tree i.
std::vector<double> rates_of_uses(const MTreeGraph& g,
                                  const std::vector<const std::vector<std::pair<int, int>>*>& uses) {
    const size_t K = uses.size();
    std::vector<int> row_of(g.capacity.size(), -1);
    std::vector<double> flat;  // row j's uses at flat[j · K ...]
    std::vector<double> b;
    for (size_t i = 0; i < K; ++i)
        for (const auto& [r, c] : *uses[i]) {
            int& row = row_of[static_cast<size_t>(r)];
            if (row < 0) {
                row = static_cast<int>(b.size());
                flat.resize(flat.size() + K, 0.0);
                b.push_back(g.capacity[static_cast<size_t>(r)]);
            }
            flat[static_cast<size_t>(row) * K + i] += c;
        }
    if (b.empty()) return std::vector<double>(K, 0);
    const auto row = [&](size_t j) { return flat.begin() + static_cast<long>(j * K); };
    std::vector<std::vector<double>> A;
    if (b.size() <= kMTreeMergeRows) {
        for (size_t j = 0; j < b.size(); ++j) A.emplace_back(row(j), row(j) + static_cast<long>(K));
        return mtree_max_rates(A, b);
    }
    // Rows merged by hash of their uses, each at its first row's place.
    const auto hash = [&](size_t j) {
        uint64_t h = kFnvOffset;
        for (auto x = row(j); x != row(j) + static_cast<long>(K); ++x) {
            uint64_t w;
            std::memcpy(&w, &*x, sizeof w);
            h = (h ^ w) * kFnvPrime;  // a word at a time: rows are long
            h ^= h >> 29;
        }
        return static_cast<size_t>(h);
    };
    const auto same = [&](size_t x, size_t y) { return std::equal(row(x), row(x) + static_cast<long>(K), row(y)); };
    std::unordered_map<size_t, size_t, decltype(hash), decltype(same)> first(b.size(), hash, same);
    std::vector<double> b2;
    for (size_t j = 0; j < b.size(); ++j) {
        auto [it, fresh] = first.emplace(j, A.size());
        if (fresh) {
            A.emplace_back(row(j), row(j) + static_cast<long>(K));
            b2.push_back(b[j]);
        } else {
            b2[it->second] = std::min(b2[it->second], b[j]);
        }
    }
    return mtree_max_rates(A, b2);
}

// The rate LP of subsets of one list of trees, as rates_of_uses builds
// it, for mtree_select's hundreds of subsets: resources are grouped once
// by their uses across every tree of the list (resources no tree tells
// apart stay alike in every subset), so a subset's merged rows come from
// the groups instead of from every resource.
class RateRows {
  public:
    RateRows(const MTreeGraph& g, const std::vector<std::vector<std::pair<int, int>>>& uses) : g_(g), uses_(uses) {
        std::vector<std::vector<std::pair<int, int>>> of(g.capacity.size());  // (tree, uses) per resource
        for (size_t i = 0; i < uses.size(); ++i)
            for (const auto& [r, c] : uses[i]) of[static_cast<size_t>(r)].push_back({static_cast<int>(i), c});
        std::map<std::vector<std::pair<int, int>>, size_t> index;
        for (size_t r = 0; r < of.size(); ++r) {
            if (of[r].empty()) continue;
            auto [it, fresh] = index.emplace(of[r], groups_.size());
            if (fresh) {
                Group grp;
                grp.trees = of[r];
                // Where the group's first resource (the lowest: uses are sorted) sits in each tree's uses.
                for (const auto& [i, c] : grp.trees) {
                    const auto& u = uses[static_cast<size_t>(i)];
                    grp.at.push_back(static_cast<int>(
                        std::lower_bound(u.begin(), u.end(), std::make_pair(static_cast<int>(r), 0)) - u.begin()));
                }
                grp.cap = g.capacity[r];
                groups_.push_back(std::move(grp));
            } else {
                Group& grp = groups_[it->second];
                grp.cap = std::min(grp.cap, g.capacity[r]);
                ++grp.size;
            }
        }
    }

    std::vector<double> rates(const std::vector<size_t>& set) const {
        const size_t K = set.size();
        std::vector<int> pos(uses_.size(), -1);
        for (size_t k = 0; k < K; ++k) pos[set[k]] = static_cast<int>(k);
        // Each used group at its first resource's place in rates_of_uses's
        // order: the subset's first tree using it, then within that tree.
        std::vector<std::tuple<int, int, size_t>> used;
        size_t rows = 0;
        for (size_t gi = 0; gi < groups_.size(); ++gi) {
            const Group& grp = groups_[gi];
            int first = -1, at = 0;
            for (size_t j = 0; j < grp.trees.size(); ++j) {
                const int p = pos[static_cast<size_t>(grp.trees[j].first)];
                if (p >= 0 && (first < 0 || p < first)) {
                    first = p;
                    at = grp.at[j];
                }
            }
            if (first < 0) continue;
            used.emplace_back(first, at, gi);
            rows += grp.size;
        }
        if (rows <= kMTreeMergeRows) {  // the LP as built, unmerged
            std::vector<const std::vector<std::pair<int, int>>*> of;
            for (size_t i : set) of.push_back(&uses_[i]);
            return rates_of_uses(g_, of);
        }
        std::sort(used.begin(), used.end());
        std::map<std::vector<double>, size_t> first;  // a row's uses -> its index
        std::vector<std::vector<double>> A;
        std::vector<double> b;
        for (const auto& [p, at, gi] : used) {
            std::vector<double> row(K, 0.0);
            for (const auto& [i, c] : groups_[gi].trees) {
                const int k = pos[static_cast<size_t>(i)];
                if (k >= 0) row[static_cast<size_t>(k)] += c;
            }
            auto [it, fresh] = first.emplace(std::move(row), A.size());
            if (fresh) {
                A.push_back(it->first);
                b.push_back(groups_[gi].cap);
            } else {
                b[it->second] = std::min(b[it->second], groups_[gi].cap);
            }
        }
        return mtree_max_rates(A, b);
    }

  private:
    struct Group {
        std::vector<std::pair<int, int>> trees;  // (tree, uses) of each resource in the group
        std::vector<int> at;                     // the first resource's index in each tree's uses
        double cap = 0;                          // the group's least capacity
        size_t size = 1;                         // resources in it
    };
    const MTreeGraph& g_;
    const std::vector<std::vector<std::pair<int, int>>>& uses_;
    std::vector<Group> groups_;
};

}  // namespace

std::vector<double> mtree_rates(const MTreeGraph& g, const std::vector<MTreeTree>& trees) {
    std::vector<std::vector<std::pair<int, int>>> uses;
    for (const MTreeTree& t : trees) uses.push_back(tree_uses(g, t));
    std::vector<const std::vector<std::pair<int, int>>*> of;
    for (const auto& u : uses) of.push_back(&u);
    return rates_of_uses(g, of);
}

std::vector<MTreeTree> mtree_select(const MTreeGraph& g, const std::vector<MTreeTree>& trees, int k) {
    std::vector<std::vector<std::pair<int, int>>> uses;
    for (const MTreeTree& t : trees) uses.push_back(tree_uses(g, t));
    const RateRows lp(g, uses);
    const auto rates_of = [&](const std::vector<size_t>& set) { return lp.rates(set); };
    const auto total_of = [&](const std::vector<size_t>& set) {
        double sum = 0;
        for (double r : rates_of(set)) sum += r;
        return sum;
    };
    const auto better = [](double x, double than) { return x > than * (1 + 1e-9) && x > than; };
    // Candidates: the kMTreeMaxCandidates trees of highest GOST rate.
    std::vector<size_t> cand(trees.size());
    for (size_t i = 0; i < cand.size(); ++i) cand[i] = i;
    std::stable_sort(cand.begin(), cand.end(), [&](size_t a, size_t b) { return trees[a].rate > trees[b].rate; });
    if (cand.size() > static_cast<size_t>(kMTreeMaxCandidates)) cand.resize(static_cast<size_t>(kMTreeMaxCandidates));
    const auto positive = [&](const std::vector<size_t>& set) {
        const std::vector<double> r = rates_of(set);
        double top = 0;
        for (double x : r) top = std::max(top, x);
        std::vector<size_t> kept;
        for (size_t i = 0; i < set.size(); ++i)
            if (r[i] > 1e-9 * top) kept.push_back(set[i]);
        return kept;
    };

    // (a) Backward: the LP over every candidate (the MILP without its K
    // limit), then drop the tree whose loss costs least until k remain.
    std::vector<size_t> back = positive(cand);
    while (static_cast<int>(back.size()) > k) {
        size_t drop = 0;
        double best = -1;
        for (size_t a = 0; a < back.size(); ++a) {
            std::vector<size_t> trial = back;
            trial.erase(trial.begin() + static_cast<long>(a));
            const double sum = total_of(trial);
            if (better(sum, best)) {
                drop = a;
                best = sum;
            }
        }
        back.erase(back.begin() + static_cast<long>(drop));
        back = positive(back);
    }

    // (b) Forward: add the tree that raises the total most, then swap
    // chosen trees for others while the total grows.
    std::vector<size_t> fwd;
    std::vector<char> used(trees.size(), 0);
    double total = 0;
    while (static_cast<int>(fwd.size()) < k) {
        int best = -1;
        double best_total = total;
        for (size_t i : cand) {
            if (used[i]) continue;
            std::vector<size_t> trial = fwd;
            trial.push_back(i);
            const double sum = total_of(trial);
            if (better(sum, best_total)) {
                best = static_cast<int>(i);
                best_total = sum;
            }
        }
        if (best < 0) break;
        used[static_cast<size_t>(best)] = 1;
        fwd.push_back(static_cast<size_t>(best));
        total = best_total;
    }
    for (int pass = 0; pass < 8; ++pass) {
        bool improved = false;
        for (size_t a = 0; a < fwd.size(); ++a)
            for (size_t i : cand) {
                if (used[i]) continue;
                std::vector<size_t> trial = fwd;
                trial[a] = i;
                const double sum = total_of(trial);
                if (better(sum, total)) {
                    used[fwd[a]] = 0;
                    used[i] = 1;
                    fwd = trial;
                    total = sum;
                    improved = true;
                }
            }
        if (!improved) break;
    }
    fwd = positive(fwd);

    std::vector<size_t> chosen = better(total_of(back), total_of(fwd)) ? back : fwd;
    std::sort(chosen.begin(), chosen.end());
    const std::vector<double> rates = rates_of(chosen);
    std::vector<MTreeTree> out;
    for (size_t i = 0; i < chosen.size(); ++i) {
        out.push_back(trees[chosen[i]]);
        out.back().rate = rates[i];
    }
    return out;
}

// --------------------------------------------------------------- chunking

double mtree_pipeline_time(const std::vector<double>& alpha, double beta, double v, double mu) {
    double sum = 0, mx = 0;
    for (double a : alpha) {
        sum += a;
        mx = std::max(mx, a);
    }
    const double l = static_cast<double>(alpha.size());
    return sum + (v / mu - 1) * mx + (l - 1) * beta * mu + beta * v;
}

double mtree_best_chunk(const std::vector<double>& alpha, double beta, double v) {
    double mx = 0;
    for (double a : alpha) mx = std::max(mx, a);
    if (alpha.size() < 2 || !(beta > 0)) return v;
    return std::sqrt(v * mx / ((static_cast<double>(alpha.size()) - 1) * beta));
}

// ----------------------------------------------------------------- params

Status parse_mtree_params(const ParamMap& params, MTreeParams* out) {
    MTreeParams p;
    for (const auto& [key, value] : params) {
        if (key == "k" || key == "chunks") {
            const long hi = key == "k" ? kMTreeMaxK : kMTreeMaxChunks;
            long x = 0;
            if (!parse_int_in(value, 1, hi, &x))
                return Status::invalid("mtree: " + key + " '" + value + "' must be an integer in 1.." +
                                       std::to_string(hi));
            (key == "k" ? p.k : p.chunks) = static_cast<int>(x);
        } else if (key == "bytes") {
            Status st = parse_size(value, &p.bytes);
            if (!st) return Status::invalid("mtree: bytes: " + st.message());
            if (p.bytes == 0) return Status::invalid("mtree: bytes '" + value + "' must be above 0");
        } else if (key == "over") {
            if (value != "hosts" && value != "leaves")
                return Status::invalid("mtree: over '" + value + "' must be hosts or leaves");
            p.over = value == "hosts" ? MTreeOver::Hosts : MTreeOver::Leaves;
        } else if (key == "rho") {
            char* end = nullptr;
            const double x = std::strtod(value.c_str(), &end);
            if (end == value.c_str() || *end != '\0' || !(x > 0 && x <= 1))
                return Status::invalid("mtree: rho '" + value + "' must be a number in (0, 1]");
            p.rho = x;
        } else {
            return Status::invalid("mtree: unknown parameter '" + key + "' (known: bytes, chunks, k, over, rho)");
        }
    }
    *out = p;
    return Status::ok();
}

// ------------------------------------------------------------------ solve

namespace {

// GOST, the selection, then each tree's chunks and blocks for a share of
// `bytes` (mtree.hpp: "Rates", "Fractions", "Pipelining").
Status solve_trees(const MTreeParams& p, double bytes, MTreeSolution* s) {
    const MTreeGraph& g = s->graph;
    MTreeOptions o;
    o.rho = p.rho;
    o.rmin = p.rmin;
    GENX_RETURN_IF_ERROR(mtree_gost(g, o, &s->gost));
    std::vector<MTreeTree> trees = mtree_select(g, s->gost.trees, p.k);
    double total = 0;
    for (const MTreeTree& t : trees) total += t.rate;
    // Chunks per tree (λ*), then the block count and each tree's blocks.
    int N = 1;
    if (!trees.empty()) {
        double need = 0;
        for (MTreeTree& t : trees) {
            const double w = t.rate / total;
            const double v = bytes * w;
            int c = 1;
            if (p.chunks > 0) {
                c = p.chunks;
            } else if (t.height > 0) {
                const std::vector<double> alpha(static_cast<size_t>(2 * t.height), std::max(t.max_latency, 1e-12));
                const double mu = mtree_best_chunk(alpha, 1.0 / t.rate, v);
                const double lambda = mu > 0 ? v / mu : kMTreeMaxChunks;
                c = static_cast<int>(std::clamp(std::round(lambda), 1.0, static_cast<double>(kMTreeMaxChunks)));
            }
            t.chunks = c;
            need = std::max(need, std::ceil(c / w - 1e-9));
        }
        N = static_cast<int>(std::min<double>(kMTreeMaxBlocks, std::max<double>(32.0 * trees.size(), need)));
        // Largest remainder.
        std::vector<std::pair<double, int>> frac;
        int given = 0;
        for (size_t i = 0; i < trees.size(); ++i) {
            const double exact = N * trees[i].rate / total;
            trees[i].nblocks = static_cast<int>(std::floor(exact));
            given += trees[i].nblocks;
            frac.push_back({-(exact - trees[i].nblocks), static_cast<int>(i)});
        }
        std::sort(frac.begin(), frac.end());
        for (size_t j = 0; given < N && j < frac.size(); ++j, ++given) ++trees[static_cast<size_t>(frac[j].second)].nblocks;
        std::vector<MTreeTree> kept;
        int begin = 0;
        for (MTreeTree& t : trees) {
            if (t.nblocks == 0) continue;
            t.block_begin = begin;
            begin += t.nblocks;
            t.chunks = std::min(t.chunks, t.nblocks);
            kept.push_back(std::move(t));
        }
        trees = std::move(kept);
    }
    s->trees = std::move(trees);
    s->nblocks = N;
    for (const MTreeTree& t : s->trees) s->pipeline_steps = std::max(s->pipeline_steps, t.chunks + 2 * t.height - 1);
    return Status::ok();
}

}  // namespace

Status solve_mtree(const TopologyView* view, int nranks, const MTreeParams& p, MTreeSolution* out) {
    MTreeSolution s;
    const bool tree = view != nullptr && !view->empty() && !view->direct;
    const bool leaves = p.over == MTreeOver::Leaves ||
                        (p.over == MTreeOver::Auto && tree && mtree_host_count(view, nranks) > kMTreeMaxHosts);
    std::vector<std::vector<int>> rank_groups;  // the ranks of each host
    if (leaves) {
        GENX_RETURN_IF_ERROR(leaf_layout(view, nranks, "mtree", &s.layout));
        if (s.layout.leaves() > kMTreeMaxHosts)
            return Status::invalid("mtree: " + std::to_string(s.layout.leaves()) +
                                   " leaf switches; genx builds MTREE over at most " + std::to_string(kMTreeMaxHosts));
        s.lanes = s.layout.lanes();
        const TopologyView lanes = lane_view(*view, s.layout, 1.0 / s.lanes);
        GENX_RETURN_IF_ERROR(build_mtree_graph(&lanes, s.layout.leaves(), &s.graph));
        for (const auto& leaf : s.layout.hosts) rank_groups.insert(rank_groups.end(), leaf.begin(), leaf.end());
    } else {
        GENX_RETURN_IF_ERROR(build_mtree_graph(view, nranks, &s.graph));
        const int most = tree || view == nullptr || view->empty() ? kMTreeMaxHosts : kMTreeMaxDirectHosts;
        if (s.graph.n > most)
            return Status::invalid("mtree: " + std::to_string(s.graph.n) + " hosts; genx builds MTREE over at most " +
                                   std::to_string(most) + " hosts" + (view != nullptr && view->direct ? " of a direct network" : "") +
                                   (tree ? " (over=leaves builds it over the leaf switches)" : ""));
        rank_groups = s.graph.ranks;
    }
    const int B = std::max(1, s.lanes);
    GENX_RETURN_IF_ERROR(solve_trees(p, static_cast<double>(p.bytes) / B, &s));
    s.lane_blocks = s.nblocks;
    s.nblocks *= B;
    s.ring_steps = B - 1;
    int maxppn = 1;
    for (const auto& rs : rank_groups) maxppn = std::max(maxppn, static_cast<int>(rs.size()));
    while ((1 << s.intra_steps) < maxppn) ++s.intra_steps;
    s.steps = 2 * s.intra_steps + 2 * s.ring_steps + s.pipeline_steps;
    *out = std::move(s);
    return Status::ok();
}

// --------------------------------------------------------------- schedule

namespace {

enum EvKind : int { kSend = 0, kRecvPartial = 1, kRecvFinal = 2 };

struct Event {
    int step;
    int peer;
    int kind;
    int lo, hi;     // blocks [lo, hi)
    int chunk = 0;  // a tree's chunk: its block count (one message); 0 inside a host
};


void emit_program(const std::vector<Event>& ev, int nsteps, Program* prog) {
    const size_t base = prog->steps.size();
    prog->steps.resize(base + static_cast<size_t>(nsteps));
    size_t k = 0;
    while (k < ev.size()) {
        const int step = ev[k].step;
        Step& st = prog->steps[base + static_cast<size_t>(step)];
        std::map<int, std::vector<int>> slots_of_block;  // partial block -> source slots
        int slot = 0;
        while (k < ev.size() && ev[k].step == step) {
            const int peer = ev[k].peer;
            std::vector<int> send, partial, final_blocks;
            // A chunk travels as one message (Transfer::segment_blocks):
            // the largest chunk among those merged into the transfer.  Both
            // ends merge the same events, so they agree.
            int send_chunk = 0, recv_chunk = 0;
            for (; k < ev.size() && ev[k].step == step && ev[k].peer == peer; ++k) {
                std::vector<int>& dst = ev[k].kind == kSend ? send : ev[k].kind == kRecvPartial ? partial : final_blocks;
                for (int b = ev[k].lo; b < ev[k].hi; ++b) dst.push_back(b);
                int& chunk = ev[k].kind == kSend ? send_chunk : recv_chunk;
                chunk = std::max(chunk, ev[k].chunk);
            }
            if (!send.empty()) {
                std::sort(send.begin(), send.end());
                st.sends.push_back(Transfer{peer, std::move(send), kResult, send_chunk});
            }
            if (partial.empty() && !final_blocks.empty()) {
                std::sort(final_blocks.begin(), final_blocks.end());
                st.recvs.push_back(Transfer{peer, std::move(final_blocks), kResult, recv_chunk});
            } else if (!partial.empty()) {
                for (int b : partial) slots_of_block[b].push_back(slot);
                std::vector<int> all = partial;
                all.insert(all.end(), final_blocks.begin(), final_blocks.end());
                std::sort(all.begin(), all.end());
                st.recvs.push_back(Transfer{peer, std::move(all), slot, recv_chunk});
                if (!final_blocks.empty()) {
                    std::sort(final_blocks.begin(), final_blocks.end());
                    st.ops.push_back(LocalOp{OpKind::Copy, kResult, {slot}, std::move(final_blocks)});
                }
                ++slot;
            }
        }
        // One fused reduce per set of source slots.
        std::map<std::vector<int>, std::vector<int>> by_sources;
        for (auto& [block, srcs] : slots_of_block) by_sources[srcs].push_back(block);
        for (auto& [srcs, blocks] : by_sources) st.ops.push_back(LocalOp{OpKind::Reduce, kResult, srcs, blocks});
    }
}

// What one rank's events need of a solution, built once per plan: each
// rank's host and place in it, and each tree's parents, children, depths
// and chunks.  O(P + trees · hosts).
struct EventSource {
    int J = 0, S = 0, nblocks = 1;
    std::vector<std::vector<int>> host_ranks;  // per host vertex
    std::vector<int> host_of, place;           // per rank: host vertex, index in it (-1: none)
    struct Tree {
        std::vector<int> parent, depth;
        std::vector<std::vector<int>> children;
        int height = 0, chunks = 1, block_begin = 0, nblocks = 0;
    };
    std::vector<Tree> trees;

    EventSource(const MTreeSolution& s, int P)
        : J(s.intra_steps), S(s.pipeline_steps), nblocks(s.nblocks), host_ranks(s.graph.ranks),
          host_of(static_cast<size_t>(P), -1), place(static_cast<size_t>(P), -1) {
        for (size_t v = 0; v < host_ranks.size(); ++v)
            for (size_t l = 0; l < host_ranks[v].size(); ++l) {
                const size_t r = static_cast<size_t>(host_ranks[v][l]);
                host_of[r] = static_cast<int>(v);
                place[r] = static_cast<int>(l);
            }
        for (const MTreeTree& t : s.trees) {
            Tree x;
            x.parent = t.parent;
            x.depth = t.depth;
            x.children.resize(t.parent.size());
            for (size_t v = 0; v < t.parent.size(); ++v)
                if (t.parent[v] >= 0) x.children[static_cast<size_t>(t.parent[v])].push_back(static_cast<int>(v));
            x.height = t.height;
            x.chunks = t.chunks;
            x.block_begin = t.block_begin;
            x.nblocks = t.nblocks;
            trees.push_back(std::move(x));
        }
    }

    // Rank r's events, as the whole plan's would list them for r: inside
    // its host a binomial reduce into the first rank and the broadcast
    // back; between the hosts' first ranks each tree's chunks pipelined up
    // to the root and down again.
    std::vector<Event> of(int r) const {
        std::vector<Event> ev;
        const int v = host_of[static_cast<size_t>(r)], l = place[static_cast<size_t>(r)];
        if (v < 0) return ev;
        const std::vector<int>& rs = host_ranks[static_cast<size_t>(v)];
        const int k = static_cast<int>(rs.size());
        for (int j = 0; j < J; ++j) {
            const int down = J + S + (J - 1 - j);
            if (l % (2 << j) == 0 && l + (1 << j) < k) {
                const int from = rs[static_cast<size_t>(l + (1 << j))];
                ev.push_back({j, from, kRecvPartial, 0, nblocks, 0});
                ev.push_back({down, from, kSend, 0, nblocks, 0});
            } else if (l % (2 << j) == (1 << j)) {
                const int to = rs[static_cast<size_t>(l - (1 << j))];
                ev.push_back({j, to, kSend, 0, nblocks, 0});
                ev.push_back({down, to, kRecvFinal, 0, nblocks, 0});
            }
        }
        if (l != 0) return ev;
        const auto first = [&](int host) { return host_ranks[static_cast<size_t>(host)][0]; };
        for (const Tree& t : trees)
            for (int c = 0; c < t.chunks; ++c) {
                const int lo = t.block_begin + static_cast<int>(static_cast<long>(c) * t.nblocks / t.chunks);
                const int hi = t.block_begin + static_cast<int>(static_cast<long>(c + 1) * t.nblocks / t.chunks);
                const int par = t.parent[static_cast<size_t>(v)];
                if (par >= 0) {
                    const int d = t.depth[static_cast<size_t>(v)];
                    ev.push_back({J + c + t.height - d, first(par), kSend, lo, hi, hi - lo});
                    ev.push_back({J + c + t.height + d - 1, first(par), kRecvFinal, lo, hi, hi - lo});
                }
                for (int w : t.children[static_cast<size_t>(v)]) {
                    const int d = t.depth[static_cast<size_t>(w)];
                    ev.push_back({J + c + t.height - d, first(w), kRecvPartial, lo, hi, hi - lo});
                    ev.push_back({J + c + t.height + d - 1, first(w), kSend, lo, hi, hi - lo});
                }
            }
        return ev;
    }
};

void sort_events(std::vector<Event>* ev) {
    std::sort(ev->begin(), ev->end(), [](const Event& a, const Event& b) {
        return std::tie(a.step, a.peer, a.kind, a.lo) < std::tie(b.step, b.peer, b.kind, b.lo);
    });
}

}  // namespace

Status prepare_mtree(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1) return Status::invalid("mtree: number of ranks must be >= 1, got " + std::to_string(P));
    MTreeParams p;
    GENX_RETURN_IF_ERROR(parse_mtree_params(req.params, &p));
    MTreeSolution s;
    GENX_RETURN_IF_ERROR(solve_mtree(req.topology, P, p, &s));
    RankGenerator gen;
    gen.header.algorithm = "mtree";
    gen.header.nranks = P;
    gen.header.nblocks = s.nblocks;
    ParamMap canon;
    canon["bytes"] = std::to_string(p.bytes);
    canon["k"] = std::to_string(p.k);
    if (p.chunks > 0) canon["chunks"] = std::to_string(p.chunks);
    if (s.lanes > 0) canon["over"] = "leaves";
    if (req.params.count("rho")) canon["rho"] = req.params.at("rho");
    gen.header.params = format_params(canon);
    const int steps = s.steps;
    // Each rank's events are built when its program is (sorted, they
    // are the same whatever order they were listed in: no two share step,
    // peer, kind and first block).
    if (s.lanes == 0) {
        auto source = std::make_shared<const EventSource>(s, P);
        gen.emit = [source, steps](int r, Program* prog) {
            std::vector<Event> ev = source->of(r);
            sort_events(&ev);
            emit_program(ev, steps, prog);
        };
    } else {
        // The trees' pipelines over the lane network (one rank per leaf),
        // inside the lanes' rings (plan/lanes.hpp).
        MTreeSolution lane = s;
        lane.intra_steps = 0;
        lane.nblocks = s.lane_blocks;
        RankGenerator inner;
        inner.header = gen.header;
        inner.header.nranks = s.layout.leaves();
        inner.header.nblocks = s.lane_blocks;
        auto source = std::make_shared<const EventSource>(lane, s.layout.leaves());
        const int S = s.pipeline_steps;
        inner.emit = [source, S](int r, Program* prog) {
            std::vector<Event> ev = source->of(r);
            sort_events(&ev);
            emit_program(ev, S, prog);
        };
        const PlanHeader header = gen.header;
        gen = compose_lanes(s.layout, P, std::move(inner), S);
        gen.header.params = header.params;
    }
    *out = std::move(gen);
    return Status::ok();
}

void mtree_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    if (ctx.topology == nullptr || ctx.topology->empty() || ctx.nranks < 2 ||
        ctx.nranks > kWholePlanMaxRanks)
        return;
    out->push_back("");
}

}  // namespace genx
