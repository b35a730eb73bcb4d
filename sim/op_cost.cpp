// Compute time of payload-free ops (design in op_cost.hpp).
#include "sim/op_cost.hpp"

#include <simgrid/s4u/Actor.hpp>

#include <exception>
#include <string>

#include "sim/platform.hpp"

namespace genx::sim {

OpWork step_op_work(const RankSchedule& s, const StepSched& step) {
    OpWork w;
    for (size_t o = step.first_op; o < step.first_op + step.nops; ++o) {
        const OpSched& op = s.ops[o];
        for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
            const double n = static_cast<double>(s.pieces[p].elems * s.elem_size);
            if (op.kind == OpKind::Copy) {
                w.accessed += 2 * n;
            } else {
                w.combined += op.nsrcs * n;
                w.accessed += (op.nsrcs + 2) * n;
            }
        }
    }
    return w;
}

Status GenModelOpCost::local_ops(const RankSchedule& schedule, const StepSched& step) {
    const OpWork w = step_op_work(schedule, step);
    const double seconds = host_.gamma * w.combined + host_.delta * w.accessed;
    if (!(seconds > 0)) return Status::ok();
    charged_ += seconds;
    try {
        simgrid::s4u::this_actor::execute(seconds * kHostSpeed);
    } catch (const std::exception& e) {
        return Status::internal(std::string("simgrid: execute: ") + e.what());
    }
    return Status::ok();
}

}  // namespace genx::sim
