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
#include <vector>

#include "plan/plan.hpp"

namespace genx {

std::string plan_to_svg(const Plan& plan);

// Each block's broadcast tree: for block b, rank r's parent is the rank
// whose message last wrote b into r's result buffer (the final value's
// way in); the root is the rank that never receives b's final value.  A
// ring's trees are chains, rhd's binomial trees, MultiTree's and MTREE's
// their spanning trees.  Blocks with the same tree (MTREE's chunks, a
// plan's repeated shapes) are drawn once, labelled with their blocks.
// Each tree is a panel: ranks as circles in layers by depth, an edge per
// parent, labelled with the step that carries it.
struct BlockTree {
    std::vector<int> blocks;   // blocks with this tree, ascending
    std::vector<int> parent;   // per rank; -1 for the root (and ranks b never reaches)
    std::vector<int> step;     // per rank: the step its parent's message arrives in
    int root = -1;
};
// The distinct trees of `plan`, in order of their first block.
std::vector<BlockTree> block_trees(const Plan& plan);
// At most `max_trees` panels (a note says how many were left out).
std::string block_trees_to_svg(const Plan& plan, int max_trees = 64);

}  // namespace genx
