// Bytes a plan puts on each class of links of a network: every transfer
// follows its route (a switch tree's path up to the lowest common switch and
// down, a direct network's shortest path in links) and adds its bytes to
// every link it crosses, by the link's class.  Ranks of one host exchange
// over the intra-host link ("intra" when the view names none).  What
// order= (renumber.hpp) saves is read off it without timing anything.
#pragma once

#include <map>
#include <string>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

struct RankGenerator;

struct LinkTraffic {
    std::map<std::string, double> class_bytes;  // class name -> bytes over all its links
};

// Every rank's program is read (the whole plan: O(P · steps · depth)).
Status link_traffic(const RankGenerator& gen, size_t count, size_t elem_size, const TopologyView& view,
                    LinkTraffic* out);

}  // namespace genx
