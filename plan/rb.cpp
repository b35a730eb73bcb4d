// Reduce-broadcast generator (description and cost in rb.hpp).
#include "plan/rb.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace genx {

Status prepare_rb(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    int root = 0;
    auto it = req.params.find("root");
    if (it != req.params.end()) {
        const std::string& v = it->second;
        const bool digits =
            !v.empty() && v.size() <= 9 &&
            std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
        if (!digits || std::stoi(v) >= P)
            return Status::invalid("rb: root '" + v + "' is not a rank in 0.." +
                                   std::to_string(P - 1));
        root = std::stoi(v);
    }

    RankGenerator g;
    g.header.algorithm = "rb";
    g.header.params = "root=" + std::to_string(root);
    g.header.nranks = P;
    g.header.nblocks = 1;
    g.header.order_preserving = root == 0;
    // The root and any other rank: every non-root does the same work.
    g.header.representatives = {root};
    if (P > 1) g.header.representatives.push_back(root == 0 ? 1 : 0);
    g.emit = [P, root](int r, Program* prog) {
        if (P == 1) return;
        Step gather, bcast;
        if (r == root) {
            LocalOp fold;
            fold.kind = OpKind::Reduce;
            fold.dst = kResult;
            fold.blocks = {0};
            // Slots in rank order: with root 0 the fold is x0 ⊕ x1 ⊕ … in
            // rank order (order preservation depends on it).
            int slot = 0;
            for (int q = 0; q < P; ++q) {
                if (q == root) continue;
                gather.recvs.push_back(Transfer{q, {0}, slot});
                fold.srcs.push_back(slot);
                bcast.sends.push_back(Transfer{q, {0}, kResult});
                ++slot;
            }
            gather.ops.push_back(std::move(fold));
        } else {
            gather.sends.push_back(Transfer{root, {0}, kResult});
            bcast.recvs.push_back(Transfer{root, {0}, kResult});
        }
        prog->steps.push_back(std::move(gather));
        prog->steps.push_back(std::move(bcast));
    };
    *out = std::move(g);
    return Status::ok();
}

// On one switch every root costs the same; root 0 also preserves rank order.
void rb_candidates(const CandidateContext&, std::vector<std::string>* out) {
    out->push_back("root=0");
}

}  // namespace genx
