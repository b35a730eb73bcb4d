// Plan statistics: what a Plan costs, read off the Plan itself for one
// vector size (docs/design.md §1: never a formula typed next to the generator).
//
// These are the inputs of the GenModel cost model (Xiong et al., Eq. 11,
//   T = Aα + Bβ + Cγ + Dδ + max(w − w_t, 0)·B·ε)
// evaluated step by step: for step s, A contributes 1, and B, C, D, w are
// the per-step maxima over ranks below (a step lasts as long as its busiest
// rank).
//
// Conventions
// * bytes = elements × elem_size; blocks follow block_range(count, nblocks).
// * messages: one per maximal run of consecutive block indices in a
//   transfer's block list (plan.hpp's wire rule), counted whether or not the
//   run holds data (structure, independent of count; segmentation is the
//   executor's business and not counted).
// * incast: receives the rank posts in the step, i.e. distinct senders
//   into it (the checker guarantees one receive per peer per step).
// * fan_in: largest k over the step's reduces, k = 1 + number of sources
//   (dst ⊕= src1 ⊕ ... ⊕ src(k-1)); 0 for a step with no reduce.
// * elements_reduced: Σ (k−1) × elements over the step's reduces (the γ
//   term counts one ⊕ per element per extra operand).
// * memory reads/writes (elements) follow GenModel §3.1, which prices the
//   memory traffic of computation only, not NIC↔memory copies: a k-ary
//   reduce reads k × elems and writes elems; a copy reads and writes elems.
//   Received data is NOT counted as a memory write here (it is priced by
//   β through bytes_received); ring then gives D = 3(P−1)/P·count as in the
//   paper's Table 2.  memory_accesses = reads + writes.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/plan.hpp"

namespace genx {

// One rank's work in one step.
struct StepStats {
    size_t bytes_sent = 0;
    size_t bytes_received = 0;
    int messages_sent = 0;
    int messages_received = 0;
    int incast = 0;
    int fan_in = 0;
    size_t elements_reduced = 0;
    size_t memory_reads = 0;   // elements
    size_t memory_writes = 0;  // elements
};

struct PlanStats {
    int ranks = 0;
    // Programs the numbers were read from: ranks, or the plan's declared
    // representatives for a large plan (PlanHeader::representatives).
    int programs_read = 0;
    size_t count = 0;      // elements in the vector
    size_t elem_size = 0;  // bytes per element
    size_t bytes = 0;      // count × elem_size
    int steps = 0;         // A: the longest program

    // [program read][step]; a program's vector has its own length.
    std::vector<std::vector<StepStats>> per_rank;

    // Totals over steps, maximum over ranks.
    size_t max_bytes_sent_per_rank = 0;
    size_t max_bytes_received_per_rank = 0;
    size_t elements_reduced_per_rank = 0;
    size_t memory_accesses_per_rank = 0;  // elements
    // Maxima over all ranks and steps.
    int max_fan_in = 0;
    int max_incast = 0;

    // Per step s (size = steps): maximum over the ranks that have step s.
    std::vector<size_t> step_bytes_sent;
    std::vector<size_t> step_bytes_received;
    std::vector<size_t> step_bytes;             // B: max over ranks of max(sent, received)
    std::vector<size_t> step_elements_reduced;  // C
    std::vector<size_t> step_memory_accesses;   // D: reads + writes, elements
    std::vector<int> step_incast;               // w
    std::vector<int> step_fan_in;
    std::vector<int> step_messages;  // max over ranks of max(sent, received) messages
};

// Statistics of `plan` for a vector of `count` elements of `elem_size`
// bytes.  The plan should pass the checker; the numbers are read off its
// structure either way.
PlanStats compute_stats(const Plan& plan, size_t count, size_t elem_size);

// The same from a prepared generator without building the plan: every
// rank's program up to kWholePlanMaxRanks ranks, the declared
// representatives beyond (the plan's numbers exactly when count is a
// multiple of nblocks; otherwise within one element per block).
struct RankGenerator;
PlanStats compute_stats(const RankGenerator& gen, size_t count, size_t elem_size);

// Messages a block list becomes on the wire: maximal runs of consecutive
// (ascending by one) block indices.
int count_runs(const std::vector<int>& blocks);

}  // namespace genx
