// Plan statistics (conventions in stats.hpp).
#include "plan/stats.hpp"

#include "plan/registry.hpp"

#include <algorithm>

namespace genx {

int count_runs(const std::vector<int>& blocks) {
    int runs = 0;
    for (size_t i = 0; i < blocks.size(); ++i)
        if (i == 0 || blocks[i] != blocks[i - 1] + 1) ++runs;
    return runs;
}

namespace {

PlanStats stats_of(const PlanHeader& plan, const std::vector<const Program*>& programs,
                   size_t count, size_t elem_size) {
    PlanStats st;
    st.ranks = plan.nranks;
    st.programs_read = static_cast<int>(programs.size());
    st.count = count;
    st.elem_size = elem_size;
    st.bytes = count * elem_size;
    for (const Program* p : programs) st.steps = std::max(st.steps, static_cast<int>(p->steps.size()));
    const size_t nsteps = static_cast<size_t>(st.steps);
    st.step_bytes_sent.assign(nsteps, 0);
    st.step_bytes_received.assign(nsteps, 0);
    st.step_bytes.assign(nsteps, 0);
    st.step_elements_reduced.assign(nsteps, 0);
    st.step_memory_accesses.assign(nsteps, 0);
    st.step_incast.assign(nsteps, 0);
    st.step_fan_in.assign(nsteps, 0);
    st.step_messages.assign(nsteps, 0);

    auto elems = [&](const std::vector<int>& blocks) {
        size_t n = 0;
        for (int b : blocks) n += block_elems(count, plan.nblocks, b);
        return n;
    };

    st.per_rank.resize(programs.size());
    for (size_t r = 0; r < programs.size(); ++r) {
        const std::vector<Step>& steps = programs[r]->steps;
        std::vector<StepStats>& out = st.per_rank[r];
        out.resize(steps.size());
        size_t sent = 0, received = 0, reduced = 0, memory = 0;
        for (size_t s = 0; s < steps.size(); ++s) {
            StepStats& x = out[s];
            for (const Transfer& t : steps[s].sends) {
                x.bytes_sent += elems(t.blocks) * elem_size;
                x.messages_sent += count_runs(t.blocks);
            }
            for (const Transfer& t : steps[s].recvs) {
                x.bytes_received += elems(t.blocks) * elem_size;
                x.messages_received += count_runs(t.blocks);
            }
            x.incast = static_cast<int>(steps[s].recvs.size());
            for (const LocalOp& op : steps[s].ops) {
                const size_t n = elems(op.blocks);
                if (op.kind == OpKind::Reduce) {
                    const size_t k = 1 + op.srcs.size();
                    x.fan_in = std::max(x.fan_in, static_cast<int>(k));
                    x.elements_reduced += (k - 1) * n;
                    x.memory_reads += k * n;
                } else {
                    x.memory_reads += n;
                }
                x.memory_writes += n;
            }
            sent += x.bytes_sent;
            received += x.bytes_received;
            reduced += x.elements_reduced;
            memory += x.memory_reads + x.memory_writes;
            st.max_fan_in = std::max(st.max_fan_in, x.fan_in);
            st.max_incast = std::max(st.max_incast, x.incast);
            st.step_bytes_sent[s] = std::max(st.step_bytes_sent[s], x.bytes_sent);
            st.step_bytes_received[s] = std::max(st.step_bytes_received[s], x.bytes_received);
            st.step_bytes[s] = std::max({st.step_bytes[s], x.bytes_sent, x.bytes_received});
            st.step_elements_reduced[s] = std::max(st.step_elements_reduced[s], x.elements_reduced);
            st.step_memory_accesses[s] =
                std::max(st.step_memory_accesses[s], x.memory_reads + x.memory_writes);
            st.step_incast[s] = std::max(st.step_incast[s], x.incast);
            st.step_fan_in[s] = std::max(st.step_fan_in[s], x.fan_in);
            st.step_messages[s] =
                std::max({st.step_messages[s], x.messages_sent, x.messages_received});
        }
        st.max_bytes_sent_per_rank = std::max(st.max_bytes_sent_per_rank, sent);
        st.max_bytes_received_per_rank = std::max(st.max_bytes_received_per_rank, received);
        st.elements_reduced_per_rank = std::max(st.elements_reduced_per_rank, reduced);
        st.memory_accesses_per_rank = std::max(st.memory_accesses_per_rank, memory);
    }
    return st;
}

}  // namespace

PlanStats compute_stats(const Plan& plan, size_t count, size_t elem_size) {
    std::vector<const Program*> programs;
    for (const Program& p : plan.programs) programs.push_back(&p);
    return stats_of(plan, programs, count, elem_size);
}

PlanStats compute_stats(const RankGenerator& gen, size_t count, size_t elem_size) {
    const PlanHeader& h = gen.header;
    std::vector<int> ranks;
    if (h.nranks > kWholePlanMaxRanks && !h.representatives.empty()) {
        ranks = h.representatives;
    } else {
        for (int r = 0; r < h.nranks; ++r) ranks.push_back(r);
    }
    std::vector<Program> programs;
    programs.reserve(ranks.size());
    for (int r : ranks) programs.push_back(gen.program(r));
    std::vector<const Program*> ptrs;
    for (const Program& p : programs) ptrs.push_back(&p);
    return stats_of(h, ptrs, count, elem_size);
}

}  // namespace genx
