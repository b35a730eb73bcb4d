// Site directories through the C API (genx/site_config.hpp): found and
// used, overridden by explicit paths, stale for other software (network
// kept, rules not), unmeasured hosts reported, a malformed manifest
// reported with file:line and ignored, a missing directory silent.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "genx/genx_core.h"
#include "tuning/site.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace {

std::string fixture(const std::string& name) {
    const char* env = std::getenv("GENX_SRCDIR");
    return std::string(env && *env ? env : GENX_TEST_SRCDIR) + "/tests/topology/" + name;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

// Every size runs ring: a digest no built-in table has.
const char* const kRingRules =
    "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [{\"algorithm\": \"ring\"}]}\n";

// tree.conf's hosts, on both leaves.
const std::vector<const char*> kHosts = {"node01", "r1n1", "node02", "r2n2"};

// A fresh site directory (sites are cached per process by directory):
// tree.conf, tree-overlay.json and a ring rules file, and a manifest
// unless `manifest` is false.
struct SiteDir {
    std::string dir;
    explicit SiteDir(bool manifest = true, const std::string& genx = PACKAGE_VERSION,
                     const std::vector<std::string>& hosts = {"node01", "node02", "r1n1", "r2n2"}) {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/genx-site-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        REQUIRE(mkdtemp(buf.data()) != nullptr);
        dir = buf.data();
        write_text(dir + "/topology.conf", read_text(fixture("tree.conf")));
        write_text(dir + "/overlay.json", read_text(fixture("tree-overlay.json")));
        write_text(dir + "/rules.json", kRingRules);
        if (!manifest) return;
        genx::SiteManifest m;
        m.genx_version = genx;
        m.mpi_version = "4.1.4";
        m.date = "2026-11-29T08:00:00Z";
        m.command = "genx-tune --site " + dir;
        m.hosts = hosts;
        write_text(dir + "/site.json", genx::site_manifest_json(m));
    }
    ~SiteDir() {
        for (const char* f : {"topology.conf", "overlay.json", "rules.json", "site.json"})
            std::remove((dir + "/" + f).c_str());
        rmdir(dir.c_str());
    }
};

void collect(void* ctx, int, const char* msg) {
    static_cast<std::vector<std::string>*>(ctx)->push_back(msg);
}

genx_config site_config(const std::string& dir, std::vector<std::string>* log, int verbose = 1) {
    genx_config cfg{};
    cfg.algorithm = "auto";
    cfg.params = "";
    cfg.verbose = verbose;
    cfg.log = collect;
    cfg.log_ctx = log;
    cfg.site_dir = dir.c_str();
    cfg.mpi_version = "4.1.4";
    return cfg;
}

bool logged(const std::vector<std::string>& log, const std::string& text) {
    for (const std::string& l : log)
        if (l.find(text) != std::string::npos) return true;
    return false;
}

// A prepared communicator of 4 ranks on kHosts (4 nodes, 1 rank each).
struct Comm {
    genx_comm* c = nullptr;
    std::string err;
    explicit Comm(const genx_config& cfg) {
        char e[512] = "";
        c = genx_comm_create(0, 4, 4, 1, kHosts.data(), &cfg, e, sizeof e);
        err = e;
        if (c != nullptr) REQUIRE(genx_comm_prepare(c, e, sizeof e) == GENX_OK);
    }
    ~Comm() { genx_comm_destroy(c); }
    uint64_t digest() const { return genx_comm_digest(c); }
    uint64_t topology() const { return genx_comm_topology(c); }
};

// The digest of explicit paths (each "" for none), without a site.
uint64_t explicit_digest(const std::string& topology, const std::string& overlay,
                         const std::string& rules) {
    std::vector<std::string> log;
    genx_config cfg = site_config("", &log, 0);
    cfg.topology_file = topology.c_str();
    cfg.topology_overlay = overlay.c_str();
    cfg.rules_path = rules.c_str();
    Comm c(cfg);
    REQUIRE(c.c != nullptr);
    return c.digest();
}

}  // namespace

TEST_CASE("a site directory's network and rules are used, and said where they came from", "[site]") {
    SiteDir site;
    std::vector<std::string> log;
    Comm c(site_config(site.dir, &log));
    REQUIRE(c.c != nullptr);
    CHECK(c.topology() != 0);
    CHECK(std::string(genx_comm_topology_file(c.c)) == site.dir + "/topology.conf");
    // The same decisions as the site's three files named explicitly.
    CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf", site.dir + "/overlay.json",
                                        site.dir + "/rules.json"));
    CHECK(c.digest() != explicit_digest(site.dir + "/topology.conf", site.dir + "/overlay.json", ""));
    CHECK(logged(log, "genx: site " + site.dir + " (tuned 2026-11-29 on 4 hosts with genx " +
                          PACKAGE_VERSION + ", Open MPI 4.1.4): topology.conf, overlay.json, "
                                            "rules.json used; link rates: from " +
                          site.dir + "/overlay.json"));
    CHECK_FALSE(logged(log, "does not fit"));
}

TEST_CASE("explicit paths override the site's file of their kind", "[site]") {
    SiteDir site;
    std::vector<std::string> log;
    genx_config cfg = site_config(site.dir, &log);
    const std::string topo = fixture("tree.conf");
    const std::string none;
    cfg.topology_file = topo.c_str();
    Comm c(cfg);
    REQUIRE(c.c != nullptr);
    CHECK(std::string(genx_comm_topology_file(c.c)) == topo);
    CHECK(c.topology() != 0);
    CHECK(logged(log, "overlay.json, rules.json used; topology.conf overridden by "
                      "coll_genx_topology_file " + topo));
    // The site's rules still decide: the digest of the same files named.
    CHECK(c.digest() == explicit_digest(topo, site.dir + "/overlay.json", site.dir + "/rules.json"));
}

TEST_CASE("a site tuned with another genx or Open MPI keeps its network, not its rules", "[site]") {
    SECTION("another genx") {
        SiteDir site(true, "0.0.1-old");
        std::vector<std::string> log;
        Comm c(site_config(site.dir, &log));
        REQUIRE(c.c != nullptr);
        CHECK(c.topology() != 0);
        CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf",
                                            site.dir + "/overlay.json", ""));
        CHECK(logged(log, "site " + site.dir + " does not fit this job: it was tuned with genx "
                          "0.0.1-old, this is genx " PACKAGE_VERSION
                          "; its rules are not used (built-in defaults instead)"));
        CHECK(logged(log, "rules.json not used (tuned for other software: built-in defaults)"));
    }
    SECTION("another Open MPI") {
        SiteDir site;
        std::vector<std::string> log;
        genx_config cfg = site_config(site.dir, &log);
        cfg.mpi_version = "4.1.5";
        Comm c(cfg);
        REQUIRE(c.c != nullptr);
        CHECK(c.topology() != 0);
        CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf",
                                            site.dir + "/overlay.json", ""));
        CHECK(logged(log, "tuned against Open MPI 4.1.4, this job runs Open MPI 4.1.5"));
    }
    SECTION("an explicit rules file is used whatever the site's fit") {
        SiteDir site(true, "0.0.1-old");
        std::vector<std::string> log;
        genx_config cfg = site_config(site.dir, &log);
        const std::string rules = site.dir + "/rules.json";
        cfg.rules_path = rules.c_str();
        Comm c(cfg);
        REQUIRE(c.c != nullptr);
        CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf",
                                            site.dir + "/overlay.json", rules));
    }
}

TEST_CASE("hosts the site never measured are reported; everything is still used", "[site]") {
    SiteDir site(true, PACKAGE_VERSION, {"node01", "node02", "r1n1"});
    std::vector<std::string> log;
    Comm c(site_config(site.dir, &log));
    REQUIRE(c.c != nullptr);
    CHECK(c.topology() != 0);
    CHECK(logged(log, "1 of this job's hosts were not measured (r2n2); everything it holds is "
                      "still used"));
    CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf", site.dir + "/overlay.json",
                                        site.dir + "/rules.json"));
}

TEST_CASE("a malformed site.json is reported with file:line; the site is ignored", "[site]") {
    SiteDir site;
    write_text(site.dir + "/site.json",
               "{\n  \"format\": \"genx-site\",\n  \"version\": 1,\n  \"genx_version\": 7,\n"
               "  \"mpi_version\": \"4.1.4\",\n  \"hosts\": []\n}\n");
    std::vector<std::string> log;
    Comm c(site_config(site.dir, &log, 0));
    REQUIRE(c.c != nullptr);
    CHECK(c.topology() == 0);
    CHECK(c.digest() == explicit_digest("", "", ""));
    CHECK(logged(log, site.dir + "/site.json:4: field 'genx_version' must be a string; genx "
                                 "ignores the site directory " + site.dir +
                          " and uses its built-in defaults"));
    // Once per process.
    log.clear();
    Comm again(site_config(site.dir, &log, 0));
    CHECK(log.empty());
    // coll_genx_rules_strict: the communicator fails with the error.
    genx_config strict = site_config(site.dir, &log, 0);
    strict.rules_strict = 1;
    Comm failed(strict);
    CHECK(failed.c == nullptr);
    CHECK(failed.err.find("site.json:4: field 'genx_version'") != std::string::npos);
    CHECK(failed.err.find("coll_genx_rules_strict") != std::string::npos);
}

TEST_CASE("a missing site directory is silent below verbose 2", "[site]") {
    const std::string dir = "genx-test-no-such-site-dir";
    std::vector<std::string> log;
    Comm c(site_config(dir, &log));
    REQUIRE(c.c != nullptr);
    CHECK_FALSE(logged(log, dir));
    CHECK(c.digest() == explicit_digest("", "", ""));
    Comm loud(site_config(dir, &log, 2));
    CHECK(logged(log, "genx: site " + dir + " (no such directory): network: no topology "
                      "file; rules: built-in defaults; link rates: unknown (run genx-tune "
                      "--site " + dir + " to measure them)"));
}

TEST_CASE("a site directory without site.json: its files by their default names", "[site]") {
    SiteDir site(false);
    std::remove((site.dir + "/overlay.json").c_str());
    std::vector<std::string> log;
    Comm c(site_config(site.dir, &log));
    REQUIRE(c.c != nullptr);
    CHECK(c.topology() != 0);
    CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf", "", site.dir + "/rules.json"));
    CHECK(logged(log, "site " + site.dir + " has no site.json: genx cannot tell whether its "
                      "tuning still fits this job"));
    CHECK(logged(log, "site " + site.dir + " (no site.json): topology.conf, rules.json used; no "
                      "overlay.json; link rates: unknown (run genx-tune --site " + site.dir +
                      " to measure them)"));
}

TEST_CASE("a malformed file inside the site is reported by its reader; the others are used", "[site]") {
    SECTION("rules.json: file:line, built-in defaults, the network kept") {
        SiteDir site;
        write_text(site.dir + "/rules.json", "{\"format\": \"genx-rules\",\n \"version\": 1,\n"
                                             " \"allreduce\": [{\"algorithm\": \"no-such\"}]}\n");
        std::vector<std::string> log;
        Comm c(site_config(site.dir, &log, 0));
        REQUIRE(c.c != nullptr);
        CHECK(c.topology() != 0);
        CHECK(c.digest() == explicit_digest(site.dir + "/topology.conf",
                                            site.dir + "/overlay.json", ""));
        CHECK(logged(log, site.dir + "/rules.json:3"));
        CHECK(logged(log, "uses its built-in defaults"));
    }
    SECTION("topology.conf: file:line, hosts grouped by name, the rules kept") {
        SiteDir site;
        write_text(site.dir + "/topology.conf", read_text(fixture("bad-both.conf")));
        std::vector<std::string> log;
        Comm c(site_config(site.dir, &log, 0));
        REQUIRE(c.c != nullptr);
        CHECK(c.topology() == 0);
        CHECK(c.digest() == explicit_digest("", "", site.dir + "/rules.json"));
        CHECK(logged(log, site.dir + "/topology.conf:3"));
        CHECK(logged(log, "genx groups hosts by name instead"));
    }
}
