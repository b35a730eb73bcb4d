// A C function table over a C++ transport (transport_ops.hpp).
#include "tests/support/transport_ops.hpp"

namespace genx {

// The C side only sees a return code, so the Status message is dropped;
// callers that need it (tests) read the transport's own diagnostics.
genx_transport_ops transport_ops_for(Transport* t) {
    genx_transport_ops ops{};
    ops.ctx = t;
    ops.isend = [](void* ctx, const void* buf, size_t bytes, int peer, void** req) {
        return static_cast<Transport*>(ctx)->isend(buf, bytes, peer, req).is_ok() ? 0 : 1;
    };
    ops.irecv = [](void* ctx, void* buf, size_t bytes, int peer, void** req) {
        return static_cast<Transport*>(ctx)->irecv(buf, bytes, peer, req).is_ok() ? 0 : 1;
    };
    ops.test = [](void* ctx, void* req, int* done) {
        bool d = false;
        const Status st = static_cast<Transport*>(ctx)->test(req, &d);
        *done = d ? 1 : 0;
        return st.is_ok() ? 0 : 1;
    };
    ops.progress = [](void* ctx) {
        return static_cast<Transport*>(ctx)->progress().is_ok() ? 0 : 1;
    };
    // A blocking send only where the transport has one (Transport::send's
    // default, an isend and a wait, would lose its request on a failed
    // wait: the table's users then post and wait themselves).
    if (t->has_blocking_send())
        ops.send = [](void* ctx, const void* buf, size_t bytes, int peer) {
            return static_cast<Transport*>(ctx)->send(buf, bytes, peer).is_ok() ? 0 : 1;
        };
    ops.wait_all = [](void* ctx, void** reqs, int n) {
        return static_cast<Transport*>(ctx)->wait_all(reqs, n).is_ok() ? 0 : 1;
    };
    ops.cancel = [](void* ctx, void* req, int* cancelled) {
        bool c = false;
        const Status st = static_cast<Transport*>(ctx)->cancel(req, &c);
        *cancelled = c ? 1 : 0;
        return st.is_ok() ? 0 : 1;
    };
    return ops;
}

}  // namespace genx
