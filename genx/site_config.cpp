// Where a communicator's network and rules come from (site_config.hpp).
#include "genx/site_config.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <set>
#include <utility>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"  // built outside the project's make
#endif

namespace genx {

namespace {

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string text_of(const char* p) { return p != nullptr ? p : ""; }

// A verbose-1 line said once per process by rank 0 (the site's fit concerns
// the process, not each communicator).
void say_once(const CommLog& log, int level, const std::string& msg) {
    static std::mutex m;
    static std::set<std::string> said;
    if (log.rank() != 0 || log.verbose() < level) return;
    {
        std::lock_guard<std::mutex> lock(m);
        if (!said.insert(msg).second) return;
    }
    log.say(level, msg);
}

std::shared_ptr<const LoadedSite> read_site(const std::string& dir) {
    auto s = std::make_shared<LoadedSite>();
    s->dir = dir;
    s->present = is_dir(dir);
    if (!s->present) return s;
    SiteManifest m;  // its defaults are the files' default names
    if (is_file(dir + "/" + kSiteManifestName)) {
        const Status st = load_site_manifest(dir, &m);
        if (!st.is_ok()) {
            s->manifest_error = st;
            return s;
        }
        s->has_manifest = true;
        s->manifest = m;
    }
    // With a manifest, the files it names (one that is missing is reported
    // by its reader); without one, the default names that exist.
    auto path_of = [&](const std::string& name) {
        if (name.empty()) return std::string();
        const std::string p = dir + "/" + name;
        return s->has_manifest || is_file(p) ? p : std::string();
    };
    s->topology = path_of(m.topology);
    s->overlay = path_of(m.overlay);
    s->rules = path_of(m.rules);
    return s;
}

// `explicit_path` (set: it stays, and overrides the site's) or the site's.
void pick(const std::string& site_path, std::string* path, bool* overridden) {
    if (!path->empty()) {
        *overridden = !site_path.empty();
        return;
    }
    *path = site_path;
}

// The site's manifest checked against this job, each reason said once.
void check_fit(const LoadedSite& site, const genx_config* cfg,
               const std::vector<std::string>& hosts, const CommLog& log, Sources* s) {
    if (!site.has_manifest) {
        say_once(log, 1,
                 "genx: site " + site.dir + " has no " + kSiteManifestName +
                     ": genx cannot tell whether its tuning still fits this job "
                     "(genx-tune --site writes one)");
        return;
    }
    s->fit = site_fit(site.manifest, PACKAGE_VERSION, text_of(cfg->mpi_version), hosts);
    for (const std::string& reason : s->fit.reasons)
        say_once(log, 1,
                 "genx: site " + site.dir + " does not fit this job: " + reason +
                     (s->fit.software_stale
                          ? "; its rules are not used (built-in defaults instead), its network "
                            "description still is"
                          : "; everything it holds is still used"));
}

}  // namespace

std::shared_ptr<const LoadedSite> load_site(const std::string& dir) {
    static std::mutex m;
    static std::map<std::string, std::shared_ptr<const LoadedSite>> cache;
    std::lock_guard<std::mutex> lock(m);
    auto it = cache.find(dir);
    if (it != cache.end()) return it->second;
    std::shared_ptr<const LoadedSite> site = read_site(dir);
    cache.emplace(dir, site);
    return site;
}

Status resolve_sources(const genx_config* cfg, const std::vector<std::string>& hosts,
                       const CommLog& log, Sources* out) {
    Sources s;
    const genx_config none{};
    if (cfg == nullptr) cfg = &none;
    s.topology = text_of(cfg->topology_file);
    s.overlay = text_of(cfg->topology_overlay);
    s.rules = text_of(cfg->rules_path);
    const std::string dir = text_of(cfg->site_dir);
    if (!dir.empty()) s.site = load_site(dir);
    const LoadedSite* site = s.site.get();
    if (site != nullptr && site->present && !site->manifest_error.is_ok()) {
        const std::string& why = site->manifest_error.message();
        if (cfg->rules_strict != 0)
            return Status::invalid(why + "; aborting because coll_genx_rules_strict is set");
        log.report_once(why + "; genx ignores the site directory " + site->dir +
                        " and uses its built-in defaults");
    } else if (site != nullptr && site->present) {
        s.site_used = true;
        check_fit(*site, cfg, hosts, log, &s);
        pick(site->topology, &s.topology, &s.topology_overridden);
        pick(site->overlay, &s.overlay, &s.overlay_overridden);
        if (s.fit.software_stale && s.rules.empty())
            s.rules_stale = !site->rules.empty();
        else
            pick(site->rules, &s.rules, &s.rules_overridden);
    }
    say_sources(s, log);
    *out = std::move(s);
    return Status::ok();
}

namespace {

// One kind of file's item: the site's (by its name in the directory), the
// setting that replaced it, or its absence.
void kind_item(const Sources& s, const std::string& site_path, const std::string& effective,
               bool overridden, bool stale, const char* setting, const char* default_name,
               std::vector<std::string>* used, std::vector<std::string>* items) {
    const std::string dir = s.site_used ? s.site->dir : "";
    const std::string name = site_path.empty() ? default_name : site_path.substr(dir.size() + 1);
    if (overridden)
        items->push_back(name + " overridden by " + setting + " " + effective);
    else if (stale)
        items->push_back(name + " not used (tuned for other software: built-in defaults)");
    else if (!effective.empty() && s.site_used && effective == site_path)
        used->push_back(name);
    else if (!effective.empty())
        items->push_back(std::string(setting) + " " + effective);
    else if (s.site_used)
        items->push_back("no " + name);
}

}  // namespace

std::vector<std::string> source_items(const Sources& s) {
    const LoadedSite empty;
    const LoadedSite& site = s.site_used ? *s.site : empty;
    std::vector<std::string> used, items;
    kind_item(s, site.topology, s.topology, s.topology_overridden, false,
              "coll_genx_topology_file", "topology.conf", &used, &items);
    kind_item(s, site.overlay, s.overlay, s.overlay_overridden, false,
              "coll_genx_topology_overlay", "overlay.json", &used, &items);
    kind_item(s, site.rules, s.rules, s.rules_overridden, s.rules_stale, "coll_genx_rules",
              "rules.json", &used, &items);
    if (!used.empty()) {
        std::string list;
        for (const std::string& u : used) list += (list.empty() ? "" : ", ") + u;
        items.insert(items.begin(), list + " used");
    }
    if (s.topology.empty() && !s.site_used) items.push_back("network: no topology file");
    if (s.rules.empty() && !s.rules_stale) items.push_back("rules: built-in defaults");
    const std::string dir = s.site->dir;
    items.push_back(s.overlay.empty()
                        ? "link rates: unknown (run genx-tune --site " + dir + " to measure them)"
                        : "link rates: from " + s.overlay);
    return items;
}

void say_sources(const Sources& s, const CommLog& log) {
    // No site asked for (coll_genx_site empty): nothing to say.
    if (s.site == nullptr) return;
    const bool site_present = s.site->present;
    const int level = site_present ? 1 : 2;
    if (log.verbose() < level || log.rank() != 0) return;
    std::string head;
    if (!site_present) {
        head = "site " + s.site->dir + " (no such directory)";
    } else if (!s.site_used) {
        head = "site " + s.site->dir + " ignored (its " + kSiteManifestName + " cannot be used)";
    } else if (s.site->has_manifest) {
        const SiteManifest& m = s.site->manifest;
        head = "site " + s.site->dir + " (tuned " + m.date.substr(0, 10) + " on " +
               std::to_string(m.hosts.size()) + " hosts with genx " + m.genx_version +
               ", Open MPI " + m.mpi_version + ")";
    } else {
        head = "site " + s.site->dir + " (no " + kSiteManifestName + ")";
    }
    std::string line = "genx: " + head + ":";
    bool first = true;
    for (const std::string& item : source_items(s)) {
        line += (first ? " " : "; ") + item;
        first = false;
    }
    say_once(log, level, line);
}

}  // namespace genx
