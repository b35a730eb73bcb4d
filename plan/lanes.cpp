// Lanes over the leaf switches (plan/lanes.hpp).
#include "plan/lanes.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

namespace genx {

Status leaf_layout(const TopologyView* view, int nranks, const std::string& family, LeafLayout* out) {
    if (view == nullptr || view->empty() || view->direct)
        return Status::invalid(family + ": over=leaves needs a switch tree (a topology file or preset with switches)");
    if (view->nranks() != nranks)
        return Status::invalid("the topology places " + std::to_string(view->nranks()) +
                               " ranks, the plan is for " + std::to_string(nranks));
    LeafLayout lay;
    std::map<int, size_t> leaf_of;  // switch node -> leaf index
    for (size_t i = 0; i < view->nodes.size(); ++i) {
        const TopoNode& node = view->nodes[i];
        if (node.in_host > 0)
            return Status::invalid(family + ": over=leaves takes hosts as one level; '" + node.name +
                                   "' is a level inside a host");
        if (!node.is_host() || node.ranks.empty()) continue;
        if (node.parent < 0)
            return Status::invalid(family + ": over=leaves: host '" + node.name + "' has no switch above it");
        auto [it, fresh] = leaf_of.emplace(node.parent, lay.leaf_node.size());
        if (fresh) {
            lay.leaf_node.push_back(node.parent);
            lay.hosts.emplace_back();
        }
        lay.hosts[it->second].push_back(node.ranks);
    }
    if (lay.hosts.empty()) return Status::invalid(family + ": over=leaves: no host holds a rank");
    const size_t B = lay.hosts.front().size();
    for (size_t l = 1; l < lay.hosts.size(); ++l)
        if (lay.hosts[l].size() != B)
            return Status::invalid(family + ": over=leaves needs as many hosts with ranks under every leaf switch: '" +
                                   view->nodes[static_cast<size_t>(lay.leaf_node[0])].name + "' has " +
                                   std::to_string(B) + ", '" +
                                   view->nodes[static_cast<size_t>(lay.leaf_node[l])].name + "' has " +
                                   std::to_string(lay.hosts[l].size()));
    *out = std::move(lay);
    return Status::ok();
}

TopologyView lane_view(const TopologyView& view, const LeafLayout& lay, double share) {
    TopologyView v;
    v.link_classes = view.link_classes;
    v.intra_class = view.intra_class;
    std::map<int, int> shared;  // class -> its lane share's class
    const auto lane_class = [&](int c) {
        if (share >= 1 || c < 0 || c >= static_cast<int>(view.link_classes.size()) ||
            !(view.link_classes[static_cast<size_t>(c)].rate > 0))
            return c;
        auto [it, fresh] = shared.emplace(c, static_cast<int>(v.link_classes.size()));
        if (fresh) {
            TopoLinkClass k = view.link_classes[static_cast<size_t>(c)];
            k.name += "/lane";
            k.rate *= share;
            v.link_classes.push_back(k);
        }
        return it->second;
    };
    // Keep the switches (in order), then one host under each leaf.
    std::vector<int> index(view.nodes.size(), -1);
    for (size_t i = 0; i < view.nodes.size(); ++i) {
        if (view.nodes[i].is_host()) continue;
        index[i] = static_cast<int>(v.nodes.size());
        TopoNode n = view.nodes[i];
        n.children.clear();
        n.ranks.clear();
        n.up_class = lane_class(n.up_class);
        v.nodes.push_back(std::move(n));
    }
    for (TopoNode& n : v.nodes)
        if (n.parent >= 0) n.parent = index[static_cast<size_t>(n.parent)];
    for (size_t i = 0; i < v.nodes.size(); ++i)
        if (v.nodes[i].parent >= 0) v.nodes[static_cast<size_t>(v.nodes[i].parent)].children.push_back(static_cast<int>(i));
    const std::vector<int> host_of = view.host_of_rank();
    for (int l = 0; l < lay.leaves(); ++l) {
        const int leaf = index[static_cast<size_t>(lay.leaf_node[static_cast<size_t>(l)])];
        const TopoNode& first =
            view.nodes[static_cast<size_t>(host_of[static_cast<size_t>(lay.hosts[static_cast<size_t>(l)][0][0])])];
        TopoNode h;
        h.name = first.name;
        h.parent = leaf;
        h.up_class = first.up_class;
        h.nics = first.nics;
        h.ranks = {l};
        v.nodes[static_cast<size_t>(leaf)].children.push_back(static_cast<int>(v.nodes.size()));
        v.nodes.push_back(std::move(h));
    }
    return v;
}

namespace {

// Steps of the fold inside a host: ⌈log2 ranks per host⌉.
int fold_steps(const LeafLayout& lay) {
    int maxppn = 1, J = 0;
    for (const auto& leaf : lay.hosts)
        for (const auto& h : leaf) maxppn = std::max(maxppn, static_cast<int>(h.size()));
    while ((1 << J) < maxppn) ++J;
    return J;
}

}  // namespace

int lanes_steps(const LeafLayout& lay, int inner_steps) {
    return 2 * fold_steps(lay) + 2 * (lay.lanes() - 1) + inner_steps;
}

namespace {

struct Place {
    int leaf = -1, lane = -1, idx = -1;  // idx: position among its host's ranks
};

struct Lanes {
    LeafLayout lay;
    RankGenerator inner;
    int J = 0, R = 0, S = 0, N = 1;
    std::vector<Place> where;  // per rank
};

std::vector<int> range_blocks(int lo, int hi) {
    std::vector<int> b(static_cast<size_t>(hi - lo));
    std::iota(b.begin(), b.end(), lo);
    return b;
}

// Steps 1, 2, 4 and 5 of rank r's program (lanes.hpp).
void lanes_around(const Lanes& L, int r, Program* prog) {
    const Place& w = L.where[static_cast<size_t>(r)];
    const auto& leaf = L.lay.hosts[static_cast<size_t>(w.leaf)];
    const std::vector<int>& host = leaf[static_cast<size_t>(w.lane)];
    const int B = L.lay.lanes(), k = static_cast<int>(host.size()), end = L.J + 2 * L.R + L.S;
    const std::vector<int> all = range_blocks(0, B * L.N);
    auto step = [&](int s) -> Step& { return prog->steps[static_cast<size_t>(s)]; };
    for (int j = 0; j < L.J; ++j) {
        const int bit = 1 << j, back = end + (L.J - 1 - j);
        if (w.idx % (2 * bit) == bit) {
            const int to = host[static_cast<size_t>(w.idx - bit)];
            step(j).sends.push_back(Transfer{to, all, kResult, 0});
            step(back).recvs.push_back(Transfer{to, all, kResult, 0});
        } else if (w.idx % (2 * bit) == 0 && w.idx + bit < k) {
            const int from = host[static_cast<size_t>(w.idx + bit)];
            step(j).recvs.push_back(Transfer{from, all, 0, 0});
            step(j).ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
            step(back).sends.push_back(Transfer{from, all, kResult, 0});
        }
    }
    if (w.idx != 0 || B < 2) return;
    const int i = w.lane, next = leaf[static_cast<size_t>((i + 1) % B)][0], prev = leaf[static_cast<size_t>((i + B - 1) % B)][0];
    const auto chunk = [&](int x) {
        const int c = ((x % B) + B) % B;
        return range_blocks(c * L.N, (c + 1) * L.N);
    };
    for (int s = 0; s < L.R; ++s) {
        Step& rs = step(L.J + s);
        rs.sends.push_back(Transfer{next, chunk(i - s - 1), kResult, 0});
        rs.recvs.push_back(Transfer{prev, chunk(i - s - 2), 0, 0});
        rs.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, chunk(i - s - 2)});
        Step& ag = step(L.J + L.R + L.S + s);
        ag.sends.push_back(Transfer{next, chunk(i - s), kResult, 0});
        ag.recvs.push_back(Transfer{prev, chunk(i - s - 1), kResult, 0});
    }
}

// Step 3: the inner program of rank r's leaf on its lane's chunk.
void lanes_inner(const Lanes& L, int r, Program* prog) {
    const Place& w = L.where[static_cast<size_t>(r)];
    if (w.idx != 0) return;
    Program in;
    L.inner.emit(w.leaf, &in);
    const int off = w.lane * L.N;
    const auto peer = [&](int p) { return L.lay.hosts[static_cast<size_t>(p)][static_cast<size_t>(w.lane)][0]; };
    const auto shift = [off](std::vector<int> b) {
        for (int& x : b) x += off;
        return b;
    };
    for (size_t s = 0; s < in.steps.size(); ++s) {
        Step& dst = prog->steps[static_cast<size_t>(L.J + L.R) + s];
        for (const Transfer& t : in.steps[s].recvs)
            dst.recvs.push_back(Transfer{peer(t.peer), shift(t.blocks), t.buffer, t.segment_blocks});
        for (const Transfer& t : in.steps[s].sends)
            dst.sends.push_back(Transfer{peer(t.peer), shift(t.blocks), t.buffer, t.segment_blocks});
        for (const LocalOp& op : in.steps[s].ops) dst.ops.push_back(LocalOp{op.kind, op.dst, op.srcs, shift(op.blocks)});
    }
}

}  // namespace

RankGenerator compose_lanes(const LeafLayout& lay, int nranks, RankGenerator inner, int inner_steps) {
    auto L = std::make_shared<Lanes>();
    L->lay = lay;
    L->N = inner.header.nblocks;
    L->S = inner_steps;
    L->R = lay.lanes() - 1;
    L->J = fold_steps(lay);
    L->where.resize(static_cast<size_t>(nranks));
    for (size_t l = 0; l < lay.hosts.size(); ++l)
        for (size_t h = 0; h < lay.hosts[l].size(); ++h)
            for (size_t x = 0; x < lay.hosts[l][h].size(); ++x)
                L->where[static_cast<size_t>(lay.hosts[l][h][x])] = {static_cast<int>(l), static_cast<int>(h),
                                                                     static_cast<int>(x)};
    RankGenerator gen;
    gen.header.algorithm = inner.header.algorithm;
    gen.header.params = inner.header.params;
    gen.header.nranks = nranks;
    gen.header.nblocks = lay.lanes() * L->N;
    L->inner = std::move(inner);
    const int steps = lanes_steps(lay, inner_steps);
    gen.emit = [L, steps](int r, Program* prog) {
        prog->steps.assign(static_cast<size_t>(steps), Step{});
        lanes_around(*L, r, prog);
        lanes_inner(*L, r, prog);
    };
    return gen;
}

}  // namespace genx
