// The topology model: what genx knows of the machine and the network, from
// whichever source told it, in one tree.
//
// Why one model: genx learns the shape of a cluster from several places (a
// Slurm topology.conf and its JSON overlay for the switch tree, hwloc for
// the inside of a host, sysfs and libfabric for NIC rates).  Each source
// fills in what it knows; the model keeps where each number came from so
// that genx-topo can say it, and so that a number nobody measured stays
// "unknown" (0) instead of being invented.
//
//   root switch(es) ─ switches ─ hosts ─┬─ package ─ NUMA ─ cores
//                                        ├─ NIC  (PCI bus id, rate, source)
//                                        └─ GPU  (PCI bus id, near package)
//
// Every edge (a node to its parent) carries a link class: rate in bytes/s,
// latency in s, cross-datacenter or not.  A switch also records its
// uplink's oversubscription (the sum of its children's rates over its
// uplink's rate), computed once rates are known.  Nodes inside a host
// (packages, NUMA nodes, cores, NICs, GPUs) hang below the host and carry
// no link class: the intra-host class is `intra_class`.
//
// Generators never read this model; they read plan/topology_view.hpp's
// TopologyView, which to_view() builds for a communicator from the ranks'
// host names.  This layer uses no MPI: the component gathers host names and
// calls to_view(); tests and genx-topo call it with names they choose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"

namespace genx {

enum class TopoKind { Switch, Host, Package, Numa, Core, Nic, Gpu };

const char* topo_kind_name(TopoKind k);

// A class of links.  `source` says who gave the numbers ("overlay
// FILE", "sysfs", "libfabric", ...); empty with rate 0 means unknown.
struct LinkClass {
    std::string name;
    double rate = 0;     // bytes/s, 0 = unknown
    double latency = 0;  // s, 0 = unknown
    bool cross_dc = false;
    std::string source;
};

struct Node {
    TopoKind kind = TopoKind::Switch;
    std::string name;
    int parent = -1;    // -1 for the root
    int up_class = -1;  // link class of the edge to the parent; -1: none (root, or inside a host)
    std::vector<int> children;
    // Switch: level above the hosts (leaf switches are 1); 0 for the rest.
    int level = 0;
    bool is_virtual = false;  // a root genx added over several roots
    // Switch uplink: children's rates summed over the uplink's rate (1 =
    // non-blocking); 0 = unknown (some rate unknown, or the root).
    double oversubscription = 0;
    // Host and core: communicator ranks placed here (map_ranks()).
    std::vector<int> ranks;
    // Core: its OS index (cpu number).  Package and NUMA: their logical index.
    int index = -1;
    // NIC and GPU: PCI bus id ("0000:03:00.0"; empty if unknown), the
    // package it is attached to (-1 if unknown), and for a NIC its rate and
    // where that rate came from.
    std::string pci_busid;
    int near_package = -1;
    double rate = 0;
    std::string rate_source;
    std::string device_kind;  // NIC: "network" or "openfabrics"; GPU: "pci"
};

// A link of a network that is not a switch tree (topology/graph.hpp): a
// direct network's host-to-host link or a general graph's site-to-site
// link, full duplex, `units` parallel links of class `cls`.
// A direct network's link between two hosts (node indices), as the view's.
using GraphLink = TopoLink;

class Topology {
  public:
    std::vector<LinkClass> classes;
    std::vector<Node> nodes;  // nodes[0] is the root once anything is added
    int intra_class = -1;     // class of links between ranks of one host; -1 unknown
    // What the sources said that a reader should know (a virtual root was
    // added, two sources disagree on a rate, ...), in the order found.
    std::vector<std::string> notes;
    // A direct network (a torus, a mesh, a graph file): the hosts hang below
    // a virtual root with no link to it (up_class -1) and talk over `links`
    // only.  False for a switch tree.
    bool direct = false;
    std::vector<GraphLink> links;
    // A torus or mesh preset: dimensions x first; grid index
    // x + X·(y + Y·z) is host grid_host[index].  Empty otherwise.
    std::vector<int> grid;
    bool grid_wrap = false;
    std::vector<int> grid_host;

    bool empty() const { return nodes.empty(); }
    // Appends a node under `parent` (-1 only for the first node) and
    // returns its index.
    int add_node(TopoKind kind, const std::string& name, int parent, int up_class = -1);
    // Index of the class with this name, adding it (rate/latency unknown)
    // when absent.
    int class_index(const std::string& name);
    // Index of the switch or host with this name, or -1.
    int find(const std::string& name) const;
    std::vector<int> hosts() const;            // host node indices, in tree order
    std::vector<int> subtree(int node) const;  // `node` and below, tree order

    // Levels of switches (leaves 1, parents 1 + max of their children).
    void compute_levels();
    // Oversubscription of every switch whose uplink and children's rates
    // are all known.
    void compute_oversubscription();
    // Empty when well formed (one root, parents and children agree, no
    // cycle, hosts under switches, class indices valid), else what is wrong.
    std::string validate() const;

    // Places communicator ranks on hosts: host_of_rank[r] is rank r's host
    // name (SLURMD_NODENAME or gethostname() in the component).  Replaces
    // any previous placement.  A name the tree does not hold is an error
    // naming the rank and the host.
    Status map_ranks(const std::vector<std::string>& host_of_rank);


    std::string to_text() const;  // indented tree
    std::string to_json() const;  // one JSON document
    std::string to_svg() const;   // a drawing of the switch tree and hosts
};

// The view generators read, for the communicator whose rank r runs on host
// host_of_rank[r]: the switches and hosts that hold at least one of these
// ranks (others are pruned), every rank on its host in ascending order, the
// same link classes, oversubscription and NIC counts.  A host name the
// topology does not hold is an error naming the rank.
Status to_view(const Topology& topo, const std::vector<std::string>& host_of_rank,
               TopologyView* out);
// The view of the whole network: every switch and host, with the ranks
// map_ranks() placed; empty when the topology is not well formed.  Its
// fingerprint() is the topology's (the inside of hosts, which differs
// between the hosts of one job, is left out but for NIC counts).
TopologyView network_view(const Topology& topo);

// The name of the host this process runs on, as topology files name it:
// SLURMD_NODENAME when set (Slurm's node name, which topology.conf uses),
// else gethostname().  What the component gathers from every rank before
// calling to_view().
std::string local_host_name();

// Parses a rate: a number of bytes/s, or a number with a unit: bit/s,
// kbit/s, Mbit/s, Gbit/s, Tbit/s (also "Gb/s", "Gbps"), B/s, kB/s, MB/s,
// GB/s, TB/s (decimal prefixes).  Used by the overlay and the tool.
Status parse_rate(const std::string& text, double* bytes_per_s);
// Parses a latency: seconds, or a number with s, ms, us, ns.
Status parse_latency(const std::string& text, double* seconds);
// "12.5 Gbit/s", "5 us": rates and latencies as people write them.
std::string format_rate(double bytes_per_s);
std::string format_latency(double seconds);

}  // namespace genx
