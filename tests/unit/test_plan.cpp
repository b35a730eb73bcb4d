// Plan IR helpers and the registry: params and size parsing, block ranges,
// slot layouts, generator lookup errors.
#include <catch2/catch.hpp>

#include "plan/plan.hpp"
#include "plan/registry.hpp"

using namespace genx;

TEST_CASE("parse_params accepts key=value lists", "[plan][params]") {
    ParamMap m;
    REQUIRE(parse_params("", &m).is_ok());
    CHECK(m.empty());

    REQUIRE(parse_params(" b = 2 , a=x,", &m).is_ok());
    REQUIRE(m.size() == 2);
    CHECK(m.at("a") == "x");
    CHECK(m.at("b") == "2");
    CHECK(format_params(m) == "a=x,b=2");

    REQUIRE(parse_params("factors=6x2", &m).is_ok());
    CHECK(m.at("factors") == "6x2");
    CHECK(format_params({}) == "");
}

TEST_CASE("parse_params rejects malformed items and names them", "[plan][params]") {
    struct Bad {
        const char* text;
        const char* named;
    };
    const Bad bad[] = {
        {"root", "'root'"}, {"a=1,=2", "'=2'"}, {"a=1,b=", "'b='"}, {"a=1,a=2", "'a'"}};
    for (const Bad& b : bad) {
        ParamMap m{{"keep", "me"}};
        Status s = parse_params(b.text, &m);
        INFO(b.text);
        CHECK(s.code() == Code::InvalidArgument);
        CHECK(s.message().find(b.named) != std::string::npos);
        // A failed parse leaves the output untouched.
        CHECK(m.count("keep") == 1);
    }
}

TEST_CASE("parse_size takes plain numbers and binary K/M/G suffixes", "[plan][params]") {
    size_t v = 0;
    REQUIRE(parse_size("0", &v).is_ok());
    CHECK(v == 0);
    REQUIRE(parse_size("4096", &v).is_ok());
    CHECK(v == 4096);
    REQUIRE(parse_size("64K", &v).is_ok());
    CHECK(v == 64 * 1024);
    REQUIRE(parse_size("64k", &v).is_ok());
    CHECK(v == 64 * 1024);
    REQUIRE(parse_size("3m", &v).is_ok());
    CHECK(v == 3 * 1024 * 1024);
    REQUIRE(parse_size("2G", &v).is_ok());
    CHECK(v == size_t(2) << 30);

    for (const char* bad :
         {"", "K", "12Q", "1.5M", "-4", "12KB", "99999999999999999999999", "17179869184G"}) {
        INFO(bad);
        Status s = parse_size(bad, &v);
        CHECK(s.code() == Code::InvalidArgument);
        CHECK(s.message().find(std::string("'") + bad + "'") != std::string::npos);
    }
}

TEST_CASE("block_range covers the vector for any count", "[plan][blocks]") {
    for (int nb : {1, 3, 7, 64}) {
        for (size_t count : {size_t(0), size_t(1), size_t(nb - 1), size_t(nb), size_t(nb + 1),
                             size_t(1000), size_t(65537)}) {
            size_t next = 0, total = 0;
            for (int b = 0; b < nb; ++b) {
                auto r = block_range(count, nb, b);
                CHECK(r.first == next);
                CHECK(r.second >= r.first);
                // Balanced: sizes differ by at most one.
                CHECK(r.second - r.first <= count / static_cast<size_t>(nb) + 1);
                CHECK(block_elems(count, nb, b) == r.second - r.first);
                next = r.second;
                total += r.second - r.first;
            }
            CHECK(next == count);
            CHECK(total == count);
        }
    }
    // count < nblocks leaves some blocks empty.
    CHECK(block_elems(2, 5, 0) == 0);
    CHECK(block_elems(2, 5, 2) == 1);
    CHECK(block_elems(2, 5, 4) == 1);
}

TEST_CASE("finalize computes slot layouts and grows nslots", "[plan][slots]") {
    Plan p;
    p.nranks = 2;
    p.nblocks = 4;
    p.nslots = 0;
    p.programs.resize(2);
    Step s0;
    s0.recvs.push_back(Transfer{1, {3, 1}, 0});
    s0.ops.push_back(LocalOp{OpKind::Copy, 2, {0}, {1}});
    Step s1;
    s1.recvs.push_back(Transfer{1, {1, 0}, 0});
    s1.sends.push_back(Transfer{1, {2}, 3});  // a read only: counts for nslots, not layout
    p.programs[0].steps = {s0, s1};

    finalize(p);
    CHECK(p.nslots == 4);
    REQUIRE(p.programs[0].slot_layout.size() == 4);
    CHECK(p.programs[0].slot_layout[0] == std::vector<int>{0, 1, 3});
    CHECK(p.programs[0].slot_layout[1].empty());
    CHECK(p.programs[0].slot_layout[2] == std::vector<int>{1});
    CHECK(p.programs[0].slot_layout[3].empty());
    REQUIRE(p.programs[1].slot_layout.size() == 4);
    CHECK(p.programs[1].slot_layout[0].empty());

    // Idempotent.
    Plan q = p;
    finalize(q);
    CHECK(q.programs[0].slot_layout == p.programs[0].slot_layout);
    CHECK(q.nslots == p.nslots);
    CHECK(p.max_steps() == 2);

    // count 10 over 4 blocks: sizes 2, 3, 2, 3.
    CHECK(slot_offset(p, 0, 0, 0, 10) == 0);
    CHECK(slot_offset(p, 0, 0, 1, 10) == 2);
    CHECK(slot_offset(p, 0, 0, 3, 10) == 5);
    CHECK(slot_offset(p, 0, 0, 2, 10) == -1);
    CHECK(slot_offset(p, 0, 2, 1, 10) == 0);
    CHECK(slot_offset(p, 0, 1, 1, 10) == -1);
    CHECK(slot_offset(p, 0, 9, 1, 10) == -1);
    CHECK(slot_offset(p, 5, 0, 1, 10) == -1);
    CHECK(slot_elems(p, 0, 0, 10) == 8);
    CHECK(slot_elems(p, 0, 2, 10) == 3);
    CHECK(slot_elems(p, 0, 1, 10) == 0);
    CHECK(slot_elems(p, 1, 0, 10) == 0);
    CHECK(slot_elems(p, 0, 0, 0) == 0);
}

TEST_CASE("generate finds generators and reports bad requests", "[plan][registry]") {
    Plan p;
    Status s = generate("no-such-algorithm", 4, {}, &p);
    CHECK(s.code() == Code::NotFound);
    CHECK(s.message().find("no-such-algorithm") != std::string::npos);
    for (const GeneratorInfo& g : generators()) {
        CHECK(s.message().find(g.name) != std::string::npos);
        CHECK(find_generator(g.name) == &g);
        CHECK(!g.summary.empty());
        CHECK(g.prepare != nullptr);
        CHECK(g.candidates != nullptr);
    }
    CHECK(find_generator("no-such-algorithm") == nullptr);

    s = generate("ring", 4, {{"bogus", "1"}}, &p);
    CHECK(s.code() == Code::InvalidArgument);
    CHECK(s.message().find("'bogus'") != std::string::npos);
    CHECK(s.message().find("'ring'") != std::string::npos);
    CHECK(s.message().find("accepted keys") != std::string::npos);

    s = generate("ring", 0, {}, &p);
    CHECK(s.code() == Code::InvalidArgument);

    REQUIRE(generate("ring", 5, {}, &p).is_ok());
    CHECK(p.algorithm == "ring");
    CHECK(p.nranks == 5);
    CHECK(p.programs.size() == 5);
}
