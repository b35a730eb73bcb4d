// A device that host code cannot touch, for testing the device paths on
// machines without a GPU.
//
// "Device memory" is an arena of a memfd mapped twice: the addresses handed
// out are in a PROT_NONE view, so any host read or write of a device
// pointer (the bug the staging path exists to prevent) faults at once; the
// backend itself reaches the same pages through a second, writable view.
//
// Streams run lazily: queued copies and reductions execute only when
// something waits for them (stream_synchronize, event_synchronize, or an
// event_query, which answers "not yet" the first time it is asked about a
// record).  So code that reads a staging buffer before waiting for the
// copy into it reads stale bytes and fails its test, and code that never
// waits loses the copy.  Every queued copy also fingerprints its host
// side when it is queued and again when it runs: a host write into the
// source or destination of a copy still in flight is reported as an error
// (a real GPU would have copied torn data).
//
// Every operation checks that device ranges lie inside one live
// allocation, counts copies by direction, and counts host sides that are
// not page-locked (staging must use host_alloc'ed buffers).  Thread-safe:
// loopback ranks share one instance.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device.hpp"

namespace genx {

struct FakeDeviceStats {
    uint64_t h2d = 0, d2h = 0, d2d = 0, h2h = 0;  // copies executed, by direction
    uint64_t bytes_h2d = 0, bytes_d2h = 0;
    uint64_t unpinned_copies = 0;   // copies whose host side was not host_alloc'ed
    uint64_t reduces = 0;           // reduction kernels executed
    uint64_t not_ready_answers = 0; // event_query answers "not yet"
    uint64_t host_allocs = 0, device_allocs = 0;
    uint64_t space_queries = 0;     // space_of calls
};

class FakeDevice final : public DeviceBackend {
  public:
    // An arena of `arena_bytes` (virtual; pages are only used when
    // written), reported as device `ordinal`.
    explicit FakeDevice(size_t arena_bytes = size_t{1} << 32, int ordinal = 0);
    ~FakeDevice() override;
    FakeDevice(const FakeDevice&) = delete;
    FakeDevice& operator=(const FakeDevice&) = delete;

    std::string describe() const override { return "fake device (host arena, PROT_NONE)"; }
    MemSpace space_of(const void* p) override;
    // As a process with no CUDA context answers (ContextWatch): false
    // after set_no_context(true), else true.
    bool may_hold_device_memory() override { return !no_context_.load(); }
    bool context_check_armed() const override { return true; }
    void set_no_context(bool v) { no_context_.store(v); }
    Status ready() override { return Status::ok(); }

    Status host_alloc(size_t bytes, void** p) override;
    void host_free(void* p) override;
    Status device_alloc(int device, size_t bytes, void** p) override;
    void device_free(int device, void* p) override;

    Status stream_create(int device, DeviceStream* s) override;
    void stream_destroy(int device, DeviceStream s) override;
    Status stream_synchronize(int device, DeviceStream s) override;
    Status event_create(int device, DeviceEvent* e) override;
    void event_destroy(int device, DeviceEvent e) override;
    Status event_record(int device, DeviceEvent e, DeviceStream s) override;
    Status event_query(int device, DeviceEvent e, bool* done) override;
    Status event_synchronize(int device, DeviceEvent e) override;

    Status memcpy_async(int device, void* dst, const void* src, size_t bytes,
                        DeviceStream s) override;
    bool reduce_supported(genx_dtype dtype, genx_op op) const override;
    Status reduce_async(int device, genx_dtype dtype, genx_op op, void* dst,
                        const void* const* srcs, int nsrcs, size_t count,
                        DeviceStream s) override;

    // Test helpers: allocate (optionally as "managed" memory), and move
    // bytes between a device buffer and host memory synchronously.
    void* alloc(size_t bytes, bool managed = false);
    void free(void* p) { device_free(ordinal_, p); }
    void upload(void* dev, const void* host, size_t bytes);
    void download(void* host, const void* dev, size_t bytes);

    FakeDeviceStats stats() const;
    void reset_stats();
    // Device allocations still live (leak checks).
    size_t live_allocations() const;

  private:
    struct Op;
    struct Stream;
    struct Event;
    // The writable alias of device range [p, p+n), or nullptr (with *err)
    // when it is not inside one live allocation.
    unsigned char* alias(const void* p, size_t n, std::string* err) const;
    bool in_arena(const void* p) const;
    bool pinned(const void* p, size_t n) const;
    Status run_until(Stream* s, uint64_t seq);  // runs queued ops with seq <= `seq`
    Status run_op(Op& op);

    int ordinal_;
    size_t arena_bytes_;
    int fd_ = -1;
    unsigned char* dev_view_ = nullptr;   // PROT_NONE: what callers get
    unsigned char* host_view_ = nullptr;  // the same pages, writable
    mutable std::mutex mu_;
    std::map<size_t, size_t> free_;                          // offset -> bytes
    std::map<size_t, std::pair<size_t, bool>> live_;         // offset -> (bytes, managed)
    std::map<uintptr_t, size_t> pinned_;                     // host_alloc'ed: address -> bytes
    std::vector<std::unique_ptr<Stream>> streams_;
    std::vector<std::unique_ptr<Event>> events_;
    FakeDeviceStats stats_;
    std::atomic<uint64_t> space_queries_{0};
    std::atomic<bool> no_context_{false};
};

}  // namespace genx
