// genx-tune's rules for shapes nothing was measured on (tune/rest_rules.hpp).
#include "tune/rest_rules.hpp"

#include <algorithm>
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
    bool operator==(const Verdict& o) const { return verified == o.verified && vouched == o.vouched; }
};

std::string join(const std::set<std::string>& s) {
    std::string out;
    for (const std::string& f : s) out += (out.empty() ? "" : ", ") + f;
    return out;
}

AllreduceRule rule_for(const Verdict& v, const std::vector<std::string>& families, double margin,
                       size_t measured_shapes) {
    AllreduceRule r;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f %%", 100 * margin);
    const std::string shapes = std::to_string(measured_shapes) + " measured shape" +
                               (measured_shapes == 1 ? "" : "s");
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
