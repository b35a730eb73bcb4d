// How genx-tune times things: batches sized to a budget, back to back
// (the fit's benchmarks) or each call alone as OSU does (--verify), and a
// plan run by genx's executor over the MPI transport (docs/genx-tune.md,
// "What it measures").
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/executor.hpp"
#include "runtime/mpi_comm.hpp"
#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"

namespace genx::tune {

struct Budget {
    double deadline = 0;  // MPI_Wtime of world rank 0
    double left() const;
};

// A measurement's aims: seconds when time allows, and the statistic over
// its batches (the median, or the minimum).
struct Timing {
    double target = 0.2;
    bool use_min = false;
};

// Seconds per call of `op` on every rank of `comm` (collective), calls back
// to back: the statistic over batches of the slowest rank's batch mean; -1
// on every rank when not even one call fits in the budget's share for the
// `remaining` measurements of the phase (this one included).
double measure(const mpi::Comm& comm, const std::function<void()>& op, const Budget& budget,
               const Timing& timing, int remaining);

// One op's isolated timing: the statistic over its batches and every
// batch's time, in the order run (batch b of every op ran together, so
// two ops' batches pair by index: tune/paired.hpp).
struct IsolatedTimes {
    double summary = -1;          // seconds per call; -1: the budget had no room
    std::vector<double> batches;  // seconds per call of each batch; empty when not timed
    double warm = -1;             // its warm-up call's seconds (slowest rank); -1: not warmed
};

// Seconds per call of each of `ops` as OSU's osu_allreduce times
// MPI_Allreduce: every call alone after a barrier, each rank's mean over a
// batch, the batch's value the mean over ranks; the ops' batches
// alternate.  --verify decides with this.  Where the budget leaves the
// ops fewer batches than a paired decision needs (kMinPairedBatches), ops
// of `drop_order` are left out, the first first, until it does
// (plan_point_batches, tune/batch_plan.hpp); those get no time.
std::vector<IsolatedTimes> measure_isolated(const mpi::Comm& comm,
                                            const std::vector<std::function<void()>>& ops,
                                            const Budget& budget, const Timing& timing,
                                            int remaining,
                                            const std::vector<size_t>& drop_order = {});

// The vector and scratch plans run on, zeros; several PlanRuns measured
// together share one (they run one at a time).
struct RunBuffers {
    std::vector<float> data, scratch;
};

// One rank's compiled plan with its buffers, run in place on zeros (sums
// stay zero, so repeated runs never overflow and cost the same).
class PlanRun {
  public:
    PlanRun(const Plan& plan, const mpi::Comm& comm, size_t count, RunBuffers* shared = nullptr);
    void run();

  private:
    std::unique_ptr<Transport> transport_;
    ReduceKernel kernel_;
    RankSchedule schedule_;
    Execution exec_;
    RunBuffers own_;
    RunBuffers* buf_;
};

}  // namespace genx::tune
