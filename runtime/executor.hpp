// The executor: runs one rank's program of a Plan over a Transport
// (docs/design.md §4; the semantics it implements are plan.hpp's header).
//
// Two phases, so the hot path does no planning and no allocation:
//
//  compile()   once per (communicator, plan, count, element size): turns the
//              rank's program into a byte-level RankSchedule.  Each transfer
//              becomes one message per maximal run of consecutive block
//              indices (contiguous in the result buffer and in any slot
//              layout alike), each message cut into segments of at most
//              ExecOptions::segment_bytes (or of the transfer's own
//              Transfer::segment_blocks, which overrides it); runs holding
//              no bytes are skipped,
//              identically on both sides because both derive them from the
//              same block list and count.  Local ops become (dst, srcs,
//              elements) pieces at resolved byte offsets; slots are packed
//              into one scratch area (each slot 64-byte aligned).
//
//  Execution   a resumable state machine over a RankSchedule: start() binds
//              the call's buffers, progress() does whatever can be done
//              without blocking and says whether the rank is finished, run()
//              loops progress() and the transport's wait_all() or progress().
//              Per step it posts the receives, then the sends, keeping at
//              most ExecOptions::window segments in flight per transfer,
//              tests what it just posted before returning (eager sends and
//              already-arrived messages complete on posting, so such a step
//              costs no transport call), and runs the local ops once every
//              transfer of the step completed.
//              Request arrays are sized on first use and reused, so a
//              steady-state call allocates nothing.  replay() runs a
//              schedule of single-segment steps (small messages) in one
//              loop, the same transport calls made straight through the C
//              table: the blocking call's path where each instruction
//              shows.
//
// Why the window is per transfer (per peer and direction) and not global:
// the transport may complete a send only when the matching receive is
// posted (rendezvous).  With one global window, rank A could fill it with
// segments of its send to B while B fills its own with segments of its send
// to A; each would then wait for a receive the other never posts.  A
// per-transfer window keeps at least one segment of every transfer posted,
// so each transfer's segments meet their counterparts in order and a plan
// the checker proved deadlock-free under rendezvous stays deadlock-free
// when segmented.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/text_util.hpp"
#include "plan/plan.hpp"
#include "plan/topology_view.hpp"
#include "plan/registry.hpp"
#include "common/status.hpp"
#include "runtime/device.hpp"
#include "runtime/reduce.hpp"
#include "runtime/transport.hpp"

namespace genx {

struct ExecOptions {
    // Largest message the executor posts for a transfer without its own
    // Transfer::segment_blocks (mtree's chunks set it: a chunk is one
    // message whatever this says); 0 = no segmentation.  Rounded down to
    // whole elements (at least one element).
    size_t segment_bytes = kDefaultSegmentBytes;
    // Segments in flight per transfer, >= 1.
    int window = kDefaultWindow;
};

// Splits the user's params into the executor's keys (`segment`: bytes with
// K/M/G suffix, 0 = unsegmented; `window`: integer >= 1) and the rest, which
// belong to the generator.  Unset keys keep ExecOptions' defaults.
Status split_exec_params(const ParamMap& all, ParamMap* generator_params, ExecOptions* options);

// "segment=1M,window=4" (sizes with the largest exact K/M/G suffix).
std::string format_exec_options(const ExecOptions& options);


// Where bytes live in one rank's memory.
enum class Space : uint8_t { Result, Scratch };
struct Loc {
    Space space = Space::Result;
    size_t offset = 0;  // bytes
};

struct SegmentSched {
    Loc loc;
    size_t bytes = 0;
};

struct TransferSched {
    int peer = -1;
    size_t first_segment = 0;  // into RankSchedule::segments, wire order
    size_t nsegments = 0;      // >= 1 (transfers without bytes are dropped)
};

struct PieceSched {
    Loc dst;
    size_t elems = 0;
    size_t first_src = 0;  // into RankSchedule::src_locs, OpSched::nsrcs of them
};

struct OpSched {
    OpKind kind = OpKind::Reduce;
    int nsrcs = 0;
    size_t first_piece = 0;
    size_t npieces = 0;
};

struct StepSched {
    size_t plan_step = 0;       // index in the plan's program (for messages)
    size_t first_transfer = 0;  // nrecvs receives, then nsends sends
    int nrecvs = 0;
    int nsends = 0;
    size_t first_op = 0;
    size_t nops = 0;
    // Every transfer of the step is one segment: once the last one is
    // posted, the whole step is (run() may then send it blocking).
    bool single_segment = false;
};

// One rank's program in bytes.  Depends only on (plan, rank, count,
// elem_size, options); never on buffers, so it is cached and reused.
struct RankSchedule {
    std::string algorithm;
    int rank = -1;
    int nranks = 0;
    size_t count = 0;
    size_t elem_size = 0;
    ExecOptions options;
    std::vector<StepSched> steps;
    std::vector<TransferSched> transfers;
    std::vector<SegmentSched> segments;
    std::vector<OpSched> ops;
    std::vector<PieceSched> pieces;
    std::vector<Loc> src_locs;
    size_t scratch_bytes = 0;     // the call must provide this much scratch
    int max_transfers_per_step = 0;
    size_t max_segments_per_transfer = 0;
    int max_srcs = 0;
    size_t bytes_sent = 0;        // totals over the program, for tests and logs
    size_t bytes_received = 0;
    // Every step is single_segment with at most kReplayMaxTransfers
    // transfers: Execution::replay() can run it.  Small messages of rd,
    // ring and rhd always compile to that; a family whose transfer names
    // blocks that are not one run (several messages) or whose step has
    // more transfers may not, on some ranks.
    bool replayable = false;
};

// The most transfers a step of a replayable schedule has (replay() keeps
// a step's requests on its stack).
constexpr int kReplayMaxTransfers = 16;

// Compiles rank `rank`'s program of a finalized plan for `count` elements of
// `elem_size` bytes.  Checks what the executor relies on (peers, buffer ids,
// block indices, slot layouts, op arity, no aliasing between an op's dst and
// its sources) and names rank, step and item in its errors; it does not
// re-prove what the checker proves (matching, deadlock freedom, results).
Status compile(const Plan& plan, int rank, size_t count, size_t elem_size,
               const ExecOptions& options, RankSchedule* out);
// The same from one rank's finalized program (what a running rank holds).
Status compile(const PlanHeader& header, const Program& program, int rank, size_t count,
               size_t elem_size, const ExecOptions& options, RankSchedule* out);

// Estimated heap bytes of a schedule (what a cache of them holds).
size_t schedule_bytes(const RankSchedule& s);

struct StagePlan;

// What a staged execution (Execution::start_staged, runtime/staging.hpp)
// copies between, and with what.  All of it must outlive the execution.
struct StagedBuffers {
    DeviceBackend* device = nullptr;
    int ordinal = 0;                   // the device the streams belong to
    const StagePlan* plan = nullptr;   // make_stage_plan(schedule)
    const void* src = nullptr;         // the input: sendbuf, or recvbuf in place (any space)
    void* dst = nullptr;               // recvbuf (any space)
    void* host = nullptr;              // page-locked, plan->bytes: where the schedule runs
    DeviceStream in_stream = nullptr;  // copies in
    DeviceStream out_stream = nullptr; // copies out
    DeviceEvent* in_events = nullptr;  // one per slot of plan->in_begin
    DeviceEvent out_event = nullptr;
};

// A device-resident execution (Execution::start_on_device): the result
// buffer and the scratch area are device memory, the transport takes
// device pointers (a CUDA-aware MPI), and the local ops run on the device,
// queued on `stream` and finished before the next step posts.
struct DeviceExec {
    DeviceBackend* device = nullptr;
    int ordinal = 0;
    DeviceStream stream = nullptr;
};

// What a payload-free execution (Execution::start_payload_free) does
// instead of running a step's local ops: a simulator charges their compute
// time there (sim/), a test records them.  Called once per step that has
// ops, after all of the step's transfers completed, as run_ops() would be.
class LocalOpHook {
  public:
    virtual ~LocalOpHook() = default;
    // `step` is one of `schedule.steps` with step.nops > 0.  An error fails
    // the execution like a failed transfer.
    virtual Status local_ops(const RankSchedule& schedule, const StepSched& step) = 0;
};

class Execution {
  public:
    Execution() = default;
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;

    // Binds a schedule to one call and resets the state machine.  sendbuf ==
    // nullptr (or == recvbuf) means in place; otherwise sendbuf is copied
    // into recvbuf here.  `scratch` must hold schedule.scratch_bytes.  The
    // schedule, buffers, kernel and transport must outlive the execution.
    // Only grows internal arrays when this schedule needs more than any
    // before it.
    Status start(const RankSchedule& schedule, const void* sendbuf, void* recvbuf, void* scratch,
                 size_t scratch_bytes, const ReduceKernel& kernel, Transport& transport);

    // The same on a host copy of a buffer in another space (device
    // memory): the schedule runs on stage.host, the bytes each step first
    // touches are copied in before it and those it wrote last are copied
    // out after it (staging.hpp).  The copies in are queued here.  done
    // (progress) or a successful run() means the result is in stage.dst.
    Status start_staged(const RankSchedule& schedule, const StagedBuffers& stage, void* scratch,
                        size_t scratch_bytes, const ReduceKernel& kernel, Transport& transport);

    // The same with every buffer on the device (DeviceExec): the kernel's
    // (dtype, op) must have a device kernel (device->reduce_supported).
    Status start_on_device(const RankSchedule& schedule, const DeviceExec& dx, const void* sendbuf,
                           void* recvbuf, void* scratch, size_t scratch_bytes,
                           const ReduceKernel& kernel, Transport& transport);

    // The same schedule without payload, for simulating ranks whose
    // buffers do not fit in memory (384 ranks of 400 MB): no buffer exists
    // and no byte is touched.  Every send and receive is posted exactly as
    // start() would post it, same peer, size and order, with a null buffer
    // (the transport moves sizes only: sim/sim_transport.hpp); a step's
    // local ops are not run but handed to `hook` (may be null: then they
    // cost nothing).  The transport sees the same calls as after start().
    // `hook` and the transport must outlive the execution.
    Status start_payload_free(const RankSchedule& schedule, Transport& transport, LocalOpHook* hook);

    // Non-blocking: completes finished requests, posts what the windows
    // allow, runs the local ops of every step whose transfers are done.
    // Sets *done when the program finished.  After an error every call
    // returns that error; the transport may still hold posted requests
    // (a failed collective is not recoverable).
    Status progress(bool* done) { return progress(done, false); }

    // Blocking: progress() until done or error; in between, the
    // transport's wait_all() on the current step's requests once all of
    // them are posted, else the transport's progress().  In a step whose
    // transfers are single segments and end with a send, that last send
    // goes through the transport's blocking send() where it has one: the
    // PML sends a small message inline, without a request, as tuned's
    // exchanges do.  Every other transfer of the step is posted by then, so
    // blocking on it waits for part of what run() waits for anyway.
    Status run();

    // start() and run() in one, for a replayable schedule (compile() sets
    // RankSchedule::replayable): the same transport calls in the same
    // order as run()'s single-segment path (per step the receives, the
    // sends, the last send blocking where `ops` has a send; one wait_all
    // for the rest; the step's local ops), made straight through the C
    // table, with no state machine, no windows and no Transport adapter.
    // This is the blocking call's path for small messages, where a call
    // is a few hundred nanoseconds and genx's own instructions show
    // (docs/design.md §5.5).  The same checks and errors as start() and
    // run(); after an error the execution holds what is still posted and
    // abandon() drains it through `ops`, which must outlive the execution
    // as start()'s transport must.
    Status replay(const RankSchedule& schedule, const void* sendbuf, void* recvbuf, void* scratch,
                  size_t scratch_bytes, const ReduceKernel& kernel, const genx_transport_ops& ops);

    // After an error (progress() or run() failed): makes sure nothing the
    // execution posted can still write into, or read from, its buffers.
    // Every request it still holds is cancelled where the transport can
    // (receives not yet matched; Open MPI's ob1 cannot cancel sends), and
    // the rest are tested to completion, with the transport progressing,
    // for at most `budget`.  Returns how many requests are left posted.
    // 0 means the result buffer and scratch area may be reused
    // or freed; otherwise they must stay allocated (the transport still
    // holds requests that point into them).  The execution can be start()ed again
    // afterwards.  A no-op (0) when nothing is posted.
    size_t abandon(std::chrono::milliseconds budget);

    // What the last run() cost beyond the executor's own passes: transport
    // progress() calls and wait_all() calls (tests and benchmarks count
    // them; a step whose transfers complete on posting costs neither).
    uint64_t progress_calls() const { return progress_calls_; }
    uint64_t waits() const { return waits_; }
    uint64_t blocking_sends() const { return blocking_sends_; }

  private:
    Status progress(bool* done, bool block);
    // Staged only: whether the copies step `step` waits for are in (block:
    // waits for them); after step `step`'s ops, queue its copies out; at
    // the end, queue the rest and wait (block) or ask (not) for all of it.
    Status stage_in_ready(size_t step, bool block, bool* ready);
    Status stage_out(size_t slot);
    Status stage_finish(bool block, bool* finished);
    Status event_done(DeviceEvent e, bool block, bool* done);
    struct Flight {
        size_t posted = 0;     // segments posted so far
        size_t completed = 0;  // leading segments known complete
    };
    // Payload-free executions have no buffers: every address is null
    // (offsets from a null base would be undefined behaviour).
    unsigned char* addr(const Loc& loc) const {
        if (payload_free_) return nullptr;
        return (loc.space == Space::Result ? result_ : scratch_) + loc.offset;
    }
    // The state start() and start_payload_free() share: grows the arrays
    // this schedule needs and resets the state machine.
    void drop_stale_requests();
    void bind(const RankSchedule& schedule, unsigned char* result, unsigned char* scratch,
              const ReduceKernel* kernel, Transport& transport);
    const TransferSched& transfer(int i) const;
    // A segment's slot in its transfer's ring; no division in the common
    // unsegmented case (window_ 1).
    size_t ring_slot(size_t seg) const { return window_ == 1 ? 0 : seg % window_; }
    Status post(int i, size_t seg);
    Status advance(int i, bool* complete, bool* posted);
    Status run_simple_step();
    bool step_fully_posted() const;
    Status wait_step();
    Status run_ops(const StepSched& step);
    Status run_ops_on_device(const StepSched& step);
    Status fail(Status st);
    // What start() and replay() reset before their checks: no schedule,
    // no error, host buffers, nothing counted, stale requests dropped.
    void reset_call();
    // start()'s and replay()'s checks of the buffers and kernel against
    // the schedule (inline in executor.cpp, their only user).
    Status check_call(const RankSchedule& schedule, void* recvbuf, void* scratch,
                      size_t scratch_bytes, const ReduceKernel& kernel) const;
    // replay()'s error path: keeps the `n` requests still posted (null
    // entries are released ones) for abandon(), through `ops`.
    Status replay_failed(Status st, const genx_transport_ops& ops, Request* reqs, int n);
    // Requests still posted that no slot tracks: those a failed wait_all()
    // left, and those run_simple_step() posted before a later post failed.
    // abandon() drains them with the slots'.  Filled on errors only.
    std::vector<Request> held_;

    const RankSchedule* sched_ = nullptr;
    unsigned char* result_ = nullptr;
    unsigned char* scratch_ = nullptr;
    const ReduceKernel* kernel_ = nullptr;
    Transport* transport_ = nullptr;
    bool blocking_send_ = false;  // transport_->has_blocking_send(), asked once per call
    size_t window_ = 1;  // ring slots per transfer: min(window, longest transfer)
    size_t step_ = 0;
    bool posted_ = false;
    bool finished_ = true;  // the last run ended with everything complete (nothing stale)
    Status error_;
    std::vector<Flight> flights_;       // per transfer of the current step
    std::vector<Request> requests_;     // flights x window_ ring slots
    std::vector<uint8_t> in_flight_;    // parallel to requests_
    std::vector<const void*> srcs_;     // operand pointers for one piece
    std::vector<unsigned char> temp_;   // ReduceKernel::temp_bytes()
    std::vector<Request> waiting_;      // wait_step(): the step's in-flight requests
    std::vector<size_t> waiting_slots_; // ... and their slots
    bool staged_ = false;
    StagedBuffers stage_;
    bool on_device_ = false;
    DeviceExec dx_;
    bool payload_free_ = false;
    LocalOpHook* op_hook_ = nullptr;
    std::optional<OpsTransport> replay_transport_;  // abandon()'s transport after a failed replay()
    size_t in_ready_ = 0;      // leading copy-in slots known complete
    bool out_queued_ = false;  // the final copies out and their event
    uint64_t progress_calls_ = 0;
    uint64_t waits_ = 0;
    uint64_t blocking_sends_ = 0;
};

// How long a failed collective's posted requests are drained before genx
// gives up on them (Execution::abandon's budget in the C API's calls).
constexpr std::chrono::milliseconds kAbandonBudget{1000};

// After a failed execution: abandon()s it for at most kAbandonBudget and
// says what became of its requests in *note ("; every posted request was
// ..."), to append to the failure's message; returns the requests left
// posted (their buffers must then stay allocated).  The peers of a failed
// collective usually fail too, and MPI's error handler decides the job's
// fate; genx's part is that no rank spins forever and nothing posted into
// memory genx frees.
size_t abandon_failed(Execution& execution, std::string* note);

}  // namespace genx
