// Generalized butterfly generator (construction, cost and the paper's
// errata in butterfly.hpp).
//
// The generator works on the group, not on ranks: it computes the schedule
// of rank 0 as sets of placements (group elements) and emits every rank's
// program by translation (element = rank - placement, written as its block
// label block_of(); peer = rank ± d).  The same engine serves every group
// and every r; nothing below depends on P being prime, odd or a power of
// two.
#include "plan/butterfly.hpp"
#include "plan/symmetry.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace genx {

namespace {

using Group = RankGroup;

// One step of the base (J = {0}) reduction: live placements A, the sent
// ones B ⊆ A, the operator d (B + d ⊆ A \ B).
struct FoldStep {
    std::vector<int> live;  // A_i = {x : digits < factor are 0, digit factor < N}
    std::vector<int> sent;  // B_i
    int d = 0;
    size_t factor = 0;  // the digit being folded
    int N = 1;          // its live values before the step
};

// The translates J as a set: {0} (r = 0), or a fold step's live set.
struct Translates {
    bool zero_only = true;
    size_t factor = 0;
    int N = 1;
};

// J + X as a mask over the group, in O(P + |X|) instead of |J|·|X| (which
// is P²/2 for the latency-optimal r = L).  J's digits below `factor` are
// 0, digit `factor` ranges over [0, N) and the higher digits are free, so
// x + J keeps x's lower digits, covers an interval of N values (cyclic in
// Z_n) of digit `factor` and every value of the higher ones: mark those
// intervals with a difference array along digit `factor`, per value of
// the lower digits, then extend over the free digits.
std::vector<char> sumset(const Group& g, const Translates& J, const std::vector<int>& X) {
    const size_t uP = static_cast<size_t>(g.order);
    std::vector<char> mask(uP, 0);
    if (J.zero_only) {
        for (int x : X) mask[static_cast<size_t>(x)] = 1;
        return mask;
    }
    const int n = g.radix[J.factor];
    const int s = g.stride[J.factor];
    const size_t small = static_cast<size_t>(s) * static_cast<size_t>(n);
    std::vector<char> proj(small, 0);
    for (int x : X) proj[static_cast<size_t>(x) % small] = 1;
    std::vector<char> cover(small, 0);
    std::vector<int> diff(static_cast<size_t>(n) + 1);
    for (int low = 0; low < s; ++low) {
        std::fill(diff.begin(), diff.end(), 0);
        bool any = false;
        for (int t = 0; t < n; ++t) {
            if (!proj[static_cast<size_t>(low + t * s)]) continue;
            any = true;
            const int end = t + J.N;
            ++diff[static_cast<size_t>(t)];
            if (end <= n) {
                --diff[static_cast<size_t>(end)];
            } else {
                --diff[static_cast<size_t>(n)];
                ++diff[0];
                --diff[static_cast<size_t>(end - n)];
            }
        }
        if (!any) continue;
        int run = 0;
        for (int t = 0; t < n; ++t) {
            run += diff[static_cast<size_t>(t)];
            if (run > 0) cover[static_cast<size_t>(low + t * s)] = 1;
        }
    }
    for (size_t y = 0; y < uP; ++y) mask[y] = cover[y % small];
    return mask;
}

// Sorts *b in O(n) when it is a rotation of an ascending list, or of a
// descending one; false (b unchanged) otherwise.
bool sorted_by_rotation(std::vector<int>* b) {
    for (int pass = 0; pass < 2; ++pass) {
        const size_t n = b->size();
        size_t drop = 0;
        bool ok = true;
        for (size_t i = 1; i < n && ok; ++i)
            if ((*b)[i] < (*b)[i - 1]) {
                ok = drop == 0;
                drop = i;
            }
        if (ok && (drop == 0 || b->back() < b->front())) {
            std::rotate(b->begin(), b->begin() + static_cast<long>(drop), b->end());
            return true;
        }
        std::reverse(b->begin(), b->end());
    }
    return false;
}

// The members of X grouped by key(x), in key order.
template <typename Key, typename F>
std::map<Key, std::vector<int>> group_by(const std::vector<int>& X, F key) {
    std::map<Key, std::vector<int>> out;
    for (int x : X) out[key(x)].push_back(x);
    return out;
}

// Folds Z_n1 first; within a factor, the paper's halving (eqs. (18)-(19)
// with the odd-N correction described in butterfly.hpp).
std::vector<FoldStep> fold_schedule(const Group& g) {
    std::vector<FoldStep> steps;
    const int P = g.order;
    for (size_t k = 0; k < g.radix.size(); ++k) {
        for (int N = g.radix[k]; N > 1; N = (N + 1) / 2) {
            FoldStep st;
            const int s = N / 2;
            const int keep = N - s;  // ⌈N/2⌉
            for (int x = 0; x < P; ++x) {
                bool lower_done = true;
                for (size_t l = 0; l < k; ++l) lower_done = lower_done && g.digit(x, l) == 0;
                const int xk = g.digit(x, k);
                if (!lower_done || xk >= N) continue;
                st.live.push_back(x);
                if (xk >= keep) st.sent.push_back(x);
            }
            st.d = ((g.radix[k] - s) % g.radix[k]) * g.stride[k];
            st.factor = k;
            st.N = N;
            steps.push_back(std::move(st));
        }
    }
    return steps;
}

// Rank 0's view of one step; placements, not blocks.
struct AbstractOp {
    BufferId dst;
    BufferId src;
    std::vector<int> placements;
};
struct AbstractStep {
    int d = 0;  // send to rank + d, receive from rank - d
    BufferId send_buf = kResult;
    std::vector<int> send_placements;
    BufferId recv_buf = kResult;
    std::vector<int> recv_placements;
    std::vector<AbstractOp> ops;
};

Status internal(const std::string& what, int P, int step) {
    return Status::internal("butterfly: " + what + " (P=" + std::to_string(P) + ", step " +
                            std::to_string(step) + "); no plan was produced");
}

constexpr BufferId kNowhere = -2;

// Class ids of the normalized base sets S(a) - a, a ∈ live; returns how
// many distinct classes there are.  A distributed vector of the union of
// translates is then (placement, class), and is stored at [class·P + g].
int classify(const Group& g, const std::vector<std::vector<int>>& S, const std::vector<int>& live,
             std::vector<int>* cls) {
    std::map<std::vector<int>, int> ids;
    cls->assign(static_cast<size_t>(g.order), -1);
    std::vector<int> norm;
    for (int a : live) {
        norm.clear();
        for (int s : S[static_cast<size_t>(a)]) norm.push_back(g.sub(s, a));
        // S(a) is sorted, so in the cyclic group S(a) - a is one rotation
        // of a sorted list: linear instead of a sort, which dominated at 10⁵.
        if (g.radix.size() != 1 || !sorted_by_rotation(&norm)) std::sort(norm.begin(), norm.end());
        auto it = ids.emplace(norm, static_cast<int>(ids.size())).first;
        (*cls)[static_cast<size_t>(a)] = it->second;
    }
    return static_cast<int>(ids.size());
}

// The vectors after a step, by [new class, placement]: the old class each
// comes from (-1: none there) and whether it is combined with the received
// vector at its placement (else kept unchanged); and how many new vectors
// use each old vector, by [old class, placement], and each received one.
struct NewVectors {
    std::vector<int> origin;
    std::vector<signed char> combined;
    std::vector<int> old_uses;
    std::vector<int> recv_uses;
};

// Builds the reduction steps for the translates J of the base schedule,
// one fold step at a time.  Between steps it holds the base contribution
// sets S(a), their classes, and the buffer of each live vector.
class Reduction {
  public:
    Reduction(const Group& g, const std::vector<FoldStep>& fold, const Translates& J)
        : g_(g), fold_(fold), J_(J), P_(g.order), uP_(static_cast<size_t>(g.order)) {}

    // On success every vector (j, G), j ∈ J, is in the result buffer.
    Status run(std::vector<AbstractStep>* out) {
        start();
        for (size_t i = 0; i < fold_.size(); ++i) {
            AbstractStep as;
            GENX_RETURN_IF_ERROR(fold_step(i, &as));
            out->push_back(std::move(as));
        }
        return finish();
    }

  private:
    size_t at(int cls, int placement) const {
        return static_cast<size_t>(cls) * uP_ + static_cast<size_t>(placement);
    }

    // The members of X grouped by their current class.
    std::map<int, std::vector<int>> by_class(const std::vector<int>& X) const {
        return group_by<int>(X, [&](int a) { return cls_[static_cast<size_t>(a)]; });
    }

    // Initially S(a) = {a}, and every translate of the first live set sits
    // in the result buffer.
    void start() {
        S_ = std::vector<std::vector<int>>(uP_);
        for (int a = 0; a < P_; ++a) S_[static_cast<size_t>(a)] = {a};
        const std::vector<int> all_live = fold_.empty() ? std::vector<int>{0} : fold_[0].live;
        ncls_ = classify(g_, S_, all_live, &cls_);
        live_.assign(static_cast<size_t>(ncls_) * uP_, kNowhere);
        for (const auto& kv : by_class(all_live)) {
            const std::vector<char> hit = sumset(g_, J_, kv.second);
            for (size_t pl = 0; pl < uP_; ++pl)
                if (hit[pl]) live_[at(kv.first, static_cast<int>(pl))] = kResult;
        }
    }

    // Fold step i: send, receive, advance the sets, combine.
    Status fold_step(size_t i, AbstractStep* as) {
        const FoldStep& st = fold_[i];
        const int step = static_cast<int>(i);
        as->d = st.d;
        GENX_RETURN_IF_ERROR(sends(st, step, as));
        as->recv_buf = free_slot();
        const std::vector<int> next_live =
            i + 1 < fold_.size() ? fold_[i + 1].live : std::vector<int>{0};
        std::vector<int> from(uP_, -1);  // a' -> the a sent onto it
        for (int a : st.sent) from[static_cast<size_t>(g_.add(a, st.d))] = a;
        const std::vector<int> old_cls = cls_;
        const int old_ncls = ncls_;
        advance_sets(next_live, from);
        NewVectors nv;
        GENX_RETURN_IF_ERROR(trace_origins(next_live, from, old_cls, old_ncls, step, &nv));
        std::vector<BufferId> next;
        GENX_RETURN_IF_ERROR(combine(nv, step, as, &next));
        GENX_RETURN_IF_ERROR(check_distinct(next, step));
        live_.swap(next);
        return Status::ok();
    }

    // Sends: every translate's B_i, one message, so one buffer and one
    // vector per placement.
    Status sends(const FoldStep& st, int step, AbstractStep* as) const {
        std::vector<int> sent_cls(uP_, -1);
        for (const auto& kv : by_class(st.sent)) {
            const std::vector<char> hit = sumset(g_, J_, kv.second);
            for (size_t pl = 0; pl < uP_; ++pl) {
                if (!hit[pl]) continue;
                int& sc = sent_cls[pl];
                if (sc >= 0 && sc != kv.first)
                    return internal("two different vectors share a sent placement", P_, step);
                sc = kv.first;
            }
        }
        as->send_buf = kNowhere;
        for (int pl = 0; pl < P_; ++pl) {
            const int c = sent_cls[static_cast<size_t>(pl)];
            if (c < 0) continue;
            const BufferId b = live_[at(c, pl)];
            if (b == kNowhere) return internal("a sent vector is not live", P_, step);
            if (as->send_buf != kNowhere && b != as->send_buf)
                return internal("sent vectors live in different buffers", P_, step);
            as->send_buf = b;
            as->send_placements.push_back(pl);
            as->recv_placements.push_back(g_.add(pl, st.d));
        }
        std::sort(as->recv_placements.begin(), as->recv_placements.end());
        return Status::ok();
    }

    // Receive into the lowest slot that holds nothing live.
    BufferId free_slot() const {
        std::vector<bool> busy;
        for (BufferId b : live_)
            if (b >= 0) {
                if (busy.size() <= static_cast<size_t>(b)) busy.resize(static_cast<size_t>(b) + 1);
                busy[static_cast<size_t>(b)] = true;
            }
        BufferId slot = 0;
        while (static_cast<size_t>(slot) < busy.size() && busy[static_cast<size_t>(slot)]) ++slot;
        return slot;
    }

    // The next step's sets (S(a) joined with the S of the a sent onto it)
    // and classes.
    void advance_sets(const std::vector<int>& next_live, const std::vector<int>& from) {
        std::vector<std::vector<int>> next_S(uP_);
        for (int a : next_live) {
            std::vector<int> s = S_[static_cast<size_t>(a)];
            const int src = from[static_cast<size_t>(a)];
            if (src >= 0) {  // both sorted: merge in linear time
                const auto& more = S_[static_cast<size_t>(src)];
                const auto mid = static_cast<long>(s.size());
                s.insert(s.end(), more.begin(), more.end());
                std::inplace_merge(s.begin(), s.begin() + mid, s.end());
            }
            next_S[static_cast<size_t>(a)] = std::move(s);
        }
        S_.swap(next_S);
        ncls_ = classify(g_, S_, next_live, &cls_);
    }

    // Where each new vector comes from (NewVectors), with cls_ already the
    // new classes.
    Status trace_origins(const std::vector<int>& next_live, const std::vector<int>& from,
                         const std::vector<int>& old_cls, int old_ncls, int step,
                         NewVectors* nv) const {
        const size_t nsize = static_cast<size_t>(ncls_) * uP_;
        nv->origin.assign(nsize, -1);
        nv->combined.assign(nsize, 0);
        nv->old_uses.assign(static_cast<size_t>(old_ncls) * uP_, 0);
        nv->recv_uses.assign(uP_, 0);
        // Keyed by (new class, old class, combined): members of one key
        // land on the same kind of vector at every placement they reach.
        using Key = std::tuple<int, int, bool>;
        const auto keys = group_by<Key>(next_live, [&](int a) {
            return Key{cls_[static_cast<size_t>(a)], old_cls[static_cast<size_t>(a)],
                       from[static_cast<size_t>(a)] >= 0};
        });
        for (const auto& kv : keys) {
            const int nc = std::get<0>(kv.first), oc = std::get<1>(kv.first);
            const bool comb = std::get<2>(kv.first);
            const std::vector<char> hit = sumset(g_, J_, kv.second);
            for (size_t upl = 0; upl < uP_; ++upl) {
                if (!hit[upl]) continue;
                const int pl = static_cast<int>(upl);
                const size_t nk = at(nc, pl);
                if (nv->origin[nk] >= 0) {
                    if (nv->origin[nk] != oc || nv->combined[nk] != comb)
                        return internal("a new vector has two different origins", P_, step);
                    continue;
                }
                nv->origin[nk] = oc;
                nv->combined[nk] = comb;
                ++nv->old_uses[at(oc, pl)];
                if (comb) ++nv->recv_uses[upl];
            }
        }
        return Status::ok();
    }

    // Per class, combine in place into the old vector when nothing else
    // needs it, else into the received copy when only this class uses it.
    // Deciding per class keeps each class in one buffer, which the next
    // step's single send per peer needs.  *next: each new vector's buffer.
    Status combine(const NewVectors& nv, int step, AbstractStep* as,
                   std::vector<BufferId>* next) const {
        next->assign(static_cast<size_t>(ncls_) * uP_, kNowhere);
        std::map<std::pair<BufferId, BufferId>, std::vector<int>> ops;  // (dst, src) -> placements
        for (int c = 0; c < ncls_; ++c) {
            bool any = false, kept = false, in_old = true, in_recv = true;
            for (int pl = 0; pl < P_; ++pl) {
                const size_t nk = at(c, pl);
                if (nv.origin[nk] < 0) continue;
                const BufferId ob = live_[at(nv.origin[nk], pl)];
                if (ob == kNowhere) return internal("a new vector's origin is not live", P_, step);
                if (!nv.combined[nk]) {
                    (*next)[nk] = ob;
                    kept = true;
                    continue;
                }
                any = true;
                in_old = in_old && nv.old_uses[at(nv.origin[nk], pl)] == 1;
                in_recv = in_recv && nv.recv_uses[static_cast<size_t>(pl)] == 1;
            }
            if (!any) continue;
            if (kept) return internal("a class is partly kept and partly combined", P_, step);
            if (!in_old && !in_recv)
                return internal("no buffer can take a combination in place", P_, step);
            for (int pl = 0; pl < P_; ++pl) {
                const size_t nk = at(c, pl);
                if (nv.origin[nk] < 0) continue;
                const BufferId ob = live_[at(nv.origin[nk], pl)];
                const BufferId dst = in_old ? ob : as->recv_buf;
                ops[{dst, in_old ? as->recv_buf : ob}].push_back(pl);
                (*next)[nk] = dst;
            }
        }
        for (auto& op : ops)
            as->ops.push_back(AbstractOp{op.first.first, op.first.second, std::move(op.second)});
        return Status::ok();
    }

    // Two vectors at one placement must sit in different buffers.
    Status check_distinct(const std::vector<BufferId>& next, int step) const {
        for (int pl = 0; pl < P_; ++pl)
            for (int c1 = 0; c1 < ncls_; ++c1)
                for (int c2 = c1 + 1; c2 < ncls_; ++c2)
                    if (next[at(c1, pl)] != kNowhere && next[at(c1, pl)] == next[at(c2, pl)])
                        return internal("two live vectors share a buffer block", P_, step);
        return Status::ok();
    }

    // The reduction ends with the full sum, in the result buffer.
    Status finish() const {
        if (S_[0].size() != uP_)
            return internal("the reduction does not end with the full sum", P_,
                            static_cast<int>(fold_.size()));
        for (BufferId b : live_)
            if (b != kNowhere && b != kResult)
                return internal("the reduction does not end in the result buffer", P_,
                                static_cast<int>(fold_.size()));
        return Status::ok();
    }

    const Group& g_;
    const std::vector<FoldStep>& fold_;
    const Translates& J_;
    const int P_;
    const size_t uP_;
    std::vector<std::vector<int>> S_;  // base contribution sets S(a), a ∈ A_i
    std::vector<int> cls_;             // class of each live a (classify)
    int ncls_ = 0;
    std::vector<BufferId> live_;  // buffer of each vector, by [class, placement]
};

// Builds the reduction steps for the translates J of the base schedule.
// On return every vector (j, G), j ∈ J, is in the result buffer.
Status reduction_steps(const Group& g, const std::vector<FoldStep>& fold, const Translates& J,
                       std::vector<AbstractStep>* out) {
    return Reduction(g, fold, J).run(out);
}

// ---------------------------------------------------------------- params

Status parse_group(const std::string& text, int P, std::vector<int>* radix) {
    radix->clear();
    if (text == "cyclic") {
        radix->push_back(P);
        return Status::ok();
    }
    if (text == "xor") {
        int n = P;
        while (n > 1 && n % 2 == 0) {
            radix->push_back(2);
            n /= 2;
        }
        if (n != 1)
            return Status::invalid(
                "butterfly: group=xor needs a power-of-two number of ranks, "
                "got P=" +
                std::to_string(P) + "; use group=cyclic (any P) instead");
        return Status::ok();
    }
    std::vector<int> factors;
    Status st = parse_factors(text, &factors);
    long long product = 1;
    for (int f : factors) {
        if (!st) break;
        if (f < 2 || f > P)
            st = Status::invalid("factor " + std::to_string(f) + " is outside 2.." +
                                 std::to_string(P));
        product *= f;
        if (product > P) break;
    }
    if (!st)
        return Status::invalid("butterfly: group='" + text + "': " + st.message() +
                               "; expected cyclic, xor or factors >= 2 joined by 'x' (e.g. 4x3)");
    if (product != P)
        return Status::invalid("butterfly: group='" + text + "' has order " +
                               std::to_string(product) + " but there are P=" + std::to_string(P) +
                               " ranks; the factors must multiply to P");
    *radix = std::move(factors);
    return Status::ok();
}

// L = Σ ⌈log2 ni⌉: the reduction's step count (one halving per step).
int fold_steps(const std::vector<int>& radix) {
    int L = 0;
    for (int n : radix)
        for (int N = n; N > 1; N = (N + 1) / 2) ++L;
    return L;
}

// The rank-independent part: rank 0's schedule as placements.
struct Schedule {
    Group group;
    std::vector<AbstractStep> steps;
    // block_of() of every element: a program's block lists are read off
    // it (a digit loop per block otherwise, P blocks a step at r = L).
    std::vector<int> block;
};

}  // namespace

Status prepare_butterfly(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("butterfly: number of ranks must be >= 1, got " + std::to_string(P));
    const ParamMap& params = req.params;

    // Default group: xor where P is a power of two, so that every step is a
    // pairwise exchange (one peer per step, as recursive doubling); the
    // cyclic group's steps send to rank + d and receive from rank - d, two
    // peers, slower per step (docs/model.md, "Shift steps").  Cyclic for
    // every other P.
    auto git = params.find("group");
    const bool pow2 = P >= 2 && (P & (P - 1)) == 0;
    const std::string group_name = git != params.end() ? git->second : pow2 ? "xor" : "cyclic";
    std::vector<int> radix;
    GENX_RETURN_IF_ERROR(parse_group(group_name, P, &radix));
    auto sched = std::make_shared<Schedule>();
    sched->group = Group(radix);
    sched->block.resize(static_cast<size_t>(P));
    for (int x = 0; x < P; ++x) sched->block[static_cast<size_t>(x)] = sched->group.block_of(x);
    const Group& group = sched->group;
    const std::vector<FoldStep> fold = fold_schedule(group);
    const int L = static_cast<int>(fold.size());

    auto rit = params.find("r");
    const std::string r_text = rit == params.end() ? "0" : rit->second;
    long v = 0;
    if (!parse_int_in(r_text, 0, L, &v))
        return Status::invalid("butterfly: r='" + r_text + "' must be an integer 0.." +
                               std::to_string(L) + " for P=" + std::to_string(P) +
                               " with group=" + group_name +
                               " (the selector picks r with the cost model)");
    const int r = static_cast<int>(v);

    // Translates needed: the base schedule's live placements r steps before
    // the end of the reduction.
    Translates J;
    if (r > 0) {
        J.zero_only = false;
        J.factor = fold[static_cast<size_t>(L - r)].factor;
        J.N = fold[static_cast<size_t>(L - r)].N;
    }

    std::vector<AbstractStep>& steps = sched->steps;
    GENX_RETURN_IF_ERROR(reduction_steps(group, fold, J, &steps));
    // Distribution: the base steps L-r-1..0 backwards, in the result buffer.
    for (int i = L - r - 1; i >= 0; --i) {
        const FoldStep& st = fold[static_cast<size_t>(i)];
        AbstractStep as;
        as.d = group.neg(st.d);
        for (int a : st.sent) {
            as.send_placements.push_back(group.add(a, st.d));
            as.recv_placements.push_back(a);
        }
        steps.push_back(std::move(as));
    }

    RankGenerator g;
    g.header.algorithm = "butterfly";
    g.header.params = "group=" + group_name + ",r=" + std::to_string(r);
    g.header.nranks = P;
    g.header.nblocks = P;
    g.header.order_preserving = P == 1;
    // Every rank runs rank 0's schedule translated by itself.
    g.header.symmetry = radix;
    g.header.representatives = {0};
    g.emit = [sched](int p, Program* prog) {
        const Group& grp = sched->group;
        // Block lists in ascending order, so consecutive blocks form one run
        // on the wire.  Long lists (latency-optimal steps move ~P blocks)
        // are sorted by marking, which keeps a program linear in its size.
        std::vector<char> mark;
        auto blocks_of = [&](const std::vector<int>& placements) {
            std::vector<int> b(placements.size());
            const std::vector<int>& block = sched->block;
            for (size_t i = 0; i < b.size(); ++i)
                b[i] = block[static_cast<size_t>(grp.sub(p, placements[i]))];
            // Placements are ascending, so for the cyclic group the labels
            // p - pl descend with one wrap: reversed and rotated they are
            // sorted, in O(n).  Other groups: mark them when they are dense
            // in their range (xor's are aligned ranges, permuted), else sort.
            if (!grp.binary && sorted_by_rotation(&b)) return b;
            if (b.empty()) return b;
            const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
            const int first = *lo, span = *hi - *lo + 1;
            if (static_cast<size_t>(span) > 8 * b.size()) {
                std::sort(b.begin(), b.end());
                return b;
            }
            mark.assign(static_cast<size_t>(span), 0);
            for (int x : b) mark[static_cast<size_t>(x - first)] = 1;
            size_t k = 0;  // the blocks are distinct: b keeps its size
            for (int x = 0; x < span; ++x)
                if (mark[static_cast<size_t>(x)] != 0) b[k++] = first + x;
            return b;
        };
        prog->steps.reserve(prog->steps.size() + sched->steps.size());
        for (const AbstractStep& as : sched->steps) {
            Step st;
            st.recvs.push_back(Transfer{grp.sub(p, as.d), blocks_of(as.recv_placements), as.recv_buf});
            st.sends.push_back(Transfer{grp.add(p, as.d), blocks_of(as.send_placements), as.send_buf});
            for (const AbstractOp& op : as.ops)
                st.ops.push_back(LocalOp{OpKind::Reduce, op.dst, {op.src}, blocks_of(op.placements)});
            prog->steps.push_back(std::move(st));
        }
    };
    *out = std::move(g);
    return Status::ok();
}

// Every r for xor when P is a power of two, for the cyclic group, and for
// ppn x (P/ppn) when the ranks per node divide P (its first factor stays on
// the node).  xor comes first: the model prices it as the cyclic group
// (same steps and bytes), and the selector keeps the first of equal
// candidates, so ties go to pairwise exchanges, measured faster.
void butterfly_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    const int P = ctx.nranks;
    std::vector<std::string> groups;
    if (P >= 2 && (P & (P - 1)) == 0) groups.push_back("xor");
    groups.push_back("cyclic");
    const int ppn = ctx.ranks_per_node;
    if (ppn > 1 && ppn < P && P % ppn == 0)
        groups.push_back(std::to_string(ppn) + "x" + std::to_string(P / ppn));
    for (const std::string& g : groups) {
        std::vector<int> radix;
        if (!parse_group(g, P, &radix)) continue;
        const int L = fold_steps(radix);
        for (int r = 0; r <= L; ++r) out->push_back("group=" + g + ",r=" + std::to_string(r));
    }
}

}  // namespace genx
