// What a communicator's calls cost so far, for tests and benchmarks (C++
// only: the component never asks, so this is not part of the C API).
#pragma once

#include <cstdint>

#include "genx/genx_core.h"

namespace genx {

struct CommStats {
    uint64_t calls = 0;              // allreduce calls genx ran (not declined)
    uint64_t schedule_compiles = 0;  // schedule cache misses
    // Plans this process generated (process-wide, all communicators).
    uint64_t plans_generated = 0;
    uint64_t progress_calls = 0;  // transport progress() calls, summed over the calls
    uint64_t waits = 0;           // transport wait_all() calls, summed over the calls
    // Calls on device memory genx staged (its plan or the fallback's), and
    // of those the ones reduced on the device (CUDA-aware or bounced).
    uint64_t device_calls = 0;
    uint64_t device_reduced = 0;
    // Of calls: reused the previous call's decision (same count, type and
    // op: no kernel, table or schedule lookup).
    uint64_t repeat_calls = 0;
};

// All zero for a NULL communicator.
CommStats comm_stats(const genx_comm* comm);

}  // namespace genx
