// Ring allreduce generator (description and cost in ring.hpp).
#include "plan/ring.hpp"

#include <string>
#include <utility>
#include <vector>

namespace genx {

Status generate_ring(const GenRequest& req, Plan* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("ring: number of ranks must be >= 1, got " + std::to_string(P));
    Plan plan;
    plan.algorithm = "ring";
    plan.nranks = P;
    plan.nblocks = P;
    plan.nslots = P > 1 ? 1 : 0;
    plan.programs.resize(static_cast<size_t>(P));
    auto mod = [P](int x) { return ((x % P) + P) % P; };
    for (int r = 0; r < P; ++r) {
        std::vector<Step>& steps = plan.programs[static_cast<size_t>(r)].steps;
        const int next = mod(r + 1), prev = mod(r - 1);
        for (int s = 0; s < P - 1; ++s) {
            Step st;
            const int in = mod(r - s - 1);
            st.recvs.push_back(Transfer{prev, {in}, 0});
            st.sends.push_back(Transfer{next, {mod(r - s)}, kResult});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, {in}});
            steps.push_back(std::move(st));
        }
        for (int t = 0; t < P - 1; ++t) {
            Step st;
            st.recvs.push_back(Transfer{prev, {mod(r - t)}, kResult});
            st.sends.push_back(Transfer{next, {mod(r + 1 - t)}, kResult});
            steps.push_back(std::move(st));
        }
    }
    finalize(plan);
    *out = std::move(plan);
    return Status::ok();
}

}  // namespace genx
