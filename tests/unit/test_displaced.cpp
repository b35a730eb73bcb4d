// The displaced component as the cost model prices it (tuning/displaced.hpp):
// Open MPI 4.1 tuned's fixed allreduce table at its edges, its algorithms as
// genx's plans (rhd distance=doubling for rabenseifner), and decision tables
// whose "fallback" incumbent is tuned's choice or, unknown, Open MPI's best.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "topology/placement.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/displaced.hpp"
#include "tuning/rules.hpp"

using namespace genx;

namespace {

std::shared_ptr<const TopologyView> tree_view(const std::string& preset, int hosts) {
    std::vector<std::string> names;
    for (int i = 0; i < hosts; ++i) names.push_back("h" + std::to_string(i));
    std::shared_ptr<const TopologyView> v;
    const Status st = place_ranks(preset, "", names, &v);
    INFO(st.message());
    REQUIRE(st.is_ok());
    return v;
}

DecisionTable builtin_table(const std::shared_ptr<const TopologyView>& view, Displaced displaced) {
    TableOptions opt;
    opt.displaced = displaced;
    DecisionTable t;
    std::vector<std::string> warnings;
    REQUIRE(DecisionTable::build(builtin_rules(), CommShape{view->nranks(), view->nranks(), 1, view},
                                 opt, &t, &warnings)
                .is_ok());
    CHECK(warnings.empty());
    return t;
}

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

// One "model" rule over `families` (a JSON list) with `margin`, priced by
// the built-in model.
RulesFile model_rules(const std::string& families, double margin) {
    RulesFile rules;
    const std::string text =
        R"({"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model", "families": )" +
        families + R"(, "margin": )" + std::to_string(margin) + "}]}";
    const Status st = parse_rules(text, "test.json", RulesCheck{}, &rules);
    INFO(st.message());
    REQUIRE(st.is_ok());
    rules.model = builtin_rules().model;
    return rules;
}

}  // namespace

TEST_CASE("Open MPI 4.1 tuned's fixed allreduce decision at its edges", "[displaced]") {
    // (ranks, bytes, algorithm) on both sides of every threshold of the
    // commutative branch of ompi_coll_tuned_allreduce_intra_dec_fixed in
    // Open MPI 4.1.4's coll_tuned_decision_fixed.c: 1 basic_linear,
    // 2 nonoverlapping, 3 recursive_doubling, 4 ring, 5 segmented_ring,
    // 6 rabenseifner.
    struct Point {
        int ranks;
        size_t bytes;
        int alg;
    };
    const std::vector<Point> points = {
        // fewer than 4 ranks
        {2, 0, 4}, {2, 7, 4}, {2, 8, 3}, {3, 4095, 3}, {3, 4096, 4}, {2, 8191, 4}, {2, 8192, 3},
        {3, 16383, 3}, {3, 16384, 4}, {2, 65535, 4}, {2, 65536, 5}, {3, 262143, 5}, {3, 262144, 6},
        // 4-7
        {4, 15, 4}, {4, 16, 3}, {7, 8191, 3}, {7, 8192, 6},
        // 8-15: no ring at all
        {8, 0, 3}, {8, 8191, 3}, {15, 8192, 6},
        // 16-31
        {16, 63, 5}, {16, 64, 3}, {31, 4095, 3}, {31, 4096, 6},
        // 32-63
        {32, 127, 5}, {63, 128, 6},
        // 64-127 (96 ranks: tree:8x12)
        {64, 262143, 3}, {96, 262144, 6}, {127, 256 * MiB, 6},
        // 128-255
        {128, 131071, 2}, {128, 131072, 3}, {255, 262143, 3}, {255, 262144, 6},
        // 256-511
        {256, 4095, 2}, {511, 4096, 6},
        // 512-2047
        {512, 2047, 2}, {512, 2048, 3}, {2047, 16383, 3}, {2047, 16384, 6},
        // 2048-4095
        {2048, 2047, 2}, {2048, 2048, 5}, {4095, 4095, 5}, {4095, 4096, 3}, {2048, 16383, 3},
        {2048, 16384, 6},
        // 4096 and more
        {4096, 2047, 2}, {4096, 2048, 5}, {10000, 16383, 5}, {10000, 16384, 3}, {4096, 32767, 3},
        {4096, 32768, 6},
    };
    for (const Point& p : points) {
        INFO(p.ranks << " ranks, " << p.bytes << " bytes");
        CHECK(ompi41_tuned_allreduce(p.ranks, p.bytes) == p.alg);
    }
    CHECK(std::string(tuned_allreduce_name(6)) == "rabenseifner");
    CHECK(std::string(tuned_allreduce_name(5)) == "segmented_ring");
    CHECK(std::string(tuned_allreduce_name(0)).empty());
}

TEST_CASE("tuned's algorithms as genx's plans, with what tuned runs for few elements",
          "[displaced]") {
    auto first = [](int P, size_t bytes) { return ompi41_tuned_plans(P, bytes).plans.at(0); };
    // rabenseifner: vector halving with distance doubling; basic_linear for
    // fewer elements than 2^floor(log2 P).
    DisplacedPlans d = ompi41_tuned_plans(96, 16 * MiB);
    CHECK(d.tuned_id == 6);
    REQUIRE(d.plans.size() == 2);
    CHECK(d.plans[0].algorithm == "rhd");
    CHECK(d.plans[0].params == "distance=doubling");
    CHECK(d.plans[1].algorithm == "rb");
    CHECK(d.plans[1].params == "root=0");
    CHECK(d.why[0].empty());
    // ring and segmented_ring (no segment size: the plain ring), rd for
    // fewer elements than ranks.
    for (size_t bytes : {size_t{4096}, size_t{65536}}) {
        d = ompi41_tuned_plans(3, bytes);
        REQUIRE(d.plans.size() == 2);
        CHECK(d.plans[0].algorithm == "ring");
        CHECK(d.plans[1].algorithm == "rd");
    }
    CHECK(first(8, 100).algorithm == "rd");
    CHECK(first(8, 100).params.empty());
    // nonoverlapping: rb root=0 and Open MPI's modelled algorithms stand in
    // for tuned's reduce and bcast trees.
    d = ompi41_tuned_plans(200, 64 * KiB);
    CHECK(d.tuned_id == 2);
    CHECK(d.stand_in);
    CHECK(d.plans.at(0).algorithm == "rb");
    CHECK(d.plans.size() == 4);
    CHECK_FALSE(ompi41_tuned_plans(96, 16 * MiB).stand_in);
    // Every plan named is one the table prices, and generates on P ranks.
    const std::vector<Candidate> priced = tuned_candidates();
    for (int P : {2, 3, 7, 96, 200, 5000})
        for (size_t bytes : {size_t{0}, size_t{100}, size_t{3000}, 100 * KiB, 16 * MiB})
            for (const Candidate& c : ompi41_tuned_plans(P, bytes).plans) {
                INFO(P << " ranks, " << bytes << " bytes: " << c.algorithm << " " << c.params);
                bool found = false;
                for (const Candidate& q : priced)
                    found = found || (q.algorithm == c.algorithm && q.params == c.params);
                CHECK(found);
                if (P <= 200) {
                    ParamMap pm;
                    REQUIRE(parse_params(c.params, &pm).is_ok());
                    RankGenerator g;
                    CHECK(prepare(c.algorithm, P, pm, &g).is_ok());
                }
            }
}

TEST_CASE("which of its plans tuned runs at a known element count", "[displaced]") {
    // coll/base's ring runs recursive doubling for fewer elements than
    // ranks; its rabenseifner basic_linear for fewer than 2^floor(log2 P)
    // (Open MPI 4.1.4's coll_base_allreduce.c).  genx-plan --displaced-plan
    // prints the plan chosen here.
    auto runs = [](int P, size_t bytes, size_t count) {
        const DisplacedPlans d = ompi41_tuned_plans(P, bytes);
        const int k = ompi41_tuned_run_index(d, P, count);
        return k < 0 ? std::string("none") : d.plans.at(static_cast<size_t>(k)).algorithm;
    };
    // 4 ranks, 12 bytes: ring; 3 four-byte elements are fewer than 4 ranks.
    CHECK(ompi41_tuned_allreduce(4, 12) == 4);
    CHECK(runs(4, 12, 3) == "rd");
    CHECK(runs(4, 12, 12) == "ring");
    // 3 ranks, 64 KiB: segmented_ring, the plain ring at any count >= 3.
    CHECK(runs(3, 64 * KiB, 2) == "rd");
    CHECK(runs(3, 64 * KiB, 3) == "ring");
    // 96 ranks, 1 MiB: rabenseifner; 2^floor(log2 96) = 64 elements needed.
    CHECK(runs(96, 1 * MiB, 63) == "rb");
    CHECK(runs(96, 1 * MiB, 64) == "rhd");
    CHECK(runs(96, 1 * MiB, 1 * MiB / 4) == "rhd");
    // 64 ranks exactly: 64 elements suffice, 63 do not.
    CHECK(runs(64, 1 * MiB, 63) == "rb");
    CHECK(runs(64, 1 * MiB, 64) == "rhd");
    // recursive_doubling and basic_linear run as chosen at any count.
    CHECK(runs(8, 100, 1) == "rd");
    // nonoverlapping: no genx plan follows tuned's trees.
    CHECK(runs(200, 64 * KiB, 16 * KiB) == "none");
    // One rank: the one empty plan.
    CHECK(runs(1, 1 * MiB, 1) == "ring");
}

TEST_CASE("which component a communicator's table prices", "[displaced]") {
    std::string why;
    CHECK(displaced_for("tuned", false, "4.1.4", &why) == Displaced::TunedFixed41);
    CHECK(why.find("Open MPI 4.1 tuned's fixed decision") != std::string::npos);
    CHECK(displaced_for("tuned", true, "4.1.4", &why) == Displaced::Unknown);
    CHECK(why.find("coll_tuned_use_dynamic_rules") != std::string::npos);
    CHECK(displaced_for("han", false, "4.1.4", &why) == Displaced::Unknown);
    CHECK(why.find("han's") != std::string::npos);
    CHECK(displaced_for("", false, "4.1.4", &why) == Displaced::Unknown);
    CHECK(displaced_for("tuned", false, "5.0.3", &why) == Displaced::Unknown);
    CHECK(why.find("5.0.3") != std::string::npos);
    CHECK(displaced_for("tuned", false, "", &why) == Displaced::Unknown);
    Displaced d = Displaced::Unknown;
    CHECK(parse_displaced("tuned-4.1", &d));
    CHECK(d == Displaced::TunedFixed41);
    CHECK(std::string(displaced_name(d)) == "tuned-4.1");
    CHECK_FALSE(parse_displaced("tuned", &d));
}

TEST_CASE("tree:8x12: priced as tuned's rabenseifner, gentree takes 16 MiB", "[displaced][tree]") {
    const auto view = tree_view("tree:8x12", 96);
    const DecisionTable t = builtin_table(view, Displaced::TunedFixed41);
    const Decision& d = t.lookup(16 * MiB);
    INFO(d.why);
    CHECK(d.algorithm == "gentree");
    CHECK(d.why.find("against Open MPI tuned's fixed choice (rabenseifner → rhd (distance=doubling)) ") !=
          std::string::npos);
    CHECK(d.runner_up == "rhd");
    CHECK(d.runner_up_params == "distance=doubling");
    CHECK(d.predicted <= 0.8 * d.runner_up_predicted);
    // The built-in rule still defers below 128 KiB, whatever the pricing.
    for (size_t bytes : {size_t{8}, 4 * KiB, 64 * KiB, 128 * KiB - 1}) {
        INFO(bytes << " bytes: " << t.lookup(bytes).why);
        CHECK(t.lookup(bytes).defers());
    }
    // Every size the rule runs a plan at is priced 20 % ahead of tuned's own
    // choice there, and says so.
    for (size_t i = 0; i < t.intervals(); ++i) {
        const Decision& e = t.decision(i);
        if (e.defers() || !e.by_model) continue;
        INFO(t.interval_start(i) << ": " << e.why);
        CHECK(e.why.find("Open MPI tuned's fixed choice (") != std::string::npos);
        CHECK(e.predicted <= 0.8 * e.runner_up_predicted);
    }
}

TEST_CASE("an unknown displaced component keeps Open MPI's best modelled as the incumbent",
          "[displaced][tree]") {
    const auto view = tree_view("tree:8x12", 96);
    const DecisionTable t = builtin_table(view, Displaced::Unknown);
    const Decision& d = t.lookup(16 * MiB);
    INFO(d.why);
    CHECK(d.defers());
    CHECK(d.why.find("is not 20 % faster than Open MPI's best modelled (ring) ") != std::string::npos);
    // A non-blocking table displaces libnbc: tuned's table never applies.
    TableOptions nb;
    nb.displaced = Displaced::TunedFixed41;
    nb.nonblocking = true;
    RulesFile rules = model_rules(R"(["fallback", "ring"])", 0.5);
    DecisionTable n;
    REQUIRE(DecisionTable::build(rules, CommShape{6, 6, 1}, nb, &n, nullptr).is_ok());
    for (size_t bytes : {size_t{64}, 1 * MiB}) {
        INFO(n.lookup(bytes).why);
        CHECK(n.lookup(bytes).why.find("Open MPI's best modelled") != std::string::npos);
    }
    DecisionTable b;
    nb.nonblocking = false;
    REQUIRE(DecisionTable::build(rules, CommShape{6, 6, 1}, nb, &b, nullptr).is_ok());
    INFO(b.lookup(64).why);
    CHECK(b.lookup(64).why.find("Open MPI tuned's fixed choice (recursive_doubling → rd) ") !=
          std::string::npos);
    CHECK(b.lookup(1 * MiB).why.find("Open MPI tuned's fixed choice (rabenseifner → rhd (distance=doubling)) ") !=
          std::string::npos);
}

TEST_CASE("at scale the incumbent is tuned's own plan or not priced, never a cheaper reading alone",
          "[displaced][tree]") {
    // 4096 ranks on tree:64x64: no one-node quotient, so plans are priced
    // from every rank's program within a budget.  rb root=0 (what tuned's
    // rabenseifner runs for a handful of elements) is cheap to price and
    // slow; it may only lower the price of rhd distance=doubling, never
    // stand for it.
    const auto view = tree_view("tree:64x64", 4096);
    const DecisionTable t = builtin_table(view, Displaced::TunedFixed41);
    int against_tuned = 0;
    for (size_t i = 0; i < t.intervals(); ++i) {
        const Decision& e = t.decision(i);
        INFO(t.interval_start(i) << ": " << e.why);
        CHECK(e.why.find("rb (root=0)") == std::string::npos);
        if (e.why.find("tuned's fixed choice (rabenseifner → rhd (distance=doubling)) ") !=
            std::string::npos)
            ++against_tuned;
        if (!e.defers() && e.by_model) CHECK(e.predicted <= 0.8 * e.runner_up_predicted);
    }
    CHECK(against_tuned > 0);
}

TEST_CASE("a model rule's scale ranks its families and the displaced component as measured",
          "[displaced][scale]") {
    RulesFile rules = model_rules(R"(["fallback", "ring", "rd"])", 0.1);
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    const CommShape shape{6, 6, 1};
    const size_t at = 1 * MiB;
    FamilyPrices fp;
    REQUIRE(price_families(rules, shape, opt, {at}, {"ring", "rd"}, &fp).is_ok());
    REQUIRE(fp.best.count("ring") == 1);
    REQUIRE(fp.best.count("rd") == 1);
    REQUIRE(fp.displaced.size() == 1);
    // Tuned runs Rabenseifner at 1 MiB on 6 ranks: genx's rhd schedule.
    REQUIRE(fp.displaced_family.size() == 1);
    CHECK(fp.displaced_family[0] == "rhd");
    const double ring = fp.best["ring"][0], rd = fp.best["rd"][0], theirs = fp.displaced[0];
    REQUIRE(ring > 0);
    REQUIRE(rd > ring);  // at 1 MiB the model prefers the ring's bandwidth
    auto decide = [&](std::map<std::string, double> scale) {
        rules.allreduce[0].scale = std::move(scale);
        DecisionTable t;
        REQUIRE(DecisionTable::build(rules, shape, opt, &t, nullptr).is_ok());
        return t.lookup(at);
    };
    // Unscaled, the table weighs exactly what price_families reports.
    const Decision plain = decide({});
    INFO(plain.why);
    CHECK(plain.defers() == (std::min(ring, rd) > 0.9 * theirs));
    if (!plain.defers()) {
        CHECK(plain.predicted == Approx(std::min(ring, rd)));
        CHECK(plain.runner_up_predicted == Approx(theirs));
    }
    // The displaced component measured far faster than predicted: defer.
    const Decision slow = decide({{"fallback", 0.5 * std::min(ring, rd) / theirs}});
    INFO(slow.why);
    CHECK(slow.defers());
    // The displaced component measured slow: the ring, compared with it
    // as measured.
    const Decision d = decide({{"fallback", 4 * ring / theirs}});
    INFO(d.why);
    CHECK(d.algorithm == "ring");
    CHECK(d.predicted == Approx(ring));
    CHECK(d.runner_up_predicted == Approx(4 * ring));
    CHECK(d.why.find("measured/predicted") != std::string::npos);
    CHECK(d.why.find("as measured = ") != std::string::npos);
    // The ring measured slower than rd: the scaled ranking puts rd first.
    const Decision flipped = decide({{"fallback", 4 * rd / theirs}, {"ring", 2 * rd / ring}});
    INFO(flipped.why);
    CHECK(flipped.why.find("model at 1M B: rd ") != std::string::npos);
    // Scaled far ahead, a family still needs the unscaled model's vote
    // within the margin: rd (a full vector per step) is priced more than
    // 10 % above tuned's Rabenseifner at 1 MiB, the ring below it.
    REQUIRE(rd > 1.1 * theirs);
    REQUIRE(ring < theirs);
    const Decision guarded = decide({{"rd", 0.01}, {"ring", 100}});
    INFO(guarded.why);
    CHECK(guarded.defers());
    CHECK(guarded.why.find("but unscaled") != std::string::npos);
    const Decision agreed = decide({{"ring", 0.01}, {"rd", 100}});
    INFO(agreed.why);
    CHECK(agreed.algorithm == "ring");
}

TEST_CASE("a model rule's pipeline depth weighs its family's plans of that depth",
          "[displaced][scale]") {
    CHECK(pipeline_of("pipeline=8,plans=ring/cps") == 8);
    CHECK(pipeline_of("plans=cps/cps") == 1);
    CHECK(pipeline_of("") == 1);
    // gentree the incumbent, the ring scaled out of reach.
    RulesFile rules = model_rules(R"(["gentree", "ring"])", 0.1);
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    const auto view = tree_view("tree:2x3", 6);
    const CommShape shape{6, 6, 1, view};
    const size_t at = 1 * MiB;
    FamilyPrices fp;
    REQUIRE(price_families(rules, shape, opt, {at}, {"gentree"}, &fp).is_ok());
    REQUIRE(fp.by_pipeline.count("gentree") == 1);
    const std::map<int, std::vector<double>>& depths = fp.by_pipeline.at("gentree");
    REQUIRE(depths.size() >= 3);  // unpipelined and pipelined plans
    int cheapest = 0;
    for (const auto& [k, v] : depths)
        if (cheapest == 0 || v[0] < depths.at(cheapest)[0]) cheapest = k;
    CHECK(fp.best.at("gentree")[0] == depths.at(cheapest)[0]);
    const int other = cheapest == depths.begin()->first ? depths.rbegin()->first : depths.begin()->first;
    REQUIRE(depths.at(other)[0] > depths.at(cheapest)[0]);
    auto decide = [&](std::map<std::string, int> pipeline) {
        rules.allreduce[0].scale = {{"gentree", 0.5}, {"ring", 100}};
        rules.allreduce[0].pipeline = std::move(pipeline);
        DecisionTable t;
        REQUIRE(DecisionTable::build(rules, shape, opt, &t, nullptr).is_ok());
        return t.lookup(at);
    };
    // Without a depth the model's cheapest plan; with one, that depth's
    // cheapest, scaled; a depth the shape has no plan of changes nothing.
    const Decision plain = decide({});
    INFO(plain.why);
    CHECK(pipeline_of(plain.params) == cheapest);
    CHECK(plain.predicted == Approx(0.5 * depths.at(cheapest)[0]));
    const Decision deep = decide({{"gentree", other}});
    INFO(deep.why);
    CHECK(deep.algorithm == "gentree");
    CHECK(pipeline_of(deep.params) == other);
    CHECK(deep.predicted == Approx(0.5 * depths.at(other)[0]));
    const Decision none = decide({{"gentree", 3}});
    REQUIRE(depths.count(3) == 0);
    CHECK(none.params == plain.params);
}

TEST_CASE("a plan ahead of only the schedule tuned runs for many elements runs from that many on",
          "[displaced][count]") {
    // 3 ranks, 4 KiB: tuned chooses its ring, which runs recursive doubling
    // for fewer than 3 elements; rabenseifner on 96 ranks needs 64.
    CHECK(ompi41_tuned_plans(3, 4 * KiB).few_below == 3);
    CHECK(ompi41_tuned_plans(96, 16 * MiB).few_below == 64);
    CHECK(ompi41_tuned_plans(8, 100).few_below == 0);  // recursive_doubling: any count
    RulesFile rules = model_rules(R"(["fallback", "rd"])", 0.1);
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    const CommShape shape{3, 3, 1};
    const size_t at = 4 * KiB;
    FamilyPrices fp;
    REQUIRE(price_families(rules, shape, opt, {at}, {"ring", "rd"}, &fp).is_ok());
    const double ring = fp.best["ring"][0], rd = fp.best["rd"][0];
    // The cheaper reading prices the incumbent as rd; the model puts rd well
    // ahead of the ring on 3 ranks at 4 KiB (two exchanges against four).
    REQUIRE(rd < 0.8 * ring);
    CHECK(fp.displaced[0] == Approx(rd));
    // What genx-tune timed in floats (1,024 of them): tuned's ring, priced
    // as the ring; in 2 KiB elements (2 of them) the cheaper reading.
    FamilyPrices timed;
    REQUIRE(price_families(rules, shape, opt, {at}, {"ring", "rd"}, &timed, sizeof(float)).is_ok());
    CHECK(timed.displaced[0] == Approx(ring));
    CHECK(timed.displaced_family[0] == "ring");
    REQUIRE(price_families(rules, shape, opt, {at}, {"ring", "rd"}, &timed, 2048).is_ok());
    CHECK(timed.displaced[0] == Approx(rd));
    auto build = [&](std::map<std::string, double> scale) {
        rules.allreduce[0].scale = std::move(scale);
        DecisionTable t;
        REQUIRE(DecisionTable::build(rules, shape, opt, &t, nullptr).is_ok());
        return t;
    };
    DecisionTable t = build({});
    const Decision& d = t.lookup(at);
    INFO(d.why);
    CHECK(d.algorithm == "rd");
    CHECK(d.rule == 0);
    CHECK(d.min_count == 3);
    CHECK(d.runner_up == "ring");
    CHECK(d.runner_up_predicted == Approx(ring));
    CHECK(d.why.find("for 3 elements or more") != std::string::npos);
    CHECK(d.few_why.find("left to the component genx displaced") != std::string::npos);
    CHECK(d.defers_at(2));
    CHECK_FALSE(d.defers_at(3));
    CHECK_FALSE(d.defers_at(at / 4));
    // Where tuned runs recursive doubling itself (8 KiB on 3 ranks), rd
    // gains nothing at any count.
    REQUIRE(ompi41_tuned_allreduce(3, 8 * KiB) == 3);
    CHECK(t.lookup(8 * KiB).defers());
    CHECK(t.lookup(8 * KiB).min_count == 0);
    // The displaced component measured at half rd's price: rd is not ahead
    // of tuned's ring as measured either, and the size defers at any count.
    DecisionTable slow = build({{"fallback", 0.5 * rd / ring}, {"rd", 1.0}});
    CHECK(slow.lookup(at).defers());
    // The ring scaled to half its price passes the margin against tuned's
    // ring but not against rd's cheaper reading; the guard against the
    // unscaled model keeps the cheaper reading too, so the size defers.
    REQUIRE(ring > 1.2 * rd);
    rules.allreduce[0].families = {"fallback", "ring"};
    DecisionTable g = build({{"fallback", 0.5 * ring / rd}, {"ring", 0.5}});
    INFO(g.lookup(at).why);
    CHECK(g.lookup(at).defers());
    CHECK(g.lookup(at).min_count == 0);
}
