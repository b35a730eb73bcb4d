// topology.conf and its JSON overlay, parsed into the Topology model.  The
// rules and their reasons are in slurm_topology.hpp; the overlay's schema
// is in docs/topology.md.
#include "topology/slurm_topology.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/text_util.hpp"

namespace genx {

Status read_text_file(const std::string& path, std::string* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::io_error(path + ": cannot be read");
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return Status::ok();
}

namespace {

// A hostlist of more names than this is a mistake (node[0-99999999]),
// not a cluster.
constexpr size_t kMaxNames = 1000000;

// Expands one bracket group's contents ("01-16,20") into strings.
Status expand_ranges(const std::string& inner, const std::string& expr,
                     std::vector<std::string>* out) {
    std::stringstream ss(inner);
    std::string item;
    if (inner.empty())
        return Status::parse_error("hostlist '" + expr + "' has an empty bracket []");
    while (std::getline(ss, item, ',')) {
        item = trim(item);
        const size_t dash = item.find('-');
        const std::string lo_s = item.substr(0, dash);
        const std::string hi_s = dash == std::string::npos ? lo_s : item.substr(dash + 1);
        auto digits = [](const std::string& s) {
            return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c));
            });
        };
        if (!digits(lo_s) || !digits(hi_s))
            return Status::parse_error("hostlist '" + expr + "': '" + item +
                                       "' is not a number or a range lo-hi");
        const long long lo = std::stoll(lo_s), hi = std::stoll(hi_s);
        if (hi < lo)
            return Status::parse_error("hostlist '" + expr + "': range '" + item +
                                       "' runs backwards");
        if (static_cast<size_t>(hi - lo) >= kMaxNames)
            return Status::parse_error("hostlist '" + expr + "': range '" + item +
                                       "' is too large");
        // Slurm keeps the width of a zero-padded lower bound: node[01-16].
        const size_t width = lo_s.size() > 1 && lo_s[0] == '0' ? lo_s.size() : 0;
        for (long long v = lo; v <= hi; ++v) {
            std::string s = std::to_string(v);
            if (s.size() < width) s.insert(0, width - s.size(), '0');
            out->push_back(s);
        }
    }
    return Status::ok();
}

// Expands one comma-free (outside brackets) term: prefix[..]mid[..]suffix.
Status expand_term(const std::string& term, const std::string& expr,
                   std::vector<std::string>* out) {
    std::vector<std::string> acc{""};
    size_t i = 0;
    while (i < term.size()) {
        if (term[i] == '[') {
            const size_t close = term.find(']', i);
            if (close == std::string::npos)
                return Status::parse_error("hostlist '" + expr + "' has an unclosed '['");
            std::vector<std::string> vals;
            GENX_RETURN_IF_ERROR(expand_ranges(term.substr(i + 1, close - i - 1), expr, &vals));
            if (acc.size() * vals.size() > kMaxNames)
                return Status::parse_error("hostlist '" + expr + "' expands to too many names");
            std::vector<std::string> next;
            next.reserve(acc.size() * vals.size());
            for (const std::string& a : acc)
                for (const std::string& v : vals) next.push_back(a + v);
            acc.swap(next);
            i = close + 1;
        } else if (term[i] == ']') {
            return Status::parse_error("hostlist '" + expr + "' has a ']' without '['");
        } else {
            const size_t next = term.find_first_of("[]", i);
            const std::string lit =
                term.substr(i, next == std::string::npos ? std::string::npos : next - i);
            for (std::string& a : acc) a += lit;
            i = next == std::string::npos ? term.size() : next;
        }
    }
    out->insert(out->end(), acc.begin(), acc.end());
    return Status::ok();
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

Status expand_hostlist(const std::string& expr, std::vector<std::string>* out) {
    out->clear();
    std::string term;
    int depth = 0;
    auto flush = [&]() -> Status {
        const std::string t = trim(term);
        term.clear();
        if (t.empty()) return Status::parse_error("hostlist '" + expr + "' has an empty name");
        return expand_term(t, expr, out);
    };
    for (char c : expr) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (depth < 0) return Status::parse_error("hostlist '" + expr + "' has a ']' without '['");
        if (depth > 1) return Status::parse_error("hostlist '" + expr + "' nests brackets");
        if (depth == 0 && (c == ',' || std::isspace(static_cast<unsigned char>(c)))) {
            if (!trim(term).empty() || c == ',') GENX_RETURN_IF_ERROR(flush());
            continue;
        }
        term += c;
    }
    if (depth != 0) return Status::parse_error("hostlist '" + expr + "' has an unclosed '['");
    GENX_RETURN_IF_ERROR(flush());
    if (out->size() > kMaxNames)
        return Status::parse_error("hostlist '" + expr + "' expands to too many names");
    return Status::ok();
}

Status parse_slurm_topology(const std::string& text, const std::string& file,
                            std::vector<SlurmSwitch>* out) {
    out->clear();
    std::istringstream in(text);
    std::string raw;
    int lineno = 0;
    while (std::getline(in, raw)) {
        ++lineno;
        const int first = lineno;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();  // CRLF files
        // A backslash at the end of a line continues it on the next, as in
        // every Slurm configuration file; errors name the first line.
        while (!raw.empty() && raw.back() == '\\') {
            raw.pop_back();
            std::string more;
            if (!std::getline(in, more)) break;
            ++lineno;
            if (!more.empty() && more.back() == '\r') more.pop_back();
            raw += " " + more;
        }
        const std::string where = file + ":" + std::to_string(first) + ": ";
        const size_t hash = raw.find('#');
        const std::string line = trim(hash == std::string::npos ? raw : raw.substr(0, hash));
        if (line.empty()) continue;
        SlurmSwitch sw;
        sw.line = first;
        bool has_name = false, has_switches = false, has_nodes = false;
        std::string switches_expr, nodes_expr;
        std::istringstream tokens(line);
        std::string tok;
        std::set<std::string> seen;
        while (tokens >> tok) {
            const size_t eq = tok.find('=');
            if (eq == std::string::npos || eq == 0)
                return Status::parse_error(where + "'" + tok + "' is not Key=Value");
            const std::string key = tok.substr(0, eq), value = tok.substr(eq + 1);
            const std::string k = lower(key);
            if (!seen.insert(k).second)
                return Status::parse_error(where + key + "= is given twice");
            if (k == "switchname") {
                if (value.empty()) return Status::parse_error(where + "SwitchName= is empty");
                if (value.find_first_of("[],") != std::string::npos)
                    return Status::parse_error(where + "SwitchName=" + value +
                                               ": one switch a line (a name, not a hostlist)");
                if (value.size() > 64)
                    return Status::parse_error(where + "SwitchName=" + value +
                                               ": longer than Slurm's 64 characters");
                sw.name = value;
                has_name = true;
            } else if (k == "switches") {
                has_switches = true;
                switches_expr = value;
            } else if (k == "nodes") {
                has_nodes = true;
                nodes_expr = value;
            } else if (k == "linkspeed") {
                // Accepted, not used: Slurm documents its units as arbitrary.
                if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) {
                        return std::isdigit(static_cast<unsigned char>(c));
                    }))
                    return Status::parse_error(where + "LinkSpeed=" + value +
                                               " is not a whole number");
            } else {
                return Status::parse_error(
                    where + "unknown key '" + key +
                    "' (topology.conf's tree form has SwitchName, Switches, Nodes, "
                    "LinkSpeed)");
            }
        }
        if (!has_name) return Status::parse_error(where + "the line has no SwitchName=");
        if (has_switches && has_nodes)
            return Status::parse_error(
                where + "SwitchName=" + sw.name +
                " has both Switches= and Nodes= (a switch holds switches or nodes, "
                "not both)");
        if (!has_switches && !has_nodes)
            return Status::parse_error(where + "SwitchName=" + sw.name +
                                       " has no children: it needs Switches= or Nodes=");
        const std::string field = has_switches ? "Switches=" : "Nodes=";
        std::vector<std::string>* names = has_switches ? &sw.switches : &sw.nodes;
        const Status s = expand_hostlist(has_switches ? switches_expr : nodes_expr, names);
        if (!s.is_ok()) return Status::parse_error(where + field + ": " + s.message());
        out->push_back(sw);
    }
    return Status::ok();
}

Status build_slurm_topology(const std::vector<SlurmSwitch>& sws, const std::string& file,
                            Topology* out) {
    *out = Topology();
    if (sws.empty()) return Status::parse_error(file + ": no SwitchName= line (an empty topology)");
    auto at = [&](int line) { return file + ":" + std::to_string(line) + ": "; };
    std::map<std::string, int> by_name;  // switch name -> index in sws
    for (size_t i = 0; i < sws.size(); ++i) {
        auto [it, fresh] = by_name.emplace(sws[i].name, static_cast<int>(i));
        if (!fresh)
            return Status::parse_error(at(sws[i].line) + "SwitchName=" + sws[i].name +
                                       " is already defined on line " +
                                       std::to_string(sws[static_cast<size_t>(it->second)].line));
    }
    std::vector<int> parent(sws.size(), -1);
    std::map<std::string, int> node_parent;  // host -> index in sws
    for (size_t i = 0; i < sws.size(); ++i) {
        const SlurmSwitch& s = sws[i];
        for (const std::string& c : s.switches) {
            auto it = by_name.find(c);
            if (it == by_name.end())
                return Status::parse_error(at(s.line) + "Switches=: switch '" + c +
                                           "' is not defined (no SwitchName=" + c + " line)");
            const size_t ci = static_cast<size_t>(it->second);
            if (ci == i)
                return Status::parse_error(at(s.line) + "Switches=: switch " + c +
                                           " lists itself (a cycle)");
            if (parent[ci] >= 0)
                return Status::parse_error(
                    at(s.line) + "Switches=: switch " + c + " is already under switch " +
                    sws[static_cast<size_t>(parent[ci])].name + " (line " +
                    std::to_string(sws[static_cast<size_t>(parent[ci])].line) +
                    "); a tree gives each switch one parent");
            parent[ci] = static_cast<int>(i);
        }
        for (const std::string& n : s.nodes) {
            if (by_name.count(n))
                return Status::parse_error(at(s.line) + "Nodes=: '" + n +
                                           "' is also a switch name");
            auto [it, fresh] = node_parent.emplace(n, static_cast<int>(i));
            if (!fresh) {
                const SlurmSwitch& other = sws[static_cast<size_t>(it->second)];
                if (&other == &s)
                    return Status::parse_error(at(s.line) + "Nodes=: node " + n +
                                               " is listed twice");
                return Status::parse_error(
                    at(s.line) + "Nodes=: node " + n + " is already under switch " + other.name +
                    " (line " + std::to_string(other.line) + "); genx needs one switch per node");
            }
        }
    }
    // Every switch has at most one parent now, so a cycle is a loop of
    // parents that never reaches a root.
    for (size_t i = 0; i < sws.size(); ++i) {
        std::vector<int> path{static_cast<int>(i)};
        std::set<int> on_path{static_cast<int>(i)};
        int p = parent[i];
        while (p >= 0) {
            if (on_path.count(p)) {
                // path runs child to parent; reversed, each switch lists
                // the next one, and p (which lists path.back()) closes it.
                std::string loop;
                for (auto it = path.rbegin(); it != path.rend(); ++it) {
                    loop += sws[static_cast<size_t>(*it)].name + ", ";
                    if (*it == p) break;
                }
                loop += sws[static_cast<size_t>(path.back())].name;
                return Status::parse_error(
                    at(sws[static_cast<size_t>(p)].line) +
                    "Switches=: the switches form a cycle, not a tree (each lists "
                    "the next: " +
                    loop + ")");
            }
            path.push_back(p);
            on_path.insert(p);
            p = parent[static_cast<size_t>(p)];
        }
    }
    std::vector<int> roots;
    for (size_t i = 0; i < sws.size(); ++i)
        if (parent[i] < 0) roots.push_back(static_cast<int>(i));

    // Levels, bottom-up: 1 for a switch of nodes, else 1 + its highest child.
    std::vector<int> level(sws.size(), 0);
    std::function<int(int)> lvl = [&](int i) -> int {
        int& l = level[static_cast<size_t>(i)];
        if (l > 0) return l;
        int best = 1;
        for (const std::string& c : sws[static_cast<size_t>(i)].switches)
            best = std::max(best, 1 + lvl(by_name[c]));
        return l = best;
    };
    int top = 0;
    for (size_t i = 0; i < sws.size(); ++i) top = std::max(top, lvl(static_cast<int>(i)));
    auto class_for = [&](int parent_level) {
        return parent_level == 1 ? std::string("leaf") : "l" + std::to_string(parent_level);
    };

    Topology& t = *out;
    int root_node = -1;
    if (roots.size() > 1) {
        root_node = t.add_node(TopoKind::Switch, "genx-virtual-root", -1);
        t.nodes[static_cast<size_t>(root_node)].is_virtual = true;
        std::string names;
        for (int r : roots) names += (names.empty() ? "" : ", ") + sws[static_cast<size_t>(r)].name;
        t.notes.push_back(
            file + ": " + std::to_string(roots.size()) + " root switches (" + names +
            "); genx added a virtual root 'genx-virtual-root' above them, with link class "
            "'virtual' (rate unknown: the file does not say how the roots connect)");
    }
    // Depth-first, in file order of the children.
    std::vector<std::pair<int, int>> stack;  // (switch index, parent node)
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, root_node});
    while (!stack.empty()) {
        auto [si, pn] = stack.back();
        stack.pop_back();
        const SlurmSwitch& s = sws[static_cast<size_t>(si)];
        const int up =
            pn < 0 ? -1
                   : (t.nodes[static_cast<size_t>(pn)].is_virtual
                          ? t.class_index("virtual")
                          : t.class_index(class_for(
                                level[static_cast<size_t>(parent[static_cast<size_t>(si)])])));
        const int me = t.add_node(TopoKind::Switch, s.name, pn, up);
        for (const std::string& n : s.nodes)
            t.add_node(TopoKind::Host, n, me, t.class_index(class_for(1)));
        for (auto it = s.switches.rbegin(); it != s.switches.rend(); ++it)
            stack.push_back({by_name[*it], me});
    }
    t.compute_levels();
    if (roots.size() > 1) t.nodes[0].level = top + 1;
    const std::string bad = t.validate();
    if (!bad.empty())
        return Status::internal(file + ": the tree built from the file is not well formed: " + bad);
    return Status::ok();
}

Status load_slurm_topology(const std::string& path, Topology* out) {
    std::string text;
    GENX_RETURN_IF_ERROR(read_text_file(path, &text));
    std::vector<SlurmSwitch> sws;
    GENX_RETURN_IF_ERROR(parse_slurm_topology(text, path, &sws));
    return build_slurm_topology(sws, path, out);
}

// ------------------------------------------------------------------ overlay

namespace {
using nlohmann::json;

// One link description: {"rate", "latency", "cross_dc", "class"}.
struct LinkSpec {
    double rate = 0, latency = 0;
    bool has_rate = false, has_latency = false, cross_dc = false;
    std::string cls;
};

Status read_link(const json& j, const std::string& where, bool allow_class, LinkSpec* out) {
    if (!j.is_object())
        return Status::parse_error(where + ": must be an object {\"rate\": ..., \"latency\": ...}");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        const std::string field = where + "." + k;
        if (k == "rate" || k == "latency") {
            double x = 0;
            if (v.is_number()) {
                x = v.get<double>();
                if (x < 0) return Status::parse_error(field + ": must not be negative");
            } else if (v.is_string()) {
                const Status s = k == "rate" ? parse_rate(v.get<std::string>(), &x)
                                             : parse_latency(v.get<std::string>(), &x);
                if (!s.is_ok()) return Status::parse_error(field + ": " + s.message());
            } else {
                return Status::parse_error(field + ": must be a number or a string with a unit");
            }
            if (k == "rate") {
                out->rate = x;
                out->has_rate = true;
            } else {
                out->latency = x;
                out->has_latency = true;
            }
        } else if (k == "cross_dc") {
            if (!v.is_boolean()) return Status::parse_error(field + ": must be true or false");
            out->cross_dc = v.get<bool>();
        } else if (k == "class" && allow_class) {
            if (!v.is_string() || v.get<std::string>().empty())
                return Status::parse_error(field + ": must be a non-empty string");
            out->cls = v.get<std::string>();
        } else {
            return Status::parse_error(field + ": unknown key (known: rate, latency, cross_dc" +
                                       std::string(allow_class ? ", class" : "") + ")");
        }
    }
    return Status::ok();
}

void set_class(Topology* t, int c, const LinkSpec& spec, const std::string& source) {
    LinkClass& lc = t->classes[static_cast<size_t>(c)];
    if (spec.has_rate) lc.rate = spec.rate;
    if (spec.has_latency) lc.latency = spec.latency;
    lc.cross_dc = lc.cross_dc || spec.cross_dc;
    lc.source = source;
}

int line_of_offset(const std::string& text, size_t off) {
    return 1 +
           static_cast<int>(std::count(
               text.begin(), text.begin() + static_cast<long>(std::min(off, text.size())), '\n'));
}
}  // namespace

Status apply_overlay(const std::string& text, const std::string& file, Topology* t) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return Status::parse_error(
            file + ":" + std::to_string(line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0)) +
            ": not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) return Status::parse_error(file + ": the overlay must be a JSON object");
    if (!j.contains("version") || j["version"] != 1)
        return Status::parse_error(
            file + ": \"version\": must be 1 (the overlay schema of docs/topology.md)");
    const std::string source = "overlay " + file;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k != "version" && k != "levels" && k != "switches" && k != "hosts" && k != "intra_host")
            return Status::parse_error(
                file + ": \"" + k +
                "\": unknown key (known: version, levels, switches, hosts, intra_host)");
    }
    const std::string pre = file + ": ";
    // Order: levels first, then named switches and hosts, which override
    // their level for the links they name.
    if (j.contains("levels")) {
        if (!j["levels"].is_object())
            return Status::parse_error(pre + "levels: must be an object keyed by level");
        int top = 0;
        for (const Node& n : t->nodes)
            if (n.kind == TopoKind::Switch) top = std::max(top, n.level);
        for (auto it = j["levels"].begin(); it != j["levels"].end(); ++it) {
            const std::string where = pre + "levels." + it.key();
            int lvl = 0;
            try {
                size_t used = 0;
                lvl = std::stoi(it.key(), &used);
                if (used != it.key().size()) lvl = 0;
            } catch (...) {
                lvl = 0;
            }
            if (lvl < 1)
                return Status::parse_error(
                    where + ": a level is a whole number from 1 (host to leaf switch)");
            if (lvl > top)
                return Status::parse_error(where + ": the topology's highest switch level is " +
                                           std::to_string(top));
            LinkSpec spec;
            GENX_RETURN_IF_ERROR(read_link(it.value(), where, false, &spec));
            const std::string name = lvl == 1 ? "leaf" : "l" + std::to_string(lvl);
            bool used = false;
            for (size_t c = 0; c < t->classes.size(); ++c)
                used = used || t->classes[c].name == name;
            if (!used)
                return Status::parse_error(where + ": no link enters a switch of level " +
                                           std::to_string(lvl));
            set_class(t, t->class_index(name), spec, source);
        }
    }
    auto named = [&](const char* section, TopoKind kind) -> Status {
        if (!j.contains(section)) return Status::ok();
        if (!j[section].is_object())
            return Status::parse_error(pre + section + ": must be an object keyed by hostlist");
        for (auto it = j[section].begin(); it != j[section].end(); ++it) {
            const std::string where = pre + section + "." + it.key();
            std::vector<std::string> names;
            const Status hs = expand_hostlist(it.key(), &names);
            if (!hs.is_ok()) return Status::parse_error(where + ": " + hs.message());
            LinkSpec spec;
            GENX_RETURN_IF_ERROR(read_link(it.value(), where, true, &spec));
            const int c = t->class_index(spec.cls.empty() ? it.key() : spec.cls);
            set_class(t, c, spec, source);
            for (const std::string& n : names) {
                const int id = t->find(n);
                if (id < 0 || t->nodes[static_cast<size_t>(id)].kind != kind)
                    return Status::parse_error(where + ": no " + topo_kind_name(kind) + " named '" +
                                               n + "' in the topology");
                if (t->nodes[static_cast<size_t>(id)].parent < 0)
                    return Status::parse_error(where + ": '" + n +
                                               "' is the root and has no uplink");
                t->nodes[static_cast<size_t>(id)].up_class = c;
            }
        }
        return Status::ok();
    };
    GENX_RETURN_IF_ERROR(named("switches", TopoKind::Switch));
    GENX_RETURN_IF_ERROR(named("hosts", TopoKind::Host));
    if (j.contains("intra_host")) {
        LinkSpec spec;
        GENX_RETURN_IF_ERROR(read_link(j["intra_host"], pre + "intra_host", false, &spec));
        t->intra_class = t->class_index("intra");
        set_class(t, t->intra_class, spec, source);
    }
    // Classes the overlay replaced for every link may now be unused; drop
    // them so that printing and fingerprints show only what is used.
    std::vector<int> used(t->classes.size(), 0);
    for (const Node& n : t->nodes)
        if (n.up_class >= 0) used[static_cast<size_t>(n.up_class)] = 1;
    if (t->intra_class >= 0) used[static_cast<size_t>(t->intra_class)] = 1;
    std::vector<int> remap(t->classes.size(), -1);
    std::vector<LinkClass> kept;
    for (size_t c = 0; c < t->classes.size(); ++c)
        if (used[c]) {
            remap[c] = static_cast<int>(kept.size());
            kept.push_back(t->classes[c]);
        }
    t->classes = kept;
    for (Node& n : t->nodes)
        if (n.up_class >= 0) n.up_class = remap[static_cast<size_t>(n.up_class)];
    if (t->intra_class >= 0) t->intra_class = remap[static_cast<size_t>(t->intra_class)];
    t->compute_oversubscription();
    return Status::ok();
}

Status build_from_topology_addrs(const std::vector<std::string>& addrs,
                                 const std::vector<std::string>& patterns, Topology* out) {
    *out = Topology();
    if (addrs.empty()) return Status::invalid("no SLURM_TOPOLOGY_ADDR was given");
    if (!patterns.empty() && patterns.size() != addrs.size())
        return Status::invalid("SLURM_TOPOLOGY_ADDR_PATTERN: " + std::to_string(patterns.size()) +
                               " patterns for " + std::to_string(addrs.size()) + " addresses");
    auto split = [](const std::string& s) {
        std::vector<std::string> parts;
        std::string cur;
        for (char c : s) {
            if (c == '.') {
                parts.push_back(cur);
                cur.clear();
            } else {
                cur += c;
            }
        }
        parts.push_back(cur);
        return parts;
    };
    // Parent of every switch and node by name, where it was first seen.
    std::map<std::string, std::pair<std::string, size_t>> parent_of;
    std::vector<std::string> order;  // switches and nodes in first-seen order
    std::set<std::string> nodes, switches, ranged;
    std::vector<std::string> tops;
    for (size_t i = 0; i < addrs.size(); ++i) {
        const std::string who = "SLURM_TOPOLOGY_ADDR '" + addrs[i] + "'";
        const std::vector<std::string> parts = split(addrs[i]);
        for (const std::string& p : parts)
            if (trim(p).empty() || p != trim(p))
                return Status::parse_error(who + " has an empty or blank component");
        if (!patterns.empty()) {
            const std::vector<std::string> kinds = split(patterns[i]);
            bool ok = kinds.size() == parts.size() && kinds.back() == "node";
            for (size_t k = 0; ok && k + 1 < kinds.size(); ++k) ok = kinds[k] == "switch";
            if (!ok)
                return Status::parse_error(who + ": pattern '" + patterns[i] +
                                           "' is not switch.….node with one kind per component");
        }
        if (parts.size() < 2)
            return Status::parse_error(who +
                                       " names no switch (topology/tree gives switch.….node)");
        for (size_t k = 0; k < parts.size(); ++k) {
            const std::string& name = parts[k];
            const bool is_node = k + 1 == parts.size();
            if ((is_node && switches.count(name)) || (!is_node && nodes.count(name)))
                return Status::parse_error(who + ": '" + name + "' is both a switch and a node");
            (is_node ? nodes : switches).insert(name);
            if (!is_node && name.find('[') != std::string::npos) ranged.insert(name);
            const std::string parent = k == 0 ? std::string() : parts[k - 1];
            auto [it, fresh] = parent_of.emplace(name, std::make_pair(parent, i));
            if (fresh) {
                order.push_back(name);
                if (k == 0) tops.push_back(name);
            } else if (it->second.first != parent) {
                const std::string& other = addrs[it->second.second];
                return Status::parse_error(
                    who + ": '" + name + "' is under '" + parent + "' here but under '" +
                    it->second.first + "' in '" + other +
                    (is_node ? "' (a node with two addresses)" : "' (not a tree)"));
            }
        }
    }
    Topology& t = *out;
    std::map<std::string, int> id;
    int root = -1;
    if (tops.size() > 1) {
        root = t.add_node(TopoKind::Switch, "genx-virtual-root", -1);
        t.nodes[static_cast<size_t>(root)].is_virtual = true;
        t.notes.push_back(
            "SLURM_TOPOLOGY_ADDR: " + std::to_string(tops.size()) + " top switches (" + join(tops) +
            "); genx added a virtual root 'genx-virtual-root' above them, with link class "
            "'virtual' (rate unknown)");
    }
    // Children of every name, in first-seen order; then the tree is added
    // depth-first from the top so that node 0 is the root.
    std::map<std::string, int> fid;
    std::vector<std::string> names;
    for (const std::string& n : order) {
        fid[n] = static_cast<int>(names.size());
        names.push_back(n);
    }
    std::vector<std::vector<std::string>> kids(names.size());
    for (const std::string& n : order)
        if (!parent_of[n].first.empty())
            kids[static_cast<size_t>(fid[parent_of[n].first])].push_back(n);
    std::vector<std::pair<std::string, int>> stack;
    for (auto it = tops.rbegin(); it != tops.rend(); ++it) stack.push_back({*it, root});
    while (!stack.empty()) {
        auto [n, pn] = stack.back();
        stack.pop_back();
        id[n] = t.add_node(nodes.count(n) ? TopoKind::Host : TopoKind::Switch, n, pn);
        const auto& ch = kids[static_cast<size_t>(fid[n])];
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, id[n]});
    }
    t.compute_levels();
    int top = 0;
    for (const Node& n : t.nodes)
        if (n.kind == TopoKind::Switch && !n.is_virtual) top = std::max(top, n.level);
    if (root >= 0) t.nodes[static_cast<size_t>(root)].level = top + 1;
    for (Node& n : t.nodes) {
        if (n.parent < 0) continue;
        const Node& p = t.nodes[static_cast<size_t>(n.parent)];
        const std::string cls = p.is_virtual   ? "virtual"
                                : p.level == 1 ? "leaf"
                                               : "l" + std::to_string(p.level);
        n.up_class = t.class_index(cls);
    }
    for (const std::string& r : ranged)
        t.notes.push_back("SLURM_TOPOLOGY_ADDR: '" + r +
                          "' names several switches at one level; genx treats them as one switch");
    const std::string bad = t.validate();
    if (!bad.empty())
        return Status::parse_error("SLURM_TOPOLOGY_ADDR: the tree is not well formed: " + bad);
    return Status::ok();
}

Status load_topology(const std::string& conf, const std::string& overlay, Topology* out) {
    GENX_RETURN_IF_ERROR(load_slurm_topology(conf, out));
    if (!overlay.empty()) {
        const Status s = load_overlay(overlay, out);
        if (!s.is_ok()) {
            *out = Topology();
            return s;
        }
    }
    return Status::ok();
}

Status load_overlay(const std::string& path, Topology* topo) {
    std::string text;
    GENX_RETURN_IF_ERROR(read_text_file(path, &text));
    return apply_overlay(text, path, topo);
}

}  // namespace genx
