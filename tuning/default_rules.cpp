// genx's built-in defaults, written in the rules language itself (the UCC
// way: defaults are data a user can read, copy and override, parsed by the
// same loader as any cluster's file; docs/rules.md).
//
// What they decide: genx takes a call over, without a fitted rules file,
// only where this repository's measurements show its plan ahead of what the
// displaced component (Open MPI's tuned, with its fixed decision table)
// runs, and hands every other call back to that component ("fallback").
// Installed without tuning, genx then never makes a job slower than it was
// (docs/model.md, "Built-in defaults", has the measurements and the
// reasoning):
//
//  * one rank per node on 3-64 nodes placed by a topology file with two or
//    more switch levels (coll_genx_topology_file), from 128 KiB: the model
//    chooses between ring and GenTree (pipelined or not), pricing every
//    switch link by its class with the file's declared rates
//    ("topology_rates"), and keeps the ring unless GenTree is predicted at
//    least 20 % faster (the model's error on unpipelined GenTree was about
//    that: predicted 16 % faster, measured 5-15 % slower on 2dc).  On the
//    emulated clusters it picks what measured
//    fastest: pipelined GenTree across 2dc's slow link and on tree:2x4 with
//    4:1 uplinks and round-robin ranks, the ring on tree:2x4 in rank order
//    and on asym;
//  * one rank per node on 3-8 nodes, from 128 KiB: ring.  tuned runs
//    Rabenseifner there (recursive doubling for 2-3 ranks up to 256 KiB),
//    which reached 32-59 % of the wire on the emulated clusters against
//    ring's 92-95 %;
//  * the same on 3 nodes from 16 KiB and on 5, 6 or 7 nodes from 32 KiB:
//    Rabenseifner's extra half-vector step for a non-power-of-two size
//    costs it most there (ring 0.52-0.63x tuned at 32 KiB on 6 and 7
//    hosts; at 16 KiB it measured 0.75-0.76x in one run and 0.94-1.18x on
//    the same emulated clusters under a later kernel build, so 5-7 nodes
//    start at 32 KiB; 3 nodes were not measured again);
//  * MPI_Iallreduce and persistent allreduce ("call": "nonblocking") on
//    5-7 nodes, one rank each, below 8 KiB: rd.  The displaced libnbc
//    runs a binomial reduce then broadcast there (2⌈log2 P⌉ = 6 steps at 5-7
//    ranks), rd ⌊log2 P⌋ + 2 = 4; measured 0.62-0.86x libnbc at 8 B-4 KiB
//    on 6 emulated hosts, parity at 8 KiB.  The same on 4 nodes below
//    8 KiB (2 steps against 4; measured 0.66-0.88x at 8 B-4 KiB, 0.82 at
//    8 KiB, 1.18 at 16 KiB) and on 2 nodes below 2 KiB (one exchange
//    against a reduce then a broadcast; measured 0.56-0.72x at 8 B-1 KiB,
//    1.03 at 2 KiB, 1.3-1.6 at 4-8 KiB).  Not on 3 nodes, where rd's fold
//    measured 1.07-1.25x libnbc at 8-256 B;
//  * everything else, including one node (shared memory) and unknown
//    placement, defers: genx's small-message plans are at best even with
//    tuned's recursive doubling per step, larger communicators were not
//    measured, and an untuned model is no evidence.
//
// The model below prices candidates for "model" rules a user writes and
// for genx-plan --decisions; parameters of a typical current cluster:
// inter-node 3 µs per step and 10 GB/s per NIC (100 Gb/s class), an incast
// threshold of 8 concurrent senders (the paper measured < 10 on RoCE,
// §3.4) with a mild penalty beyond, 1 µs per extra message in a step
// (posting and completing a send or receive), a shift step (sends and
// receives with different partners) 3 µs more than a pairwise exchange
// (measured: the cyclic butterfly's shift steps cost about twice rd's
// pairwise steps on 7 emulated hosts), and 3 µs more per step of a
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
    {"algorithm": "fallback",
     "comment": "no measured advantage without a fitted rules file (genx-tune)"}
  ]
}
)json";
    return text;
}

}  // namespace genx
