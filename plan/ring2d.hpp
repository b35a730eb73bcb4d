// 2D-ring allreduce (Ying et al., "Image Classification at Supercomputer
// Scale": the 2-D ring of TPU pods, the baseline the MultiTree paper
// compares with): ring reduce-scatters and allgathers along each dimension
// of an X × Y torus or mesh, in the two dimension orders at once so that
// the x and the y links both carry data.
//
// Rank r sits at (x, y).  The vector is cut into 2P blocks: half A is
// blocks 0..P-1, half B blocks P..2P-1.  Each half is a two-level
// hierarchical ring; a ring along a dimension of size n is the ring
// family's (ring.hpp): at reduce-scatter step k a rank at coordinate c
// sends chunk (c-k) mod n to c+1 and receives chunk (c-k-1) mod n from c-1
// into scratch slot 0, then folds it into its result; after n-1 steps it
// owns chunk (c+1) mod n.  The allgather runs the same ring backwards in
// time, received in place.  Only the + neighbour of each dimension is sent
// to, only the − neighbour received from.
//   half A (x first): block x'·Y + y' is super-chunk x' (Y blocks) and
//     sub-block y' of it.  Reduce-scatter along x over the X super-chunks
//     (each row a ring), then along y over the Y blocks of the super-chunk
//     the rank owns (each column a ring), then allgather along y, then
//     along x.
//   half B (y first): block P + y'·X + x'; the same with x and y swapped.
// Messages of both halves to one peer in one step are one transfer (their
// blocks are distinct): half A's blocks first, then half B's.  Both halves
// switch from reduce-scatter (received into slot 0) to allgather
// (received into the result) at step X+Y-2, so a merged receive always
// has one buffer.
//
//   step:    0 … X-2    X-1 … X+Y-3   X+Y-2 … X+2Y-4   X+2Y-3 … 2X+2Y-5
//   half A:  RS x       RS y          AG y             AG x
//   half B:  RS y (Y-1 steps), RS x, AG x, AG y (Y-1)
//
//   3×3 torus, first phase:   half A along rows      half B along columns
//                             0 → 1 → 2 ↺            0   1   2
//                             3 → 4 → 5 ↺            ↓   ↓   ↓
//                             6 → 7 → 8 ↺            3   4   5 …  (6 ↺ 0)
//
// Cost for S bytes: 2(X-1) + 2(Y-1) steps for every X and Y (each half has
// that many and they end together), against the ring's 2(P-1).  Every
// rank sends and receives 2(P-1)/P·S bytes in all, the ring's bandwidth
// optimum: half A sends super-chunks of S/(2X) and (Y-1) blocks of
// S/(2P) in its reduce-scatter and as many in its allgather, half B the
// same with X and Y swapped.  When X = Y, in every step one half uses the x links
// and the other the y links, so both dimensions carry the same load.  When
// X ≠ Y the phases drift apart: with X > Y, in steps Y-1 … X-2 (and their
// mirror images in the allgather) both halves run along x and the y links
// idle; the step count is still 2(X+Y-2).  A dimension of 1 has no steps:
// 1 × Y is a ring of Y ranks (over 2P blocks).  On a torus every transfer
// crosses one link (the wrap-around closes each ring); on a mesh the
// transfer that closes a ring (x = X-1 to x = 0) is routed back across the
// row, X-1 hops.  Reductions run in ring order from a different rank per
// block: not order preserving (commutative ops only).  Scratch: one slot
// of the blocks the rank folds in, (X-1)·Y + (Y-1)·X of the 2P when X and
// Y exceed 1.
//
// Coordinates.  On a topology view with a grid (TopologyView::grid, from
// the torus: and mesh: presets) of two dimensions, or of one (an N × 1
// ring), rank r's coordinates are those of its host; every grid host must
// hold exactly one rank.  Otherwise `dims=XxY` (X·Y = P) lays the ranks out
// in row-major order, rank x + X·y at (x, y), with no topology or on a
// switch tree.  With both, dims must equal the grid's.  Errors: no
// grid and no dims, dims whose product is not P, a grid of three
// dimensions, a grid host with several ranks (or none), a direct network
// that is not a grid.
//
// Symmetry: Z_X × Z_Y (dimensions of 1 dropped) when rank x + X·y sits at
// (x, y), the dims case and a grid in rank order; representatives {0}
// always (every rank's steps have the same shape).
#pragma once

#include <string>
#include <vector>

#include "plan/registry.hpp"

namespace genx {

// Accepts `dims=XxY`.
Status prepare_ring2d(const GenRequest& req, RankGenerator* out);
// "" on a 2-D grid view with one rank per grid host; nothing elsewhere.
void ring2d_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
