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

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/bound.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "sim/op_cost.hpp"
#include "sim/platform.hpp"
#include "topology/slurm_topology.hpp"
#include "tools/plot.hpp"
#include "topology/topology.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/exec_defaults.hpp"
#include "tuning/gentree_choice.hpp"
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
    bool progress = false;
    std::string sweep;  // MIN:MAX bytes, doubling
    std::string out;    // --sweep: a folder for table.md, results.json, plot.svg
};

int bad_input(const std::string& message) {
    std::cerr << "genx-sim: " << message << "\n";
    return 2;
}

void add_options(CLI::App& app, Options& o) {
    app.add_option("--topology", o.topology,
                   "the platform: a Slurm topology.conf, genx graph file or preset");
    app.add_option("--overlay", o.overlay,
                   "with --topology: a JSON overlay of link rates and latencies");
    app.add_option("--preset", o.preset,
                   "a built-in platform instead of --topology, e.g. switch:8 or SYM384");
    app.add_option("--hosts", o.hosts,
                   "rank r's host, as a hostlist of the platform's host names");
    app.add_option("-a,--algorithm", o.algorithm,
                   "generator name (genx-plan --list); with --sweep a comma list");
    app.add_option("-p,--param", o.params,
                   "generator or executor parameter key=value (repeatable or comma list)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--bytes", o.bytes, "vector size in bytes, K/M/G suffixes (plain digits exact)")
        ->capture_default_str();
    app.add_option("--dtype-size", o.dtype_size, "bytes per element")->capture_default_str();
    app.add_option("--ranks-per-host", o.ranks_per_host,
                   "ranks on every host, consecutive ranks filling a host")
        ->capture_default_str();
    app.add_option("--network-model", o.network,
                   "SimGrid's network model: LV08 or CM02 (no correction factors)")
        ->capture_default_str();
    app.add_option("--model", o.model_file,
                   "the GenModel parameters: a parameter file, rules file or paper");
    app.add_flag("--no-incast", o.no_incast,
                 "do not simulate incast even when --model gives epsilon");
    app.add_flag("--json", o.json, "print one JSON object on stdout");
    app.add_flag("--progress", o.progress,
                 "report progress on standard error every 2 s of wall time");
    app.add_option("--sweep", o.sweep,
                   "MIN:MAX bytes, doubling: simulate every --algorithm, print a table");
    app.add_option("--out", o.out,
                   "with --sweep: also write the table, JSON and plot into this folder");
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

// Beyond this many ranks GenModel prices a switch tree's platform by its
// hosts' links only, not link by link (a plan that is not symmetric on the
// tree would need every rank's program).
constexpr int kTreeModelMaxRanks = 16384;

std::string seconds(double s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g s", s);
    return b;
}

// --sweep: one child genx-sim per (algorithm, size), since SimGrid allows
// one simulation per process; their --json objects make the table.
struct SweepAlg {
    std::string name;
    std::string params;  // "k=v,k=v"
};

// bench/compare's convention: "ring,gentree:pipeline=8,plans=cps/cps/cps,cps".
Status parse_sweep_algorithms(const std::string& text, std::vector<SweepAlg>* out) {
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        const size_t colon = item.find(':');
        if (colon != std::string::npos) {
            out->push_back({item.substr(0, colon), item.substr(colon + 1)});
        } else if (item.find('=') != std::string::npos) {
            if (out->empty())
                return Status::invalid("'" + item + "' comes before any algorithm name");
            out->back().params += (out->back().params.empty() ? "" : ",") + item;
        } else {
            out->push_back({item, ""});
        }
    }
    if (out->empty()) return Status::invalid("no algorithm named in '" + text + "'");
    return Status::ok();
}

// Runs `args` (argv[0] is this program) with stdout captured; returns its
// exit status (or -1 when it could not run).
int run_child(const std::vector<std::string>& args, std::string* stdout_text) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) stdout_text->append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_sweep(const Options& opt, const char* argv0) {
    const size_t colon = opt.sweep.find(':');
    size_t lo = 0, hi = 0;
    if (colon == std::string::npos || !parse_size(opt.sweep.substr(0, colon), &lo) ||
        !parse_size(opt.sweep.substr(colon + 1), &hi) || lo == 0 || hi < lo)
        return bad_input("--sweep '" + opt.sweep + "': expected MIN:MAX bytes with 0 < MIN <= MAX "
                         "(K/M/G suffixes), e.g. 1M:64M");
    std::vector<SweepAlg> algs;
    if (Status s = parse_sweep_algorithms(opt.algorithm, &algs); !s)
        return bad_input("--algorithm: " + s.message());
    if (opt.json) return bad_input("--sweep prints a table; --json is for one simulation");
    std::vector<size_t> sizes;
    for (size_t b = lo; b <= hi; b *= 2) {
        if (b % opt.dtype_size != 0)
            return bad_input("--sweep: " + std::to_string(b) + " bytes is not a multiple of --dtype-size " +
                             std::to_string(opt.dtype_size));
        sizes.push_back(b);
        if (b > hi / 2) break;
    }
    // The child's arguments: everything but the sweep's own.
    std::vector<std::string> common = {argv0};
    auto add = [&](const char* flag, const std::string& v) {
        if (!v.empty()) {
            common.push_back(flag);
            common.push_back(v);
        }
    };
    add("--topology", opt.topology);
    add("--overlay", opt.overlay);
    add("--preset", opt.preset);
    add("--hosts", opt.hosts);
    for (const std::string& p : opt.params) add("-p", p);
    add("--dtype-size", std::to_string(opt.dtype_size));
    if (opt.hosts.empty()) add("--ranks-per-host", std::to_string(opt.ranks_per_host));
    add("--network-model", opt.network);
    add("--model", opt.model_file);
    if (opt.no_incast) common.push_back("--no-incast");
    common.push_back("--json");

    struct Cell {
        bool ok = false;
        double sim = 0, model = 0;
        nlohmann::json j;
    };
    std::vector<std::vector<Cell>> cells(algs.size(), std::vector<Cell>(sizes.size()));
    const size_t total = algs.size() * sizes.size();
    size_t done = 0;
    int failures = 0;
    std::string platform_line;
    for (size_t a = 0; a < algs.size(); ++a)
        for (size_t i = 0; i < sizes.size(); ++i) {
            std::vector<std::string> args = common;
            args.insert(args.end(), {"-a", algs[a].name, "--bytes", std::to_string(sizes[i])});
            if (!algs[a].params.empty()) args.insert(args.end(), {"-p", algs[a].params});
            const auto t0 = std::chrono::steady_clock::now();
            std::string text;
            const int rc = run_child(args, &text);
            const double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            Cell& c = cells[a][i];
            ++done;
            if (rc == 2 && done == 1) return 2;  // bad input: the child said why
            if (rc == 0) {
                try {
                    c.j = nlohmann::json::parse(text);
                    c.sim = c.j.at("simulated_s").get<double>();
                    c.model = c.j.at("model_s").get<double>();
                    c.ok = true;
                    if (platform_line.empty())
                        platform_line = std::to_string(c.j.at("ranks").get<int>()) + " ranks on " +
                                        std::to_string(c.j.at("hosts").get<int>()) + " hosts of " +
                                        c.j.at("platform").get<std::string>() + ", " +
                                        c.j.at("network_model").get<std::string>() +
                                        (c.j.at("incast").get<bool>() ? ", incast" : "");
                } catch (const std::exception& e) {
                    c.ok = false;
                }
            }
            if (!c.ok) ++failures;
            if (opt.progress || !c.ok)
                std::fprintf(stderr, "genx-sim: sweep %zu/%zu: %s%s%s %zu B: %s (%.1f s wall)\n", done,
                             total, algs[a].name.c_str(), algs[a].params.empty() ? "" : " ",
                             algs[a].params.c_str(), sizes[i],
                             c.ok ? ("simulated " + seconds(c.sim) + ", GenModel " + seconds(c.model)).c_str()
                                  : ("failed (exit " + std::to_string(rc) + ")").c_str(),
                             wall);
        }

    auto label = [](const SweepAlg& a) { return a.params.empty() ? a.name : a.name + " " + a.params; };
    std::ostringstream t;
    t << "### genx-sim --sweep " << opt.sweep << ": " << platform_line << "\n\n"
      << "Each cell: simulated / GenModel (ratio simulated / GenModel), seconds.\n\n| bytes |";
    for (const SweepAlg& a : algs) t << " " << label(a) << " |";
    t << "\n|---:|";
    for (size_t a = 0; a < algs.size(); ++a) t << "---|";
    t << "\n";
    char buf[128];
    for (size_t i = 0; i < sizes.size(); ++i) {
        t << "| " << sizes[i] << " |";
        for (size_t a = 0; a < algs.size(); ++a) {
            const Cell& c = cells[a][i];
            if (!c.ok) {
                t << " failed |";
                continue;
            }
            std::snprintf(buf, sizeof buf, " %.4g / %.4g (%.3f) |", c.sim, c.model,
                          c.model > 0 ? c.sim / c.model : 0.0);
            t << buf;
        }
        t << "\n";
    }
    std::cout << t.str();
    if (!opt.out.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(opt.out, ec);
        if (ec) return bad_input("--out " + opt.out + ": " + ec.message());
        auto write = [&](const std::string& name, const std::string& text) {
            std::ofstream f(opt.out + "/" + name);
            f << text;
            return static_cast<bool>(f);
        };
        if (!write("table.md", t.str())) return bad_input("--out " + opt.out + ": cannot write table.md");
        nlohmann::json all = nlohmann::json::array();
        std::vector<tools::PlotPoint> pts;
        for (size_t a = 0; a < algs.size(); ++a)
            for (size_t i = 0; i < sizes.size(); ++i) {
                const Cell& c = cells[a][i];
                if (!c.ok) continue;
                all.push_back(c.j);
                tools::PlotPoint p;
                p.panel = platform_line;
                p.series = label(algs[a]);
                p.x = static_cast<double>(sizes[i]);
                p.marker = c.sim;
                p.line = c.model;
                p.tip = label(algs[a]) + " " + std::to_string(sizes[i]) + " B: simulated " +
                        seconds(c.sim) + ", GenModel " + seconds(c.model);
                pts.push_back(std::move(p));
            }
        tools::PlotLabels labels;
        labels.title = "genx-sim --sweep";
        labels.legend = "(markers: simulated, lines: GenModel)";
        if (!write("results.json", all.dump(1) + "\n") ||
            !write("plot.svg", tools::plot_svg(pts, labels)))
            return bad_input("--out " + opt.out + ": cannot write results.json or plot.svg");
    }
    return failures > 0 ? 1 : 0;
}

}  // namespace

// The model GenModel prices with: the platform's own, a paper preset's
// Table 5, --model FILE, or --model paper (Table 5 per switch level).
Status choose_model(const Options& opt, Topology* topo, ModelParams* model, std::string* model_source) {
    *model = platform_model(*topo);
    *model_source = "platform host links, gamma = delta = 0";
    if (is_paper_preset(opt.preset)) {
        if (Status s = paper_preset(opt.preset, topo, model); !s) return Status::invalid("--preset: " + s.message());
        *model_source = "Table 5 (" + opt.preset + ")";
    }
    if (!opt.model_file.empty() && opt.model_file != "paper") {
        if (Status s = load_model_file(opt.model_file, model); !s) return Status::invalid("--model: " + s.message());
        *model_source = opt.model_file;
    }
    if (opt.model_file == "paper") {
        // Table 5's rows by the platform's switch levels (ranks do not
        // matter: one per host).
        TopologyView levels;
        std::vector<std::string> one_each;
        for (int h : topo->hosts()) one_each.push_back(topo->nodes[static_cast<size_t>(h)].name);
        GENX_RETURN_IF_ERROR(to_view(*topo, one_each, &levels));
        if (levels.direct) return Status::invalid("--model paper needs a switch tree, not a direct network");
        *model = paper_model(levels);
        *model_source = "Table 5 per switch level";
    }
    return Status::ok();
}

// --hosts: each rank's host, as an index into the platform's hosts.
Status place_hosts(const Options& opt, const Topology& topo, const std::string& platform, PlatformOptions* po) {
    if (!opt.hosts.empty()) {
        if (opt.ranks_per_host != 1) return Status::invalid("give --hosts or --ranks-per-host, not both");
        std::vector<std::string> names;
        if (Status s = expand_hostlist(opt.hosts, &names); !s) return Status::invalid("--hosts: " + s.message());
        std::map<std::string, int> index;
        const std::vector<int> hs = topo.hosts();
        for (size_t i = 0; i < hs.size(); ++i) index[topo.nodes[static_cast<size_t>(hs[i])].name] = static_cast<int>(i);
        for (size_t r = 0; r < names.size(); ++r) {
            auto it = index.find(names[r]);
            if (it == index.end())
                return Status::invalid("--hosts: rank " + std::to_string(r) + "'s host '" + names[r] +
                                       "' is not a host of " + platform);
            po->rank_host.push_back(it->second);
        }
    }
    return Status::ok();
}

// Where GenModel puts the ranks: as the platform places them, with a
// direct network's links or a switch tree's uplinks priced per class (up
// to kTreeModelMaxRanks; `model_source` says when they are not).
RankMap model_ranks(const Options& opt, const PlatformOptions& po, const TopologyView& view,
                    const std::shared_ptr<const DirectNetwork>& direct, int P, std::string* model_source) {
    RankMap ranks = RankMap::by_slot(P, opt.ranks_per_host);
    if (!po.rank_host.empty()) ranks.node = po.rank_host;
    if (direct) {
        // Node ids of a direct network are the view's host nodes.
        ranks.node = view.host_of_rank();
        ranks.direct = direct;
    } else if (std::shared_ptr<const SwitchTree> tree = switch_tree(view)) {
        // A switch tree: its uplinks priced per class, from the same links
        // the platform simulates (docs/model.md).  That needs every rank's
        // program unless the plan's symmetry maps the tree onto itself (the
        // switch-tree quotient), which beyond kTreeModelMaxRanks costs more
        // than the simulation.
        if (P <= kTreeModelMaxRanks) {
            ranks.node = view.host_of_rank();
            ranks.tree = std::move(tree);
        } else {
            *model_source += "; the switch tree's links not priced above " +
                             std::to_string(kTreeModelMaxRanks) + " ranks";
        }
    }
    return ranks;
}

// The network's bound on this run (plan/bound.hpp), or why there is none.
struct BoundResult {
    Status status;
    AllreduceBound bound;
};

// The run's result: one JSON object (--json) or the text report.
int report(const Options& opt, const Simulation& sim, const PlatformOptions& po, const std::string& platform,
           const PlanHeader& h, const ExecOptions& exec, size_t bytes, const Simulation::RunResult& res,
           double model_s, const std::string& model_source, const BoundResult& bound) {
    const int P = sim.ranks();
    const double ratio = model_s > 0 ? res.seconds / model_s : 0;
    if (opt.json) {
        nlohmann::json j;
        j["engine"] = engine_name();
        j["network_model"] = network_model_name(po.network);
        j["platform"] = platform;
        j["hosts"] = sim.hosts().size();
        j["ranks_per_host"] = opt.ranks_per_host;
        j["ranks"] = P;
        j["algorithm"] = h.algorithm;
        j["params"] = h.params;
        j["exec"] = format_exec_options(exec);
        j["bytes"] = bytes;
        j["dtype_size"] = opt.dtype_size;
        j["simulated_s"] = res.seconds;
        j["model_s"] = model_s;
        j["ratio"] = ratio;
        j["model_source"] = model_source;
        j["incast"] = po.incast.enabled();
        j["messages"] = res.messages;
        j["message_bytes"] = res.bytes;
        if (bound.status) {
            j["bound_s"] = bound.bound.seconds;
            j["bound_cut"] = bound.bound.cut;
            j["fraction_of_bound"] = res.seconds > 0 ? bound.bound.seconds / res.seconds : 0;
        } else {
            j["bound_s"] = nullptr;
            j["bound_cut"] = bound.status.message();
        }
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "genx-sim: " << h.algorithm << (h.params.empty() ? "" : " " + h.params) << " ("
              << format_exec_options(exec) << "), " << bytes << " bytes, " << P << " ranks on "
              << sim.hosts().size() << " hosts of " << platform << ", " << engine_name() << " "
              << network_model_name(po.network)
              << (po.incast.enabled() ? ", incast" : "") << "\n"
              << "simulated  " << seconds(res.seconds) << " (" << res.messages << " messages, "
              << res.bytes << " bytes)\n"
              << "GenModel   " << seconds(model_s) << " (" << model_source << ")\n";
    char r[64];
    std::snprintf(r, sizeof r, "%.4g", ratio);
    std::cout << "ratio      " << r << " (simulated / model)\n";
    if (bound.status) {
        std::snprintf(r, sizeof r, "%.3g", res.seconds > 0 ? bound.bound.seconds / res.seconds : 0);
        std::cout << "bound      " << seconds(bound.bound.seconds) << " (" << r
                  << " of it reached; binding cut: " << bound.bound.cut << ")\n";
    } else {
        std::cout << "bound      none: " << bound.status.message() << "\n";
    }
    return 0;
}

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
    if (!opt.out.empty() && opt.sweep.empty()) return bad_input("--out needs --sweep MIN:MAX");
    if (opt.dtype_size == 0) return bad_input("--dtype-size must be at least 1");
    if (!opt.sweep.empty()) {
        if (app.count("--bytes") > 0) return bad_input("--sweep sets the sizes; drop --bytes");
        return run_sweep(opt, argv[0]);
    }
    if (opt.ranks_per_host < 1)
        return bad_input("--ranks-per-host must be at least 1, got " +
                         std::to_string(opt.ranks_per_host));
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
    if (Status s = merge_params(opt.params, &all); !s) return bad_input("--param: " + s.message());
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

    ModelParams model;
    std::string model_source;
    if (Status s = choose_model(opt, &topo, &model, &model_source); !s) return bad_input(s.message());
    // GenModel's inter-node ε and w_t on the links into hosts (docs/sim.md);
    // the platform's own model has ε = 0, so incast needs --model.
    if (!opt.no_incast) {
        po.incast.epsilon = model.inter.epsilon;
        po.incast.w_t = model.inter.w_t;
    }

    if (Status s = place_hosts(opt, topo, platform, &po); !s) return bad_input(s.message());
    std::unique_ptr<Simulation> sim;
    if (Status s = Simulation::create(topo, po, &sim); !s) return bad_input(platform + ": " + s.message());
    const int P = sim->ranks();
    TopologyView view;
    if (Status s = to_view(topo, sim->host_of_rank(), &view); !s) return bad_input(s.message());
    // GenTree's per-switch plans, chosen by the same model at --bytes.
    if (Status s = resolve_gentree(opt.algorithm, &view, static_cast<double>(bytes), model, &gen_params); !s)
        return bad_input(s.message());
    RankGenerator gen;
    if (Status s = prepare(opt.algorithm, P, gen_params, &view, &gen); !s) return bad_input(s.message());
    // The executor keys the network adds, as in the component.
    add_network_exec_defaults(long_fat_routes(&view), &all);
    if (Status s = split_exec_params(all, &gen_params, &exec); !s) return bad_input(s.message());
    const std::shared_ptr<const DirectNetwork> direct = direct_network(view);
    const size_t count = bytes / opt.dtype_size;

    // GenModel on the same plan, before the simulation (which owns the
    // process's one SimGrid engine until it ends).
    PlanModel pm;
    const RankMap ranks = model_ranks(opt, po, view, direct, P, &model_source);
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
        false, &res,
        opt.progress ? Simulation::ProgressFn([](const Simulation::Progress& p) {
            std::fprintf(stderr,
                         "genx-sim: %.1f s wall: simulated %.6g s, %llu messages, %d of %d "
                         "ranks done\n",
                         p.wall, p.simulated, static_cast<unsigned long long>(p.messages),
                         p.finished, p.ranks);
        })
                     : Simulation::ProgressFn());
    if (!ran) {
        std::cerr << "genx-sim: simulation failed: " << ran.message() << "\n";
        return 1;
    }
    if (opt.progress)
        std::fprintf(stderr, "genx-sim: done: simulated %.6g s, %llu messages, %d ranks\n",
                     res.seconds, static_cast<unsigned long long>(res.messages), P);

    BoundResult bound;
    bound.status = allreduce_bound(view, static_cast<double>(bytes), &bound.bound);
    return report(opt, *sim, po, platform, gen.header, exec, bytes, res, pred.seconds, model_source, bound);
}
