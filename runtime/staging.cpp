// StagePlan from a schedule (staging.hpp).
#include "runtime/staging.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "plan/registry.hpp"

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

Status parse_device_rates(const std::string& text, DeviceRates* rates) {
    ParamMap m;
    if (Status st = parse_params(text, &m); !st.is_ok()) return Status::invalid("device rates: " + st.message());
    DeviceRates r = *rates;
    const std::pair<const char*, double*> keys[] = {
        {"pcie", &r.pcie_bytes_per_s},
        {"copy_latency", &r.copy_latency_s},
        {"device_reduce", &r.device_bytes_per_s},
        {"kernel_latency", &r.kernel_latency_s},
    };
    for (const auto& [key, value] : m) {
        double* dst = nullptr;
        for (const auto& k : keys)
            if (key == k.first) dst = k.second;
        if (dst == nullptr)
            return Status::invalid("device rates: unknown key '" + key +
                                   "' (known: pcie, copy_latency, device_reduce, kernel_latency)");
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        const bool rate = key == "pcie" || key == "device_reduce";
        if (value.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0 ||
            (rate && v == 0))
            return Status::invalid("device rates: " + key + "=" + value + " is not a " +
                                   (rate ? "positive rate in bytes per second"
                                         : "non-negative number of seconds"));
        *dst = v;
    }
    *rates = r;
    return Status::ok();
}

ReduceSiteEstimate estimate_reduce_site(const RankSchedule& s, const StagePlan& stage,
                                        const DeviceRates& r) {
    ReduceSiteEstimate e;
    const double es = static_cast<double>(s.elem_size);
    auto copies = [&](double bytes) { return bytes > 0 ? r.copy_latency_s + bytes / r.pcie_bytes_per_s : 0.0; };
    for (const StepSched& st : s.steps) {
        double sent = 0, received = 0;
        for (int i = 0; i < st.nrecvs + st.nsends; ++i) {
            const TransferSched& t = s.transfers[st.first_transfer + static_cast<size_t>(i)];
            double b = 0;
            for (size_t g = 0; g < t.nsegments; ++g) b += static_cast<double>(s.segments[t.first_segment + g].bytes);
            (i < st.nrecvs ? received : sent) += b;
        }
        e.device_s += copies(sent) + copies(received);
        for (size_t o = st.first_op; o < st.first_op + st.nops; ++o) {
            const OpSched& op = s.ops[o];
            for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
                const double b = static_cast<double>(s.pieces[p].elems) * es;
                if (op.kind == OpKind::Copy) {
                    e.host_s += 2 * b * r.host_delta;
                    e.device_s += r.kernel_latency_s + 2 * b / r.device_bytes_per_s;
                    continue;
                }
                // dst and nsrcs sources: k operands combined (k-1)·b, read k·b, written b.
                const double k = static_cast<double>(op.nsrcs) + 1;
                e.host_s += (k - 1) * b * r.host_gamma + (k + 1) * b * r.host_delta;
                e.device_s += r.kernel_latency_s + (k + 1) * b / r.device_bytes_per_s;
            }
        }
    }
    // The host path's copies that nothing overlaps: what the first step
    // waits for, and what is left to copy after the last step.
    auto slot_bytes = [](const std::vector<size_t>& begin, const std::vector<StageRange>& ranges, size_t slot) {
        double b = 0;
        if (slot + 1 >= begin.size()) return b;
        for (size_t i = begin[slot]; i < begin[slot + 1]; ++i) b += static_cast<double>(ranges[i].bytes);
        return b;
    };
    // The copies out after the last step and at the end: the last two slots.
    const size_t nslots_out = stage.out_begin.empty() ? 0 : stage.out_begin.size() - 1;
    double last_out = 0;
    for (size_t slot = nslots_out >= 2 ? nslots_out - 2 : 0; slot < nslots_out; ++slot)
        last_out += slot_bytes(stage.out_begin, stage.out, slot);
    e.host_s += copies(slot_bytes(stage.in_begin, stage.in, 0)) + copies(last_out);
    e.site = e.device_s < e.host_s ? ReduceSite::Device : ReduceSite::Host;
    return e;
}

}  // namespace genx
