// Plan printing (formats in print.hpp).
#include "plan/print.hpp"

#include <sstream>

namespace genx {

std::string format_blocks(const std::vector<int>& blocks) {
    std::string s = "b[";
    for (size_t i = 0; i < blocks.size();) {
        size_t j = i;
        while (j + 1 < blocks.size() && blocks[j + 1] == blocks[j] + 1) ++j;
        if (i != 0) s += ",";
        s += std::to_string(blocks[i]);
        if (j > i) s += ".." + std::to_string(blocks[j]);
        i = j + 1;
    }
    return s + "]";
}

std::string format_buffer(BufferId buffer) {
    return buffer == kResult ? std::string("result") : "slot" + std::to_string(buffer);
}

std::string format_step(const Step& step) {
    std::vector<std::string> parts;
    // A transfer cut by its own message size says so.
    auto seg = [](const Transfer& t) {
        return t.segment_blocks > 0 ? " in messages of " + std::to_string(t.segment_blocks) + " blocks"
                                    : std::string();
    };
    for (const Transfer& t : step.recvs)
        parts.push_back("recv " + format_blocks(t.blocks) + " from " + std::to_string(t.peer) +
                        " -> " + format_buffer(t.buffer) + seg(t));
    for (const Transfer& t : step.sends)
        parts.push_back("send " + format_blocks(t.blocks) + " to " + std::to_string(t.peer) +
                        " from " + format_buffer(t.buffer) + seg(t));
    for (const LocalOp& op : step.ops) {
        std::string p = op.kind == OpKind::Reduce ? "reduce " + format_buffer(op.dst) + " ⊕= "
                                                  : "copy " + format_buffer(op.dst) + " := ";
        for (size_t i = 0; i < op.srcs.size(); ++i)
            p += (i ? " ⊕ " : "") + format_buffer(op.srcs[i]);
        parts.push_back(p + " on " + format_blocks(op.blocks));
    }
    if (parts.empty()) return "(idle)";
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : " | ") + p;
    return s;
}

std::string format_program(const Plan& plan, int rank) {
    return format_program(plan.programs[static_cast<size_t>(rank)], rank);
}

std::string format_program(const Program& program, int rank) {
    const std::vector<Step>& steps = program.steps;
    std::string s;
    if (steps.empty()) return "rank " + std::to_string(rank) + ": (no steps)\n";
    for (size_t i = 0; i < steps.size(); ++i)
        s += "rank " + std::to_string(rank) + " step " + std::to_string(i) + ": " +
             format_step(steps[i]) + "\n";
    return s;
}

std::string format_plan(const Plan& plan) {
    std::string s =
        "# " + plan.algorithm + (plan.params.empty() ? "" : " " + plan.params) +
        ": P=" + std::to_string(plan.nranks) + " nblocks=" + std::to_string(plan.nblocks) +
        " nslots=" + std::to_string(plan.nslots) + " steps=" + std::to_string(plan.max_steps()) +
        (plan.order_preserving ? " order-preserving" : "") + "\n";
    for (int r = 0; r < static_cast<int>(plan.programs.size()); ++r) s += format_program(plan, r);
    return s;
}

namespace {

template <typename T>
std::string list_text(const std::vector<T>& v) {
    std::ostringstream o;
    for (size_t i = 0; i < v.size(); ++i) o << (i ? " " : "") << v[i];
    return o.str();
}

}  // namespace

std::string format_stats(const PlanHeader& plan, const PlanStats& st) {
    std::ostringstream o;
    o << "algorithm:                 " << plan.algorithm
      << (plan.params.empty() ? "" : " (" + plan.params + ")") << "\n"
      << "ranks:                     " << st.ranks
      << (st.programs_read < st.ranks
              ? " (read off " + std::to_string(st.programs_read) + " representative programs)"
              : std::string())
      << "\n"
      << "vector:                    " << st.count << " elements x " << st.elem_size
      << " bytes = " << st.bytes << " bytes in " << plan.nblocks << " blocks\n"
      << "steps:                     " << st.steps << "\n"
      << "max bytes sent per rank:   " << st.max_bytes_sent_per_rank << "\n"
      << "max bytes recv per rank:   " << st.max_bytes_received_per_rank << "\n"
      << "elements reduced per rank: " << st.elements_reduced_per_rank << "\n"
      << "memory accesses per rank:  " << st.memory_accesses_per_rank << " elements\n"
      << "max fan-in:                " << st.max_fan_in << "\n"
      << "max incast:                " << st.max_incast << "\n"
      << "per step (max over ranks):\n"
      << "  bytes:            " << list_text(st.step_bytes) << "\n"
      << "  elements reduced: " << list_text(st.step_elements_reduced) << "\n"
      << "  memory accesses:  " << list_text(st.step_memory_accesses) << "\n"
      << "  incast:           " << list_text(st.step_incast) << "\n"
      << "  fan-in:           " << list_text(st.step_fan_in) << "\n"
      << "  messages:         " << list_text(st.step_messages) << "\n";
    return o.str();
}

nlohmann::json stats_json(const PlanHeader& plan, const PlanStats& st) {
    nlohmann::json j;
    j["algorithm"] = plan.algorithm;
    j["params"] = plan.params;
    j["ranks"] = st.ranks;
    j["count"] = st.count;
    j["bytes"] = st.bytes;
    j["steps"] = st.steps;
    j["programs_read"] = st.programs_read;
    j["max_bytes_sent_per_rank"] = st.max_bytes_sent_per_rank;
    j["max_bytes_received_per_rank"] = st.max_bytes_received_per_rank;
    j["elements_reduced_per_rank"] = st.elements_reduced_per_rank;
    j["max_fan_in"] = st.max_fan_in;
    j["max_incast"] = st.max_incast;
    j["per_step"] = {
        {"bytes_sent", st.step_bytes_sent},
        {"bytes_received", st.step_bytes_received},
        {"bytes", st.step_bytes},
        {"elements_reduced", st.step_elements_reduced},
        {"memory_accesses", st.step_memory_accesses},
        {"incast", st.step_incast},
        {"fan_in", st.step_fan_in},
        {"messages", st.step_messages},
    };
    return j;
}

}  // namespace genx
