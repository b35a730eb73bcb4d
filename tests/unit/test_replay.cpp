// Execution::replay(): the blocking call's path for replayable schedules
// (every step single-segment, what small messages compile to).  Checked
// against start() + run() on every registered generator: the same transport
// calls in the same order, with the same peers and sizes, and bit-exact
// results; a C table without the optional send and wait_all; what it
// refuses and how (as start() does); and a transport error naming
// algorithm, rank and step.  test_abandon plants a fault at every transport
// call of replayed plans.
#include <catch2/catch.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tests/unit/failing_transport.hpp"
#include "tests/unit/make_plan.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "tests/support/transport_ops.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

namespace {

// Logs the calls that post or wait (not test or progress: how often a
// rank polls depends on timing).  send() is logged as itself and not as
// the isend and wait it is made of.
class RecordingTransport final : public Transport {
  public:
    RecordingTransport(Transport& inner, bool blocking_send, std::vector<std::string>* log)
        : inner_(inner), blocking_send_(blocking_send), log_(log) {}
    Status isend(const void* b, size_t n, int peer, Request* r) override {
        note("isend", peer, n);
        return inner_.isend(b, n, peer, r);
    }
    Status irecv(void* b, size_t n, int peer, Request* r) override {
        note("irecv", peer, n);
        return inner_.irecv(b, n, peer, r);
    }
    Status test(Request r, bool* d) override { return inner_.test(r, d); }
    Status progress() override { return inner_.progress(); }
    Status wait_all(Request* reqs, int n) override {
        log_->push_back("wait " + std::to_string(n));
        return inner_.wait_all(reqs, n);
    }
    bool has_blocking_send() const override { return blocking_send_; }
    Status send(const void* b, size_t n, int peer) override {
        note("send", peer, n);
        Request r = nullptr;
        GENX_RETURN_IF_ERROR(inner_.isend(b, n, peer, &r));
        return inner_.wait_all(&r, 1);
    }

  private:
    void note(const char* what, int peer, size_t n) {
        log_->push_back(std::string(what) + " " + std::to_string(peer) + " " + std::to_string(n));
    }
    Transport& inner_;
    bool blocking_send_;
    std::vector<std::string>* log_;
};

enum class Path { Run, Replay, ReplayBareTable };

struct RankRun {
    std::vector<std::string> log;
    std::vector<unsigned char> result;
    uint64_t waits = 0;
    bool replayed = false;
};

// Runs rank programs of `plan` for `count` int32 sums through `path`;
// each rank's transport log, result and wait count.  A rank whose schedule
// is not replayable (a transfer of several runs of blocks is several
// messages) runs start() and run(), as the C API does: ranks of one plan
// may differ.
Status run_plan(const Plan& plan, size_t count, bool in_place, Path path, std::vector<RankRun>* out) {
    const int P = plan.nranks;
    out->assign(static_cast<size_t>(P), RankRun());
    return run_ranks(P, [&](int rank, Transport& t) -> Status {
        RankRun& rr = (*out)[static_cast<size_t>(rank)];
        RecordingTransport rec(t, path != Path::ReplayBareTable, &rr.log);
        RankSchedule sched;
        GENX_RETURN_IF_ERROR(compile(plan, rank, count, 4, ExecOptions(), &sched));
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k));
        const std::vector<unsigned char> input = make_input(GENX_DT_INT32, GENX_OP_SUM, rank, count);
        rr.result.assign(count * 4, 0xA5);
        if (in_place) rr.result = input;
        std::vector<unsigned char> scratch(sched.scratch_bytes, 0x5A);
        const void* send = in_place ? nullptr : input.data();
        Execution ex;
        if (path == Path::Run || !sched.replayable) {
            GENX_RETURN_IF_ERROR(ex.start(sched, send, rr.result.data(), scratch.data(), scratch.size(), k, rec));
            GENX_RETURN_IF_ERROR(ex.run());
        } else {
            rr.replayed = true;
            genx_transport_ops ops = transport_ops_for(&rec);
            if (path == Path::ReplayBareTable) {
                ops.send = nullptr;
                ops.wait_all = nullptr;
            }
            GENX_RETURN_IF_ERROR(
                ex.replay(sched, send, rr.result.data(), scratch.data(), scratch.size(), k, ops));
        }
        rr.waits = ex.waits();
        return Status::ok();
    });
}

std::vector<std::string> without_waits(const std::vector<std::string>& log) {
    std::vector<std::string> out;
    for (const std::string& s : log)
        if (s.rfind("wait", 0) != 0) out.push_back(s);
    return out;
}

}  // namespace

TEST_CASE("replay makes run()'s transport calls with run()'s results, every generator", "[replay]") {
    size_t compared = 0;
    size_t replayed = 0;
    for (const GeneratorInfo& g : generators()) {
        for (int P : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17}) {
            const Plan plan = make_plan(g.name, P);
            for (size_t count : {size_t{1}, static_cast<size_t>(P) + 1, size_t{1000}}) {
                const bool in_place = count % 2 == 1;
                CAPTURE(g.name, P, count, in_place);
                // The small-message families send whole runs of blocks
                // in single messages: every rank replays.
                const std::string name = g.name;
                if (name == "rd" || name == "ring" || name == "rhd") {
                    for (int r = 0; r < P; ++r) {
                        RankSchedule s;
                        REQUIRE(compile(plan, r, count, 4, ExecOptions(), &s).is_ok());
                        CHECK(s.replayable);
                    }
                }
                std::vector<RankRun> run, replay, bare;
                Status st = run_plan(plan, count, in_place, Path::Run, &run);
                INFO(st.message());
                REQUIRE(st.is_ok());
                st = run_plan(plan, count, in_place, Path::Replay, &replay);
                INFO(st.message());
                REQUIRE(st.is_ok());
                st = run_plan(plan, count, in_place, Path::ReplayBareTable, &bare);
                INFO(st.message());
                REQUIRE(st.is_ok());
                const std::vector<unsigned char> expected =
                    reference_allreduce(GENX_DT_INT32, GENX_OP_SUM, P, count);
                for (int r = 0; r < P; ++r) {
                    const size_t i = static_cast<size_t>(r);
                    CAPTURE(r);
                    CHECK(first_difference(GENX_DT_INT32, replay[i].result.data(), expected.data(), count) < 0);
                    CHECK(first_difference(GENX_DT_INT32, bare[i].result.data(), expected.data(), count) < 0);
                    ++compared;
                    // A rank that is not replayable ran progress(), whose
                    // order of tests and posts depends on timing.
                    if (!replay[i].replayed) continue;
                    ++replayed;
                    CHECK(replay[i].log == run[i].log);
                    CHECK(replay[i].waits == run[i].waits);
                    // Without the table's send, every send is an isend
                    // (run() without a blocking send posts the same).
                    for (const std::string& s : bare[i].log) CHECK(s.rfind("send", 0) != 0);
                    CHECK(bare[i].waits >= run[i].waits);
                }
            }
        }
    }
    CHECK(compared > 1000);
    CHECK(replayed > compared / 2);
}

TEST_CASE("replay without the table's send posts what run() posts without a blocking send",
          "[replay]") {
    int replayed = 0;
    for (const char* alg : {"rd", "ring", "butterfly"}) {
        for (int P : {2, 3, 5, 7, 8}) {
            CAPTURE(alg, P);
            const Plan plan = make_plan(alg, P);
            std::vector<RankRun> run(static_cast<size_t>(P)), bare;
            REQUIRE(run_ranks(P, [&](int rank, Transport& t) -> Status {
                        RankRun& rr = run[static_cast<size_t>(rank)];
                        RecordingTransport rec(t, false, &rr.log);
                        RankSchedule s;
                        GENX_RETURN_IF_ERROR(compile(plan, rank, 64, 4, ExecOptions(), &s));
                        ReduceKernel k;
                        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k));
                        rr.result = make_input(GENX_DT_INT32, GENX_OP_SUM, rank, 64);
                        std::vector<unsigned char> scratch(s.scratch_bytes);
                        Execution ex;
                        GENX_RETURN_IF_ERROR(ex.start(s, nullptr, rr.result.data(), scratch.data(),
                                                      scratch.size(), k, rec));
                        return ex.run();
                    }).is_ok());
            const Status bare_st = run_plan(plan, 64, true, Path::ReplayBareTable, &bare);
            INFO(bare_st.message());
            REQUIRE(bare_st.is_ok());
            for (int r = 0; r < P; ++r) {
                CAPTURE(r);
                CHECK(bare[static_cast<size_t>(r)].result == run[static_cast<size_t>(r)].result);
                if (!bare[static_cast<size_t>(r)].replayed) continue;
                ++replayed;
                CHECK(without_waits(bare[static_cast<size_t>(r)].log) ==
                      without_waits(run[static_cast<size_t>(r)].log));
            }
        }
    }
    CHECK(replayed > 40);
}

TEST_CASE("replay refuses segmented schedules and checks buffers as start() does", "[replay]") {
    const Plan plan = make_plan("ring", 4);
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k).is_ok());
    LoopbackFabric f(4);
    const genx_transport_ops ops = transport_ops_for(&f.transport(0));

    ExecOptions segmented;
    segmented.segment_bytes = 64;
    RankSchedule seg;
    REQUIRE(compile(plan, 0, 1000, 4, segmented, &seg).is_ok());
    CHECK_FALSE(seg.replayable);
    std::vector<int32_t> buf(1000);
    std::vector<unsigned char> scratch(seg.scratch_bytes);
    Execution ex;
    const Status refused = ex.replay(seg, nullptr, buf.data(), scratch.data(), scratch.size(), k, ops);
    CHECK(refused.code() == Code::Internal);
    CHECK(refused.message().find("start() and run()") != std::string::npos);
    bool done = false;
    CHECK_FALSE(ex.progress(&done).is_ok());

    RankSchedule s;
    REQUIRE(compile(plan, 0, 10, 4, ExecOptions(), &s).is_ok());
    REQUIRE(s.replayable);
    std::vector<unsigned char> sc(s.scratch_bytes);
    Execution a, b;
    const Status short_r = a.replay(s, nullptr, buf.data(), sc.data(), s.scratch_bytes - 1, k, ops);
    const Status short_s = b.start(s, nullptr, buf.data(), sc.data(), s.scratch_bytes - 1, k, f.transport(0));
    CHECK(short_r.code() == Code::InvalidArgument);
    CHECK(short_r.message() == short_s.message());
    ReduceKernel k8;
    REQUIRE(resolve_kernel(GENX_DT_INT64, GENX_OP_SUM, 8, nullptr, &k8).is_ok());
    const Status kernel_r = a.replay(s, nullptr, buf.data(), sc.data(), sc.size(), k8, ops);
    CHECK(kernel_r.code() == Code::InvalidArgument);
    CHECK(kernel_r.message() == b.start(s, nullptr, buf.data(), sc.data(), sc.size(), k8, f.transport(0)).message());
    CHECK(a.replay(s, nullptr, nullptr, sc.data(), sc.size(), k, ops).code() == Code::InvalidArgument);
}

TEST_CASE("a transport error in replay names algorithm, rank and step; abandon drains", "[replay]") {
    const Plan plan = make_plan("ring", 3);
    std::vector<std::vector<int32_t>> bufs(3, std::vector<int32_t>(30));
    std::vector<std::vector<unsigned char>> scratches(3, std::vector<unsigned char>(30 * 4));
    std::mutex m;
    std::vector<size_t> left(3, 99);
    std::vector<int> cancels(3, 0);
    Status st = run_ranks(3, [&](int rank, Transport& t) -> Status {
        FailingTransport ft(t, rank == 1 ? 2 : 1 << 30);
        const genx_transport_ops ops = transport_ops_for(&ft);
        RankSchedule sched;
        GENX_RETURN_IF_ERROR(compile(plan, rank, 30, 4, ExecOptions(), &sched));
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k));
        std::vector<unsigned char>& scratch = scratches[static_cast<size_t>(rank)];
        Execution ex;
        Status s = ex.replay(sched, nullptr, bufs[static_cast<size_t>(rank)].data(), scratch.data(),
                             scratch.size(), k, ops);
        bool done = false;
        if (!s.is_ok() && ex.progress(&done).message() != s.message())
            return Status::internal("a failed execution must keep returning its error");
        if (!s.is_ok()) {
            // The step's receive is still posted; the loopback cancels it.
            const size_t n = ex.abandon(std::chrono::milliseconds(500));
            std::lock_guard<std::mutex> lk(m);
            left[static_cast<size_t>(rank)] = n;
            cancels[static_cast<size_t>(rank)] = ft.cancels;
        }
        return s;
    });
    INFO(st.message());
    CHECK_FALSE(st.is_ok());
    // The C side sees a code only.
    CHECK(st.message().find("rank 1: executor (ring, rank 1, step 2): transport: isend (peer 2, 40 B) "
                            "failed with code 1") != std::string::npos);
    // The failed step's receive was held and handed to abandon(), which
    // cancelled it (or found it complete): nothing is left.
    CHECK(cancels[1] == 1);
    CHECK(left[1] == 0);
}
