// The switch tree from the file HPC sites already maintain: Slurm's
// topology.conf (tree form, the topology/tree plugin), plus a small JSON
// overlay for what topology.conf cannot say.
//
// Why Slurm's format: nothing at run time tells a process which switch its
// host hangs from (hwloc and Open MPI stop at the node), and a site that
// runs Slurm with topology/tree already keeps this file up to date.
//
//   SwitchName=leaf1 Nodes=node[01-16] LinkSpeed=100   # hosts under leaf1
//   SwitchName=leaf2 Nodes=node[17-32]
//   SwitchName=spine Switches=leaf[1-2]
//
// Rules (as slurmctld's topology/tree applies them, and stricter where a
// quiet mistake would give genx a wrong tree):
//   - keys are case-insensitive; `#` starts a comment; one switch a line,
//     which a trailing backslash continues on the next;
//   - a line has SwitchName= and exactly one of Switches= or Nodes=;
//   - LinkSpeed= is accepted and ignored (Slurm documents its units as
//     arbitrary and does not use it); rates come from the overlay;
//   - hostlists are Slurm's: `node[01-16,20]` (zero padding kept),
//     several bracket groups (`r[1-2]n[1-3]`, a cartesian product), comma
//     lists at the top level (`a,b,c[1-2]`);
//   - errors: an unknown key, a line with both Switches= and Nodes=, a
//     switch with neither, a switch defined twice, a reference to a switch
//     no line defines, a switch or node under two switches, a cycle.  Each
//     names FILE:LINE and the field;
//   - several roots are allowed (Slurm allows them): genx adds a virtual
//     root above them, with an unknown link class "virtual", and says so in
//     the topology's notes.
//
// Link classes: the link from a node up to a switch of level L is class
// "leaf" for L = 1 and "l<L>" above (levels counted from the hosts), all
// with unknown rate and latency until an overlay gives them.
//
// The overlay (docs/topology.md has its schema) sets rates and latencies
// by level, by switch (its uplink), by host (its link to its switch), marks
// cross-datacenter links and gives the intra-host class.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "topology/topology.hpp"

namespace genx {

// One SwitchName= line.
struct SlurmSwitch {
    std::string name;
    std::vector<std::string> switches;  // expanded Switches=
    std::vector<std::string> nodes;     // expanded Nodes=
    int line = 0;
};

// Expands a Slurm hostlist expression into names, in order.  Errors say
// what is wrong in the expression (unbalanced bracket, bad range, ...).
Status expand_hostlist(const std::string& expr, std::vector<std::string>* out);

// Parses topology.conf text; `file` names it in messages ("FILE:LINE: ...").
Status parse_slurm_topology(const std::string& text, const std::string& file,
                            std::vector<SlurmSwitch>* out);

// Builds the tree from parsed lines: checks references, parents, cycles;
// adds a virtual root over several roots.
Status build_slurm_topology(const std::vector<SlurmSwitch>& switches, const std::string& file,
                            Topology* out);

// Reads, parses and builds `path`.
Status load_slurm_topology(const std::string& path, Topology* out);

// Applies a JSON overlay (text, and the file name for messages) to a
// topology built from topology.conf, then recomputes oversubscription.
Status apply_overlay(const std::string& json_text, const std::string& file, Topology* topo);
Status load_overlay(const std::string& path, Topology* topo);

// The tree from Slurm's per-task SLURM_TOPOLOGY_ADDR, when a site runs
// topology/tree but genx has no file: one address per host, gathered from
// the ranks ("spine.leaf3.node07": switches from the top down, then the
// node; `pattern` is SLURM_TOPOLOGY_ADDR_PATTERN, "switch.switch.node",
// empty when not given).  A component naming several switches
// ("spine[1-2]", the spines of a fat tree above one leaf) is kept as one
// switch of that name, and a note says so.  Several top switches get the
// virtual root, as for topology.conf.  Errors name the address: a pattern
// that is not switch...node, an empty component, a switch found under two
// parents, a node with two addresses.  Link classes as for topology.conf.
Status build_from_topology_addrs(const std::vector<std::string>& addrs,
                                 const std::vector<std::string>& patterns, Topology* out);

// What the component and the tools load: `conf` (topology.conf) and, when
// `overlay` is not empty, its overlay.  The first error, naming the file.
Status load_topology(const std::string& conf, const std::string& overlay, Topology* out);

// Reads a whole file; an error names it.
Status read_text_file(const std::string& path, std::string* out);

}  // namespace genx
