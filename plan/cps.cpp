// Co-located PS generator (description and cost in cps.hpp).
#include "plan/cps.hpp"

#include <utility>
#include <vector>

#include "plan/hcps.hpp"

namespace genx {

Status generate_cps(const GenRequest& req, Plan* out) {
    std::vector<int> factors;
    if (req.nranks > 1) factors.push_back(req.nranks);
    Plan plan;
    GENX_RETURN_IF_ERROR(build_hcps(req.nranks, factors, &plan));
    plan.algorithm = "cps";
    plan.params.clear();
    *out = std::move(plan);
    return Status::ok();
}

}  // namespace genx
