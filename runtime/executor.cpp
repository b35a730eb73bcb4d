// Plan compiler and executor state machine (design in executor.hpp).
#include "runtime/executor.hpp"
#include "runtime/staging.hpp"

#include <thread>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace genx {

// ------------------------------------------------------------ parameters

Status split_exec_params(const ParamMap& all, ParamMap* generator_params, ExecOptions* options) {
    ParamMap gen, exec;
    split_exec_keys(all, &gen, &exec);
    ExecOptions opts;
    if (auto it = exec.find(kSegmentKey); it != exec.end()) {
        Status st = parse_size(it->second, &opts.segment_bytes);
        if (!st.is_ok()) return Status::invalid("params: segment=" + it->second + ": " + st.message());
    }
    if (auto it = exec.find(kWindowKey); it != exec.end()) {
        long w = 0;
        if (!parse_int_in(it->second, 1, 1024, &w))
            return Status::invalid("params: window=" + it->second +
                                   " is not an integer in 1..1024 (segments in flight per transfer)");
        opts.window = static_cast<int>(w);
    }
    *generator_params = std::move(gen);
    *options = opts;
    return Status::ok();
}

std::string format_exec_options(const ExecOptions& options) {
    return "segment=" + format_bytes(options.segment_bytes) +
           ",window=" + std::to_string(options.window);
}

// -------------------------------------------------------------- compiler

namespace {

constexpr size_t kSlotAlign = 64;
constexpr size_t kNoSlot = static_cast<size_t>(-1);

class Compiler {
  public:
    Compiler(const PlanHeader& plan, const Program& prog, int rank, size_t count, size_t elem_size,
             const ExecOptions& opts, RankSchedule* out)
        : plan_(plan), prog_(prog), rank_(rank), count_(count), esize_(elem_size), opts_(opts),
          out_(out) {}

    Status run();

  private:
    const Program& prog() const { return prog_; }
    Status where(const std::string& what) const {
        return Status::invalid("compile " + plan_.algorithm + " (P=" +
                               std::to_string(plan_.nranks) + ") rank " + std::to_string(rank_) +
                               " step " + std::to_string(step_) + ": " + what);
    }
    static std::string buffer_name(BufferId b) {
        return b == kResult ? std::string("result") : "slot " + std::to_string(b);
    }
    Status check_buffer(BufferId b, const std::string& item) const;
    // Location and size of the consecutive blocks [first, last] in `buf`;
    // every block must be in the slot's layout (written by the program).
    Status locate(BufferId buf, int first, int last, const std::string& item, Loc* loc,
                  size_t* elems) const;
    // Calls f(first, last) for each maximal run of consecutive indices.
    template <typename F>
    Status for_each_run(const std::vector<int>& blocks, const std::string& item, F f) const;
    Status add_transfer(const Transfer& t, bool is_send, int index);
    Status add_op(const LocalOp& op, int index);

    const PlanHeader& plan_;
    const Program& prog_;
    const int rank_;
    const size_t count_;
    const size_t esize_;
    const ExecOptions opts_;
    RankSchedule* out_;
    std::vector<size_t> slot_base_;
    size_t seg_bytes_ = 0;
    size_t block_elems_ = 0;  // the largest block's elements, ⌈count / nblocks⌉
    size_t step_ = 0;
};

Status Compiler::check_buffer(BufferId b, const std::string& item) const {
    if (b == kResult || (b >= 0 && b < program_slots(prog_))) return Status::ok();
    return where(item + " names buffer " + std::to_string(b) + " but the program has layouts for " +
                 std::to_string(program_slots(prog_)) + " slots (was it finalized?)");
}

Status Compiler::locate(BufferId buf, int first, int last, const std::string& item, Loc* loc,
                        size_t* elems) const {
    const size_t lo = block_range(count_, plan_.nblocks, first).first;
    const size_t hi = block_range(count_, plan_.nblocks, last).second;
    *elems = hi - lo;
    if (buf == kResult) {
        *loc = Loc{Space::Result, lo * esize_};
        return Status::ok();
    }
    const std::vector<int>& layout = prog().slot_layout[static_cast<size_t>(buf)];
    for (int b = first; b <= last; ++b) {
        if (!std::binary_search(layout.begin(), layout.end(), b))
            return where(item + " uses block " + std::to_string(b) + " of slot " +
                         std::to_string(buf) +
                         ", which the program never writes (not in the slot's layout; was "
                         "finalize() run?)");
    }
    const long off = program_slot_offset(prog_, plan_.nblocks, buf, first, count_);
    if (off < 0) return where(item + ": slot_offset failed for block " + std::to_string(first));
    *loc = Loc{Space::Scratch, slot_base_[static_cast<size_t>(buf)] + static_cast<size_t>(off) * esize_};
    return Status::ok();
}

template <typename F>
Status Compiler::for_each_run(const std::vector<int>& blocks, const std::string& item, F f) const {
    for (size_t i = 0; i < blocks.size();) {
        size_t j = i;
        while (j + 1 < blocks.size() && blocks[j + 1] == blocks[j] + 1) ++j;
        for (size_t k = i; k <= j; ++k)
            if (blocks[k] < 0 || blocks[k] >= plan_.nblocks)
                return where(item + " names block " + std::to_string(blocks[k]) + " outside 0.." +
                             std::to_string(plan_.nblocks - 1));
        GENX_RETURN_IF_ERROR(f(blocks[i], blocks[j]));
        i = j + 1;
    }
    return Status::ok();
}

Status Compiler::add_transfer(const Transfer& t, bool is_send, int index) {
    const std::string item = std::string(is_send ? "send " : "receive ") + std::to_string(index) +
                             " (peer " + std::to_string(t.peer) + ", " + buffer_name(t.buffer) + ")";
    if (t.peer < 0 || t.peer >= plan_.nranks || t.peer == rank_)
        return where(item + ": peer must be another rank in 0.." + std::to_string(plan_.nranks - 1));
    GENX_RETURN_IF_ERROR(check_buffer(t.buffer, item));
    if (t.segment_blocks < 0)
        return where(item + ": segment_blocks " + std::to_string(t.segment_blocks) + " is negative");
    // The transfer's own message size (Transfer::segment_blocks), else the
    // plan-wide one.
    const size_t seg = t.segment_blocks > 0
                           ? std::max(esize_, static_cast<size_t>(t.segment_blocks) * block_elems_ * esize_)
                           : seg_bytes_;
    TransferSched ts;
    ts.peer = t.peer;
    ts.first_segment = out_->segments.size();
    GENX_RETURN_IF_ERROR(for_each_run(t.blocks, item, [&](int first, int last) {
        Loc loc;
        size_t elems = 0;
        GENX_RETURN_IF_ERROR(locate(t.buffer, first, last, item, &loc, &elems));
        const size_t bytes = elems * esize_;
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(seg, bytes - done);
            out_->segments.push_back(SegmentSched{Loc{loc.space, loc.offset + done}, n});
            done += n;
        }
        (is_send ? out_->bytes_sent : out_->bytes_received) += bytes;
        return Status::ok();
    }));
    ts.nsegments = out_->segments.size() - ts.first_segment;
    out_->max_segments_per_transfer = std::max(out_->max_segments_per_transfer, ts.nsegments);
    if (ts.nsegments > 0) out_->transfers.push_back(ts);
    return Status::ok();
}

Status Compiler::add_op(const LocalOp& op, int index) {
    const bool reduce = op.kind == OpKind::Reduce;
    const std::string item = std::string(reduce ? "reduce " : "copy ") + std::to_string(index) +
                             " (dst " + buffer_name(op.dst) + ")";
    if (op.kind != OpKind::Reduce && op.kind != OpKind::Copy) return where(item + ": unknown op kind");
    if (reduce ? op.srcs.empty() : op.srcs.size() != 1)
        return where(item + " has " + std::to_string(op.srcs.size()) + " sources; " +
                     (reduce ? "a reduce needs at least one" : "a copy needs exactly one"));
    GENX_RETURN_IF_ERROR(check_buffer(op.dst, item));
    for (BufferId s : op.srcs) {
        GENX_RETURN_IF_ERROR(check_buffer(s, item));
        // Kernels take __restrict operands and the plan names the same
        // blocks in every operand, so one buffer twice would alias.
        if (s == op.dst) return where(item + " reads its own destination buffer");
    }
    for (size_t a = 0; a < op.srcs.size(); ++a)
        for (size_t b = a + 1; b < op.srcs.size(); ++b)
            if (op.srcs[a] == op.srcs[b])
                return where(item + " names " + buffer_name(op.srcs[a]) + " twice as a source");
    OpSched os;
    os.kind = op.kind;
    os.nsrcs = static_cast<int>(op.srcs.size());
    os.first_piece = out_->pieces.size();
    GENX_RETURN_IF_ERROR(for_each_run(op.blocks, item, [&](int first, int last) {
        PieceSched piece;
        GENX_RETURN_IF_ERROR(locate(op.dst, first, last, item, &piece.dst, &piece.elems));
        const size_t src_mark = out_->src_locs.size();
        piece.first_src = src_mark;
        for (BufferId s : op.srcs) {
            Loc loc;
            size_t elems = 0;
            GENX_RETURN_IF_ERROR(locate(s, first, last, item, &loc, &elems));
            out_->src_locs.push_back(loc);
        }
        if (piece.elems == 0) {
            out_->src_locs.resize(src_mark);
        } else {
            out_->pieces.push_back(piece);
        }
        return Status::ok();
    }));
    os.npieces = out_->pieces.size() - os.first_piece;
    if (os.npieces > 0) {
        out_->ops.push_back(os);
        out_->max_srcs = std::max(out_->max_srcs, os.nsrcs);
    }
    return Status::ok();
}

Status Compiler::run() {
    if (plan_.nranks < 1)
        return Status::invalid("compile " + plan_.algorithm + ": plan has nranks " +
                               std::to_string(plan_.nranks));
    if (rank_ < 0 || rank_ >= plan_.nranks)
        return Status::invalid("compile " + plan_.algorithm + ": rank " + std::to_string(rank_) +
                               " outside 0.." + std::to_string(plan_.nranks - 1));
    if (esize_ == 0) return Status::invalid("compile " + plan_.algorithm + ": element size 0");
    if (opts_.window < 1)
        return Status::invalid("compile " + plan_.algorithm + ": window " +
                               std::to_string(opts_.window) + " (must be >= 1)");
    if (count_ > std::numeric_limits<size_t>::max() / esize_)
        return Status::invalid("compile " + plan_.algorithm + ": " + std::to_string(count_) +
                               " elements of " + std::to_string(esize_) + " B overflow size_t");
    if (plan_.nblocks < 1 && !prog().steps.empty())
        return Status::invalid("compile " + plan_.algorithm + ": nblocks " +
                               std::to_string(plan_.nblocks) + " but rank " +
                               std::to_string(rank_) + " has steps");
    *out_ = RankSchedule();
    out_->algorithm = plan_.algorithm;
    out_->rank = rank_;
    out_->nranks = plan_.nranks;
    out_->count = count_;
    out_->elem_size = esize_;
    out_->options = opts_;

    size_t scratch = 0;
    const int nslots = program_slots(prog_);
    slot_base_.assign(static_cast<size_t>(nslots), 0);
    for (int s = 0; s < nslots; ++s) {
        scratch = (scratch + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
        slot_base_[static_cast<size_t>(s)] = scratch;
        scratch += program_slot_elems(prog_, plan_.nblocks, s, count_) * esize_;
    }
    out_->scratch_bytes = scratch;

    seg_bytes_ = opts_.segment_bytes == 0 ? std::numeric_limits<size_t>::max()
                                          : std::max(esize_, opts_.segment_bytes / esize_ * esize_);
    block_elems_ = (count_ + static_cast<size_t>(plan_.nblocks) - 1) /
                   static_cast<size_t>(std::max(plan_.nblocks, 1));

    const std::vector<Step>& steps = prog().steps;
    out_->steps.reserve(steps.size());
    for (step_ = 0; step_ < steps.size(); ++step_) {
        const Step& st = steps[step_];
        StepSched ss;
        ss.plan_step = step_;
        ss.first_transfer = out_->transfers.size();
        for (size_t i = 0; i < st.recvs.size(); ++i)
            GENX_RETURN_IF_ERROR(add_transfer(st.recvs[i], false, static_cast<int>(i)));
        ss.nrecvs = static_cast<int>(out_->transfers.size() - ss.first_transfer);
        for (size_t i = 0; i < st.sends.size(); ++i)
            GENX_RETURN_IF_ERROR(add_transfer(st.sends[i], true, static_cast<int>(i)));
        ss.nsends = static_cast<int>(out_->transfers.size() - ss.first_transfer) - ss.nrecvs;
        ss.first_op = out_->ops.size();
        for (size_t i = 0; i < st.ops.size(); ++i)
            GENX_RETURN_IF_ERROR(add_op(st.ops[i], static_cast<int>(i)));
        ss.nops = out_->ops.size() - ss.first_op;
        ss.single_segment = true;
        for (size_t t = ss.first_transfer; t < out_->transfers.size(); ++t)
            ss.single_segment = ss.single_segment && out_->transfers[t].nsegments == 1;
        out_->max_transfers_per_step = std::max(out_->max_transfers_per_step, ss.nrecvs + ss.nsends);
        // A step that moves and computes nothing (every block empty for this
        // count) is dropped: it has no observable effect on either side.
        if (ss.nrecvs + ss.nsends > 0 || ss.nops > 0) out_->steps.push_back(ss);
    }
    out_->replayable = out_->max_transfers_per_step <= kReplayMaxTransfers &&
                       std::all_of(out_->steps.begin(), out_->steps.end(),
                                   [](const StepSched& ss) { return ss.single_segment; });
    return Status::ok();
}

}  // namespace

Status compile(const Plan& plan, int rank, size_t count, size_t elem_size,
               const ExecOptions& options, RankSchedule* out) {
    if (rank < 0 || rank >= plan.nranks || plan.programs.size() != static_cast<size_t>(plan.nranks))
        return Status::invalid("compile " + plan.algorithm + ": rank " + std::to_string(rank) +
                               " of a plan with nranks " + std::to_string(plan.nranks) + " and " +
                               std::to_string(plan.programs.size()) + " programs");
    return compile(plan, plan.programs[static_cast<size_t>(rank)], rank, count, elem_size, options,
                   out);
}

Status compile(const PlanHeader& header, const Program& program, int rank, size_t count,
               size_t elem_size, const ExecOptions& options, RankSchedule* out) {
    RankSchedule sched;
    Compiler c(header, program, rank, count, elem_size, options, &sched);
    GENX_RETURN_IF_ERROR(c.run());
    *out = std::move(sched);
    return Status::ok();
}

size_t schedule_bytes(const RankSchedule& s) {
    return sizeof(RankSchedule) + s.algorithm.capacity() +
           s.steps.capacity() * sizeof(StepSched) + s.transfers.capacity() * sizeof(TransferSched) +
           s.segments.capacity() * sizeof(SegmentSched) + s.ops.capacity() * sizeof(OpSched) +
           s.pieces.capacity() * sizeof(PieceSched) + s.src_locs.capacity() * sizeof(Loc);
}

// ------------------------------------------------------------- execution

namespace {

// check_call()'s messages, off the hot path.
[[gnu::cold, gnu::noinline]] Status null_recvbuf() { return Status::invalid("executor: recvbuf is NULL"); }
[[gnu::cold, gnu::noinline]] Status short_scratch(size_t given, size_t needed) {
    return Status::invalid("executor: scratch of " + std::to_string(given) +
                           " B given, the schedule needs " + std::to_string(needed) + " B");
}
[[gnu::cold, gnu::noinline]] Status kernel_mismatch(size_t kernel, size_t schedule) {
    return Status::invalid("executor: kernel for " + std::to_string(kernel) +
                           " B elements, schedule for " + std::to_string(schedule) + " B elements");
}

}  // namespace

inline Status Execution::check_call(const RankSchedule& schedule, void* recvbuf, void* scratch,
                                    size_t scratch_bytes, const ReduceKernel& kernel) const {
    if (recvbuf == nullptr && schedule.count * schedule.elem_size > 0) return null_recvbuf();
    if (scratch_bytes < schedule.scratch_bytes || (scratch == nullptr && schedule.scratch_bytes > 0))
        return short_scratch(scratch_bytes, schedule.scratch_bytes);
    if (!schedule.ops.empty() && kernel.elem_size() != schedule.elem_size)
        return kernel_mismatch(kernel.elem_size(), schedule.elem_size);
    return Status::ok();
}

inline void Execution::reset_call() {
    sched_ = nullptr;
    error_ = Status::ok();
    staged_ = false;
    on_device_ = false;
    payload_free_ = false;
    op_hook_ = nullptr;
    progress_calls_ = 0;  // a refused call counts nothing
    waits_ = 0;
    blocking_sends_ = 0;
    drop_stale_requests();
}

Status Execution::start(const RankSchedule& schedule, const void* sendbuf, void* recvbuf,
                        void* scratch, size_t scratch_bytes, const ReduceKernel& kernel,
                        Transport& transport) {
    reset_call();
    Status checked = check_call(schedule, recvbuf, scratch, scratch_bytes, kernel);
    if (!checked.is_ok()) return fail(std::move(checked));
    const size_t bytes = schedule.count * schedule.elem_size;
    bind(schedule, static_cast<unsigned char*>(recvbuf), static_cast<unsigned char*>(scratch),
         &kernel, transport);
    if (sendbuf != nullptr && sendbuf != recvbuf && bytes > 0) std::memcpy(recvbuf, sendbuf, bytes);
    return Status::ok();
}

Status Execution::start_payload_free(const RankSchedule& schedule, Transport& transport,
                                     LocalOpHook* hook) {
    sched_ = nullptr;
    error_ = Status::ok();
    staged_ = false;
    on_device_ = false;
    drop_stale_requests();
    bind(schedule, nullptr, nullptr, nullptr, transport);
    payload_free_ = true;
    op_hook_ = hook;
    return Status::ok();
}

void Execution::drop_stale_requests() {
    // A failed call that was not abandon()ed may have left requests
    // marked; they are no longer this execution's to touch.  One that ran
    // to its end left none.
    if (finished_) return;
    if (!held_.empty() || std::find(in_flight_.begin(), in_flight_.end(), 1) != in_flight_.end()) {
        std::fill(in_flight_.begin(), in_flight_.end(), 0);
        held_.clear();
    }
}

void Execution::bind(const RankSchedule& schedule, unsigned char* result, unsigned char* scratch,
                     const ReduceKernel* kernel, Transport& transport) {
    const size_t window = std::max<size_t>(
        1, std::min(static_cast<size_t>(schedule.options.window), schedule.max_segments_per_transfer));
    const size_t slots = static_cast<size_t>(schedule.max_transfers_per_step) * window;
    if (flights_.size() < static_cast<size_t>(schedule.max_transfers_per_step))
        flights_.resize(static_cast<size_t>(schedule.max_transfers_per_step));
    if (requests_.size() < slots) {
        requests_.resize(slots);
        in_flight_.resize(slots);
    }
    if (srcs_.size() < static_cast<size_t>(schedule.max_srcs))
        srcs_.resize(static_cast<size_t>(schedule.max_srcs));
    if (kernel != nullptr && temp_.size() < kernel->temp_bytes()) temp_.resize(kernel->temp_bytes());

    sched_ = &schedule;
    finished_ = false;
    result_ = result;
    scratch_ = scratch;
    kernel_ = kernel;
    transport_ = &transport;
    blocking_send_ = transport.has_blocking_send();
    window_ = window;
    step_ = 0;
    posted_ = false;
    progress_calls_ = 0;
    waits_ = 0;
    blocking_sends_ = 0;
    if (waiting_.capacity() < slots) {
        waiting_.reserve(slots);
        waiting_slots_.reserve(slots);
    }
}

Status Execution::fail(Status st) {
    if (sched_ != nullptr) {
        const std::string step = step_ < sched_->steps.size()
                                     ? std::to_string(sched_->steps[step_].plan_step)
                                     : std::string("end");
        st = Status(st.code(), "executor (" + sched_->algorithm + ", rank " +
                                   std::to_string(sched_->rank) + ", step " + step +
                                   "): " + st.message());
    }
    error_ = st;
    return st;
}

const TransferSched& Execution::transfer(int i) const {
    return sched_->transfers[sched_->steps[step_].first_transfer + static_cast<size_t>(i)];
}

Status Execution::post(int i, size_t seg) {
    const TransferSched& t = transfer(i);
    const SegmentSched& s = sched_->segments[t.first_segment + seg];
    const size_t slot = static_cast<size_t>(i) * window_ + ring_slot(seg);
    const bool is_recv = i < sched_->steps[step_].nrecvs;

    Status st = is_recv ? transport_->irecv(addr(s.loc), s.bytes, t.peer, &requests_[slot])
                        : transport_->isend(addr(s.loc), s.bytes, t.peer, &requests_[slot]);
    if (!st.is_ok()) return st;
    in_flight_[slot] = 1;
    return Status::ok();
}

// Tests the transfer's in-flight segments and refills its window; *posted
// says whether a segment was posted (the caller then tests again: an eager
// send or a receive whose message already arrived completes on posting, and
// seeing that in the same pass saves a transport progress call per step,
// which is what tuned's blocking calls save too).
Status Execution::advance(int i, bool* complete, bool* posted) {
    const TransferSched& t = transfer(i);
    Flight& f = flights_[static_cast<size_t>(i)];
    const size_t w = window_;
    const size_t base = static_cast<size_t>(i) * w;
    for (size_t seg = f.completed; seg < f.posted; ++seg) {
        const size_t slot = base + ring_slot(seg);
        if (!in_flight_[slot]) continue;
        bool done = false;
        const Status st = transport_->test(requests_[slot], &done);
        // A failed test released the request (transport contract).
        if (done || !st.is_ok()) in_flight_[slot] = 0;
        if (!st.is_ok()) return st;
    }
    // A segment finishing before an older one keeps its slot reserved until
    // the older one finishes, so in-flight segments never share a slot.
    while (f.completed < f.posted && !in_flight_[base + ring_slot(f.completed)]) ++f.completed;
    while (f.posted < t.nsegments && f.posted - f.completed < w) {
        GENX_RETURN_IF_ERROR(post(i, f.posted));
        ++f.posted;
        *posted = true;
    }
    *complete = f.completed == t.nsegments;
    return Status::ok();
}

inline __attribute__((always_inline)) Status Execution::run_ops(const StepSched& step) {
    if (on_device_) return run_ops_on_device(step);
    if (payload_free_)
        return op_hook_ != nullptr && step.nops > 0 ? op_hook_->local_ops(*sched_, step) : Status::ok();
    const size_t esize = sched_->elem_size;
    for (size_t o = step.first_op; o < step.first_op + step.nops; ++o) {
        const OpSched& op = sched_->ops[o];
        for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
            const PieceSched& piece = sched_->pieces[p];
            unsigned char* dst = addr(piece.dst);
            if (op.kind == OpKind::Copy) {
                std::memcpy(dst, addr(sched_->src_locs[piece.first_src]), piece.elems * esize);
                continue;
            }
            for (int k = 0; k < op.nsrcs; ++k)
                srcs_[static_cast<size_t>(k)] = addr(sched_->src_locs[piece.first_src + static_cast<size_t>(k)]);
            kernel_->apply(dst, srcs_.data(), op.nsrcs, piece.elems, temp_.data());
        }
    }
    return Status::ok();
}

// The step's ops queued on the device's stream, then waited for: the next
// step sends what they wrote.
Status Execution::run_ops_on_device(const StepSched& step) {
    if (step.nops == 0) return Status::ok();
    const size_t esize = sched_->elem_size;
    DeviceBackend& d = *dx_.device;
    for (size_t o = step.first_op; o < step.first_op + step.nops; ++o) {
        const OpSched& op = sched_->ops[o];
        for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
            const PieceSched& piece = sched_->pieces[p];
            unsigned char* dst = addr(piece.dst);
            if (op.kind == OpKind::Copy) {
                GENX_RETURN_IF_ERROR(d.memcpy_async(dx_.ordinal, dst,
                                                    addr(sched_->src_locs[piece.first_src]),
                                                    piece.elems * esize, dx_.stream));
                continue;
            }
            for (int k = 0; k < op.nsrcs; ++k)
                srcs_[static_cast<size_t>(k)] = addr(sched_->src_locs[piece.first_src + static_cast<size_t>(k)]);
            GENX_RETURN_IF_ERROR(d.reduce_async(dx_.ordinal, kernel_->dtype(), kernel_->op(), dst,
                                                srcs_.data(), op.nsrcs, piece.elems, dx_.stream));
        }
    }
    return d.stream_synchronize(dx_.ordinal, dx_.stream);
}

Status Execution::start_on_device(const RankSchedule& schedule, const DeviceExec& dx,
                                  const void* sendbuf, void* recvbuf, void* scratch,
                                  size_t scratch_bytes, const ReduceKernel& kernel,
                                  Transport& transport) {
    if (dx.device == nullptr)
        return fail(Status::invalid("executor: device start without a device"));
    if (!schedule.ops.empty() && (kernel.is_callback() || !dx.device->reduce_supported(kernel.dtype(), kernel.op())))
        return fail(Status::unsupported(std::string("executor: no device kernel for ") +
                                        op_name(kernel.op()) + " on " + dtype_name(kernel.dtype())));
    GENX_RETURN_IF_ERROR(start(schedule, nullptr, recvbuf, scratch, scratch_bytes, kernel, transport));
    on_device_ = true;
    dx_ = dx;
    const size_t bytes = schedule.count * schedule.elem_size;
    if (sendbuf != nullptr && sendbuf != recvbuf && bytes > 0) {
        Status st = dx.device->memcpy_async(dx.ordinal, recvbuf, sendbuf, bytes, dx.stream);
        if (st.is_ok()) st = dx.device->stream_synchronize(dx.ordinal, dx.stream);
        if (!st.is_ok()) return fail(st);
    }
    return Status::ok();
}

Status Execution::progress(bool* done, bool block) {
    *done = false;
    if (!error_.is_ok()) return error_;
    if (sched_ == nullptr) return Status::internal("executor: progress() before a successful start()");
    while (step_ < sched_->steps.size()) {
        const StepSched& st = sched_->steps[step_];
        const int ntransfers = st.nrecvs + st.nsends;
        if (!posted_) {
            if (staged_) {
                bool ready = false;
                Status s = stage_in_ready(step_, block, &ready);
                if (!s.is_ok()) return fail(s);
                if (!ready) return Status::ok();
            }
            for (int i = 0; i < ntransfers; ++i) flights_[static_cast<size_t>(i)] = Flight();
            posted_ = true;
        }
        // Passes over the step's transfers, receives first (they come first
        // in its list), until one posts nothing new: the first pass posts
        // each transfer's initial window, and the pass after a post tests
        // what it posted.
        bool all = false;
        for (bool again = true; again;) {
            again = false;
            all = true;
            for (int i = 0; i < ntransfers; ++i) {
                bool complete = false;
                Status s = advance(i, &complete, &again);
                if (!s.is_ok()) return fail(s);
                all = all && complete;
            }
        }
        if (!all) return Status::ok();
        if (Status s = run_ops(st); !s.is_ok()) return fail(s);
        if (staged_) {
            Status s = stage_out(step_);
            if (!s.is_ok()) return fail(s);
        }
        ++step_;
        posted_ = false;
    }
    if (staged_) {
        bool finished = false;
        Status s = stage_finish(block, &finished);
        if (!s.is_ok()) return fail(s);
        if (!finished) return Status::ok();
    }
    *done = true;
    finished_ = true;
    return Status::ok();
}

Status Execution::start_staged(const RankSchedule& schedule, const StagedBuffers& stage,
                               void* scratch, size_t scratch_bytes, const ReduceKernel& kernel,
                               Transport& transport) {
    const StagePlan* plan = stage.plan;
    const size_t bytes = schedule.count * schedule.elem_size;
    if (stage.device == nullptr || plan == nullptr || plan->bytes != bytes ||
        plan->in_begin.size() != std::max<size_t>(schedule.steps.size(), 1) + 1 ||
        plan->out_begin.size() != schedule.steps.size() + 2 || stage.in_events == nullptr ||
        (bytes > 0 && (stage.host == nullptr || stage.src == nullptr || stage.dst == nullptr)))
        return fail(Status::invalid("executor: staged start without a matching stage plan, "
                                    "device, events or buffers"));
    GENX_RETURN_IF_ERROR(start(schedule, nullptr, stage.host, scratch, scratch_bytes, kernel, transport));
    staged_ = true;
    stage_ = stage;
    in_ready_ = 0;
    out_queued_ = false;
    auto* host = static_cast<unsigned char*>(stage.host);
    const auto* src = static_cast<const unsigned char*>(stage.src);
    for (size_t slot = 0; slot + 1 < plan->in_begin.size(); ++slot) {
        if (plan->in_begin[slot] == plan->in_begin[slot + 1]) continue;
        for (size_t r = plan->in_begin[slot]; r < plan->in_begin[slot + 1]; ++r) {
            const StageRange& br = plan->in[r];
            Status s = stage.device->memcpy_async(stage.ordinal, host + br.offset, src + br.offset,
                                                  br.bytes, stage.in_stream);
            if (!s.is_ok()) return fail(s);
        }
        Status s = stage.device->event_record(stage.ordinal, stage.in_events[slot], stage.in_stream);
        if (!s.is_ok()) return fail(s);
    }
    return Status::ok();
}

// Whether everything recorded before `e` finished; block: wait for it.
Status Execution::event_done(DeviceEvent e, bool block, bool* done) {
    *done = true;
    if (block) return stage_.device->event_synchronize(stage_.ordinal, e);
    return stage_.device->event_query(stage_.ordinal, e, done);
}

Status Execution::stage_in_ready(size_t step, bool block, bool* ready) {
    const StagePlan& plan = *stage_.plan;
    const size_t slots = plan.in_begin.size() - 1;
    const size_t upto = std::min(step, slots - 1);
    *ready = true;
    if (in_ready_ > upto) return Status::ok();
    // Slots complete in order (one stream): the last non-empty slot up to
    // `step` is the one to wait for.
    size_t last = kNoSlot;
    for (size_t k = in_ready_; k <= upto; ++k)
        if (plan.in_begin[k] != plan.in_begin[k + 1]) last = k;
    if (last != kNoSlot) {
        GENX_RETURN_IF_ERROR(event_done(stage_.in_events[last], block, ready));
        if (!*ready) return Status::ok();
    }
    in_ready_ = upto + 1;
    return Status::ok();
}

Status Execution::stage_out(size_t slot) {
    const StagePlan& plan = *stage_.plan;
    auto* dst = static_cast<unsigned char*>(stage_.dst);
    const auto* host = static_cast<const unsigned char*>(stage_.host);
    for (size_t r = plan.out_begin[slot]; r < plan.out_begin[slot + 1]; ++r) {
        const StageRange& br = plan.out[r];
        GENX_RETURN_IF_ERROR(stage_.device->memcpy_async(stage_.ordinal, dst + br.offset,
                                                         host + br.offset, br.bytes,
                                                         stage_.out_stream));
    }
    return Status::ok();
}

Status Execution::stage_finish(bool block, bool* finished) {
    *finished = false;
    if (!out_queued_) {
        // Every copy in must have landed before its bytes go out again
        // (without steps, nothing waited for them yet).
        bool ready = false;
        GENX_RETURN_IF_ERROR(stage_in_ready(stage_.plan->in_begin.size() - 2, block, &ready));
        if (!ready) return Status::ok();
        GENX_RETURN_IF_ERROR(stage_out(sched_->steps.size()));
        GENX_RETURN_IF_ERROR(stage_.device->event_record(stage_.ordinal, stage_.out_event, stage_.out_stream));
        out_queued_ = true;
    }
    return event_done(stage_.out_event, block, finished);
}

bool Execution::step_fully_posted() const {
    if (sched_ == nullptr || step_ >= sched_->steps.size() || !posted_) return false;
    const StepSched& st = sched_->steps[step_];
    for (int i = 0; i < st.nrecvs + st.nsends; ++i)
        if (flights_[static_cast<size_t>(i)].posted < transfer(i).nsegments) return false;
    return true;
}

Status Execution::wait_step() {
    const StepSched& st = sched_->steps[step_];
    waiting_.clear();
    waiting_slots_.clear();
    for (int i = 0; i < st.nrecvs + st.nsends; ++i) {
        const Flight& f = flights_[static_cast<size_t>(i)];
        const size_t base = static_cast<size_t>(i) * window_;
        for (size_t seg = f.completed; seg < f.posted; ++seg) {
            const size_t slot = base + ring_slot(seg);
            if (!in_flight_[slot]) continue;
            waiting_.push_back(requests_[slot]);
            waiting_slots_.push_back(slot);
        }
    }
    if (waiting_.empty()) return Status::ok();
    ++waits_;
    const Status waited = transport_->wait_all(waiting_.data(), static_cast<int>(waiting_.size()));
    for (size_t slot : waiting_slots_) in_flight_[slot] = 0;
    if (!waited.is_ok())  // what is still posted is left in waiting_
        for (Request r : waiting_)
            if (r != nullptr) held_.push_back(r);
    return waited;
}

// run()'s path for a step of single-segment transfers: post everything
// (the last send blocking where the transport can), wait for the rest in
// one call, reduce.  The same transport calls as tuned's sendrecv.
inline __attribute__((always_inline)) Status Execution::run_simple_step() {
    const StepSched& st = sched_->steps[step_];
    const int ntransfers = st.nrecvs + st.nsends;
    waiting_.clear();
    // Until wait_all() takes them, the posted requests are known here only:
    // on a failure they go to held_ for abandon().
    auto hold_posted = [this] {
        for (Request r : waiting_)
            if (r != nullptr) held_.push_back(r);
    };
    for (int i = 0; i < ntransfers; ++i) {
        const TransferSched& t = transfer(i);
        const SegmentSched& seg = sched_->segments[t.first_segment];
        Request req = nullptr;
        Status posted;
        if (i < st.nrecvs) {
            posted = transport_->irecv(addr(seg.loc), seg.bytes, t.peer, &req);
        } else if (i == ntransfers - 1 && blocking_send_) {
            ++blocking_sends_;
            posted = transport_->send(addr(seg.loc), seg.bytes, t.peer);
            if (!posted.is_ok()) {
                hold_posted();
                return posted;
            }
            continue;
        } else {
            posted = transport_->isend(addr(seg.loc), seg.bytes, t.peer, &req);
        }
        if (!posted.is_ok()) {
            hold_posted();
            return posted;
        }
        waiting_.push_back(req);
    }
    if (!waiting_.empty()) {
        ++waits_;
        const Status done = transport_->wait_all(waiting_.data(), static_cast<int>(waiting_.size()));
        if (!done.is_ok()) {
            hold_posted();
            return done;
        }
    }
    GENX_RETURN_IF_ERROR(run_ops(st));
    if (staged_) GENX_RETURN_IF_ERROR(stage_out(step_));
    ++step_;
    return Status::ok();
}

Status Execution::run() {
    if (!error_.is_ok()) return error_;
    if (sched_ == nullptr) return Status::internal("executor: run() before a successful start()");
    for (;;) {
        // A fresh step of single segments takes the short path (the
        // progress() machinery below handles everything else, and a step
        // progress() already started).
        while (step_ < sched_->steps.size() && !posted_ && sched_->steps[step_].single_segment) {
            bool ready = true;
            Status st = staged_ ? stage_in_ready(step_, true, &ready) : Status::ok();
            if (st.is_ok()) st = run_simple_step();
            if (!st.is_ok()) return fail(st);
        }
        // Every step ran that way: the call is over (progress() would only
        // find that out; staged calls still copy their result out there).
        if (step_ == sched_->steps.size() && !staged_) {
            finished_ = true;
            return Status::ok();
        }
        bool done = false;
        GENX_RETURN_IF_ERROR(progress(&done, true));
        if (done) return Status::ok();
        // Everything of the step is posted: nothing is left for the
        // executor to do until all of it completes, so the transport may
        // block on it as a whole (the PML's ompi_request_wait_all, what
        // tuned's blocking exchanges use).  Otherwise let it move bytes
        // and come back to refill the windows.
        Status st;
        if (step_fully_posted()) {
            st = wait_step();
        } else {
            ++progress_calls_;
            st = transport_->progress();
        }
        if (!st.is_ok()) return fail(st);
    }
}

Status Execution::replay(const RankSchedule& schedule, const void* sendbuf, void* recvbuf,
                         void* scratch, size_t scratch_bytes, const ReduceKernel& kernel,
                         const genx_transport_ops& ops) {
    reset_call();
    if (!schedule.replayable)
        return fail(Status::internal(std::string("executor: replay() of a schedule with segmented or "
                                                 "more than ") +
                                     std::to_string(kReplayMaxTransfers) +
                                     " transfers per step (use start() and run())"));
    Status checked = check_call(schedule, recvbuf, scratch, scratch_bytes, kernel);
    if (!checked.is_ok()) return fail(std::move(checked));
    if (srcs_.size() < static_cast<size_t>(schedule.max_srcs))
        srcs_.resize(static_cast<size_t>(schedule.max_srcs));
    if (temp_.size() < kernel.temp_bytes()) temp_.resize(kernel.temp_bytes());
    sched_ = &schedule;
    finished_ = false;
    result_ = static_cast<unsigned char*>(recvbuf);
    scratch_ = static_cast<unsigned char*>(scratch);
    kernel_ = &kernel;
    transport_ = nullptr;
    posted_ = false;
    const size_t bytes = schedule.count * schedule.elem_size;
    if (sendbuf != nullptr && sendbuf != recvbuf && bytes > 0) std::memcpy(recvbuf, sendbuf, bytes);

    const size_t nsteps = schedule.steps.size();
    for (step_ = 0; step_ < nsteps; ++step_) {
        const StepSched& st = schedule.steps[step_];
        const TransferSched* t = schedule.transfers.data() + st.first_transfer;
        const int n = st.nrecvs + st.nsends;
        Request reqs[kReplayMaxTransfers];
        int nreq = 0;
        for (int i = 0; i < n; ++i) {
            const SegmentSched& seg = schedule.segments[t[i].first_segment];
            unsigned char* p = addr(seg.loc);
            int rc;
            const char* what;
            if (i < st.nrecvs) {
                what = "irecv";
                rc = ops.irecv(ops.ctx, p, seg.bytes, t[i].peer, &reqs[nreq]);
            } else if (i == n - 1 && ops.send != nullptr) {
                what = "send";
                ++blocking_sends_;
                rc = ops.send(ops.ctx, p, seg.bytes, t[i].peer);
                if (rc == 0) continue;
            } else {
                what = "isend";
                rc = ops.isend(ops.ctx, p, seg.bytes, t[i].peer, &reqs[nreq]);
            }
            if (rc != 0)
                return replay_failed(transport_call_failed(what, rc, t[i].peer, seg.bytes), ops, reqs,
                                     nreq);
            ++nreq;
        }
        if (nreq > 0) {
            ++waits_;
            if (ops.wait_all != nullptr) {
                const int rc = ops.wait_all(ops.ctx, reqs, nreq);
                if (rc != 0) return replay_failed(transport_wait_failed(rc), ops, reqs, nreq);
            } else {
                // The C table's own loop of test and progress, as OpsTransport's.
                Status waited = OpsTransport(ops).wait_all(reqs, nreq);
                if (!waited.is_ok()) return replay_failed(std::move(waited), ops, reqs, nreq);
            }
        }
        if (st.nops > 0) {
            Status done = run_ops(st);
            if (!done.is_ok()) return fail(std::move(done));
        }
    }
    finished_ = true;
    return Status::ok();
}

Status Execution::replay_failed(Status st, const genx_transport_ops& ops, Request* reqs, int n) {
    for (int i = 0; i < n; ++i)
        if (reqs[i] != nullptr) held_.push_back(reqs[i]);
    replay_transport_.emplace(ops);
    transport_ = &*replay_transport_;
    return fail(std::move(st));
}

size_t Execution::abandon(std::chrono::milliseconds budget) {
    // Everything still posted: the slots' requests and run_simple_step()'s.
    std::vector<Request> live;
    for (size_t slot = 0; slot < in_flight_.size(); ++slot)
        if (in_flight_[slot]) {
            live.push_back(requests_[slot]);
            in_flight_[slot] = 0;
        }
    live.insert(live.end(), held_.begin(), held_.end());
    held_.clear();
    posted_ = false;
    if (staged_) {
        // Queued copies still read or write the staging buffer: let them
        // finish (a device error here leaves nothing more to do).
        (void)stage_.device->stream_synchronize(stage_.ordinal, stage_.in_stream);
        (void)stage_.device->stream_synchronize(stage_.ordinal, stage_.out_stream);
    }
    if (transport_ == nullptr) return live.size();

    // Cancel first: a receive cancelled before its message matched can no
    // longer write, and needs nothing from the peer.
    size_t n = 0;
    for (Request r : live) {
        bool cancelled = false;
        if (transport_->cancel(r, &cancelled).is_ok() && cancelled) continue;
        live[n++] = r;
    }
    live.resize(n);
    // The rest complete (or fail) on their own: a send to a live peer once
    // it receives or cancels.  A request whose test fails is released.
    const auto deadline = std::chrono::steady_clock::now() + budget;
    while (!live.empty()) {
        n = 0;
        for (Request r : live) {
            bool done = false;
            const Status st = transport_->test(r, &done);
            if (!done && st.is_ok()) live[n++] = r;
        }
        live.resize(n);
        if (live.empty() || std::chrono::steady_clock::now() >= deadline) break;
        if (!transport_->progress().is_ok()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return live.size();
}

size_t abandon_failed(Execution& execution, std::string* note) {
    const size_t left = execution.abandon(kAbandonBudget);
    *note = left == 0 ? "; every posted request was cancelled or completed"
                      : "; " + std::to_string(left) + " request(s) still posted after " +
                            std::to_string(kAbandonBudget.count()) +
                            " ms: their buffers stay allocated";
    return left;
}

}  // namespace genx
