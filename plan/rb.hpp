// Reduce-broadcast through one parameter server (Xiong et al. §2.1, Fig. 1a).
//
// The vector is one block.  Step 0: every rank except the root sends its
// whole vector to the root, which receives the P-1 copies into P-1 scratch
// slots and folds them into its own with ONE fused P-ary reduce.  Step 1:
// the root sends the result to every other rank, received in place.
//
// Cost for S bytes (GenModel): 2 α + 2(P-1)·S β + (P-1)·S γ + (P+1)·S δ
//   + (P-1)·S · max(P - w_t, 0) ε.
// Only step 0 is an incast (fan-in degree w = P); the broadcast is one
// flow into each receiver, so genx's model charges ε once.  Table 2 of the
// paper charges it on both steps (2(P-1)·S·max(P - w_t, 0) ε); eq. (7)
// defines the term by the receivers' fan-in, which the broadcast lacks.
// Latency-optimal, bandwidth-worst: the root's link carries everything, so
// it only wins for tiny vectors.  Scratch at the root: (P-1)·S.
//
// Any P and any root work; P = 1 is an empty plan.  With root = 0 the
// root folds x0 ⊕ x1 ⊕ … ⊕ x(P-1) in rank order, so the plan is order
// preserving (valid for non-commutative ops); other roots are not.
//
//   P = 4, root 0:   step 0: 1 → 0, 2 → 0, 3 → 0;  0: x0 ⊕= x1 ⊕ x2 ⊕ x3
//                    step 1: 0 → 1, 0 → 2, 0 → 3
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Params: root=R (0 <= R < P, default 0).
Status prepare_rb(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void rb_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
