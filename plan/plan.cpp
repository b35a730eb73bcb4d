// Plan helpers: program length, slot layouts and slot addressing (the
// contracts are in plan.hpp).
#include "plan/plan.hpp"

#include <algorithm>

namespace genx {

int Plan::max_steps() const {
    size_t n = 0;
    for (const Program& p : programs) n = std::max(n, p.steps.size());
    return static_cast<int>(n);
}

namespace {

// Largest slot id a program names anywhere (reads included), or -1.  Reads
// count so that nslots covers a slot that is read but never written: the
// checker then reports the unwritten read instead of an out-of-range id.
int max_slot_used(const Program& prog) {
    int m = -1;
    for (const Step& st : prog.steps) {
        for (const Transfer& t : st.recvs) m = std::max(m, t.buffer);
        for (const Transfer& t : st.sends) m = std::max(m, t.buffer);
        for (const LocalOp& op : st.ops) {
            m = std::max(m, op.dst);
            for (BufferId s : op.srcs) m = std::max(m, s);
        }
    }
    return m;
}

}  // namespace

void finalize_program(Program& prog, int min_slots) {
    const int nslots = std::max(min_slots, max_slot_used(prog) + 1);
    // Recomputed from scratch so that finalizing stays idempotent and a
    // generator that edits a finalized program gets fresh layouts.
    prog.slot_layout.assign(static_cast<size_t>(nslots), {});
    auto add = [&](BufferId buf, const std::vector<int>& blocks) {
        if (buf < 0) return;
        auto& lay = prog.slot_layout[static_cast<size_t>(buf)];
        lay.insert(lay.end(), blocks.begin(), blocks.end());
    };
    for (const Step& st : prog.steps) {
        for (const Transfer& t : st.recvs) add(t.buffer, t.blocks);
        for (const LocalOp& op : st.ops) add(op.dst, op.blocks);
    }
    for (auto& lay : prog.slot_layout) {
        std::sort(lay.begin(), lay.end());
        lay.erase(std::unique(lay.begin(), lay.end()), lay.end());
    }
}

void finalize(Plan& plan) {
    for (const Program& prog : plan.programs)
        plan.nslots = std::max(plan.nslots, max_slot_used(prog) + 1);
    for (Program& prog : plan.programs) finalize_program(prog, plan.nslots);
}

long program_slot_offset(const Program& prog, int nblocks, BufferId slot, int block,
                         size_t count) {
    if (slot < 0 || static_cast<size_t>(slot) >= prog.slot_layout.size()) return -1;
    const std::vector<int>& lay = prog.slot_layout[static_cast<size_t>(slot)];
    auto it = std::lower_bound(lay.begin(), lay.end(), block);
    if (it == lay.end() || *it != block) return -1;
    size_t off = 0;
    for (auto p = lay.begin(); p != it; ++p) off += block_elems(count, nblocks, *p);
    return static_cast<long>(off);
}

size_t program_slot_elems(const Program& prog, int nblocks, BufferId slot, size_t count) {
    if (slot < 0 || static_cast<size_t>(slot) >= prog.slot_layout.size()) return 0;
    size_t n = 0;
    for (int b : prog.slot_layout[static_cast<size_t>(slot)]) n += block_elems(count, nblocks, b);
    return n;
}

long slot_offset(const Plan& plan, int rank, BufferId slot, int block, size_t count) {
    if (rank < 0 || static_cast<size_t>(rank) >= plan.programs.size()) return -1;
    return program_slot_offset(plan.programs[static_cast<size_t>(rank)], plan.nblocks, slot, block,
                               count);
}

size_t slot_elems(const Plan& plan, int rank, BufferId slot, size_t count) {
    if (rank < 0 || static_cast<size_t>(rank) >= plan.programs.size()) return 0;
    return program_slot_elems(plan.programs[static_cast<size_t>(rank)], plan.nblocks, slot, count);
}

}  // namespace genx
