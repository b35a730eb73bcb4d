// Allreduce calls on device memory (device_calls.hpp).
#include "runtime/device_calls.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"

namespace genx {

void DeviceCalls::attach(DeviceBackend* device, bool transport_device_aware, int verbose, Say say) {
    device_ = device;
    device_aware_ = transport_device_aware;
    verbose_ = verbose;
    say_ = std::move(say);
}

Status DeviceCalls::configure(const std::string& mode, const std::string& rates_text,
                              const DeviceRates& defaults, bool strict,
                              std::vector<std::string>* warnings) {
    if (mode.empty() || mode == "auto") {
        site_mode_ = SiteMode::Auto;
    } else if (mode == "host") {
        site_mode_ = SiteMode::Host;
    } else if (mode == "device") {
        site_mode_ = SiteMode::Device;
    } else {
        const std::string msg = "coll_genx_cuda_reduce '" + mode + "' is not auto, host or device";
        if (strict) return Status::invalid(msg);
        warnings->push_back(msg + "; genx uses auto");
        site_mode_ = SiteMode::Auto;
    }
    rates_ = defaults;
    const Status st = parse_device_rates(rates_text, &rates_);
    if (!st.is_ok()) {
        const std::string msg = "coll_genx_cuda_rates: " + st.message();
        if (strict) return Status::invalid(msg);
        warnings->push_back(msg + "; genx uses the default figures");
        rates_ = defaults;
    }
    return Status::ok();
}

BufferSpaces DeviceCalls::device_spaces_of(const void* sendbuf, const void* recvbuf) const {
    BufferSpaces b;
    // No context in the process yet: host memory, nothing to ask.
    if (!device_->may_hold_device_memory()) return b;
    b.recv = device_->space_of(recvbuf);
    b.send = sendbuf != nullptr ? device_->space_of(sendbuf) : b.recv;
    return b;
}

void DeviceCalls::release() {
    if (device_ == nullptr || ordinal_ < 0) return;
    if (in_ != nullptr) device_->stream_destroy(ordinal_, in_);
    if (out_ != nullptr) device_->stream_destroy(ordinal_, out_);
    for (DeviceEvent e : in_events_) device_->event_destroy(ordinal_, e);
    if (out_event_ != nullptr) device_->event_destroy(ordinal_, out_event_);
    if (host_ != nullptr) device_->host_free(host_);
    if (scratch_ != nullptr) device_->device_free(ordinal_, scratch_);
    ordinal_ = -1;
    in_ = out_ = nullptr;
    in_events_.clear();
    out_event_ = nullptr;
    host_ = nullptr;
    host_bytes_ = 0;
    scratch_ = nullptr;
    scratch_bytes_ = 0;
    bounce_.reset();
}

Status DeviceCalls::make_state(int ordinal, size_t events, size_t bytes) {
    if (ordinal_ != ordinal) {
        release();
        ordinal_ = ordinal;
        GENX_RETURN_IF_ERROR(device_->stream_create(ordinal, &in_));
        GENX_RETURN_IF_ERROR(device_->stream_create(ordinal, &out_));
        GENX_RETURN_IF_ERROR(device_->event_create(ordinal, &out_event_));
    }
    while (in_events_.size() < events) {
        DeviceEvent e = nullptr;
        GENX_RETURN_IF_ERROR(device_->event_create(ordinal, &e));
        in_events_.push_back(e);
    }
    if (bytes > host_bytes_ || host_ == nullptr) {
        if (host_ != nullptr) device_->host_free(host_);
        host_ = nullptr;
        host_bytes_ = 0;
        const size_t n = std::max<size_t>(4096, bytes);
        GENX_RETURN_IF_ERROR(device_->host_alloc(n, &host_));
        host_bytes_ = n;
    }
    return Status::ok();
}

int DeviceCalls::prepare(const MemSpace& where, size_t events, size_t bytes, std::string* why) {
    Status st = device_->ready();
    if (st.is_ok()) st = make_state(where.device, events, bytes);
    if (st.is_ok()) return GENX_OK;
    *why = "genx: allreduce of " + std::to_string(bytes) + " B on device memory (device " +
           std::to_string(where.device) + "): " + st.message() +
           "; genx does not hand device memory to a component that would read it as host memory";
    return GENX_ERROR_BUFFER;
}

int DeviceCalls::staged_fallback(const MemSpace& where, const void* sendbuf, void* recvbuf,
                                 size_t count, size_t bytes, const genx_host_fallback* fb,
                                 const std::string& reason, std::string* why) {
    if (fb == nullptr || fb->allreduce == nullptr) {
        *why = "genx: allreduce of " + std::to_string(bytes) +
               " B on device memory left to the fallback (" + reason +
               "), and no host fallback was given: nothing was sent";
        return GENX_ERROR_BUFFER;
    }
    int rc = prepare(where, 0, bytes, why);
    if (rc != GENX_OK) return rc;
    const void* src = sendbuf != nullptr ? sendbuf : recvbuf;
    Status st;
    if (bytes > 0) {
        st = device_->memcpy_async(ordinal_, host_, src, bytes, in_);
        if (st.is_ok()) st = device_->stream_synchronize(ordinal_, in_);
    }
    if (!st.is_ok()) {
        *why = "genx: staging " + std::to_string(bytes) + " B in for the fallback: " + st.message();
        return GENX_ERROR;
    }
    ++stats_.calls;
    say_(2, "genx: allreduce " + std::to_string(bytes) +
                " B on device memory: staged around the fallback (" + reason + ")");
    rc = fb->allreduce(fb->ctx, nullptr, host_, count);
    if (rc != 0) {
        *why = "genx: the fallback's allreduce on the staged copy failed (error " +
               std::to_string(rc) + ")";
        return GENX_ERROR;
    }
    if (bytes > 0) {
        st = device_->memcpy_async(ordinal_, recvbuf, host_, bytes, out_);
        if (st.is_ok()) st = device_->stream_synchronize(ordinal_, out_);
    }
    if (!st.is_ok()) {
        *why =
            "genx: staging " + std::to_string(bytes) + " B out after the fallback: " + st.message();
        return GENX_ERROR;
    }
    return GENX_OK;
}

// Whether the call can reduce on the device: a device kernel for its
// (type, op), both buffers on one device.
bool DeviceCalls::reducible(const DeviceCall& call) const {
    const BufferSpaces& s = call.spaces;
    return !call.kernel.is_callback() &&
           device_->reduce_supported(call.kernel.dtype(), call.kernel.op()) && s.send.is_device() &&
           s.recv.is_device() && s.send.device == s.recv.device;
}

// Where the schedule's staged calls reduce: the mode's answer, or the
// estimate's.
const ReduceSiteEstimate& DeviceCalls::reduce_site(StagedSchedule& staged,
                                                   const RankSchedule& schedule) {
    if (staged.site_known) return staged.site;
    staged.site_known = true;
    if (site_mode_ == SiteMode::Auto)
        staged.site = estimate_reduce_site(schedule, *staged.stage, rates_);
    else
        staged.site.site = site_mode_ == SiteMode::Device ? ReduceSite::Device : ReduceSite::Host;
    return staged.site;
}

// Says once per schedule (verbose 1) where its first staged call reduced,
// and why.
void DeviceCalls::log_site(const DeviceCall& call, bool on_device) {
    StagedSchedule& staged = *call.staged;
    if (staged.site_logged || verbose_ < 1) return;
    staged.site_logged = true;
    std::string why;
    if (site_mode_ != SiteMode::Auto) {
        why = "coll_genx_cuda_reduce";
    } else {
        char est[160];
        std::snprintf(est, sizeof est, "estimated %.1f us on the host, %.1f us on the device",
                      staged.site.host_s * 1e6, staged.site.device_s * 1e6);
        why = est;
    }
    if (staged.site.site == ReduceSite::Device && !on_device)
        why += "; this call cannot: no device kernel for " +
               std::string(op_name(call.kernel.op())) + " on " + dtype_name(call.kernel.dtype()) +
               ", or its buffers are in two spaces";
    say_(1, "genx: allreduce of " + std::to_string(call.bytes) + " B on device memory (" +
                call.algorithm + "): reduces on the " + (on_device ? "device" : "host") + " (" +
                why + ")");
}

template <typename Strand>
DeviceOutcome DeviceCalls::finish(Execution& execution, const Status& st, const char* where,
                                  Strand strand) {
    DeviceOutcome out;
    out.ran = true;
    out.where = where;
    ++stats_.calls;
    if (st.is_ok()) return out;
    std::string note;
    if (abandon_failed(execution, &note) != 0) strand();
    out.code = GENX_ERROR;
    out.why = st.message() + note;
    return out;
}

DeviceOutcome DeviceCalls::run(Execution& execution, ScratchArea& scratch, const DeviceCall& call) {
    if (device_aware_ && reducible(call)) return run_on_device(execution, call, false);
    return run_staged(execution, scratch, call);
}

// The call run on the device: device scratch, device kernels, the
// transport (or, bounced, the bounce pool) moving device memory.
DeviceOutcome DeviceCalls::run_on_device(Execution& execution, const DeviceCall& call,
                                         bool bounce) {
    DeviceOutcome out;
    out.code = prepare(call.spaces.device(), 0, 0, &out.why);
    if (out.code != GENX_OK) return out;
    const size_t need = std::max<size_t>(call.schedule->scratch_bytes, 1);
    if (need > scratch_bytes_) {
        if (scratch_ != nullptr) device_->device_free(ordinal_, scratch_);
        scratch_ = nullptr;
        scratch_bytes_ = 0;
        const Status st = device_->device_alloc(ordinal_, need, &scratch_);
        if (!st.is_ok()) {
            out.code = GENX_ERROR;
            out.why = "genx: device scratch of " + std::to_string(need) + " B: " + st.message();
            return out;
        }
        scratch_bytes_ = need;
    }
    DeviceExec dx;
    dx.device = device_;
    dx.ordinal = ordinal_;
    dx.stream = in_;
    OpsTransport ops(*call.transport);
    Transport* t = &ops;
    std::optional<BounceTransport> bounced;
    if (bounce) {
        if (!bounce_) bounce_ = std::make_unique<BouncePool>(*device_, ordinal_);
        t = &bounced.emplace(ops, *bounce_);
    }
    Status st = execution.start_on_device(*call.schedule, dx, call.sendbuf, call.recvbuf, scratch_,
                                          scratch_bytes_, call.kernel, *t);
    if (st.is_ok()) st = execution.run();
    if (st.is_ok()) ++stats_.reduced;
    return finish(execution, st, " on the device", [this] {
        scratch_ = nullptr;  // the transport may still write into it
        scratch_bytes_ = 0;
        (void)bounce_.release();  // ... and into the bounce buffers
    });
}

// The call staged: the schedule runs on the staging buffer, the copies
// follow its steps; or bounced, where the reduction site is the device.
DeviceOutcome DeviceCalls::run_staged(Execution& execution, ScratchArea& scratch,
                                      const DeviceCall& call) {
    StagedSchedule& staged = *call.staged;
    if (!staged.stage)
        staged.stage = std::make_unique<StagePlan>(
            make_stage_plan(*call.schedule, call.bytes >= kStepStagingBytes));
    const StagePlan& plan = *staged.stage;
    const bool on_device =
        reduce_site(staged, *call.schedule).site == ReduceSite::Device && reducible(call);
    log_site(call, on_device);
    if (on_device) return run_on_device(execution, call, true);
    DeviceOutcome out;
    out.code = prepare(call.spaces.device(), plan.in_begin.size() - 1, plan.bytes, &out.why);
    if (out.code != GENX_OK) return out;
    StagedBuffers sb;
    sb.device = device_;
    sb.ordinal = ordinal_;
    sb.plan = &plan;
    sb.src = call.sendbuf != nullptr ? call.sendbuf : call.recvbuf;
    sb.dst = call.recvbuf;
    sb.host = host_;
    sb.in_stream = in_;
    sb.out_stream = out_;
    sb.in_events = in_events_.data();
    sb.out_event = out_event_;
    unsigned char* area = scratch.reserve(call.schedule->scratch_bytes);
    OpsTransport ops(*call.transport);
    Status st = execution.start_staged(*call.schedule, sb, area, scratch.size(), call.kernel, ops);
    if (st.is_ok()) st = execution.run();
    return finish(execution, st, " on device memory", [this, &scratch] {
        // The scratch area and the staging buffer are both left to it.
        scratch.strand();
        host_ = nullptr;
        host_bytes_ = 0;
    });
}

}  // namespace genx
