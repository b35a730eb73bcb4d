// genx's built-in defaults, written in the rules language itself (the UCC
// way: defaults are data a user can read, copy and override, parsed by the
// same loader as any cluster's file; docs/rules.md).
//
// What they decide: genx takes a call over, without a fitted rules file,
// only where measurements show its plan ahead of the displaced component,
// and hands every other call back ("fallback"), so that an untuned install
// never makes a job slower.  In short:
//  * one rank per node on 3-64 nodes of a topology file with two or more
//    switch levels, from 128 KiB: ring or GenTree by the model, GenTree only
//    when predicted at least 20 % faster (the model's error on it);
//  * one rank per node on 3-8 nodes from 128 KiB, on 3 nodes from 16 KiB and
//    on 5-7 nodes from 32 KiB: ring (tuned's Rabenseifner is slow there);
//  * MPI_Iallreduce and persistent calls on 2, 4 and 5-7 nodes at small
//    sizes: rd (libnbc runs a reduce then a broadcast);
//  * from 128 KiB, any ranks-per-node on 2-10^4 ranks of a network with
//    every link rated (a site's overlay, a rated graph): GenTree, MTREE,
//    MultiTree, ring2d or a renumbered butterfly/rd/rhd where the model
//    prices one 20 % ahead of Open MPI's best of ring, recursive doubling
//    and Rabenseifner at that size (below 128 KiB the built-in per-step
//    latencies are a guess, and measured wrong on the emulated clusters);
//  * everything else defers.
// The measurements and the reasoning: docs/model.md, "Built-in defaults".
//
// The model below prices candidates for "model" rules a user writes and
// for genx-plan --decisions; parameters of a typical current cluster:
// inter-node 3 µs per step and 10 GB/s per NIC (100 Gb/s class), an incast
// threshold of 8 concurrent senders (the paper measured < 10 on RoCE,
// §3.4) with a mild penalty beyond, 1 µs per extra message in a step
// (posting and completing a send or receive), a shift step (sends and
// receives with different partners) 3 µs more than a pairwise exchange
// (docs/model.md, "Shift steps"), and 3 µs more per step of a
// non-blocking call (a step waits for the application's next MPI call,
// assumed about as far apart as a network step); shared-memory steps of 1 µs
// at 5 GB/s per rank pair without incast, 0.3 µs per extra message;
// reduction at 20 GB/s combined and memory traffic at 10 GB/s per core.
// genx-tune replaces all of this with measured values and decisions.
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
      "inter": {"alpha": 3e-6, "beta": 1e-10, "epsilon": 1e-11, "w_t": 8, "alpha_msg": 1e-6,
                "alpha_shift": 3e-6}
    },
    "host": {"gamma": 5e-11, "delta": 1e-10},
    "topology_rates": true,
    "nonblocking_step": 3e-6
  },
  "allreduce": [
    {"nodes": 1, "algorithm": "fallback",
     "comment": "one node: no measurement shows genx ahead of tuned on shared memory"},
    {"switch_levels": "2-inf", "comm_size": "3-64", "ppn": 1, "bytes": "128K-inf",
     "algorithm": "model", "families": ["ring", "gentree"], "margin": 0.2,
     "comment": "a topology file shows switch levels: ring or GenTree (pipelined), priced per link class"},
    {"comm_size": "3-8", "ppn": 1, "bytes": "128K-inf", "algorithm": "ring",
     "comment": "measured: ring 0.34-0.74x tuned's default on 4-8 emulated hosts"},
    {"comm_size": 3, "ppn": 1, "bytes": "16K-128K", "algorithm": "ring",
     "comment": "non-power-of-two size: tuned's Rabenseifner needs an extra half-vector step"},
    {"comm_size": "5-7", "ppn": 1, "bytes": "32K-128K", "algorithm": "ring",
     "comment": "measured: ring 0.52-0.63x tuned's default at 32-64 KiB on 6 and 7 emulated hosts"},
    {"call": "nonblocking", "comm_size": "5-7", "ppn": 1, "bytes": "0-8K", "algorithm": "rd",
     "comment": "measured: rd 0.62-0.86x libnbc's iallreduce at 8 B-4 KiB on 6 emulated hosts"},
    {"call": "nonblocking", "comm_size": 4, "ppn": 1, "bytes": "0-8K", "algorithm": "rd",
     "comment": "measured: rd 0.66-0.88x libnbc's iallreduce at 8 B-4 KiB on 4 emulated hosts"},
    {"call": "nonblocking", "comm_size": 2, "ppn": 1, "bytes": "0-2K", "algorithm": "rd",
     "comment": "measured: rd 0.56-0.72x libnbc's iallreduce at 8 B-1 KiB on 2 emulated hosts"},
    {"rated": true, "comm_size": "2-10000", "bytes": "128K-inf", "algorithm": "model",
     "families": ["fallback", "gentree", "mtree", "multitree", "ring2d", "butterfly", "rhd", "rd"], "margin": 0.2,
     "comment": "every link rated (a site's overlay, or a rated graph), from 128 KiB: a topology family where the model prices it 20 % ahead of Open MPI's best; below, the built-in latencies are guesses (measured: pipelined GenTree 3.6x slower at 32 KiB on the emulated tree:2x4)"},
    {"algorithm": "fallback",
     "comment": "no measured advantage without a fitted rules file (genx-tune)"}
  ]
}
)json";
    return text;
}

}  // namespace genx
