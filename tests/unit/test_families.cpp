// The GenModel families (rb, cps, hcps, rhd) and rd: every P and factorisation
// through the checker, their parameters and their structure.
#include <catch2/catch.hpp>

#include "sum_check.hpp"
#include <set>
#include <string>
#include <vector>

#include "tests/unit/make_plan.hpp"
#include "plan/checker.hpp"
#include "plan/hcps.hpp"
#include "plan/rd.hpp"
#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tests/support/loopback.hpp"
#include "runtime/reduce.hpp"

using namespace genx;

namespace {


void require_valid(const Plan& plan) {
    CheckResult res = check_plan(plan);
    INFO(plan.algorithm << " P=" << plan.nranks << " params='" << plan.params
                        << "': " << res.message);
    REQUIRE(res.ok);
    if (plan.order_preserving) REQUIRE(res.order_preserving);
}

// Largest fan-in of any fused reduce and the number of distinct peers a
// rank receives from in one step, over the whole plan.
int max_reduce_inputs(const Plan& plan) {
    size_t k = 0;
    for (const Program& p : plan.programs)
        for (const Step& s : p.steps)
            for (const LocalOp& op : s.ops) k = std::max(k, op.srcs.size() + 1);
    return static_cast<int>(k);
}


}  // namespace

TEST_CASE("rb, cps and rhd pass the checker for P = 1..64", "[families]") {
    for (int P = 1; P <= 64; ++P) {
        for (const char* name : {"cps", "rhd", "hcps"}) require_valid(make_plan(name, P));
        for (int root : {0, P / 2, P - 1}) {
            Plan rb = make_plan("rb", P, "root=" + std::to_string(root));
            require_valid(rb);
            CHECK(rb.params == "root=" + std::to_string(root));
            // With root 0 the root folds x0 ⊕ x1 ⊕ … in rank order.
            CHECK(check_plan(rb).order_preserving == (root == 0 || P == 1));
        }
    }
}

TEST_CASE("hcps passes the checker for every ordered factorisation of P = 1..64", "[families]") {
    int plans = 0;
    for (int P = 1; P <= 64; ++P) {
        for (const std::vector<int>& f : ordered_factorizations(P)) {
            if (f.empty()) continue;
            Plan plan = make_plan("hcps", P, "factors=" + format_factors(f));
            require_valid(plan);
            CHECK(plan.max_steps() == 2 * static_cast<int>(f.size()));
            // Round i folds exactly f_i inputs at once.
            CHECK(max_reduce_inputs(plan) == *std::max_element(f.begin(), f.end()));
            ++plans;
        }
    }
    // Sum over P <= 64 of the number of ordered factorisations.
    CHECK(plans == 440);
}

TEST_CASE("ordered factorisations and the default hcps factors", "[families]") {
    // 12 = 12, 6·2, 4·3, 3·4, 3·2·2, 2·6, 2·3·2, 2·2·3.
    auto f12 = ordered_factorizations(12);
    CHECK(f12.size() == 8);
    CHECK(std::set<std::vector<int>>(f12.begin(), f12.end()).size() == 8);
    CHECK(f12.front() == std::vector<int>{12});
    // 2^6 has 2^5 compositions.
    CHECK(ordered_factorizations(64).size() == 32);
    CHECK(ordered_factorizations(64, 2).size() == 6);  // 64, 32·2, 16·4, 8·8, 4·16, 2·32
    CHECK(ordered_factorizations(1) == std::vector<std::vector<int>>{{}});
    CHECK(ordered_factorizations(13) == std::vector<std::vector<int>>{{13}});

    CHECK(default_hcps_factors(1).empty());
    CHECK(default_hcps_factors(8) == std::vector<int>{8});
    CHECK(default_hcps_factors(12) == std::vector<int>{6, 2});
    CHECK(default_hcps_factors(15) == std::vector<int>{5, 3});
    CHECK(default_hcps_factors(16) == std::vector<int>{8, 2});
    CHECK(default_hcps_factors(24) == std::vector<int>{8, 3});
    CHECK(default_hcps_factors(64) == std::vector<int>{8, 8});
    CHECK(default_hcps_factors(13) == std::vector<int>{13});
    CHECK(default_hcps_factors(26) == std::vector<int>{13, 2});
    CHECK(default_hcps_factors(1024) == std::vector<int>{8, 8, 8, 2});
    CHECK(make_plan("hcps", 12).params == "factors=6x2");
}

TEST_CASE("hcps groups are orthogonal and runs contiguous", "[families]") {
    Plan plan = make_plan("hcps", 12, "factors=6x2");
    // Round 0: rank 7 (digits d0 = 1, d1 = 1) talks to 6, 8..11 only.
    std::set<int> round0, round1;
    for (const Transfer& t : plan.programs[7].steps[0].sends) round0.insert(t.peer);
    for (const Transfer& t : plan.programs[7].steps[1].sends) round1.insert(t.peer);
    CHECK(round0 == std::set<int>{6, 8, 9, 10, 11});
    CHECK(round1 == std::set<int>{1});
    // Its round-0 share is blocks 2..3 (digit 0 most significant), then
    // block 3 after round 1; every transfer is one run of blocks.
    CHECK(plan.programs[7].steps[0].ops.at(0).blocks == std::vector<int>{2, 3});
    CHECK(plan.programs[7].steps[1].ops.at(0).blocks == std::vector<int>{3});
    for (const Program& p : plan.programs)
        for (const Step& s : p.steps)
            for (const Transfer& t : s.sends)
                for (size_t k = 1; k < t.blocks.size(); ++k)
                    CHECK(t.blocks[k] == t.blocks[k - 1] + 1);
}

TEST_CASE("rhd folds non-powers of two into adjacent partners", "[families]") {
    Plan p6 = make_plan("rhd", 6);
    CHECK(p6.nblocks == 4);
    // Extra ranks 0 and 2: give everything away, get the result back.
    for (int x : {0, 2}) {
        REQUIRE(p6.programs[x].steps.size() == 2);
        CHECK(p6.programs[x].steps[0].sends.at(0).peer == x + 1);
        CHECK(p6.programs[x].steps[1].recvs.at(0).peer == x + 1);
    }
    // Fold targets: fold + 2·log2(4) + unfold; the others 2·log2(4).
    CHECK(p6.programs[1].steps.size() == 6);
    CHECK(p6.programs[4].steps.size() == 4);
    CHECK(p6.max_steps() == 6);  // 2⌈log2 6⌉
    CHECK(make_plan("rhd", 16).max_steps() == 8);
    CHECK(make_plan("rhd", 1).max_steps() == 0);
}

TEST_CASE("rhd distance=doubling: Open MPI's rabenseifner order, the same steps and bytes",
          "[families]") {
    for (int P = 1; P <= 40; ++P) {
        const Plan up = make_plan("rhd", P, "distance=doubling");
        const Plan down = make_plan("rhd", P);
        const CheckResult res = check_plan(up);
        INFO("P=" << P << ": " << res.message);
        REQUIRE(res.ok);
        CHECK(up.max_steps() == down.max_steps());
        for (int r = 0; r < P; ++r) {
            const Program& a = up.programs[static_cast<size_t>(r)];
            const Program& b = down.programs[static_cast<size_t>(r)];
            REQUIRE(a.steps.size() == b.steps.size());
            for (size_t k = 0; k < a.steps.size(); ++k)
                for (size_t t = 0; t < a.steps[k].sends.size(); ++t)
                    CHECK(a.steps[k].sends[t].blocks.size() == b.steps[k].sends.at(t).blocks.size());
        }
    }
    // P = 8: tuned's first and largest exchange pairs neighbours, genx's
    // default pairs ranks 4 apart; the allgather's last step reverses both.
    const Plan up = make_plan("rhd", 8, "distance=doubling");
    const Plan down = make_plan("rhd", 8);
    CHECK(up.programs[0].steps[0].sends.at(0).peer == 1);
    CHECK(up.programs[0].steps[0].sends.at(0).blocks.size() == 4);
    CHECK(down.programs[0].steps[0].sends.at(0).peer == 4);
    CHECK(up.programs[0].steps.back().sends.at(0).peer == 1);
    CHECK(up.programs[0].steps.back().sends.at(0).blocks.size() == 4);
    // Folding as tuned's rd does: rank 0 gives its vector to rank 1.
    CHECK(make_plan("rhd", 6, "distance=doubling").programs[0].steps[0].sends.at(0).peer == 1);
    ParamMap bad{{"distance", "sideways"}};
    RankGenerator g;
    const Status st = prepare("rhd", 8, bad, &g);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("sideways") != std::string::npos);
}

TEST_CASE("rd passes the checker for P = 1..64 and 2^k-1, 2^k+1 and primes to 1025", "[families]") {
    std::vector<int> Ps;
    for (int P = 1; P <= 64; ++P) Ps.push_back(P);
    for (int P : {127, 128, 129, 255, 257, 509, 511, 513, 1021, 1023, 1024, 1025}) Ps.push_back(P);
    for (int P : Ps) {
        Plan plan = make_plan("rd", P);
        require_valid(plan);
        int p2 = 1, k = 0;
        while (p2 * 2 <= P) p2 *= 2, ++k;
        // log2 P pairwise steps on 2^k ranks; fold + ⌊log2 P⌋ + unfold otherwise.
        CHECK(plan.max_steps() == (P == 1 ? 0 : (p2 == P ? k : k + 2)));
        CHECK(plan.nblocks == 1);
        // Every step of every rank talks to one peer at most, both ways the
        // same one: the pairwise property rd exists for.
        for (const Program& prog : plan.programs)
            for (const Step& st : prog.steps) {
                CHECK(st.sends.size() + st.recvs.size() >= 1);
                CHECK(st.sends.size() <= 1);
                CHECK(st.recvs.size() <= 1);
                if (!st.sends.empty() && !st.recvs.empty())
                    CHECK(st.sends[0].peer == st.recvs[0].peer);
            }
    }
}

TEST_CASE("rd folds as tuned's recursive doubling does and equals butterfly xor on 2^k", "[families]") {
    // P = 6: fold 0->1, 2->3; new ranks 1:0 3:1 4:2 5:3; d=1: 1<->3, 4<->5;
    // d=2: 1<->4, 3<->5; unfold 1->0, 3->2 (Open MPI's
    // ompi_coll_base_allreduce_intra_recursivedoubling pairs the same ranks).
    Plan p6 = make_plan("rd", 6);
    for (int x : {0, 2}) {
        REQUIRE(p6.programs[x].steps.size() == 2);
        CHECK(p6.programs[x].steps[0].sends.at(0).peer == x + 1);
        CHECK(p6.programs[x].steps[1].recvs.at(0).peer == x + 1);
    }
    auto peers = [&](int x) {
        std::vector<int> v;
        for (const Step& st : p6.programs[x].steps)
            v.push_back(st.sends.empty() ? st.recvs.at(0).peer : st.sends.at(0).peer);
        return v;
    };
    CHECK(peers(1) == std::vector<int>{0, 3, 4, 0});
    CHECK(peers(3) == std::vector<int>{2, 1, 5, 2});
    CHECK(peers(4) == std::vector<int>{5, 1});
    CHECK(peers(5) == std::vector<int>{4, 3});
    // On 2^k ranks it is the butterfly over (Z_2)^k with no distribution
    // phase: the same partner at every step and the whole vector each time.
    for (int P : {2, 4, 8, 16, 32}) {
        Plan rd = make_plan("rd", P);
        int k = 0;
        while ((1 << k) < P) ++k;
        Plan bf = make_plan("butterfly", P, "group=xor,r=" + std::to_string(k));
        REQUIRE(rd.max_steps() == bf.max_steps());
        for (int x = 0; x < P; ++x)
            for (size_t s = 0; s < rd.programs[x].steps.size(); ++s) {
                const Step& a = rd.programs[x].steps[s];
                const Step& b = bf.programs[x].steps[s];
                REQUIRE(a.sends.size() == 1);
                REQUIRE(b.sends.size() == 1);
                CHECK(a.sends[0].peer == b.sends[0].peer);
                CHECK(b.sends[0].blocks.size() == static_cast<size_t>(bf.nblocks));
            }
    }
    // Candidates: only where no butterfly group is pairwise.
    CandidateContext ctx;
    std::vector<std::string> c;
    ctx.nranks = 8;
    rd_candidates(ctx, &c);
    CHECK(c.empty());
    ctx.nranks = 6;
    rd_candidates(ctx, &c);
    CHECK(c == std::vector<std::string>{""});
}

TEST_CASE("family parameters are validated", "[families]") {
    Plan plan;
    ParamMap pm;
    auto gen = [&](const std::string& name, int P, const std::string& params) {
        REQUIRE(parse_params(params, &pm).is_ok());
        return generate(name, P, pm, &plan);
    };
    Status st = gen("hcps", 12, "factors=5x2");
    CHECK(st.code() == Code::InvalidArgument);
    CHECK(st.message().find("do not multiply to the 12 ranks") != std::string::npos);
    st = gen("hcps", 12, "factors=1x12");
    CHECK(st.code() == Code::InvalidArgument);
    CHECK(st.message().find("below 2") != std::string::npos);
    st = gen("hcps", 12, "factors=6x");
    CHECK(st.code() == Code::InvalidArgument);
    CHECK(st.message().find("not a positive integer") != std::string::npos);
    CHECK(gen("hcps", 12, "factors=2x2x3").is_ok());
    CHECK(plan.params == "factors=2x2x3");
    CHECK(gen("hcps", 1, "factors=1").is_ok());
    st = gen("rb", 12, "root=12");
    CHECK(st.code() == Code::InvalidArgument);
    CHECK(st.message().find("0..11") != std::string::npos);
    CHECK(gen("rb", 12, "root=-1").code() == Code::InvalidArgument);
    CHECK(gen("cps", 4, "factors=2x2").code() == Code::InvalidArgument);
}

TEST_CASE("the families compute sums on the loopback transport", "[families][loopback]") {
    // Every ordered factorisation up to P = 16 and a few larger shapes;
    // counts below, at and above P, uneven, and segmented messages.
    std::vector<std::pair<std::string, std::string>> runs;
    for (int P = 2; P <= 16; ++P) runs.emplace_back("rd:" + std::to_string(P), "");
    for (int P = 2; P <= 16; ++P)
        for (const std::vector<int>& f : ordered_factorizations(P))
            if (f.size() >= 2)
                runs.emplace_back("hcps:" + std::to_string(P), "factors=" + format_factors(f));
    for (int P : {17, 24, 31, 33}) {
        runs.emplace_back("cps:" + std::to_string(P), "");
        runs.emplace_back("rhd:" + std::to_string(P), "");
        runs.emplace_back("rd:" + std::to_string(P), "");
        runs.emplace_back("hcps:" + std::to_string(P), "");
        runs.emplace_back("rb:" + std::to_string(P), "root=" + std::to_string(P / 3));
    }
    ExecOptions small;
    small.segment_bytes = 64;
    small.window = 2;
    int k = 0;
    for (const auto& r : runs) {
        const std::string name = r.first.substr(0, r.first.find(':'));
        const int P = std::stoi(r.first.substr(r.first.find(':') + 1));
        Plan plan = make_plan(name, P, r.second);
        // A plan the checker rejects could hang the loopback until its
        // timeout; fail fast instead.
        REQUIRE(check_plan(plan).ok);
        const size_t p = static_cast<size_t>(P);
        Status st =
            run_sum(plan, {0, 1, p - 1, p + 1, 3 * p + 5, 1000}, (k++ % 2) ? small : ExecOptions());
        INFO(name << " " << r.second << " P=" << P << ": " << st.message());
        CHECK(st.is_ok());
    }
}
