// Plan printing: per-rank programs as readable text, statistics as text and
// as JSON.  The JSON keys are a public interface (scripts and the docs read
// them): algorithm, params, ranks, count, bytes, steps, programs_read,
// max_bytes_sent_per_rank, max_bytes_received_per_rank,
// elements_reduced_per_rank, max_fan_in, max_incast, and per_step, an object
// of arrays indexed by step: bytes_sent, bytes_received, bytes,
// elements_reduced, memory_accesses, incast, fan_in, messages (meanings in
// stats.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/stats.hpp"

namespace genx {

// "b[3]", "b[0..3,7]": runs of consecutive blocks are written as ranges.
std::string format_blocks(const std::vector<int>& blocks);
// "result" or "slot<k>".
std::string format_buffer(BufferId buffer);

// One step of one rank, e.g.
//   "recv b[1] from 2 -> slot0 | send b[2] to 4 from result | reduce result ⊕= slot0 on b[1]"
std::string format_step(const Step& step);
// Lines "rank R step S: <step>" for every step of rank R.
std::string format_program(const Plan& plan, int rank);
std::string format_program(const Program& program, int rank);
// A one-line header, then every rank's program.
std::string format_plan(const Plan& plan);

// Human-readable summary of the statistics.
std::string format_stats(const PlanHeader& plan, const PlanStats& stats);
nlohmann::json stats_json(const PlanHeader& plan, const PlanStats& stats);

}  // namespace genx
