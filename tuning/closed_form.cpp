// Closed-form prices: which families have one, and the pricing of a compact
// model (contract in closed_form.hpp; the families' models are built in
// closed_form_families.cpp).
#include "tuning/closed_form.hpp"

#include <algorithm>
#include <cmath>
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

// hcps's factors as the generator reads them; false where it would refuse.
bool hcps_factors(const ParamMap& params, int P, std::vector<int>* factors) {
    auto it = params.find("factors");
    if (it == params.end()) {
        *factors = default_hcps_factors(P);
    } else if (!parse_factors(it->second, factors)) {
        return false;
    }
    long long product = 1;
    for (int f : *factors) {
        if (f < 2) return false;
        product *= f;
        if (product > P) return false;
    }
    return product == P;
}

// The butterfly's group and r as the generator reads them; false where it
// would refuse.
bool butterfly_params(const ParamMap& params, int P, std::vector<int>* radix, int* r) {
    const bool pow2 = (P & (P - 1)) == 0;
    auto git = params.find("group");
    const std::string group = git != params.end() ? git->second : pow2 ? "xor" : "cyclic";
    radix->clear();
    if (group == "cyclic") {
        radix->push_back(P);
    } else if (group == "xor") {
        if (!pow2) return false;
        for (int n = P; n > 1; n /= 2) radix->push_back(2);
    } else {
        if (!parse_factors(group, radix)) return false;
        long long product = 1;
        for (int f : *radix) {
            if (f < 2 || f > P) return false;
            product *= f;
            if (product > P) return false;
        }
        if (product != P) return false;
    }
    int L = 0;
    for (int n : *radix)
        for (int N = n; N > 1; N = (N + 1) / 2) ++L;
    long v = 0;
    auto rit = params.find("r");
    if (rit != params.end() && !parse_int_in(rit->second, 0, L, &v)) return false;
    *r = static_cast<int>(v);
    return true;
}

}  // namespace

int ClosedForm::ranks_per_node(const RankMap& ranks, int nranks) {
    if (ranks.direct || ranks.tree || nranks < 1) return 0;
    if (ranks.node.empty()) return 1;
    if (ranks.node.size() != static_cast<size_t>(nranks)) return 0;
    int K = 1;
    while (K < nranks && ranks.node[static_cast<size_t>(K)] == ranks.node[0]) ++K;
    for (int r = 0; r < nranks; ++r)
        if (ranks.node[static_cast<size_t>(r)] != r / K) return 0;
    return K;
}

namespace {

// Steps of rd's or rhd's every-rank model, `per_level` core steps for
// each of log2 p': two for each giving rank, the core's plus two for each
// folding one, the core's for the rest.
long folded_steps(int P, int per_level) {
    const Fold fold(P);
    const long n_core = static_cast<long>(per_level) * fold.levels;
    return 2L * fold.extra + fold.extra * (n_core + 2) + (P - 2L * fold.extra) * n_core;
}

}  // namespace

bool ClosedForm::make(const std::string& algorithm, const ParamMap& params, int nranks, int ppn,
                      ClosedForm* out) {
    if (nranks < 2 || ppn < 1) return false;
    const int P = nranks, K = std::min(ppn, nranks);
    ClosedForm cf;
    bool ok = false;
    if (algorithm == "ring" && params.empty()) {
        ok = ring(P, K, &cf);
    } else if (algorithm == "cps" && params.empty()) {
        ok = hcps({P}, K, &cf);
    } else if (algorithm == "hcps" && only_keys(params, {"factors"})) {
        std::vector<int> factors;
        ok = hcps_factors(params, P, &factors) && hcps(factors, K, &cf);
    } else if (algorithm == "rb" && only_keys(params, {"root"})) {
        // Root 0 only: another root puts a leaf first in rank order, which
        // changes the critical path's labels.
        auto it = params.find("root");
        ok = it == params.end() || it->second == "0";
        if (ok) rb(P, K, &cf);
    } else if (algorithm == "rd" && params.empty()) {
        ok = (P & (P - 1)) != 0;  // 2^k: symmetric, the quotient prices it
        if (ok && K > 1) ok = folded_steps(P, 1) <= kClosedFormMaxRankSteps;
        if (ok && K == 1) rd(P, K, &cf);
        if (ok && K > 1) rd_all_ranks(P, K, &cf);
    } else if (algorithm == "rhd" && only_keys(params, {"distance"})) {
        // 2^k: symmetric, the quotient prices it.  Any other distance is
        // refused by the generator.
        auto it = params.find("distance");
        const bool doubling = it != params.end() && it->second == "doubling";
        ok = (P & (P - 1)) != 0 && (it == params.end() || it->second == "halving" || doubling);
        if (ok && K > 1) ok = folded_steps(P, 2) <= kClosedFormMaxRankSteps;
        if (ok && K == 1) rhd(P, &cf);
        if (ok && K > 1) rhd_all_ranks(P, K, doubling, &cf);
    } else if (algorithm == "butterfly" && only_keys(params, {"r", "group"})) {
        std::vector<int> radix;
        int r = 0;
        ok = butterfly_params(params, P, &radix, &r) && butterfly(radix, r, K, &cf);
    }
    if (!ok) return false;
    cf.finish();
    *out = std::move(cf);
    return true;
}

// ------------------------------------------------------------ building

int ClosedForm::add_rank(int real) {
    real_.push_back(real);
    return static_cast<int>(real_.size()) - 1;
}

int ClosedForm::add_own(const Own& o) {
    owns_.push_back(o);
    return static_cast<int>(owns_.size()) - 1;
}

int ClosedForm::add_nic(const Nic& n) {
    nics_.push_back(n);
    return static_cast<int>(nics_.size()) - 1;
}

uint32_t ClosedForm::add_entry(int rank, int step, int own, int nic) {
    Entry e;
    e.rank = rank;
    e.step = step;
    e.own = own;
    e.nic = nic;
    entries_.push_back(e);
    return static_cast<uint32_t>(entries_.size() - 1);
}

void ClosedForm::set_partners(uint32_t entry, const std::vector<uint32_t>& partners) {
    Entry& e = entries_[entry];
    e.first_partner = static_cast<uint32_t>(partners_.size());
    e.npartners = static_cast<uint32_t>(partners.size());
    partners_.insert(partners_.end(), partners.begin(), partners.end());
}

void ClosedForm::add_phase(long repeat, const std::vector<uint32_t>& entries) {
    Phase ph;
    ph.repeat = repeat;
    ph.first = static_cast<uint32_t>(order_.size());
    ph.n = static_cast<uint32_t>(entries.size());
    order_.insert(order_.end(), entries.begin(), entries.end());
    phases_.push_back(ph);
}

void ClosedForm::finish() {
    const size_t M = real_.size();
    nsteps_.assign(M, 0);
    for (const Phase& ph : phases_)
        for (uint32_t i = ph.first; i < ph.first + ph.n; ++i) {
            const Entry& e = entries_[order_[i]];
            int& n = nsteps_[static_cast<size_t>(e.rank)];
            n = std::max(n, e.step + static_cast<int>(ph.repeat));
        }
    time_first_.assign(M + 1, 0);
    for (size_t m = 0; m < M; ++m)
        time_first_[m + 1] = time_first_[m] + static_cast<size_t>(nsteps_[m]);
    // Entries by rank (a counting sort), then by step within a rank.
    rank_entries_.assign(M + 1, 0);
    for (const Entry& e : entries_) ++rank_entries_[static_cast<size_t>(e.rank) + 1];
    for (size_t m = 0; m < M; ++m) rank_entries_[m + 1] += rank_entries_[m];
    by_rank_.assign(entries_.size(), 0);
    std::vector<uint32_t> fill(rank_entries_.begin(), rank_entries_.end() - 1);
    for (uint32_t i = 0; i < entries_.size(); ++i)
        by_rank_[fill[static_cast<size_t>(entries_[i].rank)]++] = i;
    for (size_t m = 0; m < M; ++m)
        std::sort(by_rank_.begin() + rank_entries_[m], by_rank_.begin() + rank_entries_[m + 1],
                  [&](uint32_t a, uint32_t b) { return entries_[a].step < entries_[b].step; });
}

// ------------------------------------------------------------- pricing

// One prediction: each (own, nic) pair's link price at this size, then
// PlanModel::Pricing's schedule and critical path over the model ranks.
class ClosedForm::Pricing {
  public:
    Pricing(const ClosedForm& cf, size_t count, size_t elem_size, const ModelParams& params)
        : cf_(cf),
          per_block_(count / static_cast<size_t>(cf.nblocks_)),
          es_(static_cast<double>(elem_size)),
          params_(params) {}

    Prediction run();

  private:
    // How a step started and whose link set its pace: the entry and step
    // of the step before it (entry -1: none), and the partner (-1: its own).
    struct Start {
        double t = 0;
        long from_entry = -1;
        long from_step = -1;
        long comm = -1;
    };

    // Bytes of `blocks` blocks, as PlanModel sums them (exact integers).
    double bytes(long blocks) const {
        return static_cast<double>(static_cast<size_t>(blocks) * per_block_) * es_;
    }
    step_price::StepCost link_price(const Entry& e) const;
    const step_price::StepCost& path_price(const Entry& e);
    double cost(const Entry& e);
    size_t pair(const Entry& e) const {
        return static_cast<size_t>(e.own) * cf_.nics_.size() + static_cast<size_t>(e.nic);
    }
    double host(const Entry& e) const {
        const Own& o = cf_.owns_[static_cast<size_t>(e.own)];
        return params_.host.gamma * bytes(o.reduce) + params_.host.delta * bytes(o.memory);
    }
    size_t time_index(const Entry& e, long j) const {
        return cf_.time_first_[static_cast<size_t>(e.rank)] + static_cast<size_t>(e.step + j);
    }
    Start start(uint32_t entry, long j);
    uint32_t entry_at(int rank, long step) const;
    Prediction critical_path();

    const ClosedForm& cf_;
    const size_t per_block_;
    const double es_;
    const ModelParams& params_;
    std::vector<double> cost_;  // per (own, nic) pair: NaN until priced
    // The critical path's link prices: per pair, an index into path_costs_
    // (−1 until needed); a path repeats few of them many times.
    std::vector<int> path_cost_of_;
    std::vector<step_price::StepCost> path_costs_;
    std::vector<double> end_;  // per model rank and step
};

step_price::StepCost ClosedForm::Pricing::link_price(const Entry& e) const {
    const Own& o = cf_.owns_[static_cast<size_t>(e.own)];
    step_price::StepCost intra;
    if (o.sent[0] > 0 || o.recv[0] > 0)
        intra = step_price::intra_price(params_, bytes(o.sent[0]), bytes(o.recv[0]), o.flows_in,
                                        std::max(o.nsent[0], o.nrecv[0]), (o.shift & 1) != 0);
    step_price::StepCost best = intra;
    if (o.sent[1] > 0 || o.recv[1] > 0) {
        const Nic& n = cf_.nics_[static_cast<size_t>(e.nic)];
        const step_price::StepCost inter =
            step_price::nic_price(params_, bytes(n.sent), bytes(n.recv), n.sources,
                                  std::max(o.nsent[1], o.nrecv[1]), (o.shift & 2) != 0, 1, false);
        best = step_price::slower_part(intra, &inter);
    }
    step_price::add_nonblocking(params_, &best);
    return best;
}

double ClosedForm::Pricing::cost(const Entry& e) {
    double& c = cost_[pair(e)];
    if (std::isnan(c)) c = link_price(e).cost;
    return c;
}

const step_price::StepCost& ClosedForm::Pricing::path_price(const Entry& e) {
    if (path_cost_of_.empty()) path_cost_of_.assign(cost_.size(), -1);
    int& i = path_cost_of_[pair(e)];
    if (i < 0) {
        i = static_cast<int>(path_costs_.size());
        path_costs_.push_back(link_price(e));
    }
    return path_costs_[static_cast<size_t>(i)];
}

// PlanModel::Pricing::schedule's rule for one step: it starts when its own
// previous step ended, or a partner's previous step if later (ties to its
// own, then to the lowest rank), and its communication lasts as long as the
// busiest link among its own and its partners' (the first one met wins a
// tie).
ClosedForm::Pricing::Start ClosedForm::Pricing::start(uint32_t entry, long j) {
    const Entry& e = cf_.entries_[entry];
    Start s;
    int from_rank = -1;
    const int own_rank = cf_.real_[static_cast<size_t>(e.rank)];
    if (e.step + j > 0) {
        s.t = end_[time_index(e, j) - 1];
        s.from_entry = entry;
        s.from_step = e.step + j - 1;
        from_rank = own_rank;
    }
    double comm = cost(e);
    for (uint32_t i = e.first_partner; i < e.first_partner + e.npartners; ++i) {
        const uint32_t p = cf_.partners_[i];
        const Entry& pe = cf_.entries_[p];
        const double pc = cost(pe);
        if (pc > comm) {
            comm = pc;
            s.comm = p;
        }
        if (pe.step + j == 0) continue;
        const double tb = end_[time_index(pe, j) - 1];
        const int pr = cf_.real_[static_cast<size_t>(pe.rank)];
        if (tb > s.t || (tb == s.t && from_rank != own_rank && from_rank >= 0 && pr < from_rank)) {
            s.t = tb;
            s.from_entry = p;
            s.from_step = pe.step + j - 1;
            from_rank = pr;
        }
    }
    return s;
}

// The entry holding step `step` of model rank `rank`.
uint32_t ClosedForm::Pricing::entry_at(int rank, long step) const {
    const auto first = cf_.by_rank_.begin() + cf_.rank_entries_[static_cast<size_t>(rank)];
    const auto last = cf_.by_rank_.begin() + cf_.rank_entries_[static_cast<size_t>(rank) + 1];
    auto it = std::upper_bound(first, last, step, [&](long s, uint32_t e) {
        return s < cf_.entries_[e].step;
    });
    return *(it - 1);
}

// Every step's end, phase by phase: start()'s rule with what does not
// change over a phase's repeats (link costs, host costs, where the steps
// are) worked out once.
Prediction ClosedForm::Pricing::run() {
    cost_.assign(cf_.owns_.size() * cf_.nics_.size(), std::numeric_limits<double>::quiet_NaN());
    end_.assign(cf_.time_first_.back(), 0);
    struct Step {
        size_t at;  // time index of the entry's first step
        int step, rank;
        double comm, host;
        uint32_t first, n;  // into `peers`
    };
    struct Peer {
        size_t at;
        int step, rank;
    };
    std::vector<Step> steps;
    std::vector<Peer> peers;
    for (const Phase& ph : cf_.phases_) {
        steps.clear();
        peers.clear();
        for (uint32_t i = ph.first; i < ph.first + ph.n; ++i) {
            const Entry& e = cf_.entries_[cf_.order_[i]];
            Step st{time_index(e, 0), e.step, cf_.real_[static_cast<size_t>(e.rank)], cost(e),
                    host(e), static_cast<uint32_t>(peers.size()), e.npartners};
            for (uint32_t k = e.first_partner; k < e.first_partner + e.npartners; ++k) {
                const Entry& pe = cf_.entries_[cf_.partners_[k]];
                st.comm = std::max(st.comm, cost(pe));
                peers.push_back({time_index(pe, 0), pe.step, cf_.real_[static_cast<size_t>(pe.rank)]});
            }
            steps.push_back(st);
        }
        for (long j = 0; j < ph.repeat; ++j)
            for (const Step& st : steps) {
                double t = 0;
                int from_rank = -1;
                if (st.step + j > 0) {
                    t = end_[st.at + static_cast<size_t>(j) - 1];
                    from_rank = st.rank;
                }
                for (uint32_t k = st.first; k < st.first + st.n; ++k) {
                    const Peer& p = peers[k];
                    if (p.step + j == 0) continue;
                    const double tb = end_[p.at + static_cast<size_t>(j) - 1];
                    if (tb > t ||
                        (tb == t && from_rank != st.rank && from_rank >= 0 && p.rank < from_rank)) {
                        t = tb;
                        from_rank = p.rank;
                    }
                }
                end_[st.at + static_cast<size_t>(j)] = t + st.comm + st.host;
            }
    }
    return critical_path();
}

// The last rank's last step (the first rank on a tie), then back along the
// steps that started each one, with the terms of each (as PlanModel).
Prediction ClosedForm::Pricing::critical_path() {
    Prediction pred;
    pred.status = Status::ok();
    long rank = -1;
    for (size_t m = 0; m < cf_.real_.size(); ++m) {
        if (cf_.nsteps_[m] == 0) continue;
        if (rank < 0 || end_[cf_.time_first_[m + 1] - 1] >
                            end_[cf_.time_first_[static_cast<size_t>(rank) + 1] - 1])
            rank = static_cast<long>(m);
    }
    if (rank < 0) return pred;
    long step = cf_.nsteps_[static_cast<size_t>(rank)] - 1;
    pred.critical_path.reserve(static_cast<size_t>(step) + 1);
    pred.seconds = end_[cf_.time_first_[static_cast<size_t>(rank) + 1] - 1];
    while (rank >= 0) {
        const uint32_t entry = entry_at(static_cast<int>(rank), step);
        const Entry& e = cf_.entries_[entry];
        const long j = step - e.step;
        const Start s = start(entry, j);
        const Entry& link = s.comm < 0 ? e : cf_.entries_[static_cast<size_t>(s.comm)];
        const Own& o = cf_.owns_[static_cast<size_t>(e.own)];
        PathStep ps;
        ps.rank = cf_.real_[static_cast<size_t>(e.rank)];
        ps.step = static_cast<int>(step);
        ps.link_rank = cf_.real_[static_cast<size_t>(link.rank)];
        ps.link_step = static_cast<int>(link.step + j);
        ps.start = s.t;
        ps.end = end_[time_index(e, j)];
        step_price::add_path_step(params_.host, path_price(link), bytes(o.reduce),
                                  bytes(o.memory), ps, &pred);
        rank = s.from_entry < 0 ? -1 : cf_.entries_[static_cast<size_t>(s.from_entry)].rank;
        step = s.from_step;
    }
    std::reverse(pred.critical_path.begin(), pred.critical_path.end());
    return pred;
}

Prediction ClosedForm::predict(size_t count, size_t elem_size, const ModelParams& params) const {
    const size_t nb = static_cast<size_t>(nblocks_);
    if (count == 0 || count % nb != 0) {
        Prediction pred;
        pred.status = Status::invalid("closed-form price: count " + std::to_string(count) +
                                      " is not a positive multiple of the " +
                                      std::to_string(nblocks_) + " blocks");
        pred.seconds = std::numeric_limits<double>::infinity();
        return pred;
    }
    return Pricing(*this, count, elem_size, params).run();
}

}  // namespace genx
