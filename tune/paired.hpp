// --verify's paired test: two ops timed in alternated batches
// (tune/timing.hpp, measure_isolated) compared batch by batch, so that a
// plan displaces Open MPI's component only where it measured faster in
// (almost) every batch, not where the medians of a few noisy batches
// happen to differ (docs/genx-tune.md, "Decisions").  Pure, no MPI.
#pragma once

#include <vector>

namespace genx::tune {

// The fewest paired batches that can resolve a difference: with 5, all
// faster has a one-sided chance of 1/32 under no difference.
constexpr int kMinPairedBatches = 5;

// Batches b timed for both ops (both > 0; b below both sizes) and in how
// many of them `mine` measured at least `margin` faster:
// mine[b] <= theirs[b] * (1 - margin).
struct PairedCount {
    int faster = 0;
    int pairs = 0;
};
PairedCount count_faster(const std::vector<double>& mine, const std::vector<double>& theirs,
                         double margin);

// How many of `pairs` batches may be slower while the test still resolves
// "faster": the sign test's 90 % interval of the median ratio, as
// bench/compare's "paired by round" verdict computes it, lies at or below
// 1 - margin.  0 for 5 to 7 pairs (every batch faster), 1 for 8 or 9;
// -1 below kMinPairedBatches (never resolved).
int slower_allowed(int pairs);

// True when `mine` is resolved at least `margin` faster than `theirs`:
// at least kMinPairedBatches paired batches, and no more slower than
// slower_allowed().  measure_isolated runs at most 5 batches, so there
// this means faster in every one of 5.
bool resolved_faster(const std::vector<double>& mine, const std::vector<double>& theirs,
                     double margin);

// --verify's test of one op against another: NotFaster where `mine`'s
// statistic (median or minimum) is not `margin` below `theirs`' or either
// was not timed (<= 0), Unresolved where it is but resolved_faster() does
// not hold on their batches, Faster where both hold.  Only Faster
// displaces the other op.
enum class Paired { NotFaster, Unresolved, Faster };
Paired compare_paired(double mine, const std::vector<double>& mine_batches, double theirs,
                      const std::vector<double>& theirs_batches, double margin);

}  // namespace genx::tune
