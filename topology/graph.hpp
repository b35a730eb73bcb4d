// Networks that are not only switch trees: direct networks (torus, mesh)
// and general graphs given in a file, plus the built-in presets every tool
// shares, and the one entry point that reads whatever a user names.
//
// MultiTree and MTREE (plan/multitree.hpp, plan/ring2d.hpp) build on
// graphs; GenTree and the rest keep the switch tree.  A graph lives in the
// same Topology model: its hosts hang below a virtual root that is only a
// container (no link to it), and `links` joins them (topology.hpp).
//
//   torus:4x4                     n0 ─ n1 ─ n2 ─ n3     (x: +1 to the right,
//    host of (x, y) is            │    │    │    │       wrapping on a torus;
//    n<x + 4y>                    n4 ─ n5 ─ n6 ─ n7       y: +1 downwards)
//                                 …
//
// Presets (topology_preset):
//   switch:N          one switch, N hosts, 10 Gbit/s host links of 10 µs;
//   tree:AxB[/O]      A leaf switches of B hosts under a root; host links as
//                     switch:N; uplinks B·10/O Gbit/s (O: oversubscription);
//   torus:AxB[xC]     a 2D or 3D torus (also torus:N, a ring of N hosts);
//   mesh:AxB[xC]      the same without wrap-around links.
// Torus and mesh links are the MultiTree paper's (150 ns, 16 GB/s).  A
// dimension of 2 has one link between its two hosts (the wrap-around link
// would join the same pair again).
//
// A graph file (JSON, docs/topology.md "Graphs"):
//   {"genx_graph": 1,
//    "classes": {"wan": {"rate": "10 Gbit/s", "latency": "20 ms", "cross_dc": true}},
//    "hosts": ["dc0", "dc1", "dc2"],
//    "links": [{"a": "dc0", "b": "dc1", "class": "wan", "units": 2}, ...],
//    "intra_host": {"rate": "20 GB/s", "latency": "1 us"}}
// Errors name FILE:LINE for bad JSON and the field (links[3].b) otherwise.
#pragma once

#include <string>

#include "common/status.hpp"
#include "topology/topology.hpp"

namespace genx {

constexpr double kPresetLinkRate = 10e9 / 8;  // switch and tree presets, bytes/s
constexpr double kPresetLinkLatency = 10e-6;  // s
constexpr double kGridLinkRate = 16e9;        // torus and mesh presets (MultiTree, Table III)
constexpr double kGridLinkLatency = 150e-9;

// True when `name` has the form of a preset (switch:, tree:, torus:, mesh:),
// whether or not its numbers are valid.
bool is_topology_preset(const std::string& name);
// "switch:N, tree:AxB, tree:AxB/O, torus:AxB[xC], mesh:AxB[xC]".
std::string topology_preset_names();
// The topology of a preset; errors say what is wrong and list the presets.
Status topology_preset(const std::string& name, Topology* out);

// Reads a graph file (format above).
Status load_graph_file(const std::string& path, Topology* out);
Status parse_graph(const std::string& json_text, const std::string& file, Topology* out);

// What --topology and coll_genx_topology accept: a preset name, a graph
// file (JSON whose first non-blank character is '{'), or a Slurm
// topology.conf with its optional JSON overlay (`overlay`, only for
// topology.conf).
Status load_network(const std::string& spec, const std::string& overlay, Topology* out);

}  // namespace genx
