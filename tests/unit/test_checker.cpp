// The checker catches bugs planted in an otherwise correct ring plan, each
// reported with its kind and location, and tracks contribution order.
#include <catch2/catch.hpp>

#include "plan/checker.hpp"
#include "plan/registry.hpp"

using namespace genx;

namespace {

constexpr int P = 5;

Plan ring() {
    Plan p;
    REQUIRE(generate("ring", P, {}, &p).is_ok());
    REQUIRE(check_plan(p).ok);
    return p;
}

Step& step(Plan& p, int r, int s) {
    return p.programs[static_cast<size_t>(r)].steps[static_cast<size_t>(s)];
}

int mod(int x) { return ((x % P) + P) % P; }

void expect(const CheckResult& res, Violation kind, int rank, int step, int block) {
    INFO(violation_name(res.kind) << ": " << res.message);
    CHECK_FALSE(res.ok);
    CHECK(res.kind == kind);
    CHECK(res.rank == rank);
    CHECK(res.step == step);
    CHECK(res.block == block);
    CHECK(!res.message.empty());
}

}  // namespace

TEST_CASE("checker: dropped contribution", "[checker]") {
    Plan p = ring();
    // Rank 2 forgets to fold in block 0 (received at step 1) and forwards
    // its own partial; ranks 0 and 1 are lost from block 0 everywhere.
    auto& ops = step(p, 2, 1).ops;
    REQUIRE(ops.at(0).blocks == std::vector<int>{0});
    ops.clear();
    const CheckResult r = check_plan(p);
    expect(r, Violation::MissingContribution, 0, -1, 0);
    CHECK(r.message.find("0,1") != std::string::npos);
}

TEST_CASE("checker: doubled contribution", "[checker]") {
    Plan p = ring();
    // Rank 3 folds the block it received at step 2 in twice.
    auto& ops = step(p, 3, 2).ops;
    ops.push_back(ops.at(0));
    expect(check_plan(p), Violation::DuplicateContribution, 3, 2, mod(3 - 2 - 1));
}

TEST_CASE("checker: two transfers swapped", "[checker]") {
    Plan p = ring();
    // Rank 1 sends its step-1 and step-2 blocks in the other order.
    std::swap(step(p, 1, 1).sends.at(0).blocks, step(p, 1, 2).sends.at(0).blocks);
    expect(check_plan(p), Violation::Misordered, 1, 1, mod(1 - 2));
}

TEST_CASE("checker: read of an empty slot", "[checker]") {
    Plan p = ring();
    // Rank 4 reduces its own block from slot 0, which never receives it.
    step(p, 4, 0).ops.at(0).blocks = {4};
    expect(check_plan(p), Violation::UnwrittenRead, 4, 0, 4);

    Plan q = ring();
    // A send out of a slot block not yet written.
    step(q, 0, 0).sends.at(0).buffer = 0;
    expect(check_plan(q), Violation::UnwrittenRead, 0, 0, 0);
}

TEST_CASE("checker: send with no receive", "[checker]") {
    Plan p = ring();
    // Rank 3 drops its step-1 receive (and the reduce of it): rank 2's
    // step-1 send has no counterpart.
    step(p, 3, 1).recvs.clear();
    step(p, 3, 1).ops.clear();
    expect(check_plan(p), Violation::UnmatchedSend, 2, 1, mod(2 - 1));

    Plan q = ring();
    // An extra send after the end.
    Step extra;
    extra.sends.push_back(Transfer{1, {3}, kResult});
    q.programs[0].steps.push_back(extra);
    expect(check_plan(q), Violation::UnmatchedSend, 0, 2 * (P - 1), 3);
}

TEST_CASE("checker: receive with no send", "[checker]") {
    Plan p = ring();
    Step extra;
    extra.recvs.push_back(Transfer{3, {1}, kResult});
    p.programs[2].steps.insert(p.programs[2].steps.begin(), extra);
    // Rank 2's receives from 3 now outnumber 3's sends to 2.
    const CheckResult r = check_plan(p);
    expect(r, Violation::UnmatchedRecv, 2, 0, 1);
}

TEST_CASE("checker: deadlock from a cyclic wait", "[checker]") {
    Plan p = ring();
    // Every rank receives (and reduces) first, then sends in a step of its
    // own: each waits for its left neighbour's send, which is never posted.
    for (int r = 0; r < P; ++r) {
        auto& steps = p.programs[static_cast<size_t>(r)].steps;
        Step send_only;
        send_only.sends = steps[0].sends;
        steps[0].sends.clear();
        steps.insert(steps.begin() + 1, send_only);
    }
    const CheckResult r = check_plan(p);
    expect(r, Violation::Deadlock, 0, 0, -1);
    CHECK(r.message.find("cycle") != std::string::npos);

    // The same split on one rank only delays the ring; it does not hang.
    Plan q = ring();
    auto& steps = q.programs[2].steps;
    Step send_only;
    send_only.sends = steps[0].sends;
    steps[0].sends.clear();
    steps.insert(steps.begin() + 1, send_only);
    CHECK(check_plan(q).ok);
}

TEST_CASE("checker: mismatched block lists", "[checker]") {
    Plan p = ring();
    // Rank 4 expects two blocks at step 2 where rank 3 sends one.
    auto& rv = step(p, 4, 2).recvs.at(0);
    REQUIRE(rv.blocks == std::vector<int>{mod(4 - 2 - 1)});
    rv.blocks.push_back(mod(4 - 2));
    expect(check_plan(p), Violation::Mismatched, 3, 2, mod(4 - 2));
}

TEST_CASE("checker: a send and its receive cut into messages differently", "[checker]") {
    Plan p = ring();
    // Rank 3's send at step 2 says one message per block; rank 4's receive
    // keeps the plan-wide segment size: their messages would not match.
    auto& sd = step(p, 3, 2).sends.at(0);
    sd.segment_blocks = 1;
    const CheckResult res = check_plan(p);
    expect(res, Violation::Mismatched, 3, 2, sd.blocks.front());
    CHECK(res.message.find("segment_blocks 1") != std::string::npos);
    CHECK(res.message.find("the plan-wide segment size") != std::string::npos);
    // Both sides agreeing is a valid plan.
    step(p, 4, 2).recvs.at(0).segment_blocks = 1;
    CHECK(check_plan(p).ok);
    // A negative size is malformed.
    sd.segment_blocks = -2;
    expect(check_plan(p), Violation::Malformed, 3, 2, -1);
}

TEST_CASE("checker: structural errors", "[checker]") {
    {
        Plan p = ring();
        step(p, 1, 0).sends.at(0).peer = 1;
        expect(check_plan(p), Violation::BadPeer, 1, 0, -1);
    }
    {
        Plan p = ring();
        step(p, 1, 3).recvs.at(0).peer = P;
        expect(check_plan(p), Violation::BadPeer, 1, 3, -1);
    }
    {
        Plan p = ring();
        step(p, 2, 1).sends.at(0).blocks = {P};
        expect(check_plan(p), Violation::BadBlock, 2, 1, P);
    }
    {
        Plan p = ring();
        step(p, 2, 1).ops.at(0).srcs = {1};
        expect(check_plan(p), Violation::BadBuffer, 2, 1, -1);
    }
    {
        Plan p = ring();
        step(p, 2, 1).ops.at(0).srcs.clear();
        expect(check_plan(p), Violation::BadOp, 2, 1, -1);
    }
    {
        Plan p = ring();
        step(p, 2, 1).ops.push_back(LocalOp{OpKind::Copy, 0, {kResult, kResult}, {1}});
        expect(check_plan(p), Violation::BadOp, 2, 1, -1);
    }
    {
        Plan p = ring();
        step(p, 0, 0).sends.push_back(step(p, 0, 0).sends.at(0));
        expect(check_plan(p), Violation::DuplicatePeer, 0, 0, -1);
    }
    {
        // Allgather step receives into result block 0 on rank 0; make the
        // step's send read that same block.
        Plan p = ring();
        const int s = P - 1;
        REQUIRE(step(p, 0, s).recvs.at(0).blocks == std::vector<int>{0});
        step(p, 0, s).sends.at(0).blocks = {0};
        expect(check_plan(p), Violation::StepConflict, 0, s, 0);
    }
    {
        Plan p = ring();
        p.programs.pop_back();
        expect(check_plan(p), Violation::Malformed, -1, -1, -1);
    }
}

namespace {

// P ranks, one block: every rank sends to rank `root`, which folds them in
// with one fused reduce over slots in the order given, then broadcasts.
Plan gather_broadcast(int nranks, int root, const std::vector<int>& fold_order) {
    Plan p;
    p.algorithm = "test-gather-broadcast";
    p.nranks = nranks;
    p.nblocks = 1;
    p.programs.resize(static_cast<size_t>(nranks));
    p.programs[static_cast<size_t>(root)].steps.resize(2);
    Step& gather = p.programs[static_cast<size_t>(root)].steps[0];
    Step& bcast = p.programs[static_cast<size_t>(root)].steps[1];
    int slot = 0;
    std::vector<BufferId> slot_of(static_cast<size_t>(nranks), -1);
    for (int r = 0; r < nranks; ++r) {
        if (r == root) continue;
        slot_of[static_cast<size_t>(r)] = slot;
        gather.recvs.push_back(Transfer{r, {0}, slot++});
        bcast.sends.push_back(Transfer{r, {0}, kResult});
        auto& steps = p.programs[static_cast<size_t>(r)].steps;
        steps.resize(2);
        steps[0].sends.push_back(Transfer{root, {0}, kResult});
        steps[1].recvs.push_back(Transfer{root, {0}, kResult});
    }
    // dst ⊕= src1 ⊕ ...: dst (the root's own) comes first, then the sources.
    LocalOp op{OpKind::Reduce, kResult, {}, {0}};
    for (int r : fold_order) op.srcs.push_back(slot_of[static_cast<size_t>(r)]);
    gather.ops.push_back(op);
    finalize(p);
    return p;
}

}  // namespace

TEST_CASE("checker: order preservation", "[checker][order]") {
    // Root 0 folds 1 then 2: lists are 0,1,2.
    Plan p = gather_broadcast(3, 0, {1, 2});
    CheckResult r = check_plan(p);
    INFO(r.message);
    REQUIRE(r.ok);
    CHECK(r.order_preserving);
    CHECK(check_plan(p, CheckOptions{true}).ok);
    p.order_preserving = true;
    CHECK(check_plan(p).ok);

    // The same with the operands swapped: still an allreduce, not ordered.
    Plan q = gather_broadcast(3, 0, {2, 1});
    r = check_plan(q);
    REQUIRE(r.ok);
    CHECK_FALSE(r.order_preserving);
    expect(check_plan(q, CheckOptions{true}), Violation::NotOrderPreserving, 0, -1, 0);
    q.order_preserving = true;
    expect(check_plan(q), Violation::NotOrderPreserving, 0, -1, 0);

    // P = 2 with the root at rank 1: the root's own contribution comes first.
    Plan t = gather_broadcast(2, 1, {0});
    r = check_plan(t);
    REQUIRE(r.ok);
    CHECK_FALSE(r.order_preserving);
    CHECK(check_plan(gather_broadcast(2, 0, {1})).order_preserving);

    // Folding one rank twice is caught at the reduce that does it.
    Plan d = gather_broadcast(3, 0, {1, 1});
    expect(check_plan(d), Violation::DuplicateContribution, 0, 0, 0);
}
