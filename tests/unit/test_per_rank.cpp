// Per-rank generation (docs/design.md §3.2-3.4, §5.4): a rank's program from the generator is
// the program the all-rank plan holds; declared symmetries and
// representatives are proven by the checker; the cost model's one-node
// quotient and the closed-form prices give the full model's times; the
// sampled check catches what the full check catches in matching.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "make_plan.hpp"
#include "plan/checker.hpp"
#include "plan/hcps.hpp"
#include "plan/print.hpp"
#include "plan/registry.hpp"
#include "plan/stats.hpp"
#include "tuning/closed_form.hpp"
#include "tuning/cost_model.hpp"

using namespace genx;

namespace {

// Every family with a few parameter choices, at P.
std::vector<std::pair<std::string, std::string>> variants(int P) {
    std::vector<std::pair<std::string, std::string>> v = {
        {"ring", ""}, {"rb", ""}, {"cps", ""}, {"hcps", ""}, {"rhd", ""}, {"rd", ""},
        {"butterfly", "r=0"}};
    int L = 0;
    while ((1 << L) < P) ++L;
    if (L >= 1) v.push_back({"butterfly", "r=1"});
    if (L >= 2) v.push_back({"butterfly", "r=" + std::to_string(L)});
    if ((P & (P - 1)) == 0 && P > 1) v.push_back({"butterfly", "group=xor,r=1"});
    if ((P & (P - 1)) == 0 && L >= 2)  // block_of's bit-reversal shortcut, all steps
        v.push_back({"butterfly", "group=xor,r=" + std::to_string(L)});
    if (P % 3 == 0 && P > 3) v.push_back({"butterfly", "group=3x" + std::to_string(P / 3)});
    if (P % 4 == 0 && P > 4)  // RankGroup's two-factor shortcut with translates
        v.push_back({"butterfly", "group=4x" + std::to_string(P / 4) + ",r=1"});
    if (P % 2 == 0 && P > 2) v.push_back({"hcps", "factors=2x" + std::to_string(P / 2)});
    if (P > 1) v.push_back({"rb", "root=" + std::to_string(P - 1)});
    int Y = 1;  // ring2d on the squarest X x Y = P, X >= Y
    for (int d = 1; d * d <= P; ++d)
        if (P % d == 0) Y = d;
    v.push_back({"ring2d", "dims=" + std::to_string(P / Y) + "x" + std::to_string(Y)});
    return v;
}

const std::vector<int> kRanks = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 24, 31, 32, 33};

RankGenerator prepared(const std::string& name, int P, const std::string& params) {
    ParamMap pm;
    REQUIRE(parse_params(params, &pm).is_ok());
    RankGenerator g;
    const Status st = prepare(name, P, pm, &g);
    INFO(name << " P=" << P << " " << params << ": " << st.message());
    REQUIRE(st.is_ok());
    return g;
}

ModelParams net(double alpha_msg) {
    ModelParams m;
    m.inter = LinkParams{2e-5, 1e-9, 3e-10, 2, alpha_msg};
    m.intra = LinkParams{1e-6, 2e-10, 0, 4, alpha_msg / 4};
    m.host = HostParams{3e-11, 1e-11};
    return m;
}

}  // namespace

TEST_CASE("a rank's program is the all-rank plan's program of that rank", "[per-rank]") {
    for (int P : kRanks)
        for (const auto& v : variants(P)) {
            const Plan plan = make_plan(v.first, P, v.second);
            for (int r = 0; r < P; ++r) {
                PlanHeader h;
                Program prog;
                ParamMap pm;
                REQUIRE(parse_params(v.second, &pm).is_ok());
                REQUIRE(generate_rank(v.first, P, r, pm, &h, &prog).is_ok());
                INFO(v.first << " " << v.second << " P=" << P << " rank " << r);
                CHECK(format_program(prog, r) == format_program(plan, r));
                CHECK(h.params == plan.params);
                CHECK(h.nblocks == plan.nblocks);
                // One program's layouts cover exactly the slots it uses.
                CHECK(static_cast<int>(prog.slot_layout.size()) <= plan.nslots);
            }
        }
    PlanHeader h;
    Program prog;
    CHECK(generate_rank("ring", 4, 4, {}, &h, &prog).code() == Code::InvalidArgument);
}

TEST_CASE("declared symmetries and representatives hold", "[per-rank][checker]") {
    int symmetric = 0;
    for (int P : kRanks)
        for (const auto& v : variants(P)) {
            const Plan plan = make_plan(v.first, P, v.second);
            INFO(v.first << " " << v.second << " P=" << P);
            const CheckResult s = check_symmetry(plan);
            INFO(s.message);
            CHECK(s.ok);
            const CheckResult r = check_representatives(plan);
            INFO(r.message);
            CHECK(r.ok);
            CHECK(!plan.representatives.empty());
            symmetric += !plan.symmetry.empty();
        }
    CHECK(symmetric > 100);  // ring, cps, hcps, butterfly, rhd on 2^k declare one
}

TEST_CASE("the symmetry and representative checks catch planted violations", "[per-rank][checker]") {
    Plan ring = make_plan("ring", 6);
    ring.programs[3].steps[2].sends[0].peer = 5;  // not rank 0's peer translated
    const CheckResult s = check_symmetry(ring);
    CHECK_FALSE(s.ok);
    CHECK(s.message.find("declared symmetry does not hold") != std::string::npos);

    Plan hcps = make_plan("hcps", 6, "factors=3x2");
    hcps.programs[4].steps[0].recvs[1].blocks.push_back(5);  // one more block on rank 4
    CHECK_FALSE(check_symmetry(hcps).ok);
    const CheckResult r = check_representatives(hcps);
    CHECK_FALSE(r.ok);
    CHECK(r.rank == 4);

    Plan rb = make_plan("rb", 5);
    rb.representatives = {0};  // the non-roots are not covered any more
    CHECK_FALSE(check_representatives(rb).ok);
}

TEST_CASE("statistics from representatives equal the whole plan's", "[per-rank][stats]") {
    for (int P : {65, 96, 100, 128, 130})
        for (const auto& v : variants(P)) {
            const RankGenerator g = prepared(v.first, P, v.second);
            Plan plan;
            REQUIRE(generate(g, &plan).is_ok());
            const size_t count = static_cast<size_t>(plan.nblocks) * 7;  // equal blocks
            const PlanStats whole = compute_stats(plan, count, 4);
            const PlanStats reps = compute_stats(g, count, 4);
            INFO(v.first << " " << v.second << " P=" << P);
            CHECK(reps.programs_read == static_cast<int>(g.header.representatives.size()));
            CHECK(reps.programs_read < P);
            CHECK(reps.steps == whole.steps);
            CHECK(reps.max_bytes_sent_per_rank == whole.max_bytes_sent_per_rank);
            CHECK(reps.max_bytes_received_per_rank == whole.max_bytes_received_per_rank);
            CHECK(reps.elements_reduced_per_rank == whole.elements_reduced_per_rank);
            CHECK(reps.max_fan_in == whole.max_fan_in);
            CHECK(reps.max_incast == whole.max_incast);
            CHECK(reps.step_bytes == whole.step_bytes);
            CHECK(reps.step_memory_accesses == whole.step_memory_accesses);
        }
}

TEST_CASE("the one-node quotient prices like the full model", "[per-rank][cost-model]") {
    int quotients = 0;
    for (int P : {4, 6, 8, 9, 12, 16, 24, 30, 32})
        for (int ppn : {1, 2, 3, 4})
            for (const auto& v : variants(P)) {
                if (P % ppn != 0 || ppn == P) continue;
                const RankMap map = ppn == 1 ? RankMap{} : RankMap::by_slot(P, ppn);
                const RankGenerator g = prepared(v.first, P, v.second);
                PlanModel full, quot;
                REQUIRE(PlanModel::build(g, map, &full, false).is_ok());
                REQUIRE(PlanModel::build(g, map, &quot, true).is_ok());
                CHECK_FALSE(full.quotient());
                if (!quot.quotient()) continue;
                ++quotients;
                CHECK(quot.modelled_ranks() == (ppn == 1 ? 1 : ppn));
                // The butterfly's cyclic and mixed groups split a wrapping
                // block range into two messages on some ranks only: with a
                // per-message cost the quotient prices rank 0's.
                const bool runs_vary = v.first == "butterfly" && !g.header.symmetry.empty() &&
                                       g.header.symmetry[0] != 2;
                for (double am : {0.0, 3e-6})
                    for (size_t per_block : {size_t{1}, size_t{4096}}) {
                        const size_t count = per_block * static_cast<size_t>(g.header.nblocks);
                        const Prediction a = full.predict(count, 4, net(am));
                        const Prediction b = quot.predict(count, 4, net(am));
                        INFO(v.first << " " << v.second << " P=" << P << " ppn=" << ppn
                                     << " alpha_msg=" << am << " count=" << count);
                        REQUIRE(a.status.is_ok());
                        REQUIRE(b.status.is_ok());
                        if (am > 0 && runs_vary) {
                            CHECK(std::fabs(a.seconds - b.seconds) <=
                                  am * a.critical_path.size() + 1e-12);
                        } else {
                            CHECK(b.seconds == Approx(a.seconds).epsilon(1e-9));
                            CHECK(b.terms.beta == Approx(a.terms.beta).epsilon(1e-9));
                        }
                    }
            }
    CHECK(quotients > 150);
}

TEST_CASE("the quotient is declined when nodes are not translates", "[per-rank][cost-model]") {
    // hcps 3x4 with 2 ranks per node: translating node {0,1} by the group
    // does not give the node {2,3}... ({2,0} wraps in the first digit).
    const RankGenerator g = prepared("hcps", 12, "factors=3x4");
    PlanModel m;
    REQUIRE(PlanModel::build(g, RankMap::by_slot(12, 2), &m, true).is_ok());
    CHECK_FALSE(m.quotient());
    // Without a declared symmetry nothing is quotiented.
    const RankGenerator rb = prepared("rb", 12, "");
    REQUIRE(PlanModel::build(rb, RankMap{}, &m, true).is_ok());
    CHECK_FALSE(m.quotient());
}

TEST_CASE("the sampled check passes real plans and catches planted mismatches",
          "[per-rank][checker]") {
    for (const auto& v : variants(1000)) {
        const RankGenerator g = prepared(v.first, 1000, v.second);
        SampleOptions so;
        so.samples = 8;
        const CheckResult r = check_sampled(g, so);
        INFO(v.first << " " << v.second << ": " << r.message);
        CHECK(r.ok);
    }
    // Rank 0's first send carries one block too many, or goes nowhere.
    RankGenerator g = prepared("ring", 50, "");
    auto real = g.emit;
    g.emit = [real](int r, Program* p) {
        real(r, p);
        if (r == 0) p->steps[3].sends[0].blocks.push_back(7);
    };
    SampleOptions all;
    all.samples = 400;  // draws rank 0 or rank 1 with near certainty
    CheckResult bad = check_sampled(g, all);
    CHECK_FALSE(bad.ok);
    CHECK(bad.kind == Violation::Mismatched);
    g.emit = [real](int r, Program* p) {
        real(r, p);
        if (r == 0) p->steps.pop_back();
    };
    bad = check_sampled(g, all);
    CHECK_FALSE(bad.ok);
    CHECK((bad.kind == Violation::UnmatchedSend || bad.kind == Violation::UnmatchedRecv));
    // The same blocks, cut into messages differently at the two ends.
    g.emit = [real](int r, Program* p) {
        real(r, p);
        if (r == 0) p->steps[3].sends[0].segment_blocks = 1;
    };
    bad = check_sampled(g, all);
    CHECK_FALSE(bad.ok);
    CHECK(bad.kind == Violation::Mismatched);
    CHECK(bad.message.find("segment_blocks 1") != std::string::npos);
}

namespace {

// Model parameter sets for the closed forms: the paper's model, per-message
// and shift costs, and an incast-heavy one priced for a non-blocking call
// (where rb's leaves out-price its root and rd's receiving end its sender).
std::vector<ModelParams> closed_form_models() {
    std::vector<ModelParams> v = {net(0), net(3e-6)};
    v[1].inter.alpha_shift = 5e-6;
    ModelParams incast = net(1e-7);
    incast.inter.w_t = 0;
    incast.inter.epsilon = 5e-9;
    incast.inter.alpha_shift = 2e-6;
    incast.nonblocking_step = 4e-6;
    v.push_back(model_for_call(incast, true));
    return v;
}

// The candidates the closed forms cover at P, each as the selector would
// offer it, hcps factorisations up to `max_hcps` of them.
std::vector<std::pair<std::string, std::string>> closed_form_variants(int P, size_t max_hcps) {
    std::vector<std::pair<std::string, std::string>> v = {
        {"ring", ""}, {"cps", ""}, {"rb", "root=0"}, {"rb", ""}, {"hcps", ""}};
    if ((P & (P - 1)) != 0) {
        v.push_back({"rd", ""});
        v.push_back({"rhd", ""});
        v.push_back({"rhd", "distance=doubling"});
    }
    int L = 0;
    for (int N = P; N > 1; N = (N + 1) / 2) ++L;
    for (int r = 0; r <= L; ++r) v.push_back({"butterfly", "group=cyclic,r=" + std::to_string(r)});
    if ((P & (P - 1)) != 0) v.push_back({"butterfly", "r=1"});  // cyclic by default
    size_t n = 0;
    for (const auto& f : ordered_factorizations(P))
        if (f.size() >= 2 && n++ < max_hcps) v.push_back({"hcps", "factors=" + format_factors(f)});
    return v;
}

// `link_ranks` false: the partner whose link set a step's pace may be named
// differently (the one-node quotient names its translate in node 0).
void check_same_prediction(const Prediction& a, const Prediction& b, bool link_ranks = true) {
    REQUIRE(a.status.is_ok());
    REQUIRE(b.status.is_ok());
    // Bit for bit: the decision table keeps the first of equal prices.
    CHECK(b.seconds == a.seconds);
    CHECK(b.terms.alpha == a.terms.alpha);
    CHECK(b.terms.beta == a.terms.beta);
    CHECK(b.terms.gamma == a.terms.gamma);
    CHECK(b.terms.delta == a.terms.delta);
    CHECK(b.terms.epsilon == a.terms.epsilon);
    CHECK(b.coefficients.steps_inter == a.coefficients.steps_inter);
    CHECK(b.coefficients.extra_msgs_inter == a.coefficients.extra_msgs_inter);
    CHECK(b.coefficients.shift_steps_inter == a.coefficients.shift_steps_inter);
    CHECK(b.coefficients.bytes_inter == a.coefficients.bytes_inter);
    CHECK(b.coefficients.incast_bytes_inter == a.coefficients.incast_bytes_inter);
    CHECK(b.coefficients.reduce_bytes == a.coefficients.reduce_bytes);
    CHECK(b.coefficients.memory_bytes == a.coefficients.memory_bytes);
    REQUIRE(b.critical_path.size() == a.critical_path.size());
    for (size_t k = 0; k < a.critical_path.size(); ++k) {
        const PathStep &x = a.critical_path[k], &y = b.critical_path[k];
        INFO("critical path entry " << k << ": rank " << x.rank << " step " << x.step);
        CHECK(y.rank == x.rank);
        CHECK(y.step == x.step);
        if (link_ranks) CHECK(y.link_rank == x.link_rank);
        CHECK(y.link_step == x.link_step);
        CHECK(y.start == x.start);
        CHECK(y.end == x.end);
        CHECK(y.link == x.link);
        CHECK(y.fan_in_degree == x.fan_in_degree);
        CHECK(y.terms.gamma == x.terms.gamma);
        CHECK(y.terms.total() == x.terms.total());
    }
}

// Compares the closed form's predictions with `model`'s (and `full`'s,
// when given: every rank's program, partners named as themselves rather
// than their translates) under every model in `models`, at one and several
// elements per block; returns how many (model, count) pairs it compared.
int compare_closed_form(const std::vector<ModelParams>& models, int nblocks, const PlanModel& model,
                        const ClosedForm& cf, const PlanModel* full = nullptr,
                        bool full_link_ranks = true) {
    int compared = 0;
    for (const ModelParams& mp : models)
        for (const auto& [per_block, elem] : {std::pair<size_t, size_t>{1, 4}, {3, 1}, {4096, 4}}) {
            const size_t count = per_block * static_cast<size_t>(nblocks);
            INFO("count " << count << " x " << elem << " B, alpha_msg " << mp.inter.alpha_msg
                          << ", nonblocking " << mp.price_nonblocking);
            const Prediction p = cf.predict(count, elem, mp);
            check_same_prediction(model.predict(count, elem, mp), p);
            if (full) check_same_prediction(full->predict(count, elem, mp), p, full_link_ranks);
            ++compared;
        }
    return compared;
}

}  // namespace

TEST_CASE("closed-form prices equal the generated plan's model", "[per-rank][cost-model][closed-form]") {
    const std::vector<ModelParams> models = closed_form_models();
    int compared = 0;
    // Primes, 2^k ± 1, powers of two, products of small and large factors.
    for (int P : {2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 96, 97,
                  100, 127, 128, 129, 255, 256, 257, 720, 1000, 1021, 1023, 1024, 1025, 4099}) {
        const size_t max_hcps = P <= 257 ? 1000 : 12;
        for (const auto& v : closed_form_variants(P, max_hcps)) {
            if (P == 4099 && v.first != "rd" && v.first != "butterfly") continue;  // test time
            ParamMap pm;
            REQUIRE(parse_params(v.second, &pm).is_ok());
            ClosedForm cf;
            INFO(v.first << " " << v.second << " P=" << P);
            REQUIRE(ClosedForm::make(v.first, pm, P, RankMap{}, &cf));
            // The generated plan's model: every rank's program up to 257
            // ranks, beyond as the decision table builds it (the quotient,
            // itself compared with the full model above).
            const RankGenerator g = prepared(v.first, P, v.second);
            REQUIRE(cf.nblocks() == g.header.nblocks);
            PlanModel model;
            REQUIRE(PlanModel::build(g, RankMap{}, &model, P > 257).is_ok());
            compared += compare_closed_form(models, g.header.nblocks, model, cf);
        }
    }
    CHECK(compared > 2500);
}

namespace {

int ceil_log2(int P) {
    int L = 0;
    for (int N = P; N > 1; N = (N + 1) / 2) ++L;
    return L;
}

// The candidates the closed forms cover with K ranks per node: the
// selector's (ring, cps, rb, rd, hcps, every r of the cyclic, xor and K x
// P/K butterflies) plus butterflies over the first hcps factorisations as
// groups (r = 0, 1, L/2, L), up to `max_hcps` factorisations.
std::vector<std::pair<std::string, std::string>> ppn_variants(int P, int K, size_t max_hcps) {
    std::vector<std::pair<std::string, std::string>> v = closed_form_variants(P, max_hcps);
    const bool pow2 = (P & (P - 1)) == 0;
    std::vector<std::string> groups;
    if (pow2) groups.push_back("xor");
    if (P % K == 0 && K < P) groups.push_back(std::to_string(K) + "x" + std::to_string(P / K));
    for (const std::string& grp : groups) {
        std::vector<int> radix;
        if (grp == "xor")
            for (int n = P; n > 1; n /= 2) radix.push_back(2);
        else
            REQUIRE(parse_factors(grp, &radix).is_ok());
        int L = 0;
        for (int n : radix)
            for (int N = n; N > 1; N = (N + 1) / 2) ++L;
        for (int r = 0; r <= L; ++r)
            v.push_back({"butterfly", "group=" + grp + ",r=" + std::to_string(r)});
    }
    size_t n = 0;
    for (const auto& f : ordered_factorizations(P)) {
        if (f.size() < 2 || n++ >= max_hcps) continue;
        int L = 0;
        for (int x : f)
            for (int N = x; N > 1; N = (N + 1) / 2) ++L;
        for (int r : {0, 1, L / 2, L})
            v.push_back({"butterfly", "group=" + format_factors(f) + ",r=" + std::to_string(r)});
    }
    return v;
}

}  // namespace

TEST_CASE("closed forms with several ranks per node equal the generated plan's model",
          "[per-rank][cost-model][closed-form]") {
    const std::vector<ModelParams> models = closed_form_models();
    int compared = 0, declined = 0;
    // Primes, 2^k ± 1, powers of two, products of small and large factors;
    // beyond 257 ranks (test time) rb, rd, rhd (to 1025) and the butterflies
    // at r = 0, 1, L.
    for (int P : {3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 97, 100,
                  127, 128, 129, 255, 256, 257, 1021, 1024, 1025, 4099})
        for (int K : {2, 3, 4, 8, P}) {  // K = P: one node (rb, rd and rhd only)
            if (K > P || (K == P && P > 129)) continue;
            const RankMap map = RankMap::by_slot(P, K);
            REQUIRE(ClosedForm::ranks_per_node(map, P) == K);
            const size_t max_hcps = P <= 64 ? 1000 : P <= 257 ? 8 : 0;
            for (const auto& v : ppn_variants(P, K, max_hcps)) {
                const size_t at = v.second.find("r=");
                const std::string r = at == std::string::npos ? "" : v.second.substr(at + 2);
                const bool big = r == "0" || r == "1" || r == std::to_string(ceil_log2(P));
                const bool folded = v.first == "rd" || v.first == "rhd";  // non-powers of two here
                if (P > 257 && !folded && v.first != "rb" && !big) continue;
                if (P > 1025 && v.first == "rhd") continue;
                ParamMap pm;
                REQUIRE(parse_params(v.second, &pm).is_ok());
                INFO(v.first << " " << v.second << " P=" << P << " K=" << K);
                const RankGenerator g = prepared(v.first, P, v.second);
                ClosedForm cf;
                const bool has = ClosedForm::make(v.first, pm, P, map, &cf);
                // A closed form wherever the quotient applies, and for rb, rd
                // and rhd (no symmetry) always.
                const bool symmetric = v.first != "rb" && !folded;
                CHECK(has == (symmetric ? PlanModel::quotient_applies(g.header, map) : true));
                if (!has) {
                    ++declined;
                    continue;
                }
                // As the decision table prices it: the one-node quotient
                // where it applies, else every rank's program.
                PlanModel model;
                REQUIRE(PlanModel::build(g, map, &model, true).is_ok());
                CHECK(model.quotient() == symmetric);
                PlanModel full;
                if (P <= 64) REQUIRE(PlanModel::build(g, map, &full, false).is_ok());
                REQUIRE(cf.nblocks() == g.header.nblocks);
                // Up to 64 ranks also every rank's program, which the table
                // prices there.
                compared += compare_closed_form(models, g.header.nblocks, model, cf,
                                                full.nranks() > 0 ? &full : nullptr, !symmetric);
            }
        }
    CHECK(compared > 10000);
    CHECK(declined > 100);
}

TEST_CASE("closed forms are offered only where they are exact", "[per-rank][cost-model][closed-form]") {
    ClosedForm cf;
    ParamMap none, pm;
    // The placements read: one rank per node, K consecutive ranks per node.
    CHECK(ClosedForm::ranks_per_node(RankMap{}, 100) == 1);
    CHECK(ClosedForm::ranks_per_node(RankMap::by_slot(100, 1), 100) == 1);
    CHECK(ClosedForm::ranks_per_node(RankMap::by_slot(100, 4), 100) == 4);
    CHECK(ClosedForm::ranks_per_node(RankMap::by_slot(100, 3), 100) == 3);
    CHECK(ClosedForm::ranks_per_node(RankMap::by_slot(100, 200), 100) == 100);
    RankMap round_robin;
    for (int r = 0; r < 100; ++r) round_robin.node.push_back(r % 4);
    CHECK(ClosedForm::ranks_per_node(round_robin, 100) == 0);
    CHECK(ClosedForm::ranks_per_node(RankMap::by_slot(99, 4), 100) == 0);  // ranks 99.. unlisted
    RankMap tree = RankMap::by_slot(100, 4);
    tree.tree = std::make_shared<SwitchTree>();
    CHECK(ClosedForm::ranks_per_node(tree, 100) == 0);
    CHECK_FALSE(ClosedForm::make("ring", none, 100, round_robin, &cf));
    CHECK_FALSE(ClosedForm::make("ring", none, 100, tree, &cf));
    CHECK(ClosedForm::make("ring", none, 100, RankMap{}, &cf));
    CHECK(ClosedForm::make("ring", none, 100, RankMap::by_slot(100, 4), &cf));
    // Nodes that are not translates of node 0 (the quotient's condition):
    // 3 per node on 100 ranks, hcps 3x4 with 2 per node, 4x25 with 3.
    CHECK_FALSE(ClosedForm::make("ring", none, 100, RankMap::by_slot(100, 3), &cf));
    CHECK_FALSE(ClosedForm::make("ring", none, 100, RankMap::by_slot(100, 100), &cf));
    REQUIRE(parse_params("factors=3x4", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("hcps", pm, 12, RankMap::by_slot(12, 2), &cf));
    CHECK(ClosedForm::make("hcps", pm, 12, RankMap::by_slot(12, 3), &cf));
    REQUIRE(parse_params("group=4x25", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("butterfly", pm, 100, RankMap::by_slot(100, 3), &cf));
    CHECK(ClosedForm::make("butterfly", pm, 100, RankMap::by_slot(100, 2), &cf));
    // rb, rd and rhd: any K (rd's and rhd's every rank with K > 1).
    CHECK(ClosedForm::make("rb", none, 100, RankMap::by_slot(100, 3), &cf));
    CHECK(ClosedForm::make("rd", none, 100, RankMap::by_slot(100, 3), &cf));
    CHECK_FALSE(ClosedForm::make("ring", none, 1, RankMap{}, &cf));
    // rd and rhd on 2^k are symmetric (the quotient's); rhd only the
    // generator's two distances.
    CHECK_FALSE(ClosedForm::make("rd", none, 128, RankMap{}, &cf));
    CHECK_FALSE(ClosedForm::make("rhd", none, 128, RankMap{}, &cf));
    CHECK(ClosedForm::make("rhd", none, 100, RankMap{}, &cf));
    CHECK(ClosedForm::make("rhd", none, 100, RankMap::by_slot(100, 2), &cf));
    REQUIRE(parse_params("distance=doubling", &pm).is_ok());
    CHECK(ClosedForm::make("rhd", pm, 100, RankMap{}, &cf));
    CHECK(ClosedForm::make("rhd", pm, 100, RankMap::by_slot(100, 4), &cf));
    REQUIRE(parse_params("distance=tripling", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("rhd", pm, 100, RankMap{}, &cf));
    CHECK_FALSE(ClosedForm::make("rhd", pm, 100, RankMap::by_slot(100, 4), &cf));
    // rd and rhd with every rank modelled: up to kClosedFormMaxRankSteps
    // steps (rhd: 1.11·10⁶ at 65,535 ranks, 2.10·10⁶ at 65,537; rd:
    // 1.19·10⁶ at 10⁵, 2.30·10⁶ at 1.5·10⁵).
    CHECK(ClosedForm::make("rhd", none, 65535, 2, &cf));
    CHECK_FALSE(ClosedForm::make("rhd", none, 65537, 2, &cf));
    CHECK(ClosedForm::make("rhd", none, 65537, 1, &cf));
    CHECK(ClosedForm::make("rd", none, 100000, 8, &cf));
    CHECK_FALSE(ClosedForm::make("rd", none, 150000, 8, &cf));
    // Params the generators refuse.
    REQUIRE(parse_params("group=xor,r=1", &pm).is_ok());
    CHECK(ClosedForm::make("butterfly", pm, 128, RankMap{}, &cf));
    CHECK_FALSE(ClosedForm::make("butterfly", pm, 100, RankMap{}, &cf));
    REQUIRE(parse_params("group=4x24", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("butterfly", pm, 100, RankMap{}, &cf));
    REQUIRE(parse_params("r=8", &pm).is_ok());  // L = 7 for P = 100
    CHECK_FALSE(ClosedForm::make("butterfly", pm, 100, RankMap{}, &cf));
    REQUIRE(parse_params("root=3", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("rb", pm, 100, RankMap{}, &cf));
    REQUIRE(parse_params("factors=3x33", &pm).is_ok());  // 99, not 100
    CHECK_FALSE(ClosedForm::make("hcps", pm, 100, RankMap{}, &cf));
    REQUIRE(parse_params("order=rev", &pm).is_ok());
    CHECK_FALSE(ClosedForm::make("rd", pm, 100, RankMap{}, &cf));
    // Unequal blocks are the generated plan's to price.
    REQUIRE(ClosedForm::make("ring", none, 100, RankMap{}, &cf));
    const Prediction p = cf.predict(150, 4, net(0));
    CHECK_FALSE(p.status.is_ok());
    CHECK(std::isinf(p.seconds));
    CHECK(cf.predict(300, 4, net(0)).status.is_ok());
}
