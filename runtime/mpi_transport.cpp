// MpiTransport (runtime/mpi_transport.hpp).
#include "runtime/mpi_transport.hpp"

#include <climits>
#include <string>
#include <vector>

#include "runtime/mpi_native.hpp"

namespace genx::mpi {

namespace {

constexpr int kTag = 7411;

Status too_large(size_t bytes) {
    return Status::unsupported("message of " + std::to_string(bytes) + " B > INT_MAX");
}

class MpiTransport final : public Transport {
  public:
    explicit MpiTransport(MPI_Comm comm) : comm_(comm) {}
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override {
        if (bytes > static_cast<size_t>(INT_MAX)) return too_large(bytes);
        auto* r = new MPI_Request;
        if (MPI_Isend(const_cast<void*>(buf), static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_,
                      r) != MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Isend failed");
        }
        *req = r;
        return Status::ok();
    }
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override {
        if (bytes > static_cast<size_t>(INT_MAX)) return too_large(bytes);
        auto* r = new MPI_Request;
        if (MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_, r) !=
            MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Irecv failed");
        }
        *req = r;
        return Status::ok();
    }
    Status test(Request req, bool* done) override {
        auto* r = static_cast<MPI_Request*>(req);
        int flag = 0;
        if (MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            delete r;
            return Status::io_error("MPI_Test failed");
        }
        *done = flag != 0;
        if (flag) delete r;
        return Status::ok();
    }
    // MPI_Test drives MPI's progress engine.
    Status progress() override { return Status::ok(); }
    // Blocking waits and a blocking last send, as the component's PML
    // transport and tuned's sendrecv make them: what genx-tune times is
    // what MPI_Allreduce will run.
    Status wait_all(Request* reqs, int n) override;
    bool has_blocking_send() const override { return true; }
    Status send(const void* buf, size_t bytes, int peer) override {
        if (bytes > static_cast<size_t>(INT_MAX)) return too_large(bytes);
        return MPI_Send(const_cast<void*>(buf), static_cast<int>(bytes), MPI_BYTE, peer, kTag,
                        comm_) == MPI_SUCCESS
                   ? Status::ok()
                   : Status::io_error("MPI_Send failed");
    }

  private:
    MPI_Comm comm_;
    std::vector<MPI_Request> waiting_;  // reused: no allocation per step
};

Status MpiTransport::wait_all(Request* reqs, int n) {
    waiting_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) waiting_[static_cast<size_t>(i)] = *static_cast<MPI_Request*>(reqs[i]);
    const int rc = MPI_Waitall(n, waiting_.data(), MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; ++i) {
        // MPI_Waitall frees what completed (MPI_REQUEST_NULL); a request
        // still pending after an error stays for abandon().
        auto* r = static_cast<MPI_Request*>(reqs[i]);
        *r = waiting_[static_cast<size_t>(i)];
        if (*r == MPI_REQUEST_NULL) {
            delete r;
            reqs[i] = nullptr;
        }
    }
    return rc == MPI_SUCCESS ? Status::ok() : Status::io_error("MPI_Waitall failed");
}

}  // namespace

std::unique_ptr<Transport> make_transport(const Comm& comm) {
    return std::make_unique<MpiTransport>(comm.impl().comm);
}

}  // namespace genx::mpi
