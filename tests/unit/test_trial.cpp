// First-call trials (genx/trial.hpp, docs/rules.md "First-call trial"):
// which deferred sizes name contenders, how a trial takes turns and
// settles, and a trial end to end through the C API as the glue runs it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "genx/comm_log.hpp"
#include "genx/genx_core.h"
#include "genx/trial.hpp"
#include "tests/support/loopback.hpp"
#include "topology/placement.hpp"
#include "tests/support/transport_ops.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/rules.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

namespace {

constexpr size_t KiB = 1024;

struct LogSinkLines {
    std::vector<std::string> lines;
    static void collect(void* ctx, int /*level*/, const char* msg) {
        static_cast<LogSinkLines*>(ctx)->lines.push_back(msg);
    }
};

struct RemoveFile {
    std::string path;
    ~RemoveFile() { std::remove(path.c_str()); }
};

// The ranks' threads meet here; false after 30 s (a rank that failed
// early must not leave the others waiting for ever).
class Barrier {
  public:
    explicit Barrier(int n) : n_(n) {}
    bool wait() {
        std::unique_lock<std::mutex> lock(mu_);
        const int gen = gen_;
        if (++arrived_ == n_) {
            arrived_ = 0;
            ++gen_;
            cv_.notify_all();
            return true;
        }
        return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return gen != gen_; });
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    int n_, arrived_ = 0, gen_ = 0;
};

RulesFile scaled_rule(const std::string& families, double margin) {
    RulesFile rules;
    const std::string text =
        R"({"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model", "families": )" +
        families + (margin > 0 ? R"(, "margin": )" + std::to_string(margin) : std::string()) + "}]}";
    const Status st = parse_rules(text, "test.json", RulesCheck{}, &rules);
    INFO(st.message());
    REQUIRE(st.is_ok());
    rules.model = builtin_rules().model;
    return rules;
}

Decision deferring() {
    Decision d;
    d.algorithm = kFallbackAlgorithm;
    return d;
}

FirstCallTrials::Candidate contender(const std::string& alg) {
    FirstCallTrials::Candidate c;
    c.decision.algorithm = alg;
    return c;
}

}  // namespace

TEST_CASE("a deferred size with a site's scales names the plans the model prices ahead",
          "[trial][displaced]") {
    RulesFile rules = scaled_rule(R"(["fallback", "ring", "rd"])", 0.95);
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    const CommShape shape{6, 6, 1};
    const size_t at = 256 * KiB;
    FamilyPrices fp;
    REQUIRE(price_families(rules, shape, opt, {at}, {"ring", "rd"}, &fp).is_ok());
    const double ring = fp.best["ring"][0], rd = fp.best["rd"][0], theirs = fp.displaced[0];
    // The model's view at 256 KiB on 6 ranks: the ring ahead of tuned's
    // choice, rd behind it, all cheap enough for a trial.
    REQUIRE(ring < theirs);
    REQUIRE(rd > theirs);
    REQUIRE(theirs <= kTrialMaxSeconds);
    auto decide = [&](std::map<std::string, double> scale, bool nonblocking = false,
                      size_t bytes = 256 * KiB) {
        rules.allreduce[0].scale = std::move(scale);
        TableOptions o = opt;
        o.nonblocking = nonblocking;
        DecisionTable t;
        REQUIRE(DecisionTable::build(rules, shape, o, &t, nullptr).is_ok());
        return t.lookup(bytes);
    };
    // No scales (the built-in defaults, a hand-written rule): no trial.
    const Decision plain = decide({});
    REQUIRE(plain.defers());
    CHECK(plain.trial.empty());
    // Scaled alike, the 95 % margin defers; the ring is priced ahead in
    // both views and is the one contender.
    const Decision one = decide({{"fallback", 1.0}, {"ring", 1.0}, {"rd", 1.0}});
    INFO(one.why);
    REQUIRE(one.defers());
    REQUIRE(one.trial.size() == 1);
    CHECK(one.trial[0].algorithm == "ring");
    CHECK(one.trial[0].predicted == Approx(ring));
    // rd scaled ahead, the ring scaled behind: rd by the scaled prices,
    // the ring by the unscaled ones.
    const double rd_scale = 0.5 * theirs / rd, ring_scale = 2 * theirs / ring;
    const Decision two = decide({{"fallback", 1.0}, {"ring", ring_scale}, {"rd", rd_scale}});
    INFO(two.why);
    REQUIRE(two.defers());
    REQUIRE(two.trial.size() == 2);
    CHECK(two.trial[0].algorithm == "rd");
    CHECK(two.trial[0].predicted == Approx(0.5 * theirs));
    CHECK(two.trial[1].algorithm == "ring");
    // Every plan behind the displaced component in both views: none.  At
    // 8 B tuned runs recursive doubling, which genx's rd only matches.
    FamilyPrices small;
    REQUIRE(price_families(rules, shape, opt, {8}, {"ring", "rd"}, &small).is_ok());
    REQUIRE(small.best["rd"][0] == Approx(small.displaced[0]));
    REQUIRE(small.best["ring"][0] > small.displaced[0]);
    const Decision behind = decide({{"fallback", 0.5}, {"ring", 1.0}, {"rd", 1.0}}, false, 8);
    INFO(behind.why);
    std::string named;
    for (const Decision::Contender& c : behind.trial) named += c.algorithm + " (" + c.params + ") ";
    INFO("contenders: " << named);
    REQUIRE(behind.defers());
    CHECK(behind.trial.empty());
    // Non-blocking calls never run a trial (libnbc is their incumbent).
    CHECK(decide({{"fallback", 1.0}, {"ring", 1.0}, {"rd", 1.0}}, true).trial.empty());
    // Too slow a size for a trial's calls to be cheap.
    const Decision slow =
        decide({{"fallback", 2 * kTrialMaxSeconds / theirs}, {"ring", 1.0}, {"rd", 1.0}});
    INFO(slow.why);
    CHECK(slow.trial.empty());
}

TEST_CASE("the third view: the plan the model prices best without its per-message and incast terms",
          "[trial][displaced]") {
    std::vector<std::string> names;
    for (int h = 0; h < 8; ++h) names.push_back("h" + std::to_string(h));
    std::shared_ptr<const TopologyView> view;
    REQUIRE(place_ranks("tree:2x4", "", {"h0", "h4", "h1", "h5", "h2", "h6", "h3"}, &view).is_ok());
    const CommShape shape{7, 7, 1, view};
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    const size_t at = 4 * KiB;
    // The round-robin tree site's fit: 25 MB/s links, each extra message
    // 3.7 α, incast at 0.28 β (site-tree2x4-rr-v8).
    RulesFile rules = scaled_rule(R"(["fallback", "gentree"])", 0.95);
    for (LinkParams* l : {&rules.model.intra, &rules.model.inter}) {
        l->alpha = 13.5e-6;
        l->beta = 4e-8;
        l->alpha_msg = 50e-6;
        l->epsilon = 1.1e-8;
        l->w_t = 2;
    }
    rules.allreduce[0].scale = {{"fallback", 1.0}, {"gentree", 1.0}};
    DecisionTable t;
    REQUIRE(DecisionTable::build(rules, shape, opt, &t, nullptr).is_ok());
    const Decision& d = t.lookup(at);
    INFO(d.why);
    REQUIRE(d.defers());
    // The same rules' model without those terms, deciding GenTree alone:
    // its plan is the lean view's, which must be among the contenders.
    RulesFile lean = scaled_rule(R"(["gentree"])", 0.0);
    lean.model = rules.model;
    for (LinkParams* l : {&lean.model.intra, &lean.model.inter}) l->alpha_msg = l->epsilon = 0;
    DecisionTable lt;
    REQUIRE(DecisionTable::build(lean, shape, opt, &lt, nullptr).is_ok());
    const Decision& ld = lt.lookup(at);
    REQUIRE(ld.algorithm == "gentree");
    bool found = false;
    for (const Decision::Contender& c : d.trial) found = found || (c.algorithm == "gentree" && c.params == ld.params);
    INFO("lean choice: " << ld.params);
    CHECK(found);
    // ... and it is not the full model's own GenTree plan at 4 KiB.
    RulesFile full = scaled_rule(R"(["gentree"])", 0.0);
    full.model = rules.model;
    DecisionTable ft;
    REQUIRE(DecisionTable::build(full, shape, opt, &ft, nullptr).is_ok());
    CHECK(ft.lookup(at).params != ld.params);
}

TEST_CASE("a trial takes turns, keeps a plan only 10 % faster, and then runs it",
          "[trial]") {
    LogSinkLines sink;
    CommLog log;
    log.configure(0, 4, 1, LogSinkLines::collect, &sink);
    FirstCallTrials t;
    t.set_rounds(3);
    CHECK(t.next(0) == -1);  // no trial anywhere
    t.add(0, deferring(), {contender("ring"), contender("rd")});
    t.add(1, deferring(), {contender("ring")});
    t.add(2, deferring(), {});  // no contender: no trial
    CHECK(t.running(0));
    CHECK_FALSE(t.running(2));
    // Runs of 4 calls (the first untimed), forward then backward.
    std::vector<int> turns;
    double medians[kTrialMaxCandidates] = {0, 0, 0, 0};
    // Candidate k's timed calls take base[k] + 0.01 * (its sample index);
    // the untimed first call of each run takes 100 s and must not count.
    const double base[3] = {1.0, 0.85, 0.8};
    std::map<int, int> taken;
    REQUIRE(t.trial_calls(3) == 24);
    for (int call = 0; call < 24; ++call) {
        const int k = t.next(0);
        REQUIRE(k >= 0);
        turns.push_back(k);
        REQUIRE(t.current(0) != nullptr);
        CHECK(t.running(0));
        const bool first = call % 4 == 0;
        const double s = first ? 100.0 : base[k] + 0.01 * taken[k]++;
        const int n = t.record(0, s, medians, kTrialMaxCandidates);
        CHECK(n == (call == 23 ? 3 : 0));
    }
    CHECK(turns == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                    2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0});
    // Six timed calls each: the median of base + 0.00 .. 0.05.
    CHECK(medians[0] == Approx(1.025));
    CHECK(medians[1] == Approx(0.875));
    CHECK(medians[2] == Approx(0.825));
    // Each rank's medians reduced to the slowest rank's: rd at 0.8 of the
    // displaced component's time wins over the ring at 0.92.
    const double agreed[3] = {1.0, 0.92, 0.8};
    t.settle(0, agreed, 3, "4K-8K", log);
    CHECK_FALSE(t.running(0));
    CHECK(t.next(0) == -1);
    REQUIRE(t.current(0) != nullptr);
    CHECK(t.current(0)->decision.algorithm == "rd");
    REQUIRE(sink.lines.size() == 1);
    CHECK(sink.lines[0].find("4K-8K B on 4 ranks: first-call trial, 6 timed calls each") != std::string::npos);
    CHECK(sink.lines[0].find("rd 800 ms") != std::string::npos);
    CHECK(sink.lines[0].find("rd runs it from now on") != std::string::npos);
    // 0.91 of the displaced component's time is not 10 % faster: it stays.
    for (int call = 0; call < t.trial_calls(2); ++call) {
        const int k = t.next(1);
        REQUIRE(k >= 0);
        t.record(1, 1.0, medians, kTrialMaxCandidates);
    }
    const double close[2] = {1.0, 0.91};
    t.settle(1, close, 2, "8K-16K", log);
    REQUIRE(t.current(1) != nullptr);
    CHECK(t.current(1)->decision.defers());
    CHECK(sink.lines.back().find("the displaced component keeps the size") != std::string::npos);
    // Times that could not be combined (n = 0) keep the displaced component.
    FirstCallTrials u;
    u.set_rounds(1);
    u.add(5, deferring(), {contender("ring")});
    for (int call = 0; call + 1 < u.trial_calls(2); ++call) {
        u.next(5);
        CHECK(u.record(5, 1.0, medians, kTrialMaxCandidates) == 0);
    }
    u.next(5);
    CHECK(u.record(5, 0.1, medians, kTrialMaxCandidates) == 2);
    u.settle(5, medians, 0, "1K-2K", log);
    CHECK(u.current(5)->decision.defers());
    // Rounds 0: nothing is added.
    FirstCallTrials off;
    off.add(0, deferring(), {contender("ring")});
    CHECK_FALSE(off.any());
}

// The glue's part, in threads: time each call (here: a time the test
// sets per rank and candidate), run the displaced component where the turn
// is 0 (here: genx declines and the test checks nothing more), reduce the
// medians to their maximum over ranks (here: through shared memory) and
// settle; then the size runs what the trial kept.
TEST_CASE("[capi] a first-call trial end to end: turns, agreement, then the kept plan runs",
          "[trial][capi]") {
    const int P = 6;
    const std::string path = "genx-test-trial-rules.json";
    {
        std::ofstream out(path);
        out << R"({"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model", )"
            << R"("families": ["fallback", "ring"], "margin": 0.95, )"
            << R"("scale": {"fallback": 1.0, "ring": 1.0}}]})" << "\n";
    }
    const RemoveFile remove_rules{path};
    // slow3: the ring's seconds on rank 3 (0.5 on the others, the displaced
    // component 1.0 everywhere).
    for (const double slow3 : {0.95, 0.5}) {
        INFO("rank 3's ring: " << slow3 << " s");
        std::vector<LogSinkLines> logs(P);
        std::mutex mu;
        std::vector<double> slowest(GENX_TRIAL_MAX, 0.0);
        Barrier sync(P);
        size_t trial_count = 0;
        int kept_defers = -1, nb_defers = -1, turns_seen = 0;
        const Status st = run_ranks(P, [&](int rank, Transport& tr) -> Status {
            genx_config cfg{};
            cfg.algorithm = "auto";
            cfg.verbose = 1;
            cfg.log = LogSinkLines::collect;
            cfg.log_ctx = &logs[static_cast<size_t>(rank)];
            cfg.rules_path = path.c_str();
            cfg.mpi_version = "4.1.4";
            cfg.trial_rounds = 2;
            char err[256] = "";
            genx_comm* comm = genx_comm_create(rank, P, 0, 0, nullptr, &cfg, err, sizeof err);
            if (comm == nullptr) return Status::internal(err);
            genx_comm_set_displaced(comm, "tuned", 0, nullptr);
            if (genx_comm_prepare(comm, err, sizeof err) != GENX_OK) return Status::internal(err);
            if (genx_trial_any(comm) == 0) return Status::internal("no size has a trial");
            // The first size with a trial takes its first turn (the
            // displaced component's) while it is found.
            size_t count = 0;
            for (size_t c = 1; c <= (size_t{1} << 20) && count == 0; c *= 2)
                if (genx_trial_next(comm, c * sizeof(double)) >= 0) count = c;
            if (count == 0) return Status::internal("genx_trial_any but no size takes a turn");
            if (rank == 0) trial_count = count;
            const genx_transport_ops ops = transport_ops_for(&tr);
            const size_t bytes = count * sizeof(double);
            const auto ref = reference_allreduce(GENX_DT_DOUBLE, GENX_OP_SUM, P, count);
            auto call = [&](int k) -> Status {
                std::vector<unsigned char> in = make_input(GENX_DT_DOUBLE, GENX_OP_SUM, rank, count);
                std::vector<unsigned char> out(bytes, 0xEE);
                char why[256] = "";
                const int rc = genx_allreduce(comm, in.data(), out.data(), count, GENX_DT_DOUBLE,
                                              sizeof(double), GENX_OP_SUM, 1, nullptr, &ops,
                                              nullptr, why, sizeof why);
                // Turn 0 is the displaced component's: genx declines it.
                if (rc != (k == 0 ? GENX_DECLINE : GENX_OK))
                    return Status::internal("turn " + std::to_string(k) + ": rc " +
                                            std::to_string(rc) + ": " + why);
                if (k != 0 && first_difference(GENX_DT_DOUBLE, out.data(), ref.data(), count) >= 0)
                    return Status::internal("turn " + std::to_string(k) + ": wrong result");
                return Status::ok();
            };
            for (int k = 0; k >= 0; k = genx_trial_next(comm, bytes)) {
                GENX_RETURN_IF_ERROR(call(k));
                const double s = k == 0 ? 1.0 : (rank == 3 ? slow3 : 0.5);
                double medians[GENX_TRIAL_MAX];
                const int n = genx_trial_record(comm, bytes, s, medians, GENX_TRIAL_MAX);
                if (rank == 0) ++turns_seen;
                if (n == 0) continue;
                {
                    std::lock_guard<std::mutex> lock(mu);
                    for (int j = 0; j < n; ++j)
                        slowest[static_cast<size_t>(j)] =
                            std::max(slowest[static_cast<size_t>(j)], medians[j]);
                }
                if (!sync.wait()) return Status::internal("a rank did not reach the agreement");
                genx_trial_settle(comm, bytes, slowest.data(), n);
            }
            const char* reason = nullptr;
            const int d = genx_comm_defers(comm, GENX_CALLS_BLOCKING, bytes, count, &reason);
            const int nb = genx_comm_defers(comm, GENX_CALLS_NONBLOCKING, bytes, count, &reason);
            if (rank == 0) {
                kept_defers = d;
                nb_defers = nb;
            }
            // After the trial the size runs what it kept, with exact sums.
            Status after = call(d != 0 ? 0 : 1);
            genx_comm_destroy(comm);
            return after;
        });
        INFO(st.message());
        REQUIRE(st.is_ok());
        REQUIRE(trial_count > 0);
        CHECK(turns_seen == 12);  // 2 candidates × 2 passes × (2 + 1) calls
        // The slowest rank's ring at 0.95 s is not 10 % faster: the size
        // defers; at 0.5 s everywhere the ring runs it.
        CHECK(kept_defers == (slow3 > 0.9 ? GENX_DEFERS : 0));
        CHECK(nb_defers == GENX_DEFERS);  // non-blocking calls keep their table's decision
        const std::string said = slow3 > 0.9 ? "the displaced component keeps the size"
                                             : "ring runs it from now on";
        bool found = false;
        for (const std::string& l : logs[0].lines) found = found || l.find(said) != std::string::npos;
        CHECK(found);
        for (int r = 1; r < P; ++r)
            for (const std::string& l : logs[static_cast<size_t>(r)].lines)
                CHECK(l.find("first-call trial,") == std::string::npos);
    }
}
