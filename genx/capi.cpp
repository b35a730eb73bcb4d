// The C API of genx_core.h: per-communicator state and the allreduce entry.
//
// A genx_comm caches everything that does not depend on the buffers, so a
// repeated call costs a few lookups and the executor's own work:
//  * the configuration, validated once at create (an unknown algorithm, bad
//    params or a forced algorithm whose generator rejects its params make
//    create fail, so the glue disqualifies genx with the reason);
//  * this rank's program of each (algorithm, params) it runs, never the
//    other ranks' programs: generated at create for a forced algorithm
//    (which is how its params get validated), and for every decision of the
//    table when the table is built (genx_comm_prepare), so no call
//    generates a plan; programs are shared process-wide (plan_cache.hpp);
//  * an LRU of compiled RankSchedules keyed by (plan, count, element size),
//    64 entries and 64 MiB at most, the last one used checked first;
//  * one scratch area and one Execution (request arrays), grown on demand
//    and kept.
//
// Selection.  With "auto", genx_comm_create loads the rules (cached per
// process) and genx_comm_prepare, at the communicator's first allreduce,
// takes its decision table (tuning/selector.hpp: the rules file or the built-in
// defaults, priced by its model, one table per shape and process) and a call
// looks its size up there; each decision names an algorithm with its
// params and, through its interval, the plan prepared for it.  A forced
// algorithm bypasses the table.  genx_comm_digest() summarises the decisions so the
// glue can check, before genx's first call, that every rank decided alike.
//
// Declines.  genx only declines for reasons every rank of the communicator
// reaches identically (type/op pair, commutativity, configuration, plan
// generation or compilation), before any message is posted: a decline on
// one rank and a genx run on another would deadlock.  Rank-local failures
// (memory, transport) are GENX_ERROR.
//
// Verbosity.  verbose >= 1: rank 0 logs each decision once per (algorithm,
// size class = power-of-two bucket of the message bytes) and each distinct
// decline reason once; verbose >= 2: every rank logs every decision and
// every decline.  Ranks decide identically, so rank 0 speaks for all at 1.
#include "genx/genx_core.h"

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <cstdio>
#include <mutex>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.hpp"
#include "common/text_util.hpp"
#include "genx/plan_cache.hpp"
#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"
#include "runtime/device.hpp"
#include "runtime/staging.hpp"
#include "runtime/bounce.hpp"
#include "tuning/selector.hpp"
#include "tuning/exec_defaults.hpp"
#include "tuning/rules.hpp"
#include "topology/placement.hpp"

namespace {

// Compiled schedules kept per communicator: a schedule is exact to the
// element count (block boundaries), so an application's distinct counts
// each need one; 64 of them (and at most 64 MiB) hold what real codes
// cycle through (a solver's few dot-product sizes, a training step's
// gradient buckets) without recompiling.
constexpr size_t kScheduleCacheEntries = 64;
constexpr size_t kScheduleCacheBytes = size_t{64} << 20;
constexpr size_t kScratchAlign = 64;

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

using PlanRef = std::shared_ptr<const genx::RankPlan>;

// What a call runs, once genx_allreduce or genx_iallreduce decided to run
// it: the plan, its schedule for this count and the reduce kernel.
struct Call {
    size_t bytes = 0;
    const genx::RankPlan* plan = nullptr;
    const genx::RankSchedule* sched = nullptr;
    genx::ReduceKernel kernel;
};

struct ScheduleEntry {
    const genx::RankPlan* plan = nullptr;
    size_t count = 0;
    size_t elem_size = 0;
    uint64_t last_used = 0;
    size_t bytes = 0;
    genx::RankSchedule schedule;
    // Built at the first call on device memory (runtime/staging.hpp).
    std::unique_ptr<genx::StagePlan> stage;
    // Where that call reduces (auto: estimated with the stage plan).
    bool site_known = false;
    bool site_logged = false;
    genx::ReduceSiteEstimate site;
};

void fill(char* buf, size_t len, const std::string& text) {
    if (buf == nullptr || len == 0) return;
    const size_t n = std::min(len - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
}

void clear(char* buf, size_t len) {
    if (buf != nullptr && len != 0) buf[0] = '\0';
}

// Called inside a catch block: what the exception being handled says, as
// "NAME: what" ("NAME: OOM" for std::bad_alloc).  Every C entry point
// catches everything, so no exception crosses into the glue.
std::string caught(const std::string& name, const char* oom = "out of memory") {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return name + ": " + oom;
    } catch (const std::exception& e) {
        return name + ": " + e.what();
    } catch (...) {
        return name + ": unknown exception";
    }
}

std::string join_names() {
    std::string out;
    for (const genx::GeneratorInfo& g : genx::generators()) out += (out.empty() ? "" : ",") + g.name;
    return out;
}

// The lower bound of a size class (genx_size_class), in bytes.
size_t class_bytes(unsigned cls) { return cls == 0 ? 0 : size_t{1} << (cls - 1); }

}  // namespace

struct genx_comm {
    int rank = 0;
    int size = 1;
    genx::CommShape shape;
    std::string algorithm;  // "auto" or a generator name
    bool forced = false;
    std::string forced_params;  // the forced algorithm's params, canonical
    // The user's executor keys (coll_genx_allreduce_params): they override a
    // decision's own.
    genx::ParamMap user_exec;
    // The topology's routes hold more than the default window of segments
    // in flight (genx::long_fat_routes): plans are sent unsegmented.
    bool long_routes = false;
    std::shared_ptr<const genx::DecisionTable> table;  // auto only, built by prepare()
    // Non-blocking and persistent calls' table: the same object as `table`
    // unless a rule names a "call" (rules.hpp CallKind).
    std::shared_ptr<const genx::DecisionTable> nb_table;
    // Auto: the rules and options the table is built from at the first
    // allreduce (genx_comm_prepare), so that communicators that never
    // allreduce cost nothing.
    std::shared_ptr<const genx::RulesFile> rules;
    genx::TableOptions table_options;
    bool prepared = false;
    genx::Status prepare_status;
    int verbose = 0;
    genx_log_fn log = nullptr;
    void* log_ctx = nullptr;

    // The plans this communicator runs, held for its life (the process-wide
    // cache shares them and never frees one held here): the forced one, or
    // one per interval of the decision table, generated by prepare().
    PlanRef forced_plan;
    std::vector<PlanRef> decision_plans;
    std::vector<PlanRef> nb_decision_plans;  // nb_table's (shared when it is table)
    std::vector<std::shared_ptr<ScheduleEntry>> schedules;  // shared: an iallreduce in flight keeps its own
    ScheduleEntry* last_schedule = nullptr;
    uint64_t schedule_evictions = 0;
    // The last blocking call on host memory, reused while the next call
    // has the same count, type, element size, op and commutativity (a loop
    // calls MPI_Allreduce the same way again): no kernel, table or schedule
    // lookup.  Only genx's own kernels (a callback's context changes from
    // call to call); valid while the schedule cache evicted nothing since;
    // never at verbose >= 2, which logs every call.
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
    } last_call;
    genx_comm_stats stats{};
    size_t schedule_bytes = 0;
    uint64_t tick = 0;
    std::unique_ptr<unsigned char, FreeDeleter> scratch;
    size_t scratch_bytes = 0;
    genx::Execution execution;
    // Device memory: the process's backend (nullptr: every buffer is host
    // memory), and what staging uses, made at the first device call.
    genx::DeviceBackend* device = nullptr;
    bool device_aware = false;  // genx_config::transport_device_aware
    // genx_config::device_reduce ("auto" = the estimate decides) and the
    // estimate's figures.
    enum class SiteMode { Auto, Host, Device } site_mode = SiteMode::Auto;
    genx::DeviceRates rates;
    struct DeviceState {
        int ordinal = -1;
        genx::DeviceStream in = nullptr, out = nullptr;
        std::vector<genx::DeviceEvent> in_events;
        genx::DeviceEvent out_event = nullptr;
        void* host = nullptr;  // page-locked staging buffer
        size_t host_bytes = 0;
        void* scratch = nullptr;  // device-resident calls' scratch area
        size_t scratch_bytes = 0;
        // Staged calls that reduce on the device: their bounce buffers.
        std::unique_ptr<genx::BouncePool> bounce;
    } dev;
    // Size classes already logged per plan (verbose >= 1 only).
    std::map<std::pair<const genx::RankPlan*, const char*>, std::bitset<65>> logged_decisions;
    std::set<std::string> logged_declines;

    void say(int level, const std::string& msg) const {
        if (log != nullptr && verbose >= level) log(log_ctx, level, msg.c_str());
    }

    // Finished iallreduce / persistent requests kept for the next call (their
    // executor's arrays, transport adapter and a small scratch area), so that
    // an MPI_Iallreduce allocates nothing in the steady state: at most
    // kRequestPool, filled by genx_request_free, under request_mu (requests
    // are freed from the progress engine, possibly on another thread).
    std::mutex request_mu;
    std::vector<genx_request*> request_pool;

    genx_comm() = default;
    genx_comm(const genx_comm&) = delete;
    genx_comm& operator=(const genx_comm&) = delete;
    ~genx_comm();  // after genx_request's definition (it frees the pool)

    void release_device() {
        if (device == nullptr || dev.ordinal < 0) return;
        if (dev.in != nullptr) device->stream_destroy(dev.ordinal, dev.in);
        if (dev.out != nullptr) device->stream_destroy(dev.ordinal, dev.out);
        for (genx::DeviceEvent e : dev.in_events) device->event_destroy(dev.ordinal, e);
        if (dev.out_event != nullptr) device->event_destroy(dev.ordinal, dev.out_event);
        if (dev.host != nullptr) device->host_free(dev.host);
        if (dev.scratch != nullptr) device->device_free(dev.ordinal, dev.scratch);
        dev = DeviceState();
    }

    // Streams and events on `ordinal` (the device of the call's buffers),
    // at least `events` copy-in events, and a staging buffer of `bytes`.
    genx::Status device_state(int ordinal, size_t events, size_t bytes) {
        if (dev.ordinal != ordinal) {
            release_device();
            dev.ordinal = ordinal;
            GENX_RETURN_IF_ERROR(device->stream_create(ordinal, &dev.in));
            GENX_RETURN_IF_ERROR(device->stream_create(ordinal, &dev.out));
            GENX_RETURN_IF_ERROR(device->event_create(ordinal, &dev.out_event));
        }
        while (dev.in_events.size() < events) {
            genx::DeviceEvent e = nullptr;
            GENX_RETURN_IF_ERROR(device->event_create(ordinal, &e));
            dev.in_events.push_back(e);
        }
        if (bytes > dev.host_bytes || dev.host == nullptr) {
            if (dev.host != nullptr) device->host_free(dev.host);
            dev.host = nullptr;
            dev.host_bytes = 0;
            const size_t n = std::max<size_t>(4096, bytes);
            GENX_RETURN_IF_ERROR(device->host_alloc(n, &dev.host));
            dev.host_bytes = n;
        }
        return genx::Status::ok();
    }

    // This rank's plan of (name, params), from the process-wide cache; the
    // user's executor keys (coll_genx_allreduce_params) override the
    // decision's own.
    PlanRef plan_for(const std::string& name, const std::string& params) const {
        genx::ParamMap all;
        const genx::Status st = genx::parse_params(params, &all);
        for (const auto& kv : user_exec) all[kv.first] = kv.second;
        if (st.is_ok()) genx::add_network_exec_defaults(long_routes, &all);
        return genx::rank_plan(name, st.is_ok() ? genx::format_params(all) : params, size, rank,
                               shape.topology.get());
    }

    genx::Status schedule_for(const genx::RankPlan& p, size_t count, size_t elem_size,
                              const genx::RankSchedule** out,
                              std::shared_ptr<const genx::RankSchedule>* keep = nullptr) {
        ScheduleEntry* hit = nullptr;
        if (last_schedule != nullptr && last_schedule->plan == &p && last_schedule->count == count &&
            last_schedule->elem_size == elem_size) {
            hit = last_schedule;
        } else {
            for (auto& s : schedules)
                if (s->plan == &p && s->count == count && s->elem_size == elem_size) hit = s.get();
        }
        if (hit != nullptr) {
            touch(hit);
            *out = &hit->schedule;
            if (keep != nullptr) *keep = share(hit);
            return genx::Status::ok();
        }
        auto e = std::make_shared<ScheduleEntry>();
        ++stats.schedule_compiles;
        GENX_RETURN_IF_ERROR(
            genx::compile(p.header, p.program, rank, count, elem_size, p.exec, &e->schedule));
        e->plan = &p;
        e->count = count;
        e->elem_size = elem_size;
        e->last_used = ++tick;
        e->bytes = genx::schedule_bytes(e->schedule);
        // Evict least recently used entries (never the one being added, so a
        // schedule larger than the cap still runs).
        while (!schedules.empty() && (schedules.size() >= kScheduleCacheEntries ||
                                      schedule_bytes + e->bytes > kScheduleCacheBytes)) {
            size_t oldest = 0;
            for (size_t i = 1; i < schedules.size(); ++i)
                if (schedules[i]->last_used < schedules[oldest]->last_used) oldest = i;
            schedule_bytes -= schedules[oldest]->bytes;
            ++schedule_evictions;
            schedules.erase(schedules.begin() + static_cast<long>(oldest));
        }
        schedule_bytes += e->bytes;
        schedules.push_back(std::move(e));
        last_schedule = schedules.back().get();
        *out = &last_schedule->schedule;
        if (keep != nullptr) *keep = share(last_schedule);
        return genx::Status::ok();
    }

    // A cache hit: the entry becomes the most recently used and the one
    // checked first.
    void touch(ScheduleEntry* e) {
        e->last_used = ++tick;
        last_schedule = e;
    }

    // The schedule of a cached entry, sharing the entry's ownership.
    std::shared_ptr<const genx::RankSchedule> share(const ScheduleEntry* e) const {
        for (const auto& s : schedules)
            if (s.get() == e) return std::shared_ptr<const genx::RankSchedule>(s, &s->schedule);
        return nullptr;
    }

    // Grows (never shrinks) the scratch area; throws std::bad_alloc.
    unsigned char* scratch_of(size_t bytes) {
        if (bytes > scratch_bytes || !scratch) {
            const size_t n = std::max<size_t>(kScratchAlign, (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign);
            void* p = std::aligned_alloc(kScratchAlign, n);
            if (p == nullptr) throw std::bad_alloc();
            scratch.reset(static_cast<unsigned char*>(p));
            scratch_bytes = n;
        }
        return scratch.get();
    }

    // Builds no string unless it prints (a communicator whose decisions
    // defer declines on every call).
    int decline(size_t bytes, const std::string& reason, char* why, size_t whylen) {
        fill(why, whylen, reason);
        if (log == nullptr || verbose < 1 || (verbose == 1 && rank != 0)) return GENX_DECLINE;
        if (verbose == 1 && !logged_declines.insert(reason).second) return GENX_DECLINE;
        say(verbose >= 2 ? 2 : 1,
            "genx: allreduce " + std::to_string(bytes) + " B on " + std::to_string(size) +
                " ranks declined, using the fallback: " + reason);
        return GENX_DECLINE;
    }

    // `why`: the rule or the model's prediction behind the choice and the
    // runner-up (Decision::why), or null when the algorithm was forced.
    // Builds no string unless it prints.
    // `call`: "allreduce", "iallreduce" or "persistent allreduce" (static
    // strings: the key of the once-per-size-class record).
    void log_decision(const genx::RankPlan& p, size_t bytes, const std::string* why,
                      const char* call = "allreduce") {
        if (verbose < 1 || log == nullptr || (verbose == 1 && rank != 0)) return;
        const unsigned cls_index = genx_size_class(bytes);
        std::bitset<65>& seen = logged_decisions[{&p, call}];
        const bool first = !seen.test(cls_index);
        seen.set(cls_index);
        if (!(verbose >= 2 || first)) return;
        const size_t cls = class_bytes(cls_index);
        const std::string params = p.header.params.empty()
                                       ? genx::format_exec_options(p.exec)
                                       : p.header.params + "," + genx::format_exec_options(p.exec);
        say(verbose >= 2 ? 2 : 1,
            std::string("genx: ") + call + " " +
                std::to_string(bytes) + " B (size class " + genx::format_bytes(cls) + ") on " +
                std::to_string(size) + " ranks: " +
                p.algorithm + " (" + params + ") [" +
                (why != nullptr ? *why : std::string("forced by coll_genx_allreduce_algorithm")) +
                "]");
    }
};

namespace {

// Reports what the selector said: the first line a process gets about a
// rules file is printed without any verbosity by the communicator's rank 0
// (the world's, for the first communicator), at verbosity 1 elsewhere.
void report(genx_comm* c, const std::string& msg) {
    if (c->log == nullptr || msg.empty()) return;
    const int level = c->rank == 0 ? 0 : 1;
    if (c->verbose >= level) c->log(c->log_ctx, level, ("genx: " + msg).c_str());
}

// The forced algorithm's plan for this communicator (at create, and again
// when the ranks are placed on a topology).  A single rank's allreduce is
// a copy (genx keeps such communicators where device memory is possible):
// parameters that shape P ranks' exchanges, or a topology the algorithm
// needs, do not apply to it, so a one-rank communicator whose plan fails
// runs the algorithm's defaults, else a ring of one, and says so at
// verbosity 1.  Every larger communicator still validates them.
void plan_forced(genx_comm* c) {
    c->forced_plan = c->plan_for(c->algorithm, c->forced_params);
    if (c->size != 1 || c->forced_plan->status.is_ok()) return;
    const std::string why = c->forced_plan->status.message();
    c->forced_plan = c->plan_for(c->algorithm, "");
    if (!c->forced_plan->status.is_ok()) c->forced_plan = c->plan_for("ring", "");
    if (c->log != nullptr && c->verbose >= 1)
        c->log(c->log_ctx, 1,
               ("genx: one-rank communicator: " + why + "; its allreduce (a copy) runs " +
                c->forced_plan->algorithm + " with default parameters")
                   .c_str());
}

genx::Status configure(genx_comm* c, const genx_config* cfg) {
    const char* alg = cfg != nullptr ? cfg->algorithm : nullptr;
    c->algorithm = alg != nullptr && *alg != '\0' ? alg : "auto";
    c->forced = c->algorithm != "auto";
    if (cfg != nullptr) {
        c->verbose = cfg->verbose;
        c->log = cfg->log;
        c->log_ctx = cfg->log_ctx;
    }
    const std::string text = cfg != nullptr && cfg->params != nullptr ? cfg->params : "";
    genx::ParamMap all, gen_params;
    genx::ExecOptions exec;
    GENX_RETURN_IF_ERROR(genx::parse_params(text, &all));
    GENX_RETURN_IF_ERROR(genx::split_exec_params(all, &gen_params, &exec));
    for (const auto& kv : all)
        if (gen_params.find(kv.first) == gen_params.end()) c->user_exec.insert(kv);
    if (!c->forced) {
        if (!gen_params.empty())
            return genx::Status::invalid(
                "params '" + genx::format_params(gen_params) +
                "' are algorithm parameters, which need a forced algorithm "
                "(coll_genx_allreduce_algorithm); with auto only segment and window apply");
        const std::string path =
            cfg != nullptr && cfg->rules_path != nullptr ? cfg->rules_path : "";
        const bool strict = cfg != nullptr && cfg->rules_strict != 0;
        std::shared_ptr<const genx::RulesFile> rules;
        std::string warning;
        GENX_RETURN_IF_ERROR(genx::selector_rules(path, strict, &rules, &warning));
        report(c, warning);
        c->rules = std::move(rules);
        c->table_options.strict = strict;
        c->table_options.explain = c->verbose >= 1;
        return genx::Status::ok();
    }
    if (genx::find_generator(c->algorithm) == nullptr)
        return genx::Status::not_found("unknown algorithm '" + c->algorithm +
                                       "' (coll_genx_allreduce_algorithm); known: auto," +
                                       join_names());
    c->forced_params = genx::format_params(all);
    // Generating now validates the params' values with the real P.
    plan_forced(c);
    return c->forced_plan->status;
}

// Where staged calls on device memory reduce, and the figures of the
// estimate that decides it (genx_config's device_reduce, device_rates).
// A bad value is reported and genx uses auto with the default figures
// (a typo in a device setting must not take genx off host calls); with
// rules_strict it fails the communicator instead.
genx::Status configure_device(genx_comm* c, const genx_config* cfg) {
    const bool strict = cfg != nullptr && cfg->rules_strict != 0;
    const std::string mode = cfg != nullptr && cfg->device_reduce != nullptr ? cfg->device_reduce : "";
    if (mode.empty() || mode == "auto") {
        c->site_mode = genx_comm::SiteMode::Auto;
    } else if (mode == "host") {
        c->site_mode = genx_comm::SiteMode::Host;
    } else if (mode == "device") {
        c->site_mode = genx_comm::SiteMode::Device;
    } else {
        const std::string msg = "coll_genx_cuda_reduce '" + mode + "' is not auto, host or device";
        if (strict) return genx::Status::invalid(msg);
        report(c, msg + "; genx uses auto");
        c->site_mode = genx_comm::SiteMode::Auto;
    }
    const genx::ModelParams& model =
        c->rules != nullptr && c->rules->has_model ? c->rules->model : genx::builtin_rules().model;
    genx::DeviceRates rates;
    rates.host_gamma = model.host.gamma;
    rates.host_delta = model.host.delta;
    c->rates = rates;
    const std::string text = cfg != nullptr && cfg->device_rates != nullptr ? cfg->device_rates : "";
    const genx::Status st = genx::parse_device_rates(text, &c->rates);
    if (!st.is_ok()) {
        const std::string msg = "coll_genx_cuda_rates: " + st.message();
        if (strict) return genx::Status::invalid(msg);
        report(c, msg + "; genx uses the default figures");
        c->rates = rates;
    }
    return genx::Status::ok();
}

// Builds the decision table (auto) once; later calls return the first
// result.  Forced algorithms were prepared at create.
// A topology problem is reported once per process, by a rank 0 (the
// first communicator's): every communicator would repeat it.
void say_once(genx_comm* c, const std::string& msg) {
    static std::mutex m;
    static std::set<std::string> said;
    if (c->rank != 0) return;
    {
        std::lock_guard<std::mutex> lock(m);
        if (!said.insert(msg).second) return;
    }
    report(c, msg);
}

void use_topology(genx_comm* c, std::shared_ptr<const genx::TopologyView> view, const std::string& source);

void place_on_topology(genx_comm* c, const genx_config* cfg, const char* const* host_of_rank) {
    const std::string file = cfg != nullptr && cfg->topology_file != nullptr ? cfg->topology_file : "";
    if (file.empty()) return;
    const std::string overlay =
        cfg->topology_overlay != nullptr ? cfg->topology_overlay : "";
    const std::string instead = "; genx groups hosts by name instead";
    if (host_of_rank == nullptr) {
        say_once(c, "topology file " + file + ": the ranks' host names are unknown" + instead);
        return;
    }
    std::vector<std::string> hosts(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r) {
        if (host_of_rank[r] == nullptr) {
            if (c->rank == 0)
                say_once(c, "topology file " + file + ": the host of rank " + std::to_string(r) +
                              " is unknown" + instead);
            return;
        }
        hosts[static_cast<size_t>(r)] = host_of_rank[r];
    }
    std::shared_ptr<const genx::TopologyView> view;
    const genx::Status st = genx::place_ranks(file, overlay, hosts, &view);
    if (!st) {
        say_once(c, st.message() + instead);
        return;
    }
    use_topology(c, std::move(view), file + (overlay.empty() ? "" : " + " + overlay));
}

// The ranks' placement on a network (a topology file's, or Slurm's
// addresses'): kept, and said at verbose 1 by rank 0.
void use_topology(genx_comm* c, std::shared_ptr<const genx::TopologyView> view, const std::string& source) {
    c->shape.topology = std::move(view);
    c->long_routes = genx::long_fat_routes(c->shape.topology.get());
    if (c->verbose >= 1 && c->rank == 0) {
        char fp[32];
        std::snprintf(fp, sizeof(fp), "%016llx",
                      static_cast<unsigned long long>(c->shape.topology->fingerprint()));
        size_t hosts_used = 0;
        for (const genx::TopoNode& n : c->shape.topology->nodes) hosts_used += n.is_host() ? 1 : 0;
        c->say(1, "genx: topology " + source + ": " +
                      std::to_string(c->size) + " ranks on " + std::to_string(hosts_used) +
                      " hosts, " + std::to_string(c->shape.topology->depth()) +
                      " switch level(s) (fingerprint " + fp + ")" +
                      (c->long_routes
                           ? "; its routes hold up to " +
                                 genx::format_bytes(static_cast<size_t>(
                                     genx::route_bdp_bytes(*c->shape.topology))) +
                                 " B in flight, more than " +
                                 std::to_string(genx::kDefaultWindow) + " segments of " +
                                 genx::format_bytes(genx::kDefaultSegmentBytes) +
                                 ": plans are sent unsegmented unless segment or window is set"
                           : std::string()));
    }
}

// Every plan `table` names, now rather than during a call (none for a
// decision that defers to the displaced component).  A plan that does not
// generate is kept with its status: calls in its interval decline with the
// reason, identically on every rank.
void plans_for_table(genx_comm* c, const genx::DecisionTable& table, std::vector<PlanRef>* plans) {
    const size_t n = table.intervals();
    plans->assign(n, PlanRef());
    for (size_t i = 0; i < n; ++i) {
        const genx::Decision& d = table.decision(i);
        for (size_t j = 0; j < i && !(*plans)[i]; ++j) {
            const genx::Decision& e = table.decision(j);
            if (e.algorithm == d.algorithm && e.params == d.params) (*plans)[i] = (*plans)[j];
        }
        if (!(*plans)[i] && !d.defers()) (*plans)[i] = c->plan_for(d.algorithm, d.params);
    }
}

genx::Status prepare(genx_comm* c) {
    if (c->prepared) return c->prepare_status;
    c->prepared = true;
    if (c->forced) return c->prepare_status;
    std::vector<std::string> warnings;
    c->prepare_status =
        genx::selector_table(c->rules, c->shape, c->table_options, &c->table, &warnings);
    if (c->prepare_status && c->rules->splits_calls()) {
        genx::TableOptions nb = c->table_options;
        nb.nonblocking = true;
        c->prepare_status = genx::selector_table(c->rules, c->shape, nb, &c->nb_table, &warnings);
    }
    // Both tables check the same rules: each warning once.
    for (size_t i = 0; i < warnings.size(); ++i)
        if (std::find(warnings.begin(), warnings.begin() + static_cast<long>(i), warnings[i]) ==
            warnings.begin() + static_cast<long>(i))
            report(c, warnings[i]);
    if (!c->prepare_status) {
        c->table.reset();
        c->nb_table.reset();
        return c->prepare_status;
    }
    plans_for_table(c, *c->table, &c->decision_plans);
    if (c->nb_table) {
        plans_for_table(c, *c->nb_table, &c->nb_decision_plans);
    } else {
        c->nb_table = c->table;
        c->nb_decision_plans = c->decision_plans;
    }
    return c->prepare_status;
}

}  // namespace

extern "C" {

genx_comm* genx_comm_create(int rank, int size, const genx_config* cfg, char* err, size_t errlen) {
    return genx_comm_create_on(rank, size, 0, 0, cfg, err, errlen);
}

genx_comm* genx_comm_create_on(int rank, int size, int nodes, int ppn, const genx_config* cfg,
                               char* err, size_t errlen) {
    return genx_comm_create_hosts(rank, size, nodes, ppn, nullptr, cfg, err, errlen);
}

int genx_comm_place_topology_addrs(genx_comm* comm, const char* const* addrs, const char* const* patterns,
                                   const char* overlay) {
    if (comm == nullptr || addrs == nullptr || comm->shape.topology) return 0;
    std::vector<std::string> a(static_cast<size_t>(comm->size)), p(static_cast<size_t>(comm->size));
    for (int r = 0; r < comm->size; ++r) {
        if (addrs[r] == nullptr || addrs[r][0] == '\0') return 0;
        a[static_cast<size_t>(r)] = addrs[r];
        if (patterns != nullptr && patterns[r] != nullptr) p[static_cast<size_t>(r)] = patterns[r];
    }
    try {
        std::shared_ptr<const genx::TopologyView> view;
        const std::string ov = overlay != nullptr ? overlay : "";
        const genx::Status st = genx::place_ranks_by_topology_addrs(a, p, ov, &view);
        if (!st) {
            say_once(comm, st.message() + "; genx groups hosts by name instead");
            return -1;
        }
        use_topology(comm, std::move(view), "SLURM_TOPOLOGY_ADDR" + (ov.empty() ? "" : " + " + ov));
        // What was built for the old placement is built again.
        comm->prepared = false;
        comm->prepare_status = genx::Status::ok();
        comm->table.reset();
        comm->nb_table.reset();
        comm->decision_plans.clear();
        comm->nb_decision_plans.clear();
        // Schedules are keyed by plan address, and a freed plan's address
        // may come back for a new one: none is kept (a request in flight
        // holds its own); counted as evictions, which forgets the
        // remembered call.
        comm->schedules.clear();
        comm->schedule_bytes = 0;
        comm->last_schedule = nullptr;
        ++comm->schedule_evictions;
        if (comm->forced) plan_forced(comm);
        return 1;
    } catch (...) {
        say_once(comm, caught("SLURM_TOPOLOGY_ADDR") + "; genx groups hosts by name instead");
        return -1;
    }
}

uint64_t genx_comm_topology(const genx_comm* comm) {
    return comm != nullptr && comm->shape.topology ? comm->shape.topology->fingerprint() : 0;
}

genx_comm* genx_comm_create_hosts(int rank, int size, int nodes, int ppn,
                                  const char* const* host_of_rank, const genx_config* cfg,
                                  char* err, size_t errlen) {
    try {
        if (size < 1 || rank < 0 || rank >= size) {
            fill(err, errlen, "genx_comm_create: rank " + std::to_string(rank) + " of size " +
                                  std::to_string(size) + " is not a valid communicator position");
            return nullptr;
        }
        auto c = std::make_unique<genx_comm>();
        c->rank = rank;
        c->size = size;
        // Placement is a hint: anything inconsistent counts as unknown.
        const bool placed = nodes >= 1 && ppn >= 1 && nodes <= size && ppn <= size &&
                            static_cast<long>(nodes) * ppn >= size;
        c->shape = genx::CommShape{size, placed ? nodes : 0, placed ? ppn : 0, nullptr};
        if (cfg != nullptr) {
            c->verbose = cfg->verbose;
            c->log = cfg->log;
            c->log_ctx = cfg->log_ctx;
        }
        place_on_topology(c.get(), cfg, host_of_rank);
        {
            genx::DeviceConfig dc;
            dc.enabled = cfg == nullptr || cfg->device_off == 0;
            dc.library = cfg != nullptr && cfg->device_library != nullptr ? cfg->device_library : "";
            // What was found is said once per process by the glue
            // (genx_device_probe), not per communicator.
            c->device = genx::device_probe(dc);
            c->device_aware = cfg != nullptr && cfg->transport_device_aware != 0;
        }
        genx::Status st = configure(c.get(), cfg);
        if (st.is_ok()) st = configure_device(c.get(), cfg);
        if (!st.is_ok()) {
            fill(err, errlen, st.message());
            return nullptr;
        }
        return c.release();
    } catch (...) {
        fill(err, errlen, caught("genx_comm_create"));
    }
    return nullptr;
}

void genx_comm_destroy(genx_comm* comm) { delete comm; }

int genx_comm_prepare(genx_comm* comm, char* err, size_t errlen) {
    fill(err, errlen, "");
    if (comm == nullptr) return GENX_ERROR;
    try {
        const genx::Status st = prepare(comm);
        if (st.is_ok()) return GENX_OK;
        fill(err, errlen, st.message());
    } catch (...) {
        fill(err, errlen, caught("genx_comm_prepare"));
    }
    return GENX_ERROR;
}

uint64_t genx_comm_digest(const genx_comm* comm) {
    if (comm == nullptr) return 0;
    // The placement on the network is part of what the ranks must agree on
    // (a topology file missing on one node makes its plans differ).
    const uint64_t topo = genx_comm_topology(comm) * 0x9e3779b97f4a7c15ULL;
    if (!comm->forced) {
        // Unprepared or failed: a value no table digests to, so that a rank
        // without a table never agrees with one that has it.
        if (!comm->table) return 0;
        const uint64_t nb = comm->nb_table && comm->nb_table != comm->table
                                ? comm->nb_table->digest() * 0xc2b2ae3d27d4eb4fULL
                                : 0;
        return comm->table->digest() ^ nb ^ topo;
    }
    // Forced: the algorithm and its params decide everything.
    return genx::fnv1a(comm->algorithm + "|" + comm->forced_params) ^ topo;
}

}  // extern "C"

namespace {

// The calls decide() serves: the name genx's log gives each (a static
// string, the key of log_decision's once-per-size-class record) and the
// decision table it reads (rules with "call", rules.hpp CallKind).
struct CallSite {
    const char* name;
    bool nonblocking;
};
constexpr CallSite kBlockingCall{"allreduce", false};
constexpr CallSite kIallreduceCall{"iallreduce", true};
constexpr CallSite kPersistentCall{"persistent allreduce", true};

// What every call needs before anything is decided: a communicator and a
// transport with its three mandatory functions.
bool callable(const genx_comm* comm, const genx_transport_ops* transport) {
    return comm != nullptr && transport != nullptr && transport->isend != nullptr &&
           transport->irecv != nullptr && transport->test != nullptr;
}

// The decisions both entry points share.  GENX_OK with *call filled (or
// nothing to do: call->sched == nullptr for count 0), GENX_DECLINE with
// why filled, or GENX_ERROR.  `keep`: the schedule's ownership, for a call
// that outlives this function.
int decide(genx_comm* comm, size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
           int commutative, const genx_reduce_cb* cb, const genx_transport_ops* transport,
           Call* call, std::shared_ptr<const genx::RankSchedule>* keep, char* why, size_t whylen,
           const CallSite& site = kBlockingCall) {
    if (!callable(comm, transport)) {
        fill(why, whylen, "genx: NULL communicator or incomplete transport ops");
        return GENX_ERROR;
    }
    genx::Status st = genx::resolve_kernel(dtype, op, elem_size, cb, commutative != 0, &call->kernel);
    if (count == 0 && st.is_ok()) return GENX_OK;
    if (elem_size != 0 && count > SIZE_MAX / elem_size) {
        fill(why, whylen, "genx: count * element size overflows size_t");
        return GENX_ERROR;
    }
    const size_t bytes = count * elem_size;
    call->bytes = bytes;
    if (!st.is_ok()) return comm->decline(bytes, st.message(), why, whylen);

    if (!comm->forced && !comm->table) {
        st = prepare(comm);
        if (!st.is_ok()) return comm->decline(bytes, st.message(), why, whylen);
    }
    const genx::Decision* decision = nullptr;
    const genx::RankPlan* plan = comm->forced_plan.get();
    if (!comm->forced) {
        const genx::DecisionTable& table = site.nonblocking ? *comm->nb_table : *comm->table;
        const size_t i = table.index(bytes);
        decision = &table.decision(i);
        plan = (site.nonblocking ? comm->nb_decision_plans : comm->decision_plans)[i].get();
        if (decision->defers()) return comm->decline(bytes, decision->why, why, whylen);
    }
    if (!plan->status.is_ok())
        return comm->decline(bytes, "algorithm " + plan->algorithm + ": " + plan->status.message(),
                             why, whylen);
    if (commutative == 0 && !plan->header.order_preserving)
        return comm->decline(bytes,
                             std::string("op ") + genx::op_name(op) + " on " +
                                 genx::dtype_name(dtype) + " is not commutative and plan " +
                                 plan->algorithm + " combines contributions out of rank order",
                             why, whylen);
    st = comm->schedule_for(*plan, count, elem_size, &call->sched, keep);
    if (!st.is_ok()) return comm->decline(bytes, st.message(), why, whylen);
    call->plan = plan;
    comm->log_decision(*plan, bytes, decision != nullptr ? &decision->why : nullptr, site.name);
    return GENX_OK;
}

}  // namespace

// One non-blocking allreduce in flight: everything it needs until it ends,
// independent of the communicator's blocking state (its Execution, scratch
// and schedule cache entries may change meanwhile).
struct genx_request {
    genx_comm* comm = nullptr;
    size_t bytes = 0;
    genx_transport_ops ops{};
    std::unique_ptr<genx::OpsTransport> transport;
    std::shared_ptr<const genx::RankSchedule> sched;
    genx::ReduceKernel kernel;
    std::unique_ptr<unsigned char, FreeDeleter> scratch;
    size_t scratch_len = 0;
    const void* sendbuf = nullptr;  // nullptr: in place
    void* recvbuf = nullptr;
    genx::Execution execution;
    bool done = false;
    bool started = false;  // a persistent request between starts is not
    genx::Status error;
    // Requests abandon() could not drain after the failure: the scratch
    // area then stays allocated (the transport may still write into it).
    size_t stranded = 0;
};

genx_comm::~genx_comm() {
    for (genx_request* r : request_pool) delete r;
    release_device();
}

namespace {

// Pooled requests per communicator, and the largest scratch area a pooled
// request keeps (a larger one is freed and allocated again when needed).
constexpr size_t kRequestPool = 8;
constexpr size_t kPooledScratchBytes = size_t{1} << 20;

// A request for the next call: a pooled one (reset by genx_request_free)
// or a new one.
std::unique_ptr<genx_request> acquire_request(genx_comm* comm) {
    {
        std::lock_guard<std::mutex> lk(comm->request_mu);
        if (!comm->request_pool.empty()) {
            std::unique_ptr<genx_request> r(comm->request_pool.back());
            comm->request_pool.pop_back();
            return r;
        }
    }
    return std::make_unique<genx_request>();
}

}  // namespace

namespace {

// Where a call's buffers live, asked once per call (sendbuf NULL, in
// place: recvbuf's space).  Host and host without a device backend.
struct BufferSpaces {
    genx::MemSpace send, recv;
    bool on_device() const { return send.is_device() || recv.is_device(); }
    // The device the call works on: recvbuf's, else sendbuf's.
    genx::MemSpace device() const {
        genx::MemSpace d = recv.is_device() ? recv : send;
        if (d.device < 0) d.device = 0;
        return d;
    }
};

BufferSpaces device_spaces_of(const genx_comm* comm, const void* sendbuf, const void* recvbuf) {
    BufferSpaces b;
    // No context in the process yet: host memory, nothing to ask.
    if (!comm->device->may_hold_device_memory()) return b;
    b.recv = comm->device->space_of(recvbuf);
    b.send = sendbuf != nullptr ? comm->device->space_of(sendbuf) : b.recv;
    return b;
}

// Host memory without asking where a communicator has no device backend
// (every call of a CPU job: inlined).
inline BufferSpaces spaces_of(const genx_comm* comm, const void* sendbuf, const void* recvbuf) {
    if (comm == nullptr || comm->device == nullptr) return BufferSpaces();
    return device_spaces_of(comm, sendbuf, recvbuf);
}

// Non-blocking and persistent calls on device memory are not staged (the
// copies would have to progress with the request): refused, not run.
bool refuse_device_request(const genx_comm* comm, const void* sendbuf, const void* recvbuf,
                           const char* what, char* why, size_t whylen) {
    if (!spaces_of(comm, sendbuf, recvbuf).on_device()) return false;
    fill(why, whylen, std::string(what) + ": device memory is staged for blocking allreduce only; "
                          "nothing was posted");
    return true;
}

// Binds a decided call to a request: buffers, transport, kernel, scratch;
// nothing is posted.
void bind_request(genx_request* req, genx_comm* comm, const Call& call, const void* sendbuf,
                  void* recvbuf, const genx_transport_ops* transport) {
    req->comm = comm;
    req->bytes = call.bytes;
    req->ops = *transport;
    req->sendbuf = sendbuf;
    req->recvbuf = recvbuf;
    if (call.sched == nullptr) return;  // count 0: nothing to run
    req->kernel = call.kernel;
    // A pooled request keeps its adapter (it reads req->ops, rebound above)
    // and a scratch area that is large enough.
    if (!req->transport) req->transport = std::make_unique<genx::OpsTransport>(req->ops);
    const size_t n = std::max<size_t>(kScratchAlign, (req->sched->scratch_bytes + kScratchAlign - 1) /
                                                         kScratchAlign * kScratchAlign);
    if (req->scratch && req->scratch_len >= n) return;
    req->scratch.reset();
    req->scratch_len = 0;
    void* p = std::aligned_alloc(kScratchAlign, n);
    if (p == nullptr) throw std::bad_alloc();
    req->scratch.reset(static_cast<unsigned char*>(p));
    req->scratch_len = n;
}

// After a failed execution: drains what it still has posted (cancelling
// what the transport can) for at most kAbandonBudget and says what became
// of it; returns the requests left posted.  The peers of a failed
// collective usually fail too, and MPI's error handler decides the job's
// fate; genx's part is that no rank spins forever and nothing posted into
// memory genx frees.
constexpr std::chrono::milliseconds kAbandonBudget{1000};

size_t abandon_execution(genx::Execution& execution, std::string* note) {
    const size_t left = execution.abandon(kAbandonBudget);
    *note = left == 0 ? "; every posted request was cancelled or completed"
                      : "; " + std::to_string(left) + " request(s) still posted after " +
                            std::to_string(kAbandonBudget.count()) +
                            " ms: their buffers stay allocated";
    return left;
}

// Starts (or restarts) a bound request: posts the plan's first step.
genx::Status start_request(genx_request* req) {
    req->started = true;
    req->done = false;
    if (!req->sched) {  // count 0
        req->done = true;
        return genx::Status::ok();
    }
    genx::Status st = req->execution.start(*req->sched, req->sendbuf, req->recvbuf,
                                           req->scratch.get(), req->scratch_len, req->kernel,
                                           *req->transport);
    if (st.is_ok()) {
        bool done = false;
        st = req->execution.progress(&done);  // posts the first step now
        req->done = done;
    }
    return st;
}

}  // namespace

namespace {

// ------------------------------------------------------- device memory

// The device is usable for staging, with the state a call of `bytes` needs;
// otherwise GENX_ERROR_BUFFER with the reason.
int device_prepared(genx_comm* comm, const genx::MemSpace& where, size_t events, size_t bytes,
                    char* why, size_t whylen) {
    genx::Status st = comm->device->ready();
    if (st.is_ok()) st = comm->device_state(where.device, events, bytes);
    if (st.is_ok()) return GENX_OK;
    fill(why, whylen, "genx: allreduce of " + std::to_string(bytes) + " B on device memory (device " +
                          std::to_string(where.device) + "): " + st.message() +
                          "; genx does not hand device memory to a component that would read it as host memory");
    return GENX_ERROR_BUFFER;
}

// Whole-buffer staging around the displaced component: copy in, its
// allreduce in place on host memory, copy out.
int staged_fallback(genx_comm* comm, const genx::MemSpace& where, const void* sendbuf,
                    void* recvbuf, size_t count, size_t bytes, const genx_host_fallback* fb,
                    const std::string& reason, char* why, size_t whylen) {
    if (fb == nullptr || fb->allreduce == nullptr) {
        fill(why, whylen, "genx: allreduce of " + std::to_string(bytes) +
                              " B on device memory left to the fallback (" + reason +
                              "), and no host fallback was given: nothing was sent");
        return GENX_ERROR_BUFFER;
    }
    int rc = device_prepared(comm, where, 0, bytes, why, whylen);
    if (rc != GENX_OK) return rc;
    const void* src = sendbuf != nullptr ? sendbuf : recvbuf;
    const int d = comm->dev.ordinal;
    genx::Status st;
    if (bytes > 0) {
        st = comm->device->memcpy_async(d, comm->dev.host, src, bytes, comm->dev.in);
        if (st.is_ok()) st = comm->device->stream_synchronize(d, comm->dev.in);
    }
    if (!st.is_ok()) {
        fill(why, whylen, "genx: staging " + std::to_string(bytes) + " B in for the fallback: " + st.message());
        return GENX_ERROR;
    }
    ++comm->stats.device_calls;
    comm->say(2, "genx: allreduce " + std::to_string(bytes) + " B on device memory: staged around the fallback (" + reason + ")");
    rc = fb->allreduce(fb->ctx, nullptr, comm->dev.host, count);
    if (rc != 0) {
        fill(why, whylen, "genx: the fallback's allreduce on the staged copy failed (error " + std::to_string(rc) + ")");
        return GENX_ERROR;
    }
    if (bytes > 0) {
        st = comm->device->memcpy_async(d, recvbuf, comm->dev.host, bytes, comm->dev.out);
        if (st.is_ok()) st = comm->device->stream_synchronize(d, comm->dev.out);
    }
    if (!st.is_ok()) {
        fill(why, whylen, "genx: staging " + std::to_string(bytes) + " B out after the fallback: " + st.message());
        return GENX_ERROR;
    }
    return GENX_OK;
}

// Counts a run of the communicator's execution (st: its result) and, when
// it failed, abandons it; `strand` gives up the memory the transport may
// still write into when requests stay posted.  `where`: "" or " on ...".
template <typename Strand>
int finish_run(genx_comm* comm, const Call& call, const genx::Status& st, const char* where,
               char* why, size_t whylen, Strand strand) {
    ++comm->stats.calls;
    if (*where != '\0') ++comm->stats.device_calls;
    comm->stats.progress_calls += comm->execution.progress_calls();
    comm->stats.waits += comm->execution.waits();
    if (st.is_ok()) return GENX_OK;
    std::string note;
    if (abandon_execution(comm->execution, &note) != 0) strand();
    fill(why, whylen, st.message() + note);
    comm->say(1, "genx: allreduce " + std::to_string(call.bytes) + " B" + where + " failed: " +
                     st.message() + note);
    return GENX_ERROR;
}

// A decided call on host memory, run to its end.
int run_host(genx_comm* comm, const Call& call, const void* sendbuf, void* recvbuf,
             const genx_transport_ops* transport, char* why, size_t whylen) {
    unsigned char* scratch = comm->scratch_of(call.sched->scratch_bytes);
    // start()/run()'s transport, alive until finish_run's abandon (a failed
    // replay() keeps its own, over the same table).
    genx::OpsTransport ops(*transport);
    genx::Status st;
    if (call.sched->replayable) {
        st = comm->execution.replay(*call.sched, sendbuf, recvbuf, scratch, comm->scratch_bytes,
                                    call.kernel, *transport);
    } else {
        st = comm->execution.start(*call.sched, sendbuf, recvbuf, scratch, comm->scratch_bytes,
                                   call.kernel, ops);
        if (st.is_ok()) st = comm->execution.run();
    }
    return finish_run(comm, call, st, "", why, whylen, [comm] {
        // The next call allocates another scratch area.
        (void)comm->scratch.release();
        comm->scratch_bytes = 0;
    });
}

// genx_comm::last_call: remembers a decided host call ...
void remember_call(genx_comm* comm, const Call& call, size_t count, genx_dtype dtype,
                   size_t elem_size, genx_op op, int commutative) {
    genx_comm::LastCall& m = comm->last_call;
    m.valid = comm->verbose < 2 && !call.kernel.is_callback() && comm->last_schedule != nullptr &&
              &comm->last_schedule->schedule == call.sched;
    if (!m.valid) return;
    m.count = count;
    m.dtype = dtype;
    m.elem_size = elem_size;
    m.op = op;
    m.commutative = commutative;
    m.evictions = comm->schedule_evictions;
    m.entry = comm->last_schedule;
    m.call = call;
}

// ... and finds it again: the call decide() would return, the schedule
// touched as schedule_for() would.
const Call* remembered_call(genx_comm* comm, size_t count, genx_dtype dtype, size_t elem_size,
                            genx_op op, int commutative) {
    genx_comm::LastCall& m = comm->last_call;
    if (!m.valid || m.count != count || m.dtype != dtype || m.elem_size != elem_size ||
        m.op != op || m.commutative != commutative || m.evictions != comm->schedule_evictions)
        return nullptr;
    comm->touch(m.entry);
    ++comm->stats.repeat_calls;
    return &m.call;
}

// Whether a decided call on device memory can reduce on the device: a
// device kernel for its (type, op), both buffers on one device.
bool device_reducible(const genx_comm* comm, const Call& call, const BufferSpaces& spaces) {
    return !call.kernel.is_callback() &&
           comm->device->reduce_supported(call.kernel.dtype(), call.kernel.op()) &&
           spaces.send.is_device() && spaces.recv.is_device() &&
           spaces.send.device == spaces.recv.device;
}

// Whether it runs on the device itself, messages included: that, and the
// transport takes device pointers.
bool runs_on_device(const genx_comm* comm, const Call& call, const BufferSpaces& spaces) {
    return comm->device_aware && device_reducible(comm, call, spaces);
}

// A decided call run on the device: device scratch, device kernels, the
// transport moving device memory.
int device_allreduce(genx_comm* comm, const genx::MemSpace& where, const Call& call,
                     const void* sendbuf, void* recvbuf, const genx_transport_ops* transport,
                     bool bounce, char* why, size_t whylen) {
    int rc = device_prepared(comm, where, 0, 0, why, whylen);
    if (rc != GENX_OK) return rc;
    const size_t need = std::max<size_t>(call.sched->scratch_bytes, 1);
    if (need > comm->dev.scratch_bytes) {
        if (comm->dev.scratch != nullptr) comm->device->device_free(comm->dev.ordinal, comm->dev.scratch);
        comm->dev.scratch = nullptr;
        comm->dev.scratch_bytes = 0;
        const genx::Status st = comm->device->device_alloc(comm->dev.ordinal, need, &comm->dev.scratch);
        if (!st.is_ok()) {
            fill(why, whylen, "genx: device scratch of " + std::to_string(need) + " B: " + st.message());
            return GENX_ERROR;
        }
        comm->dev.scratch_bytes = need;
    }
    genx::DeviceExec dx;
    dx.device = comm->device;
    dx.ordinal = comm->dev.ordinal;
    dx.stream = comm->dev.in;
    genx::OpsTransport ops(*transport);
    genx::Transport* t = &ops;
    std::optional<genx::BounceTransport> bounced;
    if (bounce) {
        if (!comm->dev.bounce)
            comm->dev.bounce = std::make_unique<genx::BouncePool>(*comm->device, comm->dev.ordinal);
        t = &bounced.emplace(ops, *comm->dev.bounce);
    }
    genx::Status st = comm->execution.start_on_device(*call.sched, dx, sendbuf, recvbuf,
                                                      comm->dev.scratch, comm->dev.scratch_bytes,
                                                      call.kernel, *t);
    if (st.is_ok()) st = comm->execution.run();
    if (st.is_ok()) ++comm->stats.device_reduced;
    return finish_run(comm, call, st, " on the device", why, whylen, [comm] {
        comm->dev.scratch = nullptr;  // the transport may still write into it
        comm->dev.scratch_bytes = 0;
        (void)comm->dev.bounce.release();  // ... and into the bounce buffers
    });
}

// Where the entry's staged calls reduce: the mode's answer, or the
// estimate's.
const genx::ReduceSiteEstimate& reduce_site(genx_comm* comm, ScheduleEntry* entry) {
    if (entry->site_known) return entry->site;
    entry->site_known = true;
    if (comm->site_mode == genx_comm::SiteMode::Auto)
        entry->site = genx::estimate_reduce_site(entry->schedule, *entry->stage, comm->rates);
    else
        entry->site.site = comm->site_mode == genx_comm::SiteMode::Device ? genx::ReduceSite::Device
                                                                          : genx::ReduceSite::Host;
    return entry->site;
}

// Says once per schedule (verbose 1) where its first staged call reduced,
// and why.
void log_site(genx_comm* comm, ScheduleEntry* entry, const Call& call, bool on_device) {
    if (entry->site_logged || comm->verbose < 1) return;
    entry->site_logged = true;
    std::string why;
    if (comm->site_mode != genx_comm::SiteMode::Auto) {
        why = "coll_genx_cuda_reduce";
    } else {
        char est[160];
        std::snprintf(est, sizeof est, "estimated %.1f us on the host, %.1f us on the device",
                      entry->site.host_s * 1e6, entry->site.device_s * 1e6);
        why = est;
    }
    if (entry->site.site == genx::ReduceSite::Device && !on_device)
        why += "; this call cannot: no device kernel for " + std::string(genx::op_name(call.kernel.op())) +
               " on " + genx::dtype_name(call.kernel.dtype()) + ", or its buffers are in two spaces";
    comm->say(1, "genx: allreduce of " + std::to_string(entry->count * entry->elem_size) +
                     " B on device memory (" + entry->plan->algorithm + "): reduces on the " +
                     (on_device ? "device" : "host") + " (" + why + ")");
}

// A decided call on device memory: the schedule runs on the staging
// buffer, the copies follow its steps.
int staged_allreduce(genx_comm* comm, const genx::MemSpace& where, const BufferSpaces& spaces,
                     const Call& call, const void* sendbuf, void* recvbuf,
                     const genx_transport_ops* transport, char* why, size_t whylen) {
    ScheduleEntry* entry = comm->last_schedule;
    if (entry == nullptr || &entry->schedule != call.sched) {
        fill(why, whylen, "genx: internal error: the staged call's schedule is not the cached one");
        return GENX_ERROR;
    }
    if (!entry->stage)
        entry->stage = std::make_unique<genx::StagePlan>(
            genx::make_stage_plan(*call.sched, call.bytes >= genx::kStepStagingBytes));
    const genx::StagePlan& plan = *entry->stage;
    const bool on_device = reduce_site(comm, entry).site == genx::ReduceSite::Device &&
                           device_reducible(comm, call, spaces);
    log_site(comm, entry, call, on_device);
    if (on_device)
        return device_allreduce(comm, where, call, sendbuf, recvbuf, transport, true, why, whylen);
    const int rc = device_prepared(comm, where, plan.in_begin.size() - 1, plan.bytes, why, whylen);
    if (rc != GENX_OK) return rc;
    genx::StagedBuffers sb;
    sb.device = comm->device;
    sb.ordinal = comm->dev.ordinal;
    sb.plan = &plan;
    sb.src = sendbuf != nullptr ? sendbuf : recvbuf;
    sb.dst = recvbuf;
    sb.host = comm->dev.host;
    sb.in_stream = comm->dev.in;
    sb.out_stream = comm->dev.out;
    sb.in_events = comm->dev.in_events.data();
    sb.out_event = comm->dev.out_event;
    unsigned char* scratch = comm->scratch_of(call.sched->scratch_bytes);
    genx::OpsTransport ops(*transport);
    genx::Status st = comm->execution.start_staged(*call.sched, sb, scratch, comm->scratch_bytes,
                                                   call.kernel, ops);
    if (st.is_ok()) st = comm->execution.run();
    return finish_run(comm, call, st, " on device memory", why, whylen, [comm] {
        // The scratch area and the staging buffer are both left to it.
        (void)comm->scratch.release();
        comm->scratch_bytes = 0;
        comm->dev.host = nullptr;
        comm->dev.host_bytes = 0;
    });
}

}  // namespace

extern "C" {

int genx_allreduce(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                   genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                   const genx_reduce_cb* cb, const genx_transport_ops* transport, char* why,
                   size_t whylen) {
    return genx_allreduce_ex(comm, sendbuf, recvbuf, count, dtype, elem_size, op, commutative, cb,
                             transport, nullptr, why, whylen);
}

int genx_allreduce_ex(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                      genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                      const genx_reduce_cb* cb, const genx_transport_ops* transport,
                      const genx_host_fallback* fallback, char* why, size_t whylen) {
    clear(why, whylen);
    try {
        const BufferSpaces spaces = spaces_of(comm, sendbuf, recvbuf);
        if (callable(comm, transport) && !spaces.on_device())
            if (const Call* again = remembered_call(comm, count, dtype, elem_size, op, commutative))
                return run_host(comm, *again, sendbuf, recvbuf, transport, why, whylen);
        const genx::MemSpace where = spaces.device();
        Call call;
        const int rc = decide(comm, count, dtype, elem_size, op, commutative, cb, transport, &call,
                              nullptr, why, whylen);
        if (spaces.on_device()) {
            if (rc == GENX_DECLINE)
                return staged_fallback(comm, where, sendbuf, recvbuf, count, count * elem_size,
                                       fallback, why, why, whylen);
            if (rc != GENX_OK || call.sched == nullptr) return rc;
            if (runs_on_device(comm, call, spaces))
                return device_allreduce(comm, where, call, sendbuf, recvbuf, transport, false, why,
                                        whylen);
            return staged_allreduce(comm, where, spaces, call, sendbuf, recvbuf, transport, why,
                                    whylen);
        }
        if (rc != GENX_OK || call.sched == nullptr) return rc;
        remember_call(comm, call, count, dtype, elem_size, op, commutative);
        return run_host(comm, call, sendbuf, recvbuf, transport, why, whylen);
    } catch (...) {
        fill(why, whylen, caught("genx_allreduce", "out of memory (plan, schedule or scratch)"));
    }
    return GENX_ERROR;
}

int genx_allreduce_staged_fallback(genx_comm* comm, const void* sendbuf, void* recvbuf,
                                   size_t count, size_t elem_size,
                                   const genx_host_fallback* fallback, char* why, size_t whylen) {
    clear(why, whylen);
    try {
        if (elem_size != 0 && count > SIZE_MAX / elem_size) {
            fill(why, whylen, "genx: count * element size overflows size_t");
            return GENX_ERROR;
        }
        const BufferSpaces spaces = spaces_of(comm, sendbuf, recvbuf);
        if (!spaces.on_device()) {
            // Host memory after all: the fallback takes it as it is.
            const int rc = fallback != nullptr && fallback->allreduce != nullptr
                               ? fallback->allreduce(fallback->ctx, sendbuf, recvbuf, count)
                               : -1;
            if (rc == 0) return GENX_OK;
            fill(why, whylen, "genx: the fallback's allreduce failed (error " + std::to_string(rc) + ")");
            return GENX_ERROR;
        }
        return staged_fallback(comm, spaces.device(), sendbuf, recvbuf, count, count * elem_size, fallback,
                               "the glue's reason", why, whylen);
    } catch (...) {
        fill(why, whylen, caught("genx", "out of memory staging a device buffer"));
    }
    return GENX_ERROR;
}

int genx_device_active(const genx_comm* comm) { return comm != nullptr && comm->device != nullptr; }

int genx_device_probe(int device_off, const char* library, char* note, size_t notelen) {
    try {
        genx::DeviceConfig dc;
        dc.enabled = device_off == 0;
        dc.library = library != nullptr ? library : "";
        std::string n;
        const bool active = genx::device_probe(dc, &n) != nullptr;
        fill(note, notelen, n);
        return active ? 1 : 0;
    } catch (...) {
        fill(note, notelen, "genx: device probe failed");
        return 0;
    }
}

int genx_buffers_on_device(const genx_comm* comm, const void* sendbuf, const void* recvbuf) {
    return spaces_of(comm, sendbuf, recvbuf).on_device() ? 1 : 0;
}

namespace {

// MPI_Iallreduce and persistent init: a request bound to the call `site`
// decided, and started when `start` (an iallreduce is init + start).
int request_call(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count, genx_dtype dtype,
                 size_t elem_size, genx_op op, int commutative, const genx_reduce_cb* cb,
                 const genx_transport_ops* transport, const CallSite& site, const char* name, bool start,
                 genx_request** out, char* why, size_t whylen) {
    clear(why, whylen);
    if (out == nullptr) {
        fill(why, whylen, std::string(name) + ": NULL request pointer");
        return GENX_ERROR;
    }
    *out = nullptr;
    if (refuse_device_request(comm, sendbuf, recvbuf, name, why, whylen)) return GENX_ERROR_BUFFER;
    try {
        std::unique_ptr<genx_request> req = acquire_request(comm);
        Call call;
        const int rc = decide(comm, count, dtype, elem_size, op, commutative, cb, transport, &call, &req->sched,
                              why, whylen, site);
        if (rc != GENX_OK) return rc;
        bind_request(req.get(), comm, call, sendbuf, recvbuf, transport);
        if (start) {
            const genx::Status st = start_request(req.get());
            ++comm->stats.calls;
            if (!st.is_ok()) {
                std::string note;
                if (abandon_execution(req->execution, &note) != 0) (void)req->scratch.release();
                fill(why, whylen, st.message() + note);
                comm->say(1, "genx: " + std::string(site.name) + " " + std::to_string(call.bytes) +
                                 " B failed: " + st.message() + note);
                return GENX_ERROR;
            }
        }
        *out = req.release();
        return GENX_OK;
    } catch (...) {
        fill(why, whylen, caught(name, "out of memory (plan, schedule or scratch)"));
    }
    return GENX_ERROR;
}

}  // namespace

int genx_iallreduce(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                    genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                    const genx_reduce_cb* cb, const genx_transport_ops* transport,
                    genx_request** out, char* why, size_t whylen) {
    return request_call(comm, sendbuf, recvbuf, count, dtype, elem_size, op, commutative, cb, transport,
                        kIallreduceCall, "genx_iallreduce", true, out, why, whylen);
}

int genx_allreduce_init(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                        genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                        const genx_reduce_cb* cb, const genx_transport_ops* transport,
                        genx_request** out, char* why, size_t whylen) {
    return request_call(comm, sendbuf, recvbuf, count, dtype, elem_size, op, commutative, cb, transport,
                        kPersistentCall, "genx_allreduce_init", false, out, why, whylen);
}

int genx_request_start(genx_request* req, char* why, size_t whylen) {
    clear(why, whylen);
    if (req == nullptr) {
        fill(why, whylen, "genx_request_start: NULL request");
        return GENX_ERROR;
    }
    if (!req->error.is_ok()) {
        fill(why, whylen, "genx_request_start: the request failed earlier: " + req->error.message());
        return GENX_ERROR;
    }
    if (req->started && !req->done) {
        fill(why, whylen, "genx_request_start: the request is still in flight");
        return GENX_ERROR;
    }
    try {
        const genx::Status st = start_request(req);
        ++req->comm->stats.calls;
        if (!st.is_ok()) {
            std::string note;
            req->stranded = abandon_execution(req->execution, &note);
            req->error = genx::Status(st.code(), st.message() + note);
            fill(why, whylen, req->error.message());
            return GENX_ERROR;
        }
        return GENX_OK;
    } catch (...) {
        req->error = genx::Status::internal(caught("genx_request_start"));
    }
    fill(why, whylen, req->error.message());
    return GENX_ERROR;
}

int genx_request_progress(genx_request* req, int* done, char* why, size_t whylen) {
    clear(why, whylen);
    if (done != nullptr) *done = 0;
    if (req == nullptr || done == nullptr) {
        fill(why, whylen, "genx_request_progress: NULL argument");
        return GENX_ERROR;
    }
    if (!req->error.is_ok()) {
        fill(why, whylen, req->error.message());
        return GENX_ERROR;
    }
    if (req->done || !req->started) {  // finished, or persistent and not started
        *done = 1;
        return GENX_OK;
    }
    try {
        bool d = false;
        const genx::Status st = req->execution.progress(&d);
        if (!st.is_ok()) {
            std::string note;
            req->stranded = abandon_execution(req->execution, &note);
            req->error = genx::Status(st.code(), st.message() + note);
            fill(why, whylen, req->error.message());
            return GENX_ERROR;
        }
        req->done = d;
        *done = d ? 1 : 0;
        return GENX_OK;
    } catch (...) {
        req->error = genx::Status::internal(caught("genx_request_progress"));
    }
    fill(why, whylen, req->error.message());
    return GENX_ERROR;
}

void genx_request_free(genx_request* req) {
    if (req == nullptr) return;
    // One freed in flight is abandoned here (the glue refuses to free an
    // active request, but a finalizing library may).  Requests abandon()
    // could not drain may still write into the scratch area: it stays
    // allocated.
    if (req->started && !req->done && req->error.is_ok() && req->sched)
        req->stranded = req->execution.abandon(kAbandonBudget);
    if (req->stranded != 0) (void)req->scratch.release();
    genx_comm* comm = req->comm;
    if (comm != nullptr && req->stranded == 0 && req->error.is_ok()) {
        // Back to the communicator's pool, as a fresh request would be but
        // for its buffers.
        req->sched.reset();
        req->sendbuf = nullptr;
        req->recvbuf = nullptr;
        req->bytes = 0;
        req->done = false;
        req->started = false;
        if (req->scratch_len > kPooledScratchBytes) {
            req->scratch.reset();
            req->scratch_len = 0;
        }
        std::lock_guard<std::mutex> lk(comm->request_mu);
        if (comm->request_pool.size() < kRequestPool) {
            comm->request_pool.push_back(req);
            return;
        }
    }
    delete req;
}

}  // extern "C"

namespace {

// genx_comm_defers(_nb) on one of the communicator's tables.
int defers_in(const genx_comm* comm, const genx::DecisionTable* table, size_t bytes,
              const char** reason) {
    if (comm == nullptr || comm->forced || table == nullptr) return 0;
    const genx::Decision& d = table->lookup(bytes);
    if (!d.defers()) return 0;
    if (reason != nullptr) *reason = d.why.c_str();
    // (A non-blocking table never names an Open MPI algorithm: they are
    // blocking only, DecisionTable::build.)
    return GENX_DEFERS + d.base;
}

}  // namespace

extern "C" {

const char* genx_base_algorithm_name(int k) {
    const genx::BaseAlgorithm* b = genx::find_base_algorithm(k);
    return b != nullptr ? b->name : nullptr;
}

int genx_comm_defers(const genx_comm* comm, size_t bytes, const char** reason) {
    return defers_in(comm, comm != nullptr ? comm->table.get() : nullptr, bytes, reason);
}

int genx_comm_defers_nb(const genx_comm* comm, size_t bytes, const char** reason) {
    return defers_in(comm, comm != nullptr ? comm->nb_table.get() : nullptr, bytes, reason);
}

int genx_comm_defers_all_calls(const genx_comm* comm, int calls, const char** reason) {
    const int known = GENX_CALLS_BLOCKING | GENX_CALLS_NONBLOCKING;
    if (comm == nullptr || comm->forced || !comm->table || !comm->nb_table || calls == 0 ||
        (calls & ~known) != 0)
        return 0;
    const genx::DecisionTable* asked[2] = {
        (calls & GENX_CALLS_BLOCKING) != 0 ? comm->table.get() : nullptr,
        (calls & GENX_CALLS_NONBLOCKING) != 0 ? comm->nb_table.get() : nullptr};
    const genx::DecisionTable* first = nullptr;
    for (const genx::DecisionTable* t : asked) {
        if (t == nullptr) continue;
        const size_t n = t->intervals();
        if (n == 0) return 0;
        // A size that runs one of Open MPI's coll/base algorithms is genx's
        // choice, not the displaced component's: genx stays.
        for (size_t i = 0; i < n; ++i)
            if (!t->decision(i).defers() || t->decision(i).base != 0) return 0;
        if (first == nullptr) first = t;
    }
    if (reason != nullptr) *reason = first->decision(0).why.c_str();
    return 1;
}

int genx_comm_get_stats(const genx_comm* comm, genx_comm_stats* out) {
    if (comm == nullptr || out == nullptr) return GENX_ERROR;
    *out = comm->stats;
    out->plans_generated = genx::plan_cache_stats().generated;
    return GENX_OK;
}

unsigned genx_size_class(size_t bytes) {
    unsigned n = 0;
    for (; bytes != 0; bytes >>= 1) ++n;
    return n;
}

uint64_t genx_hash(uint64_t seed, const char* text) {
    return genx::fnv1a(text != nullptr ? text : "", genx::kFnvOffset ^ seed);
}

const char* genx_algorithm_names(void) {
    try {
        static const std::string names = join_names();
        return names.c_str();
    } catch (...) {
        return "";
    }
}

}  // extern "C"
