// Ring allreduce generator (description and cost in ring.hpp).
#include "plan/ring.hpp"

#include <string>
#include <utility>
#include <vector>

namespace genx {

Status prepare_ring(const GenRequest& req, RankGenerator* out) {
    const int P = req.nranks;
    if (P < 1)
        return Status::invalid("ring: number of ranks must be >= 1, got " + std::to_string(P));
    RankGenerator g;
    g.header.algorithm = "ring";
    g.header.nranks = P;
    g.header.nblocks = P;
    // Rank r + t runs rank r's program shifted by t: the cyclic group.
    g.header.symmetry = {P};
    g.header.representatives = {0};
    g.emit = [P](int r, Program* prog) {
        auto mod = [P](int x) { return ((x % P) + P) % P; };
        std::vector<Step>& steps = prog->steps;
        steps.reserve(steps.size() + 2 * static_cast<size_t>(P - 1));
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
    };
    *out = std::move(g);
    return Status::ok();
}

void ring_candidates(const CandidateContext&, std::vector<std::string>* out) {
    out->push_back("");
}

}  // namespace genx
