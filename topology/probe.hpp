// What `genx-topo --probe` infers from measurements when a cluster has no
// topology file: hosts grouped into switches by round-trip time, and the
// rates of their links from timed transfers.  Pure functions over the
// measured numbers (tools/genx_topo.cpp takes them under MPI), so the
// inference is tested on synthetic matrices.
//
// Grouping is single-linkage clustering at the natural breaks of the
// round-trip times: sort every host pair's minimum RTT; wherever the next
// value exceeds the previous by more than `rel_gap` of it and by more than
// `abs_gap`, a level ends.  Hosts joined by RTTs at or below a level's top
// form one switch at that level; the levels nest (single linkage), so they
// make a tree: leaf switches at the lowest level, a root over everything.
// A host alone at the lowest level gets a leaf switch of its own under the
// switch above (a topology.conf switch holds switches or hosts, not both;
// one host behind a switch of its own and one on the switch above look the
// same to round trips).
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"

namespace genx {

struct ProbeSwitch {
    std::string name;
    int parent = -1;                // index into ProbeTree::switches, -1 for the root
    std::vector<int> hosts;         // host indices attached here
    std::vector<int> members;       // every host below (for rates)
    double rate = 0;                // measured uplink rate, B/s (0 = not measured)
    int senders = 0;                // hosts that sent at once when `rate` was measured
    double latency = 0;             // one-way latency its uplink adds, s
};

struct ProbeTree {
    std::vector<std::string> hosts;
    std::vector<ProbeSwitch> switches;  // switches[0] is the root
    std::vector<double> level_rtt;      // each level's largest RTT, lowest level first
    double host_rate = 0;               // measured host link rate, B/s (0 = not measured)
};

struct ProbeOptions {
    double rel_gap = 0.25;   // a break: next RTT > previous · (1 + rel_gap) ...
    double abs_gap = 20e-6;  // ... and > previous + abs_gap seconds
};

// `rtt` is hosts.size()² seconds, row-major, symmetric (the smaller of the
// two directions is used), diagonal ignored.  Fails on a malformed matrix.
Status group_by_rtt(const std::vector<std::string>& hosts, const std::vector<double>& rtt,
                    const ProbeOptions& options, ProbeTree* out);

// A Slurm topology.conf (tree form) of the tree, with a comment header
// (`comment` lines prefixed "# "), and the JSON overlay of its measured
// rates and latencies (docs/topology.md): hosts class "host", each switch
// uplink a class of its own (its measured rate and latency); rates and
// latencies left out where not measured.
std::string probe_topology_conf(const ProbeTree& tree, const std::vector<std::string>& comment);
std::string probe_overlay_json(const ProbeTree& tree);

}  // namespace genx
