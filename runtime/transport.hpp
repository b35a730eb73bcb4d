// The narrow point-to-point surface the executor runs on.
//
// Four calls are all an allreduce plan needs: post a send, post a receive,
// ask whether a request finished, and let the transport move bytes; a fifth,
// waiting for a set of requests, has a default made of the other four.  The
// executor never blocks inside a transport call, which is what lets the
// same state machine serve blocking, non-blocking and persistent
// collectives.  Implementations: the in-process loopback (tests/support/loopback.hpp, tests only),
// and anything the C glue supplies as genx_transport_ops (OpsTransport; the
// glue wraps Open MPI's PML there).
//
// Contract (every implementation):
//  * messages from rank a to rank b are matched with b's receives from a in
//    posting order (MPI's non-overtaking rule on one tag);
//  * a receive must be exactly the size of the matching send (the executor
//    derives both sides from the same plan, so a mismatch is a bug and the
//    transport reports it as an error rather than truncating);
//  * test() on a finished request releases it: the handle must not be used
//    again.  A request that was never tested to completion belongs to the
//    transport until it is torn down.
#pragma once

#include <cstddef>

#include "common/status.hpp"
#include "common/genx_types.h"

namespace genx {

using Request = void*;  // opaque, owned by the transport

class Transport {
  public:
    virtual ~Transport() = default;
    virtual Status isend(const void* buf, size_t bytes, int peer, Request* req) = 0;
    virtual Status irecv(void* buf, size_t bytes, int peer, Request* req) = 0;
    // Sets *done; when done (or on error) the request is released.
    virtual Status test(Request req, bool* done) = 0;
    // Lets the transport move data.  May block briefly when nothing can
    // happen until another rank acts (the loopback does), so a waiting
    // rank does not burn a core others need.
    virtual Status progress() = 0;
    // Blocks until all n requests completed, then releases them (the
    // executor calls it once everything of a step is posted).  The array is
    // the caller's scratch: entries may be overwritten.  The default loops
    // test() and progress(); a transport with a native wait (the PML's
    // ompi_request_wait_all) overrides it.  On error every entry still
    // posted is left in the array, the released ones set to nullptr, so
    // that the caller can abandon what is left (Execution::abandon).
    virtual Status wait_all(Request* reqs, int n);
    // Optional blocking send (has_blocking_send()): returns once the
    // message left the caller's buffer.  For a small message the PML sends
    // inline without allocating a request.
    virtual bool has_blocking_send() const { return false; }
    virtual Status send(const void* buf, size_t bytes, int peer);
    // Tries to cancel a posted request, for abandoning a failed plan
    // (Execution::abandon).  Sets *cancelled when the request is released
    // and will never touch its buffer again (cancelled, or found complete);
    // otherwise the request is unchanged and must still be tested.  The
    // default cancels nothing.
    virtual Status cancel(Request req, bool* cancelled);
};

// Adapter: the glue's C function table seen as a Transport.  The ops must
// outlive the adapter.
class OpsTransport final : public Transport {
  public:
    explicit OpsTransport(const genx_transport_ops& ops) : ops_(ops) {}
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override;
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override;
    Status test(Request req, bool* done) override;
    Status progress() override;
    Status wait_all(Request* reqs, int n) override;
    bool has_blocking_send() const override { return ops_.send != nullptr; }
    Status send(const void* buf, size_t bytes, int peer) override;
    Status cancel(Request req, bool* cancelled) override;

  private:
    const genx_transport_ops& ops_;
};


// The error of a failed C transport call: "transport: WHAT (peer P, N B)
// failed with code RC" (OpsTransport and Execution::replay()).
Status transport_call_failed(const char* what, int rc, int peer, size_t bytes);
// ... and of a failed wait_all: "transport: wait_all failed with code RC".
Status transport_wait_failed(int rc);

}  // namespace genx
