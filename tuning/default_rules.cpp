// genx's built-in defaults, written in the rules language itself (the UCC
// way: defaults are data a user can read, copy and override, parsed by the
// same loader as any cluster's file; docs/rules.md).
//
// Why these numbers.  Without a fit for the cluster at hand genx still
// chooses by the model, with parameters of a typical current cluster:
// inter-node 3 µs per step and 10 GB/s per NIC (100 Gb/s class), an incast
// threshold of 8 concurrent senders (the paper measured < 10 on RoCE,
// §3.4) with a mild penalty beyond, 1 µs per extra message in a step
// (posting and completing a send or receive); shared-memory steps of 1 µs
// at 5 GB/s per rank pair without incast, 0.3 µs per extra message;
// reduction at 20 GB/s combined and memory traffic at 10 GB/s per core.  What matters for the choice is the ratios
// (latency vs bandwidth vs memory passes), which these keep realistic;
// genx-tune replaces them with measured values.
//
// No family is excluded at any size: the model prices every candidate.
// Large communicators no longer make that expensive (the cost model prices
// a symmetric plan from one node's ranks, PlanModel's quotient), and the
// model itself rules the parameter servers out where incast hurts.
#include "tuning/rules.hpp"

namespace genx {

const std::string& builtin_rules_text() {
    static const std::string text = R"json({
  "format": "genx-rules",
  "version": 1,
  "provenance": {"genx_version": "built-in", "topology": "*",
                 "generator": "hand-written defaults (tuning/default_rules.cpp)"},
  "model": {
    "links": {
      "intra": {"alpha": 1e-6, "beta": 2e-10, "epsilon": 0, "w_t": 0, "alpha_msg": 3e-7},
      "inter": {"alpha": 3e-6, "beta": 1e-10, "epsilon": 1e-11, "w_t": 8, "alpha_msg": 1e-6}
    },
    "host": {"gamma": 5e-11, "delta": 1e-10}
  },
  "allreduce": [
    {"algorithm": "model", "comment": "every family, priced by the model"}
  ]
}
)json";
    return text;
}

}  // namespace genx
