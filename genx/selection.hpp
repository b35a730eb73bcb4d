// What a communicator decides with, and the plans it holds for that.
//
// With "auto", configure() loads the rules (cached per process) and
// prepare(), at the communicator's first allreduce, takes its decision
// tables (tuning/selector.hpp: the rules file or the built-in defaults,
// priced by its model, one table per shape and process): one for
// MPI_Allreduce and one for MPI_Iallreduce and persistent allreduce (the
// same object unless a rule names a "call").  Each decision names an
// algorithm with its params and, through its interval, the plan prepared
// for it.  A forced algorithm bypasses the tables; its plan is generated at
// configure(), which is how its params get validated.
//
// Plans are this rank's programs only, shared process-wide
// (plan_cache.hpp) and held here for the communicator's life, so no call
// generates a plan and the cache never frees one in use.  The user's
// executor keys (coll_genx_allreduce_params) override a decision's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "genx/comm_log.hpp"
#include "genx/genx_core.h"
#include "genx/plan_cache.hpp"
#include "genx/trial.hpp"
#include "tuning/rules.hpp"
#include "tuning/selector.hpp"

namespace genx {

class Selection {
  public:
    using PlanRef = std::shared_ptr<const RankPlan>;

    // What a call of some size runs: the table's decision (null when the
    // algorithm is forced) and the plan prepared for it (null where the
    // decision defers to the displaced component).
    struct Choice {
        const Decision* decision = nullptr;
        const RankPlan* plan = nullptr;
    };

    // This rank's position and the communicator's placement.
    void init(int rank, int size, const CommShape& shape);
    // The ranks' placement on a network (a topology file's, or Slurm's
    // addresses'): kept, and said at verbose 1 by rank 0.
    void use_topology(std::shared_ptr<const TopologyView> view, const std::string& source,
                      const CommLog& log);
    // Takes genx_config's algorithm, params and rules; fails on an unknown
    // algorithm, bad params or a forced algorithm whose generator rejects
    // them.
    Status configure(const genx_config* cfg, const CommLog& log);
    // After use_topology() on a configured communicator: what was built for
    // the old placement is built again (tables at the next prepare()).
    void placed_again(const CommLog& log);
    // What the blocking table prices a "fallback" incumbent as
    // (tuning/displaced.hpp); a table already built is built again at the
    // next prepare().
    void set_displaced(Displaced displaced, const CommLog& log);
    // Builds the decision tables and their plans (auto) once; later calls
    // return the first result.  Forced algorithms were prepared at
    // configure().
    Status prepare(const CommLog& log);

    bool forced() const { return forced_; }
    // A call can be decided: forced, or prepare() built the tables.
    bool ready() const { return forced_ || table_ != nullptr; }
    // The decision for `bytes` in the blocking or the non-blocking table;
    // ready() must hold.
    Choice choose(bool nonblocking, size_t bytes) const;
    // genx_comm_defers: whether the decision for `bytes` in `count`
    // elements (or every size: GENX_EVERY_SIZE) of `calls` leaves it to the
    // displaced component.
    int defers(int calls, size_t bytes, size_t count, const char** reason) const;
    // First-call trials (trial.hpp) of the blocking table: `rounds` per
    // candidate, 0 = none (the table's decisions stand).  Set before
    // prepare().
    void set_trial_rounds(int rounds) { trials_.set_rounds(rounds); }
    // genx_trial_next, genx_trial_record and genx_trial_settle at a
    // blocking call of `bytes` (FirstCallTrials::next, record, settle).
    int trial_next(size_t bytes);
    int trial_record(size_t bytes, double seconds, double* medians, int max);
    void trial_settle(size_t bytes, const double* agreed, int n, const CommLog& log);
    // A trial is under way at `bytes`: the call is not remembered.
    bool trial_running(size_t bytes) const;
    bool trial_any() const { return !forced_ && trials_.any(); }
    // genx_comm_digest and genx_comm_topology.
    uint64_t digest() const;
    uint64_t topology() const;
    bool placed_on_topology() const { return shape_.topology != nullptr; }
    // The view the ranks were placed on; null when hosts are grouped by name.
    const std::shared_ptr<const TopologyView>& topology_view() const { return shape_.topology; }
    // The host's reduction rates the rules' model has (built-in: the
    // defaults'), for the device path's estimate.
    const ModelParams& model() const;

  private:
    PlanRef plan_for(const std::string& name, const std::string& params) const;
    void plan_forced(const CommLog& log);
    const RankPlan* forced_plan_at(size_t bytes) const;
    void plans_for_table(const DecisionTable& table, std::vector<PlanRef>* plans) const;
    void prepare_trials();
    // The blocking table's decision at `bytes` and its plan, a trial's
    // candidate where one runs or was kept there.
    Choice blocking_choice(size_t bytes) const;
    int defers_throughout(int calls, const char** reason) const;

    int rank_ = 0;
    int size_ = 1;
    CommShape shape_;
    std::string algorithm_ = "auto";  // "auto" or a generator name
    bool forced_ = false;
    std::string forced_params_;  // the forced algorithm's params, canonical
    ParamMap user_exec_;         // the user's executor keys
    // The topology's routes hold more than the default window of segments
    // in flight (long_fat_routes): plans are sent unsegmented.
    bool long_routes_ = false;
    // Auto: the rules and options the tables are built from.
    std::shared_ptr<const RulesFile> rules_;
    TableOptions table_options_;
    bool prepared_ = false;
    Status prepare_status_;
    std::shared_ptr<const DecisionTable> table_;     // built by prepare()
    std::shared_ptr<const DecisionTable> nb_table_;  // the same object unless a rule names a "call"
    PlanRef forced_plan_;
    // A forced gentree without plans=: its per-switch plans are chosen by
    // the cost model at each size class's lower bound, one plan per class,
    // made at the class's first call.
    bool forced_by_size_ = false;
    mutable std::map<unsigned, PlanRef> forced_sized_;
    std::vector<PlanRef> decision_plans_;     // one per interval of table_
    std::vector<PlanRef> nb_decision_plans_;  // nb_table_'s (shared when it is table_)
    FirstCallTrials trials_;                  // by interval of table_
};

// The registered algorithms' names, comma separated.
std::string algorithm_names();

}  // namespace genx
