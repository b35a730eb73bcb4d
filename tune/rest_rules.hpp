// The rules genx-tune writes for communicator shapes it never measured
// (docs/genx-tune.md, "Shapes nothing was measured on"): the fitted model
// chooses among the families that measured faster than the displaced
// component at that size on the shapes that were measured, and defers
// where none did.
#pragma once

#include <string>
#include <vector>

#include "tuning/rules.hpp"

namespace genx::tune {

// What --verify found at one grid point of one measured shape.
struct VouchedPoint {
    size_t bytes = 0;
    bool verified = false;              // the displaced component was timed against plans
    std::vector<std::string> vouched;   // families with a plan measured faster than it
};

// The catch-all rules, in byte order, covering every size once (0 to no
// limit): at a size verified on some measured shape, "model" over the
// families vouched there (the displaced component the incumbent, `margin`
// to beat it) or "fallback" where none was vouched; at sizes verified on
// none, "model" over `families` as before.  Neighbouring sizes with the
// same choice share a rule.  `shapes` holds each measured shape's points in
// increasing bytes.
std::vector<AllreduceRule> rules_for_unmeasured_shapes(const std::vector<std::vector<VouchedPoint>>& shapes,
                                                       const std::vector<std::string>& families,
                                                       double margin);

}  // namespace genx::tune
