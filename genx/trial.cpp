// First-call trials (trial.hpp).
#include "genx/trial.hpp"

#include <algorithm>
#include <utility>

#include "common/text_util.hpp"

namespace genx {

namespace {

// Sorts v in place (no allocation: a trial's last call must not fail).
double median(std::vector<double>& v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 != 0 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void FirstCallTrials::add(size_t interval, const Decision& deferring,
                          std::vector<Candidate> contenders) {
    if (rounds_ == 0 || contenders.empty()) return;
    Trial t;
    t.candidates.push_back({deferring, nullptr});
    for (Candidate& c : contenders) {
        if (static_cast<int>(t.candidates.size()) == kTrialMaxCandidates) break;
        t.candidates.push_back(std::move(c));
    }
    // Room for every time now, so that recording one never allocates.
    t.seconds.resize(t.candidates.size());
    for (std::vector<double>& v : t.seconds) v.reserve(static_cast<size_t>(2 * rounds_));
    trials_[interval] = std::move(t);
}

// The trial's calls: two passes over the candidates, forward then
// backward; in each, a candidate runs rounds_ + 1 calls in a row, the first
// untimed (it follows another plan, whose traffic may still shape the
// network), so each candidate is timed as a run of its own calls is, as an
// application's loop calls it.  Interleaving single calls measured each
// plan after another's: on the emulated tree, GenTree's 4 KiB took 347 us
// between the others' calls and 224 us among its own.
int FirstCallTrials::turn_of(int call, int n) const {
    const int block = rounds_ + 1;
    const int pass = call / (n * block);
    const int k = (call % (n * block)) / block;
    return pass == 0 ? k : n - 1 - k;
}

bool FirstCallTrials::timed(int call) const { return call % (rounds_ + 1) != 0; }

int FirstCallTrials::next(size_t interval) {
    auto it = trials_.find(interval);
    if (it == trials_.end() || it->second.kept >= 0) return -1;
    Trial& t = it->second;
    t.turn = turn_of(t.calls, static_cast<int>(t.candidates.size()));
    return t.turn;
}

const FirstCallTrials::Candidate* FirstCallTrials::current(size_t interval) const {
    auto it = trials_.find(interval);
    if (it == trials_.end()) return nullptr;
    const Trial& t = it->second;
    const int k = t.kept >= 0 ? t.kept : t.turn;
    return k >= 0 ? &t.candidates[static_cast<size_t>(k)] : nullptr;
}

bool FirstCallTrials::running(size_t interval) const {
    auto it = trials_.find(interval);
    return it != trials_.end() && it->second.kept < 0;
}

int FirstCallTrials::record(size_t interval, double seconds, double* medians, int max) {
    auto it = trials_.find(interval);
    if (it == trials_.end() || it->second.kept >= 0 || it->second.turn < 0) return 0;
    Trial& t = it->second;
    if (timed(t.calls)) t.seconds[static_cast<size_t>(t.turn)].push_back(seconds);
    t.turn = -1;
    const int n = static_cast<int>(t.candidates.size());
    if (++t.calls < trial_calls(n) || max < n) return 0;
    for (int k = 0; k < n; ++k) medians[k] = median(t.seconds[static_cast<size_t>(k)]);
    return n;
}

void FirstCallTrials::settle(size_t interval, const double* agreed, int n,
                             const std::string& range, const CommLog& log) {
    auto it = trials_.find(interval);
    if (it == trials_.end() || it->second.kept >= 0) return;
    Trial& t = it->second;
    int kept = 0;
    if (n == static_cast<int>(t.candidates.size()))
        for (int k = 1; k < n; ++k)
            if (agreed[k] <= (1 - kTrialGain) * agreed[0] && (kept == 0 || agreed[k] < agreed[kept]))
                kept = k;
    t.kept = kept;
    t.turn = -1;
    t.seconds.clear();
    if (log.verbose() < 1 || log.rank() != 0) return;
    std::string times;
    for (int k = 0; k < n; ++k) {
        const Decision& d = t.candidates[static_cast<size_t>(k)].decision;
        times += (k == 0 ? "" : ", ") +
                 (k == 0 ? std::string("the displaced component")
                         : describe(d.algorithm, d.params)) +
                 " " + format_seconds(agreed[k]);
    }
    const Decision& won = t.candidates[static_cast<size_t>(kept)].decision;
    log.say(1, "genx: allreduce " + range + " B on " + std::to_string(log.size()) +
                   " ranks: first-call trial, " + std::to_string(2 * rounds_) +
                   " timed calls each (each candidate's median, the slowest rank's): " + times +
                   "; " +
                   (kept == 0 ? "the displaced component keeps the size (no plan " +
                                    std::to_string(static_cast<int>(kTrialGain * 100)) +
                                    " % faster)"
                              : describe(won.algorithm, won.params) + " runs it from now on"));
}

}  // namespace genx
