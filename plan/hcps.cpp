// Hierarchical co-located PS generator (description and cost in hcps.hpp).
#include "plan/hcps.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace genx {

namespace {

bool is_prime(int n) {
    if (n < 2) return false;
    for (int d = 2; d * d <= n; ++d)
        if (n % d == 0) return false;
    return true;
}

// All multisets (as non-increasing lists) of factors >= 2 with product n
// whose members pass `allowed`.
void non_increasing_factorizations(int n, int max_first, const std::function<bool(int)>& allowed,
                                   std::vector<int>& cur, std::vector<std::vector<int>>& out) {
    if (n == 1) {
        out.push_back(cur);
        return;
    }
    for (int f = std::min(n, max_first); f >= 2; --f) {
        if (n % f != 0 || !allowed(f)) continue;
        cur.push_back(f);
        non_increasing_factorizations(n / f, f, allowed, cur, out);
        cur.pop_back();
    }
}

void ordered_rec(int n, int max_factors, std::vector<int>& cur,
                 std::vector<std::vector<int>>& out) {
    if (n == 1) {
        out.push_back(cur);
        return;
    }
    if (max_factors > 0 && static_cast<int>(cur.size()) == max_factors) return;
    for (int f = n; f >= 2; --f) {
        if (n % f != 0) continue;
        cur.push_back(f);
        ordered_rec(n / f, max_factors, cur, out);
        cur.pop_back();
    }
}

}  // namespace

std::vector<std::vector<int>> ordered_factorizations(int n, int max_factors) {
    std::vector<std::vector<int>> out;
    if (n < 1) return out;
    std::vector<int> cur;
    ordered_rec(n, max_factors, cur, out);
    return out;
}

std::vector<int> default_hcps_factors(int nranks) {
    if (nranks <= 1) return {};
    std::vector<std::vector<int>> all;
    std::vector<int> cur;
    non_increasing_factorizations(
        nranks, nranks, [](int f) { return f <= kHcpsDefaultMaxFactor || is_prime(f); }, cur, all);
    // Fewest rounds first (each costs 2 α and a memory pass); among equally
    // many, the lexicographically largest non-increasing list, whose small
    // trailing factors keep the δ term's suffix products small.
    std::vector<int> best;
    for (const auto& f : all) {
        if (best.empty() || f.size() < best.size() || (f.size() == best.size() && f > best))
            best = f;
    }
    return best;
}

Status build_hcps(int nranks, const std::vector<int>& factors, RankGenerator* out) {
    const int P = nranks;
    long product = 1;
    for (int f : factors) {
        if (f < 2)
            return Status::invalid("hcps: factor " + std::to_string(f) + " in '" +
                                   format_factors(factors) +
                                   "' is below 2 (a round of one rank does nothing)");
        product *= f;
        if (product > P) break;
    }
    if (product != P)
        return Status::invalid("hcps: factors '" + format_factors(factors) +
                               "' do not multiply to the " + std::to_string(P) + " ranks");

    RankGenerator g;
    g.header.algorithm = "hcps";
    g.header.params = factors.empty() ? "" : "factors=" + format_factors(factors);
    g.header.nranks = P;
    g.header.nblocks = P;
    // A round's partners differ from the rank in one digit: invariant under
    // digit-wise translation, i.e. the group Z_f0 × Z_f1 × ...
    g.header.symmetry = factors;
    g.header.representatives = {0};
    g.emit = [factors](int r, Program* prog) {
        const int m = static_cast<int>(factors.size());
        // rank_weight[i]: rank digit i's weight (digit 0 fastest).
        // run_len[i]: blocks a rank owns after reduce-scatter round i
        //             (block digit i's weight, digit 0 most significant).
        std::vector<int> rank_weight(static_cast<size_t>(m)), run_len(static_cast<size_t>(m));
        for (int i = 0, w = 1; i < m; ++i) {
            rank_weight[static_cast<size_t>(i)] = w;
            w *= factors[static_cast<size_t>(i)];
        }
        for (int i = m - 1, w = 1; i >= 0; --i) {
            run_len[static_cast<size_t>(i)] = w;
            w *= factors[static_cast<size_t>(i)];
        }
        auto run = [](int lo, int len) {
            std::vector<int> b(static_cast<size_t>(len));
            for (int k = 0; k < len; ++k) b[static_cast<size_t>(k)] = lo + k;
            return b;
        };
        std::vector<Step>& steps = prog->steps;
        // run_lo[i]: first block the rank owns after round i; run_lo[-1] = 0
        // stored at index 0 (the whole vector before round 0).
        std::vector<int> run_lo(static_cast<size_t>(m + 1), 0);
        for (int i = 0; i < m; ++i) {
            const int f = factors[static_cast<size_t>(i)];
            const int wi = rank_weight[static_cast<size_t>(i)];
            const int d = (r / wi) % f;
            const int lo = run_lo[static_cast<size_t>(i)];
            const int len = run_len[static_cast<size_t>(i)];
            run_lo[static_cast<size_t>(i + 1)] = lo + d * len;
            Step st;
            // Peers in rotated order (d+1, d+2, … for sends, d-1, d-2, … for
            // receives) so that members do not all address member 0 first.
            for (int t = 1; t < f; ++t) {
                const int c_to = (d + t) % f;
                const int c_from = (d - t + f) % f;
                st.sends.push_back(Transfer{r + (c_to - d) * wi, run(lo + c_to * len, len), kResult});
                st.recvs.push_back(Transfer{r + (c_from - d) * wi, run(lo + d * len, len), t - 1});
            }
            LocalOp op;
            op.kind = OpKind::Reduce;
            op.dst = kResult;
            for (int k = 0; k < f - 1; ++k) op.srcs.push_back(k);
            op.blocks = run(lo + d * len, len);
            st.ops.push_back(std::move(op));
            steps.push_back(std::move(st));
        }
        for (int i = m - 1; i >= 0; --i) {
            const int f = factors[static_cast<size_t>(i)];
            const int wi = rank_weight[static_cast<size_t>(i)];
            const int d = (r / wi) % f;
            const int lo = run_lo[static_cast<size_t>(i)];
            const int len = run_len[static_cast<size_t>(i)];
            Step st;
            for (int t = 1; t < f; ++t) {
                const int c_to = (d + t) % f;
                const int c_from = (d - t + f) % f;
                st.sends.push_back(Transfer{r + (c_to - d) * wi, run(lo + d * len, len), kResult});
                st.recvs.push_back(
                    Transfer{r + (c_from - d) * wi, run(lo + c_from * len, len), kResult});
            }
            steps.push_back(std::move(st));
        }
    };
    *out = std::move(g);
    return Status::ok();
}

Status prepare_hcps(const GenRequest& req, RankGenerator* out) {
    std::vector<int> factors;
    auto it = req.params.find("factors");
    if (it != req.params.end()) {
        Status st = parse_factors(it->second, &factors);
        if (!st) return Status::invalid("hcps: " + st.message());
        if (req.nranks == 1 && factors == std::vector<int>{1}) factors.clear();
    } else {
        factors = default_hcps_factors(req.nranks);
    }
    return build_hcps(req.nranks, factors, out);
}

// Every ordered factorisation with at least two levels (one level is cps).
void hcps_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    for (const std::vector<int>& f : ordered_factorizations(ctx.nranks, ctx.max_hcps_levels))
        if (f.size() >= 2) out->push_back("factors=" + format_factors(f));
}

}  // namespace genx
