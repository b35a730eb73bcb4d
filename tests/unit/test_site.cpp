// Site manifests: round trip, every malformed field named with file and
// line, and the fit test (software versions and unmeasured hosts).
#include <catch2/catch.hpp>

#include <string>

#include "tuning/site.hpp"

using namespace genx;

namespace {

SiteManifest sample() {
    SiteManifest m;
    m.genx_version = "0.1.0";
    m.mpi_version = "4.1.4";
    m.date = "2026-11-29T08:00:00Z";
    m.command = "genx-tune --site /site";
    m.hosts = {"h0", "h1", "h2"};
    return m;
}

}  // namespace

TEST_CASE("a site manifest reads back what was written", "[site]") {
    const SiteManifest m = sample();
    SiteManifest back;
    const Status st = parse_site_manifest(site_manifest_json(m), "site.json", &back);
    REQUIRE(st.is_ok());
    CHECK(back.genx_version == "0.1.0");
    CHECK(back.mpi_version == "4.1.4");
    CHECK(back.hosts == m.hosts);
    CHECK(back.topology == "topology.conf");
    CHECK(back.overlay == "overlay.json");
    CHECK(back.rules == "rules.json");
}

TEST_CASE("a manifest without a file of one kind leaves that kind empty", "[site]") {
    SiteManifest m = sample();
    m.rules.clear();
    SiteManifest back;
    REQUIRE(parse_site_manifest(site_manifest_json(m), "site.json", &back).is_ok());
    CHECK(back.rules.empty());
    CHECK(back.topology == "topology.conf");
}

TEST_CASE("malformed manifests are named by file, line and field", "[site]") {
    SiteManifest back;
    std::string text = site_manifest_json(sample());

    Status st = parse_site_manifest("{\n \"format\": \"genx-site\",\n", "d/site.json", &back);
    CHECK(st.message().find("d/site.json:") == 0);
    CHECK(st.message().find("JSON syntax") != std::string::npos);

    std::string wrong = text;
    wrong.replace(wrong.find("\"4.1.4\""), 7, "414");
    st = parse_site_manifest(wrong, "d/site.json", &back);
    CHECK(st.message() == "d/site.json:5: field 'mpi_version' must be a string");

    wrong = text;
    wrong.replace(wrong.find("\"genx-site\""), 11, "\"genx-rules\"");
    st = parse_site_manifest(wrong, "d/site.json", &back);
    CHECK(st.message().find("d/site.json:2: field 'format'") == 0);

    wrong = text;
    wrong.replace(wrong.find("\"rules.json\""), 12, "\"/etc/rules.json\"");
    st = parse_site_manifest(wrong, "d/site.json", &back);
    CHECK(st.message().find("field 'rules' must name a file inside the site directory") !=
          std::string::npos);

    st = parse_site_manifest("{\"format\": \"genx-site\", \"version\": 1}", "s", &back);
    CHECK(st.message() == "s:1: field 'genx_version' is missing");
}

TEST_CASE("a site fits a job only on the software and hosts it measured", "[site]") {
    const SiteManifest m = sample();
    SiteFit f = site_fit(m, "0.1.0", "4.1.4", {"h0", "h2"});
    CHECK(f.reasons.empty());
    CHECK_FALSE(f.software_stale);

    f = site_fit(m, "0.2.0", "4.1.4", {"h0"});
    REQUIRE(f.reasons.size() == 1);
    CHECK(f.software_stale);
    CHECK(f.reasons[0] == "it was tuned with genx 0.1.0, this is genx 0.2.0");

    f = site_fit(m, "0.1.0", "5.0.3", {"h0"});
    CHECK(f.software_stale);
    CHECK(f.reasons[0].find("Open MPI 4.1.4") != std::string::npos);

    f = site_fit(m, "0.1.0", "4.1.4", {"h0", "h9", "h8", "h9"});
    REQUIRE(f.reasons.size() == 1);
    CHECK_FALSE(f.software_stale);
    CHECK(f.reasons[0] == "2 of this job's hosts were not measured (h8, h9)");
}
