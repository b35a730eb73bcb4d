// genx-tune's timing (tune/timing.hpp).
#include "tune/timing.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "runtime/mpi_transport.hpp"
#include "tune/report.hpp"

namespace genx::tune {

double Budget::left() const { return deadline - mpi::wtime(); }

namespace {

// The batches of a measurement (collective over comm): one warm-up call of
// `op` (plan buffers, connections), then rank 0 picks {batches, calls per
// batch}, sized to at most the target and to a fair share of what the
// budget leaves, `per_call` seconds added to each call's estimate (the
// barrier of an isolated call); {0, 0} when not even one call fits.
std::array<int, 2> plan_batches(const mpi::Comm& comm, const std::function<void()>& op,
                                const Budget& budget, double target, int remaining,
                                double per_call, int sharing) {
    comm.barrier();
    double t = mpi::wtime();
    op();
    t = comm.max(mpi::wtime() - t);
    std::array<int, 2> plan = {0, 0};  // batches, calls per batch
    if (comm.rank() == 0) {
        // `sharing` ops are sized against the same time left: each gets its share.
        const double left = budget.left() / std::max(sharing, 1);
        const double one = std::max(t + per_call, 1e-7);
        target = std::min(target, left / std::max(remaining, 1));
        if (one < left) {
            int batches = 5;
            // Back to back, at least two calls a batch: the barrier releases
            // the ranks up to one message's latency apart, and a batch of
            // one call then times that skew too (4.2 ms instead of 2.1 ms
            // across two 1 ms uplinks; docs/genx-tune.md, bench/RESULTS.md).
            int iters = std::max(per_call > 0 ? 1 : 2, static_cast<int>(target / batches / one));
            iters = std::min(iters, 10000);
            while (batches > 1 && one * iters * batches > left) --batches;
            while (iters > 1 && one * iters * batches > left) iters /= 2;
            plan[0] = batches;
            plan[1] = iters;
        }
    }
    comm.bcast(plan.data(), 2);
    return plan;
}

// The median or the minimum of `v` (not empty).
double summarize(std::vector<double> v, const Timing& timing) {
    std::sort(v.begin(), v.end());
    return timing.use_min ? v.front() : v[v.size() / 2];
}

}  // namespace

double measure(const mpi::Comm& comm, const std::function<void()>& op, const Budget& budget,
               const Timing& timing, int remaining) {
    const std::array<int, 2> plan = plan_batches(comm, op, budget, timing.target, remaining, 0, 1);
    if (plan[0] == 0) return -1;
    std::vector<double> means;
    for (int b = 0; b < plan[0]; ++b) {
        comm.barrier();
        const double t0 = mpi::wtime();
        for (int i = 0; i < plan[1]; ++i) op();
        means.push_back(comm.max((mpi::wtime() - t0) / plan[1]));
    }
    return summarize(std::move(means), timing);
}

// Batches alternate (batch b of every op, then b + 1, the order rotated
// each time), as bench/compare alternates its configurations: a drift of
// the machine hits every op alike (docs/genx-tune.md, "Decisions").
std::vector<IsolatedTimes> measure_isolated(const mpi::Comm& comm,
                                            const std::vector<std::function<void()>>& ops,
                                            const Budget& budget, const Timing& timing,
                                            int remaining) {
    const int size = comm.size();
    std::vector<IsolatedTimes> out(ops.size());
    // A barrier's cost, for sizing the batches.
    comm.barrier();
    double bar = mpi::wtime();
    comm.barrier();
    bar = comm.max(mpi::wtime() - bar);
    std::vector<std::array<int, 2>> plans;
    int batches = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
        // Every op sized against its share of the same `left`, before any
        // batch runs, so that the point fits in the budget as a whole.
        plans.push_back(plan_batches(comm, ops[k], budget, timing.target, remaining, bar,
                                     static_cast<int>(ops.size())));
        if (plans.back()[0] > 0) batches = batches == 0 ? plans.back()[0] : std::min(batches, plans.back()[0]);
    }
    std::vector<std::vector<double>> means(ops.size());
    for (int b = 0; b < batches; ++b)
        for (size_t j = 0; j < ops.size(); ++j) {
            const size_t k = (j + static_cast<size_t>(b)) % ops.size();
            if (plans[k][0] == 0) continue;
            double sum = 0;
            for (int i = 0; i < plans[k][1]; ++i) {
                comm.barrier();
                const double t0 = mpi::wtime();
                ops[k]();
                sum += mpi::wtime() - t0;
            }
            means[k].push_back(comm.sum(sum / plans[k][1]) / size);
        }
    for (size_t k = 0; k < ops.size(); ++k)
        if (!means[k].empty()) {
            out[k].summary = summarize(means[k], timing);
            out[k].batches = std::move(means[k]);
        }
    return out;
}

PlanRun::PlanRun(const Plan& plan, const mpi::Comm& comm, size_t count, RunBuffers* shared)
    : transport_(mpi::make_transport(comm)), buf_(shared != nullptr ? shared : &own_) {
    check(resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, sizeof(float), nullptr, true, &kernel_),
          "float SUM kernel");
    check(compile(plan, comm.rank(), count, sizeof(float), ExecOptions{}, &schedule_),
          "compiling " + describe(plan.algorithm, plan.params));
    if (buf_->data.size() < count) buf_->data.resize(count, 0.0f);
    const size_t scratch = schedule_.scratch_bytes / sizeof(float) + 1;
    if (buf_->scratch.size() < scratch) buf_->scratch.resize(scratch, 0.0f);
}

void PlanRun::run() {
    Status st = exec_.start(schedule_, nullptr, buf_->data.data(), buf_->scratch.data(),
                            buf_->scratch.size() * sizeof(float), kernel_, *transport_);
    if (st) st = exec_.run();
    check(st, "running " + schedule_.algorithm);
}

}  // namespace genx::tune
