// Closed-form prices (contract and derivations in closed_form.hpp).
#include "tuning/closed_form.hpp"

#include <algorithm>
#include <limits>

#include "plan/fold.hpp"
#include "plan/hcps.hpp"
#include "tuning/step_price.hpp"

namespace genx {

namespace {

bool only_keys(const ParamMap& params, std::initializer_list<const char*> keys) {
    for (const auto& kv : params) {
        bool known = false;
        for (const char* k : keys) known = known || kv.first == k;
        if (!known) return false;
    }
    return true;
}

}  // namespace

bool ClosedForm::make(const std::string& algorithm, const ParamMap& params, int nranks,
                      const RankMap& ranks, ClosedForm* out) {
    // One rank per node, no topology: every transfer between two NICs of
    // their own.
    if (!ranks.node.empty() || ranks.direct || ranks.tree || nranks < 2) return false;
    const int P = nranks;
    ClosedForm cf;
    if (algorithm == "ring" && params.empty()) {
        ring(P, &cf);
    } else if (algorithm == "cps" && params.empty()) {
        hcps({P}, &cf);
    } else if (algorithm == "hcps" && only_keys(params, {"factors"})) {
        std::vector<int> factors;
        auto it = params.find("factors");
        if (it == params.end()) {
            factors = default_hcps_factors(P);
        } else if (!parse_factors(it->second, &factors)) {
            return false;
        }
        long long product = 1;
        for (int f : factors) {
            if (f < 2) return false;
            product *= f;
            if (product > P) return false;
        }
        if (product != P) return false;
        hcps(factors, &cf);
    } else if (algorithm == "rb" && only_keys(params, {"root"})) {
        // Root 0 only: another root puts a leaf first in rank order, which
        // changes the critical path's labels.
        auto it = params.find("root");
        if (it != params.end() && it->second != "0") return false;
        rb(P, &cf);
    } else if (algorithm == "rd" && params.empty()) {
        if ((P & (P - 1)) == 0) return false;  // symmetric: the quotient prices it
        rd(P, &cf);
    } else if (algorithm == "butterfly" && only_keys(params, {"r", "group"})) {
        const bool pow2 = (P & (P - 1)) == 0;
        auto git = params.find("group");
        const std::string group = git != params.end() ? git->second : pow2 ? "xor" : "cyclic";
        if (group != "cyclic") return false;
        int L = 0;
        for (int N = P; N > 1; N = (N + 1) / 2) ++L;
        long r = 0;
        auto rit = params.find("r");
        if (rit != params.end() && !parse_int_in(rit->second, 0, L, &r)) return false;
        butterfly(P, static_cast<int>(r), &cf);
    } else {
        return false;
    }
    *out = std::move(cf);
    return true;
}

void ClosedForm::ring(int P, ClosedForm* out) {
    // P − 1 reduce-scatter steps (one block from the left, one to the
    // right, folded in), then P − 1 allgather steps; a shift unless P = 2.
    out->nblocks_ = P;
    Step s;
    s.own = Links{1, 1, 1, 1, 1, P > 2, 0, 0};
    s.reduce = 1;
    s.memory = 3;
    s.repeat = P - 1;
    out->steps_.push_back(s);
    s.own.step = P - 1;
    s.reduce = s.memory = 0;
    out->steps_.push_back(s);
}

void ClosedForm::hcps(const std::vector<int>& factors, ClosedForm* out) {
    // Round i: f_i − 1 peers each way (the same ones), len_i = Π_{j>i} f_j
    // blocks each, one f_i-ary reduce of len_i blocks; the allgather rounds
    // mirror them without the reduce.
    long P = 1;
    for (int f : factors) P *= f;
    out->nblocks_ = static_cast<int>(P);
    const int m = static_cast<int>(factors.size());
    std::vector<long> len(static_cast<size_t>(m));
    for (long i = m - 1, w = 1; i >= 0; --i) {
        len[static_cast<size_t>(i)] = w;
        w *= factors[static_cast<size_t>(i)];
    }
    auto round = [&](int i, int step, bool reduce) {
        const int f = factors[static_cast<size_t>(i)];
        const long n = len[static_cast<size_t>(i)];
        Step s;
        s.own = Links{(f - 1) * n, (f - 1) * n, f - 1, f - 1, f - 1, false, 0, step};
        if (reduce) {
            s.reduce = (f - 1) * n;
            s.memory = (f + 1) * n;
        }
        out->steps_.push_back(s);
    };
    for (int i = 0; i < m; ++i) round(i, i, true);
    for (int i = m - 1; i >= 0; --i) round(i, 2 * m - 1 - i, false);
}

void ClosedForm::rb(int P, ClosedForm* out) {
    // The root gathers P − 1 vectors and folds them in one P-ary reduce,
    // then sends P − 1 copies; each step lasts as long as the busier of the
    // root and a leaf (rank 1, the first it posts to).
    out->nblocks_ = 1;
    Step gather;
    gather.own = Links{0, P - 1, 0, P - 1, P - 1, false, 0, 0};
    gather.has_partner = true;
    gather.partner = Links{1, 0, 1, 0, 0, false, 1, 0};
    gather.reduce = P - 1;
    gather.memory = P + 1;
    out->steps_.push_back(gather);
    Step bcast;
    bcast.own = Links{P - 1, 0, P - 1, 0, 0, false, 0, 1};
    bcast.has_partner = true;
    bcast.partner = Links{0, 1, 0, 1, 1, false, 1, 1};
    out->steps_.push_back(bcast);
}

void ClosedForm::rd(int P, ClosedForm* out) {
    // Rank 1 folds rank 0's vector in (a step as slow as the busier end),
    // exchanges the whole vector log2 p' times pairwise, and rank 0 then
    // receives the result (as slow as the busier end: rank 1's send).
    const Fold fold(P);
    int k = 0;
    while ((1 << k) < fold.p2) ++k;
    out->nblocks_ = 1;
    Step in;
    in.own = Links{0, 1, 0, 1, 1, false, 1, 0};
    in.has_partner = true;
    in.partner = Links{1, 0, 1, 0, 0, false, 0, 0};
    in.reduce = 1;
    in.memory = 3;
    out->steps_.push_back(in);
    Step x;
    x.own = Links{1, 1, 1, 1, 1, false, 1, 1};
    x.reduce = 1;
    x.memory = 3;
    x.repeat = k;
    out->steps_.push_back(x);
    Step take;
    take.own = Links{0, 1, 0, 1, 1, false, 0, 1};
    take.has_partner = true;
    take.partner = Links{1, 0, 1, 0, 0, false, 1, k + 1};
    out->steps_.push_back(take);
}

void ClosedForm::butterfly(int P, int r, ClosedForm* out) {
    // n_0 = P, n_{i+1} = ⌈n_i/2⌉: step i sends the top ⌊n_i/2⌋ live
    // vectors of every translate in J (|J| = N_J) to rank − ⌊n_i/2⌋ and
    // receives from rank + ⌊n_i/2⌋; the distribution replays steps
    // L−r−1..0 backwards with ⌊n_i/2⌋ blocks each.  A step is pairwise only
    // when 2⌊n_i/2⌋ = P.
    std::vector<long> n;
    for (long N = P; N > 1; N = (N + 1) / 2) n.push_back(N);
    const int L = static_cast<int>(n.size());
    const long NJ = r == 0 ? 1 : n[static_cast<size_t>(L - r)];
    out->nblocks_ = P;
    bool odd_seen = false;
    for (int i = 0; i < L; ++i) {
        const long N = n[static_cast<size_t>(i)], half = N / 2;
        const long moved = std::min<long>(P, half + NJ - 1);
        Step s;
        s.own = Links{moved, moved, 1, 1, 1, 2 * half != P, 0, i};
        s.reduce = (N % 2 == 1 || !odd_seen)
                       ? moved
                       : NJ + (half >= 2 ? std::min<long>(P, half + NJ - 2) : 0);
        s.memory = 3 * s.reduce;
        odd_seen = odd_seen || N % 2 == 1;
        out->steps_.push_back(s);
    }
    for (int i = L - r - 1, step = L; i >= 0; --i, ++step) {
        const long half = n[static_cast<size_t>(i)] / 2;
        Step s;
        s.own = Links{half, half, 1, 1, 1, 2 * half != P, 0, step};
        out->steps_.push_back(s);
    }
}

Prediction ClosedForm::predict(size_t count, size_t elem_size, const ModelParams& params) const {
    Prediction pred;
    const size_t nb = static_cast<size_t>(nblocks_);
    if (count == 0 || count % nb != 0) {
        pred.status = Status::invalid("closed-form price: count " + std::to_string(count) +
                                      " is not a positive multiple of the " +
                                      std::to_string(nblocks_) + " blocks");
        pred.seconds = std::numeric_limits<double>::infinity();
        return pred;
    }
    pred.status = Status::ok();
    const size_t per_block = count / nb;
    const double es = static_cast<double>(elem_size);
    // Bytes of `blocks` blocks, as PlanModel sums them (exact integers).
    auto bytes = [&](long blocks) {
        return static_cast<double>(static_cast<size_t>(blocks) * per_block) * es;
    };
    auto price = [&](const Links& l) {
        step_price::StepCost c =
            step_price::nic_price(params, bytes(l.sent), bytes(l.recv), l.sources,
                                  std::max(l.nsent, l.nrecv), l.shift, 1, false);
        step_price::add_nonblocking(params, &c);
        return c;
    };
    // Forward: each step starts when the previous one ends.
    struct Priced {
        step_price::StepCost comm;
        bool by_partner = false;
        double reduce = 0, memory = 0;
    };
    std::vector<Priced> priced;
    std::vector<double> ends;
    double t = 0;
    for (const Step& s : steps_) {
        Priced p;
        p.comm = price(s.own);
        if (s.has_partner) {
            const step_price::StepCost other = price(s.partner);
            if (other.cost > p.comm.cost) {
                p.comm = other;
                p.by_partner = true;
            }
        }
        p.reduce = bytes(s.reduce);
        p.memory = bytes(s.memory);
        const double host = params.host.gamma * p.reduce + params.host.delta * p.memory;
        for (long j = 0; j < s.repeat; ++j) {
            t = t + p.comm.cost + host;
            ends.push_back(t);
        }
        priced.push_back(p);
    }
    // Backward: the critical path's terms, last step first (as PlanModel).
    size_t e = ends.size();
    for (size_t k = steps_.size(); k-- > 0;) {
        const Step& s = steps_[k];
        const Priced& p = priced[k];
        const Links& link = p.by_partner ? s.partner : s.own;
        for (long j = s.repeat; j-- > 0;) {
            --e;
            PathStep ps;
            ps.rank = s.own.rank;
            ps.step = s.own.step + static_cast<int>(j);
            ps.link_rank = link.rank;
            ps.link_step = link.step + static_cast<int>(j);
            ps.end = ends[e];
            ps.start = e > 0 ? ends[e - 1] : 0;
            step_price::add_path_step(params.host, p.comm, p.reduce, p.memory, ps, &pred);
        }
    }
    std::reverse(pred.critical_path.begin(), pred.critical_path.end());
    pred.seconds = t;
    return pred;
}

}  // namespace genx
