// Device-memory messages over a transport that takes host memory only.
//
// The staged path (staging.hpp) runs a plan on a page-locked host copy of
// the buffer and reduces on the host.  Its alternative reduces on the
// device: the plan runs device-resident (Execution::start_on_device:
// result, scratch and reductions on the device, in libgenx-cuda.so's
// kernels), and each message crosses the bus through a page-locked bounce
// buffer on its way to and from a transport that cannot take device
// pointers (Debian's Open MPI):
//
//   isend   device -> bounce copy queued on the send stream; the message
//           is handed to the inner transport once that copy is done;
//   irecv   posted to the inner transport into a bounce buffer at once;
//           once it arrived, bounce -> device copy on the receive stream;
//           the request completes when that copy is done.
//
// Which of the two is cheaper depends on the plan, the bus rate and the
// two reduction rates: estimate_reduce_site() (staging.hpp) decides.
//
// Sends are handed to the inner transport in the order they were posted
// (MPI's non-overtaking rule, which the executor relies on): their copies
// run on one stream, so they finish in order, and a send whose copy is done
// goes out only after every send posted before it.
//
// BounceTransport assumes every buffer it is given is device memory (the
// device-resident executor passes only result and scratch addresses).  The
// pool (buffers, events, request records, the queue of sends, streams)
// belongs to the caller, outlives every BounceTransport over it and is
// reused from call to call: in the steady state a call allocates nothing.
//
// Errors: a send that fails when it is handed on (its copy, or the inner
// transport's isend) fails the transport, whichever request the failure
// surfaces in; every later test() and progress() returns that error, and
// sends still queued are never handed on.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "runtime/device.hpp"
#include "runtime/transport.hpp"

namespace genx {

class BouncePool {
  public:
    BouncePool(DeviceBackend& device, int ordinal);
    ~BouncePool();
    BouncePool(const BouncePool&) = delete;
    BouncePool& operator=(const BouncePool&) = delete;

  private:
    friend class BounceTransport;
    struct Buffer {
        void* p = nullptr;
        size_t cap = 0;
        bool busy = false;
    };
    enum class ReqState { CopyOut, Sending, Receiving, CopyIn };
    struct Req;
    Status streams();
    Status acquire(size_t bytes, Buffer** out);
    Status event(DeviceEvent* e);
    Req* request();
    Status start(ReqState state, void* dev, size_t bytes, int peer, Req** out);
    void release(Req* r);

    DeviceBackend& device_;
    int ordinal_;
    DeviceStream d2h_ = nullptr, h2d_ = nullptr;
    std::vector<std::unique_ptr<Buffer>> bufs_;
    std::vector<DeviceEvent> free_events_;
    std::vector<DeviceEvent> all_events_;
    std::vector<std::unique_ptr<Req>> reqs_;
    std::vector<Req*> free_reqs_;
    std::deque<Req*> pending_sends_;  // copied or copying out, not yet handed on
};

class BounceTransport final : public Transport {
  public:
    // `inner` moves host memory; both must outlive this object.
    BounceTransport(Transport& inner, BouncePool& pool) : inner_(inner), pool_(pool) {
        pool_.pending_sends_.clear();  // what a failed call left is not handed on
    }
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override;
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override;
    Status test(Request req, bool* done) override;
    Status progress() override;
    Status cancel(Request req, bool* cancelled) override;

  private:
    // Hands every send at the head of the queue whose copy is done to the
    // inner transport, in posting order.
    Status flush_sends();
    Status step(BouncePool::Req* r, bool* done);

    // Releases a request test() ends with an error: its buffer returns to
    // the pool only where the inner transport never had it.
    void drop(BouncePool::Req* r);

    Transport& inner_;
    BouncePool& pool_;
    Status error_;  // sticky: the first failure to hand a send on
};

}  // namespace genx
