// How many batches of how many calls each op of a --verify point gets
// (tune/timing.cpp, measure_isolated), and which ops are left out when the
// budget cannot give the kept ones the batches a paired decision needs.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace genx::tune {

struct BatchRequest {
    std::vector<double> one;  // seconds per call of each op, from its warm-up call
    double left = 0;          // seconds the budget leaves for the point
    double target = 0.2;      // seconds an op's batches should take together, at most
    int remaining = 1;        // measurements still to come in the phase, this one included
    double per_call = 0;      // seconds added to each call (the barrier of an isolated call)
    // Ops that may be left out, the first to go first; every other op is
    // always timed when it fits.  Left out only while fewer than `want`
    // batches fit for the ops kept.
    std::vector<size_t> drop_order;
    int want = 5;
};

// {batches, calls per batch} of each op ({0, 0}: not timed).  Each kept op
// is sized against an equal share of `left`; measure_isolated then runs
// every timed op for the fewest batches any of them got (at most 5).
std::vector<std::array<int, 2>> plan_point_batches(const BatchRequest& r);

// {batches, calls per batch} of one op sized against `left` (at most 5
// batches, at least `min_calls` calls a batch); {0, 0} when not one call fits.
std::array<int, 2> plan_op_batches(double one, double left, double target, int remaining,
                                   double per_call, int min_calls);

// The order a point's ops are warmed up in: those never left out, in
// order, then drop_order from its end (the last to be left out first), so
// that where the budget ends during the warm-ups the ops a decision needs
// were warmed.
std::vector<size_t> warm_up_order(size_t n, const std::vector<size_t>& drop_order);

// Whether a --verify point warms up one more op that may be left out: after
// its warm-up, priced as the slowest warmed (`warmed_one`: their warm-up
// seconds), the time left must give each of the ops, that one included,
// an equal share of `want` calls at the slowest's pace, as
// plan_point_batches sizes them.
bool warm_another(const std::vector<double>& warmed_one, double left, int want, double per_call);

// Seconds a --verify point holds back for the points after it (index k of
// `first_price`, the model's price of each point's first plan): at each
// later point the two ops a paired decision needs (its leading plan and
// the displaced component), one warm-up and `batches` calls each, priced
// as first_price × `ratio` (the pair's seconds per second of that price at
// the latest point verified, the slower op's for both).
double later_points_reserve(const std::vector<double>& first_price, size_t k, double ratio,
                            int batches);

// A point's deadline: `deadline` less `reserve`, but no earlier than
// now + `own` (its own pair's share: earlier points keep theirs first) and
// no later than `deadline`.
double point_deadline(double deadline, double now, double reserve, double own);

// A GenTree plan's params with its chunk count scaled by to ÷ from, so
// that each chunk keeps its size (rounded down to a power of two, capped at
// the deepest offered pipeline): the plan that leads a --verify point after
// the fastest measured at the size before.  The params unchanged for any
// other plan, an unpipelined one, or to ≤ from.
std::string same_chunk_size(const std::string& alg, const std::string& params, size_t from, size_t to);

}  // namespace genx::tune
