// genx_comm, the per-communicator state behind the C API: what decides
// (Selection), what was compiled (ScheduleCache), what runs blocking calls
// (an Execution, and DeviceCalls for device memory), what is said
// (CommLog), the pooled requests, and what the calls cost so far.
#pragma once

#include <cstdint>
#include <string>

#include "genx/comm_log.hpp"
#include "genx/genx_core.h"
#include "genx/request.hpp"
#include "genx/schedule_cache.hpp"
#include "genx/selection.hpp"
#include "runtime/device_calls.hpp"
#include "runtime/executor.hpp"

struct genx_comm {
    int rank = 0;
    int size = 1;
    genx::CommLog log;
    // The effective topology file and overlay (explicit, else the site's;
    // genx/site_config.hpp), "" for none.
    std::string topology_file;
    std::string topology_overlay;
    // genx_config's mpi_version ("" unknown), for genx_comm_set_displaced.
    std::string mpi_version;
    // What genx_comm_set_displaced said.
    std::string displaced_note;
    genx::Selection selection;
    genx::ScheduleCache schedules;
    // Blocking calls on host memory and device memory (one at a time).
    genx::Execution execution;
    genx::DeviceCalls device;
    genx::RequestPool requests;
    // Calls genx ran (not declined), and the transport calls they made.
    uint64_t calls = 0;
    uint64_t progress_calls = 0;
    uint64_t waits = 0;

    genx_comm() = default;
    genx_comm(const genx_comm&) = delete;
    genx_comm& operator=(const genx_comm&) = delete;
};
