// Payload-free execution (Execution::start_payload_free): the schedule a
// simulator runs without buffers must be the one a real run takes.  Both
// modes run over the loopback through a recording transport; each rank's
// log holds, in order, every send and receive it posted (peer, bytes) and
// every reduce it ran (one entry per source and piece, with its elements):
// from the kernel's callback in the real run, from the LocalOpHook in the
// payload-free one.  Unsegmented, the logs must be equal entry for entry;
// segmented, stream by stream (per_stream).  Every family, several P and
// counts.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"
#include "tests/unit/make_plan.hpp"

using namespace genx;

namespace {

using Log = std::vector<std::string>;

// Records what the executor posts, then forwards it to the loopback.  With
// `sizes_only` the executor's buffers are null; the loopback copies bytes,
// so each request gets a buffer of its own, freed once it completes.
class RecordingTransport final : public Transport {
  public:
    RecordingTransport(Transport& inner, Log* log, bool sizes_only)
        : inner_(inner), log_(log), sizes_only_(sizes_only) {}
    Status isend(const void* buf, size_t bytes, int peer, Request* req) override {
        log_->push_back("send " + std::to_string(peer) + " " + std::to_string(bytes));
        return post(true, const_cast<void*>(buf), bytes, peer, req);
    }
    Status irecv(void* buf, size_t bytes, int peer, Request* req) override {
        log_->push_back("recv " + std::to_string(peer) + " " + std::to_string(bytes));
        return post(false, buf, bytes, peer, req);
    }
    Status test(Request req, bool* done) override {
        Status st = inner_.test(req, done);
        if (*done || !st.is_ok()) held_.erase(req);
        return st;
    }
    Status progress() override { return inner_.progress(); }
    // Buffers the executor passed that were not null (payload-free: none).
    size_t real_buffers() const { return real_buffers_; }

  private:
    Status post(bool send, void* buf, size_t bytes, int peer, Request* req) {
        if (buf != nullptr) ++real_buffers_;
        if (!sizes_only_)
            return send ? inner_.isend(buf, bytes, peer, req) : inner_.irecv(buf, bytes, peer, req);
        auto own = std::make_unique<std::vector<unsigned char>>(bytes);
        GENX_RETURN_IF_ERROR(send ? inner_.isend(own->data(), bytes, peer, req)
                                  : inner_.irecv(own->data(), bytes, peer, req));
        held_[*req] = std::move(own);
        return Status::ok();
    }
    Transport& inner_;
    Log* log_;
    bool sizes_only_;
    size_t real_buffers_ = 0;
    std::map<Request, std::unique_ptr<std::vector<unsigned char>>> held_;
};

// The real run's reduces, through a (commutative) callback kernel: one
// call per source per piece, which the hook below writes the same way.
struct CallbackLog {
    Log* log;
};
void record_reduce(void* ctx, const void* in, void* inout, size_t count) {
    auto* c = static_cast<CallbackLog*>(ctx);
    c->log->push_back("reduce " + std::to_string(count));
    const auto* a = static_cast<const int32_t*>(in);
    auto* b = static_cast<int32_t*>(inout);
    for (size_t i = 0; i < count; ++i) b[i] += a[i];
}

class RecordingHook final : public LocalOpHook {
  public:
    explicit RecordingHook(Log* log) : log_(log) {}
    Status local_ops(const RankSchedule& s, const StepSched& step) override {
        ++calls_;
        for (size_t o = step.first_op; o < step.first_op + step.nops; ++o) {
            const OpSched& op = s.ops[o];
            for (size_t p = op.first_piece; p < op.first_piece + op.npieces; ++p) {
                if (op.kind == OpKind::Copy) {
                    ++copies_;
                    continue;
                }
                for (int k = 0; k < op.nsrcs; ++k)
                    log_->push_back("reduce " + std::to_string(s.pieces[p].elems));
            }
        }
        return Status::ok();
    }
    size_t calls() const { return calls_; }
    size_t copies() const { return copies_; }

  private:
    Log* log_;
    size_t calls_ = 0;
    size_t copies_ = 0;
};

// A segmented transfer refills its window as segments complete, so how the
// posts of different transfers interleave depends on timing; what must not
// depend on it is each (direction, peer)'s sequence of sizes and the
// sequence of reduces.
std::map<std::string, Log> per_stream(const Log& log) {
    std::map<std::string, Log> out;
    for (const std::string& e : log) {
        const size_t last = e.rfind(' ');
        out[e.substr(0, last)].push_back(e.substr(last + 1));
    }
    return out;
}

size_t schedule_copy_pieces(const RankSchedule& s) {
    size_t n = 0;
    for (const OpSched& op : s.ops)
        if (op.kind == OpKind::Copy) n += op.npieces;
    return n;
}

size_t steps_with_ops(const RankSchedule& s) {
    size_t n = 0;
    for (const StepSched& st : s.steps) n += st.nops > 0;
    return n;
}

// Runs `plan` on every rank, real (payload_free false) or not, and returns
// each rank's log.
Status run_logged(const Plan& plan, size_t count, const ExecOptions& o, bool payload_free,
                  std::vector<Log>* logs) {
    const int P = plan.nranks;
    logs->assign(static_cast<size_t>(P), Log());
    return run_ranks(P, [&](int rank, Transport& t) -> Status {
        Log& log = (*logs)[static_cast<size_t>(rank)];
        RankSchedule sched;
        GENX_RETURN_IF_ERROR(compile(plan, rank, count, sizeof(int32_t), o, &sched));
        RecordingTransport rec(t, &log, payload_free);
        Execution ex;
        if (payload_free) {
            RecordingHook hook(&log);
            GENX_RETURN_IF_ERROR(ex.start_payload_free(sched, rec, &hook));
            GENX_RETURN_IF_ERROR(ex.run());
            if (hook.calls() != steps_with_ops(sched))
                return Status::internal("hook called " + std::to_string(hook.calls()) +
                                        " times for " + std::to_string(steps_with_ops(sched)) +
                                        " steps with ops");
            if (hook.copies() != schedule_copy_pieces(sched))
                return Status::internal("hook saw " + std::to_string(hook.copies()) +
                                        " copies, the schedule has " +
                                        std::to_string(schedule_copy_pieces(sched)));
            if (rec.real_buffers() != 0)
                return Status::internal("payload-free run posted " +
                                        std::to_string(rec.real_buffers()) + " non-null buffers");
            return Status::ok();
        }
        CallbackLog cl{&log};
        const genx_reduce_cb cb{&cl, record_reduce};
        ReduceKernel k;
        GENX_RETURN_IF_ERROR(resolve_kernel(GENX_DT_OTHER, GENX_OP_OTHER, sizeof(int32_t), &cb,
                                            true, &k));
        std::vector<int32_t> input(count, rank + 1), result(count);
        std::vector<unsigned char> scratch(sched.scratch_bytes);
        GENX_RETURN_IF_ERROR(ex.start(sched, input.data(), result.data(), scratch.data(),
                                      scratch.size(), k, rec));
        GENX_RETURN_IF_ERROR(ex.run());
        const int32_t want = P * (P + 1) / 2;
        for (size_t i = 0; i < count; ++i)
            if (result[i] != want)
                return Status::internal("element " + std::to_string(i) + " is " +
                                        std::to_string(result[i]) + ", not " + std::to_string(want));
        return Status::ok();
    });
}

}  // namespace

TEST_CASE("payload-free runs post the real run's transfers and reduces, every family",
          "[executor][payload-free]") {
    struct Variant {
        std::string name, params;
    };
    const std::vector<Variant> variants = {
        {"ring", ""},         {"butterfly", ""}, {"butterfly", "r=1"}, {"rb", "root=0"},
        {"cps", ""},          {"hcps", ""},      {"rhd", ""},          {"gentree", ""},
        {"rd", ""},
    };
    ExecOptions segmented;
    segmented.segment_bytes = 256;
    segmented.window = 2;
    for (const Variant& v : variants) {
        for (int P : {1, 2, 3, 5, 8, 12}) {
            if (v.name == "butterfly" && v.params == "r=1" && P < 2) continue;
            const Plan plan = make_plan(v.name, P, v.params);
            for (size_t count : {size_t{0}, size_t(P) + 1, size_t{1000}}) {
                for (const ExecOptions& o : {ExecOptions(), segmented}) {
                    std::vector<Log> real, free;
                    Status st = run_logged(plan, count, o, false, &real);
                    INFO(v.name << " " << v.params << " P=" << P << " count=" << count
                                << " segment=" << o.segment_bytes << ": " << st.message());
                    REQUIRE(st.is_ok());
                    st = run_logged(plan, count, o, true, &free);
                    INFO("payload-free: " << st.message());
                    REQUIRE(st.is_ok());
                    for (int r = 0; r < P; ++r) {
                        INFO("rank " << r);
                        const Log& a = real[static_cast<size_t>(r)];
                        const Log& b = free[static_cast<size_t>(r)];
                        if (o.segment_bytes == 0 || o.segment_bytes >= count * sizeof(int32_t))
                            CHECK(a == b);
                        else
                            CHECK(per_stream(a) == per_stream(b));
                    }
                }
            }
        }
    }
}

TEST_CASE("payload-free runs without a hook skip the ops", "[executor][payload-free]") {
    const Plan plan = make_plan("ring", 4);
    const Status st = run_ranks(4, [&](int rank, Transport& t) -> Status {
        RankSchedule sched;
        GENX_RETURN_IF_ERROR(compile(plan, rank, 64, 4, ExecOptions(), &sched));
        Log log;
        RecordingTransport rec(t, &log, true);
        Execution ex;
        GENX_RETURN_IF_ERROR(ex.start_payload_free(sched, rec, nullptr));
        GENX_RETURN_IF_ERROR(ex.run());
        return log.size() == 2 * 2 * 3 ? Status::ok()
                                       : Status::internal(std::to_string(log.size()) + " posts");
    });
    INFO(st.message());
    CHECK(st.is_ok());
}
