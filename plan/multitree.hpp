// MultiTree (Huang et al., "Communication Algorithm-Architecture Co-Design
// for Distributed Deep Learning", Algorithm 1): P spanning trees, one
// rooted at every rank, built together one time step at a time so that no
// link unit carries two tree edges in one step.  The reduce-scatter is the
// all-gather's time reversal.
//
// Construction (the all-gather, top-down).  Tree T_i starts as {i}.  At
// each time step t every link unit of the network graph (netgraph.hpp) is
// free again; the trees take turns in ascending root order, each adding at
// most one rank per turn: the first rank p of T_i, in order of addition,
// that joined in an earlier step and still reaches a rank c outside T_i
// over free units, adds the nearest such c (breadth-first over the arcs in
// preference order, through forwarders only: a direct network's edges are
// one hop, a switched network's path crosses its switches, same switch
// first) and takes one unit of every arc of the path.  Turns go on until
// no tree can add a rank; then the next step starts.  tot_t steps in all.
// Deterministic: a function of the graph and its preference order.
//
// Schedule.  Block i (of P) is tree T_i's chunk.  For each edge p → c of
// T_i added at step t: in the reduce-scatter, at step tot_t − t (0-based),
// c sends its partial sum of block i to p, which receives it into a scratch
// slot and folds it in; in the all-gather, at step tot_t + t − 1, p sends
// the finished block i to c.  A child always joins after its parent, so
// its partial is complete before it leaves.  Messages to one peer in one
// step are one transfer (several trees may share a multi-unit link); the
// receives of one step go to slot k for the k-th peer.
//
//   2x2 mesh (paper Fig. 3-5)      T0: 0 ─t1→ 1, 0 ─t1→ 2, 1 ─t2→ 3 (say)
//   0 ─ 1    tot_t = 2: RS steps   reduce-scatter: 3→1 (step 0), 1→0 and
//   │   │    0-1, AG steps 2-3     2→0 (step 1); all-gather mirrors it
//   2 ─ 3
//
// Cost.  2·tot_t steps, each moving at most (units) blocks of count/P per
// link: on a torus tot_t is about P/4 + O(√P) (4×4: 5, 8×8: 17) against the
// ring's P − 1; on a switch with one port per rank, tot_t = P − 1, the
// ring's step count but with nearby partners first.  Bandwidth-optimal
// volume: every block crosses P − 1 tree edges per phase.  Construction
// O(tot_t · P² · (V + E)) worst case, once per communicator: each step
// every tree rescans its members for one whose links are still free (a
// member whose own links are all taken is skipped without a search), and
// on a switch each search scans the switch's P ports, so the time grows as
// P³ (one rank's program: 0.04, 0.34, 2.9 and 26 s at 256, 512, 1024 and
// 2048 ranks on a torus).  Above kMultiTreeMaxRanks ranks genx refuses
// Algorithm 1 (that and the P² edges it keeps: `genx-plan --stats` at 1024
// ranks takes 3.4 s on a 32x32 torus and 3.5 s with 0.8 GB on one switch,
// 2 cores) and builds translates of one tree on a torus instead (below).
//
// Over the leaf switches (over=leaves; the default beyond
// kMultiTreeMaxRanks ranks on a switch tree): Algorithm 1 over one host
// per leaf switch, run by B lanes at once on 1/B of the vector each,
// inside ring reduce-scatters and all-gathers among each leaf's B hosts
// (plan/lanes.hpp).  At most kMultiTreeMaxRanks leaves; every leaf must
// hold as many hosts.  tree:100x100 (10⁴ ranks): 100 leaves, 4 × 99 steps.
//
// Parameters: order=root (default) or order=height (MultiTreeOrder below);
// on a 4x4 mesh root order takes 10 steps per phase, height order 9.
// trees=turns (Algorithm 1, above) or trees=translate (below); the default
// is turns up to kMultiTreeMaxRanks ranks and translate above, on a torus.
//
// Any P.  Without a topology the ranks sit on one switch.  The network
// graph must be connected; a rank nothing reaches is an error naming it.
//
// Translates of one tree (trees=translate; tori only, one rank per host).
// On a torus every translation v -> v + i maps the network onto itself,
// so the P trees can be one tree T0 rooted at node 0 and its translates
// T_i = T0 + i, each owning block i.  T0 is built step by step using each
// link direction (+x, -x, +y, ...; a dimension of 2 has one, its two hosts
// sharing one link) at most once per step, each edge from a node reached
// in an earlier step: then the translates of one step's edges are P
// distinct arcs per direction, and no arc carries two tree edges in a
// step.  The greedy (build_translate_tree): in each step every direction
// takes the unreached node nearest the root (torus distance, then index)
// whose neighbour against that direction is reached, the directions'
// choices made a maximum matching (augmenting paths over each direction's
// D best candidates, D directions).  A step adds at most D nodes, so
// tot_t >= ceil((P − 1)/D); the greedy meets that bound on every torus the
// tests try (4×4: 4, 8×8: 16, 16×16: 64, 32×32: 256, 3×5: 4, 7×9: 16,
// 3×3×3: 5; Algorithm 1 takes 5, 17, 64, 256, 4, 16).  Each rank sends one
// block of count/P on each of up to D links per step, as Algorithm 1's
// bandwidth-optimal volume.  Rank g's program is read off T0:
// for each edge u → v of direction e at step t, g is the child in tree
// g − v (peer g − e) and the parent in tree g − u (peer g + e), so it costs
// O(P log P) per rank and T0 O(P·D·log P) once, with no tree materialised
// (torus:100x100: T0 in 7 ms, a rank's program in 16–28 ms; docs/model.md,
// "The topology families at 10⁴ ranks").  The plan is invariant under the torus's translations and
// declares them as its symmetry (Z_X × Z_Y × ...) when the ranks sit in
// grid order, so the cost model prices it from one program.
#pragma once

#include <utility>
#include <vector>

#include "plan/netgraph.hpp"
#include "plan/registry.hpp"

namespace genx {

constexpr int kMultiTreeMaxRanks = 1024;

struct MultiTreeEdge {
    int tree = -1;    // root rank
    int parent = -1;  // rank
    int child = -1;   // rank
    int step = 0;     // 1-based time step it was added at (the paper's t′)
    std::vector<int> arcs;  // arcs of the graph the edge reserved
};

struct MultiTreeSchedule {
    int nranks = 0;
    int steps = 0;                    // tot_t
    std::vector<MultiTreeEdge> edges; // in allocation order
};

// The order trees take turns in within a time step: by root (the paper's
// default, "works fine ... for symmetric networks like Torus"), or, at each
// step, the trees with the larger remaining height first (the paper's
// suggestion for asymmetric networks: the farthest rank not yet in the tree,
// in hops; ties by root), so that the longest paths are scheduled earlier.
enum class MultiTreeOrder { Root, Height };

// Algorithm 1 on `g`.  Errors name a rank the construction cannot reach.
Status build_multitree(const NetGraph& g, MultiTreeSchedule* out,
                       MultiTreeOrder order = MultiTreeOrder::Root);

// T0 of trees=translate on a torus of `dims` (x first; node x + X·(y + ...)).
struct TranslateTree {
    std::vector<int> dims;
    std::vector<int> stride;  // of each dimension in the node index
    // Link directions as (dimension, +1 or -1): both signs of a dimension
    // of 3 or more, + only for a dimension of 2, none for a dimension of 1.
    std::vector<std::pair<int, int>> directions;
    int steps = 0;          // tot_t
    std::vector<int> step;  // per node: the step it joins T0 (0: the root, node 0)
    std::vector<int> via;   // per node: direction of the edge from its parent (-1: root)

    int nnodes() const { return static_cast<int>(step.size()); }
    // The neighbour of node v along direction j, forwards (sign +1) or back (-1).
    int move(int v, int j, int sign) const;
};

// Builds T0 (the greedy above) for dimensions >= 1 holding at most 2^24 nodes.
Status build_translate_tree(const std::vector<int>& dims, TranslateTree* out);

// Every tree T_i = T0 + i as Algorithm 1's schedule on the torus's network
// graph `g` (grid order, one rank per host): for tests, which check the
// same invariants on both constructions.  O(P²).
MultiTreeSchedule expand_translates(const TranslateTree& t0, const NetGraph& g);

Status prepare_multitree(const GenRequest& req, RankGenerator* out);
void multitree_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
