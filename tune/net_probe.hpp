// The network probe (tune/net_probe.cpp) of genx-topo --probe and genx-tune
// --site: measure the hosts of an MPI job and write a topology.conf and
// overlay (topology/probe.hpp infers the tree from the measurements).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "runtime/mpi_comm.hpp"
#include "topology/probe.hpp"
#include "topology/topology.hpp"

namespace genx::tune {

// genx-topo --probe's command line.
struct ProbeArgs {
    std::string out;          // topology.conf path; empty: stdout
    std::string overlay_out;  // overlay JSON path; empty: not written
    int pings = 50;           // ping-pongs per host pair
    size_t bytes = 4 << 20;   // per rate measurement
};

// How probe_network() measures.
struct ProbeRun {
    int pings = 50;
    size_t bytes = 4 << 20;
    // A tree to measure the rates of (its switches holding some of the
    // job's hosts) instead of inferring one from round trips; null: infer.
    const Topology* given = nullptr;
    // A job on one host: a tree of one switch and no rates, not an error.
    bool one_host_ok = false;
    std::string who = "genx-topo --probe";  // prefix of the progress lines
};

// What the probe found: `hosts` on every rank (in order of their lowest
// rank); the rest on rank 0 only.
struct NetProbe {
    std::vector<std::string> hosts;
    ProbeTree tree;
    std::string conf;     // the inferred tree's topology.conf; empty with a given tree
    std::string overlay;  // the measured rates as an overlay (docs/topology.md)
};

// Every rank of `world` calls it, after MPI_Init.  Fails (on every rank)
// when the hosts cannot be grouped, or the job has one host and
// `run.one_host_ok` is false.
Status probe_network(const mpi::Comm& world, const ProbeRun& run, NetProbe* out);

// genx-topo --probe: MPI_Init, the probe, the files, MPI_Finalize; returns
// the exit status (0, or 1 when there is nothing to probe or a file cannot
// be written).
int run_probe(const ProbeArgs& args);

}  // namespace genx::tune
