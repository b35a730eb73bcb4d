// genx-tune's phases, one function each, in the order tools/genx_tune.cpp
// runs them (docs/genx-tune.md): every rank calls each phase alike, and
// rank 0 makes every timing decision and broadcasts it, so that all ranks
// stay in step.  Bad input aborts the job with status 2, a failed
// measurement or fit with 1 (die()).
#pragma once

#include "tune/context.hpp"
#include "tuning/rules.hpp"

namespace genx::tune {

// Before MPI_Init: what Open MPI must know at start-up (--ompi-algorithms).
void prepare(const Options& opt);
// After MPI_Init: the world, the clock, the options checked and parsed.
void setup(Context* ctx);
// The job's nodes, host kind and switch tree; starts the budget.
void discover(Context* ctx);

// Measurements (each within its share of --max-time).
void measure_p2p(Context* ctx);           // exchanges within and between nodes
void measure_link_classes(Context* ctx);  // exchanges across switch links (--topology)
void measure_reduction(Context* ctx);     // k-ary reduction on every rank at once
void measure_ps(Context* ctx);            // co-located PS over 2 … P ranks
void measure_shift(Context* ctx);         // a one-step cycle over 3 and P ranks

void fit(Context* ctx);
// Prices every candidate for the first `ranks` ranks on the grid.
Decision decide(Context* ctx, int ranks);
// --verify: times each point's plans, the displaced component and Open
// MPI's algorithms, and keeps the fastest (tune/verify.cpp).
void verify(Context* ctx, Decision* d);

// Outputs (rank 0).
RulesFile write_rules(const Context& ctx);
void write_measurements(const Context& ctx);  // CSV and SVG
void print_summary(const Context& ctx, const RulesFile& rules);
void export_tuned(const Context& ctx, const RulesFile& rules);

}  // namespace genx::tune
