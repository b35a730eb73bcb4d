// Test helper: real int64 sums of a plan on the loopback transport.  Every
// rank runs the plan for each count in `counts` (one Execution per rank,
// reused) and compares its result with the exact sum; values depend on
// rank and element so that a misplaced or double-counted block shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/plan.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"

inline genx::Status run_sum(const genx::Plan& plan, const std::vector<size_t>& counts,
                            const genx::ExecOptions& o = genx::ExecOptions{}) {
    using namespace genx;
    const int P = plan.nranks;
    auto value = [](int rank, size_t i) {
        return static_cast<int64_t>((rank + 1) * 1000003) * static_cast<int64_t>(i % 977 + 1) + rank;
    };
    return run_ranks(P, [&](int rank, Transport& t) -> Status {
        Execution ex;
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT64, GENX_OP_SUM, 8, nullptr, &k));
        for (size_t count : counts) {
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(plan, rank, count, 8, o, &sched));
            std::vector<int64_t> in(count), out(count, -1);
            for (size_t i = 0; i < count; ++i) in[i] = value(rank, i);
            std::vector<unsigned char> scratch(sched.scratch_bytes);
            GENX_RETURN_IF_ERROR(ex.start(sched, in.data(), out.data(), scratch.data(), scratch.size(), k, t));
            GENX_RETURN_IF_ERROR(ex.run());
            for (size_t i = 0; i < count; ++i) {
                int64_t want = 0;
                for (int q = 0; q < P; ++q) want += value(q, i);
                if (out[i] != want)
                    return Status::internal(plan.algorithm + " P=" + std::to_string(P) + " count " +
                                            std::to_string(count) + ": rank " + std::to_string(rank) +
                                            " element " + std::to_string(i) + " is " +
                                            std::to_string(out[i]) + ", expected " + std::to_string(want));
            }
        }
        return Status::ok();
    });
}
