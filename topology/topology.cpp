// The topology model's operations: building, validating, placing ranks,
// fingerprinting, printing, and the conversion to the generators' view.
// Printing lives here rather than in a printer module because every output
// (text, JSON, SVG) is a plain walk of the same tree and has no other user.
#include "topology/topology.hpp"
#include "common/hash.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace genx {

const char* topo_kind_name(TopoKind k) {
    switch (k) {
        case TopoKind::Switch:
            return "switch";
        case TopoKind::Host:
            return "host";
        case TopoKind::Package:
            return "package";
        case TopoKind::Numa:
            return "numa";
        case TopoKind::Core:
            return "core";
        case TopoKind::Nic:
            return "nic";
        case TopoKind::Gpu:
            return "gpu";
    }
    return "?";
}

namespace {
bool in_network(TopoKind k) { return k == TopoKind::Switch || k == TopoKind::Host; }
}  // namespace

int Topology::add_node(TopoKind kind, const std::string& name, int parent, int up_class) {
    Node n;
    n.kind = kind;
    n.name = name;
    n.parent = parent;
    n.up_class = up_class;
    nodes.push_back(n);
    const int id = static_cast<int>(nodes.size()) - 1;
    if (parent >= 0) nodes[static_cast<size_t>(parent)].children.push_back(id);
    return id;
}

int Topology::class_index(const std::string& name) {
    for (size_t i = 0; i < classes.size(); ++i)
        if (classes[i].name == name) return static_cast<int>(i);
    LinkClass c;
    c.name = name;
    classes.push_back(c);
    return static_cast<int>(classes.size()) - 1;
}

int Topology::find(const std::string& name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (in_network(nodes[i].kind) && nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

std::vector<int> Topology::subtree(int node) const { return preorder(nodes, node); }

std::vector<int> Topology::hosts() const {
    std::vector<int> out;
    if (nodes.empty()) return out;
    for (int n : subtree(0))
        if (nodes[static_cast<size_t>(n)].kind == TopoKind::Host) out.push_back(n);
    return out;
}

void Topology::compute_levels() {
    if (nodes.empty()) return;
    const std::vector<int> order = subtree(0);
    // Children come after their parents in `order`: walk it backwards.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node& n = nodes[static_cast<size_t>(*it)];
        if (n.kind != TopoKind::Switch) continue;
        int lvl = 1;
        for (int c : n.children) {
            const Node& cn = nodes[static_cast<size_t>(c)];
            if (cn.kind == TopoKind::Switch) lvl = std::max(lvl, cn.level + 1);
        }
        n.level = lvl;
    }
}

void Topology::compute_oversubscription() {
    for (Node& n : nodes) {
        n.oversubscription = 0;
        if (n.kind != TopoKind::Switch || n.up_class < 0) continue;
        const double up = classes[static_cast<size_t>(n.up_class)].rate;
        if (up <= 0) continue;
        double down = 0;
        bool known = true;
        for (int c : n.children) {
            const Node& cn = nodes[static_cast<size_t>(c)];
            if (!in_network(cn.kind)) continue;
            const double r = cn.up_class >= 0 ? classes[static_cast<size_t>(cn.up_class)].rate : 0;
            if (r <= 0) known = false;
            down += r;
        }
        if (known && down > 0) n.oversubscription = down / up;
    }
}

std::string Topology::validate() const {
    if (nodes.empty()) return "the topology has no nodes";
    if (nodes[0].kind != TopoKind::Switch && nodes[0].kind != TopoKind::Host)
        return "the root " + nodes[0].name + " is neither a switch nor a host";
    std::vector<ShapeNode> shape(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        ShapeNode& s = shape[i];
        s.who = std::string(topo_kind_name(n.kind)) + " " + n.name;
        s.parent = n.parent;
        s.up_class = n.up_class;
        s.children = &n.children;
        s.host = n.kind == TopoKind::Host;
        // Network nodes need a link class up, except a direct network's
        // hosts below its virtual root; the inside of a host has none.
        const bool linkless = direct && n.parent == 0 && nodes[0].is_virtual && n.up_class == -1;
        s.needs_up_class = i != 0 && in_network(n.kind) && !linkless;
    }
    const std::string err =
        validate_shape(shape, static_cast<int>(classes.size()), intra_class, direct, links, grid, grid_host);
    if (!err.empty()) return err;
    // The kinds: switches and hosts hang below switches, the inside of a
    // host below its host, and a switch has children.
    for (size_t i = 1; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        const Node& p = nodes[static_cast<size_t>(n.parent)];
        if (in_network(n.kind) && p.kind != TopoKind::Switch)
            return shape[i].who + " hangs below " + p.name + ", which is not a switch";
        if (!in_network(n.kind) && p.kind == TopoKind::Switch)
            return shape[i].who + " hangs directly below switch " + p.name;
    }
    for (const Node& n : nodes)
        if (n.kind == TopoKind::Switch && n.children.empty()) return "switch " + n.name + " has no children";
    return "";
}

Status Topology::map_ranks(const std::vector<std::string>& host_of_rank) {
    std::map<std::string, int> by_name;
    for (int h : hosts()) by_name[nodes[static_cast<size_t>(h)].name] = h;
    for (size_t r = 0; r < host_of_rank.size(); ++r) {
        if (by_name.count(host_of_rank[r]) == 0)
            return Status::not_found("rank " + std::to_string(r) + " runs on host '" +
                                     host_of_rank[r] + "', which the topology does not hold");
    }
    for (Node& n : nodes) n.ranks.clear();
    for (size_t r = 0; r < host_of_rank.size(); ++r)
        nodes[static_cast<size_t>(by_name[host_of_rank[r]])].ranks.push_back(static_cast<int>(r));
    return Status::ok();
}


std::string local_host_name() {
    const char* s = std::getenv("SLURMD_NODENAME");
    if (s && *s) return s;
    char buf[HOST_NAME_MAX + 1] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
    return buf;
}

std::string format_rate(double bps) {
    if (bps <= 0) return "unknown";
    const double bits = bps * 8;
    const char* unit = "bit/s";
    double v = bits;
    if (bits >= 1e12) {
        v = bits / 1e12;
        unit = "Tbit/s";
    } else if (bits >= 1e9) {
        v = bits / 1e9;
        unit = "Gbit/s";
    } else if (bits >= 1e6) {
        v = bits / 1e6;
        unit = "Mbit/s";
    } else if (bits >= 1e3) {
        v = bits / 1e3;
        unit = "kbit/s";
    }
    std::ostringstream o;
    o << v << " " << unit;
    return o.str();
}

std::string format_latency(double s) {
    if (s <= 0) return "unknown";
    std::ostringstream o;
    if (s >= 1)
        o << s << " s";
    else if (s >= 1e-3)
        o << s * 1e3 << " ms";
    else if (s >= 1e-6)
        o << s * 1e6 << " us";
    else
        o << s * 1e9 << " ns";
    return o.str();
}

namespace {
std::string trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

// Splits "12.5 Gbit/s" into 12.5 and "Gbit/s"; false if there is no number.
bool number_and_unit(const std::string& text, double* v, std::string* unit) {
    const std::string t = trim(text);
    if (t.empty()) return false;
    char* end = nullptr;
    *v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || !std::isfinite(*v)) return false;
    *unit = trim(std::string(end));
    return true;
}
}  // namespace

Status parse_rate(const std::string& text, double* out) {
    double v = 0;
    std::string unit;
    if (!number_and_unit(text, &v, &unit) || v < 0)
        return Status::parse_error("rate '" + text +
                                   "' is not a non-negative number with an optional unit");
    double scale = 1;
    std::string rest = unit;
    if (!rest.empty()) {
        switch (rest[0]) {
            case 'k':
            case 'K':
                scale = 1e3;
                rest = rest.substr(1);
                break;
            case 'M':
                scale = 1e6;
                rest = rest.substr(1);
                break;
            case 'G':
                scale = 1e9;
                rest = rest.substr(1);
                break;
            case 'T':
                scale = 1e12;
                rest = rest.substr(1);
                break;
            default:
                break;
        }
    }
    if (unit.empty()) {
        *out = v;  // bytes/s
        return Status::ok();
    }
    if (rest == "bit/s" || rest == "b/s" || rest == "bps") {
        *out = v * scale / 8;
    } else if (rest == "B/s" || rest == "Bps") {
        *out = v * scale;
    } else {
        return Status::parse_error(
            "rate '" + text + "' has an unknown unit '" + unit +
            "' (use bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s, B/s, kB/s, MB/s, GB/s, TB/s)");
    }
    return Status::ok();
}

Status parse_latency(const std::string& text, double* out) {
    double v = 0;
    std::string unit;
    if (!number_and_unit(text, &v, &unit) || v < 0)
        return Status::parse_error("latency '" + text +
                                   "' is not a non-negative number with an optional unit");
    if (unit.empty() || unit == "s")
        *out = v;
    else if (unit == "ms")
        *out = v * 1e-3;
    else if (unit == "us" || unit == "\xc2\xb5s")
        *out = v * 1e-6;
    else if (unit == "ns")
        *out = v * 1e-9;
    else
        return Status::parse_error("latency '" + text + "' has an unknown unit '" + unit +
                                   "' (use s, ms, us, ns)");
    return Status::ok();
}

namespace {
std::string class_text(const Topology& t, int c) {
    if (c < 0) return "";
    const LinkClass& lc = t.classes[static_cast<size_t>(c)];
    return lc.name;
}

std::string hex64(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex;
    o.width(16);
    o.fill('0');
    o << v;
    return o.str();
}

std::string node_line(const Topology& t, const Node& n) {
    std::ostringstream o;
    switch (n.kind) {
        case TopoKind::Switch:
            o << n.name << " [switch, level " << n.level << (n.is_virtual ? ", virtual" : "")
              << "]";
            break;
        case TopoKind::Host:
            o << n.name << " [host]";
            break;
        case TopoKind::Package:
            o << "package " << n.index;
            break;
        case TopoKind::Numa:
            o << "numa " << n.index;
            break;
        case TopoKind::Core:
            o << "core " << n.index;
            break;
        case TopoKind::Nic:
            o << "nic " << n.name << " (" << n.device_kind;
            if (!n.pci_busid.empty()) o << ", pci " << n.pci_busid;
            if (n.near_package >= 0) o << ", package " << n.near_package;
            o << ") " << format_rate(n.rate);
            if (!n.rate_source.empty()) o << " [" << n.rate_source << "]";
            break;
        case TopoKind::Gpu:
            o << "gpu " << n.name;
            if (!n.pci_busid.empty()) o << " (pci " << n.pci_busid;
            if (n.near_package >= 0) o << ", package " << n.near_package;
            if (!n.pci_busid.empty()) o << ")";
            break;
    }
    if (n.up_class >= 0) o << "  up: " << class_text(t, n.up_class);
    if (n.oversubscription > 0) o << "  oversubscription " << n.oversubscription << ":1";
    if (!n.ranks.empty()) {
        o << "  ranks";
        for (int r : n.ranks) o << " " << r;
    }
    return o.str();
}
}  // namespace

std::string Topology::to_text() const {
    std::ostringstream o;
    int nsw = 0, nhost = 0;
    for (const Node& n : nodes) {
        nsw += n.kind == TopoKind::Switch;
        nhost += n.kind == TopoKind::Host;
    }
    if (direct)
        o << "topology: a direct network of " << nhost << " host(s) and " << links.size()
          << " link(s), fingerprint " << hex64(network_view(*this).fingerprint()) << "\n";
    else
        o << "topology: " << nsw << " switch(es), " << nhost << " host(s), fingerprint "
          << hex64(network_view(*this).fingerprint()) << "\n";
    o << "link classes:\n";
    for (size_t i = 0; i < classes.size(); ++i) {
        const LinkClass& c = classes[i];
        o << "  " << c.name << ": rate " << format_rate(c.rate) << ", latency "
          << format_latency(c.latency);
        if (c.cross_dc) o << ", cross-datacenter";
        if (!c.source.empty()) o << " [" << c.source << "]";
        if (static_cast<int>(i) == intra_class) o << " (intra-host)";
        o << "\n";
    }
    if (!nodes.empty()) {
        // Depth-first with explicit depths: trees may be deep.
        std::vector<std::pair<int, int>> stack{{0, 0}};
        while (!stack.empty()) {
            auto [n, d] = stack.back();
            stack.pop_back();
            const Node& nd = nodes[static_cast<size_t>(n)];
            o << std::string(static_cast<size_t>(2 * d), ' ') << node_line(*this, nd) << "\n";
            for (auto it = nd.children.rbegin(); it != nd.children.rend(); ++it)
                stack.push_back({*it, d + 1});
        }
    }
    if (!grid.empty()) {
        o << (grid_wrap ? "torus" : "mesh");
        for (size_t d = 0; d < grid.size(); ++d) o << (d ? "x" : " ") << grid[d];
        o << " (host of x, y, z: grid index x + X*(y + Y*z), in tree order)\n";
    }
    if (direct) {
        o << "links (" << links.size() << "):\n";
        for (const GraphLink& l : links) {
            o << "  " << nodes[static_cast<size_t>(l.a)].name << " -- "
              << nodes[static_cast<size_t>(l.b)].name << "  " << class_text(*this, l.cls);
            if (l.units > 1) o << " x" << l.units;
            o << "\n";
        }
    }
    for (const std::string& note : notes) o << "note: " << note << "\n";
    return o.str();
}

std::string Topology::to_json() const {
    using nlohmann::json;
    json j;
    j["fingerprint"] = hex64(network_view(*this).fingerprint());
    j["link_classes"] = json::array();
    for (const LinkClass& c : classes) {
        json jc = {{"name", c.name},
                   {"rate_bytes_per_s", c.rate},
                   {"latency_s", c.latency},
                   {"cross_dc", c.cross_dc}};
        jc["source"] = c.source.empty() ? json(nullptr) : json(c.source);
        j["link_classes"].push_back(jc);
    }
    j["intra_class"] =
        intra_class >= 0 ? json(classes[static_cast<size_t>(intra_class)].name) : json(nullptr);
    j["nodes"] = json::array();
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        json jn = {
            {"id", i}, {"kind", topo_kind_name(n.kind)}, {"name", n.name}, {"parent", n.parent}};
        jn["up_class"] =
            n.up_class >= 0 ? json(classes[static_cast<size_t>(n.up_class)].name) : json(nullptr);
        jn["children"] = n.children;
        if (n.kind == TopoKind::Switch) {
            jn["level"] = n.level;
            jn["virtual"] = n.is_virtual;
            jn["oversubscription"] =
                n.oversubscription > 0 ? json(n.oversubscription) : json(nullptr);
        }
        if (!n.ranks.empty()) jn["ranks"] = n.ranks;
        if (n.index >= 0) jn["index"] = n.index;
        if (n.kind == TopoKind::Nic || n.kind == TopoKind::Gpu) {
            jn["pci_busid"] = n.pci_busid.empty() ? json(nullptr) : json(n.pci_busid);
            jn["near_package"] = n.near_package >= 0 ? json(n.near_package) : json(nullptr);
            jn["device_kind"] = n.device_kind;
        }
        if (n.kind == TopoKind::Nic) {
            jn["rate_bytes_per_s"] = n.rate > 0 ? json(n.rate) : json(nullptr);
            jn["rate_source"] = n.rate_source.empty() ? json(nullptr) : json(n.rate_source);
        }
        j["nodes"].push_back(jn);
    }
    if (direct) {
        j["direct"] = true;
        j["links"] = json::array();
        for (const GraphLink& l : links)
            j["links"].push_back({{"a", l.a},
                                  {"b", l.b},
                                  {"class", classes[static_cast<size_t>(l.cls)].name},
                                  {"units", l.units}});
    }
    if (!grid.empty()) {
        j["grid"] = grid;
        j["grid_wrap"] = grid_wrap;
    }
    j["notes"] = notes;
    return j.dump(2) + "\n";
}

namespace {
std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&':
                o += "&amp;";
                break;
            case '<':
                o += "&lt;";
                break;
            case '>':
                o += "&gt;";
                break;
            case '"':
                o += "&quot;";
                break;
            default:
                o += c;
        }
    }
    return o;
}
}  // namespace

std::string Topology::to_svg() const {
    // Switches and hosts only (the inside of a host would not fit): hosts
    // side by side at the bottom, each switch centred over its children,
    // rows by depth; an edge is labelled with its link class.
    const double box_w = 110, box_h = 34, gap_x = 16, row_h = 90, margin = 20;
    std::vector<double> x(nodes.size(), 0);
    std::vector<int> depth(nodes.size(), 0);
    int max_depth = 0;
    double next_x = margin;
    std::vector<int> net;
    if (!nodes.empty())
        for (int n : subtree(0))
            if (in_network(nodes[static_cast<size_t>(n)].kind)) net.push_back(n);
    for (int n : net) {
        const Node& nd = nodes[static_cast<size_t>(n)];
        if (nd.parent >= 0)
            depth[static_cast<size_t>(n)] = depth[static_cast<size_t>(nd.parent)] + 1;
        max_depth = std::max(max_depth, depth[static_cast<size_t>(n)]);
    }
    // Leaves of the network tree (hosts, or childless switches) in order.
    for (int n : net) {
        const Node& nd = nodes[static_cast<size_t>(n)];
        bool leaf = true;
        for (int c : nd.children) leaf = leaf && !in_network(nodes[static_cast<size_t>(c)].kind);
        if (leaf) {
            x[static_cast<size_t>(n)] = next_x;
            next_x += box_w + gap_x;
        }
    }
    for (auto it = net.rbegin(); it != net.rend(); ++it) {
        const Node& nd = nodes[static_cast<size_t>(*it)];
        double lo = 1e300, hi = -1e300;
        for (int c : nd.children) {
            if (!in_network(nodes[static_cast<size_t>(c)].kind)) continue;
            lo = std::min(lo, x[static_cast<size_t>(c)]);
            hi = std::max(hi, x[static_cast<size_t>(c)]);
        }
        if (hi >= lo) x[static_cast<size_t>(*it)] = (lo + hi) / 2;
    }
    const double width = std::max(next_x - gap_x + margin, 2 * margin + box_w);
    const double height = 2 * margin + max_depth * row_h + box_h;
    std::ostringstream o;
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    o << "<title>genx topology " << hex64(network_view(*this).fingerprint()) << "</title>\n";
    auto y_of = [&](int n) { return margin + depth[static_cast<size_t>(n)] * row_h; };
    for (int n : net) {
        const Node& nd = nodes[static_cast<size_t>(n)];
        if (nd.parent < 0) continue;
        const double x1 = x[static_cast<size_t>(n)] + box_w / 2, y1 = y_of(n);
        const double x2 = x[static_cast<size_t>(nd.parent)] + box_w / 2,
                     y2 = y_of(nd.parent) + box_h;
        const bool xdc = nd.up_class >= 0 && classes[static_cast<size_t>(nd.up_class)].cross_dc;
        o << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
          << "\" stroke=\"" << (xdc ? "#c03030" : "#555") << "\""
          << (xdc ? " stroke-dasharray=\"6,3\"" : "") << "/>\n";
        if (nd.up_class >= 0)
            o << "<text x=\"" << (x1 + x2) / 2 + 3 << "\" y=\"" << (y1 + y2) / 2
              << "\" fill=\"#336\">" << xml_escape(classes[static_cast<size_t>(nd.up_class)].name)
              << "</text>\n";
    }
    for (int n : net) {
        const Node& nd = nodes[static_cast<size_t>(n)];
        const bool host = nd.kind == TopoKind::Host;
        o << "<rect x=\"" << x[static_cast<size_t>(n)] << "\" y=\"" << y_of(n) << "\" width=\""
          << box_w << "\" height=\"" << box_h << "\" rx=\"4\" fill=\""
          << (host ? "#e8f0ff" : "#f4f4f4") << "\" stroke=\"#333\""
          << (nd.is_virtual ? " stroke-dasharray=\"4,2\"" : "") << "/>\n";
        o << "<text x=\"" << x[static_cast<size_t>(n)] + 5 << "\" y=\"" << y_of(n) + 14 << "\">"
          << xml_escape(nd.name) << "</text>\n";
        std::ostringstream sub;
        if (host && !nd.ranks.empty()) {
            sub << "ranks";
            for (size_t i = 0; i < nd.ranks.size() && i < 6; ++i) sub << " " << nd.ranks[i];
            if (nd.ranks.size() > 6) sub << " ...";
        } else if (!host) {
            sub << "level " << nd.level;
            if (nd.oversubscription > 0) sub << ", " << nd.oversubscription << ":1";
        }
        o << "<text x=\"" << x[static_cast<size_t>(n)] + 5 << "\" y=\"" << y_of(n) + 28
          << "\" fill=\"#555\">" << xml_escape(sub.str()) << "</text>\n";
    }
    o << "</svg>\n";
    return o.str();
}

namespace {

// The view of the network nodes `keep` marks (a kept node's parent is kept
// too), host h holding ranks_of[h].
Status build_view(const Topology& topo, const std::vector<std::vector<int>>& ranks_of,
                  const std::vector<char>& keep, TopologyView* out) {
    const std::vector<int> order = topo.subtree(0);
    for (const LinkClass& c : topo.classes)
        out->link_classes.push_back({c.name, c.rate, c.latency, c.cross_dc});
    out->intra_class = topo.intra_class;
    std::vector<int> index(topo.nodes.size(), -1);
    for (int n : order) {
        if (!keep[static_cast<size_t>(n)]) continue;
        const Node& src = topo.nodes[static_cast<size_t>(n)];
        TopoNode dst;
        dst.name = src.name;
        dst.parent = src.parent >= 0 ? index[static_cast<size_t>(src.parent)] : -1;
        dst.up_class = src.up_class;
        dst.oversubscription = src.oversubscription;
        dst.ranks = ranks_of[static_cast<size_t>(n)];
        if (src.kind == TopoKind::Host) {
            int nics = 0;
            for (int c : src.children)
                nics += topo.nodes[static_cast<size_t>(c)].kind == TopoKind::Nic;
            dst.nics = nics;
        }
        index[static_cast<size_t>(n)] = static_cast<int>(out->nodes.size());
        if (dst.parent >= 0)
            out->nodes[static_cast<size_t>(dst.parent)].children.push_back(
                index[static_cast<size_t>(n)]);
        out->nodes.push_back(dst);
    }
    out->direct = topo.direct;
    for (const GraphLink& l : topo.links) {
        const int a = index[static_cast<size_t>(l.a)], b = index[static_cast<size_t>(l.b)];
        if (a >= 0 && b >= 0) out->links.push_back({a, b, l.cls, l.units});
    }
    // The grid only while every cell holds ranks: ring2d's rings need them all.
    bool whole = !topo.grid.empty();
    for (int h : topo.grid_host) whole = whole && index[static_cast<size_t>(h)] >= 0;
    if (whole) {
        out->grid = topo.grid;
        out->grid_wrap = topo.grid_wrap;
        for (int h : topo.grid_host) out->grid_host.push_back(index[static_cast<size_t>(h)]);
    }
    const std::string vbad = out->validate();
    if (!vbad.empty())
        return Status::internal("the view built from the topology is not well formed: " + vbad);
    return Status::ok();
}

}  // namespace

Status to_view(const Topology& topo, const std::vector<std::string>& host_of_rank,
               TopologyView* out) {
    *out = TopologyView();
    if (topo.empty()) return Status::invalid("the topology is empty");
    const std::string bad = topo.validate();
    if (!bad.empty()) return Status::invalid("the topology is not well formed: " + bad);
    std::map<std::string, int> host_by_name;
    for (int h : topo.hosts()) host_by_name[topo.nodes[static_cast<size_t>(h)].name] = h;
    std::vector<std::vector<int>> ranks_of(topo.nodes.size());
    for (size_t r = 0; r < host_of_rank.size(); ++r) {
        auto it = host_by_name.find(host_of_rank[r]);
        if (it == host_by_name.end())
            return Status::not_found("rank " + std::to_string(r) + " runs on host '" +
                                     host_of_rank[r] + "', which the topology does not hold");
        ranks_of[static_cast<size_t>(it->second)].push_back(static_cast<int>(r));
    }
    // Keep a network node when a rank lies below it.
    const std::vector<int> order = topo.subtree(0);
    std::vector<char> keep(topo.nodes.size(), 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Node& n = topo.nodes[static_cast<size_t>(*it)];
        if (!in_network(n.kind)) continue;
        if (n.kind == TopoKind::Host)
            keep[static_cast<size_t>(*it)] = !ranks_of[static_cast<size_t>(*it)].empty();
        if (keep[static_cast<size_t>(*it)] && n.parent >= 0)
            keep[static_cast<size_t>(n.parent)] = 1;
    }
    if (!keep[0]) return Status::invalid("no rank was given, so the view would be empty");
    return build_view(topo, ranks_of, keep, out);
}

TopologyView network_view(const Topology& topo) {
    TopologyView view;
    if (topo.empty() || !topo.validate().empty()) return view;
    std::vector<std::vector<int>> ranks_of(topo.nodes.size());
    std::vector<char> keep(topo.nodes.size(), 0);
    for (size_t i = 0; i < topo.nodes.size(); ++i) {
        keep[i] = in_network(topo.nodes[i].kind);
        ranks_of[i] = topo.nodes[i].ranks;
    }
    // A topology whose ranks are not 0..n-1 once each (a partial
    // placement) still has a view of its shape: the ranks are left out.
    if (!build_view(topo, ranks_of, keep, &view)) {
        for (auto& r : ranks_of) r.clear();
        view = TopologyView();
        (void)build_view(topo, ranks_of, keep, &view);
    }
    return view;
}

}  // namespace genx
