// Lanes over the leaf switches: a plan for every rank of a switch tree made
// from a plan for one rank per leaf switch.  For the families whose
// construction grows too fast with the host count (MultiTree's Algorithm
// 1, MTREE's GOST) beyond their host limits.
//
// Every leaf switch (a switch holding hosts with ranks) must hold the same
// number B of such hosts; host i of each leaf is lane i.  The vector is B
// lane chunks of N blocks (N: the inner plan's blocks).  A rank's program:
//   1. the binomial fold of its host's ranks into the host's first rank
//      (J = ⌈log2 ranks per host⌉ steps);
//   2. a ring reduce-scatter among the first ranks of the leaf's hosts
//      (B − 1 steps): lane i then holds the leaf's sum of chunk i;
//   3. the inner plan on lane i's chunk, between the i-th hosts of the
//      leaves (inner rank l = leaf l), all lanes at once;
//   4. a ring all-gather among the leaf's hosts (B − 1 steps);
//   5. the binomial broadcast back inside the host (J steps).
// Per host link and phase: (B − 1)/B of the vector in the rings, the
// inner plan's traffic on 1/B of it: a two-level reduce-scatter/all-gather
// whose top level is the inner plan.  A rank's program is the inner
// plan's program of its leaf, translated (peers to lane hosts, blocks
// offset), plus 2J + 2(B − 1) steps listed from its place alone.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/registry.hpp"
#include "plan/topology_view.hpp"

namespace genx {

struct LeafLayout {
    std::vector<int> leaf_node;                        // the view's node of each leaf switch
    std::vector<std::vector<std::vector<int>>> hosts;  // per leaf, per lane: the host's ranks
    int leaves() const { return static_cast<int>(leaf_node.size()); }
    int lanes() const { return hosts.empty() ? 0 : static_cast<int>(hosts.front().size()); }
};

// The leaf switches of `view` and their hosts, in view order.  Errors
// (prefixed by `family`) for a direct network or no view, levels inside a
// host, a host with no switch above it, and leaves of unequal host counts
// (naming two of them).
Status leaf_layout(const TopologyView* view, int nranks, const std::string& family, LeafLayout* out);

// The network one lane sees: the same switches, each leaf with one host
// (its first host's link class and NICs) holding rank l for leaf l.  With
// `share` < 1 every switch up-link of a known rate gets `share` of it (a
// class of its own, named "CLASS/lane"), since all lanes cross it at once;
// an up-link of unknown rate is read from its children, now one host per
// leaf, which shares it the same way.
TopologyView lane_view(const TopologyView& view, const LeafLayout& lay, double share = 1.0);

// Steps of the lanes around an inner plan of `inner_steps` steps.
int lanes_steps(const LeafLayout& lay, int inner_steps);

// The plan for every rank: `inner` is a plan for lay.leaves() ranks (inner
// rank l = leaf l) with `inner_steps` steps; its header is kept but for
// nranks and nblocks.
RankGenerator compose_lanes(const LeafLayout& lay, int nranks, RankGenerator inner, int inner_steps);

}  // namespace genx
