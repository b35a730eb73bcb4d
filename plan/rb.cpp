// Reduce-broadcast generator (description and cost in rb.hpp).
#include "plan/rb.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace genx {

Status generate_rb(const GenRequest& req, Plan* out) {
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

    Plan plan;
    plan.algorithm = "rb";
    plan.params = "root=" + std::to_string(root);
    plan.nranks = P;
    plan.nblocks = 1;
    plan.order_preserving = root == 0;
    plan.programs.resize(static_cast<size_t>(P));
    if (P > 1) {
        for (int r = 0; r < P; ++r) {
            std::vector<Step>& steps = plan.programs[static_cast<size_t>(r)].steps;
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
            steps.push_back(std::move(gather));
            steps.push_back(std::move(bcast));
        }
    }
    finalize(plan);
    *out = std::move(plan);
    return Status::ok();
}

}  // namespace genx
