// What a communicator says, and how often (genx_config's verbose and log).
//
// verbose >= 1: rank 0 logs each decision once per (plan, call, size class
// = power-of-two bucket of the message bytes) and each distinct decline
// reason once; verbose >= 2: every rank logs every decision and every
// decline.  Ranks decide identically, so rank 0 speaks for all at 1.
// Nothing builds a message string unless it prints (a communicator whose
// decisions defer declines on every call).
#pragma once

#include <bitset>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "genx/genx_core.h"
#include "genx/plan_cache.hpp"

namespace genx {

class CommLog {
  public:
    void configure(int rank, int size, int verbose, genx_log_fn log, void* ctx);

    int rank() const { return rank_; }
    int size() const { return size_; }
    int verbose() const { return verbose_; }
    // Prints `msg` at `level` when the verbosity reaches it.
    void say(int level, const std::string& msg) const {
        if (log_ != nullptr && verbose_ >= level) log_(ctx_, level, msg.c_str());
    }
    // What the selector or a setting reports ("genx: " prepended): printed
    // without any verbosity by rank 0, at verbosity 1 elsewhere, so that the
    // first line a process gets about a rules file always shows.
    void report(const std::string& msg) const;
    // report(), by rank 0 only and once per process (a topology problem
    // every communicator would repeat).
    void report_once(const std::string& msg) const;
    // A call left to the displaced component, for `reason`.
    void declined(size_t bytes, const std::string& reason);
    // A call genx runs with plan `p`.  `why`: the rule or the model's
    // prediction behind the choice (Decision::why), null when the algorithm
    // was forced; `call`: "allreduce", "iallreduce" or "persistent
    // allreduce" (a static string: the key of the once-per-class record).
    void decision(const RankPlan& p, size_t bytes, const std::string* why, const char* call);

  private:
    int rank_ = 0;
    int size_ = 1;
    int verbose_ = 0;
    genx_log_fn log_ = nullptr;
    void* ctx_ = nullptr;
    // Size classes already logged per plan and call (verbose 1 only).
    std::map<std::pair<const RankPlan*, const char*>, std::bitset<65>> logged_decisions_;
    std::set<std::string> logged_declines_;
};

}  // namespace genx
