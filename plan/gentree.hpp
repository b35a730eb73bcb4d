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
// nothing.  The vector is cut into N blocks: N = P, or F·P (block_count)
// where the tree's nodes have children of different sizes (below).
//
// Placement (Algorithm 1, the basic sub-plan).  A rank leaf holds all N
// blocks.  A node A with c children C_j ends with every block b owned by
// one server, and the owner of b is always one of b's holders, i.e. the
// server that held b in its child's placement.  Each child owns N/c blocks
// (the first N mod c one more), split evenly over its servers.  The paper
// gives every server N/n blocks (n servers below A); on children of equal
// size that is the same, but on unequal ones (2 hosts under one switch and
// 1 under the other, a sub-communicator's usual shape) the larger child
// owns more, its uplink receives that share in the reduce-scatter and
// sends it back in the allgather, and the two phases, one after the other,
// take 2·(2/3)·S/B instead of S/B on the slow link (docs/model.md,
// "GenTree on unequal sub-trees").  So that the shares come out whole, N is the least
// multiple F·P (F <= kGenTreeMaxBlockFactor) that every node's N/c and
// N/(c·m) divide, else 8·P, within kGenTreeMaxBalancedBlocks·chunks.
// Pass 1 is the paper's greedy: servers take untaken blocks of their own
// until their quota is met, sub-trees' servers before rank leaves (a leaf
// holds every block, a sub-tree's server only its own); at a node whose
// children differ in size, a server takes its blocks grouped by who holds
// them in the other children, the largest group first, so that it has
// fewer senders across the node.  The greedy can
// leave blocks that no server with quota left holds; pass 2 gives each such
// block to the holder whose child is furthest below its share, then whose
// server is furthest below its quota (a server may then own more than its
// quota), so the owner is still a holder and every fold is in place.
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
// to j*, each holder folding its partial in (c-1 rounds, fan-in 2).  Which
// sub-plan each node runs is an input (plans=): genx's cost model chooses
// it per call size (tuning/gentree_choice.hpp, as Algorithm 2 lines 20-23
// do with GenModel); without plans= every node runs CPS (ACPS on
// asymmetric children).  Butterfly sub-plans (other than every factor 2,
// rhd over the children) are not implemented.
//
// Data rearrangement (Algorithm 2 lines 8-16, rearrange=).  After a node's
// sub-plan, its blocks may move onto k of its servers before the parent's
// sub-plan, so that fewer flows leave through its uplink: server i of the k
// taking the blocks of servers i + k, i + 2k, ...  The cost model decides
// k (w_t of the uplink) where the incast saved pays for the move.  The
// moved blocks travel back in the allgather.
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
// (nblocks = K·N; chunk c's block b is c·N + b) and chunk c runs global
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
// Cost: every round of a node's sub-plan is one step each way, so A =
// 2·Σ rounds on a rank's path and B = 2(P-1)/P·S per rank when the tree is
// symmetric and no data is rearranged; the per-node formulas the choice
// uses are in tuning/gentree_choice.hpp and docs/model.md.
//
// Any P and any tree: checker-proven on the paper's Figure 11 topologies
// and on random asymmetric trees (tests/unit/test_gentree.cpp).
//
//   root ── M0 ── h0 h1 h2 h3         M0, M1: CPS among 4 hosts
//       └── M1 ── h4 h5 h6 h7         (each host ends owning 2 of 8 blocks)
//   root: 2 children, CPS: host k of M0 and host k of M1 exchange
//         halves of their 2 blocks; allgather reverses both levels.
//
// Symmetry.  On a level-uniform tree (every node of a depth with the same
// number of children, sub-plan and rearrangement, every rank at one depth)
// turning the children of all nodes of one depth alike (cyclically for CPS
// and the ring, digit by digit for factors) maps the plan onto itself, its
// blocks relabelled.  When the ranks are numbered in mixed radix over those
// digits (in tree order, round-robin over the hosts, ...) the generator
// declares the group (PlanHeader::symmetry); a rearranged depth breaks its
// own digits and those below, which are declared fixed (symmetry_fixed).
// Peers are then emitted in order of their offset in the group, so that
// check_symmetry can prove it, and the cost model prices the plan from one
// host's ranks, or one leaf switch's when it rearranges, with each uplink
// charged its orbit's load (docs/model.md, "Pricing at scale").
//
// Per-rank generation: prepare builds the rank-independent structure (the
// tree, every node's owner of every block and its factors: 2·P integers
// per switch and per multi-rank host, 8 MB for 10⁴ ranks on tree:100x100,
// 67 MB for 4096 ranks two per host); emit(rank) walks only the rank's
// path to the root, O(P · depth).  The selector is offered GenTree up to
// kGenTreeMaxOfferedRanks, beyond kGenTreeMaxPlacedRanks only where those
// tables stay within kGenTreeMaxPlacementEntries; on a symmetric tree the
// decision table prices it by the quotient (tree:100x100: 0.01-0.2 s per
// plan instead of 8.5 s for every rank's program), on another it is
// priced from every rank's program within kFullModelBudget or left out.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "plan/topology_view.hpp"
#include "common/status.hpp"

namespace genx {

// How a sub-tree's child edges, or its uplink, reach the cost model: ranks
// of one host over the intra class, hosts over their NIC, switches over the
// switch link class (None: the root's uplink).
enum class GenTreeLink { None, Intra, Host, Switch };

// One switch-local sub-tree with two or more children holding ranks, as the
// per-switch choice (tuning/gentree_choice.hpp) needs it.
struct GenTreeSwitch {
    int view_node = -1;              // index in TopologyView::nodes (a host for an intra sub-tree)
    std::string name;                // the view node's name (+ " (local side)")
    std::vector<int> child_servers;  // ranks under each child, in child order
    int servers = 0;                 // ranks under the sub-tree
    GenTreeLink child_link = GenTreeLink::None;
    int child_class = -1;            // view link class of the (first) child's edge
    GenTreeLink up_link = GenTreeLink::None;
    int up_class = -1;               // view link class of the uplink (-1 at the root)
};

// Every such sub-tree of a valid view, in GenTree's bottom-up order (the
// order of plans= and rearrange=).
Status gentree_switches(const TopologyView& view, std::vector<GenTreeSwitch>* out);

// A sub-plan as plans= spells it: "cps" (one factor: CPS, or ACPS on
// asymmetric children), "ring", or the factors ("4x2", "2x2x2").
std::string gentree_plan_token(const std::vector<int>& factors, bool ring);

// Params:
//   plans=T1/T2/...  one sub-plan per gentree_switches() entry, in order:
//                    cps, ring (3 or more symmetric children) or factors
//                    whose product is the number of children (symmetric
//                    children only); absent: cps everywhere.
//   rearrange=K1/K2/...  per entry, the servers its blocks move onto before
//                    the parent's sub-plan (0: none; 0 at the root); absent:
//                    none.
//   pipeline=K       chunks, 1..kGenTreeMaxPipeline, default 1 (unpipelined).
// The generator prices nothing: genx's cost model chooses plans= and
// rearrange= at the call's size (tuning/gentree_choice.hpp).  bytes= and
// model= (the old generator-side pricing) are retired keys: errors naming
// the replacement.  Needs GenRequest::topology.
Status prepare_gentree(const GenRequest& req, RankGenerator* out);
constexpr const char* kGenTreeRetiredPricing =
    "GenTree's per-switch plans are chosen by genx's cost model at the call's size; give them "
    "as plans= and rearrange=, or leave them out where genx chooses (genx-plan -a gentree "
    "--bytes SIZE [--model FILE|paper] prints the choice; docs/model.md \"GenTree and the cost "
    "model\")";
// Offers the unpipelined plan (and below, pipelined ones) without plans=,
// when a view with 2..kGenTreeMaxOfferedRanks ranks is given: the selector
// fills plans= per size class (tuning/gentree_choice.hpp).  Beyond
// kGenTreeMaxPlacedRanks ranks only where the placement tables (two
// integers per block and per switch or multi-rank host) stay within
// kGenTreeMaxPlacementEntries: 10⁴ ranks one per host on tree:100x100
// hold 10⁶ entries (8 MB), two per host 5·10⁷ (400 MB).
constexpr int kGenTreeMaxOfferedRanks = 10000;
constexpr int kGenTreeMaxPlacedRanks = 4096;
constexpr long long kGenTreeMaxPlacementEntries = 1LL << 24;
// Pipelined variants the selector prices beside the unpipelined plan: on
// trees of two or more levels (or hosts holding several ranks), up to this
// many ranks (each is priced on every rank's program: K·N blocks), the
// deeper ones only up to kGenTreeMaxOfferedPipelineBlocks blocks (32 and 64
// chunks up to 256 and 128 ranks): on 2dc with 16 ranks, 16 MiB took 2.84 s
// with 32 chunks against 3.55 s with 16 (bench/RESULTS.md, section 11).
constexpr int kGenTreeOfferedPipelines[] = {2, 4, 8, 16, 32, 64};
constexpr int kGenTreeMaxPipelinedOfferedRanks = 512;
constexpr long long kGenTreeMaxOfferedPipelineBlocks = 8192;
// Blocks per chunk on a tree whose children hold different numbers of
// servers: F·P with F at most kGenTreeMaxBlockFactor, and F·P·chunks at
// most kGenTreeMaxBalancedBlocks (beyond it F shrinks, to 1).
constexpr long long kGenTreeMaxBlockFactor = 8;
constexpr long long kGenTreeMaxBalancedBlocks = 4096;
// pipeline=K: at most this many chunks, and K·P blocks at most.
constexpr int kGenTreeMaxPipeline = 256;
constexpr long long kGenTreeMaxPipelineBlocks = 1 << 20;
void gentree_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
