// Allreduce calls on device memory: what a communicator keeps for them and
// the ways they run (docs/device.md).
//
// DeviceCalls owns one communicator's device state: the process's backend,
// the streams and events, the page-locked staging buffer, the device
// scratch area and the bounce pool, all made at the first call that needs
// them and kept; and the settings that choose where a staged call reduces
// (genx_config's device_reduce and device_rates).  genx/ decides a call
// (plan, schedule, kernel) as for host memory and hands it down here; this
// code picks the way it runs and runs it on the communicator's Execution:
//
//   on the device   the transport takes device pointers: result, scratch
//                   and reductions on the device (Execution::start_on_device);
//   bounced         the same over a host-only transport, each message
//                   through page-locked memory (bounce.hpp), where the
//                   reduction-site estimate (staging.hpp) prefers the device;
//   staged          the schedule on a page-locked host copy, the copies
//                   following its steps (staging.hpp), reduced on the host;
//
// and a call genx leaves to the displaced component runs that component's
// allreduce on a whole host copy (staged_fallback).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/genx_types.h"
#include "common/status.hpp"
#include "runtime/bounce.hpp"
#include "runtime/device.hpp"
#include "runtime/executor.hpp"
#include "runtime/scratch.hpp"
#include "runtime/staging.hpp"

namespace genx {

// Where a call's buffers live (sendbuf NULL, in place: recvbuf's space).
struct BufferSpaces {
    MemSpace send, recv;
    bool on_device() const { return send.is_device() || recv.is_device(); }
    // The device the call works on: recvbuf's, else sendbuf's.
    MemSpace device() const {
        MemSpace d = recv.is_device() ? recv : send;
        if (d.device < 0) d.device = 0;
        return d;
    }
};

// What the device path keeps with a compiled schedule (in genx/'s schedule
// cache): the stage plan, built at the schedule's first call on device
// memory, and where its staged calls reduce (auto: estimated once).
struct StagedSchedule {
    std::unique_ptr<StagePlan> stage;
    bool site_known = false;
    bool site_logged = false;
    ReduceSiteEstimate site;
};

// A call on device memory as genx/ decided it.
struct DeviceCall {
    const RankSchedule* schedule = nullptr;
    StagedSchedule* staged = nullptr;  // the schedule's device state
    ReduceKernel kernel;
    size_t bytes = 0;
    const char* algorithm = "";     // the plan's, for the reduction-site message
    const void* sendbuf = nullptr;  // nullptr: in place
    void* recvbuf = nullptr;
    BufferSpaces spaces;
    const genx_transport_ops* transport = nullptr;
};

// What a call on device memory came to.
struct DeviceOutcome {
    int code = GENX_OK;  // GENX_OK, GENX_ERROR or GENX_ERROR_BUFFER
    bool ran = false;    // a plan ran on the Execution (a call genx counts), whatever its result
    const char* where = "";  // " on the device" or " on device memory", for messages
    std::string why;         // unless GENX_OK
};

struct DeviceCallStats {
    uint64_t calls = 0;    // calls on device memory staged or run on the device (plan or fallback)
    uint64_t reduced = 0;  // of those: reduced on the device (CUDA-aware or bounced)
};

// genx_config's device_reduce: where staged calls reduce.
enum class SiteMode { Auto, Host, Device };

class DeviceCalls {
  public:
    // Prints `msg` when the communicator's verbosity is at least `level`.
    using Say = std::function<void(int level, const std::string& msg)>;

    DeviceCalls() = default;
    ~DeviceCalls() { release(); }
    DeviceCalls(const DeviceCalls&) = delete;
    DeviceCalls& operator=(const DeviceCalls&) = delete;

    // The process's backend (nullptr: every buffer is host memory),
    // whether the transport takes device pointers, and where messages go
    // (`verbose`: the communicator's level, for what is said once).
    void attach(DeviceBackend* device, bool transport_device_aware, int verbose, Say say);
    // Where staged calls reduce ("", "auto", "host" or "device") and the
    // estimate's figures (parse_device_rates' text over `defaults`, which
    // carry the host's rates).  A bad value is added to *warnings and the
    // default used (a typo in a device setting must not take genx off host
    // calls); with `strict` it is the error instead.
    Status configure(const std::string& mode, const std::string& rates_text,
                     const DeviceRates& defaults, bool strict, std::vector<std::string>* warnings);

    bool active() const { return device_ != nullptr; }
    // Host memory without asking where there is no backend (every call of a
    // CPU job: inlined), nor while the process can hold no device memory.
    BufferSpaces spaces_of(const void* sendbuf, const void* recvbuf) const {
        if (device_ == nullptr) return BufferSpaces();
        return device_spaces_of(sendbuf, recvbuf);
    }
    const DeviceCallStats& stats() const { return stats_; }

    // The displaced component's allreduce around a whole-buffer host copy:
    // copy in, `fallback` in place on host memory, copy out.  `reason`: why
    // genx left the call to it, for messages.
    int staged_fallback(const MemSpace& where, const void* sendbuf, void* recvbuf, size_t count,
                        size_t bytes, const genx_host_fallback* fallback, const std::string& reason,
                        std::string* why);

    // Runs a decided call on `execution`, on the device or staged (host
    // scratch from `scratch`); after a failure the execution is abandoned,
    // and memory the transport may still write into is given up.
    DeviceOutcome run(Execution& execution, ScratchArea& scratch, const DeviceCall& call);

  private:
    BufferSpaces device_spaces_of(const void* sendbuf, const void* recvbuf) const;
    // Streams and events on `ordinal`, at least `events` copy-in events,
    // and a staging buffer of `bytes`; GENX_ERROR_BUFFER with the reason
    // where the device cannot be used.
    int prepare(const MemSpace& where, size_t events, size_t bytes, std::string* why);
    Status make_state(int ordinal, size_t events, size_t bytes);
    void release();
    bool reducible(const DeviceCall& call) const;
    const ReduceSiteEstimate& reduce_site(StagedSchedule& staged, const RankSchedule& schedule);
    void log_site(const DeviceCall& call, bool on_device);
    DeviceOutcome run_on_device(Execution& execution, const DeviceCall& call, bool bounce);
    DeviceOutcome run_staged(Execution& execution, ScratchArea& scratch, const DeviceCall& call);
    // A failed run: abandoned, `strand` called when requests stay posted.
    template <typename Strand>
    DeviceOutcome finish(Execution& execution, const Status& st, const char* where, Strand strand);

    DeviceBackend* device_ = nullptr;
    bool device_aware_ = false;
    int verbose_ = 0;
    Say say_;
    SiteMode site_mode_ = SiteMode::Auto;
    DeviceRates rates_;
    DeviceCallStats stats_;
    // Made at the first call that needs them, on that call's device.
    int ordinal_ = -1;
    DeviceStream in_ = nullptr, out_ = nullptr;
    std::vector<DeviceEvent> in_events_;
    DeviceEvent out_event_ = nullptr;
    void* host_ = nullptr;  // page-locked staging buffer
    size_t host_bytes_ = 0;
    void* scratch_ = nullptr;  // device-resident calls' scratch area
    size_t scratch_bytes_ = 0;
    std::unique_ptr<BouncePool> bounce_;  // bounced calls' buffers
};

}  // namespace genx
