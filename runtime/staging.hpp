// Staging a device buffer through page-locked host memory, step by step.
//
// When MPI cannot take device pointers (Debian's Open MPI is not
// CUDA-aware), the executor runs the rank's schedule on a host copy of the
// result buffer.  Copying the whole vector in, running, and copying it all
// out would serialise three phases; instead the copies follow the plan:
//
//   before step s   the bytes that step s is the first to touch are copied
//                   device -> host (all such copies are queued at start, in
//                   step order, on one stream, with an event after each
//                   step's group; step s waits for its event only);
//   after step s    the bytes that step s wrote for the last time are
//                   copied host -> device on a second stream.
//
// So the copy in of later blocks overlaps the first steps' transfers, and
// the copy out of finished blocks overlaps the remaining steps (a ring's
// allgather phase finishes one block per step).  The wire traffic is
// exactly the host plan's: a rank whose buffer is on the device and a rank
// whose buffer is on the host run the same messages, so they can be mixed
// in one communicator.
//
// The reduction runs on the host, on the staging buffer.  The alternative,
// reducing on the device with every message bounced through page-locked
// memory (bounce.hpp), moves more bytes over the bus (each message once
// each way, where staging moves the buffer once each way) but takes the
// reductions off the host core; estimate_reduce_site() below prices both
// for a schedule and the component picks the cheaper (docs/device.md).
//
// StagePlan is derived from the byte-level schedule alone and is cached
// with it.  Bytes no step touches (a one-rank communicator, or what a plan
// leaves alone) are copied in before step 0 and out after the last step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/executor.hpp"
#include "common/status.hpp"

namespace genx {

struct StageRange {
    size_t offset = 0;
    size_t bytes = 0;
};

struct StagePlan {
    size_t bytes = 0;  // the result buffer's size
    // in[in_begin[s] .. in_begin[s+1]): copied in before step s, for
    // s < max(nsteps, 1) (slot 0 also takes the untouched bytes; without
    // steps it is waited for at the end).
    std::vector<size_t> in_begin;
    std::vector<StageRange> in;
    // out[out_begin[s] .. out_begin[s+1]): copied out after step s; s =
    // nsteps holds what no step writes (copied out at the end).
    std::vector<size_t> out_begin;
    std::vector<StageRange> out;
};

// Derives the plan's copies; every byte of [0, count*elem_size) is copied
// in exactly once and out exactly once.  step_by_step = false: one copy in
// before step 0 and one out after the last step (for small messages, where
// each copy's fixed cost outweighs any overlap: see kStepStagingBytes).
StagePlan make_stage_plan(const RankSchedule& schedule, bool step_by_step = true);

// Messages from this size up are staged step by step, smaller ones whole.
// A step-staged ring of P ranks makes up to P copies each way where whole
// staging makes one; on one H200 (bench/RESULTS.md, issue 14) step staging
// lost 1.1-7x below 128 KiB and won from 4 MiB.  256 KiB sits between;
// it has not been measured on its own.
constexpr size_t kStepStagingBytes = size_t{256} << 10;

// Where a staged call on device memory reduces.
enum class ReduceSite { Host, Device };

// What the choice between the two is priced with.  The host's reduction
// costs are GenModel's (tuning/cost_model.hpp HostParams: gamma per byte
// combined, delta per byte read or written); the rest describes the
// device and its bus.  Defaults: a PCIe 4 x16 link, and fixed costs
// fitted to runs inside MPI calls on one H200 shared by two ranks, where
// a copy or kernel cost 100-200 us (20-30 times what the same operations
// cost in a tight loop: bench/RESULTS.md): 300 us puts the estimate's
// crossover for a ring of 2, with the built-in host model, at the 8 MiB
// measured there, so the device is chosen only where it won; docs/device.md.
struct DeviceRates {
    double host_gamma = 5e-11;           // s per byte combined on the host
    double host_delta = 1e-10;           // s per byte read or written on the host
    double pcie_bytes_per_s = 20e9;      // each direction
    double copy_latency_s = 300e-6;      // per group of copies waited for (see below)
    double device_bytes_per_s = 1e12;    // a reduction kernel's reads and writes
    double kernel_latency_s = 300e-6;    // one reduction kernel and its synchronisation
};

// Parses "pcie=2e10,copy_latency=1e-5,device_reduce=1e12,kernel_latency=5e-6"
// (any subset; seconds and bytes per second) onto *rates.  Errors name the
// field.
Status parse_device_rates(const std::string& text, DeviceRates* rates);

// The two prices of one rank's schedule, in seconds beyond what both share
// (the messages' wire time).
//   host:   the reductions at the host's rates, plus the staging copies
//           that do not overlap a transfer: the copy in before the first
//           step and the copy out after the last (with whole staging,
//           `stage` made step_by_step = false, the whole buffer each way),
//           each at the bus rate plus one copy latency.
//   device: every step's sends copied out and receives copied in, each
//           direction's bytes at the bus rate plus one copy latency (a
//           step's segments queue behind its first copy on one stream, so
//           the latency is charged per step and direction, not per
//           segment), and its reductions at the device's rate plus a
//           kernel latency per piece.
// site: the cheaper; a tie goes to the host.
struct ReduceSiteEstimate {
    double host_s = 0;
    double device_s = 0;
    ReduceSite site = ReduceSite::Host;
};
ReduceSiteEstimate estimate_reduce_site(const RankSchedule& schedule, const StagePlan& stage,
                                        const DeviceRates& rates);

}  // namespace genx
