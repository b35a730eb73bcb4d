// Recursive doubling generator (description and cost in rd.hpp).
#include "plan/rd.hpp"

#include "plan/fold.hpp"

#include <string>
#include <utility>
#include <vector>

namespace genx {

Status prepare_rd(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("rd: number of ranks must be >= 1, got " + std::to_string(P));
    const Fold fold(P);
    RankGenerator g;
    g.header.algorithm = "rd";
    g.header.nranks = P;
    g.header.nblocks = 1;
    fold.describe(&g.header);
    g.emit = [fold](int x, Program* prog) {
        if (fold.P == 1) return;
        const std::vector<int> all = {0};
        std::vector<Step>& steps = prog->steps;
        if (fold.gives(x)) {
            fold.emit_give(x, all, &steps);
            return;
        }
        if (fold.folds(x)) fold.emit_fold_in(x, all, &steps);
        const int n = fold.new_rank(x);
        for (int d = 1; d < fold.p2; d *= 2) {
            const int peer = fold.old_rank(n ^ d);
            Step st;
            st.recvs.push_back(Transfer{peer, all, 0});
            st.sends.push_back(Transfer{peer, all, kResult});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
            steps.push_back(std::move(st));
        }
        if (fold.folds(x)) fold.emit_unfold(x, all, &steps);
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
