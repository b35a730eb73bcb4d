// The executor: executor params, the compiled byte schedule (messages,
// segments, skipped empty runs, both sides agreeing), compile errors, and
// real data through every generator on the loopback transport, compared
// bit for bit with a sequential rank-order reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/failing_transport.hpp"
#include "tests/unit/make_plan.hpp"
#include "plan/checker.hpp"
#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tuning/exec_defaults.hpp"
#include "tests/support/loopback.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

namespace {


ExecOptions opts(size_t segment, int window) {
    ExecOptions o;
    o.segment_bytes = segment;
    o.window = window;
    return o;
}

struct Case {
    genx_dtype type;
    genx_op op;
    size_t count;
    bool in_place;
};

std::string describe(const Case& c) {
    return std::string(dtype_name(c.type)) + " " + op_name(c.op) + " count " +
           std::to_string(c.count) + (c.in_place ? " in place" : " not in place");
}

// Runs every case, in order, on every rank of one loopback fabric (one
// Execution per rank, reused across cases as the C API does) and compares
// each rank's result with the rank-order reference.
Status run_cases(const Plan& plan, const ExecOptions& o, const std::vector<Case>& cases) {
    const int P = plan.nranks;
    std::vector<std::vector<unsigned char>> expected;
    for (const Case& c : cases) expected.push_back(reference_allreduce(c.type, c.op, P, c.count));
    return run_ranks(P, [&](int rank, Transport& t) -> Status {
        Execution ex;
        for (size_t ci = 0; ci < cases.size(); ++ci) {
            const Case& c = cases[ci];
            const size_t es = type_size(c.type);
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(plan, rank, c.count, es, o, &sched));
            ReduceKernel k;
            GENX_RETURN_IF_ERROR(resolve_kernel(c.type, c.op, es, nullptr, &k));
            const std::vector<unsigned char> input = make_input(c.type, c.op, rank, c.count);
            std::vector<unsigned char> result(c.count * es, 0xA5);
            std::vector<unsigned char> scratch(sched.scratch_bytes, 0x5A);
            if (c.in_place) result = input;
            GENX_RETURN_IF_ERROR(ex.start(sched, c.in_place ? nullptr : input.data(), result.data(),
                                          scratch.data(), scratch.size(), k, t));
            GENX_RETURN_IF_ERROR(ex.run());
            const long d = first_difference(c.type, result.data(), expected[ci].data(), c.count);
            if (d >= 0)
                return Status::internal(plan.algorithm + " P=" + std::to_string(P) + " " +
                                        describe(c) + ": element " + std::to_string(d) +
                                        " differs from the reference");
            if (!c.in_place && first_difference(c.type, input.data(),
                                                make_input(c.type, c.op, rank, c.count).data(),
                                                c.count) >= 0)
                return Status::internal(describe(c) + ": sendbuf was modified");
        }
        return Status::ok();
    });
}

std::vector<std::pair<genx_dtype, genx_op>> valid_pairs() {
    std::vector<std::pair<genx_dtype, genx_op>> v;
    for (genx_dtype t : builtin_types())
        for (genx_op op : builtin_ops())
            if (mpi_defines(t, op)) v.emplace_back(t, op);
    return v;
}

std::vector<size_t> counts_for(int P) {
    const size_t p = static_cast<size_t>(P);
    return {0, 1, p - 1, p, p + 1, 1000, 65537};
}

// Sizes of the segments rank `from` sends to rank `to` over the whole
// program, in posting order (or that `to` receives from `from`).
std::vector<size_t> wire(const RankSchedule& s, int peer, bool sends) {
    std::vector<size_t> out;
    for (const StepSched& st : s.steps) {
        const size_t lo = st.first_transfer + (sends ? static_cast<size_t>(st.nrecvs) : 0);
        const size_t n = static_cast<size_t>(sends ? st.nsends : st.nrecvs);
        for (size_t i = lo; i < lo + n; ++i) {
            const TransferSched& t = s.transfers[i];
            if (t.peer != peer) continue;
            for (size_t g = 0; g < t.nsegments; ++g) out.push_back(s.segments[t.first_segment + g].bytes);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("executor params split from generator params", "[executor]") {
    ParamMap all, gen;
    ExecOptions o;
    REQUIRE(split_exec_params(all, &gen, &o).is_ok());
    CHECK(o.segment_bytes == kDefaultSegmentBytes);
    CHECK(o.window == kDefaultWindow);
    CHECK(format_exec_options(o) == "segment=1M,window=4");

    REQUIRE(parse_params("segment=64K, window=3, root=2", &all).is_ok());
    REQUIRE(split_exec_params(all, &gen, &o).is_ok());
    CHECK(o.segment_bytes == 65536);
    CHECK(o.window == 3);
    CHECK(gen == ParamMap{{"root", "2"}});
    CHECK(format_exec_options(o) == "segment=64K,window=3");

    REQUIRE(parse_params("segment=0", &all).is_ok());
    REQUIRE(split_exec_params(all, &gen, &o).is_ok());
    CHECK(o.segment_bytes == 0);

    for (const char* bad : {"window=0", "window=x", "window=2k", "segment=abc", "segment=-1"}) {
        INFO(bad);
        REQUIRE(parse_params(bad, &all).is_ok());
        Status st = split_exec_params(all, &gen, &o);
        CHECK(st.code() == Code::InvalidArgument);
        CHECK(st.message().find(std::string(bad).substr(0, std::string(bad).find('='))) != std::string::npos);
    }
    CHECK(format_bytes(100) == "100");
    CHECK(format_bytes(3 << 20) == "3M");
    CHECK(format_bytes(1536) == "1536");
}

TEST_CASE("compile: one message per run of consecutive blocks, cut into segments", "[executor]") {
    // Hand-made two-rank plan, 4 blocks of 2 int32: rank 0 sends blocks
    // {0,1,3} (two runs) and receives block 2 into a slot.
    Plan plan;
    plan.algorithm = "hand";
    plan.nranks = 2;
    plan.nblocks = 4;
    plan.programs.resize(2);
    Step s0;
    s0.sends.push_back(Transfer{1, {0, 1, 3}, kResult});
    s0.recvs.push_back(Transfer{1, {2}, 0});
    s0.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, {2}});
    plan.programs[0].steps.push_back(s0);
    Step s1;
    s1.recvs.push_back(Transfer{0, {0, 1, 3}, 0});
    s1.sends.push_back(Transfer{0, {2}, kResult});
    plan.programs[1].steps.push_back(s1);
    finalize(plan);

    RankSchedule s;
    REQUIRE(compile(plan, 0, 8, 4, opts(8, 2), &s).is_ok());
    REQUIRE(s.steps.size() == 1);
    CHECK(s.steps[0].nrecvs == 1);
    CHECK(s.steps[0].nsends == 1);
    const TransferSched& send = s.transfers[s.steps[0].first_transfer + 1];
    REQUIRE(send.nsegments == 3);  // run {0,1}: 16 B as 8+8, run {3}: 8 B
    CHECK(s.segments[send.first_segment].loc.offset == 0);
    CHECK(s.segments[send.first_segment + 1].loc.offset == 8);
    CHECK(s.segments[send.first_segment + 2].loc.offset == 24);
    CHECK(s.segments[send.first_segment + 2].loc.space == Space::Result);
    const TransferSched& recv = s.transfers[s.steps[0].first_transfer];
    REQUIRE(recv.nsegments == 1);
    CHECK(s.segments[recv.first_segment].loc.space == Space::Scratch);
    CHECK(s.segments[recv.first_segment].bytes == 8);
    CHECK(s.scratch_bytes == 8);
    CHECK(s.bytes_sent == 24);
    CHECK(s.bytes_received == 8);

    // Rank 1's slot packs blocks 0, 1, 3: block 3 sits right after 0 and 1.
    RankSchedule s1c;
    REQUIRE(compile(plan, 1, 8, 4, opts(0, 1), &s1c).is_ok());
    CHECK(s1c.scratch_bytes == 24);
    const TransferSched& r1 = s1c.transfers[0];
    REQUIRE(r1.nsegments == 2);
    CHECK(s1c.segments[r1.first_segment + 1].loc.offset == 16);
    CHECK(wire(s, 1, true) == std::vector<size_t>{8, 8, 8});

    // count 2: blocks 0 and 2 are empty ([b*2/4, (b+1)*2/4)); the empty
    // receive and its reduce disappear, the run {0,1} carries block 1 only.
    REQUIRE(compile(plan, 0, 2, 4, opts(0, 1), &s).is_ok());
    REQUIRE(s.steps.size() == 1);
    CHECK(s.steps[0].nrecvs == 0);
    CHECK(s.steps[0].nops == 0);
    CHECK(wire(s, 1, true) == std::vector<size_t>{4, 4});
}

TEST_CASE("compile: a transfer's own segment_blocks overrides the plan-wide segment", "[executor]") {
    // Two ranks, 4 blocks: rank 0 sends all four (one run) in messages of
    // 2 blocks whatever the plan-wide segment; rank 1 sends them back with
    // the plan-wide segment.
    Plan plan;
    plan.algorithm = "hand";
    plan.nranks = 2;
    plan.nblocks = 4;
    plan.programs.resize(2);
    Step s0, s1;
    s0.sends.push_back(Transfer{1, {0, 1, 2, 3}, kResult, 2});
    s1.recvs.push_back(Transfer{0, {0, 1, 2, 3}, kResult, 2});
    Step t0, t1;
    t1.sends.push_back(Transfer{0, {0, 1, 2, 3}, kResult});
    t0.recvs.push_back(Transfer{1, {0, 1, 2, 3}, kResult});
    plan.programs[0].steps = {s0, t0};
    plan.programs[1].steps = {s1, t1};
    finalize(plan);
    REQUIRE_FALSE(check_plan(plan).ok);  // not an allreduce, but well formed:
    REQUIRE(check_plan(plan).kind != Violation::Malformed);
    REQUIRE(check_plan(plan).kind != Violation::Mismatched);
    // 1000 int32: blocks of 250 elements, 2 blocks = 2000 B per message.
    RankSchedule a, b;
    for (size_t seg : {size_t{64}, size_t{0}, size_t{1} << 20}) {
        INFO("segment " << seg);
        REQUIRE(compile(plan, 0, 1000, 4, opts(seg, 2), &a).is_ok());
        REQUIRE(compile(plan, 1, 1000, 4, opts(seg, 2), &b).is_ok());
        CHECK(wire(a, 1, true) == std::vector<size_t>{2000, 2000});
        CHECK(wire(b, 0, false) == std::vector<size_t>{2000, 2000});
        const size_t back = seg == 64 ? 63 : 1;  // 4000 B by the plan-wide size
        CHECK(wire(b, 0, true).size() == back);
        CHECK(wire(a, 1, false).size() == back);
    }
    // Uneven blocks (1001 elements: 250, 250, 250, 251): messages of
    // 2 × ⌈1001 / 4⌉ = 502 elements, so the 1001-element run is cut once.
    REQUIRE(compile(plan, 0, 1001, 4, opts(64, 2), &a).is_ok());
    CHECK(wire(a, 1, true) == std::vector<size_t>{2008, 1996});
    // The executor refuses a negative size.
    plan.programs[0].steps[0].sends[0].segment_blocks = -1;
    const Status st = compile(plan, 0, 1000, 4, opts(64, 2), &a);
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.message().find("segment_blocks -1") != std::string::npos);
}

TEST_CASE("compile rounds segments to whole elements", "[executor]") {
    Plan plan = make_plan("ring", 4);
    RankSchedule s;
    REQUIRE(compile(plan, 0, 1000, 4, opts(64, 2), &s).is_ok());
    CHECK(s.steps.size() == 6);
    CHECK(s.scratch_bytes == 3 * 1000);
    CHECK(s.bytes_sent == 6 * 1000);
    for (const TransferSched& t : s.transfers) {
        REQUIRE(t.nsegments == 16);  // 250 elements = 1000 B = 15 x 64 + 40
        CHECK(s.segments[t.first_segment + 15].bytes == 40);
    }
    REQUIRE(compile(plan, 0, 1000, 4, opts(6, 1), &s).is_ok());
    for (const TransferSched& t : s.transfers) CHECK(t.nsegments == 250);
    REQUIRE(compile(plan, 0, 1000, 16, opts(3, 1), &s).is_ok());
    for (const TransferSched& t : s.transfers) CHECK(s.segments[t.first_segment].bytes == 16);
    REQUIRE(compile(plan, 0, 1000, 4, opts(0, 1), &s).is_ok());
    for (const TransferSched& t : s.transfers) CHECK(t.nsegments == 1);
}

TEST_CASE("compiled schedules agree on both sides of every pair", "[executor]") {
    for (const GeneratorInfo& g : generators()) {
        for (int P : {1, 2, 3, 5, 8, 12}) {
            Plan plan = make_plan(g.name, P);
            for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(P) - 1, size_t{77}, size_t{1000}}) {
                for (size_t seg : {size_t{0}, size_t{24}}) {
                    std::vector<RankSchedule> s(static_cast<size_t>(P));
                    for (int r = 0; r < P; ++r)
                        REQUIRE(compile(plan, r, count, 8, opts(seg, 2), &s[static_cast<size_t>(r)]).is_ok());
                    for (int a = 0; a < P; ++a)
                        for (int b = 0; b < P; ++b) {
                            INFO(g.name << " P=" << P << " count=" << count << " seg=" << seg
                                        << " pair " << a << "->" << b);
                            CHECK(wire(s[static_cast<size_t>(a)], b, true) ==
                                  wire(s[static_cast<size_t>(b)], a, false));
                        }
                }
            }
        }
    }
}

TEST_CASE("compile rejects what the executor cannot run, naming rank and step", "[executor]") {
    auto base = [] {
        Plan p;
        p.algorithm = "hand";
        p.nranks = 2;
        p.nblocks = 2;
        p.programs.resize(2);
        p.programs[0].steps.resize(1);
        p.programs[1].steps.resize(1);
        return p;
    };
    RankSchedule s;
    auto expect_error = [&](Plan p, const std::string& needle) {
        finalize(p);
        Status st = compile(p, 0, 10, 4, ExecOptions(), &s);
        INFO(st.message());
        CHECK(st.code() == Code::InvalidArgument);
        CHECK(st.message().find("rank 0 step 0") != std::string::npos);
        CHECK(st.message().find(needle) != std::string::npos);
    };
    Plan p = base();
    p.programs[0].steps[0].sends.push_back(Transfer{0, {0}, kResult});
    expect_error(p, "peer must be another rank");
    p = base();
    p.programs[0].steps[0].sends.push_back(Transfer{1, {2}, kResult});
    expect_error(p, "block 2 outside 0..1");
    p = base();
    p.programs[0].steps[0].sends.push_back(Transfer{1, {0}, 3});
    p.nslots = 1;  // finalize raises nslots to 4 from the id; compile sees a layoutless slot
    expect_error(p, "never writes");
    p = base();
    p.programs[0].steps[0].recvs.push_back(Transfer{1, {0}, 0});
    p.programs[0].steps[0].ops.push_back(LocalOp{OpKind::Reduce, 0, {0}, {0}});
    expect_error(p, "reads its own destination");
    p = base();
    p.programs[0].steps[0].ops.push_back(LocalOp{OpKind::Copy, kResult, {0, 1}, {0}});
    expect_error(p, "a copy needs exactly one");
    p = base();
    p.programs[0].steps[0].ops.push_back(LocalOp{OpKind::Reduce, kResult, {}, {0}});
    expect_error(p, "a reduce needs at least one");

    // A program that names a slot but was never finalized has no layout.
    Plan unfinalized = base();
    unfinalized.programs[0].steps[0].recvs.push_back(Transfer{1, {0}, 0});
    unfinalized.programs[1].steps[0].sends.push_back(Transfer{0, {0}, kResult});
    Status st = compile(unfinalized, 0, 10, 4, ExecOptions(), &s);
    INFO(st.message());
    CHECK(st.message().find("finalized") != std::string::npos);
    CHECK(compile(base(), 2, 10, 4, ExecOptions(), &s).code() == Code::InvalidArgument);
    CHECK(compile(base(), 0, 10, 0, ExecOptions(), &s).code() == Code::InvalidArgument);
    CHECK(compile(base(), 0, 10, 4, opts(0, 0), &s).code() == Code::InvalidArgument);
}

TEST_CASE("a hand-made plan with copies and a slot-to-slot reduce", "[executor]") {
    // P = 2, one block: swap through slot 0, then t := own; t ⊕= peer;
    // result := t, exercising Copy and reduce into a slot.
    Plan plan;
    plan.algorithm = "hand-copy";
    plan.nranks = 2;
    plan.nblocks = 1;
    plan.programs.resize(2);
    for (int r = 0; r < 2; ++r) {
        Step st;
        st.sends.push_back(Transfer{1 - r, {0}, kResult});
        st.recvs.push_back(Transfer{1 - r, {0}, 0});
        st.ops.push_back(LocalOp{OpKind::Copy, 1, {kResult}, {0}});
        st.ops.push_back(LocalOp{OpKind::Reduce, 1, {0}, {0}});
        st.ops.push_back(LocalOp{OpKind::Copy, kResult, {1}, {0}});
        plan.programs[static_cast<size_t>(r)].steps.push_back(st);
    }
    finalize(plan);
    REQUIRE(check_plan(plan).ok);
    std::vector<Case> cases;
    for (size_t count : {1, 5, 1000})
        for (bool ip : {true, false}) cases.push_back(Case{GENX_DT_INT64, GENX_OP_SUM, count, ip});
    Status st = run_cases(plan, opts(16, 1), cases);
    INFO(st.message());
    CHECK(st.is_ok());
}

TEST_CASE("ring on P = 1..16 and larger with real data", "[executor]") {
    // Every (P, count) runs four type/op pairs, rotating through all valid
    // pairs so each pair meets many P and counts; in place alternates.
    const auto pairs = valid_pairs();
    size_t next = 0;
    for (int P : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 33}) {
        Plan plan = make_plan("ring", P);
        std::vector<Case> cases;
        for (size_t count : counts_for(P)) {
            const int per = P > 16 ? 2 : 4;
            for (int j = 0; j < per; ++j, ++next) {
                const auto& pr = pairs[next % pairs.size()];
                cases.push_back(Case{pr.first, pr.second, count, next % 2 == 0});
            }
        }
        Status st = run_cases(plan, ExecOptions(), cases);
        INFO("ring P=" << P << ": " << st.message());
        CHECK(st.is_ok());
    }
}

TEST_CASE("every type x op through ring for every P = 1..16", "[executor]") {
    // count P+1 gives one block of two elements and P-1 blocks of one; at
    // P = 3, 7 and 16 also 1000 elements, in place and not.
    for (int P = 1; P <= 16; ++P) {
        Plan plan = make_plan("ring", P);
        std::vector<Case> cases;
        bool ip = P % 2 == 0;
        for (const auto& pr : valid_pairs()) {
            cases.push_back(Case{pr.first, pr.second, static_cast<size_t>(P) + 1, ip = !ip});
            if (P == 3 || P == 7 || P == 16)
                for (bool both : {true, false}) cases.push_back(Case{pr.first, pr.second, 1000, both});
        }
        Status st = run_cases(plan, ExecOptions(), cases);
        INFO("ring P=" << P << ": " << st.message());
        CHECK(st.is_ok());
    }
}

TEST_CASE("small segments and windows 1 and 3", "[executor]") {
    for (int window : {1, 3}) {
        for (int P : {2, 5, 8}) {
            Plan plan = make_plan("ring", P);
            std::vector<Case> cases = {
                Case{GENX_DT_INT32, GENX_OP_SUM, 1000, true},
                Case{GENX_DT_DOUBLE, GENX_OP_MAX, static_cast<size_t>(P) + 1, false},
                Case{GENX_DT_UINT8, GENX_OP_BXOR, 4099, false},
            };
            if (P == 5) cases.push_back(Case{GENX_DT_FLOAT, GENX_OP_SUM, 65537, true});
            Status st = run_cases(plan, opts(64, window), cases);
            INFO("ring P=" << P << " segment=64 window=" << window << ": " << st.message());
            CHECK(st.is_ok());
        }
    }
}

TEST_CASE("every registered generator runs correctly on the executor", "[executor]") {
    const auto pairs = valid_pairs();
    size_t next = 0;
    for (const GeneratorInfo& g : generators()) {
        for (int P = 1; P <= 12; ++P) {
            Plan plan = make_plan(g.name, P);
            std::vector<Case> cases;
            for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(P) + 1, size_t{1000}}) {
                for (int j = 0; j < 2; ++j, ++next) {
                    const auto& pr = pairs[next % pairs.size()];
                    cases.push_back(Case{pr.first, pr.second, count, next % 2 == 1});
                }
            }
            const ExecOptions o = P % 2 ? ExecOptions() : opts(40, 2);
            Status st = run_cases(plan, o, cases);
            INFO(g.name << " P=" << P << " (" << format_exec_options(o) << "): " << st.message());
            CHECK(st.is_ok());
        }
    }
}

namespace {

struct Mat {
    uint64_t a, b, c, d;
};
Mat mul(const Mat& x, const Mat& y) {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
}
void mat_cb(void*, const void* in, void* inout, size_t count) {
    const Mat* i = static_cast<const Mat*>(in);
    Mat* io = static_cast<Mat*>(inout);
    for (size_t e = 0; e < count; ++e) io[e] = mul(i[e], io[e]);
}
Mat mat_of(int rank, size_t i) {
    const uint64_t h = mix(static_cast<uint64_t>(rank) * 131 + i);
    return {h & 0xf, (h >> 4) & 0xf, (h >> 8) & 0xf, (h >> 12) & 0xf};
}

}  // namespace

TEST_CASE("an order-preserving plan gives a non-commutative op its rank order", "[executor]") {
    for (int P = 1; P <= 8; ++P) {
        Plan plan = make_plan("rb", P, "root=0");
        REQUIRE(plan.order_preserving);
        const size_t count = 301;
        std::vector<Mat> expect(count);
        for (size_t i = 0; i < count; ++i) {
            expect[i] = mat_of(0, i);
            for (int r = 1; r < P; ++r) expect[i] = mul(expect[i], mat_of(r, i));
        }
        Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
            genx_reduce_cb cb{nullptr, mat_cb};
            ReduceKernel k;
            GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_OTHER, GENX_OP_OTHER, sizeof(Mat), &cb, false, &k));
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(plan, rank, count, sizeof(Mat), opts(200, 2), &sched));
            std::vector<Mat> in(count), out(count);
            for (size_t i = 0; i < count; ++i) in[i] = mat_of(rank, i);
            std::vector<unsigned char> scratch(sched.scratch_bytes);
            Execution ex;
            GENX_RETURN_IF_ERROR(ex.start(sched, in.data(), out.data(), scratch.data(), scratch.size(), k, t));
            GENX_RETURN_IF_ERROR(ex.run());
            if (std::memcmp(out.data(), expect.data(), count * sizeof(Mat)) != 0)
                return Status::internal("product not in rank order");
            return Status::ok();
        });
        INFO("rb P=" << P << ": " << st.message());
        CHECK(st.is_ok());
    }
}

TEST_CASE("transport errors surface with algorithm, rank and step", "[executor]") {
    Plan plan = make_plan("ring", 3);
    // Buffers outlive run_ranks: the failing rank leaves receives posted
    // that a peer may still match before the fabric is aborted.
    std::vector<std::vector<int32_t>> bufs(3, std::vector<int32_t>(30));
    std::vector<std::vector<unsigned char>> scratches(3, std::vector<unsigned char>(30 * 4));
    Status st = run_ranks(3, [&](int rank, Transport& t) -> Status {
        FailingTransport ft(t, rank == 1 ? 2 : 1 << 30);
        RankSchedule sched;
        GENX_RETURN_IF_ERROR(compile(plan, rank, 30, 4, ExecOptions(), &sched));
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k));
        std::vector<int32_t>& buf = bufs[static_cast<size_t>(rank)];
        std::vector<unsigned char>& scratch = scratches[static_cast<size_t>(rank)];
        Execution ex;
        GENX_RETURN_IF_ERROR(ex.start(sched, nullptr, buf.data(), scratch.data(), scratch.size(), k, ft));
        Status s = ex.run();
        bool done = false;
        if (!s.is_ok() && ex.progress(&done).message() != s.message())
            return Status::internal("a failed execution must keep returning its error");
        return s;
    });
    INFO(st.message());
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("rank 1: executor (ring, rank 1, step 2): planted isend failure") !=
          std::string::npos);
}

TEST_CASE("start validates buffers against the schedule", "[executor]") {
    Plan plan = make_plan("ring", 2);
    RankSchedule sched;
    REQUIRE(compile(plan, 0, 10, 4, ExecOptions(), &sched).is_ok());
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k).is_ok());
    LoopbackFabric f(2);
    std::vector<int32_t> buf(10);
    std::vector<unsigned char> scratch(sched.scratch_bytes);
    Execution ex;
    CHECK(ex.start(sched, nullptr, buf.data(), scratch.data(), sched.scratch_bytes - 1, k, f.transport(0))
              .code() == Code::InvalidArgument);
    ReduceKernel k8;
    REQUIRE(resolve_kernel(GENX_DT_INT64, GENX_OP_SUM, 8, nullptr, &k8).is_ok());
    CHECK(ex.start(sched, nullptr, buf.data(), scratch.data(), scratch.size(), k8, f.transport(0))
              .code() == Code::InvalidArgument);
    bool done = false;
    CHECK_FALSE(ex.progress(&done).is_ok());
}

#define REQUIRE_OK(expr)                 \
    do {                                 \
        const Status st_ = (expr);       \
        INFO(st_.message());             \
        REQUIRE(st_.is_ok());            \
    } while (0)

namespace {

// Drives the ranks of a plan in one thread, round robin, one progress()
// call per rank per turn, the way run() would between transport calls;
// returns per rank how many of its calls ended without finishing (each is
// a transport call in run()).
std::vector<int> round_robin_stalls(const Plan& plan, LoopbackFabric& fabric, size_t count) {
    const int P = plan.nranks;
    std::vector<RankSchedule> sched(static_cast<size_t>(P));
    std::vector<Execution> ex(static_cast<size_t>(P));
    std::vector<std::vector<unsigned char>> buf(static_cast<size_t>(P)), scratch(static_cast<size_t>(P));
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k).is_ok());
    for (int r = 0; r < P; ++r) {
        const size_t i = static_cast<size_t>(r);
        REQUIRE(compile(plan, r, count, 4, opts(0, 1), &sched[i]).is_ok());
        buf[i] = make_input(GENX_DT_INT32, GENX_OP_SUM, r, count);
        scratch[i].resize(sched[i].scratch_bytes);
        REQUIRE(ex[i].start(sched[i], nullptr, buf[i].data(), scratch[i].data(), scratch[i].size(), k,
                            fabric.transport(r)).is_ok());
    }
    std::vector<int> stalls(static_cast<size_t>(P), 0);
    std::vector<bool> finished(static_cast<size_t>(P), false);
    for (int left = P, turns = 0; left > 0; ++turns) {
        REQUIRE(turns < 100000);
        for (int r = 0; r < P; ++r) {
            const size_t i = static_cast<size_t>(r);
            if (finished[i]) continue;
            bool done = false;
            REQUIRE(ex[i].progress(&done).is_ok());
            if (done) {
                finished[i] = true;
                --left;
            } else {
                ++stalls[i];
            }
        }
    }
    const std::vector<unsigned char> expected = reference_allreduce(GENX_DT_INT32, GENX_OP_SUM, P, count);
    for (int r = 0; r < P; ++r)
        REQUIRE(first_difference(GENX_DT_INT32, buf[static_cast<size_t>(r)].data(), expected.data(),
                                 count) < 0);
    return stalls;
}

}  // namespace

TEST_CASE("a step whose transfers complete on posting costs no transport call", "[executor][hot]") {
    // With eager sends, a rank that reaches a step after its peers posted
    // theirs finds every message there: it must finish the step in the
    // call that posts it.  Without the re-test every step costs one stall
    // per rank (stalls >= steps); with it, the late rank overtakes steps.
    for (const char* alg : {"ring", "rhd"}) {
        for (int P : {2, 4, 8}) {
            CAPTURE(alg, P);
            const Plan plan = make_plan(alg, P);
            LoopbackFabric eager(P, size_t{1} << 20);
            const std::vector<int> stalls = round_robin_stalls(plan, eager, 64 * static_cast<size_t>(P));
            int total = 0;
            for (int s : stalls) total += s;
            const size_t steps = plan.programs[0].steps.size();
            CAPTURE(stalls, steps);
            CHECK(static_cast<size_t>(total) < steps * static_cast<size_t>(P));
            // At least one rank gains a whole step on every two.
            CHECK(static_cast<size_t>(*std::min_element(stalls.begin(), stalls.end())) <= (steps + 1) / 2 + 1);
        }
    }
}

TEST_CASE("run() waits on a fully posted step instead of polling", "[executor][hot]") {
    // Unsegmented transfers: every step is posted in one pass, so run()
    // never needs the transport's progress(), only wait_all (at most once
    // per step).  With one-element segments and window 1, the windows must
    // be refilled, which takes progress() calls.
    for (int P : {2, 3, 5, 8}) {
        CAPTURE(P);
        const Plan plan = make_plan("ring", P);
        const size_t steps = plan.programs[0].steps.size();
        const size_t count = 16 * static_cast<size_t>(P);
        for (const bool segmented : {false, true}) {
            CAPTURE(segmented);
            std::vector<uint64_t> progress_calls(static_cast<size_t>(P)), waits(static_cast<size_t>(P));
            REQUIRE_OK(run_ranks(P, [&](int rank, Transport& t) -> Status {
                RankSchedule sched;
                GENX_RETURN_IF_ERROR(compile(plan, rank, count, 4, segmented ? opts(4, 1) : opts(0, 4), &sched));
                ReduceKernel k;
                GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 4, nullptr, &k));
                std::vector<unsigned char> buf = make_input(GENX_DT_INT32, GENX_OP_SUM, rank, count);
                std::vector<unsigned char> scratch(sched.scratch_bytes);
                Execution ex;
                GENX_RETURN_IF_ERROR(ex.start(sched, nullptr, buf.data(), scratch.data(), scratch.size(), k, t));
                GENX_RETURN_IF_ERROR(ex.run());
                progress_calls[static_cast<size_t>(rank)] = ex.progress_calls();
                waits[static_cast<size_t>(rank)] = ex.waits();
                return Status::ok();
            }));
            for (int r = 0; r < P; ++r) {
                const size_t i = static_cast<size_t>(r);
                CAPTURE(r, progress_calls[i], waits[i]);
                if (!segmented) {
                    CHECK(progress_calls[i] == 0);
                    CHECK(waits[i] <= steps);
                } else {
                    CHECK(progress_calls[i] > 0);
                }
            }
        }
    }
}

TEST_CASE("the eager loopback completes small sends at once and keeps order", "[loopback]") {
    LoopbackFabric f(2, 8);
    Transport& a = f.transport(0);
    Transport& b = f.transport(1);
    const int x = 7, y = 9;
    const std::vector<unsigned char> big(64, 3);
    Request s1, s2, s3, r1, r2, r3;
    REQUIRE_OK(a.isend(&x, sizeof x, 1, &s1));
    bool done = false;
    REQUIRE_OK(a.test(s1, &done));
    CHECK(done);  // eager: no receive needed
    REQUIRE_OK(a.isend(big.data(), big.size(), 1, &s2));
    REQUIRE_OK(a.test(s2, &done));
    CHECK_FALSE(done);  // over the limit: rendezvous
    REQUIRE_OK(a.isend(&y, sizeof y, 1, &s3));
    int gx = 0, gy = 0;
    std::vector<unsigned char> gbig(64, 0);
    REQUIRE_OK(b.irecv(&gx, sizeof gx, 0, &r1));
    REQUIRE_OK(b.irecv(gbig.data(), gbig.size(), 0, &r2));
    REQUIRE_OK(b.irecv(&gy, sizeof gy, 0, &r3));
    for (Request r : {r1, r2, r3}) {
        REQUIRE_OK(b.test(r, &done));
        CHECK(done);
    }
    for (Request r : {s2, s3}) {
        REQUIRE_OK(a.test(r, &done));
        CHECK(done);
    }
    CHECK(gx == 7);
    CHECK(gy == 9);
    CHECK(gbig == big);
}

namespace {
TopologyView network_view(const std::string& spec, const std::string& json = "") {
    Topology topo;
    const Status st = json.empty() ? topology_preset(spec, &topo) : parse_graph(json, "test.json", &topo);
    INFO(spec << ": " << st.message());
    REQUIRE(st);
    std::vector<std::string> names;
    for (const Node& n : topo.nodes)
        if (n.kind == TopoKind::Host) names.push_back(n.name);
    TopologyView v;
    REQUIRE(to_view(topo, names, &v));
    return v;
}
}  // namespace

TEST_CASE("route_bdp_bytes: a route's rate times the longest route latency", "[executor]") {
    // A line of three sites, 10 Gbit/s and 20 ms, one link 100 Gbit/s and
    // 5 ms: the fastest link (12.5 GB/s) times twice the first site's
    // eccentricity (2 links, so 4 ≥ the diameter 2) times the largest
    // latency (20 ms) = 1 GB, far beyond 4 x 1 MiB.
    const TopologyView wan = network_view("wan", R"({"genx_graph": 1,
        "classes": {"slow": {"rate": "10 Gbit/s", "latency": "20 ms"},
                    "fast": {"rate": "100 Gbit/s", "latency": "5 ms"}},
        "hosts": ["a", "b", "c"],
        "links": [{"a": "a", "b": "b", "class": "slow"}, {"a": "b", "b": "c", "class": "fast"}]})");
    CHECK(route_bdp_bytes(wan) == Approx(12.5e9 * 4 * 20e-3));
    CHECK(long_fat_routes(&wan));
    // A torus of 16 GB/s, 150 ns links: eccentricity 4 everywhere, bound
    // 8 hops, 19.2 kB.
    const TopologyView torus = network_view("torus:4x4");
    CHECK(route_bdp_bytes(torus) == Approx(16e9 * 8 * 150e-9));
    CHECK_FALSE(long_fat_routes(&torus));
    // tree:8x100: uplinks of 100 x 10 Gbit/s, but every route starts on a
    // 10 Gbit/s host link: 1.25 GB/s x (20 + 20 us) = 50 kB.
    const TopologyView tree = network_view("tree:8x100");
    CHECK(route_bdp_bytes(tree) == Approx(1.25e9 * 40e-6));
    CHECK_FALSE(long_fat_routes(&tree));
    // A 4096-host torus is priced like any other (no size cap).
    CHECK(route_bdp_bytes(network_view("torus:16x16x16")) == Approx(16e9 * 2 * 24 * 150e-9));
    CHECK_FALSE(long_fat_routes(nullptr));
    CHECK(route_bdp_bytes(TopologyView{}) == 0);
}
