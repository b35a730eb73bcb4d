// Recursive halving/doubling generator (description and cost in rhd.hpp).
#include "plan/rhd.hpp"

#include "plan/fold.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace genx {

namespace {

std::vector<int> run(int lo, int len) {
    std::vector<int> b(static_cast<size_t>(len));
    for (int k = 0; k < len; ++k) b[static_cast<size_t>(k)] = lo + k;
    return b;
}

}  // namespace

Status prepare_rhd(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("rhd: number of ranks must be >= 1, got " + std::to_string(P));
    bool doubling = false;
    if (auto it = req.params.find(kRhdDistanceKey); it != req.params.end()) {
        doubling = it->second == "doubling";
        if (!doubling && it->second != "halving")
            return Status::invalid("rhd: distance '" + it->second +
                                   "' is neither halving (the largest exchange p'/2 apart) nor "
                                   "doubling (1 apart, Open MPI's rabenseifner)");
    }
    const Fold fold(P);
    const int p2 = fold.p2;
    RankGenerator g;
    g.header.algorithm = "rhd";
    g.header.nranks = P;
    g.header.nblocks = p2;
    fold.describe(&g.header);
    g.emit = [fold, p2, doubling](int x, Program* prog) {
        if (fold.P == 1) return;
        std::vector<Step>& steps = prog->steps;
        const std::vector<int> all = run(0, p2);
        if (fold.gives(x)) {
            fold.emit_give(x, all, &steps);
            return;
        }
        if (fold.folds(x)) fold.emit_fold_in(x, all, &steps);
        const int n = fold.new_rank(x);
        // The reduce-scatter's distances, in order; the allgather takes
        // them in reverse.  Step k halves the run by bit d_k of n.
        std::vector<int> dist;
        for (int d = 1; d < p2; d *= 2) dist.push_back(d);
        if (!doubling) std::reverse(dist.begin(), dist.end());
        int lo = 0, len = p2;
        for (const int d : dist) {
            const int peer = fold.old_rank(n ^ d);
            const int half = len / 2;
            const bool upper = (n & d) != 0;
            const int keep_lo = upper ? lo + half : lo;
            const int give_lo = upper ? lo : lo + half;
            Step st;
            st.recvs.push_back(Transfer{peer, run(keep_lo, half), 0});
            st.sends.push_back(Transfer{peer, run(give_lo, half), kResult});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, run(keep_lo, half)});
            steps.push_back(std::move(st));
            lo = keep_lo;
            len = half;
        }
        for (auto it = dist.rbegin(); it != dist.rend(); ++it) {
            const int peer = fold.old_rank(n ^ *it);
            const int peer_lo = lo ^ len;  // runs of length len are len-aligned
            Step st;
            st.recvs.push_back(Transfer{peer, run(peer_lo, len), kResult});
            st.sends.push_back(Transfer{peer, run(lo, len), kResult});
            steps.push_back(std::move(st));
            lo = lo < peer_lo ? lo : peer_lo;
            len *= 2;
        }
        if (fold.folds(x)) fold.emit_unfold(x, all, &steps);
    };
    *out = std::move(g);
    return Status::ok();
}

void rhd_candidates(const CandidateContext&, std::vector<std::string>* out) {
    out->push_back("");
}

}  // namespace genx
