// What a communicator says, and how often (comm_log.hpp).
#include "genx/comm_log.hpp"

#include <mutex>

#include "common/text_util.hpp"

namespace genx {

void CommLog::configure(int rank, int size, int verbose, genx_log_fn log, void* ctx) {
    rank_ = rank;
    size_ = size;
    verbose_ = verbose;
    log_ = log;
    ctx_ = ctx;
}

void CommLog::report(const std::string& msg) const {
    if (log_ == nullptr || msg.empty()) return;
    const int level = rank_ == 0 ? 0 : 1;
    if (verbose_ >= level) log_(ctx_, level, ("genx: " + msg).c_str());
}

void CommLog::report_once(const std::string& msg) const {
    static std::mutex m;
    static std::set<std::string> said;
    if (rank_ != 0) return;
    {
        std::lock_guard<std::mutex> lock(m);
        if (!said.insert(msg).second) return;
    }
    report(msg);
}

void CommLog::declined(size_t bytes, const std::string& reason) {
    if (log_ == nullptr || verbose_ < 1 || (verbose_ == 1 && rank_ != 0)) return;
    if (verbose_ == 1 && !logged_declines_.insert(reason).second) return;
    say(verbose_ >= 2 ? 2 : 1, "genx: allreduce " + std::to_string(bytes) + " B on " +
                                   std::to_string(size_) +
                                   " ranks declined, using the fallback: " + reason);
}

void CommLog::decision(const RankPlan& p, size_t bytes, const std::string* why, const char* call) {
    if (verbose_ < 1 || log_ == nullptr || (verbose_ == 1 && rank_ != 0)) return;
    const unsigned cls_index = genx_size_class(bytes);
    std::bitset<65>& seen = logged_decisions_[{&p, call}];
    const bool first = !seen.test(cls_index);
    seen.set(cls_index);
    if (!(verbose_ >= 2 || first)) return;
    // The lower bound of the size class, in bytes.
    const size_t cls = cls_index == 0 ? 0 : size_t{1} << (cls_index - 1);
    const std::string params = p.header.params.empty()
                                   ? format_exec_options(p.exec)
                                   : p.header.params + "," + format_exec_options(p.exec);
    say(verbose_ >= 2 ? 2 : 1,
        std::string("genx: ") + call + " " + std::to_string(bytes) + " B (size class " +
            format_bytes(cls) + ") on " + std::to_string(size_) + " ranks: " + p.algorithm + " (" +
            params + ") [" +
            (why != nullptr ? *why : std::string("forced by coll_genx_allreduce_algorithm")) + "]");
}

}  // namespace genx
