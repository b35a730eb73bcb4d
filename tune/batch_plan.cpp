// genx-tune's batch sizing (tune/batch_plan.hpp).
#include "tune/batch_plan.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "plan/gentree.hpp"
#include "plan/registry.hpp"

namespace genx::tune {

std::array<int, 2> plan_op_batches(double one, double left, double target, int remaining,
                                   double per_call, int min_calls) {
    one = std::max(one + per_call, 1e-7);
    target = std::min(target, left / std::max(remaining, 1));
    if (!(one < left)) return {0, 0};
    int batches = 5;
    int iters = std::max(min_calls, static_cast<int>(target / batches / one));
    iters = std::min(iters, 10000);
    while (batches > 1 && one * iters * batches > left) --batches;
    while (iters > 1 && one * iters * batches > left) iters /= 2;
    return {batches, iters};
}

std::vector<std::array<int, 2>> plan_point_batches(const BatchRequest& r) {
    const size_t n = r.one.size();
    // An op not warmed up (no time for it) shares nothing.
    std::vector<char> kept(n, 1);
    for (size_t k = 0; k < n; ++k) kept[k] = std::isfinite(r.one[k]) ? 1 : 0;
    std::vector<std::array<int, 2>> plans(n);
    size_t dropped = 0;
    for (;;) {
        const int sharing = static_cast<int>(std::count(kept.begin(), kept.end(), 1));
        int fewest = 0;
        for (size_t k = 0; k < n; ++k) {
            plans[k] = kept[k] ? plan_op_batches(r.one[k], r.left / std::max(sharing, 1), r.target,
                                                 r.remaining, r.per_call, 1)
                               : std::array<int, 2>{0, 0};
            if (plans[k][0] > 0) fewest = fewest == 0 ? plans[k][0] : std::min(fewest, plans[k][0]);
        }
        // Enough batches for every kept op, or nothing left to drop.
        if (fewest >= r.want || dropped == r.drop_order.size()) break;
        const size_t k = r.drop_order[dropped++];
        if (k < n) kept[k] = 0;
    }
    return plans;
}

std::vector<size_t> warm_up_order(size_t n, const std::vector<size_t>& drop_order) {
    std::vector<size_t> order;
    for (size_t k = 0; k < n; ++k)
        if (std::find(drop_order.begin(), drop_order.end(), k) == drop_order.end()) order.push_back(k);
    for (size_t j = drop_order.size(); j-- > 0;)
        if (drop_order[j] < n && std::find(order.begin(), order.end(), drop_order[j]) == order.end())
            order.push_back(drop_order[j]);
    return order;
}

bool warm_another(const std::vector<double>& warmed_one, double left, int want, double per_call) {
    double slowest = 0;
    for (double one : warmed_one) slowest = std::max(slowest, one);
    const double shares = static_cast<double>(warmed_one.size() + 1) * want;
    return left > 0 && left >= slowest + (slowest + per_call) * shares;
}

double later_points_reserve(const std::vector<double>& first_price, size_t k, double ratio,
                            int batches) {
    double sum = 0;
    for (size_t j = k + 1; j < first_price.size(); ++j) sum += std::max(first_price[j], 0.0);
    return sum * ratio * (1 + batches);
}

double point_deadline(double deadline, double now, double reserve, double own) {
    return std::min(deadline, std::max(deadline - reserve, now + own));
}

std::string same_chunk_size(const std::string& alg, const std::string& params, size_t from, size_t to) {
    ParamMap pm;
    if (alg != "gentree" || from == 0 || to <= from || !parse_params(params, &pm)) return params;
    auto it = pm.find("pipeline");
    long k = 0;
    if (it == pm.end() || !parse_int_in(it->second, 2, kGenTreeMaxPipeline, &k)) return params;
    const long deepest = *std::max_element(std::begin(kGenTreeOfferedPipelines), std::end(kGenTreeOfferedPipelines));
    for (size_t b = from; b <= to / 2 && k * 2 <= deepest; b *= 2) k *= 2;
    it->second = std::to_string(k);
    return format_params(pm);
}

}  // namespace genx::tune
