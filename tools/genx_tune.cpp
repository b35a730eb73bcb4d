// genx-tune: fit GenModel to the cluster it runs on and write a rules file
// (docs/genx-tune.md; Xiong et al. §3.4).
//
//   mpirun -np P genx-tune [-o rules.json] [--max-time 300] [--verify]
//                          [--comm-sizes 2,4,8 | all] [--export-tuned tuned.rules]
//   mpirun -np P genx-tune --site DIR [--force]  (probe, fit, verify: a whole site)
//   mpirun -np P genx-tune --probe-allreduce      (checks an exported tuned file)
//   genx-tune --print-defaults                    (genx's built-in rules)
//   genx-tune --check-rules FILE                  (checks a rules file, no MPI)
//   genx-tune --check-site DIR                    (checks a site directory, no MPI)
//
// This file is the command line and the order of the phases; each phase is
// a function of the tuning library (tune/phases.hpp), and MPI is reached
// through runtime/mpi_comm.hpp.  Progress on stderr (rank 0), the fit
// report and the decisions on stdout.
//
// Exit status: 0 success, 1 a measurement or the fit failed, 2 bad input
// (and a rules file that --check-rules rejects),
// 3 (--probe-allreduce) MPI_Allreduce returned an error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/mpi_comm.hpp"
#include "tune/phases.hpp"
#include "tune/site.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"
#include "tuning/rules.hpp"
#include "tuning/site.hpp"

namespace {

using namespace genx;

// The command line: the tuning options and the modes that do not tune.
struct Cli {
    tune::Options tune;
    bool probe = false;
    bool print_defaults = false;
    std::string check_rules;
    std::string check_site;
};

void add_verify_options(CLI::App& app, tune::Options& o) {
    app.add_flag("--verify", o.verify,
                 "time the best plans and MPI_Allreduce per grid point; keep the fastest");
    app.add_flag("--no-fallback", o.no_fallback,
                 "with --verify: do not time the displaced component");
    app.add_option("--ompi-algorithms", o.ompi_algorithms,
                   "with --verify: also time these of Open MPI's allreduce algorithms")
        ->capture_default_str();
    app.add_option("--verify-margin", o.verify_margin,
                   "how much faster (a fraction) a plan must measure to win with --verify")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--verify-spread", o.verify_spread,
                   "with --verify: also time other families' best plans within this factor")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1000.0));
}

void add_measure_options(CLI::App& app, tune::Options& o) {
    app.add_option("--comm-sizes", o.comm_sizes,
                   "communicator sizes to decide for: 2,4,8-16 or all");
    app.add_option("--min-bytes", o.min_bytes, "smallest grid size")->capture_default_str();
    app.add_option("--max-bytes", o.max_bytes, "largest grid size")->capture_default_str();
    app.add_option("--p2p-max", o.p2p_max, "largest p2p exchange size")->capture_default_str();
    app.add_option("--reduce-max-k", o.reduce_max_k, "largest fan-in of the reduce benchmark")
        ->capture_default_str()
        ->check(CLI::Range(2, 64));
    app.add_option("--reduce-bytes", o.reduce_bytes, "vector sizes of the reduce benchmark")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--topology", o.topology,
                   "the job's Slurm topology.conf: also fit its switch links' classes");
    app.add_option("--overlay", o.overlay, "with --topology: its JSON overlay (docs/topology.md)");
    app.add_option("--cps-bytes", o.cps_bytes, "message sizes of the co-located PS benchmark")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--holdout", o.holdout_every, "hold every N-th measurement out of the fit")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    app.add_option("--max-hcps-levels", o.max_hcps_levels,
                   "hcps factorisations with at most this many factors (0 = all)")
        ->capture_default_str();
    app.add_option("--target", o.target, "seconds per measurement when time allows")
        ->capture_default_str();
    app.add_option("--statistic", o.statistic,
                   "a measurement's value over its batches: median or min")
        ->capture_default_str()
        ->check(CLI::IsMember({"median", "min"}));
}

void add_options(CLI::App& app, Cli& cli) {
    tune::Options& o = cli.tune;
    app.add_option("-o,--output", o.output, "rules file to write")->capture_default_str();
    app.add_option("--csv", o.csv, "CSV of every measurement (default: OUTPUT with .csv)");
    app.add_option("--svg", o.svg, "SVG of measured vs predicted (default: OUTPUT with .svg)");
    app.add_option("--export-tuned", o.export_tuned,
                   "also write the decisions for Open MPI tuned (4.1 dynamic rules)");
    app.add_option("--site", o.site,
                   "tune a site: probe, fit, verify, write DIR/site.json, rules.json, ...");
    app.add_flag("--force", o.force, "with --site: write into DIR although it holds other files");
    app.add_option("--max-time", o.max_time, "seconds the whole run may take")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add_verify_options(app, o);
    add_measure_options(app, o);
    app.add_flag("--probe-allreduce", cli.probe,
                 "only call MPI_Allreduce at every grid size and report errors");
    app.add_flag("--print-defaults", cli.print_defaults, "print genx's built-in rules and exit");
    app.add_option("--check-rules", cli.check_rules,
                   "check a rules file as genx would on this host, print what is wrong");
    app.add_option("--check-site", cli.check_site,
                   "check a site directory: site.json, its rules and its topology, no MPI");
}

int check_rules(const std::string& path) {
    RulesCheck rc;
    rc.fingerprint = local_fingerprint();
    RulesFile f;
    const Status st = load_rules_file(path, rc, &f);
    if (!st) {
        std::cerr << st.message() << "\n";
        return 2;
    }
    std::cout << path << ": ok, " << f.allreduce.size() << " rules, "
              << (f.has_model ? "with a model" : "no model (genx uses its default model)") << "\n";
    return 0;
}

// A site directory as the component reads it: the manifest, the rules
// file and the tree with its overlay (2 and what is wrong otherwise).
int check_site(const std::string& dir) {
    SiteManifest m;
    if (const Status st = load_site_manifest(dir, &m); !st) {
        std::cerr << st.message() << "\n";
        return 2;
    }
    if (!m.rules.empty() && check_rules(dir + "/" + m.rules) != 0) return 2;
    if (!m.topology.empty()) {
        Topology t;
        const Status st = load_network(dir + "/" + m.topology,
                                       m.overlay.empty() ? "" : dir + "/" + m.overlay, &t);
        if (!st) {
            std::cerr << st.message() << "\n";
            return 2;
        }
    }
    std::string hosts;
    for (const std::string& h : m.hosts) hosts += (hosts.empty() ? "" : ",") + h;
    std::cout << dir << ": ok, site measured " << m.date << " on " << hosts << " with genx "
              << m.genx_version << " and Open MPI " << m.mpi_version << "\n";
    return 0;
}

// MPI_Allreduce at every grid size through whatever coll component Open MPI
// chose (checks that it accepts an exported tuned file): 3 if any failed.
int probe_allreduce(const tune::Context& ctx) {
    ctx.world.return_errors();  // errors come back instead of aborting
    int failures = 0;
    for (size_t bytes : ctx.grid) {
        const size_t count = bytes / sizeof(float);
        std::vector<float> in(count, 1.0f), out(count);
        const int rc = ctx.world.allreduce_sum(in.data(), out.data(), count);
        const int cls = rc != mpi::kSuccess ? mpi::error_class(rc) : mpi::kSuccess;
        const bool right = rc != mpi::kSuccess ||
                           std::all_of(out.begin(), out.end(),
                                       [&](float v) { return v == static_cast<float>(ctx.size); });
        if (ctx.rank == 0)
            std::printf("allreduce %10zu B: rc %d (class %d)%s\n", bytes, rc, cls,
                        right ? "" : " WRONG RESULT");
        failures += (rc != mpi::kSuccess || !right) ? 1 : 0;
    }
    failures = ctx.world.max(failures);
    mpi::finalize();
    return failures > 0 ? 3 : 0;
}

#ifndef GENX_SYSCONFDIR
#define GENX_SYSCONFDIR "/etc"
#endif

// --site changes what is on by default: --verify, against Open MPI's
// algorithms (all tuned ones genx-tune can force) unless given; and the
// outputs, which go to DIR.  2 and a message when the options clash.
int site_defaults(const CLI::App& app, Cli* cli) {
    tune::Options& o = cli->tune;
    if (o.site.empty()) {
        if (o.force) return std::fprintf(stderr, "genx-tune: --force needs --site\n"), 2;
        return 0;
    }
    for (const char* opt : {"--output", "--csv", "--svg"})
        if (app.count(opt) > 0)
            return std::fprintf(stderr, "genx-tune: --site writes DIR/rules.json, .csv and .svg; "
                                "%s does not apply\n", opt), 2;
    if (cli->probe)
        return std::fprintf(stderr, "genx-tune: --site and --probe-allreduce are separate runs\n"), 2;
    o.verify = true;
    if (app.count("--ompi-algorithms") == 0) o.ompi_algorithms = "all";
    return 0;
}

void write_outputs(const tune::Context& ctx) {
    const RulesFile rules = tune::write_rules(ctx);
    tune::write_measurements(ctx);
    tune::print_summary(ctx, rules);
    tune::export_tuned(ctx, rules);
    if (!ctx.opt.site.empty()) return;  // site_write() says where the site's files are
    std::printf("\nrules: %s\nmeasurements: %s\nplot: %s\n", ctx.opt.output.c_str(),
                ctx.opt.csv.c_str(), ctx.opt.svg.c_str());
    if (!ctx.opt.export_tuned.empty()) std::printf("tuned rules: %s\n", ctx.opt.export_tuned.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    Cli cli;
    CLI::App app{"genx-tune: measure this cluster, fit GenModel, write a genx rules file"};
    add_options(app, cli);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (cli.print_defaults) {
        std::cout << builtin_rules_text();
        return 0;
    }
    if (!cli.check_rules.empty()) return check_rules(cli.check_rules);
    if (!cli.check_site.empty()) return check_site(cli.check_site);
    if (const int rc = site_defaults(app, &cli); rc != 0) return rc;
    const bool site = !cli.tune.site.empty();

    tune::prepare(cli.tune);
    mpi::init(&argc, &argv);
    tune::SiteRun run;
    run.install_dir = std::string(GENX_SYSCONFDIR) + "/genx";
    if (site) tune::site_prepare(&cli.tune, &run);
    tune::Context ctx;
    ctx.opt = cli.tune;
    ctx.command = "genx-tune";
    for (int i = 1; i < argc; ++i) ctx.command += std::string(" ") + argv[i];
    tune::setup(&ctx);
    if (cli.probe) return probe_allreduce(ctx);
    if (site) tune::site_network(&ctx, &run);
    tune::discover(&ctx);

    tune::measure_p2p(&ctx);
    tune::measure_link_classes(&ctx);
    tune::measure_reduction(&ctx);
    tune::measure_ps(&ctx);
    tune::measure_shift(&ctx);
    if (site) tune::site_progress(ctx, run, "measurements");
    tune::fit(&ctx);
    for (int c : ctx.comm_sizes) {
        tune::Decision d = tune::decide(&ctx, c);
        if (ctx.opt.verify) tune::verify(&ctx, &d);
        ctx.decisions[c] = std::move(d.points);
    }
    if (site) tune::site_progress(ctx, run, "fit and verify");
    if (ctx.rank == 0) write_outputs(ctx);
    if (site && ctx.rank == 0) tune::site_write(ctx, run);
    if (site) tune::site_cleanup(run);
    ctx = tune::Context();  // frees its communicators before MPI_Finalize
    mpi::finalize();
    return 0;
}
