// What a payload-free rank's local ops cost in simulated time: GenModel's
// host terms (tuning/cost_model.hpp), γ per byte combined and δ per byte
// read or written, charged as one SimGrid execution per step on the rank's
// host (one core per rank: platform.hpp gives each host ranks_per_host
// cores, so co-located ranks compute in parallel as GenModel's per-rank γ
// and δ assume).
#pragma once

#include "runtime/executor.hpp"
#include "tuning/cost_model.hpp"

namespace genx::sim {

// Bytes of one step's ops by stats.hpp's conventions: a k-ary reduce of n
// bytes combines (k−1)·n and reads k·n and writes n; a copy reads and
// writes n.
struct OpWork {
    double combined = 0;  // bytes, GenModel's C
    double accessed = 0;  // bytes, GenModel's D
};
OpWork step_op_work(const RankSchedule& schedule, const StepSched& step);

class GenModelOpCost final : public LocalOpHook {
  public:
    explicit GenModelOpCost(const HostParams& host) : host_(host) {}
    // Runs γ·C + δ·D seconds of work on the calling actor's host.
    Status local_ops(const RankSchedule& schedule, const StepSched& step) override;
    double charged_seconds() const { return charged_; }

  private:
    HostParams host_;
    double charged_ = 0;
};

}  // namespace genx::sim
