// StagePlan from a schedule (staging.hpp).
#include "runtime/staging.hpp"

#include <algorithm>
#include <limits>

namespace genx {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

struct Touch {
    size_t begin, end, step;
    bool write;
};

// The result-buffer ranges each step reads or writes.
std::vector<Touch> touches(const RankSchedule& s) {
    std::vector<Touch> out;
    const size_t total = s.count * s.elem_size;
    auto add = [&](const Loc& loc, size_t bytes, size_t step, bool write) {
        if (loc.space != Space::Result || bytes == 0) return;
        out.push_back({loc.offset, std::min(total, loc.offset + bytes), step, write});
    };
    for (size_t k = 0; k < s.steps.size(); ++k) {
        const StepSched& st = s.steps[k];
        for (int i = 0; i < st.nrecvs + st.nsends; ++i) {
            const TransferSched& t = s.transfers[st.first_transfer + static_cast<size_t>(i)];
            for (size_t g = 0; g < t.nsegments; ++g) {
                const SegmentSched& seg = s.segments[t.first_segment + g];
                add(seg.loc, seg.bytes, k, i < st.nrecvs);
            }
        }
        for (size_t o = st.first_op; o < st.first_op + st.nops; ++o) {
            const OpSched& op = s.ops[o];
            for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
                const PieceSched& piece = s.pieces[p];
                const size_t n = piece.elems * s.elem_size;
                add(piece.dst, n, k, true);
                add(piece.dst, n, k, false);  // a reduce reads its dst too; a copy's read is harmless
                const int nsrcs = op.kind == OpKind::Copy ? 1 : op.nsrcs;
                for (int j = 0; j < nsrcs; ++j)
                    add(s.src_locs[piece.first_src + static_cast<size_t>(j)], n, k, false);
            }
        }
    }
    return out;
}

// Elementary intervals between all boundaries, each labelled by `label`
// (first touching step, or last writing step), merged into ranges per step.
void group(const std::vector<size_t>& cuts, const std::vector<size_t>& label, size_t nsteps,
           size_t default_step, std::vector<size_t>* begin, std::vector<StageRange>* ranges) {
    std::vector<std::vector<StageRange>> per(nsteps + 1);
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
        const size_t step = label[i] == kNone ? default_step : label[i];
        auto& v = per[step];
        if (!v.empty() && v.back().offset + v.back().bytes == cuts[i])
            v.back().bytes += cuts[i + 1] - cuts[i];
        else
            v.push_back({cuts[i], cuts[i + 1] - cuts[i]});
    }
    begin->assign(1, 0);
    ranges->clear();
    for (auto& v : per) {
        ranges->insert(ranges->end(), v.begin(), v.end());
        begin->push_back(ranges->size());
    }
}

}  // namespace

StagePlan make_stage_plan(const RankSchedule& s, bool step_by_step) {
    StagePlan plan;
    plan.bytes = s.count * s.elem_size;
    const size_t nsteps = s.steps.size();
    if (!step_by_step) {
        const std::vector<StageRange> all =
            plan.bytes > 0 ? std::vector<StageRange>{{0, plan.bytes}} : std::vector<StageRange>{};
        plan.in = all;
        plan.in_begin.assign(std::max<size_t>(nsteps, 1) + 1, all.size());
        plan.in_begin[0] = 0;
        plan.out = all;
        plan.out_begin.assign(nsteps + 2, 0);
        plan.out_begin[nsteps + 1] = all.size();
        return plan;
    }
    const std::vector<Touch> all = touches(s);

    std::vector<size_t> cuts{0, plan.bytes};
    for (const Touch& t : all) {
        cuts.push_back(t.begin);
        cuts.push_back(t.end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const size_t n = cuts.size() - 1;
    std::vector<size_t> first(n, kNone), last_write(n, kNone);
    // Touches come in step order: the first label painted is the first
    // step, and each write repaints the last one.
    for (const Touch& t : all) {
        size_t i = static_cast<size_t>(std::lower_bound(cuts.begin(), cuts.end(), t.begin) - cuts.begin());
        for (; i < n && cuts[i] < t.end; ++i) {
            if (first[i] == kNone) first[i] = t.step;
            if (t.write) last_write[i] = t.step;
        }
    }
    // In: one slot per step, at least one (untouched bytes go with step 0;
    // a schedule without steps still copies its bytes in before "step 0",
    // its end).
    std::vector<size_t> in_begin;
    std::vector<StageRange> in;
    group(cuts, first, std::max<size_t>(nsteps, 1) - 1, 0, &in_begin, &in);
    plan.in_begin = std::move(in_begin);
    plan.in = std::move(in);
    group(cuts, last_write, nsteps, nsteps, &plan.out_begin, &plan.out);
    return plan;
}

}  // namespace genx
