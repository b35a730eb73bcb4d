// Plan drawing: any Plan as an SVG schedule, in the layout of Kolmakov &
// Zhang's Figures 4-6 — ranks as rows, steps as columns, one arrow per
// message from the sender's row to the receiver's row across the step's
// column, labelled with the blocks it carries.
//
// Why a picture and not only text: a butterfly, a ring and a parameter
// server differ in shape (which rank talks to which, where data fans in),
// and a reader checks a generator against the paper fastest by comparing
// shapes.  Details that would clutter the picture (buffers, each reduce's
// block list) are in SVG <title> tooltips on the arrows and marks.
//
// Marks: an arrow's colour says whether its receiver folds received data
// into a partial sum in that step (reduce, dark red) or only stores it
// (blue); a "⊕" circle at the end of a rank's step marks local reduces and
// "=" marks copies.  Labels longer than the column are shortened with "…"
// (the tooltip has the full list).  Self-contained output (no scripts, no
// external fonts), so it renders the same in browsers and rsvg-convert.
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace genx {

std::string plan_to_svg(const Plan& plan);

}  // namespace genx
