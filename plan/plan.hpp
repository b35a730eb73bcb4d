// The Plan IR: an allreduce schedule as data.
//
// A Plan is what every generator produces and what the checker proves, the
// cost model prices, the printer draws and the executor runs.  It never
// touches a transport.
//
// Data model
// ----------
// * The vector of `count` elements is cut into `nblocks` blocks; block b is
//   elements [b*count/nblocks, (b+1)*count/nblocks) (block_range()).  Any
//   count works, including count < nblocks (empty blocks) and count == 0.
// * Each rank owns two kinds of buffers:
//     - the result buffer (kResult): holds the rank's input at the start
//       (the executor copies sendbuf there unless MPI_IN_PLACE) and must hold
//       the full reduction at the end;
//     - scratch slots 0..nslots-1.  A slot stores blocks at positions that
//       are packed in block order over the set of blocks the rank ever writes
//       to that slot (its "layout", computed by finalize()).  This keeps
//       scratch compact: a parameter-server slot that only ever receives the
//       rank's own block costs one block, a ring slot at most P-1 blocks.
// * A Program is one rank's ordered list of Steps.  In a Step the executor
//   posts every receive and every send concurrently, waits for all of them,
//   then runs the local ops in order.  Consequences the checker enforces:
//     - a step never receives into a (buffer, block) that one of its own
//       sends reads or that another of its receives writes;
//     - at most one send and one receive per peer per step (so the message
//       decomposition of a transfer cannot interleave with another one);
// * A Transfer moves an ordered block list.  On the wire it becomes one
//   message per maximal run of consecutive block indices (contiguous in the
//   result buffer and in any slot layout alike), each run cut into segments.
//   Both sides derive the same message sequence from the same block list,
//   and transfers between a pair are matched in posting order (MPI
//   non-overtaking on one tag); the checker proves both sides agree.
// * A LocalOp is either a fused k-ary reduce  dst ⊕= src1 ⊕ ... ⊕ src(k-1)
//   (one pass over k inputs, the GenModel δ term) or a copy dst := src, over
//   a list of blocks, each operand a buffer (result or a slot).
//
// Why slots are keyed by block instead of GC3's (buffer, index) chunks:
// every genx family moves whole blocks of the one vector, so naming data by
// block keeps generators short and lets the checker track contributions per
// block without an index map.  An algorithm needing two different partial
// sums of the same block on one rank at once uses two slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace genx {

// Buffer id: kResult or a scratch slot index >= 0.
using BufferId = int;
constexpr BufferId kResult = -1;

struct Transfer {
    int peer = -1;
    std::vector<int> blocks;     // ordered; the wire order of the data
    BufferId buffer = kResult;   // send: read from; recv: write into
    // How the executor cuts this transfer into messages: 0 = by the
    // plan-wide `segment` size (ExecOptions::segment_bytes); k > 0 = into
    // messages of at most k blocks' bytes (k × ⌈count / nblocks⌉ elements)
    // whatever the plan-wide size, e.g. one message per pipeline chunk
    // (mtree).  A send and the receive it matches must agree (the checker
    // proves it): both sides cut the same bytes the same way.
    int segment_blocks = 0;
};

enum class OpKind : uint8_t { Reduce, Copy };

struct LocalOp {
    OpKind kind = OpKind::Reduce;
    BufferId dst = kResult;
    std::vector<BufferId> srcs;  // Reduce: k-1 >= 1 sources; Copy: exactly 1
    std::vector<int> blocks;
};

struct Step {
    std::vector<Transfer> recvs;
    std::vector<Transfer> sends;
    std::vector<LocalOp> ops;
};

struct Program {
    std::vector<Step> steps;
    // Filled by finalize(): layout[s] = sorted blocks ever written to slot s.
    std::vector<std::vector<int>> slot_layout;
};

// What every rank's program of a plan shares: a per-rank generator
// (registry.hpp) returns it with each program, and the all-rank Plan below
// carries it too.
struct PlanHeader {
    std::string algorithm;  // generator name, e.g. "ring"
    std::string params;     // canonical "key=value,..." the generator used
    int nranks = 0;
    int nblocks = 0;
    // True when every reduce combines contributions in rank order, so the
    // plan is valid for non-commutative ops.  Generators set it only when
    // the checker's order tracking can prove it (checker verifies).
    bool order_preserving = false;
    // Rank symmetry, when the generator declares one: the radix list
    // (n1, n2, ...) of the finite abelian group Z_n1 × Z_n2 × ... whose
    // element x = x1 + n1·(x2 + n2·(...)) is rank x (symmetry.hpp).  The
    // plan is invariant under translation: for every t, rank r ⊕ t runs
    // rank r's program with every peer p replaced by p ⊕ t and its block
    // labels permuted (same block counts, hence the same bytes whenever
    // count is a multiple of nblocks).  The cost model then prices a plan
    // from the ranks of one node instead of P programs; the checker proves
    // the declaration (check_symmetry).  Empty: none declared.
    std::vector<int> symmetry;
    // Digits of `symmetry` (indices, ascending) that the declared
    // translations leave at 0: the plan is invariant only under the
    // translations of the other digits (GenTree rearranging a switch's
    // blocks onto some of its hosts still has its switches alike, not its
    // hosts).  Empty: every translation.
    std::vector<int> symmetry_fixed;
    // Ranks whose programs cover every distinct per-step workload: every
    // rank's per-step bytes, fan-in and work equal one of these ranks' when
    // count is a multiple of nblocks (check_representatives compares
    // transfer, op and block counts).  Message counts can differ by one per
    // transfer where a rank's block range wraps (butterfly's cyclic and
    // mixed groups), so per-step message maxima read off representatives
    // may be one low there.  Statistics of a large
    // plan are read off these programs alone.  Empty: every rank.
    std::vector<int> representatives;
};

struct Plan : PlanHeader {
    int nslots = 0;
    std::vector<Program> programs;  // one per rank

    // Number of steps of the longest program.
    int max_steps() const;
};

// Element range [first, second) of block b for a vector of `count` elements.
inline std::pair<size_t, size_t> block_range(size_t count, int nblocks, int b) {
    const size_t lo = static_cast<size_t>(b) * count / static_cast<size_t>(nblocks);
    const size_t hi = static_cast<size_t>(b + 1) * count / static_cast<size_t>(nblocks);
    return {lo, hi};
}

inline size_t block_elems(size_t count, int nblocks, int b) {
    auto r = block_range(count, nblocks, b);
    return r.second - r.first;
}

// Computes one program's slot layouts: slot_layout has one entry per slot
// the program names (at least `min_slots`).  Idempotent.
void finalize_program(Program& prog, int min_slots = 0);

// Computes slot layouts (and nslots if it is too small) from the programs.
// The registry calls it on every assembled plan; it is idempotent.
void finalize(Plan& plan);

// Slots one program uses: slot_layout.size() once finalized.
inline int program_slots(const Program& prog) { return static_cast<int>(prog.slot_layout.size()); }

// Position (in elements) of block b inside slot s of `prog` for a vector
// of `count` elements cut into `nblocks`; -1 when b is not in the slot's
// layout.
long program_slot_offset(const Program& prog, int nblocks, BufferId slot, int block, size_t count);
// Elements of slot s of `prog` for `count` (sum of its layout's blocks).
size_t program_slot_elems(const Program& prog, int nblocks, BufferId slot, size_t count);

// Position (in elements) of block b inside slot s of rank r's program for
// a vector of `count` elements; -1 when b is not in the slot's layout.
long slot_offset(const Plan& plan, int rank, BufferId slot, int block, size_t count);

// Elements of slot s of rank r for `count` (sum of its layout's blocks).
size_t slot_elems(const Plan& plan, int rank, BufferId slot, size_t count);

}  // namespace genx
