// The fit's benchmarks (tune/bench.hpp).
#include "tune/bench.hpp"

#include "tune/report.hpp"

namespace genx::tune {

void keep(Context* ctx, const std::string& kind, const std::string& series,
          std::shared_ptr<const Plan> plan, const RankMap& ranks, size_t bytes, double seconds,
          Measurement::Role role, std::vector<Measurement>* into) {
    if (into == nullptr) into = &ctx->data;
    Record r;
    r.kind = kind;
    r.series = series;
    r.algorithm = plan->algorithm;
    r.params = plan->params;
    r.ranks = plan->nranks;
    r.bytes = bytes;
    r.measured = seconds;
    if (seconds > 0) {
        Measurement m;
        m.kind = kind;
        m.label = series + " " + format_bytes(bytes);
        m.plan = std::move(plan);
        m.ranks = ranks;
        m.count = bytes / sizeof(float);
        m.elem_size = sizeof(float);
        m.seconds = seconds;
        m.role = role;
        (into == &ctx->data ? r.measurement : r.route) = static_cast<int>(into->size());
        into->push_back(std::move(m));
    } else {
        ++ctx->skipped;
    }
    ctx->records.push_back(r);
    progress(kind + " " + series + " " + format_bytes(bytes) + ": " +
             (seconds > 0 ? format_seconds(seconds) : std::string("skipped (time budget)")));
}

mpi::Comm sub_comm(const Context& ctx, const std::vector<int>& members) {
    int color = -1, key = 0;
    for (size_t i = 0; i < members.size(); ++i)
        if (members[i] == ctx.rank) {
            color = 0;
            key = static_cast<int>(i);
        }
    return ctx.world.split(color, key);
}

void bench(Context* ctx, const BenchSpec& spec, const std::vector<size_t>& sizes,
           const Budget& budget, int* todo, std::vector<Measurement>* into) {
    const mpi::Comm c = sub_comm(*ctx, spec.members);
    for (size_t bytes : sizes) {
        double s = 0;
        if (c) {
            PlanRun run(*spec.plan, c, bytes / sizeof(float));
            s = measure(c, [&] { run.run(); }, budget, ctx->timing, *todo);
        }
        --*todo;
        // Ranks that sat it out wait asleep (mpi::Comm::bcast_asleep).
        ctx->world.bcast_asleep(&s);
        keep(ctx, spec.kind, spec.series, spec.plan, spec.ranks, bytes, s, Measurement::Role::Auto,
             into);
    }
}

void bench_first(Context* ctx, const std::string& kind, const std::shared_ptr<const Plan>& plan,
                 int x, const std::vector<size_t>& sizes, const Budget& budget, int* todo) {
    BenchSpec spec{kind, kind + " P=" + std::to_string(x), plan, {}, ctx->cluster.map_of_first(x)};
    for (int r = 0; r < x; ++r) spec.members.push_back(r);
    bench(ctx, spec, sizes, budget, todo);
}

std::map<int, int> route_classes(const Context& ctx, int r) {
    const RankMap& t = ctx.tree_map;
    return t.tree ? t.tree->route_classes(t.node[0], t.node[static_cast<size_t>(r)])
                  : std::map<int, int>();
}

}  // namespace genx::tune
