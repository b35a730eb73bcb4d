// A site directory: what `genx-tune --site DIR` writes once per cluster and
// the component reads for every job (MCA coll_genx_site, by default
// genx's installed sysconfdir).  It holds the network (topology.conf and
// its overlay.json of measured rates), the fitted rules (rules.json) and
// site.json, the manifest below, which says what the tuning was measured
// on so that a job can tell when it no longer fits (docs/site.md).
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"

namespace genx {

inline constexpr const char* kSiteManifestName = "site.json";
inline constexpr const char* kSiteFormatName = "genx-site";

struct SiteManifest {
    int version = 1;
    std::string genx_version;  // PACKAGE_VERSION of the genx-tune that wrote it
    std::string mpi_version;   // "4.1.4": the Open MPI whose components were measured
    std::string date;          // ISO 8601, UTC
    std::string command;       // the genx-tune command line, for the README
    std::vector<std::string> hosts;  // the hosts measured, sorted
    // File names inside the directory; empty when the run did not write one.
    std::string topology = "topology.conf";
    std::string overlay = "overlay.json";
    std::string rules = "rules.json";
};

// Reads DIR/site.json.  Errors name the file, the line and the field.
Status parse_site_manifest(const std::string& text, const std::string& source, SiteManifest* out);
Status load_site_manifest(const std::string& dir, SiteManifest* out);
// The manifest as the JSON text site.json holds.
std::string site_manifest_json(const SiteManifest& m);

// Why a site's tuning does not fit this job, one sentence per reason;
// empty when it fits.  `software_stale` is set when the reasons concern
// the measured software (genx or Open MPI version): the site's rules were
// measured against other code and are not used; a host the site never
// measured leaves the rules usable, the host simply unplaced.
struct SiteFit {
    std::vector<std::string> reasons;
    bool software_stale = false;
};
SiteFit site_fit(const SiteManifest& m, const std::string& genx_version,
                 const std::string& mpi_version, const std::vector<std::string>& job_hosts);

}  // namespace genx
