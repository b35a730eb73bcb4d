// Recursive halving/doubling generator (description and cost in rhd.hpp).
#include "plan/rhd.hpp"

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
    int p2 = 1;
    while (p2 * 2 <= P) p2 *= 2;
    const int extra = P - p2;

    RankGenerator g;
    g.header.algorithm = "rhd";
    g.header.nranks = P;
    g.header.nblocks = p2;
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
        std::vector<Step>& steps = prog->steps;
        const std::vector<int> all = run(0, p2);
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
        int lo = 0, len = p2;
        for (int d = p2 / 2; d >= 1; d /= 2) {
            const int peer = old_rank(n ^ d);
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
        for (int d = 1; d < p2; d *= 2) {
            const int peer = old_rank(n ^ d);
            const int peer_lo = lo ^ d;  // runs of length d are d-aligned
            Step st;
            st.recvs.push_back(Transfer{peer, run(peer_lo, d), kResult});
            st.sends.push_back(Transfer{peer, run(lo, d), kResult});
            steps.push_back(std::move(st));
            lo = lo < peer_lo ? lo : peer_lo;
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

void rhd_candidates(const CandidateContext&, std::vector<std::string>* out) {
    out->push_back("");
}

}  // namespace genx
