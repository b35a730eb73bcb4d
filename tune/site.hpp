// genx-tune --site DIR: one run tunes a site (docs/genx-tune.md, "Tuning a
// site").  Around the usual phases: the directory is checked, the network
// probed (tune/net_probe.hpp) or a given tree's rates measured, and at the
// end every file of the site directory (tuning/site.hpp) written at once.
#pragma once

#include <string>
#include <vector>

#include "tune/context.hpp"
#include "tuning/rules.hpp"

namespace genx::tune {

// The files a site run writes; anything else in DIR is someone else's.
const std::vector<std::string>& site_file_names();

// What a site run carries from phase to phase.
struct SiteRun {
    std::string dir;          // as given
    std::string install_dir;  // <sysconfdir>/genx, where the component looks by default
    std::string tree_source;  // "probed", "--topology FILE", "SLURM_CONF's FILE"
    std::vector<std::string> hosts;  // the job's hosts, sorted, unique
    std::string conf, overlay;       // the texts written to DIR (rank 0; overlay may be empty)
    std::string local_dir;           // this rank's copies of them, read by the phases
    double total = 0;                // --max-time as given, s
};

// After MPI_Init, every rank: rank 0 creates DIR or checks that it holds
// only files of a site run (unless --force); on refusal every rank leaves
// MPI and the process exits with 2.  Also points the rules, CSV and SVG at
// DIR's staging names.
void site_prepare(Options* opt, SiteRun* site);
// After setup(), every rank: the switch tree (--topology, SLURM_CONF's
// topology.conf or the probe) and its overlay, copied where every rank reads
// them (--topology/--overlay of the phases); the rest of --max-time goes
// to the phases.
void site_network(Context* ctx, SiteRun* site);
// A progress line with the time spent and left of the whole run.
void site_progress(const Context& ctx, const SiteRun& site, const std::string& phase);
// Rank 0, after write_rules() and write_measurements(): the rest of DIR,
// then every file renamed into place (site.json last), and how to install.
void site_write(const Context& ctx, const SiteRun& site);
// Every rank: removes its copies of the tree.
void site_cleanup(const SiteRun& site);

}  // namespace genx::tune
