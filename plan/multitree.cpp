// MultiTree generator (description and cost in multitree.hpp).
#include "plan/multitree.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>

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

namespace {

// One rank's part of the schedule: what it sends and receives at each step.
struct Event {
    int step;
    bool send;
    int peer;
    int block;
};

}  // namespace

Status prepare_multitree(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("multitree: number of ranks must be >= 1, got " + std::to_string(P));
    if (P > kMultiTreeMaxRanks)
        return Status::invalid("multitree: " + std::to_string(P) + " ranks; genx builds MultiTree for at most " +
                               std::to_string(kMultiTreeMaxRanks));
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
    NetGraph g;
    if (Status s = build_net_graph(req.topology, P, &g); !s) return Status(s.code(), "multitree: " + s.message());
    MultiTreeSchedule sched;
    GENX_RETURN_IF_ERROR(build_multitree(g, &sched, order));
    const int T = sched.steps;
    auto events = std::make_shared<std::vector<std::vector<Event>>>(static_cast<size_t>(P));
    for (const MultiTreeEdge& e : sched.edges) {
        const int rs = T - e.step, ag = T + e.step - 1;
        (*events)[static_cast<size_t>(e.child)].push_back({rs, true, e.parent, e.tree});
        (*events)[static_cast<size_t>(e.parent)].push_back({rs, false, e.child, e.tree});
        (*events)[static_cast<size_t>(e.parent)].push_back({ag, true, e.child, e.tree});
        (*events)[static_cast<size_t>(e.child)].push_back({ag, false, e.parent, e.tree});
    }
    for (auto& ev : *events)
        std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
            return std::tie(a.step, a.send, a.peer, a.block) < std::tie(b.step, b.send, b.peer, b.block);
        });
    RankGenerator gen;
    gen.header.algorithm = "multitree";
    gen.header.params = canon;
    gen.header.nranks = P;
    gen.header.nblocks = P;
    gen.emit = [events, T](int r, Program* prog) {
        const auto& ev = (*events)[static_cast<size_t>(r)];
        const size_t base = prog->steps.size();
        prog->steps.resize(base + 2 * static_cast<size_t>(T));
        size_t k = 0;
        while (k < ev.size()) {
            const int step = ev[k].step;
            Step& st = prog->steps[base + static_cast<size_t>(step)];
            const bool reduce = step < T;
            // Events of this step, sorted by (send, peer, block): receives
            // first, grouped by peer.
            std::map<int, std::vector<int>> slots_of_block;
            int slot = 0;
            for (; k < ev.size() && ev[k].step == step;) {
                const Event& e0 = ev[k];
                Transfer t;
                t.peer = e0.peer;
                t.buffer = (!e0.send && reduce) ? slot : kResult;
                for (; k < ev.size() && ev[k].step == step && ev[k].send == e0.send &&
                       ev[k].peer == e0.peer;
                     ++k) {
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
            for (auto& [srcs, blocks] : by_sources)
                st.ops.push_back(LocalOp{OpKind::Reduce, kResult, srcs, blocks});
        }
    };
    *out = std::move(gen);
    return Status::ok();
}

void multitree_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    // Only where the network's shape is known, and where the construction
    // and the whole-plan pricing stay cheap at communicator creation.
    if (ctx.topology == nullptr || ctx.topology->empty() || ctx.nranks < 2 ||
        ctx.nranks > kWholePlanMaxRanks)
        return;
    out->push_back("");
    // Height order pays on asymmetric networks (meshes, graphs), and gives
    // the same trees as root order on symmetric ones at twice the price.
    out->push_back("order=height");
}

}  // namespace genx
