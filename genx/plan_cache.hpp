// Process-wide cache of one rank's plans (docs/design.md §5).
//
// Communicators of the same size on which a process holds the same rank
// (MPI_COMM_WORLD and its duplicates, the row communicators of a grid, ...)
// run the same programs, so each (algorithm, params, P, rank) is generated
// once per process and shared.  A communicator keeps shared_ptrs to the
// plans its decisions name for its whole life, so the cache never frees a
// plan in use: eviction only drops plans no communicator holds any more,
// least recently requested first, when the cache's estimated memory goes
// over its cap.  A generation failure is cached like a plan (its status
// says why) so that every call declines with the same reason.
//
// Thread safety: get() may be called concurrently from any thread
// (MPI_THREAD_MULTIPLE); entries are immutable once published.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.hpp"
#include "plan/plan.hpp"
#include "runtime/executor.hpp"

namespace genx {

// One rank's program of (algorithm, params) on P ranks, ready to compile.
struct RankPlan {
    std::string algorithm;
    std::string params;  // canonical, generator and executor keys together
    int nranks = 0;
    int rank = 0;
    Status status;  // generation result; nothing below is valid unless ok
    PlanHeader header;
    Program program;
    ExecOptions exec;
    size_t bytes = 0;  // estimated memory of the entry
};

constexpr size_t kPlanCacheDefaultCap = size_t{256} << 20;

// The plan for (algorithm, params) on rank `rank` of `nranks`, generated on
// first request.  `params` holds generator and executor keys (as a decision
// names them, with the user's executor keys already applied); it must be
// canonical (format_params) so that equal requests share one entry.
std::shared_ptr<const RankPlan> rank_plan(const std::string& algorithm, const std::string& params,
                                          int nranks, int rank);
// The same on a topology view: families that read it (GeneratorInfo::
// uses_topology) are keyed by its fingerprint as well.
std::shared_ptr<const RankPlan> rank_plan(const std::string& algorithm, const std::string& params,
                                          int nranks, int rank, const TopologyView* topology);

struct PlanCacheStats {
    size_t entries = 0;
    size_t bytes = 0;
    size_t cap = 0;
    uint64_t generated = 0;  // misses since the process started
    uint64_t evicted = 0;
};
PlanCacheStats plan_cache_stats();
// Sets the cap (bytes) and evicts what it can at once; for tests and tools.
void set_plan_cache_cap(size_t bytes);

// Estimated heap bytes of a program (steps, transfers, ops and their block
// lists, slot layouts).
size_t program_bytes(const Program& program);

}  // namespace genx
