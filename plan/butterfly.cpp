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

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace genx {

namespace {

// Finite abelian group Z_n1 × ... × Z_nk; element x is the rank
// x1 + n1·(x2 + n2·(...)).
struct Group {
    std::vector<int> radix;
    std::vector<int> stride;
    int order = 1;
    bool binary = true;  // all factors 2: + is XOR

    explicit Group(std::vector<int> r) : radix(std::move(r)) {
        for (int n : radix) {
            stride.push_back(order);
            order *= n;
            binary = binary && n == 2;
        }
    }
    int digit(int x, size_t k) const { return (x / stride[k]) % radix[k]; }
    int add(int a, int b) const {
        if (binary) return a ^ b;
        if (radix.size() == 1) return a + b < order ? a + b : a + b - order;
        int out = 0;
        for (size_t k = 0; k < radix.size(); ++k)
            out += ((digit(a, k) + digit(b, k)) % radix[k]) * stride[k];
        return out;
    }
    int neg(int a) const {
        if (binary) return a;
        if (radix.size() == 1) return (order - a) % order;
        int out = 0;
        for (size_t k = 0; k < radix.size(); ++k)
            out += ((radix[k] - digit(a, k)) % radix[k]) * stride[k];
        return out;
    }
    // Block index of element x: its digits reversed (x1 most significant).
    // The reduction folds Z_n1 first, so every step's block set is then one
    // range of indices (two where a cyclic range wraps) and goes on the
    // wire as one or two messages; with x1 least significant the sets would
    // be strided, one message per block.  For xor this is the bit reversal
    // of recursive halving with distance 1 first.
    int block_of(int x) const {
        if (radix.size() <= 1) return x;
        int out = 0;
        for (size_t k = 0; k < radix.size(); ++k) out = out * radix[k] + digit(x, k);
        return out;
    }
    int sub(int a, int b) const {
        if (binary) return a ^ b;
        if (radix.size() == 1) return a >= b ? a - b : a - b + order;
        return add(a, neg(b));
    }
};

// One step of the base (J = {0}) reduction: live placements A, the sent
// ones B ⊆ A, the operator d (B + d ⊆ A \ B).
struct FoldStep {
    std::vector<int> live;  // A_i
    std::vector<int> sent;  // B_i
    int d = 0;
};

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
    for (int a : live) {
        std::vector<int> norm;
        for (int s : S[static_cast<size_t>(a)]) norm.push_back(g.sub(s, a));
        std::sort(norm.begin(), norm.end());
        auto it = ids.emplace(std::move(norm), static_cast<int>(ids.size())).first;
        (*cls)[static_cast<size_t>(a)] = it->second;
    }
    return static_cast<int>(ids.size());
}

// Builds the reduction steps for the translates J of the base schedule.
// On return every vector (j, G), j ∈ J, is in the result buffer.
Status reduction_steps(const Group& g, const std::vector<FoldStep>& fold, const std::vector<int>& J,
                       std::vector<AbstractStep>* out) {
    const int P = g.order;
    const size_t uP = static_cast<size_t>(P);
    auto at = [uP](int cls, int placement) {
        return static_cast<size_t>(cls) * uP + static_cast<size_t>(placement);
    };
    // Base contribution sets S(a) for a ∈ A_i; initially S(a) = {a}.
    std::vector<std::vector<int>> S(uP);
    for (int a = 0; a < P; ++a) S[static_cast<size_t>(a)] = {a};
    const std::vector<int> all_live = fold.empty() ? std::vector<int>{0} : fold[0].live;

    std::vector<int> cls;
    int ncls = classify(g, S, all_live, &cls);
    std::vector<BufferId> live(static_cast<size_t>(ncls) * uP, kNowhere);
    for (int j : J)
        for (int a : all_live) live[at(cls[static_cast<size_t>(a)], g.add(j, a))] = kResult;

    for (size_t i = 0; i < fold.size(); ++i) {
        const FoldStep& st = fold[i];
        const int step = static_cast<int>(i);
        AbstractStep as;
        as.d = st.d;

        // Sends: every translate's B_i, one message, so one buffer and one
        // vector per placement.
        std::vector<int> sent_cls(uP, -1);
        for (int j : J)
            for (int a : st.sent) {
                const int pl = g.add(j, a), c = cls[static_cast<size_t>(a)];
                int& sc = sent_cls[static_cast<size_t>(pl)];
                if (sc >= 0 && sc != c)
                    return internal("two different vectors share a sent placement", P, step);
                sc = c;
            }
        as.send_buf = kNowhere;
        for (int pl = 0; pl < P; ++pl) {
            const int c = sent_cls[static_cast<size_t>(pl)];
            if (c < 0) continue;
            const BufferId b = live[at(c, pl)];
            if (b == kNowhere) return internal("a sent vector is not live", P, step);
            if (as.send_buf != kNowhere && b != as.send_buf)
                return internal("sent vectors live in different buffers", P, step);
            as.send_buf = b;
            as.send_placements.push_back(pl);
            as.recv_placements.push_back(g.add(pl, st.d));
        }
        std::sort(as.recv_placements.begin(), as.recv_placements.end());

        // Receive into the lowest slot that holds nothing live.
        std::vector<bool> busy;
        for (BufferId b : live)
            if (b >= 0) {
                if (busy.size() <= static_cast<size_t>(b)) busy.resize(static_cast<size_t>(b) + 1);
                busy[static_cast<size_t>(b)] = true;
            }
        as.recv_buf = 0;
        while (static_cast<size_t>(as.recv_buf) < busy.size() &&
               busy[static_cast<size_t>(as.recv_buf)])
            ++as.recv_buf;

        // The next step's sets and classes.
        const std::vector<int> next_live =
            i + 1 < fold.size() ? fold[i + 1].live : std::vector<int>{0};
        std::vector<int> from(uP, -1);  // a' -> the a sent onto it
        for (int a : st.sent) from[static_cast<size_t>(g.add(a, st.d))] = a;
        std::vector<std::vector<int>> next_S(uP);
        for (int a : next_live) {
            std::vector<int> s = S[static_cast<size_t>(a)];
            const int src = from[static_cast<size_t>(a)];
            if (src >= 0) {
                const auto& more = S[static_cast<size_t>(src)];
                s.insert(s.end(), more.begin(), more.end());
                std::sort(s.begin(), s.end());
            }
            next_S[static_cast<size_t>(a)] = std::move(s);
        }
        const std::vector<int> old_cls = cls;
        const int old_ncls = ncls;
        S.swap(next_S);
        ncls = classify(g, S, next_live, &cls);

        // New vectors, by [new class, placement]: the old class they come
        // from, and whether they are combined with the received vector at
        // their placement (else kept unchanged).
        const size_t nsize = static_cast<size_t>(ncls) * uP;
        std::vector<int> origin(nsize, -1);
        std::vector<signed char> combined(nsize, 0);
        std::vector<int> old_uses(static_cast<size_t>(old_ncls) * uP, 0);
        std::vector<int> recv_uses(uP, 0);
        for (int j : J)
            for (int a : next_live) {
                const int pl = g.add(j, a);
                const size_t nk = at(cls[static_cast<size_t>(a)], pl);
                const int oc = old_cls[static_cast<size_t>(a)];
                const bool comb = from[static_cast<size_t>(a)] >= 0;
                if (origin[nk] >= 0) {
                    if (origin[nk] != oc || combined[nk] != comb)
                        return internal("a new vector has two different origins", P, step);
                    continue;
                }
                origin[nk] = oc;
                combined[nk] = comb;
                ++old_uses[at(oc, pl)];
                if (comb) ++recv_uses[static_cast<size_t>(pl)];
            }

        // Per class, combine in place into the old vector when nothing else
        // needs it, else into the received copy when only this class uses
        // it.  Deciding per class keeps each class in one buffer, which the
        // next step's single send per peer needs.
        std::vector<BufferId> next(nsize, kNowhere);
        std::map<std::pair<BufferId, BufferId>, std::vector<int>> ops;  // (dst, src) -> placements
        for (int c = 0; c < ncls; ++c) {
            bool any = false, kept = false, in_old = true, in_recv = true;
            for (int pl = 0; pl < P; ++pl) {
                const size_t nk = at(c, pl);
                if (origin[nk] < 0) continue;
                const BufferId ob = live[at(origin[nk], pl)];
                if (ob == kNowhere) return internal("a new vector's origin is not live", P, step);
                if (!combined[nk]) {
                    next[nk] = ob;
                    kept = true;
                    continue;
                }
                any = true;
                in_old = in_old && old_uses[at(origin[nk], pl)] == 1;
                in_recv = in_recv && recv_uses[static_cast<size_t>(pl)] == 1;
            }
            if (!any) continue;
            if (kept) return internal("a class is partly kept and partly combined", P, step);
            if (!in_old && !in_recv)
                return internal("no buffer can take a combination in place", P, step);
            for (int pl = 0; pl < P; ++pl) {
                const size_t nk = at(c, pl);
                if (origin[nk] < 0) continue;
                const BufferId ob = live[at(origin[nk], pl)];
                const BufferId dst = in_old ? ob : as.recv_buf;
                ops[{dst, in_old ? as.recv_buf : ob}].push_back(pl);
                next[nk] = dst;
            }
        }
        for (auto& op : ops)
            as.ops.push_back(AbstractOp{op.first.first, op.first.second, std::move(op.second)});

        // Two vectors at one placement must sit in different buffers.
        for (int pl = 0; pl < P; ++pl)
            for (int c1 = 0; c1 < ncls; ++c1)
                for (int c2 = c1 + 1; c2 < ncls; ++c2)
                    if (next[at(c1, pl)] != kNowhere && next[at(c1, pl)] == next[at(c2, pl)])
                        return internal("two live vectors share a buffer block", P, step);
        live.swap(next);
        out->push_back(std::move(as));
    }

    if (S[0].size() != uP)
        return internal("the reduction does not end with the full sum", P,
                        static_cast<int>(fold.size()));
    for (BufferId b : live)
        if (b != kNowhere && b != kResult)
            return internal("the reduction does not end in the result buffer", P,
                            static_cast<int>(fold.size()));
    return Status::ok();
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
    long long product = 1;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t x = text.find('x', pos);
        if (x == std::string::npos) x = text.size();
        const std::string f = text.substr(pos, x - pos);
        pos = x + 1;
        char* end = nullptr;
        errno = 0;
        const long v = f.empty() ? 0 : std::strtol(f.c_str(), &end, 10);
        if (f.empty() || errno != 0 || *end != '\0' || v < 2 || v > P)
            return Status::invalid("butterfly: group='" + text + "' has factor '" + f +
                                   "'; expected cyclic, xor or factors >= 2 joined by 'x' "
                                   "(e.g. 4x3)");
        radix->push_back(static_cast<int>(v));
        product *= v;
        if (product > P) break;
    }
    if (product != P)
        return Status::invalid("butterfly: group='" + text + "' has order " +
                               std::to_string(product) + " but there are P=" + std::to_string(P) +
                               " ranks; the factors must multiply to P");
    return Status::ok();
}

Status parse_double(const ParamMap& params, const std::string& key, double def, double* out) {
    auto it = params.find(key);
    if (it == params.end()) {
        *out = def;
        return Status::ok();
    }
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(it->second.c_str(), &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0)
        return Status::invalid("butterfly: " + key + "='" + it->second +
                               "' is not a non-negative number (seconds, or seconds per byte)");
    *out = v;
    return Status::ok();
}

// The paper's predicted time for r: eq. (36) for r < L, eq. (44) for r = L.
double paper_time(int r, int L, int P, double m, double alpha, double beta, double gamma) {
    const double u = m / P;
    if (r >= L) return L * alpha + P * L * u * beta + P * (2.0 * L - 2.0) * u * gamma;
    const double extra = std::ldexp(1.0, r) - 1.0;
    return (2.0 * L - r) * alpha + (2.0 * (P - 1) + extra * (L - 1)) * u * beta +
           ((P - 1) + extra * (2.0 * L - 2.0)) * u * gamma;
}

// Eq. (37): the stationary point of (36), whose two integer neighbours in
// [0, L-1] are the best r < L because (36) is convex in r; then the cheaper
// of those and r = L, priced by (44).
int auto_r(int L, int P, double m, double alpha, double beta, double gamma) {
    if (L == 0) return 0;
    std::vector<int> candidates = {L};
    if (L == 1 || alpha == 0) {
        // (37) is undefined (L - 1 = 0, or log 0); the only r < L worth
        // pricing is 0 (for alpha = 0, (36) only grows with r).
        candidates.push_back(0);
    } else if (m > 0) {
        const double r_star = std::log2(alpha / (m * (beta + 2.0 * gamma))) +
                              std::log2(P / ((L - 1) * std::log(2.0)));
        const double c = std::min(std::max(r_star, 0.0), static_cast<double>(L - 1));
        candidates.push_back(static_cast<int>(std::floor(c)));
        candidates.push_back(static_cast<int>(std::ceil(c)));
    }
    int best = candidates[0];
    for (int r : candidates)
        if (paper_time(r, L, P, m, alpha, beta, gamma) <
            paper_time(best, L, P, m, alpha, beta, gamma))
            best = r;
    return best;
}

}  // namespace

Status generate_butterfly(const GenRequest& req, Plan* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("butterfly: number of ranks must be >= 1, got " + std::to_string(P));
    const ParamMap& params = req.params;

    auto git = params.find("group");
    const std::string group_name = git == params.end() ? "cyclic" : git->second;
    std::vector<int> radix;
    GENX_RETURN_IF_ERROR(parse_group(group_name, P, &radix));
    const Group group(radix);
    const std::vector<FoldStep> fold = fold_schedule(group);
    const int L = static_cast<int>(fold.size());

    auto rit = params.find("r");
    const std::string r_text = rit == params.end() ? "0" : rit->second;
    int r = 0;
    if (r_text == "auto") {
        auto bit = params.find("bytes");
        if (bit == params.end())
            return Status::invalid(
                "butterfly: r=auto needs bytes=<message size> (e.g. bytes=64K) "
                "to evaluate eq. (37)");
        size_t bytes = 0;
        GENX_RETURN_IF_ERROR(parse_size(bit->second, &bytes));
        double alpha, beta, gamma;
        GENX_RETURN_IF_ERROR(parse_double(params, "alpha", 3e-5, &alpha));
        GENX_RETURN_IF_ERROR(parse_double(params, "beta", 1e-8, &beta));
        GENX_RETURN_IF_ERROR(parse_double(params, "gamma", 2e-10, &gamma));
        if (beta + 2 * gamma <= 0)
            return Status::invalid("butterfly: r=auto needs beta + 2*gamma > 0");
        r = auto_r(L, P, static_cast<double>(bytes), alpha, beta, gamma);
    } else {
        for (const char* k : {"bytes", "alpha", "beta", "gamma"})
            if (params.count(k) != 0)
                return Status::invalid(std::string("butterfly: ") + k +
                                       " only applies with r=auto (r=" + r_text + " was given)");
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(r_text.c_str(), &end, 10);
        if (r_text.empty() || errno != 0 || *end != '\0' || v < 0 || v > L)
            return Status::invalid("butterfly: r='" + r_text + "' must be auto or an integer 0.." +
                                   std::to_string(L) + " for P=" + std::to_string(P) +
                                   " with group=" + group_name);
        r = static_cast<int>(v);
    }

    // Translates needed: the base schedule's live placements r steps before
    // the end of the reduction.
    const std::vector<int> J = r == 0 ? std::vector<int>{0} : fold[static_cast<size_t>(L - r)].live;

    std::vector<AbstractStep> steps;
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

    Plan plan;
    plan.algorithm = "butterfly";
    plan.params = "group=" + group_name + ",r=" + std::to_string(r);
    plan.nranks = P;
    plan.nblocks = P;
    plan.order_preserving = P == 1;
    plan.programs.resize(static_cast<size_t>(P));
    // Block lists in ascending order, so consecutive blocks form one run on
    // the wire.  Long lists (latency-optimal steps move ~P blocks) are
    // sorted by marking, which keeps generation linear in the plan's size.
    std::vector<char> mark(static_cast<size_t>(P), 0);
    auto blocks_of = [&](int rank, const std::vector<int>& placements) {
        std::vector<int> b;
        b.reserve(placements.size());
        if (placements.size() * 8 < static_cast<size_t>(P)) {
            for (int pl : placements) b.push_back(group.block_of(group.sub(rank, pl)));
            std::sort(b.begin(), b.end());
            return b;
        }
        for (int pl : placements)
            mark[static_cast<size_t>(group.block_of(group.sub(rank, pl)))] = 1;
        for (int x = 0; x < P; ++x)
            if (mark[static_cast<size_t>(x)] != 0) {
                b.push_back(x);
                mark[static_cast<size_t>(x)] = 0;
            }
        return b;
    };
    for (int p = 0; p < P; ++p) {
        std::vector<Step>& prog = plan.programs[static_cast<size_t>(p)].steps;
        for (const AbstractStep& as : steps) {
            Step st;
            st.recvs.push_back(
                Transfer{group.sub(p, as.d), blocks_of(p, as.recv_placements), as.recv_buf});
            st.sends.push_back(
                Transfer{group.add(p, as.d), blocks_of(p, as.send_placements), as.send_buf});
            for (const AbstractOp& op : as.ops)
                st.ops.push_back(
                    LocalOp{OpKind::Reduce, op.dst, {op.src}, blocks_of(p, op.placements)});
            prog.push_back(std::move(st));
        }
    }
    finalize(plan);
    *out = std::move(plan);
    return Status::ok();
}

}  // namespace genx
