// Symbolic checker (semantics and reporting contract in checker.hpp).
#include "plan/checker.hpp"
#include "plan/registry.hpp"
#include "plan/symmetry.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace genx {

const char* violation_name(Violation v) {
    switch (v) {
        case Violation::None:
            return "none";
        case Violation::Malformed:
            return "malformed";
        case Violation::BadPeer:
            return "bad-peer";
        case Violation::BadBlock:
            return "bad-block";
        case Violation::BadBuffer:
            return "bad-buffer";
        case Violation::BadOp:
            return "bad-op";
        case Violation::DuplicatePeer:
            return "duplicate-peer";
        case Violation::StepConflict:
            return "step-conflict";
        case Violation::Mismatched:
            return "mismatched";
        case Violation::Misordered:
            return "misordered";
        case Violation::UnmatchedSend:
            return "unmatched-send";
        case Violation::UnmatchedRecv:
            return "unmatched-recv";
        case Violation::Deadlock:
            return "deadlock";
        case Violation::UnwrittenRead:
            return "unwritten-read";
        case Violation::MissingContribution:
            return "missing-contribution";
        case Violation::DuplicateContribution:
            return "duplicate-contribution";
        case Violation::NotOrderPreserving:
            return "not-order-preserving";
    }
    return "unknown";
}

namespace {

std::string buffer_text(BufferId b) {
    return b == kResult ? std::string("result") : "slot" + std::to_string(b);
}

std::string blocks_text(const std::vector<int>& blocks) {
    std::string s = "b[";
    for (size_t i = 0; i < blocks.size(); ++i) s += (i ? "," : "") + std::to_string(blocks[i]);
    return s + "]";
}

std::string where(int rank, int step) {
    return "rank " + std::to_string(rank) + " step " + std::to_string(step) + ": ";
}

CheckResult failure(Violation kind, int rank, int step, int block, std::string message) {
    CheckResult r;
    r.ok = false;
    r.kind = kind;
    r.rank = rank;
    r.step = step;
    r.block = block;
    r.message = std::move(message);
    return r;
}

// One transfer of the plan, numbered globally.  A step's transfers are
// contiguous: its receives, then its sends.
struct Xfer {
    int rank = 0;
    int step = 0;
    bool send = false;
    const Transfer* t = nullptr;
    int partner = -1;  // matched transfer id
};

class Checker {
  public:
    Checker(const Plan& plan, const CheckOptions& options)
        : plan_(plan), options_(options), P_(plan.nranks), NB_(plan.nblocks), NS_(plan.nslots) {}

    CheckResult run() {
        if (!check_shape() || !check_structure() || !match() || !simulate() || !check_final())
            return result_;
        result_.ok = true;
        result_.kind = Violation::None;
        result_.order_preserving = order_preserving_;
        result_.message = "allreduce for P=" + std::to_string(P_) +
                          (order_preserving_ ? " (order preserving)" : "");
        return result_;
    }

  private:
    bool fail(Violation kind, int rank, int step, int block, std::string message) {
        result_ = failure(kind, rank, step, block, std::move(message));
        return false;
    }

    // ------------------------------------------------------------ shape
    bool check_shape() {
        if (P_ < 1 || P_ > std::numeric_limits<uint16_t>::max())
            return fail(Violation::Malformed, -1, -1, -1,
                        "plan has nranks " + std::to_string(P_) + " (the checker handles 1.." +
                            std::to_string(std::numeric_limits<uint16_t>::max()) + ")");
        if (plan_.programs.size() != static_cast<size_t>(P_))
            return fail(Violation::Malformed, -1, -1, -1,
                        "plan has " + std::to_string(plan_.programs.size()) +
                            " programs for nranks " + std::to_string(P_));
        if (NB_ < 1)
            return fail(Violation::Malformed, -1, -1, -1,
                        "plan has nblocks " + std::to_string(NB_) + " (must be >= 1)");
        if (NS_ < 0)
            return fail(Violation::Malformed, -1, -1, -1,
                        "plan has nslots " + std::to_string(NS_) + " (must be >= 0)");
        return true;
    }

    // -------------------------------------------------------- structure
    bool check_buffer(int r, int s, BufferId b, const char* what) {
        if (b >= kResult && b < NS_) return true;
        return fail(Violation::BadBuffer, r, s, -1,
                    where(r, s) + what + " names buffer " + std::to_string(b) +
                        ", which is neither the result buffer (" + std::to_string(kResult) +
                        ") nor a slot below nslots " + std::to_string(NS_));
    }

    bool check_blocks(int r, int s, const std::vector<int>& blocks, const std::string& what) {
        for (int b : blocks)
            if (b < 0 || b >= NB_)
                return fail(Violation::BadBlock, r, s, b,
                            where(r, s) + what + " names block " + std::to_string(b) +
                                " outside 0.." + std::to_string(NB_ - 1));
        return true;
    }

    long long key(BufferId buf, int block) const {
        return static_cast<long long>(buf + 1) * NB_ + block;
    }

    bool check_structure() {
        std::vector<int> send_mark(static_cast<size_t>(P_), -1);
        std::vector<int> recv_mark(static_cast<size_t>(P_), -1);
        std::vector<long long> writes, reads;
        int serial = 0;
        for (int r = 0; r < P_; ++r) {
            const Program& prog = plan_.programs[static_cast<size_t>(r)];
            for (int s = 0; s < static_cast<int>(prog.steps.size()); ++s, ++serial) {
                const Step& st = prog.steps[static_cast<size_t>(s)];
                writes.clear();
                reads.clear();
                for (int pass = 0; pass < 2; ++pass) {
                    const bool is_send = pass == 1;
                    const auto& list = is_send ? st.sends : st.recvs;
                    auto& mark = is_send ? send_mark : recv_mark;
                    const std::string dir = is_send ? "send to " : "receive from ";
                    for (const Transfer& t : list) {
                        const std::string what = dir + std::to_string(t.peer);
                        if (t.peer < 0 || t.peer >= P_ || t.peer == r)
                            return fail(Violation::BadPeer, r, s, -1,
                                        where(r, s) + what + ": peer must be in 0.." +
                                            std::to_string(P_ - 1) + " and not the rank itself");
                        if (!check_buffer(r, s, t.buffer, what.c_str())) return false;
                        if (!check_blocks(r, s, t.blocks, what)) return false;
                        if (t.segment_blocks < 0)
                            return fail(Violation::Malformed, r, s, -1,
                                        where(r, s) + what + ": segment_blocks " +
                                            std::to_string(t.segment_blocks) +
                                            " is negative (0 = the plan-wide segment size)");
                        if (mark[static_cast<size_t>(t.peer)] == serial)
                            return fail(Violation::DuplicatePeer, r, s, -1,
                                        where(r, s) + "more than one " +
                                            (is_send ? "send to " : "receive from ") + "rank " +
                                            std::to_string(t.peer) + " in one step");
                        mark[static_cast<size_t>(t.peer)] = serial;
                        for (int b : t.blocks)
                            (is_send ? reads : writes).push_back(key(t.buffer, b));
                    }
                }
                std::sort(writes.begin(), writes.end());
                std::sort(reads.begin(), reads.end());
                for (size_t i = 0; i < writes.size(); ++i) {
                    const BufferId buf = static_cast<BufferId>(writes[i] / NB_) - 1;
                    const int b = static_cast<int>(writes[i] % NB_);
                    if (i + 1 < writes.size() && writes[i + 1] == writes[i])
                        return fail(Violation::StepConflict, r, s, b,
                                    where(r, s) + "two receives of the step write " +
                                        buffer_text(buf) + " block " + std::to_string(b));
                    if (std::binary_search(reads.begin(), reads.end(), writes[i]))
                        return fail(Violation::StepConflict, r, s, b,
                                    where(r, s) + "a receive writes " + buffer_text(buf) +
                                        " block " + std::to_string(b) +
                                        ", which a send of the same step reads");
                }
                for (const LocalOp& op : st.ops) {
                    const bool reduce = op.kind == OpKind::Reduce;
                    const std::string what =
                        std::string(reduce ? "reduce" : "copy") + " into " + buffer_text(op.dst);
                    if (reduce ? op.srcs.empty() : op.srcs.size() != 1)
                        return fail(Violation::BadOp, r, s, -1,
                                    where(r, s) + what + " has " + std::to_string(op.srcs.size()) +
                                        " sources (a reduce needs at least 1, a copy exactly 1)");
                    if (!check_buffer(r, s, op.dst, what.c_str())) return false;
                    for (BufferId b : op.srcs)
                        if (!check_buffer(r, s, b, what.c_str())) return false;
                    if (!check_blocks(r, s, op.blocks, what)) return false;
                }
            }
        }
        return true;
    }

    // --------------------------------------------------------- matching
    void number_transfers() {
        first_.resize(static_cast<size_t>(P_));
        for (int r = 0; r < P_; ++r) {
            const Program& prog = plan_.programs[static_cast<size_t>(r)];
            first_[static_cast<size_t>(r)].resize(prog.steps.size() + 1);
            for (size_t s = 0; s < prog.steps.size(); ++s) {
                first_[static_cast<size_t>(r)][s] = static_cast<int>(x_.size());
                for (const Transfer& t : prog.steps[s].recvs)
                    x_.push_back(Xfer{r, static_cast<int>(s), false, &t, -1});
                for (const Transfer& t : prog.steps[s].sends)
                    x_.push_back(Xfer{r, static_cast<int>(s), true, &t, -1});
            }
            first_[static_cast<size_t>(r)][prog.steps.size()] = static_cast<int>(x_.size());
        }
    }

    // (sender, receiver) of a transfer.
    std::pair<int, int> pair_of(int id) const {
        const Xfer& x = x_[static_cast<size_t>(id)];
        return x.send ? std::make_pair(x.rank, x.t->peer) : std::make_pair(x.t->peer, x.rank);
    }

    static std::string segment_text(int k) {
        return k == 0 ? std::string("the plan-wide segment size")
                      : "segment_blocks " + std::to_string(k);
    }

    const std::vector<int>& blocks_of(int id) const {
        return x_[static_cast<size_t>(id)].t->blocks;
    }

    bool report_unmatched(int id) {
        const Xfer& x = x_[static_cast<size_t>(id)];
        const int b = x.t->blocks.empty() ? -1 : x.t->blocks.front();
        if (x.send)
            return fail(Violation::UnmatchedSend, x.rank, x.step, b,
                        where(x.rank, x.step) + "send of " + blocks_text(x.t->blocks) + " to " +
                            std::to_string(x.t->peer) + " has no matching receive on rank " +
                            std::to_string(x.t->peer));
        return fail(Violation::UnmatchedRecv, x.rank, x.step, b,
                    where(x.rank, x.step) + "receive of " + blocks_text(x.t->blocks) + " from " +
                        std::to_string(x.t->peer) + " has no matching send on rank " +
                        std::to_string(x.t->peer));
    }

    // Sends and receives of one (sender, receiver) pair, each in posting
    // order, disagree at position k.  Names the likeliest cause: a missing
    // counterpart (the rest aligns once one transfer is skipped), two
    // transfers posted in different orders, or different block lists.
    bool report_disagreement(const std::vector<int>& sends, const std::vector<int>& recvs,
                             size_t k) {
        auto aligned = [&](size_t skip_s, size_t skip_r) {
            size_t i = k + skip_s, j = k + skip_r;
            for (; i < sends.size() && j < recvs.size(); ++i, ++j)
                if (blocks_of(sends[i]) != blocks_of(recvs[j])) return false;
            return i == sends.size() && j == recvs.size();
        };
        if (k == sends.size() || (sends.size() > recvs.size() && aligned(1, 0)))
            return k < sends.size() ? report_unmatched(sends[k]) : report_unmatched(recvs[k]);
        if (k == recvs.size() || (recvs.size() > sends.size() && aligned(0, 1)))
            return k < recvs.size() ? report_unmatched(recvs[k]) : report_unmatched(sends[k]);

        const Xfer& xs = x_[static_cast<size_t>(sends[k])];
        const Xfer& xr = x_[static_cast<size_t>(recvs[k])];
        // Misordered when each side's transfer is expected later by the other.
        bool send_later = false, recv_later = false;
        for (size_t j = k + 1; j < recvs.size() && !send_later; ++j)
            send_later = blocks_of(recvs[j]) == xs.t->blocks;
        for (size_t i = k + 1; i < sends.size() && !recv_later; ++i)
            recv_later = blocks_of(sends[i]) == xr.t->blocks;
        const std::vector<int>& a = xs.t->blocks;
        const std::vector<int>& b = xr.t->blocks;
        size_t d = 0;
        while (d < a.size() && d < b.size() && a[d] == b[d]) ++d;
        const int block = d < a.size() ? a[d] : (d < b.size() ? b[d] : -1);
        std::string msg = where(xs.rank, xs.step) + "send of " + blocks_text(a) + " to " +
                          std::to_string(xr.rank) + " is its transfer #" + std::to_string(k) +
                          " to that rank, matched (posting order) with rank " +
                          std::to_string(xr.rank) + "'s receive at step " +
                          std::to_string(xr.step) + ", which expects " + blocks_text(b);
        if (send_later && recv_later)
            return fail(Violation::Misordered, xs.rank, xs.step, block,
                        msg + "; the two ranks post these transfers in different orders");
        return fail(Violation::Mismatched, xs.rank, xs.step, block, msg);
    }

    bool match() {
        number_transfers();
        std::vector<int> sends, recvs;
        for (int id = 0; id < static_cast<int>(x_.size()); ++id)
            (x_[static_cast<size_t>(id)].send ? sends : recvs).push_back(id);
        // Stable: within a pair, ids are already in posting (step) order.
        auto by_pair = [&](int a, int b) { return pair_of(a) < pair_of(b); };
        std::stable_sort(sends.begin(), sends.end(), by_pair);
        std::stable_sort(recvs.begin(), recvs.end(), by_pair);

        size_t i = 0, j = 0;
        std::vector<int> gs, gr;
        while (i < sends.size() || j < recvs.size()) {
            const std::pair<int, int> none{P_, P_};
            const auto ks = i < sends.size() ? pair_of(sends[i]) : none;
            const auto kr = j < recvs.size() ? pair_of(recvs[j]) : none;
            const auto k = std::min(ks, kr);
            gs.clear();
            gr.clear();
            while (i < sends.size() && pair_of(sends[i]) == k) gs.push_back(sends[i++]);
            while (j < recvs.size() && pair_of(recvs[j]) == k) gr.push_back(recvs[j++]);
            size_t n = std::min(gs.size(), gr.size());
            size_t d = 0;
            while (d < n && blocks_of(gs[d]) == blocks_of(gr[d])) ++d;
            if (d < n || gs.size() != gr.size()) return report_disagreement(gs, gr, d);
            for (size_t m = 0; m < n; ++m) {
                const Xfer& xs = x_[static_cast<size_t>(gs[m])];
                const Xfer& xr = x_[static_cast<size_t>(gr[m])];
                if (xs.t->segment_blocks != xr.t->segment_blocks)
                    return fail(Violation::Mismatched, xs.rank, xs.step,
                                xs.t->blocks.empty() ? -1 : xs.t->blocks.front(),
                                where(xs.rank, xs.step) + "send of " + blocks_text(xs.t->blocks) +
                                    " to " + std::to_string(xr.rank) + " is cut into messages by " +
                                    segment_text(xs.t->segment_blocks) + ", but rank " +
                                    std::to_string(xr.rank) + "'s receive at step " +
                                    std::to_string(xr.step) + " expects " +
                                    segment_text(xr.t->segment_blocks));
                x_[static_cast<size_t>(gs[m])].partner = gr[m];
                x_[static_cast<size_t>(gr[m])].partner = gs[m];
            }
        }
        return true;
    }

    // ------------------------------------------------------- simulation
    // Contribution lists are immutable and shared by id; -1 is "unwritten".
    int new_list() {
        list_start_.push_back(data_.size());
        list_len_.push_back(0);
        list_origin_.push_back(-1);
        return static_cast<int>(list_start_.size()) - 1;
    }

    int& cell(int rank, BufferId buf, int block) {
        return bufs_[static_cast<size_t>(rank)][static_cast<size_t>(key(buf, block))];
    }

    bool read_cell(int r, int s, BufferId buf, int block, const char* what, int* id) {
        *id = cell(r, buf, block);
        if (*id >= 0) return true;
        return fail(Violation::UnwrittenRead, r, s, block,
                    where(r, s) + what + " reads " + buffer_text(buf) + " block " +
                        std::to_string(block) + ", which was never written");
    }

    // Appends the given lists into a new one; records where a contribution
    // first got combined twice (kept even if a later op discards the list,
    // because only lists reaching a result buffer are reported).
    int concat(const std::vector<int>& ids, int r, int s, int block) {
        const int out = new_list();
        ++mark_serial_;
        int origin = -1;
        for (int id : ids) {
            if (origin < 0) origin = list_origin_[static_cast<size_t>(id)];
            const size_t st = list_start_[static_cast<size_t>(id)];
            const uint32_t n = list_len_[static_cast<size_t>(id)];
            for (uint32_t i = 0; i < n; ++i) {
                const uint16_t c = data_[st + i];
                if (mark_[c] == mark_serial_ && origin < 0) {
                    origin = static_cast<int>(origins_.size());
                    origins_.push_back(Origin{r, s, block, c});
                }
                mark_[c] = mark_serial_;
                data_.push_back(c);
            }
        }
        list_len_[static_cast<size_t>(out)] =
            static_cast<uint32_t>(data_.size() - list_start_[static_cast<size_t>(out)]);
        list_origin_[static_cast<size_t>(out)] = origin;
        return out;
    }

    const std::vector<Step>& steps_of(int r) const {
        return plan_.programs[static_cast<size_t>(r)].steps;
    }

    void complete(int a, int b) {
        Xfer& xa = x_[static_cast<size_t>(a)];
        Xfer& xb = x_[static_cast<size_t>(b)];
        Xfer& snd = xa.send ? xa : xb;
        Xfer& rcv = xa.send ? xb : xa;
        std::vector<int>& data = snap_[static_cast<size_t>(xa.send ? a : b)];
        for (size_t i = 0; i < rcv.t->blocks.size(); ++i)
            cell(rcv.rank, rcv.t->buffer, rcv.t->blocks[i]) = data[i];
        std::vector<int>().swap(data);
        done_[static_cast<size_t>(a)] = done_[static_cast<size_t>(b)] = 1;
        for (int r : {snd.rank, rcv.rank})
            if (--pending_[static_cast<size_t>(r)] == 0) ready_.push_back(r);
    }

    // Posts rank r's current step: snapshots what its sends carry, then
    // completes every transfer whose counterpart is already posted.
    bool post(int r) {
        const int s = cur_[static_cast<size_t>(r)];
        const int lo = first_[static_cast<size_t>(r)][static_cast<size_t>(s)];
        const int hi = first_[static_cast<size_t>(r)][static_cast<size_t>(s) + 1];
        pending_[static_cast<size_t>(r)] = hi - lo;
        for (int id = lo; id < hi; ++id) {
            const Xfer& x = x_[static_cast<size_t>(id)];
            if (!x.send) continue;
            std::vector<int>& data = snap_[static_cast<size_t>(id)];
            data.resize(x.t->blocks.size());
            const std::string what = "send to " + std::to_string(x.t->peer);
            for (size_t i = 0; i < x.t->blocks.size(); ++i)
                if (!read_cell(r, s, x.t->buffer, x.t->blocks[i], what.c_str(), &data[i]))
                    return false;
        }
        for (int id = lo; id < hi; ++id) {
            posted_[static_cast<size_t>(id)] = 1;
            const int p = x_[static_cast<size_t>(id)].partner;
            if (posted_[static_cast<size_t>(p)]) complete(id, p);
        }
        if (hi == lo) ready_.push_back(r);
        return true;
    }

    bool run_ops(int r) {
        const int s = cur_[static_cast<size_t>(r)];
        std::vector<int> ids;
        for (const LocalOp& op : steps_of(r)[static_cast<size_t>(s)].ops) {
            const bool reduce = op.kind == OpKind::Reduce;
            const std::string what =
                std::string(reduce ? "reduce" : "copy") + " into " + buffer_text(op.dst);
            for (int b : op.blocks) {
                ids.clear();
                if (reduce) {
                    ids.push_back(0);
                    if (!read_cell(r, s, op.dst, b, what.c_str(), &ids.back())) return false;
                }
                for (BufferId src : op.srcs) {
                    ids.push_back(0);
                    if (!read_cell(r, s, src, b, what.c_str(), &ids.back())) return false;
                }
                cell(r, op.dst, b) = reduce ? concat(ids, r, s, b) : ids.front();
            }
        }
        return true;
    }

    bool simulate() {
        const size_t cells = static_cast<size_t>(NS_ + 1) * static_cast<size_t>(NB_);
        bufs_.assign(static_cast<size_t>(P_), std::vector<int>(cells, -1));
        mark_.assign(static_cast<size_t>(P_), 0);
        for (int r = 0; r < P_; ++r) {
            const int id = new_list();
            data_.push_back(static_cast<uint16_t>(r));
            list_len_[static_cast<size_t>(id)] = 1;
            for (int b = 0; b < NB_; ++b) cell(r, kResult, b) = id;
        }
        posted_.assign(x_.size(), 0);
        done_.assign(x_.size(), 0);
        snap_.assign(x_.size(), {});
        cur_.assign(static_cast<size_t>(P_), 0);
        pending_.assign(static_cast<size_t>(P_), 0);
        int finished = 0;
        for (int r = 0; r < P_; ++r) {
            if (steps_of(r).empty())
                ++finished;
            else if (!post(r))
                return false;
        }
        while (!ready_.empty()) {
            const int r = ready_.front();
            ready_.pop_front();
            if (!run_ops(r)) return false;
            if (++cur_[static_cast<size_t>(r)] == static_cast<int>(steps_of(r).size()))
                ++finished;
            else if (!post(r))
                return false;
        }
        if (finished == P_) return true;
        return report_deadlock();
    }

    // Every stuck rank waits on a transfer whose counterpart's rank is stuck
    // too (a finished rank completed all its transfers), so following
    // "waits for" from any stuck rank must close a cycle.
    bool report_deadlock() {
        auto stuck = [&](int r) {
            return cur_[static_cast<size_t>(r)] < static_cast<int>(steps_of(r).size());
        };
        auto waited = [&](int r) {
            const int s = cur_[static_cast<size_t>(r)];
            for (int id = first_[static_cast<size_t>(r)][static_cast<size_t>(s)];
                 id < first_[static_cast<size_t>(r)][static_cast<size_t>(s) + 1]; ++id)
                if (!done_[static_cast<size_t>(id)]) return id;
            return -1;
        };
        int start = 0;
        while (!stuck(start)) ++start;
        std::vector<int> seen(static_cast<size_t>(P_), -1), path;
        int r = start;
        while (seen[static_cast<size_t>(r)] < 0) {
            seen[static_cast<size_t>(r)] = static_cast<int>(path.size());
            path.push_back(r);
            r = x_[static_cast<size_t>(x_[static_cast<size_t>(waited(r))].partner)].rank;
        }
        std::string cycle;
        for (size_t i = static_cast<size_t>(seen[static_cast<size_t>(r)]); i < path.size(); ++i) {
            const int q = path[i];
            const Xfer& w = x_[static_cast<size_t>(waited(q))];
            const Xfer& other = x_[static_cast<size_t>(w.partner)];
            cycle += "\n  rank " + std::to_string(q) + " at step " + std::to_string(w.step) +
                     " waits for its " + (w.send ? "send to " : "receive from ") +
                     std::to_string(w.t->peer) + ", which rank " + std::to_string(other.rank) +
                     " posts only at its step " + std::to_string(other.step) + " (it is at step " +
                     std::to_string(cur_[static_cast<size_t>(other.rank)]) + ")";
        }
        int nstuck = 0;
        for (int q = 0; q < P_; ++q) nstuck += stuck(q) ? 1 : 0;
        return fail(Violation::Deadlock, start, cur_[static_cast<size_t>(start)], -1,
                    where(start, cur_[static_cast<size_t>(start)]) +
                        "deadlock: " + std::to_string(nstuck) + " of " + std::to_string(P_) +
                        " ranks can never finish their step; a cycle of waits:" + cycle);
    }

    // ------------------------------------------------------ final state
    bool check_final() {
        // 0 = not yet seen, 1 = correct and ordered, 2 = correct, unordered.
        std::vector<uint8_t> verdict(list_start_.size(), 0);
        std::vector<int> times(static_cast<size_t>(P_), 0);
        order_preserving_ = true;
        for (int r = 0; r < P_; ++r) {
            for (int b = 0; b < NB_; ++b) {
                const int id = cell(r, kResult, b);
                if (verdict[static_cast<size_t>(id)] != 0) {
                    order_preserving_ = order_preserving_ && verdict[static_cast<size_t>(id)] == 1;
                    continue;
                }
                const size_t st = list_start_[static_cast<size_t>(id)];
                const uint32_t n = list_len_[static_cast<size_t>(id)];
                std::fill(times.begin(), times.end(), 0);
                bool ordered = n == static_cast<uint32_t>(P_);
                for (uint32_t i = 0; i < n; ++i) {
                    ++times[data_[st + i]];
                    ordered = ordered && data_[st + i] == i;
                }
                std::string missing, twice;
                int nmissing = 0;
                for (int c = 0; c < P_; ++c) {
                    if (times[static_cast<size_t>(c)] == 0 && ++nmissing <= 16)
                        missing += (missing.empty() ? "" : ",") + std::to_string(c);
                    if (times[static_cast<size_t>(c)] > 1 && twice.empty())
                        twice = std::to_string(c) + " (" +
                                std::to_string(times[static_cast<size_t>(c)]) + " times)";
                }
                const std::string at =
                    "rank " + std::to_string(r) + " ends with block " + std::to_string(b) + " ";
                if (!twice.empty()) {
                    const int o = list_origin_[static_cast<size_t>(id)];
                    const Origin& org = origins_[static_cast<size_t>(o)];
                    return fail(Violation::DuplicateContribution, org.rank, org.step, org.block,
                                where(org.rank, org.step) + "reduce on block " +
                                    std::to_string(org.block) +
                                    " combines the contribution of rank " +
                                    std::to_string(org.contributor) + " a second time; " + at +
                                    "holding the contribution of rank " + twice);
                }
                if (nmissing > 0)
                    return fail(Violation::MissingContribution, r, -1, b,
                                at + "missing the contributions of " + std::to_string(nmissing) +
                                    " rank(s): " + missing + (nmissing > 16 ? ",..." : ""));
                verdict[static_cast<size_t>(id)] = ordered ? 1 : 2;
                order_preserving_ = order_preserving_ && ordered;
            }
        }
        if (!order_preserving_ && (options_.require_order_preserving || plan_.order_preserving)) {
            for (int r = 0; r < P_; ++r)
                for (int b = 0; b < NB_; ++b)
                    if (verdict[static_cast<size_t>(cell(r, kResult, b))] == 2)
                        return fail(
                            Violation::NotOrderPreserving, r, -1, b,
                            "rank " + std::to_string(r) + " ends with block " + std::to_string(b) +
                                " combined out of rank order, but the plan " +
                                (plan_.order_preserving ? "declares itself" : "is required to be") +
                                " order preserving");
        }
        return true;
    }

    struct Origin {
        int rank, step, block, contributor;
    };

    const Plan& plan_;
    const CheckOptions& options_;
    const int P_, NB_, NS_;
    CheckResult result_;

    std::vector<Xfer> x_;
    std::vector<std::vector<int>> first_;  // [rank][step] -> first transfer id

    std::vector<uint16_t> data_;
    std::vector<size_t> list_start_;
    std::vector<uint32_t> list_len_;
    std::vector<int> list_origin_;
    std::vector<Origin> origins_;
    std::vector<uint32_t> mark_;
    uint32_t mark_serial_ = 0;

    std::vector<std::vector<int>> bufs_;  // [rank][(buffer+1)*nblocks + block]
    std::vector<std::vector<int>> snap_;  // per send: list ids at posting
    std::vector<char> posted_, done_;
    std::vector<int> cur_, pending_;
    std::deque<int> ready_;
    bool order_preserving_ = false;
};

}  // namespace

CheckResult check_plan(const Plan& plan, const CheckOptions& options) {
    return Checker(plan, options).run();
}

namespace {

CheckResult passed() {
    CheckResult r;
    r.ok = true;
    return r;
}

// Same shape as `a`: step by step the same transfers (buffer, number of
// blocks; with `peer`, each to a's peer mapped by it, else to any peer),
// the same ops (kind, operands, number of blocks).  Returns "" or what
// differs.
template <typename PeerMap>
std::string same_shape(const Program& a, const Program& b, const PeerMap* peer, int* step) {
    *step = -1;
    if (a.steps.size() != b.steps.size())
        return std::to_string(b.steps.size()) + " steps instead of " + std::to_string(a.steps.size());
    for (size_t s = 0; s < a.steps.size(); ++s) {
        *step = static_cast<int>(s);
        const Step& x = a.steps[s];
        const Step& y = b.steps[s];
        if (x.recvs.size() != y.recvs.size() || x.sends.size() != y.sends.size() ||
            x.ops.size() != y.ops.size())
            return "a different number of receives, sends or ops";
        for (int dir = 0; dir < 2; ++dir) {
            const auto& tx = dir == 0 ? x.recvs : x.sends;
            const auto& ty = dir == 0 ? y.recvs : y.sends;
            for (size_t i = 0; i < tx.size(); ++i) {
                if (peer != nullptr && (*peer)(tx[i].peer) != ty[i].peer)
                    return std::string(dir == 0 ? "receive " : "send ") + std::to_string(i) +
                           " names peer " + std::to_string(ty[i].peer) + " instead of " +
                           std::to_string((*peer)(tx[i].peer));
                if (tx[i].buffer != ty[i].buffer || tx[i].blocks.size() != ty[i].blocks.size() ||
                    tx[i].segment_blocks != ty[i].segment_blocks)
                    return std::string(dir == 0 ? "receive " : "send ") + std::to_string(i) +
                           " uses another buffer, number of blocks or segment_blocks";
            }
        }
        for (size_t i = 0; i < x.ops.size(); ++i)
            if (x.ops[i].kind != y.ops[i].kind || x.ops[i].dst != y.ops[i].dst ||
                x.ops[i].srcs != y.ops[i].srcs || x.ops[i].blocks.size() != y.ops[i].blocks.size())
                return "op " + std::to_string(i) + " differs in kind, operands or number of blocks";
    }
    *step = -1;
    return "";
}

}  // namespace

CheckResult check_symmetry(const Plan& plan) {
    if (plan.symmetry.empty()) return passed();
    const RankGroup g(plan.symmetry);
    const int P = plan.nranks;
    if (g.order != P || plan.programs.size() != static_cast<size_t>(P))
        return failure(Violation::Malformed, -1, -1, -1,
                       "plan declares a symmetry group of order " + std::to_string(g.order) +
                           " for " + std::to_string(P) + " ranks");
    for (int k : plan.symmetry_fixed)
        if (k < 0 || static_cast<size_t>(k) >= g.radix.size())
            return failure(Violation::Malformed, -1, -1, -1,
                           "plan declares digit " + std::to_string(k) + " of a symmetry group of " +
                               std::to_string(g.radix.size()) + " digits fixed");
    // The declared translations: those whose fixed digits are 0.
    std::vector<int> translations;
    for (int t = 1; t < P; ++t)
        if (g.free_part(t, plan.symmetry_fixed) == t) translations.push_back(t);
    for (int r = 0; r < P; ++r)
        for (int t : translations) {
            const int rt = g.add(r, t);
            int step = -1;
            const auto translate = [&](int p) { return g.add(p, t); };
            const std::string why =
                same_shape(plan.programs[static_cast<size_t>(r)],
                           plan.programs[static_cast<size_t>(rt)], &translate, &step);
            if (!why.empty())
                return failure(Violation::Malformed, rt, step, -1,
                               "declared symmetry does not hold: rank " + std::to_string(rt) +
                                   " is not rank " + std::to_string(r) + " translated by " +
                                   std::to_string(t) + " (step " + std::to_string(step) +
                                   ": " + why + ")");
        }
    return passed();
}

CheckResult check_representatives(const Plan& plan) {
    if (plan.representatives.empty()) return passed();
    for (int rep : plan.representatives)
        if (rep < 0 || rep >= plan.nranks)
            return failure(Violation::Malformed, rep, -1, -1,
                           "representative " + std::to_string(rep) + " is not a rank");
    for (int r = 0; r < plan.nranks; ++r) {
        bool covered = false;
        std::string last;
        for (int rep : plan.representatives) {
            int step = -1;
            // Peers may differ: only the workload is compared.
            last = same_shape<int (*)(int)>(plan.programs[static_cast<size_t>(rep)],
                                            plan.programs[static_cast<size_t>(r)], nullptr, &step);
            if (last.empty()) {
                covered = true;
                break;
            }
        }
        if (!covered)
            return failure(Violation::Malformed, r, -1, -1,
                           "rank " + std::to_string(r) +
                               "'s workload matches no declared representative (last: " + last +
                               ")");
    }
    return passed();
}

CheckResult check_sampled(const RankGenerator& gen, const SampleOptions& options) {
    const int P = gen.header.nranks;
    std::mt19937_64 rng(options.seed);
    // Programs generated so far (a sample's peers), kept while checking it.
    std::map<int, Program> cache;
    auto program = [&](int r) -> const Program& {
        auto it = cache.find(r);
        if (it == cache.end()) it = cache.emplace(r, gen.program(r)).first;
        return it->second;
    };
    // (step, transfer) of every send (dir 1) or receive (dir 0) of `prog`
    // with `peer`, in posting order.
    auto with = [](const Program& prog, int peer, bool sends) {
        std::vector<std::pair<int, const Transfer*>> out;
        for (size_t s = 0; s < prog.steps.size(); ++s)
            for (const Transfer& t : sends ? prog.steps[s].sends : prog.steps[s].recvs)
                if (t.peer == peer) out.emplace_back(static_cast<int>(s), &t);
        return out;
    };
    const int samples = std::min(options.samples, P);
    for (int k = 0; k < samples; ++k) {
        cache.clear();
        const int r = static_cast<int>(rng() % static_cast<uint64_t>(P));
        const Program& mine = program(r);
        std::vector<int> peers;
        for (const Step& st : mine.steps) {
            for (const Transfer& t : st.sends) peers.push_back(t.peer);
            for (const Transfer& t : st.recvs) peers.push_back(t.peer);
        }
        for (int p : peers)
            if (p < 0 || p >= P || p == r)
                return failure(Violation::BadPeer, r, -1, -1,
                               "rank " + std::to_string(r) + " names peer " + std::to_string(p));
        std::sort(peers.begin(), peers.end());
        peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
        if (options.max_peers > 0 && peers.size() > static_cast<size_t>(options.max_peers)) {
            std::shuffle(peers.begin(), peers.end(), rng);
            peers.resize(static_cast<size_t>(options.max_peers));
        }
        for (int p : peers) {
            const Program& theirs = program(p);
            for (int dir = 0; dir < 2; ++dir) {
                const bool sends = dir == 0;
                const auto a = with(mine, p, sends);
                const auto b = with(theirs, r, !sends);
                for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
                    const std::string what = sends ? "send" : "receive";
                    if (i >= b.size())
                        return failure(sends ? Violation::UnmatchedSend : Violation::UnmatchedRecv,
                                       r, a[i].first, -1,
                                       "rank " + std::to_string(r) + " step " +
                                           std::to_string(a[i].first) + ": " + what + " " +
                                           std::to_string(i) + (sends ? " to" : " from") +
                                           " rank " + std::to_string(p) + " has no match there");
                    if (i >= a.size())
                        return failure(sends ? Violation::UnmatchedRecv : Violation::UnmatchedSend,
                                       p, b[i].first, -1,
                                       "rank " + std::to_string(p) + " step " +
                                           std::to_string(b[i].first) + ": transfer " +
                                           std::to_string(i) + " with rank " + std::to_string(r) +
                                           " has no match there");
                    if (a[i].second->blocks != b[i].second->blocks)
                        return failure(Violation::Mismatched, r, a[i].first, -1,
                                       "rank " + std::to_string(r) + " step " +
                                           std::to_string(a[i].first) + ": " + what + " " +
                                           std::to_string(i) + " with rank " + std::to_string(p) +
                                           " carries other blocks than its match (rank " +
                                           std::to_string(p) + " step " +
                                           std::to_string(b[i].first) + ")");
                    if (a[i].second->segment_blocks != b[i].second->segment_blocks)
                        return failure(Violation::Mismatched, r, a[i].first, -1,
                                       "rank " + std::to_string(r) + " step " +
                                           std::to_string(a[i].first) + ": " + what + " " +
                                           std::to_string(i) + " with rank " + std::to_string(p) +
                                           " is cut into messages by segment_blocks " +
                                           std::to_string(a[i].second->segment_blocks) +
                                           ", its match (rank " + std::to_string(p) + " step " +
                                           std::to_string(b[i].first) + ") by " +
                                           std::to_string(b[i].second->segment_blocks));
                }
            }
        }
    }
    return passed();
}

}  // namespace genx
