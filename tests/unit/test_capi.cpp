// The C API end to end: genx_comm_create validation, genx_allreduce over a
// genx_transport_ops table that wraps the loopback, cached schedules,
// declines (and that they send nothing), errors, and the verbose log.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "genx/genx_core.h"
#include "genx/plan_cache.hpp"
#include "tests/support/loopback.hpp"
#include "tests/support/transport_ops.hpp"
#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"
#include "capi_calls.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

namespace {

// Every size of MPI_Allreduce's table and of the non-blocking one.
constexpr int kBothCalls = GENX_CALLS_BLOCKING | GENX_CALLS_NONBLOCKING;

struct LogSink {
    std::vector<std::string> lines;
};

void collect(void* ctx, int /*level*/, const char* msg) { static_cast<LogSink*>(ctx)->lines.push_back(msg); }

// Progresses a request until it completes; the core's words on an error.
Status drive(genx_request* req) {
    char why[256] = "";
    for (int done = 0; !done;)
        if (genx_request_progress(req, &done, why, sizeof why) != GENX_OK)
            return Status::internal(std::string("progress: ") + why);
    return Status::ok();
}

genx_config config(const char* algorithm, const char* params, int verbose, LogSink* sink) {
    genx_config c{};
    c.algorithm = algorithm;
    c.params = params;
    c.verbose = verbose;
    c.log = sink != nullptr ? collect : nullptr;
    c.log_ctx = sink;
    return c;
}

std::string create_error(int rank, int size, const genx_config* cfg) {
    char err[512] = "unset";
    genx_comm* c = genx_comm_create(rank, size, 0, 0, nullptr, cfg, err, sizeof err);
    if (c != nullptr) {
        genx_comm_destroy(c);
        return "";
    }
    return err;
}

// Counts the operations posted through it.
class CountingTransport final : public Transport {
  public:
    explicit CountingTransport(Transport& inner) : inner_(inner) {}
    Status isend(const void* b, size_t n, int peer, Request* r) override {
        ++posts;
        return inner_.isend(b, n, peer, r);
    }
    Status irecv(void* b, size_t n, int peer, Request* r) override {
        ++posts;
        return inner_.irecv(b, n, peer, r);
    }
    Status test(Request r, bool* d) override { return inner_.test(r, d); }
    Status progress() override { return inner_.progress(); }
    int posts = 0;

  private:
    Transport& inner_;
};

Status ensure(bool cond, const std::string& what) {
    return cond ? Status::ok() : Status::internal(what);
}

// Writes a rules file of one "model" rule over `families` (a JSON list)
// with the "fallback" incumbent's `margin`.
void write_one_model_rule(const std::string& path, const std::string& families, double margin) {
    std::ofstream out(path);
    out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [\n"
        << "  {\"algorithm\": \"model\", \"families\": " << families << ", \"margin\": " << margin
        << "}]}\n";
}

}  // namespace

TEST_CASE("genx_comm_create validates the configuration", "[capi]") {
    genx_config c = config("nosuch", "", 0, nullptr);
    std::string e = create_error(0, 4, &c);
    CHECK(e.find("unknown algorithm 'nosuch'") != std::string::npos);
    CHECK(e.find("ring") != std::string::npos);

    c = config("ring", "root=1", 0, nullptr);
    e = create_error(0, 4, &c);
    CHECK(e.find("'root'") != std::string::npos);

    c = config("rb", "root=9", 0, nullptr);  // the generator rejects the value
    e = create_error(0, 4, &c);
    CHECK(e.find("root '9'") != std::string::npos);

    c = config("ring", "segment=abc", 0, nullptr);
    e = create_error(0, 4, &c);
    CHECK(e.find("segment") != std::string::npos);

    c = config("ring", "window", 0, nullptr);
    CHECK(create_error(0, 4, &c).find("not key=value") != std::string::npos);

    c = config("auto", "root=1", 0, nullptr);
    CHECK(create_error(0, 4, &c).find("need a forced algorithm") != std::string::npos);

    c = config("ring", "", 0, nullptr);
    CHECK(create_error(4, 4, &c).find("rank 4 of size 4") != std::string::npos);

    CHECK(create_error(0, 4, &c).empty());
    c = config("auto", "segment=64K,window=2", 0, nullptr);
    CHECK(create_error(1, 4, &c).empty());
    CHECK(create_error(0, 1, nullptr).empty());
}

TEST_CASE("a one-rank communicator takes any forced algorithm: its allreduce is a copy", "[capi]") {
    // genx keeps one-rank communicators where device memory is possible;
    // parameters shaping P ranks' exchanges, or a topology the algorithm
    // needs, must not make genx refuse them (or print an error for them).
    for (const auto& ap : std::vector<std::pair<const char*, const char*>>{
             {"butterfly", "r=2"}, {"butterfly", "group=2x2"}, {"hcps", "groups=2x3"},
             {"rb", "root=3"}, {"gentree", ""}, {"ring2d", ""}, {"ring", "segment=64K"}}) {
        INFO(ap.first << " " << ap.second);
        genx_config c = config(ap.first, ap.second, 0, nullptr);
        CHECK(create_error(0, 1, &c).empty());
        const Status st = run_ranks(1, [&](int rank, Transport& t) -> Status {
            genx_transport_ops ops = transport_ops_for(&t);
            char err[512];
            genx_comm* comm = genx_comm_create(rank, 1, 0, 0, nullptr, &c, err, sizeof err);
            if (comm == nullptr) return Status::internal(err);
            std::vector<float> in = {1.5f, -2.0f, 3.25f, 7.0f, 0.5f}, out(5, 0.0f);
            char why[256] = "";
            const int rc = genx_allreduce(comm, in.data(), out.data(), in.size(), GENX_DT_FLOAT, 4,
                                          GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
            genx_comm_destroy(comm);
            if (rc != GENX_OK) return Status::internal(why);
            return ensure(out == in, "the result is not a copy of the input");
        });
        CHECK(st.is_ok());
    }
    // Said at verbosity 1, and kept when the rank is placed on a Slurm
    // topology (the forced plan is made again there).
    LogSink sink;
    genx_config v = config("butterfly", "r=2", 1, &sink);
    char err[512];
    genx_comm* one = genx_comm_create(0, 1, 0, 0, nullptr, &v, err, sizeof err);
    REQUIRE(one != nullptr);
    bool said = false;
    for (const std::string& l : sink.lines)
        said = said || (l.find("one-rank communicator: ") != std::string::npos &&
                        l.find("runs butterfly with default parameters") != std::string::npos);
    CHECK(said);
    const char* addr[] = {"spine.leaf1.n1"};
    const char* pat[] = {"switch.switch.node"};
    CHECK(genx_comm_place_topology_addrs(one, addr, pat, nullptr) == 1);
    const Status placed = run_ranks(1, [&](int, Transport& t) -> Status {
        genx_transport_ops ops = transport_ops_for(&t);
        float in = 2.5f, out = 0.0f;
        char why[256] = "";
        const int rc = genx_allreduce(one, &in, &out, 1, GENX_DT_FLOAT, 4, GENX_OP_SUM, 1, nullptr,
                                      &ops, nullptr, why, sizeof why);
        return rc == GENX_OK && out == in ? Status::ok() : Status::internal(why);
    });
    CHECK(placed.is_ok());
    genx_comm_destroy(one);
    // Larger communicators still validate the same parameters.
    genx_config c = config("butterfly", "r=5", 0, nullptr);
    CHECK_FALSE(create_error(0, 4, &c).empty());
    c = config("rb", "root=3", 0, nullptr);
    CHECK_FALSE(create_error(0, 2, &c).empty());
}

TEST_CASE("genx_algorithm_names lists the registry", "[capi]") {
    std::string expect;
    for (const GeneratorInfo& g : generators()) expect += (expect.empty() ? "" : ",") + g.name;
    CHECK(std::string(genx_algorithm_names()) == expect);
    CHECK(expect.find("ring") != std::string::npos);
}

TEST_CASE("genx_allreduce end to end with cached schedules and a verbose log", "[capi]") {
    const int P = 5;
    std::vector<LogSink> logs(P);
    struct Call {
        genx_dtype t;
        genx_op op;
        size_t count;
        bool in_place;
    };
    // Repeats and a cycle of more counts than the schedule cache holds, so
    // hits, misses and evictions all happen; results must stay right.
    const std::vector<Call> calls = {
        {GENX_DT_INT32, GENX_OP_SUM, 1000, false}, {GENX_DT_DOUBLE, GENX_OP_MAX, 1000, true},
        {GENX_DT_INT32, GENX_OP_SUM, 1000, true},  {GENX_DT_UINT8, GENX_OP_BXOR, 37, false},
        {GENX_DT_INT64, GENX_OP_PROD, 3, false},   {GENX_DT_INT64, GENX_OP_SUM, 17, true},
        {GENX_DT_BOOL, GENX_OP_LOR, 100, false},   {GENX_DT_FLOAT, GENX_OP_MIN, 999, true},
        {GENX_DT_INT32, GENX_OP_SUM, 1000, false},
    };
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("ring", "segment=256,window=2", 1, &logs[static_cast<size_t>(rank)]);
        char err[256];
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
        if (comm == nullptr) return Status::internal(err);
        const genx_transport_ops ops = transport_ops_for(&t);
        Status result;
        for (const Call& c : calls) {
            const size_t es = type_size(c.t);
            std::vector<unsigned char> in = make_input(c.t, c.op, rank, c.count);
            std::vector<unsigned char> out(c.count * es, 0xEE);
            if (c.in_place) out = in;
            char why[256] = "";
            const int rc =
                genx_allreduce(comm, c.in_place ? nullptr : in.data(), out.data(), c.count, c.t, es,
                               c.op, 1, nullptr, &ops, nullptr, why, sizeof why);
            const std::string what = std::string(dtype_name(c.t)) + " " + op_name(c.op) + " " +
                                     std::to_string(c.count);
            if (rc != GENX_OK) {
                result = Status::internal(what + ": rc " + std::to_string(rc) + ": " + why);
                break;
            }
            const auto ref = reference_allreduce(c.t, c.op, P, c.count);
            if (first_difference(c.t, out.data(), ref.data(), c.count) >= 0) {
                result = Status::internal(what + ": wrong result");
                break;
            }
        }
        genx_comm_destroy(comm);
        return result;
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    const std::string tail = " on 5 ranks: ring (segment=256,window=2) [forced by coll_genx_allreduce_algorithm]";
    const std::vector<std::string> expect = {
        "genx: allreduce 4000 B (size class 2K)" + tail,   // int32 x 1000
        "genx: allreduce 8000 B (size class 4K)" + tail,   // double x 1000
        "genx: allreduce 37 B (size class 32)" + tail,     // uint8 x 37
        "genx: allreduce 24 B (size class 16)" + tail,     // int64 x 3
        "genx: allreduce 136 B (size class 128)" + tail,   // int64 x 17
        "genx: allreduce 100 B (size class 64)" + tail,    // bool x 100
    };
    // float x 999 = 3996 B falls in the 2K class already logged: no line.
    CHECK(logs[0].lines == expect);
    for (int r = 1; r < P; ++r) CHECK(logs[static_cast<size_t>(r)].lines.empty());
}

TEST_CASE("auto uses the built-in rules; verbose 2 logs on every rank", "[capi]") {
    // Built-in defaults on 3 ranks, one per node: 80 B is left to the
    // displaced component (declined, nothing sent), 16 KiB runs ring; with
    // the placement unknown both are left to it.
    const int P = 3;
    for (const bool placed : {true, false}) {
        CAPTURE(placed);
        std::vector<LogSink> logs(P);
        Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
            genx_config cfg = config("auto", "", 2, &logs[static_cast<size_t>(rank)]);
            genx_comm* comm = placed ? genx_comm_create(rank, P, P, 1, nullptr, &cfg, nullptr, 0)
                                     : genx_comm_create(rank, P, 0, 0, nullptr, &cfg, nullptr, 0);
            if (comm == nullptr) return Status::internal("create failed");
            const genx_transport_ops ops = transport_ops_for(&t);
            char why[256] = "";
            std::vector<double> small(10, rank + 1.0);
            const int rc_small =
                genx_allreduce(comm, nullptr, small.data(), small.size(), GENX_DT_DOUBLE, 8,
                               GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
            std::vector<double> big(2048, rank + 1.0);
            const int rc_big =
                genx_allreduce(comm, nullptr, big.data(), big.size(), GENX_DT_DOUBLE, 8,
                               GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
            // What the glue asks before anything else.
            const char* reason = nullptr;
            const int defers_small = genx_comm_defers(comm, GENX_CALLS_BLOCKING, 80, 80 / 4, &reason);
            const std::string small_reason = reason != nullptr ? reason : "";
            const int defers_big = genx_comm_defers(comm, GENX_CALLS_BLOCKING, 16384, 16384 / 4, nullptr);
            genx_comm_destroy(comm);
            GENX_RETURN_IF_ERROR(ensure(defers_small == 1, "genx_comm_defers(80 B) is not 1"));
            GENX_RETURN_IF_ERROR(ensure(small_reason.find("left to the component genx displaced") !=
                                            std::string::npos,
                                        "genx_comm_defers gave no reason"));
            GENX_RETURN_IF_ERROR(ensure(defers_big == (placed ? 0 : 1), "genx_comm_defers(16 KiB)"));
            GENX_RETURN_IF_ERROR(ensure(rc_small == GENX_DECLINE, "80 B was not declined"));
            if (!placed) return ensure(rc_big == GENX_DECLINE, "16 KiB without placement ran");
            GENX_RETURN_IF_ERROR(ensure(rc_big == GENX_OK, why));
            return ensure(big == std::vector<double>(2048, 6.0), "wrong sum");
        });
        INFO(st.message());
        REQUIRE(st.is_ok());
        for (int r = 0; r < P; ++r) {
            const auto& lines = logs[static_cast<size_t>(r)].lines;
            REQUIRE(lines.size() == 2);
            INFO(lines[0] + "\n" + lines[1]);
            CHECK(lines[0].rfind("genx: allreduce 80 B on 3 ranks declined, using the fallback: rule "
                                 "built-in defaults:",
                                 0) == 0);
            CHECK(lines[0].find("left to the component genx displaced") != std::string::npos);
            if (placed) {
                CHECK(lines[1].rfind("genx: allreduce 16384 B (size class 16K) on 3 ranks: ring "
                                     "(segment=1M,window=4) [rule built-in defaults:",
                                     0) == 0);
            } else {
                CHECK(lines[1].find("16384 B on 3 ranks declined") != std::string::npos);
            }
        }
    }
}

TEST_CASE("non-blocking calls read their own decisions", "[capi]") {
    // 6 nodes of one rank, built-in defaults: MPI_Allreduce defers below
    // 16 KiB, MPI_Iallreduce runs rd below 8 KiB (and iallreduce itself
    // runs it on the loopback transport: exact sums).
    const int P = 6;
    std::vector<LogSink> logs(P);
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("auto", "", 1, &logs[static_cast<size_t>(rank)]);
        genx_comm* comm = genx_comm_create(rank, P, P, 1, nullptr, &cfg, nullptr, 0);
        if (comm == nullptr) return Status::internal("create");
        char err[256] = "";
        if (genx_comm_prepare(comm, err, sizeof err) != GENX_OK) return Status::internal(err);
        Status result;
        const char* reason = nullptr;
        if (!genx_comm_defers(comm, GENX_CALLS_BLOCKING, 64, 64 / 4, &reason) ||
            genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, 64, 64 / 4, &reason) ||
            !genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, 8192, 8192 / 4, &reason) ||
            genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, 1 << 20, (1 << 20) / 4, &reason) ||
            genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, &reason))
            result = Status::internal("blocking/non-blocking deferral not as the defaults say");
        const genx_transport_ops ops = transport_ops_for(&t);
        std::vector<int64_t> in(8, rank + 1), out(8, 0);
        genx_request* req = nullptr;
        char why[256] = "";
        if (result.is_ok() &&
            iallreduce(comm, in.data(), out.data(), 8, GENX_DT_INT64, 8, GENX_OP_SUM, 1, nullptr,
                       &ops, &req, why, sizeof why) != GENX_OK)
            result = Status::internal(std::string("iallreduce: ") + why);
        if (result.is_ok()) result = drive(req);
        for (int64_t v : out)
            if (result.is_ok() && v != 21) result = Status::internal("wrong sum " + std::to_string(v));
        genx_request_free(req);
        // The blocking call of the same size declines (the glue would hand
        // it to tuned).
        if (result.is_ok() &&
            genx_allreduce(comm, in.data(), out.data(), 8, GENX_DT_INT64, 8, GENX_OP_SUM, 1,
                           nullptr, &ops, nullptr, why, sizeof why) != GENX_DECLINE)
            result = Status::internal("a blocking 64 B allreduce did not decline");
        genx_comm_destroy(comm);
        return result;
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    bool named = false;
    for (const auto& l : logs[0].lines)
        named = named || (l.find("genx: iallreduce 64 B") != std::string::npos &&
                          l.find(" on 6 ranks: rd (") != std::string::npos);
    CHECK(named);
}

TEST_CASE("genx_comm_defers_all_calls: the glue steps aside only where no size runs a plan", "[capi]") {
    // nodes, ranks per node -> does every size defer under the built-in
    // defaults?  One node: yes; 4 nodes of one rank: ring from 128 KiB;
    // placement unknown (0/0): yes.
    struct Case { int nodes, ppn; int expect; const char* reason; };
    for (const Case& c : {Case{1, 4, 1, "one node"}, Case{4, 1, 0, nullptr},
                          Case{0, 0, 1, "left to the component genx displaced"}}) {
        CAPTURE(c.nodes, c.ppn);
        genx_config cfg = config("auto", "", 0, nullptr);
        genx_comm* comm = genx_comm_create(0, 4, c.nodes, c.ppn, nullptr, &cfg, nullptr, 0);
        REQUIRE(comm != nullptr);
        const char* reason = nullptr;
        // Not before the table is built: the answer would be a guess.
        CHECK(genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, &reason) == 0);
        char err[256] = "";
        REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
        CHECK(genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, &reason) == c.expect);
        if (c.expect) {
            REQUIRE(reason != nullptr);
            CHECK(std::string(reason).find(c.reason) != std::string::npos);
        }
        genx_comm_destroy(comm);
    }
    // A forced algorithm never defers.
    genx_config cfg = config("ring", "", 0, nullptr);
    genx_comm* comm = genx_comm_create(0, 4, 1, 4, nullptr, &cfg, nullptr, 0);
    REQUIRE(comm != nullptr);
    char err[256] = "";
    REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
    CHECK(genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, nullptr) == 0);
    genx_comm_destroy(comm);
}

TEST_CASE("genx_comm_defers_all_calls: blocking and non-blocking calls step aside apart", "[capi]") {
    // (ranks, nodes, ppn) under the built-in defaults -> does every size of
    // MPI_Allreduce's table, of MPI_Iallreduce's, and of both defer?
    struct Case { int size, nodes, ppn; int blocking, nonblocking; };
    for (const Case& c : {Case{4, 1, 4, 1, 1},    // one node: everything defers
                          Case{2, 2, 1, 1, 0},    // 2 hosts: rd for MPI_Iallreduce below 2 KiB only
                          Case{4, 4, 1, 0, 0},    // 4 hosts: ring from 128 KiB, rd iallreduce below 8 KiB
                          Case{3, 3, 1, 0, 0}}) { // 3 hosts: ring from 16 KiB, both tables alike
        CAPTURE(c.size, c.nodes, c.ppn);
        genx_config cfg = config("auto", "", 0, nullptr);
        genx_comm* comm = genx_comm_create(0, c.size, c.nodes, c.ppn, nullptr, &cfg, nullptr, 0);
        REQUIRE(comm != nullptr);
        CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, GENX_EVERY_SIZE, 0, nullptr) ==
              0);  // not built yet
        char err[256] = "";
        REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
        const char* reason = nullptr;
        CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, GENX_EVERY_SIZE, 0, &reason) == c.blocking);
        if (c.blocking) CHECK(reason != nullptr);
        CHECK(genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, GENX_EVERY_SIZE, 0, nullptr) ==
              c.nonblocking);
        const int both = c.blocking && c.nonblocking ? 1 : 0;
        CHECK(genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, nullptr) == both);
        // No kind, or an unknown one, is never "all deferred".
        CHECK(genx_comm_defers(comm, 0, GENX_EVERY_SIZE, 0, nullptr) == 0);
        CHECK(genx_comm_defers(comm, 4, GENX_EVERY_SIZE, 0, nullptr) == 0);
        genx_comm_destroy(comm);
    }
}

TEST_CASE("iallreduce and persistent allreduce: exact results, restarts, misuse refused", "[capi]") {
    // Every rank: one iallreduce, then one persistent request started 5
    // times with new inputs in the same buffers (the plan and scratch are
    // bound at init), for ring and butterfly; P = 5 (not a power of two).
    const int P = 5;
    for (const char* alg : {"ring", "butterfly"}) {
        CAPTURE(alg);
        std::vector<LogSink> logs(P);
        Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
            genx_config cfg = config(alg, "", 1, &logs[static_cast<size_t>(rank)]);
            char err[256];
            genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
            if (comm == nullptr) return Status::internal(err);
            const genx_transport_ops ops = transport_ops_for(&t);
            char why[256] = "";
            const size_t n = 1001;
            std::vector<double> in(n), out(n, -1.0);
            for (size_t i = 0; i < n; ++i) in[i] = rank * 1000.0 + static_cast<double>(i);
            genx_request* req = nullptr;
            Status result;
            if (iallreduce(comm, in.data(), out.data(), n, GENX_DT_DOUBLE, 8, GENX_OP_SUM, 1,
                           nullptr, &ops, &req, why, sizeof why) != GENX_OK)
                result = Status::internal(std::string("iallreduce: ") + why);
            if (result.is_ok()) result = drive(req);
            genx_request_free(req);
            for (size_t i = 0; i < n && result.is_ok(); ++i)
                if (out[i] != 10000.0 + 5.0 * static_cast<double>(i))
                    result = Status::internal("iallreduce: wrong sum at " + std::to_string(i));
            req = nullptr;
            if (result.is_ok() && genx_allreduce_init(comm, 1, in.data(), out.data(), n,
                                                      GENX_DT_DOUBLE, 8, GENX_OP_SUM, 1, nullptr,
                                                      &ops, &req, why, sizeof why) != GENX_OK)
                result = Status::internal(std::string("allreduce_init: ") + why);
            // An inactive persistent request is complete (MPI_Wait returns).
            int idle = 0;
            if (result.is_ok() && (genx_request_progress(req, &idle, why, sizeof why) != GENX_OK || !idle))
                result = Status::internal("an unstarted persistent request is not complete");
            for (int round = 0; round < 5 && result.is_ok(); ++round) {
                for (size_t i = 0; i < n; ++i) in[i] = (rank + 1) * (round + 1.0) + static_cast<double>(i);
                std::fill(out.begin(), out.end(), -1.0);
                if (genx_request_start(req, why, sizeof why) != GENX_OK) {
                    result = Status::internal(std::string("start: ") + why);
                    break;
                }
                // Starting what is in flight is refused (unless it already ended).
                int done = 0;
                if (genx_request_progress(req, &done, why, sizeof why) == GENX_OK && !done &&
                    genx_request_start(req, why, sizeof why) != GENX_ERROR) {
                    result = Status::internal("a second start of a request in flight was accepted");
                    break;
                }
                result = drive(req);
                for (size_t i = 0; i < n && result.is_ok(); ++i)
                    if (out[i] != 15.0 * (round + 1.0) + 5.0 * static_cast<double>(i))
                        result = Status::internal("round " + std::to_string(round) + ": wrong sum at " +
                                                  std::to_string(i));
            }
            genx::CommStats stats{};
            get_stats(comm, &stats);
            genx_request_free(req);
            genx_comm_destroy(comm);
            if (result.is_ok() && stats.calls != 6)
                result = Status::internal("calls counted: " + std::to_string(stats.calls) + ", not 6");
            return result;
        });
        INFO(st.message());
        REQUIRE(st.is_ok());
        // Rank 0 names each kind of call once at verbosity 1.
        const auto& lines = logs[0].lines;
        auto has = [&](const std::string& prefix) {
            for (const auto& l : lines)
                if (l.rfind(prefix, 0) == 0) return true;
            return false;
        };
        CHECK(has("genx: iallreduce 8008 B"));
        CHECK(has("genx: persistent allreduce 8008 B"));
    }
}

TEST_CASE("iallreduce requests are pooled per communicator and reused exactly", "[capi]") {
    // Counts that grow and shrink past the pooled scratch limit, count 0, a
    // persistent request between them, on P = 3; every result exact, and a
    // freed request is the next call's (no allocation in the steady state).
    // One call in flight at a time: the loopback transport has no tags to
    // keep two apart (the glue gives each request its own).
    const int P = 3;
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("ring", "", 0, nullptr);
        char err[256];
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
        if (comm == nullptr) return Status::internal(err);
        const genx_transport_ops ops = transport_ops_for(&t);
        char why[256] = "";
        Status result;
        genx_request* last_freed = nullptr;
        int reused = 0;
        const std::vector<size_t> counts = {1001, 0, 7, 300000, 5, 64, 0, 2, 300001};
        for (size_t k = 0; k < counts.size() && result.is_ok(); ++k) {
            const size_t n = counts[k];
            std::vector<int64_t> in(n), out(n, -1);
            for (size_t i = 0; i < n; ++i) in[i] = rank * 7 + static_cast<int64_t>(i + k);
            genx_request* req = nullptr;
            const bool persistent = k == 4;
            const int rc =
                persistent
                    ? genx_allreduce_init(comm, 1, in.data(), out.data(), n, GENX_DT_INT64, 8,
                                          GENX_OP_SUM, 1, nullptr, &ops, &req, why, sizeof why)
                    : iallreduce(comm, in.data(), out.data(), n, GENX_DT_INT64, 8, GENX_OP_SUM, 1,
                                 nullptr, &ops, &req, why, sizeof why);
            if (rc != GENX_OK) {
                result = Status::internal(std::string("call: ") + why);
                break;
            }
            reused += req == last_freed;
            if (persistent && genx_request_start(req, why, sizeof why) != GENX_OK)
                result = Status::internal(std::string("start: ") + why);
            if (result.is_ok()) result = drive(req);
            for (size_t i = 0; i < n && result.is_ok(); ++i)
                if (out[i] != 21 + 3 * static_cast<int64_t>(i + k))
                    result = Status::internal("count " + std::to_string(n) + ": wrong sum at " +
                                              std::to_string(i));
            genx_request_free(req);
            last_freed = req;
        }
        genx_comm_destroy(comm);
        if (result.is_ok() && reused != static_cast<int>(counts.size()) - 1)
            result = Status::internal("pooled requests reused " + std::to_string(reused) + " times, not " +
                                      std::to_string(counts.size() - 1));
        return result;
    });
    INFO(st.message());
    CHECK(st.is_ok());
}

TEST_CASE("declines send nothing and say why", "[capi]") {
    const int P = 3;
    LoopbackFabric fabric(P);
    LogSink log0;
    genx_config cfg = config("ring", "", 1, &log0);
    genx_comm* comm = genx_comm_create(0, P, 0, 0, nullptr, &cfg, nullptr, 0);
    REQUIRE(comm != nullptr);
    CountingTransport counting(fabric.transport(0));
    const genx_transport_ops ops = transport_ops_for(&counting);
    char why[256];
    std::vector<float> f(8, 1.0f);

    int rc = genx_allreduce(comm, nullptr, f.data(), f.size(), GENX_DT_FLOAT, 4, GENX_OP_BAND, 1,
                            nullptr, &ops, nullptr, why, sizeof why);
    CHECK(rc == GENX_DECLINE);
    CHECK(std::string(why).find("BAND") != std::string::npos);
    CHECK(std::string(why).find("float") != std::string::npos);

    auto noop = [](void*, const void*, void*, size_t) {};
    genx_reduce_cb cb{nullptr, noop};
    for (int i = 0; i < 2; ++i) {
        rc = genx_allreduce(comm, nullptr, f.data(), f.size(), GENX_DT_OTHER, 4, GENX_OP_OTHER, 0,
                            &cb, &ops, nullptr, why, sizeof why);
        CHECK(rc == GENX_DECLINE);
        CHECK(std::string(why).find("not commutative") != std::string::npos);
        CHECK(std::string(why).find("ring") != std::string::npos);
    }

    rc = genx_allreduce(comm, nullptr, f.data(), f.size(), GENX_DT_FLOAT, 8, GENX_OP_SUM, 1,
                        nullptr, &ops, nullptr, why, sizeof why);
    CHECK(rc == GENX_DECLINE);
    CHECK(std::string(why).find("element size 8") != std::string::npos);

    rc = genx_allreduce(comm, nullptr, f.data(), f.size(), GENX_DT_OTHER, 4, GENX_OP_OTHER, 1,
                        nullptr, &ops, nullptr, why, sizeof why);
    CHECK(rc == GENX_DECLINE);
    CHECK(std::string(why).find("callback") != std::string::npos);

    rc = genx_allreduce(comm, nullptr, nullptr, 0, GENX_DT_INT32, 4, GENX_OP_SUM, 1, nullptr, &ops,
                        nullptr, why, sizeof why);
    CHECK(rc == GENX_OK);
    CHECK(counting.posts == 0);

    // One log line per distinct reason at verbose 1 (the repeated
    // non-commutative decline is not logged twice).
    REQUIRE(log0.lines.size() == 4);
    CHECK(log0.lines[0].rfind("genx: allreduce 32 B on 3 ranks declined, using the fallback: ", 0) == 0);
    CHECK(log0.lines[0].find("BAND") != std::string::npos);
    CHECK(log0.lines[1].find("not commutative") != std::string::npos);
    genx_comm_destroy(comm);

    CHECK(genx_allreduce(nullptr, nullptr, f.data(), 1, GENX_DT_FLOAT, 4, GENX_OP_SUM, 1, nullptr,
                         &ops, nullptr, why, sizeof why) == GENX_ERROR);
}

namespace {

struct Mat {
    uint64_t a, b, c, d;
};
Mat mul(const Mat& x, const Mat& y) {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
}
void mat_cb(void* ctx, const void* in, void* inout, size_t count) {
    static_cast<std::atomic<int>*>(ctx)->fetch_add(1);
    const Mat* i = static_cast<const Mat*>(in);
    Mat* io = static_cast<Mat*>(inout);
    for (size_t e = 0; e < count; ++e) io[e] = mul(i[e], io[e]);
}
Mat mat_of(int rank, size_t i) {
    const uint64_t h = mix(static_cast<uint64_t>(rank) * 977 + i);
    return {h & 0xf, (h >> 4) & 0xf, (h >> 8) & 0xf, (h >> 12) & 0xf};
}

}  // namespace

TEST_CASE("a non-commutative user op runs on an order-preserving plan", "[capi]") {
    const int P = 6;
    const size_t count = 123;
    std::vector<Mat> expect(count);
    for (size_t i = 0; i < count; ++i) {
        expect[i] = mat_of(0, i);
        for (int r = 1; r < P; ++r) expect[i] = mul(expect[i], mat_of(r, i));
    }
    std::atomic<int> calls{0};
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("rb", "root=0,segment=1K", 0, nullptr);
        char err[256];
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
        if (comm == nullptr) return Status::internal(err);
        const genx_transport_ops ops = transport_ops_for(&t);
        std::vector<Mat> in(count), out(count);
        for (size_t i = 0; i < count; ++i) in[i] = mat_of(rank, i);
        genx_reduce_cb cb{&calls, mat_cb};
        char why[256] = "";
        const int rc =
            genx_allreduce(comm, in.data(), out.data(), count, GENX_DT_OTHER, sizeof(Mat),
                           GENX_OP_OTHER, 0, &cb, &ops, nullptr, why, sizeof why);
        genx_comm_destroy(comm);
        GENX_RETURN_IF_ERROR(ensure(rc == GENX_OK, why));
        return ensure(std::memcmp(out.data(), expect.data(), count * sizeof(Mat)) == 0,
                      "product not in rank order");
    });
    INFO(st.message());
    CHECK(st.is_ok());
    CHECK(calls.load() > 0);
}

TEST_CASE("a commutative user op on an opaque type goes through the callback", "[capi]") {
    const int P = 4;
    const size_t count = 50;  // elements of three int32
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("ring", "segment=20", 0, nullptr);
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, nullptr, 0);
        if (comm == nullptr) return Status::internal("create failed");
        const genx_transport_ops ops = transport_ops_for(&t);
        std::vector<int32_t> buf(3 * count);
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<int32_t>(i) * (rank + 1);
        auto sum3 = [](void*, const void* in, void* inout, size_t n) {
            for (size_t e = 0; e < 3 * n; ++e)
                static_cast<int32_t*>(inout)[e] += static_cast<const int32_t*>(in)[e];
        };
        genx_reduce_cb cb{nullptr, sum3};
        char why[256] = "";
        const int rc = genx_allreduce(comm, nullptr, buf.data(), count, GENX_DT_OTHER, 12,
                                      GENX_OP_SUM, 1, &cb, &ops, nullptr, why, sizeof why);
        genx_comm_destroy(comm);
        GENX_RETURN_IF_ERROR(ensure(rc == GENX_OK, why));
        for (size_t i = 0; i < buf.size(); ++i)
            if (buf[i] != static_cast<int32_t>(i) * (1 + 2 + 3 + 4)) return Status::internal("wrong sum");
        return Status::ok();
    });
    INFO(st.message());
    CHECK(st.is_ok());
}

TEST_CASE("a transport failure is GENX_ERROR with the transport's words", "[capi]") {
    // Communicators (their scratch) and buffers outlive run_ranks: the
    // failing rank leaves a receive posted that rank 1 may still match
    // before the fabric is aborted.
    genx_config cfg = config("ring", "", 0, nullptr);
    genx_comm* comms[2] = {genx_comm_create(0, 2, 0, 0, nullptr, &cfg, nullptr, 0),
                           genx_comm_create(1, 2, 0, 0, nullptr, &cfg, nullptr, 0)};
    REQUIRE(comms[0] != nullptr);
    REQUIRE(comms[1] != nullptr);
    std::vector<std::vector<int32_t>> xs(2, std::vector<int32_t>(16, 1));
    Status st = run_ranks(2, [&](int rank, Transport& t) -> Status {
        genx_transport_ops ops = transport_ops_for(&t);
        if (rank == 0) {
            // Both ways of sending fail (a step's last send is blocking).
            ops.isend = [](void*, const void*, size_t, int, void**) { return 5; };
            ops.send = [](void*, const void*, size_t, int) { return 5; };
        }
        std::vector<int32_t>& x = xs[static_cast<size_t>(rank)];
        char why[256] = "";
        const int rc = genx_allreduce(comms[rank], nullptr, x.data(), x.size(), GENX_DT_INT32, 4,
                                      GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
        // Rank 0 reports what it got; its failure aborts the fabric, which
        // turns rank 1's wait into an error instead of a hang.
        if (rank == 0) return Status::internal("rc " + std::to_string(rc) + ": " + why);
        return rc == GENX_ERROR ? Status::ok() : Status::internal("rank 1 finished");
    });
    genx_comm_destroy(comms[0]);
    genx_comm_destroy(comms[1]);
    CHECK(st.message().find("rank 0: rc 2: executor (ring, rank 0, step 0): transport: send (peer 1") !=
          std::string::npos);
    CHECK(st.message().find("failed with code 5") != std::string::npos);
}

TEST_CASE("genx_size_class and genx_hash: the one size class and hash core and glue share",
          "[capi]") {
    CHECK(genx_size_class(0) == 0);
    CHECK(genx_size_class(1) == 1);
    CHECK(genx_size_class(2) == 2);
    CHECK(genx_size_class(3) == 2);
    CHECK(genx_size_class(4095) == 12);
    CHECK(genx_size_class(4096) == 13);
    CHECK(genx_size_class(SIZE_MAX) == 8 * sizeof(size_t));
    CHECK(genx_hash(3, "datatype is not contiguous") == genx_hash(3, "datatype is not contiguous"));
    CHECK(genx_hash(3, "datatype is not contiguous") != genx_hash(4, "datatype is not contiguous"));
    CHECK(genx_hash(3, "a") != genx_hash(3, "b"));
    CHECK(genx_hash(0, nullptr) == genx_hash(0, ""));
}

namespace {

// A rules file whose one rule lets the model decide every size (the
// selector caches files by path per process, hence one per test).
std::string write_model_rules(const std::string& name) {
    const std::string path = "genx-test-capi-" + name + ".json";
    std::ofstream out(path);
    out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [{\"algorithm\": \"model\"}]}\n";
    return path;
}

// Removes the file write_model_rules wrote when the test ends (pass or
// fail), so that make check leaves nothing in the build directory.
struct RemoveAtExit {
    std::string path;
    ~RemoveAtExit() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("calls compile each count once, generate no plan, and share plans across communicators",
          "[capi][hot]") {
    const int P = 4;
    // Five counts cycled (what the old 4-entry cache recompiled on every
    // call), then more distinct counts than the cache holds.
    std::vector<size_t> cycle = {10, 100, 1000, 3, 7};
    std::vector<genx::CommStats> after(P), after_cycle(P);
    // Every size by the model, so that genx runs (the built-in defaults
    // leave small sizes to the displaced component).
    const std::string rules = write_model_rules("cache");
    const RemoveAtExit remove_rules{rules};
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("auto", "", 0, nullptr);
        cfg.rules_path = rules.c_str();
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, nullptr, 0);
        if (comm == nullptr) return Status::internal("create failed");
        const genx_transport_ops ops = transport_ops_for(&t);
        char why[256] = "";
        GENX_RETURN_IF_ERROR(ensure(genx_comm_prepare(comm, why, sizeof why) == GENX_OK, why));
        for (int round = 0; round < 3; ++round) {
            for (size_t n : cycle) {
                std::vector<int32_t> x(n, rank + 1);
                if (genx_allreduce(comm, nullptr, x.data(), n, GENX_DT_INT32, 4, GENX_OP_SUM, 1,
                                   nullptr, &ops, nullptr, why, sizeof why) != GENX_OK)
                    return Status::internal(why);
                GENX_RETURN_IF_ERROR(ensure(x == std::vector<int32_t>(n, 10), "wrong sum"));
            }
        }
        get_stats(comm, &after_cycle[static_cast<size_t>(rank)]);
        for (size_t n = 1; n <= 100; ++n) {
            std::vector<int32_t> x(n, 1);
            if (genx_allreduce(comm, nullptr, x.data(), n, GENX_DT_INT32, 4, GENX_OP_SUM, 1,
                               nullptr, &ops, nullptr, why, sizeof why) != GENX_OK)
                return Status::internal(why);
        }
        get_stats(comm, &after[static_cast<size_t>(rank)]);
        genx_comm_destroy(comm);
        return Status::ok();
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    for (int r = 0; r < P; ++r) {
        const size_t i = static_cast<size_t>(r);
        CAPTURE(r);
        CHECK(after_cycle[i].calls == 15);
        CHECK(after_cycle[i].schedule_compiles == cycle.size());
        // 100 new counts through a 64-entry cache: every one compiles once.
        CHECK(after[i].calls == 115);
        // Counts 3, 7 and 10 are still cached when they come round again;
        // 100 was evicted (least recently used) before it did.
        CHECK(after[i].schedule_compiles == cycle.size() + 100 - 3);
        // No call generated a plan: the count is the one after prepare
        // (plans are process-wide, so other ranks' threads may have added
        // theirs meanwhile, but only before their own first call).
        CHECK(after[i].plans_generated == after_cycle[i].plans_generated);
    }
}

TEST_CASE("a repeated call reuses its decision until the schedule cache evicts it", "[capi][hot]") {
    const int P = 3;
    // Repeats of one count reuse the first call's decision; a different
    // count, type or op decides again; 70 non-blocking calls of other counts
    // evict the remembered schedule from the 64-entry cache, after which
    // the same count must compile again (a stale decision would run a freed
    // schedule) and still sum right.
    std::vector<genx::CommStats> mid(P), end(P);
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("rd", "", 0, nullptr);
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, nullptr, 0);
        if (comm == nullptr) return Status::internal("create failed");
        const genx_transport_ops ops = transport_ops_for(&t);
        char why[256] = "";
        auto blocking = [&](size_t n, genx_dtype dt, genx_op op) -> Status {
            std::vector<int32_t> x(n, rank + 1);
            if (genx_allreduce(comm, nullptr, x.data(), n, dt, 4, op, 1, nullptr, &ops, nullptr,
                               why, sizeof why) != GENX_OK)
                return Status::internal(why);
            const int32_t want = op == GENX_OP_MAX ? 3 : 6;  // ranks contribute 1, 2, 3
            return ensure(x == std::vector<int32_t>(n, want), "wrong result");
        };
        for (int i = 0; i < 5; ++i) GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_INT32, GENX_OP_SUM));
        GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_INT32, GENX_OP_MAX));
        GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_UINT32, GENX_OP_SUM));
        GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_INT32, GENX_OP_SUM));
        get_stats(comm, &mid[static_cast<size_t>(rank)]);
        for (size_t n = 1000; n < 1070; ++n) {
            std::vector<int32_t> in(n, 1), out(n, 0);
            genx_request* req = nullptr;
            if (iallreduce(comm, in.data(), out.data(), n, GENX_DT_INT32, 4, GENX_OP_SUM, 1,
                           nullptr, &ops, &req, why, sizeof why) != GENX_OK)
                return Status::internal(why);
            Status s = drive(req);
            genx_request_free(req);
            GENX_RETURN_IF_ERROR(s);
        }
        GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_INT32, GENX_OP_SUM));
        GENX_RETURN_IF_ERROR(blocking(100, GENX_DT_INT32, GENX_OP_SUM));
        get_stats(comm, &end[static_cast<size_t>(rank)]);
        genx_comm_destroy(comm);
        return Status::ok();
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    for (int r = 0; r < P; ++r) {
        const size_t i = static_cast<size_t>(r);
        CAPTURE(r);
        CHECK(mid[i].calls == 8);
        CHECK(mid[i].repeat_calls == 4);  // calls 2-5 of the first five
        CHECK(mid[i].schedule_compiles == 1);  // one count, one element size
        // After the evictions: the first call compiles and decides again,
        // the second reuses it.
        CHECK(end[i].repeat_calls == mid[i].repeat_calls + 1);
        CHECK(end[i].schedule_compiles == mid[i].schedule_compiles + 70 + 1);
    }
}

TEST_CASE("communicators of one shape and rank share their plans", "[capi][hot]") {
    // One thread, so the process-wide count moves only by what this does.
    const std::string rules = write_model_rules("share");
    const RemoveAtExit remove_rules{rules};
    genx_config cfg = config("auto", "", 0, nullptr);
    cfg.rules_path = rules.c_str();
    genx::CommStats s{};
    genx_comm* a = genx_comm_create(2, 11, 0, 0, nullptr, &cfg, nullptr, 0);
    REQUIRE(a != nullptr);
    get_stats(a, &s);
    const uint64_t before = s.plans_generated;
    char err[256];
    REQUIRE(genx_comm_prepare(a, err, sizeof err) == GENX_OK);
    get_stats(a, &s);
    const uint64_t after_first = s.plans_generated;
    genx_comm* b = genx_comm_create(2, 11, 0, 0, nullptr, &cfg, nullptr, 0);
    REQUIRE(b != nullptr);
    REQUIRE(genx_comm_prepare(b, err, sizeof err) == GENX_OK);
    get_stats(b, &s);
    // The first communicator generated its decisions' plans (P = 11 has
    // not been used by any earlier test on rank 2), the second none.
    CHECK(after_first > before);
    CHECK(s.plans_generated == after_first);
    genx_comm* c = genx_comm_create(3, 11, 0, 0, nullptr, &cfg, nullptr, 0);
    REQUIRE(c != nullptr);
    REQUIRE(genx_comm_prepare(c, err, sizeof err) == GENX_OK);
    get_stats(c, &s);
    CHECK(s.plans_generated > after_first);  // another rank: other programs
    genx_comm_destroy(a);
    genx_comm_destroy(b);
    genx_comm_destroy(c);
}

TEST_CASE("the plan cache evicts only plans no communicator holds", "[capi][hot]") {
    const PlanCacheStats initial = plan_cache_stats();
    auto held = rank_plan("ring", "", 37, 5);
    REQUIRE(held->status.is_ok());
    auto dropped = rank_plan("ring", "", 37, 6);
    const size_t dropped_bytes = dropped->bytes;
    CHECK(rank_plan("ring", "", 37, 5) == held);  // shared, not regenerated
    dropped.reset();
    set_plan_cache_cap(0);  // everything unused goes; `held` stays
    const PlanCacheStats s = plan_cache_stats();
    CHECK(s.entries == 1);
    CHECK(s.bytes == held->bytes);
    CHECK(s.evicted >= initial.evicted + 1);
    CHECK(dropped_bytes > 0);
    CHECK(rank_plan("ring", "", 37, 5) == held);
    set_plan_cache_cap(kPlanCacheDefaultCap);
}

namespace {
std::string topo_fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}
void collect_log(void* ctx, int, const char* msg) { static_cast<std::vector<std::string>*>(ctx)->push_back(msg); }
// A configuration running `algorithm` at verbose 1, its lines into `log`.
genx_config logging_config(const char* algorithm, std::vector<std::string>* log) {
    genx_config cfg{};
    cfg.algorithm = algorithm;
    cfg.params = "";
    cfg.verbose = 1;
    cfg.log = collect_log;
    cfg.log_ctx = log;
    return cfg;
}
// Whether some line of `log` contains `text`.
bool logged(const std::vector<std::string>& log, const std::string& text) {
    for (const std::string& l : log)
        if (l.find(text) != std::string::npos) return true;
    return false;
}
}  // namespace

TEST_CASE("[capi] SLURM_TOPOLOGY_ADDR gathered from the ranks places them on the addresses' tree", "[capi]") {
    std::vector<std::string> log;
    genx_config cfg = logging_config("auto", &log);
    char err[512];
    const std::vector<const char*> pat(4, "switch.switch.node");
    const std::vector<const char*> good = {"spine.leaf1.n1", "spine.leaf1.n1", "spine.leaf2.n2",
                                           "spine.leaf2.n2"};
    genx_comm* c = genx_comm_create(0, 4, 2, 2, nullptr, &cfg, err, sizeof(err));
    REQUIRE(c != nullptr);
    REQUIRE(genx_comm_prepare(c, err, sizeof(err)) == GENX_OK);
    const uint64_t before = genx_comm_digest(c);
    CHECK(genx_comm_topology(c) == 0);
    // An empty address on one rank: nothing done.
    std::vector<const char*> partial = good;
    partial[3] = "";
    CHECK(genx_comm_place_topology_addrs(c, partial.data(), pat.data(), nullptr) == 0);
    CHECK(genx_comm_topology(c) == 0);
    // Not a tree: reported with the address, nothing changes.
    const std::vector<const char*> bad = {"s1.l.n1", "s1.l.n1", "s2.l.n2", "s2.l.n2"};
    CHECK(genx_comm_place_topology_addrs(c, bad.data(), pat.data(), "") == -1);
    CHECK(genx_comm_topology(c) == 0);
    CHECK(logged(log, "'s2.l.n2'"));
    // A tree: placed, said, and the table is built again for the next prepare.
    CHECK(genx_comm_place_topology_addrs(c, good.data(), pat.data(), nullptr) == 1);
    CHECK(genx_comm_topology(c) != 0);
    CHECK(logged(log, "topology SLURM_TOPOLOGY_ADDR: 4 ranks on 2 hosts, 2 switch level(s)"));
    CHECK(genx_comm_digest(c) == 0);  // unprepared again
    REQUIRE(genx_comm_prepare(c, err, sizeof(err)) == GENX_OK);
    CHECK(genx_comm_digest(c) != 0);
    CHECK(genx_comm_digest(c) != before);  // the placement is part of the digest
    // Placed once: a second call changes nothing.
    CHECK(genx_comm_place_topology_addrs(c, good.data(), pat.data(), nullptr) == 0);
    genx_comm_destroy(c);
    // A forced algorithm is planned again on the tree.
    cfg.algorithm = "ring";
    genx_comm* f = genx_comm_create(1, 4, 2, 2, nullptr, &cfg, err, sizeof(err));
    REQUIRE(f != nullptr);
    const uint64_t flat = genx_comm_digest(f);
    CHECK(genx_comm_place_topology_addrs(f, good.data(), pat.data(), nullptr) == 1);
    REQUIRE(genx_comm_prepare(f, err, sizeof(err)) == GENX_OK);
    CHECK(genx_comm_digest(f) != flat);
    genx_comm_destroy(f);
}

TEST_CASE("[capi] on a network whose routes hold more than the default window, plans go unsegmented", "[capi]") {
    std::vector<std::string> log;
    genx_config cfg = logging_config("ring", &log);
    char err[512];
    auto said_unsegmented = [&](const std::string& file, const std::vector<const char*>& hosts) {
        log.clear();
        cfg.topology_file = file.c_str();
        genx_comm* c = genx_comm_create(0, static_cast<int>(hosts.size()), 0, 0, hosts.data(), &cfg,
                                        err, sizeof(err));
        REQUIRE(c != nullptr);
        CHECK(genx_comm_topology(c) != 0);
        genx_comm_destroy(c);
        return logged(log, "plans are sent unsegmented unless segment or window is set");
    };
    // The B4-like WAN (10-100 Gbit/s, 8-50 ms): far more than 4 x 1 MiB per
    // route.  A LAN tree (no declared latencies): the default segments.
    CHECK(said_unsegmented(topo_fixture("b4.json"), {"us-w1", "eu-1", "as-1"}));
    CHECK_FALSE(said_unsegmented(topo_fixture("tree.conf"), {"node01", "r1n1", "node02", "r2n2"}));
}

TEST_CASE("[capi] a topology file places the ranks by host name, and the digest follows it", "[capi]") {
    const std::string file = topo_fixture("tree.conf");  // leaf1: node01-03; leaf2: r1n1 r1n2 r2n1 r2n2 extra
    std::vector<std::string> log;
    genx_config cfg = logging_config("ring", &log);
    cfg.topology_file = file.c_str();
    char err[512];
    auto create = [&](const std::vector<const char*>& hosts) {
        return genx_comm_create(0, static_cast<int>(hosts.size()), 0, 0, hosts.data(), &cfg, err,
                                sizeof(err));
    };
    genx_comm* same_leaf = create({"node01", "node02", "node03", "node01"});
    genx_comm* two_leaves = create({"node01", "r1n1", "node02", "r2n2"});
    genx_comm* again = create({"node01", "r1n1", "node02", "r2n2"});
    REQUIRE(same_leaf != nullptr);
    REQUIRE(two_leaves != nullptr);
    REQUIRE(again != nullptr);
    CHECK(genx_comm_topology(same_leaf) != 0);
    CHECK(genx_comm_topology(two_leaves) != 0);
    CHECK(genx_comm_topology(two_leaves) == genx_comm_topology(again));
    CHECK(genx_comm_topology(two_leaves) != genx_comm_topology(same_leaf));
    CHECK(genx_comm_digest(two_leaves) == genx_comm_digest(again));
    CHECK(genx_comm_digest(two_leaves) != genx_comm_digest(same_leaf));
    bool said = false;
    for (const std::string& l : log) said = said || l.find("4 ranks on 4 hosts, 2 switch level(s)") != std::string::npos;
    CHECK(said);

    // A host the file does not hold: reported, no topology, the same digest
    // as a communicator created without a file.
    log.clear();
    genx_comm* stranger = create({"node01", "nowhere"});
    REQUIRE(stranger != nullptr);
    CHECK(genx_comm_topology(stranger) == 0);
    bool named = false;
    for (const std::string& l : log)
        named = named || (l.find("rank 1") != std::string::npos && l.find("nowhere") != std::string::npos &&
                          l.find("groups hosts by name instead") != std::string::npos);
    CHECK(named);
    genx_config plain = cfg;
    plain.topology_file = nullptr;
    genx_comm* without = genx_comm_create(0, 2, 0, 0, nullptr, &plain, err, sizeof(err));
    REQUIRE(without != nullptr);
    CHECK(genx_comm_digest(stranger) == genx_comm_digest(without));

    // A bad file: reported with file:line, no topology.
    log.clear();
    const std::string bad = topo_fixture("bad-both.conf");
    cfg.topology_file = bad.c_str();
    genx_comm* badc = create({"n1", "n2"});
    REQUIRE(badc != nullptr);
    CHECK(genx_comm_topology(badc) == 0);
    bool cited = false;
    for (const std::string& l : log) cited = cited || l.find("bad-both.conf:3") != std::string::npos;
    CHECK(cited);
    for (genx_comm* c : {same_leaf, two_leaves, again, stranger, without, badc}) genx_comm_destroy(c);
}

TEST_CASE("a fallback rule naming an Open MPI algorithm: blocking calls get its number", "[capi]") {
    const std::string path = "genx-test-capi-base.json";
    {
        std::ofstream out(path);
        out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [\n"
               "  {\"bytes\": \"0-1K\", \"algorithm\": \"fallback\", \"params\": "
               "\"base=recursive_doubling\"},\n"
               "  {\"bytes\": \"1K-64K\", \"algorithm\": \"fallback\", \"params\": "
               "\"base=basic_linear\"},\n"
               "  {\"bytes\": \"64K-1M\", \"algorithm\": \"fallback\"},\n"
               "  {\"algorithm\": \"ring\"}]}\n";
    }
    const RemoveAtExit remove_rules{path};
    genx_config cfg = config("auto", "", 0, nullptr);
    cfg.rules_path = path.c_str();
    cfg.rules_strict = 1;
    genx_comm* comm = genx_comm_create(0, 4, 4, 1, nullptr, &cfg, nullptr, 0);
    REQUIRE(comm != nullptr);
    char err[256] = "";
    REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
    const char* reason = nullptr;
    CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 64, 64 / 4, &reason) == GENX_DEFERS + 3);
    REQUIRE(reason != nullptr);
    CHECK(std::string(reason).find("Open MPI's recursive_doubling") != std::string::npos);
    CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 4096, 4096 / 4, nullptr) == GENX_DEFERS + 1);
    CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 100000, 100000 / 4, &reason) == GENX_DEFERS);
    CHECK(std::string(reason).find("the component genx displaced") != std::string::npos);
    CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 4 << 20, (4 << 20) / 4, nullptr) == 0);
    // coll/base has no non-blocking algorithms: MPI_Iallreduce goes to the
    // displaced component.
    CHECK(genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, 64, 64 / 4, &reason) == GENX_DEFERS);
    CHECK(std::string(reason).find("the component genx displaced") != std::string::npos);
    CHECK(genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, 4096, 4096 / 4, nullptr) == GENX_DEFERS);
    genx_comm_destroy(comm);
    CHECK(std::string(genx_base_algorithm_name(3)) == "recursive_doubling");
    CHECK(std::string(genx_base_algorithm_name(6)) == "rabenseifner");
    CHECK(genx_base_algorithm_name(5) == nullptr);  // segmented_ring: not offered
    CHECK(genx_base_algorithm_name(0) == nullptr);

    // Every size deferring, one of them to an Open MPI algorithm: genx's
    // choice, so the glue must not step aside.  (Another file: rules are
    // cached per process by path.)
    const std::string path2 = "genx-test-capi-base2.json";
    const RemoveAtExit remove_rules2{path2};
    cfg.rules_path = path2.c_str();
    {
        std::ofstream out(path2);
        out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [\n"
               "  {\"bytes\": \"0-1K\", \"algorithm\": \"fallback\", \"params\": \"base=ring\"},\n"
               "  {\"algorithm\": \"fallback\"}]}\n";
    }
    comm = genx_comm_create(0, 4, 4, 1, nullptr, &cfg, nullptr, 0);
    REQUIRE(comm != nullptr);
    REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
    CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 64, 64 / 4, nullptr) == GENX_DEFERS + 4);
    CHECK(genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, nullptr) == 0);
    genx_comm_destroy(comm);
}

TEST_CASE("genx_comm_set_displaced: tuned's fixed choice prices the fallback incumbent", "[capi][displaced]") {
    // A 50 % margin over a "fallback" incumbent defers every size of 4
    // ranks; the explanation names what the incumbent was priced as.
    const std::string path = "genx-test-capi-displaced.json";
    write_one_model_rule(path, R"(["fallback", "ring"])", 0.5);
    const RemoveAtExit remove_rules{path};
    genx_config cfg = config("auto", "", 0, nullptr);
    cfg.rules_path = path.c_str();
    cfg.mpi_version = "4.1.4";
    struct Case {
        const char* component;
        int dynamic;
        int tuned;
        const char* reason_small;  // at 64 B
    };
    for (const Case& c : {Case{"tuned", 0, 1, "tuned's fixed choice (recursive_doubling → rd) "},
                          Case{"tuned", 1, 0, "Open MPI's best modelled ("},
                          Case{"han", 0, 0, "Open MPI's best modelled ("},
                          Case{nullptr, 0, 0, "Open MPI's best modelled ("}}) {
        INFO((c.component != nullptr ? c.component : "(null)") << " dynamic " << c.dynamic);
        genx_comm* comm = genx_comm_create(0, 4, 4, 1, nullptr, &cfg, nullptr, 0);
        REQUIRE(comm != nullptr);
        const char* note = nullptr;
        CHECK(genx_comm_set_displaced(comm, c.component, c.dynamic, &note) == c.tuned);
        REQUIRE(note != nullptr);
        CHECK(std::string(note).find(c.tuned ? "tuned's fixed decision" : "best modelled") !=
              std::string::npos);
        char err[256] = "";
        REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
        const char* reason = nullptr;
        CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 64, 64 / 4, &reason) == GENX_DEFERS);
        REQUIRE(reason != nullptr);
        CHECK(std::string(reason).find(c.reason_small) != std::string::npos);
        // Told again after the table was built: the next prepare builds it
        // for the new component.
        const std::string before = reason;
        genx_comm_set_displaced(comm, c.tuned ? "han" : "tuned", 0, nullptr);
        REQUIRE(genx_comm_prepare(comm, err, sizeof err) == GENX_OK);
        CHECK(genx_comm_defers(comm, GENX_CALLS_BLOCKING, 64, 64 / 4, &reason) == GENX_DEFERS);
        CHECK(std::string(reason) != before);
        genx_comm_destroy(comm);
    }
    // Open MPI 5.0: tuned decides by a table genx does not encode.
    cfg.mpi_version = "5.0.3";
    genx_comm* comm = genx_comm_create(0, 4, 4, 1, nullptr, &cfg, nullptr, 0);
    REQUIRE(comm != nullptr);
    CHECK(genx_comm_set_displaced(comm, "tuned", 0, nullptr) == 0);
    genx_comm_destroy(comm);
    CHECK(genx_comm_set_displaced(nullptr, "tuned", 0, nullptr) == 0);
}

TEST_CASE("genx_comm_defers: a plan that holds from some element count leaves fewer to tuned",
          "[capi][displaced][count]") {
    // 3 ranks at 4 KiB: tuned runs its ring, recursive doubling for fewer
    // than 3 elements; genx's rd is priced ahead of the ring only.
    const std::string path = "genx-test-capi-count.json";
    write_one_model_rule(path, R"(["fallback", "rd"])", 0.1);
    const RemoveAtExit remove_rules{path};
    genx_config cfg = config("auto", "", 0, nullptr);
    cfg.rules_path = path.c_str();
    cfg.mpi_version = "4.1.4";
    // Each rank: 4 KiB in 1,024 floats runs genx's rd (exact sums), in two
    // elements of a 2 KiB type it is declined with nothing sent.
    const int P = 3;
    const genx_reduce_cb sum_floats{nullptr, [](void*, const void* in, void* inout, size_t n) {
                                        const float* a = static_cast<const float*>(in);
                                        float* b = static_cast<float*>(inout);
                                        for (size_t i = 0; i < n * 512; ++i) b[i] += a[i];
                                    }};
    const Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_comm* comm = genx_comm_create(rank, P, P, 1, nullptr, &cfg, nullptr, 0);
        if (comm == nullptr) return Status::internal("create failed");
        const genx_transport_ops ops = transport_ops_for(&t);
        GENX_RETURN_IF_ERROR(ensure(genx_comm_set_displaced(comm, "tuned", 0, nullptr) == 1,
                                    "tuned 4.1 not recognised"));
        char why[512] = "";
        const int prepared = genx_comm_prepare(comm, why, sizeof why);
        const char* reason = nullptr;
        const int many = genx_comm_defers(comm, GENX_CALLS_BLOCKING, 4096, 1024, nullptr);
        const int few = genx_comm_defers(comm, GENX_CALLS_BLOCKING, 4096, 2, &reason);
        const std::string few_reason = reason != nullptr ? reason : "";
        const int every = genx_comm_defers(comm, kBothCalls, GENX_EVERY_SIZE, 0, nullptr);
        std::vector<float> v(1024, rank + 1.0f);
        const int rc_many = genx_allreduce(comm, nullptr, v.data(), v.size(), GENX_DT_FLOAT, 4,
                                           GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
        const std::string many_why = why;
        std::vector<float> w(1024, rank + 1.0f);
        const int rc_few = genx_allreduce(comm, nullptr, w.data(), 2, GENX_DT_OTHER, 2048,
                                          GENX_OP_OTHER, 1, &sum_floats, &ops, nullptr, why, sizeof why);
        genx_comm_destroy(comm);
        GENX_RETURN_IF_ERROR(ensure(prepared == GENX_OK, "prepare failed"));
        GENX_RETURN_IF_ERROR(ensure(many == 0, "1,024 elements at 4 KiB defer"));
        GENX_RETURN_IF_ERROR(ensure(few == GENX_DEFERS, "2 elements at 4 KiB do not defer"));
        GENX_RETURN_IF_ERROR(ensure(few_reason.find("left to the component genx displaced") !=
                                        std::string::npos,
                                    "no reason for 2 elements: " + few_reason));
        GENX_RETURN_IF_ERROR(ensure(every == 0, "every size defers"));
        GENX_RETURN_IF_ERROR(ensure(rc_many == GENX_OK, many_why));
        GENX_RETURN_IF_ERROR(ensure(v == std::vector<float>(1024, 6.0f), "wrong sum"));
        GENX_RETURN_IF_ERROR(ensure(rc_few == GENX_DECLINE, "2 elements were not declined"));
        GENX_RETURN_IF_ERROR(
            ensure(std::string(why).find("left to the component genx displaced") != std::string::npos,
                   std::string("declined for another reason: ") + why));
        return ensure(w == std::vector<float>(1024, rank + 1.0f), "a declined call changed the buffer");
    });
    INFO(st.message());
    CHECK(st.is_ok());
}

TEST_CASE("[capi] a forced gentree without plans= gets each size class's plans from the cost model",
          "[capi][gentree]") {
    // 16 hosts on one switch; under the built-in model the switch's
    // sub-plan is CPS at 4 KiB and 8x2 from 64 KiB (genx-plan -a gentree
    // --topology switch:16 --bytes SIZE --stats shows the same choices).
    const std::string file = "genx-test-capi-gentree-switch16.conf";
    {
        std::ofstream f(file);
        f << "SwitchName=s0 Nodes=h[01-16]\n";
    }
    constexpr int P = 16;
    std::vector<std::string> names;
    for (int h = 1; h <= P; ++h) names.push_back((h < 10 ? "h0" : "h") + std::to_string(h));
    std::vector<const char*> hosts;
    for (const std::string& n : names) hosts.push_back(n.c_str());
    std::vector<LogSink> logs(P);
    Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = config("gentree", "", 1, &logs[static_cast<size_t>(rank)]);
        cfg.topology_file = file.c_str();
        char err[256];
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, hosts.data(), &cfg, err, sizeof err);
        if (comm == nullptr) return Status::internal(err);
        const genx_transport_ops ops = transport_ops_for(&t);
        Status result;
        for (size_t count : {size_t{1024}, size_t{16384}, size_t{1024}}) {
            std::vector<unsigned char> in = make_input(GENX_DT_INT32, GENX_OP_SUM, rank, count);
            std::vector<unsigned char> out(count * 4, 0xEE);
            char why[256] = "";
            if (genx_allreduce(comm, in.data(), out.data(), count, GENX_DT_INT32, 4, GENX_OP_SUM, 1, nullptr,
                               &ops, nullptr, why, sizeof why) != GENX_OK) {
                result = Status::internal(std::to_string(count) + ": " + why);
                break;
            }
            const auto ref = reference_allreduce(GENX_DT_INT32, GENX_OP_SUM, P, count);
            if (first_difference(GENX_DT_INT32, out.data(), ref.data(), count) >= 0) {
                result = Status::internal(std::to_string(count) + ": wrong result");
                break;
            }
        }
        genx_comm_destroy(comm);
        return result;
    });
    std::remove(file.c_str());
    INFO(st.message());
    REQUIRE(st.is_ok());
    auto said = [&](const std::string& text) {
        for (const std::string& l : logs[0].lines)
            if (l.find(text) != std::string::npos) return true;
        return false;
    };
    for (const std::string& l : logs[0].lines) INFO(l);
    CHECK(said("4096 B (size class 4K) on 16 ranks: gentree (plans=cps,"));
    CHECK(said("65536 B (size class 64K) on 16 ranks: gentree (plans=8x2,"));
}
