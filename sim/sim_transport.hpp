// A genx::Transport whose sends and receives are SimGrid S4U
// communications, so that genx's own executor (runtime/executor.hpp) runs
// in simulated time: each rank is an S4U actor calling Execution::run() on
// its RankSchedule, and what is simulated is what genx runs (docs/sim.md).
//
// Matching: one SimGrid mailbox per ordered (sender, receiver) pair; a
// mailbox matches puts and gets in posting order, which is MPI's
// non-overtaking rule on one tag, all the executor asks (transport.hpp).
// A communication starts when both sides are posted (SimGrid's rendezvous),
// and the network model prices it with the plan's byte size.
//
// Data: a send carries a heap message holding its size and, unless the
// fabric is payload-free, a copy of the bytes taken when posted (MPI lets
// a sender reuse its buffer only once the send completed, so the bytes are
// the same then; copying at completion instead would race with a sender
// that SimGrid resumes first).  The receiver copies them out and checks the
// size when its receive completes; a size mismatch fails the receive.
// Payload-free fabrics (Execution::start_payload_free) take null buffers
// and move sizes only.
//
// progress() BLOCKS (in simulated time) until one of the rank's pending
// communications completes: a rank that polls without letting simulated
// time pass would never see its messages arrive.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.hpp"
#include "runtime/transport.hpp"

namespace simgrid::s4u {
class Mailbox;
}

namespace genx::sim {

class SimFabric {
  public:
    // `payload`: false for payload-free runs (null buffers, sizes only).
    SimFabric(int nranks, bool payload);
    ~SimFabric();
    SimFabric(const SimFabric&) = delete;
    SimFabric& operator=(const SimFabric&) = delete;

    int size() const { return nranks_; }
    bool payload() const { return payload_; }
    // Rank `rank`'s transport; used by that rank's actor only.
    Transport& transport(int rank);
    // The mailbox of messages from `from` to `to` (created on first use).
    simgrid::s4u::Mailbox* mailbox(int from, int to);
    // Messages sent and bytes they carried (the plan's sizes), all ranks.
    uint64_t messages() const { return messages_; }
    uint64_t bytes() const { return bytes_; }
    void count_message(size_t bytes) {
        ++messages_;
        bytes_ += bytes;
    }

  private:
    class RankTransport;
    int nranks_;
    bool payload_;
    // By from * nranks + to, created on first use: a plan's pairs, not P²
    // (10⁵ ranks would need 80 GB of pointers).
    std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
    std::vector<std::unique_ptr<RankTransport>> transports_;
    uint64_t messages_ = 0;
    uint64_t bytes_ = 0;
};

}  // namespace genx::sim
