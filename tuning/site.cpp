// Site manifests: parsing with file:line errors, writing, and the fit test.
#include "tuning/site.hpp"

#include "common/text_util.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace genx {

using json = nlohmann::json;

namespace {

// Line of the first occurrence of "key" in the text: site.json is small and
// flat, so the first match is the field (the writer puts each on its own line).
int line_of_key(const std::string& text, const std::string& key) {
    const size_t at = text.find("\"" + key + "\"");
    if (at == std::string::npos) return 1;
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

Status field_string(const json& j, const std::string& text, const std::string& source,
                    const std::string& key, bool required, std::string* out) {
    if (!j.contains(key)) {
        if (required)
            return Status::invalid(source + ":1: field '" + key + "' is missing");
        return Status::ok();
    }
    if (!j[key].is_string())
        return Status::invalid(source + ":" + std::to_string(line_of_key(text, key)) +
                               ": field '" + key + "' must be a string");
    *out = j[key].get<std::string>();
    return Status::ok();
}

// A file name inside the site directory: no directory part, so that a
// manifest cannot point a job at files elsewhere.
Status field_file(const json& j, const std::string& text, const std::string& source,
                  const std::string& key, std::string* out) {
    GENX_RETURN_IF_ERROR(field_string(j, text, source, key, false, out));
    if (out->find('/') != std::string::npos)
        return Status::invalid(source + ":" + std::to_string(line_of_key(text, key)) +
                               ": field '" + key + "' must name a file inside the site " +
                               "directory, not '" + *out + "'");
    return Status::ok();
}

}  // namespace

Status parse_site_manifest(const std::string& text, const std::string& source, SiteManifest* out) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return Status::parse_error(source + ":" + std::to_string(line_before_byte(text, e.byte)) +
                                   ": (JSON syntax)");
    }
    if (!j.is_object()) return Status::invalid(source + ":1: a site manifest is a JSON object");
    SiteManifest m;
    std::string format;
    GENX_RETURN_IF_ERROR(field_string(j, text, source, "format", true, &format));
    if (format != kSiteFormatName)
        return Status::invalid(source + ":" + std::to_string(line_of_key(text, "format")) +
                               ": field 'format' is '" + format + "', not '" + kSiteFormatName +
                               "'");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != 1)
        return Status::invalid(source + ":" + std::to_string(line_of_key(text, "version")) +
                               ": field 'version' must be 1 (this genx reads version 1)");
    GENX_RETURN_IF_ERROR(field_string(j, text, source, "genx_version", true, &m.genx_version));
    GENX_RETURN_IF_ERROR(field_string(j, text, source, "mpi_version", true, &m.mpi_version));
    GENX_RETURN_IF_ERROR(field_string(j, text, source, "date", false, &m.date));
    GENX_RETURN_IF_ERROR(field_string(j, text, source, "command", false, &m.command));
    if (!j.contains("hosts") || !j["hosts"].is_array())
        return Status::invalid(source + ":" + std::to_string(line_of_key(text, "hosts")) +
                               ": field 'hosts' must be a list of host names");
    for (const json& h : j["hosts"]) {
        if (!h.is_string() || h.get<std::string>().empty())
            return Status::invalid(source + ":" + std::to_string(line_of_key(text, "hosts")) +
                                   ": field 'hosts' must hold non-empty host names");
        m.hosts.push_back(h.get<std::string>());
    }
    m.topology.clear();
    m.overlay.clear();
    m.rules.clear();
    GENX_RETURN_IF_ERROR(field_file(j, text, source, "topology", &m.topology));
    GENX_RETURN_IF_ERROR(field_file(j, text, source, "overlay", &m.overlay));
    GENX_RETURN_IF_ERROR(field_file(j, text, source, "rules", &m.rules));
    *out = std::move(m);
    return Status::ok();
}

Status load_site_manifest(const std::string& dir, SiteManifest* out) {
    const std::string path = dir + "/" + kSiteManifestName;
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::not_found(path + ": cannot open the site manifest");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return Status::io_error(path + ": read error");
    return parse_site_manifest(ss.str(), path, out);
}

std::string site_manifest_json(const SiteManifest& m) {
    // ordered_json keeps the fields in the order a reader expects.
    nlohmann::ordered_json j;
    j["format"] = kSiteFormatName;
    j["version"] = m.version;
    j["genx_version"] = m.genx_version;
    j["mpi_version"] = m.mpi_version;
    j["date"] = m.date;
    j["command"] = m.command;
    j["hosts"] = m.hosts;
    if (!m.topology.empty()) j["topology"] = m.topology;
    if (!m.overlay.empty()) j["overlay"] = m.overlay;
    if (!m.rules.empty()) j["rules"] = m.rules;
    return j.dump(2) + "\n";
}

SiteFit site_fit(const SiteManifest& m, const std::string& genx_version,
                 const std::string& mpi_version, const std::vector<std::string>& job_hosts) {
    SiteFit f;
    if (!genx_version.empty() && m.genx_version != genx_version) {
        f.reasons.push_back("it was tuned with genx " + m.genx_version + ", this is genx " +
                            genx_version);
        f.software_stale = true;
    }
    if (!mpi_version.empty() && m.mpi_version != mpi_version) {
        f.reasons.push_back("it was tuned against Open MPI " + m.mpi_version +
                            ", this job runs Open MPI " + mpi_version);
        f.software_stale = true;
    }
    const std::set<std::string> known(m.hosts.begin(), m.hosts.end());
    std::set<std::string> unknown;
    for (const std::string& h : job_hosts)
        if (!h.empty() && known.count(h) == 0) unknown.insert(h);
    if (!unknown.empty()) {
        std::string list;
        int shown = 0;
        for (const std::string& h : unknown) {
            if (shown++ == 4) {
                list += ", ...";
                break;
            }
            list += (list.empty() ? "" : ", ") + h;
        }
        f.reasons.push_back(std::to_string(unknown.size()) + " of this job's hosts were not measured (" +
                            list + ")");
    }
    return f;
}

}  // namespace genx
