// The job's layout: nodes, the kind of host, the switch tree (discover(),
// tune/phases.hpp; Cluster, tune/context.hpp).
#include <algorithm>
#include <map>
#include <sstream>

#include "topology/placement.hpp"
#include "topology/topology.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"
#include "tuning/decision_table.hpp"

namespace genx::tune {

std::shared_ptr<const TopologyView> Cluster::view_of_first(int c) const {
    std::shared_ptr<const TopologyView> view;
    if (topology.empty()) return view;
    const std::vector<std::string> first(hosts.begin(), hosts.begin() + c);
    if (!place_ranks(topology, overlay, first, &view)) view.reset();
    return view;
}

RankMap Cluster::map_of_first(int c, const std::shared_ptr<const TopologyView>& view) const {
    if (view) return rank_map_for(CommShape{c, 0, 0, view});
    RankMap m;
    m.node.assign(node.begin(), node.begin() + c);
    return m;
}

CommShape Cluster::shape_of_first(int c) const {
    std::map<int, int> per;
    for (int r = 0; r < c; ++r) ++per[node[static_cast<size_t>(r)]];
    int mx = 0;
    for (const auto& kv : per) mx = std::max(mx, kv.second);
    return CommShape{c, static_cast<int>(per.size()), mx};
}

namespace {

// Each rank's node: the lowest rank sharing its memory, made dense.
Cluster find_nodes(const mpi::Comm& world) {
    int leader = world.rank();
    world.split_shared().bcast(&leader, 1);
    Cluster c;
    std::map<int, int> dense;
    std::map<int, int> count;
    for (int l : world.allgather(leader)) {
        const int id = dense.emplace(l, static_cast<int>(dense.size())).first->second;
        c.node.push_back(id);
        ++count[id];
    }
    c.nodes = static_cast<int>(dense.size());
    c.ppn = 0;
    for (const auto& kv : count) c.ppn = std::max(c.ppn, kv.second);
    return c;
}

// Fingerprints must agree: a rules file is for one kind of host.
void check_fingerprints(const Context& ctx) {
    std::string fp0 = ctx.fingerprint;
    ctx.world.bcast(&fp0);
    if (ctx.world.max(fp0 != ctx.fingerprint ? 1 : 0) != 0)
        die("the ranks run on different kinds of host (fingerprints differ from rank 0's \"" +
                fp0 + "\"); tune each kind of host separately",
            2);
}

// The switch tree, where a topology file holds the job's hosts.
void place_on_topology(Context* ctx) {
    const Options& opt = ctx->opt;
    Cluster& cluster = ctx->cluster;
    cluster.hosts = ctx->world.allgather_names(local_host_name());
    std::shared_ptr<const TopologyView> view;
    check(place_ranks(opt.topology, opt.overlay, cluster.hosts, &view), "--topology");
    // Every rank read the files itself: they must agree, or the ranks
    // would measure different routes and hang.
    const unsigned long long fp = view->fingerprint();
    if (ctx->world.max(fp) != ctx->world.min(fp))
        die("--topology: the ranks read different trees from " + opt.topology +
                (opt.overlay.empty() ? std::string() : " and " + opt.overlay) +
                " (a file that differs between nodes?); give every rank the same files",
            2);
    cluster.topology = opt.topology;
    cluster.overlay = opt.overlay;
    ctx->tree_map = rank_map_for(CommShape{ctx->size, cluster.nodes, cluster.ppn, view});
    progress("topology " + opt.topology + ": " + std::to_string(view->depth()) +
             " switch level(s)" + (ctx->tree_map.tree ? "" : ", no link above the hosts"));
}

std::vector<size_t> parse_sizes(const std::vector<std::string>& texts, const char* what) {
    std::vector<size_t> out;
    for (const std::string& t : texts) {
        size_t v = 0;
        const Status st = parse_size(t, &v);
        if (!st) die(std::string(what) + ": " + st.message(), 2);
        if (v < sizeof(float)) die(std::string(what) + ": " + t + " is below one float", 2);
        out.push_back(v / sizeof(float) * sizeof(float));
    }
    return out;
}

std::vector<int> parse_comm_sizes(const std::string& text, int size) {
    std::vector<int> out;
    if (text.empty()) return {size};
    if (text == "all") {
        for (int c = 2; c <= size; ++c) out.push_back(c);
        return out;
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        CountRange r;
        const Status st = parse_count_range(item, &r);
        if (!st) die("--comm-sizes: " + st.message(), 2);
        const long hi = r.hi < 0 ? size : r.hi;
        for (long c = r.lo; c <= hi; ++c) {
            if (c < 2 || c > size)
                die("--comm-sizes: " + std::to_string(c) + " is not in 2.." +
                        std::to_string(size) + " (the job's size)",
                    2);
            out.push_back(static_cast<int>(c));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The budget's shares per phase (docs/genx-tune.md, "Time bound"): without
// --verify the measurements get it all; with a switch tree the exchanges
// across its links take the last 40 % of the p2p share.
Shares phase_shares(bool verify, bool tree) {
    Shares s;
    const double p2p = verify ? 0.10 : 0.20;
    s.route = p2p;
    s.p2p_own = tree ? 0.6 * p2p : p2p;
    s.reduce = verify ? 0.20 : 0.40;
    s.cps = verify ? 0.45 : 0.90;
    s.shift = verify ? 0.50 : 0.95;
    return s;
}

}  // namespace

void discover(Context* ctx) {
    Options& opt = ctx->opt;
    if (ctx->size < 2) die("genx-tune needs at least 2 ranks (mpirun -np P genx-tune)", 2);
    ctx->comm_sizes = parse_comm_sizes(opt.comm_sizes, ctx->size);
    ctx->reduce_bytes = parse_sizes(opt.reduce_bytes, "--reduce-bytes");
    ctx->cps_bytes = parse_sizes(opt.cps_bytes, "--cps-bytes");
    const std::string stem = opt.output.size() > 5 &&
                                     opt.output.compare(opt.output.size() - 5, 5, ".json") == 0
                                 ? opt.output.substr(0, opt.output.size() - 5)
                                 : opt.output;
    if (opt.csv.empty()) opt.csv = stem + ".csv";
    if (opt.svg.empty()) opt.svg = stem + ".svg";

    ctx->cluster = find_nodes(ctx->world);
    ctx->fingerprint = local_fingerprint();
    check_fingerprints(*ctx);
    if (!opt.topology.empty()) place_on_topology(ctx);
    progress(std::to_string(ctx->size) + " ranks on " + std::to_string(ctx->cluster.nodes) +
             " node(s), up to " + std::to_string(ctx->cluster.ppn) + " per node; host \"" +
             ctx->fingerprint + "\"; budget " + std::to_string(static_cast<int>(opt.max_time)) +
             " s");
    ctx->start = mpi::wtime();
    ctx->shares = phase_shares(opt.verify, ctx->tree_map.tree != nullptr);
}

}  // namespace genx::tune
