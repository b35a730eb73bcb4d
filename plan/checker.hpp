// The symbolic checker: proves that a Plan is an allreduce the executor can
// run (docs/design.md §3.4).
//
// It runs the plan on symbols instead of numbers.  Every (rank, buffer,
// block) holds either "unwritten" or the ordered list of contributions
// (rank ids) it combines; a result buffer starts as {own rank}, slots start
// unwritten.  The executor's semantics (plan.hpp) are followed exactly:
//   * a step posts all its transfers at once; the data a send carries is the
//     sender's buffer when the step posts; received data replaces the
//     destination's list;
//   * transfers between an ordered pair are matched in posting order (the
//     sender's sends to that peer over its steps against the receiver's
//     receives from it) and matched transfers must carry the same block list;
//   * local ops run in order once all transfers of the step completed; a
//     reduce dst ⊕= src1 ⊕ ... appends the sources' lists after dst's, in
//     operand order; a copy replaces dst's list with src's.
// Deadlock freedom is checked under rendezvous semantics (a transfer
// completes only when both sides have posted it), the strictest a transport
// may choose, so a plan that passes cannot hang on any transport.
//
// A plan passes when every rank's result buffer ends holding, for every
// block, each of the P contributions exactly once.  It is order preserving
// when every such list is exactly 0, 1, ..., P-1 (valid for non-commutative
// ops); a plan that sets Plan::order_preserving must be.
//
// Cost: structure and matching are linear in the plan's size (plus a sort of
// the transfers); the simulation shares immutable contribution lists, so a
// copy or a transfer costs one integer per block and only a reduce builds a
// new list.  P = 128 ring/butterfly plans check in milliseconds.
#pragma once

#include <cstdint>
#include <string>

#include "plan/plan.hpp"

namespace genx {

// What went wrong; the first violation found is reported.
enum class Violation {
    None,
    Malformed,      // plan shape: nranks, nblocks, number of programs
    BadPeer,        // peer out of range or == self
    BadBlock,       // block index out of range
    BadBuffer,      // buffer id neither kResult nor a slot < nslots
    BadOp,          // reduce with no sources, copy with != 1 source
    DuplicatePeer,  // more than one send (or receive) per peer in one step
    StepConflict,   // a receive writes what a send of the step reads or
                    // what another receive of the step writes
    Mismatched,     // matched transfers carry different block lists
    Misordered,     // ... because the two sides post them in different orders
    UnmatchedSend,  // send with no receive
    UnmatchedRecv,  // receive with no send
    Deadlock,       // no rank can progress under rendezvous semantics
    UnwrittenRead,  // send or op reads a slot block never written
    MissingContribution,
    DuplicateContribution,
    NotOrderPreserving  // required (option or Plan::order_preserving) but not so
};

// Stable lowercase name, e.g. "missing-contribution" (used in messages).
const char* violation_name(Violation v);

struct CheckOptions {
    // Also fail when the final lists are not all in rank order.
    bool require_order_preserving = false;
};

struct CheckResult {
    bool ok = false;
    Violation kind = Violation::None;
    // Where: the rank and step of the offending transfer or op.  For a
    // transfer matching problem it is the sender's side; for a deadlock the
    // lowest stuck rank and its step; for a missing contribution (only
    // visible at the end) the lowest rank/block whose final list is wrong and
    // step -1; for a duplicated contribution the reduce that first combined a
    // contribution twice.  -1 where not applicable.
    int rank = -1;
    int step = -1;
    int block = -1;
    std::string message;            // full sentence naming rank, step, block and the cause
    bool order_preserving = false;  // valid only when ok
};

CheckResult check_plan(const Plan& plan, const CheckOptions& options = {});

// Proves the rank symmetry a plan declares (PlanHeader::symmetry): for
// every rank r and every translation t of the group (its fixed digits 0:
// PlanHeader::symmetry_fixed), rank r ⊕ t's program
// has r's steps with every peer translated by t, the same buffers and ops,
// and the same number of blocks in every transfer and op.  Only the labels
// of the blocks (and so how a block list splits into runs on the wire) may
// differ.  A plan that declares nothing passes.  Cost: P² programs' worth
// of comparisons; meant for the generator tests (P up to a few hundred).
CheckResult check_symmetry(const Plan& plan);

// Proves that a plan's declared representatives (PlanHeader::
// representatives) cover every rank's per-step workload: each rank's
// program has, step by step, the transfer, op and block counts of one
// representative.  Empty representatives pass.
CheckResult check_representatives(const Plan& plan);

// The sampled check for plans too large to check whole (10⁵ ranks):
// `samples` ranks drawn at random (seeded), and for each, its transfers with
// up to `max_peers` of its peers (all when it has that few; a random subset
// otherwise).  Every send must meet, in the peer's program, the receive that
// matches it in posting order (the k-th send from r to p against the k-th
// receive of p from r), carrying the same block list, and every receive
// likewise its send.  Programs come from the generator one rank at a time.
// It proves matching, not the result: the full checker proves that on
// small P, for the same generator.
struct SampleOptions {
    int samples = 16;
    int max_peers = 64;
    uint64_t seed = 1;
};
struct RankGenerator;
CheckResult check_sampled(const RankGenerator& gen, const SampleOptions& options = {});

}  // namespace genx
