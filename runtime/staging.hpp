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
// The reduction runs on the host, on the staging buffer: every family
// sends each reduced block on from host memory in its next step, so
// reducing on the device would add a copy in each direction per reduce.
// (docs/device.md has the arithmetic.)
//
// StagePlan is derived from the byte-level schedule alone and is cached
// with it.  Bytes no step touches (a one-rank communicator, or what a plan
// leaves alone) are copied in before step 0 and out after the last step.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/executor.hpp"

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

}  // namespace genx
