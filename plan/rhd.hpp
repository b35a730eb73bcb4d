// Recursive halving / doubling (Rabenseifner), any P (Xiong et al. §2.1,
// Fig. 1d; Thakur, Rabenseifner & Gropp 2005).
//
// Let p' = 2^⌊log2 P⌋ and r = P - p'.  The vector is cut into p' blocks.
//   fold (only when r > 0): for i < r, rank 2i sends its whole vector to
//     rank 2i+1, which folds it in (2-ary reduce); rank 2i then waits.  The
//     p' remaining ranks take new ranks 0..p'-1 (2i+1 -> i, rank x >= 2r ->
//     x - r); pairs are adjacent so a by-slot mapping keeps folds on-node.
//   reduce-scatter by recursive halving: at distance d = p'/2, p'/4, …, 1
//     new rank n swaps half of its current block run with n XOR d (kept half
//     received into one scratch slot, then a 2-ary reduce); after log p'
//     steps new rank n holds block n fully reduced;
//   allgather by recursive doubling: d = 1, 2, …, p'/2, runs received in
//     place;
//   unfold (r > 0): rank 2i+1 sends the result to rank 2i.
//
// Cost for S bytes (GenModel), with χ = 1 when P is not a power of two:
//   2⌈log2 P⌉ α + 2(p'-1)/p'·S β + (p'-1)/p'·S γ + 3(p'-1)/p'·S δ
//   + χ·(2S β + S γ + 3S δ); no incast (one flow into each receiver).
// Table 2 writes the core terms with N = P instead of p'; the core runs on
// p' ranks, so for P not a power of two the paper's β, γ, δ terms are high
// by 2(1/p' - 1/P)·S β etc.  Scratch: one slot of S/2 (S on fold targets).
//
// P = 1 is an empty plan.  Not order preserving (commutative ops only).
//
//   P = 6 (p' = 4, r = 2):  fold 0→1, 2→3;  new ranks 1:0 3:1 4:2 5:3
//     halving d=2: 1↔4, 3↔5;  d=1: 1↔3, 4↔5;  doubling d=1, then d=2;
//     unfold 1→0, 3→2
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// distance=halving (default) or doubling: the reduce-scatter's partner
// distances, p'/2 first (the layout above) or 1 first, as Open MPI's
// rabenseifner (tuned's algorithm 6) runs them: there the largest exchange
// pairs neighbours and new rank n ends with block bitreverse(n).  Same
// steps, bytes and reductions; on a network, which links carry the halves
// differs.  (Open MPI also folds otherwise: a pair swaps halves and the
// even rank goes on, two steps of S/2 where genx sends S once; the same
// bytes.  genx keeps its own fold for both orders.)
inline constexpr const char* kRhdDistanceKey = "distance";
Status prepare_rhd(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void rhd_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
