// genx-tune's timing (tune/timing.hpp).
#include "tune/timing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "runtime/mpi_transport.hpp"
#include "tune/batch_plan.hpp"
#include "tune/paired.hpp"
#include "tune/report.hpp"

namespace genx::tune {

double Budget::left() const { return deadline - mpi::wtime(); }

namespace {

// One warm-up call of `op` (plan buffers, connections), collective over
// comm: the slowest rank's seconds.
double warm_up(const mpi::Comm& comm, const std::function<void()>& op) {
    comm.barrier();
    const double t = mpi::wtime();
    op();
    return comm.max(mpi::wtime() - t);
}

// The median or the minimum of `v` (not empty).
double summarize(std::vector<double> v, const Timing& timing) {
    std::sort(v.begin(), v.end());
    return timing.use_min ? v.front() : v[v.size() / 2];
}

}  // namespace

double measure(const mpi::Comm& comm, const std::function<void()>& op, const Budget& budget,
               const Timing& timing, int remaining) {
    const double one = warm_up(comm, op);
    std::array<int, 2> plan = {0, 0};
    // Back to back, at least two calls a batch: the barrier releases the
    // ranks up to one message's latency apart, and a batch of one call then
    // times that skew too (4.2 ms instead of 2.1 ms across two 1 ms uplinks;
    // docs/genx-tune.md, bench/RESULTS.md).
    if (comm.rank() == 0) plan = plan_op_batches(one, budget.left(), timing.target, remaining, 0, 2);
    comm.bcast(plan.data(), 2);
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
                                            int remaining, const std::vector<size_t>& drop_order) {
    const int size = comm.size();
    std::vector<IsolatedTimes> out(ops.size());
    // A barrier's cost, for sizing the batches.
    comm.barrier();
    double bar = mpi::wtime();
    comm.barrier();
    bar = comm.max(mpi::wtime() - bar);
    BatchRequest req;
    // Warm-ups in warm_up_order, rank 0 deciding for all: the ops always
    // kept while any budget is left (a 16 MiB point's eleven warm-ups at
    // 5-6 s a call ran a 570 s budget to 626 s), the others only where their
    // batches still fit (warm_another).  An op not warmed up gets no time.
    req.one.assign(ops.size(), std::numeric_limits<double>::infinity());
    const std::vector<size_t> order = warm_up_order(ops.size(), drop_order);
    size_t always = ops.size();
    for (size_t k : drop_order) always -= k < ops.size() ? 1 : 0;
    std::vector<double> warmed;
    for (size_t j = 0; j < order.size(); ++j) {
        int go = 0;
        if (comm.rank() == 0)
            go = j < always ? budget.left() > 0
                            : warm_another(warmed, budget.left(), kMinPairedBatches, bar);
        comm.bcast(&go, 1);
        if (go == 0) break;
        req.one[order[j]] = warm_up(comm, ops[order[j]]);
        warmed.push_back(req.one[order[j]]);
    }
    // Every op sized against its share of the same time left, before any
    // batch runs, so that the point fits in the budget as a whole.
    req.left = budget.left();
    req.remaining = remaining;
    req.target = timing.target;
    req.per_call = bar;
    req.drop_order = drop_order;
    req.want = kMinPairedBatches;
    std::vector<int> flat(2 * ops.size(), 0);
    if (comm.rank() == 0) {
        const std::vector<std::array<int, 2>> p = plan_point_batches(req);
        for (size_t k = 0; k < ops.size(); ++k) {
            flat[2 * k] = p[k][0];
            flat[2 * k + 1] = p[k][1];
        }
    }
    comm.bcast(flat.data(), static_cast<int>(flat.size()));
    std::vector<std::array<int, 2>> plans(ops.size());
    int batches = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
        plans[k] = {flat[2 * k], flat[2 * k + 1]};
        if (plans[k][0] > 0) batches = batches == 0 ? plans[k][0] : std::min(batches, plans[k][0]);
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
    for (size_t k = 0; k < ops.size(); ++k) {
        if (std::isfinite(req.one[k])) out[k].warm = req.one[k];
        if (!means[k].empty()) {
            out[k].summary = summarize(means[k], timing);
            out[k].batches = std::move(means[k]);
        }
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
