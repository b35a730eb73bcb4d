// The fake device (fake_device.hpp).
#include "tests/support/fake_device.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "common/hash.hpp"
#include "runtime/reduce.hpp"

namespace genx {

namespace {
constexpr size_t kAlign = 256;  // cudaMalloc's alignment

uint64_t fingerprint(const void* p, size_t n) {
    FnvHasher h;
    h.bytes(p, n);
    return h.h;
}
}  // namespace

struct FakeDevice::Op {
    enum Kind { Copy, Reduce, Marker } kind = Copy;
    uint64_t seq = 0;
    // Copy: the writable addresses (device sides already aliased), and the
    // host sides' fingerprints when queued.
    unsigned char* dst = nullptr;
    const unsigned char* src = nullptr;
    size_t bytes = 0;
    bool dst_host = false, src_host = false;
    uint64_t dst_print = 0, src_print = 0;
    int direction = 0;  // 0 h2h, 1 h2d, 2 d2h, 3 d2d
    bool unpinned = false;
    // Reduce.
    genx_dtype dtype = GENX_DT_OTHER;
    genx_op rop = GENX_OP_OTHER;
    std::vector<const void*> srcs;
    size_t count = 0;
};

struct FakeDevice::Stream {
    std::deque<Op> queue;
    uint64_t next_seq = 1;
    uint64_t done_seq = 0;
};

struct FakeDevice::Event {
    Stream* stream = nullptr;
    uint64_t seq = 0;       // the record's position in its stream
    bool asked = false;     // event_query said "not yet" for this record
};

FakeDevice::FakeDevice(size_t arena_bytes, int ordinal)
    : ordinal_(ordinal), arena_bytes_(arena_bytes) {
    fd_ = memfd_create("genx-fake-device", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(arena_bytes)) != 0)
        throw std::runtime_error("fake device: memfd_create/ftruncate failed");
    void* d = mmap(nullptr, arena_bytes, PROT_NONE, MAP_SHARED, fd_, 0);
    void* h = mmap(nullptr, arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (d == MAP_FAILED || h == MAP_FAILED) throw std::runtime_error("fake device: mmap failed");
    dev_view_ = static_cast<unsigned char*>(d);
    host_view_ = static_cast<unsigned char*>(h);
    free_[0] = arena_bytes;
}

FakeDevice::~FakeDevice() {
    for (auto& kv : pinned_) std::free(reinterpret_cast<void*>(kv.first));
    munmap(dev_view_, arena_bytes_);
    munmap(host_view_, arena_bytes_);
    close(fd_);
}

bool FakeDevice::in_arena(const void* p) const {
    const auto* b = static_cast<const unsigned char*>(p);
    return b >= dev_view_ && b < dev_view_ + arena_bytes_;
}

MemSpace FakeDevice::space_of(const void* p) {
    space_queries_.fetch_add(1, std::memory_order_relaxed);
    MemSpace s;
    if (p == nullptr || !in_arena(p)) return s;
    s.kind = MemKind::Device;
    s.device = ordinal_;
    std::lock_guard<std::mutex> lock(mu_);
    const size_t off = static_cast<size_t>(static_cast<const unsigned char*>(p) - dev_view_);
    auto it = live_.upper_bound(off);
    if (it != live_.begin()) {
        --it;
        if (off < it->first + it->second.first) s.managed = it->second.second;
    }
    return s;
}

unsigned char* FakeDevice::alias(const void* p, size_t n, std::string* err) const {
    const size_t off = static_cast<size_t>(static_cast<const unsigned char*>(p) - dev_view_);
    auto it = live_.upper_bound(off);
    if (it != live_.begin()) {
        --it;
        if (off >= it->first && off + n <= it->first + it->second.first) return host_view_ + off;
    }
    *err = "fake device: " + std::to_string(n) + " B at device offset " + std::to_string(off) +
           " are not inside one live allocation";
    return nullptr;
}

bool FakeDevice::pinned(const void* p, size_t n) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = pinned_.upper_bound(a);
    if (it == pinned_.begin()) return false;
    --it;
    return a >= it->first && a + n <= it->first + it->second;
}

Status FakeDevice::host_alloc(size_t bytes, void** p) {
    void* q = std::aligned_alloc(4096, std::max<size_t>(4096, (bytes + 4095) / 4096 * 4096));
    if (q == nullptr) return Status::internal("fake device: host_alloc of " + std::to_string(bytes) + " B failed");
    std::lock_guard<std::mutex> lock(mu_);
    pinned_[reinterpret_cast<uintptr_t>(q)] = bytes;
    ++stats_.host_allocs;
    *p = q;
    return Status::ok();
}

void FakeDevice::host_free(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    pinned_.erase(reinterpret_cast<uintptr_t>(p));
    std::free(p);
}

Status FakeDevice::device_alloc(int device, size_t bytes, void** p) {
    if (device != ordinal_) return Status::invalid("fake device: no device " + std::to_string(device));
    const size_t n = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < n) continue;
        const size_t off = it->first;
        const size_t rest = it->second - n;
        free_.erase(it);
        if (rest > 0) free_[off + n] = rest;
        live_[off] = {n, false};
        ++stats_.device_allocs;
        *p = dev_view_ + off;
        return Status::ok();
    }
    return Status::internal("fake device: out of arena memory for " + std::to_string(bytes) + " B");
}

void FakeDevice::device_free(int, void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    const size_t off = static_cast<size_t>(static_cast<unsigned char*>(p) - dev_view_);
    auto it = live_.find(off);
    if (it == live_.end()) return;
    size_t start = off;
    size_t n = it->second.first;
    live_.erase(it);
    // Coalesce with the free neighbours.
    auto next = free_.find(start + n);
    if (next != free_.end()) {
        n += next->second;
        free_.erase(next);
    }
    auto prev = free_.lower_bound(start);
    if (prev != free_.begin()) {
        --prev;
        if (prev->first + prev->second == start) {
            start = prev->first;
            n += prev->second;
            free_.erase(prev);
        }
    }
    free_[start] = n;
}

void* FakeDevice::alloc(size_t bytes, bool managed) {
    void* p = nullptr;
    if (!device_alloc(ordinal_, bytes, &p).is_ok()) throw std::bad_alloc();
    if (managed) {
        std::lock_guard<std::mutex> lock(mu_);
        live_[static_cast<size_t>(static_cast<unsigned char*>(p) - dev_view_)].second = true;
    }
    return p;
}

void FakeDevice::upload(void* dev, const void* host, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string err;
    unsigned char* a = alias(dev, bytes, &err);
    if (a == nullptr) throw std::runtime_error(err);
    if (bytes > 0) std::memcpy(a, host, bytes);
}

void FakeDevice::download(void* host, const void* dev, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string err;
    unsigned char* a = alias(dev, bytes, &err);
    if (a == nullptr) throw std::runtime_error(err);
    if (bytes > 0) std::memcpy(host, a, bytes);
}

Status FakeDevice::stream_create(int, DeviceStream* s) {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.push_back(std::make_unique<Stream>());
    *s = streams_.back().get();
    return Status::ok();
}

void FakeDevice::stream_destroy(int, DeviceStream s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto* st = static_cast<Stream*>(s);
    (void)run_until(st, UINT64_MAX);
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                  [st](const std::unique_ptr<Stream>& x) { return x.get() == st; }),
                   streams_.end());
}

Status FakeDevice::run_op(Op& op) {
    if (op.kind == Op::Copy) {
        if (op.src_host && fingerprint(op.src, op.bytes) != op.src_print)
            return Status::internal("fake device: the host wrote into the source of a " +
                                    std::to_string(op.bytes) + " B copy still in flight");
        if (op.dst_host && fingerprint(op.dst, op.bytes) != op.dst_print)
            return Status::internal("fake device: the host wrote into the destination of a " +
                                    std::to_string(op.bytes) + " B copy still in flight");
        if (op.bytes > 0) std::memmove(op.dst, op.src, op.bytes);
        switch (op.direction) {
        case 0: ++stats_.h2h; break;
        case 1: ++stats_.h2d; stats_.bytes_h2d += op.bytes; break;
        case 2: ++stats_.d2h; stats_.bytes_d2h += op.bytes; break;
        default: ++stats_.d2d; break;
        }
        if (op.unpinned) ++stats_.unpinned_copies;
    } else if (op.kind == Op::Reduce) {
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(op.dtype, op.rop, genx_dtype_size(op.dtype), nullptr, &k));
        k.apply(op.dst, op.srcs.data(), static_cast<int>(op.srcs.size()), op.count);
        ++stats_.reduces;
    }
    return Status::ok();
}

Status FakeDevice::run_until(Stream* s, uint64_t seq) {
    while (!s->queue.empty() && s->queue.front().seq <= seq) {
        Op op = std::move(s->queue.front());
        s->queue.pop_front();
        s->done_seq = op.seq;
        GENX_RETURN_IF_ERROR(run_op(op));
    }
    return Status::ok();
}

Status FakeDevice::stream_synchronize(int, DeviceStream s) {
    std::lock_guard<std::mutex> lock(mu_);
    return run_until(static_cast<Stream*>(s), UINT64_MAX);
}

Status FakeDevice::event_create(int, DeviceEvent* e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::make_unique<Event>());
    *e = events_.back().get();
    return Status::ok();
}

void FakeDevice::event_destroy(int, DeviceEvent e) {
    std::lock_guard<std::mutex> lock(mu_);
    auto* ev = static_cast<Event*>(e);
    events_.erase(std::remove_if(events_.begin(), events_.end(),
                                 [ev](const std::unique_ptr<Event>& x) { return x.get() == ev; }),
                  events_.end());
}

Status FakeDevice::event_record(int, DeviceEvent e, DeviceStream s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto* ev = static_cast<Event*>(e);
    auto* st = static_cast<Stream*>(s);
    Op marker;
    marker.kind = Op::Marker;
    marker.seq = st->next_seq++;
    st->queue.push_back(std::move(marker));
    ev->stream = st;
    ev->seq = st->queue.back().seq;
    ev->asked = false;
    return Status::ok();
}

Status FakeDevice::event_query(int, DeviceEvent e, bool* done) {
    std::lock_guard<std::mutex> lock(mu_);
    auto* ev = static_cast<Event*>(e);
    *done = true;
    if (ev->stream == nullptr || ev->stream->done_seq >= ev->seq) return Status::ok();
    if (!ev->asked) {  // the work is "still running" the first time
        ev->asked = true;
        ++stats_.not_ready_answers;
        *done = false;
        return Status::ok();
    }
    return run_until(ev->stream, ev->seq);
}

Status FakeDevice::event_synchronize(int, DeviceEvent e) {
    std::lock_guard<std::mutex> lock(mu_);
    auto* ev = static_cast<Event*>(e);
    if (ev->stream == nullptr) return Status::ok();
    return run_until(ev->stream, ev->seq);
}

Status FakeDevice::memcpy_async(int, void* dst, const void* src, size_t bytes, DeviceStream s) {
    std::lock_guard<std::mutex> lock(mu_);
    Op op;
    op.kind = Op::Copy;
    op.bytes = bytes;
    std::string err;
    const bool dd = in_arena(dst);
    const bool sd = in_arena(src);
    if (dd) {
        op.dst = alias(dst, bytes, &err);
        if (op.dst == nullptr) return Status::invalid(err + " (copy destination)");
    } else {
        op.dst = static_cast<unsigned char*>(dst);
        op.dst_host = true;
        op.dst_print = fingerprint(dst, bytes);
    }
    if (sd) {
        op.src = alias(src, bytes, &err);
        if (op.src == nullptr) return Status::invalid(err + " (copy source)");
    } else {
        op.src = static_cast<const unsigned char*>(src);
        op.src_host = true;
        op.src_print = fingerprint(src, bytes);
    }
    op.direction = sd ? (dd ? 3 : 2) : (dd ? 1 : 0);
    op.unpinned = (op.dst_host && !pinned(dst, bytes)) || (op.src_host && !pinned(src, bytes));
    auto* st = static_cast<Stream*>(s);
    op.seq = st->next_seq++;
    st->queue.push_back(std::move(op));
    return Status::ok();
}

bool FakeDevice::reduce_supported(genx_dtype dtype, genx_op op) const {
    // As the CUDA kernels: no long double on the device.
    return dtype != GENX_DT_LONG_DOUBLE && has_builtin_kernel(dtype, op);
}

Status FakeDevice::reduce_async(int, genx_dtype dtype, genx_op op, void* dst,
                                const void* const* srcs, int nsrcs, size_t count, DeviceStream s) {
    if (!reduce_supported(dtype, op))
        return Status::unsupported(std::string("fake device: no kernel for ") + op_name(op) +
                                   " on " + dtype_name(dtype));
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = count * genx_dtype_size(dtype);
    Op r;
    r.kind = Op::Reduce;
    r.dtype = dtype;
    r.rop = op;
    r.count = count;
    std::string err;
    if (!in_arena(dst) || (r.dst = alias(dst, n, &err)) == nullptr)
        return Status::invalid("fake device: reduce destination is not device memory" +
                               (err.empty() ? std::string() : ": " + err));
    for (int i = 0; i < nsrcs; ++i) {
        const unsigned char* a = in_arena(srcs[i]) ? alias(srcs[i], n, &err) : nullptr;
        if (a == nullptr)
            return Status::invalid("fake device: reduce source " + std::to_string(i) +
                                   " is not device memory" + (err.empty() ? std::string() : ": " + err));
        r.srcs.push_back(a);
    }
    auto* st = static_cast<Stream*>(s);
    r.seq = st->next_seq++;
    st->queue.push_back(std::move(r));
    return Status::ok();
}

FakeDeviceStats FakeDevice::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    FakeDeviceStats s = stats_;
    s.space_queries = space_queries_.load();
    return s;
}

void FakeDevice::reset_stats() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_ = FakeDeviceStats();
    space_queries_.store(0);
}

size_t FakeDevice::live_allocations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
}

}  // namespace genx
