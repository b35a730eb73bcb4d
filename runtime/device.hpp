// Memory spaces: where a buffer lives, and how bytes move between spaces.
//
// MPI_Allreduce may be handed device memory (a CUDA device pointer, or
// managed memory).  Host code must never dereference such a pointer: the
// executor, the transports and the host reduction kernels all would.  This
// header is the one place that knows about devices:
//
//  * MemSpace says where a pointer lives (host, or device n; managed memory
//    counts as device memory, since the host may only touch it when the
//    device is idle, and genx cannot know that).
//  * DeviceBackend is what genx needs from a device runtime: ask a
//    pointer's space, page-locked host memory for staging, device memory,
//    streams and events, asynchronous copies between any two spaces, and
//    fused k-ary reductions on device memory.  Two implementations:
//      - CUDA (device.cpp): the space query resolves the driver API at run
//        time (dlopen("libcuda.so.1"), cuPointerGetAttributes); everything
//        else is libgenx-cuda.so (runtime/cuda/), built by nvcc and loaded
//        only once a device pointer was seen.  Without a driver, nothing is
//        loaded and every buffer is host memory at the cost of one branch.
//      - FakeDevice (tests/support/fake_device.hpp): a host arena that host code cannot
//        read (a PROT_NONE mapping), for tests on machines without a GPU.
//  * The process has one backend at a time (device_backend()); tests
//    install the fake one.
//
// Copy and reduce calls only queue work on a stream; an event recorded
// after them says when it is done.  Everything the staging path does is
// ordered by events, never by a device-wide synchronisation, so the
// application's own streams are left alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/genx_types.h"
#include "common/status.hpp"

namespace genx {

enum class MemKind : uint8_t { Host, Device };

struct MemSpace {
    MemKind kind = MemKind::Host;
    int device = -1;       // ordinal, for device memory
    bool managed = false;  // CUDA managed (unified) memory
    bool is_device() const { return kind == MemKind::Device; }
};

using DeviceStream = void*;
using DeviceEvent = void*;

class DeviceBackend {
  public:
    virtual ~DeviceBackend() = default;
    // "cuda (CUDA runtime 13.0, ...)", "fake".
    virtual std::string describe() const = 0;
    // Where `p` lives.  Host for nullptr and for any pointer the runtime
    // does not know (plain malloc'ed memory).  Called on every allreduce:
    // must be cheap and must not allocate.
    virtual MemSpace space_of(const void* p) = 0;
    // false when the process can hold no device memory at this moment, so
    // that every buffer is host memory without asking space_of (CUDA: no
    // context exists yet; ContextWatch below).  Asked once per call before
    // space_of; true is always a correct answer.
    virtual bool may_hold_device_memory() { return true; }
    // true where may_hold_device_memory() can answer false (CUDA: the
    // context check is armed), for tests and verbose output.
    virtual bool context_check_armed() const { return false; }
    // Ok when copies and kernels can run; otherwise why not (CUDA: the
    // library libgenx-cuda.so is missing or of another ABI), so that a
    // device buffer is refused with that reason instead of dereferenced.
    // CUDA loads the library at the first call.
    virtual Status ready() = 0;

    // Page-locked host memory (staging buffers).
    virtual Status host_alloc(size_t bytes, void** p) = 0;
    virtual void host_free(void* p) = 0;
    virtual Status device_alloc(int device, size_t bytes, void** p) = 0;
    virtual void device_free(int device, void* p) = 0;

    virtual Status stream_create(int device, DeviceStream* s) = 0;
    virtual void stream_destroy(int device, DeviceStream s) = 0;
    virtual Status stream_synchronize(int device, DeviceStream s) = 0;
    virtual Status event_create(int device, DeviceEvent* e) = 0;
    virtual void event_destroy(int device, DeviceEvent e) = 0;
    virtual Status event_record(int device, DeviceEvent e, DeviceStream s) = 0;
    // *done when everything queued before the event's record finished.
    virtual Status event_query(int device, DeviceEvent e, bool* done) = 0;
    virtual Status event_synchronize(int device, DeviceEvent e) = 0;

    // Copies `bytes` between any two spaces, queued on `s`.
    virtual Status memcpy_async(int device, void* dst, const void* src, size_t bytes,
                                DeviceStream s) = 0;
    virtual bool reduce_supported(genx_dtype dtype, genx_op op) const = 0;
    // The left fold of runtime/reduce.hpp on device memory, queued on `s`.
    virtual Status reduce_async(int device, genx_dtype dtype, genx_op op, void* dst,
                                const void* const* srcs, int nsrcs, size_t count,
                                DeviceStream s) = 0;
};

// Whether the process may hold CUDA device memory yet (docs/device.md,
// "Cost of the check").  Device and managed memory belong to a context, so
// while no context is current on the calling thread and no device's primary
// context is active (the one the CUDA runtime API uses), every pointer is
// host memory and the per-pointer query (35-105 ns each on an H200 node,
// two per call) can be skipped: what a host-only job on a GPU node pays is then
// this check.  Once a context is seen the answer stays "may" for the life
// of the process.  Armed only where the check is cheaper than the two
// queries it saves (at most kMaxDevices devices: each costs one driver
// call of about 27 ns); otherwise, or when any driver call fails, "may".
// The driver calls are passed in, so that unit tests can drive it.
class ContextWatch {
  public:
    static constexpr size_t kMaxDevices = 2;
    using CurrentFn = int (*)(void** ctx);                         // cuCtxGetCurrent
    using PrimaryStateFn = int (*)(int dev, unsigned* flags, int* active);  // cuDevicePrimaryCtxGetState
    ContextWatch() = default;  // not armed: always "may"
    ContextWatch(CurrentFn current, PrimaryStateFn primary, std::vector<int> devices);
    ContextWatch(const ContextWatch&) = delete;
    ContextWatch& operator=(const ContextWatch&) = delete;
    bool armed() const { return armed_; }
    bool may_hold_device_memory() {
        return !armed_ || seen_.load(std::memory_order_relaxed) || context_appeared();
    }

  private:
    bool context_appeared();
    CurrentFn current_ = nullptr;
    PrimaryStateFn primary_ = nullptr;
    std::vector<int> devices_;  // CUdevice handles
    bool armed_ = false;
    std::atomic<bool> seen_{false};
};

// How the process looks for device memory (genx_config's device fields).
struct DeviceConfig {
    bool enabled = true;    // false: every buffer is host memory, no query
    std::string library;    // libgenx-cuda.so to load; "" = the built-in places
};

// The process's backend: nullptr when device memory is off or no CUDA
// driver is present (then every buffer is host memory).  The first call
// with enabled=true probes once (dlopen of libcuda.so.1 and cuInit);
// later configurations are ignored (one runtime per process).  *note gets
// one line on what was found (for verbose output), when non-null.
DeviceBackend* device_probe(const DeviceConfig& config, std::string* note = nullptr);
// The backend device_probe() or a test installed (nullptr: none).
DeviceBackend* device_backend();
// Installs `b` (tests: a FakeDevice; nullptr removes it) and returns the
// previous one.  Not thread-safe against running collectives.
DeviceBackend* set_device_backend(DeviceBackend* b);

}  // namespace genx
