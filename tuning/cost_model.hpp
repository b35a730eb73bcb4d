// GenModel (Xiong et al., eq. (11)) evaluated on any Plan:
//
//     T = Aα + Bβ + Cγ + Dδ + max(w − w_t, 0)·B·ε
//
// priced step by step from the Plan's own statistics (what plan/stats.hpp
// counts) and the links its transfers use, never from a per-family formula.
//
// Units (all seconds per unit, so a fit needs no element type):
//   α  per step that moves data over a link class;
//   α_m per message beyond the first that one rank posts in one direction
//      over a link class in one step (LogP's per-message overhead o; an
//      extension to the paper, whose α is one per step however many
//      messages it posts: see "Two terms beyond the paper" below);
//   β  per byte through one endpoint's link in one direction (links are
//      full duplex: a rank that sends and receives in a step pays for the
//      larger of the two);
//   ε  per byte received per unit of fan-in degree above w_t;
//   γ  per byte combined by a reduction (a k-ary reduce of n bytes combines
//      (k−1)·n bytes: "elements_reduced" in bytes);
//   δ  per byte read or written by local work (a k-ary reduce of n bytes
//      reads k·n and writes n, a copy reads and writes n; §3.1).
//
// What one step of one rank costs
// -------------------------------
// The paper's step (Fig. 2): launch (α), transmit (β, ε), then aggregate
// (γ, δ), one after the other.  For rank r's step s, transfers holding no
// bytes are ignored (the executor drops them) and the rest are split by
// link class with the RankMap: same node = intra, otherwise inter.
//   intra  cost_i = α_i + α_m,i·(m_i − 1) + β_i·max(sent_i, recv_i)
//                   + ε_i·max(w_i − w_t,i, 0)·recv_i
//          where m_i = the larger of the numbers of messages r sends and
//          receives over intra links in step s, and
//          w_i = 1 + the number of ranks sending to r over intra links
//          in step s;
//   inter  the link is the node's NIC, shared by every rank of the node:
//          sent_e and recv_e are the inter-node bytes of ALL ranks on r's
//          node in their step s, and w_e = 1 + the number of distinct nodes
//          sending to the node in step s (with one rank per node: 1 +
//          senders, the paper's case);
//          cost_e = α_e + α_m,e·(m_e − 1) + β_e·max(sent_e, recv_e)
//                   + ε_e·max(w_e − w_t,e, 0)·recv_e, m_e counting r's own
//          inter-node messages (the overhead is the posting rank's CPU and
//          its NIC queue, not the wire).
//          Incast is congestion at the switch port that feeds the node (PFC
//          pauses per port): what converges there is one line-rate stream
//          per sending node, however many of its ranks take part, because
//          each sender's own NIC already serialises its ranks' flows.
// A class with no transfer in the step costs 0.  The two classes are
// different hardware (memory system vs NIC) and run concurrently, so the
// step's link cost is max(cost_i, cost_e), with the terms of the larger
// class.  A transfer completes at the pace of its slower endpoint, so the
// step's communication takes the largest link cost among its own step and
// the matched steps of the ranks it exchanges data with (a rank sending to
// a parameter server under incast finishes with the server).  The step
// then costs
//   comm + γ·C + δ·D,  C, D = the rank's own elements_reduced and memory
// reads + writes in step s, counted by stats.hpp's conventions, times
// elem_size (PlanModel counts them from the ops' block runs so that one
// prepared plan prices any size; the unit tests check both agree).
// w is the paper's fan-in degree: the x of an x-to-x exchange, in which
// each receiver has x − 1 incoming flows (§3.2), and N for the N−1 flows
// into a parameter server (eq. (8)); hence "1 + flows".
//
// How steps compose: a critical path, not a sum of per-step maxima
// ------------------------------------------------------------------
// Rank r's step s starts when its previous step ended AND every rank it
// exchanges data with in that step has started the matched step (the
// rendezvous progress rule the checker proves deadlock-free), ends its cost
// later, and the plan ends with its last rank.  The breakdown by term is
// the sum of the terms of the steps on the critical path (the chain of
// steps that determined the end time; ties go to the rank's own previous
// step, then to the lowest rank), so the five terms add up to the total.
//
// For a plan in which every rank does the same work in every step — ring,
// rhd for a power of two, cps, hcps, and the parameter-server root of rb,
// whose every step is the slowest — this equals Σ_s (α + β·max_r B_{r,s}
// + γ·max_r C_{r,s} + δ·max_r D_{r,s} + ε·max_r incast_{r,s}), the per-step
// maximum over ranks of each term, which is exactly how the paper writes
// Table 2 (all ranks in lock step, each step as slow as its busiest rank).
// With unequal blocks (count not a multiple of nblocks) the critical path
// is at most that sum: the busiest rank can differ from step to step.
// The per-step maximum cannot price plans whose ranks have different step
// counts (rhd folds for non-powers of two: the folded rank's "step 1" is the
// result coming back at the very end) or whose busiest rank differs by term;
// the critical path prices both without padding programs.
//
// Two terms beyond the paper (docs/model.md, "Why α_m" and "Shift steps")
// ----------------------------------------------------------------------
// α_m: an extra message in a step costs a good part of a step (posting and
// completing it), so plans with many messages per step (cps) are not
// priced like recursive doubling.  α_s: a step whose sends and receives
// are not pairwise (a cyclic shift) costs more than a pairwise exchange.
// Both are in the latency column (TermTimes::alpha); 0 gives the paper's
// model, which the Table 2 tests use.  genx-tune fits both.
//
// Non-blocking calls
// ------------------
// A non-blocking plan advances only when the application enters MPI (no
// progress thread), so each of its steps costs up to one interval between
// the application's MPI calls more than the same step of a blocking call.
// The table for MPI_Iallreduce and persistent allreduce prices every step
// that moves data with ModelParams::nonblocking_step more (model_for_call),
// which prefers plans with few steps there.
//
// Known limits (each is a modelling choice, documented for the fitter):
//   * no overlap of communication with the reduction of the same step and
//     no pipelining across segments (the executor's segment/window are not
//     priced);
//   * a step's communication lasts as long as the busiest link among its
//     own and its partners' matched steps, each priced in full: a partner
//     that is busy mostly with other peers still sets the pace;
//   * NIC sharing aggregates ranks of a node by step index, which is exact
//     for lock-step plans and an approximation where co-located ranks run
//     different steps at the same time;
//   * intra-node links are per rank (shared memory bandwidth between ranks
//     of a node is not modelled), γ and δ are per rank;
//   * without a switch tree (RankMap::tree) the network core is
//     non-blocking (single switch or full bisection).  With one, each link
//     above the hosts is priced by its class (SwitchTree): shared by the
//     transfers crossing it in a step, its α added per link on a route.  A
//     transfer then takes the larger of its NIC time and its busiest link's
//     time: links in series are not added (a pipelined flow runs at its
//     bottleneck's rate), and load is counted per step index, so a plan
//     whose ranks run different steps at once is priced as if in lock step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"

namespace genx {

// One class of links.
struct LinkParams {
    double alpha = 0;    // s per step using this class
    double beta = 0;     // s per byte
    double epsilon = 0;  // s per byte received per unit of fan-in above w_t
    double w_t = 0;      // incast threshold (fan-in degree; w <= w_t is free)
    double alpha_msg = 0;  // s per message beyond the first per direction and step
    // s added to a step in which the rank both sends and receives over this
    // class but not pairwise: some peer it sends to does not send to it, or
    // the other way round (a cyclic shift, as in ring or a cyclic butterfly;
    // "Why α_s" above).
    double alpha_shift = 0;
};

// One host (per rank).
struct HostParams {
    double gamma = 0;  // s per byte combined
    double delta = 0;  // s per byte read or written
};

struct ModelParams {
    LinkParams intra;  // ranks on the same node
    LinkParams inter;  // ranks on different nodes, through each node's NIC
    HostParams host;
    // The links of a switch tree above the hosts' own (RankMap::tree), and
    // every link of a heterogeneous direct network (RankMap::direct), by
    // the topology's link class name ("uplink", "root", "xdc", "atlantic",
    // …): α is the latency a transfer adds for each link of the class on
    // its route, β the time per byte through one such link, which every
    // transfer crossing it in the step shares; ε, w_t and α_m are not used.
    // A class the topology has and this map does not name is derived from
    // the topology: on a tree relative to the NIC (β = inter.β × host rate
    // / class rate, SwitchTree::class_params), on a graph, which has no
    // NIC, absolutely (β = 1 / (rate × units), DirectNetwork::link_params).
    // Whether a graph is heterogeneous depends on its declared classes
    // only, not on this map.
    std::map<std::string, LinkParams> classes;
    // The NIC's β is a guess, not a measurement (genx's built-in defaults):
    // where a topology file declares the hosts' link rate, 1/rate replaces
    // inter.β (model_for_topology).  genx-tune's fitted models leave it false.
    bool topology_rates = false;
    // s added to every step of a non-blocking or persistent call (the
    // decision table for MPI_Iallreduce prices with it; model_for_call):
    // without a progress thread a plan advances only inside the
    // application's MPI calls, so a step that completes waits, on average,
    // for the next one.  0 prices both kinds of call alike.
    double nonblocking_step = 0;
    // Set by model_for_call (not part of the JSON form): price with
    // nonblocking_step.
    bool price_nonblocking = false;
};

// `params` for one kind of call: unchanged for a blocking call; for a
// non-blocking or persistent one, nonblocking_step is added to the latency
// of every step that moves data (once per step, whatever its classes).
ModelParams model_for_call(const ModelParams& params, bool nonblocking);

// The most common declared rate of the links from hosts to their switch
// (bytes/s; 0 when no host link of the view has one).
double host_link_rate(const TopologyView& view);
// `params` for ranks placed on `view`: with params.topology_rates and a
// declared host link rate, inter.β = 1 / that rate; otherwise unchanged.
ModelParams model_for_topology(const ModelParams& params, const TopologyView* view);

// JSON form (docs/model.md):
//   {"links": {"intra": {"alpha":…, "beta":…, "epsilon":…, "w_t":…,
//                        "alpha_msg":…},
//              "inter": {…},
//              "classes": {"xdc": {"alpha":…, "beta":…}, …}},
//    "topology_rates": false,
//    "host": {"gamma":…, "delta":…}}
// "inter" and "host" are required; "intra" defaults to a copy of "inter"
// (a cluster fitted as one switch).  In a link, alpha and beta are required
// and epsilon, w_t and alpha_msg default to 0.  Every value must be a finite number >= 0;
// unknown keys are errors.  Errors name `where` (a file name or a path in a
// larger document) and the field, e.g. "rules.json: model.links.inter.beta".
nlohmann::json model_params_to_json(const ModelParams& params);
Status model_params_from_json(const nlohmann::json& j, const std::string& where, ModelParams* out);
// Reads a file holding exactly that object.
Status load_model_params(const std::string& path, ModelParams* out);

// Which node each rank runs on.  Ranks at or beyond node.size() are each
// alone on a node of their own, so the default RankMap{} is a single-switch
// cluster with one rank per node: every transfer is inter-node.
struct RankMap {
    std::vector<int> node;
    // A direct network (a torus, a mesh, a graph of sites; null for a
    // switched one): its node-to-node hop counts and each node's links
    // (DirectNetwork below).  A node then has a link per neighbour instead
    // of one NIC: its step is priced by the busier of its busiest peer and
    // its share of the links the step's routes load (Σ bytes × hops over its
    // link units: what every transfer's path adds, spread evenly), and its
    // latency by the farthest peer's hops.  No fan-in on a link.
    std::shared_ptr<const struct DirectNetwork> direct;
    // A switch tree above the hosts (null: a non-blocking core, the
    // paper's case).  Node ids are then the view's host nodes.  A transfer
    // between hosts under different switches also crosses the uplinks from
    // each host's switch up to their lowest common switch (SwitchTree).
    std::shared_ptr<const struct SwitchTree> tree;

    // A node id; ranks without an entry get a distinct negative id.
    int node_of(int rank) const;
    // Whether transfers between nodes are priced route by route, link by
    // link: on a switch tree, and on a heterogeneous direct network.
    bool routed() const;
    bool same_node(int a, int b) const { return node_of(a) == node_of(b); }

    // Consecutive ranks fill a node (mpirun's default by-slot mapping):
    // rank r is on node r / ppn.
    static RankMap by_slot(int nranks, int ppn);
    // `nnodes` nodes, ⌈nranks / nnodes⌉ consecutive ranks on each (the last
    // may hold fewer).
    static RankMap by_nodes(int nranks, int nnodes);
};

// The links of a direct network as the cost model needs them: hop counts
// between the nodes ranks sit on (RankMap ids) and each node's link units.
//
// A heterogeneous network (links of different rates or latencies, e.g. a
// graph of datacenters) is priced link by link instead: a transfer follows
// one shortest path (route()), each link on it adds its latency, and each
// link is a shared resource per direction and sender's step index (the
// bytes of every transfer crossing it in that step, at its own rate), as
// the links of a SwitchTree are.  A uniform network (tori, meshes) keeps
// the per-node estimate above, which equals SimGrid on them.
struct DirectNetwork {
    std::vector<int> dense;        // RankMap node id -> 0..n-1, -1 when not in the network
    int n = 0;
    std::vector<uint16_t> hops;    // n × n, shortest path in links (0xffff: unreachable); empty for a grid
    // A whole torus or mesh of one link per neighbouring pair (the view's
    // grid): its hops in closed form instead of the n² table, so that 10⁴
    // hosts cost O(n).  grid_index: per dense node, x + X·(y + Y·z).
    std::vector<int> grid;
    bool grid_wrap = false;
    std::vector<int> grid_index;
    std::vector<int> units;        // per dense node: link units at it (at least 1)
    std::vector<std::vector<std::pair<int, int>>> adj;  // per dense node: (neighbour, units)
    std::vector<std::vector<int>> adj_link;  // per dense node, parallel to adj: the link's index
    // Per link (the view's `links` order, between hosts): endpoints (dense),
    // class (-1: none) and units.
    struct Link {
        int a = -1, b = -1, cls = -1, units = 1;
    };
    std::vector<Link> links;
    std::vector<TopoLinkClass> classes;  // the view's link classes
    bool heterogeneous = false;  // links differ in rate × units or latency
    int hop(int a, int b) const;   // by RankMap node id; 1 when unknown
    // Shortest path in links between dense nodes x and y (0xffff: unreachable).
    int dense_hops(int x, int y) const;

    // The links a transfer from node a to node b (RankMap ids) crosses,
    // each as (link << 1) | 1 when crossed from its b end to its a end,
    // link << 1 the other way; appended to `out`.  The path is a shortest
    // one in links; at each node the first neighbour (in the file's link
    // order) one hop closer is taken.  Nothing when either node is not in
    // the network or b is unreachable.
    void route(int a, int b, std::vector<uint32_t>* out) const;
    // Link `link`'s parameters: params.classes[its class's name] when
    // named there; else α = the class's latency and β = 1 / (rate × units)
    // where declared, params.inter's α and β where not.
    LinkParams link_params(int link, const ModelParams& params) const;
};

// The direct network of a topology view (null when the view is a switch
// tree or empty); RankMap node ids are the view's node indices
// (TopologyView::host_of_rank()).
std::shared_ptr<const DirectNetwork> direct_network(const TopologyView& view);

// The switches of a topology view as the cost model prices them.  Each
// link above a host (switch to parent switch) is a shared resource of its
// class: in a step, the bytes of every inter-node transfer whose route
// crosses it in that direction (transfers of all ranks in their step of the
// same index, as the NIC loads are aggregated) go through it at the class's
// β, and each link on a route adds the class's α.  The hosts' own links are
// the NICs, priced by ModelParams::inter as without a tree.
struct SwitchTree {
    std::vector<int> parent;    // per view node (-1: the root)
    std::vector<int> depth;     // per view node (root 0)
    std::vector<int> up_class;  // per view node: class of its link to the parent
    std::vector<TopoLinkClass> classes;  // the view's link classes
    // Rate of the hosts' own links (bytes/s; the most common known host
    // class rate, 0 when no host link has one).
    double host_rate = 0;

    // Links a transfer from host a to host b crosses above the hosts, each
    // as (child node << 1) | 1 when crossed downwards, child node << 1
    // upwards; appended to `out`.
    void route(int host_a, int host_b, std::vector<uint32_t>* out) const;
    // The classes of those links: class id -> links of it on the route
    // (links without a class left out; empty within one leaf switch).
    std::map<int, int> route_classes(int host_a, int host_b) const;
    // The parameters of class `cls`: params.classes[name] when named there;
    // else α = the class latency and β = inter.β · host_rate / class rate
    // (inter.β when either rate is unknown), so a fitted NIC β carries over
    // to slower or faster links in the ratio the topology declares.
    LinkParams class_params(int cls, const ModelParams& params) const;
};

// The switch tree of a topology view; null when the view is empty, direct,
// or has no switch above another (every route is then two NICs).
std::shared_ptr<const SwitchTree> switch_tree(const TopologyView& view);

// "nodes=N", "ppn=K", or an explicit list of node ids "0,0,1,1" (one per
// rank); "" is the single-switch map.  Errors name the text and what is
// wrong.
Status parse_rank_map(const std::string& text, int nranks, RankMap* out);

// Seconds by GenModel term.
struct TermTimes {
    double alpha = 0;  // α per step plus α_m per extra message: the latency

    double beta = 0;
    double gamma = 0;
    double delta = 0;
    double epsilon = 0;
    double total() const { return alpha + beta + gamma + delta + epsilon; }
};

// The model's coefficients along the critical path, so that
//   seconds = Σ_class (steps·α + extra_msgs·α_m + bytes·β + incast_bytes·ε)
//             + reduce_bytes·γ + memory_bytes·δ
// (the A, B, C, D of eq. (11) and Σ max(w − w_t, 0)·B, per class).  They are
// linear in the parameters only for a fixed critical path and fixed w_t,
// which is what a least-squares fit iterates on.
struct ModelCoefficients {
    double steps_intra = 0, steps_inter = 0;
    double extra_msgs_intra = 0, extra_msgs_inter = 0;
    double shift_steps_intra = 0, shift_steps_inter = 0;
    double bytes_intra = 0, bytes_inter = 0;
    double incast_bytes_intra = 0, incast_bytes_inter = 0;
    double reduce_bytes = 0;
    double memory_bytes = 0;
    // Seconds from the links of a switch tree (their latency, and their
    // bytes beyond what the NIC term already holds) or of a heterogeneous
    // direct network (its routes' latency and busiest link), at the
    // parameters priced: constant for a fit of the other columns (taken off
    // the measured time there; fit.hpp fit_link_classes fits the classes).
    double route_seconds = 0;
};

// Which of GenModel's two link classes (ModelParams::intra, inter) a step's
// cost came from.  Not named LinkClass: topology/'s LinkClass is a class
// of physical links, and a file may include both (genx-sim does).
enum class LinkKind : uint8_t { None, Intra, Inter };

// One step on the critical path.
struct PathStep {
    int rank = -1;
    int step = -1;
    double start = 0;  // s, when its transfers could all start
    double end = 0;
    // The (rank, step) whose link load set the communication time: this
    // step, or the matched step at the other end of one of its transfers
    // when that end was busier.
    int link_rank = -1;
    int link_step = -1;
    LinkKind link = LinkKind::None;  // the class whose cost counted
    int fan_in_degree = 0;             // w of that class (0 without transfers)
    TermTimes terms;
};

struct Prediction {
    // Not ok when the plan cannot be timed (a transfer without its match, or
    // a cycle of waits): the checker rejects such plans; seconds is then
    // +infinity and the terms are empty.
    Status status;
    double seconds = 0;  // when the last rank finishes
    TermTimes terms;     // along the critical path; terms.total() == seconds
    ModelCoefficients coefficients;
    std::vector<PathStep> critical_path;  // in time order
};

// Predicted time of one allreduce of `count` elements of `elem_size` bytes
// with `plan` (which should pass the checker).  Same as PlanModel::build()
// then PlanModel::predict(); a build error lands in Prediction::status.
Prediction predict(const Plan& plan, size_t count, size_t elem_size, const ModelParams& params,
                   const RankMap& ranks = RankMap{});

// A plan prepared for pricing at many sizes and parameter sets (the
// selector prices every candidate for every size class; genx-tune refits
// the parameters many times): transfer matching, link classes and a
// dependency order of the steps are worked out once, so predict() is one
// linear pass over the plan.  Immutable after build(); predict() is safe to
// call from several threads.
//
// Pricing from one node (the quotient).  When the plan declares a rank
// symmetry (PlanHeader::symmetry, its fixed digits left at 0) and every
// node of the RankMap is a translate of a modelled node by that group (on
// a direct network, by translations that also map every node's links onto
// its image's), every translate of a rank starts and ends each step at the
// same time as the rank itself (its program, its partners' programs and
// their link classes are the same up to the translation).  build() then
// models only the ranks of the nodes holding the ranks whose free digits
// are 0 (rank 0's node when no digit is fixed): a transfer to a rank p of
// node n is matched against the program of p's translate among them, and
// the NIC and incast terms count the real source nodes.  On a switch tree
// each free generator must also extend to an automorphism of the tree that
// keeps every switch link's class; a link's load is then its orbit's, the
// modelled ranks' bytes over the orbit's links times P / (modelled ranks ×
// orbit size) (the switch-tree quotient; GenTree on a level-uniform tree,
// hcps or butterfly groups whose digits follow the tree's levels).  A
// heterogeneous direct network is always modelled in full.  The times are
// those of the full model exactly when every
// block holds the same number of elements (count a multiple of nblocks)
// and every translate splits its block lists into as many messages; the
// butterfly's cyclic and mixed groups split a wrapping range into two
// messages on some ranks only, so with α_m > 0 the quotient can be up to
// α_m per step below the full model there (test_per_rank.cpp bounds it).
// With unequal blocks the translates differ by at most one element per
// block and the quotient prices rank 0's node.  A ring of 10⁵ ranks is then priced from
// one program, not 10⁵.
class PlanModel {
  public:
    // Fails, naming rank and step, for a bad peer, a transfer without its
    // match, or steps that wait on each other in a cycle.
    static Status build(const Plan& plan, const RankMap& ranks, PlanModel* out);
    // From a prepared generator: the quotient when `allow_quotient` and the
    // symmetry applies, else every rank's program, generated one at a time
    // (memory: the model, not the plan).
    static Status build(const RankGenerator& gen, const RankMap& ranks, PlanModel* out,
                        bool allow_quotient = true);
    // Whether build() would price `gen` by the quotient under `ranks`.
    static bool quotient_applies(const PlanHeader& header, const RankMap& ranks);
    Prediction predict(size_t count, size_t elem_size, const ModelParams& params) const;

    const std::string& algorithm() const { return algorithm_; }
    const std::string& params() const { return params_; }
    int nranks() const { return nranks_; }
    int nblocks() const { return nblocks_; }
    // Ranks modelled: nranks, or the quotient's (one node's, one leaf switch's, ...).
    int modelled_ranks() const { return static_cast<int>(model_rank_.size()); }
    bool quotient() const { return modelled_ranks() < nranks_; }

  private:
    class Builder;
    class Pricing;
    struct Run {
        int lo = 0, len = 0;
    };
    struct OpRun {
        int lo = 0, len = 0;
        int combine = 0;  // bytes combined per byte of the run (k-1; 0 for a copy)
        int access = 0;   // bytes read + written per byte (k+1; 2 for a copy)
    };
    struct Xfer {
        int peer = -1;       // model index of the peer (or of its translate)
        int peer_step = -1;  // the step of the matched transfer on `peer`
        int src_node = -1;   // the real peer's node (RankMap id), for fan-in
        uint32_t first_run = 0, nruns = 0;
        uint32_t first_link = 0, nlinks = 0;  // route_ entries (tree_ or a heterogeneous direct_)
        bool recv = false, intra = false;
    };
    struct StepRec {
        int rank = -1, step = -1, node = -1;  // rank: real rank; node: dense, modelled nodes
        uint32_t first_xfer = 0, nxfer = 0, first_op = 0, nop = 0;
        // Bit 0 intra, bit 1 inter: the step's transfers over the class go
        // both ways but not pairwise (LinkParams::alpha_shift).
        uint8_t shift = 0;
    };
    size_t nic_index(int node, int step) const {
        return static_cast<size_t>(node) * static_cast<size_t>(max_steps_) +
               static_cast<size_t>(step);
    }

    std::string algorithm_, params_;
    int nranks_ = 0, nblocks_ = 1, max_steps_ = 0, nnodes_ = 0;
    std::shared_ptr<const DirectNetwork> direct_;  // RankMap::direct
    std::shared_ptr<const SwitchTree> tree_;       // RankMap::tree
    std::vector<uint32_t> route_;                  // SwitchTree / DirectNetwork::route codes, by Xfer
    // The quotient on a switch tree (else empty), per tree node: the node
    // whose uplink stands for its orbit (route_ holds those), and the
    // weight of the modelled ranks' bytes on it (P / (modelled ranks ×
    // orbit size)).
    std::vector<int> link_rep_;
    std::vector<double> link_weight_;
    std::vector<int> direct_node_;                 // with direct_: RankMap node of each rank
    std::vector<int> model_rank_;            // real rank of each model index
    std::vector<uint32_t> rank_first_step_;  // model ranks + 1 offsets into steps_
    std::vector<StepRec> steps_;
    std::vector<Xfer> xfers_;
    std::vector<Run> runs_;
    std::vector<OpRun> op_runs_;
    std::vector<uint32_t> order_;                // steps_ in dependency order
    std::vector<std::vector<int>> nic_sources_;  // [nic_index] distinct sending nodes
};

// An (algorithm, params) genx can run; params in the registry's canonical
// "k=v,k=v" text.
struct Candidate {
    std::string algorithm;
    std::string params;
};

// A family list of this one name asks enumerate_candidates for Open MPI's
// own algorithms as genx's plans in rank order (tuning/displaced.hpp's
// openmpi_candidates: what a "fallback" incumbent is priced as where the
// displaced component is unknown, docs/rules.md).
inline constexpr const char* kOpenMpiFamilies = "@openmpi";

struct CandidateOptions {
    // Families to consider; empty = every registered generator.
    std::vector<std::string> families;
    // hcps factorisations with at most this many factors (0 = all).  The
    // number of ordered factorisations grows quickly (1888 for P = 720).
    int max_hcps_levels = 0;
    // Ranks per node, when known: adds the butterfly group ppn x (P/ppn),
    // whose first factor stays on the node.
    int ranks_per_node = 0;
    // The network, when a topology file placed the ranks (families that
    // follow it offer candidates only then); not owned.
    const TopologyView* topology = nullptr;
};

// Every applicable candidate for `nranks` ranks: each registered family's
// parameter space (registry.hpp's CandidatesFn), in registry order.  P = 1
// yields ring only (every family is the same empty plan).
std::vector<Candidate> enumerate_candidates(int nranks, const CandidateOptions& options = {});

struct RankedCandidate {
    Candidate candidate;
    Prediction prediction;
};

// Generates every candidate, predicts it, and returns them fastest first
// (ties keep enumeration order).  Fails, naming the candidate, if one does
// not generate or cannot be timed (a bug in a generator).
Status best_candidates(int nranks, size_t count, size_t elem_size, const ModelParams& params,
                       const RankMap& ranks, std::vector<RankedCandidate>* out,
                       const CandidateOptions& options = {});

// A table of predictions by term, one row per candidate (seconds with
// engineering precision), e.g. for genx-plan --model and test output:
//   algorithm  params        total      alpha      beta  …  incast
std::string format_prediction_table(const std::vector<RankedCandidate>& rows);

}  // namespace genx
