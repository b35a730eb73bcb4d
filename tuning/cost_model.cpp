// GenModel evaluation of a Plan (definitions and rationale in cost_model.hpp).
#include "tuning/cost_model.hpp"

#include "plan/renumber.hpp"
#include "tuning/gentree_choice.hpp"
#include "tuning/displaced.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "plan/registry.hpp"
#include "plan/symmetry.hpp"
#include "plan/hops.hpp"
#include "tuning/step_price.hpp"

namespace genx {

using step_price::StepCost;

// ------------------------------------------------------------------ JSON

namespace {

Status read_number(const nlohmann::json& obj, const std::string& path, const char* key,
                   bool required, double* out) {
    auto it = obj.find(key);
    if (it == obj.end()) {
        if (required) return Status::invalid(path + "." + key + ": required field is missing");
        return Status::ok();
    }
    if (!it->is_number())
        return Status::invalid(path + "." + key + ": expected a number, got " + it->dump());
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0)
        return Status::invalid(path + "." + key + ": must be a finite number >= 0, got " +
                               it->dump());
    *out = v;
    return Status::ok();
}

Status check_keys(const nlohmann::json& obj, const std::string& path,
                  std::initializer_list<const char*> known) {
    if (!obj.is_object()) return Status::invalid(path + ": expected an object, got " + obj.dump());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (const char* k : known) ok = ok || it.key() == k;
        if (!ok) {
            std::string list;
            for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
            return Status::invalid(path + ": unknown field '" + it.key() + "' (known: " + list +
                                   ")");
        }
    }
    return Status::ok();
}

Status link_from_json(const nlohmann::json& j, const std::string& path, LinkParams* out) {
    GENX_RETURN_IF_ERROR(check_keys(j, path, {"alpha", "beta", "epsilon", "w_t", "alpha_msg", "alpha_shift"}));
    LinkParams p;
    GENX_RETURN_IF_ERROR(read_number(j, path, "alpha", true, &p.alpha));
    GENX_RETURN_IF_ERROR(read_number(j, path, "beta", true, &p.beta));
    GENX_RETURN_IF_ERROR(read_number(j, path, "epsilon", false, &p.epsilon));
    GENX_RETURN_IF_ERROR(read_number(j, path, "w_t", false, &p.w_t));
    GENX_RETURN_IF_ERROR(read_number(j, path, "alpha_msg", false, &p.alpha_msg));
    GENX_RETURN_IF_ERROR(read_number(j, path, "alpha_shift", false, &p.alpha_shift));
    *out = p;
    return Status::ok();
}

nlohmann::json link_to_json(const LinkParams& p) {
    nlohmann::json j = {{"alpha", p.alpha},
                        {"beta", p.beta},
                        {"epsilon", p.epsilon},
                        {"w_t", p.w_t},
                        {"alpha_msg", p.alpha_msg}};
    if (p.alpha_shift > 0) j["alpha_shift"] = p.alpha_shift;
    return j;
}

}  // namespace

nlohmann::json model_params_to_json(const ModelParams& params) {
    nlohmann::json j = {
        {"links", {{"intra", link_to_json(params.intra)}, {"inter", link_to_json(params.inter)}}},
        {"host", {{"gamma", params.host.gamma}, {"delta", params.host.delta}}}};
    if (!params.classes.empty()) {
        nlohmann::json c = nlohmann::json::object();
        for (const auto& [name, p] : params.classes)
            c[name] = {{"alpha", p.alpha}, {"beta", p.beta}};
        j["links"]["classes"] = c;
    }
    if (params.topology_rates) j["topology_rates"] = true;
    if (params.nonblocking_step > 0) j["nonblocking_step"] = params.nonblocking_step;
    return j;
}

ModelParams model_for_call(const ModelParams& params, bool nonblocking) {
    ModelParams p = params;
    p.price_nonblocking = nonblocking;
    return p;
}

Status model_params_from_json(const nlohmann::json& j, const std::string& where, ModelParams* out) {
    const std::string root = where.empty() ? "model" : where;
    GENX_RETURN_IF_ERROR(
        check_keys(j, root, {"links", "host", "topology_rates", "nonblocking_step"}));
    if (j.find("links") == j.end())
        return Status::invalid(root + ".links: required field is missing");
    if (j.find("host") == j.end())
        return Status::invalid(root + ".host: required field is missing");
    const nlohmann::json& links = j.at("links");
    GENX_RETURN_IF_ERROR(check_keys(links, root + ".links", {"intra", "inter", "classes"}));
    if (links.find("inter") == links.end())
        return Status::invalid(root + ".links.inter: required field is missing");
    ModelParams p;
    GENX_RETURN_IF_ERROR(link_from_json(links.at("inter"), root + ".links.inter", &p.inter));
    p.intra = p.inter;
    if (links.find("intra") != links.end())
        GENX_RETURN_IF_ERROR(link_from_json(links.at("intra"), root + ".links.intra", &p.intra));
    if (auto it = links.find("classes"); it != links.end()) {
        const std::string path = root + ".links.classes";
        if (!it->is_object())
            return Status::invalid(path + ": expected an object of link classes by name, got " +
                                   it->dump());
        for (auto c = it->begin(); c != it->end(); ++c) {
            const std::string cpath = path + "." + c.key();
            if (c.key().empty()) return Status::invalid(path + ": a class name is empty");
            // A class is a link with α and β only.
            GENX_RETURN_IF_ERROR(check_keys(c.value(), cpath, {"alpha", "beta"}));
            GENX_RETURN_IF_ERROR(link_from_json(c.value(), cpath, &p.classes[c.key()]));
        }
    }
    const nlohmann::json& host = j.at("host");
    GENX_RETURN_IF_ERROR(check_keys(host, root + ".host", {"gamma", "delta"}));
    GENX_RETURN_IF_ERROR(read_number(host, root + ".host", "gamma", true, &p.host.gamma));
    GENX_RETURN_IF_ERROR(read_number(host, root + ".host", "delta", true, &p.host.delta));
    if (auto it = j.find("topology_rates"); it != j.end()) {
        if (!it->is_boolean())
            return Status::invalid(root + ".topology_rates: expected true or false, got " +
                                   it->dump());
        p.topology_rates = it->get<bool>();
    }
    GENX_RETURN_IF_ERROR(read_number(j, root, "nonblocking_step", false, &p.nonblocking_step));
    *out = p;
    return Status::ok();
}

Status load_model_params(const std::string& path, ModelParams* out) {
    std::ifstream in(path);
    if (!in) return Status::io_error(path + ": cannot open model parameters file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        return Status::parse_error(path + ": not valid JSON (" + e.what() + ")");
    }
    return model_params_from_json(j, path, out);
}

// -------------------------------------------------------------- rank map

int RankMap::node_of(int rank) const {
    if (rank >= 0 && static_cast<size_t>(rank) < node.size())
        return node[static_cast<size_t>(rank)];
    return -1 - rank;
}

RankMap RankMap::by_slot(int nranks, int ppn) {
    RankMap m;
    if (ppn < 1) ppn = 1;
    for (int r = 0; r < nranks; ++r) m.node.push_back(r / ppn);
    return m;
}

RankMap RankMap::by_nodes(int nranks, int nnodes) {
    if (nnodes < 1) nnodes = 1;
    return by_slot(nranks, (nranks + nnodes - 1) / nnodes);
}

namespace {

bool parse_int(const std::string& s, long* out) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    *out = std::stol(s);
    return true;
}

}  // namespace

bool RankMap::routed() const { return tree || (direct && direct->heterogeneous); }

int DirectNetwork::hop(int a, int b) const {
    if (a < 0 || b < 0 || a >= static_cast<int>(dense.size()) || b >= static_cast<int>(dense.size()))
        return 1;
    const int x = dense[static_cast<size_t>(a)], y = dense[static_cast<size_t>(b)];
    if (x < 0 || y < 0) return 1;
    const int h = dense_hops(x, y);
    return h == 0xffff ? 1 : std::max(h, 1);
}

int DirectNetwork::dense_hops(int x, int y) const {
    if (grid.empty()) return hops[static_cast<size_t>(x) * static_cast<size_t>(n) + static_cast<size_t>(y)];
    int a = grid_index[static_cast<size_t>(x)], b = grid_index[static_cast<size_t>(y)], h = 0;
    for (int dim : grid) {
        const int d = std::abs(a % dim - b % dim);
        h += grid_wrap ? std::min(d, dim - d) : d;
        a /= dim;
        b /= dim;
    }
    return h;
}

std::shared_ptr<const DirectNetwork> direct_network(const TopologyView& view) {
    if (!view.direct || view.empty()) return nullptr;
    auto d = std::make_shared<DirectNetwork>();
    d->dense.assign(view.nodes.size(), -1);
    std::vector<int> node_of;
    for (size_t i = 0; i < view.nodes.size(); ++i)
        if (i != 0 && view.nodes[i].is_host()) {
            d->dense[i] = d->n++;
            node_of.push_back(static_cast<int>(i));
        }
    // A whole torus or mesh: hops in closed form (dense_hops).
    long long cells = 1;
    for (int dim : view.grid) cells *= dim;
    const bool grid = !view.grid.empty() && cells == d->n && view.grid_host.size() == static_cast<size_t>(cells);
    // Otherwise distances cost n² entries: beyond 8192 hosts every peer is one hop.
    if (!grid && d->n > 8192) return nullptr;
    Adjacency adj(static_cast<size_t>(d->n));
    d->units.assign(static_cast<size_t>(d->n), 0);
    d->adj.resize(static_cast<size_t>(d->n));
    d->adj_link.resize(static_cast<size_t>(d->n));
    d->classes = view.link_classes;
    for (const TopoLink& l : view.links) {
        const int a = d->dense[static_cast<size_t>(l.a)], b = d->dense[static_cast<size_t>(l.b)];
        if (a < 0 || b < 0) continue;
        const int id = static_cast<int>(d->links.size());
        d->links.push_back({a, b, l.cls, l.units});
        adj[static_cast<size_t>(a)].push_back(b);
        adj[static_cast<size_t>(b)].push_back(a);
        d->adj[static_cast<size_t>(a)].push_back({b, l.units});
        d->adj[static_cast<size_t>(b)].push_back({a, l.units});
        d->adj_link[static_cast<size_t>(a)].push_back(id);
        d->adj_link[static_cast<size_t>(b)].push_back(id);
        d->units[static_cast<size_t>(a)] += l.units;
        d->units[static_cast<size_t>(b)] += l.units;
    }
    // Heterogeneous: two links differ in what they carry per second or in
    // latency (unknown values count as values of their own).
    auto signature = [&](const DirectNetwork::Link& l) {
        const TopoLinkClass* c = l.cls >= 0 && static_cast<size_t>(l.cls) < d->classes.size()
                                     ? &d->classes[static_cast<size_t>(l.cls)]
                                     : nullptr;
        return std::make_pair(c ? c->rate * l.units : -1.0, c ? c->latency : -1.0);
    };
    for (const DirectNetwork::Link& l : d->links)
        if (signature(l) != signature(d->links.front())) d->heterogeneous = true;
    for (int& u : d->units) u = std::max(u, 1);
    if (grid && !d->heterogeneous) {
        d->grid = view.grid;
        d->grid_wrap = view.grid_wrap;
        d->grid_index.assign(static_cast<size_t>(d->n), -1);
        for (size_t i = 0; i < view.grid_host.size(); ++i) {
            const int h = view.grid_host[i];
            const int x = h >= 0 && static_cast<size_t>(h) < d->dense.size() ? d->dense[static_cast<size_t>(h)] : -1;
            if (x < 0) return nullptr;  // validate() rules this out
            d->grid_index[static_cast<size_t>(x)] = static_cast<int>(i);
        }
        return d;
    }
    if (d->n > 8192) return nullptr;
    d->hops.assign(static_cast<size_t>(d->n) * static_cast<size_t>(d->n), 0xffff);
    for (int s = 0; s < d->n; ++s) {
        uint16_t* row = &d->hops[static_cast<size_t>(s) * static_cast<size_t>(d->n)];
        const std::vector<int> dist = hop_distances(adj, s);
        for (int v = 0; v < d->n; ++v)
            if (dist[static_cast<size_t>(v)] >= 0)
                row[v] = static_cast<uint16_t>(std::min(dist[static_cast<size_t>(v)], 0xfffe));
    }
    return d;
}

void DirectNetwork::route(int a, int b, std::vector<uint32_t>* out) const {
    if (a < 0 || b < 0 || a >= static_cast<int>(dense.size()) || b >= static_cast<int>(dense.size()))
        return;
    int x = dense[static_cast<size_t>(a)];
    const int y = dense[static_cast<size_t>(b)];
    if (x < 0 || y < 0) return;
    auto dist = [&](int v) { return dense_hops(v, y); };
    if (dist(x) == 0xffff) return;
    while (x != y) {
        const auto& nb = adj[static_cast<size_t>(x)];
        size_t j = 0;
        while (j < nb.size() && dist(nb[j].first) + 1 != dist(x)) ++j;
        if (j == nb.size()) return;  // cannot happen on a BFS distance table
        const int id = adj_link[static_cast<size_t>(x)][j];
        out->push_back((static_cast<uint32_t>(id) << 1) |
                       (links[static_cast<size_t>(id)].a == x ? 0u : 1u));
        x = nb[j].first;
    }
}

LinkParams DirectNetwork::link_params(int link, const ModelParams& params) const {
    LinkParams p;
    p.alpha = params.inter.alpha;
    p.beta = params.inter.beta;
    if (link < 0 || static_cast<size_t>(link) >= links.size()) return p;
    const Link& l = links[static_cast<size_t>(link)];
    if (l.cls < 0 || static_cast<size_t>(l.cls) >= classes.size()) return p;
    const TopoLinkClass& c = classes[static_cast<size_t>(l.cls)];
    if (auto it = params.classes.find(c.name); it != params.classes.end()) return it->second;
    if (c.latency > 0) p.alpha = c.latency;
    if (c.rate > 0) p.beta = 1.0 / (c.rate * std::max(l.units, 1));
    return p;
}

double host_link_rate(const TopologyView& view) {
    std::map<double, int> rates;
    for (const TopoNode& node : view.nodes)
        if (node.is_host() && !node.ranks.empty() && node.up_class >= 0 &&
            static_cast<size_t>(node.up_class) < view.link_classes.size()) {
            const double r = view.link_classes[static_cast<size_t>(node.up_class)].rate;
            if (r > 0) rates[r] += 1;
        }
    double rate = 0;
    int best = 0;
    for (const auto& [r, count] : rates)
        if (count > best) {
            best = count;
            rate = r;
        }
    return rate;
}

ModelParams model_for_topology(const ModelParams& params, const TopologyView* view) {
    ModelParams p = params;
    if (!params.topology_rates || view == nullptr || view->direct) return p;
    const double rate = host_link_rate(*view);
    if (rate > 0) p.inter.beta = 1.0 / rate;
    return p;
}

std::shared_ptr<const SwitchTree> switch_tree(const TopologyView& view) {
    if (view.direct || view.empty()) return nullptr;
    auto t = std::make_shared<SwitchTree>();
    const size_t n = view.nodes.size();
    t->parent.assign(n, -1);
    t->depth.assign(n, 0);
    t->up_class.assign(n, -1);
    t->classes = view.link_classes;
    bool above_hosts = false;
    // Parents come before children in no promised order: depth by walking up.
    for (size_t i = 0; i < n; ++i) {
        const TopoNode& node = view.nodes[i];
        t->parent[i] = node.parent;
        t->up_class[i] = node.up_class;
        int d = 0;
        for (int p = node.parent; p >= 0 && d <= static_cast<int>(n); p = view.nodes[static_cast<size_t>(p)].parent)
            ++d;
        t->depth[i] = d;
        if (!node.is_host() && node.parent >= 0) above_hosts = true;
    }
    if (!above_hosts) return nullptr;
    t->host_rate = host_link_rate(view);
    return t;
}

void SwitchTree::route(int host_a, int host_b, std::vector<uint32_t>* out) const {
    const int n = static_cast<int>(parent.size());
    if (host_a < 0 || host_b < 0 || host_a >= n || host_b >= n) return;
    int x = parent[static_cast<size_t>(host_a)], y = parent[static_cast<size_t>(host_b)];
    std::vector<uint32_t> down;
    while (x != y && x >= 0 && y >= 0) {
        if (depth[static_cast<size_t>(x)] >= depth[static_cast<size_t>(y)]) {
            out->push_back(static_cast<uint32_t>(x) << 1);
            x = parent[static_cast<size_t>(x)];
        } else {
            down.push_back((static_cast<uint32_t>(y) << 1) | 1u);
            y = parent[static_cast<size_t>(y)];
        }
    }
    out->insert(out->end(), down.rbegin(), down.rend());
}

std::map<int, int> SwitchTree::route_classes(int host_a, int host_b) const {
    std::vector<uint32_t> codes;
    route(host_a, host_b, &codes);
    std::map<int, int> counts;
    for (uint32_t c : codes) {
        const int cls = up_class[c >> 1];
        if (cls >= 0) ++counts[cls];
    }
    return counts;
}

LinkParams SwitchTree::class_params(int cls, const ModelParams& params) const {
    LinkParams p;
    if (cls < 0 || static_cast<size_t>(cls) >= classes.size()) {
        p.beta = params.inter.beta;
        return p;
    }
    const TopoLinkClass& c = classes[static_cast<size_t>(cls)];
    if (auto it = params.classes.find(c.name); it != params.classes.end()) return it->second;
    p.alpha = c.latency;
    p.beta = host_rate > 0 && c.rate > 0 ? params.inter.beta * host_rate / c.rate : params.inter.beta;
    return p;
}

Status parse_rank_map(const std::string& text, int nranks, RankMap* out) {
    std::string t;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) t += c;
    if (t.empty()) {
        *out = RankMap{};
        return Status::ok();
    }
    const size_t eq = t.find('=');
    if (eq != std::string::npos) {
        const std::string key = t.substr(0, eq);
        long v = 0;
        if (!parse_int(t.substr(eq + 1), &v) || v < 1)
            return Status::invalid("rank map '" + text + "': '" + t.substr(eq + 1) +
                                   "' is not a positive integer");
        if (key == "nodes") {
            if (v > nranks)
                return Status::invalid("rank map '" + text + "': " + std::to_string(v) +
                                       " nodes for " + std::to_string(nranks) + " ranks");
            *out = RankMap::by_nodes(nranks, static_cast<int>(v));
            return Status::ok();
        }
        if (key == "ppn") {
            *out = RankMap::by_slot(nranks, static_cast<int>(v));
            return Status::ok();
        }
        return Status::invalid("rank map '" + text + "': unknown key '" + key +
                               "' (expected nodes=N, ppn=K or a list of node ids)");
    }
    RankMap m;
    size_t pos = 0;
    while (pos <= t.size()) {
        size_t comma = t.find(',', pos);
        if (comma == std::string::npos) comma = t.size();
        long v = 0;
        const std::string item = t.substr(pos, comma - pos);
        if (!parse_int(item, &v))
            return Status::invalid("rank map '" + text + "': '" + item +
                                   "' is not a node id (expected nodes=N, ppn=K or a list of "
                                   "node ids such as 0,0,1,1)");
        m.node.push_back(static_cast<int>(v));
        pos = comma + 1;
    }
    if (m.node.size() != static_cast<size_t>(nranks))
        return Status::invalid("rank map '" + text + "' lists " + std::to_string(m.node.size()) +
                               " ranks, the plan has " + std::to_string(nranks));
    *out = std::move(m);
    return Status::ok();
}

// ------------------------------------------------------------ evaluation

namespace {

// Elements of blocks [lo, lo+len): the block_range() bounds telescope.
inline size_t run_elems(size_t count, int nblocks, int lo, int len) {
    const size_t n = static_cast<size_t>(nblocks);
    return static_cast<size_t>(lo + len) * count / n - static_cast<size_t>(lo) * count / n;
}

// Maximal runs of consecutive ascending block indices, appended to `out`.
template <typename Run>
uint32_t append_runs(const std::vector<int>& blocks, std::vector<Run>* out) {
    uint32_t n = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        if (i > 0 && blocks[i] == blocks[i - 1] + 1 && !out->empty()) {
            out->back().len += 1;
        } else {
            Run r;
            r.lo = blocks[i];
            r.len = 1;
            out->push_back(r);
            ++n;
        }
    }
    return n;
}

}  // namespace

// Which link classes (bit 0 intra, bit 1 inter) step `st` of a rank on
// node `node` uses both ways but not pairwise: the peers it sends to over
// the class differ from those it receives from.
static uint8_t shift_classes(const Step& st, int node, const RankMap& ranks) {
    uint8_t bits = 0;
    for (int c = 0; c < 2; ++c) {
        std::vector<int> to, from;
        for (const Transfer& t : st.sends)
            if ((ranks.node_of(t.peer) == node) == (c == 0)) to.push_back(t.peer);
        for (const Transfer& t : st.recvs)
            if ((ranks.node_of(t.peer) == node) == (c == 0)) from.push_back(t.peer);
        if (to.empty() || from.empty()) continue;
        std::sort(to.begin(), to.end());
        to.erase(std::unique(to.begin(), to.end()), to.end());
        std::sort(from.begin(), from.end());
        from.erase(std::unique(from.begin(), from.end()), from.end());
        if (to != from) bits |= static_cast<uint8_t>(1u << c);
    }
    return bits;
}

// Builds a PlanModel over "model ranks": every rank, or the ranks of rank
// 0's node when the quotient applies (cost_model.hpp).  Programs are added
// one at a time and may be dropped after add(), so the full model of a
// generated plan never holds the plan.
class PlanModel::Builder {
  public:
    Builder(const PlanHeader& h, const RankMap& ranks, PlanModel* m) : h_(h), ranks_(ranks), m_(m) {}

    // Every rank is modelled.
    void init_full() {
        model_.resize(static_cast<size_t>(h_.nranks));
        for (int r = 0; r < h_.nranks; ++r) model_[static_cast<size_t>(r)] = r;
        start();
    }

    // The ranks of the nodes of the declared group's fixed part (rank 0's
    // node when no digit is fixed) are modelled when the group's
    // translations map them onto every other node; false (nothing changed)
    // otherwise.  On a switch tree the translations must also be
    // automorphisms of the tree (tree_orbits).
    bool init_quotient() {
        const int P = h_.nranks;
        if (h_.symmetry.empty()) return false;
        // The links of a heterogeneous direct network are shared by ranks of
        // every node and not checked for symmetry: all are modelled.
        if (ranks_.direct && ranks_.direct->heterogeneous) return false;
        RankGroup g(h_.symmetry);
        if (g.order != P) return false;
        if (ranks_.direct && !links_invariant(g)) return false;
        std::vector<char> fixed(g.radix.size(), 0);
        for (int k : h_.symmetry_fixed) {
            if (k < 0 || static_cast<size_t>(k) >= fixed.size()) return false;
            fixed[static_cast<size_t>(k)] = 1;
        }
        // A rank's free part: its digits outside the fixed ones (a translation).
        auto free_part = [&](int r) { return g.free_part(r, h_.symmetry_fixed); };
        if (ranks_.node.empty() && h_.symmetry_fixed.empty() && !ranks_.tree) {
            // One rank per node: rank p is rank 0 translated by p.
            identity_ = true;
            group_ = std::move(g);
            model_ = {0};
            start();
            return true;
        }
        // Node ids are RankMap ids (>= 0 listed, -1-rank for unlisted ranks):
        // dense indices for the flags below.
        int lo = 0, hi = 0;
        for (int r = 0; r < P; ++r) {
            lo = std::min(lo, ranks_.node_of(r));
            hi = std::max(hi, ranks_.node_of(r));
        }
        auto slot = [&](int nid) { return static_cast<size_t>(nid - lo); };
        std::vector<char> in_model(static_cast<size_t>(hi - lo) + 1, 0);
        for (int r = 0; r < P; ++r)
            if (free_part(r) == 0) in_model[slot(ranks_.node_of(r))] = 1;
        std::vector<int> model;
        for (int r = 0; r < P; ++r)
            if (in_model[slot(ranks_.node_of(r))]) model.push_back(r);
        if (model.size() == static_cast<size_t>(P)) return false;  // nothing to gain
        // On a switch tree, first the automorphisms (a group that does not
        // follow the tree usually fails there within a leaf switch).
        std::vector<int> link_rep;
        std::vector<double> link_weight;
        if (ranks_.tree &&
            !tree_orbits(g, fixed, static_cast<int>(model.size()), &link_rep, &link_weight))
            return false;
        // The modelled nodes, densely: each modelled rank's index among them.
        std::vector<int> dense_of(in_model.size(), -1), node_index;
        int mnodes = 0;
        for (int x : model) {
            int& d = dense_of[slot(ranks_.node_of(x))];
            if (d < 0) d = mnodes++;
            node_index.push_back(d);
        }
        std::vector<int> trans(static_cast<size_t>(P), -1);
        std::vector<char> imaged(in_model.size(), 0);
        std::vector<int> image(static_cast<size_t>(mnodes));  // modelled node -> its image
        const int unset = std::numeric_limits<int>::min();       // below every node id
        for (int p = 0; p < P; ++p) {
            if (trans[static_cast<size_t>(p)] >= 0) continue;
            // p is the lowest rank not yet covered: the image of its fixed
            // part, a modelled rank, under its free part.
            const int t = free_part(p);
            std::fill(image.begin(), image.end(), unset);
            for (size_t i = 0; i < model.size(); ++i) {
                const int y = model[i] == 0 ? t : g.add(model[i], t);
                if (trans[static_cast<size_t>(y)] >= 0) return false;
                const int ny = ranks_.node_of(y);
                int& img = image[static_cast<size_t>(node_index[i])];
                if (img == unset) {
                    if (imaged[slot(ny)]) return false;
                    imaged[slot(ny)] = 1;
                    img = ny;
                } else if (img != ny) {
                    return false;
                }
                trans[static_cast<size_t>(y)] = t;
            }
        }
        m_->link_rep_ = std::move(link_rep);
        m_->link_weight_ = std::move(link_weight);
        group_ = std::move(g);
        trans_ = std::move(trans);
        model_ = std::move(model);
        start();
        return true;
    }

    // On a direct network the translations must also map each node's links
    // onto the image node's links (same units and class), or hop counts
    // differ between a rank and its translates (a ring's Z_P on a 2-D
    // torus).  Checked for the generators of `g`, one per factor.
    bool links_invariant(const RankGroup& g) const {
        const DirectNetwork& d = *ranks_.direct;
        const auto dense = [&](int id) {
            return id >= 0 && id < static_cast<int>(d.dense.size()) ? d.dense[static_cast<size_t>(id)] : -1;
        };
        std::vector<int> rank_on(static_cast<size_t>(d.n), -1);
        for (int r = 0; r < h_.nranks; ++r) {
            const int dn = dense(ranks_.node_of(r));
            if (dn >= 0 && rank_on[static_cast<size_t>(dn)] < 0) rank_on[static_cast<size_t>(dn)] = r;
        }
        using Edge = std::tuple<int, int, int>;  // neighbour (dense), units, class
        std::vector<Edge> mine, theirs;
        for (int stride : g.stride) {
            for (int a = 0; a < d.n; ++a) {
                const int ra = rank_on[static_cast<size_t>(a)];
                if (ra < 0) return false;  // a node without ranks: nothing maps it
                const int b = dense(ranks_.node_of(g.add(ra, stride)));
                if (b < 0) return false;
                mine.clear();
                theirs.clear();
                const auto& adj = d.adj[static_cast<size_t>(a)];
                for (size_t k = 0; k < adj.size(); ++k) {
                    const int rn = rank_on[static_cast<size_t>(adj[k].first)];
                    if (rn < 0) return false;
                    const int cls = d.links[static_cast<size_t>(d.adj_link[static_cast<size_t>(a)][k])].cls;
                    mine.emplace_back(dense(ranks_.node_of(g.add(rn, stride))), adj[k].second, cls);
                }
                const auto& badj = d.adj[static_cast<size_t>(b)];
                for (size_t k = 0; k < badj.size(); ++k)
                    theirs.emplace_back(badj[k].first, badj[k].second,
                                        d.links[static_cast<size_t>(d.adj_link[static_cast<size_t>(b)][k])].cls);
                std::sort(mine.begin(), mine.end());
                std::sort(theirs.begin(), theirs.end());
                if (mine != theirs) return false;
            }
        }
        return true;
    }

    // On a switch tree: whether every free generator of the group, acting on
    // the hosts through the ranks, extends to an automorphism of the tree
    // that keeps every switch link's class; if so, fills what becomes
    // PlanModel's link_rep_ and link_weight_.  A link's load is then its orbit's: the
    // translates of the modelled ranks' transfers cross each link of an
    // orbit alike, so the bytes the modelled ranks send over links of the
    // orbit, times P / (modelled ranks × orbit size), load each of them.
    bool tree_orbits(const RankGroup& g, const std::vector<char>& fixed, int modelled,
                     std::vector<int>* link_rep, std::vector<double>* link_weight) const {
        const SwitchTree& tree = *ranks_.tree;
        const int P = h_.nranks;
        const int n = static_cast<int>(tree.parent.size());
        std::vector<int> root(static_cast<size_t>(n));
        for (int v = 0; v < n; ++v) root[static_cast<size_t>(v)] = v;
        auto find = [&](int v) {  // with path halving
            while (root[static_cast<size_t>(v)] != v) {
                root[static_cast<size_t>(v)] = root[static_cast<size_t>(root[static_cast<size_t>(v)])];
                v = root[static_cast<size_t>(v)];
            }
            return v;
        };
        std::vector<char> used(static_cast<size_t>(n), 0);  // nodes on some rank's path
        std::vector<int> sigma(static_cast<size_t>(n)), taken(static_cast<size_t>(n));
        for (size_t k = 0; k < fixed.size(); ++k) {
            if (fixed[k]) continue;
            std::fill(sigma.begin(), sigma.end(), -1);
            std::fill(taken.begin(), taken.end(), 0);
            const int step = g.stride[k], wrap = g.stride[k] * (g.radix[k] - 1);
            for (int r = 0; r < P; ++r) {
                // r translated by one in digit k.
                const int rk = g.digit(r, k) + 1 < g.radix[k] ? r + step : r - wrap;
                int x = ranks_.node_of(r), y = ranks_.node_of(rk);
                if (x < 0 || x >= n || y < 0 || y >= n) return false;
                for (bool host = true; x >= 0; host = false) {
                    if (y < 0 || tree.depth[static_cast<size_t>(x)] != tree.depth[static_cast<size_t>(y)]) return false;
                    // Hosts' own links are their NICs: only switch links have a class here.
                    if (!host && tree.up_class[static_cast<size_t>(x)] != tree.up_class[static_cast<size_t>(y)])
                        return false;
                    int& sx = sigma[static_cast<size_t>(x)];
                    if (sx >= 0) {
                        if (sx != y) return false;
                        break;  // its ancestors are mapped already
                    }
                    if (taken[static_cast<size_t>(y)]) return false;
                    sx = y;
                    taken[static_cast<size_t>(y)] = 1;
                    used[static_cast<size_t>(x)] = 1;
                    if (!host) root[static_cast<size_t>(find(x))] = find(y);  // orbits of switches only
                    x = tree.parent[static_cast<size_t>(x)];
                    y = tree.parent[static_cast<size_t>(y)];
                }
            }
        }
        std::vector<int> size(static_cast<size_t>(n), 0), rep(static_cast<size_t>(n), -1);
        for (int v = 0; v < n; ++v)
            if (used[static_cast<size_t>(v)]) {
                ++size[static_cast<size_t>(find(v))];
                int& first = rep[static_cast<size_t>(find(v))];
                if (first < 0) first = v;  // the orbit's lowest node stands for it
            }
        link_rep->assign(static_cast<size_t>(n), -1);
        link_weight->assign(static_cast<size_t>(n), 0.0);
        for (int v = 0; v < n; ++v) {
            if (!used[static_cast<size_t>(v)]) continue;
            const int c = find(v);
            (*link_rep)[static_cast<size_t>(v)] = rep[static_cast<size_t>(c)];
            (*link_weight)[static_cast<size_t>(v)] =
                static_cast<double>(P) / (static_cast<double>(modelled) * size[static_cast<size_t>(c)]);
        }
        return true;
    }

    // Whether model rank r's program is rank 0's translated by r (r is a
    // declared translation); otherwise the generator emits it.
    bool translatable(int r) const {
        if (identity_) return true;
        return group_.free_part(r, h_.symmetry_fixed) == r;
    }

    const std::vector<int>& model_ranks() const { return model_; }
    bool quotient() const { return identity_ || !trans_.empty(); }
    // Rank 0's program translated to rank x (the declared symmetry): the
    // same block lists, peers p -> p ⊕ x.
    void translate(const Program& zero, int x, Program* out) const {
        *out = zero;
        for (Step& st : out->steps) {
            for (Transfer& t : st.sends) t.peer = group_.add(t.peer, x);
            for (Transfer& t : st.recvs) t.peer = group_.add(t.peer, x);
        }
    }

    // Model index m's program (m in increasing order).
    Status add(int m, const Program& prog);
    Status finish();

  private:
    struct Ends {
        // Per real peer: (step, xfer) of the transfers with it, posting order.
        std::unordered_map<int, std::vector<std::pair<int, uint32_t>>> to, from;
    };

    void start() {
        const int P = h_.nranks;
        m_->algorithm_ = h_.algorithm;
        m_->params_ = h_.params;
        m_->nranks_ = P;
        m_->nblocks_ = h_.nblocks;
        m_->direct_ = ranks_.direct;
        m_->tree_ = ranks_.tree;
        if (ranks_.direct) {
            m_->direct_node_.resize(static_cast<size_t>(P));
            for (int r = 0; r < P; ++r) m_->direct_node_[static_cast<size_t>(r)] = ranks_.node_of(r);
        }
        m_->model_rank_ = model_;
        index_.assign(trans_.empty() ? 0 : static_cast<size_t>(P), -1);
        if (!trans_.empty())
            for (size_t i = 0; i < model_.size(); ++i) index_[static_cast<size_t>(model_[i])] = static_cast<int>(i);
        ends_.resize(model_.size());
        m_->rank_first_step_.assign(model_.size() + 1, 0);
    }
    // The model index standing for real rank p, and the id under which that
    // rank knows real rank r.
    std::pair<int, int> frame(int p, int r) const {
        if (identity_) return {0, group_.sub(r, p)};
        if (trans_.empty()) return {p, r};
        const int t = trans_[static_cast<size_t>(p)];
        return {index_[static_cast<size_t>(group_.sub(p, t))], group_.sub(r, t)};
    }
    Status fail(const std::string& why) const {
        return Status::invalid("cost model: plan '" + h_.algorithm + "' (P=" +
                               std::to_string(h_.nranks) + ") cannot be timed: " + why);
    }
    Status match(bool sends);

    const PlanHeader& h_;
    const RankMap& ranks_;
    PlanModel* m_;
    std::vector<int> model_;   // real rank per model index
    std::vector<int> index_;   // quotient: model index per real rank of node 0, else empty
    std::vector<int> trans_;   // quotient: translation per real rank
    RankGroup group_;
    bool identity_ = false;  // quotient with one rank per node: translation = the rank
    std::vector<Ends> ends_;
    std::map<int, int> node_dense_;
};

Status PlanModel::Builder::add(int mi, const Program& prog) {
    PlanModel& m = *m_;
    const int P = h_.nranks;
    const int r = model_[static_cast<size_t>(mi)];
    m.rank_first_step_[static_cast<size_t>(mi)] = static_cast<uint32_t>(m.steps_.size());
    const int raw = ranks_.node_of(r);
    const int node =
        node_dense_.emplace(raw, static_cast<int>(node_dense_.size())).first->second;
    Ends& ends = ends_[static_cast<size_t>(mi)];
    const auto& steps = prog.steps;
    m.max_steps_ = std::max(m.max_steps_, static_cast<int>(steps.size()));
    for (int s = 0; s < static_cast<int>(steps.size()); ++s) {
        const Step& st = steps[static_cast<size_t>(s)];
        StepRec rec;
        rec.rank = r;
        rec.step = s;
        rec.node = node;
        rec.first_xfer = static_cast<uint32_t>(m.xfers_.size());
        for (int dir = 0; dir < 2; ++dir) {
            for (const Transfer& t : dir == 0 ? st.sends : st.recvs) {
                if (t.peer < 0 || t.peer >= P || t.peer == r)
                    return fail("rank " + std::to_string(r) + " step " + std::to_string(s) +
                                " names peer " + std::to_string(t.peer));
                Xfer x;
                x.peer = t.peer;  // real until finish() maps it to a model index
                x.recv = dir == 1;
                x.src_node = ranks_.node_of(t.peer);
                x.intra = x.src_node == raw;
                if (!x.intra && ranks_.routed()) {
                    // Sender's host to receiver's host.
                    const int from = x.recv ? x.src_node : raw, to = x.recv ? raw : x.src_node;
                    x.first_link = static_cast<uint32_t>(m.route_.size());
                    if (ranks_.tree)
                        ranks_.tree->route(from, to, &m.route_);
                    else
                        ranks_.direct->route(from, to, &m.route_);
                    x.nlinks = static_cast<uint32_t>(m.route_.size()) - x.first_link;
                    // The quotient on a switch tree: each link stands for its orbit.
                    if (!m.link_rep_.empty())
                        for (uint32_t j = x.first_link; j < x.first_link + x.nlinks; ++j)
                            m.route_[j] = (static_cast<uint32_t>(m.link_rep_[m.route_[j] >> 1]) << 1) |
                                          (m.route_[j] & 1u);
                }
                x.first_run = static_cast<uint32_t>(m.runs_.size());
                x.nruns = append_runs(t.blocks, &m.runs_);
                (x.recv ? ends.from : ends.to)[t.peer].emplace_back(
                    s, static_cast<uint32_t>(m.xfers_.size()));
                m.xfers_.push_back(x);
            }
        }
        rec.nxfer = static_cast<uint32_t>(m.xfers_.size()) - rec.first_xfer;
        rec.shift = shift_classes(st, raw, ranks_);
        rec.first_op = static_cast<uint32_t>(m.op_runs_.size());
        for (const LocalOp& op : st.ops) {
            // stats.hpp's conventions: a k-ary reduce combines (k-1)·n and
            // reads k·n + writes n; a copy reads n and writes n.
            const int k = 1 + static_cast<int>(op.srcs.size());
            const size_t first = m.op_runs_.size();
            append_runs(op.blocks, &m.op_runs_);
            for (size_t i = first; i < m.op_runs_.size(); ++i) {
                m.op_runs_[i].combine = op.kind == OpKind::Reduce ? k - 1 : 0;
                m.op_runs_[i].access = op.kind == OpKind::Reduce ? k + 1 : 2;
            }
        }
        rec.nop = static_cast<uint32_t>(m.op_runs_.size()) - rec.first_op;
        m.steps_.push_back(rec);
    }
    m.rank_first_step_[static_cast<size_t>(mi) + 1] = static_cast<uint32_t>(m.steps_.size());
    return Status::ok();
}

// Matches each model rank's sends (sends = true) or receives with the
// other side's, pair by pair in posting order.
Status PlanModel::Builder::match(bool sends) {
    PlanModel& m = *m_;
    for (size_t mi = 0; mi < model_.size(); ++mi) {
        const int r = model_[mi];
        const auto& mine = sends ? ends_[mi].to : ends_[mi].from;
        for (const auto& kv : mine) {
            const auto f = frame(kv.first, r);
            const auto& other_side = sends ? ends_[static_cast<size_t>(f.first)].from
                                           : ends_[static_cast<size_t>(f.first)].to;
            auto it = other_side.find(f.second);
            const size_t have = it == other_side.end() ? 0 : it->second.size();
            for (size_t k = 0; k < kv.second.size(); ++k) {
                if (k >= have)
                    return fail("rank " + std::to_string(r) + " step " +
                                std::to_string(kv.second[k].first) +
                                (sends ? " sends to rank " : " receives from rank ") +
                                std::to_string(kv.first) + ", which has no " +
                                (sends ? "receive" : "send") + " left to match it");
                Xfer& x = m.xfers_[kv.second[k].second];
                x.peer_step = it->second[k].first;
                x.peer = f.first;
            }
            if (have > kv.second.size())
                return fail("rank " + std::to_string(kv.first) + " step " +
                            std::to_string(it->second[kv.second.size()].first) +
                            (sends ? " receives from rank " : " sends to rank ") +
                            std::to_string(r) + ", which has no " + (sends ? "send" : "receive") +
                            " left to match it");
        }
    }
    return Status::ok();
}

Status PlanModel::Builder::finish() {
    PlanModel& m = *m_;
    GENX_RETURN_IF_ERROR(match(true));
    GENX_RETURN_IF_ERROR(match(false));
    ends_.clear();
    m.nnodes_ = static_cast<int>(node_dense_.size());
    const int M = static_cast<int>(model_.size());

    // Distinct nodes sending over inter-node links into each modelled node
    // per step, counting every transfer (predict() recounts when empty
    // blocks drop some).
    m.nic_sources_.assign(static_cast<size_t>(m.nnodes_) * static_cast<size_t>(m.max_steps_), {});
    for (const StepRec& rec : m.steps_)
        for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer; ++i)
            if (m.xfers_[i].recv && !m.xfers_[i].intra)
                m.nic_sources_[m.nic_index(rec.node, rec.step)].push_back(m.xfers_[i].src_node);
    for (auto& v : m.nic_sources_) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }

    // An order of the steps in which every step comes after its own
    // predecessor and after the predecessors of the steps it exchanges data
    // with (rendezvous progress).  It holds for any count, since empty
    // transfers only remove dependencies.  No progress in a pass = a cycle.
    std::vector<uint32_t> done(static_cast<size_t>(M), 0);
    size_t remaining = m.steps_.size();
    m.order_.reserve(remaining);
    while (remaining > 0) {
        size_t progressed = 0;
        for (int r = 0; r < M; ++r) {
            const uint32_t first = m.rank_first_step_[static_cast<size_t>(r)];
            const uint32_t n = m.rank_first_step_[static_cast<size_t>(r) + 1] - first;
            uint32_t& s = done[static_cast<size_t>(r)];
            while (s < n) {
                const StepRec& rec = m.steps_[first + s];
                bool ready = true;
                for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer && ready; ++i) {
                    const Xfer& x = m.xfers_[i];
                    ready = done[static_cast<size_t>(x.peer)] >= static_cast<uint32_t>(x.peer_step);
                }
                if (!ready) break;
                m.order_.push_back(first + s);
                ++s;
                ++progressed;
                --remaining;
            }
        }
        if (progressed == 0) {
            std::string stuck;
            for (int r = 0; r < M && stuck.size() < 200; ++r)
                if (done[static_cast<size_t>(r)] < m.rank_first_step_[static_cast<size_t>(r) + 1] -
                                                       m.rank_first_step_[static_cast<size_t>(r)])
                    stuck += (stuck.empty() ? "" : ", ") + std::string("rank ") +
                             std::to_string(model_[static_cast<size_t>(r)]) + " step " +
                             std::to_string(done[static_cast<size_t>(r)]);
            return fail("its steps wait on each other in a cycle (" + stuck + ")");
        }
    }
    return Status::ok();
}

Status PlanModel::build(const Plan& plan, const RankMap& ranks, PlanModel* out) {
    const int P = plan.nranks;
    if (P < 1 || plan.programs.size() != static_cast<size_t>(P) || plan.nblocks < 1)
        return Status::invalid("cost model: malformed plan '" + plan.algorithm + "' (" +
                               std::to_string(plan.programs.size()) + " programs for " +
                               std::to_string(P) + " ranks, " + std::to_string(plan.nblocks) +
                               " blocks)");
    PlanModel m;
    Builder b(plan, ranks, &m);
    b.init_full();
    for (int r = 0; r < P; ++r) GENX_RETURN_IF_ERROR(b.add(r, plan.programs[static_cast<size_t>(r)]));
    GENX_RETURN_IF_ERROR(b.finish());
    *out = std::move(m);
    return Status::ok();
}

bool PlanModel::quotient_applies(const PlanHeader& header, const RankMap& ranks) {
    PlanModel m;
    Builder b(header, ranks, &m);
    return b.init_quotient();
}

Status PlanModel::build(const RankGenerator& gen, const RankMap& ranks, PlanModel* out,
                        bool allow_quotient) {
    const PlanHeader& h = gen.header;
    if (h.nranks < 1 || h.nblocks < 1 || !gen.emit)
        return Status::invalid("cost model: malformed generator '" + h.algorithm + "' (" +
                               std::to_string(h.nranks) + " ranks, " +
                               std::to_string(h.nblocks) + " blocks)");
    PlanModel m;
    Builder b(h, ranks, &m);
    if (!allow_quotient || !b.init_quotient()) b.init_full();
    const std::vector<int> model = b.model_ranks();
    Program prog, zero;
    if (b.quotient()) gen.emit(0, &zero);
    for (size_t i = 0; i < model.size(); ++i) {
        // In the quotient, the modelled ranks that are declared
        // translations are rank 0 translated: their block labels differ,
        // their sizes (equal blocks) do not.
        if (b.quotient() && model[i] == 0) {
            GENX_RETURN_IF_ERROR(b.add(static_cast<int>(i), zero));
            continue;
        }
        if (b.quotient() && b.translatable(model[i])) {
            b.translate(zero, model[i], &prog);
        } else {
            prog.steps.clear();
            gen.emit(model[i], &prog);
        }
        GENX_RETURN_IF_ERROR(b.add(static_cast<int>(i), prog));
    }
    GENX_RETURN_IF_ERROR(b.finish());
    *out = std::move(m);
    return Status::ok();
}

// One prediction's working state: every step's loads at one call size, the
// link prices they give, and the times in dependency order.
class PlanModel::Pricing {
  public:
    Pricing(const PlanModel& m, size_t count, size_t elem_size, const ModelParams& params)
        : m_(m),
          count_(count),
          es_(static_cast<double>(elem_size)),
          params_(params),
          empty_blocks_(count < static_cast<size_t>(m.nblocks_)),
          by_links_(m.direct_ && m.direct_->heterogeneous),
          routed_(m.tree_ || by_links_) {}

    Prediction run() {
        tally_steps();
        if (m_.direct_) spread_direct_loads();
        load_routes();
        schedule();
        // Once more with each link's load from the sends that overlap in
        // time in that schedule (the first one added loads up by step index).
        if (routed_ && !lock_step() && timed_loads()) schedule();
        return critical_path();
    }

  private:
    struct Load {
        double sent[2] = {0, 0};  // [0] intra, [1] inter (this rank)
        double recv[2] = {0, 0};
        int nsent[2] = {0, 0};  // messages, same classes
        int nrecv[2] = {0, 0};
        int intra_flows_in = 0;
        double reduce = 0, memory = 0;
    };
    struct Nic {
        double sent = 0, recv = 0;
    };
    struct PeerLoad {
        double sent = 0, recv = 0;
    };
    static constexpr long kNone = -1;

    void tally_steps();
    void tally_transfer(const StepRec& rec, uint32_t i, Load* l);
    void spread_direct_loads();
    void load_routes();
    void route_price(size_t k, double* latency, double* busiest) const;
    bool timed_loads();
    bool lock_step() const;
    // f(step index in steps_, route code, bytes × the link's weight) for
    // every send over every routed link, each transfer once.
    template <class F>
    void each_routed_send(F&& f) const {
        for (size_t k = 0; k < m_.steps_.size(); ++k) {
            const StepRec& rec = m_.steps_[k];
            for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer; ++i) {
                const Xfer& x = m_.xfers_[i];
                if (x.recv || xbytes_[i] <= 0) continue;
                for (uint32_t j = x.first_link; j < x.first_link + x.nlinks; ++j) {
                    const uint32_t code = m_.route_[j];
                    f(k, code, (m_.link_weight_.empty() ? 1.0 : m_.link_weight_[code >> 1]) * xbytes_[i]);
                }
            }
        }
    }
    StepCost link_price(size_t k) const;
    StepCost inter_price(size_t k) const;
    double host_cost(size_t k) const {
        return params_.host.gamma * load_[k].reduce + params_.host.delta * load_[k].memory;
    }
    void schedule();
    long last_step() const;
    Prediction critical_path() const;

    const PlanModel& m_;
    const size_t count_;
    const double es_;
    const ModelParams& params_;
    // Some blocks are empty only when count < nblocks; then empty transfers
    // may remove a source node from a NIC's fan-in.
    const bool empty_blocks_;
    // A heterogeneous direct network: its links price every inter-node step
    // (load_routes), params.inter only the extra messages.
    const bool by_links_;
    const bool routed_;  // a switch tree's links, or by_links_

    std::vector<double> xbytes_;  // bytes of every transfer
    std::vector<Load> load_;      // per step: the rank's own link use and work
    std::vector<Nic> nic_;
    std::vector<std::vector<int>> live_sources_;  // with empty_blocks_
    // A direct network: bytes per (node's step, peer node), read into the
    // NIC loads by spread_direct_loads (RankMap::direct).
    std::vector<std::map<int, PeerLoad>> nic_peer_;
    std::vector<double> nic_hops_;
    // Routed links: bytes through each, per direction and sender's step.
    std::unordered_map<uint64_t, double> link_load_;
    // After the first schedule: per (link code, sender's step in steps_),
    // the bytes that cross the link while that step runs (timed_loads);
    // empty while the step-index loads stand.
    std::unordered_map<uint64_t, double> timed_load_;
    std::vector<LinkParams> route_params_;  // per link id (route code >> 1)
    std::vector<double> link_cost_, start_, end_;
    std::vector<long> pred_of_;
    std::vector<uint32_t> comm_of_;
};

void PlanModel::Pricing::tally_transfer(const StepRec& rec, uint32_t i, Load* l) {
    const Xfer& x = m_.xfers_[i];
    size_t n = 0;
    for (uint32_t j = x.first_run; j < x.first_run + x.nruns; ++j)
        n += run_elems(count_, m_.nblocks_, m_.runs_[j].lo, m_.runs_[j].len);
    const double b = static_cast<double>(n) * es_;
    xbytes_[i] = b;
    if (b <= 0) return;
    const int c = x.intra ? 0 : 1;
    if (x.recv) {
        l->recv[c] += b;
        l->nrecv[c] += 1;
        if (x.intra) l->intra_flows_in += 1;
    } else {
        l->sent[c] += b;
        l->nsent[c] += 1;
    }
    if (x.intra) return;
    const size_t ni = m_.nic_index(rec.node, rec.step);
    if (m_.direct_) {
        PeerLoad& pl = nic_peer_[ni][x.src_node];
        (x.recv ? pl.recv : pl.sent) += b;
        return;
    }
    (x.recv ? nic_[ni].recv : nic_[ni].sent) += b;
    if (x.recv && empty_blocks_) live_sources_[ni].push_back(x.src_node);
}

void PlanModel::Pricing::tally_steps() {
    const size_t nsteps = m_.steps_.size();
    xbytes_.assign(m_.xfers_.size(), 0);
    load_.assign(nsteps, Load{});
    nic_.assign(m_.nic_sources_.size(), Nic{});
    if (empty_blocks_) live_sources_.assign(m_.nic_sources_.size(), {});
    if (m_.direct_) nic_peer_.resize(m_.nic_sources_.size());
    for (size_t k = 0; k < nsteps; ++k) {
        const StepRec& rec = m_.steps_[k];
        Load& l = load_[k];
        for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer; ++i) tally_transfer(rec, i, &l);
        for (uint32_t i = rec.first_op; i < rec.first_op + rec.nop; ++i) {
            const OpRun& o = m_.op_runs_[i];
            const double n = static_cast<double>(run_elems(count_, m_.nblocks_, o.lo, o.len)) * es_;
            l.reduce += o.combine * n;
            l.memory += o.access * n;
        }
    }
    for (auto& v : live_sources_) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
}

// Each direction: the busiest peer's bytes, or the node's share of the link
// load its routes add (bytes × hops over its link units), whichever is
// larger; latency: the farthest peer's hops.
void PlanModel::Pricing::spread_direct_loads() {
    const DirectNetwork& d = *m_.direct_;
    nic_hops_.assign(nic_.size(), 1);
    std::vector<int> node_id(static_cast<size_t>(m_.nnodes_), -1);
    for (const StepRec& rec : m_.steps_)
        node_id[static_cast<size_t>(rec.node)] = m_.direct_node_[static_cast<size_t>(rec.rank)];
    auto dense = [&](int id) {
        return id >= 0 && id < static_cast<int>(d.dense.size()) ? d.dense[static_cast<size_t>(id)] : -1;
    };
    for (size_t ni = 0; ni < nic_peer_.size(); ++ni) {
        if (nic_peer_[ni].empty()) continue;
        const int self = node_id[ni / static_cast<size_t>(m_.max_steps_)];
        const int ds = dense(self);
        double max_s = 0, max_r = 0, sum_s = 0, sum_r = 0, far = 1;
        // Units of the neighbours on a shortest path to some peer.
        std::vector<char> on_path(ds >= 0 ? d.adj[static_cast<size_t>(ds)].size() : 0, 0);
        for (const auto& [peer, pl] : nic_peer_[ni]) {
            const int h = d.hop(self, peer);
            max_s = std::max(max_s, pl.sent);
            max_r = std::max(max_r, pl.recv);
            sum_s += pl.sent * h;
            sum_r += pl.recv * h;
            far = std::max(far, static_cast<double>(h));
            const int dp = dense(peer);
            if (ds < 0 || dp < 0) continue;
            const auto& nb = d.adj[static_cast<size_t>(ds)];
            for (size_t j = 0; j < nb.size(); ++j) {
                const int hv = d.dense_hops(nb[j].first, dp);
                if (hv != 0xffff && hv + 1 == h) on_path[j] = 1;
            }
        }
        double units = 0;
        for (size_t j = 0; j < on_path.size(); ++j)
            if (on_path[j]) units += d.adj[static_cast<size_t>(ds)][j].second;
        if (units <= 0) units = 1;
        nic_[ni].sent = std::max(max_s, sum_s / units);
        nic_[ni].recv = std::max(max_r, sum_r / units);
        nic_hops_[ni] = far;
    }
}

// Routed links (a switch tree's links above the hosts, or every link of a
// heterogeneous direct network): each link's parameters, and the bytes
// through it per direction and sender's step index (sends only: each
// transfer once).
void PlanModel::Pricing::load_routes() {
    if (m_.tree_) {
        const SwitchTree& tree = *m_.tree_;
        std::vector<LinkParams> class_params;
        for (size_t c = 0; c < tree.classes.size(); ++c)
            class_params.push_back(tree.class_params(static_cast<int>(c), params_));
        // A link without a class: no latency of its own, the NIC's β.
        route_params_.assign(tree.up_class.size(), tree.class_params(-1, params_));
        for (size_t v = 0; v < tree.up_class.size(); ++v) {
            const int cls = tree.up_class[v];
            if (cls >= 0 && static_cast<size_t>(cls) < class_params.size())
                route_params_[v] = class_params[static_cast<size_t>(cls)];
        }
    } else if (routed_) {
        for (size_t l = 0; l < m_.direct_->links.size(); ++l)
            route_params_.push_back(m_.direct_->link_params(static_cast<int>(l), params_));
    }
    if (!routed_) return;
    const uint64_t steps = static_cast<uint64_t>(m_.max_steps_);
    each_routed_send([&](size_t k, uint32_t code, double bytes) {
        link_load_[static_cast<uint64_t>(code) * steps + static_cast<uint64_t>(m_.steps_[k].step)] += bytes;
    });
}

// Whether every modelled rank runs as many steps as the others.  Ranks that
// run fewer (rhd's and rd's folded ranks) are where one rank's step k meets
// another's step k+1 on a link; where all run the same number, the
// step-index loads stand (and the timed pass is not worth its cost in the
// decision tables).
bool PlanModel::Pricing::lock_step() const {
    const int n = m_.modelled_ranks();
    for (int r = 1; r < n; ++r) {
        const size_t i = static_cast<size_t>(r);
        if (m_.rank_first_step_[i + 1] - m_.rank_first_step_[i] != m_.rank_first_step_[1] - m_.rank_first_step_[0])
            return false;
    }
    return true;
}

// Each routed link's load while a step sends over it, from the last
// schedule: every send's bytes spread evenly over its step's time, the
// share of each that falls inside the step's (a fluid view of the link;
// it equals the step-index sum when ranks run in lock step, and does not
// add up the rounds of ranks that run a step apart, as rhd's folded ranks
// do).  A step without duration counts its own bytes.  Returns whether any
// load differs from the step-index sums (then route_price reads these).
bool PlanModel::Pricing::timed_loads() {
    struct Use {
        uint64_t step;
        double bytes;
    };
    std::unordered_map<uint32_t, std::vector<Use>> by_link;
    each_routed_send([&](size_t k, uint32_t code, double bytes) { by_link[code].push_back({k, bytes}); });
    std::unordered_map<uint64_t, double> loads;
    const uint64_t nsteps = m_.steps_.size();
    std::vector<std::pair<double, double>> events;  // (time, change of the byte rate)
    std::vector<double> times, integral;              // F(t): bytes sent up to t
    for (const auto& [code, uses] : by_link) {
        events.clear();
        for (const Use& u : uses) {
            const double len = end_[u.step] - start_[u.step];
            if (len <= 0) continue;
            events.emplace_back(start_[u.step], u.bytes / len);
            events.emplace_back(end_[u.step], -u.bytes / len);
        }
        std::sort(events.begin(), events.end());
        times.clear();
        integral.clear();
        double rate = 0;
        for (const auto& [t, d] : events) {
            if (times.empty() || t > times.back()) {
                integral.push_back(times.empty() ? 0 : integral.back() + rate * (t - times.back()));
                times.push_back(t);
            }
            rate += d;
        }
        auto at = [&](double t) {
            return integral[static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin())];
        };
        for (const Use& u : uses) {
            const double load = end_[u.step] > start_[u.step] ? at(end_[u.step]) - at(start_[u.step]) : u.bytes;
            double& slot = loads[static_cast<uint64_t>(code) * nsteps + u.step];
            slot = std::max(slot, load);
        }
    }
    // Where they are the step-index sums already, the schedule stands.
    const uint64_t steps = static_cast<uint64_t>(m_.max_steps_);
    bool same = true;
    for (const auto& [key, load] : loads) {
        const uint64_t code = key / nsteps, step = static_cast<uint64_t>(m_.steps_[key % nsteps].step);
        auto it = link_load_.find(code * steps + step);
        const double was = it == link_load_.end() ? 0 : it->second;
        if (std::fabs(load - was) > 1e-9 * std::max(load, was)) {
            same = false;
            break;
        }
    }
    if (same) return false;
    timed_load_ = std::move(loads);
    return true;
}

// Step k's routes: the largest sum of link latencies over its transfers,
// and the busiest link's time.
void PlanModel::Pricing::route_price(size_t k, double* latency, double* busiest) const {
    *latency = 0;
    *busiest = 0;
    const StepRec& rec = m_.steps_[k];
    // Loads keyed by the sending step: its step index, or once timed_loads
    // replaced them, its place in steps_.
    const bool timed = !timed_load_.empty();
    const auto& loads = timed ? timed_load_ : link_load_;
    const uint64_t width = timed ? m_.steps_.size() : static_cast<uint64_t>(m_.max_steps_);
    for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer; ++i) {
        const Xfer& x = m_.xfers_[i];
        if (x.nlinks == 0 || xbytes_[i] <= 0) continue;
        const uint64_t sender =
            !x.recv ? (timed ? k : static_cast<uint64_t>(rec.step))
                    : static_cast<uint64_t>(x.peer_step) +
                          (timed ? m_.rank_first_step_[static_cast<size_t>(x.peer)] : 0);
        double lat = 0;
        for (uint32_t j = x.first_link; j < x.first_link + x.nlinks; ++j) {
            const uint32_t code = m_.route_[j];
            const LinkParams& lp = route_params_[code >> 1];
            lat += lp.alpha;
            auto it = loads.find(static_cast<uint64_t>(code) * width + sender);
            if (it != loads.end()) *busiest = std::max(*busiest, lp.beta * it->second);
        }
        *latency = std::max(*latency, lat);
    }
}

// The inter-node part of step k's cost: its NIC's load, or on routed
// networks the busiest routed link if slower, plus the route's latency.
StepCost PlanModel::Pricing::inter_price(size_t k) const {
    const StepRec& rec = m_.steps_[k];
    const Load& l = load_[k];
    const size_t ni = m_.nic_index(rec.node, rec.step);
    // A direct network: a link has one sender, no fan-in; the latency is
    // paid once per hop of the farthest peer.
    const int sources = m_.direct_ ? (nic_[ni].recv > 0 ? 1 : 0)
                                   : static_cast<int>(empty_blocks_ ? live_sources_[ni].size()
                                                                    : m_.nic_sources_[ni].size());
    StepCost e = step_price::nic_price(params_, nic_[ni].sent, nic_[ni].recv, sources,
                                       std::max(l.nsent[1], l.nrecv[1]), (rec.shift & 2) != 0,
                                       m_.direct_ ? nic_hops_[ni] : 1, by_links_);
    if (routed_) {
        double latency = 0, busiest = 0;
        route_price(k, &latency, &busiest);
        const double excess = std::max(busiest - (e.terms.beta + e.terms.epsilon), 0.0);
        e.terms.alpha += latency;
        e.terms.beta += excess;
        e.cost += latency + excess;
        e.coeff.route_seconds = latency + excess;
    }
    return e;
}

// The link part of step k's cost, from its own rank's (and NIC's) load:
// the slower of its intra-node and inter-node parts.
StepCost PlanModel::Pricing::link_price(size_t k) const {
    const StepRec& rec = m_.steps_[k];
    const Load& l = load_[k];
    StepCost intra;
    if (l.sent[0] > 0 || l.recv[0] > 0)
        intra = step_price::intra_price(params_, l.sent[0], l.recv[0], l.intra_flows_in,
                                        std::max(l.nsent[0], l.nrecv[0]), (rec.shift & 1) != 0);
    StepCost best = intra;
    if (l.sent[1] > 0 || l.recv[1] > 0) {
        const StepCost e = inter_price(k);
        best = step_price::slower_part(intra, &e);
    }
    step_price::add_nonblocking(params_, &best);
    return best;
}

// Times in dependency order.  pred_of_[k]: the step whose end started k (its
// own predecessor unless a partner's came later; ties go to its own, then to
// the lowest rank), or -1.  comm_of_[k]: the step whose link cost set k's
// communication time — k itself, or a partner's step whose end of the
// transfers is busier (a transfer completes at the pace of its slower
// endpoint).
void PlanModel::Pricing::schedule() {
    const size_t nsteps = m_.steps_.size();
    link_cost_.resize(nsteps);
    for (size_t k = 0; k < nsteps; ++k) link_cost_[k] = link_price(k).cost;
    end_.assign(nsteps, 0);
    start_.assign(nsteps, 0);
    pred_of_.assign(nsteps, kNone);
    comm_of_.assign(nsteps, 0);
    for (uint32_t k : m_.order_) {
        const StepRec& rec = m_.steps_[k];
        double t = 0;
        long from = kNone;
        int from_rank = -1;
        if (rec.step > 0) {
            from = static_cast<long>(k) - 1;
            t = end_[k - 1];
            from_rank = rec.rank;
        }
        double comm = link_cost_[k];
        uint32_t comm_step = k;
        for (uint32_t i = rec.first_xfer; i < rec.first_xfer + rec.nxfer; ++i) {
            const Xfer& x = m_.xfers_[i];
            if (xbytes_[i] <= 0) continue;
            const uint32_t first = m_.rank_first_step_[static_cast<size_t>(x.peer)];
            const uint32_t theirs = first + static_cast<uint32_t>(x.peer_step);
            if (link_cost_[theirs] > comm) {
                comm = link_cost_[theirs];
                comm_step = theirs;
            }
            if (x.peer_step == 0) continue;
            const long before = static_cast<long>(first) + x.peer_step - 1;
            const double tb = end_[static_cast<size_t>(before)];
            if (tb > t || (tb == t && from_rank != rec.rank && from_rank >= 0 && x.peer < from_rank)) {
                t = tb;
                from = before;
                from_rank = x.peer;
            }
        }
        start_[k] = t;
        end_[k] = t + comm + host_cost(k);
        pred_of_[k] = from;
        comm_of_[k] = comm_step;
    }
}

// The step that ends last (any rank's last step), or kNone when no rank has
// a step (P = 1).
long PlanModel::Pricing::last_step() const {
    long last = kNone;
    for (int r = 0; r < m_.modelled_ranks(); ++r) {
        const uint32_t first = m_.rank_first_step_[static_cast<size_t>(r)];
        const uint32_t after = m_.rank_first_step_[static_cast<size_t>(r) + 1];
        if (after == first) continue;
        if (last == kNone || end_[after - 1] > end_[static_cast<size_t>(last)]) last = after - 1;
    }
    return last;
}

// The critical path back from the last step, with the terms of each of its
// steps (priced again: only these need their terms).
Prediction PlanModel::Pricing::critical_path() const {
    Prediction pred;
    pred.status = Status::ok();
    const long last = last_step();
    if (last == kNone) return pred;
    for (long k = last; k != kNone; k = pred_of_[static_cast<size_t>(k)]) {
        const size_t kk = static_cast<size_t>(k);
        PathStep ps;
        ps.rank = m_.steps_[kk].rank;
        ps.step = m_.steps_[kk].step;
        ps.link_rank = m_.steps_[comm_of_[kk]].rank;
        ps.link_step = m_.steps_[comm_of_[kk]].step;
        ps.start = start_[kk];
        ps.end = end_[kk];
        step_price::add_path_step(params_.host, link_price(comm_of_[kk]), load_[kk].reduce,
                                  load_[kk].memory, ps, &pred);
    }
    std::reverse(pred.critical_path.begin(), pred.critical_path.end());
    pred.seconds = end_[static_cast<size_t>(last)];
    return pred;
}

Prediction PlanModel::predict(size_t count, size_t elem_size, const ModelParams& params) const {
    return Pricing(*this, count, elem_size, params).run();
}

Prediction predict(const Plan& plan, size_t count, size_t elem_size, const ModelParams& params,
                   const RankMap& ranks) {
    PlanModel model;
    Status st = PlanModel::build(plan, ranks, &model);
    if (!st) {
        Prediction p;
        p.status = st;
        p.seconds = std::numeric_limits<double>::infinity();
        return p;
    }
    return model.predict(count, elem_size, params);
}

// ------------------------------------------------------------ candidates

namespace {

// Canonical params with key=value added.
std::string with_param(const std::string& params, const std::string& key, const std::string& value) {
    ParamMap pm;
    if (!parse_params(params, &pm)) return params;
    pm[key] = value;
    return format_params(pm);
}

}  // namespace

std::vector<Candidate> enumerate_candidates(int nranks, const CandidateOptions& options) {
    std::vector<Candidate> out;
    if (nranks < 1) return out;
    auto wanted = [&](const std::string& family) {
        if (options.families.empty()) return true;
        return std::find(options.families.begin(), options.families.end(), family) !=
               options.families.end();
    };
    if (nranks == 1) {
        // Every family is the same empty plan.
        if (wanted("ring") || wanted(kOpenMpiFamilies) || wanted(kTunedFamilies))
            out.push_back({"ring", ""});
        return out;
    }
    // What Open MPI runs, each in rank order (displaced.hpp).
    if (options.families.size() == 1 && options.families[0] == kOpenMpiFamilies)
        return openmpi_candidates();
    if (options.families.size() == 1 && options.families[0] == kTunedFamilies)
        return tuned_candidates();
    CandidateContext ctx;
    ctx.nranks = nranks;
    ctx.ranks_per_node = options.ranks_per_node;
    ctx.max_hcps_levels = options.max_hcps_levels;
    ctx.topology = options.topology;
    for (const GeneratorInfo& g : generators()) {
        if (!wanted(g.name) || g.candidates == nullptr) continue;
        std::vector<std::string> params;
        CandidateContext own = ctx;
        own.topology = view_for_family(g, ctx.topology);
        g.candidates(own, &params);
        // The pairwise families also in each numbering that may keep their
        // exchanges off the expensive links (renumber.hpp); butterfly's
        // xor group only, the one whose digits are the ranks' bits.
        const std::vector<std::string> orders =
            renumberable_family(g.name) ? numberings_for(nranks, own.topology) : std::vector<std::string>{};
        // Identity first: on a tie the family's own numbering stays.
        for (const std::string& p : params) {
            out.push_back({g.name, p});
            for (const std::string& o : orders)
                if (g.name != "butterfly" || p.find("group=xor") != std::string::npos)
                    out.push_back({g.name, with_param(p, kOrderKey, o)});
        }
    }
    return out;
}

Status best_candidates(int nranks, size_t count, size_t elem_size, const ModelParams& params,
                       const RankMap& ranks, std::vector<RankedCandidate>* out,
                       const CandidateOptions& options) {
    std::vector<RankedCandidate> rows;
    for (const Candidate& c : enumerate_candidates(nranks, options)) {
        ParamMap pm;
        Status st = parse_params(c.params, &pm);
        // GenTree's per-switch plans are chosen at this size by this model.
        if (st)
            st = resolve_gentree(c.algorithm, options.topology,
                                 static_cast<double>(count) * static_cast<double>(elem_size), params, &pm);
        RankGenerator gen;
        // Families that follow the network plan on the same view they were
        // offered for (a plan of multitree or gentree without it is another plan).
        if (st) st = prepare(c.algorithm, nranks, pm, options.topology, &gen);
        PlanModel model;
        if (st) st = PlanModel::build(gen, ranks, &model, nranks > kWholePlanMaxRanks);
        if (!st)
            return Status::internal("candidate " + c.algorithm + " '" + c.params + "' for P=" +
                                    std::to_string(nranks) + " cannot be priced: " + st.message());
        Candidate shown = c;
        if (c.algorithm == "gentree") shown.params = format_params(pm);
        RankedCandidate row{shown, model.predict(count, elem_size, params)};
        if (!row.prediction.status)
            return Status::internal("candidate " + c.algorithm + " '" + c.params +
                                    "': " + row.prediction.status.message());
        rows.push_back(std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const RankedCandidate& a, const RankedCandidate& b) {
                         return a.prediction.seconds < b.prediction.seconds;
                     });
    *out = std::move(rows);
    return Status::ok();
}

std::string format_prediction_table(const std::vector<RankedCandidate>& rows) {
    double top = 0;
    for (const RankedCandidate& r : rows) top = std::max(top, r.prediction.seconds);
    const char* unit = "s";
    double scale = 1;
    if (top < 1e-3) {
        unit = "us";
        scale = 1e6;
    } else if (top < 1) {
        unit = "ms";
        scale = 1e3;
    }
    size_t wa = 9, wp = 6;
    for (const RankedCandidate& r : rows) {
        wa = std::max(wa, r.candidate.algorithm.size());
        wp = std::max(wp, r.candidate.params.size());
    }
    // Names padded here, not by snprintf: GenTree's params on a large tree
    // run to hundreds of characters.
    auto padded = [](std::string s, size_t w) {
        if (s.size() < w) s.append(w - s.size(), ' ');
        return s;
    };
    std::string out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %10s  %10s  %10s  %10s  %10s  %10s   (%s)\n", "total", "alpha",
                  "beta", "gamma", "delta", "epsilon", unit);
    out += padded("algorithm", wa) + "  " + padded("params", wp) + buf;
    for (const RankedCandidate& r : rows) {
        const TermTimes& t = r.prediction.terms;
        std::snprintf(buf, sizeof buf, "  %10.4f  %10.4f  %10.4f  %10.4f  %10.4f  %10.4f\n",
                      r.prediction.seconds * scale, t.alpha * scale, t.beta * scale,
                      t.gamma * scale, t.delta * scale, t.epsilon * scale);
        out += padded(r.candidate.algorithm, wa) + "  " +
               padded(r.candidate.params.empty() ? "-" : r.candidate.params, wp) + buf;
    }
    return out;
}

}  // namespace genx
