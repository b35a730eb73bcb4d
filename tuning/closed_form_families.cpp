// The compact models of the families with a closed form (closed_form.hpp):
// each family's steps as its generator emits them, summarised in blocks.
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>

#include "plan/fold.hpp"
#include "plan/symmetry.hpp"
#include "tuning/closed_form.hpp"

namespace genx {

namespace {

// Node 0 (ranks 0..K−1) is an initial block of the group's digits: K =
// n_0·…·n_(t−1)·g with g dividing n_t, and K < P.  Then every node is node 0
// translated by its first rank, without a carry, which is when PlanModel's
// one-node quotient applies to a by-slot map (test_per_rank.cpp checks the
// two agree).  *t and *g as above.
bool initial_block(const std::vector<int>& radix, int K, size_t* t, long* g) {
    long F = 1;
    size_t i = 0;
    while (i < radix.size() && K % (F * radix[i]) == 0) F *= radix[i++];
    if (i == radix.size()) return false;  // K = P: one node
    *t = i;
    *g = K / F;
    return radix[i] % *g == 0;
}

bool same_own(const long* a, const long* b, size_t n) { return std::equal(a, a + n, b); }

}  // namespace

// Node 0's ranks, the model ranks of the one-node quotient: model rank x is
// rank x, and a transfer to rank q is matched with q's translate in node 0
// (q minus its node's first rank, in the group).
class ClosedForm::NodeZero {
  public:
    NodeZero(const std::vector<int>& radix, int K, ClosedForm* out)
        : group_(radix), K_(K), out_(out) {
        for (int x = 0; x < K; ++x) out->add_rank(x);
    }
    const RankGroup& group() const { return group_; }
    bool intra(int q) const { return q < K_; }
    int model(int q) const { return group_.sub(q, (q / K_) * K_); }

    // A step, `repeat` times in a row, in which every rank x sends `blocks`
    // blocks to send_peer(x), receives as many from recv_peer(x) and
    // combines `reduce` blocks with 2-ary reduces.
    template <typename Send, typename Recv>
    void pair_step(int step, long repeat, long blocks, long reduce, Send send_peer, Recv recv_peer);

    // A step in which every rank has the same loads `own`, its node `nic`,
    // and waits for partners(x) (model ranks, in the order met).
    template <typename Partners>
    void uniform_step(int step, const Own& own, const Nic& nic, Partners partners);

  private:
    int own_id(const Own& o, std::vector<std::pair<Own, int>>* seen);

    RankGroup group_;
    int K_;
    ClosedForm* out_;
};

// Identical loads share one id, which keeps the price table small.
int ClosedForm::NodeZero::own_id(const Own& o, std::vector<std::pair<Own, int>>* seen) {
    auto key = [](const Own& v) {
        return std::array<long, 12>{v.sent[0], v.sent[1], v.recv[0], v.recv[1], v.nsent[0],
                                    v.nsent[1], v.nrecv[0], v.nrecv[1], v.flows_in, v.shift,
                                    v.reduce, v.memory};
    };
    const auto k = key(o);
    for (const auto& s : *seen)
        if (same_own(key(s.first).data(), k.data(), k.size())) return s.second;
    seen->emplace_back(o, out_->add_own(o));
    return seen->back().second;
}

template <typename Send, typename Recv>
void ClosedForm::NodeZero::pair_step(int step, long repeat, long blocks, long reduce,
                                     Send send_peer, Recv recv_peer) {
    Nic nic;
    std::vector<int> sources;
    std::vector<Own> owns(static_cast<size_t>(K_));
    std::vector<std::pair<int, int>> peers(static_cast<size_t>(K_));
    for (int x = 0; x < K_; ++x) {
        const int sp = send_peer(x), rp = recv_peer(x);
        const int cs = intra(sp) ? 0 : 1, cr = intra(rp) ? 0 : 1;
        Own& o = owns[static_cast<size_t>(x)];
        o.sent[cs] = blocks;
        o.nsent[cs] = 1;
        o.recv[cr] = blocks;
        o.nrecv[cr] = 1;
        o.flows_in = cr == 0 ? 1 : 0;
        if (cs == cr && sp != rp) o.shift = static_cast<uint8_t>(1 << cs);
        o.reduce = reduce;
        o.memory = 3 * reduce;
        if (cs == 1) nic.sent += blocks;
        if (cr == 1) {
            nic.recv += blocks;
            sources.push_back(rp / K_);
        }
        peers[static_cast<size_t>(x)] = {model(sp), model(rp)};
    }
    std::sort(sources.begin(), sources.end());
    nic.sources = static_cast<int>(std::unique(sources.begin(), sources.end()) - sources.begin());
    const int nic_id = out_->add_nic(nic);
    const uint32_t first = static_cast<uint32_t>(out_->entries_.size());
    std::vector<std::pair<Own, int>> seen;
    std::vector<uint32_t> ids;
    for (int x = 0; x < K_; ++x)
        ids.push_back(out_->add_entry(x, step, own_id(owns[static_cast<size_t>(x)], &seen), nic_id));
    for (int x = 0; x < K_; ++x) {
        std::vector<uint32_t> p;
        const auto& pr = peers[static_cast<size_t>(x)];
        if (pr.first != x) p.push_back(first + static_cast<uint32_t>(pr.first));
        if (pr.second != x && pr.second != pr.first) p.push_back(first + static_cast<uint32_t>(pr.second));
        out_->set_partners(first + static_cast<uint32_t>(x), p);
    }
    out_->add_phase(repeat, ids);
}

template <typename Partners>
void ClosedForm::NodeZero::uniform_step(int step, const Own& own, const Nic& nic,
                                        Partners partners) {
    const int own_id = out_->add_own(own), nic_id = out_->add_nic(nic);
    const uint32_t first = static_cast<uint32_t>(out_->entries_.size());
    std::vector<uint32_t> ids;
    for (int x = 0; x < K_; ++x) ids.push_back(out_->add_entry(x, step, own_id, nic_id));
    for (int x = 0; x < K_; ++x) {
        std::vector<uint32_t> p;
        for (int m : partners(x)) p.push_back(first + static_cast<uint32_t>(m));
        out_->set_partners(first + static_cast<uint32_t>(x), p);
    }
    out_->add_phase(1, ids);
}

bool ClosedForm::ring(int P, int K, ClosedForm* out) {
    // P − 1 reduce-scatter steps (one block to the right, one from the
    // left, folded in), then P − 1 allgather steps.
    size_t t = 0;
    long g = 0;
    if (!initial_block({P}, K, &t, &g)) return false;
    out->nblocks_ = P;
    NodeZero z({P}, K, out);
    auto next = [P](int x) { return x + 1 < P ? x + 1 : 0; };
    auto prev = [P](int x) { return x > 0 ? x - 1 : P - 1; };
    z.pair_step(0, P - 1, 1, 1, next, prev);
    z.pair_step(P - 1, P - 1, 1, 0, next, prev);
    return true;
}

bool ClosedForm::hcps(const std::vector<int>& factors, int K, ClosedForm* out) {
    // Round i: f_i − 1 peers each way (the same ones: rank x with digit i
    // replaced), len_i = Π_{j>i} f_j blocks each, one f_i-ary reduce of
    // len_i blocks; the allgather rounds mirror them without the reduce.
    // With node 0 = K = F_t·g (F_i = Π_{j<i} f_j): rounds before t stay in
    // the node; round t has g − 1 peers in it and its other peers on f_t/g −
    // 1 nodes, each the translate of the node-0 rank with digit t mod g;
    // later rounds leave the node for f_i − 1 nodes, every peer a translate
    // of the rank itself.
    size_t t = 0;
    long g = 0;
    if (!initial_block(factors, K, &t, &g)) return false;
    const size_t m = factors.size();
    std::vector<long> len(m), F(m);
    long P = 1;
    for (size_t i = 0; i < m; ++i) {
        F[i] = P;
        P *= factors[i];
    }
    for (size_t i = m; i-- > 0;) len[i] = i + 1 < m ? len[i + 1] * factors[i + 1] : 1;
    out->nblocks_ = static_cast<int>(P);
    NodeZero z(factors, K, out);
    auto round = [&](size_t i, int step, bool reduce) {
        const int f = factors[i];
        const long n = len[i];
        const long a = i < t ? f - 1 : i == t ? g - 1 : 0;  // peers in the node
        Own o;
        o.sent[0] = o.recv[0] = a * n;
        o.nsent[0] = o.nrecv[0] = o.flows_in = static_cast<int>(a);
        o.sent[1] = o.recv[1] = (f - 1 - a) * n;
        o.nsent[1] = o.nrecv[1] = static_cast<int>(f - 1 - a);
        if (reduce) {
            o.reduce = (f - 1) * n;
            o.memory = (f + 1) * n;
        }
        Nic nic;
        nic.sent = nic.recv = K * (f - 1 - a) * n;
        nic.sources = static_cast<int>(i < t ? 0 : i == t ? f / g - 1 : f - 1);
        // Partners in the order of the sends (digit d + 1, d + 2, ...).
        z.uniform_step(step, o, nic, [&](int x) {
            std::vector<int> p;
            const int d = static_cast<int>((x / F[i]) % f);
            const long peers = i < t ? f - 1 : i == t ? g - 1 : 0;
            for (long k = 1; k <= peers; ++k) {
                const long c = (d + k) % f;
                p.push_back(static_cast<int>(x + ((i < t ? c : c % g) - d) * F[i]));
            }
            return p;
        });
    };
    for (size_t i = 0; i < m; ++i) round(i, static_cast<int>(i), true);
    for (size_t i = m; i-- > 0;) round(i, static_cast<int>(2 * m - 1 - i), false);
    return true;
}

bool ClosedForm::butterfly(const std::vector<int>& radix, int r, int K, ClosedForm* out) {
    // Factor c is folded in ⌈log2 n_c⌉ steps (c = 0 first): with N live
    // values, a step sends the top ⌊N/2⌋ to rank + d (d = −⌊N/2⌋ in digit
    // c) and receives from rank − d; the distribution replays steps L−r−1..0
    // backwards.  The r-translates J = A_(L−r) are, per digit, one value
    // below the digit folded at step L−r, its N there, and every value
    // above; their widths w_c multiply the digit's own count: a step moves
    // Π_{c'<c} w_c' · min(n_c, ⌊N/2⌋ + w_c − 1) · Π_{c'>c} n_c' blocks and
    // combines as many, or w_c + min(n_c, ⌊N/2⌋ + w_c − 2) in digit c once
    // an odd N has passed in it and N is even (the receive lands beside a
    // kept copy); butterfly.hpp has the construction.
    size_t t = 0;
    long g = 0;
    if (!initial_block(radix, K, &t, &g)) return false;
    struct FoldStep {
        size_t c;
        long N;
    };
    std::vector<FoldStep> fold;
    for (size_t c = 0; c < radix.size(); ++c)
        for (long N = radix[c]; N > 1; N = (N + 1) / 2) fold.push_back({c, N});
    const int L = static_cast<int>(fold.size());
    std::vector<long> w(radix.size(), 1);
    if (r > 0) {
        const FoldStep& f = fold[static_cast<size_t>(L - r)];
        w[f.c] = f.N;
        for (size_t c = f.c + 1; c < radix.size(); ++c) w[c] = radix[c];
    }
    NodeZero z(radix, K, out);
    const RankGroup& grp = z.group();
    out->nblocks_ = grp.order;
    auto above = [&](size_t c) {
        long v = 1;
        for (size_t k = c + 1; k < radix.size(); ++k) v *= radix[k];
        return v;
    };
    std::vector<bool> odd_seen(radix.size(), false);
    for (int i = 0; i < L; ++i) {
        const size_t c = fold[static_cast<size_t>(i)].c;
        const long N = fold[static_cast<size_t>(i)].N, half = N / 2, n = radix[c];
        long below = 1;
        for (size_t k = 0; k < c; ++k) below *= w[k];
        const long sent = std::min(n, half + w[c] - 1);
        const long comb = (N % 2 == 1 || !odd_seen[c])
                              ? sent
                              : w[c] + (half >= 2 ? std::min(n, half + w[c] - 2) : 0);
        odd_seen[c] = odd_seen[c] || N % 2 == 1;
        const int d = static_cast<int>(((n - half) % n) * grp.stride[c]);
        z.pair_step(i, 1, below * sent * above(c), below * comb * above(c),
                    [&](int x) { return grp.add(x, d); }, [&](int x) { return grp.sub(x, d); });
    }
    for (int i = L - r - 1, step = L; i >= 0; --i, ++step) {
        const size_t c = fold[static_cast<size_t>(i)].c;
        const long half = fold[static_cast<size_t>(i)].N / 2, n = radix[c];
        const int d = static_cast<int>(((n - half) % n) * grp.stride[c]);
        z.pair_step(step, 1, half * above(c), 0, [&](int x) { return grp.sub(x, d); },
                    [&](int x) { return grp.add(x, d); });
    }
    return true;
}

void ClosedForm::rb(int P, int K, ClosedForm* out) {
    // The root gathers P − 1 vectors and folds them in one P-ary reduce,
    // then sends P − 1 copies.  Modelled: the root and the first leaf of
    // each kind, in rank order (on the root's node; on a full node of K,
    // whose NIC carries K blocks; on a last node of P mod K).  Every step of
    // the root lasts as long as its busiest leaf (the first one of that
    // cost), which starts no later, so the root ends last.
    out->nblocks_ = 1;
    const int nnodes = (P + K - 1) / K;
    const long inter = P - K;  // leaves off the root's node
    Own root_gather, root_bcast;
    root_gather.recv[0] = K - 1;
    root_gather.nrecv[0] = root_gather.flows_in = K - 1;
    root_gather.recv[1] = inter;
    root_gather.nrecv[1] = static_cast<int>(inter);
    root_gather.reduce = P - 1;
    root_gather.memory = P + 1;
    root_bcast.sent[0] = K - 1;
    root_bcast.nsent[0] = K - 1;
    root_bcast.sent[1] = inter;
    root_bcast.nsent[1] = static_cast<int>(inter);
    Nic node0_gather, node0_bcast;
    node0_gather.recv = inter;
    node0_gather.sources = nnodes - 1;
    node0_bcast.sent = inter;
    const int root = out->add_rank(0);
    const uint32_t rg = out->add_entry(root, 0, out->add_own(root_gather), out->add_nic(node0_gather));
    const uint32_t rbc = out->add_entry(root, 1, out->add_own(root_bcast), out->add_nic(node0_bcast));
    std::vector<uint32_t> leaves_g, leaves_b;
    // A leaf kind: its first rank, and its node's size (0: the root's node).
    auto leaf = [&](int rank, long node_size) {
        const int c = node_size == 0 ? 0 : 1;
        Own g, b;
        g.sent[c] = 1;
        g.nsent[c] = 1;
        b.recv[c] = 1;
        b.nrecv[c] = 1;
        b.flows_in = c == 0 ? 1 : 0;
        Nic ng = node0_gather, nb = node0_bcast;
        if (c == 1) {
            ng = Nic{node_size, 0, 0};
            nb = Nic{0, node_size, 1};
        }
        const int m = out->add_rank(rank);
        leaves_g.push_back(out->add_entry(m, 0, out->add_own(g), out->add_nic(ng)));
        leaves_b.push_back(out->add_entry(m, 1, out->add_own(b), out->add_nic(nb)));
    };
    if (K >= 2) leaf(1, 0);
    if (P / K >= 2) leaf(K, K);
    if (P % K != 0) leaf(K * (P / K), P % K);
    out->set_partners(rg, leaves_g);
    out->set_partners(rbc, leaves_b);
    for (size_t i = 0; i < leaves_g.size(); ++i) {
        out->set_partners(leaves_g[i], {rg});
        out->set_partners(leaves_b[i], {rbc});
    }
    leaves_g.insert(leaves_g.begin(), rg);
    leaves_b.insert(leaves_b.begin(), rbc);
    out->add_phase(1, leaves_g);
    out->add_phase(1, leaves_b);
}

void ClosedForm::folded(long all, const std::function<int(int)>& core, ClosedForm* out) {
    Own give, take, fold_in;
    give.sent[1] = all;
    give.nsent[1] = 1;
    take.recv[1] = all;
    take.nrecv[1] = 1;
    fold_in = take;
    fold_in.reduce = all;
    fold_in.memory = 3 * all;
    const int zero = out->add_rank(0), one = out->add_rank(1);
    const int out_nic = out->add_nic(Nic{all, 0, 0}), in_nic = out->add_nic(Nic{0, all, 1});
    const uint32_t e_give = out->add_entry(zero, 0, out->add_own(give), out_nic);
    const uint32_t e_take = out->add_entry(zero, 1, out->add_own(take), in_nic);
    const uint32_t e_in = out->add_entry(one, 0, out->add_own(fold_in), in_nic);
    out->set_partners(e_give, {e_in});
    out->set_partners(e_in, {e_give});
    out->add_phase(1, {e_give, e_in});
    const int steps = core(one);
    const uint32_t e_out = out->add_entry(one, steps + 1, out->add_own(give), out_nic);
    out->set_partners(e_take, {e_out});
    out->set_partners(e_out, {e_take});
    out->add_phase(1, {e_out, e_take});
}

void ClosedForm::rd(int P, int, ClosedForm* out) {
    // One rank per node.  Rank 1 folds rank 0's vector in (a step as slow
    // as the busier end), exchanges the whole vector log2 p' times pairwise,
    // and rank 0 then receives the result (as slow as the busier end).
    // Folding ranks finish every exchange last: the others start no earlier
    // and their exchanges cost the same, so rank 1's exchanges wait for no
    // one.
    const Fold fold(P);
    const int k = fold.levels;
    out->nblocks_ = 1;
    Own exchange;
    exchange.sent[1] = exchange.nsent[1] = exchange.recv[1] = exchange.nrecv[1] = 1;
    exchange.reduce = 1;
    exchange.memory = 3;
    folded(1, [&](int one) {
        out->add_phase(k, {out->add_entry(one, 1, out->add_own(exchange), out->add_nic(Nic{1, 1, 1}))});
        return k;
    }, out);
}

void ClosedForm::rhd(int P, ClosedForm* out) {
    // One rank per node, as rd: rank 1 folds rank 0's p' blocks in, halves
    // its run k times (step j swaps p'/2^(j+1) blocks and adds the half it
    // keeps), doubles it back k times (received in place), and hands the
    // result to rank 0.  Every core rank moves the same blocks in the same
    // step and the folding ones start last, so rank 1 waits for no one.
    const Fold fold(P);
    const int k = fold.levels;
    out->nblocks_ = fold.p2;
    const long all = fold.p2;
    folded(all, [&](int one) {
        // Swaps of b blocks: steps 1..k halve (b = p'/2 down to 1, each
        // added), steps k+1..2k double (b = 1 up to p'/2).
        for (int s = 1; s <= 2 * k; ++s) {
            const bool halving = s <= k;
            const long b = halving ? all >> s : 1L << (s - k - 1);
            Own swap;
            swap.sent[1] = swap.recv[1] = b;
            swap.nsent[1] = swap.nrecv[1] = 1;
            swap.reduce = halving ? b : 0;
            swap.memory = halving ? 3 * b : 0;
            out->add_phase(1, {out->add_entry(one, s, out->add_own(swap), out->add_nic(Nic{b, b, 1}))});
        }
        return 2 * k;
    }, out);
}

void ClosedForm::folded_all_ranks(int P, int K, const FoldedCore& core, ClosedForm* out) {
    // K ranks per node: a node's NIC carries its ranks' inter-node blocks in
    // their steps of the same index, and nodes mix giving, folding and plain
    // ranks, so every rank is modelled; each of its steps has one peer.
    const Fold fold(P);
    const int n_core = core.steps;
    enum Role { kGive, kTake, kFoldIn, kCore, kUnfold };
    // Step s of rank x: its role, peer q, the peer's matching step and the
    // blocks it moves (core step j: core.blocks(j) each way).
    struct At {
        int role = kCore, q = 0, qs = 0;
        long blocks = 0;
        bool reduces = false;
    };
    auto nsteps = [&](int x) { return fold.gives(x) ? 2 : fold.folds(x) ? n_core + 2 : n_core; };
    auto step_of = [&](int x, int s) {
        At a;
        if (fold.gives(x)) {
            a.role = s == 0 ? kGive : kTake;
            a.q = x + 1;
            a.qs = s == 0 ? 0 : n_core + 1;
            a.blocks = core.all;
            return a;
        }
        const bool folds = fold.folds(x);
        if (folds && (s == 0 || s == n_core + 1)) {
            a.role = s == 0 ? kFoldIn : kUnfold;
            a.q = x - 1;
            a.qs = s == 0 ? 0 : 1;
            a.blocks = core.all;
            a.reduces = s == 0;
            return a;
        }
        const int j = folds ? s - 1 : s;
        a.q = fold.old_rank(fold.new_rank(x) ^ core.distance(j));
        a.qs = j + (fold.folds(a.q) ? 1 : 0);
        a.blocks = core.blocks(j);
        a.reduces = core.reduces(j);
        return a;
    };
    auto sends = [](int role) { return role == kGive || role == kCore || role == kUnfold; };
    auto recvs = [](int role) { return role == kTake || role == kFoldIn || role == kCore; };
    // A step's own load by (role, class, blocks, reduces), interned.
    std::map<std::tuple<int, int, long, bool>, int> own_ids;
    auto own_of = [&](const At& a, int c) {
        const auto key = std::make_tuple(a.role, c, a.blocks, a.reduces);
        auto it = own_ids.find(key);
        if (it != own_ids.end()) return it->second;
        Own o;
        o.sent[c] = sends(a.role) ? a.blocks : 0;
        o.nsent[c] = sends(a.role) ? 1 : 0;
        o.recv[c] = recvs(a.role) ? a.blocks : 0;
        o.nrecv[c] = recvs(a.role) ? 1 : 0;
        o.flows_in = recvs(a.role) && c == 0 ? 1 : 0;
        o.reduce = a.reduces ? a.blocks : 0;
        o.memory = 3 * o.reduce;
        return own_ids.emplace(key, out->add_own(o)).first->second;
    };
    // Each node's NIC per step index, interned by value.
    const int S = n_core + 2, nnodes = (P + K - 1) / K;
    std::vector<int> nic_of(static_cast<size_t>(nnodes) * static_cast<size_t>(S));
    std::map<std::tuple<long, long, int>, int> nic_ids;
    std::vector<int> srcs;
    for (int n = 0; n < nnodes; ++n)
        for (int s = 0; s < S; ++s) {
            Nic nic;
            srcs.clear();
            for (int x = n * K; x < std::min(P, n * K + K); ++x) {
                if (s >= nsteps(x)) continue;
                const At a = step_of(x, s);
                if (a.q / K == n) continue;
                if (sends(a.role)) nic.sent += a.blocks;
                if (recvs(a.role)) {
                    nic.recv += a.blocks;
                    srcs.push_back(a.q / K);
                }
            }
            std::sort(srcs.begin(), srcs.end());
            nic.sources = static_cast<int>(std::unique(srcs.begin(), srcs.end()) - srcs.begin());
            const auto key = std::make_tuple(nic.sent, nic.recv, nic.sources);
            auto it = nic_ids.find(key);
            if (it == nic_ids.end()) it = nic_ids.emplace(key, out->add_nic(nic)).first;
            nic_of[static_cast<size_t>(n) * static_cast<size_t>(S) + static_cast<size_t>(s)] = it->second;
        }
    // Entries rank by rank, one per step; entry first[x] + s.
    std::vector<uint32_t> first(static_cast<size_t>(P) + 1, 0);
    for (int x = 0; x < P; ++x) first[static_cast<size_t>(x) + 1] = first[static_cast<size_t>(x)] + static_cast<uint32_t>(nsteps(x));
    out->entries_.reserve(first.back());
    out->partners_.reserve(first.back());
    for (int x = 0; x < P; ++x) {
        out->add_rank(x);
        for (int s = 0; s < nsteps(x); ++s) {
            const At a = step_of(x, s);
            const uint32_t e = out->add_entry(
                x, s, own_of(a, a.q / K == x / K ? 0 : 1),
                nic_of[static_cast<size_t>(x / K) * static_cast<size_t>(S) + static_cast<size_t>(s)]);
            Entry& en = out->entries_[e];
            en.first_partner = static_cast<uint32_t>(out->partners_.size());
            en.npartners = 1;
            out->partners_.push_back(first[static_cast<size_t>(a.q)] + static_cast<uint32_t>(a.qs));
        }
    }
    // Phases: the fold, each core step, the unfold.
    std::vector<uint32_t> ids;
    for (int x = 0; x < 2 * fold.extra; ++x) ids.push_back(first[static_cast<size_t>(x)]);
    out->add_phase(1, ids);
    for (int j = 0; j < n_core; ++j) {
        ids.clear();
        for (int x = 0; x < P; ++x)
            if (!fold.gives(x)) ids.push_back(first[static_cast<size_t>(x)] + static_cast<uint32_t>(fold.folds(x) ? j + 1 : j));
        out->add_phase(1, ids);
    }
    ids.clear();
    for (int x = 0; x < 2 * fold.extra; ++x)
        ids.push_back(first[static_cast<size_t>(x)] + static_cast<uint32_t>(fold.folds(x) ? n_core + 1 : 1));
    out->add_phase(1, ids);
}

void ClosedForm::rd_all_ranks(int P, int K, ClosedForm* out) {
    // log2 p' exchanges of the whole vector (one block), each added.
    const Fold fold(P);
    FoldedCore core;
    core.steps = fold.levels;
    core.all = 1;
    core.blocks = [](int) { return 1L; };
    core.distance = [](int j) { return 1 << j; };
    core.reduces = [](int) { return true; };
    out->nblocks_ = 1;
    folded_all_ranks(P, K, core, out);
}

void ClosedForm::rhd_all_ranks(int P, int K, bool doubling, ClosedForm* out) {
    // k halving swaps (p'/2^(j+1) blocks, added) at the reduce-scatter's
    // distances, then k doubling ones (2^(j−k) blocks) at them in reverse,
    // as the generator orders them (plan/rhd.cpp).
    const Fold fold(P);
    const int k = fold.levels;
    const long p2 = fold.p2;
    FoldedCore core;
    core.steps = 2 * k;
    core.all = p2;
    core.blocks = [k, p2](int j) { return j < k ? p2 >> (j + 1) : 1L << (j - k); };
    // Reduce-scatter step j's distance: p'/2^(j+1) (halving) or 2^j.
    const auto rs = [k, doubling](int j) { return doubling ? 1 << j : 1 << (k - 1 - j); };
    core.distance = [k, rs](int j) { return j < k ? rs(j) : rs(2 * k - 1 - j); };
    core.reduces = [k](int j) { return j < k; };
    out->nblocks_ = fold.p2;
    folded_all_ranks(P, K, core, out);
}

}  // namespace genx
