// Device memory: the fake device backend, the stage plans, the staged
// executor and the C API's device path, all on buffers that host code
// cannot dereference (tests/support/fake_device.hpp).
//
// GENX_TEST_DEVICE=cuda runs the executor and C API cases on the real CUDA
// backend instead (tests/gpu/run-gpu-tests.sh does that on GPU machines):
// buffers come from cudaMalloc through libgenx-cuda.so.  The fake-only
// cases (planted faults, lazy streams) are skipped there.
#include <catch2/catch.hpp>

#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "genx/genx_core.h"
#include "plan/registry.hpp"
#include "runtime/bounce.hpp"
#include "runtime/device.hpp"
#include "runtime/executor.hpp"
#include "tests/support/fake_device.hpp"
#include "tests/support/loopback.hpp"
#include "tests/support/transport_ops.hpp"
#include "runtime/staging.hpp"
#include "tests/unit/make_plan.hpp"
#include "capi_calls.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

namespace {

// The backend the executor and C API cases run on, with synchronous
// upload/download helpers that work for either.
struct TestDevice {
    DeviceBackend* backend = nullptr;
    FakeDevice* fake = nullptr;  // null on the real device
    int ordinal = 0;
    DeviceStream io = nullptr;  // for the helpers' copies (real device)

    void* alloc(size_t n) {
        void* p = nullptr;
        const Status st = backend->device_alloc(ordinal, std::max<size_t>(n, 1), &p);
        if (!st.is_ok()) throw std::runtime_error(st.message());
        return p;
    }
    void release(void* p) { backend->device_free(ordinal, p); }
    void upload(void* dev, const void* host, size_t n) {
        if (fake != nullptr) return fake->upload(dev, host, n);
        sync_copy(dev, host, n);
    }
    void download(void* host, const void* dev, size_t n) {
        if (fake != nullptr) return fake->download(host, dev, n);
        sync_copy(host, dev, n);
    }

  private:
    void sync_copy(void* dst, const void* src, size_t n) {
        if (n == 0) return;
        Status st = backend->memcpy_async(ordinal, dst, src, n, io);
        if (st.is_ok()) st = backend->stream_synchronize(ordinal, io);
        if (!st.is_ok()) throw std::runtime_error(st.message());
    }
};

bool real_device_requested() {
    const char* v = std::getenv("GENX_TEST_DEVICE");
    return v != nullptr && std::string(v) == "cuda";
}

// One backend for the whole test run (a FakeDevice, or CUDA when asked).
TestDevice& test_device() {
    static TestDevice d = [] {
        TestDevice t;
        if (real_device_requested()) {
            DeviceConfig dc;
            if (const char* lib = std::getenv("GENX_CUDA_LIBRARY")) dc.library = lib;
            std::string note;
            t.backend = device_probe(dc, &note);
            if (t.backend == nullptr) throw std::runtime_error("GENX_TEST_DEVICE=cuda: " + note);
            const Status st = t.backend->ready();
            if (!st.is_ok()) throw std::runtime_error("GENX_TEST_DEVICE=cuda: " + st.message());
            if (!t.backend->stream_create(0, &t.io).is_ok()) throw std::runtime_error("stream");
        } else {
            static FakeDevice fake;
            t.fake = &fake;
            t.backend = &fake;
            set_device_backend(&fake);
        }
        return t;
    }();
    return d;
}

// Per-rank streams and events for the staged executor.
struct RankStaging {
    DeviceBackend* b;
    int dev;
    DeviceStream in = nullptr, out = nullptr;
    std::vector<DeviceEvent> events;
    DeviceEvent out_event = nullptr;
    void* host = nullptr;
    size_t host_bytes = 0;
    RankStaging(DeviceBackend* backend, int ordinal) : b(backend), dev(ordinal) {
        REQUIRE(b->stream_create(dev, &in).is_ok());
        REQUIRE(b->stream_create(dev, &out).is_ok());
        REQUIRE(b->event_create(dev, &out_event).is_ok());
    }
    ~RankStaging() {
        b->stream_destroy(dev, in);
        b->stream_destroy(dev, out);
        for (DeviceEvent e : events) b->event_destroy(dev, e);
        b->event_destroy(dev, out_event);
        if (host != nullptr) b->host_free(host);
    }
    Status ready_for(const StagePlan& plan) {
        while (events.size() + 1 < plan.in_begin.size()) {
            DeviceEvent e = nullptr;
            GENX_RETURN_IF_ERROR(b->event_create(dev, &e));
            events.push_back(e);
        }
        if (plan.bytes > host_bytes) {
            if (host != nullptr) b->host_free(host);
            host = nullptr;
            GENX_RETURN_IF_ERROR(b->host_alloc(std::max<size_t>(plan.bytes, 1), &host));
            host_bytes = plan.bytes;
        }
        return Status::ok();
    }
};

struct Case {
    genx_dtype type;
    genx_op op;
    size_t count;
    bool in_place;
    bool nonblocking;  // drive with progress() instead of run()
    bool whole = false;  // staged: the whole buffer in and out (no step staging)
};

std::string describe(const Case& c) {
    return std::string(dtype_name(c.type)) + " " + op_name(c.op) + " count " +
           std::to_string(c.count) + (c.in_place ? " in place" : "") +
           (c.nonblocking ? " progress()" : " run()");
}

// Like the executor tests' run_cases, with every rank's buffers on the
// device and the schedule run staged.
Status run_staged_cases(const Plan& plan, const ExecOptions& o, const std::vector<Case>& cases) {
    TestDevice& td = test_device();
    const int P = plan.nranks;
    std::vector<std::vector<unsigned char>> expected;
    for (const Case& c : cases) expected.push_back(reference_allreduce(c.type, c.op, P, c.count));
    return run_ranks(P, [&](int rank, Transport& t) -> Status {
        Execution ex;
        RankStaging rs(td.backend, td.ordinal);
        for (size_t ci = 0; ci < cases.size(); ++ci) {
            const Case& c = cases[ci];
            const size_t es = type_size(c.type);
            const size_t bytes = c.count * es;
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(plan, rank, c.count, es, o, &sched));
            const StagePlan sp = make_stage_plan(sched, !c.whole);
            GENX_RETURN_IF_ERROR(rs.ready_for(sp));
            ReduceKernel k;
            GENX_RETURN_IF_ERROR(resolve_kernel(c.type, c.op, es, nullptr, &k));
            const std::vector<unsigned char> input = make_input(c.type, c.op, rank, c.count);
            void* dsend = td.alloc(bytes);
            void* drecv = td.alloc(bytes);
            std::vector<unsigned char> garbage(bytes, 0xA5);
            td.upload(drecv, c.in_place ? input.data() : garbage.data(), bytes);
            td.upload(dsend, input.data(), bytes);
            std::vector<unsigned char> scratch(sched.scratch_bytes, 0x5A);
            StagedBuffers sb;
            sb.device = td.backend;
            sb.ordinal = td.ordinal;
            sb.plan = &sp;
            sb.src = c.in_place ? drecv : dsend;
            sb.dst = drecv;
            sb.host = rs.host;
            sb.in_stream = rs.in;
            sb.out_stream = rs.out;
            sb.in_events = rs.events.data();
            sb.out_event = rs.out_event;
            Status st = ex.start_staged(sched, sb, scratch.data(), scratch.size(), k, t);
            if (st.is_ok() && c.nonblocking) {
                bool done = false;
                while (st.is_ok() && !done) {
                    st = ex.progress(&done);
                    if (st.is_ok() && !done) st = t.progress();
                }
            } else if (st.is_ok()) {
                st = ex.run();
            }
            std::vector<unsigned char> result(bytes), sent(bytes);
            if (st.is_ok()) {
                td.download(result.data(), drecv, bytes);
                td.download(sent.data(), dsend, bytes);
            }
            td.release(dsend);
            td.release(drecv);
            GENX_RETURN_IF_ERROR(st);
            const long d = first_difference(c.type, result.data(), expected[ci].data(), c.count);
            if (d >= 0)
                return Status::internal(plan.algorithm + " P=" + std::to_string(P) + " " +
                                        describe(c) + ": element " + std::to_string(d) +
                                        " differs from the reference");
            if (!c.in_place && first_difference(c.type, sent.data(), input.data(), c.count) >= 0)
                return Status::internal(describe(c) + ": the device sendbuf was modified");
        }
        return Status::ok();
    });
}

// The fabric's copy for device-resident runs: through the backend, as a
// CUDA-aware MPI moves device memory.
LoopbackFabric::CopyFn device_copy() {
    TestDevice& td = test_device();
    static DeviceStream s = [&] {
        DeviceStream x = nullptr;
        if (!td.backend->stream_create(td.ordinal, &x).is_ok()) throw std::runtime_error("stream");
        return x;
    }();
    return [&td](void* dst, const void* src, size_t n) {
        Status st = td.backend->memcpy_async(td.ordinal, dst, src, n, s);
        if (st.is_ok()) st = td.backend->stream_synchronize(td.ordinal, s);
        if (!st.is_ok()) throw std::runtime_error("fabric copy: " + st.message());
    };
}

// Every rank's result, sendbuf and scratch on the device; the reductions
// run in the device's kernels.  The fabric moves device memory (a
// CUDA-aware MPI), or, with `bounce`, host memory only (memcpy, which
// faults on the fake device's pointers) under a BounceTransport that copies
// every message through page-locked memory.
Status run_device_cases(const Plan& plan, const ExecOptions& o, const std::vector<Case>& cases,
                        bool bounce = false) {
    TestDevice& td = test_device();
    const int P = plan.nranks;
    std::vector<std::vector<unsigned char>> expected;
    for (const Case& c : cases) expected.push_back(reference_allreduce(c.type, c.op, P, c.count));
    return run_ranks(P, [&](int rank, Transport& fabric) -> Status {
        std::unique_ptr<BouncePool> pool;
        std::unique_ptr<BounceTransport> bt;
        if (bounce) {
            pool = std::make_unique<BouncePool>(*td.backend, td.ordinal);
            bt = std::make_unique<BounceTransport>(fabric, *pool);
        }
        Transport& t = bounce ? static_cast<Transport&>(*bt) : fabric;
        Execution ex;
        DeviceExec dx;
        dx.device = td.backend;
        dx.ordinal = td.ordinal;
        GENX_RETURN_IF_ERROR(td.backend->stream_create(td.ordinal, &dx.stream));
        Status out;
        for (size_t ci = 0; ci < cases.size() && out.is_ok(); ++ci) {
            const Case& c = cases[ci];
            const size_t es = type_size(c.type);
            const size_t bytes = c.count * es;
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(plan, rank, c.count, es, o, &sched));
            ReduceKernel k;
            GENX_RETURN_IF_ERROR(resolve_kernel(c.type, c.op, es, nullptr, &k));
            const std::vector<unsigned char> input = make_input(c.type, c.op, rank, c.count);
            void* dsend = td.alloc(bytes);
            void* drecv = td.alloc(bytes);
            void* dscratch = td.alloc(sched.scratch_bytes);
            std::vector<unsigned char> garbage(bytes, 0xA5);
            td.upload(drecv, c.in_place ? input.data() : garbage.data(), bytes);
            td.upload(dsend, input.data(), bytes);
            Status st = ex.start_on_device(sched, dx, c.in_place ? nullptr : dsend, drecv, dscratch,
                                           std::max<size_t>(sched.scratch_bytes, 1), k, t);
            if (st.is_ok() && c.nonblocking) {
                bool done = false;
                while (st.is_ok() && !done) {
                    st = ex.progress(&done);
                    if (st.is_ok() && !done) st = t.progress();
                }
            } else if (st.is_ok()) {
                st = ex.run();
            }
            std::vector<unsigned char> result(bytes);
            if (st.is_ok()) td.download(result.data(), drecv, bytes);
            td.release(dsend);
            td.release(drecv);
            td.release(dscratch);
            if (!st.is_ok()) {
                out = st;
                break;
            }
            const long d = first_difference(c.type, result.data(), expected[ci].data(), c.count);
            if (d >= 0)
                out = Status::internal(plan.algorithm + " P=" + std::to_string(P) + " " + describe(c) +
                                       ": element " + std::to_string(d) + " differs from the reference");
        }
        td.backend->stream_destroy(td.ordinal, dx.stream);
        return out;
    }, kRunRanksTimeout, bounce ? LoopbackFabric::CopyFn() : device_copy());
}

std::vector<std::pair<genx_dtype, genx_op>> valid_pairs() {
    std::vector<std::pair<genx_dtype, genx_op>> v;
    for (genx_dtype t : builtin_types())
        for (genx_op op : builtin_ops())
            if (mpi_defines(t, op)) v.emplace_back(t, op);
    return v;
}

ExecOptions opts(size_t segment, int window) {
    ExecOptions o;
    o.segment_bytes = segment;
    o.window = window;
    return o;
}

// Catching a planted host dereference: the fault handler jumps back.
sigjmp_buf g_fault_jump;
std::atomic<int> g_faults{0};
void on_fault(int) {
    ++g_faults;
    siglongjmp(g_fault_jump, 1);
}

// Runs fn and reports whether it faulted (SIGSEGV or SIGBUS).
template <typename Fn>
bool faults(Fn fn) {
    struct sigaction sa {}, old_segv{}, old_bus{};
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
    bool faulted = false;
    if (sigsetjmp(g_fault_jump, 1) == 0) {
        fn();
    } else {
        faulted = true;
    }
    sigaction(SIGSEGV, &old_segv, nullptr);
    sigaction(SIGBUS, &old_bus, nullptr);
    return faulted;
}

}  // namespace

// ------------------------------------------------------------ fake device

TEST_CASE("fake device: device pointers fault when the host touches them", "[device]") {
    if (real_device_requested()) return;  // planted faults are the fake's business
    FakeDevice& f = *test_device().fake;
    auto* p = static_cast<unsigned char*>(f.alloc(4096));
    CHECK(f.space_of(p).is_device());
    CHECK(f.space_of(p + 100).device == 0);
    int host_int = 0;
    CHECK_FALSE(f.space_of(&host_int).is_device());
    CHECK_FALSE(f.space_of(nullptr).is_device());
    void* m = f.alloc(64, true);
    CHECK(f.space_of(m).is_device());
    CHECK(f.space_of(m).managed);

    // The planted bug: host code reading and writing device memory.
    CHECK(faults([&] { volatile unsigned char x = *reinterpret_cast<volatile unsigned char*>(p); (void)x; }));
    CHECK(faults([&] { *reinterpret_cast<volatile unsigned char*>(p + 7) = 1; }));
    // (Nothing in a faulting lambda may own memory: the jump out of the
    // fault handler skips its destructors.)
    volatile unsigned char sink[16];
    CHECK(faults([&] {
        for (int i = 0; i < 16; ++i) sink[i] = p[i];
    }));
    // The same through genx's own host executor: an unstaged run on device
    // buffers dereferences them, and the fake catches it.
    const Plan plan = make_plan("ring", 1);
    RankSchedule sched;
    REQUIRE(compile(plan, 0, 16, 4, ExecOptions(), &sched).is_ok());
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k).is_ok());
    LoopbackFabric fabric(1);
    Execution ex;
    auto* q = static_cast<unsigned char*>(f.alloc(64));
    CHECK(faults([&] { (void)ex.start(sched, p, q, nullptr, 0, k, fabric.transport(0)); }));
    f.free(p);
    f.free(q);
    f.free(m);
}

TEST_CASE("fake device: copies run lazily, in stream order, and check their ranges", "[device]") {
    if (real_device_requested()) return;
    FakeDevice& f = *test_device().fake;
    f.reset_stats();
    void* d = f.alloc(1024);
    void* pinned = nullptr;
    REQUIRE(f.host_alloc(1024, &pinned).is_ok());
    DeviceStream s = nullptr;
    DeviceEvent e = nullptr;
    REQUIRE(f.stream_create(0, &s).is_ok());
    REQUIRE(f.event_create(0, &e).is_ok());
    std::vector<unsigned char> src(1024);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7);
    std::memcpy(pinned, src.data(), 1024);
    REQUIRE(f.memcpy_async(0, d, pinned, 1024, s).is_ok());
    REQUIRE(f.event_record(0, e, s).is_ok());
    bool done = true;
    REQUIRE(f.event_query(0, e, &done).is_ok());
    CHECK_FALSE(done);  // "still running" the first time
    CHECK(f.stats().h2d == 0);
    REQUIRE(f.event_query(0, e, &done).is_ok());
    CHECK(done);
    CHECK(f.stats().h2d == 1);
    CHECK(f.stats().unpinned_copies == 0);
    std::vector<unsigned char> back(1024);
    f.download(back.data(), d, 1024);
    CHECK(back == src);

    // A copy past the allocation's end is refused when queued.
    const Status past = f.memcpy_async(0, pinned, static_cast<unsigned char*>(d) + 512, 1024, s);
    CHECK_FALSE(past.is_ok());
    CHECK(past.message().find("not inside one live allocation") != std::string::npos);
    // The host writing into a copy's source while it is in flight.
    REQUIRE(f.memcpy_async(0, d, pinned, 1024, s).is_ok());
    static_cast<unsigned char*>(pinned)[3] ^= 0xff;
    const Status torn = f.stream_synchronize(0, s);
    CHECK_FALSE(torn.is_ok());
    CHECK(torn.message().find("host wrote into the source") != std::string::npos);
    // Unpinned host memory is counted.
    REQUIRE(f.memcpy_async(0, back.data(), d, 1024, s).is_ok());
    REQUIRE(f.stream_synchronize(0, s).is_ok());
    CHECK(f.stats().unpinned_copies == 1);
    CHECK(f.stats().d2h == 1);
    f.event_destroy(0, e);
    f.stream_destroy(0, s);
    f.host_free(pinned);
    f.free(d);
}

// ------------------------------------------------------------ stage plans

TEST_CASE("stage plans copy every byte in once, before its first use, and out once, after its last write",
          "[device]") {
    size_t checked = 0;
    for (const GeneratorInfo& g : generators()) {
        for (int P : {1, 2, 3, 5, 8, 9, 13}) {
            const Plan plan = make_plan(g.name, P);
            for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(P) + 1, size_t{1001}}) {
                for (const ExecOptions& o : {ExecOptions(), opts(40, 2)}) {
                    for (int rank = 0; rank < P; rank += (P > 5 ? 3 : 1)) {
                        RankSchedule s;
                        REQUIRE(compile(plan, rank, count, 4, o, &s).is_ok());
                        const bool step = (rank + count) % 2 == 0;
                        const StagePlan sp = make_stage_plan(s, step);
                        if (!step) {  // whole: one range in before step 0, one out at the end
                            CHECK(sp.in.size() == (count > 0 ? 1u : 0u));
                            CHECK(sp.in_begin[1] == sp.in.size());
                            CHECK(sp.out_begin[s.steps.size()] == 0);
                        }
                        INFO(g.name << " P=" << P << " rank " << rank << " count " << count);
                        REQUIRE(sp.bytes == count * 4);
                        REQUIRE(sp.in_begin.size() == std::max<size_t>(s.steps.size(), 1) + 1);
                        REQUIRE(sp.out_begin.size() == s.steps.size() + 2);
                        std::vector<int> in(sp.bytes, 0), out(sp.bytes, 0);
                        for (const StageRange& r : sp.in)
                            for (size_t b = r.offset; b < r.offset + r.bytes; ++b) ++in[b];
                        for (const StageRange& r : sp.out)
                            for (size_t b = r.offset; b < r.offset + r.bytes; ++b) ++out[b];
                        CHECK(std::all_of(in.begin(), in.end(), [](int v) { return v == 1; }));
                        CHECK(std::all_of(out.begin(), out.end(), [](int v) { return v == 1; }));
                        ++checked;
                    }
                }
            }
        }
    }
    CHECK(checked > 500);
}

// ------------------------------------------------------ staged executor

namespace {

// Every generator at each of `ps` staged through the executor, every type
// and op in turn over counts from 0 to 65537.
void check_every_generator_staged(const std::vector<int>& ps) {
    const auto pairs = valid_pairs();
    size_t next = 0;
    for (const GeneratorInfo& g : generators()) {
        for (int P : ps) {
            const Plan plan = make_plan(g.name, P);
            std::vector<Case> cases;
            for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(P) - 1,
                                 static_cast<size_t>(P) + 1, size_t{1000}, size_t{65537}}) {
                for (int j = 0; j < 2; ++j, ++next) {
                    const auto& pr = pairs[next % pairs.size()];
                    cases.push_back(Case{pr.first, pr.second, count, next % 2 == 1, next % 3 == 0,
                                         next % 5 == 0});
                }
            }
            const ExecOptions o = P % 2 ? ExecOptions() : opts(40, 2);
            const Status st = run_staged_cases(plan, o, cases);
            INFO(g.name << " P=" << P << " (" << format_exec_options(o) << "): " << st.message());
            CHECK(st.is_ok());
        }
    }
}

}  // namespace

TEST_CASE("every generator runs staged on device buffers, every type and op", "[device]") {
    check_every_generator_staged({1, 2, 3, 5, 8});
}

TEST_CASE("every generator runs staged on device buffers at more P (make check-long)", "[device][.long]") {
    check_every_generator_staged({4, 7, 9, 12});
}

TEST_CASE("every type and op staged through ring and butterfly", "[device]") {
    std::vector<Case> cases;
    int n = 0;
    for (const auto& pr : valid_pairs())
        for (bool in_place : {false, true}) {
            cases.push_back(Case{pr.first, pr.second, 777, in_place, (n++ % 2) == 0});
        }
    for (const char* name : {"ring", "butterfly"}) {
        for (int P : {3, 8}) {
            const Status st = run_staged_cases(make_plan(name, P), opts(256, 3), cases);
            INFO(name << " P=" << P << ": " << st.message());
            CHECK(st.is_ok());
        }
    }
}

TEST_CASE("staging uses page-locked buffers and moves each byte once each way", "[device]") {
    if (real_device_requested()) return;
    FakeDevice& f = *test_device().fake;
    const size_t before = f.live_allocations();
    f.reset_stats();
    const int P = 5;
    const size_t count = 100003;
    const Status st = run_staged_cases(make_plan("ring", P), opts(4096, 2),
                                       {Case{GENX_DT_FLOAT, GENX_OP_SUM, count, false, false},
                                        Case{GENX_DT_INT64, GENX_OP_BXOR, count, true, true}});
    INFO(st.message());
    REQUIRE(st.is_ok());
    const FakeDeviceStats s = f.stats();
    CHECK(s.unpinned_copies == 0);
    CHECK(s.bytes_d2h == P * count * (4 + 8));
    CHECK(s.bytes_h2d == P * count * (4 + 8));
    CHECK(s.d2d == 0);
    // Copies follow the steps: a ring of 5 first touches its blocks over 4
    // steps (step 0 takes two adjacent ones, one copy) and finishes one
    // block per step of its allgather, so at least P-1 copies each way per
    // rank and call instead of one.
    CHECK(s.d2h >= 2 * P * (P - 1));
    CHECK(s.h2d >= 2 * P * (P - 1));
    CHECK(s.not_ready_answers > 0);  // the progress() case met copies still running
    CHECK(f.live_allocations() == before);
}

// --------------------------------------------------------- the C API path

namespace {

// The displaced component's allreduce for the C API cases: a forced ring on
// its own genx communicator, on host memory only (it would fault on a
// device pointer), summing int32.
struct HostFallback {
    genx_comm* comm = nullptr;
    const genx_transport_ops* ops = nullptr;
    int calls = 0;
    static int run(void* ctx, const void* sendbuf, void* recvbuf, size_t count) {
        auto* h = static_cast<HostFallback*>(ctx);
        ++h->calls;
        char why[256];
        return genx_allreduce(h->comm, sendbuf, recvbuf, count, GENX_DT_INT32, 4, GENX_OP_SUM, 1,
                              nullptr, h->ops, nullptr, why, sizeof(why)) == GENX_OK
                   ? 0
                   : 1;
    }
};

genx_config config(const char* algorithm, const char* rules = "") {
    genx_config c{};
    c.algorithm = algorithm;
    c.params = "";
    c.rules_path = rules;
    return c;
}

}  // namespace

TEST_CASE("genx_allreduce_ex stages device buffers, and stages around the fallback where it defers",
          "[device]") {
    TestDevice& td = test_device();
    // A rules file that leaves 4 KiB and less to the fallback.
    const std::string rules = "genx-test-device-rules.json";
    {
        FILE* fp = std::fopen(rules.c_str(), "w");
        REQUIRE(fp != nullptr);
        std::fputs("{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [\n"
                   "  {\"bytes\": \"0-4K\", \"algorithm\": \"fallback\"},\n"
                   "  {\"algorithm\": \"ring\"}\n]}\n", fp);
        std::fclose(fp);
    }
    for (int P : {1, 2, 3, 6}) {
        const std::vector<size_t> counts = {0, 1, 1000, 1025, 70001};
        std::atomic<int> fallback_calls{0}, genx_calls{0};
        const Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
            genx_transport_ops ops = transport_ops_for(&t);
            const genx_config cfg = config("auto", rules.c_str());
            char err[512];
            genx_comm* c = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof(err));
            const genx_config ring = config("ring");
            genx_comm* fb_comm = genx_comm_create(rank, P, 0, 0, nullptr, &ring, err, sizeof(err));
            if (c == nullptr || fb_comm == nullptr) return Status::internal(err);
            if (genx_device_active(c) != 1) return Status::internal("device not active");
            HostFallback hf{fb_comm, &ops, 0};
            genx_host_fallback fb{&hf, &HostFallback::run};
            Status out;
            for (size_t count : counts) {
                for (bool in_place : {false, true}) {
                    const size_t bytes = count * 4;
                    std::vector<int32_t> in(count), want(count, 0);
                    for (size_t i = 0; i < count; ++i) {
                        in[i] = static_cast<int32_t>(rank * 1000 + i);
                        want[i] = static_cast<int32_t>(P * (P - 1) / 2 * 1000 + P * i);
                    }
                    void* ds = td.alloc(bytes);
                    void* dr = td.alloc(bytes);
                    td.upload(in_place ? dr : ds, in.data(), bytes);
                    if (genx_buffers_on_device(c, in_place ? nullptr : ds, dr) != 1)
                        out = Status::internal("buffers not seen on the device");
                    char why[512] = "";
                    const int rc =
                        genx_allreduce(c, in_place ? nullptr : ds, dr, count, GENX_DT_INT32, 4,
                                       GENX_OP_SUM, 1, nullptr, &ops, &fb, why, sizeof(why));
                    std::vector<int32_t> got(count);
                    td.download(got.data(), dr, bytes);
                    td.release(ds);
                    td.release(dr);
                    if (rc != GENX_OK)
                        out = Status::internal("count " + std::to_string(count) + ": rc " +
                                               std::to_string(rc) + ": " + why);
                    else if (got != want)
                        out = Status::internal("count " + std::to_string(count) +
                                               (in_place ? " in place" : "") + ": wrong result");
                    if (!out.is_ok()) break;
                }
                if (!out.is_ok()) break;
            }
            genx::CommStats stats{};
            get_stats(c, &stats);
            fallback_calls += hf.calls;
            genx_calls += static_cast<int>(stats.calls);
            if (out.is_ok() && stats.device_calls != 2 * counts.size() - 2)  // count 0 stages nothing
                out = Status::internal("device_calls " + std::to_string(stats.device_calls));
            genx_comm_destroy(c);
            genx_comm_destroy(fb_comm);
            return out;
        });
        INFO("P=" << P << ": " << st.message());
        CHECK(st.is_ok());
        // 1 and 1000 elements (4 B, 4000 B) defer: staged around the
        // fallback; 1025 and 70001 run genx's ring.
        CHECK(fallback_calls == 2 * 2 * P);
        CHECK(genx_calls == 2 * 2 * P);
    }
    std::remove(rules.c_str());
}

TEST_CASE("device buffers are refused, never dereferenced, when they cannot be staged", "[device]") {
    if (real_device_requested()) return;
    FakeDevice& f = *test_device().fake;
    // No fallback for a size genx declines: GENX_ERROR_BUFFER, nothing sent.
    const std::string rules = "genx-test-device-rules2.json";
    {
        FILE* fp = std::fopen(rules.c_str(), "w");
        REQUIRE(fp != nullptr);
        std::fputs("{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [{\"algorithm\": \"fallback\"}]}\n", fp);
        std::fclose(fp);
    }
    const Status st = run_ranks(2, [&](int rank, Transport& t) -> Status {
        genx_transport_ops ops = transport_ops_for(&t);
        const genx_config cfg = config("auto", rules.c_str());
        char err[512];
        genx_comm* c = genx_comm_create(rank, 2, 0, 0, nullptr, &cfg, err, sizeof(err));
        if (c == nullptr) return Status::internal(err);
        void* d = f.alloc(64);
        char why[512] = "";
        const int rc = genx_allreduce(c, nullptr, d, 16, GENX_DT_INT32, 4, GENX_OP_SUM, 1, nullptr,
                                      &ops, nullptr, why, sizeof(why));
        f.free(d);
        genx_comm_destroy(c);
        if (rc != GENX_ERROR_BUFFER) return Status::internal("rc " + std::to_string(rc));
        if (std::string(why).find("no host fallback") == std::string::npos)
            return Status::internal(std::string("message: ") + why);
        return Status::ok();
    });
    INFO(st.message());
    CHECK(st.is_ok());
    std::remove(rules.c_str());

    // Non-blocking and persistent calls on device memory: refused.
    {
        const genx_config ring = config("ring");
        char err2[256];
        genx_comm* c1 = genx_comm_create(0, 1, 0, 0, nullptr, &ring, err2, sizeof(err2));
        REQUIRE(c1 != nullptr);
        LoopbackFabric fabric(1);
        genx_transport_ops ops = transport_ops_for(&fabric.transport(0));
        void* d = f.alloc(64);
        genx_request* req = nullptr;
        char why[256] = "";
        CHECK(iallreduce(c1, nullptr, d, 16, GENX_DT_INT32, 4, GENX_OP_SUM, 1, nullptr, &ops, &req,
                         why, sizeof(why)) == GENX_ERROR_BUFFER);
        CHECK(req == nullptr);
        CHECK(std::string(why).find("blocking allreduce only") != std::string::npos);
        CHECK(genx_allreduce_init(c1, 1, d, d, 16, GENX_DT_INT32, 4, GENX_OP_SUM, 1, nullptr, &ops,
                                  &req, why, sizeof(why)) == GENX_ERROR_BUFFER);
        f.free(d);
        genx_comm_destroy(c1);
    }

    // device_off: the pointer is not even asked about.
    genx_config off = config("ring");
    off.device_off = 1;
    char err[256];
    genx_comm* c = genx_comm_create(0, 1, 0, 0, nullptr, &off, err, sizeof(err));
    REQUIRE(c != nullptr);
    void* d = f.alloc(64);
    CHECK(genx_device_active(c) == 0);
    CHECK(genx_buffers_on_device(c, nullptr, d) == 0);
    f.free(d);
    genx_comm_destroy(c);
}

// ------------------------------------------------- device-resident plans

namespace {

// The (type, op) pairs the device has kernels for.
std::vector<std::pair<genx_dtype, genx_op>> device_pairs() {
    std::vector<std::pair<genx_dtype, genx_op>> pairs;
    for (const auto& pr : valid_pairs())
        if (test_device().backend->reduce_supported(pr.first, pr.second)) pairs.push_back(pr);
    return pairs;
}

// Every generator on the device at each P of `ps`, counts 0 up to
// `largest`, the device's (type, op) pairs in turn, in place and
// progress() alternating; even P with `even_p` options.  `bounce`: over a
// host-only transport (run_device_cases).
void check_every_generator_on_device(size_t largest, const ExecOptions& even_p, bool bounce,
                                     const std::vector<int>& ps = {1, 2, 3, 5, 8, 9}) {
    const auto pairs = device_pairs();
    size_t next = 0;
    for (const GeneratorInfo& g : generators()) {
        for (int P : ps) {
            const Plan plan = make_plan(g.name, P);
            std::vector<Case> cases;
            for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(P) + 1, size_t{1000}, largest}) {
                for (int j = 0; j < 2; ++j, ++next) {
                    const auto& pr = pairs[next % pairs.size()];
                    cases.push_back(Case{pr.first, pr.second, count, next % 2 == 1, next % 3 == 0});
                }
            }
            const ExecOptions o = P % 2 ? ExecOptions() : even_p;
            const Status st = run_device_cases(plan, o, cases, bounce);
            INFO(g.name << " P=" << P << " (" << format_exec_options(o) << "): " << st.message());
            CHECK(st.is_ok());
        }
    }
}

}  // namespace

TEST_CASE("every generator runs on the device with a device-aware transport", "[device]") {
    // Every pair but long double's SUM, PROD, MIN and MAX (no device arithmetic).
    REQUIRE(device_pairs().size() + 4 == valid_pairs().size());
    check_every_generator_on_device(40003, opts(40, 2), /*bounce=*/false);
}

TEST_CASE("every device kernel through ring and butterfly on the device", "[device]") {
    std::vector<Case> cases;
    int n = 0;
    for (const auto& pr : device_pairs())
        for (bool in_place : {false, true}) cases.push_back(Case{pr.first, pr.second, 1777, in_place, (n++ % 2) == 0});
    for (const char* name : {"ring", "butterfly", "cps"}) {
        for (int P : {4, 7}) {
            const Status st = run_device_cases(make_plan(name, P), opts(512, 2), cases);
            INFO(name << " P=" << P << ": " << st.message());
            CHECK(st.is_ok());
        }
    }
}

namespace {

// Rank `rank`'s part of two C API calls on device buffers, float SUM then
// long double SUM of `count` elements, each checked against the reference.
Status sum_on_device(genx_comm* c, const genx_transport_ops& ops, int rank, int P, size_t count) {
    TestDevice& td = test_device();
    for (genx_dtype dt : {GENX_DT_FLOAT, GENX_DT_LONG_DOUBLE}) {
        const size_t es = type_size(dt);
        const std::vector<unsigned char> input = make_input(dt, GENX_OP_SUM, rank, count);
        const std::vector<unsigned char> want = reference_allreduce(dt, GENX_OP_SUM, P, count);
        void* ds = td.alloc(count * es);
        void* dr = td.alloc(count * es);
        td.upload(ds, input.data(), count * es);
        char why[512] = "";
        const int rc = genx_allreduce(c, ds, dr, count, dt, es, GENX_OP_SUM, 1, nullptr, &ops,
                                      nullptr, why, sizeof(why));
        std::vector<unsigned char> got(count * es);
        td.download(got.data(), dr, count * es);
        td.release(ds);
        td.release(dr);
        if (rc != GENX_OK) return Status::internal(std::string(dtype_name(dt)) + ": " + why);
        if (first_difference(dt, got.data(), want.data(), count) >= 0)
            return Status::internal(std::string(dtype_name(dt)) + ": wrong result");
    }
    return Status::ok();
}

}  // namespace

TEST_CASE("a device-aware transport keeps device buffers on the device; what has no device kernel is staged",
          "[device]") {
    TestDevice& td = test_device();
    const int P = 4;
    const size_t count = 30011;
    if (td.fake != nullptr) td.fake->reset_stats();
    const Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_transport_ops ops = transport_ops_for(&t);
        genx_config cfg = config("ring");
        cfg.transport_device_aware = 1;
        char err[512];
        genx_comm* c = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof(err));
        if (c == nullptr) return Status::internal(err);
        // float SUM has a device kernel; long double SUM does not.
        const Status out = sum_on_device(c, ops, rank, P, count);
        genx_comm_destroy(c);
        return out;
    }, kRunRanksTimeout, device_copy());
    INFO(st.message());
    REQUIRE(st.is_ok());
    if (td.fake != nullptr) {
        const FakeDeviceStats s = td.fake->stats();
        CHECK(s.reduces > 0);  // float: the device's kernels
        // Only the long double call crossed to the host, staged.
        CHECK(s.bytes_d2h == P * count * sizeof(long double));
        CHECK(s.bytes_h2d == P * count * sizeof(long double));
    }
}

// ------------------------------------ reducing on the device, messages bounced

// Each bounced message is a copy each way through page-locked memory: at
// 48-byte segments the largest count is most of the cost.
TEST_CASE("every generator reduces on the device over a host-only transport, messages bounced",
          "[device]") {
    REQUIRE(device_pairs().size() > 20);
    check_every_generator_on_device(4099, opts(48, 3), /*bounce=*/true, {1, 3, 8});
}

TEST_CASE("every generator reduces on the device, messages bounced, 65537 elements (make check-long)",
          "[device][.long]") {
    check_every_generator_on_device(65537, opts(48, 3), /*bounce=*/true);
}

TEST_CASE("bounced messages cross the bus once each way, through page-locked memory", "[device]") {
    if (real_device_requested()) return;
    FakeDevice& f = *test_device().fake;
    const size_t before = f.live_allocations();
    const int P = 5;
    const size_t count = 100003;
    for (const ExecOptions& o : {ExecOptions(), opts(4096, 2)}) {
        f.reset_stats();
        const Plan plan = make_plan("ring", P);
        const Status st = run_device_cases(plan, o,
                                           {Case{GENX_DT_FLOAT, GENX_OP_SUM, count, false, false},
                                            Case{GENX_DT_INT64, GENX_OP_BXOR, count, true, true}},
                                           /*bounce=*/true);
        INFO(format_exec_options(o) << ": " << st.message());
        REQUIRE(st.is_ok());
        size_t sent = 0, received = 0, segments = 0;
        for (size_t es : {size_t{4}, size_t{8}})
            for (int r = 0; r < P; ++r) {
                RankSchedule sched;
                REQUIRE(compile(plan, r, count, es, o, &sched).is_ok());
                sent += sched.bytes_sent;
                received += sched.bytes_received;
                segments += sched.segments.size();
            }
        const FakeDeviceStats s = f.stats();
        CHECK(s.unpinned_copies == 0);
        CHECK(s.bytes_d2h == sent);
        CHECK(s.bytes_h2d == received);
        CHECK(s.d2h + s.h2d == segments);  // one copy per message each way
        CHECK(s.reduces > 0);              // the device's kernels reduced
        CHECK(f.live_allocations() == before);
    }
}

TEST_CASE("the reduction-site estimate prices bus copies against host reductions", "[device]") {
    const Plan ring = make_plan("ring", 2);
    auto estimate = [](const Plan& plan, size_t count, const DeviceRates& r, bool whole = false) {
        RankSchedule sched;
        REQUIRE(compile(plan, 0, count, 4, ExecOptions(), &sched).is_ok());
        const StagePlan stage = make_stage_plan(sched, !whole);
        return estimate_reduce_site(sched, stage, r);
    };
    const DeviceRates r;
    // Ring on 2 ranks: one reduce-scatter step (n/2 out, n/2 in, one
    // 2-operand reduction of n/2) and one allgather step.
    const size_t n = size_t{64} << 20;  // floats: 256 MiB
    const double b = n * 4.0;
    const ReduceSiteEstimate big = estimate(ring, n, r);
    const double copy = r.copy_latency_s + (b / 2) / r.pcie_bytes_per_s;
    CHECK(big.device_s == Approx(4 * copy + r.kernel_latency_s + 3 * (b / 2) / r.device_bytes_per_s));
    // Host: the reduction, then the first step's copy in (it touches both
    // halves) and the copy out after the last step (the half it received).
    CHECK(big.host_s == Approx((b / 2) * r.host_gamma + 3 * (b / 2) * r.host_delta +
                               (r.copy_latency_s + b / r.pcie_bytes_per_s) + copy));
    CHECK(big.site == ReduceSite::Device);
    // The defaults reproduce the crossover measured on one H200 shared by
    // two ranks (bench/RESULTS.md): a ring of 2 reduces on the host at
    // 4 MiB (where the device lost 1.2x) and on the device from 16 MiB.
    CHECK(estimate(ring, (size_t{4} << 20) / 4, r).site == ReduceSite::Host);
    CHECK(estimate(ring, (size_t{16} << 20) / 4, r).site == ReduceSite::Device);
    // Small: four copy latencies cost more than a host reduction of 64 B.
    const ReduceSiteEstimate small = estimate(ring, 16, r, true);
    CHECK(small.site == ReduceSite::Host);
    CHECK(small.device_s > small.host_s);
    // A fast host keeps large messages on it too.
    DeviceRates fast_host = r;
    fast_host.host_gamma = 0;
    fast_host.host_delta = 1e-13;
    CHECK(estimate(ring, n, fast_host).site == ReduceSite::Host);
    // One rank: nothing to send; the device path copies nothing over the bus.
    const ReduceSiteEstimate one = estimate(make_plan("ring", 1), 1000, r);
    CHECK(one.device_s == 0);
    CHECK(one.site == ReduceSite::Device);

    DeviceRates parsed;
    REQUIRE(parse_device_rates("pcie=5e10, copy_latency=2e-6,device_reduce=2e12,kernel_latency=0", &parsed).is_ok());
    CHECK(parsed.pcie_bytes_per_s == 5e10);
    CHECK(parsed.copy_latency_s == 2e-6);
    CHECK(parsed.device_bytes_per_s == 2e12);
    CHECK(parsed.kernel_latency_s == 0);
    CHECK(parsed.host_delta == DeviceRates().host_delta);  // untouched
    for (const char* bad : {"pcie=0", "pcie=-1", "pcie=fast", "copy_latency=-1e-6", "pci=1e9",
                            "kernel_latency=", "device_reduce=inf"}) {
        DeviceRates x;
        const Status st = parse_device_rates(bad, &x);
        INFO(bad);
        CHECK_FALSE(st.is_ok());
        CHECK(st.message().find("device rates") != std::string::npos);
        CHECK(x.pcie_bytes_per_s == DeviceRates().pcie_bytes_per_s);  // nothing half-applied
    }
}

TEST_CASE("genx_allreduce_ex reduces staged device calls where device_reduce says", "[device]") {
    TestDevice& td = test_device();
    const int P = 3;
    const size_t count = 20011;
    struct Mode {
        const char* name;
        const char* rates;
        uint64_t device_reduced;  // of the 2 calls (float SUM, long double SUM)
    };
    // auto: a bus so slow that the host wins, then one so fast that the
    // device does.
    for (const Mode& m : {Mode{"device", "", 1}, Mode{"host", "", 0}, Mode{"auto", "pcie=1e6", 0},
                          Mode{"auto", "pcie=1e15,copy_latency=0,kernel_latency=0", 1}}) {
        if (td.fake != nullptr) td.fake->reset_stats();
        std::vector<genx::CommStats> stats(P);
        const Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
            genx_transport_ops ops = transport_ops_for(&t);
            genx_config cfg = config("ring");
            cfg.device_reduce = m.name;
            cfg.device_rates = m.rates;
            char err[512];
            genx_comm* c = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof(err));
            if (c == nullptr) return Status::internal(err);
            const Status out = sum_on_device(c, ops, rank, P, count);
            get_stats(c, &stats[static_cast<size_t>(rank)]);
            genx_comm_destroy(c);
            return out;
        }, kRunRanksTimeout);  // a fabric of host memory only
        INFO(m.name << " " << m.rates << ": " << st.message());
        REQUIRE(st.is_ok());
        for (const genx::CommStats& s : stats) {
            CHECK(s.device_calls == 2);
            CHECK(s.device_reduced == m.device_reduced);  // long double has no device kernel
        }
        if (td.fake != nullptr && m.device_reduced == 0) CHECK(td.fake->stats().reduces == 0);
        if (td.fake != nullptr && m.device_reduced == 1) CHECK(td.fake->stats().reduces > 0);
    }

    // A bad setting is reported (naming the parameter) and genx goes on
    // with auto and the default figures; with rules_strict the
    // communicator fails instead.
    for (const auto& [mode, rates, expect] :
         {std::tuple<const char*, const char*, const char*>{"gpu", "", "coll_genx_cuda_reduce 'gpu'"},
          {"auto", "pcie=x", "coll_genx_cuda_rates"},
          {"auto", "bus=1e9", "unknown key 'bus'"}}) {
        for (int strict : {0, 1}) {
            genx_config cfg = config("ring");
            cfg.device_reduce = mode;
            cfg.device_rates = rates;
            cfg.rules_strict = strict;
            std::string said;
            cfg.log = [](void* ctx, int, const char* msg) { *static_cast<std::string*>(ctx) += msg; };
            cfg.log_ctx = &said;
            char err[512] = "";
            genx_comm* c = genx_comm_create(0, 2, 0, 0, nullptr, &cfg, err, sizeof(err));
            INFO(mode << " / " << rates << " strict " << strict << ": err '" << err << "', said '" << said << "'");
            if (strict) {
                CHECK(c == nullptr);
                CHECK(std::string(err).find(expect) != std::string::npos);
            } else {
                CHECK(c != nullptr);
                CHECK(said.find(expect) != std::string::npos);
                CHECK(said.find("genx uses") != std::string::npos);
            }
            genx_comm_destroy(c);
        }
    }
}

namespace {

// A transport that completes everything at once and fails the n-th isend
// (1-based; 0 = never), counting what it was handed.
class FailingTransport final : public Transport {
  public:
    explicit FailingTransport(int fail_at) : fail_at_(fail_at) {}
    int isends = 0, irecvs = 0, cancels = 0;
    Status isend(const void*, size_t, int, Request* req) override {
        if (++isends == fail_at_) return Status::io_error("planted isend failure");
        *req = this;
        return Status::ok();
    }
    Status irecv(void*, size_t, int, Request* req) override {
        ++irecvs;
        *req = this;
        return Status::ok();
    }
    Status test(Request, bool* done) override {
        *done = true;
        return Status::ok();
    }
    Status progress() override { return Status::ok(); }
    Status cancel(Request, bool* cancelled) override {
        ++cancels;
        *cancelled = true;
        return Status::ok();
    }

  private:
    int fail_at_;
};

}  // namespace

TEST_CASE("bounced sends: a failure to hand one on fails the transport, and nothing queued goes out",
          "[device]") {
    if (real_device_requested()) return;
    TestDevice& td = test_device();
    void* dev = td.alloc(4096);
    {
        BouncePool pool(*td.backend, td.ordinal);
        FailingTransport inner(2);
        BounceTransport t(inner, pool);
        Request a = nullptr, b = nullptr, c = nullptr;
        REQUIRE(t.isend(dev, 1024, 1, &a).is_ok());
        REQUIRE(t.isend(static_cast<char*>(dev) + 1024, 1024, 1, &b).is_ok());
        bool done = false;
        // The fake device's copies answer "not yet" first; a is handed on
        // once its copy is done, b's hand-over fails.
        Status sa, sb;
        for (int i = 0; i < 4 && sa.is_ok() && !done; ++i) sa = t.test(a, &done);
        CHECK(sa.is_ok());
        CHECK(done);
        for (int i = 0; i < 4 && sb.is_ok(); ++i) sb = t.test(b, &done);
        CHECK_FALSE(sb.is_ok());
        CHECK(sb.message().find("planted") != std::string::npos);
        CHECK(inner.isends == 2);
        // Posting still succeeds; the error comes with the next test, and
        // the queued send is never handed on.
        REQUIRE(t.isend(static_cast<char*>(dev) + 2048, 1024, 1, &c).is_ok());
        const Status sc = t.test(c, &done);
        CHECK_FALSE(sc.is_ok());
        CHECK_FALSE(t.progress().is_ok());
        CHECK(inner.isends == 2);
    }
    {
        // Cancelling a send whose copy is still queued: never handed on.
        BouncePool pool(*td.backend, td.ordinal);
        FailingTransport inner(0);
        BounceTransport t(inner, pool);
        Request a = nullptr, r = nullptr;
        REQUIRE(t.isend(dev, 512, 1, &a).is_ok());
        REQUIRE(t.irecv(static_cast<char*>(dev) + 512, 512, 1, &r).is_ok());
        bool cancelled = false;
        REQUIRE(t.cancel(a, &cancelled).is_ok());
        CHECK(cancelled);
        REQUIRE(t.cancel(r, &cancelled).is_ok());
        CHECK(cancelled);
        CHECK(inner.cancels == 1);  // the receive was the inner transport's
        REQUIRE(t.progress().is_ok());
        CHECK(inner.isends == 0);
    }
    td.release(dev);
}

namespace {

// A driver for ContextWatch: what cuCtxGetCurrent and
// cuDevicePrimaryCtxGetState answer, and how often they were asked.
struct WatchDriver {
    static inline void* current = nullptr;
    static inline int current_rc = 0;
    static inline int active_device = -1;  // the device handle whose primary context is active
    static inline int primary_rc = 0;
    static inline int calls = 0;
    static void reset() {
        current = nullptr;
        current_rc = 0;
        active_device = -1;
        primary_rc = 0;
        calls = 0;
    }
    static int get_current(void** ctx) {
        ++calls;
        *ctx = current;
        return current_rc;
    }
    static int primary_state(int dev, unsigned* flags, int* active) {
        ++calls;
        *flags = 0;
        *active = dev == active_device ? 1 : 0;
        return primary_rc;
    }
};

}  // namespace

TEST_CASE("ContextWatch: no device memory before a context exists, and 'may' for good after one",
          "[device]") {
    using W = WatchDriver;
    W::reset();
    SECTION("not armed: always may, nothing asked") {
        ContextWatch none;
        CHECK_FALSE(none.armed());
        CHECK(none.may_hold_device_memory());
        ContextWatch no_primary(&W::get_current, nullptr, {0});
        CHECK_FALSE(no_primary.armed());
        CHECK(no_primary.may_hold_device_memory());
        ContextWatch no_devices(&W::get_current, &W::primary_state, {});
        CHECK_FALSE(no_devices.armed());
        CHECK(no_devices.may_hold_device_memory());
        // More devices than the check pays for: the queries are cheaper.
        std::vector<int> many(ContextWatch::kMaxDevices + 1);
        ContextWatch too_many(&W::get_current, &W::primary_state, many);
        CHECK_FALSE(too_many.armed());
        CHECK(too_many.may_hold_device_memory());
        CHECK(W::calls == 0);
    }
    SECTION("no context: host memory, asked every call") {
        ContextWatch w(&W::get_current, &W::primary_state, {10, 11});
        REQUIRE(w.armed());
        CHECK_FALSE(w.may_hold_device_memory());
        CHECK_FALSE(w.may_hold_device_memory());
        CHECK(W::calls == 2 * 3);  // cuCtxGetCurrent and two devices, each time
    }
    SECTION("a context current on the calling thread") {
        ContextWatch w(&W::get_current, &W::primary_state, {10, 11});
        CHECK_FALSE(w.may_hold_device_memory());
        static int ctx;
        W::current = &ctx;
        CHECK(w.may_hold_device_memory());
        // Sticky: the context going away (or this thread's being another)
        // does not make genx stop asking.
        W::current = nullptr;
        const int asked = W::calls;
        CHECK(w.may_hold_device_memory());
        CHECK(W::calls == asked);
    }
    SECTION("the second device's primary context active, current on no thread") {
        ContextWatch w(&W::get_current, &W::primary_state, {10, 11});
        CHECK_FALSE(w.may_hold_device_memory());
        W::active_device = 11;
        CHECK(w.may_hold_device_memory());
        W::active_device = -1;
        CHECK(w.may_hold_device_memory());
    }
    SECTION("a failing driver call counts as a context") {
        ContextWatch a(&W::get_current, &W::primary_state, {10});
        W::current_rc = 201;  // CUDA_ERROR_INVALID_CONTEXT
        CHECK(a.may_hold_device_memory());
        W::reset();
        ContextWatch b(&W::get_current, &W::primary_state, {10});
        W::primary_rc = 101;  // CUDA_ERROR_INVALID_DEVICE
        CHECK(b.may_hold_device_memory());
    }
    W::reset();
}

TEST_CASE("a process with no device context is not asked where its buffers are", "[device]") {
    TestDevice& td = test_device();
    if (real_device_requested()) {
        // The test's own stream made a context: the real watch must see it.
        CHECK(td.backend->may_hold_device_memory());
        return;
    }
    FakeDevice& f = *td.fake;
    for (int P : {1, 2, 3}) {
        INFO("P=" << P);
        f.reset_stats();
        f.set_no_context(true);
        float host[4] = {0, 0, 0, 0};
        char err[512];
        const genx_config cfg = config("ring");
        genx_comm* c = genx_comm_create(0, 1, 0, 0, nullptr, &cfg, err, sizeof(err));
        REQUIRE(c != nullptr);
        // No context: host memory without a question, each call.
        CHECK(genx_buffers_on_device(c, host, host + 2) == 0);
        CHECK(f.stats().space_queries == 0);
        // A sum over P ranks on host buffers.
        auto sum = [&] {
            return run_ranks(P, [&](int rank, Transport& t) -> Status {
                genx_transport_ops ops = transport_ops_for(&t);
                char e[512];
                genx_comm* rc_comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, e, sizeof(e));
                if (rc_comm == nullptr) return Status::internal(e);
                float v = 1.0f, r = 0.0f;
                char why[512] = "";
                const int rc = genx_allreduce(rc_comm, &v, &r, 1, GENX_DT_FLOAT, 4, GENX_OP_SUM, 1,
                                              nullptr, &ops, nullptr, why, sizeof(why));
                genx_comm_destroy(rc_comm);
                return rc == GENX_OK && r == static_cast<float>(P) ? Status::ok()
                                                                   : Status::internal(why);
            });
        };
        CHECK(sum().is_ok());
        CHECK(f.stats().space_queries == 0);
        // A context: every pointer asked again, and device memory found.
        f.set_no_context(false);
        CHECK(genx_buffers_on_device(c, host, host + 2) == 0);
        CHECK(f.stats().space_queries == 2);
        CHECK(genx_buffers_on_device(c, nullptr, host) == 0);
        CHECK(f.stats().space_queries == 3);
        void* d = td.alloc(16);
        CHECK(genx_buffers_on_device(c, host, d) == 1);
        td.release(d);
        const uint64_t asked = f.stats().space_queries;
        CHECK(sum().is_ok());
        CHECK(f.stats().space_queries >= asked + static_cast<uint64_t>(2 * P));
        genx_comm_destroy(c);
    }
    f.set_no_context(false);
}
