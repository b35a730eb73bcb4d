// SimGrid platforms built from genx's topology model (topology/topology.hpp),
// and the engine genx-sim runs them on.
//
// A Topology's switch tree becomes one SimGrid Floyd zone: every switch a
// router, every host a host, every edge (a node to its parent) a
// split-duplex link (both directions full rate, as GenModel's full-duplex
// links) with the rate and latency of the edge's link class.  Routes are
// the tree's paths (Floyd over the edges), so an oversubscribed uplink is
// one link that every flow leaving its subtree shares, and a cross-
// datacenter class is simply a slow, long-delay link.  Ranks on one host
// talk through SimGrid's loopback (the intra-host link class's rate and
// latency when the topology knows them); the loopback is a fat pipe, so
// intra-host flows do not share bandwidth (docs/sim.md).
//
// Presets (preset_topology): topology/graph.hpp's (switch:N, tree:AxB[/O],
// torus:AxB[xC], mesh:AxB[xC]) and the GenModel paper's platforms below.
//
// A direct network (a torus, a mesh, a graph file) has no switches: every
// host gets a router ("r:<host>") joined to it by a link as fast as all its
// network links together (the MultiTree paper's NI, which drives every link
// at once), and each of the topology's links joins two routers, its rate
// times its units.  Routes are Floyd's shortest paths over the routers.
//
// Incast (GenModel's ε term, tuning/cost_model.hpp): the link into each
// host (its host edge, switch to host) gets SimGrid's NONLINEAR sharing
// policy, whose capacity falls with the number of flows crossing it (see
// incast_capacity).  Only host downlinks: GenModel puts incast at the
// switch port that feeds a node.
//
// SimGrid keeps one engine per process: Engine may be constructed once.
// Tests run each simulation in a child process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "runtime/transport.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"
#include "tuning/cost_model.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace genx::sim {

// SimGrid's network model.  LV08 (SimGrid's default, and genx-sim's):
// latency ×13.01, bandwidth ×0.97 and RTT-aware sharing, fitted on TCP.
// CM02 with every correction off (latency and bandwidth factors 1,
// weight-S 0, no cross-traffic, a TCP window too large to bound a flow): a
// message of s bytes over a route of latency L and bottleneck rate B takes
// exactly L + s/B, which the closed-form tests use.
enum class NetworkModel { LV08, CM02 };
const char* network_model_name(NetworkModel m);
Status parse_network_model(const std::string& text, NetworkModel* out);

// Host speed in flop/s.  Compute time is charged as seconds × this speed
// (SimGrid executions), so the number only sets the unit.
constexpr double kHostSpeed = 1e9;
// Switch trees with more nodes (hosts and switches) are routed by Dijkstra
// (cached per source) instead of Floyd's all-pairs table (platform.cpp).
constexpr size_t kFloydMaxNodes = 1024;

// "simgrid 3.32": the SimGrid library this process runs (its patch level
// when not 0).
std::string engine_name();

// The topology of a preset name; errors say which presets exist.
Status preset_topology(const std::string& name, Topology* out);
// "switch:N, tree:AxB, tree:AxB/O, SS24, ..." for help texts.
std::string preset_names();

// The paper's Figure 11 platforms (Xiong et al., "Revisiting the Time Cost
// Model of AllReduce"), as tests/unit/test_gentree.cpp builds them as
// views: SS24 and SS32 (one switch), SYM384 and SYM512 (16 middle switches
// of 24 or 32 servers under a root), ASY384 (8 middle switches of 32 and 8
// of 16) and CDC384 (two datacenters, 8 middle switches of 32 and of 16
// servers under each datacenter's root, the roots joined by a cross-DC
// link).  Link classes carry Table 5's rows as docs/model.md reads them:
// edges into a middle switch the Middle SW row ("middle"), into a root the
// Root SW row ("root"), the datacenters' link the Cross DC row ("xdc");
// rate 1/β and latency α/2 (a route between two servers of one switch
// crosses two links, so it costs the row's α).
bool is_paper_preset(const std::string& name);
// "SS24, SS32, SYM384, SYM512, ASY384, CDC384".
std::string paper_preset_names();
// The platform and GenModel's parameters for it: inter α, β, ε, w_t of the
// row of the servers' own links (Root SW on one switch, Middle SW below
// it), γ and δ of the Server row, intra as inter (the paper has one rank
// per server).  `model` may be null.
Status paper_preset(const std::string& name, Topology* topo, ModelParams* model);

// GenModel's incast parameters for the links into hosts (LinkParams'
// epsilon and w_t).  Off while epsilon is 0.
struct IncastParams {
    double epsilon = 0;  // s per byte received per unit of fan-in above w_t
    double w_t = 0;      // fan-in degree up to which incast is free
    bool enabled() const { return epsilon > 0; }
};

// The capacity (bytes/s) a link of `capacity` gives `flows` concurrent
// flows together under incast.  GenModel's fan-in degree is w = 1 + flows
// (the paper's x of an x-to-x exchange, N for N - 1 flows into a server),
// and a node receiving R bytes in a step pays R·β + max(w − w_t, 0)·R·ε:
// every received byte costs 1/capacity + max(w − w_t, 0)·ε seconds, so the
// link's capacity becomes 1 / (1/capacity + max(flows + 1 − w_t, 0)·ε),
// whatever the flows' sizes.  n flows of s bytes on one downlink then take
// exactly GenModel's n·s·β + max(n + 1 − w_t, 0)·n·s·ε.
double incast_capacity(double capacity, int flows, const IncastParams& incast);

struct PlatformOptions {
    NetworkModel network = NetworkModel::LV08;
    int ranks_per_host = 1;  // also each host's core count
    IncastParams incast;     // on every host's downlink when enabled()
    // Rank r runs on host rank_host[r] (an index into hosts()) when not
    // empty: any placement (a snake order on a torus, round-robin); else
    // rank r on host r / ranks_per_host, every host full.
    std::vector<int> rank_host;
};

// The SimGrid engine with a platform.  create() constructs the process's
// one Engine, applies the network model's configuration, and builds the
// platform of `topo` (every link class used by an edge needs a rate).
class Simulation {
  public:
    static Status create(const Topology& topo, const PlatformOptions& options,
                         std::unique_ptr<Simulation>* out);
    ~Simulation();

    // Hosts in the topology's tree order; rank r runs on host r / ranks_per_host
    // (or rank_host[r]).
    const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }
    const std::vector<std::string>& host_names() const { return host_names_; }
    int ranks() const {
        return options_.rank_host.empty() ? static_cast<int>(hosts_.size()) * options_.ranks_per_host
                                          : static_cast<int>(options_.rank_host.size());
    }
    int host_index(int rank) const {
        return options_.rank_host.empty() ? rank / options_.ranks_per_host
                                          : options_.rank_host[static_cast<size_t>(rank)];
    }
    // host_names() of each rank (topology/ to_view's input).
    std::vector<std::string> host_of_rank() const;

    // What one rank's actor runs; the transport is a SimGrid one
    // (sim_transport.hpp), payload-free unless `payload`.
    using RankFn = std::function<Status(int rank, Transport& transport)>;
    struct RunResult {
        double seconds = 0;             // simulated time when the last rank finished
        std::vector<double> rank_end;   // per rank
        uint64_t messages = 0;
        uint64_t bytes = 0;
    };
    // Where a long simulation stands: simulated seconds so far, messages
    // sent, ranks finished, wall seconds since run_ranks started.
    struct Progress {
        double simulated = 0;
        uint64_t messages = 0;
        int finished = 0, ranks = 0;
        double wall = 0;
    };
    using ProgressFn = std::function<void(const Progress&)>;
    // One actor per rank (ranks() of them) running fn; returns the first
    // error (prefixed with its rank) or fills *out.  Call once.  With
    // `progress`, it is called from the engine as simulated time advances,
    // at most once per `interval` wall seconds.
    Status run_ranks(const RankFn& fn, bool payload, RunResult* out,
                     const ProgressFn& progress = nullptr, double interval = 2.0);

  private:
    Simulation() = default;
    std::unique_ptr<simgrid::s4u::Engine> engine_;
    PlatformOptions options_;
    std::vector<simgrid::s4u::Host*> hosts_;
    std::vector<std::string> host_names_;
    bool ran_ = false;
};

}  // namespace genx::sim
