// genx-tune's outputs, written by rank 0 (tune/phases.hpp;
// docs/genx-tune.md, "Outputs" and "Exporting for Open MPI's tuned").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "plan/registry.hpp"
#include "tools/plot.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"
#include "tune/rest_rules.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/displaced.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace genx::tune {

namespace {

std::string utc_now() {
    char buf[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Measured vs predicted, one panel per benchmark kind (the paper's Figure 8
// for this cluster): time against message bytes, or for the reduce
// benchmark against the fan-in k (Figure 4), one series per vector size.
std::string make_svg(const std::vector<Record>& records, const std::string& title) {
    std::vector<tools::PlotPoint> pts;
    for (const Record& r : records) {
        if (r.kind == "predict" || r.measured <= 0 || r.predicted <= 0) continue;
        tools::PlotPoint p;
        p.panel = r.kind;
        p.series = r.series;
        p.x = static_cast<double>(r.bytes);
        if (r.kind == "reduce" && r.params.compare(0, 2, "k=") == 0) {
            p.x = std::atof(r.params.c_str() + 2);
            p.series = "vectors of " + format_bytes(r.bytes);
        }
        p.marker = r.measured;
        p.line = r.predicted;
        p.open = r.held_out;
        p.tip = r.series + " " + std::to_string(r.bytes) + " B: measured " + format_seconds(r.measured) +
                ", predicted " + format_seconds(r.predicted) + (r.held_out ? " (held out)" : "");
        pts.push_back(std::move(p));
    }
    tools::PlotLabels labels;
    labels.title = title;
    labels.legend = "(markers: measured, lines: GenModel prediction)";
    labels.footer = "open markers: held out of the fit (and every verify run)";
    labels.linear_panels = {"reduce"};
    labels.linear_x_label = "fan-in k (vectors reduced in one pass)";
    return tools::plot_svg(pts, labels);
}

// The rules of one communicator size: one per run of grid points with the
// same decision, from the first point's size to the next run's.  A "model"
// decision (a point --verify had no time for) chooses among `families`
// with the displaced component as incumbent and `margin` to beat it.
void add_rules(const CommShape& shape, const std::vector<Point>& pts,
               const std::vector<std::string>& families, double margin, RulesFile* rules) {
    for (size_t i = 0; i < pts.size();) {
        size_t j = i + 1;
        while (j < pts.size() && pts[j].choice_alg == pts[i].choice_alg &&
               pts[j].choice_params == pts[i].choice_params)
            ++j;
        AllreduceRule r;
        r.comm_size.any = r.nodes.any = r.ppn.any = false;
        r.comm_size.lo = r.comm_size.hi = shape.size;
        r.nodes.lo = r.nodes.hi = shape.nodes;
        r.ppn.lo = r.ppn.hi = shape.ppn;
        r.bytes.lo = i == 0 ? 0 : pts[i].bytes;
        r.bytes.hi = j < pts.size() ? pts[j].bytes : ByteRange::kNoLimit;
        r.algorithm = pts[i].choice_alg;
        r.params = pts[i].choice_params;
        r.comment = "at " + format_bytes(pts[i].bytes) + ": " + pts[i].note;
        if (r.by_model()) {
            r.families.push_back(kFallbackAlgorithm);
            r.families.insert(r.families.end(), families.begin(), families.end());
            r.margin = margin;
        }
        r.index = static_cast<int>(rules->allreduce.size());
        rules->allreduce.push_back(r);
        i = j;
    }
}

// tuned's allreduce algorithm ids (coll_tuned_allreduce_decision.c) and the
// genx plan that moves the same data the same way (rd is tuned's recursive
// doubling step for step, folding included: plan/rd.hpp).
struct TunedAlg {
    int id;
    const char* name;
    std::string algorithm;
    std::string params;
};
const std::vector<TunedAlg> kTunedEquivalents = {{1, "basic_linear", "rb", "root=0"},
                                                 {3, "recursive_doubling", "rd", ""},
                                                 {4, "ring", "ring", ""},
                                                 {6, "rabenseifner", "rhd", ""}};

// One communicator size's section of the tuned file: the model's fastest
// tuned equivalent per grid size, a rule where it changes.
void tuned_section(const Context& ctx, int c, std::ostream& t) {
    const RankMap ranks = ctx.cluster.map_of_first(c);
    const std::vector<TunedAlg>& algs = kTunedEquivalents;
    std::vector<std::shared_ptr<Plan>> plans;
    for (const TunedAlg& a : algs) {
        ParamMap pm;
        check(parse_params(a.params, &pm), "tuned params");
        auto plan = std::make_shared<Plan>();
        check(generate(a.algorithm, c, pm, plan.get()), "tuned equivalent " + a.algorithm);
        plans.push_back(plan);
    }
    std::vector<std::pair<size_t, size_t>> rows;  // (bytes, index into algs)
    std::vector<double> best_t;
    for (size_t bytes : ctx.grid) {
        size_t best = algs.size();
        double bt = 0;
        for (size_t a = 0; a < algs.size(); ++a) {
            // tuned replaces ring and rabenseifner where count < P.
            if ((algs[a].id == 4 || algs[a].id == 6) && bytes < 16 * static_cast<size_t>(c)) continue;
            const double s = predict(*plans[a], bytes / sizeof(float), sizeof(float), ctx.model, ranks).seconds;
            if (best == algs.size() || s < bt) {
                best = a;
                bt = s;
            }
        }
        if (rows.empty() || rows.back().second != best) {
            rows.emplace_back(rows.empty() ? 0 : bytes, best);
            best_t.push_back(bt);
        }
    }
    t << c << " # communicator size " << c << " and up\n" << rows.size() << " # message-size rules\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const TunedAlg& a = algs[rows[i].second];
        t << rows[i].first << " " << a.id << " 0 0 # >= " << format_bytes(rows[i].first) << ": "
          << a.name << " (model " << format_seconds(best_t[i]) << " at "
          << format_bytes(std::max(rows[i].first, ctx.grid.front())) << ")\n";
    }
}

// --verify's relative model errors, sorted.
std::vector<double> verify_errors(const Context& ctx) {
    std::vector<double> errs;
    for (const Record& r : ctx.records)
        if (r.kind == "verify" && r.measured > 0 && r.predicted > 0)
            errs.push_back(std::fabs(r.predicted - r.measured) / r.measured);
    std::sort(errs.begin(), errs.end());
    return errs;
}

// --verify's model error and how often its first choice was kept.
void print_verification(const Context& ctx) {
    const std::vector<double> errs = verify_errors(ctx);
    int agree = 0, verified = 0;
    double sum = 0;
    for (double e : errs) sum += e;
    for (const auto& kv : ctx.decisions)
        for (const Point& p : kv.second) {
            if (p.note.compare(0, 9, "verified:") != 0) continue;
            ++verified;
            agree += p.choice_alg == p.ranked[0].second.algorithm &&
                     p.choice_params == p.ranked[0].second.params;
        }
    const size_t n = errs.size();
    std::printf("verification: %zu allreduce runs, model |error| median %.1f%% mean "
                "%.1f%% max %.1f%%; the model's first choice was kept at %d of %d points "
                "(other plans win where they measured more than %g%% faster than the "
                "point's leading plan, the fastest at the size before)\n",
                n, n ? 100 * errs[n / 2] : 0.0, n ? 100 * sum / static_cast<double>(n) : 0.0,
                n ? 100 * errs.back() : 0.0, agree, verified, 100 * ctx.opt.verify_margin);
}

// Each point's verdict for the rules of unmeasured shapes, with measured ÷
// predicted for every family --verify timed there (predicted: its cheapest
// plan of the pipeline depth measured, where it has several) and for the
// displaced component, priced as a component running these rules prices them on
// this shape (price_families: its topology view, tuned 4.1's fixed
// decision where this is Open MPI 4.1).  The displaced component runs one
// family's schedule (tuned's recursive doubling: rd); where no plan of
// that family was timed, its time stands for the family's fastest, so
// that family too is weighed as measured on other shapes.
std::vector<VouchedPoint> vouched_points(const Context& ctx, const RulesFile& rules, int ranks,
                                         const std::vector<Point>& pts) {
    std::vector<VouchedPoint> out;
    std::vector<size_t> sizes;
    std::set<std::string> fams;
    for (const Point& p : pts) {
        out.push_back({p.bytes, p.verified, p.vouched, {}, {}});
        sizes.push_back(p.bytes);
        for (const auto& kv : p.measured) fams.insert(kv.first);
    }
    if (fams.empty()) return out;
    CommShape shape = ctx.cluster.shape_of_first(ranks);
    shape.topology = ctx.cluster.view_of_first(ranks);
    TableOptions opt;
    std::string why;
    opt.displaced = displaced_for("tuned", false, mpi::library_version(), &why);
    for (const Candidate& c : tuned_candidates()) fams.insert(c.algorithm);
    FamilyPrices fp;
    // --verify timed floats: tuned ran the plan of that count.
    check(price_families(rules, shape, opt, sizes, {fams.begin(), fams.end()}, &fp, sizeof(float)),
          "pricing the measured families for other shapes");
    // Measured ÷ price where the price is known; whether it was.
    const auto set_scale = [](const std::string& fam, double measured, double price, VouchedPoint* v) {
        if (!std::isfinite(price) || !(price > 0)) return false;
        v->scale[fam] = measured / price;
        return true;
    };
    const auto ratio = [&](const std::string& fam, size_t i, double measured, VouchedPoint* v) {
        auto it = fp.best.find(fam);
        if (it != fp.best.end()) set_scale(fam, measured, it->second[i], v);
    };
    // A family whose plans come in several pipeline depths is scaled by the
    // price of the depth it was measured at: other shapes weigh that depth.
    const auto by_depth = [&](const std::string& fam, size_t i, double measured, int depth,
                              VouchedPoint* v) {
        auto f = fp.by_pipeline.find(fam);
        if (f == fp.by_pipeline.end() || f->second.size() < 2) return false;
        auto d = f->second.find(depth);
        if (d == f->second.end() || !set_scale(fam, measured, d->second[i], v)) return false;
        v->pipeline[fam] = depth;
        return true;
    };
    for (size_t i = 0; i < pts.size(); ++i) {
        const Point& p = pts[i];
        for (const auto& [fam, s] : p.measured) {
            auto d = p.measured_pipeline.find(fam);
            if (d == p.measured_pipeline.end() || !by_depth(fam, i, s, d->second, &out[i]))
                ratio(fam, i, s, &out[i]);
        }
        if (!(p.displaced_measured > 0) || !std::isfinite(fp.displaced[i]) || !(fp.displaced[i] > 0))
            continue;
        out[i].scale[kFallbackAlgorithm] = p.displaced_measured / fp.displaced[i];
        // The family's own cheapest plan where it is priced apart; where
        // enumeration folded it into another family's identical schedule
        // (rd is the xor butterfly on 2^k ranks), the displaced plan's own.
        const std::string& theirs = fp.displaced_family[i];
        if (theirs.empty() || p.measured.count(theirs) != 0) continue;
        if (fp.best.count(theirs) != 0)
            ratio(theirs, i, p.displaced_measured, &out[i]);
        else
            out[i].scale[theirs] = out[i].scale[kFallbackAlgorithm];
    }
    return out;
}

}  // namespace

// Decisions as explicit rules per communicator shape, then "model" for
// every other shape; checked as genx will read it before it is written.
RulesFile write_rules(const Context& ctx) {
    RulesFile rules;
    rules.provenance.genx_version = PACKAGE_VERSION;
    rules.provenance.date = utc_now();
    rules.provenance.hosts = ctx.cluster.nodes;
    rules.provenance.topology = ctx.fingerprint;
    rules.provenance.generator = ctx.command;
    rules.has_model = true;
    rules.model = ctx.model;
    // Shapes nothing was measured on: a plan only where the model prices it
    // ahead of the displaced component (docs/rules.md, "The fallback
    // incumbent") by more than the model's own measured error (the median
    // |error| of --verify, between 10 and 50 %; 20 % without --verify), and
    // at verified sizes only of the families measured faster than it there
    // (tune/rest_rules.hpp); else the displaced component, never slower.
    std::vector<std::string> families;
    for (const GeneratorInfo& g : generators()) families.push_back(g.name);
    const std::vector<double> errs = verify_errors(ctx);
    const double margin = errs.empty() ? 0.2 : std::min(0.5, std::max(0.1, errs[errs.size() / 2]));
    // Points --verify had no time for: the model may displace Open MPI
    // there only by the margin too, not by its first choice alone.
    for (const auto& kv : ctx.decisions) {
        std::vector<Point> pts = kv.second;
        for (Point& p : pts)
            if (p.budget_unverified) {
                p.choice_alg = kModelAlgorithm;
                p.choice_params.clear();
            }
        add_rules(ctx.cluster.shape_of_first(kv.first), pts, families, margin, &rules);
    }
    std::vector<std::vector<VouchedPoint>> shapes;
    for (const auto& kv : ctx.decisions) shapes.push_back(vouched_points(ctx, rules, kv.first, kv.second));
    for (AllreduceRule& r : rules_for_unmeasured_shapes(shapes, families, margin)) {
        r.index = static_cast<int>(rules.allreduce.size());
        rules.allreduce.push_back(r);
    }
    const std::string text = format_rules(rules);
    RulesFile reread;
    RulesCheck rc;
    rc.fingerprint = ctx.fingerprint;
    check(parse_rules(text, ctx.opt.output, rc, &reread), "the rules file genx-tune made");
    std::ofstream(ctx.opt.output) << text;
    progress("wrote " + ctx.opt.output);
    return rules;
}

void write_measurements(const Context& ctx) {
    std::ofstream csv(ctx.opt.csv);
    csv << "kind,series,algorithm,params,ranks,bytes,measured_s,predicted_s,held_out\n";
    for (const Record& r : ctx.records) {
        char m[32] = "", p[32] = "";
        if (r.measured > 0) std::snprintf(m, sizeof m, "%.6e", r.measured);
        if (r.predicted > 0) std::snprintf(p, sizeof p, "%.6e", r.predicted);
        csv << r.kind << "," << csv_field(r.series) << "," << r.algorithm << ","
            << csv_field(r.params) << "," << r.ranks << "," << r.bytes << "," << m << "," << p << ","
            << (r.held_out ? 1 : 0) << "\n";
    }
    progress("wrote " + ctx.opt.csv);
    std::ofstream(ctx.opt.svg) << make_svg(ctx.records, "genx-tune on " + std::to_string(ctx.size) +
                                                            " ranks, " + ctx.fingerprint);
    progress("wrote " + ctx.opt.svg);
}

void print_summary(const Context& ctx, const RulesFile& rules) {
    std::printf("\ndecisions (%s):\n", ctx.opt.output.c_str());
    for (const AllreduceRule& r : rules.allreduce)
        std::printf("  comm_size %-4s nodes %-3s ppn %-3s bytes %-10s %s  [%s]\n",
                    format_count_range(r.comm_size).c_str(), format_count_range(r.nodes).c_str(),
                    format_count_range(r.ppn).c_str(), format_byte_range(r.bytes).c_str(),
                    describe(r.algorithm, r.params).c_str(), r.comment.c_str());
    if (ctx.opt.verify) print_verification(ctx);
    if (ctx.skipped > 0)
        std::printf("%d measurements did not fit in --max-time %g s and were skipped\n", ctx.skipped,
                    ctx.opt.max_time);
}

// The decisions restricted to tuned's algorithms that have a genx plan
// moving the same data, in tuned's 4.1 dynamic-rules format.
void export_tuned(const Context& ctx, const RulesFile& rules) {
    if (ctx.opt.export_tuned.empty()) return;
    std::ostringstream t;
    t << "# Open MPI coll/tuned dynamic rules (4.1 format) for MPI_Allreduce, written by\n"
      << "# genx-tune " << PACKAGE_VERSION << " on " << rules.provenance.date << "\n"
      << "# host: " << ctx.fingerprint << "\n"
      << "# Chosen by genx's fitted GenModel among the tuned algorithms that have a genx\n"
      << "# plan moving the same data: 1 basic_linear = rb root=0, 3 recursive_doubling =\n"
      << "# rd, 4 ring = ring, 6 rabenseifner = rhd.\n"
      << "# 4 and 6 are not used below 16*P bytes, where tuned itself replaces them\n"
      << "# (count < P).  Use: --mca coll_tuned_use_dynamic_rules 1\n"
      << "#   --mca coll_tuned_dynamic_rules_filename THIS_FILE\n"
      << "# A section applies to every communicator size from its own up to the next.\n"
      << "1 # number of collectives\n"
      << "2 # collective id: ALLREDUCE\n"
      << ctx.decisions.size() << " # number of communicator sizes\n";
    for (const auto& kv : ctx.decisions) tuned_section(ctx, kv.first, t);
    std::ofstream(ctx.opt.export_tuned) << t.str();
    progress("wrote " + ctx.opt.export_tuned);
}

}  // namespace genx::tune
