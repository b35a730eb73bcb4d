// Fitting GenModel to measurements (Xiong et al. §3.4, §3.1 eq. (5), §3.2).
//
// Every measurement is a Plan that was run (an allreduce, or one of the
// micro-benchmark plans below) with its size, rank placement and measured
// seconds.  The model's prediction for it is linear in the ten parameters
//   α_intra, β_intra, ε_intra, α_m,intra, α_inter, β_inter, ε_inter,
//   α_m,inter, γ, δ
// once the thresholds w_t (intra, inter) and the critical path are fixed
// (cost_model.hpp ModelCoefficients), so the fit is:
//   * for each pair of thresholds (breakpoint search over the integers
//     2 … the largest fan-in degree in the data, per class, by coordinate
//     descent), a non-negative least-squares solve (Lawson–Hanson) of the
//     relative residuals (pred − meas)/meas, so a 256 MiB point and an 8 B
//     point weigh alike; the pair with the smallest residual wins;
//   * repeated with the coefficients recomputed from the new parameters
//     until the critical paths stop changing;
//   * robustly (FitOptions::robust): each round reweights the points by
//     Tukey's bisquare of their relative residuals (scale: 1.4826 × the
//     median |residual|, at least 1%), so a measurement that another
//     process slowed down tenfold stops pulling the fit; such points are
//     reported as outliers.  Error figures always count every point.
// Why relative residuals: measurements span seven orders of magnitude; an
// absolute fit would ignore every latency-bound point.
// Why w_t starts at 2: the smallest fan-in degree of any exchange is 2
// (one flow into a rank, §3.2's x = 2); w_t = 1 would charge ε on every
// transfer, where it is indistinguishable from β.
//
// What the benchmarks identify (why genx-tune runs three of them): the
// pairwise exchange gives α and β per link class; the local k-way reduction gives γ
// and δ (eq. (5): (k−1)·S combined, (k+1)·S read or written); the co-located
// PS over x = 2 … P ranks gives ε and w_t (its fan-in is x), α_m (at small
// sizes it posts x − 1 messages per step where the exchange posts one) and,
// with the others, keeps β and γ apart (alone it only fixes 2β + γ, §3.4).
//
// A parameter whose column has no data (e.g. the inter-node class on a
// single node) is unidentified: it is reported as such, and a link class
// with no α/β data copies the other class's fitted values so the result is
// a usable model.
//
// Held-out error: measurements marked (or, for Role::Auto, every n-th of
// each kind) are left out of the fit and predicted afterwards; their
// relative error is the honest accuracy figure.
#pragma once

#include <cstddef>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "common/status.hpp"
#include "tuning/cost_model.hpp"

namespace genx {

struct Measurement {
    enum class Role { Auto, Fit, HeldOut };
    std::string kind;   // benchmark name, e.g. "p2p", "cps", "reduce", "verify"
    std::string label;  // for reports, e.g. "cps P=4 bytes=1M"
    std::shared_ptr<const Plan> plan;
    RankMap ranks;
    size_t count = 0;
    size_t elem_size = 1;
    double seconds = 0;  // measured, > 0
    Role role = Role::Auto;
};

// Micro-benchmark plans (not allreduces; the cost model prices any plan
// whose transfers match).
// Two ranks swap one block at once (each sends its own and receives the
// other's into a slot): α + bytes·β.  An exchange rather than a ping-pong
// because plans use links in both directions at once; on shared memory
// both directions load the same memory system, which a ping-pong (one
// direction at a time) never shows.
Plan exchange_plan();
// x ≥ 3 ranks in a cycle, one step: each sends its block to rank + 1 and
// receives rank − 1's into a slot (a shift, where exchange_plan is
// pairwise): α + α_s + bytes·β.  Beside the exchange it separates α_s
// (LinkParams::alpha_shift) from α.
Plan shift_plan(int x);
// One rank, k ≥ 2: one fused k-ary reduce result ⊕= slot0 ⊕ … ⊕ slot(k−2)
// over one block: (k−1)·bytes·γ + (k+1)·bytes·δ (eq. (5)).
Plan local_reduce_plan(int k);

// min ‖A·x − b‖₂ subject to x ≥ 0 (Lawson & Hanson 1974, ch. 23), A is
// m×n row-major.  Columns are scaled internally; all-zero columns get 0.
Status nnls(const std::vector<double>& a, size_t m, size_t n, const std::vector<double>& b,
            std::vector<double>* x);

struct FitOptions {
    // Role::Auto measurements: every holdout_every-th of each kind (in the
    // order given, starting with the holdout_every-th) is held out; 0 = none.
    int holdout_every = 4;
    int max_iterations = 20;
    // Bisquare reweighting of outliers (see above); false = plain NNLS.
    bool robust = true;
    // Largest w_t tried; 0 = the largest fan-in degree in the fitted data.
    int max_w_t = 0;
    // Switch-link classes already fitted (fit_link_classes): a measurement
    // whose route crosses switch links has their time taken off before the
    // hosts' parameters are fitted (at these values; classes not named are
    // derived from the topology), and the result carries them.
    std::map<std::string, LinkParams> classes;
};

struct ErrorSummary {
    size_t points = 0;
    double mean_rel = 0;  // mean |pred − meas| / meas
    double median_rel = 0;
    double rms_rel = 0;
    double max_rel = 0;
};

struct FitPoint {
    size_t index = 0;  // into the measurements
    bool held_out = false;
    double measured = 0;
    double predicted = 0;
};

struct FitResult {
    ModelParams params;
    // Which parameters had data ("alpha_intra", ..., "delta") and which not.
    std::vector<std::string> identified;
    std::vector<std::string> unidentified;
    bool intra_copied = false;  // intra α/β/ε/w_t copied from inter (no intra data)
    bool inter_copied = false;
    int iterations = 0;
    std::vector<size_t> outliers;  // fitted measurements that ended with weight 0
    std::vector<FitPoint> points;  // one per measurement, in input order
    ErrorSummary fit;              // on the points used for fitting
    ErrorSummary held_out;         // on the others
};

// Fits the model.  Fails when no measurement is usable (none with a plan
// and seconds > 0), when a plan cannot be timed, or when nothing is left to
// fit after holding out.
Status fit_model(const std::vector<Measurement>& data, const FitOptions& options,
                 FitResult* out);

// Multi-line text: parameters, identification, errors overall and per kind
// for the held-out points.
std::string format_fit_report(const std::vector<Measurement>& data, const FitResult& result);

// The links of a switch tree (ModelParams::classes), fitted after the
// hosts' own classes from exchanges (exchange_plan) between a host and
// hosts whose routes cross those links: each measurement's RankMap holds
// the tree and the two hosts (RankMap::tree, node).  Measurements are
// grouped by the classes their route crosses and the groups taken in
// order of how many classes they cross, so that a route crossing one new
// class above known ones pins it down: a line t = I + S·bytes fitted to the
// group (relative error, I and S ≥ 0: fit.hpp nnls), then
//   α_class = (I − inter.α − the known classes' α on the route) / links of
//             the class on the route (at least 0);
//   β_class = S where S exceeds by 10 % the NIC's β and the known classes'
//             on the route (the class is the bottleneck of one flow), else
//             left to the topology's declared rates (class_params), since
//             one flow cannot measure a link faster than its NIC.
// A group with two or more new classes, or fewer than two sizes, fits
// nothing.  `fitted` is the host-level fit; `out` gets `fitted` plus a
// classes entry for every class whose α was fitted.
struct ClassFit {
    std::string name;
    double alpha = 0, beta = 0;
    bool beta_measured = false;  // false: β from the topology's declared rates
    size_t points = 0;
    std::string note;  // why a class was not fitted, or how β was set
};
Status fit_link_classes(const std::vector<Measurement>& routes, const ModelParams& fitted,
                        ModelParams* out, std::vector<ClassFit>* report);

}  // namespace genx
