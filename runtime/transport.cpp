// Adapters between the C transport table of genx_core.h and Transport.
#include "runtime/transport.hpp"

#include <string>

namespace genx {

namespace {

Status op_failed(const char* what, int rc, int peer, size_t bytes) {
    return Status::io_error(std::string("transport: ") + what + " (peer " + std::to_string(peer) +
                            ", " + std::to_string(bytes) + " B) failed with code " +
                            std::to_string(rc));
}

}  // namespace

Status OpsTransport::isend(const void* buf, size_t bytes, int peer, Request* req) {
    const int rc = ops_.isend(ops_.ctx, buf, bytes, peer, req);
    return rc == 0 ? Status::ok() : op_failed("isend", rc, peer, bytes);
}

Status OpsTransport::irecv(void* buf, size_t bytes, int peer, Request* req) {
    const int rc = ops_.irecv(ops_.ctx, buf, bytes, peer, req);
    return rc == 0 ? Status::ok() : op_failed("irecv", rc, peer, bytes);
}

Status OpsTransport::test(Request req, bool* done) {
    int flag = 0;
    const int rc = ops_.test(ops_.ctx, req, &flag);
    *done = flag != 0;
    if (rc != 0) return Status::io_error("transport: test failed with code " + std::to_string(rc));
    return Status::ok();
}

Status OpsTransport::progress() {
    if (ops_.progress == nullptr) return Status::ok();
    const int rc = ops_.progress(ops_.ctx);
    if (rc != 0) return Status::io_error("transport: progress failed with code " + std::to_string(rc));
    return Status::ok();
}

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
    return ops;
}

}  // namespace genx
