// genx-plan: generate a plan, print it, check it, and print its statistics.
//
//   genx-plan --algorithm ring --ranks 7                 per-rank programs
//   genx-plan -a ring -P 7 --check                       symbolic check
//   genx-plan -a ring -P 7 --bytes 64K --stats --json    statistics
//   genx-plan -a ring -P 100000 --rank 5 --stats --json  one rank's program
//                                       and the plan's statistics, built
//                                       without the other ranks' programs
//   genx-plan -a cps -P 100000 --check --sample 16       sampled check
//   genx-plan -a butterfly -P 7 --svg b7.svg             schedule drawing
//   genx-plan --list                                     known algorithms
//   genx-plan -a hcps -P 12 -p factors=6x2 --model m.json --bytes 400000000
//                                       GenModel prediction by term
//   genx-plan -P 12 --model m.json --bytes 400000000 --candidates
//                                       every candidate ranked (Fig. 10)
//   ... --rank-map ppn=8 (or nodes=4, or 0,0,1,1,...)   ranks on nodes
//   genx-plan --displaced-plan -P 96 --bytes 16M --json  the displaced
//                                       component's choice as genx's plan
//
// Exit status: 0 success, 1 the checker found a violation, 2 bad input.
//
// Adding an output flag: register it in add_options() and append one entry
// to the outputs() table; each output is a function of the generated plan.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/text_util.hpp"
#include "plan/bound.hpp"
#include "plan/checker.hpp"
#include "plan/link_traffic.hpp"
#include "plan/print.hpp"
#include "plan/registry.hpp"
#include "plan/stats.hpp"
#include "plan/svg.hpp"
#include "topology/placement.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/displaced.hpp"
#include "tuning/gentree_choice.hpp"
#include "tuning/rules.hpp"
#include "tuning/selector.hpp"

namespace {

using namespace genx;

struct Options {
    std::string algorithm;
    int ranks = 0;
    std::vector<std::string> params;
    std::string bytes = "1M";
    size_t dtype_size = 4;
    bool list = false;
    bool programs = false;
    bool stats = false;
    bool json = false;
    bool check = false;
    bool svg = false;  // set when --svg names a file
    std::string svg_file;
    bool svg_trees = false;  // set when --svg-trees names a file
    std::string svg_trees_file;
    bool model = false;  // set when --model names a file
    std::string model_file;
    std::string rank_map;
    bool candidates = false;
    bool decisions = false;
    bool bound = false;
    bool nonblocking = false;  // --nonblocking: the table of MPI_Iallreduce / persistent calls
    std::string rules;  // --rules FILE for --decisions
    std::string displaced = "tuned-4.1";  // --displaced for --decisions (tuning/displaced.hpp)
    bool displaced_plan = false;  // --displaced-plan: its choice at --ranks and --bytes
    int ppn = 0;        // --ppn K for --decisions
    std::string topology;  // --topology FILE: a Slurm topology.conf
    std::string overlay;   // --overlay JSON
    std::string hosts;     // --hosts: rank r's host, as a hostlist
    int rank = -1;   // --rank: one rank's program; -1 = every rank
    int sample = 0;  // --sample K with --check: K random ranks
    uint64_t seed = 1;
};

// What every output sees.  Text goes to `text`, which is stderr when --json
// is given so that stdout stays one JSON document.
struct Context {
    Context(const Options& o, size_t n, std::ostream* t) : opt(o), count(n), text(t) {}

    const Options& opt;
    RankGenerator gen;
    size_t count;  // elements
    std::ostream* text;
    ModelParams model;  // loaded when --model is given
    RankMap ranks;
    const TopologyView* view = nullptr;  // --topology's placement, when given

    // Every rank's program, built only for the outputs that need them all.
    const Plan& plan() {
        if (!have_plan_) {
            generate(gen, &plan_);
            have_plan_ = true;
        }
        return plan_;
    }
    const PlanStats& stats() {
        if (!have_stats_) {
            stats_ = compute_stats(gen, count, opt.dtype_size);
            have_stats_ = true;
        }
        return stats_;
    }

  private:
    Plan plan_;
    bool have_plan_ = false;
    PlanStats stats_;
    bool have_stats_ = false;
};

int out_programs(Context& c) {
    if (c.opt.rank >= 0) {
        const PlanHeader& h = c.gen.header;
        *c.text << "# " << h.algorithm << (h.params.empty() ? "" : " " + h.params)
                << " P=" << h.nranks << " nblocks=" << h.nblocks << " rank " << c.opt.rank
                << "\n"
                << format_program(c.gen.program(c.opt.rank), c.opt.rank);
        return 0;
    }
    *c.text << format_plan(c.plan());
    return 0;
}

int out_stats(Context& c) {
    *c.text << format_stats(c.gen.header, c.stats());
    return 0;
}

int out_json(Context& c) {
    nlohmann::json j = stats_json(c.gen.header, c.stats());
    if (c.opt.rank >= 0) j["rank"] = c.opt.rank;
    if (c.view != nullptr) {
        // Bytes per link class over every link of the network (link_traffic.hpp).
        LinkTraffic t;
        if (Status s = link_traffic(c.gen, c.count, c.opt.dtype_size, *c.view, &t); !s) {
            std::cerr << "genx-plan: " << s.message() << "\n";
            return 2;
        }
        j["link_class_bytes"] = t.class_bytes;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
}

int out_check(Context& c) {
    CheckResult r;
    if (c.opt.sample > 0) {
        SampleOptions so;
        so.samples = c.opt.sample;
        so.seed = c.opt.seed;
        r = check_sampled(c.gen, so);
        if (r.ok) {
            *c.text << "ok: " << std::min(c.opt.sample, c.gen.header.nranks)
                    << " sampled ranks of P=" << c.gen.header.nranks
                    << " match their peers (seed " << c.opt.seed
                    << "; the full check proves the result on small P)\n";
            return 0;
        }
    } else {
        r = check_plan(c.plan());
        const bool order_preserving = r.order_preserving;
        if (r.ok) r = check_symmetry(c.plan());
        if (r.ok) r = check_representatives(c.plan());
        if (r.ok) {
            *c.text << "ok: allreduce for P=" << c.plan().nranks
                    << " (order preserving: " << (order_preserving ? "yes" : "no") << ")\n";
            return 0;
        }
    }
    *c.text << "check failed: " << violation_name(r.kind) << " at rank " << r.rank << " step "
            << r.step << " block " << r.block << "\n  " << r.message << "\n";
    return 1;
}

int out_svg_trees(Context& c) {
    std::ofstream f(c.opt.svg_trees_file, std::ios::binary);
    f << block_trees_to_svg(c.plan());
    f.close();
    if (!f) {
        std::cerr << "genx-plan: --svg-trees: cannot write '" << c.opt.svg_trees_file << "'\n";
        return 1;
    }
    *c.text << "svg-trees: wrote " << c.opt.svg_trees_file << " (" << block_trees(c.plan()).size()
            << " distinct trees)\n";
    return 0;
}

int out_svg(Context& c) {
    std::ofstream f(c.opt.svg_file, std::ios::binary);
    f << plan_to_svg(c.plan());
    f.close();
    if (!f) {
        std::cerr << "genx-plan: --svg: cannot write '" << c.opt.svg_file << "'\n";
        return 2;
    }
    *c.text << "svg: wrote " << c.opt.svg_file << "\n";
    return 0;
}

std::string describe_rank_map(const Options& o) {
    if (!o.rank_map.empty()) return o.rank_map;
    return o.topology.empty() ? "single switch, one rank per node" : "ranks on " + o.topology + "'s hosts";
}

int out_model(Context& c) {
    const PlanHeader& h = c.gen.header;
    PlanModel m;
    Status st = PlanModel::build(c.gen, c.ranks, &m, h.nranks > kWholePlanMaxRanks);
    const Prediction p = st ? m.predict(c.count, c.opt.dtype_size, c.model) : Prediction{};
    if (!st || !p.status) {
        std::cerr << "genx-plan: --model: " << (st ? p.status : st).message() << "\n";
        return 1;
    }
    *c.text << "GenModel (" << c.opt.model_file << "), " << c.count * c.opt.dtype_size
            << " bytes, P=" << h.nranks << ", " << describe_rank_map(c.opt)
            << (m.quotient() ? ", priced from " + std::to_string(m.modelled_ranks()) +
                                   " rank(s) by symmetry"
                             : std::string())
            << "\n"
            << format_prediction_table({{{h.algorithm, h.params}, p}});
    const ModelCoefficients& k = p.coefficients;
    *c.text << "critical path: " << p.critical_path.size() << " steps; A intra " << k.steps_intra
            << " inter " << k.steps_inter << ", extra messages intra " << k.extra_msgs_intra
            << " inter " << k.extra_msgs_inter << ", B bytes intra " << k.bytes_intra << " inter "
            << k.bytes_inter << ", C bytes " << k.reduce_bytes << ", D bytes " << k.memory_bytes
            << ", incast bytes intra " << k.incast_bytes_intra << " inter "
            << k.incast_bytes_inter << "\n";
    return 0;
}

struct Output {
    bool Options::*flag;
    int (*run)(Context&);
};

// In printing order.  Programs print when asked, or when nothing else is.
const std::vector<Output>& outputs() {
    static const std::vector<Output> table = {
        {&Options::programs, out_programs},
        {&Options::stats, out_stats},
        {&Options::json, out_json},
        {&Options::check, out_check},
        {&Options::svg, out_svg},
        {&Options::svg_trees, out_svg_trees},
        {&Options::model, out_model},
    };
    return table;
}

void add_options(CLI::App& app, Options& o) {
    app.add_option("-a,--algorithm", o.algorithm, "generator name (see --list)");
    app.add_option("-P,--ranks", o.ranks, "number of ranks");
    app.add_option("-p,--param", o.params,
                   "generator parameter key=value (repeatable, or a comma list)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--bytes", o.bytes, "vector size in bytes for statistics, K/M/G suffixes")
        ->capture_default_str();
    app.add_option("--dtype-size", o.dtype_size, "bytes per element for statistics")
        ->capture_default_str();
    app.add_flag("--list", o.list, "list algorithms with their summaries and parameter keys");
    app.add_flag("--programs", o.programs,
                 "print the per-rank programs (the default output)");
    app.add_flag("--stats", o.stats, "print a statistics summary");
    app.add_flag("--json", o.json,
                 "print statistics as JSON on stdout (other text goes to stderr)");
    app.add_flag("--check", o.check, "run the symbolic checker; exit 1 on a violation");
    app.add_option("--svg", o.svg_file, "draw the schedule (ranks x steps) as SVG into FILE")
        ->each([&o](const std::string&) { o.svg = true; });
    app.add_option("--svg-trees", o.svg_trees_file,
                   "draw each block's broadcast tree as SVG into FILE")
        ->each([&o](const std::string&) { o.svg_trees = true; });
    app.add_option("--model", o.model_file,
                   "predict times at --bytes from a rules file, GenModel file or paper")
        ->each([&o](const std::string&) { o.model = true; });
    app.add_option("--topology", o.topology,
                   "the network the ranks sit on: a topology.conf, graph file or preset");
    app.add_option("--overlay", o.overlay, "with --topology: a JSON overlay (docs/topology.md)");
    app.add_option("--hosts", o.hosts,
                   "with --topology: rank r's host, as a hostlist");
    app.add_option("--rank-map", o.rank_map,
                   "ranks on nodes for --model: nodes=N, ppn=K or node ids 0,0,1,1,...");
    app.add_option("--rank", o.rank,
                   "build and print only this rank's program");
    app.add_option("--sample", o.sample,
                   "with --check: check K random ranks instead of the whole plan");
    app.add_option("--seed", o.seed, "random seed for --sample")->capture_default_str();
    app.add_flag("--decisions", o.decisions,
                 "print the decision table a communicator of --ranks gets");
    app.add_option("--rules", o.rules, "with --decisions: a rules file (docs/rules.md)");
    app.add_flag("--nonblocking", o.nonblocking,
                 "with --decisions: the table MPI_Iallreduce and persistent calls use");
    app.add_option("--displaced", o.displaced,
                   "with --decisions or --displaced-plan: what a \"fallback\" incumbent is priced "
                   "as: tuned-4.1 (Open MPI 4.1 tuned's fixed decision, what the installed component "
                   "sees with tuned below it) or unknown (Open MPI's best modelled algorithm)")
        ->check(CLI::IsMember({"tuned-4.1", "unknown"}))
        ->capture_default_str();
    app.add_option("--ppn", o.ppn,
                   "with --decisions or --topology: ranks per node (default 1)");
    app.add_flag("--bound", o.bound,
                 "with --topology: the network's bound on allreduce time at --bytes, and its cut");
    app.add_flag("--candidates", o.candidates,
                 "with --model: rank every candidate plan for --ranks");
    app.add_flag("--displaced-plan", o.displaced_plan,
                 "print the displaced component's choice at --ranks and --bytes and the genx plans "
                 "it is priced as (--displaced; with --json as one object)");
}

int list_algorithms() {
    for (const GeneratorInfo& g : generators()) {
        std::string keys;
        for (const std::string& k : g.param_keys) keys += (keys.empty() ? "" : ",") + k;
        std::printf("%-10s %s\n           params: %s\n", g.name.c_str(), g.summary.c_str(),
                    keys.empty() ? "(none)" : keys.c_str());
    }
    return 0;
}

int bad_input(const std::string& message) {
    std::cerr << "genx-plan: " << message << "\n";
    return 2;
}

// --displaced-plan: tuned's fixed decision reads the ranks and the bytes
// only, so any option beyond these is refused, named.
int check_displaced_plan_options(const CLI::App& app) {
    const std::vector<std::string> allowed = {"--displaced-plan", "--ranks", "--bytes",
                                              "--dtype-size", "--displaced", "--json"};
    for (const CLI::Option* o : app.get_options()) {
        if (o->count() == 0 ||
            std::find(allowed.begin(), allowed.end(), o->get_name()) != allowed.end())
            continue;
        return bad_input("--displaced-plan takes --ranks, --bytes, --dtype-size, --displaced and "
                         "--json only, not " + o->get_name());
    }
    return 0;
}

// The ranks where --topology (with --hosts or --ppn) puts them; no view
// without --topology.  `fail` says what is wrong (exit status 2).
int place_ranks_of(const Options& opt, std::shared_ptr<const TopologyView>* view) {
    if (!opt.topology.empty()) {
        std::vector<std::string> hosts;
        if (!opt.hosts.empty()) {
            if (Status s = expand_host_list(opt.hosts, &hosts); !s)
                return bad_input("--hosts: " + s.message());
            if (static_cast<int>(hosts.size()) != opt.ranks)
                return bad_input("--hosts names " + std::to_string(hosts.size()) + " hosts for " +
                                 std::to_string(opt.ranks) + " ranks");
        } else {
            std::vector<std::string> names;
            if (Status s = topology_host_names(opt.topology, opt.overlay, &names); !s)
                return bad_input("--topology: " + s.message());
            const int per = opt.ppn > 0 ? opt.ppn : 1;
            if (static_cast<long>(names.size()) * per < opt.ranks)
                return bad_input("--topology: " + std::to_string(opt.ranks) + " ranks at " +
                                 std::to_string(per) + " per host need " +
                                 std::to_string((opt.ranks + per - 1) / per) + " hosts; " +
                                 opt.topology + " has " + std::to_string(names.size()));
            for (int r = 0; r < opt.ranks; ++r) hosts.push_back(names[static_cast<size_t>(r / per)]);
        }
        if (Status s = place_ranks(opt.topology, opt.overlay, hosts, view); !s)
            return bad_input("--topology: " + s.message());
    } else if (!opt.hosts.empty() || !opt.overlay.empty()) {
        return bad_input("--hosts and --overlay need --topology FILE");
    }
    return 0;
}

// --bound: the network's bound on allreduce time for --ranks placed on
// `view` at --bytes (plan/bound.hpp), as text or one JSON object.
int print_bound(const Options& opt, const std::shared_ptr<const TopologyView>& view, size_t bytes) {
    if (!view) return bad_input("--bound needs --topology (a network with every link rated)");
    AllreduceBound b;
    if (Status s = allreduce_bound(*view, static_cast<double>(bytes), &b); !s)
        return bad_input("--bound: " + s.message());
    if (opt.json) {
        nlohmann::json j = {{"bytes", bytes},          {"ranks", opt.ranks},
                            {"bound_s", b.seconds},    {"allgather_s", b.allgather_s},
                            {"reduce_scatter_s", b.seconds - b.allgather_s},
                            {"cut", b.cut},            {"cut_rate_bytes_per_s", b.cut_rate},
                            {"ranks_outside_cut", b.outside}, {"method", b.method}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "allreduce bound for " << opt.ranks << " ranks on " << opt.topology << " at "
              << format_bytes(bytes) << " B: " << format_seconds(b.seconds)
              << " (reduce-scatter + allgather, bandwidth only)\n"
              << "binding cut: " << b.cut << "\n"
              << "method: " << b.method << "\n";
    return 0;
}

// --decisions: the decision table a communicator of --ranks gets, placed
// on `view` when there is one.
int print_decisions(const Options& opt, const std::shared_ptr<const TopologyView>& view) {
    // A site's rules are inspected from any host: their provenance is
    // reported, not enforced (the component on another cluster ignores the
    // file; any other error is one here too).
    auto loaded = std::make_shared<RulesFile>();
    if (opt.rules.empty()) {
        *loaded = builtin_rules();
    } else {
        std::string elsewhere;
        RulesCheck here;
        here.fingerprint = local_fingerprint();
        here.mismatch = &elsewhere;
        if (Status s = load_rules_file(opt.rules, here, loaded.get()); !s)
            return bad_input("--rules: " + s.message());
        use_builtin_model_if_none(loaded.get());
        if (!elsewhere.empty())
            std::cerr << "genx-plan: note: " << elsewhere
                      << "; the decisions below are the file's, as on the cluster it was made for "
                         "(the component on this host would use its built-in defaults)\n";
    }
    const std::shared_ptr<const RulesFile> rules = std::move(loaded);
    CommShape shape;
    shape.size = opt.ranks;
    shape.ppn = opt.ppn;
    shape.nodes = opt.ppn > 0 ? (opt.ranks + opt.ppn - 1) / opt.ppn : 0;
    if (view) {
        // The ranks where --topology (and --hosts or --ppn) put them, as
        // the component sees a communicator placed by a topology file.
        shape.topology = view;
        std::map<int, int> per_host;
        for (int h : view->host_of_rank()) per_host[h] += 1;
        shape.nodes = static_cast<int>(per_host.size());
        shape.ppn = 0;
        for (const auto& kv : per_host) shape.ppn = std::max(shape.ppn, kv.second);
    }
    std::shared_ptr<const DecisionTable> table;
    std::vector<std::string> warnings;
    TableOptions topt;
    topt.nonblocking = opt.nonblocking;
    parse_displaced(opt.displaced, &topt.displaced);
    if (Status s = selector_table(rules, shape, topt, &table, &warnings); !s)
        return bad_input(s.message());
    for (const std::string& w : warnings) std::cerr << "genx-plan: " << w << "\n";
    std::cout << "# " << (opt.nonblocking ? "non-blocking " : "") << "decisions for "
              << opt.ranks << " ranks"
              << (shape.ppn > 0 ? ", " + std::to_string(shape.ppn) + " per node" : "")
              << (view ? ", " + std::to_string(shape.switch_levels()) + " switch levels (" +
                             opt.topology + ")"
                       : std::string())
              << ", " << (opt.rules.empty() ? "built-in defaults" : opt.rules)
              << ", displaced component "
              << (opt.nonblocking ? "libnbc (unknown)" : displaced_name(topt.displaced))
              << (table->unpriced() > 0
                      ? "; " + std::to_string(table->unpriced()) +
                            " candidates not priced (only every rank's program could price "
                            "them; docs/model.md)"
                      : std::string())
              << "\n"
              << table->format();
    return 0;
}

// "rhd (distance=doubling)", as the decision table names a plan.
std::string describe_candidate(const Candidate& c) {
    return c.params.empty() ? c.algorithm : c.algorithm + " (" + c.params + ")";
}

// --displaced-plan: the displaced component's choice for --ranks at --bytes
// (tuning/displaced.hpp), the genx plans a "fallback" incumbent is priced
// as (the cheapest of them), and the one tuned runs at --dtype-size's count.
int print_displaced_plan(const Options& opt, size_t bytes) {
    Displaced which = Displaced::Unknown;
    parse_displaced(opt.displaced, &which);
    if (which != Displaced::TunedFixed41)
        return bad_input("--displaced-plan: the " + opt.displaced +
                         " component has no decision genx knows; a \"fallback\" incumbent is "
                         "priced there as the cheapest of ring, rd, rhd and rhd (distance=doubling) "
                         "(docs/rules.md)");
    const DisplacedPlans d = ompi41_tuned_plans(opt.ranks, bytes);
    const size_t count = bytes / opt.dtype_size;
    const int runs = ompi41_tuned_run_index(d, opt.ranks, count);
    const std::string tuned = tuned_allreduce_name(d.tuned_id);
    if (opt.json) {
        nlohmann::json plans = nlohmann::json::array();
        for (size_t k = 0; k < d.plans.size(); ++k)
            plans.push_back({{"algorithm", d.plans[k].algorithm},
                             {"params", d.plans[k].params},
                             {"why", d.why[k]}});
        nlohmann::json ran = nullptr;
        if (runs >= 0)
            ran = {{"algorithm", d.plans[runs].algorithm}, {"params", d.plans[runs].params}};
        const nlohmann::json j = {
            {"displaced", opt.displaced}, {"ranks", opt.ranks},
            {"bytes", bytes},             {"dtype_size", opt.dtype_size},
            {"count", count},             {"tuned_id", d.tuned_id},
            {"tuned_algorithm", tuned},   {"algorithm", d.plans[0].algorithm},
            {"params", d.plans[0].params}, {"stand_in", d.stand_in},
            {"plans", plans},             {"runs", ran}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << opt.displaced << ", " << opt.ranks << " ranks, " << format_bytes(bytes) << " B: "
              << tuned << " → " << describe_candidate(d.plans[0])
              << (d.why[0].empty() ? "" : ", " + d.why[0]) << "\n";
    for (size_t k = 1; k < d.plans.size(); ++k)
        std::cout << "also priced: " << describe_candidate(d.plans[k]) << ", " << d.why[k] << "\n";
    std::cout << "runs at " << count << " elements of " << opt.dtype_size << " B: "
              << (runs >= 0 ? describe_candidate(d.plans[runs])
                            : tuned + ", which no genx plan follows")
              << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"genx-plan: generate, print, check and measure genx allreduce plans"};
    Options opt;
    add_options(app, opt);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    }

    if (opt.displaced_plan)
        if (int rc = check_displaced_plan_options(app); rc != 0) return rc;
    if (opt.list) return list_algorithms();
    if (opt.algorithm.empty() && !opt.candidates && !opt.decisions && !opt.bound &&
        !opt.displaced_plan)
        return bad_input("--algorithm is required (see --list)");
    if (opt.ranks < 1)
        return bad_input("--ranks must be a positive number of ranks, got " +
                         std::to_string(opt.ranks));

    ParamMap params;
    if (Status s = merge_params(opt.params, &params); !s) return bad_input("--param: " + s.message());
    size_t bytes = 0;
    if (Status s = parse_size(opt.bytes, &bytes); !s) return bad_input("--bytes: " + s.message());
    if (opt.dtype_size == 0) return bad_input("--dtype-size must be at least 1");
    if (bytes % opt.dtype_size != 0)
        return bad_input("--bytes " + opt.bytes + " is not a multiple of --dtype-size " +
                         std::to_string(opt.dtype_size));

    if (opt.ppn < 0 || opt.ppn > opt.ranks)
        return bad_input("--ppn " + std::to_string(opt.ppn) + " is not in 0.." +
                         std::to_string(opt.ranks));
    std::shared_ptr<const TopologyView> view;
    if (int rc = place_ranks_of(opt, &view); rc != 0) return rc;
    if (opt.displaced_plan) return print_displaced_plan(opt, bytes);
    if (opt.decisions) return print_decisions(opt, view);
    if (opt.bound) return print_bound(opt, view, bytes);

    Context ctx(opt, bytes / opt.dtype_size, opt.json ? &std::cerr : &std::cout);
    if (opt.model && opt.model_file == "paper") {
        if (!view || view->direct)
            return bad_input("--model paper: Table 5's rows are read per switch level of --topology "
                             "(a switch tree); give one");
        ctx.model = paper_model(*view);
        if (Status s = parse_rank_map(opt.rank_map, opt.ranks, &ctx.ranks); !s)
            return bad_input("--rank-map: " + s.message());
    } else if (opt.model) {
        if (Status s = load_model_file(opt.model_file, &ctx.model); !s)
            return bad_input("--model: " + s.message());
        if (Status s = parse_rank_map(opt.rank_map, opt.ranks, &ctx.ranks); !s)
            return bad_input("--rank-map: " + s.message());
    } else if (opt.candidates || !opt.rank_map.empty()) {
        return bad_input("--candidates and --rank-map need --model FILE (a rules file or a model file)");
    }
    if (opt.candidates) {
        CandidateOptions co;
        // A by-slot map with K ranks on every node also offers the butterfly
        // group K x (P/K).
        const int k = static_cast<int>(
            std::count(ctx.ranks.node.begin(), ctx.ranks.node.end(), ctx.ranks.node_of(0)));
        if (k > 1 && ctx.ranks.node == RankMap::by_slot(opt.ranks, k).node) co.ranks_per_node = k;
        std::vector<RankedCandidate> ranked;
        if (Status s = best_candidates(opt.ranks, ctx.count, opt.dtype_size, ctx.model, ctx.ranks,
                                       &ranked, co);
            !s)
            return bad_input(s.message());
        *ctx.text << "GenModel (" << opt.model_file << "), " << bytes << " bytes, P=" << opt.ranks
                  << ", " << describe_rank_map(opt) << ", fastest first\n"
                  << format_prediction_table(ranked);
        return 0;
    }
    if (opt.algorithm.empty()) return bad_input("--algorithm is required (see --list)");
    // --model on a topology: ranks on the view's hosts (unless --rank-map
    // says otherwise), a direct network's links one per peer.
    if (view && opt.model && opt.rank_map.empty()) {
        ctx.ranks.node = view->host_of_rank();
        ctx.ranks.direct = direct_network(*view);
        ctx.ranks.tree = switch_tree(*view);
        ctx.model = model_for_topology(ctx.model, view.get());
    }
    {
        // GenTree's per-switch plans: chosen at --bytes by --model, else by
        // the built-in model on this topology.
        const ModelParams chooser =
            opt.model ? ctx.model : model_for_topology(builtin_rules().model, view.get());
        if (Status s = resolve_gentree(opt.algorithm, view.get(), static_cast<double>(bytes), chooser,
                                       &params);
            !s)
            return bad_input(s.message());
    }
    ctx.view = view.get();
    if (Status s = prepare(opt.algorithm, opt.ranks, params, view.get(), &ctx.gen); !s)
        return bad_input(s.message());
    if (opt.rank >= opt.ranks || opt.rank < -1)
        return bad_input("--rank " + std::to_string(opt.rank) + " is not a rank in 0.." +
                         std::to_string(opt.ranks - 1));
    if (opt.sample < 0) return bad_input("--sample must be a positive number of ranks");
    if (opt.sample > 0 && !opt.check) return bad_input("--sample needs --check");
    if (opt.rank >= 0 && (opt.svg || opt.svg_trees))
        return bad_input("--svg and --svg-trees draw every rank; drop --rank");

    bool any = false;
    for (const Output& o : outputs()) any = any || opt.*(o.flag);
    if (!any) opt.programs = true;
    int rc = 0;
    for (const Output& o : outputs())
        if (opt.*(o.flag)) rc = std::max(rc, o.run(ctx));
    return rc;
}
