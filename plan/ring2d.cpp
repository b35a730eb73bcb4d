// 2D-ring generator (description and cost in ring2d.hpp).
#include "plan/ring2d.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace genx {

namespace {

// Where the ranks sit: grid index i = x + X·y holds rank rank_at[i].
struct Layout {
    int X = 1, Y = 1;
    std::vector<int> rank_at;   // grid index -> rank
    std::vector<int> index_of;  // rank -> grid index
};

// Why a grid view does not fit, or "".
std::string grid_problem(const TopologyView& v, int nranks) {
    if (v.grid.size() > 2)
        return "the topology is a " + std::to_string(v.grid.size()) + "-D grid (" +
               format_factors(v.grid) + "); ring2d runs on a 2-D torus or mesh";
    long cells = 1;
    for (int d : v.grid) cells *= d;
    if (static_cast<long>(v.grid_host.size()) != cells)
        return "the topology's grid has " + std::to_string(cells) + " cells but names " +
               std::to_string(v.grid_host.size()) + " hosts";
    for (int h : v.grid_host) {
        if (h < 0 || h >= static_cast<int>(v.nodes.size()))
            return "the topology's grid names node " + std::to_string(h) + ", which it does not hold";
        const TopoNode& n = v.nodes[static_cast<size_t>(h)];
        if (n.ranks.size() != 1)
            return "grid host '" + n.name + "' holds " + std::to_string(n.ranks.size()) +
                   " ranks; ring2d needs exactly one rank on every host of the grid";
    }
    if (cells != nranks)
        return "the topology's grid holds " + std::to_string(cells) + " ranks, not " +
               std::to_string(nranks);
    return "";
}

// One step of one rank's program being assembled: transfers keyed by peer,
// so that both halves' messages to a peer become one transfer.
struct StepBuilder {
    Step* st;
    std::vector<int> reduced;  // blocks received into slot 0, folded at the end

    static Transfer& find(std::vector<Transfer>& xs, int peer, BufferId buffer) {
        for (Transfer& t : xs)
            if (t.peer == peer) return t;  // the buffer agrees: see ring2d.hpp
        xs.push_back(Transfer{peer, {}, buffer});
        return xs.back();
    }
    void send(int peer, int first, int n) {
        Transfer& t = find(st->sends, peer, kResult);
        for (int b = first; b < first + n; ++b) t.blocks.push_back(b);
    }
    void recv(int peer, int first, int n, bool reduce) {
        Transfer& t = find(st->recvs, peer, reduce ? 0 : kResult);
        for (int b = first; b < first + n; ++b) {
            t.blocks.push_back(b);
            if (reduce) reduced.push_back(b);
        }
    }
    void finish() {
        if (!reduced.empty()) st->ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, reduced});
    }
};

}  // namespace

Status prepare_ring2d(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("ring2d: number of ranks must be >= 1, got " + std::to_string(P));
    std::vector<int> dims;
    if (auto it = req.params.find("dims"); it != req.params.end()) {
        if (Status s = parse_factors(it->second, &dims); !s) return Status::invalid("ring2d: dims: " + s.message());
        if (dims.size() != 2)
            return Status::invalid("ring2d: dims '" + it->second +
                                   "' must name two dimensions, XxY (e.g. dims=4x4)");
        const long long prod = static_cast<long long>(dims[0]) * dims[1];
        if (dims[0] < 1 || dims[1] < 1 || prod != P)
            return Status::invalid("ring2d: dims " + it->second + " hold " + std::to_string(prod) +
                                   " ranks, not " + std::to_string(P) + " (X·Y must equal P)");
    }
    for (const auto& kv : req.params)
        if (kv.first != "dims")
            return Status::invalid("ring2d: unknown parameter '" + kv.first + "'");
    auto lay = std::make_shared<Layout>();
    const TopologyView* v = req.topology;
    if (v != nullptr && !v->grid.empty()) {
        const std::string bad = grid_problem(*v, P);
        if (!bad.empty()) return Status::invalid("ring2d: " + bad);
        lay->X = v->grid[0];
        lay->Y = v->grid.size() > 1 ? v->grid[1] : 1;
        if (!dims.empty() && (dims[0] != lay->X || dims[1] != lay->Y))
            return Status::invalid("ring2d: dims " + format_factors(dims) +
                                   " disagree with the topology's grid " +
                                   format_factors({lay->X, lay->Y}));
        lay->rank_at.resize(static_cast<size_t>(P));
        lay->index_of.assign(static_cast<size_t>(P), -1);
        for (int i = 0; i < P; ++i) {
            const int r = v->nodes[static_cast<size_t>(v->grid_host[static_cast<size_t>(i)])].ranks[0];
            if (r < 0 || r >= P || lay->index_of[static_cast<size_t>(r)] >= 0)
                return Status::invalid("ring2d: rank " + std::to_string(r) +
                                       " is not placed on exactly one grid host");
            lay->rank_at[static_cast<size_t>(i)] = r;
            lay->index_of[static_cast<size_t>(r)] = i;
        }
    } else if (v != nullptr && v->direct) {
        return Status::invalid("ring2d: the topology is a direct network without grid coordinates "
                               "(a graph file); ring2d needs a torus or mesh (torus:AxB, mesh:AxB)");
    } else if (!dims.empty()) {
        lay->X = dims[0];
        lay->Y = dims[1];
        lay->rank_at.resize(static_cast<size_t>(P));
        lay->index_of.resize(static_cast<size_t>(P));
        for (int i = 0; i < P; ++i) lay->rank_at[static_cast<size_t>(i)] = lay->index_of[static_cast<size_t>(i)] = i;
    } else {
        return Status::invalid(std::string("ring2d: no grid to lay the ranks on: ") +
                               (v != nullptr ? "the topology is a switch tree" : "no topology is known") +
                               "; give a 2-D torus or mesh topology (torus:AxB, mesh:AxB) or "
                               "dims=XxY with X·Y = " + std::to_string(P) + " (ranks in row-major order)");
    }
    RankGenerator g;
    g.header.algorithm = "ring2d";
    g.header.nranks = P;
    g.header.nblocks = 2 * P;
    if (!dims.empty()) g.header.params = "dims=" + format_factors(dims);
    bool in_order = true;
    for (int i = 0; i < P; ++i) in_order = in_order && lay->rank_at[static_cast<size_t>(i)] == i;
    if (in_order) {
        for (int d : {lay->X, lay->Y})
            if (d > 1) g.header.symmetry.push_back(d);
        if (g.header.symmetry.empty()) g.header.symmetry = {P};
    }
    g.header.representatives = {0};
    g.emit = [lay, P](int r, Program* prog) {
        const int X = lay->X, Y = lay->Y;
        const int T = 2 * (X - 1) + 2 * (Y - 1);
        const int i = lay->index_of[static_cast<size_t>(r)];
        const int x = i % X, y = i / X;
        auto mod = [](int a, int n) { return ((a % n) + n) % n; };
        auto at = [&](int gx, int gy) { return lay->rank_at[static_cast<size_t>(mod(gx, X) + X * mod(gy, Y))]; };
        const size_t base = prog->steps.size();
        prog->steps.resize(base + static_cast<size_t>(T));
        std::vector<StepBuilder> sb;
        sb.reserve(static_cast<size_t>(T));
        for (int s = 0; s < T; ++s) sb.push_back(StepBuilder{&prog->steps[base + static_cast<size_t>(s)], {}});
        // Half h runs dimension `d1` (size n1, coordinate c1) first, then
        // `d2`.  Block of super-chunk a, sub-block b: first + a·n2 + b.
        for (int h = 0; h < 2; ++h) {
            const int n1 = h == 0 ? X : Y, n2 = h == 0 ? Y : X;
            const int c1 = h == 0 ? x : y, c2 = h == 0 ? y : x;
            const int first = h * P;
            const int next1 = h == 0 ? at(x + 1, y) : at(x, y + 1);
            const int prev1 = h == 0 ? at(x - 1, y) : at(x, y - 1);
            const int next2 = h == 0 ? at(x, y + 1) : at(x + 1, y);
            const int prev2 = h == 0 ? at(x, y - 1) : at(x - 1, y);
            int s = 0;
            // Reduce-scatter along d1 over super-chunks of n2 blocks.
            for (int k = 0; k < n1 - 1; ++k, ++s) {
                sb[static_cast<size_t>(s)].send(next1, first + mod(c1 - k, n1) * n2, n2);
                sb[static_cast<size_t>(s)].recv(prev1, first + mod(c1 - k - 1, n1) * n2, n2, true);
            }
            // The super-chunk this rank now owns, reduced along d1.
            const int own = first + mod(c1 + 1, n1) * n2;
            // Reduce-scatter along d2 over its blocks, then allgather them.
            for (int k = 0; k < n2 - 1; ++k, ++s) {
                sb[static_cast<size_t>(s)].send(next2, own + mod(c2 - k, n2), 1);
                sb[static_cast<size_t>(s)].recv(prev2, own + mod(c2 - k - 1, n2), 1, true);
            }
            for (int t = 0; t < n2 - 1; ++t, ++s) {
                sb[static_cast<size_t>(s)].send(next2, own + mod(c2 + 1 - t, n2), 1);
                sb[static_cast<size_t>(s)].recv(prev2, own + mod(c2 - t, n2), 1, false);
            }
            // Allgather along d1.
            for (int t = 0; t < n1 - 1; ++t, ++s) {
                sb[static_cast<size_t>(s)].send(next1, first + mod(c1 + 1 - t, n1) * n2, n2);
                sb[static_cast<size_t>(s)].recv(prev1, first + mod(c1 - t, n1) * n2, n2, false);
            }
        }
        for (StepBuilder& b : sb) b.finish();
    };
    *out = std::move(g);
    return Status::ok();
}

void ring2d_candidates(const CandidateContext& ctx, std::vector<std::string>* out) {
    const TopologyView* v = ctx.topology;
    if (v == nullptr || v->empty() || v->grid.size() != 2 || !grid_problem(*v, ctx.nranks).empty())
        return;
    out->push_back("");
}

}  // namespace genx
