// Hierarchical co-located parameter server (HCPS, Xiong et al. §3.3, Fig. 5):
// reduce-scatter in m rounds of small full meshes, then allgather back.
//
// P = f0 × f1 × … × f(m-1).  Rank r is written in mixed radix with digit 0
// fastest, r = d0 + f0·d1 + f0·f1·d2 + …; round i's groups are the ranks
// that differ only in digit i, so the groupings of different rounds are
// orthogonal (no two ranks share a group twice) and round 0's groups are
// runs of f0 consecutive ranks (one node under a by-slot rank mapping, so
// `factors=KxM` with K ranks per node is the intra-node-first hierarchy).
// The vector is cut into P blocks, numbered with digit 0 most significant,
// so the part a rank owns after each round is one contiguous run of blocks
// (one message per transfer):
//   reduce-scatter round i: the rank's current run splits into f_i equal
//     runs; group member c receives run c from the f_i - 1 others (each into
//     its own scratch slot) and folds all f_i copies with ONE fused f_i-ary
//     reduce;
//   allgather rounds m-1 … 0: each member sends its run to the others of its
//     round-i group, which receive it straight into the result buffer.
// Block sizes may differ by one element (count need not divide by P).
//
// Cost for S bytes, with P_i = f0·…·f_i (P_{-1} = 1, P_{m-1} = P):
//   A = 2m steps, B = 2·Σ_i (f_i-1)/P_i·S = 2(P-1)/P·S,
//   C = Σ_i (f_i-1)/P_i·S = (P-1)/P·S,
//   D = Σ_i (f_i+1)/P_i·S = (P + 1 + 2·Σ_{i<m-1} f_{i+1}·…·f_{m-1})/P·S,
//   incast 2·Σ_i max(w_i - w_t, 0)·(f_i-1)/P_i·S with fan-in degree w_i = f_i.
// Larger early factors lower D; factors ≤ w_t remove incast (Theorem 2's
// trade-off).  m = 1 is co-located PS (cps.hpp).
//
//   6 × 2 (P = 12): round 0 = six-rank meshes {0..5} {6..11},
//                   round 1 = pairs {0,6} {1,7} … {5,11}
//     ranks  0 1 2 3 4 5 | 6 7 8 9 10 11     blocks 0..11
//     RS0: rank d0 of each six-mesh owns blocks {2·d0, 2·d0+1}
//     RS1: rank (d0, d1) owns block 2·d0 + d1;  AG1, AG0 undo it.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Params: factors=AxBx… (product = P, each factor >= 2).  Default:
// default_hcps_factors(P).
Status prepare_hcps(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void hcps_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

// Builds the HCPS plan for `factors` (product must equal nranks, each >= 2;
// empty for nranks == 1).  Shared with cps, which is the one-factor case.
Status build_hcps(int nranks, const std::vector<int>& factors, RankGenerator* out);

// The factorisation `hcps` uses without a factors= key: the fewest rounds
// whose every factor is at most kHcpsDefaultMaxFactor, larger factors first
// (lower memory traffic); a prime factor above the limit stays whole.
// Examples: 12 -> 6x2, 15 -> 5x3, 16 -> 8x2, 64 -> 8x8, 13 -> 13, 26 -> 13x2.
std::vector<int> default_hcps_factors(int nranks);

// The paper's RoCE testbed showed no incast up to 9 communicators (§3.2);
// the default stays one below that without a fitted w_t.
constexpr int kHcpsDefaultMaxFactor = 8;

// Every ordered factorisation of n into factors >= 2 (n itself included as
// the one-factor list; {} for n == 1), in lexicographically decreasing
// order.  `max_factors` > 0 drops lists longer than that.
std::vector<std::vector<int>> ordered_factorizations(int n, int max_factors = 0);


}  // namespace genx
