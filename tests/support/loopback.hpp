// Loopback transport: P ranks as P threads of one process (gloo's test
// style), the workhorse of genx's executor tests.
//
// It is deliberately strict so that tests catch what a real network would
// only show sometimes:
//  * rendezvous (by default): a send completes only once the matching
//    receive is posted and the data copied, never from an eager buffer; a
//    schedule that only works because sends complete early deadlocks here;
//  * matching per ordered pair in posting order (MPI non-overtaking);
//  * a matched send and receive of different sizes fail both requests with
//    a message naming the ranks, sizes and message number;
//  * cancel() releases any request not yet matched, send or receive (MPI
//    can cancel receives; Open MPI's ob1 cannot cancel sends, which the
//    executor's abandon() handles by testing them to completion).
// Data is copied by whichever side posts second, under the pair's lock.
//
// run_ranks() is the harness: one thread per rank, the first error wins,
// a failing rank aborts the fabric so that its peers stop waiting, and a
// timeout reports which ranks are stuck on which unmatched operations
// instead of hanging the test suite.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "runtime/transport.hpp"

namespace genx {

class LoopbackFabric {
  public:
    // eager_limit > 0: a send of 1..eager_limit bytes that finds no receive
    // posted is copied into the fabric and completes at once, as MPI's
    // eager protocol does for small messages (tests of what the executor
    // does when sends complete on posting); larger ones stay rendezvous.
    explicit LoopbackFabric(int nranks, size_t eager_limit = 0);
    ~LoopbackFabric();
    LoopbackFabric(const LoopbackFabric&) = delete;
    LoopbackFabric& operator=(const LoopbackFabric&) = delete;

    int size() const;
    // How message bytes move from a send buffer to a receive buffer (or
    // the fabric's eager buffer).  Default memcpy; a device backend's copy
    // makes the fabric take device pointers, as a CUDA-aware MPI does.
    // Set before any rank posts.
    using CopyFn = std::function<void(void* dst, const void* src, size_t bytes)>;
    void set_copy(CopyFn copy);
    // The transport of one rank; valid as long as the fabric.  Each rank's
    // transport must be used by one thread at a time.
    Transport& transport(int rank);

    // Makes every pending and future call on every rank fail with `why`
    // (the first reason wins) and wakes ranks blocked in progress().  Once
    // it returns, no data is copied into or out of any posted buffer, so a
    // rank may free buffers of requests it abandoned.
    void abort(const std::string& why);
    // Requests of `rank` posted and not yet released by test() or
    // cancel(): what a rank leaks when it abandons a plan badly.
    size_t live_requests(int rank) const;
    // First error any request hit (size mismatch, abort), or "".
    std::string first_error() const;
    // Unmatched posted operations per rank, for deadlock reports:
    // "rank 2: recv from 1 (64 B); rank 3: send to 0 (128 B)".
    std::string describe_pending() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

using RankFn = std::function<Status(int rank, Transport& transport)>;

// A hang detector, not a speed limit: the family tests run up to 64 rank
// threads through plans of hundreds of steps, which on a 2-core machine
// busy with other work has taken tens of seconds.  A test that needs a
// tighter bound passes its own.
constexpr std::chrono::milliseconds kRunRanksTimeout{300000};

// Runs fn(rank, transport) on `nranks` threads over a fresh fabric and
// returns the first error (prefixed with its rank), or ok.  An exception
// escaping fn counts as an error.  The fabric is aborted only after a
// failing fn returned, so a rank that fails with requests still posted must
// keep their buffers alive beyond run_ranks (declare them outside fn): a
// peer may still match them until the abort.  On timeout the fabric is
// aborted, the stuck ranks and their unmatched operations are reported,
// and threads that ignore the abort are detached (fn must not capture
// anything it would outlive in that case: a stuck thread is a failed test).
// `copy`: LoopbackFabric::set_copy for the fabric (empty: memcpy).
Status run_ranks(int nranks, const RankFn& fn,
                 std::chrono::milliseconds timeout = kRunRanksTimeout,
                 LoopbackFabric::CopyFn copy = nullptr);

}  // namespace genx
