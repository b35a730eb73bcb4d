// The per-communicator decision table (docs/design.md §5.3): rules first, then the
// cost model over the applicable candidates, computed once for a
// communicator's shape and answered per call by a binary search.
//
// Intervals.  The message sizes are cut at every power of two (the size
// classes [2^k, 2^(k+1))) and at every bound of every rule that can match
// the shape, so inside one interval the first matching rule is the same for
// every size; each interval gets one Decision.  A class is decided at its
// lower bound (the size genx-tune measures on its grid, so its measured
// choices and the table agree).
//
// Pricing candidates.  A Plan's predicted time is, along any one critical
// path, affine in the message size (steps·α + size·(per-byte terms)), and
// the model's time is that of the slowest path, so the exact curve is the
// upper envelope of the paths' lines.  Predicting every candidate at every
// class costs seconds per communicator at P = 64 (minutes at 256), so by
// default each candidate is predicted at three sizes that are exact
// multiples of its block count (1, 4096 and 2^20 bytes per block, where
// every block holds the same bytes and each path is exactly affine) and
// priced at any size as the maximum of those three lines.  That is exact
// wherever one of the three critical paths is the slowest; a path that is
// critical only between them is missed (an underestimate).
// TableOptions::exact predicts at every class instead (tests compare the
// two; genx-tune uses exact).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/displaced.hpp"
#include "tuning/rules.hpp"

namespace genx {

// Work units (block entries, a transfer counting 30) of full models one
// decision table may spend: about half a second on one core.
constexpr double kFullModelBudget = 1e8;

struct TableOptions {
    // hcps factorisations with at most this many factors (0 = all; the
    // count grows quickly with P).
    int max_hcps_levels = 3;
    // Classes up to 2^max_class_log2 bytes; larger messages use the last.
    int max_class_log2 = 40;
    bool exact = false;
    // Also price the model's best alternative for rule-decided intervals
    // (for verbose output; costs a model evaluation per interval).
    bool explain = false;
    // A rule whose plan cannot be generated for this communicator (e.g.
    // hcps factors that do not multiply to its size): false = warn and treat
    // the rule as not matching; true = fail.
    bool strict = false;
    // The table for non-blocking and persistent calls: rules whose "call"
    // is "blocking" are left out (and "nonblocking" ones kept), and the
    // other way round when false.
    bool nonblocking = false;
    // The component a blocking call's "fallback" incumbent is priced as
    // (displaced.hpp): its own choice where known, else the cheapest of
    // Open MPI's modelled algorithms.  Non-blocking tables displace libnbc,
    // whose choice is not modelled: always the latter.
    Displaced displaced = Displaced::Unknown;
};

// A first-call trial (Decision::trial) is offered only where the displaced
// component is priced at most this long at the interval: the trial's few
// calls then cost a job at most a fraction of a second.
constexpr double kTrialMaxSeconds = 5e-3;
// Most candidates one interval's trial times: the displaced component and
// at most three contenders (Decision::trial).
constexpr int kTrialMaxCandidates = 4;

struct Decision {
    std::string algorithm;  // a registered generator
    std::string params;     // canonical "k=v,..." (generator and executor keys)
    int rule = -1;          // index of the deciding rule, -1 = no rule matched
    bool by_model = false;  // the model chose (a "model" rule or no rule)
    double predicted = 0;   // model's seconds for the choice at the interval's lower bound
    // The next-best candidate by the model (empty when there is none or it
    // was not priced); against the displaced component, its price, or the
    // lower bound that stood in for it (price_lower_bound; `why` says "at
    // least").
    std::string runner_up;
    std::string runner_up_params;
    double runner_up_predicted = 0;
    std::string why;  // one line: rule location or "model", the times
    // algorithm == "fallback": genx leaves the call to the displaced component,
    // or, where base != 0, to Open MPI's algorithm of that tuned number
    // (params "base=NAME"; blocking tables only), read once here so that a
    // deferred call parses nothing.
    int base = 0;
    // The plan holds for calls of at least min_count elements (0: any).
    // Where tuned runs another schedule for fewer elements (its ring runs
    // recursive doubling below P), a plan priced ahead of the schedule tuned
    // runs for many elements but not of the cheaper one leaves calls of
    // fewer elements to the displaced component, few_why saying why.
    size_t min_count = 0;
    std::string few_why;
    // Where a site's measured scales priced the size and the displaced
    // component keeps it, the plans the model still prices ahead of it
    // (the best by the scaled prices, by the unscaled ones and by the
    // model without its per-message and incast terms): the component may
    // time them against the displaced component at the communicator's
    // first blocking calls of the size (docs/rules.md, "First-call
    // trial").  Empty elsewhere.
    struct Contender {
        std::string algorithm;
        std::string params;
        // Scaled seconds at the interval's lower bound (the lean view's
        // plan: by the lean model where the full one did not price it).
        double predicted = 0;
    };
    std::vector<Contender> trial;
    bool defers() const { return algorithm == kFallbackAlgorithm; }
    // Whether a call of `count` elements leaves this interval's size to the
    // displaced component or to Open MPI's algorithm `base`.
    bool defers_at(size_t count) const { return defers() || count < min_count; }
    // Why a call that defers_at() goes to the displaced component.
    const std::string& deferred_why() const { return defers() ? why : few_why; }
};

class DecisionTable {
  public:
    // Builds the table for `shape` from `rules` (whose model prices the
    // candidates).  Warnings (skipped rules) are appended to *warnings.
    static Status build(const RulesFile& rules, const CommShape& shape, const TableOptions& options,
                        DecisionTable* out, std::vector<std::string>* warnings);

    // The decision for a message of `bytes` (any size).
    const Decision& lookup(size_t bytes) const { return decisions_[index(bytes)]; }
    // The interval holding `bytes`.
    size_t index(size_t bytes) const;

    // One line per interval: "[lo, hi) algorithm params  why".
    std::string format() const;

    // A hash of every interval's bounds and choice: ranks whose tables
    // differ (a rules file readable on one node only, different placement
    // information) would run different plans and deadlock, so the glue
    // compares digests across ranks before genx's first call.
    uint64_t digest() const;

    size_t intervals() const { return starts_.size(); }
    // Candidates left unpriced (price_candidates), most over the family lists.
    int unpriced() const { return unpriced_; }
    size_t interval_start(size_t i) const { return starts_[i]; }
    const Decision& decision(size_t i) const { return decisions_[i]; }

  private:
    std::vector<size_t> starts_;  // ascending, starts_[0] == 0
    std::vector<Decision> decisions_;
    int unpriced_ = 0;
};

// The rank placement the model assumes for a shape: consecutive ranks fill
// a node (ppn known), else one rank per node.
RankMap rank_map_for(const CommShape& shape);

// The work of modelling every rank's program of `gen` (what
// kFullModelBudget counts), estimated from the representatives as the
// largest one plus P − 1 times the smallest (rb: one root and P − 1 small
// programs; symmetric plans: P alike), counting block entries plus, for
// each transfer, the matching and bookkeeping it costs (about as much as
// 30 entries).  hcps and cps count rank 0's program from their factors
// instead of building it (the same number; test_decision_table.cpp).
double full_model_cost(const RankGenerator& gen);

// "alg (params)", or "alg" without params: how decisions name a plan.
std::string describe(const std::string& alg, const std::string& params);

// A candidate priced by the model.
struct PricedCandidate {
    Candidate candidate;
    std::vector<double> seconds;  // per requested size
};

// Prices every candidate enumerate_candidates() gives for `shape` (families
// empty = all) at each of `sizes` (bytes), exactly or by the envelope (see
// the header comment).  Beyond kWholePlanMaxRanks ranks, a candidate with
// a closed form (closed_form.hpp: one or K consecutive ranks per node, no
// topology) is priced without generating it; one the one-node quotient
// cannot price (no declared symmetry, or one that does not map the nodes
// onto each other) is priced from every rank's program, cheapest first,
// while the estimated work of all of them stays within kFullModelBudget;
// the rest are left out and counted in *unpriced.  Fails naming a
// candidate that does not generate or cannot be timed.
Status price_candidates(const ModelParams& model, const CommShape& shape,
                        const std::vector<std::string>& families,
                        const std::vector<size_t>& sizes, const TableOptions& options,
                        std::vector<PricedCandidate>* out, int* unpriced = nullptr);

// A lower bound on the model's price of candidate `c` on `shape` at each of
// `sizes` (bytes), for a plan only every rank's program could price
// (beyond kFullModelBudget): its closed form (closed_form.hpp) on the same
// hosts with the switch tree above them left out.  On a tree a step's
// inter-node cost is its NIC's plus the route's latency and the busiest
// link's excess over the NIC, never less, and no step starts earlier, so
// the plan's exact model price on the tree is at least the closed form's;
// the envelope of the closed form's lines (price_candidates) is at most
// the closed form.  The decision table lets it stand in for the displaced
// component's plan only (whichever of tuned's plans went unpriced:
// Rabenseifner's rhd, or its ring at 10⁴ ranks), never for a plan of
// genx's.  False where `shape` is not a switch
// tree, its hosts do not hold one or K consecutive ranks each, or the
// family has no closed form there.
bool price_lower_bound(const ModelParams& params, const CommShape& shape, const Candidate& c,
                       const std::vector<size_t>& sizes, PricedCandidate* out);

// What a "model" rule with the "fallback" incumbent weighs at each of
// `sizes` on `shape`, priced as DecisionTable::build prices it (the rules'
// model for this topology, no "scale"): the cheapest plan of each family
// in `families` that enumerates there, and the displaced component
// (infinity where not priced, also where the table weighs a lower bound
// for it: a scale is measured ÷ price).  genx-tune divides what it measured by
// these to write a rule's "scale".  elem_size > 0: the displaced component
// is priced as the plan tuned runs for sizes[i] / elem_size elements (what
// genx-tune timed), else as the cheapest it may run.
struct FamilyPrices {
    std::map<std::string, std::vector<double>> best;
    // The same per pipeline depth (pipeline_of): a family's cheapest plan
    // of each depth it enumerates.
    std::map<std::string, std::map<int, std::vector<double>>> by_pipeline;
    std::vector<double> displaced;
    // The family of the plan the displaced component is priced as ("" where
    // not priced): what it runs is that family's schedule.
    std::vector<std::string> displaced_family;
};
// The pipeline depth a plan's params name ("pipeline=N"; 1 where none).
int pipeline_of(const std::string& params);

Status price_families(const RulesFile& rules, const CommShape& shape, const TableOptions& options,
                      const std::vector<size_t>& sizes, const std::vector<std::string>& families,
                      FamilyPrices* out, size_t elem_size = 0);

}  // namespace genx
