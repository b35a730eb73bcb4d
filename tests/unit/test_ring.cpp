// Ring allreduce: passes the checker for every P, and its statistics match
// the ring's definition computed here from block_range alone.
#include <catch2/catch.hpp>

#include "plan/checker.hpp"
#include "plan/registry.hpp"
#include "plan/stats.hpp"

using namespace genx;

namespace {

Plan ring(int P) {
    Plan p;
    Status s = generate("ring", P, {}, &p);
    INFO(s.message());
    REQUIRE(s.is_ok());
    return p;
}

size_t elems(size_t count, int P, int b) { return block_elems(count, P, ((b % P) + P) % P); }

}  // namespace

TEST_CASE("ring passes the checker for P = 1..64 and 128", "[ring][checker]") {
    std::vector<int> sizes;
    for (int P = 1; P <= 64; ++P) sizes.push_back(P);
    sizes.push_back(128);
    for (int P : sizes) {
        const Plan p = ring(P);
        const CheckResult r = check_plan(p);
        INFO("P=" << P << ": " << r.message);
        REQUIRE(r.ok);
        CHECK(p.nblocks == P);
        // Only P = 1 (nothing to combine) is trivially in rank order.
        CHECK(r.order_preserving == (P == 1));
    }
}

TEST_CASE("ring with one rank is an empty valid plan", "[ring]") {
    const Plan p = ring(1);
    CHECK(p.max_steps() == 0);
    CHECK(p.programs[0].steps.empty());
    CHECK(check_plan(p).ok);
    const PlanStats st = compute_stats(p, 1000, 4);
    CHECK(st.steps == 0);
    CHECK(st.max_bytes_sent_per_rank == 0);
}

TEST_CASE("ring statistics follow from its definition", "[ring][stats]") {
    for (int P = 2; P <= 64; ++P) {
        const Plan p = ring(P);
        for (size_t count : {size_t(0), size_t(1), size_t(P - 1), size_t(P), size_t(P + 1),
                             size_t(1000), size_t(65537)}) {
            const size_t esz = 8;
            const PlanStats st = compute_stats(p, count, esz);
            INFO("P=" << P << " count=" << count);
            REQUIRE(st.steps == 2 * (P - 1));
            size_t max_sent = 0, max_recv = 0, max_reduced = 0;
            for (int r = 0; r < P; ++r) {
                // Reduce-scatter sends every block but r+1, allgather every
                // block but r+2; receives miss r and r+1 respectively.
                const size_t sent =
                    (2 * count - elems(count, P, r + 1) - elems(count, P, r + 2)) * esz;
                const size_t recv = (2 * count - elems(count, P, r) - elems(count, P, r + 1)) * esz;
                // Rank r folds in every block but its own first block r.
                const size_t reduced = count - elems(count, P, r);

                size_t s_sent = 0, s_recv = 0, s_red = 0, s_mem = 0, nblocks_sent = 0;
                REQUIRE(st.per_rank[static_cast<size_t>(r)].size() ==
                        static_cast<size_t>(2 * (P - 1)));
                for (const StepStats& x : st.per_rank[static_cast<size_t>(r)]) {
                    s_sent += x.bytes_sent;
                    s_recv += x.bytes_received;
                    s_red += x.elements_reduced;
                    s_mem += x.memory_reads + x.memory_writes;
                    CHECK(x.incast == 1);
                    CHECK(x.messages_sent == 1);
                }
                for (const Step& step : p.programs[static_cast<size_t>(r)].steps)
                    for (const Transfer& t : step.sends) nblocks_sent += t.blocks.size();
                CHECK(nblocks_sent == static_cast<size_t>(2 * (P - 1)));
                CHECK(s_sent == sent);
                CHECK(s_recv == recv);
                CHECK(s_red == reduced);
                // GenModel §3.1: each 2-ary reduce reads 2 blocks, writes 1.
                CHECK(s_mem == 3 * reduced);
                CHECK(slot_elems(p, r, 0, count) == count - elems(count, P, r));
                max_sent = std::max(max_sent, sent);
                max_recv = std::max(max_recv, recv);
                max_reduced = std::max(max_reduced, reduced);
            }
            CHECK(st.max_bytes_sent_per_rank == max_sent);
            CHECK(st.max_bytes_received_per_rank == max_recv);
            CHECK(st.elements_reduced_per_rank == max_reduced);
            CHECK(st.max_fan_in == 2);
            CHECK(st.max_incast == 1);
            // Every block crosses some link in every step, so each step's
            // busiest rank moves the largest block.
            size_t big = 0;
            for (int b = 0; b < P; ++b) big = std::max(big, elems(count, P, b) * esz);
            for (int s = 0; s < st.steps; ++s) CHECK(st.step_bytes[static_cast<size_t>(s)] == big);
            CHECK(st.step_fan_in[0] == 2);
            CHECK(st.step_fan_in.back() == 0);
        }
    }
}
