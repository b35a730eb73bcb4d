// Hop distances over a network: the one breadth-first search behind every
// layer's routes (the cost model's direct networks, the executor's route
// lengths, the graph families' distances and connectivity checks).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "plan/topology_view.hpp"

namespace genx {

// Vertices adjacent to each vertex (both directions of an undirected link
// listed once at each end).
using Adjacency = std::vector<std::vector<int>>;

// Links from `source` to every vertex of `adj`, -1 where unreachable.  A
// route may continue through a vertex only where `passes` (when given)
// says so; the source always passes, and a vertex that does not is still
// reached.
std::vector<int> hop_distances(const Adjacency& adj, int source,
                               const std::function<bool(int)>& passes = nullptr);

// A direct view's links as an adjacency over its node indices (empty lists
// for nodes without links, and for a switch tree).
Adjacency link_adjacency(const TopologyView& view);

}  // namespace genx
