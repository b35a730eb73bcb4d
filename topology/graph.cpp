// Presets, graph files and the loader every tool shares (design in graph.hpp).
#include "topology/graph.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "topology/slurm_topology.hpp"

namespace genx {

namespace {

// A positive integer, the whole text.
bool parse_count(const std::string& text, int* out) {
    if (text.empty() || text.size() > 9) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    *out = std::atoi(text.c_str());
    return *out > 0;
}

int add_class(Topology* t, const std::string& name, double rate, double latency) {
    const int c = t->class_index(name);
    t->classes[static_cast<size_t>(c)].rate = rate;
    t->classes[static_cast<size_t>(c)].latency = latency;
    t->classes[static_cast<size_t>(c)].source = "preset";
    return c;
}

Status grid(const std::string& name, const std::string& dims_text, bool wrap, Topology* out) {
    std::vector<int> dims;
    size_t pos = 0;
    while (pos <= dims_text.size()) {
        size_t x = dims_text.find('x', pos);
        if (x == std::string::npos) x = dims_text.size();
        int d = 0;
        if (!parse_count(dims_text.substr(pos, x - pos), &d))
            return Status::invalid("preset '" + name +
                                   "': dimensions must be positive integers joined by 'x'");
        dims.push_back(d);
        pos = x + 1;
    }
    if (dims.size() > 3)
        return Status::invalid("preset '" + name + "': at most 3 dimensions");
    long cells = 1;
    for (int d : dims) {
        cells *= d;
        if (cells > (1L << 20))
            return Status::invalid("preset '" + name + "': more than 2^20 hosts");
    }
    Topology t;
    const int cls = add_class(&t, wrap ? "torus" : "mesh", kGridLinkRate, kGridLinkLatency);
    const int root = t.add_node(TopoKind::Switch, wrap ? "torus" : "mesh", -1);
    t.nodes[static_cast<size_t>(root)].is_virtual = true;
    t.direct = true;
    t.grid = dims;
    t.grid_wrap = wrap;
    for (long i = 0; i < cells; ++i)
        t.grid_host.push_back(t.add_node(TopoKind::Host, "n" + std::to_string(i), root, -1));
    // Links in grid order: every cell's +1 neighbour in each dimension.
    for (long i = 0; i < cells; ++i) {
        long stride = 1;
        for (size_t d = 0; d < dims.size(); ++d) {
            const long coord = (i / stride) % dims[d];
            long j = -1;
            if (coord + 1 < dims[d])
                j = i + stride;
            else if (wrap && dims[d] > 2)
                j = i - coord * stride;  // wrap to coordinate 0
            if (j >= 0)
                t.links.push_back({t.grid_host[static_cast<size_t>(i)],
                                   t.grid_host[static_cast<size_t>(j)], cls, 1});
            stride *= dims[d];
        }
    }
    t.compute_levels();
    const std::string bad = t.validate();
    if (!bad.empty()) return Status::internal("preset '" + name + "': " + bad);
    *out = std::move(t);
    return Status::ok();
}

int line_of_offset(const std::string& text, size_t off) {
    return 1 + static_cast<int>(std::count(
                   text.begin(), text.begin() + static_cast<long>(std::min(off, text.size())), '\n'));
}

// A link class object {"rate", "latency", "cross_dc"}: rate and latency
// numbers (bytes/s, s) or strings with units.
Status read_class(const nlohmann::json& j, const std::string& where, LinkClass* c) {
    if (!j.is_object())
        return Status::parse_error(where + ": must be an object {\"rate\": ..., \"latency\": ...}");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string field = where + "." + it.key();
        const nlohmann::json& v = it.value();
        if (it.key() == "rate" || it.key() == "latency") {
            double x = 0;
            if (v.is_number()) {
                x = v.get<double>();
                if (!(x >= 0)) return Status::parse_error(field + ": must not be negative");
            } else if (v.is_string()) {
                const Status s = it.key() == "rate" ? parse_rate(v.get<std::string>(), &x)
                                                    : parse_latency(v.get<std::string>(), &x);
                if (!s) return Status::parse_error(field + ": " + s.message());
            } else {
                return Status::parse_error(field + ": must be a number or a string with a unit");
            }
            (it.key() == "rate" ? c->rate : c->latency) = x;
        } else if (it.key() == "cross_dc") {
            if (!v.is_boolean()) return Status::parse_error(field + ": must be true or false");
            c->cross_dc = v.get<bool>();
        } else {
            return Status::parse_error(field + ": unknown key (known: rate, latency, cross_dc)");
        }
    }
    if (!(c->rate > 0)) return Status::parse_error(where + ": needs a rate above 0");
    return Status::ok();
}

}  // namespace

bool is_topology_preset(const std::string& name) {
    for (const char* p : {"switch:", "tree:", "torus:", "mesh:"})
        if (name.rfind(p, 0) == 0) return true;
    return false;
}

std::string topology_preset_names() {
    return "switch:N, tree:AxB, tree:AxB/O, torus:AxB[xC], mesh:AxB[xC]";
}

Status topology_preset(const std::string& name, Topology* out) {
    const auto bad = [&](const std::string& why) {
        return Status::invalid("preset '" + name + "': " + why + " (presets: " +
                               topology_preset_names() + ")");
    };
    if (name.rfind("torus:", 0) == 0) return grid(name, name.substr(6), true, out);
    if (name.rfind("mesh:", 0) == 0) return grid(name, name.substr(5), false, out);
    Topology t;
    if (name.rfind("switch:", 0) == 0) {
        int n = 0;
        if (!parse_count(name.substr(7), &n)) return bad("N must be a positive integer");
        const int host = add_class(&t, "host", kPresetLinkRate, kPresetLinkLatency);
        const int sw = t.add_node(TopoKind::Switch, "switch", -1);
        for (int h = 0; h < n; ++h) t.add_node(TopoKind::Host, "h" + std::to_string(h), sw, host);
    } else if (name.rfind("tree:", 0) == 0) {
        std::string spec = name.substr(5);
        int over = 1;
        const size_t slash = spec.find('/');
        if (slash != std::string::npos) {
            if (!parse_count(spec.substr(slash + 1), &over)) return bad("O must be a positive integer");
            spec.resize(slash);
        }
        const size_t x = spec.find('x');
        int a = 0, b = 0;
        if (x == std::string::npos || !parse_count(spec.substr(0, x), &a) ||
            !parse_count(spec.substr(x + 1), &b))
            return bad("expected tree:AxB or tree:AxB/O with positive integers");
        const int host = add_class(&t, "host", kPresetLinkRate, kPresetLinkLatency);
        const int up = add_class(&t, "uplink", kPresetLinkRate * b / over, kPresetLinkLatency);
        const int root = t.add_node(TopoKind::Switch, "spine", -1);
        for (int l = 0; l < a; ++l) {
            const int leaf = t.add_node(TopoKind::Switch, "leaf" + std::to_string(l), root, up);
            for (int h = 0; h < b; ++h)
                t.add_node(TopoKind::Host, "h" + std::to_string(l * b + h), leaf, host);
        }
    } else {
        return bad("unknown preset");
    }
    t.compute_levels();
    t.compute_oversubscription();
    const std::string invalid = t.validate();
    if (!invalid.empty()) return bad(invalid);
    *out = std::move(t);
    return Status::ok();
}

Status parse_graph(const std::string& text, const std::string& file, Topology* out) {
    using nlohmann::json;
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return Status::parse_error(file + ":" +
                                   std::to_string(line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0)) +
                                   ": not valid JSON (" + e.what() + ")");
    }
    const std::string where = file + ": ";
    if (!j.is_object()) return Status::parse_error(where + "a graph file is one JSON object");
    for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key() != "genx_graph" && it.key() != "classes" && it.key() != "hosts" &&
            it.key() != "links" && it.key() != "intra_host")
            return Status::parse_error(where + "\"" + it.key() +
                                       "\": unknown key (known: genx_graph, classes, hosts, "
                                       "links, intra_host)");
    if (!j.contains("genx_graph") || j["genx_graph"] != 1)
        return Status::parse_error(where + "\"genx_graph\": must be 1 (the graph format of "
                                           "docs/topology.md)");
    Topology t;
    t.direct = true;
    const int root = t.add_node(TopoKind::Switch, "graph", -1);
    t.nodes[static_cast<size_t>(root)].is_virtual = true;
    const std::string source = "graph " + file;
    if (j.contains("classes")) {
        if (!j["classes"].is_object())
            return Status::parse_error(where + "classes: must be an object of named classes");
        for (auto it = j["classes"].begin(); it != j["classes"].end(); ++it) {
            LinkClass c;
            c.name = it.key();
            c.source = source;
            GENX_RETURN_IF_ERROR(read_class(it.value(), where + "classes." + it.key(), &c));
            const int idx = t.class_index(c.name);
            t.classes[static_cast<size_t>(idx)] = c;
        }
    }
    if (!j.contains("hosts") || !j["hosts"].is_array() || j["hosts"].empty())
        return Status::parse_error(where + "hosts: must be a non-empty array of host names");
    std::map<std::string, int> host;
    for (size_t i = 0; i < j["hosts"].size(); ++i) {
        const json& h = j["hosts"][i];
        const std::string field = where + "hosts[" + std::to_string(i) + "]";
        if (!h.is_string() || h.get<std::string>().empty())
            return Status::parse_error(field + ": must be a non-empty string");
        const std::string name = h.get<std::string>();
        if (host.count(name)) return Status::parse_error(field + ": '" + name + "' is listed twice");
        host[name] = t.add_node(TopoKind::Host, name, root, -1);
    }
    if (!j.contains("links") || !j["links"].is_array())
        return Status::parse_error(where + "links: must be an array of links");
    std::set<std::pair<int, int>> seen;
    for (size_t i = 0; i < j["links"].size(); ++i) {
        const json& l = j["links"][i];
        const std::string field = where + "links[" + std::to_string(i) + "]";
        if (!l.is_object())
            return Status::parse_error(field + ": must be an object {\"a\", \"b\", \"class\"}");
        GraphLink gl;
        for (auto it = l.begin(); it != l.end(); ++it) {
            const std::string f = field + "." + it.key();
            const json& v = it.value();
            if (it.key() == "a" || it.key() == "b") {
                if (!v.is_string()) return Status::parse_error(f + ": must be a host name");
                auto h = host.find(v.get<std::string>());
                if (h == host.end())
                    return Status::parse_error(f + ": '" + v.get<std::string>() +
                                               "' is not in hosts");
                (it.key() == "a" ? gl.a : gl.b) = h->second;
            } else if (it.key() == "class") {
                if (!v.is_string()) return Status::parse_error(f + ": must be a class name");
                const std::string cname = v.get<std::string>();
                bool found = false;
                for (size_t c = 0; c < t.classes.size(); ++c)
                    if (t.classes[c].name == cname) {
                        gl.cls = static_cast<int>(c);
                        found = true;
                    }
                if (!found)
                    return Status::parse_error(f + ": no class named '" + cname + "' in classes");
            } else if (it.key() == "units") {
                if (!v.is_number_integer() || v.get<long>() < 1 || v.get<long>() > 1024)
                    return Status::parse_error(f + ": must be an integer in 1..1024");
                gl.units = v.get<int>();
            } else {
                return Status::parse_error(f + ": unknown key (known: a, b, class, units)");
            }
        }
        if (gl.a < 0 || gl.b < 0 || gl.cls < 0)
            return Status::parse_error(field + ": needs \"a\", \"b\" and \"class\"");
        if (gl.a == gl.b) return Status::parse_error(field + ": joins a host to itself");
        if (!seen.insert({std::min(gl.a, gl.b), std::max(gl.a, gl.b)}).second)
            return Status::parse_error(field + ": a second link between " +
                                       t.nodes[static_cast<size_t>(gl.a)].name + " and " +
                                       t.nodes[static_cast<size_t>(gl.b)].name +
                                       " (give one link with \"units\")");
        t.links.push_back(gl);
    }
    if (j.contains("intra_host")) {
        LinkClass c;
        c.name = "intra";
        c.source = source;
        GENX_RETURN_IF_ERROR(read_class(j["intra_host"], where + "intra_host", &c));
        const int idx = t.class_index("intra");
        t.classes[static_cast<size_t>(idx)] = c;
        t.intra_class = idx;
    }
    t.compute_levels();
    const std::string bad = t.validate();
    if (!bad.empty()) return Status::parse_error(where + bad);
    *out = std::move(t);
    return Status::ok();
}

Status load_graph_file(const std::string& path, Topology* out) {
    std::string text;
    GENX_RETURN_IF_ERROR(read_text_file(path, &text));
    return parse_graph(text, path, out);
}

Status load_network(const std::string& spec, const std::string& overlay, Topology* out) {
    if (is_topology_preset(spec)) {
        if (!overlay.empty())
            return Status::invalid("an overlay applies to a topology.conf, not to preset '" + spec + "'");
        return topology_preset(spec, out);
    }
    std::string text;
    GENX_RETURN_IF_ERROR(read_text_file(spec, &text));
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {
        if (!overlay.empty())
            return Status::invalid(spec + " is a graph file; an overlay applies only to a topology.conf");
        return parse_graph(text, spec, out);
    }
    return load_topology(spec, overlay, out);
}

}  // namespace genx
