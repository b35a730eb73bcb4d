// --verify's paired test (tune/paired.hpp).
#include "tune/paired.hpp"

#include <algorithm>
#include <cmath>

namespace genx::tune {

PairedCount count_faster(const std::vector<double>& mine, const std::vector<double>& theirs,
                         double margin) {
    PairedCount c;
    const size_t n = std::min(mine.size(), theirs.size());
    for (size_t b = 0; b < n; ++b) {
        if (!(mine[b] > 0) || !(theirs[b] > 0)) continue;  // not timed in this batch
        ++c.pairs;
        if (mine[b] <= theirs[b] * (1 - margin)) ++c.faster;
    }
    return c;
}

// bench/compare's median_interval at 90 % coverage: the largest k whose
// interval from the k-th smallest to the k-th largest ratio misses the
// median with at most 10 % chance (2 P(Binomial(n, 1/2) < k)); "faster"
// needs the k-th largest ratio at or below the bar, so k - 1 batches may
// be above it.  Below 5 pairs even k = 1 misses too often (4: 12.5 %).
int slower_allowed(int pairs) {
    if (pairs < kMinPairedBatches) return -1;
    const double all = std::ldexp(1.0, pairs);  // 2^pairs outcomes
    double tail = 0, comb = 1;                  // P(fewer than k below); C(pairs, k)
    int k = 0;
    while (k < pairs / 2) {
        const double next = tail + comb / all;
        if (2 * next > 0.10) break;
        tail = next;
        ++k;
        comb = comb * (pairs - k + 1) / k;
    }
    return k - 1;
}

bool resolved_faster(const std::vector<double>& mine, const std::vector<double>& theirs,
                     double margin) {
    const PairedCount c = count_faster(mine, theirs, margin);
    const int allowed = slower_allowed(c.pairs);
    return allowed >= 0 && c.pairs - c.faster <= allowed;
}

Paired compare_paired(double mine, const std::vector<double>& mine_batches, double theirs,
                      const std::vector<double>& theirs_batches, double margin) {
    if (!(mine > 0) || !(theirs > 0) || mine > theirs * (1 - margin)) return Paired::NotFaster;
    return resolved_faster(mine_batches, theirs_batches, margin) ? Paired::Faster
                                                                 : Paired::Unresolved;
}

}  // namespace genx::tune
