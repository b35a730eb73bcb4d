// Topology inference from measurements (design in probe.hpp).
#include "topology/probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

namespace genx {

namespace {

int find(std::vector<int>& p, int x) {
    while (p[static_cast<size_t>(x)] != x) x = p[static_cast<size_t>(x)] = p[static_cast<size_t>(p[static_cast<size_t>(x)])];
    return x;
}

// Components of hosts joined by RTT <= t, as sorted member lists.
std::vector<std::vector<int>> components(int n, const std::vector<double>& d, double t) {
    std::vector<int> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b)
            if (d[static_cast<size_t>(a) * static_cast<size_t>(n) + static_cast<size_t>(b)] <= t)
                p[static_cast<size_t>(find(p, a))] = find(p, b);
    std::map<int, std::vector<int>> by_root;
    for (int h = 0; h < n; ++h) by_root[find(p, h)].push_back(h);
    std::vector<std::vector<int>> out;
    for (auto& kv : by_root) out.push_back(std::move(kv.second));
    std::sort(out.begin(), out.end());
    return out;
}

std::string rate_text(double bytes_per_s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f Mbit/s", bytes_per_s * 8 / 1e6);
    return b;
}

std::string latency_text(double s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f us", s * 1e6);
    return b;
}

}  // namespace

Status group_by_rtt(const std::vector<std::string>& hosts, const std::vector<double>& rtt,
                    const ProbeOptions& options, ProbeTree* out) {
    const int n = static_cast<int>(hosts.size());
    if (n < 1) return Status::invalid("probe: no hosts");
    if (rtt.size() != static_cast<size_t>(n) * static_cast<size_t>(n))
        return Status::invalid("probe: " + std::to_string(rtt.size()) + " round-trip times for " +
                               std::to_string(n) + " hosts (expected " + std::to_string(n * n) + ")");
    // Symmetric distances: the smaller direction.
    std::vector<double> d(rtt.size(), 0);
    std::vector<double> values;
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
            if (a == b) continue;
            const double x = std::min(rtt[static_cast<size_t>(a) * static_cast<size_t>(n) + static_cast<size_t>(b)],
                                      rtt[static_cast<size_t>(b) * static_cast<size_t>(n) + static_cast<size_t>(a)]);
            if (!(x > 0) || !std::isfinite(x))
                return Status::invalid("probe: round-trip time between " + hosts[static_cast<size_t>(a)] +
                                       " and " + hosts[static_cast<size_t>(b)] + " is not a positive number");
            d[static_cast<size_t>(a) * static_cast<size_t>(n) + static_cast<size_t>(b)] = x;
            if (a < b) values.push_back(x);
        }
    std::sort(values.begin(), values.end());
    // Level tops: the value before each break (the last level is the root's).
    std::vector<double> tops;
    for (size_t k = 0; k + 1 < values.size(); ++k)
        if (values[k + 1] > values[k] * (1 + options.rel_gap) &&
            values[k + 1] - values[k] > options.abs_gap)
            tops.push_back(values[k]);
    ProbeTree t;
    t.hosts = hosts;
    t.level_rtt = tops;
    if (!values.empty()) t.level_rtt.push_back(values.back());
    ProbeSwitch root;
    root.name = "probe-root";
    root.members.resize(static_cast<size_t>(n));
    std::iota(root.members.begin(), root.members.end(), 0);
    t.switches.push_back(root);
    // From the top level down: each component that is not its parent's
    // whole membership becomes a switch under the one holding it.
    std::vector<int> owner(static_cast<size_t>(n), 0);  // lowest switch holding each host so far
    for (size_t li = tops.size(); li-- > 0;) {
        for (const std::vector<int>& c : components(n, d, tops[li])) {
            if (c.size() < 2) continue;
            const int parent = owner[static_cast<size_t>(c[0])];
            if (c.size() == t.switches[static_cast<size_t>(parent)].members.size()) continue;
            ProbeSwitch s;
            s.name = "probe-s" + std::to_string(t.switches.size());
            s.parent = parent;
            s.members = c;
            const int id = static_cast<int>(t.switches.size());
            t.switches.push_back(s);
            for (int h : c) owner[static_cast<size_t>(h)] = id;
        }
    }
    // A switch holds either switches or hosts (topology.conf's Switches= or
    // Nodes=): a host left on a switch that has child switches gets a leaf
    // switch of its own.
    std::vector<char> has_child(t.switches.size(), 0);
    for (const ProbeSwitch& s : t.switches)
        if (s.parent >= 0) has_child[static_cast<size_t>(s.parent)] = 1;
    for (int h = 0; h < n; ++h) {
        int at = owner[static_cast<size_t>(h)];
        if (has_child[static_cast<size_t>(at)]) {
            ProbeSwitch s;
            s.name = "probe-s" + std::to_string(t.switches.size());
            s.parent = at;
            s.members = {h};
            at = static_cast<int>(t.switches.size());
            t.switches.push_back(s);
        }
        t.switches[static_cast<size_t>(at)].hosts.push_back(h);
    }
    *out = std::move(t);
    return Status::ok();
}

std::string probe_topology_conf(const ProbeTree& tree, const std::vector<std::string>& comment) {
    std::string out;
    for (const std::string& c : comment) out += "# " + c + "\n";
    // Children before parents is not required by Slurm; list top-down.
    for (size_t i = 0; i < tree.switches.size(); ++i) {
        const ProbeSwitch& s = tree.switches[i];
        std::string line = "SwitchName=" + s.name;
        std::string sw, nodes;
        for (size_t j = 0; j < tree.switches.size(); ++j)
            if (tree.switches[j].parent == static_cast<int>(i))
                sw += (sw.empty() ? "" : ",") + tree.switches[j].name;
        for (int h : s.hosts) nodes += (nodes.empty() ? "" : ",") + tree.hosts[static_cast<size_t>(h)];
        if (!sw.empty()) line += " Switches=" + sw;
        if (!nodes.empty()) line += " Nodes=" + nodes;
        out += line + "\n";
    }
    return out;
}

std::string probe_overlay_json(const ProbeTree& tree) {
    nlohmann::json j;
    j["version"] = 1;
    nlohmann::json hosts = nlohmann::json::object();
    if (tree.host_rate > 0) {
        std::string names;
        for (const std::string& h : tree.hosts) names += (names.empty() ? "" : ",") + h;
        hosts[names] = {{"rate", rate_text(tree.host_rate)}, {"class", "host"}};
    }
    j["hosts"] = hosts;
    nlohmann::json sw = nlohmann::json::object();
    for (size_t i = 1; i < tree.switches.size(); ++i) {
        const ProbeSwitch& s = tree.switches[i];
        // No shared class: each switch's measured rate and latency stay
        // its own (the overlay then gives the switch a class of its own).
        nlohmann::json o = nlohmann::json::object();
        if (s.rate > 0) o["rate"] = rate_text(s.rate);
        if (s.latency > 0) o["latency"] = latency_text(s.latency);
        sw[s.name] = o;
    }
    j["switches"] = sw;
    return j.dump(1) + "\n";
}

}  // namespace genx
