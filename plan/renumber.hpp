// Rank numberings for the pairwise families (butterfly, rd, rhd): which
// communicator rank runs which of the family's programs (order=).
//
// A butterfly's partners are fixed in its own numbering: step k pairs
// ranks whose numbers differ in one digit.  Which ranks those are on the
// network is the numbering's choice.  On a tree whose ranks are placed
// round-robin, identity pairs rank 0 with rank 1 across the uplinks; a
// numbering that gives consecutive numbers to the ranks of one switch keeps
// the step that moves the most bytes under that switch.  A renumbered plan
// is the same plan with the ranks renamed: rank perm[v] runs program v with
// every peer p replaced by perm[p], so it is an allreduce exactly when the
// family's plan is (the checker proves every numbering anyway), with the
// same steps and bytes per rank.  Numberings (docs/model.md, "Rank
// numberings"):
//  * identity: the family's own;
//  * topo: the ranks in the network's order: the tree's hosts in preorder
//    (each host's ranks in turn), a grid's hosts along a Z-order curve
//    (powers of two per dimension; on a torus each coordinate in reflected
//    Gray code), so that numbers differing in a low bit sit close; other
//    grids, and tori the ranks do not fill, in row-major order;
//  * topo-rev: topo with its position's bits reversed (power-of-two P), so
//    that numbers differing in a high bit sit close: for families whose
//    first and largest exchange pairs numbers P/2 apart (rhd);
//  * bine: Bine trees' remapping (De Sensi et al., SC'25) of the numbers
//    as placed: rank r runs program ν(r), where ν(r) is r's negabinary
//    representation (r or r − P for odd r, −r or P − r for even r, the one
//    whose top digit is set when both fit), Gray-decoded and bit-reversed;
//    a power of two P only.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

struct RankGenerator;

inline constexpr const char* kOrderKey = "order";

// Families order= applies to.
bool renumberable_family(const std::string& family);
// Whether canonical params ask for a numbering that reads the network
// (plan caches key such plans by the view).
bool order_reads_topology(const std::string& params);

// perm[v]: the communicator rank that runs the family's program v.  Errors
// name the order and why it does not apply (no topology for topo, P not a
// power of two for bine and topo-rev).
Status rank_numbering(const std::string& order, int nranks, const TopologyView* view,
                      std::vector<int>* perm);

// Renames a prepared generator's ranks by perm (rank_numbering's).
void renumber(const std::vector<int>& perm, RankGenerator* gen);

// Numberings worth pricing for a family on a view, besides identity.
std::vector<std::string> numberings_for(int nranks, const TopologyView* view);

}  // namespace genx
