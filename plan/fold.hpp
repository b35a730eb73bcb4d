// Folding a communicator of any size P onto p' = 2^⌊log2 P⌋ ranks, the way
// recursive doubling (rd) and recursive halving/doubling (rhd) handle a
// non-power-of-two P, as tuned's algorithms 3 and 6 do (Thakur,
// Rabenseifner & Gropp 2005): with r = P - p', for i < r rank 2i hands its
// whole vector to rank 2i+1, which folds it in, and gets the result back at
// the end; the p' remaining ranks take new ranks 0..p'-1 (2i+1 -> i, rank
// x >= 2r -> x - r), so folding pairs are adjacent and a by-slot mapping
// keeps them on one node.
#pragma once

#include <utility>
#include <vector>

#include "plan/plan.hpp"

namespace genx {

struct Fold {
    int P = 1, p2 = 1, extra = 0;
    int levels = 0;  // log2 p': the core's exchanges (rd), or each half of rhd's

    explicit Fold(int nranks) : P(nranks) {
        while (p2 * 2 <= P) {
            p2 *= 2;
            ++levels;
        }
        extra = P - p2;
    }
    // The old rank of new rank n.
    int old_rank(int n) const { return n < extra ? 2 * n + 1 : n + extra; }
    // Rank x hands its vector over and waits for the result.
    bool gives(int x) const { return x < 2 * extra && x % 2 == 0; }
    // Rank x folds its partner's vector in (and hands the result back).
    bool folds(int x) const { return x < 2 * extra && x % 2 == 1; }
    // The new rank of a rank that stays (not gives(x)).
    int new_rank(int x) const { return folds(x) ? x / 2 : x - extra; }

    // Symmetry and representatives of a plan built on the fold: (Z_2)^k
    // when P = 2^k (partners are rank XOR d); otherwise a giving rank, a
    // folding one and, when there is one, a rank that does neither.
    void describe(PlanHeader* h) const {
        if (extra == 0) {
            h->symmetry.assign(static_cast<size_t>(levels), 2);
            h->representatives = {0};
        } else {
            h->representatives = {0, 1};
            if (2 * extra < P) h->representatives.push_back(2 * extra);
        }
    }
    // A giving rank's whole program: send `all`, receive the result.
    void emit_give(int x, const std::vector<int>& all, std::vector<Step>* steps) const {
        Step give, take;
        give.sends.push_back(Transfer{x + 1, all, kResult});
        take.recvs.push_back(Transfer{x + 1, all, kResult});
        steps->push_back(std::move(give));
        steps->push_back(std::move(take));
    }
    // A folding rank's first step: receive the partner's vector into slot 0
    // and add it.
    void emit_fold_in(int x, const std::vector<int>& all, std::vector<Step>* steps) const {
        Step st;
        st.recvs.push_back(Transfer{x - 1, all, 0});
        st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
        steps->push_back(std::move(st));
    }
    // A folding rank's last step: the result back to the partner.
    void emit_unfold(int x, const std::vector<int>& all, std::vector<Step>* steps) const {
        Step st;
        st.sends.push_back(Transfer{x - 1, all, kResult});
        steps->push_back(std::move(st));
    }
};

}  // namespace genx
