// A one-step cyclic shift over the first 3 and over all ranks at latency
// sizes: beside the pairwise exchange it measures what a step whose
// partners differ costs more (LinkParams::alpha_shift, docs/model.md).
#include "tune/bench.hpp"
#include "tune/phases.hpp"

namespace genx::tune {

void measure_shift(Context* ctx) {
    if (ctx->size < 3) return;
    const Budget budget = ctx->phase_end(ctx->shares.shift);
    std::vector<int> sizes = {3};
    if (ctx->size > 3) sizes.push_back(ctx->size);
    const std::vector<size_t> shift_bytes = {8, 512, 4096};
    int todo = static_cast<int>(sizes.size() * shift_bytes.size());
    for (int x : sizes)
        bench_first(ctx, "shift", std::make_shared<Plan>(shift_plan(x)), x, shift_bytes, budget,
                    &todo);
}

}  // namespace genx::tune
