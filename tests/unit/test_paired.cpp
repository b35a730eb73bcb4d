// --verify's paired test (tune/paired.hpp): a plan displaces Open MPI's
// component only where it measured the margin faster in (almost) every
// alternated batch, and never on fewer than 5 batches.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tune/paired.hpp"

using namespace genx::tune;

namespace {

// The 90 % sign-test allowance computed independently of slower_allowed():
// the largest k with 2 * sum_{i<k} C(n, i) / 2^n <= 0.10, minus one (-1
// where even k = 1 misses that), from exact integer binomials.
int reference_allowance(int n) {
    std::vector<unsigned long long> row(static_cast<size_t>(n) + 1, 0);
    row[0] = 1;
    for (int r = 1; r <= n; ++r)
        for (int i = r; i >= 1; --i) row[static_cast<size_t>(i)] += row[static_cast<size_t>(i) - 1];
    unsigned long long below = 0;  // sum of C(n, i) for i < k
    int k = 0;
    while (k < n / 2) {
        const unsigned long long next = below + row[static_cast<size_t>(k)];
        if (2.0 * static_cast<double>(next) / std::ldexp(1.0, n) > 0.10) break;
        below = next;
        ++k;
    }
    return k - 1;
}

}  // namespace

TEST_CASE("all five batches the margin faster resolve faster", "[paired][tune]") {
    const std::vector<double> theirs = {10, 11, 9, 12, 10};
    std::vector<double> mine;
    for (double t : theirs) mine.push_back(t * 0.9);  // 10 % faster in each
    const PairedCount c = count_faster(mine, theirs, 0.05);
    CHECK(c.pairs == 5);
    CHECK(c.faster == 5);
    CHECK(resolved_faster(mine, theirs, 0.05));
    // Not the other way round, and not at a margin above the gain.
    CHECK_FALSE(resolved_faster(theirs, mine, 0.05));
    CHECK_FALSE(resolved_faster(mine, theirs, 0.15));
}

TEST_CASE("one slower batch of five leaves it unresolved", "[paired][tune]") {
    const std::vector<double> theirs = {10, 10, 10, 10, 10};
    const std::vector<double> mine = {8, 8, 8, 11, 8};
    const PairedCount c = count_faster(mine, theirs, 0.05);
    CHECK(c.faster == 4);
    CHECK(c.pairs == 5);
    CHECK_FALSE(resolved_faster(mine, theirs, 0.05));
    // A batch faster, but by less than the margin, counts as not faster.
    const std::vector<double> close = {8, 8, 8, 9.9, 8};
    CHECK(count_faster(close, theirs, 0.05).faster == 4);
    CHECK_FALSE(resolved_faster(close, theirs, 0.05));
}

TEST_CASE("fewer than five paired batches never resolve", "[paired][tune]") {
    for (int n = 0; n < kMinPairedBatches; ++n) {
        const std::vector<double> theirs(static_cast<size_t>(n), 10.0);
        const std::vector<double> mine(static_cast<size_t>(n), 1.0);
        CHECK(count_faster(mine, theirs, 0.05).faster == n);
        CHECK(slower_allowed(n) == -1);
        CHECK_FALSE(resolved_faster(mine, theirs, 0.05));
    }
}

TEST_CASE("the margin's edge counts as faster, just above it does not", "[paired][tune]") {
    // 4 * (1 - 0.25) is exactly 3 in binary floating point.
    const std::vector<double> theirs(5, 4.0);
    std::vector<double> mine(5, 3.0);
    CHECK(resolved_faster(mine, theirs, 0.25));
    mine[2] = std::nextafter(3.0, 4.0);
    CHECK(count_faster(mine, theirs, 0.25).faster == 4);
    CHECK_FALSE(resolved_faster(mine, theirs, 0.25));
    // A margin of 0: ties count as faster, nothing slower does.
    CHECK(resolved_faster(theirs, theirs, 0.0));
}

TEST_CASE("batches pair by index over the shorter list, untimed ones skipped", "[paired][tune]") {
    const std::vector<double> theirs = {10, 10, 10, 10, 10, 10};
    // Six batches, one of mine untimed (-1): five pairs, all faster.
    std::vector<double> mine = {8, -1, 8, 8, 8, 8};
    CHECK(count_faster(mine, theirs, 0.05).pairs == 5);
    CHECK(resolved_faster(mine, theirs, 0.05));
    // One of theirs untimed (0) as well, in another batch: four pairs.
    std::vector<double> theirs2 = theirs;
    theirs2[4] = 0;
    CHECK(count_faster(mine, theirs2, 0.05).pairs == 4);
    CHECK_FALSE(resolved_faster(mine, theirs2, 0.05));
    // Unequal lengths: the seventh batch of mine has no partner.
    mine = {8, 8, 8, 8, 8, 8, 50};
    const PairedCount c = count_faster(mine, theirs, 0.05);
    CHECK(c.pairs == 6);
    CHECK(c.faster == 6);
    CHECK(resolved_faster(mine, theirs, 0.05));
    CHECK(resolved_faster(std::vector<double>(mine.begin(), mine.begin() + 5), theirs, 0.05));
    CHECK_FALSE(resolved_faster(std::vector<double>(mine.begin(), mine.begin() + 4), theirs, 0.05));
}

TEST_CASE("the allowance of slower batches is bench/compare's 90 % sign test", "[paired][tune]") {
    // bench/compare's median_interval: the range for 5-7 values, the second
    // smallest to second largest for 8 or 9.
    CHECK(slower_allowed(5) == 0);
    CHECK(slower_allowed(7) == 0);
    CHECK(slower_allowed(8) == 1);
    CHECK(slower_allowed(9) == 1);
    for (int n = 0; n <= 40; ++n) {
        INFO("pairs " << n);
        CHECK(slower_allowed(n) == reference_allowance(n));
    }
    // 8 batches: one slower still resolves, two do not.
    const std::vector<double> theirs(8, 10.0);
    std::vector<double> mine(8, 8.0);
    mine[3] = 12;
    CHECK(resolved_faster(mine, theirs, 0.05));
    mine[6] = 12;
    CHECK_FALSE(resolved_faster(mine, theirs, 0.05));
}

TEST_CASE("a plan faster on the median but slower in one batch does not displace",
          "[paired][tune]") {
    // Medians 4.7 and 5.1 (8 % apart, above a 5 % margin); the fourth batch
    // of the plan ran slower: Unresolved, so --verify keeps the displaced
    // component.
    const std::vector<double> plan = {4.6, 4.7, 4.8, 6.0, 4.5};
    const std::vector<double> displaced = {5.1, 5.0, 5.2, 5.0, 5.3};
    CHECK(compare_paired(4.7, plan, 5.1, displaced, 0.05) == Paired::Unresolved);
    // The same medians with every batch faster displace it.
    const std::vector<double> steady = {4.6, 4.7, 4.8, 4.7, 4.5};
    CHECK(compare_paired(4.7, steady, 5.1, displaced, 0.05) == Paired::Faster);
    // A median within the margin is NotFaster whatever the batches say.
    CHECK(compare_paired(5.0, steady, 5.1, displaced, 0.05) == Paired::NotFaster);
    // So is a comparison where either side was not timed.
    CHECK(compare_paired(4.7, steady, -1, {}, 0.05) == Paired::NotFaster);
    CHECK(compare_paired(-1, {}, 5.1, displaced, 0.05) == Paired::NotFaster);
    // Faster on the median and in every batch timed, but only 3 batches
    // (a short budget): Unresolved.
    CHECK(compare_paired(4.7, {4.6, 4.7, 4.8}, 5.1, {5.1, 5.0, 5.2}, 0.05) == Paired::Unresolved);
}
