// Ring allreduce: reduce-scatter around a ring, then allgather around it.
//
// The vector is cut into P blocks.  In reduce-scatter step s (0 <= s < P-1)
// rank r sends block (r-s) mod P to r+1, receives block (r-s-1) mod P from
// r-1 into scratch slot 0 and folds it into its result buffer; after P-1
// steps rank r holds the full sum of block (r+1) mod P.  In allgather step t
// rank r forwards block (r+1-t) mod P to r+1 and receives block (r-t) mod P
// from r-1 straight into its result buffer.
//
// Cost for S bytes (GenModel terms, Xiong et al. Table 2):
//   2(P-1) α + 2(P-1)/P·S β + (P-1)/P·S γ + 3(P-1)/P·S δ, no incast (w = 1).
// Bandwidth- and incast-optimal, latency-worst: the choice for large S.
//
// Any P works: nothing assumes a power of two, P = 1 is an empty (valid)
// plan, and blocks may be empty when count < P.  Reductions run in ring
// order starting at a different rank per block, so the plan is not order
// preserving (commutative ops only).  Scratch: one slot whose layout is the
// P-1 blocks the rank does not own first.
//
//   P = 4, reduce-scatter (bK = block K, arrows are one step's sends):
//     step 0:  0 -b0-> 1 -b1-> 2 -b2-> 3 -b3-> 0
//     step 1:  0 -b3-> 1 -b0-> 2 -b1-> 3 -b2-> 0
//     step 2:  0 -b2-> 1 -b3-> 2 -b0-> 3 -b1-> 0   rank r now owns b(r+1)
//   allgather: the same pattern shifted by one block, received in place.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Accepts no params.
Status prepare_ring(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void ring_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
