// A transport for error-path tests: fails its n-th isend and passes
// everything else to the transport it wraps.  It has no blocking send (so
// a C table made of it has none either) and counts cancel calls (what
// Execution::abandon() asks of it).
#pragma once

#include "runtime/transport.hpp"

namespace genx_test {

class FailingTransport final : public genx::Transport {
  public:
    FailingTransport(genx::Transport& inner, int fail_at) : inner_(inner), left_(fail_at) {}
    genx::Status isend(const void* b, size_t n, int peer, genx::Request* r) override {
        if (left_-- == 0) return genx::Status::io_error("planted isend failure");
        return inner_.isend(b, n, peer, r);
    }
    genx::Status irecv(void* b, size_t n, int peer, genx::Request* r) override {
        return inner_.irecv(b, n, peer, r);
    }
    genx::Status test(genx::Request r, bool* d) override { return inner_.test(r, d); }
    genx::Status progress() override { return inner_.progress(); }
    genx::Status cancel(genx::Request r, bool* c) override {
        ++cancels;
        return inner_.cancel(r, c);
    }
    int cancels = 0;

  private:
    genx::Transport& inner_;
    int left_;
};

}  // namespace genx_test
