// SimGrid transport (design in sim_transport.hpp).
#include "sim/sim_transport.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cstring>
#include <exception>

namespace genx::sim {

namespace {

namespace s4u = simgrid::s4u;

// What travels through a mailbox: the plan's size and, with payload, the
// bytes.  The receiver owns it once its receive completed.
struct Message {
    size_t bytes = 0;
    std::vector<unsigned char> data;
};

struct SimRequest {
    s4u::CommPtr comm;
    bool is_send = false;
    int peer = -1;
    void* rbuf = nullptr;      // receive: where the bytes go (payload only)
    size_t rbytes = 0;         // receive: the size posted
    Message* in = nullptr;     // receive: filled by SimGrid on completion
    size_t live_index = 0;     // position in the rank's live list
};

Status simgrid_error(const char* what, const std::exception& e) {
    return Status::internal(std::string("simgrid: ") + what + ": " + e.what());
}

}  // namespace

class SimFabric::RankTransport final : public Transport {
  public:
    RankTransport(SimFabric* f, int rank) : f_(f), rank_(rank) {}
    ~RankTransport() override {
        for (SimRequest* r : live_) {
            delete r->in;
            delete r;
        }
    }

    Status isend(const void* buf, size_t bytes, int peer, Request* req) override {
        GENX_RETURN_IF_ERROR(check_peer(peer, "send to"));
        auto* m = new Message;
        m->bytes = bytes;
        if (f_->payload() && bytes > 0) {
            if (buf == nullptr) {
                delete m;
                return Status::invalid("sim: rank " + std::to_string(rank_) + " sent " +
                                       std::to_string(bytes) + " B from a null buffer");
            }
            m->data.assign(static_cast<const unsigned char*>(buf),
                           static_cast<const unsigned char*>(buf) + bytes);
        }
        auto* r = new SimRequest;
        r->is_send = true;
        r->peer = peer;
        try {
            r->comm = f_->mailbox(rank_, peer)->put_async(m, bytes);
        } catch (const std::exception& e) {
            delete m;
            delete r;
            return simgrid_error("put_async", e);
        }
        f_->count_message(bytes);
        track(r);
        *req = r;
        return Status::ok();
    }

    Status irecv(void* buf, size_t bytes, int peer, Request* req) override {
        GENX_RETURN_IF_ERROR(check_peer(peer, "receive from"));
        auto* r = new SimRequest;
        r->peer = peer;
        r->rbuf = buf;
        r->rbytes = bytes;
        try {
            r->comm = f_->mailbox(peer, rank_)->get_async<Message>(&r->in);
        } catch (const std::exception& e) {
            delete r;
            return simgrid_error("get_async", e);
        }
        track(r);
        *req = r;
        return Status::ok();
    }

    Status test(Request req, bool* done) override {
        auto* r = static_cast<SimRequest*>(req);
        *done = false;
        try {
            if (!r->comm->test()) return Status::ok();
        } catch (const std::exception& e) {
            *done = true;
            release(r);
            return simgrid_error("test", e);
        }
        *done = true;
        return finish(r);
    }

    // Blocks until one of this rank's pending communications completes;
    // the executor then tests them.
    Status progress() override {
        if (live_.empty()) return Status::ok();
        pending_.clear();
        for (SimRequest* r : live_) pending_.push_back(r->comm);
        try {
            s4u::Comm::wait_any(pending_);
        } catch (const std::exception& e) {
            return simgrid_error("wait_any", e);
        }
        return Status::ok();
    }

    Status wait_all(Request* reqs, int n) override {
        for (int i = 0; i < n; ++i) {
            auto* r = static_cast<SimRequest*>(reqs[i]);
            if (r == nullptr) continue;
            try {
                r->comm->wait();
            } catch (const std::exception& e) {
                release(r);
                reqs[i] = nullptr;
                return simgrid_error("wait", e);
            }
            reqs[i] = nullptr;
            GENX_RETURN_IF_ERROR(finish(r));
        }
        return Status::ok();
    }

  private:
    Status check_peer(int peer, const char* what) const {
        if (peer >= 0 && peer < f_->size() && peer != rank_) return Status::ok();
        return Status::invalid("sim: rank " + std::to_string(rank_) + " posted a " + what +
                               " peer " + std::to_string(peer) + " (ranks 0.." +
                               std::to_string(f_->size() - 1) + ")");
    }
    void track(SimRequest* r) {
        r->live_index = live_.size();
        live_.push_back(r);
    }
    // Removes a request from the live list and frees it.
    void release(SimRequest* r) {
        SimRequest* last = live_.back();
        live_[r->live_index] = last;
        last->live_index = r->live_index;
        live_.pop_back();
        delete r->in;
        delete r;
    }
    // A completed request: a receive checks the size and takes the bytes.
    Status finish(SimRequest* r) {
        Status st;
        if (!r->is_send) {
            const Message* m = r->in;
            if (m == nullptr) {
                st = Status::internal("sim: rank " + std::to_string(rank_) + ": receive from " +
                                      std::to_string(r->peer) + " completed without a message");
            } else if (m->bytes != r->rbytes) {
                st = Status::internal("sim: size mismatch from rank " + std::to_string(r->peer) +
                                      " to rank " + std::to_string(rank_) + ": sent " +
                                      std::to_string(m->bytes) + " B, receive posted for " +
                                      std::to_string(r->rbytes) + " B");
            } else if (f_->payload() && m->bytes > 0) {
                if (r->rbuf == nullptr)
                    st = Status::invalid("sim: rank " + std::to_string(rank_) + " received " +
                                         std::to_string(m->bytes) + " B into a null buffer");
                else
                    std::memcpy(r->rbuf, m->data.data(), m->bytes);
            }
        }
        release(r);
        return st;
    }

    SimFabric* f_;
    int rank_;
    std::vector<SimRequest*> live_;
    std::vector<s4u::CommPtr> pending_;  // progress()'s scratch
};

SimFabric::SimFabric(int nranks, bool payload)
    : nranks_(nranks), payload_(payload) {
    for (int r = 0; r < nranks; ++r) transports_.push_back(std::make_unique<RankTransport>(this, r));
}

SimFabric::~SimFabric() = default;

Transport& SimFabric::transport(int rank) { return *transports_.at(static_cast<size_t>(rank)); }

s4u::Mailbox* SimFabric::mailbox(int from, int to) {
    s4u::Mailbox*& m = mailboxes_[static_cast<uint64_t>(from) * static_cast<uint64_t>(nranks_) +
                                  static_cast<uint64_t>(to)];
    if (m == nullptr) m = s4u::Mailbox::by_name("genx:" + std::to_string(from) + ">" + std::to_string(to));
    return m;
}

}  // namespace genx::sim
