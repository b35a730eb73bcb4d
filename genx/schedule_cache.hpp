// A communicator's compiled schedules, the last blocking call it ran, and
// its blocking calls' scratch area.
//
// A schedule is exact to the element count (block boundaries), so an
// application's distinct counts each need one: an LRU keyed by (plan,
// count, element size) keeps 64 of them and at most 64 MiB, which holds
// what real codes cycle through (a solver's few dot-product sizes, a
// training step's gradient buckets) without recompiling; the last one used
// is checked first.  Entries are shared: a request in flight keeps its
// own schedule while the cache evicts it.
//
// The last-call memo: a loop calls MPI_Allreduce the same way again, so
// the last blocking call on host memory is reused while the next has the
// same count, type, element size, op and commutativity, with no kernel,
// table or schedule lookup.  Only genx's own kernels (a callback's context
// changes from call to call); valid while the cache evicted nothing since.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/genx_types.h"
#include "common/status.hpp"
#include "genx/plan_cache.hpp"
#include "runtime/device_calls.hpp"
#include "runtime/executor.hpp"
#include "runtime/reduce.hpp"
#include "runtime/scratch.hpp"

namespace genx {

// What a call runs, once genx decided to run it: the plan, its schedule
// for this count and the reduce kernel.
struct Call {
    size_t bytes = 0;
    const RankPlan* plan = nullptr;
    const RankSchedule* sched = nullptr;
    ReduceKernel kernel;
};

struct ScheduleEntry {
    const RankPlan* plan = nullptr;
    size_t count = 0;
    size_t elem_size = 0;
    uint64_t last_used = 0;
    size_t bytes = 0;
    RankSchedule schedule;
    StagedSchedule device;  // the device path's, from the first call on device memory
};

class ScheduleCache {
  public:
    static constexpr size_t kEntries = 64;
    static constexpr size_t kBytes = size_t{64} << 20;

    // The schedule of (plan, count, elem_size), compiled on a miss
    // (evicting least recently used entries, never the one being added, so
    // a schedule larger than the cap still runs).  `keep`: shared
    // ownership, for a call that outlives the entry.
    Status find(const RankPlan& p, size_t count, size_t elem_size, const RankSchedule** out,
                std::shared_ptr<const RankSchedule>* keep = nullptr);
    // The entry find() returned last (the most recently used).
    ScheduleEntry* last() const { return last_; }
    // Drops every entry (schedules are keyed by plan address, and a freed
    // plan's address may come back for a new one); counted as an eviction,
    // which forgets the remembered call.
    void clear();

    // Remembers a decided host call (`allowed`: not at verbose >= 2, which
    // logs every call) ...
    void remember(const Call& call, size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
                  int commutative, bool allowed);
    // ... forgets it (a first-call trial changed what its size runs) ...
    void forget() { last_call_.valid = false; }
    // ... and finds it again: the call the decision would return, its
    // schedule touched as find() would.  nullptr when the call differs.
    const Call* remembered(size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
                           int commutative);

    // Blocking calls' scratch area (one call at a time).
    ScratchArea& scratch() { return scratch_; }

    uint64_t compiles() const { return compiles_; }
    uint64_t repeats() const { return repeats_; }

  private:
    void touch(ScheduleEntry* e);
    std::shared_ptr<const RankSchedule> share(const ScheduleEntry* e) const;

    struct LastCall {
        bool valid = false;
        size_t count = 0;
        genx_dtype dtype = GENX_DT_OTHER;
        size_t elem_size = 0;
        genx_op op = GENX_OP_OTHER;
        int commutative = 0;
        uint64_t evictions = 0;
        ScheduleEntry* entry = nullptr;
        Call call;
    };

    std::vector<std::shared_ptr<ScheduleEntry>> entries_;
    ScheduleEntry* last_ = nullptr;
    size_t bytes_ = 0;
    uint64_t tick_ = 0;
    uint64_t evictions_ = 0;
    uint64_t compiles_ = 0;
    uint64_t repeats_ = 0;
    LastCall last_call_;
    ScratchArea scratch_;
};

}  // namespace genx
