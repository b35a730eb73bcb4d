// The fit of GenModel to the measurements (tune/phases.hpp; tuning/fit.hpp,
// docs/genx-tune.md, "The fit").
#include <cstdio>

#include "topology/topology.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"

namespace genx::tune {

namespace {

// Hosts, then the switch classes on them; then the hosts again with what
// those classes add taken off the benchmarks that cross them (cps and
// shift over ranks under different switches), and the classes again on
// the new hosts' parameters.
void fit_switch_classes(Context* ctx, FitOptions fopt) {
    check(fit_link_classes(ctx->route_data, ctx->fit.params, &ctx->model, &ctx->class_rows),
          "fitting the switch links' classes");
    fopt.classes = ctx->model.classes;
    check(fit_model(ctx->data, fopt, &ctx->fit), "fitting the model");
    ModelParams hosts = ctx->fit.params;
    hosts.classes.clear();
    check(fit_link_classes(ctx->route_data, hosts, &ctx->model, &ctx->class_rows),
          "fitting the switch links' classes");
}

// The CSV's predictions of what was measured.
void predict_records(Context* ctx) {
    for (Record& r : ctx->records)
        if (r.measurement >= 0) {
            const FitPoint& p = ctx->fit.points[static_cast<size_t>(r.measurement)];
            r.predicted = p.predicted;
            r.held_out = p.held_out;
        }
    for (Record& r : ctx->records)
        if (r.route >= 0) {
            const Measurement& m = ctx->route_data[static_cast<size_t>(r.route)];
            r.predicted = predict(*m.plan, m.count, m.elem_size, ctx->model, m.ranks).seconds;
        }
}

void print_report(const Context& ctx) {
    std::printf("%s", format_fit_report(ctx.data, ctx.fit).c_str());
    for (const ClassFit& c : ctx.class_rows) {
        if (c.note.rfind("not fitted", 0) == 0)
            std::printf("  switch class %-8s (%zu points): %s\n", c.name.c_str(), c.points,
                        c.note.c_str());
        else
            std::printf("  switch class %-8s alpha %.3e s per link, beta %.3e s/B (%s) "
                        "(%zu points): %s\n",
                        c.name.c_str(), c.alpha, c.beta,
                        c.beta > 0 ? format_rate(1 / c.beta).c_str() : "-", c.points,
                        c.note.c_str());
    }
    std::fflush(stdout);
}

}  // namespace

// Every rank fits: the decisions are computed everywhere so that --verify
// can run them; the fit is deterministic.
void fit(Context* ctx) {
    FitOptions fopt;
    fopt.holdout_every = ctx->opt.holdout_every;
    check(fit_model(ctx->data, fopt, &ctx->fit), "fitting the model");
    ctx->model = ctx->fit.params;
    if (!ctx->route_data.empty()) fit_switch_classes(ctx, fopt);
    predict_records(ctx);
    if (ctx->rank == 0) print_report(*ctx);
    const FitResult& f = ctx->fit;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "fit done: held-out |error| median %.1f%%, mean %.1f%% over %zu points; %zu "
                  "outliers",
                  100 * f.held_out.median_rel, 100 * f.held_out.mean_rel, f.held_out.points,
                  f.outliers.size());
    progress(buf);
}

}  // namespace genx::tune
