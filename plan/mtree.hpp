// MTREE (Luo, Wang and Xing, "Efficient Inter-Datacenter AllReduce With
// Multiple Trees"): a few spanning trees of bounded height over a
// heterogeneous network graph, each with its own rate; tree i carries the
// fraction r_i / Σr of the vector, as a pipelined reduce to its root
// overlapped with a broadcast back down the same tree.  For graphs whose
// links differ in rate and latency (sites joined by WAN links, a graph
// file); on a homogeneous torus or switch it is valid but MultiTree or
// GenTree fit better.
//
// The graph.  Vertices are hosts (the hosts of the view that hold ranks,
// in view order); see "Ranks of one host" below.  Every edge has a
// latency and draws on one or more capacity resources (bytes/s per
// direction; a tree of rate r uses r of each resource on each of its
// edges, once per direction: the reduce goes up, the broadcast down).
//   - A direct view (torus, mesh, graph file): each link is one edge and
//     its own resource, capacity = class rate × units, latency = class
//     latency.  This is the paper's model.
//   - A switch tree: the switches are contracted into the host-level
//     complete graph.  Edge (u, v) stands for the switch path u → v: its
//     latency is the sum of the path's link latencies and its resources
//     are the physical links of the path (host links: class rate × NICs;
//     switch uplinks: class rate, or the children's sum divided by the
//     oversubscription when the rate is unknown).  So an edge's capacity is
//     its path's bottleneck, but edges sharing a link share its capacity:
//     unlike a plain bottleneck graph, rates stay physically feasible when
//     many trees cross one uplink.
//   - No view: one switch over P hosts of one rank, unit rates.
//   Unknown rates count as the fastest known class (1 when none is known),
//   unknown latencies as the smallest known one (1 µs when none).
//
// GOST (Generate Optimized Spanning Trees).  Latencies are quantised to
// integer multiples of the smallest edge latency (at least 1, at most
// 1024); heights are sums of quantised latencies.
//   - GBST builds trees one after another, Prim-like: from a start
//     vertex, repeatedly join the outside vertex whose edge has the largest
//     remaining capacity, among edges keeping the tree's diameter ≤ 2H
//     (ties: smallest diameter, then lowest edge index).  GRTH keeps every
//     vertex's eccentricity as the tree grows (the paper's Algorithm 2 with
//     its bug fixed: the attachment vertex u is raised to L(u,v) too).
//     The start vertex is the one with the most remaining incident
//     capacity (ties: lowest index), not a random one, so plans are
//     deterministic.  A finished tree is rooted at its centre (least
//     eccentricity) and takes rate r* = min(tree bottleneck, max(min(
//     smallest remaining usable edge capacity, largest capacity / 8),
//     largest capacity / 64)); its resources lose r* per use.  GBST stops
//     when no tree spans the hosts any more (or after 1024 trees).
//     Identical trees merge (rates add).
//   - ITH binary-searches the height bound H in [1, H0], H0 = (n − 1) ×
//     the largest quantised latency (no bound), for the smallest H whose
//     GBST total rate is ≥ rho × GBST's total at H0 (rho = 0.95 default).
//   Differences from the paper, for determinism, uniform graphs and
//   switch paths:
//   - the start vertex rule;
//   - r*: the paper's is the smallest remaining capacity.  On a graph of
//     equal links that is every link's whole capacity, so the first tree
//     exhausts its links and GBST rarely finds a second (one tree on a
//     torus).  The cap at largest/8 lets several trees share the links
//     (identical ones merge back); the floor at largest/64 bounds the
//     number of rounds on very skewed capacities.  Neither changes
//     anything when the smallest capacity lies within [largest/64,
//     largest/8];
//   - on a switch tree, a candidate edge's capacity is its resources'
//     remaining capacity divided by (uses in the tree so far + 1), which
//     is the paper's rule whenever edges share no resource (direct views).
//
// Rates.  Not the paper's MILP (no MILP solver is available here).  The
// best total rate of a fixed set of trees is the MILP with its binaries
// fixed, a small LP: max Σ r_i subject to Σ_i a_ij r_i ≤ b_j on the
// original capacities (a_ij: uses of resource j by tree i), solved by a
// dictionary simplex with Bland's rule.  At most K trees (param k,
// default 4) are chosen by two heuristics, keeping the better: backward
// (the LP over all GOST trees, i.e. the MILP without its K limit, then
// drop the tree whose removal costs least until K remain) and forward
// (greedy: add the tree that raises the total most, then swap chosen
// trees for others while the total grows).  Only the 64 trees of highest
// GOST rate are candidates.  Trees the LP leaves at 0 drop; the paper's
// r̄ (least non-zero rate) is not enforced.
//
// Fractions.  nblocks = N equal blocks, N = max(32 × trees, max_i ⌈c_i /
// w_i⌉) capped at 1024; tree i gets n_i ≈ N·w_i consecutive blocks, w_i =
// r_i / Σr (largest remainder; a tree left with none is dropped).
//
// Pipelining.  Tree i's share (bytes × w_i, param bytes = the message the
// plan is built for, default 64M) is cut into c_i chunks of whole blocks:
// c_i = λ* = sqrt(v_i (l − 1) β_i / α_max) (the corrected Eq. 8: μ* =
// sqrt(v_i α_max / ((l − 1) β_i)), λ* = v_i / μ*), l = 2 × the tree's
// height in hops (the leaf→root→leaf path), β_i = 1 / r_i, α_max the
// largest latency of its edges; rounded, clamped to 1..64 and to n_i.
// Param chunks=C fixes c_i = C instead.  Chunk c crosses an edge whose
// child is at depth d (tree height h) at global step
//   reduce (child → parent):     c + h − d
//   broadcast (parent → child):  c + h + d − 1
// so a vertex folds chunk c (one fused reduce over the slots its children's
// copies arrived in, one slot per child) the step before it sends it up,
// and the root starts the broadcast of chunk c right after folding it.
// All trees run at once from step 0; messages to one peer in one step are
// one transfer (distinct blocks).  A chunk is one message: a tree edge's
// transfer carries segment_blocks = its largest chunk's block count, so
// the executor never cuts a chunk by the plan-wide segment size (whose
// window of segments in flight caps a transfer on a long link).  A receive from a peer that brings both
// partial sums and finished blocks lands in a slot; the finished blocks
// are then copied to the result.
//
//   tree of height 2, 3 chunks      step: 0   1   2   3   4   5
//        r                          c→b  0   1   2
//        |                          b→r      0   1   2
//        b                          r→b          0   1   2
//        |                          b→c              0   1   2
//        c                          (c + 2h − 1 = 6 steps)
//
// Ranks of one host.  The host's first listed rank is its tree vertex.
// The others reduce into it first (binomial tree inside the host, J =
// ⌈log2 max ranks per host⌉ steps, one slot) and get the result from it
// at the end (J steps).
//
// Over the leaf switches (param over=leaves; the default on a switch tree
// of more than kMTreeMaxHosts hosts).  GOST over every host is O(n³) on a
// switch tree (the complete host graph; docs/model.md, "The topology
// families at 10⁴ ranks"), so at scale the trees span the L leaf switches
// instead, and each leaf's B hosts (every leaf must hold the same number)
// are B lanes (plan/lanes.hpp): a ring reduce-scatter among each leaf's
// hosts, lane i's copy of the trees between the i-th hosts of the leaves
// on its 1/B of the vector, a ring all-gather.  The trees are MTREE's over
// the lane network (lane_view: one host per leaf, every switch up-link at
// 1/B of its rate, since the B lanes cross it at once), for a share of
// bytes / B.  Steps: 2J + 2(B − 1) + max_i (c_i + 2 h_i − 1).
//
// Steps: 2J + max_i (c_i + 2 h_i − 1).  Bytes: per tree, every vertex
// but the root sends the tree's share once up, and every vertex sends it
// once to each child (a root of fan-out F sends F shares).
// Construction: one GBST round is O(n · m · path) (m edges, path = links
// per edge), about O(m) by a frontier queue on a direct network (mtree_gbst:
// each class's edges in a bitset by index and in buckets by the diameter
// they would make); ITH runs
// GBST O(log H0) times.  Offered by the selector only with a topology view
// and P ≤ kWholePlanMaxRanks; the generator builds it over at most
// kMTreeMaxHosts hosts of a switch tree (kMTreeMaxDirectHosts of a direct
// network), or as many leaf switches over=leaves.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/status.hpp"
#include "plan/lanes.hpp"
#include "plan/registry.hpp"
#include "plan/topology_view.hpp"

namespace genx {

constexpr int kMTreeMaxHosts = 512;
// On a direct network (a torus, a mesh, a graph of sites) every link is a
// resource of its own and GBST grows its trees by a frontier queue
// (mtree_gbst).
constexpr int kMTreeMaxDirectHosts = 10000;
constexpr int kMTreeMaxChunks = 64;
constexpr int kMTreeMaxBlocks = 1024;
constexpr int kMTreeMaxK = 16;
constexpr int kMTreeMaxRounds = 1024;
constexpr int kMTreeMaxQuantum = 1024;
constexpr int kMTreeMaxCandidates = 64;

// The graph MTREE works on (built from a view by build_mtree_graph, or by
// hand in tests).
struct MTreeEdge {
    int u = -1, v = -1;
    double latency = 0;       // seconds
    int q = 1;                // quantised latency (height units)
    std::vector<int> res;     // capacity resources the edge draws on
};

struct MTreeGraph {
    int n = 0;                              // vertices (hosts)
    std::vector<std::string> names;         // per vertex
    std::vector<std::vector<int>> ranks;    // per vertex: its ranks, first = tree vertex
    std::vector<MTreeEdge> edges;
    std::vector<double> capacity;           // per resource, bytes/s per direction
};

// The graph of `view` for `nranks` ranks (null or empty view: one switch).
// Sets every edge's q from its latency (quantise_mtree_latencies).
Status build_mtree_graph(const TopologyView* view, int nranks, MTreeGraph* out);
// Hosts holding ranks (the vertices build_mtree_graph makes).
int mtree_host_count(const TopologyView* view, int nranks);
// q = clamp(round(latency / smallest positive latency), 1, kMTreeMaxQuantum).
void quantise_mtree_latencies(MTreeGraph* g);

// A rooted spanning tree.
struct MTreeTree {
    std::vector<int> edges;   // edge indices, sorted
    int root = -1;
    std::vector<int> parent;  // per vertex, -1 for the root
    std::vector<int> depth;   // hops from the root
    int height = 0;           // hops
    int qheight = 0;          // quantised latency of the longest root-leaf path
    double rate = 0;          // bytes/s
    // Filled by solve_mtree for the selected trees:
    double max_latency = 0;   // largest edge latency, seconds
    int chunks = 1;
    int block_begin = 0, nblocks = 0;
};

// GRTH (Algorithm 2 with the fix): the eccentricities after vertex v joins
// the tree at u over an edge of quantised latency q.  adj[x] lists x's
// tree neighbours (vertex, q); D holds the tree vertices' eccentricities
// (size n; entries of vertices outside the tree are ignored and kept).
std::vector<int> mtree_grth(const std::vector<std::vector<std::pair<int, int>>>& adj,
                            const std::vector<int>& D, int u, int v, int q);

struct MTreeOptions {
    double rmin = 0;   // smallest usable capacity (r̄); 0 = largest capacity / 1024
    double rho = 0.95; // ITH tolerance
    // GBST's rate step: r* = min(tree bottleneck, max(min(smallest usable
    // capacity, step_fraction × largest), largest / 64)).  0 = the paper's
    // rule (the smallest usable capacity, floored at largest / 64).
    double step_fraction = 1.0 / 8;
    // GBST as the paper runs it: every join scans every edge.  False: where
    // no resource serves two edges (direct networks), a frontier queue that
    // grows the same trees (tests compare the two).
    bool scan_every_edge = false;
};

// GBST (Algorithm 1) with height bound H (quantised units): the trees
// (identical ones merged, in order of first appearance) with their rates.
// *widest (when given): the largest diameter, in quantised units, any
// round's tree reached (the last, unfinished one included) where every
// round chose by a plain order (no resource shared by two edges, and
// capacities not within cap_equal's tolerance unless equal), else INT_MAX.  A bound H' ≤ H with 2H' ≥
// widest turns away none of the edges GBST chose, so it grows the same
// trees (ITH's search skips those runs).
// *memo (when given): the rounds earlier runs grew by queue, each with its
// tree's diameter and whether the bound turned an edge away.  A run replays
// the longest prefix of one that its bound admits (the same tree: a bound
// at least the diameter and at most the recorded one, or any bound from
// the diameter up where none was turned away) and records its own rounds.
// A memo serves runs on one graph with one MTreeOptions only (mtree_gost
// keeps one per ITH search).
struct GbstRound {
    std::vector<int> chosen;  // the round's edges, in the order grown
    int root = -1;
    int diam = 0;
    bool pruned = false;
};
struct GbstMemo {
    struct Run {
        long d = 0;  // the diameter bound, 2H
        std::vector<GbstRound> rounds;
    };
    std::vector<Run> runs;
    size_t replayed = 0;  // rounds replayed instead of grown
};
std::vector<MTreeTree> mtree_gbst(const MTreeGraph& g, int H, const MTreeOptions& o, int* widest = nullptr,
                                  GbstMemo* memo = nullptr);

struct MTreeGost {
    int H0 = 0;   // the unbounded height bound ITH starts from
    int HU = 0;   // the bound ITH settled on
    std::vector<MTreeTree> trees;
    double total = 0;  // Σ rates
};
// ITH (Algorithm 3) around GBST.  Errors (naming a vertex) when the graph
// is not connected over usable edges.
Status mtree_gost(const MTreeGraph& g, const MTreeOptions& o, MTreeGost* out);

// The largest total rate of `trees` on the original capacities: max Σ r_i
// subject to Σ_i a_ij r_i ≤ b_j, r ≥ 0 (a_ij: uses of resource j by tree
// i), the paper's MILP (1) with the selection fixed; a small simplex.
std::vector<double> mtree_rates(const MTreeGraph& g, const std::vector<MTreeTree>& trees);
// The same LP in general form: max Σ x subject to A x ≤ b, x ≥ 0, b ≥ 0.
std::vector<double> mtree_max_rates(const std::vector<std::vector<double>>& A, const std::vector<double>& b);
// At most k of `trees` with their LP rates, in GOST order; trees the LP
// leaves at rate 0 are dropped.  The better (larger total) of two
// heuristics for the MILP's selection, over the kMTreeMaxCandidates trees
// of highest GOST rate: backward (the LP over all, then drop the tree
// whose removal costs least until k remain) and forward (add the tree
// that raises the total most, then swap while the total grows).
std::vector<MTreeTree> mtree_select(const MTreeGraph& g, const std::vector<MTreeTree>& trees, int k);

// Eq. (3): pipelined time of v bytes in chunks of mu over a path whose
// links have latencies alpha (l = alpha.size()) and common β (s/byte),
// with λ = v/μ taken as a real number.
double mtree_pipeline_time(const std::vector<double>& alpha, double beta, double v, double mu);
// The corrected Eq. (7): μ* = sqrt(v · max α / ((l − 1) β)); v when l < 2.
double mtree_best_chunk(const std::vector<double>& alpha, double beta, double v);

// Which graph the trees span: the hosts (the paper's), or the leaf
// switches with one lane per host position ("Over the leaf switches"
// above); Auto: the hosts up to kMTreeMaxHosts, the leaves beyond on a
// switch tree.
enum class MTreeOver { Auto, Hosts, Leaves };

struct MTreeParams {
    MTreeOver over = MTreeOver::Auto;
    int k = 4;
    size_t bytes = size_t{64} << 20;
    double rho = 0.95;
    int chunks = 0;  // 0 = λ*
    double rmin = 0;
};
// Parses the family's params (errors name the key).
Status parse_mtree_params(const ParamMap& params, MTreeParams* out);

struct MTreeSolution {
    MTreeGraph graph;
    MTreeGost gost;
    std::vector<MTreeTree> trees;  // selected, with final rates, chunks and blocks (of one lane)
    int nblocks = 1;               // lanes × lane_blocks
    int intra_steps = 0;           // J
    int pipeline_steps = 0;        // max_i (c_i + 2 h_i − 1)
    int steps = 0;                 // 2J + 2 ring_steps + pipeline_steps
    // Over the leaf switches: hosts per leaf (B, the lanes; 0 over the
    // hosts), each lane's blocks, B − 1, and the leaves and their hosts;
    // `graph` then spans the hosts of the network one lane sees
    // (plan/lanes.hpp, lane_view).
    int lanes = 0;
    int lane_blocks = 1;
    int ring_steps = 0;
    LeafLayout layout;
};
Status solve_mtree(const TopologyView* view, int nranks, const MTreeParams& p, MTreeSolution* out);

Status prepare_mtree(const GenRequest& req, RankGenerator* out);
void mtree_candidates(const CandidateContext& ctx, std::vector<std::string>* out);

}  // namespace genx
