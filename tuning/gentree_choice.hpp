// GenTree's per-switch choice (Xiong et al. Algorithm 2): which sub-plan
// each switch-local sub-tree runs and whether its blocks are rearranged
// before its parent's, priced with genx's one cost model (ModelParams) at
// the call's size.  plan/gentree.hpp generates what this chooses (plans=,
// rearrange=); the formulas are in docs/model.md ("GenTree and the cost
// model").
//
// Parameters per sub-tree, from the ModelParams the caller prices with
// (already model_for_topology'd):
//   children are hosts     links.inter (the NIC: fitted α, β, ε, w_t);
//   children are one host's ranks   links.intra;
//   children are switches  SwitchTree::class_params of the child edges'
//                          class for α and β; ε and w_t of that class's
//                          entry in links.classes when it gives either,
//                          else links.inter's;
//   γ, δ                   host.
// The uplink (rearrangement) is priced by the same rule for the sub-tree's
// own edge.
#pragma once

#include <string>
#include <vector>

#include "plan/gentree.hpp"
#include "plan/registry.hpp"
#include "plan/topology_view.hpp"
#include "tuning/cost_model.hpp"
#include "common/status.hpp"

namespace genx {

// Table 5 of Xiong et al., "Revisiting the Time Cost Model of AllReduce"
// (α in s; β, ε in s per byte; docs/model.md "GenTree and Table 5"): the
// one copy genx keeps (sim/platform.cpp builds the paper's platforms from
// it).
constexpr LinkParams kTable5CrossDc{3.00e-2, 6.40e-9, 6.00e-11, 9};
constexpr LinkParams kTable5RootSw{6.58e-3, 6.40e-10, 6.00e-12, 9};
constexpr LinkParams kTable5MiddleSw{6.58e-3, 6.40e-9, 1.22e-10, 9};
constexpr HostParams kTable5Server{6.00e-10, 1.87e-10};

// The paper's model for a view ("--model paper"): every switch link class
// gets its Table 5 row in links.classes (α, β, ε, w_t), a cross-DC class
// the Cross DC row, a class of edges into a root switch (the view's root,
// or a switch whose uplink is cross-DC) the Root SW row, any other the
// Middle SW row; links.inter is the row of the hosts' class (the most
// common), links.intra the Middle SW row, host the Server row.
ModelParams paper_model(const TopologyView& view);

// At most this many rounds per sub-plan are priced (factorisations into
// more factors are not, but for every factor 2 on 2^k children).
constexpr int kGenTreeMaxRounds = 3;

// What the cost model chose for one sub-tree (gentree_switches' entry).
struct GenTreeChoice {
    GenTreeSwitch node;
    std::vector<int> factors;  // {c}: CPS (ACPS on asymmetric children)
    bool ring = false;
    int rearranged_onto = 0;   // 0: not rearranged
    double seconds = 0;        // the sub-plan's model time (reduce-scatter + allgather)
    bool symmetric() const;
    // "CPS", "8x3" (m×n), "rhd" (every factor 2), "ring", "ACPS".
    std::string plan_name() const;
};

// The choices for an allreduce of `bytes` on a valid switch-tree view.
Status gentree_choose(const TopologyView& view, double bytes, const ModelParams& params,
                      std::vector<GenTreeChoice>* out);

// The choices as gentree's params: "plans=...", plus ",rearrange=..." when
// any sub-tree is rearranged ("" when the tree has no sub-tree to choose for).
std::string gentree_choice_params(const std::vector<GenTreeChoice>& choices);

// Fills plans= (and rearrange=) of a gentree param map chosen at `bytes`
// when plans= is absent; leaves the map as it is otherwise (the user's or
// a rules file's explicit choice) and for any other algorithm or without a
// switch-tree view.
Status resolve_gentree(const std::string& algorithm, const TopologyView* view, double bytes,
                       const ModelParams& params, ParamMap* pm);
// The same on canonical text ("k=v,k=v").
Status resolve_gentree_text(const std::string& algorithm, const TopologyView* view, double bytes,
                            const ModelParams& params, std::string* text);
// resolve_gentree_text at each of `bytes` (out[i] for bytes[i]), reading
// the tree once: the decision table chooses at every size class.
Status resolve_gentree_texts(const std::string& algorithm, const TopologyView* view,
                             const std::vector<double>& bytes, const ModelParams& params,
                             const std::string& text, std::vector<std::string>* out);

}  // namespace genx
