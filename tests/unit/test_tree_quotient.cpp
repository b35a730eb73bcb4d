// The quotient on switch trees (docs/model.md, "Pricing at scale"): GenTree
// declares its rank symmetry on level-uniform trees, the checker proves it,
// and the cost model prices a symmetric plan on a symmetric tree from the
// ranks of one host (or of one leaf switch, when GenTree rearranges there)
// with every uplink charged its orbit's load, exactly as the full model
// prices it; where the tree or the plan is not symmetric it falls back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "plan/checker.hpp"
#include "plan/gentree.hpp"
#include "plan/registry.hpp"
#include "topology/placement.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/gentree_choice.hpp"
#include "tuning/rules.hpp"

using namespace genx;

namespace {

// `preset` with `ppn` ranks on each of its `hosts` hosts: consecutive ranks
// on a host, or dealt round-robin over the hosts.
std::shared_ptr<const TopologyView> placed(const std::string& preset, int hosts, int ppn,
                                           bool round_robin = false) {
    std::vector<std::string> names;
    for (int i = 0; i < hosts * ppn; ++i)
        names.push_back("h" + std::to_string(round_robin ? i % hosts : i / ppn));
    std::shared_ptr<const TopologyView> v;
    const Status st = place_ranks(preset, "", names, &v);
    INFO(preset << ": " << st.message());
    REQUIRE(st.is_ok());
    return v;
}

RankMap ranks_on(const std::shared_ptr<const TopologyView>& v) {
    return rank_map_for(CommShape{v->nranks(), v->nranks(), 1, v});
}

RankGenerator prepared(const std::string& alg, const TopologyView& v, const std::string& params) {
    ParamMap pm;
    REQUIRE(parse_params(params, &pm).is_ok());
    RankGenerator g;
    const Status st = prepare(alg, v.nranks(), pm, &v, &g);
    INFO(alg << " " << params << ": " << st.message());
    REQUIRE(st.is_ok());
    return g;
}

// A model with every term switched on: per-message and shift costs, incast
// on the NICs above w_t = 2, intra-node links of their own.
ModelParams busy_model() {
    ModelParams m = builtin_rules().model;
    m.inter.alpha_msg = 2e-6;
    m.inter.alpha_shift = 1e-6;
    m.inter.epsilon = 3e-11;
    m.inter.w_t = 2;
    m.intra = m.inter;
    m.intra.alpha = 1e-6;
    m.intra.beta = 1e-10;
    return m;
}

// GenTree's params chosen at `bytes` by `model` on `v` (as the selector
// does), with `extra` added.
std::string chosen(const TopologyView& v, double bytes, const ModelParams& model,
                   const std::string& extra = "") {
    std::string p = extra;
    REQUIRE(resolve_gentree_text("gentree", &v, bytes, model, &p).is_ok());
    return p;
}

// Quotient and full model agree at counts that are multiples of nblocks;
// returns whether the quotient applied.
bool prices_alike(const RankGenerator& g, const RankMap& ranks, const ModelParams& model) {
    PlanModel full, quot;
    REQUIRE(PlanModel::build(g, ranks, &full, false).is_ok());
    REQUIRE(PlanModel::build(g, ranks, &quot, true).is_ok());
    CHECK_FALSE(full.quotient());
    for (size_t per_block : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
        const size_t count = per_block * static_cast<size_t>(g.header.nblocks);
        const Prediction a = full.predict(count, 1, model);
        const Prediction b = quot.predict(count, 1, model);
        INFO(g.header.algorithm << " " << g.header.params.substr(0, 120) << " P=" << g.header.nranks
                                << " count=" << count << " modelled " << quot.modelled_ranks());
        REQUIRE(a.status.is_ok());
        REQUIRE(b.status.is_ok());
        CHECK(b.seconds == Approx(a.seconds).epsilon(1e-12));
        CHECK(b.terms.alpha == Approx(a.terms.alpha).epsilon(1e-12));
        CHECK(b.terms.beta == Approx(a.terms.beta).epsilon(1e-12));
        CHECK(b.coefficients.route_seconds == Approx(a.coefficients.route_seconds).epsilon(1e-12));
    }
    return quot.quotient();
}

}  // namespace

TEST_CASE("gentree declares its symmetry on level-uniform trees and the checker proves it",
          "[gentree][quotient]") {
    struct Case {
        std::string preset;
        int hosts, ppn;
        bool round_robin;
    };
    const std::vector<Case> cases = {{"tree:4x4", 16, 1, false}, {"tree:3x4", 12, 2, false},
                                     {"tree:3x4", 12, 2, true},  {"tree:4x6/3", 24, 1, false},
                                     {"tree:2x6", 12, 3, false}, {"switch:12", 12, 1, false}};
    int declared = 0, with_fixed = 0;
    for (const Case& c : cases) {
        const auto v = placed(c.preset, c.hosts, c.ppn, c.round_robin);
        // The choices of two models at three sizes: CPS, m×n and ring
        // sub-plans, rearranged or not; also pipelined.
        for (const ModelParams& m : {builtin_rules().model, busy_model()})
            for (double bytes : {1e3, 1e6, 1e9})
                for (const std::string extra : {"", "pipeline=2"}) {
                    const RankGenerator g = prepared("gentree", *v, chosen(*v, bytes, m, extra));
                    Plan plan;
                    REQUIRE(generate(g, &plan).is_ok());
                    INFO(c.preset << " ppn=" << c.ppn << " rr=" << c.round_robin << " "
                                  << g.header.params.substr(0, 160));
                    REQUIRE_FALSE(plan.symmetry.empty());
                    CHECK(plan.symmetry == g.header.symmetry);
                    ++declared;
                    if (!plan.symmetry_fixed.empty()) ++with_fixed;
                    const CheckResult sym = check_symmetry(plan);
                    INFO(sym.message);
                    CHECK(sym.ok);
                    CHECK(check_plan(plan).ok);
                }
    }
    CHECK(declared == 72);
    CHECK(with_fixed > 0);  // some choices rearrange: only the switches stay alike
}

TEST_CASE("a rearranged gentree plan is symmetric only with its hosts' digits fixed",
          "[gentree][quotient][checker]") {
    // 64 KiB on tree:4x6 under a model with incast above w_t = 2: the leaf
    // switches move their blocks onto two hosts before the root's sub-plan.
    const auto v = placed("tree:4x6", 24, 1);
    const RankGenerator g = prepared("gentree", *v, chosen(*v, 65536, busy_model()));
    REQUIRE(g.header.params.find("rearrange=") != std::string::npos);
    Plan plan;
    REQUIRE(generate(g, &plan).is_ok());
    // The leaf switches' digits (their 3x2 sub-plan's) fixed, the root's
    // (4 leaf switches) free.
    CHECK(plan.symmetry == std::vector<int>{3, 2, 4});
    CHECK(plan.symmetry_fixed == std::vector<int>{0, 1});
    CHECK(check_symmetry(plan).ok);
    // Claiming the hosts alike too is caught.
    Plan wrong = plan;
    wrong.symmetry_fixed.clear();
    const CheckResult res = check_symmetry(wrong);
    CHECK_FALSE(res.ok);
    CHECK(res.message.find("declared symmetry does not hold") != std::string::npos);
    wrong.symmetry_fixed = {3};
    CHECK(check_symmetry(wrong).message.find("digit 3 of a symmetry group of 3 digits") !=
          std::string::npos);
}

TEST_CASE("gentree declares no symmetry where the tree is not uniform", "[gentree][quotient]") {
    // Leaf switches of 4, 4 and 3 hosts; hosts of 2 and 1 ranks; ranks
    // numbered out of the tree's mixed radix.
    const auto uneven = placed("tree:3x4", 12, 1);
    std::vector<std::string> names;
    for (int i = 0; i < 11; ++i) names.push_back("h" + std::to_string(i));
    std::shared_ptr<const TopologyView> v;
    REQUIRE(place_ranks("tree:3x4", "", names, &v).is_ok());
    CHECK(prepared("gentree", *v, "").header.symmetry.empty());
    names = {"h0", "h0", "h1", "h2", "h3", "h4", "h5", "h6"};
    REQUIRE(place_ranks("tree:2x4", "", names, &v).is_ok());
    CHECK(prepared("gentree", *v, "").header.symmetry.empty());
    names = {"h0", "h1", "h3", "h2", "h4", "h5", "h6", "h7"};
    REQUIRE(place_ranks("tree:2x4", "", names, &v).is_ok());
    CHECK(prepared("gentree", *v, "").header.symmetry.empty());
    // The uniform tree does declare one.
    CHECK(prepared("gentree", *uneven, "").header.symmetry == std::vector<int>{4, 3});
}

TEST_CASE("the switch-tree quotient prices gentree exactly as the full model",
          "[gentree][quotient][cost-model]") {
    struct Case {
        std::string preset;
        int hosts, ppn;
        bool round_robin;
    };
    const std::vector<Case> cases = {
        {"tree:4x4", 16, 1, false},   {"tree:8x12", 96, 1, false}, {"tree:8x12/4", 96, 1, false},
        {"tree:16x16", 256, 1, false}, {"tree:32x32", 1024, 1, false}, {"tree:4x4", 16, 2, false},
        {"tree:4x4", 16, 3, true},    {"tree:8x12/4", 96, 2, false}};
    int quotients = 0, per_switch = 0;
    for (const Case& c : cases) {
        const auto v = placed(c.preset, c.hosts, c.ppn, c.round_robin);
        const RankMap ranks = ranks_on(v);
        REQUIRE(ranks.tree != nullptr);
        for (const ModelParams& base : {builtin_rules().model, busy_model()}) {
            const ModelParams m = model_for_topology(base, v.get());
            for (double bytes : {1e3, 1e6, 1e8}) {
                const RankGenerator g = prepared("gentree", *v, chosen(*v, bytes, m));
                REQUIRE_FALSE(g.header.symmetry.empty());
                PlanModel q;
                REQUIRE(PlanModel::build(g, ranks, &q, true).is_ok());
                REQUIRE(q.quotient());
                // One host's ranks, or one leaf switch's where its hosts
                // are rearranged.
                if (g.header.symmetry_fixed.empty())
                    CHECK(q.modelled_ranks() == c.ppn);
                else
                    ++per_switch;
                if (prices_alike(g, ranks, m)) ++quotients;
            }
        }
    }
    CHECK(quotients == 48);
    CHECK(per_switch > 0);
}

TEST_CASE("the switch-tree quotient falls back where tree or plan is not symmetric",
          "[gentree][quotient][cost-model]") {
    const ModelParams m = busy_model();
    // Leaf switches of 4, 4 and 3 hosts: GenTree declares nothing.
    std::vector<std::string> names;
    for (int i = 0; i < 11; ++i) names.push_back("h" + std::to_string(i));
    std::shared_ptr<const TopologyView> v;
    REQUIRE(place_ranks("tree:3x4", "", names, &v).is_ok());
    RankGenerator g = prepared("gentree", *v, chosen(*v, 1e6, m));
    CHECK_FALSE(prices_alike(g, ranks_on(v), m));
    // A uniform plan on a tree whose uplinks differ: leaf 0's uplink is of
    // another class, so turning the leaves is no automorphism of the tree.
    TopologyView slow = *placed("tree:4x4", 16, 1);
    int uplink = -1;
    for (size_t i = 0; i < slow.link_classes.size(); ++i)
        if (slow.link_classes[i].name == "uplink") uplink = static_cast<int>(i);
    REQUIRE(uplink >= 0);
    slow.link_classes.push_back(slow.link_classes[static_cast<size_t>(uplink)]);
    slow.link_classes.back().name = "slow-uplink";
    slow.link_classes.back().rate /= 4;
    for (TopoNode& n : slow.nodes)
        if (n.name == "leaf0") n.up_class = static_cast<int>(slow.link_classes.size() - 1);
    REQUIRE(slow.validate().empty());
    const auto sv = std::make_shared<const TopologyView>(slow);
    g = prepared("gentree", *sv, chosen(*sv, 1e6, m));
    REQUIRE_FALSE(g.header.symmetry.empty());
    CHECK_FALSE(PlanModel::quotient_applies(g.header, ranks_on(sv)));
    CHECK_FALSE(prices_alike(g, ranks_on(sv), m));
    // The ring's cyclic group moves hosts across leaf switches unevenly.
    const auto t = placed("tree:4x4", 16, 1);
    g = prepared("ring", *t, "");
    CHECK_FALSE(PlanModel::quotient_applies(g.header, ranks_on(t)));
    // hcps over the tree's own digits is symmetric on it: priced alike.
    g = prepared("hcps", *t, "factors=4x4");
    CHECK(PlanModel::quotient_applies(g.header, ranks_on(t)));
    CHECK(prices_alike(g, ranks_on(t), m));
}

TEST_CASE("the decision table prices gentree on 10^4 ranks of a two-level tree",
          "[gentree][quotient][decision-table]") {
    const auto v = placed("tree:100x100", 10000, 1);
    const CommShape shape{v->nranks(), v->nranks(), 1, v};
    std::vector<size_t> sizes;
    for (int k = 0; k <= 30; k += 3) sizes.push_back(size_t{1} << k);
    std::vector<PricedCandidate> priced;
    int unpriced = -1;
    REQUIRE(price_candidates(builtin_rules().model, shape, {"gentree"}, sizes, TableOptions{},
                             &priced, &unpriced)
                .is_ok());
    CHECK(unpriced == 0);
    REQUIRE_FALSE(priced.empty());
    // Every size has its chosen plan priced.
    for (size_t i = 0; i < sizes.size(); ++i) {
        double best = std::numeric_limits<double>::infinity();
        for (const PricedCandidate& c : priced) best = std::min(best, c.seconds[i]);
        CHECK(std::isfinite(best));
    }
}

TEST_CASE("a closed form without the switches bounds a switch tree's price from below",
          "[closed-form][decision-table][cost-model]") {
    struct Case {
        std::string preset;
        int hosts, ppn;
    };
    // Non-powers of two (rd and rhd fold), one and two consecutive ranks per
    // host, uplinks as fast as the hosts' and 4:1 oversubscribed.
    const std::vector<Case> cases = {{"tree:8x12", 90, 1}, {"tree:8x12/4", 90, 1},
                                     {"tree:8x12/4", 45, 2}, {"tree:4x4", 13, 1},
                                     {"tree:4x4", 12, 2}};
    const std::vector<std::pair<std::string, std::string>> plans = {
        {"rhd", ""}, {"rhd", "distance=doubling"}, {"rd", ""}, {"ring", ""}, {"rb", ""},
        {"butterfly", "r=1"}};
    int bounded = 0, strictly = 0;
    double tightest = 0;
    for (const Case& c : cases) {
        const auto v = placed(c.preset, c.hosts, c.ppn);
        const CommShape shape{v->nranks(), c.hosts, c.ppn, v};
        const RankMap ranks = ranks_on(v);
        for (const ModelParams& base : {builtin_rules().model, busy_model()}) {
            const ModelParams m = model_for_topology(base, v.get());
            for (const auto& [alg, params] : plans) {
                INFO(c.preset << " on " << c.hosts << " hosts x " << c.ppn << ": " << alg << " "
                              << params);
                const RankGenerator g = prepared(alg, *v, params);
                std::vector<size_t> sizes;
                for (size_t per_block : {1, 300, 65536})
                    sizes.push_back(per_block * static_cast<size_t>(g.header.nblocks));
                PricedCandidate lb;
                if (!price_lower_bound(m, shape, Candidate{alg, params}, sizes, &lb)) {
                    // Only rhd has no closed form with two ranks per host.
                    CHECK((alg == "rhd" && c.ppn > 1));
                    continue;
                }
                PlanModel full;
                REQUIRE(PlanModel::build(g, ranks, &full, false).is_ok());
                for (size_t i = 0; i < sizes.size(); ++i) {
                    const double t = full.predict(sizes[i], 1, m).seconds;
                    INFO(sizes[i] << " B: bound " << lb.seconds[i] << " s, model " << t << " s");
                    CHECK(lb.seconds[i] <= t);
                    CHECK(lb.seconds[i] > 0);
                    ++bounded;
                    if (lb.seconds[i] < t) ++strictly;
                    tightest = std::max(tightest, lb.seconds[i] / t);
                }
            }
        }
    }
    CHECK(bounded > 150);
    CHECK(strictly > 0);      // the tree's links add latency, and load where oversubscribed
    CHECK(tightest > 0.9);    // and the bound is close where they add little
    // Not a switch tree, or hosts not holding consecutive ranks: no bound.
    PricedCandidate lb;
    const std::vector<size_t> one = {size_t{1} << 20};
    CHECK_FALSE(price_lower_bound(builtin_rules().model, CommShape{90, 90, 1}, {"rd", ""}, one, &lb));
    const auto rr = placed("tree:4x4", 12, 2, true);
    CHECK_FALSE(price_lower_bound(builtin_rules().model, CommShape{24, 12, 2, rr}, {"rd", ""}, one,
                                  &lb));
    std::vector<std::string> cells;
    for (int i = 0; i < 15; ++i) cells.push_back("n" + std::to_string(i));
    std::shared_ptr<const TopologyView> torus;
    REQUIRE(place_ranks("torus:4x4", "", cells, &torus).is_ok());
    CHECK_FALSE(price_lower_bound(builtin_rules().model, CommShape{15, 15, 1, torus}, {"rd", ""},
                                  one, &lb));
}

TEST_CASE("on 10^4 ranks of a tree the defaults weigh gentree against tuned's bound",
          "[gentree][decision-table]") {
    // Tuned's Rabenseifner on 10^4 ranks is beyond the full-model budget;
    // its closed form without the switches stands in, so large sizes run
    // GenTree instead of deferring.
    const auto v = placed("tree:100x100", 10000, 1);
    TableOptions opt;
    opt.displaced = Displaced::TunedFixed41;
    DecisionTable t;
    REQUIRE(DecisionTable::build(builtin_rules(), CommShape{10000, 10000, 1, v}, opt, &t, nullptr)
                .is_ok());
    const Decision& d = t.lookup(size_t{16} << 20);
    INFO(d.why);
    CHECK(d.algorithm == "gentree");
    CHECK(d.why.find("rhd (distance=doubling)) at least") != std::string::npos);
    // Small sizes stay with tuned.
    CHECK(t.lookup(64).algorithm == kFallbackAlgorithm);
}
