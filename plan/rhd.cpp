// Recursive halving/doubling generator (description and cost in rhd.hpp).
#include "plan/rhd.hpp"

#include <utility>
#include <vector>

namespace genx {

namespace {

std::vector<int> run(int lo, int len) {
    std::vector<int> b(static_cast<size_t>(len));
    for (int k = 0; k < len; ++k) b[static_cast<size_t>(k)] = lo + k;
    return b;
}

}  // namespace

Status generate_rhd(const GenRequest& req, Plan* out) {
    const int P = req.nranks;
    int p2 = 1;
    while (p2 * 2 <= P) p2 *= 2;
    const int extra = P - p2;
    auto old_rank = [extra](int n) { return n < extra ? 2 * n + 1 : n + extra; };

    Plan plan;
    plan.algorithm = "rhd";
    plan.nranks = P;
    plan.nblocks = p2;
    plan.programs.resize(static_cast<size_t>(P));
    const std::vector<int> all = run(0, p2);

    for (int x = 0; x < P && P > 1; ++x) {
        std::vector<Step>& steps = plan.programs[static_cast<size_t>(x)].steps;
        if (x < 2 * extra && x % 2 == 0) {
            Step give, take;
            give.sends.push_back(Transfer{x + 1, all, kResult});
            take.recvs.push_back(Transfer{x + 1, all, kResult});
            steps.push_back(std::move(give));
            steps.push_back(std::move(take));
            continue;
        }
        const bool folds = x < 2 * extra;
        if (folds) {
            Step st;
            st.recvs.push_back(Transfer{x - 1, all, 0});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, all});
            steps.push_back(std::move(st));
        }
        const int n = folds ? x / 2 : x - extra;
        int lo = 0, len = p2;
        for (int d = p2 / 2; d >= 1; d /= 2) {
            const int peer = old_rank(n ^ d);
            const int half = len / 2;
            const bool upper = (n & d) != 0;
            const int keep_lo = upper ? lo + half : lo;
            const int give_lo = upper ? lo : lo + half;
            Step st;
            st.recvs.push_back(Transfer{peer, run(keep_lo, half), 0});
            st.sends.push_back(Transfer{peer, run(give_lo, half), kResult});
            st.ops.push_back(LocalOp{OpKind::Reduce, kResult, {0}, run(keep_lo, half)});
            steps.push_back(std::move(st));
            lo = keep_lo;
            len = half;
        }
        for (int d = 1; d < p2; d *= 2) {
            const int peer = old_rank(n ^ d);
            const int peer_lo = lo ^ d;  // runs of length d are d-aligned
            Step st;
            st.recvs.push_back(Transfer{peer, run(peer_lo, d), kResult});
            st.sends.push_back(Transfer{peer, run(lo, d), kResult});
            steps.push_back(std::move(st));
            lo = lo < peer_lo ? lo : peer_lo;
        }
        if (folds) {
            Step st;
            st.sends.push_back(Transfer{x - 1, all, kResult});
            steps.push_back(std::move(st));
        }
    }
    finalize(plan);
    *out = std::move(plan);
    return Status::ok();
}

}  // namespace genx
