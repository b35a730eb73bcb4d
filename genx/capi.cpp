// The C API of genx_core.h: its entry points and the flow of a call.
//
// genx_comm (comm.hpp) caches everything that does not depend on the
// buffers, so a repeated call costs a few lookups and the executor's own
// work: the configuration and decisions with their plans (selection.hpp),
// compiled schedules, the last call and a scratch area
// (schedule_cache.hpp), one Execution, and the device path's state
// (runtime/device_calls.hpp).  This file validates a call, decides it
// (decide(): selection, then schedule) and runs it: on host memory here,
// on device memory through DeviceCalls, non-blocking through a
// genx_request (request.hpp).
//
// Declines.  genx only declines for reasons every rank of the communicator
// reaches identically (type/op pair, commutativity, configuration, plan
// generation or compilation), before any message is posted: a decline on
// one rank and a genx run on another would deadlock.  Rank-local failures
// (memory, transport) are GENX_ERROR.
#include "genx/genx_core.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.hpp"
#include "genx/comm.hpp"
#include "genx/comm_stats.hpp"
#include "genx/site_config.hpp"
#include "topology/locality.hpp"
#include "topology/placement.hpp"
#include "tuning/displaced.hpp"
#include "tuning/rules.hpp"

namespace {

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

// Each rank's host name, "" where unknown (host_of_rank NULL: all).
std::vector<std::string> host_names(int size, const char* const* host_of_rank) {
    std::vector<std::string> hosts(static_cast<size_t>(size));
    if (host_of_rank == nullptr) return hosts;
    for (int r = 0; r < size; ++r)
        if (host_of_rank[r] != nullptr) hosts[static_cast<size_t>(r)] = host_of_rank[r];
    return hosts;
}

// Places the ranks on the communicator's topology file (c->topology_file)
// by their host names; a problem is reported once per process and hosts
// stay grouped by name.
void place_on_topology(genx_comm* c, const char* const* host_of_rank,
                       const std::vector<std::string>& hosts) {
    const std::string& file = c->topology_file;
    if (file.empty()) return;
    const std::string& overlay = c->topology_overlay;
    const std::string instead = "; genx groups hosts by name instead";
    if (host_of_rank == nullptr) {
        c->log.report_once("topology file " + file + ": the ranks' host names are unknown" +
                           instead);
        return;
    }
    for (int r = 0; r < c->size; ++r) {
        if (host_of_rank[r] == nullptr) {
            if (c->rank == 0)
                c->log.report_once("topology file " + file + ": the host of rank " +
                                   std::to_string(r) + " is unknown" + instead);
            return;
        }
    }
    std::shared_ptr<const genx::TopologyView> view;
    const genx::Status st = genx::place_ranks(file, overlay, hosts, &view);
    if (!st) {
        c->log.report_once(st.message() + instead);
        return;
    }
    c->selection.use_topology(std::move(view), file + (overlay.empty() ? "" : " + " + overlay),
                              c->log);
}

// The device path: the process's backend, and whether the transport takes
// device pointers.
void attach_device(genx_comm* c, const genx_config* cfg) {
    genx::DeviceConfig dc;
    dc.enabled = cfg == nullptr || cfg->device_off == 0;
    dc.library = cfg != nullptr && cfg->device_library != nullptr ? cfg->device_library : "";
    // What was found is said once per process by the glue
    // (genx_device_probe), not per communicator.
    c->device.attach(genx::device_probe(dc), cfg != nullptr && cfg->transport_device_aware != 0,
                     c->log.verbose(),
                     [c](int level, const std::string& msg) { c->log.say(level, msg); });
}

// Where staged calls on device memory reduce (genx_config's device_reduce
// and device_rates, the host's rates from the rules' model).  A bad value
// is reported and its default used; with rules_strict it fails the
// communicator instead.
genx::Status configure_reduce_site(genx_comm* c, const genx_config* cfg) {
    const genx::ModelParams& model = c->selection.model();
    genx::DeviceRates defaults;
    defaults.host_gamma = model.host.gamma;
    defaults.host_delta = model.host.delta;
    std::vector<std::string> warnings;
    const genx::Status st = c->device.configure(
        cfg != nullptr && cfg->device_reduce != nullptr ? cfg->device_reduce : "",
        cfg != nullptr && cfg->device_rates != nullptr ? cfg->device_rates : "", defaults,
        cfg != nullptr && cfg->rules_strict != 0, &warnings);
    for (const std::string& w : warnings) c->log.report(w);
    return st;
}

}  // namespace

extern "C" {

genx_comm* genx_comm_create(int rank, int size, int nodes, int ppn, const char* const* host_of_rank,
                            const genx_config* cfg, char* err, size_t errlen) {
    try {
        if (size < 1 || rank < 0 || rank >= size) {
            fill(err, errlen,
                 "genx_comm_create: rank " + std::to_string(rank) + " of size " +
                     std::to_string(size) + " is not a valid communicator position");
            return nullptr;
        }
        auto c = std::make_unique<genx_comm>();
        c->rank = rank;
        c->size = size;
        if (cfg != nullptr)
            c->log.configure(rank, size, cfg->verbose, cfg->log, cfg->log_ctx);
        else
            c->log.configure(rank, size, 0, nullptr, nullptr);
        // Placement is a hint: anything inconsistent counts as unknown.
        const bool placed = nodes >= 1 && ppn >= 1 && nodes <= size && ppn <= size &&
                            static_cast<long>(nodes) * ppn >= size;
        c->selection.init(rank, size,
                          genx::CommShape{size, placed ? nodes : 0, placed ? ppn : 0, nullptr});
        // The paths in effect (explicit settings over the site's files):
        // everything below reads them, not cfg's.
        const std::vector<std::string> hosts = host_names(size, host_of_rank);
        genx::Sources sources;
        genx::Status st = genx::resolve_sources(cfg, hosts, c->log, &sources);
        if (!st.is_ok()) {
            fill(err, errlen, st.message());
            return nullptr;
        }
        genx_config effective{};
        if (cfg != nullptr) effective = *cfg;
        if (cfg != nullptr && cfg->mpi_version != nullptr) c->mpi_version = cfg->mpi_version;
        c->topology_file = sources.topology;
        c->topology_overlay = sources.overlay;
        effective.topology_file = c->topology_file.c_str();
        effective.topology_overlay = c->topology_overlay.c_str();
        effective.rules_path = sources.rules.c_str();
        place_on_topology(c.get(), host_of_rank, hosts);
        attach_device(c.get(), cfg);
        c->selection.set_trial_rounds(cfg != nullptr ? cfg->trial_rounds : 0);
        st = c->selection.configure(&effective, c->log);
        if (st.is_ok()) st = configure_reduce_site(c.get(), cfg);
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

int genx_comm_place_topology_addrs(genx_comm* comm, const char* const* addrs,
                                   const char* const* patterns, const char* overlay) {
    if (comm == nullptr || addrs == nullptr || comm->selection.placed_on_topology()) return 0;
    std::vector<std::string> a(static_cast<size_t>(comm->size)), p(static_cast<size_t>(comm->size));
    for (int r = 0; r < comm->size; ++r) {
        if (addrs[r] == nullptr || addrs[r][0] == '\0') return 0;
        a[static_cast<size_t>(r)] = addrs[r];
        if (patterns != nullptr && patterns[r] != nullptr) p[static_cast<size_t>(r)] = patterns[r];
    }
    try {
        std::shared_ptr<const genx::TopologyView> view;
        const std::string ov = overlay != nullptr ? overlay : comm->topology_overlay;
        const genx::Status st = genx::place_ranks_by_topology_addrs(a, p, ov, &view);
        if (!st) {
            comm->log.report_once(st.message() + "; genx groups hosts by name instead");
            return -1;
        }
        comm->selection.use_topology(
            std::move(view), "SLURM_TOPOLOGY_ADDR" + (ov.empty() ? "" : " + " + ov), comm->log);
        comm->selection.placed_again(comm->log);
        // A request in flight holds its own schedule.
        comm->schedules.clear();
        return 1;
    } catch (...) {
        comm->log.report_once(caught("SLURM_TOPOLOGY_ADDR") +
                              "; genx groups hosts by name instead");
        return -1;
    }
}

int genx_locality_probe(const char* host_name, void* hwloc_topology, const char* sysfs_root,
                        int libfabric, uint64_t* words, char* note, size_t notelen) {
    genx::pack_locality(genx::RankLocality(), words);
    try {
        genx::HostHardware hw;
        std::string said;
        if (hwloc_topology != nullptr) {
            genx::HwlocLoadedSource src(static_cast<struct hwloc_topology*>(hwloc_topology), true);
            const genx::Status st = src.load(&hw);
            if (!st) said = "hwloc: " + st.message() + "; ";
        } else {
            // Not loaded by the caller yet: this machine's, without I/O devices.
            genx::HwlocHostSource src("", "", false);
            const genx::Status st = src.load(&hw);
            if (!st) said = "hwloc: " + st.message() + "; ";
        }
        std::vector<std::vector<genx::NicInfo>> by_source(2);
        std::vector<std::string> notes;
        genx::SysfsNicSource sysfs(sysfs_root != nullptr ? sysfs_root : "/sys");
        if (!sysfs.list(&by_source[0])) by_source[0].clear();
        genx::LibfabricNicSource fabric;
        if (libfabric != 0 && !fabric.list(&by_source[1])) by_source[1].clear();
        const std::vector<genx::NicInfo> nics = genx::merge_nic_rates(by_source, &notes);
        const genx::RankLocality r =
            genx::locality_of(host_name != nullptr ? host_name : "", hw, nics);
        genx::pack_locality(r, words);
        std::string nic_list;
        for (const genx::NicInfo& n : nics)
            nic_list += (nic_list.empty() ? "" : ", ") + n.name + " " +
                        (n.rate > 0 ? genx::format_rate(n.rate) + " (" + n.source + ")"
                                    : std::string("rate unknown"));
        fill(note, notelen,
             said + std::to_string(hw.packages) + " package(s), " + std::to_string(hw.numa_nodes) +
                 " NUMA node(s), bound to package " + std::to_string(r.package) + " NUMA node " +
                 std::to_string(r.numa) + " (" + hw.binding + "); " + std::to_string(r.nics) +
                 " NIC(s)" + (nic_list.empty() ? "" : ": " + nic_list));
        return GENX_OK;
    } catch (...) {
        fill(note, notelen, caught("genx_locality_probe"));
        return GENX_ERROR;
    }
}

int genx_comm_place_locality(genx_comm* comm, const uint64_t* words) {
    if (comm == nullptr || words == nullptr) return 0;
    try {
        std::vector<genx::RankLocality> loc(static_cast<size_t>(comm->size));
        for (int r = 0; r < comm->size; ++r)
            loc[static_cast<size_t>(r)] =
                genx::unpack_locality(words + static_cast<size_t>(r) * GENX_LOCALITY_WORDS);
        const auto& old = comm->selection.topology_view();
        if (old && old->has_inner()) return 0;  // placed before
        auto view = std::make_shared<genx::TopologyView>(old ? *old : genx::TopologyView());
        std::vector<std::string> notes;
        const genx::Status st = genx::add_rank_locality(loc, view.get(), &notes);
        if (comm->rank == 0)
            for (const std::string& n : notes) comm->log.say(1, "genx: locality: " + n);
        if (!st) {
            comm->log.report_once("the ranks' locality: " + st.message() +
                                  "; genx leaves the hosts as they were");
            return -1;
        }
        // Nothing found inside the hosts: the placement stays as it was (no
        // view where there was none).
        if (!view->has_inner()) return 0;
        comm->selection.use_topology(
            view, old ? "as placed + the ranks' locality" : "the ranks' locality (no topology file)",
            comm->log);
        comm->selection.placed_again(comm->log);
        comm->schedules.clear();
        return 1;
    } catch (...) {
        comm->log.report_once(caught("the ranks' locality") + "; genx leaves the hosts as they were");
        return -1;
    }
}

uint64_t genx_comm_topology(const genx_comm* comm) {
    return comm != nullptr ? comm->selection.topology() : 0;
}

int genx_comm_set_displaced(genx_comm* comm, const char* component, int tuned_dynamic,
                            const char** note) {
    static const char* const kNoComm = "no communicator";
    if (note != nullptr) *note = kNoComm;
    if (comm == nullptr) return 0;
    try {
        const genx::Displaced d = genx::displaced_for(component != nullptr ? component : "",
                                                      tuned_dynamic != 0, comm->mpi_version,
                                                      &comm->displaced_note);
        comm->selection.set_displaced(d, comm->log);
        if (note != nullptr) *note = comm->displaced_note.c_str();
        return d == genx::Displaced::TunedFixed41 ? 1 : 0;
    } catch (...) {
        // Left as it was: the table prices an unknown component.
        return 0;
    }
}

const char* genx_comm_topology_file(const genx_comm* comm) {
    return comm != nullptr ? comm->topology_file.c_str() : "";
}

void genx_comm_destroy(genx_comm* comm) { delete comm; }

int genx_comm_prepare(genx_comm* comm, char* err, size_t errlen) {
    fill(err, errlen, "");
    if (comm == nullptr) return GENX_ERROR;
    try {
        const genx::Status st = comm->selection.prepare(comm->log);
        if (st.is_ok()) return GENX_OK;
        fill(err, errlen, st.message());
    } catch (...) {
        fill(err, errlen, caught("genx_comm_prepare"));
    }
    return GENX_ERROR;
}

uint64_t genx_comm_digest(const genx_comm* comm) {
    return comm != nullptr ? comm->selection.digest() : 0;
}

int genx_comm_defers(const genx_comm* comm, int calls, size_t bytes, size_t count,
                     const char** reason) {
    return comm != nullptr ? comm->selection.defers(calls, bytes, count, reason) : 0;
}

int genx_trial_next(genx_comm* comm, size_t bytes) {
    try {
        return comm != nullptr ? comm->selection.trial_next(bytes) : -1;
    } catch (...) {
        return -1;
    }
}

int genx_trial_record(genx_comm* comm, size_t bytes, double seconds, double* medians, int max) {
    try {
        return comm != nullptr && medians != nullptr
                   ? comm->selection.trial_record(bytes, seconds, medians, max)
                   : 0;
    } catch (...) {
        return 0;  // out of memory for one time: the trial goes on without it
    }
}

void genx_trial_settle(genx_comm* comm, size_t bytes, const double* agreed, int n) {
    if (comm == nullptr || agreed == nullptr) return;
    try {
        comm->selection.trial_settle(bytes, agreed, n, comm->log);
    } catch (...) {
        // Only the message could not be built: the trial has settled.
    }
    // A trial's calls were not remembered; the last remembered call may be
    // another size's, which is still right, but nothing of the trial's is.
    comm->schedules.forget();
}

int genx_trial_any(const genx_comm* comm) {
    return comm != nullptr && comm->selection.trial_any() ? 1 : 0;
}

const char* genx_base_algorithm_name(int k) {
    const genx::BaseAlgorithm* b = genx::find_base_algorithm(k);
    return b != nullptr ? b->name : nullptr;
}

}  // extern "C"

namespace {

// The calls decide() serves: the name genx's log gives each (a static
// string, the key of the once-per-size-class record) and the decision
// table it reads (rules with "call", rules.hpp CallKind).
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

int decline(genx_comm* comm, size_t bytes, const std::string& reason, char* why, size_t whylen) {
    fill(why, whylen, reason);
    comm->log.declined(bytes, reason);
    return GENX_DECLINE;
}

// The decisions every call shares.  GENX_OK with *call filled (or nothing
// to do: call->sched == nullptr for count 0), GENX_DECLINE with why
// filled, or GENX_ERROR.  `keep`: the schedule's ownership, for a call
// that outlives this function.
int decide(genx_comm* comm, size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
           int commutative, const genx_reduce_cb* cb, const genx_transport_ops* transport,
           genx::Call* call, std::shared_ptr<const genx::RankSchedule>* keep, char* why,
           size_t whylen, const CallSite& site = kBlockingCall) {
    if (!callable(comm, transport)) {
        fill(why, whylen, "genx: NULL communicator or incomplete transport ops");
        return GENX_ERROR;
    }
    genx::Status st =
        genx::resolve_kernel(dtype, op, elem_size, cb, commutative != 0, &call->kernel);
    if (count == 0 && st.is_ok()) return GENX_OK;
    if (elem_size != 0 && count > SIZE_MAX / elem_size) {
        fill(why, whylen, "genx: count * element size overflows size_t");
        return GENX_ERROR;
    }
    const size_t bytes = count * elem_size;
    call->bytes = bytes;
    if (!st.is_ok()) return decline(comm, bytes, st.message(), why, whylen);

    if (!comm->selection.ready()) {
        st = comm->selection.prepare(comm->log);
        if (!st.is_ok()) return decline(comm, bytes, st.message(), why, whylen);
    }
    const genx::Selection::Choice choice = comm->selection.choose(site.nonblocking, bytes);
    if (choice.decision != nullptr && choice.decision->defers_at(count))
        return decline(comm, bytes, choice.decision->deferred_why(), why, whylen);
    const genx::RankPlan* plan = choice.plan;
    if (!plan->status.is_ok())
        return decline(comm, bytes, "algorithm " + plan->algorithm + ": " + plan->status.message(),
                       why, whylen);
    if (commutative == 0 && !plan->header.order_preserving)
        return decline(comm, bytes,
                       std::string("op ") + genx::op_name(op) + " on " + genx::dtype_name(dtype) +
                           " is not commutative and plan " + plan->algorithm +
                           " combines contributions out of rank order",
                       why, whylen);
    st = comm->schedules.find(*plan, count, elem_size, &call->sched, keep);
    if (!st.is_ok()) return decline(comm, bytes, st.message(), why, whylen);
    call->plan = plan;
    comm->log.decision(*plan, bytes, choice.decision != nullptr ? &choice.decision->why : nullptr,
                       site.name);
    return GENX_OK;
}

// Counts a blocking run of the communicator's execution.
void count_run(genx_comm* comm) {
    ++comm->calls;
    comm->progress_calls += comm->execution.progress_calls();
    comm->waits += comm->execution.waits();
}

// A run that failed (`message` says why and what became of its requests).
int run_failed(genx_comm* comm, size_t bytes, const char* where, const std::string& message,
               char* why, size_t whylen) {
    fill(why, whylen, message);
    comm->log.say(
        1, "genx: allreduce " + std::to_string(bytes) + " B" + where + " failed: " + message);
    return GENX_ERROR;
}

// A decided call on host memory, run to its end.
int run_host(genx_comm* comm, const genx::Call& call, const void* sendbuf, void* recvbuf,
             const genx_transport_ops* transport, char* why, size_t whylen) {
    genx::ScratchArea& scratch = comm->schedules.scratch();
    unsigned char* area = scratch.reserve(call.sched->scratch_bytes);
    // start()/run()'s transport, alive until the abandon below (a failed
    // replay() keeps its own, over the same table).
    genx::OpsTransport ops(*transport);
    genx::Status st;
    if (call.sched->replayable) {
        st = comm->execution.replay(*call.sched, sendbuf, recvbuf, area, scratch.size(),
                                    call.kernel, *transport);
    } else {
        st = comm->execution.start(*call.sched, sendbuf, recvbuf, area, scratch.size(), call.kernel,
                                   ops);
        if (st.is_ok()) st = comm->execution.run();
    }
    count_run(comm);
    if (st.is_ok()) return GENX_OK;
    std::string note;
    // The next call allocates another scratch area.
    if (genx::abandon_failed(comm->execution, &note) != 0) scratch.strand();
    return run_failed(comm, call.bytes, "", st.message() + note, why, whylen);
}

// A decided call on device memory, handed to the device path.
int run_device(genx_comm* comm, const genx::Call& call, const genx::BufferSpaces& spaces,
               const void* sendbuf, void* recvbuf, const genx_transport_ops* transport, char* why,
               size_t whylen) {
    genx::DeviceCall dc;
    dc.schedule = call.sched;
    genx::ScheduleEntry* entry = comm->schedules.last();
    // decide() leaves the call's schedule the cache's last entry.
    dc.staged = entry != nullptr && &entry->schedule == call.sched ? &entry->device : nullptr;
    dc.kernel = call.kernel;
    dc.bytes = call.bytes;
    dc.algorithm = call.plan->algorithm.c_str();
    dc.sendbuf = sendbuf;
    dc.recvbuf = recvbuf;
    dc.spaces = spaces;
    dc.transport = transport;
    const genx::DeviceOutcome out =
        comm->device.run(comm->execution, comm->schedules.scratch(), dc);
    if (out.ran) count_run(comm);
    if (out.code == GENX_OK) return GENX_OK;
    if (out.ran) return run_failed(comm, call.bytes, out.where, out.why, why, whylen);
    fill(why, whylen, out.why);
    return out.code;
}

// A call on device memory that genx leaves to the displaced component:
// `fallback` on a host copy.  why keeps the decline's reason on success.
int device_fallback(genx_comm* comm, const genx::BufferSpaces& spaces, const void* sendbuf,
                    void* recvbuf, size_t count, size_t bytes, const genx_host_fallback* fallback,
                    const std::string& reason, char* why, size_t whylen) {
    std::string message;
    const int rc = comm->device.staged_fallback(spaces.device(), sendbuf, recvbuf, count, bytes,
                                                fallback, reason, &message);
    if (rc != GENX_OK) fill(why, whylen, message);
    return rc;
}

genx::BufferSpaces spaces_of(const genx_comm* comm, const void* sendbuf, const void* recvbuf) {
    return comm != nullptr ? comm->device.spaces_of(sendbuf, recvbuf) : genx::BufferSpaces();
}

}  // namespace

extern "C" {

int genx_allreduce(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                   genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                   const genx_reduce_cb* cb, const genx_transport_ops* transport,
                   const genx_host_fallback* fallback, char* why, size_t whylen) {
    clear(why, whylen);
    try {
        const genx::BufferSpaces spaces = spaces_of(comm, sendbuf, recvbuf);
        const bool trial = comm != nullptr && comm->selection.trial_running(count * elem_size);
        if (callable(comm, transport) && !spaces.on_device() && !trial)
            if (const genx::Call* again =
                    comm->schedules.remembered(count, dtype, elem_size, op, commutative))
                return run_host(comm, *again, sendbuf, recvbuf, transport, why, whylen);
        genx::Call call;
        const int rc = decide(comm, count, dtype, elem_size, op, commutative, cb, transport, &call,
                              nullptr, why, whylen);
        if (spaces.on_device()) {
            if (rc == GENX_DECLINE)
                return device_fallback(comm, spaces, sendbuf, recvbuf, count, count * elem_size,
                                       fallback, why != nullptr ? why : "", why, whylen);
            if (rc != GENX_OK || call.sched == nullptr) return rc;
            return run_device(comm, call, spaces, sendbuf, recvbuf, transport, why, whylen);
        }
        if (rc != GENX_OK || call.sched == nullptr) return rc;
        comm->schedules.remember(call, count, dtype, elem_size, op, commutative,
                                 comm->log.verbose() < 2 && !trial);
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
        const genx::BufferSpaces spaces = spaces_of(comm, sendbuf, recvbuf);
        if (!spaces.on_device()) {
            // Host memory after all: the fallback takes it as it is.
            const int rc = fallback != nullptr && fallback->allreduce != nullptr
                               ? fallback->allreduce(fallback->ctx, sendbuf, recvbuf, count)
                               : -1;
            if (rc == 0) return GENX_OK;
            fill(why, whylen,
                 "genx: the fallback's allreduce failed (error " + std::to_string(rc) + ")");
            return GENX_ERROR;
        }
        return device_fallback(comm, spaces, sendbuf, recvbuf, count, count * elem_size, fallback,
                               "the glue's reason", why, whylen);
    } catch (...) {
        fill(why, whylen, caught("genx", "out of memory staging a device buffer"));
    }
    return GENX_ERROR;
}

int genx_device_active(const genx_comm* comm) { return comm != nullptr && comm->device.active(); }

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

int genx_allreduce_init(genx_comm* comm, int persistent, const void* sendbuf, void* recvbuf,
                        size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
                        int commutative, const genx_reduce_cb* cb,
                        const genx_transport_ops* transport, genx_request** out, char* why,
                        size_t whylen) {
    static const char* const name = "genx_allreduce_init";
    const CallSite& site = persistent != 0 ? kPersistentCall : kIallreduceCall;
    clear(why, whylen);
    if (out == nullptr) {
        fill(why, whylen, std::string(name) + ": NULL request pointer");
        return GENX_ERROR;
    }
    *out = nullptr;
    // Non-blocking and persistent calls on device memory are not staged
    // (the copies would have to progress with the request): refused.
    if (spaces_of(comm, sendbuf, recvbuf).on_device()) {
        fill(why, whylen,
             std::string(name) +
                 ": device memory is staged for blocking allreduce "
                 "only; nothing was posted");
        return GENX_ERROR_BUFFER;
    }
    if (!callable(comm, transport)) {
        fill(why, whylen, "genx: NULL communicator or incomplete transport ops");
        return GENX_ERROR;
    }
    try {
        std::unique_ptr<genx_request> req = comm->requests.acquire();
        genx::Call call;
        const int rc = decide(comm, count, dtype, elem_size, op, commutative, cb, transport, &call,
                              &req->sched, why, whylen, site);
        if (rc != GENX_OK) return rc;
        req->call = site.name;
        req->persistent = persistent != 0;
        req->bind(comm, call, sendbuf, recvbuf, transport);
        *out = req.release();
        return GENX_OK;
    } catch (...) {
        fill(why, whylen, caught(name, "out of memory (plan, schedule or scratch)"));
    }
    return GENX_ERROR;
}

int genx_request_start(genx_request* req, char* why, size_t whylen) {
    clear(why, whylen);
    if (req == nullptr) {
        fill(why, whylen, "genx_request_start: NULL request");
        return GENX_ERROR;
    }
    if (!req->error.is_ok()) {
        fill(why, whylen,
             "genx_request_start: the request failed earlier: " + req->error.message());
        return GENX_ERROR;
    }
    if (req->started && !req->done) {
        fill(why, whylen, "genx_request_start: the request is still in flight");
        return GENX_ERROR;
    }
    try {
        const genx::Status st = req->start();
        ++req->comm->calls;
        if (!st.is_ok()) {
            std::string note;
            req->stranded = genx::abandon_failed(req->execution, &note);
            req->error = genx::Status(st.code(), st.message() + note);
            fill(why, whylen, req->error.message());
            // An MPI_Iallreduce's failure is said as a blocking call's is.
            if (!req->persistent)
                req->comm->log.say(1, "genx: " + std::string(req->call) + " " +
                                          std::to_string(req->bytes) +
                                          " B failed: " + req->error.message());
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
            req->stranded = genx::abandon_failed(req->execution, &note);
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
        req->stranded = req->execution.abandon(genx::kAbandonBudget);
    if (req->stranded != 0) req->scratch.strand();
    // Back to the communicator's pool, unless it failed.
    if (req->comm != nullptr && req->stranded == 0 && req->error.is_ok() &&
        req->comm->requests.give_back(req))
        return;
    delete req;
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
        static const std::string names = genx::algorithm_names();
        return names.c_str();
    } catch (...) {
        return "";
    }
}

}  // extern "C"

genx::CommStats genx::comm_stats(const genx_comm* comm) {
    CommStats s;
    if (comm == nullptr) return s;
    s.calls = comm->calls;
    s.schedule_compiles = comm->schedules.compiles();
    s.plans_generated = plan_cache_stats().generated;
    s.progress_calls = comm->progress_calls;
    s.waits = comm->waits;
    s.device_calls = comm->device.stats().calls;
    s.device_reduced = comm->device.stats().reduced;
    s.repeat_calls = comm->schedules.repeats();
    return s;
}
