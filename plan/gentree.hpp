// GenTree (Xiong et al., "Revisiting the Time Cost Model of AllReduce",
// §4.2, Algorithms 1 and 2): an allreduce plan generated from the switch
// tree, one reduce-scatter sub-plan per switch-local sub-tree, bottom-up,
// then the allgather as its exact reverse, top-down.
//
// The tree.  The topology view's switches, plus every host with more than
// one rank as a switch-local sub-tree of its own (its ranks are its leaves,
// linked by the view's intra class); a host with one rank is that rank.
// Leaves are the communicator's ranks wherever they sit (a round-robin
// placement is built from TopologyView's hosts, not from rank order).
// Nodes with no rank below them are dropped; a node with one child does
// nothing.  The vector is cut into N = P blocks.
//
// Placement (Algorithm 1, the basic sub-plan).  A rank leaf holds all N
// blocks.  A node A with n servers (ranks below it) and children C_j ends
// with every block b owned by one server, N/n blocks each (the first N mod
// n servers one more), and the owner of b is always one of b's holders,
// i.e. the server that held b in its child's placement.  Pass 1 is the
// paper's greedy: servers in child order take untaken blocks of their own
// until their quota is met.  The paper's greedy can leave blocks that no
// server with quota left holds; pass 2 gives each such block to its
// least-loaded holder (a server may then own a block more than its quota),
// so the owner is still a holder and every fold is in place.
//
// Sub-plan at A (Algorithm 2, plan type selection).  The children are
// numbered 0..c-1 and written in mixed radix over the factors f0×f1×…
// (product c, digit 0 fastest), as hcps.hpp numbers ranks.  For block b
// owned in child j*, round i moves the partial sums of b held in children
// that agree with j* on digits < i and differ on digit i to the child with
// digit i := j*'s, into the holder of b there, which folds all f_i - 1
// received copies with one fused reduce.  After the last round the owner
// holds b summed over A's subtree.  One factor (c) is co-located PS (CPS);
// f0×f1 is the paper's m×n hierarchical CPS; every factor 2 is recursive
// halving/doubling (rhd) over the children; when the children hold
// different numbers of servers, one factor is the paper's asymmetric CPS
// (ACPS: every holder sends straight to the owner).  A ring over the
// children is the other plan type: block b travels from child j*+1 around
// to j*, each holder folding its partial in (c-1 rounds, fan-in 2).  The
// plan of each node is chosen by GenModel among every ordered
// factorisation of c into at most kGenTreeMaxRounds factors, rhd (c a
// power of two) and the ring when the children are symmetric, ACPS
// otherwise (as Algorithm 2 lines 20-23).  Butterfly sub-plans (other than
// rhd, its xor case) are not implemented.
//
// Data rearrangement (Algorithm 2 lines 8-16).  After a node's sub-plan,
// its blocks may move onto a subset of its servers before the parent's
// sub-plan, so that fewer flows leave through its uplink: k = w_t of the
// uplink's class (the most flows without incast), server i of the k taking
// the blocks of servers i + k, i + 2k, ...  GenModel decides: the incast
// the n - k extra flows would pay on the uplink against the cost of the
// move (gentree.cpp maybe_rearrange).  The moved blocks travel back in the
// allgather.  With model=view (ε = 0) it never pays; under Table 5 it does
// on CDC384's cross-datacenter link.
//
// Allgather: every reduce-scatter transfer of every node, in reverse order
// of nodes and rounds, is sent back the other way into the result buffer.
//
// Datacenters.  A switch whose children include both sub-trees of its own
// datacenter and, over a cross-DC link, another datacenter (a DC root that
// is also the tree's root, as in the emulated 2dc) gets its local children
// grouped under a node of their own, "SWITCH (local side)", whose up link
// is the cross-DC class: the datacenter reduces first, and the slow link
// carries one partial sum per block (S/2 each way in the reduce-scatter on
// two equal datacenters, against a ring's (P-1)/P·S), instead of one per
// local sub-tree.
//
// Pipelining (pipeline=K).  Unpipelined, the levels run one after the
// other: while a datacenter reduces inside, the cross-DC link idles, and
// the other way round.  With pipeline=K the vector is cut into K chunks
// (nblocks = K·P; chunk c's block b is c·P + b) and chunk c runs global
// round s - c in step s, so that the rounds of different levels (on
// different links) run at once on different chunks: R + K - 1 steps per
// phase instead of R, each moving a K-th of the data, the same bytes per
// rank in all.  Rounds are numbered globally (nodes of one height share
// rounds, so a round index is the same moment on every rank and transfers
// of different chunks with one peer merge into one per step); every
// reduce-scatter receive goes into a slot of its own peer (Copy out of it
// for rearranged blocks), so merged receives never need two buffers.  The
// reduce-scatter and the allgather are pipelined separately (an allgather
// receive goes to the result, a reduce-scatter one to a slot).  Worth it
// where the levels' links differ and the latency is small against a
// chunk's transfer (docs/model.md "GenTree pipelining"); genx's cost model
// does not price per-level links yet, so the selector does not offer it:
// force it, or name it in a rules file.
//
// Cost at a node A with children of m servers each, for S bytes (GenModel,
// per round i of factors f, V_0 = S/m, V_i = V_0/(f0·…·f_{i-1}),
// out_i = (f_i-1)/f_i·V_i):
//   Σ_i 2α + 2·out_i·β + out_i·γ + (f_i+1)/f_i·V_i·δ + 2·max(f_i - w_t, 0)·out_i·ε
// and for the ring, out = (c-1)/c·V_0:
//   2(c-1)α + 2·out·β + out·γ + 3·out·δ + 2·max(2 - w_t, 0)·out·ε
// with α, β, ε, w_t of the link class of A's child edges and γ, δ of the
// hosts (GenTreeModel).  ACPS is priced with the smallest child's V_0.
// Over the whole tree: Σ_nodes on a rank's path, so A = 2·Σ rounds steps
// and B = 2(P-1)/P·S per rank when the tree is symmetric and no data is
// rearranged.
//
// Any P and any tree: checker-proven on the paper's Figure 11 topologies
// and on random asymmetric trees (tests/unit/test_gentree.cpp).
//
//   root ── M0 ── h0 h1 h2 h3         M0, M1: CPS among 4 hosts
//       └── M1 ── h4 h5 h6 h7         (each host ends owning 2 of 8 blocks)
//   root: 2 children, CPS: host k of M0 and host k of M1 exchange
//         halves of their 2 blocks; allgather reverses both levels.
//
// Per-rank generation: prepare builds the rank-independent structure (the
// tree, every node's owner of every block and its factors: 2·P integers
// per switch and per multi-rank host, e.g. 67 MB for 4096 ranks two per
// host); emit(rank) walks only the rank's path to the root, O(P · depth).
// That memory is why the selector is offered GenTree only up to
// kGenTreeMaxOfferedRanks; forcing it beyond works but costs it.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "plan/topology_view.hpp"
#include "common/status.hpp"

namespace genx {

// GenModel parameters of one link class (seconds, seconds per byte).
struct GenTreeLinkParams {
    double alpha = 0;
    double beta = 0;
    double epsilon = 0;
    int wt = 1 << 30;  // incast threshold (fan-in above it pays ε)
};

// What GenTree prices a sub-plan with: one entry per link class of the view
// (TopologyView::link_classes), and the hosts' γ (reduce) and δ (memory
// access), seconds per byte.
struct GenTreeModel {
    std::vector<GenTreeLinkParams> classes;
    double gamma = 0;
    double delta = 0;
};

// model=view (the default): α = the class latency, β = 1/rate (a class of
// unknown rate is taken at 1 GB/s), no incast (ε = 0); γ and δ of Table 5's
// server row.
GenTreeModel gentree_model_from_view(const TopologyView& view);
// model=paper: Table 5 of Xiong et al. (docs/model.md "GenTree and Table
// 5"): a cross-DC class takes the Cross DC row, a class used by an edge into
// a root switch (the view's root, or a switch whose uplink is cross-DC) the
// Root SW row, every other class the Middle SW row; γ, δ the Server row.
// Units read as seconds per byte.
GenTreeModel gentree_model_paper(const TopologyView& view);

// At most this many rounds per switch-local sub-plan (factorisations into
// more factors are not priced).
constexpr int kGenTreeMaxRounds = 3;

// The plan GenTree chose for one switch-local sub-tree.
struct GenTreeNodeChoice {
    int view_node = -1;      // index in TopologyView::nodes (a host for an intra sub-tree)
    std::string name;        // the view node's name
    int children = 0;        // children holding ranks
    bool symmetric = true;   // every child holds the same number of ranks
    std::vector<int> factors;
    bool ring = false;       // a ring over the children (factors is then {c})
    // Data rearrangement: the number of servers the node's blocks are moved
    // onto before its parent's sub-plan (0 = not rearranged).
    int rearranged_onto = 0;
    double seconds = 0;      // GenModel time of the chosen sub-plan (reduce-scatter + allgather)
    // "CPS", "8x3" (m×n hierarchical CPS), "rhd" (every factor 2), "ring",
    // "ACPS" (asymmetric children).
    std::string plan_name() const;
};

// Per-switch choices for `bytes` on a valid view (nodes with fewer than two
// children holding ranks are left out), bottom-up.
Status gentree_choices(const TopologyView& view, double bytes, const GenTreeModel& model,
                       std::vector<GenTreeNodeChoice>* out);

// Params: bytes=SIZE (K/M/G suffixes; the message size the per-switch
// choices are priced for, default 64M), model=view|paper, pipeline=K
// (chunks, 1..kGenTreeMaxPipeline, default 1: unpipelined).  Needs
// GenRequest::topology.
Status prepare_gentree(const GenRequest& req, RankGenerator* out);
// Offers the default (bytes chosen by the selector's size class are not
// known here) when a view with 2..kGenTreeMaxOfferedRanks ranks is given.
constexpr int kGenTreeMaxOfferedRanks = 4096;
// Pipelined variants the selector prices beside the unpipelined plan: on
// trees of two or more levels (or hosts holding several ranks), up to this
// many ranks (each is priced on every rank's program: K·P blocks).
constexpr int kGenTreeOfferedPipelines[] = {2, 4, 8, 16};
constexpr int kGenTreeMaxPipelinedOfferedRanks = 512;
// pipeline=K: at most this many chunks, and K·P blocks at most.
constexpr int kGenTreeMaxPipeline = 256;
constexpr long long kGenTreeMaxPipelineBlocks = 1 << 20;
void gentree_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
