// Selection through the C API: a rules file decides (and the verbose line
// names the rule), placement reaches the rules, a bad file is reported and
// replaced by the defaults or is fatal when strict, and the digest tells
// differing decisions apart.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "genx/genx_core.h"
#include "tests/support/loopback.hpp"
#include "tests/support/transport_ops.hpp"
#include "runtime/transport.hpp"

using namespace genx;

namespace {

struct Sink {
    std::vector<std::pair<int, std::string>> lines;
};

void collect(void* ctx, int level, const char* msg) {
    static_cast<Sink*>(ctx)->lines.emplace_back(level, msg);
}

genx_config auto_config(const std::string& rules, int strict, int verbose, Sink* sink) {
    genx_config c{};
    c.algorithm = "auto";
    c.params = "";
    c.verbose = verbose;
    c.log = sink != nullptr ? collect : nullptr;
    c.log_ctx = sink;
    c.rules_path = rules.c_str();
    c.rules_strict = strict;
    return c;
}
// The config keeps rules.c_str(): a temporary would leave it dangling.
genx_config auto_config(std::string&& rules, int strict, int verbose, Sink* sink) = delete;

// A rules file per test (the selector caches files by path per process).
std::string write_rules(const std::string& name, const std::string& rules) {
    const std::string path = "genx-test-selection-" + name + ".json";
    std::ofstream out(path);
    out << "{\"format\": \"genx-rules\", \"version\": 1,\n"
           " \"allreduce\": [\n"
        << rules << "\n]}\n";
    return path;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a rules file decides, and verbose output names the rule", "[selection]") {
    const std::string path = write_rules(
        "decides",
        "{\"bytes\": \"0-1K\", \"algorithm\": \"rb\", \"params\": \"root=2\"},\n"   // line 3
        "{\"bytes\": \"1K-inf\", \"algorithm\": \"ring\", \"params\": \"segment=512\"}");  // line 4
    const int P = 3;
    std::vector<Sink> logs(P);
    const Status st = run_ranks(P, [&](int rank, Transport& t) -> Status {
        genx_config cfg = auto_config(path, 1, 1, &logs[static_cast<size_t>(rank)]);
        char err[512] = "";
        genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
        if (comm == nullptr) return Status::internal(err);
        const genx_transport_ops ops = transport_ops_for(&t);
        char why[256] = "";
        for (size_t n : {size_t{10}, size_t{500}}) {
            std::vector<double> x(n, rank + 1.0);
            const int rc = genx_allreduce(comm, nullptr, x.data(), n, GENX_DT_DOUBLE, 8,
                                          GENX_OP_SUM, 1, nullptr, &ops, nullptr, why, sizeof why);
            if (rc != GENX_OK) return Status::internal(why);
            if (x != std::vector<double>(n, 6.0)) return Status::internal("wrong sum");
        }
        genx_comm_destroy(comm);
        return Status::ok();
    });
    INFO(st.message());
    REQUIRE(st.is_ok());
    const auto& lines = logs[0].lines;
    REQUIRE(lines.size() == 2);
    INFO(lines[0].second << "\n" << lines[1].second);
    CHECK(has(lines[0].second, "80 B (size class 64) on 3 ranks: rb (root=2,"));
    CHECK(has(lines[0].second, "[rule " + path + ":3 (allreduce[0])"));
    CHECK(has(lines[1].second, "4000 B (size class 2K) on 3 ranks: ring (segment=512,"));
    CHECK(has(lines[1].second, "[rule " + path + ":4 (allreduce[1])"));
    // With verbose on, the model's view of a rule's choice comes along.
    CHECK(has(lines[1].second, "best alternative"));
    for (int r = 1; r < P; ++r) CHECK(logs[static_cast<size_t>(r)].lines.empty());
    std::remove(path.c_str());
}

TEST_CASE("placement reaches the rules through genx_comm_create_on", "[selection]") {
    const std::string path = write_rules(
        "placement", "{\"nodes\": 2, \"ppn\": 2, \"algorithm\": \"rhd\"},\n"
                     "{\"algorithm\": \"ring\"}");
    genx_config cfg = auto_config(path, 1, 0, nullptr);
    genx_comm* on_two = genx_comm_create(0, 4, 2, 2, nullptr, &cfg, nullptr, 0);
    genx_comm* unknown = genx_comm_create(0, 4, 0, 0, nullptr, &cfg, nullptr, 0);
    genx_comm* on_one = genx_comm_create(0, 4, 1, 4, nullptr, &cfg, nullptr, 0);
    genx_comm* nonsense = genx_comm_create(0, 4, 1, 2, nullptr, &cfg, nullptr, 0);  // 1 x 2 < 4
    REQUIRE(on_two != nullptr);
    REQUIRE(unknown != nullptr);
    REQUIRE(on_one != nullptr);
    REQUIRE(nonsense != nullptr);
    // No table before the first allreduce (genx_comm_prepare).
    CHECK(genx_comm_digest(on_two) == 0);
    for (genx_comm* c : {on_two, unknown, on_one, nonsense})
        REQUIRE(genx_comm_prepare(c, nullptr, 0) == GENX_OK);
    CHECK(genx_comm_digest(on_two) != 0);
    CHECK(genx_comm_digest(on_two) != genx_comm_digest(unknown));
    CHECK(genx_comm_digest(on_one) == genx_comm_digest(unknown));  // both ring everywhere
    CHECK(genx_comm_digest(nonsense) == genx_comm_digest(unknown));
    genx_comm* again = genx_comm_create(1, 4, 2, 2, nullptr, &cfg, nullptr, 0);
    REQUIRE(genx_comm_prepare(again, nullptr, 0) == GENX_OK);
    REQUIRE(genx_comm_prepare(again, nullptr, 0) == GENX_OK);  // idempotent
    CHECK(genx_comm_digest(again) == genx_comm_digest(on_two));
    for (genx_comm* c : {on_two, unknown, on_one, nonsense, again}) genx_comm_destroy(c);
    std::remove(path.c_str());
}

TEST_CASE("a bad rules file: defaults with a warning, or an error when strict", "[selection]") {
    const std::string path =
        write_rules("bad", "{\"algorithm\": \"ring\"},\n{\"bytes\": \"1M-1K\", \"algorithm\": \"ring\"}");
    Sink sink;
    genx_config loose = auto_config(path, 0, 0, &sink);
    genx_comm* c = genx_comm_create(0, 4, 0, 0, nullptr, &loose, nullptr, 0);
    REQUIRE(c != nullptr);
    // Printed without any verbosity (level 0), by rank 0, once per process.
    REQUIRE(sink.lines.size() == 1);
    CHECK(sink.lines[0].first == 0);
    CHECK(has(sink.lines[0].second, path + ":4: allreduce[1].bytes:"));
    CHECK(has(sink.lines[0].second, "uses its built-in defaults"));
    genx_comm* d = genx_comm_create(0, 4, 0, 0, nullptr, &loose, nullptr, 0);
    CHECK(sink.lines.size() == 1);
    const std::string no_rules;
    genx_config defaults = auto_config(no_rules, 0, 0, nullptr);
    genx_comm* e = genx_comm_create(0, 4, 0, 0, nullptr, &defaults, nullptr, 0);
    REQUIRE(genx_comm_prepare(d, nullptr, 0) == GENX_OK);
    REQUIRE(genx_comm_prepare(e, nullptr, 0) == GENX_OK);
    CHECK(genx_comm_digest(d) == genx_comm_digest(e));

    genx_config strict = auto_config(path, 1, 0, nullptr);
    char err[512] = "";
    CHECK(genx_comm_create(0, 4, 0, 0, nullptr, &strict, err, sizeof err) == nullptr);
    CHECK(has(err, path + ":4: allreduce[1].bytes:"));
    CHECK(has(err, "aborting because rules_strict is set"));

    // A rule whose plan cannot run on the communicator: skipped with a
    // warning, or fatal when strict.
    const std::string odd = write_rules("odd", "{\"algorithm\": \"hcps\", \"params\": \"factors=2x2\"}");
    Sink sink2;
    genx_config loose2 = auto_config(odd, 0, 0, &sink2);
    genx_comm* f = genx_comm_create(0, 6, 0, 0, nullptr, &loose2, nullptr, 0);
    REQUIRE(f != nullptr);
    CHECK(sink2.lines.empty());  // the table, and its warnings, come at the first allreduce
    REQUIRE(genx_comm_prepare(f, nullptr, 0) == GENX_OK);
    REQUIRE(sink2.lines.size() == 1);
    CHECK(has(sink2.lines[0].second, odd + ":3 (allreduce[0])"));
    CHECK(has(sink2.lines[0].second, "skips this rule"));
    genx_config strict2 = auto_config(odd, 1, 0, nullptr);
    genx_comm* g = genx_comm_create(0, 6, 0, 0, nullptr, &strict2, err, sizeof err);
    REQUIRE(g != nullptr);
    CHECK(genx_comm_prepare(g, err, sizeof err) == GENX_ERROR);
    CHECK(has(err, "cannot run on 6 ranks"));
    CHECK(genx_comm_digest(g) == 0);  // never agrees with a rank that has a table
    for (genx_comm* x : {c, d, e, f, g}) genx_comm_destroy(x);
    std::remove(path.c_str());
    std::remove(odd.c_str());
}

TEST_CASE("forced algorithms: digest follows the algorithm and params", "[selection]") {
    genx_config a{}, b{};
    a.algorithm = "ring";
    a.params = "segment=1K";
    b.algorithm = "ring";
    b.params = "segment=2K";
    genx_comm* x = genx_comm_create(0, 4, 0, 0, nullptr, &a, nullptr, 0);
    genx_comm* y = genx_comm_create(1, 4, 0, 0, nullptr, &a, nullptr, 0);
    genx_comm* z = genx_comm_create(0, 4, 0, 0, nullptr, &b, nullptr, 0);
    REQUIRE((x != nullptr && y != nullptr && z != nullptr));
    CHECK(genx_comm_digest(x) == genx_comm_digest(y));
    CHECK(genx_comm_digest(x) != genx_comm_digest(z));
    for (genx_comm* c : {x, y, z}) genx_comm_destroy(c);
}
