// Recursive doubling generator (description and cost in rd.hpp).
#include "plan/rd.hpp"

#include <string>
#include <utility>
#include <vector>

namespace genx {

Status prepare_rd(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("rd: number of ranks must be >= 1, got " + std::to_string(P));
    int p2 = 1;
    while (p2 * 2 <= P) p2 *= 2;
    const int extra = P - p2;

    RankGenerator g;
    g.header.algorithm = "rd";
    g.header.nranks = P;
    g.header.nblocks = 1;
    if (extra == 0) {
        // Partners are rank XOR d: invariant under the group (Z_2)^k.
        int k = 0;
        while ((1 << k) < P) ++k;
        g.header.symmetry.assign(static_cast<size_t>(k), 2);
        g.header.representatives = {0};
    } else {
        // A rank that hands its vector over, one that folds it in, and
        // (when there is one) a rank that does neither.
        g.header.representatives = {0, 1};
        if (2 * extra < P) g.header.representatives.push_back(2 * extra);
    }
    g.emit = [P, p2, extra](int x, Program* prog) {
        if (P == 1) return;
        auto old_rank = [extra](int n) { return n < extra ? 2 * n + 1 : n + extra; };
        const std::vector<int> all = {0};
        std::vector<Step>& steps = prog->steps;
        if (x < 2 * extra && x % 2 == 0) {
            Step give, take;
            give.sends.push_back(Transfer{x + 1, all, kResult});
            take.recvs.push_back(Transfer{x + 1, all, kResult});
            steps.push_back(std::move(give));
            steps.push_back(std::move(take));
            return;
        }
        const bool folds = x < 2 * extra;
        if (folds) {
            Step st;
            st.recvs.push_back(Transfer{x - 1, all, 0});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
            steps.push_back(std::move(st));
        }
        const int n = folds ? x / 2 : x - extra;
        for (int d = 1; d < p2; d *= 2) {
            const int peer = old_rank(n ^ d);
            Step st;
            st.recvs.push_back(Transfer{peer, all, 0});
            st.sends.push_back(Transfer{peer, all, kResult});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
            steps.push_back(std::move(st));
        }
        if (folds) {
            Step st;
            st.sends.push_back(Transfer{x - 1, all, kResult});
            steps.push_back(std::move(st));
        }
    };
    *out = std::move(g);
    return Status::ok();
}

// Only where P is not a power of two: on 2^k ranks rd is butterfly
// group=xor,r=k, which that family already offers.
void rd_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    if ((ctx.nranks & (ctx.nranks - 1)) != 0) out->push_back("");
}

}  // namespace genx
