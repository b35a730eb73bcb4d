// Co-located parameter server (Xiong et al. §2.1, Fig. 1b): every rank is
// the parameter server of one block.
//
// The vector is cut into P blocks.  Step 0 (reduce-scatter as a full mesh):
// rank i sends block j to rank j for every j != i and receives block i from
// all P-1 others, each into its own scratch slot, then folds its own copy
// and the P-1 received ones with ONE fused P-ary reduce — one pass that
// reads P inputs and writes one, the memory-access optimum of Theorem 1.
// Step 1 (allgather as a full mesh): rank i sends its reduced block i to
// everyone, who receive it straight into the result buffer.
//
// Cost for S bytes (GenModel, Xiong et al. Table 2):
//   2 α + 2(P-1)/P·S β + (P-1)/P·S γ + (P+1)/P·S δ
//   + 2(P-1)/P·S · max(P - w_t, 0) ε       (fan-in degree w = P both steps).
// Latency-, bandwidth- and memory-optimal, incast-worst: the choice while P
// stays at or below the fabric's incast threshold w_t.  Scratch: P-1 slots
// of one block each (about S in all).
//
// Any P works (blocks differ by at most one element; P = 1 is an empty
// plan).  It is hcps with the single factor P and shares its builder.
//
//   P = 3:  step 0            step 1
//     0 ─b1→ 1, 0 ─b2→ 2     0 ─b0→ 1, 0 ─b0→ 2
//     1 ─b0→ 0, 1 ─b2→ 2     1 ─b1→ 0, 1 ─b1→ 2
//     2 ─b0→ 0, 2 ─b1→ 1     2 ─b2→ 0, 2 ─b2→ 1
//     rank i: b_i ⊕= 3 inputs at once
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Accepts no params.
Status prepare_cps(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void cps_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
