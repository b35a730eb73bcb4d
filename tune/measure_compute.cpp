// The benchmarks that fit γ, δ (a local k-ary reduction) and ε, w_t (the
// co-located PS allreduce over 2 … P ranks) (tune/phases.hpp;
// docs/genx-tune.md, "What it measures").
#include "runtime/reduce.hpp"
#include "tune/bench.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"

namespace genx::tune {

// One fused k-ary reduction on every rank at once (Figure 4, eq. (5)).
void measure_reduction(Context* ctx) {
    const int max_k = ctx->opt.reduce_max_k;
    ReduceKernel kernel;
    check(resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, sizeof(float), nullptr, true, &kernel),
          "float SUM kernel");
    const Budget budget = ctx->phase_end(ctx->shares.reduce);
    int todo = static_cast<int>(ctx->reduce_bytes.size()) * (max_k - 1);
    for (size_t bytes : ctx->reduce_bytes) {
        const size_t n = bytes / sizeof(float);
        std::vector<std::vector<float>> vecs(static_cast<size_t>(max_k), std::vector<float>(n, 0.0f));
        std::vector<const void*> srcs;
        for (size_t i = 1; i < vecs.size(); ++i) srcs.push_back(vecs[i].data());
        for (int k = 2; k <= max_k; ++k) {
            const double s = measure(
                ctx->world, [&] { kernel.apply(vecs[0].data(), srcs.data(), k - 1, n); }, budget,
                ctx->timing, todo--);
            keep(ctx, "reduce", "reduce k=" + std::to_string(k),
                 std::make_shared<Plan>(local_reduce_plan(k)), RankMap{}, bytes, s,
                 Measurement::Role::Auto);
        }
    }
}

// The co-located PS on the first x ranks: its fan-in x exposes ε and w_t
// (§3.4).
void measure_ps(Context* ctx) {
    const Budget budget = ctx->phase_end(ctx->shares.cps);
    int todo = (ctx->size - 1) * static_cast<int>(ctx->cps_bytes.size());
    for (int x = 2; x <= ctx->size; ++x) {
        auto plan = std::make_shared<Plan>();
        check(generate("cps", x, ParamMap{}, plan.get()), "cps plan");
        bench_first(ctx, "cps", plan, x, ctx->cps_bytes, budget, &todo);
    }
}

}  // namespace genx::tune
