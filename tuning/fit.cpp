// GenModel fitting: NNLS + breakpoint search (method in fit.hpp).
#include "tuning/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "plan/stats.hpp"

namespace genx {

// ------------------------------------------------------ benchmark plans

namespace {

// One step over a cycle of x ranks: each sends its block to rank + 1 and
// receives rank − 1's into a slot (for x = 2 both are the other rank).
Plan cycle_plan(int x, const std::string& algorithm, const std::string& params) {
    Plan p;
    p.algorithm = algorithm;
    p.params = params;
    p.nranks = x;
    p.nblocks = 1;
    p.nslots = 1;
    p.programs.resize(static_cast<size_t>(x));
    for (int r = 0; r < x; ++r) {
        Step s;
        s.sends.push_back(Transfer{(r + 1) % x, {0}, kResult});
        s.recvs.push_back(Transfer{(r + x - 1) % x, {0}, 0});
        p.programs[static_cast<size_t>(r)].steps = {s};
    }
    finalize(p);
    return p;
}

}  // namespace

Plan exchange_plan() { return cycle_plan(2, "exchange", ""); }

Plan shift_plan(int x) { return cycle_plan(x, "shift", "x=" + std::to_string(x)); }

Plan local_reduce_plan(int k) {
    Plan p;
    p.algorithm = "local-reduce";
    p.params = "k=" + std::to_string(k);
    p.nranks = 1;
    p.nblocks = 1;
    p.nslots = std::max(k - 1, 1);
    p.programs.resize(1);
    Step s;
    LocalOp op;
    op.kind = OpKind::Reduce;
    op.dst = kResult;
    for (int i = 0; i + 1 < k; ++i) op.srcs.push_back(i);
    op.blocks = {0};
    s.ops.push_back(op);
    p.programs[0].steps = {s};
    finalize(p);
    return p;
}

// ----------------------------------------------------------------- NNLS

namespace {

// Least squares over the columns `cols` of the m×n row-major `a` by
// Householder QR; z has n entries, zero outside cols.  Columns whose
// reflection leaves a negligible diagonal (dependent on earlier ones) get 0.
void lstsq_subset(const std::vector<double>& a, size_t m, size_t n, const std::vector<double>& b,
                  const std::vector<size_t>& cols, std::vector<double>* z) {
    const size_t k = cols.size();
    std::vector<double> r(m * k);  // column-major m×k
    for (size_t j = 0; j < k; ++j)
        for (size_t i = 0; i < m; ++i) r[j * m + i] = a[i * n + cols[j]];
    std::vector<double> qtb = b;
    std::vector<double> diag(k, 0);
    double scale = 0;
    for (double v : r) scale = std::max(scale, std::fabs(v));
    for (size_t j = 0; j < k && j < m; ++j) {
        double* col = &r[j * m];
        double norm = 0;
        for (size_t i = j; i < m; ++i) norm += col[i] * col[i];
        norm = std::sqrt(norm);
        if (norm <= 1e-13 * scale) {
            diag[j] = 0;
            continue;
        }
        const double alpha = col[j] > 0 ? -norm : norm;
        // v = col[j..] - alpha e_j, stored in place.
        col[j] -= alpha;
        double vnorm2 = 0;
        for (size_t i = j; i < m; ++i) vnorm2 += col[i] * col[i];
        auto reflect = [&](double* x) {
            double dot = 0;
            for (size_t i = j; i < m; ++i) dot += col[i] * x[i];
            const double f = 2 * dot / vnorm2;
            for (size_t i = j; i < m; ++i) x[i] -= f * col[i];
        };
        for (size_t l = j + 1; l < k; ++l) reflect(&r[l * m]);
        reflect(qtb.data());
        diag[j] = alpha;
    }
    z->assign(n, 0.0);
    std::vector<double> sol(k, 0.0);
    for (size_t jj = std::min(k, m); jj-- > 0;) {
        if (diag[jj] == 0) continue;
        double s = qtb[jj];
        for (size_t l = jj + 1; l < k; ++l) s -= r[l * m + jj] * sol[l];
        sol[jj] = s / diag[jj];
    }
    for (size_t j = 0; j < k; ++j) (*z)[cols[j]] = sol[j];
}

}  // namespace

Status nnls(const std::vector<double>& a_in, size_t m, size_t n, const std::vector<double>& b,
            std::vector<double>* x_out) {
    if (a_in.size() != m * n || b.size() != m)
        return Status::invalid("nnls: matrix is " + std::to_string(a_in.size()) + " values for " +
                               std::to_string(m) + "x" + std::to_string(n) + ", rhs " +
                               std::to_string(b.size()));
    // Scale columns to unit norm so the tolerances mean the same for a
    // column of step counts and one of byte counts.
    std::vector<double> a = a_in;
    std::vector<double> colscale(n, 0.0);
    for (size_t j = 0; j < n; ++j) {
        double s = 0;
        for (size_t i = 0; i < m; ++i) s += a[i * n + j] * a[i * n + j];
        colscale[j] = std::sqrt(s);
        if (colscale[j] > 0)
            for (size_t i = 0; i < m; ++i) a[i * n + j] /= colscale[j];
    }
    std::vector<double> x(n, 0.0);
    std::vector<bool> passive(n, false);
    auto gradient = [&](std::vector<double>* w) {
        std::vector<double> res(m);
        for (size_t i = 0; i < m; ++i) {
            double s = b[i];
            for (size_t j = 0; j < n; ++j) s -= a[i * n + j] * x[j];
            res[i] = s;
        }
        w->assign(n, 0.0);
        for (size_t j = 0; j < n; ++j)
            for (size_t i = 0; i < m; ++i) (*w)[j] += a[i * n + j] * res[i];
    };
    double bnorm = 0;
    for (double v : b) bnorm = std::max(bnorm, std::fabs(v));
    const double tol = 1e-12 * std::max(1.0, bnorm) * static_cast<double>(std::max(m, n));
    std::vector<double> w;
    const int max_outer = static_cast<int>(3 * n + 10);
    for (int outer = 0; outer < max_outer; ++outer) {
        gradient(&w);
        size_t t = n;
        double wmax = tol;
        for (size_t j = 0; j < n; ++j)
            if (!passive[j] && colscale[j] > 0 && w[j] > wmax) {
                wmax = w[j];
                t = j;
            }
        if (t == n) break;
        passive[t] = true;
        for (int inner = 0; inner < max_outer; ++inner) {
            std::vector<size_t> cols;
            for (size_t j = 0; j < n; ++j)
                if (passive[j]) cols.push_back(j);
            std::vector<double> z;
            lstsq_subset(a, m, n, b, cols, &z);
            bool feasible = true;
            for (size_t j : cols) feasible = feasible && z[j] > 0;
            if (feasible) {
                x = z;
                break;
            }
            // Step from x towards z as far as feasibility allows, then drop
            // the variables that hit zero.
            double step = 1;
            for (size_t j : cols)
                if (z[j] <= 0) step = std::min(step, x[j] / (x[j] - z[j]));
            for (size_t j = 0; j < n; ++j) x[j] += step * (z[j] - x[j]);
            for (size_t j : cols)
                if (x[j] <= 1e-15) {
                    x[j] = 0;
                    passive[j] = false;
                }
        }
    }
    for (size_t j = 0; j < n; ++j) x[j] = colscale[j] > 0 ? std::max(0.0, x[j] / colscale[j]) : 0;
    *x_out = std::move(x);
    return Status::ok();
}

// ------------------------------------------------------------------ fit

namespace {

constexpr size_t kCols = 12;
enum Col : size_t {
    AlphaIntra,
    BetaIntra,
    EpsIntra,
    MsgIntra,
    AlphaInter,
    BetaInter,
    EpsInter,
    MsgInter,
    Gamma,
    Delta,
    ShiftIntra,
    ShiftInter
};
const char* const kColNames[kCols] = {
    "alpha_intra",     "beta_intra", "epsilon_intra", "alpha_msg_intra",  "alpha_inter",
    "beta_inter",      "epsilon_inter", "alpha_msg_inter", "gamma",       "delta",
    "alpha_shift_intra", "alpha_shift_inter"};

std::array<double, kCols> row_of(const ModelCoefficients& c) {
    return {c.steps_intra,  c.bytes_intra,  c.incast_bytes_intra, c.extra_msgs_intra,
            c.steps_inter,  c.bytes_inter,  c.incast_bytes_inter, c.extra_msgs_inter,
            c.reduce_bytes, c.memory_bytes, c.shift_steps_intra,  c.shift_steps_inter};
}

ModelParams params_of(const std::vector<double>& x, double wt_intra, double wt_inter,
                      const std::map<std::string, LinkParams>& classes) {
    ModelParams p;
    p.classes = classes;
    p.intra = LinkParams{x[AlphaIntra], x[BetaIntra], x[EpsIntra], wt_intra, x[MsgIntra],
                         x[ShiftIntra]};
    p.inter = LinkParams{x[AlphaInter], x[BetaInter], x[EpsInter], wt_inter, x[MsgInter],
                         x[ShiftInter]};
    p.host = HostParams{x[Gamma], x[Delta]};
    return p;
}

struct Trial {
    double residual = std::numeric_limits<double>::infinity();
    std::vector<double> x;
    int wt_intra = 0, wt_inter = 0;
    std::array<bool, kCols> has_data{};
};

void summarize(const std::vector<FitPoint>& pts, bool held_out, ErrorSummary* out) {
    ErrorSummary s;
    double sum = 0, sum2 = 0;
    for (const FitPoint& p : pts) {
        if (p.held_out != held_out) continue;
        const double e = std::fabs(p.predicted - p.measured) / p.measured;
        ++s.points;
        sum += e;
        sum2 += e * e;
        s.max_rel = std::max(s.max_rel, e);
    }
    if (s.points > 0) {
        s.mean_rel = sum / static_cast<double>(s.points);
        s.rms_rel = std::sqrt(sum2 / static_cast<double>(s.points));
        std::vector<double> errs;
        for (const FitPoint& p : pts)
            if (p.held_out == held_out) errs.push_back(std::fabs(p.predicted - p.measured) / p.measured);
        std::sort(errs.begin(), errs.end());
        s.median_rel = errs.size() % 2 == 1
                           ? errs[errs.size() / 2]
                           : (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]) / 2;
    }
    *out = s;
}

// Tukey's bisquare weights of relative residuals, scaled by their median
// absolute value (×1.4826, the normal-consistent MAD) but never below 1%:
// points within a few percent of the fit keep full weight, points many
// scales away (a measurement hit by another process) get none.
std::vector<double> bisquare_weights(const std::vector<double>& rel) {
    std::vector<double> a;
    for (double r : rel) a.push_back(std::fabs(r));
    std::vector<double> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    const double mad = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    const double scale = 4.685 * std::max(1.4826 * mad, 0.01);
    std::vector<double> w;
    for (double v : a) {
        const double u = v / scale;
        w.push_back(u < 1 ? (1 - u * u) * (1 - u * u) : 0.0);
    }
    return w;
}

}  // namespace

namespace {

// Which measurements fit and which are held out (*held, by index), and the
// indices of those that fit.
Status split_held_out(const std::vector<Measurement>& data, const FitOptions& options,
                      std::vector<bool>* held, std::vector<size_t>* fit_idx) {
    held->assign(data.size(), false);
    std::map<std::string, int> seen_of_kind;
    for (size_t i = 0; i < data.size(); ++i) {
        const Measurement& m = data[i];
        if (!m.plan || !(m.seconds > 0) || !std::isfinite(m.seconds))
            return Status::invalid("fit: measurement " + std::to_string(i) + " (" + m.label +
                                   ") has no plan or no positive time");
        bool h = m.role == Measurement::Role::HeldOut;
        if (m.role == Measurement::Role::Auto) {
            const int seen = ++seen_of_kind[m.kind];
            h = options.holdout_every > 0 && seen % options.holdout_every == 0;
        }
        (*held)[i] = h;
        if (!h) fit_idx->push_back(i);
    }
    if (fit_idx->empty())
        return Status::invalid("fit: no measurement is left for fitting (" +
                               std::to_string(data.size()) + " given, all held out)");
    return Status::ok();
}

// The largest w_t searched: the largest fan-in degree (1 + receives in a
// step) in the fitted data, at least 2, at most options.max_w_t if set.
int largest_fan_in(const std::vector<Measurement>& data, const std::vector<size_t>& fit_idx,
                   const FitOptions& options) {
    int max_w = 2;
    for (size_t i : fit_idx) {
        const PlanStats st = compute_stats(*data[i].plan, data[i].count, data[i].elem_size);
        max_w = std::max(max_w, st.max_incast + 1);
    }
    if (options.max_w_t > 0) max_w = std::min(max_w, std::max(options.max_w_t, 2));
    return max_w;
}

// Whether two rounds found the same thresholds and, to 1e-9 relative, the
// same parameters.
bool same_solution(const Trial& a, const Trial& b) {
    if (a.wt_intra != b.wt_intra || a.wt_inter != b.wt_inter) return false;
    auto rel = [](double x, double y) {
        return std::fabs(x - y) / std::max({std::fabs(x), std::fabs(y), 1e-300});
    };
    for (size_t c = 0; c < kCols; ++c)
        if (rel(a.x[c], b.x[c]) > 1e-9) return false;
    return true;
}

// The iterated fit (method in fit.hpp) over the measurements fit_idx
// names: NNLS on rows from the current parameters' critical paths, a search
// over the two incast thresholds, and bisquare reweighting, until neither
// the solution nor the weights change.
class Fitter {
  public:
    Fitter(const std::vector<Measurement>& data, const std::vector<size_t>& fit_idx,
           const FitOptions& options, int max_w)
        : data_(data), fit_idx_(fit_idx), options_(options), max_w_(max_w), m_(fit_idx.size()),
          weight_(m_, 1.0) {
        current_.intra = LinkParams{1e-6, 1e-9, 0, static_cast<double>(max_w)};
        current_.inter = current_.intra;
        current_.host = HostParams{1e-10, 1e-10};
        current_.classes = options.classes;
    }

    // The last round's solution and the number of rounds run.
    Status run(Trial* best_out, int* iterations_out) {
        Trial best;
        int iterations = 0;
        int wi = max_w_, we = max_w_;
        for (; iterations < std::max(options_.max_iterations, 1); ++iterations) {
            Trial round;
            GENX_RETURN_IF_ERROR(search_thresholds(wi, we, &round));
            const ModelParams next =
                params_of(round.x, round.wt_intra, round.wt_inter, options_.classes);
            const bool same = iterations > 0 && same_solution(round, best);
            // Outliers: reweight from this round's relative residuals.
            const bool weights_same = !options_.robust || reweight(next);
            best = round;
            current_ = next;
            wi = round.wt_intra;
            we = round.wt_inter;
            if (same && weights_same) {
                ++iterations;
                break;
            }
        }
        *best_out = std::move(best);
        *iterations_out = iterations;
        return Status::ok();
    }

    // Each fitted measurement's final weight (0: an outlier).
    const std::vector<double>& weights() const { return weight_; }

  private:
    // Rows for thresholds (wi, we) with the current parameters' critical
    // paths; then NNLS.
    Status evaluate(int wi, int we, Trial* t) const {
        ModelParams p = current_;
        p.intra.w_t = wi;
        p.inter.w_t = we;
        std::vector<double> a(m_ * kCols), b(weight_);
        Trial trial;
        trial.wt_intra = wi;
        trial.wt_inter = we;
        for (size_t r = 0; r < m_; ++r) {
            const Measurement& ms = data_[fit_idx_[r]];
            const Prediction pr = predict(*ms.plan, ms.count, ms.elem_size, p, ms.ranks);
            if (!pr.status)
                return Status::invalid("fit: " + ms.label + ": " + pr.status.message());
            const auto row = row_of(pr.coefficients);
            // What the switch links add (their latency and bytes beyond the
            // NIC's, at their current parameters) is not the hosts' to fit.
            b[r] = weight_[r] * (1 - pr.coefficients.route_seconds / ms.seconds);
            for (size_t c = 0; c < kCols; ++c) {
                a[r * kCols + c] = row[c] / ms.seconds * weight_[r];
                trial.has_data[c] = trial.has_data[c] || row[c] != 0;
            }
        }
        GENX_RETURN_IF_ERROR(nnls(a, m_, kCols, b, &trial.x));
        double res = 0;
        for (size_t r = 0; r < m_; ++r) {
            double s = -b[r];
            for (size_t c = 0; c < kCols; ++c) s += a[r * kCols + c] * trial.x[c];
            res += s * s;
        }
        trial.residual = res;
        *t = std::move(trial);
        return Status::ok();
    }

    // The best thresholds from (wi, we): coordinate descent over the two,
    // twice, as the classes interact only through shared critical paths.
    Status search_thresholds(int wi, int we, Trial* round) const {
        GENX_RETURN_IF_ERROR(evaluate(wi, we, round));
        for (int pass = 0; pass < 2; ++pass) {
            for (int cls = 0; cls < 2; ++cls) {
                for (int w = 2; w <= max_w_; ++w) {
                    Trial t;
                    GENX_RETURN_IF_ERROR(evaluate(cls == 0 ? w : round->wt_intra,
                                                  cls == 0 ? round->wt_inter : w, &t));
                    if (t.residual < round->residual * (1 - 1e-12)) *round = std::move(t);
                }
            }
        }
        return Status::ok();
    }

    // Bisquare weights from the relative residuals under `next`; true when
    // no weight moved by 1e-6 or more.
    bool reweight(const ModelParams& next) {
        std::vector<double> rel(m_);
        for (size_t r = 0; r < m_; ++r) {
            const Measurement& ms = data_[fit_idx_[r]];
            const Prediction pr = predict(*ms.plan, ms.count, ms.elem_size, next, ms.ranks);
            rel[r] = pr.seconds / ms.seconds - 1;
        }
        const std::vector<double> w = bisquare_weights(rel);
        bool weights_same = true;
        for (size_t r = 0; r < m_; ++r)
            weights_same = weights_same && std::fabs(w[r] - weight_[r]) < 1e-6;
        weight_ = w;
        return weights_same;
    }

    const std::vector<Measurement>& data_;
    const std::vector<size_t>& fit_idx_;
    const FitOptions& options_;
    const int max_w_;
    const size_t m_;
    std::vector<double> weight_;  // per fitted measurement
    ModelParams current_;         // the last round's parameters
};

// The parameters of the solution, with what the data leaves undetermined
// said plainly: which columns had data, and a class without any copied
// from the other (result's flags).
ModelParams identified_params(const Trial& best, int max_w, const FitOptions& options,
                              FitResult* result) {
    ModelParams p = params_of(best.x, best.wt_intra, best.wt_inter, options.classes);
    // ε = 0: no incast seen up to the largest degree measured; say so with
    // the threshold rather than leave the searched value, which then means
    // nothing.
    if (p.intra.epsilon == 0) p.intra.w_t = max_w;
    if (p.inter.epsilon == 0) p.inter.w_t = max_w;
    for (size_t c = 0; c < kCols; ++c)
        (best.has_data[c] ? result->identified : result->unidentified).push_back(kColNames[c]);
    const bool intra_data = best.has_data[AlphaIntra] || best.has_data[BetaIntra];
    const bool inter_data = best.has_data[AlphaInter] || best.has_data[BetaInter];
    if (!intra_data && inter_data) {
        p.intra = p.inter;
        result->intra_copied = true;
    } else if (!inter_data && intra_data) {
        p.inter = p.intra;
        result->inter_copied = true;
    }
    return p;
}

// Every measurement's prediction with the fitted parameters, and the
// errors on the fitted and on the held-out points.
Status predict_points(const std::vector<Measurement>& data, const std::vector<bool>& held,
                      FitResult* result) {
    for (size_t i = 0; i < data.size(); ++i) {
        const Measurement& ms = data[i];
        const Prediction pr = predict(*ms.plan, ms.count, ms.elem_size, result->params, ms.ranks);
        if (!pr.status) return Status::invalid("fit: " + ms.label + ": " + pr.status.message());
        result->points.push_back(FitPoint{i, held[i], ms.seconds, pr.seconds});
    }
    summarize(result->points, false, &result->fit);
    summarize(result->points, true, &result->held_out);
    return Status::ok();
}

}  // namespace

Status fit_model(const std::vector<Measurement>& data, const FitOptions& options, FitResult* out) {
    std::vector<bool> held;
    std::vector<size_t> fit_idx;
    GENX_RETURN_IF_ERROR(split_held_out(data, options, &held, &fit_idx));
    const int max_w = largest_fan_in(data, fit_idx, options);
    Fitter fitter(data, fit_idx, options, max_w);
    Trial best;
    int iterations = 0;
    GENX_RETURN_IF_ERROR(fitter.run(&best, &iterations));

    FitResult result;
    result.iterations = iterations;
    for (size_t r = 0; r < fit_idx.size(); ++r)
        if (fitter.weights()[r] == 0) result.outliers.push_back(fit_idx[r]);
    result.params = identified_params(best, max_w, options, &result);
    GENX_RETURN_IF_ERROR(predict_points(data, held, &result));
    *out = std::move(result);
    return Status::ok();
}

std::string format_fit_report(const std::vector<Measurement>& data, const FitResult& r) {
    std::string out;
    char buf[256];
    auto link = [&](const char* name, const LinkParams& l, bool copied) {
        std::snprintf(buf, sizeof buf,
                      "  %-5s alpha %.3e s  alpha_msg %.3e s  alpha_shift %.3e s  beta %.3e s/B "
                      "(%.3g GB/s)  epsilon %.3e s/B  w_t %g%s\n",
                      name, l.alpha, l.alpha_msg, l.alpha_shift, l.beta,
                      l.beta > 0 ? 1e-9 / l.beta : 0.0,
                      l.epsilon, l.w_t,
                      copied ? "  (not measured: copied from the other class)" : "");
        out += buf;
    };
    out += "fitted GenModel parameters:\n";
    link("intra", r.params.intra, r.intra_copied);
    link("inter", r.params.inter, r.inter_copied);
    std::snprintf(buf, sizeof buf, "  host  gamma %.3e s/B  delta %.3e s/B\n", r.params.host.gamma,
                  r.params.host.delta);
    out += buf;
    if (!r.unidentified.empty()) {
        out += "  no data for:";
        for (const std::string& s : r.unidentified) out += " " + s;
        out += "\n";
    }
    auto line = [&](const char* what, const ErrorSummary& e) {
        std::snprintf(buf, sizeof buf,
                      "%s: %zu points, |error| mean %.2f%%, median %.2f%%, rms %.2f%%, max %.2f%%\n",
                      what, e.points, 100 * e.mean_rel, 100 * e.median_rel, 100 * e.rms_rel,
                      100 * e.max_rel);
        out += buf;
    };
    line("fitted points", r.fit);
    line("held-out points", r.held_out);
    // Held-out error per kind.
    std::map<std::string, std::vector<FitPoint>> by_kind;
    for (const FitPoint& p : r.points)
        if (p.held_out && p.index < data.size()) by_kind[data[p.index].kind].push_back(p);
    for (const auto& kv : by_kind) {
        ErrorSummary e;
        summarize(kv.second, true, &e);
        const std::string what = "  held-out " + kv.first;
        line(what.c_str(), e);
    }
    if (!r.outliers.empty()) {
        std::snprintf(buf, sizeof buf, "outliers (weight 0 in the fit): %zu of %zu fitted points:",
                      r.outliers.size(), r.fit.points);
        out += buf;
        for (size_t i = 0; i < r.outliers.size() && i < 8; ++i)
            out += (i == 0 ? " " : ", ") + data[r.outliers[i]].label;
        out += r.outliers.size() > 8 ? ", ...\n" : "\n";
    }
    return out;
}

// ------------------------------------------------------ switch-tree classes

Status fit_link_classes(const std::vector<Measurement>& routes, const ModelParams& fitted,
                        ModelParams* out, std::vector<ClassFit>* report) {
    ModelParams params = fitted;
    std::vector<ClassFit> rows;
    // Route signature (class id -> links of it on the route) -> measurements.
    std::map<std::map<int, int>, std::vector<const Measurement*>> groups;
    std::shared_ptr<const SwitchTree> tree;
    for (const Measurement& m : routes) {
        if (!m.ranks.tree || m.ranks.node.size() != 2 || !(m.seconds > 0))
            return Status::invalid("fit: route measurement " + m.label +
                                   " has no switch tree, not two hosts or no time");
        if (!tree) tree = m.ranks.tree;
        std::map<int, int> sig = m.ranks.tree->route_classes(m.ranks.node[0], m.ranks.node[1]);
        if (!sig.empty()) groups[std::move(sig)].push_back(&m);
    }
    std::vector<std::map<int, int>> order;
    for (const auto& kv : groups) order.push_back(kv.first);
    std::stable_sort(order.begin(), order.end(),
                     [](const std::map<int, int>& a, const std::map<int, int>& b) {
                         return a.size() < b.size();
                     });
    std::map<int, LinkParams> known;
    auto name_of = [&](int cls) { return tree->classes[static_cast<size_t>(cls)].name; };
    for (const std::map<int, int>& sig : order) {
        const std::vector<const Measurement*>& ms = groups[sig];
        std::vector<int> fresh;
        double known_alpha = params.inter.alpha, bottleneck = params.inter.beta;
        for (const auto& [cls, n] : sig) {
            auto it = known.find(cls);
            if (it == known.end()) {
                fresh.push_back(cls);
            } else {
                known_alpha += n * it->second.alpha;
                bottleneck = std::max(bottleneck, it->second.beta);
            }
        }
        if (fresh.empty()) continue;
        if (fresh.size() > 1) {
            for (int cls : fresh) {
                // Reported once, however many route groups left it unfitted.
                if (std::any_of(rows.begin(), rows.end(), [&](const ClassFit& o) { return o.name == name_of(cls); }))
                    continue;
                ClassFit r;
                r.name = name_of(cls);
                r.points = ms.size();
                r.note = "not fitted: its only routes also cross another unfitted class";
                rows.push_back(r);
            }
            continue;
        }
        const int cls = fresh[0];
        ClassFit r;
        r.name = name_of(cls);
        r.points = ms.size();
        // t = I + S·b minimising Σ ((I + S·b) / t − 1)², I, S ≥ 0: rows
        // (1/t, b/t) against 1, as fit_model's.
        std::vector<double> a, ones(ms.size(), 1.0), sizes, line;
        for (const Measurement* m : ms) {
            const double b = static_cast<double>(m->count) * static_cast<double>(m->elem_size);
            a.push_back(1 / m->seconds);
            a.push_back(b / m->seconds);
            sizes.push_back(b);
        }
        std::sort(sizes.begin(), sizes.end());
        if (std::unique(sizes.begin(), sizes.end()) - sizes.begin() < 2) {
            r.note = "not fitted: fewer than two message sizes";
            rows.push_back(r);
            continue;
        }
        GENX_RETURN_IF_ERROR(nnls(a, ms.size(), 2, ones, &line));
        const double I = line[0], S = line[1];
        LinkParams lp;
        lp.alpha = std::max((I - known_alpha) / sig.at(cls), 0.0);
        if (S > 1.1 * bottleneck) {
            lp.beta = S;
            r.beta_measured = true;
            r.note = "beta measured (the class is slower than the NIC)";
        } else {
            ModelParams no_class = params;
            no_class.classes.erase(name_of(cls));
            lp.beta = tree->class_params(cls, no_class).beta;
            r.note = "beta from the topology's rates (one flow runs at the NIC's rate)";
        }
        r.alpha = lp.alpha;
        r.beta = lp.beta;
        known[cls] = lp;
        params.classes[r.name] = lp;
        // Fitted here after an earlier group left it unfitted: the fit stands.
        rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const ClassFit& o) { return o.name == r.name; }),
                   rows.end());
        rows.push_back(r);
    }
    *out = params;
    if (report != nullptr) *report = std::move(rows);
    return Status::ok();
}

}  // namespace genx

