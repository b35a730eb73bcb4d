// Co-located PS generator (description and cost in cps.hpp).
#include "plan/cps.hpp"

#include <utility>
#include <vector>

#include "plan/hcps.hpp"

namespace genx {

Status prepare_cps(const GenRequest& req, RankGenerator* out) {
    std::vector<int> factors;
    if (req.nranks > 1) factors.push_back(req.nranks);
    RankGenerator g;
    GENX_RETURN_IF_ERROR(build_hcps(req.nranks, factors, &g));
    g.header.algorithm = "cps";
    g.header.params.clear();
    *out = std::move(g);
    return Status::ok();
}

void cps_candidates(const CandidateContext&, std::vector<std::string>* out) {
    out->push_back("");
}

}  // namespace genx
