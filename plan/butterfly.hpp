// Generalized butterfly allreduce for any P (Kolmakov & Zhang, "A
// Generalization of the Allreduce Operation", §§5-9): one generator that
// yields the bandwidth-optimal 2⌈log2 P⌉-step schedule, the latency-optimal
// ⌈log2 P⌉-step one, and every step count in between, for every P.
//
// The construction (paper §5)
// ---------------------------
// Ranks are the elements of a finite abelian group G of order P acting on
// itself by translation; the vector is cut into P blocks, also named by G.
// A "distributed vector" is a pair (placement g, contribution set S ⊆ G):
// rank p holds element b = p - g of it (the block labelled b, see below),
// summed over the contributions of ranks {s + b : s ∈ S}.  Initially every
// rank holds (g, {g}) for all g (its own input), and the goal is (g, G) for
// all g.  A step applies one operator d ∈ G to some vectors,
// (g, S) -> (g + d, S): every rank sends the blocks of those vectors to rank
// p + d and receives the same amount from p - d, so each step is one
// transfer per rank in each direction.  Two vectors with the same placement
// and disjoint sets are combined locally (⊕).
//
// Block labels: element x = (x1, ..., xk) is block x1·n2·...·nk + ... + xk
// (digits reversed; the identity for the cyclic group, bit reversal for
// xor).  Z_n1 is folded first, so each step's block set is then one index
// range, two where a cyclic range wraps past block P-1: a transfer is one
// or two messages on the wire (always one for xor), never one per block.
//
// Reduction phase (paper §7, eqs. (17)-(24)): G = Z_n1 × ... × Z_nk is folded
// one factor at a time (Z_n1 first).  While folding factor Z_n with N live
// values of its coordinate, the step sends the top ⌊N/2⌋ values
// [⌈N/2⌉, N) with d = -⌊N/2⌋ (that coordinate), landing on [N mod 2,
// ⌈N/2⌉) where they are combined; value 0 idles when N is odd.  After
// L = Σ ⌈log2 ni⌉ steps only (0, G) is left: rank p owns element p reduced.
// The distribution phase replays the steps backwards without combining.
//
// Fewer steps (paper §8, eq. (36); §9, eq. (43)): to skip the last r
// distribution steps, the reduction phase computes (j, G) for every j in
// J = A_{L-r}, the placements still live r steps before its end, by running
// the reduction for every translate j + (base schedule), j ∈ J, at once.
// Translates that hold the same (placement, set) share one copy; translates
// whose sets differ at the same placement (the paper's q* and q') occupy
// two buffers.  Sends of all translates in a step go to the same peer and
// are one transfer.  r = 0: J = {0}; r = L: J = G, no distribution.
// Where a rank sends a vector to one translate and keeps it for another,
// the combination lands in the receive slot instead of in place.
//
// Groups (param group=)
//   cyclic (default)  T_P = <t>, t = (0 1 ... P-1): the paper's group, any P.
//                     r = 0 for P = 7 sends 3,2,1 blocks then 1,2,3 (Fig. 5).
//   xor               (Z_2)^k for P = 2^k (paper Table 1.b): partners are
//                     rank XOR 2^i in step i (i = 0, 1, ...).  r = 0 is
//                     exactly recursive halving then recursive doubling
//                     of the halves; r = k is exactly recursive doubling of
//                     the whole vector; between, halving for k-r steps,
//                     doubling on the m/2^(k-r) piece for r steps, then the
//                     allgather of the halving steps.
//   n1xn2x...         Z_n1 × Z_n2 × ..., Π ni = P, rank = x1 + n1·(x2 +
//                     n2·(...)).  What it buys: Z_n1 is folded first, so
//                     with n1 = ranks per node the big early messages stay
//                     inside a node and only 2(P/n1 - 1)/P · m per rank
//                     crosses nodes for r = 0 (the cyclic group sends its
//                     first ⌊P/2⌋ blocks across nodes).  The step count is
//                     L = Σ⌈log2 ni⌉, which equals ⌈log2 P⌉ when at most one
//                     factor is not a power of two (e.g. 4x3, 2x2x5) and
//                     can exceed it otherwise (3x5: 5 > 4); genx accepts
//                     both and reports the steps.  "xor" is 2x2x...x2,
//                     "cyclic" is the single factor P.
//
// Parameters: r = 0..L (default 0) and group (default cyclic).  Which r
// pays for a message size is the cost model's call (tuning/), which prices
// every r from the plans themselves; the paper's closed forms (36)/(44) are
// checked against the plans' statistics in test_butterfly.cpp.
//
// Cost (u = m/P, exact for the cyclic group; n_i = live vectors before step
// i, N_J = |J| = n_{L-r} <= 2^r):
//   α: 2L - r steps; per step one message per rank and direction for xor,
//      at most two otherwise (a wrapping range, see Block labels).
//   β: Σ_{i<L} min(P, ⌊n_i/2⌋ + N_J - 1)·u + (P - N_J)·u per rank
//      = 2(P-1)u for r = 0 (eq. (25)), ≤ (2(P-1) + (2^r-1)(L-1))u (eq. (36)),
//      = P·L·u for r = L (eq. (44)).
//   γ: (P-1)u for r = 0; ≤ eq. (36) / (44) otherwise (see test_butterfly.cpp
//      for the exact count); δ: one fused 2-input reduce per combination.
// For prime P the sumset J + B_i is as small as any set of |J| translates
// can make it (Cauchy-Davenport), so the cyclic volume is then optimal for
// this construction.
//
// Where the paper's formulas are wrong (the plans and tests follow the
// corrected form):
//   * eq. (20)/(21)/(23) for odd N_i: as printed they send vectors
//     ⌊N/2⌋..N-1 (⌈N/2⌉ of them) and (23) pairs q_1 with q_⌊N/2⌋ yielding
//     ⌊N/2⌋ vectors, which contradicts (18) (⌈N/2⌉ survive), (19) (shift
//     ⌊N/2⌋) and (25) (2(P-1)u in total).  Correct: send ⌈N/2⌉..N-1 (⌊N/2⌋
//     vectors), result t^0 q_0 : t^k (q_k ⊕ q_{k+⌊N/2⌋}) for 1 <= k < ⌈N/2⌉.
//   * §8's text says the extra volume is (2^r-1)⌈log P⌉u; eq. (36)'s
//     (2^r-1)(⌈log P⌉-1)u is the right bound (the r skipped distribution
//     steps save N_J - 1 blocks).  Only N_J = n_{L-r} translates are needed,
//     not 2^r: fewer whenever some n_i is odd (P = 5, r = 2: 3 not 4).
//   * eq. (44)'s γ term P(2⌈log P⌉-2)u is 0 for P = 2, but latency-optimal
//     P = 2 reduces the whole vector (P·u = m); the bound holds for P >= 3.
//   * eq. (37) writes log(P) - 1 where (36) has ⌈log P⌉ - 1; genx uses L.
//
// Rank order: not preserved.  The cyclic group combines non-contiguous rank
// sets (P = 7: block 0's first sum is {1,4}), and even where sets are
// intervals (xor) the IR's reduce appends the received operand after the
// local one on every rank, so half the ranks combine right ⊕ left.  Only
// P = 1 sets Plan::order_preserving; non-commutative ops must fall back.
//
// Scratch: the receive slot plus, when r > 0 and the group has q*/q'
// classes, one slot for the q' class: at most 2 slots, each at most P blocks.
//
//   P = 7, cyclic, r = 0, rank p (block numbers relative to p: "p-3" etc.):
//   reduce   step 0: send p-4..p-6 to p-3 | recv p-1..p-3 from p+3, ⊕
//            step 1: send p-2,p-3 to p-2  | recv p,p-1 from p+2, ⊕
//            step 2: send p-1 to p-1      | recv p from p+1, ⊕ -> block p done
//   allgather steps 3..5 replay 2,1,0 backwards, received in place.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// Params: r (0..L), group (cyclic | xor | n1xn2x...).
Status prepare_butterfly(const GenRequest& req, RankGenerator* out);
// The family's parameter space for the selector (registry.hpp).
void butterfly_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
