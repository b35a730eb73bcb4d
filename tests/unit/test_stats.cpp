// Plan statistics on a hand-made plan whose every number is known, and the
// printers built on them.
#include <catch2/catch.hpp>

#include "plan/checker.hpp"
#include "plan/print.hpp"
#include "plan/registry.hpp"
#include "plan/stats.hpp"

using namespace genx;

TEST_CASE("count_runs counts maximal ascending runs", "[stats]") {
    CHECK(count_runs({}) == 0);
    CHECK(count_runs({4}) == 1);
    CHECK(count_runs({0, 1, 2, 5}) == 2);
    CHECK(count_runs({3, 2, 1}) == 3);
    CHECK(count_runs({1, 2, 4, 5, 6, 0}) == 3);
}

namespace {

// Co-located parameter server for P = 3, 3 blocks: step 0 every rank sends
// the other two ranks their blocks and folds the two it receives with one
// 3-ary reduce; step 1 it sends its reduced block to both and copies it to
// a slot (only so the copy convention is exercised).
Plan colocated_ps3() {
    const int P = 3;
    Plan p;
    p.algorithm = "test-cps";
    p.nranks = P;
    p.nblocks = P;
    p.programs.resize(P);
    for (int r = 0; r < P; ++r) {
        auto& steps = p.programs[static_cast<size_t>(r)].steps;
        steps.resize(2);
        int slot = 0;
        for (int q = 0; q < P; ++q) {
            if (q == r) continue;
            steps[0].sends.push_back(Transfer{q, {q}, kResult});
            steps[0].recvs.push_back(Transfer{q, {r}, slot++});
            steps[1].sends.push_back(Transfer{q, {r}, kResult});
            steps[1].recvs.push_back(Transfer{q, {q}, kResult});
        }
        steps[0].ops.push_back(LocalOp{OpKind::Reduce, kResult, {0, 1}, {r}});
        steps[1].ops.push_back(LocalOp{OpKind::Copy, 2, {kResult}, {r}});
    }
    finalize(p);
    return p;
}

}  // namespace

TEST_CASE("stats of a co-located PS plan", "[stats]") {
    const Plan p = colocated_ps3();
    REQUIRE(check_plan(p).ok);
    // count 10 in 3 blocks: sizes 3, 3, 4.
    const size_t count = 10, esz = 2;
    const size_t sz[3] = {3, 3, 4};
    const PlanStats st = compute_stats(p, count, esz);
    CHECK(st.steps == 2);
    CHECK(st.bytes == 20);
    for (int r = 0; r < 3; ++r) {
        const auto& x = st.per_rank[static_cast<size_t>(r)];
        REQUIRE(x.size() == 2);
        const size_t others = count - sz[r];
        CHECK(x[0].bytes_sent == others * esz);
        CHECK(x[0].bytes_received == 2 * sz[r] * esz);
        CHECK(x[0].messages_sent == 2);
        CHECK(x[0].messages_received == 2);
        CHECK(x[0].incast == 2);
        CHECK(x[0].fan_in == 3);
        CHECK(x[0].elements_reduced == 2 * sz[r]);
        CHECK(x[0].memory_reads == 3 * sz[r]);
        CHECK(x[0].memory_writes == sz[r]);
        CHECK(x[1].bytes_sent == 2 * sz[r] * esz);
        CHECK(x[1].bytes_received == others * esz);
        CHECK(x[1].fan_in == 0);
        CHECK(x[1].elements_reduced == 0);
        CHECK(x[1].memory_reads == sz[r]);
        CHECK(x[1].memory_writes == sz[r]);
    }
    // Rank r sends count - sz[r], then 2 sz[r] (and receives the mirror).
    CHECK(st.max_bytes_sent_per_rank == (count + 4) * esz);
    CHECK(st.max_bytes_received_per_rank == (count + 4) * esz);
    CHECK(st.elements_reduced_per_rank == 8);
    CHECK(st.memory_accesses_per_rank == 4 * 4 + 2 * 4);
    CHECK(st.max_fan_in == 3);
    CHECK(st.max_incast == 2);
    CHECK(st.step_bytes == std::vector<size_t>{16, 16});
    CHECK(st.step_bytes_sent == std::vector<size_t>{14, 16});
    CHECK(st.step_bytes_received == std::vector<size_t>{16, 14});
    CHECK(st.step_elements_reduced == std::vector<size_t>{8, 0});
    CHECK(st.step_memory_accesses == std::vector<size_t>{16, 8});
    CHECK(st.step_incast == std::vector<int>{2, 2});
    CHECK(st.step_fan_in == std::vector<int>{3, 0});
    CHECK(st.step_messages == std::vector<int>{2, 2});
}

TEST_CASE("stats JSON has the public keys", "[stats][print]") {
    Plan p;
    REQUIRE(generate("ring", 4, {}, &p).is_ok());
    const PlanStats st = compute_stats(p, 1000, 4);
    const nlohmann::json j = stats_json(p, st);
    CHECK(j.at("algorithm") == "ring");
    CHECK(j.at("params") == "");
    CHECK(j.at("ranks") == 4);
    CHECK(j.at("count") == 1000);
    CHECK(j.at("bytes") == 4000);
    CHECK(j.at("steps") == 6);
    CHECK(j.at("max_bytes_sent_per_rank") == st.max_bytes_sent_per_rank);
    CHECK(j.at("max_bytes_received_per_rank") == st.max_bytes_received_per_rank);
    CHECK(j.at("elements_reduced_per_rank") == st.elements_reduced_per_rank);
    CHECK(j.at("max_fan_in") == 2);
    CHECK(j.at("max_incast") == 1);
    for (const char* k : {"bytes_sent", "bytes_received", "bytes", "elements_reduced",
                          "memory_accesses", "incast", "fan_in", "messages"}) {
        INFO(k);
        CHECK(j.at("per_step").at(k).size() == 6);
    }
    CHECK(j.at("per_step").at("bytes") == st.step_bytes);
}

TEST_CASE("programs print as readable text", "[print]") {
    CHECK(format_blocks({}) == "b[]");
    CHECK(format_blocks({2}) == "b[2]");
    CHECK(format_blocks({0, 1, 2, 3, 7}) == "b[0..3,7]");
    CHECK(format_blocks({5, 4}) == "b[5,4]");
    CHECK(format_buffer(kResult) == "result");
    CHECK(format_buffer(3) == "slot3");

    Plan p;
    REQUIRE(generate("ring", 4, {}, &p).is_ok());
    const std::string text = format_program(p, 1);
    CHECK(text.find("rank 1 step 0: recv b[0] from 0 -> slot0 | send b[1] to 2 from result | "
                    "reduce result ⊕= slot0 on b[0]\n") == 0);
    CHECK(text.find("rank 1 step 3: recv b[1] from 0 -> result | send b[2] to 2 from result\n") !=
          std::string::npos);
    CHECK(format_plan(p).find("# ring: P=4 nblocks=4 nslots=1 steps=6\n") == 0);

    const Plan q = colocated_ps3();
    CHECK(format_step(q.programs[0].steps[1]).find("copy slot2 := result on b[0]") !=
          std::string::npos);
    CHECK(format_step(q.programs[0].steps[0]).find("reduce result ⊕= slot0 ⊕ slot1 on b[0]") !=
          std::string::npos);
    CHECK(format_step(Step{}) == "(idle)");
}
