// Non-blocking and persistent allreduce requests (request.hpp).
#include "genx/request.hpp"

namespace genx {

RequestPool::~RequestPool() {
    for (genx_request* r : pool_) delete r;
}

std::unique_ptr<genx_request> RequestPool::acquire() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (!pool_.empty()) {
            std::unique_ptr<genx_request> r(pool_.back());
            pool_.pop_back();
            return r;
        }
    }
    return std::make_unique<genx_request>();
}

bool RequestPool::give_back(genx_request* req) {
    req->sched.reset();
    req->sendbuf = nullptr;
    req->recvbuf = nullptr;
    req->bytes = 0;
    req->done = false;
    req->started = false;
    if (req->scratch.size() > kScratchBytes) req->scratch.reset();
    std::lock_guard<std::mutex> lk(mu_);
    if (pool_.size() >= kRequests) return false;
    pool_.push_back(req);
    return true;
}

}  // namespace genx

void genx_request::bind(genx_comm* owner, const genx::Call& decided, const void* send, void* recv,
                        const genx_transport_ops* ops_in) {
    comm = owner;
    bytes = decided.bytes;
    ops = *ops_in;
    sendbuf = send;
    recvbuf = recv;
    if (decided.sched == nullptr) return;  // count 0: nothing to run
    kernel = decided.kernel;
    // A pooled request keeps its adapter (it reads ops, rebound above) and
    // a scratch area that is large enough.
    if (!transport) transport = std::make_unique<genx::OpsTransport>(ops);
    scratch.reserve(sched->scratch_bytes);
}

genx::Status genx_request::start() {
    started = true;
    done = false;
    if (!sched) {  // count 0
        done = true;
        return genx::Status::ok();
    }
    genx::Status st = execution.start(*sched, sendbuf, recvbuf, scratch.data(), scratch.size(),
                                      kernel, *transport);
    if (st.is_ok()) {
        bool d = false;
        st = execution.progress(&d);  // posts the first step now
        done = d;
    }
    return st;
}
