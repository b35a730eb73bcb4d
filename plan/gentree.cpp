// GenTree generator (description and cost in gentree.hpp).
#include "plan/gentree.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <memory>
#include <utility>

#include "common/hash.hpp"
#include "plan/hcps.hpp"
#include "plan/symmetry.hpp"

namespace genx {

namespace {

// One node of GenTree's tree: a switch, a multi-rank host, or a rank.
struct GNode {
    int view_node = -1;           // -1 for a rank leaf under a multi-rank host
    int rank = -1;                // leaf: its rank
    int parent = -1;
    int child_index = -1;         // position among the parent's children
    int link_class = -1;          // class of the edge up to the parent
    std::vector<int> children;    // gnode indices (only children holding ranks)
    std::vector<int> servers;     // ranks below, children's servers concatenated
    std::vector<int> factors;     // chosen sub-plan (empty: fewer than 2 children)
    bool ring = false;            // ring over the children instead of the factors
    // Data rearrangement (Algorithm 2 lines 8-16): when non-empty, the
    // placement this node's sub-plan produced, before its blocks were moved
    // onto its first `owner`-holding servers for the parent's sub-plan.
    std::vector<int> pre_owner;
    std::vector<int> owner;       // internal: owner rank of each block (after any rearrangement)
    std::vector<int> owner_child; // internal: child index of the owner its sub-plan delivers to
    // A datacenter's local side (build_tree): the children of a switch that
    // do not reach it over a cross-DC link, grouped under a node of their own.
    bool local_side = false;
    int moved_onto = 0;           // rearrange=: the servers its blocks moved onto (0: none)
    bool is_leaf() const { return rank >= 0; }
};

struct GTree {
    int nblocks = 0;              // blocks per chunk: block_count(), set before build()
    std::vector<GNode> nodes;     // nodes[0] is the root
    std::vector<int> leaf_of_rank;
    std::vector<int> order;       // internal nodes, children before parents
    // Global round numbering (pipelined plans, number_rounds()): the nodes
    // of one height share rounds, so that a round index means the same
    // moment on every rank.  round0[g]: g's first sub-plan round;
    // move_round[g]: the round in which g's children's blocks are
    // rearranged (before g's sub-plan; -1 when no node of g's height has a
    // rearranged child); total_rounds: the reduce-scatter's length.
    std::vector<int> round0, move_round;
    int total_rounds = 0;
    // The declared rank symmetry (tree_symmetry), when there is one: peers
    // are then emitted in order of their offset in this group.
    bool symmetric = false;
    RankGroup group;

    int holder(int g, int b) const {
        const GNode& n = nodes[static_cast<size_t>(g)];
        return n.is_leaf() ? n.rank : n.owner[static_cast<size_t>(b)];
    }
};

// take_by_senders' work, children² × blocks, beyond which a node's
// sub-trees take their blocks in ascending order.
constexpr long long kGroupedPlacementWork = 1LL << 24;

bool cross_dc_class(const TopologyView& view, int cls) {
    return cls >= 0 && static_cast<size_t>(cls) < view.link_classes.size() &&
           view.link_classes[static_cast<size_t>(cls)].cross_dc;
}

// A switch that joins its own datacenter's sub-trees and, over a cross-DC
// link, another datacenter (the emulated 2dc: a-root holds a-leaf0,
// a-leaf1 and b-root) would run one sub-plan over all of them, and every
// local sub-tree's partial sums would cross the slow link separately.  Its
// local children are grouped under a node of their own (the datacenter's
// local side, up link: the cross-DC class), so that the datacenter reduces
// first and the cross-DC link carries one partial per block, as between
// two datacenter roots.
void group_local_side(const TopologyView& view, int g, GTree* t) {
    std::vector<int> local, remote;
    for (int ch : t->nodes[static_cast<size_t>(g)].children)
        (cross_dc_class(view, t->nodes[static_cast<size_t>(ch)].link_class) ? remote : local)
            .push_back(ch);
    if (remote.empty() || local.size() < 2) return;
    const int v = static_cast<int>(t->nodes.size());
    t->nodes.emplace_back();
    GNode& side = t->nodes.back();
    side.view_node = t->nodes[static_cast<size_t>(g)].view_node;
    side.parent = g;
    side.link_class = t->nodes[static_cast<size_t>(remote[0])].link_class;
    side.local_side = true;
    for (int ch : local) {
        GNode& c = t->nodes[static_cast<size_t>(ch)];
        c.parent = v;
        c.child_index = static_cast<int>(t->nodes[static_cast<size_t>(v)].children.size());
        t->nodes[static_cast<size_t>(v)].children.push_back(ch);
        const std::vector<int>& cs = c.servers;
        std::vector<int>& vs = t->nodes[static_cast<size_t>(v)].servers;
        vs.insert(vs.end(), cs.begin(), cs.end());
    }
    t->order.push_back(v);
    GNode& a = t->nodes[static_cast<size_t>(g)];
    a.children.clear();
    a.servers.clear();
    std::vector<int> kids = {v};
    kids.insert(kids.end(), remote.begin(), remote.end());
    for (int ch : kids) {
        t->nodes[static_cast<size_t>(ch)].child_index = static_cast<int>(a.children.size());
        a.children.push_back(ch);
        const std::vector<int>& cs = t->nodes[static_cast<size_t>(ch)].servers;
        a.servers.insert(a.servers.end(), cs.begin(), cs.end());
    }
}

// Builds the tree from the view (ranks where the view places them).
void build_tree(const TopologyView& view, GTree* t) {
    const int P = view.nranks();
    t->leaf_of_rank.assign(static_cast<size_t>(P), -1);
    // Recursive descent with an explicit stack would do; depth is small.
    std::function<int(int, int)> add = [&](int vn, int parent) -> int {
        const TopoNode& tn = view.nodes[static_cast<size_t>(vn)];
        const int cls = tn.up_class;
        if (tn.is_host()) {
            if (tn.ranks.empty()) return -1;
            const int g = static_cast<int>(t->nodes.size());
            t->nodes.emplace_back();
            t->nodes.back().view_node = vn;
            t->nodes.back().parent = parent;
            t->nodes.back().link_class = cls;
            if (tn.ranks.size() == 1) {
                t->nodes.back().rank = tn.ranks[0];
                t->nodes.back().servers = {tn.ranks[0]};
                t->leaf_of_rank[static_cast<size_t>(tn.ranks[0])] = g;
                return g;
            }
            const int intra = view.intra_class >= 0 ? view.intra_class : cls;
            for (int r : tn.ranks) {
                const int lg = static_cast<int>(t->nodes.size());
                t->nodes.emplace_back();
                GNode& leaf = t->nodes.back();
                leaf.rank = r;
                leaf.parent = g;
                leaf.link_class = intra;
                leaf.servers = {r};
                t->leaf_of_rank[static_cast<size_t>(r)] = lg;
                GNode& host = t->nodes[static_cast<size_t>(g)];
                leaf.child_index = static_cast<int>(host.children.size());
                host.children.push_back(lg);
                host.servers.push_back(r);
            }
            t->order.push_back(g);
            return g;
        }
        const int g = static_cast<int>(t->nodes.size());
        t->nodes.emplace_back();
        t->nodes.back().view_node = vn;
        t->nodes.back().parent = parent;
        t->nodes.back().link_class = cls;
        for (int ch : tn.children) {
            const int cg = add(ch, g);
            if (cg < 0) continue;
            GNode& sw = t->nodes[static_cast<size_t>(g)];
            t->nodes[static_cast<size_t>(cg)].child_index = static_cast<int>(sw.children.size());
            sw.children.push_back(cg);
            const std::vector<int>& cs = t->nodes[static_cast<size_t>(cg)].servers;
            sw.servers.insert(sw.servers.end(), cs.begin(), cs.end());
        }
        if (t->nodes[static_cast<size_t>(g)].servers.empty()) {
            t->nodes.pop_back();
            return -1;
        }
        group_local_side(view, g, t);
        t->order.push_back(g);
        return g;
    };
    add(0, -1);
}

// Pass 1 for sub-tree child j of a node whose children differ in size:
// each server of j takes its quota from its own untaken blocks grouped by
// who holds them in the other children (its reduce-scatter senders here),
// the largest group first, so that it receives from as few peers as it can
// (on 4 + 3 hosts the ascending greedy gave some servers two senders across
// the root and a fan-in of 5).  Groups are keyed by a hash of the holders;
// a collision only merges two groups.
template <typename Take>
void take_by_senders(const GTree& t, const GNode& a, int j, const std::vector<int>& load,
                     const std::vector<int>& quota, Take&& take) {
    const GNode& ch = t.nodes[static_cast<size_t>(a.children[static_cast<size_t>(j)])];
    const int N = t.nblocks;
    // Per server: (senders' key, block) of its untaken blocks, ascending.
    std::map<int, std::vector<std::pair<uint64_t, int>>> mine;
    for (int b = 0; b < N; ++b) {
        if (a.owner[static_cast<size_t>(b)] >= 0) continue;
        FnvHasher f;
        for (size_t k = 0; k < a.children.size(); ++k)
            if (static_cast<int>(k) != j) f.i64(t.holder(a.children[k], b));
        mine[ch.owner[static_cast<size_t>(b)]].emplace_back(f.h, b);
    }
    for (auto& kv : mine) {
        const int s = kv.first;
        std::unordered_map<uint64_t, std::vector<int>> groups;
        std::vector<uint64_t> order;  // keys by first block
        for (const auto& kb : kv.second) {
            std::vector<int>& g = groups[kb.first];
            if (g.empty()) order.push_back(kb.first);
            g.push_back(kb.second);
        }
        std::stable_sort(order.begin(), order.end(), [&](uint64_t x, uint64_t y) {
            return groups[x].size() > groups[y].size();
        });
        for (uint64_t key : order)
            for (int b : groups[key]) {
                if (load[static_cast<size_t>(s)] >= quota[static_cast<size_t>(s)]) break;
                take(j, s, b);
            }
    }
}

// Algorithm 1 with the completing pass (gentree.hpp): owner of every block
// at node g, its children's placements being known.
void place(GTree* t, int g, std::vector<int>& load, std::vector<int>& quota) {
    GNode& a = t->nodes[static_cast<size_t>(g)];
    const int N = t->nblocks;
    a.owner.assign(static_cast<size_t>(N), -1);
    a.owner_child.assign(static_cast<size_t>(N), -1);
    // Quotas per child first (N/c each), then per server within the child:
    // a child's uplink then carries the same share of blocks each way
    // whatever its number of servers (gentree.hpp, "Placement").
    const int c = static_cast<int>(a.children.size());
    std::vector<int> share(static_cast<size_t>(c)), taken(static_cast<size_t>(c), 0);
    for (int j = 0, k = 0; j < c; ++j) {
        share[static_cast<size_t>(j)] = N / c + (j < N % c ? 1 : 0);
        const int sh = share[static_cast<size_t>(j)];
        const int m = static_cast<int>(t->nodes[static_cast<size_t>(a.children[static_cast<size_t>(j)])].servers.size());
        for (int i = 0; i < m; ++i, ++k) {
            const size_t s = static_cast<size_t>(a.servers[static_cast<size_t>(k)]);
            load[s] = 0;
            quota[s] = sh / m + (i < sh % m ? 1 : 0);
        }
    }
    auto take = [&](int j, int s, int b) {
        a.owner[static_cast<size_t>(b)] = s;
        a.owner_child[static_cast<size_t>(b)] = j;
        ++load[static_cast<size_t>(s)];
        ++taken[static_cast<size_t>(j)];
    };
    // Pass 1.  A server's candidates are its own blocks in block order, and
    // the servers of one child hold disjoint blocks, so one ascending pass
    // over the blocks per child takes what the server-by-server greedy
    // takes.  Sub-trees go first, rank leaves (which hold every block) after
    // them, so that a leaf does not take the blocks a sub-tree's servers
    // hold.  A leaf's untaken blocks are found from a cursor past the taken
    // prefix, which only grows.
    bool unequal = false;
    for (int ch : a.children)
        unequal = unequal || t->nodes[static_cast<size_t>(ch)].servers.size() !=
                                 t->nodes[static_cast<size_t>(a.children[0])].servers.size();
    int first_untaken = 0;
    for (int leaves = 0; leaves < 2; ++leaves)
        for (int j = 0; j < c; ++j) {
            const GNode& ch = t->nodes[static_cast<size_t>(a.children[static_cast<size_t>(j)])];
            if (ch.is_leaf() != (leaves == 1)) continue;
            if (ch.is_leaf()) {
                const int s = ch.rank;
                for (int b = first_untaken; b < N && load[static_cast<size_t>(s)] < quota[static_cast<size_t>(s)]; ++b)
                    if (a.owner[static_cast<size_t>(b)] < 0) take(j, s, b);
                while (first_untaken < N && a.owner[static_cast<size_t>(first_untaken)] >= 0) ++first_untaken;
                continue;
            }
            if (unequal && static_cast<long long>(c) * c * N <= kGroupedPlacementWork) {
                take_by_senders(*t, a, j, load, quota, take);
                continue;
            }
            for (int b = 0; b < N; ++b) {
                const int s = ch.owner[static_cast<size_t>(b)];
                if (a.owner[static_cast<size_t>(b)] < 0 &&
                    load[static_cast<size_t>(s)] < quota[static_cast<size_t>(s)])
                    take(j, s, b);
            }
        }
    // Pass 2: each block left goes to the holder whose child is furthest
    // below its share, then whose server is furthest below its quota.
    for (int b = 0; b < N; ++b) {
        if (a.owner[static_cast<size_t>(b)] >= 0) continue;
        int best = -1, best_j = -1;
        for (int j = 0; j < c; ++j) {
            const int h = t->holder(a.children[static_cast<size_t>(j)], b);
            if (best >= 0) {
                const int dj = taken[static_cast<size_t>(j)] - share[static_cast<size_t>(j)];
                const int db = taken[static_cast<size_t>(best_j)] - share[static_cast<size_t>(best_j)];
                if (dj > db) continue;
                if (dj == db && load[static_cast<size_t>(h)] - quota[static_cast<size_t>(h)] >=
                                    load[static_cast<size_t>(best)] - quota[static_cast<size_t>(best)])
                    continue;
            }
            best = h;
            best_j = j;
        }
        take(best_j, best, b);
    }
}

int digit(int j, const std::vector<int>& factors, int i) {
    for (int k = 0; k < i; ++k) j /= factors[static_cast<size_t>(k)];
    return j % factors[static_cast<size_t>(i)];
}

int with_digit(int j, const std::vector<int>& factors, int i, int d) {
    int w = 1;
    for (int k = 0; k < i; ++k) w *= factors[static_cast<size_t>(k)];
    return j + (d - digit(j, factors, i)) * w;
}

bool same_low_digits(int a, int b, const std::vector<int>& factors, int i) {
    int w = 1;
    for (int k = 0; k < i; ++k) w *= factors[static_cast<size_t>(k)];
    return a % w == b % w;
}

int subplan_rounds(const GNode& a) {
    if (a.factors.empty()) return 0;
    return a.ring ? static_cast<int>(a.children.size()) - 1 : static_cast<int>(a.factors.size());
}

// Heights (a rank leaf 0, a node one above its highest child) and the
// global rounds of GTree::round0 / move_round / total_rounds.
void number_rounds(GTree* t) {
    const size_t n = t->nodes.size();
    std::vector<int> height(n, 0);
    int top = 0;
    for (int g : t->order) {
        int h = 0;
        for (int ch : t->nodes[static_cast<size_t>(g)].children)
            h = std::max(h, height[static_cast<size_t>(ch)]);
        height[static_cast<size_t>(g)] = h + 1;
        top = std::max(top, h + 1);
    }
    std::vector<int> width(static_cast<size_t>(top) + 1, 0), moves(static_cast<size_t>(top) + 1, 0);
    for (int g : t->order) {
        const GNode& a = t->nodes[static_cast<size_t>(g)];
        const size_t h = static_cast<size_t>(height[static_cast<size_t>(g)]);
        width[h] = std::max(width[h], subplan_rounds(a));
        for (int ch : a.children)
            if (!t->nodes[static_cast<size_t>(ch)].pre_owner.empty()) moves[h] = 1;
    }
    std::vector<int> start(static_cast<size_t>(top) + 2, 0);
    for (size_t h = 1; h <= static_cast<size_t>(top); ++h)
        start[h + 1] = start[h] + moves[h] + width[h];
    t->round0.assign(n, -1);
    t->move_round.assign(n, -1);
    for (int g : t->order) {
        const size_t h = static_cast<size_t>(height[static_cast<size_t>(g)]);
        t->move_round[static_cast<size_t>(g)] = moves[h] ? start[h] : -1;
        t->round0[static_cast<size_t>(g)] = start[h] + moves[h];
    }
    t->total_rounds = start[static_cast<size_t>(top) + 1];
}

// One round of a rank: blocks to send to and receive from each peer.
struct RoundIo {
    // By peer, ascending; each peer's blocks ascending.
    using Peers = std::vector<std::pair<int, std::vector<int>>>;
    Peers sends, recvs;
    bool move = false;  // received blocks replace the result's (no fold)
    // (peer, block) as rank_rounds meets them, blocks ascending per peer;
    // finish() groups them by peer (a rank meets every block at its lowest
    // level: a hash lookup per change of peer, not a tree lookup per block).
    std::vector<std::pair<int, int>> send_log, recv_log;
    void send(int peer, int b) { send_log.emplace_back(peer, b); }
    void recv(int peer, int b) { recv_log.emplace_back(peer, b); }
    void finish() {
        group(&send_log, &sends);
        group(&recv_log, &recvs);
    }
    static void group(std::vector<std::pair<int, int>>* log, Peers* out) {
        std::unordered_map<int, size_t> at;
        int last = -1;
        std::vector<int>* blocks = nullptr;
        for (const auto& pb : *log) {
            if (blocks == nullptr || pb.first != last) {
                auto it = at.emplace(pb.first, out->size()).first;
                if (it->second == out->size()) out->emplace_back(pb.first, std::vector<int>{});
                blocks = &(*out)[it->second].second;
                last = pb.first;
            }
            blocks->push_back(pb.second);
        }
        std::sort(out->begin(), out->end());
        std::vector<std::pair<int, int>>().swap(*log);
    }
};

// Rank x's reduce-scatter rounds along its path to the root.  Compact
// (global = false): the rounds one after the other as the path meets them;
// global: at GTree's global round indices, total_rounds of them, the ones
// the rank takes no part in empty.
void rank_rounds(const GTree& t, int x, bool global, std::vector<RoundIo>* out) {
    const int N = t.nblocks;
    std::vector<RoundIo>& rounds = *out;
    rounds.clear();
    if (global) rounds.resize(static_cast<size_t>(t.total_rounds));
    for (int below = t.leaf_of_rank[static_cast<size_t>(x)];;) {
        const int g = t.nodes[static_cast<size_t>(below)].parent;
        if (g < 0) break;
        const GNode& a = t.nodes[static_cast<size_t>(g)];
        const int jx = t.nodes[static_cast<size_t>(below)].child_index;
        const GNode& mine = t.nodes[static_cast<size_t>(below)];
        below = g;
        if (!mine.pre_owner.empty()) {
            // Rearrangement: each block moves from its owner after the
            // child's sub-plan to its owner for this node's (into the result
            // buffer: the receiver's own copy of the block is stale).
            RoundIo io;
            io.move = true;
            for (int b = 0; b < N; ++b) {
                const int from = mine.pre_owner[static_cast<size_t>(b)];
                const int to = mine.owner[static_cast<size_t>(b)];
                if (from == to) continue;
                if (from == x) io.send(to, b);
                if (to == x) io.recv(from, b);
            }
            if (global)
                rounds[static_cast<size_t>(t.move_round[static_cast<size_t>(g)])] = std::move(io);
            else
                rounds.push_back(std::move(io));
        }
        if (a.factors.empty()) continue;
        const size_t first = global ? static_cast<size_t>(t.round0[static_cast<size_t>(g)])
                                    : rounds.size();
        if (!global) rounds.resize(first + static_cast<size_t>(subplan_rounds(a)));
        if (a.ring) {
            // Block b owned in child js starts at child js+1 and travels
            // js+1 -> js+2 -> ... -> js, each holder folding its partial in:
            // child jx sends b in round (jx - js - 1) mod c and receives it
            // one round earlier.
            const int c = static_cast<int>(a.children.size());
            for (int b = 0; b < N; ++b) {
                if (!mine.is_leaf() && mine.owner[static_cast<size_t>(b)] != x) continue;
                const int js = a.owner_child[static_cast<size_t>(b)];
                const int k = ((jx - js - 1) % c + c) % c;
                if (k >= 1)
                    rounds[first + static_cast<size_t>(k - 1)].recv(
                        t.holder(a.children[static_cast<size_t>((jx - 1 + c) % c)], b), b);
                if (k <= c - 2)
                    rounds[first + static_cast<size_t>(k)].send(
                        t.holder(a.children[static_cast<size_t>((jx + 1) % c)], b), b);
            }
            continue;
        }
        const int m = static_cast<int>(a.factors.size());
        for (int b = 0; b < N; ++b) {
            if (!mine.is_leaf() && mine.owner[static_cast<size_t>(b)] != x) continue;
            const int js = a.owner_child[static_cast<size_t>(b)];
            for (int i = 0; i < m; ++i) {
                if (!same_low_digits(jx, js, a.factors, i)) break;
                const int e = digit(js, a.factors, i);
                RoundIo& io = rounds[first + static_cast<size_t>(i)];
                if (digit(jx, a.factors, i) != e) {
                    const int to = t.holder(a.children[static_cast<size_t>(
                                                with_digit(jx, a.factors, i, e))],
                                            b);
                    io.send(to, b);
                    break;
                }
                for (int d = 0; d < a.factors[static_cast<size_t>(i)]; ++d) {
                    if (d == e) continue;
                    const int from = t.holder(
                        a.children[static_cast<size_t>(with_digit(jx, a.factors, i, d))], b);
                    io.recv(from, b);
                }
            }
        }
    }
    for (RoundIo& io : rounds) io.finish();
}

// One fused reduce per set of slots a block arrives in: every block
// received from the same peers folds in with one k-ary reduce.  `arrivals`
// holds (block, slot) pairs slot by slot, slots ascending; `scratch` has an
// entry per block of the plan, all -1, and is left so.  Blocks are classed
// by the slots seen so far, the classes refined slot by slot, so that no
// list is built per block (a rank receives thousands of blocks a step on
// 10⁴ ranks).
void append_fused_reduces(const std::vector<std::pair<int, BufferId>>& arrivals,
                          std::vector<int>* scratch, std::vector<LocalOp>* ops) {
    std::vector<std::vector<BufferId>> class_slots;  // per class: its slots
    std::vector<int> blocks;                         // distinct blocks, as met
    std::map<int, int> next;  // in the current slot: a block's class -> its class after
    BufferId current = kResult;
    int last_from = -2, last_to = -1;
    for (const auto& bs : arrivals) {
        if (bs.second != current) {
            next.clear();
            current = bs.second;
            last_from = -2;
        }
        int& c = (*scratch)[static_cast<size_t>(bs.first)];
        if (c < 0) blocks.push_back(bs.first);
        if (c != last_from) {
            auto it = next.find(c);
            if (it == next.end()) {
                std::vector<BufferId> slots = c < 0 ? std::vector<BufferId>{} : class_slots[static_cast<size_t>(c)];
                slots.push_back(bs.second);
                it = next.emplace(c, static_cast<int>(class_slots.size())).first;
                class_slots.push_back(std::move(slots));
            }
            last_from = c;
            last_to = it->second;
        }
        c = last_to;
    }
    std::sort(blocks.begin(), blocks.end());
    std::vector<std::vector<int>> members(class_slots.size());
    for (int b : blocks) {
        int& c = (*scratch)[static_cast<size_t>(b)];
        members[static_cast<size_t>(c)].push_back(b);
        c = -1;
    }
    std::map<std::vector<BufferId>, std::vector<int>> groups;
    for (size_t c = 0; c < members.size(); ++c)
        if (!members[c].empty()) groups[class_slots[c]] = std::move(members[c]);
    for (auto& kv : groups)
        ops->push_back(LocalOp{OpKind::Reduce, kResult, kv.first, std::move(kv.second)});
}

// A round's peers (keys of `m`) in emission order: by rank, or, when the
// plan declares a symmetry, by their offset from rank x in its group, so
// that a translated rank lists the translated peers in the same order and
// numbers its slots alike (check_symmetry compares transfer by transfer).
template <typename Map>
std::vector<decltype(std::declval<Map&>().begin())> in_peer_order(const GTree& t, int x, Map& m) {
    std::vector<decltype(m.begin())> out;
    for (auto it = m.begin(); it != m.end(); ++it) out.push_back(it);
    if (t.symmetric)
        std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
            return t.group.sub(a->first, x) < t.group.sub(b->first, x);
        });
    return out;
}

// The unpipelined program: the rounds as steps, then their reverse.
void emit_rank(const GTree& t, int x, Program* prog) {
    std::vector<RoundIo> rounds;
    rank_rounds(t, x, false, &rounds);
    std::vector<int> scratch(static_cast<size_t>(t.nblocks), -1);  // append_fused_reduces
    std::vector<Step>& steps = prog->steps;
    for (const RoundIo& io : rounds) {
        if (io.sends.empty() && io.recvs.empty()) continue;
        Step st;
        for (const auto& kv : in_peer_order(t, x, io.sends))
            st.sends.push_back(Transfer{kv->first, kv->second, kResult});
        std::vector<std::pair<int, BufferId>> arrivals;
        BufferId slot = 0;
        for (const auto& kv : in_peer_order(t, x, io.recvs)) {
            if (io.move) {
                st.recvs.push_back(Transfer{kv->first, kv->second, kResult});
                continue;
            }
            st.recvs.push_back(Transfer{kv->first, kv->second, slot});
            for (int b : kv->second) arrivals.emplace_back(b, slot);
            ++slot;
        }
        append_fused_reduces(arrivals, &scratch, &st.ops);
        steps.push_back(std::move(st));
    }
    for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {
        if (it->sends.empty() && it->recvs.empty()) continue;
        Step st;
        for (const auto& kv : in_peer_order(t, x, it->recvs))
            st.sends.push_back(Transfer{kv->first, kv->second, kResult});
        for (const auto& kv : in_peer_order(t, x, it->sends))
            st.recvs.push_back(Transfer{kv->first, kv->second, kResult});
        steps.push_back(std::move(st));
    }
}

// The pipelined program (gentree.hpp "Pipelining"): the vector in K chunks
// of N blocks (chunk c's block b is c·N + b); reduce-scatter step s runs
// global round s - c of every chunk c, then the allgather the same way over
// the reversed rounds.  Per peer one transfer per direction per step (the
// chunks' blocks, chunk by chunk), received into the peer's own slot, so
// that rounds of different chunks with the same peer merge.
void emit_rank_pipelined(const GTree& t, int x, int K, Program* prog) {
    std::vector<RoundIo> rounds;
    rank_rounds(t, x, true, &rounds);
    const int N = t.nblocks;
    const int R = static_cast<int>(rounds.size());
    std::vector<int> scratch(static_cast<size_t>(N) * static_cast<size_t>(K), -1);  // append_fused_reduces
    std::map<int, BufferId> slot_of;  // reduce-scatter senders, by rank
    for (const RoundIo& io : rounds)
        for (const auto& kv : io.recvs) slot_of.emplace(kv.first, 0);
    BufferId next = 0;
    for (auto& kv : in_peer_order(t, x, slot_of)) kv->second = next++;
    auto chunk_blocks = [N](const std::vector<int>& blocks, int c, std::vector<int>* out) {
        for (int b : blocks) out->push_back(c * N + b);
    };
    std::vector<Step>& steps = prog->steps;
    for (int phase = 0; phase < 2; ++phase) {
        const bool gather = phase == 1;
        for (int s = 0; s < R + K - 1; ++s) {
            std::map<int, std::vector<int>> sends, recvs;
            std::vector<LocalOp> ops;
            for (int c = 0; c < K; ++c) {
                const int k = s - c;
                if (k < 0 || k >= R) continue;
                const RoundIo& io = rounds[static_cast<size_t>(gather ? R - 1 - k : k)];
                if (gather) {
                    for (const auto& kv : io.recvs) chunk_blocks(kv.second, c, &sends[kv.first]);
                    for (const auto& kv : io.sends) chunk_blocks(kv.second, c, &recvs[kv.first]);
                    continue;
                }
                for (const auto& kv : io.sends) chunk_blocks(kv.second, c, &sends[kv.first]);
                std::vector<std::pair<int, BufferId>> arrivals;
                for (const auto& kv : in_peer_order(t, x, io.recvs)) {
                    const BufferId slot = slot_of.at(kv->first);
                    std::vector<int> cb;
                    chunk_blocks(kv->second, c, &cb);
                    if (io.move)
                        ops.push_back(LocalOp{OpKind::Copy, kResult, {slot}, cb});
                    else
                        for (int b : cb) arrivals.emplace_back(b, slot);
                    std::vector<int>& r = recvs[kv->first];
                    r.insert(r.end(), cb.begin(), cb.end());
                }
                append_fused_reduces(arrivals, &scratch, &ops);
            }
            if (sends.empty() && recvs.empty()) continue;
            Step st;
            for (auto& kv : in_peer_order(t, x, sends))
                st.sends.push_back(Transfer{kv->first, std::move(kv->second), kResult});
            for (auto& kv : in_peer_order(t, x, recvs))
                st.recvs.push_back(Transfer{kv->first, std::move(kv->second),
                                            gather ? kResult : slot_of.at(kv->first)});
            st.ops = std::move(ops);
            steps.push_back(std::move(st));
        }
    }
}

Status check_view(const TopologyView* view, const char* who) {
    if (view == nullptr || view->empty())
        return Status::invalid(std::string(who) +
                               ": needs a topology (the switch tree the ranks sit on); none was "
                               "given (genx-plan --topology FILE, coll_genx_topology_file)");
    const std::string err = view->validate();
    if (!err.empty()) return Status::invalid(std::string(who) + ": bad topology view: " + err);
    if (view->direct)
        return Status::invalid(std::string(who) +
                                ": needs a switch tree, and the topology is a direct network "
                                "(a torus, a mesh or a graph file): use multitree or ring2d");
    return Status::ok();
}

// Data rearrangement (gentree.hpp): node g's blocks move onto its first k
// servers, server i of the k keeping its blocks and taking those of
// servers i + k, i + 2k, ... (at most ceil(n/k) - 1 senders each).
void rearrange_onto(GTree* t, int g, int k) {
    GNode& a = t->nodes[static_cast<size_t>(g)];
    const int n = static_cast<int>(a.servers.size());
    if (k < 1 || k >= n) return;
    std::map<int, int> index;
    for (int i = 0; i < n; ++i) index[a.servers[static_cast<size_t>(i)]] = i;
    // owner_child stays what this node's own sub-plan delivers to; owner
    // becomes what the parent's sub-plan reads.
    a.pre_owner = a.owner;
    a.moved_onto = k;
    for (size_t b = 0; b < a.owner.size(); ++b)
        a.owner[b] = a.servers[static_cast<size_t>(index[a.pre_owner[b]] % k)];
}

// The sub-plan of every node with two or more children, in t->order, and
// the servers each such node's blocks move onto (0: none), as
// prepare_gentree validated them.
struct Subplan {
    std::vector<int> factors;
    bool ring = false;
    int rearrange = 0;
};

// On a tree build_tree made: every node's sub-plan, placement and
// rearrangement, and the global rounds.
void build(const std::vector<Subplan>& subplans, GTree* t) {
    std::vector<int> rearrange(t->nodes.size(), 0);
    size_t next = 0;
    for (int g : t->order) {
        GNode& a = t->nodes[static_cast<size_t>(g)];
        if (a.children.size() < 2) continue;
        const Subplan& sp = subplans[next++];
        a.factors = sp.factors;
        a.ring = sp.ring;
        rearrange[static_cast<size_t>(g)] = sp.rearrange;
    }
    std::vector<int> load(t->leaf_of_rank.size(), 0), quota(t->leaf_of_rank.size(), 0);
    for (int g : t->order) {
        place(t, g, load, quota);
        if (t->nodes[static_cast<size_t>(g)].parent >= 0)
            rearrange_onto(t, g, rearrange[static_cast<size_t>(g)]);
    }
    number_rounds(t);
}

// The number of blocks per chunk (gentree.hpp, "Placement"): P, or on a
// tree whose quotas P blocks cannot meet exactly (a node whose children
// hold different numbers of servers) the least multiple F·P, F <= 8, that
// meets every node's N/c per child and N/(c·m) per server, else 8·P; F is
// lowered to keep F·P·chunks within kGenTreeMaxBalancedBlocks.
int block_count(const GTree& t, int chunks) {
    const long long P = static_cast<long long>(t.leaf_of_rank.size());
    const long long cap = 1LL << 40;  // an lcm beyond any F·P: no exact F
    long long L = 1;
    for (int g : t.order) {
        const GNode& a = t.nodes[static_cast<size_t>(g)];
        const long long c = static_cast<long long>(a.children.size());
        if (c < 2) continue;
        for (int ch : a.children) {
            const long long d = c * static_cast<long long>(t.nodes[static_cast<size_t>(ch)].servers.size());
            const long long q = L / std::gcd(L, d);
            L = q > cap / d ? cap : q * d;
        }
    }
    if (P < 1 || P % L == 0) return static_cast<int>(std::max(P, 1LL));
    long long F = kGenTreeMaxBlockFactor;
    for (long long f = 2; f < kGenTreeMaxBlockFactor; ++f)
        if ((f * P) % L == 0) {
            F = f;
            break;
        }
    const long long room = std::max(P * chunks, kGenTreeMaxBalancedBlocks) / (P * chunks);
    return static_cast<int>(P * std::max(1LL, std::min(F, room)));
}

// GenTree's rank symmetry (gentree.hpp, "Symmetry").  On a tree whose
// nodes of each depth have the same number of children, sub-plan and
// rearrangement, and whose ranks all sit at one depth, turning the children
// of every node of one depth alike (cyclically for CPS and the ring, digit
// by digit for factors) maps the plan onto itself with its blocks
// relabelled.  Each depth gives its digits (one, or one per factor); the
// group is declared when rank numbers are those digits in mixed radix, in
// some order (in tree order, round-robin, ...).  A rearranged depth breaks
// its own digits and those below it: they are declared fixed.  False when
// the tree has no such symmetry or no digit is free.
bool tree_symmetry(const GTree& t, std::vector<int>* radix, std::vector<int>* fixed) {
    const size_t n = t.nodes.size();
    const int P = static_cast<int>(t.leaf_of_rank.size());
    if (n == 0 || P < 2) return false;
    std::vector<int> depth(n, 0);
    int leaf_depth = -1;
    std::vector<int> rep;  // per depth: its first internal node
    for (size_t g = 0; g < n; ++g) {
        for (int p = t.nodes[g].parent; p >= 0; p = t.nodes[static_cast<size_t>(p)].parent) ++depth[g];
        const GNode& a = t.nodes[g];
        const int d = depth[g];
        if (a.is_leaf()) {
            if (leaf_depth >= 0 && leaf_depth != d) return false;
            leaf_depth = d;
            continue;
        }
        if (rep.size() <= static_cast<size_t>(d)) rep.resize(static_cast<size_t>(d) + 1, -1);
        int& r = rep[static_cast<size_t>(d)];
        if (r < 0) {
            r = static_cast<int>(g);
            continue;
        }
        const GNode& b = t.nodes[static_cast<size_t>(r)];
        if (a.children.size() != b.children.size() || a.factors != b.factors || a.ring != b.ring ||
            a.moved_onto != b.moved_onto || a.local_side != b.local_side)
            return false;
    }
    if (leaf_depth != static_cast<int>(rep.size())) return false;
    // The digits, depth by depth; per digit its depth and its weight inside
    // the child index (factors are mixed radix, digit 0 fastest).
    struct Digit {
        int depth, radix, weight;
    };
    std::vector<Digit> digits;
    int fixed_from = leaf_depth;
    for (int d = 0; d < leaf_depth; ++d) {
        const GNode& a = t.nodes[static_cast<size_t>(rep[static_cast<size_t>(d)])];
        const int c = static_cast<int>(a.children.size());
        if (a.moved_onto > 0) fixed_from = std::min(fixed_from, d);
        if (c < 2) continue;
        if (a.ring || a.factors.size() <= 1) {
            digits.push_back({d, c, 1});
            continue;
        }
        int w = 1;
        for (int f : a.factors) {
            digits.push_back({d, f, w});
            w *= f;
        }
    }
    // Every rank's coordinates, then the rank of each unit vector (the
    // digit's stride), which must make the numbering mixed radix.
    const size_t k = digits.size();
    std::vector<int> coord(static_cast<size_t>(P) * k, 0);
    for (int r = 0; r < P; ++r) {
        for (int below = t.leaf_of_rank[static_cast<size_t>(r)]; t.nodes[static_cast<size_t>(below)].parent >= 0;
             below = t.nodes[static_cast<size_t>(below)].parent) {
            const int d = depth[static_cast<size_t>(t.nodes[static_cast<size_t>(below)].parent)];
            const int j = t.nodes[static_cast<size_t>(below)].child_index;
            for (size_t i = 0; i < k; ++i)
                if (digits[i].depth == d) coord[static_cast<size_t>(r) * k + i] = j / digits[i].weight % digits[i].radix;
        }
    }
    std::vector<int> stride(k, -1);
    for (int r = 0; r < P; ++r) {
        int nonzero = 0, at = -1;
        for (size_t i = 0; i < k; ++i)
            if (coord[static_cast<size_t>(r) * k + i] != 0) {
                ++nonzero;
                at = static_cast<int>(i);
            }
        if (nonzero == 1 && coord[static_cast<size_t>(r) * k + static_cast<size_t>(at)] == 1)
            stride[static_cast<size_t>(at)] = r;
    }
    std::vector<size_t> order(k);
    for (size_t i = 0; i < k; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return stride[a] < stride[b]; });
    long long expect = 1;
    for (size_t i : order) {
        if (stride[i] != expect) return false;
        expect *= digits[i].radix;
    }
    if (expect != P) return false;
    for (int r = 0; r < P; ++r) {
        long long v = 0;
        for (size_t i = 0; i < k; ++i) v += static_cast<long long>(coord[static_cast<size_t>(r) * k + i]) * stride[i];
        if (v != r) return false;
    }
    radix->clear();
    fixed->clear();
    for (size_t i = 0; i < k; ++i) {
        radix->push_back(digits[order[i]].radix);
        if (digits[order[i]].depth >= fixed_from) fixed->push_back(static_cast<int>(i));
    }
    return fixed->size() < radix->size();
}

// How the edge from node g up to its parent is priced: a rank under a
// multi-rank host over the intra class, a host over its NIC, a switch over
// its class.
GenTreeLink up_link(const TopologyView& view, const GTree& t, int g) {
    const GNode& n = t.nodes[static_cast<size_t>(g)];
    if (n.parent < 0) return GenTreeLink::None;
    if (n.view_node < 0) return GenTreeLink::Intra;
    return view.nodes[static_cast<size_t>(n.view_node)].is_host() ? GenTreeLink::Host
                                                                  : GenTreeLink::Switch;
}

void describe_switches(const TopologyView& view, const GTree& t, std::vector<GenTreeSwitch>* out) {
    out->clear();
    for (int g : t.order) {
        const GNode& a = t.nodes[static_cast<size_t>(g)];
        if (a.children.size() < 2) continue;
        GenTreeSwitch s;
        s.view_node = a.view_node;
        s.name = view.nodes[static_cast<size_t>(a.view_node)].name + (a.local_side ? " (local side)" : "");
        s.servers = static_cast<int>(a.servers.size());
        for (int ch : a.children)
            s.child_servers.push_back(static_cast<int>(t.nodes[static_cast<size_t>(ch)].servers.size()));
        s.child_link = up_link(view, t, a.children[0]);
        s.child_class = t.nodes[static_cast<size_t>(a.children[0])].link_class;
        s.up_link = up_link(view, t, g);
        s.up_class = a.parent >= 0 ? a.link_class : -1;
        out->push_back(std::move(s));
    }
}

std::string switch_names(const std::vector<GenTreeSwitch>& sw) {
    std::vector<std::string> names;
    for (size_t i = 0; i < sw.size() && i < 8; ++i) names.push_back(sw[i].name);
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    if (sw.size() > names.size()) out += ", ... (" + std::to_string(sw.size()) + " in all)";
    return out.empty() ? "none" : out;
}

// One plans= entry against its switch (gentree.hpp, "Params").
Status parse_plan_token(const std::string& tok, const GenTreeSwitch& s, size_t i, Subplan* out) {
    const int c = static_cast<int>(s.child_servers.size());
    const bool symmetric = std::all_of(s.child_servers.begin(), s.child_servers.end(),
                                       [&](int n) { return n == s.child_servers[0]; });
    const std::string where = "gentree: plans= entry " + std::to_string(i + 1) + " '" + tok + "' at " +
                              s.name + " (" + std::to_string(c) + " children" +
                              (symmetric ? "" : " holding different numbers of ranks") + ")";
    if (tok == "cps") {
        out->factors = {c};
        return Status::ok();
    }
    if (tok == "ring") {
        if (c < 3 || !symmetric)
            return Status::invalid(where + ": a ring needs at least 3 children holding the same "
                                           "number of ranks (use cps)");
        out->factors = {c};
        out->ring = true;
        return Status::ok();
    }
    std::vector<int> f;
    if (!parse_factors(tok, &f))
        return Status::invalid(where + ": expected cps, ring or a factor list such as 4x2");
    long long product = 1;
    for (int x : f) {
        if (x < 2) return Status::invalid(where + ": every factor must be at least 2");
        product *= x;
        if (product > c) break;
    }
    if (product != c)
        return Status::invalid(where + ": the factors' product is not " + std::to_string(c));
    if (f.size() > 1 && !symmetric)
        return Status::invalid(where + ": hierarchical factors need children holding the same "
                                       "number of ranks (use cps, the asymmetric CPS)");
    out->factors = std::move(f);
    return Status::ok();
}

std::vector<std::string> split_slashes(const std::string& text) {
    std::vector<std::string> out;
    size_t pos = 0;
    for (;;) {
        const size_t slash = text.find('/', pos);
        out.push_back(text.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos));
        if (slash == std::string::npos) return out;
        pos = slash + 1;
    }
}

// plans= and rearrange= (absent: CPS everywhere, nothing rearranged).
Status parse_subplans(const ParamMap& params, const std::vector<GenTreeSwitch>& sw,
                      std::vector<Subplan>* out) {
    out->assign(sw.size(), Subplan{});
    for (size_t i = 0; i < sw.size(); ++i)
        (*out)[i].factors = {static_cast<int>(sw[i].child_servers.size())};
    auto count_error = [&](const char* key, size_t n) {
        return Status::invalid("gentree: " + std::string(key) + "= has " + std::to_string(n) +
                               " entries; the tree has " + std::to_string(sw.size()) +
                               " sub-trees with two or more children, bottom-up: " + switch_names(sw));
    };
    if (auto it = params.find("plans"); it != params.end()) {
        const std::vector<std::string> toks = split_slashes(it->second);
        if (toks.size() != sw.size()) return count_error("plans", toks.size());
        for (size_t i = 0; i < sw.size(); ++i)
            GENX_RETURN_IF_ERROR(parse_plan_token(toks[i], sw[i], i, &(*out)[i]));
    }
    if (auto it = params.find("rearrange"); it != params.end()) {
        const std::vector<std::string> toks = split_slashes(it->second);
        if (toks.size() != sw.size()) return count_error("rearrange", toks.size());
        for (size_t i = 0; i < sw.size(); ++i) {
            long k = 0;
            const bool root = sw[i].up_link == GenTreeLink::None;
            if (!parse_int_in(toks[i], 0, root ? 0 : sw[i].servers - 1, &k))
                return Status::invalid(
                    "gentree: rearrange= entry " + std::to_string(i + 1) + " '" + toks[i] + "' at " +
                    sw[i].name + ": " +
                    (root ? std::string("the root has no uplink to rearrange for (use 0)")
                          : "expected 0 (none) or the servers its " + std::to_string(sw[i].servers) +
                                " servers' blocks move onto, 1.." + std::to_string(sw[i].servers - 1)));
            (*out)[i].rearrange = static_cast<int>(k);
        }
    }
    return Status::ok();
}

}  // namespace

std::string gentree_plan_token(const std::vector<int>& factors, bool ring) {
    if (ring) return "ring";
    if (factors.size() <= 1) return "cps";
    return format_factors(factors);
}

Status gentree_switches(const TopologyView& view, std::vector<GenTreeSwitch>* out) {
    GENX_RETURN_IF_ERROR(check_view(&view, "gentree"));
    GTree t;
    build_tree(view, &t);
    describe_switches(view, t, out);
    return Status::ok();
}

Status prepare_gentree(const GenRequest& req, RankGenerator* out) {
    GENX_RETURN_IF_ERROR(check_view(req.topology, "gentree"));
    const TopologyView& view = *req.topology;
    if (view.nranks() != req.nranks)
        return Status::invalid("gentree: the topology places " + std::to_string(view.nranks()) +
                               " ranks, not " + std::to_string(req.nranks));
    int chunks = 1;
    auto it = req.params.find("pipeline");
    if (it != req.params.end()) {
        long v = 0;
        if (!parse_int_in(it->second, 1, kGenTreeMaxPipeline, &v))
            return Status::invalid("gentree: pipeline '" + it->second + "' is not a chunk count 1.." +
                                   std::to_string(kGenTreeMaxPipeline));
        chunks = static_cast<int>(v);
    }
    if (chunks > 1 && static_cast<long long>(chunks) * req.nranks > kGenTreeMaxPipelineBlocks)
        return Status::invalid("gentree: pipeline=" + std::to_string(chunks) + " on " +
                               std::to_string(req.nranks) + " ranks makes " +
                               std::to_string(static_cast<long long>(chunks) * req.nranks) +
                               " blocks, more than " + std::to_string(kGenTreeMaxPipelineBlocks) +
                               " (use fewer chunks)");
    auto tree = std::make_shared<GTree>();
    build_tree(view, tree.get());
    tree->nblocks = block_count(*tree, chunks);
    std::vector<GenTreeSwitch> sw;
    describe_switches(view, *tree, &sw);
    std::vector<Subplan> subplans;
    GENX_RETURN_IF_ERROR(parse_subplans(req.params, sw, &subplans));
    build(subplans, tree.get());
    std::vector<int> radix, fixed;
    tree->symmetric = tree_symmetry(*tree, &radix, &fixed);
    if (tree->symmetric) tree->group = RankGroup(radix);

    RankGenerator g;
    g.header.algorithm = "gentree";
    // The canonical form names every sub-plan, so that a header says what ran.
    ParamMap canon;
    std::string plans, rearrange;
    bool moved = false;
    for (const Subplan& sp : subplans) {
        plans += (plans.empty() ? "" : "/") + gentree_plan_token(sp.factors, sp.ring);
        rearrange += (rearrange.empty() ? "" : "/") + std::to_string(sp.rearrange);
        moved = moved || sp.rearrange > 0;
    }
    if (!plans.empty()) canon["plans"] = plans;
    if (moved) canon["rearrange"] = rearrange;
    if (chunks > 1) canon["pipeline"] = std::to_string(chunks);
    g.header.params = format_params(canon);
    g.header.nranks = req.nranks;
    g.header.nblocks = tree->nblocks * chunks;
    if (tree->symmetric) {
        g.header.symmetry = radix;
        g.header.symmetry_fixed = fixed;
    }
    std::shared_ptr<const GTree> ct = tree;
    if (chunks > 1)
        g.emit = [ct, chunks](int r, Program* prog) { emit_rank_pipelined(*ct, r, chunks, prog); };
    else
        g.emit = [ct](int r, Program* prog) { emit_rank(*ct, r, prog); };
    *out = std::move(g);
    return Status::ok();
}

void gentree_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    if (ctx.topology == nullptr || ctx.topology->empty() || ctx.topology->direct ||
        ctx.nranks < 2 || ctx.nranks > kGenTreeMaxOfferedRanks)
        return;
    if (ctx.nranks > kGenTreeMaxPlacedRanks) {
        // Placement tables: one per switch and per host of several ranks.
        long long tables = 0;
        for (const TopoNode& n : ctx.topology->nodes) tables += !n.is_host() || n.ranks.size() > 1;
        if (tables * ctx.nranks > kGenTreeMaxPlacementEntries) return;
    }
    out->push_back("");
    // Pipelined across levels where there are levels to overlap: two or
    // more switch levels, or one switch with several ranks on a host.
    bool shared_host = false;
    for (const TopoNode& n : ctx.topology->nodes) shared_host = shared_host || n.ranks.size() > 1;
    if (ctx.nranks > kGenTreeMaxPipelinedOfferedRanks ||
        (ctx.topology->depth() < 2 && !shared_host))
        return;
    for (int k : kGenTreeOfferedPipelines)
        if (k <= 16 || static_cast<long long>(k) * ctx.nranks <= kGenTreeMaxOfferedPipelineBlocks)
            out->push_back("pipeline=" + std::to_string(k));
}

}  // namespace genx
