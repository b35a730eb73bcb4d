// genx-topo --probe (tools/topo_probe.cpp): measure the hosts of an mpirun
// job and write a topology.conf and overlay (topology/probe.hpp).
#pragma once

#include <cstddef>
#include <string>

namespace genx::tools {

struct ProbeArgs {
    std::string out;          // topology.conf path; empty: stdout
    std::string overlay_out;  // overlay JSON path; empty: not written
    int pings = 50;           // ping-pongs per host pair
    size_t bytes = 4 << 20;   // per rate measurement
};

// Calls MPI_Init and MPI_Finalize; returns the exit status (0, or 1 when
// there is nothing to probe or a file cannot be written).
int run_probe(const ProbeArgs& args);

}  // namespace genx::tools
