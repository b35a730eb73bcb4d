// The network's bound on allreduce time: no schedule on this network and
// placement can finish a reduce-scatter + allgather of `bytes` faster.
//
// ForestColl's throughput bound (Zhao et al., arXiv 2402.06787): in an
// allgather of M bytes over N ranks each rank holds M/N, so every set S of
// network nodes holding some ranks but not all must receive the blocks of
// the ranks outside it over the links entering it:
//     T_ag >= max_S (M/N) * |ranks outside S| / rate_in(S).
// A reduce-scatter is its reverse (the same over the links leaving S), and
// allreduce as reduce-scatter + allgather is bounded by their sum.  On one
// switch the binding cut is a single host: 2(N-1)/N * M/B, the wire bound.
// Latency is not part of it (a bandwidth bound, for large messages).
// How it is computed (docs/model.md, "The network's bound"):
//  * a switch tree: every cut's ratio is at most the largest ratio of one
//    of its tree links (a mediant argument), so the bound is the largest
//    single-link cut, exact, O(nodes);
//  * a direct network (torus, mesh, graph file) of up to kExactBoundNodes
//    nodes: the most constraining S exactly, by Dinkelbach iteration over
//    minimum cuts (a max-flow per pinned host pair, 2(H-1) per iteration);
//  * larger direct networks: the single-host cuts only, which is still a
//    valid bound but may be looser (said in `method`).
#pragma once

#include <string>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

inline constexpr int kExactBoundNodes = 256;

struct AllreduceBound {
    double seconds = 0;           // reduce-scatter + allgather bound for `bytes`
    double allgather_s = 0;       // the allgather's part (the reduce-scatter's is the rest)
    std::string cut;              // the binding cut: which side, which links, how many ranks
    double cut_rate = 0;          // bytes/s of the links entering that side
    int outside = 0;              // ranks outside that side
    std::string method;           // how it was computed
};

// Needs a rate on every link that carries data between ranks (a tree's
// edges above hosts with ranks, a direct network's links); an error names
// the first link without one.
Status allreduce_bound(const TopologyView& view, double bytes, AllreduceBound* out);

}  // namespace genx
