// In-process rendezvous transport and the one-thread-per-rank harness
// (semantics in loopback.hpp).
#include "tests/support/loopback.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

namespace genx {

namespace {

enum : int { kPending = 0, kDone = 1, kFailed = 2 };

struct LbRequest {
    bool is_send = false;
    int owner = -1;
    int peer = -1;
    const void* sbuf = nullptr;
    void* rbuf = nullptr;
    size_t bytes = 0;
    uint64_t seq = 0;  // message number on its (sender, receiver) channel
    // An eager message: the sender's request completed when it was posted
    // and this copy of its data waits in the channel, owned by the fabric.
    bool eager = false;
    std::vector<unsigned char> held;
    std::atomic<int> state{kPending};
    std::string error;  // written before state becomes kFailed
};

// FIFO that allocates nothing until used (a fabric has P^2 of them).
class Fifo {
  public:
    bool empty() const { return head_ == items_.size(); }
    void push(LbRequest* r) { items_.push_back(r); }
    LbRequest* pop() {
        LbRequest* r = items_[head_++];
        if (head_ == items_.size()) {
            items_.clear();
            head_ = 0;
        }
        return r;
    }
    // Removes r if queued (order of the rest kept); false if absent.
    bool remove(LbRequest* r) {
        for (size_t i = head_; i < items_.size(); ++i)
            if (items_[i] == r) {
                items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
                if (head_ == items_.size()) {
                    items_.clear();
                    head_ = 0;
                }
                return true;
            }
        return false;
    }
    template <typename F>
    void for_each(F f) const {
        for (size_t i = head_; i < items_.size(); ++i) f(items_[i]);
    }

  private:
    std::vector<LbRequest*> items_;
    size_t head_ = 0;
};

// Messages from one rank to another.
struct Channel {
    std::mutex m;
    Fifo sends;
    Fifo recvs;
    uint64_t nsends = 0;
    uint64_t nrecvs = 0;
};

struct RankState {
    std::mutex m;
    std::condition_variable cv;
    uint64_t events = 0;  // completions of this rank's requests
    uint64_t seen = 0;    // events when progress() last returned
    std::unordered_set<LbRequest*> live;
};

}  // namespace

struct LoopbackFabric::Impl {
    class RankTransport;
    int n = 0;
    std::vector<Channel> channels;  // index sender * n + receiver
    std::vector<RankState> ranks;
    std::vector<std::unique_ptr<RankTransport>> transports;
    std::atomic<bool> aborted{false};
    mutable std::mutex err_m;
    std::string abort_reason;
    std::string first_error;

    size_t eager_limit = 0;
    LoopbackFabric::CopyFn copy;  // empty: memcpy
    void move_bytes(void* dst, const void* src, size_t n) const {
        if (copy) copy(dst, src, n);
        else std::memcpy(dst, src, n);
    }

    Impl(int nranks, size_t eager);
    ~Impl();

    Channel& channel(int from, int to) { return channels[static_cast<size_t>(from) * n + to]; }

    void note_error(const std::string& e) {
        std::lock_guard<std::mutex> lk(err_m);
        if (first_error.empty()) first_error = e;
    }
    Status aborted_status() const {
        std::lock_guard<std::mutex> lk(err_m);
        return Status::internal("loopback: aborted (" + abort_reason + ")");
    }
    // Publishes a result and wakes the owner; `r` may be freed by its owner
    // as soon as the state is stored, so nothing touches it afterwards.
    void complete(LbRequest* r, int state) {
        RankState& rs = ranks[static_cast<size_t>(r->owner)];
        r->state.store(state, std::memory_order_release);
        std::lock_guard<std::mutex> lk(rs.m);
        ++rs.events;
        rs.cv.notify_all();
    }
    // Called under the channel's lock with both requests unlinked from it.
    // An eager message's sender completed long ago: the fabric frees it.
    void match(LbRequest* s, LbRequest* r) {
        if (s->bytes == r->bytes) {
            if (s->bytes > 0) move_bytes(r->rbuf, s->eager ? s->held.data() : s->sbuf, s->bytes);
            if (s->eager) {
                delete s;
            } else {
                complete(s, kDone);
            }
            complete(r, kDone);
            return;
        }
        const std::string e = "loopback: size mismatch on message #" + std::to_string(s->seq) +
                              " from rank " + std::to_string(s->owner) + " to rank " +
                              std::to_string(r->owner) + ": sent " + std::to_string(s->bytes) +
                              " B, receive posted for " + std::to_string(r->bytes) + " B";
        note_error(e);
        r->error = e;
        if (s->eager) {
            delete s;
        } else {
            s->error = e;
            complete(s, kFailed);
        }
        complete(r, kFailed);
    }
    Status post(int rank, bool is_send, const void* sbuf, void* rbuf, size_t bytes, int peer,
                Request* req);
    Status test(int rank, Request req, bool* done);
    Status cancel(int rank, Request req, bool* cancelled);
    Status progress(int rank);
};

class LoopbackFabric::Impl::RankTransport final : public Transport {
  public:
    RankTransport(Impl* f, int rank) : f_(f), rank_(rank) {}
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override {
        return f_->post(rank_, true, buf, nullptr, bytes, peer, req);
    }
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override {
        return f_->post(rank_, false, nullptr, buf, bytes, peer, req);
    }
    Status test(Request req, bool* done) override { return f_->test(rank_, req, done); }
    Status cancel(Request req, bool* cancelled) override { return f_->cancel(rank_, req, cancelled); }
    Status progress() override { return f_->progress(rank_); }

  private:
    Impl* f_;
    int rank_;
};

LoopbackFabric::Impl::Impl(int nranks, size_t eager)
    : n(nranks), channels(static_cast<size_t>(nranks) * nranks), ranks(nranks), eager_limit(eager) {
    for (int r = 0; r < nranks; ++r) transports.push_back(std::make_unique<RankTransport>(this, r));
}

LoopbackFabric::Impl::~Impl() {
    // The fabric's eager copies first: the channels also still list the
    // ranks' own unmatched sends (a deadlocked test), which are freed below
    // with the rest of each rank's live requests and must still be readable
    // here.
    for (Channel& ch : channels)
        ch.sends.for_each([](LbRequest* r) {
            if (r->eager) delete r;
        });
    for (RankState& rs : ranks)
        for (LbRequest* r : rs.live) delete r;
}

Status LoopbackFabric::Impl::post(int rank, bool is_send, const void* sbuf, void* rbuf,
                                  size_t bytes, int peer, Request* req) {
    if (aborted.load(std::memory_order_acquire)) return aborted_status();
    if (peer < 0 || peer >= n)
        return Status::invalid("loopback: rank " + std::to_string(rank) + " posted a " +
                               (is_send ? "send to" : "receive from") + " peer " +
                               std::to_string(peer) + " outside 0.." + std::to_string(n - 1));
    auto* r = new LbRequest;
    r->is_send = is_send;
    r->owner = rank;
    r->peer = peer;
    r->sbuf = sbuf;
    r->rbuf = rbuf;
    r->bytes = bytes;
    {
        RankState& rs = ranks[static_cast<size_t>(rank)];
        std::lock_guard<std::mutex> lk(rs.m);
        rs.live.insert(r);
    }
    *req = r;
    Channel& ch = is_send ? channel(rank, peer) : channel(peer, rank);
    std::lock_guard<std::mutex> lk(ch.m);
    // Checked again under the lock: abort() passes through every channel
    // lock, so once it returns no copy into a posted buffer can start.
    if (aborted.load(std::memory_order_acquire)) return aborted_status();
    if (is_send) {
        r->seq = ch.nsends++;
        if (ch.recvs.empty() && bytes > 0 && bytes <= eager_limit) {
            // Eager: the data goes into a message of the fabric's own and
            // the send completes now, as a small MPI send does.
            auto* m = new LbRequest;
            m->is_send = true;
            m->eager = true;
            m->owner = rank;
            m->peer = peer;
            m->bytes = bytes;
            m->seq = r->seq;
            m->held.resize(bytes);
            move_bytes(m->held.data(), sbuf, bytes);
            ch.sends.push(m);
            complete(r, kDone);
        } else if (ch.recvs.empty()) {
            ch.sends.push(r);
        } else {
            match(r, ch.recvs.pop());
        }
    } else {
        r->seq = ch.nrecvs++;
        if (ch.sends.empty()) {
            ch.recvs.push(r);
        } else {
            match(ch.sends.pop(), r);
        }
    }
    return Status::ok();
}

Status LoopbackFabric::Impl::test(int rank, Request req, bool* done) {
    *done = false;
    // After an abort unmatched requests stay linked in their channels; they
    // are freed with the fabric, never here.
    if (aborted.load(std::memory_order_acquire)) return aborted_status();
    auto* r = static_cast<LbRequest*>(req);
    const int state = r->state.load(std::memory_order_acquire);
    if (state == kPending) return Status::ok();
    Status st = state == kDone ? Status::ok() : Status::internal(r->error);
    {
        RankState& rs = ranks[static_cast<size_t>(rank)];
        std::lock_guard<std::mutex> lk(rs.m);
        rs.live.erase(r);
    }
    delete r;
    *done = true;
    return st;
}

// Unlinks a request not yet matched from its channel; a matched one has
// completed (data copied under the channel's lock), so it is released as
// finished.  Either way the buffer is never touched again.  After an abort
// nothing is copied any more, so every request can be released.
Status LoopbackFabric::Impl::cancel(int rank, Request req, bool* cancelled) {
    auto* r = static_cast<LbRequest*>(req);
    *cancelled = false;
    bool unlinked = false;
    {
        Channel& ch = r->is_send ? channel(rank, r->peer) : channel(r->peer, rank);
        std::lock_guard<std::mutex> lk(ch.m);
        unlinked = (r->is_send ? ch.sends : ch.recvs).remove(r);
    }
    if (!unlinked && r->state.load(std::memory_order_acquire) == kPending &&
        !aborted.load(std::memory_order_acquire))
        return Status::ok();  // cannot happen: unmatched requests are linked
    {
        RankState& rs = ranks[static_cast<size_t>(rank)];
        std::lock_guard<std::mutex> lk(rs.m);
        rs.live.erase(r);
    }
    delete r;
    *cancelled = true;
    return Status::ok();
}

size_t LoopbackFabric::live_requests(int rank) const {
    RankState& rs = impl_->ranks.at(static_cast<size_t>(rank));
    std::lock_guard<std::mutex> lk(rs.m);
    return rs.live.size();
}

Status LoopbackFabric::Impl::progress(int rank) {
    if (aborted.load(std::memory_order_acquire)) return aborted_status();
    // Sleep until one of this rank's requests completes.  `seen` makes the
    // wait immune to lost wake-ups: a completion after the previous return
    // leaves events != seen.  The short timeout is only a safety net.
    RankState& rs = ranks[static_cast<size_t>(rank)];
    std::unique_lock<std::mutex> lk(rs.m);
    rs.cv.wait_for(lk, std::chrono::milliseconds(2), [&] {
        return rs.events != rs.seen || aborted.load(std::memory_order_acquire);
    });
    rs.seen = rs.events;
    lk.unlock();
    if (aborted.load(std::memory_order_acquire)) return aborted_status();
    return Status::ok();
}

LoopbackFabric::LoopbackFabric(int nranks, size_t eager_limit)
    : impl_(std::make_unique<Impl>(std::max(nranks, 0), eager_limit)) {}
LoopbackFabric::~LoopbackFabric() = default;

int LoopbackFabric::size() const { return impl_->n; }

void LoopbackFabric::set_copy(CopyFn copy) { impl_->copy = std::move(copy); }

Transport& LoopbackFabric::transport(int rank) { return *impl_->transports.at(static_cast<size_t>(rank)); }

void LoopbackFabric::abort(const std::string& why) {
    {
        std::lock_guard<std::mutex> lk(impl_->err_m);
        if (impl_->abort_reason.empty()) impl_->abort_reason = why;
    }
    impl_->aborted.store(true, std::memory_order_release);
    for (Channel& ch : impl_->channels) std::lock_guard<std::mutex> lk(ch.m);
    for (RankState& rs : impl_->ranks) {
        std::lock_guard<std::mutex> lk(rs.m);
        rs.cv.notify_all();
    }
}

std::string LoopbackFabric::first_error() const {
    std::lock_guard<std::mutex> lk(impl_->err_m);
    return impl_->first_error;
}

std::string LoopbackFabric::describe_pending() const {
    const int n = impl_->n;
    constexpr size_t kMaxPerRank = 4;
    std::vector<std::vector<std::string>> per_rank(static_cast<size_t>(n));
    for (int from = 0; from < n; ++from) {
        for (int to = 0; to < n; ++to) {
            Channel& ch = impl_->channel(from, to);
            std::lock_guard<std::mutex> lk(ch.m);
            auto add = [&](const LbRequest* r) {
                auto& v = per_rank[static_cast<size_t>(r->owner)];
                v.push_back(std::string(r->eager ? "eager send to " : r->is_send ? "send to " : "recv from ") +
                            std::to_string(r->peer) + " (" + std::to_string(r->bytes) +
                            " B, message #" + std::to_string(r->seq) + ")");
            };
            ch.sends.for_each(add);
            ch.recvs.for_each(add);
        }
    }
    std::string out;
    for (int r = 0; r < n; ++r) {
        const auto& v = per_rank[static_cast<size_t>(r)];
        if (v.empty()) continue;
        if (!out.empty()) out += "; ";
        out += "rank " + std::to_string(r) + ": ";
        for (size_t i = 0; i < v.size() && i < kMaxPerRank; ++i) out += (i ? ", " : "") + v[i];
        if (v.size() > kMaxPerRank) out += ", +" + std::to_string(v.size() - kMaxPerRank) + " more";
    }
    return out.empty() ? "no unmatched operations" : out;
}

namespace {

struct Harness {
    Harness(int n, const RankFn& f) : fabric(n), fn(f), finished(static_cast<size_t>(n), false) {}
    LoopbackFabric fabric;
    RankFn fn;
    std::mutex m;
    std::condition_variable cv;
    std::vector<bool> finished;
    int nfinished = 0;
    int first_rank = -1;
    Status first;
};

void rank_main(const std::shared_ptr<Harness>& h, int rank) {
    Status st;
    try {
        st = h->fn(rank, h->fabric.transport(rank));
    } catch (const std::exception& e) {
        st = Status::internal(std::string("exception: ") + e.what());
    } catch (...) {
        st = Status::internal("unknown exception");
    }
    if (!st.is_ok()) {
        // Recorded before the abort: the peers' "aborted" errors that the
        // abort causes must not win the race to be reported first.
        {
            std::lock_guard<std::mutex> lk(h->m);
            if (h->first_rank < 0) {
                h->first_rank = rank;
                h->first = st;
            }
        }
        h->fabric.abort("rank " + std::to_string(rank) + " failed");
    }
    std::lock_guard<std::mutex> lk(h->m);
    h->finished[static_cast<size_t>(rank)] = true;
    ++h->nfinished;
    h->cv.notify_all();
}

std::string stuck_ranks(const Harness& h) {
    std::string s;
    for (size_t r = 0; r < h.finished.size(); ++r)
        if (!h.finished[r]) s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
}

}  // namespace

Status run_ranks(int nranks, const RankFn& fn, std::chrono::milliseconds timeout,
                 LoopbackFabric::CopyFn copy) {
    if (nranks < 1) return Status::invalid("run_ranks: need at least one rank, got " + std::to_string(nranks));
    auto h = std::make_shared<Harness>(nranks, fn);
    if (copy) h->fabric.set_copy(std::move(copy));
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) threads.emplace_back(rank_main, h, r);

    std::unique_lock<std::mutex> lk(h->m);
    const bool all = h->cv.wait_for(lk, timeout, [&] { return h->nfinished == nranks; });
    Status timeout_status;
    if (!all) {
        const std::string stuck = stuck_ranks(*h);
        lk.unlock();
        const std::string pending = h->fabric.describe_pending();
        timeout_status = Status::internal(
            "run_ranks: " + std::to_string(nranks) + " ranks not done after " +
            std::to_string(timeout.count()) + " ms; stuck ranks: " + stuck +
            "; unmatched operations: " + pending);
        h->fabric.abort("run_ranks timeout");
        lk.lock();
        // Ranks blocked in the transport see the abort at once; give the
        // rest a moment before abandoning them.
        h->cv.wait_for(lk, std::chrono::seconds(5), [&] { return h->nfinished == nranks; });
    }
    std::vector<bool> finished = h->finished;
    Status first = h->first;
    const int first_rank = h->first_rank;
    lk.unlock();
    for (int r = 0; r < nranks; ++r) {
        if (finished[static_cast<size_t>(r)]) {
            threads[static_cast<size_t>(r)].join();
        } else {
            threads[static_cast<size_t>(r)].detach();
        }
    }
    if (!all) return timeout_status;
    if (first_rank < 0) return Status::ok();
    std::string msg = "rank " + std::to_string(first_rank) + ": " + first.message();
    const std::string transport_error = h->fabric.first_error();
    if (!transport_error.empty() && msg.find(transport_error) == std::string::npos)
        msg += " [loopback: " + transport_error + "]";
    return Status(first.code(), msg);
}

}  // namespace genx
