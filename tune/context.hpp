// What genx-tune's phases share (tune/phases.hpp): the options, the job's
// layout, every measurement and the decisions, passed from phase to phase.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/topology_view.hpp"
#include "runtime/mpi_comm.hpp"
#include "tune/timing.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/fit.hpp"
#include "tuning/rules.hpp"

namespace genx::tune {

// genx-tune's options as given (docs/genx-tune.md, "Options").
struct Options {
    std::string output = "genx-rules.json";
    std::string csv;
    std::string svg;
    std::string export_tuned;
    double max_time = 300;
    bool verify = false;
    double verify_margin = 0.05;
    bool no_fallback = false;  // --verify never defers
    // Open MPI's algorithms --verify times: "all", "none" or names.
    // Opt-in: on oversubscribed nodes their times did not hold in the next
    // job (bench/RESULTS.md).
    std::string ompi_algorithms = "none";
    double verify_spread = 2.0;
    std::string comm_sizes;
    std::string min_bytes = "8";
    std::string max_bytes = "256M";
    // Past the last-level cache: the β and δ that decide large messages are
    // those of memory (docs/genx-tune.md).
    std::string p2p_max = "32M";
    int reduce_max_k = 16;
    std::vector<std::string> reduce_bytes = {"8M", "16M"};
    std::vector<std::string> cps_bytes = {"4K", "64K", "1M", "16M", "64M"};
    int holdout_every = 4;
    int max_hcps_levels = 3;
    double target = 0.2;  // seconds per measurement when time allows
    std::string statistic = "median";
    std::string topology, overlay;  // the job's switch tree (--topology)
    std::string site;     // --site DIR: write a whole site there (tune/site.hpp)
    bool force = false;   // --site into a directory holding other files
};

// One row of the CSV: a measurement or a prediction.
struct Record {
    std::string kind;    // p2p-intra, p2p-inter, p2p-route, reduce, cps, shift, verify, predict
    std::string series;  // what the plot groups by
    std::string algorithm, params;
    int ranks = 0;
    size_t bytes = 0;
    double measured = 0;
    double predicted = 0;
    bool held_out = false;
    int measurement = -1;  // index into Context::data
    int route = -1;        // or into Context::route_data
};

// Where the job's ranks run.
struct Cluster {
    std::vector<int> node;  // dense node id per world rank
    int nodes = 1;
    int ppn = 1;
    // With --topology: every rank's host name, and the files.
    std::vector<std::string> hosts;
    std::string topology, overlay;

    // The first c ranks on the topology's switch tree (null without one).
    std::shared_ptr<const TopologyView> view_of_first(int c) const;
    // The first c ranks as the cost model sees them: on `view` when there
    // is one, else by node.
    RankMap map_of_first(int c, const std::shared_ptr<const TopologyView>& view) const;
    RankMap map_of_first(int c) const { return map_of_first(c, view_of_first(c)); }
    CommShape shape_of_first(int c) const;
};

// One grid point of one communicator size.
struct Point {
    size_t bytes = 0;
    std::vector<std::pair<double, Candidate>> ranked;  // predicted, fastest first
    std::string choice_alg, choice_params;
    // --verify: the fastest genx plan measured here, kept or not.
    std::string fastest_alg, fastest_params;
    std::string note;
    // --verify with the displaced component timed: the families with a plan
    // measured faster than it here by the paired rule that keeps a plan
    // (tune/rest_rules.hpp: what shapes nothing was measured on may use).
    bool verified = false;
    std::vector<std::string> vouched;
    // --verify: each family's fastest plan measured here and the displaced
    // component (0: not timed), which the rules for other shapes divide by
    // the model's prices to scale them (tune/rest_rules.hpp).
    std::map<std::string, double> measured;
    std::map<std::string, int> measured_pipeline;  // the pipeline depth of each family's fastest
    double displaced_measured = 0;
    // --verify ran out of time before this point: its rule lets the model
    // displace Open MPI only by the margin, as for unmeasured shapes.
    bool budget_unverified = false;
};

// One communicator size's candidates and points (decide, then verify).
struct Decision {
    int ranks = 0;
    std::shared_ptr<const TopologyView> view;
    RankMap map;
    std::vector<std::pair<Candidate, std::shared_ptr<Plan>>> candidates;
    std::vector<Point> points;
};

// Phase shares of --max-time, as the end of each phase's budget.
struct Shares {
    double p2p_own = 0, route = 0, reduce = 0, cps = 0, shift = 0;
};

struct Context {
    Options opt;
    std::string command;  // the command line, for the rules file
    mpi::Comm world;
    int rank = 0, size = 1;
    Timing timing;
    double start = 0;  // MPI_Wtime the budget counts from
    double launched = 0;  // MPI_Wtime at setup(), the same on every rank
    Shares shares;

    // The command line, parsed (setup).
    std::vector<size_t> grid, p2p_bytes, reduce_bytes, cps_bytes;
    std::vector<int> comm_sizes;
    std::vector<BaseAlgorithm> ompi_algs;

    // The job (discover).
    Cluster cluster;
    std::string fingerprint;
    RankMap tree_map;  // every rank on the switch tree (--topology)

    // Measurements, and the CSV's rows.
    std::vector<Record> records;
    std::vector<Measurement> data;
    std::vector<Measurement> route_data;  // across switch links, fitted apart
    int skipped = 0;

    // The fit.
    FitResult fit;
    ModelParams model;
    std::vector<ClassFit> class_rows;

    // Decisions per communicator size.
    std::map<int, std::vector<Point>> decisions;

    Budget phase_end(double share) const { return Budget{start + share * opt.max_time}; }
    Budget verify_budget() const { return Budget{start + opt.max_time}; }
};

}  // namespace genx::tune
