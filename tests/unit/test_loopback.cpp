// The loopback transport: rendezvous completion, per-pair posting order,
// size mismatches, and the run_ranks harness's error and hang reporting.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/loopback.hpp"

using namespace genx;

namespace {

bool done_now(Transport& t, Request r) {
    bool done = false;
    REQUIRE(t.test(r, &done).is_ok());
    return done;
}

}  // namespace

TEST_CASE("a send completes only when its receive is posted", "[loopback]") {
    LoopbackFabric f(2);
    Transport& t0 = f.transport(0);
    Transport& t1 = f.transport(1);
    const int out = 42;
    int in = 0;
    Request s = nullptr, r = nullptr;
    REQUIRE(t0.isend(&out, sizeof out, 1, &s).is_ok());
    for (int i = 0; i < 3; ++i) {
        REQUIRE(t0.progress().is_ok());
        CHECK_FALSE(done_now(t0, s));
    }
    REQUIRE(t1.irecv(&in, sizeof in, 0, &r).is_ok());
    CHECK(done_now(t0, s));
    CHECK(done_now(t1, r));
    CHECK(in == 42);
}

TEST_CASE("a receive waits for its send", "[loopback]") {
    LoopbackFabric f(2);
    int out = 7, in = 0;
    Request s = nullptr, r = nullptr;
    REQUIRE(f.transport(1).irecv(&in, sizeof in, 0, &r).is_ok());
    CHECK_FALSE(done_now(f.transport(1), r));
    CHECK(in == 0);
    REQUIRE(f.transport(0).isend(&out, sizeof out, 1, &s).is_ok());
    CHECK(done_now(f.transport(1), r));
    CHECK(done_now(f.transport(0), s));
    CHECK(in == 7);
}

TEST_CASE("messages of a pair match in posting order, pairs are independent", "[loopback]") {
    LoopbackFabric f(3);
    const int a[3] = {1, 2, 3};
    const int c = 99;
    int got[3] = {0, 0, 0};
    int from2 = 0;
    Request rs[3], ss[3], r2 = nullptr, s2 = nullptr;
    // Rank 1 receives from 2 first although rank 0 sends first: matching is
    // per pair, so this must neither block nor steal rank 0's data.
    REQUIRE(f.transport(1).irecv(&from2, sizeof from2, 2, &r2).is_ok());
    for (int i = 0; i < 3; ++i) REQUIRE(f.transport(0).isend(&a[i], sizeof(int), 1, &ss[i]).is_ok());
    for (int i = 0; i < 3; ++i) REQUIRE(f.transport(1).irecv(&got[i], sizeof(int), 0, &rs[i]).is_ok());
    CHECK_FALSE(done_now(f.transport(1), r2));
    REQUIRE(f.transport(2).isend(&c, sizeof c, 1, &s2).is_ok());
    for (int i = 0; i < 3; ++i) {
        CHECK(done_now(f.transport(0), ss[i]));
        CHECK(done_now(f.transport(1), rs[i]));
        CHECK(got[i] == a[i]);
    }
    CHECK(done_now(f.transport(1), r2));
    CHECK(done_now(f.transport(2), s2));
    CHECK(from2 == 99);
}

TEST_CASE("zero-byte messages match like any other", "[loopback]") {
    LoopbackFabric f(2);
    Request s = nullptr, r = nullptr;
    REQUIRE(f.transport(0).isend(nullptr, 0, 1, &s).is_ok());
    REQUIRE(f.transport(1).irecv(nullptr, 0, 0, &r).is_ok());
    CHECK(done_now(f.transport(0), s));
    CHECK(done_now(f.transport(1), r));
}

TEST_CASE("a size mismatch fails both sides with a precise message", "[loopback]") {
    LoopbackFabric f(2);
    char out[64] = {}, in[32] = {};
    Request s = nullptr, r = nullptr;
    REQUIRE(f.transport(0).isend(out, sizeof out, 1, &s).is_ok());
    REQUIRE(f.transport(1).irecv(in, sizeof in, 0, &r).is_ok());
    bool done = false;
    Status st = f.transport(1).test(r, &done);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("size mismatch") != std::string::npos);
    CHECK(st.message().find("sent 64 B") != std::string::npos);
    CHECK(st.message().find("32 B") != std::string::npos);
    CHECK_FALSE(f.transport(0).test(s, &done).is_ok());
    CHECK(f.first_error().find("from rank 0 to rank 1") != std::string::npos);
}

TEST_CASE("bad peers are rejected", "[loopback]") {
    LoopbackFabric f(2);
    int x = 0;
    Request r = nullptr;
    CHECK_FALSE(f.transport(0).isend(&x, sizeof x, 2, &r).is_ok());
    CHECK_FALSE(f.transport(0).irecv(&x, sizeof x, -1, &r).is_ok());
}

TEST_CASE("run_ranks runs every rank and exchanges data", "[loopback]") {
    const int P = 8;
    std::vector<int> seen(P, -1);
    Status st = run_ranks(P, [&](int rank, Transport& t) {
        int out = rank * 10, in = -1;
        Request s = nullptr, r = nullptr;
        GENX_RETURN_IF_ERROR(t.isend(&out, sizeof out, (rank + 1) % P, &s));
        GENX_RETURN_IF_ERROR(t.irecv(&in, sizeof in, (rank + P - 1) % P, &r));
        bool ds = false, dr = false;
        while (!(ds && dr)) {
            if (!ds) GENX_RETURN_IF_ERROR(t.test(s, &ds));
            if (!dr) GENX_RETURN_IF_ERROR(t.test(r, &dr));
            if (!(ds && dr)) GENX_RETURN_IF_ERROR(t.progress());
        }
        seen[static_cast<size_t>(rank)] = in;
        return Status::ok();
    });
    REQUIRE(st.is_ok());
    for (int r = 0; r < P; ++r) CHECK(seen[static_cast<size_t>(r)] == ((r + P - 1) % P) * 10);
}

TEST_CASE("run_ranks reports the first failing rank and unblocks the others", "[loopback]") {
    const auto t0 = std::chrono::steady_clock::now();
    Status st = run_ranks(4, [](int rank, Transport& t) -> Status {
        if (rank == 2) return Status::invalid("planted failure");
        // Everyone else waits for a message rank 2 never sends.
        int in = 0;
        Request r = nullptr;
        GENX_RETURN_IF_ERROR(t.irecv(&in, sizeof in, 2, &r));
        bool done = false;
        while (!done) {
            GENX_RETURN_IF_ERROR(t.test(r, &done));
            if (!done) GENX_RETURN_IF_ERROR(t.progress());
        }
        return Status::ok();
    });
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("rank 2: planted failure") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("run_ranks turns exceptions into errors", "[loopback]") {
    Status st = run_ranks(2, [](int rank, Transport&) -> Status {
        if (rank == 1) throw std::runtime_error("boom");
        return Status::ok();
    });
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("boom") != std::string::npos);
}

TEST_CASE("a rendezvous deadlock times out and names the stuck ranks", "[loopback]") {
    // Both ranks send first and wait for the send: under rendezvous neither
    // posts the receive that would complete the other's send.
    Status st = run_ranks(
        2,
        [](int rank, Transport& t) {
            int out = rank, in = -1;
            Request s = nullptr;
            GENX_RETURN_IF_ERROR(t.isend(&out, sizeof out, 1 - rank, &s));
            bool done = false;
            while (!done) {
                GENX_RETURN_IF_ERROR(t.test(s, &done));
                if (!done) GENX_RETURN_IF_ERROR(t.progress());
            }
            Request r = nullptr;
            GENX_RETURN_IF_ERROR(t.irecv(&in, sizeof in, 1 - rank, &r));
            return Status::ok();
        },
        std::chrono::milliseconds(300));
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("stuck ranks: 0, 1") != std::string::npos);
    CHECK(st.message().find("rank 0: send to 1 (4 B") != std::string::npos);
    CHECK(st.message().find("rank 1: send to 0 (4 B") != std::string::npos);
}
