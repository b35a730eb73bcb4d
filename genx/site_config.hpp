// Where a communicator's network and rules come from (docs/site.md).
//
// The one place that resolves genx_config's paths: an explicit
// topology_file, topology_overlay or rules_path overrides the site
// directory's file of that kind (site_dir: what `genx-tune --site DIR`
// wrote, tuning/site.hpp); otherwise the site's file is used.  The site is
// read once per process and directory; whether its tuning still fits the
// job (genx and Open MPI versions, hosts) is checked per communicator, and
// a site tuned for other software keeps its network but not its rules.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "genx/comm_log.hpp"
#include "genx/genx_core.h"
#include "tuning/site.hpp"

namespace genx {

// A site directory as this process found it.
struct LoadedSite {
    std::string dir;
    bool present = false;        // the directory exists
    bool has_manifest = false;   // site.json was read and is valid
    Status manifest_error;       // site.json exists but cannot be used
    SiteManifest manifest;
    // Paths of the site's files of each kind ("" where the site has none).
    std::string topology, overlay, rules;
};

// DIR read once per process (thread-safe); later calls share the result.
std::shared_ptr<const LoadedSite> load_site(const std::string& dir);

// The effective paths of one communicator, and why.
struct Sources {
    std::string topology, overlay, rules;  // "" = none (rules: built-in defaults)
    std::shared_ptr<const LoadedSite> site;  // null without a site directory
    SiteFit fit;                             // empty without a manifest
    bool site_used = false;                  // the site's manifest was usable (or absent)
    // Explicit settings that replaced one of the site's files.
    bool topology_overridden = false, overlay_overridden = false, rules_overridden = false;
    bool rules_stale = false;  // the site's rules were not used: tuned for other software
};

// Resolves cfg (may be null) against its site.  hosts: the communicator's
// host names (empty when unknown).  Problems are reported once per process;
// a malformed site.json fails only with rules_strict.
Status resolve_sources(const genx_config* cfg, const std::vector<std::string>& hosts,
                       const CommLog& log, Sources* out);

// The verbose-1 line on where the network and rules came from, said once
// per process by rank 0 (at verbose 2 where no site directory exists).
// The items are built in one place (source_items) so that other sources of
// the network's description can add theirs.
std::vector<std::string> source_items(const Sources& s);
void say_sources(const Sources& s, const CommLog& log);

}  // namespace genx
