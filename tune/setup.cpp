// genx-tune's start: options parsed and checked, Open MPI's algorithms
// made available (tune/phases.hpp).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/mpi_tuned.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"

namespace genx::tune {

namespace {

bool wants_ompi_algorithms(const Options& opt) {
    return opt.verify && !opt.no_fallback && opt.ompi_algorithms != "none";
}

std::vector<size_t> pow2_grid(size_t lo, size_t hi) {
    std::vector<size_t> g;
    size_t v = 1;
    while (v < lo) v *= 2;
    for (; v <= hi; v *= 2) g.push_back(v);
    return g;
}

// Open MPI's algorithms --verify times (tuned's numbers), by name.
std::vector<BaseAlgorithm> parse_ompi_algorithms(const std::string& text) {
    if (text == "all") return base_algorithms();
    std::vector<BaseAlgorithm> algs;
    if (text == "none") return algs;
    std::stringstream list(text);
    std::string name;
    while (std::getline(list, name, ',')) {
        const BaseAlgorithm* b = find_base_algorithm(name);
        if (b == nullptr)
            die("--ompi-algorithms: unknown Open MPI allreduce algorithm '" + name +
                    "' (known: " + base_algorithm_names() + "; or all, none)",
                2);
        bool listed = false;
        for (const BaseAlgorithm& a : algs) listed = listed || a.tuned_id == b->tuned_id;
        if (!listed) algs.push_back(*b);
    }
    return algs;
}

// Where genx's component is loaded, MPI_Allreduce would time genx, not the
// component it displaces: --verify then goes on as with --no-fallback.
void check_displaced(Context* ctx) {
    if (!ctx->opt.verify || ctx->opt.no_fallback) return;
    if (ctx->world.max(mpi::genx_component_active() ? 1 : 0) == 0) return;
    ctx->opt.no_fallback = true;
    if (ctx->rank == 0)
        std::fprintf(stderr,
                     "genx-tune: warning: genx's component is loaded in this job "
                     "(coll_genx_priority >= 0), so MPI_Allreduce would time genx, not "
                     "the component it displaces; --verify goes on as with --no-fallback "
                     "(no decision defers). Run genx-tune with --mca coll ^genx.\n");
}

// Open MPI's algorithms are timed as tuned runs them when forced
// (runtime/mpi_tuned.hpp); where tuned would not, none is timed.
void check_forcing(Context* ctx) {
    if (ctx->ompi_algs.empty() || ctx->opt.no_fallback) return;
    const std::string why = mpi::forced_algorithms_unavailable();
    if (ctx->world.max(why.empty() ? 0 : 1) == 0) return;
    ctx->ompi_algs.clear();
    if (ctx->rank == 0)
        std::fprintf(stderr,
                     "genx-tune: warning: Open MPI's allreduce algorithms cannot be forced "
                     "here (%s); --verify goes on as with --ompi-algorithms none.\n",
                     why.empty() ? "on another rank" : why.c_str());
}

}  // namespace

void prepare(const Options& opt) {
    if (wants_ompi_algorithms(opt)) mpi::allow_forced_algorithms();
}

void setup(Context* ctx) {
    Options& opt = ctx->opt;
    ctx->world = mpi::Comm::world();
    ctx->rank = ctx->world.rank();
    ctx->size = ctx->world.size();
    double t0 = mpi::wtime();
    ctx->world.bcast(&t0, 1);
    set_reporter(ctx->rank, t0);
    ctx->launched = t0;
    ctx->timing.target = opt.target;
    ctx->timing.use_min = opt.statistic == "min";

    size_t min_bytes = 0, max_bytes = 0, p2p_max = 0;
    check(parse_size(opt.min_bytes, &min_bytes), "--min-bytes");
    check(parse_size(opt.max_bytes, &max_bytes), "--max-bytes");
    check(parse_size(opt.p2p_max, &p2p_max), "--p2p-max");
    if (min_bytes < sizeof(float) || max_bytes < min_bytes)
        die("--min-bytes/--max-bytes: need 4 <= min <= max", 2);
    if (opt.no_fallback && !opt.verify)
        die("--no-fallback applies to --verify's measurements; add --verify", 2);
    ctx->ompi_algs = parse_ompi_algorithms(opt.ompi_algorithms);
    check_displaced(ctx);
    check_forcing(ctx);
    ctx->grid = pow2_grid(min_bytes, max_bytes);
    for (size_t bytes = 8; bytes <= p2p_max; bytes *= 4) ctx->p2p_bytes.push_back(bytes);
}

}  // namespace genx::tune
