// genx-tune's batch sizing for --verify (tune/batch_plan.hpp): each op's
// share of the budget, the common batch count, and which ops are left out
// when the budget cannot give the kept ones the batches a paired decision
// needs.
#include <catch2/catch.hpp>

#include <limits>

#include "tune/batch_plan.hpp"

using namespace genx::tune;

TEST_CASE("one op's batches fit its share of the budget", "[tune][batches]") {
    // 1 ms calls, 0.2 s target, plenty left: 5 batches of 40 calls.
    auto p = plan_op_batches(1e-3, 100, 0.2, 1, 0, 1);
    CHECK(p[0] == 5);
    CHECK(p[1] == 40);
    // The target shrinks with the measurements still to come.
    p = plan_op_batches(1e-3, 1, 0.2, 10, 0, 1);
    CHECK(p[0] == 5);
    CHECK(p[1] == 20);
    // 2 s calls with 5 s left: 2 batches of one call.
    p = plan_op_batches(2, 5, 0.2, 1, 0, 1);
    CHECK(p[0] == 2);
    CHECK(p[1] == 1);
    // Not one call fits; the barrier counts in each call.
    p = plan_op_batches(2, 1.9, 0.2, 1, 0, 1);
    CHECK(p[0] == 0);
    p = plan_op_batches(1.0, 1.05, 0.2, 1, 0.1, 1);
    CHECK(p[0] == 0);
    // At least `min_calls` a batch where they fit.
    p = plan_op_batches(1e-3, 100, 1e-9, 1, 0, 2);
    CHECK(p[1] == 2);
}

TEST_CASE("a point whose budget suffices keeps every op", "[tune][batches]") {
    BatchRequest r;
    r.one = {1e-3, 2e-3, 1e-3, 3e-3};
    r.left = 60;
    r.drop_order = {3, 2, 1};
    const auto plans = plan_point_batches(r);
    REQUIRE(plans.size() == 4);
    for (const auto& p : plans) CHECK(p[0] == 5);
}

TEST_CASE("a short budget leaves out ops in the given order until 5 batches fit",
          "[tune][batches]") {
    // 8 MiB on the emulated 2dc: six plans and the displaced component at
    // 2.2-3.3 s a call, 45 s left.  Shared by all seven, each gets 6.4 s:
    // one or two batches.  Left out from the end of drop_order until the
    // kept ops get 5 batches: plan 0 (the model's first) and the displaced
    // (index 6) stay.
    BatchRequest r;
    r.one = {2.19, 2.19, 3.29, 2.79, 2.75, 2.29, 2.72};
    r.left = 45;
    r.drop_order = {5, 4, 3, 2, 1};
    const auto plans = plan_point_batches(r);
    CHECK(plans[0][0] == 5);
    CHECK(plans[6][0] == 5);
    int kept = 0;
    for (const auto& p : plans) kept += p[0] > 0;
    // 45 s / 3 ops = 15 s: 5 calls of 2.2-2.7 s fit for three ops; four
    // get 11.25 s each, 3 calls of op 2's 3.29 s.
    CHECK(kept == 3);
    CHECK(plans[1][0] == 5);  // the last in drop_order to go is kept
    for (size_t k : {2, 3, 4, 5}) CHECK(plans[k][0] == 0);
    // Without a drop order every op is timed, with one or two batches.
    r.drop_order.clear();
    const auto all = plan_point_batches(r);
    CHECK(all[2][0] == 1);
    for (size_t k : {0, 1, 3, 4, 5, 6}) CHECK(all[k][0] == 2);
}

TEST_CASE("ops not in the drop order are never left out", "[tune][batches]") {
    BatchRequest r;
    r.one = {3, 3, 3};
    r.left = 10;
    r.drop_order = {2};
    const auto plans = plan_point_batches(r);
    // After dropping op 2, ops 0 and 1 share 10 s: one batch each (5 s), and
    // nothing more may go.
    CHECK(plans[2][0] == 0);
    CHECK(plans[0][0] == 1);
    CHECK(plans[1][0] == 1);
}

TEST_CASE("warm-ups go to the ops a decision needs first", "[tune][batches]") {
    // 5 ops: plans 0-2, the displaced component 3, an Open MPI algorithm 4;
    // dropped first: 4, then plans 2 and 1.  Warmed: 0 and 3, then 1, 2, 4.
    CHECK(warm_up_order(5, {4, 2, 1}) == std::vector<size_t>{0, 3, 1, 2, 4});
    CHECK(warm_up_order(3, {}) == std::vector<size_t>{0, 1, 2});
    // Indices past the ops are ignored.
    CHECK(warm_up_order(2, {7, 1}) == std::vector<size_t>{0, 1});
}

TEST_CASE("a point holds back the later points' paired batches", "[tune][batches]") {
    // The model prices the first plans 1, 2 and 4 s at the last three
    // points; the pair measured 2.5 s per second of price at the latest
    // point: each later point needs one warm-up and 5 batches of both.
    const std::vector<double> price = {0.5, 1, 2, 4};
    CHECK(later_points_reserve(price, 1, 2.5, 5) == Approx((2 + 4) * 2.5 * 6));
    CHECK(later_points_reserve(price, 3, 2.5, 5) == 0);  // the last point keeps it all
    CHECK(later_points_reserve(price, 0, 1, 0) == Approx(7));
    // Unpriced points (-1) hold nothing back.
    CHECK(later_points_reserve({1, -1, 2}, 0, 1, 0) == Approx(2));
}

TEST_CASE("a point's deadline leaves the reserve but keeps its own pair", "[tune][batches]") {
    // 100 s left, 30 s reserved: the point ends 30 s early.
    CHECK(point_deadline(200, 100, 30, 5) == Approx(170));
    // The reserve exceeds what is left: the point still gets its own 5 s.
    CHECK(point_deadline(200, 100, 150, 5) == Approx(105));
    // Never past the deadline.
    CHECK(point_deadline(200, 198, 150, 5) == Approx(200));
    CHECK(point_deadline(200, 100, 0, 5) == Approx(200));
}

TEST_CASE("a point warms up another op only where its batches still fit", "[tune][batches]") {
    // 8 MiB: the leading plan and the displaced component warmed at 3 and
    // 4 s.  A third op priced as the slowest: its 4 s warm-up, then three
    // equal shares of 5 calls at 4 s, 64 s in all.
    CHECK(warm_another({3, 4}, 64, 5, 0));
    CHECK_FALSE(warm_another({3, 4}, 60, 5, 0));
    // The barrier counts in every call.
    CHECK_FALSE(warm_another({3, 4}, 64, 5, 0.2));
    // Nothing warmed: any time left.
    CHECK(warm_another({}, 1, 5, 0));
    CHECK_FALSE(warm_another({}, 0, 5, 0));
}

TEST_CASE("an op not warmed up takes no share of the point", "[tune][batches]") {
    // Op 2 was not warmed (no time): ops 0 and 1 share the 25 s, 5 batches
    // of their 2 s calls (a third share would leave them 4).
    BatchRequest r;
    r.one = {2, 2, std::numeric_limits<double>::infinity()};
    r.left = 25;
    const auto plans = plan_point_batches(r);
    CHECK(plans[0][0] == 5);
    CHECK(plans[1][0] == 5);
    CHECK(plans[2][0] == 0);
}

TEST_CASE("the reserve holds a later point's unequal pair for 5 batches each", "[tune][batches]") {
    // A later point whose leading plan warms up at 4 s and the displaced
    // component at 5.3 s, the model pricing its first plan at 2 s: the
    // ratio the verifier learns is 2 × 5.3 / 2.  What the reserve holds,
    // less both warm-ups, must size both ops to 5 batches.
    const double ratio = 2 * 5.3 / 2;
    const double reserve = later_points_reserve({1, 2}, 0, ratio, 5);
    BatchRequest r;
    r.one = {4, 5.3};
    r.left = reserve - 4 - 5.3;
    const auto plans = plan_point_batches(r);
    CHECK(plans[0][0] == 5);
    CHECK(plans[1][0] == 5);
    // A ratio from the pair's sum, (4 + 5.3) / 2, would not: the slower op
    // gets 4.
    const double summed = later_points_reserve({1, 2}, 0, (4 + 5.3) / 2, 5);
    r.left = summed - 4 - 5.3;
    CHECK(plan_point_batches(r)[1][0] < 5);
}

TEST_CASE("the leading GenTree plan keeps the chunk size measured fastest", "[tune]") {
    const std::string p16 = "pipeline=16,plans=cps/cps/cps";
    // Twice the bytes: twice the chunks; eight times: capped at the deepest offered.
    CHECK(same_chunk_size("gentree", p16, 2 << 20, 4 << 20) == "pipeline=32,plans=cps/cps/cps");
    CHECK(same_chunk_size("gentree", p16, 2 << 20, 16 << 20) == "pipeline=64,plans=cps/cps/cps");
    CHECK(same_chunk_size("gentree", "pipeline=2,plans=cps", 1024, 3000) == "pipeline=4,plans=cps");
    // Unchanged: the same or a smaller size, an unpipelined plan, another family.
    CHECK(same_chunk_size("gentree", p16, 4 << 20, 4 << 20) == p16);
    CHECK(same_chunk_size("gentree", p16, 4 << 20, 2 << 20) == p16);
    CHECK(same_chunk_size("gentree", "plans=cps/cps", 1024, 4096) == "plans=cps/cps");
    CHECK(same_chunk_size("ring", "pipeline=4", 1024, 4096) == "pipeline=4");
}

