// The exchanges that fit each link class's α and β: within and between
// nodes, and across switch links with --topology (tune/phases.hpp;
// docs/genx-tune.md, "What it measures").
#include <set>

#include "tune/bench.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"

namespace genx::tune {

void measure_p2p(Context* ctx) {
    const Cluster& cluster = ctx->cluster;
    auto pp = std::make_shared<Plan>(exchange_plan());
    int intra = -1, inter = -1;
    for (int r = 1; r < ctx->size; ++r) {
        if (intra < 0 && cluster.node[static_cast<size_t>(r)] == cluster.node[0]) intra = r;
        // The NIC's own α and β: a host under rank 0's leaf switch where
        // the topology says which those are.
        if (cluster.node[static_cast<size_t>(r)] != cluster.node[0] &&
            (inter < 0 || (!route_classes(*ctx, inter).empty() && route_classes(*ctx, r).empty())))
            inter = r;
    }
    if (inter >= 0 && !route_classes(*ctx, inter).empty())
        progress("topology: no other host under rank 0's switch; the NIC's p2p-inter "
                 "crosses switch links");
    const Budget budget = ctx->phase_end(ctx->shares.p2p_own);
    int todo = static_cast<int>(ctx->p2p_bytes.size()) * ((intra >= 0) + (inter >= 0));
    for (int peer : {intra, inter}) {
        if (peer < 0) continue;
        const bool same = peer == intra;
        BenchSpec spec{same ? "p2p-intra" : "p2p-inter", same ? "p2p intra" : "p2p inter", pp,
                       {0, peer}, RankMap{}};
        spec.ranks.node = {cluster.node[0], cluster.node[static_cast<size_t>(peer)]};
        bench(ctx, spec, ctx->p2p_bytes, budget, &todo);
    }
}

// Rank 0 and the first rank of each host whose route crosses a set of
// classes not seen yet, at most four routes (fit_link_classes).
void measure_link_classes(Context* ctx) {
    const RankMap& tree = ctx->tree_map;
    if (!tree.tree) return;
    std::vector<std::pair<int, std::string>> peers;
    std::set<std::map<int, int>> seen;
    for (int r = 1; r < ctx->size && peers.size() < 4; ++r) {
        const std::map<int, int> sig = route_classes(*ctx, r);
        if (sig.empty() || !seen.insert(sig).second) continue;
        std::string what;
        for (const auto& [cls, n] : sig)
            what += (what.empty() ? "" : "+") + std::to_string(n) + "x" +
                    tree.tree->classes[static_cast<size_t>(cls)].name;
        peers.emplace_back(r, what);
    }
    if (peers.empty()) progress("topology: every host is under rank 0's switch; no switch class to fit");
    auto pp = std::make_shared<Plan>(exchange_plan());
    const Budget budget = ctx->phase_end(ctx->shares.route);
    int todo = static_cast<int>(ctx->p2p_bytes.size() * peers.size());
    for (const auto& [peer, what] : peers) {
        BenchSpec spec{"p2p-route", "p2p via " + what, pp, {0, peer}, RankMap{}};
        spec.ranks.node = {tree.node[0], tree.node[static_cast<size_t>(peer)]};
        spec.ranks.tree = tree.tree;
        bench(ctx, spec, ctx->p2p_bytes, budget, &todo, &ctx->route_data);
    }
}

}  // namespace genx::tune
