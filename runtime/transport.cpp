// Adapters between the C transport table of genx_core.h and Transport.
#include "runtime/transport.hpp"

#include <string>

namespace genx {

Status Transport::wait_all(Request* reqs, int n) {
    // test() releases a completed request; its entry is set to nullptr so
    // that it is not tested again (the array is the caller's scratch).
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; ++i) {
            if (reqs[i] == nullptr) continue;
            bool d = false;
            const Status st = test(reqs[i], &d);
            if (!st.is_ok()) {
                reqs[i] = nullptr;  // a failed test released it
                return st;
            }
            if (d) {
                reqs[i] = nullptr;
            } else {
                ++left;
            }
        }
        if (left == 0) return Status::ok();
        GENX_RETURN_IF_ERROR(progress());
    }
}

Status Transport::send(const void* buf, size_t bytes, int peer) {
    Request req = nullptr;
    GENX_RETURN_IF_ERROR(isend(buf, bytes, peer, &req));
    return wait_all(&req, 1);
}

Status Transport::cancel(Request req, bool* cancelled) {
    (void)req;
    *cancelled = false;
    return Status::ok();
}

Status transport_call_failed(const char* what, int rc, int peer, size_t bytes) {
    return Status::io_error(std::string("transport: ") + what + " (peer " + std::to_string(peer) +
                            ", " + std::to_string(bytes) + " B) failed with code " +
                            std::to_string(rc));
}

Status transport_wait_failed(int rc) {
    return Status::io_error("transport: wait_all failed with code " + std::to_string(rc));
}

Status OpsTransport::isend(const void* buf, size_t bytes, int peer, Request* req) {
    const int rc = ops_.isend(ops_.ctx, buf, bytes, peer, req);
    return rc == 0 ? Status::ok() : transport_call_failed("isend", rc, peer, bytes);
}

Status OpsTransport::irecv(void* buf, size_t bytes, int peer, Request* req) {
    const int rc = ops_.irecv(ops_.ctx, buf, bytes, peer, req);
    return rc == 0 ? Status::ok() : transport_call_failed("irecv", rc, peer, bytes);
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

Status OpsTransport::wait_all(Request* reqs, int n) {
    if (ops_.wait_all == nullptr) return Transport::wait_all(reqs, n);
    const int rc = ops_.wait_all(ops_.ctx, reqs, n);
    return rc == 0 ? Status::ok() : transport_wait_failed(rc);
}

Status OpsTransport::send(const void* buf, size_t bytes, int peer) {
    if (ops_.send == nullptr) return Transport::send(buf, bytes, peer);
    const int rc = ops_.send(ops_.ctx, buf, bytes, peer);
    return rc == 0 ? Status::ok() : transport_call_failed("send", rc, peer, bytes);
}

Status OpsTransport::cancel(Request req, bool* cancelled) {
    *cancelled = false;
    if (ops_.cancel == nullptr) return Status::ok();
    int c = 0;
    const int rc = ops_.cancel(ops_.ctx, req, &c);
    if (rc != 0) return Status::io_error("transport: cancel failed with code " + std::to_string(rc));
    *cancelled = c != 0;
    return Status::ok();
}

}  // namespace genx
