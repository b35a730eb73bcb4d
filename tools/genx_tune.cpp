// genx-tune: fit GenModel to the cluster it runs on and write a rules file
// (docs/genx-tune.md; Xiong et al. §3.4).
//
//   mpirun -np P genx-tune [-o rules.json] [--max-time 300] [--verify]
//                          [--comm-sizes 2,4,8 | all] [--export-tuned tuned.rules]
//   mpirun -np P genx-tune --probe-allreduce      (checks an exported tuned file)
//   genx-tune --print-defaults                    (genx's built-in rules)
//   genx-tune --check-rules FILE                  (checks a rules file, no MPI)
//
// What it does, in order (progress on stderr, rank 0):
//  1. finds each rank's node (MPI_COMM_TYPE_SHARED);
//  2. measures, with genx's own executor over MPI point-to-point:
//       p2p     rank 0 and a rank on its node (intra), and one on another
//               node (inter), swap a message, 8 B … 32 MiB;
//       reduce  one fused k-ary reduction (genx's kernel, floats) of k = 2 …
//               16 vectors on every rank at once (Figure 4, eq. (5));
//       cps     the co-located PS allreduce on the first x ranks, x = 2 … P
//               (§3.4: its fan-in x exposes ε and w_t);
//  3. fits α, β, ε, w_t per link class and γ, δ (tuning/fit.hpp), holding
//     every 4th measurement of each kind out, and prints the held-out error;
//  4. prices every candidate plan for each communicator size on the grid
//     8 B … 256 MiB, and with --verify measures the best two per point,
//     the best plan of every other family predicted within --verify-spread
//     (2×), the plan kept at the size before and the fastest genx plan
//     measured there, keeping the fastest
//     (their model error is reported as well);
//  5. writes the rules file (decisions as explicit rules per communicator
//     shape, then "model" for every other shape), a CSV of every
//     measurement and prediction, an SVG of measured vs predicted, and with
//     --export-tuned the decisions restricted to Open MPI tuned's own
//     algorithms in tuned's 4.1 dynamic-rules format.
//
// Every phase has a share of --max-time; a measurement that does not fit in
// what is left is skipped and reported (a bounded run, not a partial file:
// decisions without a verification keep the model's choice).  Rank 0 makes
// every timing decision and broadcasts it, so all ranks stay in step.
//
// Exit status: 0 success, 1 a measurement or the fit failed, 2 bad input
// (and a rules file that --check-rules rejects),
// 3 (--probe-allreduce) MPI_Allreduce returned an error.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/fit.hpp"
#include "ompi_coll_genx/coll_genx_base.h"
#include "tools/host_names.hpp"
#include "tools/plot.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"
#include "tuning/rules.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace {

using namespace genx;

constexpr int kTag = 7411;

struct Options {
    std::string output = "genx-rules.json";
    std::string csv;
    std::string svg;
    std::string export_tuned;
    double max_time = 300;
    bool verify = false;
    double verify_margin = 0.05;
    bool no_fallback = false;  // --no-fallback: --verify never defers
    // --ompi-algorithms: Open MPI's own algorithms --verify times beside
    // the displaced component ("all", "none" or a list of names).  Opt-in:
    // on the emulated clusters (16 ranks on 2 cores) what genx-tune
    // measured for them did not hold in the next job (bench/RESULTS.md).
    std::string ompi_algorithms = "none";
    double verify_spread = 2.0;
    std::string comm_sizes;
    std::string min_bytes = "8";
    std::string max_bytes = "256M";
    // Benchmarks reach past the last-level cache: the β that decides large
    // messages is the one of transfers from memory, not from cache.
    std::string p2p_max = "32M";
    int reduce_max_k = 16;
    // Vectors larger than the caches (the paper used 600 MB ones): the δ
    // that matters is the one of large messages.
    std::vector<std::string> reduce_bytes = {"8M", "16M"};
    std::vector<std::string> cps_bytes = {"4K", "64K", "1M", "16M", "64M"};
    int holdout_every = 4;
    int max_hcps_levels = 3;
    double target = 0.2;  // seconds per measurement when time allows
    std::string statistic = "median";
    bool probe = false;
    bool print_defaults = false;
    std::string check_rules;
    // A topology file placing the job's hosts on switches: the switch
    // links' classes are measured and fitted too.
    std::string topology, overlay;
};

int g_rank = 0;
bool g_use_min = false;
int g_size = 1;
double g_t0 = 0;

void progress(const std::string& msg) {
    if (g_rank != 0) return;
    std::fprintf(stderr, "[genx-tune %6.1fs] %s\n", MPI_Wtime() - g_t0, msg.c_str());
    std::fflush(stderr);
}

[[noreturn]] void die(const std::string& msg, int code = 1) {
    std::fprintf(stderr, "genx-tune (rank %d): %s\n", g_rank, msg.c_str());
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
}

void check(const Status& st, const std::string& what) {
    if (!st) die(what + ": " + st.message());
}

std::string size_text(size_t b) {
    ByteRange r;
    r.lo = b;
    const std::string s = format_byte_range(r);
    return s.substr(0, s.find('-'));
}

std::string time_text(double s) {
    char buf[32];
    if (s < 1e-3)
        std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
    else if (s < 1)
        std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

std::string describe(const std::string& alg, const std::string& params) {
    return params.empty() ? alg : alg + " " + params;
}

// ------------------------------------------------------- MPI transport

// genx's Transport over the public MPI API: one tag on one communicator,
// so MPI's non-overtaking rule gives the executor its matching order.
class MpiTransport final : public Transport {
  public:
    explicit MpiTransport(MPI_Comm comm) : comm_(comm) {}
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override {
        if (bytes > static_cast<size_t>(INT_MAX))
            return Status::unsupported("message of " + std::to_string(bytes) + " B > INT_MAX");
        auto* r = new MPI_Request;
        if (MPI_Isend(const_cast<void*>(buf), static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_,
                      r) != MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Isend failed");
        }
        *req = r;
        return Status::ok();
    }
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override {
        if (bytes > static_cast<size_t>(INT_MAX))
            return Status::unsupported("message of " + std::to_string(bytes) + " B > INT_MAX");
        auto* r = new MPI_Request;
        if (MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_, r) !=
            MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Irecv failed");
        }
        *req = r;
        return Status::ok();
    }
    Status test(Request req, bool* done) override {
        auto* r = static_cast<MPI_Request*>(req);
        int flag = 0;
        if (MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Test failed");
        }
        *done = flag != 0;
        if (flag) delete r;
        return Status::ok();
    }
    // MPI_Test drives MPI's progress engine.
    Status progress() override { return Status::ok(); }
    // The component's PML transport blocks on a step's requests and sends
    // a step's last message with a blocking send (tuned's sendrecv does the
    // same); genx-tune times plans over the same calls, so that what it
    // measures is what MPI_Allreduce will run.
    Status wait_all(Request* reqs, int n) override {
        std::vector<MPI_Request>& mpi = waiting_;  // reused: no allocation per step
        mpi.resize(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) mpi[static_cast<size_t>(i)] = *static_cast<MPI_Request*>(reqs[i]);
        const int rc = MPI_Waitall(n, mpi.data(), MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; ++i) {
            // MPI_Waitall frees what completed (MPI_REQUEST_NULL); a
            // request still pending after an error stays for abandon().
            auto* r = static_cast<MPI_Request*>(reqs[i]);
            *r = mpi[static_cast<size_t>(i)];
            if (*r == MPI_REQUEST_NULL) {
                delete r;
                reqs[i] = nullptr;
            }
        }
        return rc == MPI_SUCCESS ? Status::ok() : Status::io_error("MPI_Waitall failed");
    }
    bool has_blocking_send() const override { return true; }
    Status send(const void* buf, size_t bytes, int peer) override {
        if (bytes > static_cast<size_t>(INT_MAX))
            return Status::unsupported("message of " + std::to_string(bytes) + " B > INT_MAX");
        return MPI_Send(const_cast<void*>(buf), static_cast<int>(bytes), MPI_BYTE, peer, kTag,
                        comm_) == MPI_SUCCESS
                   ? Status::ok()
                   : Status::io_error("MPI_Send failed");
    }

  private:
    MPI_Comm comm_;
    std::vector<MPI_Request> waiting_;
};

// The vector and scratch plans run on, zeros; several PlanRuns measured
// together share one (they run one at a time).
struct RunBuffers {
    std::vector<float> data, scratch;
};

// One rank's compiled plan with its buffers, run in place on zeros (sums
// stay zero, so repeated runs never overflow and cost the same).
class PlanRun {
  public:
    PlanRun(const Plan& plan, MPI_Comm comm, size_t count, RunBuffers* shared = nullptr)
        : transport_(comm), buf_(shared != nullptr ? shared : &own_) {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        check(resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, sizeof(float), nullptr, true, &kernel_),
              "float SUM kernel");
        check(compile(plan, rank, count, sizeof(float), ExecOptions{}, &schedule_),
              "compiling " + describe(plan.algorithm, plan.params));
        if (buf_->data.size() < count) buf_->data.resize(count, 0.0f);
        const size_t scratch = schedule_.scratch_bytes / sizeof(float) + 1;
        if (buf_->scratch.size() < scratch) buf_->scratch.resize(scratch, 0.0f);
    }
    void run() {
        Status st = exec_.start(schedule_, nullptr, buf_->data.data(), buf_->scratch.data(),
                                buf_->scratch.size() * sizeof(float), kernel_, transport_);
        if (st) st = exec_.run();
        check(st, "running " + schedule_.algorithm);
    }

  private:
    MpiTransport transport_;
    ReduceKernel kernel_;
    RankSchedule schedule_;
    Execution exec_;
    RunBuffers own_;
    RunBuffers* buf_;
};

// ---------------------------------------------------------------- timing

struct Budget {
    double deadline = 0;  // MPI_Wtime of world rank 0
    double left() const { return deadline - MPI_Wtime(); }
};

// The batches of a measurement (collective over comm): one warm-up call of
// `op` (plan buffers, connections), then rank 0 of comm picks {batches,
// calls per batch}, sized to at most `target` seconds and to a fair share
// of what `budget` leaves for the `remaining` measurements of the phase
// (this one included), `per_call` seconds added to each call's estimate
// (the barrier of an isolated call); {0, 0} when not even one call fits.
std::array<int, 2> plan_batches(MPI_Comm comm, const std::function<void()>& op,
                                const Budget& budget, double target, int remaining,
                                double per_call) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Barrier(comm);
    double t = MPI_Wtime();
    op();
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    std::array<int, 2> plan = {0, 0};  // batches, calls per batch
    if (rank == 0) {
        const double left = budget.left();
        const double one = std::max(t + per_call, 1e-7);
        target = std::min(target, left / std::max(remaining, 1));
        if (one < left) {
            int batches = 5;
            // Back to back (measure(), per_call 0), at least two calls a
            // batch: the barrier releases the ranks up to one message's
            // latency apart, and a batch of one call then times, on the
            // rank released first, its own call plus that skew.  An
            // exchange across two 1 ms uplinks measured 4.2 ms (two one-way
            // delays) with one call a batch and 2.1 ms with two or more,
            // which is how the fitted uplink class came out at 2 ms per link
            // in some runs and 1 ms in others (bench/RESULTS.md).  With two
            // calls the skew is spread over both, and the pair's mean is the
            // steady exchange time.  (measure_isolated averages over ranks:
            // the skew cancels there.)
            int iters = std::max(per_call > 0 ? 1 : 2, static_cast<int>(target / batches / one));
            iters = std::min(iters, 10000);
            while (batches > 1 && one * iters * batches > left) --batches;
            while (iters > 1 && one * iters * batches > left) iters /= 2;
            plan[0] = batches;
            plan[1] = iters;
        }
    }
    MPI_Bcast(plan.data(), 2, MPI_INT, 0, comm);
    return plan;
}

// What a measurement reports over its batches' values: the median, or the
// minimum (g_use_min).  `v` is not empty.
double summarize(std::vector<double>* v) {
    std::sort(v->begin(), v->end());
    return g_use_min ? v->front() : (*v)[v->size() / 2];
}

// Seconds per call of `op` on every rank of `comm` (collective over comm),
// calls back to back: summarize() over batches of the slowest rank's batch
// mean; -1 (on every rank) when not even one call fits (plan_batches).
double measure(MPI_Comm comm, const std::function<void()>& op, const Budget& budget,
               double target, int remaining) {
    const std::array<int, 2> plan = plan_batches(comm, op, budget, target, remaining, 0);
    if (plan[0] == 0) return -1;
    std::vector<double> means;
    for (int b = 0; b < plan[0]; ++b) {
        MPI_Barrier(comm);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < plan[1]; ++i) op();
        double mean = (MPI_Wtime() - t0) / plan[1];
        MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_MAX, comm);
        means.push_back(mean);
    }
    return summarize(&means);
}

// Seconds per call of each of `ops` as OSU's osu_allreduce (and
// genx-bench, and bench/compare) time MPI_Allreduce: every call alone, the
// ranks released together by a barrier outside the timed region, each
// rank's mean over a batch, the batch's value the mean over ranks;
// summarize() over batches; -1 for an op the budget had no room for.  Back-to-back calls (measure()) let one call's last steps
// overlap the next call's first ones and take the slowest rank; an
// application that computes between allreduces gets neither, and on the
// emulated asym cluster the two methods ranked rd and rhd at 4 KiB in
// opposite orders.  The ops' batches alternate (batch b of every op, then
// b + 1, the order rotated each time), as bench/compare alternates its
// configurations: a drift of the machine hits every op alike, where
// measuring one op after the other let decisions flip between neighbouring
// sizes on 7 emulated hosts sharing 2 cores.  `remaining` counts the ops
// as measurements of the phase.  --verify decides with this.
std::vector<double> measure_isolated(MPI_Comm comm, const std::vector<std::function<void()>>& ops,
                                     const Budget& budget, double target, int remaining) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    std::vector<double> out(ops.size(), -1);
    // A barrier's cost, for sizing the batches.
    MPI_Barrier(comm);
    double bar = MPI_Wtime();
    MPI_Barrier(comm);
    bar = MPI_Wtime() - bar;
    MPI_Allreduce(MPI_IN_PLACE, &bar, 1, MPI_DOUBLE, MPI_MAX, comm);
    std::vector<std::array<int, 2>> plans;
    int batches = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
        // Every op sized against the same `left`, before any batch runs:
        // each gets the share of one measurement among `remaining`.
        plans.push_back(plan_batches(comm, ops[k], budget, target, remaining, bar));
        if (plans.back()[0] > 0) batches = batches == 0 ? plans.back()[0] : std::min(batches, plans.back()[0]);
    }
    std::vector<std::vector<double>> means(ops.size());
    for (int b = 0; b < batches; ++b)
        for (size_t j = 0; j < ops.size(); ++j) {
            const size_t k = (j + static_cast<size_t>(b)) % ops.size();
            if (plans[k][0] == 0) continue;
            double sum = 0;
            for (int i = 0; i < plans[k][1]; ++i) {
                MPI_Barrier(comm);
                const double t0 = MPI_Wtime();
                ops[k]();
                sum += MPI_Wtime() - t0;
            }
            double mean = sum / plans[k][1];
            MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_SUM, comm);
            means[k].push_back(mean / size);
        }
    for (size_t k = 0; k < ops.size(); ++k)
        if (!means[k].empty()) out[k] = summarize(&means[k]);
    return out;
}

// Whether genx's coll component is loaded in this job with a priority that
// lets it take MPI_Allreduce: its MCA variable exists only where Open MPI
// opened the component (not under --mca coll ^genx).  Then MPI_Allreduce
// would time genx itself, not the component genx displaces.
bool genx_component_active() {
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return false;
    bool active = false;
    int idx = -1;
    if (MPI_T_cvar_get_index("coll_genx_priority", &idx) == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        int n = 0;
        if (MPI_T_cvar_handle_alloc(idx, nullptr, &h, &n) == MPI_SUCCESS) {
            int priority = -1;
            if (n == 1 && MPI_T_cvar_read(h, &priority) == MPI_SUCCESS) active = priority >= 0;
            MPI_T_cvar_handle_free(&h);
        }
    }
    MPI_T_finalize();
    return active;
}

// Rank 0's measurement `*s` to every rank, after a measurement on a
// sub-communicator.  Ranks that sat it out wait here sleeping, not in a
// blocking MPI_Bcast: that busy-polls, and where ranks share cores (an
// oversubscribed node, or every host of bench/genx-cluster on one machine)
// the idle spinners take the cores the measured ranks need.  On a 7-host
// emulated cluster on 2 cores they doubled the 2-rank co-located PS times
// and the fit charged that to incast.
void share_result(double* s) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibcast(s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) break;
        const struct timespec nap = {0, 200 * 1000};
        nanosleep(&nap, nullptr);
    }
}

// Communicator of the listed world ranks (in that order); MPI_COMM_NULL
// elsewhere.  Collective over the world.
MPI_Comm sub_comm(const std::vector<int>& members) {
    int color = MPI_UNDEFINED, key = 0;
    for (size_t i = 0; i < members.size(); ++i)
        if (members[i] == g_rank) {
            color = 0;
            key = static_cast<int>(i);
        }
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    return c;
}

// ----------------------------------------------------------------- data

struct Record {
    std::string kind;    // p2p-intra, p2p-inter, reduce, cps, shift, verify
    std::string series;  // what the plot groups by
    std::string algorithm, params;
    int ranks = 0;
    size_t bytes = 0;
    double measured = 0;
    double predicted = 0;
    bool held_out = false;
    int measurement = -1;  // index into the fit's measurements
    int route = -1;        // or into the switch-class measurements
};

struct Cluster {
    std::vector<int> node;  // dense node id per world rank
    int nodes = 1;
    int ppn = 1;
    // With --topology: every rank's host name, and the files.
    std::vector<std::string> hosts;
    std::string topology, overlay;

    // The first c ranks placed on the topology's switch tree (null without
    // --topology): what GenTree's candidates are built on.
    std::shared_ptr<const TopologyView> view_of_first(int c) const {
        std::shared_ptr<const TopologyView> view;
        if (topology.empty()) return view;
        const std::vector<std::string> first(hosts.begin(), hosts.begin() + c);
        if (!place_ranks(topology, overlay, first, &view)) view.reset();
        return view;
    }
    // The first c ranks as the cost model sees them: placed on `view` (the
    // topology's switch tree, view_of_first(c)) when there is one (their
    // routes then cross its links' classes), else by node.
    RankMap map_of_first(int c, const std::shared_ptr<const TopologyView>& view) const {
        if (view) return rank_map_for(CommShape{c, 0, 0, view});
        RankMap m;
        m.node.assign(node.begin(), node.begin() + c);
        return m;
    }
    RankMap map_of_first(int c) const { return map_of_first(c, view_of_first(c)); }
    CommShape shape_of_first(int c) const {
        std::map<int, int> per;
        for (int r = 0; r < c; ++r) ++per[node[static_cast<size_t>(r)]];
        int mx = 0;
        for (const auto& kv : per) mx = std::max(mx, kv.second);
        return CommShape{c, static_cast<int>(per.size()), mx};
    }
};

Cluster discover() {
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int leader = g_rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, local);
    MPI_Comm_free(&local);
    std::vector<int> leaders(static_cast<size_t>(g_size));
    MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
    Cluster c;
    std::map<int, int> dense;
    std::map<int, int> count;
    for (int l : leaders) {
        const int id = dense.emplace(l, static_cast<int>(dense.size())).first->second;
        c.node.push_back(id);
        ++count[id];
    }
    c.nodes = static_cast<int>(dense.size());
    c.ppn = 0;
    for (const auto& kv : count) c.ppn = std::max(c.ppn, kv.second);
    return c;
}

std::vector<size_t> parse_sizes(const std::vector<std::string>& texts, const char* what) {
    std::vector<size_t> out;
    for (const std::string& t : texts) {
        size_t v = 0;
        const Status st = parse_size(t, &v);
        if (!st) die(std::string(what) + ": " + st.message(), 2);
        if (v < sizeof(float)) die(std::string(what) + ": " + t + " is below one float", 2);
        out.push_back(v / sizeof(float) * sizeof(float));
    }
    return out;
}

std::vector<size_t> pow2_grid(size_t lo, size_t hi) {
    std::vector<size_t> g;
    size_t v = 1;
    while (v < lo) v *= 2;
    for (; v <= hi; v *= 2) g.push_back(v);
    return g;
}

std::vector<int> parse_comm_sizes(const std::string& text) {
    std::vector<int> out;
    if (text.empty()) return {g_size};
    if (text == "all") {
        for (int c = 2; c <= g_size; ++c) out.push_back(c);
        return out;
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        CountRange r;
        const Status st = parse_count_range(item, &r);
        if (!st) die("--comm-sizes: " + st.message(), 2);
        const long hi = r.hi < 0 ? g_size : r.hi;
        for (long c = r.lo; c <= hi; ++c) {
            if (c < 2 || c > g_size)
                die("--comm-sizes: " + std::to_string(c) + " is not in 2.." +
                        std::to_string(g_size) + " (the job's size)",
                    2);
            out.push_back(static_cast<int>(c));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string utc_now() {
    char buf[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

// ------------------------------------------------------------- outputs

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Measured vs predicted, one panel per benchmark kind (the paper's Figure 8
// for this cluster): a marker per measurement and a line per series through
// the model's predictions; time on a log axis against message bytes (log),
// or for the reduce benchmark against the fan-in k (linear, the paper's
// Figure 4), one series per vector size.
std::string make_svg(const std::vector<Record>& records, const std::string& title) {
    std::vector<tools::PlotPoint> pts;
    for (const Record& r : records) {
        if (r.measured <= 0 || r.predicted <= 0) continue;
        tools::PlotPoint p;
        p.panel = r.kind;
        p.series = r.series;
        p.x = static_cast<double>(r.bytes);
        if (r.kind == "reduce" && r.params.compare(0, 2, "k=") == 0) {
            p.x = std::atof(r.params.c_str() + 2);
            p.series = "vectors of " + size_text(r.bytes);
        }
        p.marker = r.measured;
        p.line = r.predicted;
        p.open = r.held_out;
        p.tip = r.series + " " + std::to_string(r.bytes) + " B: measured " + time_text(r.measured) +
                ", predicted " + time_text(r.predicted) + (r.held_out ? " (held out)" : "");
        pts.push_back(std::move(p));
    }
    tools::PlotLabels labels;
    labels.title = title;
    labels.legend = "(markers: measured, lines: GenModel prediction)";
    labels.footer = "open markers: held out of the fit (and every verify run)";
    labels.linear_panels = {"reduce"};
    labels.linear_x_label = "fan-in k (vectors reduced in one pass)";
    return tools::plot_svg(pts, labels);
}

// Whether two plans are the same schedule (same transfers, ops and blocks
// on every rank): at P = 2 ring, cps and both butterfly groups are, and
// measuring one against another only measures noise.
bool same_schedule(const Plan& a, const Plan& b) {
    if (a.nranks != b.nranks || a.nblocks != b.nblocks || a.programs.size() != b.programs.size())
        return false;
    auto same_transfers = [](const std::vector<Transfer>& x, const std::vector<Transfer>& y) {
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (x[i].peer != y[i].peer || x[i].blocks != y[i].blocks ||
                (x[i].buffer == kResult) != (y[i].buffer == kResult))
                return false;
        return true;
    };
    for (size_t r = 0; r < a.programs.size(); ++r) {
        const auto& sa = a.programs[r].steps;
        const auto& sb = b.programs[r].steps;
        if (sa.size() != sb.size()) return false;
        for (size_t i = 0; i < sa.size(); ++i) {
            if (!same_transfers(sa[i].sends, sb[i].sends) ||
                !same_transfers(sa[i].recvs, sb[i].recvs) || sa[i].ops.size() != sb[i].ops.size())
                return false;
            for (size_t o = 0; o < sa[i].ops.size(); ++o)
                if (sa[i].ops[o].kind != sb[i].ops[o].kind ||
                    sa[i].ops[o].blocks != sb[i].ops[o].blocks ||
                    sa[i].ops[o].srcs.size() != sb[i].ops[o].srcs.size())
                    return false;
        }
    }
    return true;
}

// tuned's allreduce algorithm ids (coll_tuned_allreduce_decision.c) and the
// genx plan that moves the same data the same way.
struct TunedAlg {
    int id;
    const char* name;
    std::string algorithm;
    std::string params;
};

std::vector<TunedAlg> tuned_equivalents(int) {
    // rd is tuned's recursive doubling step for step, folding included
    // (plan/rd.hpp), so every communicator size has all four.
    return {{1, "basic_linear", "rb", "root=0"},
            {3, "recursive_doubling", "rd", ""},
            {4, "ring", "ring", ""},
            {6, "rabenseifner", "rhd", ""}};
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    CLI::App app{"genx-tune: measure this cluster, fit GenModel, write a genx rules file"};
    app.add_option("-o,--output", opt.output, "rules file to write")->capture_default_str();
    app.add_option("--csv", opt.csv, "CSV of every measurement (default: OUTPUT with .csv)");
    app.add_option("--svg", opt.svg, "SVG of measured vs predicted (default: OUTPUT with .svg)");
    app.add_option("--export-tuned", opt.export_tuned,
                   "also write the decisions for Open MPI tuned's algorithms (4.1 dynamic rules)");
    app.add_option("--max-time", opt.max_time, "seconds the whole run may take")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_flag("--verify", opt.verify,
                 "measure the model's best two, its best plan of every other family predicted "
                 "within --verify-spread, the plan kept at the size before and the fastest genx plan "
                 "measured there, at every grid "
                 "point, each call alone as OSU times them, and MPI_Allreduce itself (the "
                 "component genx displaces); keep the fastest plan, or defer (\"fallback\") "
                 "where the displaced component beat every plan measured");
    app.add_flag("--no-fallback", opt.no_fallback,
                 "with --verify: do not measure the displaced component (nor Open MPI's "
                 "algorithms); every decision runs a genx plan");
    app.add_option("--ompi-algorithms", opt.ompi_algorithms,
                   "with --verify: also time these of Open MPI's own allreduce algorithms "
                   "(coll/base, as tuned runs them when forced), and let a decision name the "
                   "fastest (\"fallback\" with base=NAME) where it measured faster than genx's "
                   "plans and the displaced component by --verify-margin: all, none, or a comma "
                   "list of " + base_algorithm_names() + ". Off by default: on oversubscribed "
                   "nodes their small-message times do not carry from one job to the next")
        ->capture_default_str();
    app.add_option("--verify-margin", opt.verify_margin,
                   "--verify replaces the model's choice only when another plan measured this "
                   "fraction faster, and keeps a genx plan only when it measured this fraction "
                   "faster than the displaced component")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--verify-spread", opt.verify_spread,
                   "--verify also measures other families' best plans predicted within this "
                   "factor of the model's choice")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1000.0));
    app.add_option("--comm-sizes", opt.comm_sizes,
                   "communicator sizes to decide for: list/ranges (2,4,8-16) or all (default: "
                   "the job's size)");
    app.add_option("--min-bytes", opt.min_bytes, "smallest grid size")->capture_default_str();
    app.add_option("--max-bytes", opt.max_bytes, "largest grid size")->capture_default_str();
    app.add_option("--p2p-max", opt.p2p_max, "largest p2p exchange size")->capture_default_str();
    app.add_option("--reduce-max-k", opt.reduce_max_k, "largest fan-in of the reduce benchmark")
        ->capture_default_str()
        ->check(CLI::Range(2, 64));
    app.add_option("--reduce-bytes", opt.reduce_bytes, "vector sizes of the reduce benchmark")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--topology", opt.topology,
                   "a Slurm topology.conf (tree form) holding this job's hosts: genx-tune also "
                   "measures exchanges across each class of switch link, fits those classes "
                   "into the model and prices its decisions on the tree (docs/genx-tune.md)");
    app.add_option("--overlay", opt.overlay,
                   "with --topology: its JSON overlay (link rates, latencies, classes; "
                   "docs/topology.md)");
    app.add_option("--cps-bytes", opt.cps_bytes, "message sizes of the co-located PS benchmark")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--holdout", opt.holdout_every, "hold every N-th measurement out of the fit")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    app.add_option("--max-hcps-levels", opt.max_hcps_levels,
                   "hcps factorisations with at most this many factors (0 = all)")
        ->capture_default_str();
    app.add_option("--target", opt.target, "seconds per measurement when time allows")
        ->capture_default_str();
    app.add_option("--statistic", opt.statistic,
                   "what a measurement reports over its batches: median, or min (robust on "
                   "shared or oversubscribed machines)")
        ->capture_default_str()
        ->check(CLI::IsMember({"median", "min"}));
    app.add_flag("--probe-allreduce", opt.probe,
                 "only call MPI_Allreduce at every grid size and report errors (checks that "
                 "Open MPI accepts a rules file)");
    app.add_flag("--print-defaults", opt.print_defaults, "print genx's built-in rules and exit");
    app.add_option("--check-rules", opt.check_rules,
                   "check a rules file as genx would on this host, print what is wrong, exit");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    g_use_min = opt.statistic == "min";
    if (opt.print_defaults) {
        std::cout << builtin_rules_text();
        return 0;
    }
    if (!opt.check_rules.empty()) {
        RulesCheck rc;
        rc.fingerprint = local_fingerprint();
        RulesFile f;
        const Status st = load_rules_file(opt.check_rules, rc, &f);
        if (!st) {
            std::cerr << st.message() << "\n";
            return 2;
        }
        std::cout << opt.check_rules << ": ok, " << f.allreduce.size() << " rules, "
                  << (f.has_model ? "with a model" : "no model (genx uses its default model)")
                  << "\n";
        return 0;
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_t0 = MPI_Wtime();
    MPI_Bcast(&g_t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    size_t min_bytes = 0, max_bytes = 0, p2p_max = 0;
    check(parse_size(opt.min_bytes, &min_bytes), "--min-bytes");
    check(parse_size(opt.max_bytes, &max_bytes), "--max-bytes");
    check(parse_size(opt.p2p_max, &p2p_max), "--p2p-max");
    if (min_bytes < sizeof(float) || max_bytes < min_bytes)
        die("--min-bytes/--max-bytes: need 4 <= min <= max", 2);
    if (opt.no_fallback && !opt.verify)
        die("--no-fallback applies to --verify's measurements; add --verify", 2);
    // Open MPI's algorithms --verify times (tuned's numbers).
    std::vector<BaseAlgorithm> ompi_algs;
    if (opt.ompi_algorithms == "all") {
        ompi_algs = base_algorithms();
    } else if (opt.ompi_algorithms != "none") {
        std::stringstream list(opt.ompi_algorithms);
        std::string name;
        while (std::getline(list, name, ',')) {
            const BaseAlgorithm* b = find_base_algorithm(name);
            if (b == nullptr)
                die("--ompi-algorithms: unknown Open MPI allreduce algorithm '" + name +
                        "' (known: " + base_algorithm_names() + "; or all, none)",
                    2);
            bool listed = false;
            for (const BaseAlgorithm& a : ompi_algs) listed = listed || a.tuned_id == b->tuned_id;
            if (!listed) ompi_algs.push_back(*b);
        }
    }
    if (opt.verify && !opt.no_fallback) {
        int active = genx_component_active() ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (active != 0) {
            opt.no_fallback = true;
            if (g_rank == 0)
                std::fprintf(stderr,
                             "genx-tune: warning: genx's component is loaded in this job "
                             "(coll_genx_priority >= 0), so MPI_Allreduce would time genx, not "
                             "the component it displaces; --verify goes on as with --no-fallback "
                             "(no decision defers). Run genx-tune with --mca coll ^genx.\n");
        }
    }
    const std::vector<size_t> grid = pow2_grid(min_bytes, max_bytes);

    if (opt.probe) {
        // Whatever coll component Open MPI chose runs these calls; errors
        // come back instead of aborting.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int failures = 0;
        for (size_t bytes : grid) {
            const int count = static_cast<int>(bytes / sizeof(float));
            std::vector<float> in(static_cast<size_t>(count), 1.0f), out(in.size());
            const int rc = MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM,
                                         MPI_COMM_WORLD);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
            bool right = rc != MPI_SUCCESS ||
                         std::all_of(out.begin(), out.end(),
                                     [](float v) { return v == static_cast<float>(g_size); });
            if (g_rank == 0)
                std::printf("allreduce %10zu B: rc %d (class %d)%s\n", bytes, rc, cls,
                            right ? "" : " WRONG RESULT");
            failures += (rc != MPI_SUCCESS || !right) ? 1 : 0;
        }
        MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Finalize();
        return failures > 0 ? 3 : 0;
    }

    if (g_size < 2) die("genx-tune needs at least 2 ranks (mpirun -np P genx-tune)", 2);
    const std::vector<int> comm_sizes = parse_comm_sizes(opt.comm_sizes);
    const std::vector<size_t> reduce_bytes = parse_sizes(opt.reduce_bytes, "--reduce-bytes");
    const std::vector<size_t> cps_bytes = parse_sizes(opt.cps_bytes, "--cps-bytes");
    const std::string stem = opt.output.size() > 5 &&
                                     opt.output.compare(opt.output.size() - 5, 5, ".json") == 0
                                 ? opt.output.substr(0, opt.output.size() - 5)
                                 : opt.output;
    if (opt.csv.empty()) opt.csv = stem + ".csv";
    if (opt.svg.empty()) opt.svg = stem + ".svg";
    std::string command = "genx-tune";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];

    Cluster cluster = discover();
    // Fingerprints must agree: a rules file is for one kind of host.
    const std::string fingerprint = local_fingerprint();
    {
        std::string fp0 = fingerprint;
        int len = static_cast<int>(fp0.size());
        MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
        fp0.resize(static_cast<size_t>(len));
        MPI_Bcast(&fp0[0], len, MPI_CHAR, 0, MPI_COMM_WORLD);
        int differ = fp0 != fingerprint ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (differ)
            die("the ranks run on different kinds of host (fingerprints differ from rank 0's \"" +
                    fp0 + "\"); tune each kind of host separately",
                2);
    }
    // The switch tree, where a topology file holds the job's hosts.
    RankMap world;
    if (!opt.topology.empty()) {
        cluster.hosts = genx::tools::allgather_names(local_host_name(), MPI_COMM_WORLD);
        std::shared_ptr<const TopologyView> view;
        check(place_ranks(opt.topology, opt.overlay, cluster.hosts, &view), "--topology");
        // Every rank read the files itself: they must agree, or the ranks
        // would measure different routes and hang.
        unsigned long long fp = view->fingerprint(), fp_max = fp, fp_min = fp;
        MPI_Allreduce(&fp, &fp_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&fp, &fp_min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (fp_max != fp_min)
            die("--topology: the ranks read different trees from " + opt.topology +
                    (opt.overlay.empty() ? std::string() : " and " + opt.overlay) +
                    " (a file that differs between nodes?); give every rank the same files",
                2);
        cluster.topology = opt.topology;
        cluster.overlay = opt.overlay;
        world = rank_map_for(CommShape{g_size, cluster.nodes, cluster.ppn, view});
        progress("topology " + opt.topology + ": " + std::to_string(view->depth()) +
                 " switch level(s)" + (world.tree ? "" : ", no link above the hosts"));
    }
    // The classes of the switch links between rank 0's host and rank r's
    // (class id -> links of it on the route; empty without a tree).
    auto route_classes = [&](int r) {
        return world.tree ? world.tree->route_classes(world.node[0], world.node[static_cast<size_t>(r)])
                          : std::map<int, int>();
    };
    progress(std::to_string(g_size) + " ranks on " + std::to_string(cluster.nodes) +
             " node(s), up to " + std::to_string(cluster.ppn) + " per node; host \"" +
             fingerprint + "\"; budget " + std::to_string(static_cast<int>(opt.max_time)) + " s");

    // Phase shares of the budget (measure / verify): without --verify the
    // measurements get it all.
    const double start = MPI_Wtime();
    auto phase_end = [&](double share) { return Budget{start + share * opt.max_time}; };
    const double share_p2p = opt.verify ? 0.10 : 0.20;
    // With a switch tree the exchanges across its links take the last
    // 40 % of the p2p share.
    const double share_route = share_p2p;
    const double share_p2p_own = world.tree ? 0.6 * share_p2p : share_p2p;
    const double share_reduce = opt.verify ? 0.20 : 0.40;
    const double share_cps = opt.verify ? 0.45 : 0.90;
    const double share_shift = opt.verify ? 0.50 : 0.95;

    std::vector<Record> records;
    std::vector<Measurement> data;
    // Exchanges across switch links (--topology): fitted apart from `data`
    // (fit_link_classes).
    std::vector<Measurement> route_data;
    int skipped = 0;
    auto keep = [&](const std::string& kind, const std::string& series,
                    std::shared_ptr<const Plan> plan, const RankMap& ranks, size_t bytes,
                    double seconds, Measurement::Role role,
                    std::vector<Measurement>* into = nullptr) {
        if (into == nullptr) into = &data;
        Record r;
        r.kind = kind;
        r.series = series;
        r.algorithm = plan->algorithm;
        r.params = plan->params;
        r.ranks = plan->nranks;
        r.bytes = bytes;
        r.measured = seconds;
        if (seconds > 0) {
            Measurement m;
            m.kind = kind;
            m.label = series + " " + size_text(bytes);
            m.plan = std::move(plan);
            m.ranks = ranks;
            m.count = bytes / sizeof(float);
            m.elem_size = sizeof(float);
            m.seconds = seconds;
            m.role = role;
            (into == &data ? r.measurement : r.route) = static_cast<int>(into->size());
            into->push_back(std::move(m));
        } else {
            ++skipped;
        }
        records.push_back(r);
        progress(kind + " " + series + " " + size_text(bytes) + ": " +
                 (seconds > 0 ? time_text(seconds) : std::string("skipped (time budget)")));
    };

    // `plan` on the ranks `members` (rank 0 first) at each of `sizes` within
    // `budget`, kept as `kind`, `series` with `ranks` as the model places
    // them; every rank calls it alike.
    auto bench = [&](const std::string& kind, const std::string& series,
                     const std::shared_ptr<const Plan>& plan, const std::vector<int>& members,
                     const RankMap& ranks, const std::vector<size_t>& sizes, const Budget& budget,
                     int* todo, std::vector<Measurement>* into = nullptr) {
        MPI_Comm c = sub_comm(members);
        for (size_t bytes : sizes) {
            double s = 0;
            if (c != MPI_COMM_NULL) {
                PlanRun run(*plan, c, bytes / sizeof(float));
                s = measure(c, [&] { run.run(); }, budget, opt.target, *todo);
            }
            --*todo;
            share_result(&s);
            keep(kind, series, plan, ranks, bytes, s, Measurement::Role::Auto, into);
        }
        if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    };
    std::vector<size_t> p2p_bytes;
    for (size_t bytes = 8; bytes <= p2p_max; bytes *= 4) p2p_bytes.push_back(bytes);

    // ---- p2p exchange
    {
        auto pp = std::make_shared<Plan>(exchange_plan());
        int intra = -1, inter = -1;
        for (int r = 1; r < g_size; ++r) {
            if (intra < 0 && cluster.node[static_cast<size_t>(r)] == cluster.node[0]) intra = r;
            // The NIC's own α and β: a host under rank 0's leaf switch where
            // the topology says which those are.
            if (cluster.node[static_cast<size_t>(r)] != cluster.node[0] &&
                (inter < 0 || (!route_classes(inter).empty() && route_classes(r).empty())))
                inter = r;
        }
        if (inter >= 0 && !route_classes(inter).empty())
            progress("topology: no other host under rank 0's switch; the NIC's p2p-inter "
                     "crosses switch links");
        const Budget budget = phase_end(share_p2p_own);
        int todo = static_cast<int>(p2p_bytes.size()) * ((intra >= 0) + (inter >= 0));
        for (int peer : {intra, inter}) {
            if (peer < 0) continue;
            const bool same = peer == intra;
            RankMap m;
            m.node = {cluster.node[0], cluster.node[static_cast<size_t>(peer)]};
            bench(same ? "p2p-intra" : "p2p-inter", same ? "p2p intra" : "p2p inter", pp, {0, peer},
                  m, p2p_bytes, budget, &todo);
        }
    }

    // ---- exchanges across each class of switch link (--topology): rank 0
    // and the first rank of each host whose route crosses a set of classes
    // not seen yet, at most four routes (fit_link_classes)
    if (world.tree) {
        std::vector<std::pair<int, std::string>> peers;
        std::set<std::map<int, int>> seen;
        for (int r = 1; r < g_size && peers.size() < 4; ++r) {
            const std::map<int, int> sig = route_classes(r);
            if (sig.empty() || !seen.insert(sig).second) continue;
            std::string what;
            for (const auto& [cls, n] : sig)
                what += (what.empty() ? "" : "+") + std::to_string(n) + "x" +
                        world.tree->classes[static_cast<size_t>(cls)].name;
            peers.emplace_back(r, what);
        }
        if (peers.empty()) progress("topology: every host is under rank 0's switch; no switch class to fit");
        auto pp = std::make_shared<Plan>(exchange_plan());
        const Budget budget = phase_end(share_route);
        int todo = static_cast<int>(p2p_bytes.size() * peers.size());
        for (const auto& [peer, what] : peers) {
            RankMap m;
            m.node = {world.node[0], world.node[static_cast<size_t>(peer)]};
            m.tree = world.tree;
            bench("p2p-route", "p2p via " + what, pp, {0, peer}, m, p2p_bytes, budget, &todo,
                  &route_data);
        }
    }

    // ---- local k-way reduction on every rank at once
    {
        ReduceKernel kernel;
        check(resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, sizeof(float), nullptr, true, &kernel),
              "float SUM kernel");
        const Budget budget = phase_end(share_reduce);
        int todo = static_cast<int>(reduce_bytes.size()) * (opt.reduce_max_k - 1);
        for (size_t bytes : reduce_bytes) {
            const size_t n = bytes / sizeof(float);
            std::vector<std::vector<float>> vecs(static_cast<size_t>(opt.reduce_max_k),
                                                 std::vector<float>(n, 0.0f));
            std::vector<const void*> srcs;
            for (size_t i = 1; i < vecs.size(); ++i) srcs.push_back(vecs[i].data());
            for (int k = 2; k <= opt.reduce_max_k; ++k) {
                const double s = measure(
                    MPI_COMM_WORLD,
                    [&] { kernel.apply(vecs[0].data(), srcs.data(), k - 1, n); }, budget,
                    opt.target, todo--);
                keep("reduce", "reduce k=" + std::to_string(k),
                     std::make_shared<Plan>(local_reduce_plan(k)), RankMap{}, bytes, s,
                     Measurement::Role::Auto);
            }
        }
    }

    // `plan` on the first x ranks (series "KIND P=x").
    auto bench_first = [&](const std::string& kind, const std::shared_ptr<const Plan>& plan,
                           int x, const std::vector<size_t>& sizes, const Budget& budget,
                           int* todo) {
        std::vector<int> members;
        for (int r = 0; r < x; ++r) members.push_back(r);
        bench(kind, kind + " P=" + std::to_string(x), plan, members, cluster.map_of_first(x),
              sizes, budget, todo);
    };

    // ---- co-located PS over 2..P ranks
    {
        const Budget budget = phase_end(share_cps);
        int todo = (g_size - 1) * static_cast<int>(cps_bytes.size());
        for (int x = 2; x <= g_size; ++x) {
            auto plan = std::make_shared<Plan>();
            check(generate("cps", x, ParamMap{}, plan.get()), "cps plan");
            bench_first("cps", plan, x, cps_bytes, budget, &todo);
        }
    }

    // ---- a one-step cyclic shift over the first 3 and over all ranks, at
    // latency sizes: beside the pairwise exchange it measures what a step
    // whose partners differ costs more (LinkParams::alpha_shift)
    if (g_size >= 3) {
        const Budget budget = phase_end(share_shift);
        std::vector<int> sizes = {3};
        if (g_size > 3) sizes.push_back(g_size);
        const std::vector<size_t> shift_bytes = {8, 512, 4096};
        int todo = static_cast<int>(sizes.size() * shift_bytes.size());
        for (int x : sizes) {
            bench_first("shift", std::make_shared<Plan>(shift_plan(x)), x, shift_bytes, budget,
                        &todo);
        }
    }

    // ---- fit (every rank: the decisions below are computed everywhere so
    // that --verify can run them; the fit is deterministic)
    FitOptions fopt;
    fopt.holdout_every = opt.holdout_every;
    FitResult fit;
    check(fit_model(data, fopt, &fit), "fitting the model");
    ModelParams model = fit.params;
    std::vector<ClassFit> class_rows;
    if (!route_data.empty()) {
        // Hosts, then the switch classes on them; then the hosts again with
        // what those classes add taken off the benchmarks that cross them
        // (cps and shift over ranks under different switches), and the
        // classes again on the new hosts' parameters.
        check(fit_link_classes(route_data, fit.params, &model, &class_rows),
              "fitting the switch links' classes");
        fopt.classes = model.classes;
        check(fit_model(data, fopt, &fit), "fitting the model");
        ModelParams hosts = fit.params;
        hosts.classes.clear();
        check(fit_link_classes(route_data, hosts, &model, &class_rows),
              "fitting the switch links' classes");
    }
    for (Record& r : records)
        if (r.measurement >= 0) {
            const FitPoint& p = fit.points[static_cast<size_t>(r.measurement)];
            r.predicted = p.predicted;
            r.held_out = p.held_out;
        }
    for (Record& r : records)
        if (r.route >= 0) {
            const Measurement& m = route_data[static_cast<size_t>(r.route)];
            r.predicted = predict(*m.plan, m.count, m.elem_size, model, m.ranks).seconds;
        }
    if (g_rank == 0) {
        std::printf("%s", format_fit_report(data, fit).c_str());
        for (const ClassFit& c : class_rows) {
            if (c.note.rfind("not fitted", 0) == 0)
                std::printf("  switch class %-8s (%zu points): %s\n", c.name.c_str(), c.points,
                            c.note.c_str());
            else
                std::printf("  switch class %-8s alpha %.3e s per link, beta %.3e s/B (%s) "
                            "(%zu points): %s\n",
                            c.name.c_str(), c.alpha, c.beta,
                            c.beta > 0 ? format_rate(1 / c.beta).c_str() : "-", c.points,
                            c.note.c_str());
        }
        std::fflush(stdout);
    }
    {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "fit done: held-out |error| median %.1f%%, mean %.1f%% over %zu points; %zu "
                      "outliers",
                      100 * fit.held_out.median_rel, 100 * fit.held_out.mean_rel,
                      fit.held_out.points, fit.outliers.size());
        progress(buf);
    }

    // ---- decisions per communicator size on the grid
    struct Point {
        size_t bytes;
        std::vector<std::pair<double, Candidate>> ranked;  // predicted, fastest first
        std::string choice_alg, choice_params;
        // --verify: the fastest genx plan measured here, kept or not.
        std::string fastest_alg, fastest_params;
        std::string note;
    };
    std::map<int, std::vector<Point>> decisions;
    const Budget verify_budget{start + opt.max_time};
    // Verification runs still to come, for measure()'s share of the budget:
    // exact for the communicator size at hand, an estimate for the ones
    // after it: five per grid point (the model's best two, one other
    // family, a plan carried from the point before that the model does not
    // rank there, and the displaced component), plus Open MPI's algorithms.
    int verify_todo = 0;
    auto verify_todo_after = [&](int c) {
        int n = 0;
        for (int later : comm_sizes)
            if (later > c)
                n += static_cast<int>(grid.size()) *
                     (opt.no_fallback ? 4 : 5 + static_cast<int>(ompi_algs.size()));
        return n;
    };
    for (int c : comm_sizes) {
        const CommShape shape = cluster.shape_of_first(c);
        // With --topology the families that follow the network (GenTree)
        // are candidates too, built on the first c ranks' placement, as the
        // component builds them from coll_genx_topology_file.
        const std::shared_ptr<const TopologyView> view = cluster.view_of_first(c);
        const RankMap ranks = cluster.map_of_first(c, view);
        CandidateOptions copt;
        copt.max_hcps_levels = opt.max_hcps_levels;
        copt.ranks_per_node = shape.ppn;
        copt.topology = view.get();
        std::vector<std::pair<Candidate, std::shared_ptr<Plan>>> cands;
        for (const Candidate& cand : enumerate_candidates(c, copt)) {
            ParamMap pm;
            check(parse_params(cand.params, &pm), "candidate params");
            auto plan = std::make_shared<Plan>();
            check(generate(cand.algorithm, c, pm, view.get(), plan.get()),
                  "candidate " + describe(cand.algorithm, cand.params));
            // The first of identical schedules stands for all of them.
            bool dup = false;
            for (const auto& cp : cands) dup = dup || same_schedule(*cp.second, *plan);
            if (!dup) cands.emplace_back(cand, plan);
        }
        progress("pricing " + std::to_string(cands.size()) + " distinct candidates for " +
                 std::to_string(c) + " ranks on " + std::to_string(grid.size()) + " sizes");
        std::vector<Point> pts;
        for (size_t bytes : grid) {
            Point p;
            p.bytes = bytes;
            for (const auto& cp : cands) {
                const Prediction pr = predict(*cp.second, bytes / sizeof(float), sizeof(float),
                                              model, ranks);
                check(pr.status, "pricing " + describe(cp.first.algorithm, cp.first.params));
                p.ranked.emplace_back(pr.seconds, cp.first);
                Record r;
                r.kind = "predict";
                r.series = describe(cp.first.algorithm, cp.first.params) + " (P=" +
                           std::to_string(c) + ")";
                r.algorithm = cp.first.algorithm;
                r.params = cp.first.params;
                r.ranks = c;
                r.bytes = bytes;
                r.predicted = pr.seconds;
                records.push_back(r);
            }
            std::stable_sort(p.ranked.begin(), p.ranked.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            p.choice_alg = p.ranked[0].second.algorithm;
            p.choice_params = p.ranked[0].second.params;
            p.note = "model " + time_text(p.ranked[0].first);
            if (p.ranked.size() > 1)
                p.note += ", runner-up " +
                          describe(p.ranked[1].second.algorithm, p.ranked[1].second.params) + " " +
                          time_text(p.ranked[1].first);
            pts.push_back(std::move(p));
        }

        if (opt.verify) {
            std::vector<int> members;
            for (int r = 0; r < c; ++r) members.push_back(r);
            MPI_Comm sub = sub_comm(members);
            // Open MPI's algorithms run on a coll module of their own per
            // communicator (basic_linear keeps its requests in it).
            void* base_module = nullptr;
            if (sub != MPI_COMM_NULL && !opt.no_fallback && !ompi_algs.empty()) {
                base_module = mca_coll_genx_base_module_new();
                if (base_module == nullptr) die("out of memory for Open MPI's coll module");
            }
            // An Open MPI algorithm that measured more than twice the
            // displaced component's time at a point is not timed at the
            // larger sizes after it (basic_linear's fan-in grows with the
            // size: 0.5 s a call at 512 KiB on 16 emulated ranks, which
            // took the budget of everything else).
            std::vector<char> ompi_dropped(ompi_algs.size(), 0);
            // What each point measures: the model's best two (near-ties
            // within a family, e.g. two butterfly step counts), then the
            // model's best plan of every other family it predicts within
            // --verify-spread of its choice.  Families differ in traffic
            // pattern (pairwise exchange, ring, fan-in), which is where a
            // fitted model errs most: on the emulated switch:4 (TCP) it
            // put rhd and hcps 2x2 ahead of ring at 128 KiB-16 MiB by the
            // latency term, and ring measured up to 1.9x faster.  And the
            // plan kept at the point before, where the model does not
            // rank it here (added below, once that point is decided): on
            // tree:2x4 the model ranked the 3-step butterfly, kept at
            // 256 B, out of 512 B's measured set, and the 2-step one
            // kept there measured 1.36x Open MPI's default.  And the
            // fastest genx plan measured at the point before, kept or not:
            // where the displaced component won the small sizes, the
            // fastest plan there (the 3-step butterfly on tree:2x4) was
            // not measured again as the model's ranking moved to fewer
            // bytes per step, and the 5-step one kept at 8 KiB measured
            // 1.19x tuned's recursive doubling, the same exchanges as the
            // 3-step butterfly.
            std::vector<std::vector<size_t>> to_measure(pts.size());
            size_t planned = 0;
            for (size_t k = 0; k < pts.size(); ++k) {
                const Point& p = pts[k];
                std::vector<size_t>& m = to_measure[k];
                for (size_t i = 0; i < p.ranked.size() && i < 2; ++i) m.push_back(i);
                for (size_t i = 2; i < p.ranked.size(); ++i) {
                    if (p.ranked[i].first > opt.verify_spread * p.ranked[0].first) break;
                    bool seen = false;
                    for (size_t j = 0; j < i; ++j)
                        seen = seen || p.ranked[j].second.algorithm == p.ranked[i].second.algorithm;
                    if (!seen) m.push_back(i);
                }
                planned += m.size() + (k > 0 ? 2 : 0) +
                           (opt.no_fallback ? 0 : 1 + ompi_algs.size());
            }
            verify_todo = static_cast<int>(planned) + verify_todo_after(c);
            for (size_t k = 0; k < pts.size(); ++k) {
                Point& p = pts[k];
                std::vector<size_t>& m = to_measure[k];
                if (k > 0) {
                    // The plan kept at the point before and the fastest genx
                    // plan measured there, unless listed already (planned
                    // counted one for each: given back then).
                    const Point& before = pts[k - 1];
                    const std::pair<const std::string*, const std::string*> carried[] = {
                        {&before.choice_alg, &before.choice_params},
                        {&before.fastest_alg, &before.fastest_params}};
                    for (const auto& [alg, params] : carried) {
                        bool added = false;
                        for (size_t i = 0; i < p.ranked.size(); ++i)
                            if (p.ranked[i].second.algorithm == *alg &&
                                p.ranked[i].second.params == *params) {
                                added = std::find(m.begin(), m.end(), i) == m.end();
                                if (added) m.push_back(i);
                                break;
                            }
                        if (!added) --verify_todo;
                    }
                }
                // The candidates, and MPI_Allreduce itself (genx-tune runs
                // without genx, so it is the component genx would fall back
                // to), timed together on the same communicator and buffer.
                std::vector<std::shared_ptr<Plan>> plans(m.size());
                for (size_t q = 0; q < m.size(); ++q) {
                    const Candidate& cand = p.ranked[m[q]].second;
                    for (const auto& cp : cands)
                        if (cp.first.algorithm == cand.algorithm && cp.first.params == cand.params)
                            plans[q] = cp.second;
                }
                // MPI_Allreduce takes an int count: beyond it the displaced
                // component is not timed (the same on every rank).
                const size_t count = p.bytes / sizeof(float);
                const bool time_displaced =
                    !opt.no_fallback && count <= static_cast<size_t>(INT_MAX);
                std::vector<size_t> timed_b;  // ompi_algs timed here, in ops order
                for (size_t b = 0; b < ompi_algs.size() && time_displaced; ++b)
                    if (!ompi_dropped[b]) timed_b.push_back(b);
                const size_t nbase = timed_b.size();
                const size_t nops = m.size() + (time_displaced ? 1 : 0) + nbase;
                std::vector<double> times(nops, 0);
                if (sub != MPI_COMM_NULL) {
                    RunBuffers buffers;
                    std::vector<std::unique_ptr<PlanRun>> runs;
                    std::vector<std::function<void()>> ops;
                    for (size_t q = 0; q < m.size(); ++q) {
                        runs.push_back(std::make_unique<PlanRun>(*plans[q], sub, count, &buffers));
                        PlanRun* run = runs.back().get();
                        ops.emplace_back([run] { run->run(); });
                    }
                    if (time_displaced) {
                        if (buffers.data.size() < count) buffers.data.resize(count, 0.0f);
                        ops.emplace_back([&buffers, count, sub] {
                            MPI_Allreduce(MPI_IN_PLACE, buffers.data.data(), static_cast<int>(count),
                                          MPI_FLOAT, MPI_SUM, sub);
                        });
                        for (size_t b : timed_b) {
                            const int id = ompi_algs[b].tuned_id;
                            ops.emplace_back([&buffers, count, sub, id, base_module] {
                                mca_coll_genx_base_allreduce(id, MPI_IN_PLACE, buffers.data.data(),
                                                             static_cast<int>(count), MPI_FLOAT,
                                                             MPI_SUM, sub, base_module);
                            });
                        }
                    }
                    times = measure_isolated(sub, ops, verify_budget, opt.target, verify_todo);
                }
                std::vector<double> measured(m.size(), -1);
                for (size_t q = 0; q < m.size(); ++q) {
                    const Candidate& cand = p.ranked[m[q]].second;
                    double s = times[q];
                    --verify_todo;
                    share_result(&s);
                    measured[q] = s;
                    keep("verify", describe(cand.algorithm, cand.params) + " (P=" +
                                       std::to_string(c) + ")",
                         plans[q], ranks, p.bytes, s, Measurement::Role::HeldOut);
                    if (s > 0)
                        records.back().predicted = p.ranked[m[q]].first;
                    records.back().held_out = true;
                }
                double displaced = -1;
                if (!opt.no_fallback) {
                    double s = time_displaced ? times[m.size()] : -1;
                    --verify_todo;
                    share_result(&s);
                    displaced = s;
                    Record r;
                    r.kind = "verify";
                    r.series = std::string(kFallbackAlgorithm) + " (P=" + std::to_string(c) + ")";
                    r.algorithm = kFallbackAlgorithm;
                    r.ranks = c;
                    r.bytes = p.bytes;
                    r.measured = s;
                    r.held_out = true;
                    records.push_back(r);
                }
                // Open MPI's own algorithms, timed in the same batches.
                std::vector<double> ompi_times(ompi_algs.size(), -1);
                for (size_t b = 0; b < ompi_algs.size() && !opt.no_fallback; ++b) {
                    const auto at = std::find(timed_b.begin(), timed_b.end(), b);
                    --verify_todo;
                    if (at == timed_b.end()) continue;  // dropped earlier (the same on every rank)
                    double s = times[m.size() + 1 + static_cast<size_t>(at - timed_b.begin())];
                    share_result(&s);
                    ompi_times[b] = s;
                    Record r;
                    r.kind = "verify";
                    r.algorithm = kFallbackAlgorithm;
                    r.params = base_algorithm_params(ompi_algs[b]);
                    r.series = describe(r.algorithm, r.params) + " (P=" + std::to_string(c) + ")";
                    r.ranks = c;
                    r.bytes = p.bytes;
                    r.measured = s;
                    r.held_out = true;
                    records.push_back(r);
                }
                // The fastest plan timed here (m.size() if none was),
                // carried to the next point even where the model's choice
                // got no time (the budget is shared per plan, so cheaper
                // plans may still have run).
                size_t fastest = m.size();
                for (size_t q = 0; q < m.size(); ++q)
                    if (measured[q] > 0 && (fastest == m.size() || measured[q] < measured[fastest]))
                        fastest = q;
                if (fastest < m.size()) {
                    p.fastest_alg = p.ranked[m[fastest]].second.algorithm;
                    p.fastest_params = p.ranked[m[fastest]].second.params;
                }
                if (measured[0] <= 0) {
                    p.note += " (not verified: time budget)";
                    continue;
                }
                // The fastest measured replaces the model's choice only when
                // it beats it by more than the margin: within it the
                // difference is noise, and the model's choice keeps the
                // decisions stable.
                // (measured[0] was timed, so `fastest` is a plan.)
                size_t best = fastest;
                if (measured[best] >= measured[0] * (1 - opt.verify_margin)) best = 0;
                const Candidate& win = p.ranked[m[best]].second;
                p.choice_alg = win.algorithm;
                p.choice_params = win.params;
                // genx must never be slower than what it displaces: a genx
                // plan keeps the point only if it measured at least
                // --verify-margin faster than the displaced component (the
                // plan chosen, else the fastest measured); within the margin
                // the two are a tie, and the rule leaves the call to the
                // displaced component.  (Without the margin, decisions
                // flipped between rd and fallback from one size to the next
                // on the emulated asym, 5-10 % apart.)
                const double keep_below = displaced * (1 - opt.verify_margin);
                if (displaced > 0 && measured[best] > keep_below) {
                    if (measured[fastest] <= keep_below) {
                        const Candidate& f = p.ranked[m[fastest]].second;
                        p.choice_alg = f.algorithm;
                        p.choice_params = f.params;
                    } else {
                        p.choice_alg = kFallbackAlgorithm;
                        p.choice_params.clear();
                    }
                }
                // One of Open MPI's own algorithms takes the point where it
                // measured --verify-margin faster than what was kept (genx's
                // plan, or the displaced component) and than the displaced
                // component: genx then runs it for blocking calls (on 16
                // ranks sharing 2 cores tuned's non-overlapping
                // reduce+broadcast, which its own decision does not pick,
                // took half the default's time at 4 KiB; the smaller sizes'
                // wins there did not hold in the next job, which is why
                // --ompi-algorithms is opt-in).
                {
                    double kept = displaced;
                    if (p.choice_alg != kFallbackAlgorithm)
                        for (size_t q = 0; q < m.size(); ++q)
                            if (p.ranked[m[q]].second.algorithm == p.choice_alg &&
                                p.ranked[m[q]].second.params == p.choice_params)
                                kept = measured[q];
                    size_t fastest = ompi_times.size();
                    for (size_t b = 0; b < ompi_times.size(); ++b)
                        if (ompi_times[b] > 0 &&
                            (fastest == ompi_times.size() || ompi_times[b] < ompi_times[fastest]))
                            fastest = b;
                    // Kept at the point before and within the margin of the
                    // fastest: stays (the decisions do not flip between
                    // algorithms that tie).
                    if (k > 0 && fastest < ompi_times.size()) {
                        const Point& before = pts[k - 1];
                        for (size_t b = 0; b < ompi_times.size(); ++b)
                            if (before.choice_alg == kFallbackAlgorithm &&
                                before.choice_params == base_algorithm_params(ompi_algs[b]) &&
                                ompi_times[b] > 0 &&
                                ompi_times[b] * (1 - opt.verify_margin) <= ompi_times[fastest])
                                fastest = b;
                    }
                    for (size_t b = 0; b < ompi_times.size(); ++b)
                        if (displaced > 0 && ompi_times[b] > 2 * displaced) ompi_dropped[b] = 1;
                    if (fastest < ompi_times.size() && kept > 0 && displaced > 0 &&
                        ompi_times[fastest] <= kept * (1 - opt.verify_margin) &&
                        ompi_times[fastest] <= displaced * (1 - opt.verify_margin)) {
                        p.choice_alg = kFallbackAlgorithm;
                        p.choice_params = base_algorithm_params(ompi_algs[fastest]);
                    }
                }
                p.note = "verified:";
                for (size_t q = 0; q < m.size(); ++q) {
                    const Candidate& cand = p.ranked[m[q]].second;
                    p.note += (q ? " vs " : " ") + describe(cand.algorithm, cand.params) + " " +
                              (measured[q] > 0 ? time_text(measured[q]) : "(no time left)");
                }
                if (!opt.no_fallback)
                    p.note += std::string(" vs ") + kFallbackAlgorithm + " " +
                              (displaced > 0    ? time_text(displaced)
                               : time_displaced ? std::string("(no time left)")
                                                : std::string("(not timed: above INT_MAX elements)"));
                for (size_t b = 0; b < ompi_times.size() && !opt.no_fallback; ++b)
                    p.note += std::string(" vs ompi ") + ompi_algs[b].name + " " +
                              (ompi_times[b] > 0 ? time_text(ompi_times[b])
                                                 : std::string("(not timed)"));
                p.note += " measured";
            }
            mca_coll_genx_base_module_free(base_module);
            if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
        }
        decisions[c] = std::move(pts);
    }

    if (g_rank == 0) {
        // ---- the rules file
        RulesFile rules;
        rules.provenance.genx_version = PACKAGE_VERSION;
        rules.provenance.date = utc_now();
        rules.provenance.hosts = cluster.nodes;
        rules.provenance.topology = fingerprint;
        rules.provenance.generator = command;
        rules.has_model = true;
        rules.model = model;
        int index = 0;
        for (const auto& kv : decisions) {
            const CommShape shape = cluster.shape_of_first(kv.first);
            const std::vector<Point>& pts = kv.second;
            for (size_t i = 0; i < pts.size();) {
                size_t j = i + 1;
                while (j < pts.size() && pts[j].choice_alg == pts[i].choice_alg &&
                       pts[j].choice_params == pts[i].choice_params)
                    ++j;
                AllreduceRule r;
                r.comm_size.any = r.nodes.any = r.ppn.any = false;
                r.comm_size.lo = r.comm_size.hi = shape.size;
                r.nodes.lo = r.nodes.hi = shape.nodes;
                r.ppn.lo = r.ppn.hi = shape.ppn;
                r.bytes.lo = i == 0 ? 0 : pts[i].bytes;
                r.bytes.hi = j < pts.size() ? pts[j].bytes : ByteRange::kNoLimit;
                r.algorithm = pts[i].choice_alg;
                r.params = pts[i].choice_params;
                r.comment = "at " + size_text(pts[i].bytes) + ": " + pts[i].note;
                r.index = index++;
                rules.allreduce.push_back(r);
                i = j;
            }
        }
        AllreduceRule rest;
        rest.algorithm = kModelAlgorithm;
        rest.comment = "other communicator shapes: the fitted model over every family";
        rest.index = index;
        rules.allreduce.push_back(rest);
        const std::string text = format_rules(rules);
        // What genx will read back must parse: the file is checked here,
        // with this host's fingerprint, before it is written.
        RulesFile reread;
        RulesCheck rc;
        rc.fingerprint = fingerprint;
        check(parse_rules(text, opt.output, rc, &reread), "the rules file genx-tune made");
        std::ofstream(opt.output) << text;
        progress("wrote " + opt.output);

        // ---- CSV
        std::ofstream csv(opt.csv);
        csv << "kind,series,algorithm,params,ranks,bytes,measured_s,predicted_s,held_out\n";
        for (const Record& r : records) {
            char m[32] = "", p[32] = "";
            if (r.measured > 0) std::snprintf(m, sizeof m, "%.6e", r.measured);
            if (r.predicted > 0) std::snprintf(p, sizeof p, "%.6e", r.predicted);
            csv << r.kind << "," << csv_field(r.series) << "," << r.algorithm << ","
                << csv_field(r.params) << "," << r.ranks << "," << r.bytes << "," << m << "," << p
                << "," << (r.held_out ? 1 : 0) << "\n";
        }
        progress("wrote " + opt.csv);
        std::vector<Record> plotted;
        for (const Record& r : records)
            if (r.kind != "predict") plotted.push_back(r);
        std::ofstream(opt.svg) << make_svg(plotted, "genx-tune on " + std::to_string(g_size) +
                                                        " ranks, " + fingerprint);
        progress("wrote " + opt.svg);

        // ---- summary on stdout
        std::printf("\ndecisions (%s):\n", opt.output.c_str());
        for (const AllreduceRule& r : rules.allreduce)
            std::printf("  comm_size %-4s nodes %-3s ppn %-3s bytes %-10s %s  [%s]\n",
                        format_count_range(r.comm_size).c_str(),
                        format_count_range(r.nodes).c_str(), format_count_range(r.ppn).c_str(),
                        format_byte_range(r.bytes).c_str(),
                        describe(r.algorithm, r.params).c_str(), r.comment.c_str());
        if (opt.verify) {
            std::vector<double> errs;
            int agree = 0, verified = 0;
            for (const Record& r : records)
                if (r.kind == "verify" && r.measured > 0 && r.predicted > 0)
                    errs.push_back(std::fabs(r.predicted - r.measured) / r.measured);
            std::sort(errs.begin(), errs.end());
            double sum = 0;
            for (double e : errs) sum += e;
            for (const auto& kv : decisions)
                for (const Point& p : kv.second) {
                    if (p.note.compare(0, 9, "verified:") != 0) continue;
                    ++verified;
                    agree += p.choice_alg == p.ranked[0].second.algorithm &&
                             p.choice_params == p.ranked[0].second.params;
                }
            const size_t n = errs.size();
            std::printf("verification: %zu allreduce runs, model |error| median %.1f%% mean "
                        "%.1f%% max %.1f%%; the model's first choice was kept (no other plan "
                        "measured more than %g%% faster) at %d of %d points\n",
                        n, n ? 100 * errs[n / 2] : 0.0, n ? 100 * sum / static_cast<double>(n) : 0.0,
                        n ? 100 * errs.back() : 0.0, 100 * opt.verify_margin, agree, verified);
        }
        if (skipped > 0)
            std::printf("%d measurements did not fit in --max-time %g s and were skipped\n",
                        skipped, opt.max_time);

        // ---- tuned export
        if (!opt.export_tuned.empty()) {
            std::ostringstream t;
            t << "# Open MPI coll/tuned dynamic rules (4.1 format) for MPI_Allreduce, written by\n"
              << "# genx-tune " << PACKAGE_VERSION << " on " << rules.provenance.date << "\n"
              << "# host: " << fingerprint << "\n"
              << "# Chosen by genx's fitted GenModel among the tuned algorithms that have a genx\n"
              << "# plan moving the same data: 1 basic_linear = rb root=0, 3 recursive_doubling =\n"
              << "# rd, 4 ring = ring, 6 rabenseifner = rhd.\n"
              << "# 4 and 6 are not used below 16*P bytes, where tuned itself replaces them\n"
              << "# (count < P).  Use: --mca coll_tuned_use_dynamic_rules 1\n"
              << "#   --mca coll_tuned_dynamic_rules_filename THIS_FILE\n"
              << "# A section applies to every communicator size from its own up to the next.\n"
              << "1 # number of collectives\n"
              << "2 # collective id: ALLREDUCE\n"
              << decisions.size() << " # number of communicator sizes\n";
            for (const auto& kv : decisions) {
                const int c = kv.first;
                const RankMap ranks = cluster.map_of_first(c);
                const std::vector<TunedAlg> algs = tuned_equivalents(c);
                std::vector<std::shared_ptr<Plan>> plans;
                for (const TunedAlg& a : algs) {
                    ParamMap pm;
                    check(parse_params(a.params, &pm), "tuned params");
                    auto plan = std::make_shared<Plan>();
                    check(generate(a.algorithm, c, pm, plan.get()), "tuned equivalent " + a.algorithm);
                    plans.push_back(plan);
                }
                std::vector<std::pair<size_t, size_t>> rows;  // (bytes, index into algs)
                std::vector<double> best_t;
                for (size_t bytes : grid) {
                    size_t best = algs.size();
                    double bt = 0;
                    for (size_t a = 0; a < algs.size(); ++a) {
                        if ((algs[a].id == 4 || algs[a].id == 6) &&
                            bytes < 16 * static_cast<size_t>(c))
                            continue;
                        const double s = predict(*plans[a], bytes / sizeof(float), sizeof(float),
                                                 model, ranks)
                                             .seconds;
                        if (best == algs.size() || s < bt) {
                            best = a;
                            bt = s;
                        }
                    }
                    if (rows.empty() || rows.back().second != best) {
                        rows.emplace_back(rows.empty() ? 0 : bytes, best);
                        best_t.push_back(bt);
                    }
                }
                t << c << " # communicator size " << c << " and up\n"
                  << rows.size() << " # message-size rules\n";
                for (size_t i = 0; i < rows.size(); ++i) {
                    const TunedAlg& a = algs[rows[i].second];
                    t << rows[i].first << " " << a.id << " 0 0 # >= " << size_text(rows[i].first)
                      << ": " << a.name << " (model " << time_text(best_t[i]) << " at "
                      << size_text(std::max(rows[i].first, grid.front())) << ")\n";
                }
            }
            std::ofstream(opt.export_tuned) << t.str();
            progress("wrote " + opt.export_tuned);
        }
        std::printf("\nrules: %s\nmeasurements: %s\nplot: %s\n", opt.output.c_str(),
                    opt.csv.c_str(), opt.svg.c_str());
        if (!opt.export_tuned.empty()) std::printf("tuned rules: %s\n", opt.export_tuned.c_str());
    }
    MPI_Finalize();
    return 0;
}
