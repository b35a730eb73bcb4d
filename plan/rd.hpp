// Recursive doubling of the whole vector, any P (Thakur, Rabenseifner &
// Gropp 2005 §4; tuned's "recursive_doubling", algorithm 3).
//
// The latency plan with pairwise steps: every step is one exchange of the
// whole vector with one partner (one message each way), which is what
// small messages want (a shift step, whose two partners differ, costs more
// on a real network: bench/RESULTS.md "§1 Small messages").
//
// Let p' = 2^⌊log2 P⌋.  The vector is one block.
//   fold (P not a power of two): plan/fold.hpp, as rhd and tuned fold;
//   doubling: at distance d = 1, 2, …, p'/2, new rank n exchanges its whole
//     partial sum with n XOR d (received into a scratch slot) and adds it;
//   unfold: each folding rank sends the result back to its partner.
//
// Steps: log2 P when P = 2^k, ⌊log2 P⌋ + 2 otherwise.  Cost for S bytes
// (GenModel), with χ = 1 when P is not a power of two:
//   (log2 p' + 2χ)·(α + S β) + (log2 p' + χ)·(S γ + 3S δ)
// (each exchange and the fold reduce S bytes, reading two inputs and
// writing one); it moves log2 p' times the vector, so it is for small S
// only (the cost model prices that).  Scratch: one
// slot of S.  P = 1 is an empty plan.  Not order preserving (each pair
// adds its two partial sums; IEEE + is commutative, so both partners hold
// the same bits and every rank ends with the same result).
//
// On P = 2^k it is the same schedule as butterfly group=xor,r=k; rd exists
// for the other P, where no butterfly group has pairwise steps only.
//
//   P = 6 (p' = 4, r = 2):  fold 0→1, 2→3;  new ranks 1:0 3:1 4:2 5:3
//     d=1: 1↔3, 4↔5;  d=2: 1↔4, 3↔5;  unfold 1→0, 3→2
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Accepts no params.
Status prepare_rd(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void rd_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
