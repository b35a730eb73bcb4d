// BounceTransport (bounce.hpp).
#include "runtime/bounce.hpp"

#include <algorithm>

namespace genx {

namespace {

// The host address of an empty message (never read or written).
unsigned char g_empty;

}  // namespace

struct BouncePool::Req {
    ReqState state = ReqState::CopyOut;
    void* dev = nullptr;  // the device side
    size_t bytes = 0;
    int peer = -1;
    Buffer* buf = nullptr;     // null for an empty message
    DeviceEvent ev = nullptr;  // the copy's; null for an empty message
    Request inner = nullptr;
    void* host() const { return buf != nullptr ? buf->p : &g_empty; }
};

BouncePool::BouncePool(DeviceBackend& device, int ordinal) : device_(device), ordinal_(ordinal) {}

BouncePool::~BouncePool() {
    for (DeviceEvent e : all_events_) device_.event_destroy(ordinal_, e);
    if (d2h_ != nullptr) device_.stream_destroy(ordinal_, d2h_);
    if (h2d_ != nullptr) device_.stream_destroy(ordinal_, h2d_);
    for (auto& b : bufs_) device_.host_free(b->p);
}

Status BouncePool::streams() {
    if (d2h_ == nullptr) GENX_RETURN_IF_ERROR(device_.stream_create(ordinal_, &d2h_));
    if (h2d_ == nullptr) GENX_RETURN_IF_ERROR(device_.stream_create(ordinal_, &h2d_));
    return Status::ok();
}

// The smallest free buffer that holds `bytes`; else a free one is replaced
// by a larger one, so the pool holds no more buffers than were ever in
// flight at once.
Status BouncePool::acquire(size_t bytes, Buffer** out) {
    Buffer* best = nullptr;
    Buffer* largest_free = nullptr;
    for (auto& b : bufs_) {
        if (b->busy) continue;
        if (b->cap >= bytes && (best == nullptr || b->cap < best->cap)) best = b.get();
        if (largest_free == nullptr || b->cap > largest_free->cap) largest_free = b.get();
    }
    if (best == nullptr) {
        // Page-locked allocations are slow (milliseconds): round up so that
        // nearby sizes reuse one buffer.
        const size_t cap = std::max<size_t>((bytes + 4095) / 4096 * 4096, 4096);
        void* p = nullptr;
        GENX_RETURN_IF_ERROR(device_.host_alloc(cap, &p));
        if (largest_free != nullptr) {
            device_.host_free(largest_free->p);
            best = largest_free;
        } else {
            bufs_.push_back(std::make_unique<Buffer>());
            best = bufs_.back().get();
        }
        best->p = p;
        best->cap = cap;
    }
    best->busy = true;
    *out = best;
    return Status::ok();
}

Status BouncePool::event(DeviceEvent* e) {
    if (!free_events_.empty()) {
        *e = free_events_.back();
        free_events_.pop_back();
        return Status::ok();
    }
    GENX_RETURN_IF_ERROR(device_.event_create(ordinal_, e));
    all_events_.push_back(*e);
    return Status::ok();
}

BouncePool::Req* BouncePool::request() {
    if (free_reqs_.empty()) {
        reqs_.push_back(std::make_unique<Req>());
        return reqs_.back().get();
    }
    Req* r = free_reqs_.back();
    free_reqs_.pop_back();
    *r = Req();
    return r;
}

// A request record with its bounce buffer and event (none for an empty
// message).  On error *out is still set, for the caller to release.
Status BouncePool::start(ReqState state, void* dev, size_t bytes, int peer, Req** out) {
    Req* r = request();
    *out = r;
    r->state = state;
    r->dev = dev;
    r->bytes = bytes;
    r->peer = peer;
    GENX_RETURN_IF_ERROR(streams());
    if (bytes == 0) return Status::ok();
    GENX_RETURN_IF_ERROR(acquire(bytes, &r->buf));
    return event(&r->ev);
}

void BouncePool::release(Req* r) {
    if (r->buf != nullptr) r->buf->busy = false;
    if (r->ev != nullptr) free_events_.push_back(r->ev);
    r->buf = nullptr;
    r->ev = nullptr;
    free_reqs_.push_back(r);
}

Status BounceTransport::isend(const void* buf, size_t bytes, int peer, Request* req) {
    BouncePool::Req* r = nullptr;
    Status st = pool_.start(BouncePool::ReqState::CopyOut, const_cast<void*>(buf), bytes, peer, &r);
    if (bytes > 0) {
        if (st.is_ok())
            st = pool_.device_.memcpy_async(pool_.ordinal_, r->buf->p, buf, bytes, pool_.d2h_);
        if (st.is_ok()) st = pool_.device_.event_record(pool_.ordinal_, r->ev, pool_.d2h_);
    }
    if (!st.is_ok()) {
        pool_.release(r);
        return st;
    }
    pool_.pending_sends_.push_back(r);
    *req = r;
    // The request is posted whatever the flush finds: a failure to hand a
    // send on is reported by the next test() or progress().
    if (Status f = flush_sends(); !f.is_ok() && error_.is_ok()) error_ = f;
    return Status::ok();
}

Status BounceTransport::irecv(void* buf, size_t bytes, int peer, Request* req) {
    BouncePool::Req* r = nullptr;
    Status st = pool_.start(BouncePool::ReqState::Receiving, buf, bytes, peer, &r);
    if (st.is_ok()) st = inner_.irecv(r->host(), bytes, peer, &r->inner);
    if (!st.is_ok()) {
        pool_.release(r);
        return st;
    }
    *req = r;
    return Status::ok();
}

Status BounceTransport::flush_sends() {
    if (!error_.is_ok()) return error_;
    while (!pool_.pending_sends_.empty()) {
        BouncePool::Req* r = pool_.pending_sends_.front();
        if (r->ev != nullptr) {
            bool copied = false;
            GENX_RETURN_IF_ERROR(pool_.device_.event_query(pool_.ordinal_, r->ev, &copied));
            if (!copied) break;
        }
        if (Status st = inner_.isend(r->host(), r->bytes, r->peer, &r->inner); !st.is_ok()) {
            error_ = st;
            return st;
        }
        r->state = BouncePool::ReqState::Sending;
        pool_.pending_sends_.pop_front();
    }
    return Status::ok();
}

void BounceTransport::drop(BouncePool::Req* r) {
    using S = BouncePool::ReqState;
    const auto it = std::find(pool_.pending_sends_.begin(), pool_.pending_sends_.end(), r);
    if (it != pool_.pending_sends_.end()) pool_.pending_sends_.erase(it);
    // Where only a copy may still run, wait for it and reuse the buffer;
    // a buffer the inner transport may hold stays busy for good.
    bool reusable = r->state == S::CopyOut || r->state == S::CopyIn;
    if (reusable && r->ev != nullptr)
        reusable = pool_.device_.event_synchronize(pool_.ordinal_, r->ev).is_ok();
    if (!reusable) r->buf = nullptr;
    pool_.release(r);
}

Status BounceTransport::step(BouncePool::Req* r, bool* done) {
    using S = BouncePool::ReqState;
    *done = false;
    if (r->state == S::CopyOut) {
        GENX_RETURN_IF_ERROR(flush_sends());
        if (r->state == S::CopyOut) return Status::ok();
    }
    if (r->state == S::Sending) return inner_.test(r->inner, done);
    if (r->state == S::Receiving) {
        bool arrived = false;
        GENX_RETURN_IF_ERROR(inner_.test(r->inner, &arrived));
        if (!arrived) return Status::ok();
        r->inner = nullptr;
        if (r->bytes == 0) {
            *done = true;
            return Status::ok();
        }
        GENX_RETURN_IF_ERROR(
            pool_.device_.memcpy_async(pool_.ordinal_, r->dev, r->buf->p, r->bytes, pool_.h2d_));
        GENX_RETURN_IF_ERROR(pool_.device_.event_record(pool_.ordinal_, r->ev, pool_.h2d_));
        r->state = S::CopyIn;
    }
    return pool_.device_.event_query(pool_.ordinal_, r->ev, done);
}

Status BounceTransport::test(Request req, bool* done) {
    auto* r = static_cast<BouncePool::Req*>(req);
    *done = false;
    const Status st = error_.is_ok() ? step(r, done) : error_;
    // A failed test releases the request, as the contract says.
    if (!st.is_ok()) {
        drop(r);
        return st;
    }
    if (*done) pool_.release(r);
    return Status::ok();
}

Status BounceTransport::progress() {
    GENX_RETURN_IF_ERROR(flush_sends());
    return inner_.progress();
}

Status BounceTransport::cancel(Request req, bool* cancelled) {
    using S = BouncePool::ReqState;
    auto* r = static_cast<BouncePool::Req*>(req);
    *cancelled = false;
    switch (r->state) {
        case S::CopyOut: {
            // Not handed on yet: only the copy into the bounce buffer runs.
            if (r->ev != nullptr) GENX_RETURN_IF_ERROR(pool_.device_.event_synchronize(pool_.ordinal_, r->ev));
            const auto it = std::find(pool_.pending_sends_.begin(), pool_.pending_sends_.end(), r);
            if (it != pool_.pending_sends_.end()) pool_.pending_sends_.erase(it);
            *cancelled = true;
            break;
        }
        case S::Sending:
        case S::Receiving:
            GENX_RETURN_IF_ERROR(inner_.cancel(r->inner, cancelled));
            break;
        case S::CopyIn:
            // Arrived; the copy to the device is what is left.
            GENX_RETURN_IF_ERROR(pool_.device_.event_synchronize(pool_.ordinal_, r->ev));
            *cancelled = true;
            break;
    }
    if (*cancelled) pool_.release(r);
    return Status::ok();
}

}  // namespace genx
