// Non-blocking and persistent allreduce requests (genx_request), and the
// pool a communicator keeps of finished ones.
//
// A request holds everything its operation needs until it ends, apart from
// the communicator's blocking state (whose Execution, scratch area and
// schedule cache entries may change meanwhile): its own Execution,
// transport adapter, scratch area and a shared reference to its schedule.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "common/genx_types.h"
#include "common/status.hpp"
#include "genx/genx_core.h"
#include "genx/schedule_cache.hpp"
#include "runtime/executor.hpp"
#include "runtime/scratch.hpp"
#include "runtime/transport.hpp"

struct genx_request {
    genx_comm* comm = nullptr;
    const char* call = "";  // "iallreduce" or "persistent allreduce", for messages
    bool persistent = false;
    size_t bytes = 0;
    genx_transport_ops ops{};
    std::unique_ptr<genx::OpsTransport> transport;
    std::shared_ptr<const genx::RankSchedule> sched;
    genx::ReduceKernel kernel;
    genx::ScratchArea scratch;
    const void* sendbuf = nullptr;  // nullptr: in place
    void* recvbuf = nullptr;
    genx::Execution execution;
    bool done = false;
    bool started = false;  // a persistent request between starts is not
    genx::Status error;
    // Requests abandon() could not drain after the failure: the scratch
    // area then stays allocated (the transport may still write into it).
    size_t stranded = 0;

    // Binds a decided call: buffers, transport, kernel, scratch; nothing is
    // posted.  `sched` was set with the decision (its shared reference).
    void bind(genx_comm* owner, const genx::Call& decided, const void* send, void* recv,
              const genx_transport_ops* ops_in);
    // Starts (or restarts) the bound call: posts the plan's first step.
    genx::Status start();
};

namespace genx {

// Finished requests kept for the next call (their executor's arrays,
// transport adapter and a small scratch area), so that an MPI_Iallreduce
// allocates nothing in the steady state.  Requests are freed from the
// progress engine, possibly on another thread: the pool has a lock.
class RequestPool {
  public:
    // Pooled requests per communicator, and the largest scratch area a
    // pooled request keeps (a larger one is freed and allocated again when
    // needed).
    static constexpr size_t kRequests = 8;
    static constexpr size_t kScratchBytes = size_t{1} << 20;

    RequestPool() = default;
    ~RequestPool();
    RequestPool(const RequestPool&) = delete;
    RequestPool& operator=(const RequestPool&) = delete;

    // A pooled request or a new one.
    std::unique_ptr<genx_request> acquire();
    // Takes a finished request back, reset as a fresh one would be but for
    // its arrays; false when the pool is full (the caller deletes it).
    bool give_back(genx_request* req);

  private:
    std::mutex mu_;
    std::vector<genx_request*> pool_;
};

}  // namespace genx
