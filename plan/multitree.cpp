// MultiTree generator (description and cost in multitree.hpp).
#include "plan/multitree.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "plan/lanes.hpp"
#include "plan/symmetry.hpp"

namespace genx {

namespace {

// Breadth-first search from rank p for the nearest rank outside the tree
// over arcs with free units, through forwarders only.  Returns the rank
// and fills `path` (arcs, p first), or -1.  `q` is scratch space for the
// queue (kept by the caller: this runs once per tree and parent tried).
int nearest_child(const NetGraph& g, int p, const std::vector<char>& in_tree,
                  const std::vector<int>& free_units, std::vector<int>* stamp, int mark,
                  std::vector<int>* pred, std::vector<int>* q, std::vector<int>* path) {
    // Most parents tried have used up their own links this step.
    bool any_free = false;
    for (int arc : g.out[static_cast<size_t>(p)]) any_free = any_free || free_units[static_cast<size_t>(arc)] > 0;
    if (!any_free) return -1;
    q->assign(1, p);
    (*stamp)[static_cast<size_t>(p)] = mark;
    for (size_t head = 0; head < q->size(); ++head) {
        const int u = (*q)[head];
        int found = -1;
        for_rotated_out(g, u, p, [&](int arc) {
            if (free_units[static_cast<size_t>(arc)] <= 0) return false;
            const int v = g.arcs[static_cast<size_t>(arc)].to;
            if ((*stamp)[static_cast<size_t>(v)] == mark) return false;
            (*stamp)[static_cast<size_t>(v)] = mark;
            (*pred)[static_cast<size_t>(v)] = arc;
            if (!g.forwards(v)) {
                if (in_tree[static_cast<size_t>(v)]) return false;  // ranks never forward
                found = v;
                return true;
            }
            q->push_back(v);
            return false;
        });
        if (found >= 0) {
            path->clear();
            for (int x = found; x != p;) {
                const int a = (*pred)[static_cast<size_t>(x)];
                path->push_back(a);
                x = g.arcs[static_cast<size_t>(a)].from;
            }
            std::reverse(path->begin(), path->end());
            return found;
        }
    }
    return -1;
}

}  // namespace

namespace {

// Hops from the tree's ranks to the farthest rank outside it, ranks
// forwarding (the network's own distance).
int remaining_height(const NetGraph& g, const std::vector<int>& members, std::vector<int>* dist) {
    dist->assign(static_cast<size_t>(g.nvertices()), -1);
    std::vector<int> q(members.begin(), members.end());
    for (int m : members) (*dist)[static_cast<size_t>(m)] = 0;
    int far = 0;
    for (size_t k = 0; k < q.size(); ++k) {
        const int u = q[k];
        for (int a : g.out[static_cast<size_t>(u)]) {
            const int v = g.arcs[static_cast<size_t>(a)].to;
            if ((*dist)[static_cast<size_t>(v)] >= 0) continue;
            (*dist)[static_cast<size_t>(v)] = (*dist)[static_cast<size_t>(u)] + 1;
            if (!g.forwards(v)) far = std::max(far, (*dist)[static_cast<size_t>(v)]);
            q.push_back(v);
        }
    }
    return far;
}

}  // namespace

Status build_multitree(const NetGraph& g, MultiTreeSchedule* out, MultiTreeOrder tree_order) {
    const int P = g.nranks;
    MultiTreeSchedule s;
    s.nranks = P;
    // in_tree[i][r], order[i] = ranks of T_i in order of addition.
    std::vector<std::vector<char>> in_tree(static_cast<size_t>(P), std::vector<char>(static_cast<size_t>(P), 0));
    std::vector<std::vector<int>> order(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) {
        in_tree[static_cast<size_t>(i)][static_cast<size_t>(i)] = 1;
        order[static_cast<size_t>(i)].push_back(i);
    }
    long missing = static_cast<long>(P) * (P - 1);
    std::vector<int> free_units(g.arcs.size());
    std::vector<int> stamp(static_cast<size_t>(g.nvertices()), 0), pred(static_cast<size_t>(g.nvertices()), -1);
    std::vector<int> path, queue;
    int mark = 0;
    // scan[i]: the first parent of T_i that may still add a child this step
    // (earlier ones found nothing: units only get taken and trees only grow,
    // so they stay unable).  settled[i]: T_i's size at the start of the step.
    std::vector<size_t> scan(static_cast<size_t>(P)), settled(static_cast<size_t>(P));
    while (missing > 0) {
        ++s.steps;
        for (size_t a = 0; a < g.arcs.size(); ++a) free_units[a] = g.arcs[a].units;
        for (int i = 0; i < P; ++i) {
            scan[static_cast<size_t>(i)] = 0;
            settled[static_cast<size_t>(i)] = order[static_cast<size_t>(i)].size();
        }
        // Turn order for this step.
        std::vector<int> turns(static_cast<size_t>(P));
        for (int i = 0; i < P; ++i) turns[static_cast<size_t>(i)] = i;
        if (tree_order == MultiTreeOrder::Height) {
            std::vector<int> height(static_cast<size_t>(P), 0), dist;
            for (int i = 0; i < P; ++i)
                if (static_cast<int>(order[static_cast<size_t>(i)].size()) < P)
                    height[static_cast<size_t>(i)] = remaining_height(g, order[static_cast<size_t>(i)], &dist);
            std::stable_sort(turns.begin(), turns.end(), [&](int a, int b) {
                return height[static_cast<size_t>(a)] > height[static_cast<size_t>(b)];
            });
        }
        bool any_this_step = false;
        for (bool turn = true; turn;) {
            turn = false;
            for (int i : turns) {
                auto& ord = order[static_cast<size_t>(i)];
                if (static_cast<int>(ord.size()) == P) continue;
                auto& k = scan[static_cast<size_t>(i)];
                for (; k < settled[static_cast<size_t>(i)]; ++k) {
                    const int p = ord[k];
                    const int c = nearest_child(g, p, in_tree[static_cast<size_t>(i)], free_units,
                                                &stamp, ++mark, &pred, &queue, &path);
                    if (c < 0) continue;
                    for (int a : path) --free_units[static_cast<size_t>(a)];
                    in_tree[static_cast<size_t>(i)][static_cast<size_t>(c)] = 1;
                    ord.push_back(c);
                    s.edges.push_back({i, p, c, s.steps, path});
                    --missing;
                    turn = any_this_step = true;
                    break;
                }
            }
        }
        if (!any_this_step) {
            for (int i = 0; i < P; ++i)
                for (int r = 0; r < P; ++r)
                    if (!in_tree[static_cast<size_t>(i)][static_cast<size_t>(r)])
                        return Status::invalid("multitree: rank " + std::to_string(r) +
                                               " cannot be reached from rank " + std::to_string(i) +
                                               " over the network graph (is it connected?)");
        }
    }
    *out = std::move(s);
    return Status::ok();
}

int TranslateTree::move(int v, int j, int sign) const {
    const auto [d, dir] = directions[static_cast<size_t>(j)];
    const int n = dims[static_cast<size_t>(d)], st = stride[static_cast<size_t>(d)];
    const int c = (v / st) % n;
    int c2 = c + dir * sign;
    if (c2 < 0) c2 += n;
    if (c2 >= n) c2 -= n;
    return v + (c2 - c) * st;
}

namespace {

// Torus distance of node v from node 0: the sum over dimensions of the
// shorter way round.
int torus_distance(const TranslateTree& t, int v) {
    int d = 0;
    for (size_t k = 0; k < t.dims.size(); ++k) {
        const int c = (v / t.stride[k]) % t.dims[k];
        d += std::min(c, t.dims[k] - c);
    }
    return d;
}

// Kuhn's augmenting path from direction j over its candidate list.
bool augment(int j, const std::vector<std::vector<int>>& cand, std::map<int, int>* owner,
             std::vector<int>* seen_nodes) {
    for (int v : cand[static_cast<size_t>(j)]) {
        if (std::find(seen_nodes->begin(), seen_nodes->end(), v) != seen_nodes->end()) continue;
        seen_nodes->push_back(v);
        auto it = owner->find(v);
        if (it == owner->end() || augment(it->second, cand, owner, seen_nodes)) {
            (*owner)[v] = j;
            return true;
        }
    }
    return false;
}

}  // namespace

Status build_translate_tree(const std::vector<int>& dims, TranslateTree* out) {
    TranslateTree t;
    long long P = 1;
    for (int n : dims) {
        if (n < 1) return Status::invalid("multitree: torus dimension " + std::to_string(n) + " must be >= 1");
        P *= n;
        if (P > (1 << 24)) return Status::invalid("multitree: trees=translate on a torus of more than 2^24 nodes");
    }
    t.dims = dims;
    int stride = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
        t.stride.push_back(stride);
        stride *= dims[d];
        if (dims[d] >= 2) t.directions.emplace_back(static_cast<int>(d), 1);
        if (dims[d] >= 3) t.directions.emplace_back(static_cast<int>(d), -1);
    }
    const int D = static_cast<int>(t.directions.size());
    t.step.assign(static_cast<size_t>(P), -1);
    t.via.assign(static_cast<size_t>(P), -1);
    t.step[0] = 0;
    // Per direction: candidates (distance, node), nearest first; a node
    // enters direction j's heap when its neighbour against j is reached,
    // and is dropped lazily once reached.
    using Cand = std::pair<int, int>;
    std::vector<std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>>> heap(static_cast<size_t>(D));
    const auto offer = [&](int u) {
        for (int j = 0; j < D; ++j) {
            const int v = t.move(u, j, 1);
            if (t.step[static_cast<size_t>(v)] < 0) heap[static_cast<size_t>(j)].emplace(torus_distance(t, v), v);
        }
    };
    offer(0);
    long long reached = 1;
    std::vector<std::vector<int>> cand(static_cast<size_t>(D));
    std::vector<Cand> keep;
    std::vector<int> seen, joined;
    while (reached < P) {
        ++t.steps;
        // Each direction's D best candidates suffice for a maximum matching
        // (a direction with D of them always finds one the others left).
        for (int j = 0; j < D; ++j) {
            auto& h = heap[static_cast<size_t>(j)];
            auto& c = cand[static_cast<size_t>(j)];
            c.clear();
            keep.clear();
            while (!h.empty() && static_cast<int>(c.size()) < D) {
                const Cand top = h.top();
                h.pop();
                if (t.step[static_cast<size_t>(top.second)] >= 0) continue;
                c.push_back(top.second);
                keep.push_back(top);
            }
            for (const Cand& k : keep) h.push(k);
        }
        std::map<int, int> owner;  // node -> direction
        for (int j = 0; j < D; ++j) {
            seen.clear();
            augment(j, cand, &owner, &seen);
        }
        if (owner.empty())
            return Status::internal("multitree: trees=translate found no edge in step " + std::to_string(t.steps));
        joined.clear();
        for (const auto& [v, j] : owner) {
            t.step[static_cast<size_t>(v)] = t.steps;
            t.via[static_cast<size_t>(v)] = j;
            joined.push_back(v);
        }
        reached += static_cast<long long>(owner.size());
        for (int v : joined) offer(v);  // usable from the next step on
    }
    *out = std::move(t);
    return Status::ok();
}

MultiTreeSchedule expand_translates(const TranslateTree& t0, const NetGraph& g) {
    MultiTreeSchedule s;
    const int P = t0.nnodes();
    s.nranks = P;
    s.steps = t0.steps;
    const RankGroup grp(t0.dims);
    // Arcs by (from, to): a grid preset has one link per neighbouring pair.
    std::map<std::pair<int, int>, int> arc_of;
    for (size_t a = 0; a < g.arcs.size(); ++a) arc_of.emplace(std::make_pair(g.arcs[a].from, g.arcs[a].to), static_cast<int>(a));
    // T0's edges in step order, then every translate of each.
    std::vector<int> order(static_cast<size_t>(P));
    for (int v = 0; v < P; ++v) order[static_cast<size_t>(v)] = v;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return t0.step[static_cast<size_t>(a)] < t0.step[static_cast<size_t>(b)];
    });
    for (int v : order) {
        if (v == 0) continue;
        const int u = t0.move(v, t0.via[static_cast<size_t>(v)], -1);
        for (int i = 0; i < P; ++i) {
            const int p = grp.add(u, i), c = grp.add(v, i);
            auto it = arc_of.find({p, c});
            s.edges.push_back({i, p, c, t0.step[static_cast<size_t>(v)],
                               it == arc_of.end() ? std::vector<int>{} : std::vector<int>{it->second}});
        }
    }
    return s;
}

namespace {

// One rank's part of the schedule: what it sends and receives at each step.
// Within a step, transfers go in `key` order (receives first): the peer
// for Algorithm 1, the link direction for translates (so that translated
// ranks list their transfers alike, as the declared symmetry requires).
struct Event {
    int step;
    bool send;
    int key;
    int peer;
    int block;
};

// Appends the 2·T steps of one rank's sorted events to `prog`: one transfer
// per peer and direction, reduce-scatter receives in slot k for the k-th
// peer, each step's received partials folded by one reduce per set of
// source slots.
void emit_events(const std::vector<Event>& ev, int T, Program* prog) {
    const size_t base = prog->steps.size();
    prog->steps.resize(base + 2 * static_cast<size_t>(T));
    size_t k = 0;
    while (k < ev.size()) {
        const int step = ev[k].step;
        Step& st = prog->steps[base + static_cast<size_t>(step)];
        const bool reduce = step < T;
        std::map<int, std::vector<int>> slots_of_block;
        int slot = 0;
        for (; k < ev.size() && ev[k].step == step;) {
            const Event& e0 = ev[k];
            Transfer t;
            t.peer = e0.peer;
            t.buffer = (!e0.send && reduce) ? slot : kResult;
            for (; k < ev.size() && ev[k].step == step && ev[k].send == e0.send && ev[k].peer == e0.peer; ++k) {
                t.blocks.push_back(ev[k].block);
                if (!e0.send && reduce) slots_of_block[ev[k].block].push_back(slot);
            }
            if (e0.send) {
                st.sends.push_back(std::move(t));
            } else {
                st.recvs.push_back(std::move(t));
                if (reduce) ++slot;
            }
        }
        // Fold what arrived: one fused reduce per set of source slots.
        std::map<std::vector<int>, std::vector<int>> by_sources;
        for (auto& [block, srcs] : slots_of_block) by_sources[srcs].push_back(block);
        for (auto& [srcs, blocks] : by_sources) st.ops.push_back(LocalOp{OpKind::Reduce, kResult, srcs, blocks});
    }
}

void sort_events(std::vector<Event>* ev) {
    std::sort(ev->begin(), ev->end(), [](const Event& a, const Event& b) {
        return std::tie(a.step, a.send, a.key, a.peer, a.block) < std::tie(b.step, b.send, b.key, b.peer, b.block);
    });
}

// Where the ranks of a torus sit: grid index i holds rank rank_at[i].
struct TorusLayout {
    std::vector<int> dims;
    std::vector<int> rank_at, index_of;
    bool in_order = true;
};

// The torus under `v` for P ranks, or why trees=translate cannot run there.
std::string torus_layout(const TopologyView* v, int P, TorusLayout* out) {
    if (v == nullptr || v->empty()) return "no topology is known";
    if (v->grid.empty()) return v->direct ? "the topology is a graph, not a torus" : "the topology is a switch tree";
    if (!v->grid_wrap) return "the topology is a mesh (no wrap-around links)";
    long long cells = 1;
    for (int d : v->grid) cells *= d;
    if (static_cast<long long>(v->grid_host.size()) != cells || cells != P)
        return "the torus holds " + std::to_string(cells) + " hosts for " + std::to_string(P) + " ranks";
    out->dims = v->grid;
    out->rank_at.assign(static_cast<size_t>(P), -1);
    out->index_of.assign(static_cast<size_t>(P), -1);
    for (int i = 0; i < P; ++i) {
        const int h = v->grid_host[static_cast<size_t>(i)];
        if (h < 0 || h >= static_cast<int>(v->nodes.size()) || v->nodes[static_cast<size_t>(h)].ranks.size() != 1)
            return "every host of the torus must hold exactly one rank";
        const int r = v->nodes[static_cast<size_t>(h)].ranks[0];
        if (r < 0 || r >= P || out->index_of[static_cast<size_t>(r)] >= 0)
            return "rank " + std::to_string(r) + " is not on exactly one host of the torus";
        out->rank_at[static_cast<size_t>(i)] = r;
        out->index_of[static_cast<size_t>(r)] = i;
        out->in_order = out->in_order && r == i;
    }
    return "";
}

// trees=translate: every rank's program read off T0 (multitree.hpp).
Status prepare_translate(int P, const TopologyView* v, RankGenerator* out) {
    auto lay = std::make_shared<TorusLayout>();
    const std::string bad = torus_layout(v, P, lay.get());
    if (!bad.empty())
        return Status::invalid("multitree: trees=translate needs a torus (torus:AxB[xC]) with one rank per host: " + bad);
    auto t0 = std::make_shared<TranslateTree>();
    GENX_RETURN_IF_ERROR(build_translate_tree(lay->dims, t0.get()));
    RankGenerator gen;
    gen.header.algorithm = "multitree";
    gen.header.params = "trees=translate";
    gen.header.nranks = P;
    gen.header.nblocks = P;
    if (lay->in_order) {
        for (int d : lay->dims)
            if (d > 1) gen.header.symmetry.push_back(d);
        if (gen.header.symmetry.empty()) gen.header.symmetry = {P};
    }
    gen.header.representatives = {0};
    gen.emit = [lay, t0](int r, Program* prog) {
        const TranslateTree& t = *t0;
        const int T = t.steps, D = static_cast<int>(t.directions.size());
        const RankGroup grp(t.dims);
        const int g = lay->index_of[static_cast<size_t>(r)];
        std::vector<int> plus(static_cast<size_t>(D)), minus(static_cast<size_t>(D));
        for (int j = 0; j < D; ++j) {
            plus[static_cast<size_t>(j)] = lay->rank_at[static_cast<size_t>(t.move(g, j, 1))];
            minus[static_cast<size_t>(j)] = lay->rank_at[static_cast<size_t>(t.move(g, j, -1))];
        }
        std::vector<Event> ev;
        ev.reserve(4 * static_cast<size_t>(t.nnodes()));
        for (int v = 1; v < t.nnodes(); ++v) {
            const int j = t.via[static_cast<size_t>(v)], s = t.step[static_cast<size_t>(v)];
            const int u = t.move(v, j, -1);
            // g is v's image in tree g - v, and u's in tree g - u.
            const int child_block = lay->rank_at[static_cast<size_t>(grp.sub(g, v))];
            const int parent_block = lay->rank_at[static_cast<size_t>(grp.sub(g, u))];
            const int rs = T - s, ag = T + s - 1;
            ev.push_back({rs, true, j, minus[static_cast<size_t>(j)], child_block});
            ev.push_back({rs, false, j, plus[static_cast<size_t>(j)], parent_block});
            ev.push_back({ag, true, j, plus[static_cast<size_t>(j)], parent_block});
            ev.push_back({ag, false, j, minus[static_cast<size_t>(j)], child_block});
        }
        sort_events(&ev);
        emit_events(ev, T, prog);
    };
    *out = std::move(gen);
    return Status::ok();
}

}  // namespace

namespace {
Status prepare_turns(const TopologyView* view, int P, MultiTreeOrder order, const std::string& canon,
                     RankGenerator* out, int* steps = nullptr);
Status prepare_over_leaves(const GenRequest& req, MultiTreeOrder order, const std::string& canon,
                           RankGenerator* out);
}  // namespace

Status prepare_multitree(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("multitree: number of ranks must be >= 1, got " + std::to_string(P));
    MultiTreeOrder order = MultiTreeOrder::Root;
    std::string canon;
    auto it = req.params.find("order");
    if (it != req.params.end()) {
        if (it->second == "height")
            order = MultiTreeOrder::Height;
        else if (it->second != "root")
            return Status::invalid("multitree: order=" + it->second + ": expected root or height");
        if (order == MultiTreeOrder::Height) canon = "order=height";
    }
    // trees: turns (Algorithm 1) up to kMultiTreeMaxRanks, translates of
    // one tree above it where the ranks sit on a torus.
    bool translate = false;
    if (auto tr = req.params.find("trees"); tr != req.params.end()) {
        if (tr->second != "turns" && tr->second != "translate")
            return Status::invalid("multitree: trees=" + tr->second + ": expected turns or translate");
        translate = tr->second == "translate";
        if (translate && it != req.params.end())
            return Status::invalid("multitree: order=" + it->second +
                                   " applies to trees=turns only (translates of one tree take no turns)");
    } else if (P > kMultiTreeMaxRanks && it == req.params.end()) {
        TorusLayout probe;
        translate = torus_layout(req.topology, P, &probe).empty();
    }
    if (translate) return prepare_translate(P, req.topology, out);
    // over=leaves: Algorithm 1 over the leaf switches, one lane per host
    // position (plan/lanes.hpp); the default beyond kMultiTreeMaxRanks on
    // a switch tree.
    bool leaves = false;
    if (auto ov = req.params.find("over"); ov != req.params.end()) {
        if (ov->second != "hosts" && ov->second != "leaves")
            return Status::invalid("multitree: over=" + ov->second + ": expected hosts or leaves");
        leaves = ov->second == "leaves";
    } else {
        leaves = P > kMultiTreeMaxRanks && req.topology != nullptr && !req.topology->empty() &&
                 !req.topology->direct;
    }
    if (leaves) return prepare_over_leaves(req, order, canon, out);
    if (P > kMultiTreeMaxRanks)
        return Status::invalid("multitree: " + std::to_string(P) + " ranks; genx builds Algorithm 1 (trees=turns) for at most " +
                               std::to_string(kMultiTreeMaxRanks) +
                               " ranks, over=leaves on a switch tree, and trees=translate on a torus (torus:AxB[xC], one rank per host) beyond");
    return prepare_turns(req.topology, P, order, canon, out);
}

namespace {

Status prepare_turns(const TopologyView* view, int P, MultiTreeOrder order, const std::string& canon,
                     RankGenerator* out, int* steps) {
    NetGraph g;
    if (Status s = build_net_graph(view, P, &g); !s) return Status(s.code(), "multitree: " + s.message());
    MultiTreeSchedule sched;
    GENX_RETURN_IF_ERROR(build_multitree(g, &sched, order));
    const int T = sched.steps;
    auto events = std::make_shared<std::vector<std::vector<Event>>>(static_cast<size_t>(P));
    for (const MultiTreeEdge& e : sched.edges) {
        const int rs = T - e.step, ag = T + e.step - 1;
        (*events)[static_cast<size_t>(e.child)].push_back({rs, true, e.parent, e.parent, e.tree});
        (*events)[static_cast<size_t>(e.parent)].push_back({rs, false, e.child, e.child, e.tree});
        (*events)[static_cast<size_t>(e.parent)].push_back({ag, true, e.child, e.child, e.tree});
        (*events)[static_cast<size_t>(e.child)].push_back({ag, false, e.parent, e.parent, e.tree});
    }
    for (auto& ev : *events) sort_events(&ev);
    RankGenerator gen;
    gen.header.algorithm = "multitree";
    gen.header.params = canon;
    gen.header.nranks = P;
    gen.header.nblocks = P;
    gen.emit = [events, T](int r, Program* prog) { emit_events((*events)[static_cast<size_t>(r)], T, prog); };
    *out = std::move(gen);
    if (steps != nullptr) *steps = 2 * T;
    return Status::ok();
}

Status prepare_over_leaves(const GenRequest& req, MultiTreeOrder order, const std::string& canon,
                           RankGenerator* out) {
    LeafLayout lay;
    GENX_RETURN_IF_ERROR(leaf_layout(req.topology, req.nranks, "multitree", &lay));
    if (lay.leaves() > kMultiTreeMaxRanks)
        return Status::invalid("multitree: " + std::to_string(lay.leaves()) +
                               " leaf switches; genx builds Algorithm 1 over at most " +
                               std::to_string(kMultiTreeMaxRanks));
    const TopologyView lanes = lane_view(*req.topology, lay);
    RankGenerator inner;
    int steps = 0;
    GENX_RETURN_IF_ERROR(prepare_turns(&lanes, lay.leaves(), order, canon, &inner, &steps));
    *out = compose_lanes(lay, req.nranks, std::move(inner), steps);
    out->header.params = canon.empty() ? "over=leaves" : canon + ",over=leaves";  // keys sorted
    return Status::ok();
}

}  // namespace

void multitree_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    if (ctx.topology == nullptr || ctx.topology->empty() || ctx.nranks < 2) return;
    // Algorithm 1 only where the construction and the whole-plan pricing
    // stay cheap at communicator creation.
    if (ctx.nranks <= kWholePlanMaxRanks) {
        out->push_back("");
        // Height order pays on asymmetric networks (meshes, graphs), and gives
        // the same trees as root order on symmetric ones at twice the price.
        out->push_back("order=height");
    }
    // Translates on a torus at any size: one program per rank, and with
    // the ranks in grid order one program prices the plan (its symmetry).
    TorusLayout lay;
    if (torus_layout(ctx.topology, ctx.nranks, &lay).empty()) out->push_back("trees=translate");
}

}  // namespace genx
