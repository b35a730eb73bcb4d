// Running and keeping the fit's benchmarks (the measurement phases,
// tune/phases.hpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/context.hpp"

namespace genx::tune {

// Keeps a measurement (seconds > 0; else counts it as skipped) for the fit,
// in `into` (default: ctx->data), with its CSV row and a progress line.
void keep(Context* ctx, const std::string& kind, const std::string& series,
          std::shared_ptr<const Plan> plan, const RankMap& ranks, size_t bytes, double seconds,
          Measurement::Role role, std::vector<Measurement>* into = nullptr);

// `plan` on the world ranks `members` (rank 0 first) at each of `sizes`
// within `budget`, kept as `kind`, `series` with `ranks` as the model
// places them; `todo` counts the phase's measurements still to come.
// Every rank calls it alike.
struct BenchSpec {
    std::string kind, series;
    std::shared_ptr<const Plan> plan;
    std::vector<int> members;
    RankMap ranks;
};
void bench(Context* ctx, const BenchSpec& spec, const std::vector<size_t>& sizes,
           const Budget& budget, int* todo, std::vector<Measurement>* into = nullptr);
// `plan` on the first x ranks (series "KIND P=x").
void bench_first(Context* ctx, const std::string& kind, const std::shared_ptr<const Plan>& plan,
                 int x, const std::vector<size_t>& sizes, const Budget& budget, int* todo);

// The classes of the switch links between rank 0's host and rank r's
// (class id -> links of it on the route; empty without a tree).
std::map<int, int> route_classes(const Context& ctx, int r);

// The world ranks listed, in that order (a null Comm elsewhere).
// Collective over the world.
mpi::Comm sub_comm(const Context& ctx, const std::vector<int>& members);

}  // namespace genx::tune
