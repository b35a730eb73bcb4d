// First-call trials (docs/rules.md, "First-call trial"): where a site's
// model leaves a size to the displaced component but still prices some of
// genx's plans ahead of it (Decision::trial), a communicator's first
// blocking calls of that size run the displaced component and each such
// plan in turn, in runs of `rounds` + 1 calls, twice (turn_of).  After the
// last of them the ranks reduce each candidate's median time to its
// maximum over ranks (the glue does that, with the displaced component's
// MPI_Allreduce) and keep the
// fastest plan if it beat the displaced component by kTrialGain, else the
// displaced component.  Every rank counts the same calls of the same sizes,
// so all take the same turns and agree on the outcome.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "genx/comm_log.hpp"
#include "genx/plan_cache.hpp"
#include "tuning/decision_table.hpp"

namespace genx {

// A contender replaces the displaced component only when its time is at
// most (1 - kTrialGain) of the displaced component's: the trial's few calls
// on shared or noisy nodes must not trade one for an equal.
constexpr double kTrialGain = 0.10;

class FirstCallTrials {
  public:
    using PlanRef = std::shared_ptr<const RankPlan>;

    // Candidate 0 of each trial is the displaced component (no plan).
    struct Candidate {
        Decision decision;  // what the interval runs while this candidate is timed or kept
        PlanRef plan;       // null for the displaced component
    };

    void clear() { trials_.clear(); }
    void set_rounds(int rounds) { rounds_ = rounds < 0 ? 0 : rounds; }
    int rounds() const { return rounds_; }
    // Interval `interval` of the blocking table, which defers, times these
    // candidates after the displaced component (a plan that did not
    // generate declines its turns, which then run the displaced one).
    void add(size_t interval, const Decision& deferring, std::vector<Candidate> contenders);
    bool any() const { return !trials_.empty(); }

    // The candidate the interval's next blocking call runs (0: the
    // displaced component), or -1 where no trial is under way.
    int next(size_t interval);
    // What the interval runs now: the candidate of the call under way, or
    // the one kept; nullptr where the interval keeps its table's decision.
    const Candidate* current(size_t interval) const;
    // This rank's seconds for the call next() announced.  After the
    // trial's last call: each candidate's median into medians (at most
    // max), returning how many; else 0.
    int record(size_t interval, double seconds, double* medians, int max);
    // The ranks' maxima of those medians: the trial ends, and what the
    // interval runs from now on is said once at verbosity 1 by rank 0.
    void settle(size_t interval, const double* agreed, int n, const std::string& range,
                const CommLog& log);
    // Whether a trial is under way at the interval (its calls must not be
    // remembered as the interval's decision).
    bool running(size_t interval) const;

    // The calls a trial of n candidates makes.
    int trial_calls(int n) const { return 2 * n * (rounds_ + 1); }

  private:
    int turn_of(int call, int n) const;
    bool timed(int call) const;
    struct Trial {
        std::vector<Candidate> candidates;
        std::vector<std::vector<double>> seconds;  // this rank's, per candidate
        int calls = 0;     // calls made so far
        int turn = -1;     // the candidate of the call under way
        int kept = -1;     // -1 while running; then the candidate kept
    };
    int rounds_ = 0;
    std::map<size_t, Trial> trials_;
};

}  // namespace genx
