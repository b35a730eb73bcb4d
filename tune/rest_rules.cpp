// genx-tune's rules for shapes nothing was measured on (tune/rest_rules.hpp).
#include "tune/rest_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>


namespace genx::tune {

namespace {

// One grid size's verdict over every measured shape: verified anywhere,
// and the union of the families vouched for there.
struct Verdict {
    bool verified = false;
    std::set<std::string> vouched;
    std::map<std::string, std::vector<double>> scales;  // per family, one per shape
    std::map<std::string, std::set<int>> pipelines;     // per family, the depths scaled on
    bool operator==(const Verdict& o) const {
        return verified == o.verified && vouched == o.vouched && scales == o.scales &&
               pipelines == o.pipelines;
    }
    // Calibrated: the displaced component's scale is known, so every
    // family with one is weighed against it as measured.
    bool calibrated() const { return scales.count(kFallbackAlgorithm) != 0 && scales.size() > 1; }
};

std::string join(const std::set<std::string>& s) {
    std::string out;
    for (const std::string& f : s) out += (out.empty() ? "" : ", ") + f;
    return out;
}

double geomean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / static_cast<double>(v.size()));
}

// A calibrated verdict's rule: every scaled family, scaled.
AllreduceRule calibrated_rule(const Verdict& v, double margin, const std::string& shapes,
                              const std::string& pct) {
    AllreduceRule r;
    r.algorithm = kModelAlgorithm;
    r.margin = margin;
    r.families.push_back(kFallbackAlgorithm);
    std::set<std::string> names;
    for (const auto& [fam, xs] : v.scales) {
        r.scale[fam] = geomean(xs);
        // One depth on every shape: weigh that depth's plans (rules.hpp).
        auto d = v.pipelines.find(fam);
        if (d != v.pipelines.end() && d->second.size() == 1) r.pipeline[fam] = *d->second.begin();
        if (fam != kFallbackAlgorithm) {
            r.families.push_back(fam);
            names.insert(fam);
        }
    }
    r.comment = "other communicator shapes: the fitted model's best plan of the families "
                "measured at these sizes on the " + shapes + " (" + join(names) +
                "), each family's prices and the displaced component's scaled by measured ÷ "
                "predicted there (at the pipeline depth measured), where it is " + pct +
                " ahead of the displaced component (the model's median error), else fallback";
    return r;
}

AllreduceRule rule_for(const Verdict& v, const std::vector<std::string>& families, double margin,
                       size_t measured_shapes) {
    AllreduceRule r;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f %%", 100 * margin);
    const std::string shapes = std::to_string(measured_shapes) + " measured shape" +
                               (measured_shapes == 1 ? "" : "s");
    if (v.verified && v.calibrated()) return calibrated_rule(v, margin, shapes, pct);
    if (v.verified && v.vouched.empty()) {
        r.algorithm = kFallbackAlgorithm;
        r.comment = "other communicator shapes: no genx plan measured faster than the displaced "
                    "component at these sizes on the " + shapes;
        return r;
    }
    r.algorithm = kModelAlgorithm;
    r.families.push_back(kFallbackAlgorithm);
    r.margin = margin;
    if (v.verified) {
        r.families.insert(r.families.end(), v.vouched.begin(), v.vouched.end());
        r.comment = "other communicator shapes: the fitted model's best plan of the families "
                    "measured faster than the displaced component at these sizes on the " + shapes +
                    " (" + join(v.vouched) + ") where it is " + pct +
                    " ahead of it (the model's median error), else fallback";
    } else {
        for (const std::string& f : families)
            if (f != kFallbackAlgorithm) r.families.push_back(f);
        r.comment = "other communicator shapes: the fitted model's best plan where it is " +
                    std::string(pct) + " ahead of the displaced component (the model's median "
                    "error; these sizes were not verified), else fallback";
    }
    return r;
}

}  // namespace

std::vector<AllreduceRule> rules_for_unmeasured_shapes(const std::vector<std::vector<VouchedPoint>>& shapes,
                                                       const std::vector<std::string>& families,
                                                       double margin) {
    std::map<size_t, Verdict> grid;
    for (const auto& pts : shapes)
        for (const VouchedPoint& p : pts) {
            Verdict& v = grid[p.bytes];
            if (!p.verified) continue;
            v.verified = true;
            v.vouched.insert(p.vouched.begin(), p.vouched.end());
            for (const auto& [fam, x] : p.scale)
                if (x > 0 && std::isfinite(x)) {
                    v.scales[fam].push_back(x);
                    if (auto d = p.pipeline.find(fam); d != p.pipeline.end()) v.pipelines[fam].insert(d->second);
                }
        }
    if (grid.empty()) grid[0] = Verdict{};
    std::vector<AllreduceRule> out;
    Verdict last;
    for (auto it = grid.begin(); it != grid.end(); ++it) {
        if (!out.empty() && it->second == last) continue;
        if (!out.empty()) out.back().bytes.hi = it->first;
        AllreduceRule r = rule_for(it->second, families, margin, shapes.size());
        r.bytes.lo = out.empty() ? 0 : it->first;
        r.bytes.hi = ByteRange::kNoLimit;
        out.push_back(r);
        last = it->second;
    }
    return out;
}

}  // namespace genx::tune
