// genx-sim: run one genx allreduce in SimGrid (docs/sim.md) and compare the
// simulated time with GenModel's prediction of the same plan.
//
//   genx-sim --preset switch:8 -a ring --bytes 64M
//   genx-sim --preset tree:4x8/2 -a gentree --bytes 400M --json
//   genx-sim --topology topology.conf --overlay rates.json -a hcps -p factors=4x2
//   ... --ranks-per-host 2 --network-model CM02 --model model.json
//
// Every rank is a SimGrid actor running genx's own executor on its
// schedule, payload-free (no buffer exists; local ops are charged as
// compute time from the model's γ and δ).
//
// Exit status: 0 success, 1 the simulation failed, 2 bad input.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "sim/op_cost.hpp"
#include "sim/platform.hpp"
#include "topology/slurm_topology.hpp"
#include "topology/topology.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/rules.hpp"

namespace {

using namespace genx;
using namespace genx::sim;

struct Options {
    std::string topology;
    std::string overlay;
    std::string preset;
    std::string hosts;
    std::string algorithm;
    std::vector<std::string> params;
    std::string bytes = "64M";
    size_t dtype_size = 4;
    int ranks_per_host = 1;
    std::string network = "LV08";
    std::string model_file;
    bool json = false;
    bool no_incast = false;
};

int bad_input(const std::string& message) {
    std::cerr << "genx-sim: " << message << "\n";
    return 2;
}

void add_options(CLI::App& app, Options& o) {
    app.add_option("--topology", o.topology,
                   "the platform: a Slurm topology.conf (tree form; rates from --overlay), a "
                   "genx graph file (JSON, docs/topology.md), or a preset (switch:N, "
                   "tree:AxB[/O], torus:AxB[xC], mesh:AxB[xC])");
    app.add_option("--overlay", o.overlay,
                   "with --topology: a JSON overlay giving link classes their rates and "
                   "latencies (docs/topology.md)");
    app.add_option("--preset", o.preset,
                   "a built-in platform instead of --topology: switch:N (one switch, N hosts, "
                   "10 Gbit/s links of 10 us), tree:AxB (A leaf switches of B hosts under a "
                   "root, leaf uplinks B*10 Gbit/s, 10 us) or tree:AxB/O (uplinks O times "
                   "oversubscribed), torus:AxB[xC] or mesh:AxB[xC] (direct networks, links of "
                   "16 GB/s and 150 ns), or one of the paper's Figure 11 platforms with Table 5's "
                   "parameters (SS24, SS32, SYM384, SYM512, ASY384, CDC384; their GenModel "
                   "parameters are the default --model)");
    app.add_option("--hosts", o.hosts,
                   "rank r's host, as a hostlist of the platform's host names "
                   "(n[0-3],n7,n6,n5,n4,...): any placement, e.g. a snake order on a torus; "
                   "the number of names is the number of ranks (instead of --ranks-per-host)");
    app.add_option("-a,--algorithm", o.algorithm, "generator name (genx-plan --list)");
    app.add_option("-p,--param", o.params,
                   "generator or executor parameter key=value (repeatable, or a comma list; "
                   "segment and window are the executor's)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--bytes", o.bytes, "vector size in bytes, K/M/G suffixes (plain digits exact)")
        ->capture_default_str();
    app.add_option("--dtype-size", o.dtype_size, "bytes per element")->capture_default_str();
    app.add_option("--ranks-per-host", o.ranks_per_host,
                   "ranks on every host, consecutive ranks filling a host")
        ->capture_default_str();
    app.add_option("--network-model", o.network,
                   "SimGrid's network model: LV08 (SimGrid's default: latency x13.01, "
                   "bandwidth x0.97, RTT-aware sharing) or CM02 (no correction factors: a "
                   "message takes latency + size / bandwidth)")
        ->capture_default_str();
    app.add_option("--model", o.model_file,
                   "a GenModel parameter file or rules file (docs/model.md): its gamma and "
                   "delta price the local ops, and it prices model_s; default: Table 5 on the "
                   "paper's presets, else the platform's host links and gamma = delta = 0");
    app.add_flag("--no-incast", o.no_incast,
                 "do not simulate incast: without it, --model's inter-node epsilon > 0 slows "
                 "the link into each host as GenModel's epsilon term (fan-in above w_t)");
    app.add_flag("--json", o.json, "print one JSON object on stdout");
}

// GenModel's parameters read off the platform when no --model is given:
// inter-host α is a host link's latency both ways (host, switch, host), β
// one over its rate (a direct network: its first link, one hop); intra-host as SimGrid's loopback (the intra class, or
// SimGrid's 10 GB/s and 0 s); no compute cost.
ModelParams platform_model(const Topology& topo) {
    ModelParams m;
    // A direct network: one hop over its first link.
    if (topo.direct && !topo.links.empty()) {
        const LinkClass& c = topo.classes[static_cast<size_t>(topo.links[0].cls)];
        m.inter.alpha = c.latency;
        m.inter.beta = c.rate > 0 ? 1 / (c.rate * topo.links[0].units) : 0;
    }
    for (const Node& n : topo.nodes) {
        if (n.kind != TopoKind::Host || n.up_class < 0) continue;
        const LinkClass& c = topo.classes[static_cast<size_t>(n.up_class)];
        m.inter.alpha = 2 * c.latency;
        m.inter.beta = c.rate > 0 ? 1 / c.rate : 0;
        break;
    }
    m.intra.alpha = 0;
    m.intra.beta = 1 / 10e9;
    if (topo.intra_class >= 0) {
        const LinkClass& c = topo.classes[static_cast<size_t>(topo.intra_class)];
        if (c.rate > 0) m.intra.beta = 1 / c.rate;
        m.intra.alpha = c.latency;
    }
    return m;
}

std::string seconds(double s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g s", s);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"genx-sim: run a genx allreduce in SimGrid and compare it with GenModel"};
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

    if (opt.topology.empty() == opt.preset.empty())
        return bad_input("give exactly one of --topology FILE and --preset NAME (" +
                         preset_names() + ")");
    if (!opt.overlay.empty() && opt.topology.empty())
        return bad_input("--overlay needs --topology FILE");
    if (opt.algorithm.empty()) return bad_input("--algorithm is required (genx-plan --list)");
    if (opt.ranks_per_host < 1)
        return bad_input("--ranks-per-host must be at least 1, got " +
                         std::to_string(opt.ranks_per_host));
    if (opt.dtype_size == 0) return bad_input("--dtype-size must be at least 1");
    size_t bytes = 0;
    if (Status s = parse_size(opt.bytes, &bytes); !s) return bad_input("--bytes: " + s.message());
    if (bytes % opt.dtype_size != 0)
        return bad_input("--bytes " + opt.bytes + " is not a multiple of --dtype-size " +
                         std::to_string(opt.dtype_size));
    PlatformOptions po;
    po.ranks_per_host = opt.ranks_per_host;
    if (Status s = parse_network_model(opt.network, &po.network); !s)
        return bad_input("--network-model: " + s.message());

    ParamMap all;
    for (const std::string& text : opt.params) {
        ParamMap more;
        if (Status s = parse_params(text, &more); !s) return bad_input("--param: " + s.message());
        for (const auto& kv : more)
            if (!all.insert(kv).second)
                return bad_input("--param: key '" + kv.first + "' is given twice");
    }
    ParamMap gen_params;
    ExecOptions exec;
    if (Status s = split_exec_params(all, &gen_params, &exec); !s) return bad_input(s.message());

    Topology topo;
    const std::string platform = opt.preset.empty() ? opt.topology : opt.preset;
    if (!opt.preset.empty()) {
        if (Status s = preset_topology(opt.preset, &topo); !s) return bad_input("--preset: " + s.message());
    } else if (Status s = load_network(opt.topology, opt.overlay, &topo); !s) {
        return bad_input("--topology: " + s.message());
    }

    ModelParams model = platform_model(topo);
    std::string model_source = "platform host links, gamma = delta = 0";
    if (is_paper_preset(opt.preset)) {
        if (Status s = paper_preset(opt.preset, &topo, &model); !s) return bad_input("--preset: " + s.message());
        model_source = "Table 5 (" + opt.preset + ")";
    }
    if (!opt.model_file.empty()) {
        if (Status s = load_model_file(opt.model_file, &model); !s)
            return bad_input("--model: " + s.message());
        model_source = opt.model_file;
    }

    // GenModel's inter-node ε and w_t on the links into hosts (docs/sim.md);
    // the platform's own model has ε = 0, so incast needs --model.
    if (!opt.no_incast) {
        po.incast.epsilon = model.inter.epsilon;
        po.incast.w_t = model.inter.w_t;
    }

    if (!opt.hosts.empty()) {
        if (opt.ranks_per_host != 1) return bad_input("give --hosts or --ranks-per-host, not both");
        std::vector<std::string> names;
        if (Status s = expand_hostlist(opt.hosts, &names); !s) return bad_input("--hosts: " + s.message());
        std::map<std::string, int> index;
        const std::vector<int> hs = topo.hosts();
        for (size_t i = 0; i < hs.size(); ++i) index[topo.nodes[static_cast<size_t>(hs[i])].name] = static_cast<int>(i);
        for (size_t r = 0; r < names.size(); ++r) {
            auto it = index.find(names[r]);
            if (it == index.end())
                return bad_input("--hosts: rank " + std::to_string(r) + "'s host '" + names[r] +
                                 "' is not a host of " + platform);
            po.rank_host.push_back(it->second);
        }
    }
    std::unique_ptr<Simulation> sim;
    if (Status s = Simulation::create(topo, po, &sim); !s) return bad_input(platform + ": " + s.message());
    const int P = sim->ranks();
    TopologyView view;
    if (Status s = to_view(topo, sim->host_of_rank(), &view); !s) return bad_input(s.message());
    RankGenerator gen;
    if (Status s = prepare(opt.algorithm, P, gen_params, &view, &gen); !s) return bad_input(s.message());
    const std::shared_ptr<const DirectNetwork> direct = direct_network(view);
    const size_t count = bytes / opt.dtype_size;

    // GenModel on the same plan, before the simulation (which owns the
    // process's one SimGrid engine until it ends).
    PlanModel pm;
    RankMap ranks = RankMap::by_slot(P, opt.ranks_per_host);
    if (!po.rank_host.empty()) ranks.node = po.rank_host;
    if (direct) {
        // Node ids of a direct network are the view's host nodes.
        ranks.node = view.host_of_rank();
        ranks.direct = direct;
    } else if (std::shared_ptr<const SwitchTree> tree = switch_tree(view)) {
        // A switch tree: its uplinks priced per class, from the same links
        // the platform simulates (docs/model.md).
        ranks.node = view.host_of_rank();
        ranks.tree = std::move(tree);
    }

    Status built = PlanModel::build(gen, ranks, &pm, P > kWholePlanMaxRanks);
    const Prediction pred = built ? pm.predict(count, opt.dtype_size, model) : Prediction{};
    if (!built || !pred.status) {
        std::cerr << "genx-sim: GenModel: " << (built ? pred.status : built).message() << "\n";
        return 1;
    }

    Simulation::RunResult res;
    const Status ran = sim->run_ranks(
        [&](int rank, Transport& t) -> Status {
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(gen.header, gen.program(rank), rank, count,
                                         opt.dtype_size, exec, &sched));
            GenModelOpCost cost(model.host);
            Execution ex;
            GENX_RETURN_IF_ERROR(ex.start_payload_free(sched, t, &cost));
            return ex.run();
        },
        false, &res);
    if (!ran) {
        std::cerr << "genx-sim: simulation failed: " << ran.message() << "\n";
        return 1;
    }

    const double ratio = pred.seconds > 0 ? res.seconds / pred.seconds : 0;
    const PlanHeader& h = gen.header;
    if (opt.json) {
        nlohmann::json j;
        j["engine"] = engine_name();
        j["network_model"] = network_model_name(po.network);
        j["platform"] = platform;
        j["hosts"] = sim->hosts().size();
        j["ranks_per_host"] = opt.ranks_per_host;
        j["ranks"] = P;
        j["algorithm"] = h.algorithm;
        j["params"] = h.params;
        j["exec"] = format_exec_options(exec);
        j["bytes"] = bytes;
        j["dtype_size"] = opt.dtype_size;
        j["simulated_s"] = res.seconds;
        j["model_s"] = pred.seconds;
        j["ratio"] = ratio;
        j["model_source"] = model_source;
        j["incast"] = po.incast.enabled();
        j["messages"] = res.messages;
        j["message_bytes"] = res.bytes;
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "genx-sim: " << h.algorithm << (h.params.empty() ? "" : " " + h.params) << " ("
              << format_exec_options(exec) << "), " << bytes << " bytes, " << P << " ranks on "
              << sim->hosts().size() << " hosts of " << platform << ", " << engine_name() << " "
              << network_model_name(po.network)
              << (po.incast.enabled() ? ", incast" : "") << "\n"
              << "simulated  " << seconds(res.seconds) << " (" << res.messages << " messages, "
              << res.bytes << " bytes)\n"
              << "GenModel   " << seconds(pred.seconds) << " (" << model_source << ")\n";
    char r[64];
    std::snprintf(r, sizeof r, "%.4g", ratio);
    std::cout << "ratio      " << r << " (simulated / model)\n";
    return 0;
}
