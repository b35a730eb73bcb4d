// genx-tune --site DIR (tune/site.hpp): the directory, the network, and the
// site's files written so that a crash leaves the previous site or none,
// never half of one: each file is staged as DIR/.genx-site-new.NAME, the
// old site.json removed, the files renamed into place and site.json, which
// marks a complete site, renamed last.
#include "tune/site.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/mpi_comm.hpp"
#include "topology/graph.hpp"
#include "topology/slurm_topology.hpp"
#include "topology/topology.hpp"
#include "tune/net_probe.hpp"
#include "tune/report.hpp"
#include "tuning/site.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace fs = std::filesystem;

namespace genx::tune {

namespace {

const char* const kStage = ".genx-site-new.";

std::string staged(const std::string& dir, const std::string& name) {
    return dir + "/" + kStage + name;
}

// Rank 0: why DIR cannot take a site ("" when it can), creating it if missing.
std::string check_dir(const std::string& dir, bool force) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        if (!fs::create_directories(dir, ec))
            return "--site " + dir + ": cannot create the directory (" + ec.message() + ")";
        return "";
    }
    if (!fs::is_directory(dir, ec)) return "--site " + dir + ": exists and is not a directory";
    std::vector<std::string> foreign;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        const std::vector<std::string>& ours = site_file_names();
        if (name.rfind(kStage, 0) == 0 || std::find(ours.begin(), ours.end(), name) != ours.end())
            continue;
        foreign.push_back(name);
    }
    if (ec) return "--site " + dir + ": cannot be listed (" + ec.message() + ")";
    if (foreign.empty() || force) return "";
    std::sort(foreign.begin(), foreign.end());
    std::string list;
    for (size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
    if (foreign.size() > 5) list += ", ...";
    return "--site " + dir + ": holds " + std::to_string(foreign.size()) +
           " file(s) a site run did not write (" + list +
           "); nothing written. Give a new or empty directory, or --force to write the site "
           "among them";
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    out.close();
    return static_cast<bool>(out);
}

// The given tree: --topology, else SLURM_CONF's directory's topology.conf
// when it exists (rank 0 looks; every rank learns it).
void find_given_tree(Context* ctx, SiteRun* site) {
    std::string path = ctx->opt.topology;
    if (!path.empty()) {
        site->tree_source = "--topology " + path;
    } else if (ctx->rank == 0) {
        const char* conf = std::getenv("SLURM_CONF");
        if (conf != nullptr && *conf != '\0') {
            const fs::path p = fs::path(conf).parent_path() / "topology.conf";
            std::error_code ec;
            if (fs::is_regular_file(p, ec)) path = p.string();
        }
    }
    ctx->world.bcast(&path);
    if (site->tree_source.empty() && !path.empty())
        site->tree_source = "SLURM_CONF's " + path;
    ctx->opt.topology = path;
}

// Rank 0: the texts to write, checked as genx will read them; an overlay
// genx rejects is dropped with a warning (the tree alone still places).
void check_texts(const Context& ctx, SiteRun* site) {
    const std::string conf = staged(ctx.opt.site, "topology.conf");
    const std::string overlay = staged(ctx.opt.site, "overlay.json");
    if (!write_text(conf, site->conf)) die("--site: " + conf + ": cannot be written", 1);
    Topology t;
    if (!site->overlay.empty()) {
        if (!write_text(overlay, site->overlay)) die("--site: " + overlay + ": cannot be written", 1);
        const Status s = load_network(conf, overlay, &t);
        if (s) return;
        std::fprintf(stderr, "genx-tune --site: warning: the measured overlay does not fit the "
                     "tree (%s); the site has no overlay.json\n", s.message().c_str());
        site->overlay.clear();
        std::remove(overlay.c_str());
    }
    const Status s = load_network(conf, "", &t);
    if (!s) die("--site: the switch tree (" + site->tree_source + "): " + s.message(), 2);
}

// Every rank: its own copies of the texts (DIR need not be shared).
void copy_locally(Context* ctx, SiteRun* site) {
    ctx->world.bcast(&site->conf);
    ctx->world.bcast(&site->overlay);
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/genx-site-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr)
        die("--site: cannot create a temporary directory " + templ + " (" + std::strerror(errno) +
            ")");
    site->local_dir = buf.data();
    ctx->opt.topology = site->local_dir + "/topology.conf";
    ctx->opt.overlay = site->overlay.empty() ? "" : site->local_dir + "/overlay.json";
    bool ok = write_text(ctx->opt.topology, site->conf);
    if (!ctx->opt.overlay.empty()) ok = ok && write_text(ctx->opt.overlay, site->overlay);
    if (ctx->world.max(ok ? 0 : 1) != 0)
        die("--site: a rank cannot write its copy of the tree under " + site->local_dir, 1);
}

std::string utc_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

std::string rate_line(const std::string& name, double alpha, double beta, const std::string& how) {
    char b[256];
    std::snprintf(b, sizeof b, "  %-12s %10.0f MB/s  latency %8.2f us  (%s)\n", name.c_str(),
                  beta > 0 ? 1e-6 / beta : 0.0, alpha * 1e6, how.c_str());
    return b;
}

std::string readme_text(const Context& ctx, const SiteRun& site, const SiteManifest& m) {
    std::string hosts;
    for (const std::string& h : m.hosts) hosts += (hosts.empty() ? "" : " ") + h;
    std::string r = "genx site: MPI_Allreduce tuning for this cluster\n\n";
    r += "Measured " + m.date + " on " + std::to_string(m.hosts.size()) + " host(s): " + hosts +
         "\n(" + std::to_string(ctx.size) + " ranks; genx " + m.genx_version + ", Open MPI " +
         m.mpi_version + ")\nCommand: " + m.command + "\n";
    r += "Switch tree: " + site.tree_source + (m.overlay.empty() ? ", no overlay" : ", rates in overlay.json") + "\n\n";
    r += "Fitted link classes (rate = 1/beta):\n";
    r += rate_line("intra-node", ctx.model.intra.alpha, ctx.model.intra.beta, "fitted");
    if (ctx.cluster.nodes > 1)
        r += rate_line("inter-node", ctx.model.inter.alpha, ctx.model.inter.beta, "fitted");
    for (const ClassFit& c : ctx.class_rows)
        r += c.beta > 0 ? rate_line(c.name, c.alpha, c.beta, c.beta_measured ? "fitted" : "declared rate")
                        : "  " + c.name + ": not fitted" + (c.note.empty() ? "" : " (" + c.note + ")") + "\n";
    r += "\nFiles: site.json (this manifest), topology.conf, " +
         std::string(m.overlay.empty() ? "" : "overlay.json, ") +
         "rules.json (genx's decisions),\nrules.csv and rules.svg (every measurement and the "
         "model's prediction: the evidence).\n\nInstall: copy this directory to " +
         site.install_dir + " (where genx looks by default),\nor set coll_genx_site = <this "
         "directory> in openmpi-mca-params.conf.\n";
    return r;
}

// Renames the staged files into place: the old manifest first, so that an
// interrupted run leaves no site.json over mixed files; the new one last.
void commit(const std::string& dir, const std::vector<std::string>& names) {
    std::error_code ec;
    fs::remove(dir + "/" + kSiteManifestName, ec);
    for (const std::string& n : site_file_names()) {
        if (n == kSiteManifestName) continue;
        if (std::find(names.begin(), names.end(), n) == names.end()) {
            fs::remove(dir + "/" + n, ec);  // an old run's file this run did not write
            continue;
        }
        fs::rename(staged(dir, n), dir + "/" + n, ec);
        if (ec) die("--site: " + dir + "/" + n + ": cannot be renamed into place (" + ec.message() + ")");
    }
    fs::rename(staged(dir, kSiteManifestName), dir + "/" + kSiteManifestName, ec);
    if (ec) die("--site: " + dir + "/site.json: cannot be renamed into place (" + ec.message() + ")");
}

}  // namespace

const std::vector<std::string>& site_file_names() {
    static const std::vector<std::string> names = {"topology.conf", "overlay.json", "rules.json",
                                                   "rules.csv",     "rules.svg",    "README",
                                                   kSiteManifestName};
    return names;
}

void site_prepare(Options* opt, SiteRun* site) {
    site->dir = opt->site;
    site->total = opt->max_time;
    const mpi::Comm world = mpi::Comm::world();
    std::string error;
    if (world.rank() == 0) error = check_dir(opt->site, opt->force);
    world.bcast(&error);
    if (!error.empty()) {
        if (world.rank() == 0) std::fprintf(stderr, "genx-tune: %s\n", error.c_str());
        mpi::finalize();
        std::exit(2);
    }
    opt->output = staged(opt->site, "rules.json");
    opt->csv = staged(opt->site, "rules.csv");
    opt->svg = staged(opt->site, "rules.svg");
}

void site_network(Context* ctx, SiteRun* site) {
    find_given_tree(ctx, site);
    ProbeRun run;
    run.one_host_ok = true;
    run.who = "genx-tune --site";
    Topology given;
    const bool has_tree = !ctx->opt.topology.empty();
    if (has_tree) check(load_network(ctx->opt.topology, ctx->opt.overlay, &given), site->tree_source);
    run.given = has_tree ? &given : nullptr;
    NetProbe probe;
    // A given overlay is kept as given; a given tree without one gets the
    // probe's rates of its switches (none on one host).
    if (has_tree && !ctx->opt.overlay.empty()) {
        probe.hosts = ctx->world.allgather_names(local_host_name());
    } else {
        check(probe_network(ctx->world, run, &probe), "--site: probe");
    }
    if (!has_tree) site->tree_source = "probed";
    site->hosts = probe.hosts;
    std::sort(site->hosts.begin(), site->hosts.end());
    site->hosts.erase(std::unique(site->hosts.begin(), site->hosts.end()), site->hosts.end());
    if (ctx->rank == 0) {
        if (has_tree)
            check(read_text_file(ctx->opt.topology, &site->conf), "--site: --topology");
        else
            site->conf = probe.conf;
        if (has_tree && !ctx->opt.overlay.empty())
            check(read_text_file(ctx->opt.overlay, &site->overlay), "--site: --overlay");
        else if (site->hosts.size() > 1 || !has_tree)
            site->overlay = probe.overlay;
        check_texts(*ctx, site);
    }
    copy_locally(ctx, site);
    double spent = mpi::wtime() - ctx->launched;
    ctx->world.bcast(&spent, 1);  // rank 0's clock: clocks of other hosts differ
    ctx->opt.max_time = std::max(1.0, site->total - spent - 0.02 * site->total);
    site_progress(*ctx, *site, "network (" + site->tree_source + ")");
}

void site_progress(const Context& ctx, const SiteRun& site, const std::string& phase) {
    const double spent = mpi::wtime() - ctx.launched;
    char b[128];
    std::snprintf(b, sizeof b, " done: %.1f s elapsed, %.1f s left of %.0f s", spent,
                  std::max(0.0, site.total - spent), site.total);
    progress("site: " + phase + b);
}

void site_write(const Context& ctx, const SiteRun& site) {
    const std::string& dir = site.dir;
    SiteManifest m;
    m.genx_version = PACKAGE_VERSION;
    m.mpi_version = mpi::library_version();
    m.date = utc_iso8601();
    m.command = ctx.command;
    m.hosts = site.hosts;
    if (site.overlay.empty()) m.overlay.clear();
    std::vector<std::string> names = {"topology.conf", "rules.json", "rules.csv", "rules.svg",
                                      "README"};
    if (!site.overlay.empty()) names.push_back("overlay.json");
    if (!write_text(staged(dir, "README"), readme_text(ctx, site, m)) ||
        !write_text(staged(dir, kSiteManifestName), site_manifest_json(m)))
        die("--site: " + dir + ": cannot write the README or site.json");
    commit(dir, names);
    std::string abs = dir;
    std::error_code ec;
    const fs::path a = fs::absolute(dir, ec);
    if (!ec) abs = a.lexically_normal().string();
    std::printf("\nsite: %s (site.json, topology.conf, %srules.json, rules.csv, rules.svg, README)\n"
                "install for every job: cp -r %s/. %s/\n"
                "  or add to openmpi-mca-params.conf: coll_genx_site = %s\n",
                abs.c_str(), site.overlay.empty() ? "" : "overlay.json, ", abs.c_str(),
                site.install_dir.c_str(), abs.c_str());
}

void site_cleanup(const SiteRun& site) {
    if (site.local_dir.empty()) return;
    std::error_code ec;
    fs::remove_all(site.local_dir, ec);
}

}  // namespace genx::tune
