// The rules genx-tune writes for communicator shapes it never measured
// (docs/genx-tune.md, "Shapes nothing was measured on"): the fitted model
// chooses among the families measured at that size on the shapes that
// were, each family's prices (and the displaced component's) scaled by
// what it measured there over what the model predicted, and defers where
// none is the margin ahead.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tuning/rules.hpp"

namespace genx::tune {

// What --verify found at one grid point of one measured shape.
struct VouchedPoint {
    size_t bytes = 0;
    bool verified = false;              // the displaced component was timed against plans
    std::vector<std::string> vouched;   // families with a plan measured faster than it
    // Measured ÷ predicted for each family's fastest plan and for
    // "fallback" (the displaced component), where both are known.
    std::map<std::string, double> scale;
    // The pipeline depth of the plan each scale was measured on, for the
    // families whose plans come in several depths.
    std::map<std::string, int> pipeline;
};

// The catch-all rules, in byte order, covering every size once (0 to no
// limit).  At a size verified on some measured shape where the displaced
// component's scale is known: "model" over every family with a scale
// there, the displaced component the incumbent (`margin` to beat it), each
// scaled by the geometric mean of its scales over the shapes.  At a size
// verified without that scale: "model" over the families vouched there, or
// "fallback" where none was.  At sizes verified on none: "model" over
// `families`, unscaled.  Neighbouring sizes with the
// same choice share a rule.  `shapes` holds each measured shape's points in
// increasing bytes.
std::vector<AllreduceRule> rules_for_unmeasured_shapes(const std::vector<std::vector<VouchedPoint>>& shapes,
                                                       const std::vector<std::string>& families,
                                                       double margin);

}  // namespace genx::tune
