// Rules files: every error kind names file, line and field; first match;
// range and suffix parsing; the built-in defaults; the load policy.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/rules.hpp"

using namespace genx;

namespace {

// A valid file with the rules given (one per line, starting on line 8).
std::string file_with(const std::string& rules, const std::string& extra_top = "") {
    return "{\n"                                                     // 1
           "  \"format\": \"genx-rules\",\n"                         // 2
           "  \"version\": 1,\n" +                                   // 3
           extra_top +                                               //
           "  \"provenance\": {\"topology\": \"test-cluster\"},\n"  // 4
           "  \"model\": {\"links\": {\"inter\": {\"alpha\": 1e-6, \"beta\": 1e-9}},\n"  // 5
           "            \"host\": {\"gamma\": 1e-10, \"delta\": 1e-10}},\n"              // 6
           "  \"allreduce\": [\n" +                                  // 7
           rules +                                                   // 8..
           "\n  ]\n}\n";
}

Status parse(const std::string& text, RulesFile* out, const std::string& fingerprint = "") {
    RulesCheck check;
    check.fingerprint = fingerprint;
    return parse_rules(text, "test.json", check, out);
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("byte ranges: suffixes, half-open bounds, inf", "[rules]") {
    ByteRange r;
    REQUIRE(parse_byte_range("64K-1M", &r).is_ok());
    CHECK(r.lo == 65536);
    CHECK(r.hi == 1048576);
    CHECK(r.contains(65536));
    CHECK(r.contains(1048575));
    CHECK_FALSE(r.contains(1048576));
    CHECK_FALSE(r.contains(65535));
    REQUIRE(parse_byte_range(" 1g - INF ", &r).is_ok());
    CHECK(r.lo == (size_t{1} << 30));
    CHECK(r.hi == ByteRange::kNoLimit);
    CHECK(r.contains(~size_t{0} - 1));
    REQUIRE(parse_byte_range("0-8", &r).is_ok());
    CHECK(r.contains(0));
    CHECK(r.contains(7));
    CHECK_FALSE(r.contains(8));
    CHECK(format_byte_range(r) == "0-8");
    REQUIRE(parse_byte_range("3M-inf", &r).is_ok());
    CHECK(format_byte_range(r) == "3M-inf");
    REQUIRE(parse_byte_range("1000-2048", &r).is_ok());
    CHECK(format_byte_range(r) == "1000-2K");

    CHECK_FALSE(parse_byte_range("64K", &r).is_ok());      // not a range
    CHECK_FALSE(parse_byte_range("1M-64K", &r).is_ok());   // empty
    CHECK_FALSE(parse_byte_range("64K-64K", &r).is_ok());  // empty (exclusive upper)
    CHECK_FALSE(parse_byte_range("64X-1M", &r).is_ok());   // unknown suffix
    CHECK_FALSE(parse_byte_range("-1M", &r).is_ok());      // no lower bound
    CHECK_FALSE(parse_byte_range("0-infinity", &r).is_ok());
    const Status st = parse_byte_range("1M-64K", &r);
    CHECK(has(st.message(), "empty"));
}

TEST_CASE("count ranges: N, LO-HI inclusive, LO-inf", "[rules]") {
    CountRange r;
    REQUIRE(parse_count_range("4", &r).is_ok());
    CHECK((r.lo == 4 && r.hi == 4 && !r.any));
    CHECK(r.contains(4));
    CHECK_FALSE(r.contains(5));
    REQUIRE(parse_count_range("2-8", &r).is_ok());
    CHECK(r.contains(2));
    CHECK(r.contains(8));
    CHECK_FALSE(r.contains(9));
    CHECK(format_count_range(r) == "2-8");
    REQUIRE(parse_count_range("65-inf", &r).is_ok());
    CHECK(r.contains(1000000));
    CHECK_FALSE(r.contains(64));
    CHECK(format_count_range(r) == "65-inf");
    CHECK_FALSE(parse_count_range("0", &r).is_ok());
    CHECK_FALSE(parse_count_range("8-2", &r).is_ok());
    CHECK_FALSE(parse_count_range("two", &r).is_ok());
    CHECK_FALSE(parse_count_range("2-", &r).is_ok());
}

TEST_CASE("the built-in defaults take over only where measured", "[rules]") {
    // {size, nodes, ppn}: the first size (bytes) genx runs, 0 = none.
    struct Want {
        CommShape shape;
        size_t first;
    };
    const std::vector<Want> wants = {
        {{6, 6, 1}, size_t{32} << 10},  {{7, 7, 1}, size_t{32} << 10},  {{3, 3, 1}, size_t{16} << 10},
        {{5, 5, 1}, size_t{32} << 10},  {{4, 4, 1}, size_t{128} << 10}, {{8, 8, 1}, size_t{128} << 10},
        {{2, 2, 1}, 0},  // two ranks: tuned's choices are ring-like already
        {{4, 1, 4}, 0},  // one node
        {{8, 2, 4}, 0},  // several ranks per node: not measured
        {{6, 0, 0}, 0},  // placement unknown
        {{16, 16, 1}, 0}, {{1000, 100, 10}, 0}};
    for (const Want& w : wants) {
        CAPTURE(w.shape.size, w.shape.nodes, w.shape.ppn);
        DecisionTable t;
        TableOptions o;
        REQUIRE(DecisionTable::build(builtin_rules(), w.shape, o, &t, nullptr).is_ok());
        for (size_t bytes : {size_t{0}, size_t{8}, size_t{4096}, size_t{8191}, size_t{16} << 10,
                             size_t{32} << 10, size_t{64} << 10, size_t{128} << 10, size_t{16} << 20, size_t{1} << 30}) {
            CAPTURE(bytes);
            const Decision& d = t.lookup(bytes);
            const bool genx_runs = w.first != 0 && bytes >= w.first;
            CHECK(d.defers() == !genx_runs);
            if (genx_runs) CHECK(d.algorithm == "ring");
        }
    }
}

TEST_CASE("non-blocking calls: rd below 8 KiB on 4-7 nodes and 2 KiB on 2, the blocking decisions elsewhere", "[rules]") {
    TableOptions nb;
    nb.nonblocking = true;
    // rd_below: the non-blocking table runs rd below it (0: nowhere), where
    // the blocking table defers; at it and from 16 KiB the two tables decide
    // alike.  Two nodes: rd measured slower than libnbc from 2 KiB; three:
    // rd's fold measured slower at small sizes; one node defers throughout.
    struct Case { CommShape shape; size_t rd_below; };
    for (const Case& c : {Case{{4, 4, 1}, 8192}, Case{{5, 5, 1}, 8192}, Case{{6, 6, 1}, 8192},
                          Case{{7, 7, 1}, 8192}, Case{{2, 2, 1}, 2048}, Case{{3, 3, 1}, 0},
                          Case{{8, 8, 1}, 0}, Case{{6, 1, 6}, 0}, Case{{4, 2, 2}, 0}}) {
        CAPTURE(c.shape.size, c.shape.nodes, c.shape.ppn);
        DecisionTable blocking, nonblocking;
        REQUIRE(DecisionTable::build(builtin_rules(), c.shape, TableOptions(), &blocking, nullptr).is_ok());
        REQUIRE(DecisionTable::build(builtin_rules(), c.shape, nb, &nonblocking, nullptr).is_ok());
        if (c.rd_below > 0) {
            for (size_t bytes : {size_t{0}, size_t{8}, c.rd_below / 2, c.rd_below - 1}) {
                CHECK(blocking.lookup(bytes).defers());
                CHECK(nonblocking.lookup(bytes).algorithm == "rd");
            }
            CHECK(nonblocking.lookup(c.rd_below).defers());
        } else {
            for (size_t bytes : {size_t{8}, size_t{4096}})
                CHECK(nonblocking.lookup(bytes).algorithm == blocking.lookup(bytes).algorithm);
        }
        for (size_t bytes : {size_t{16} << 10, size_t{1} << 20})
            CHECK(nonblocking.lookup(bytes).algorithm == blocking.lookup(bytes).algorithm);
    }
}

TEST_CASE("non-blocking calls: the model prices their steps and prefers fewer", "[rules]") {
    // A model rule over every family; the built-in model with a
    // nonblocking_step of 0 (both tables alike) or 20 µs (steps dear).
    auto steps_of = [](const Decision& d, int P) {
        ParamMap pm;
        REQUIRE(parse_params(d.params, &pm).is_ok());
        Plan plan;
        REQUIRE(generate(d.algorithm, P, pm, &plan).is_ok());
        return plan.max_steps();
    };
    for (double step : {0.0, 2e-5}) {
        RulesFile f;
        REQUIRE(parse(R"({"format": "genx-rules", "version": 1, "allreduce": [{"algorithm": "model"}]})",
                      &f));
        f.model = builtin_rules().model;
        f.model.nonblocking_step = step;
        f.has_model = true;
        CHECK(f.splits_calls() == (step > 0));
        for (const CommShape& shape : {CommShape{6, 6, 1}, CommShape{8, 8, 1}, CommShape{12, 6, 2}}) {
            CAPTURE(step, shape.size, shape.ppn);
            TableOptions nb;
            nb.nonblocking = true;
            DecisionTable b, n;
            REQUIRE(DecisionTable::build(f, shape, TableOptions(), &b, nullptr).is_ok());
            REQUIRE(DecisionTable::build(f, shape, nb, &n, nullptr).is_ok());
            int differ = 0;
            for (size_t bytes = 8; bytes <= (size_t{64} << 20); bytes *= 2) {
                CAPTURE(bytes);
                const Decision& db = b.lookup(bytes);
                const Decision& dn = n.lookup(bytes);
                REQUIRE(db.by_model);
                REQUIRE(dn.by_model);
                if (db.algorithm == dn.algorithm && db.params == dn.params) continue;
                ++differ;
                // Only steps got dearer: a different choice has fewer.
                CHECK(steps_of(dn, shape.size) < steps_of(db, shape.size));
            }
            if (step == 0) CHECK(differ == 0);
            else CHECK(differ > 0);
        }
    }
}

TEST_CASE("\"call\": blocking or nonblocking, round-tripped, errors named", "[rules]") {
    const std::string head = R"({"format": "genx-rules", "version": 1, "allreduce": [)";
    RulesFile f;
    REQUIRE(parse(head + R"({"call": "nonblocking", "bytes": "0-1K", "algorithm": "rd"},
                            {"call": "blocking", "bytes": "0-1K", "algorithm": "ring"},
                            {"algorithm": "fallback"}]})",
                  &f));
    REQUIRE(f.allreduce.size() == 3);
    CHECK(f.allreduce[0].call == CallKind::Nonblocking);
    CHECK(f.allreduce[1].call == CallKind::Blocking);
    CHECK(f.allreduce[2].call == CallKind::Any);
    CHECK(f.splits_calls());
    CHECK(f.allreduce[0].applies_to(true));
    CHECK_FALSE(f.allreduce[0].applies_to(false));
    CHECK(f.allreduce[2].applies_to(true));
    CHECK(f.allreduce[2].applies_to(false));
    RulesFile again;
    REQUIRE(parse(format_rules(f), &again));
    REQUIRE(again.allreduce.size() == 3);
    CHECK(again.allreduce[0].call == CallKind::Nonblocking);
    CHECK(again.allreduce[1].call == CallKind::Blocking);
    // The tables: each call kind sees its own first match.
    TableOptions nb;
    nb.nonblocking = true;
    DecisionTable b, n;
    REQUIRE(DecisionTable::build(f, CommShape{4, 4, 1}, TableOptions(), &b, nullptr).is_ok());
    REQUIRE(DecisionTable::build(f, CommShape{4, 4, 1}, nb, &n, nullptr).is_ok());
    CHECK(b.lookup(8).algorithm == "ring");
    CHECK(n.lookup(8).algorithm == "rd");
    CHECK(b.lookup(4096).defers());
    CHECK(n.lookup(4096).defers());
    // The matcher the table applies, per kind of call.
    CHECK(match_rule(f, CommShape{4, 4, 1}, 8) == &f.allreduce[1]);
    CHECK(match_rule(f, CommShape{4, 4, 1}, 8, true) == &f.allreduce[0]);
    CHECK(match_rule(f, CommShape{4, 4, 1}, 4096, true) == &f.allreduce[2]);
    const Status st = parse(head + "\n{\"call\": \"iallreduce\", \"algorithm\": \"ring\"}]}", &f);
    CHECK(st.code() == Code::InvalidArgument);
    CHECK(st.message().find("test.json:2: allreduce[0].call") != std::string::npos);
    CHECK(st.message().find("\"nonblocking\"") != std::string::npos);
    RulesFile plain;
    REQUIRE(parse(head + R"({"algorithm": "ring"}]})", &plain));
    CHECK_FALSE(plain.splits_calls());
}

TEST_CASE("\"fallback\" rules: parsed, no params, decided as declines", "[rules]") {
    RulesFile f;
    const std::string head = "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [";
    CHECK(parse_rules(head + "{\"bytes\": \"0-1K\", \"algorithm\": \"fallback\"}]}", "f.json",
                      RulesCheck{}, &f)
              .is_ok());
    CHECK(f.allreduce[0].defers());
    CHECK(f.allreduce[0].params.empty());
    const Status st = parse_rules(
        head + "{\"algorithm\": \"fallback\", \"params\": \"segment=4K\"}]}", "g.json", RulesCheck{}, &f);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("g.json:1") != std::string::npos);
    CHECK(st.message().find("'segment' is not a parameter of \"fallback\"") != std::string::npos);
    CHECK(st.message().find("recursive_doubling") != std::string::npos);  // lists the names
}

TEST_CASE("\"fallback\" rules may name one of Open MPI's allreduce algorithms", "[rules]") {
    RulesFile f;
    const std::string head = "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [";
    REQUIRE(parse_rules(head + "{\"algorithm\": \"fallback\", \"params\": \" base = ring \"}]}",
                        "f.json", RulesCheck{}, &f)
                .is_ok());
    CHECK(f.allreduce[0].params == "base=ring");
    CHECK(base_algorithm_id(f.allreduce[0].params) == 4);
    CHECK(f.splits_calls());  // blocking calls only: non-blocking ones get a table of their own
    for (const BaseAlgorithm& b : base_algorithms())
        CHECK(base_algorithm_id(std::string("base=") + b.name) == b.tuned_id);
    CHECK(base_algorithm_id("") == 0);
    CHECK(base_algorithm_id("base=segmented_ring") == 0);
    const Status st = parse_rules(
        head + "{\"algorithm\": \"fallback\",\n \"params\": \"base=segmented_ring\"}]}", "g.json",
        RulesCheck{}, &f);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("g.json:2") != std::string::npos);
    CHECK(st.message().find("unknown Open MPI allreduce algorithm 'segmented_ring'") !=
          std::string::npos);
    // Blocking only.
    const Status nb = parse_rules(head + "{\"call\": \"nonblocking\", \"algorithm\": \"fallback\", "
                                         "\"params\": \"base=ring\"}]}",
                                  "n.json", RulesCheck{}, &f);
    CHECK_FALSE(nb.is_ok());
    CHECK(nb.message().find("blocking only") != std::string::npos);
    // Only "fallback" takes it.
    CHECK_FALSE(parse_rules(head + "{\"algorithm\": \"ring\", \"params\": \"base=ring\"}]}",
                            "h.json", RulesCheck{}, &f)
                    .is_ok());
}

TEST_CASE("the built-in defaults are a valid rules file", "[rules]") {
    RulesFile f;
    const Status st = parse_rules(builtin_rules_text(), "built-in defaults", RulesCheck{}, &f);
    INFO(st.message());
    REQUIRE(st.is_ok());
    CHECK(f.has_model);
    CHECK(f.model.inter.beta > 0);
    CHECK(f.model.host.delta > 0);
    REQUIRE_FALSE(f.allreduce.empty());
    // The last rule catches everything and hands it back to the displaced
    // component, so every call has a decision and none is genx's without
    // a rule that says so.
    CHECK(f.allreduce.back().defers());
    CHECK(f.allreduce.back().comm_size.any);
    CHECK(match_rule(f, CommShape{1000, 0, 0}, 1) == &f.allreduce.back());
    CHECK(builtin_rules().source == "built-in defaults");
    CHECK(builtin_rules().allreduce.size() == f.allreduce.size());
    // Any fingerprint: the defaults apply everywhere.
    RulesCheck check;
    check.fingerprint = local_fingerprint();
    CHECK(parse_rules(builtin_rules_text(), "d", check, &f).is_ok());
}

TEST_CASE("first match wins; absent keys match anything", "[rules]") {
    RulesFile f;
    const std::string text = file_with(
        "    {\"comm_size\": 4, \"bytes\": \"0-64K\", \"algorithm\": \"rhd\"},\n"
        "    {\"comm_size\": \"2-8\", \"nodes\": \"2-inf\", \"algorithm\": \"hcps\", "
        "\"params\": \"factors=2x2\"},\n"
        "    {\"ppn\": 4, \"bytes\": \"1M-inf\", \"algorithm\": \"cps\"},\n"
        "    {\"comm_size\": \"2-8\", \"algorithm\": \"ring\", \"params\": \"segment=64K\"},\n"
        "    {\"algorithm\": \"model\", \"families\": [\"ring\", \"rhd\"]}");
    const Status st = parse(text, &f);
    INFO(st.message());
    REQUIRE(st.is_ok());
    REQUIRE(f.allreduce.size() == 5);
    CHECK(f.allreduce[0].line == 8);
    CHECK(f.allreduce[4].line == 12);
    auto pick = [&](int size, int nodes, int ppn, size_t bytes) {
        const AllreduceRule* r = match_rule(f, CommShape{size, nodes, ppn}, bytes);
        REQUIRE(r != nullptr);
        return r->index;
    };
    CHECK(pick(4, 1, 4, 100) == 0);          // rule 0 shadows rule 3 for small messages
    CHECK(pick(4, 1, 4, 65536) == 3);        // 64K is outside [0, 64K)
    CHECK(pick(4, 2, 2, 65536) == 1);        // two nodes
    CHECK(pick(4, 0, 0, 65536) == 3);        // nodes unknown: rule 1 cannot match
    CHECK(pick(16, 4, 4, 1 << 20) == 2);     // ppn 4, 1M
    CHECK(pick(16, 0, 0, 1 << 20) == 4);     // ppn unknown
    CHECK(pick(16, 4, 4, (1 << 20) - 1) == 4);
    CHECK(f.allreduce[3].params == "segment=64K");
    CHECK(f.allreduce[1].params == "factors=2x2");
    CHECK(f.allreduce[4].families == std::vector<std::string>{"ring", "rhd"});
    CHECK(rule_location(f, f.allreduce[2]) == "test.json:10 (allreduce[2])");

    RulesFile none;
    REQUIRE(parse(file_with("    {\"comm_size\": 2, \"algorithm\": \"ring\"}"), &none).is_ok());
    CHECK(match_rule(none, CommShape{3, 1, 3}, 8) == nullptr);
}

TEST_CASE("writing and re-reading a rules file keeps every rule", "[rules]") {
    RulesFile f;
    REQUIRE(parse(file_with("    {\"comm_size\": \"2-8\", \"ppn\": 2, \"bytes\": \"8-1M\", "
                            "\"algorithm\": \"hcps\", \"params\": \"window=2,factors=2x2\", "
                            "\"comment\": \"c\"},\n"
                            "    {\"bytes\": \"1M-inf\", \"algorithm\": \"model\", "
                            "\"families\": [\"fallback\", \"cps\"], \"margin\": 0.2, "
                            "\"scale\": {\"fallback\": 1.25, \"cps\": 0.5}, \"pipeline\": {\"cps\": 4}}"),
                  &f)
                .is_ok());
    f.provenance.hosts = 3;
    f.provenance.date = "2026-01-01T00:00:00Z";
    // The whole model, switch classes and the optional terms included.
    REQUIRE(f.has_model);
    f.model.classes["xdc"] = LinkParams{2e-3, 8e-8};
    f.model.topology_rates = true;
    f.model.nonblocking_step = 5e-6;
    f.model.inter.alpha_shift = 4e-6;
    const std::string text = format_rules(f);
    RulesFile g;
    const Status st = parse(text, &g);
    INFO(text << st.message());
    REQUIRE(st.is_ok());
    REQUIRE(g.allreduce.size() == 2);
    CHECK(g.allreduce[0].params == "factors=2x2,window=2");
    CHECK(format_count_range(g.allreduce[0].comm_size) == "2-8");
    CHECK(format_count_range(g.allreduce[0].ppn) == "2");
    CHECK(format_byte_range(g.allreduce[0].bytes) == "8-1M");
    CHECK(g.allreduce[0].comment == "c");
    CHECK(g.allreduce[1].families == std::vector<std::string>{"fallback", "cps"});
    CHECK(g.allreduce[1].scale == std::map<std::string, double>{{"cps", 0.5}, {"fallback", 1.25}});
    CHECK(g.allreduce[1].pipeline == std::map<std::string, int>{{"cps", 4}});
    CHECK(g.provenance.hosts == 3);
    CHECK(g.provenance.topology == "test-cluster");
    CHECK(g.model.inter.beta == f.model.inter.beta);
    REQUIRE(g.model.classes.count("xdc") == 1);
    CHECK(g.model.classes.at("xdc").alpha == 2e-3);
    CHECK(g.model.classes.at("xdc").beta == 8e-8);
    CHECK(g.model.topology_rates);
    CHECK(g.model.nonblocking_step == 5e-6);
    CHECK(g.model.inter.alpha_shift == 4e-6);
    // format_rules puts each rule on its own line, so errors point at it.
    CHECK(g.allreduce[1].line == g.allreduce[0].line + 1);
}

TEST_CASE("rules errors name file, line, field", "[rules]") {
    RulesFile f;
    struct Case {
        const char* what;
        std::string text;
        int line;
        const char* field;
        const char* says;
    };
    const std::vector<Case> cases = {
        {"syntax", file_with("    {\"algorithm\": \"ring\",}"), 8, "(JSON syntax)", "syntax error"},
        {"unknown key in a rule", file_with("    {\"algorithm\": \"ring\"},\n    {\"algo\": \"ring\"}"),
         9, "allreduce[1].algo", "unknown key"},
        {"unknown top-level key", file_with("", "  \"rules\": [],\n"), 4, "rules", "unknown key"},
        {"unknown algorithm", file_with("    {\"bytes\": \"0-1K\",\n     \"algorithm\": \"tree\"}"),
         9, "allreduce[0].algorithm", "unknown algorithm 'tree'"},
        {"bad byte range", file_with("    {\"algorithm\": \"ring\"},\n    {\"bytes\": \"1M-64K\", "
                                     "\"algorithm\": \"ring\"}"),
         9, "allreduce[1].bytes", "empty"},
        {"bad suffix", file_with("    {\"bytes\": \"1X-2M\", \"algorithm\": \"ring\"}"), 8,
         "allreduce[0].bytes", "unknown suffix"},
        {"bad count range", file_with("    {\"comm_size\": 0, \"algorithm\": \"ring\"}"), 8,
         "allreduce[0].comm_size", ">= 1"},
        {"bad count type", file_with("    {\"ppn\": [4], \"algorithm\": \"ring\"}"), 8,
         "allreduce[0].ppn", "expected an integer or a range"},
        {"missing algorithm", file_with("    {\"bytes\": \"0-1K\"}"), 8, "allreduce[0].algorithm",
         "required"},
        {"unknown param", file_with("    {\"algorithm\": \"ring\", \"params\": \"root=2\"}"), 8,
         "allreduce[0].params", "'root' is not a parameter of ring"},
        {"malformed params", file_with("    {\"algorithm\": \"rb\", \"params\": \"root\"}"), 8,
         "allreduce[0].params", "not key=value"},
        {"families without model",
         file_with("    {\"algorithm\": \"ring\", \"families\": [\"ring\"]}"), 8,
         "allreduce[0].families", "only a rule"},
        {"unknown family", file_with("    {\"algorithm\": \"model\",\n     \"families\": [\"ring\", "
                                     "\"tree\"]}"),
         9, "allreduce[0].families[1]", "unknown algorithm \"tree\""},
        {"fallback not first", file_with("    {\"algorithm\": \"model\",\n     \"families\": [\"ring\", "
                                         "\"fallback\"]}"),
         9, "allreduce[0].families[1]", "\"fallback\" only first"},
        {"fallback alone", file_with("    {\"algorithm\": \"model\", \"families\": [\"fallback\"]}"),
         8, "allreduce[0].families", "an incumbent"},
        {"scale without model",
         file_with("    {\"algorithm\": \"ring\",\n     \"scale\": {\"ring\": 2}}"), 9,
         "allreduce[0].scale", "only a rule"},
        {"scale of a family not listed",
         file_with("    {\"algorithm\": \"model\", \"families\": [\"fallback\", \"ring\"],\n"
                   "     \"scale\": {\"rd\": 2}}"),
         9, "allreduce[0].scale.rd", "not one of the rule's"},
        {"scale not positive",
         file_with("    {\"algorithm\": \"model\", \"families\": [\"fallback\", \"ring\"],\n"
                   "     \"scale\": {\"ring\": 0}}"),
         9, "allreduce[0].scale.ring", "positive factor"},
        {"pipeline without model",
         file_with("    {\"algorithm\": \"ring\",\n     \"pipeline\": {\"ring\": 2}}"), 9,
         "allreduce[0].pipeline", "only a rule"},
        {"pipeline of a family not listed",
         file_with("    {\"algorithm\": \"model\", \"families\": [\"fallback\", \"gentree\"],\n"
                   "     \"pipeline\": {\"mtree\": 2}}"),
         9, "allreduce[0].pipeline.mtree", "not one of the rule's"},
        {"pipeline depth not a count",
         file_with("    {\"algorithm\": \"model\", \"families\": [\"fallback\", \"gentree\"],\n"
                   "     \"pipeline\": {\"gentree\": 0.5}}"),
         9, "allreduce[0].pipeline.gentree", "pipeline depth from 1"},
        {"rated not a boolean", file_with("    {\"rated\": 1, \"algorithm\": \"ring\"}"), 8,
         "allreduce[0].rated", "expected true or false"},
        {"duplicate key", file_with("    {\"algorithm\": \"ring\",\n     \"algorithm\": \"rhd\"}"),
         9, "allreduce[0].algorithm", "appears twice"},
        {"version mismatch",
         "{\n  \"format\": \"genx-rules\",\n  \"version\": 2,\n  \"allreduce\": []\n}\n", 3,
         "version", "reads rules format version 1, the file has 2"},
        {"missing version", "{\n  \"format\": \"genx-rules\",\n  \"allreduce\": []\n}\n", 1,
         "version", "required"},
        {"not a rules file", "{\"links\": {}, \"host\": {}}", 1, "format", "not a genx rules file"},
        {"wrong format name",
         "{\n  \"format\": \"tuned\",\n  \"version\": 1,\n  \"allreduce\": []\n}\n", 2, "format",
         "not a genx rules file"},
        {"bad model value",
         "{\"format\": \"genx-rules\", \"version\": 1,\n \"model\": {\"links\": {\"inter\": "
         "{\"alpha\": 1e-6,\n   \"beta\": -1}}, \"host\": {\"gamma\": 0, \"delta\": 0}},\n "
         "\"allreduce\": []}",
         3, "model.links.inter.beta", ">= 0"},
        {"allreduce not a list",
         "{\"format\": \"genx-rules\", \"version\": 1,\n \"allreduce\": {}}", 2, "allreduce",
         "expected a list"},
    };
    for (const Case& c : cases) {
        const Status st = parse(c.text, &f);
        INFO(c.what << ": " << st.message());
        REQUIRE_FALSE(st.is_ok());
        const std::string expect = "test.json:" + std::to_string(c.line) + ": " + c.field + ": ";
        CHECK(st.message().compare(0, expect.size(), expect) == 0);
        CHECK(has(st.message(), c.says));
    }
    // Syntax errors have their own code; the rest are invalid arguments.
    CHECK(parse(cases[0].text, &f).code() == Code::ParseError);
    CHECK(parse(cases[1].text, &f).code() == Code::InvalidArgument);
}

TEST_CASE("the cluster fingerprint must match unless it is '*' or absent", "[rules]") {
    RulesFile f;
    const std::string text = file_with("    {\"algorithm\": \"ring\"}");
    CHECK(parse(text, &f, "test-cluster").is_ok());
    CHECK(parse(text, &f, "").is_ok());  // caller does not check
    const Status st = parse(text, &f, "other-cluster");
    INFO(st.message());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.message().compare(0, 33, "test.json:4: provenance.topology:") == 0);
    CHECK(has(st.message(), "\"test-cluster\""));
    CHECK(has(st.message(), "\"other-cluster\""));
    // Asked to report it instead (genx-plan): the file loads, the error
    // is handed back, and nothing is reported where the cluster matches.
    std::string elsewhere;
    RulesCheck report;
    report.fingerprint = "other-cluster";
    report.mismatch = &elsewhere;
    RulesFile g;
    CHECK(parse_rules(text, "test.json", report, &g).is_ok());
    CHECK(elsewhere == st.message());
    CHECK(g.allreduce.size() == 1u);
    elsewhere.clear();
    report.fingerprint = "test-cluster";
    CHECK(parse_rules(text, "test.json", report, &g).is_ok());
    CHECK(elsewhere.empty());
    const std::string any = "{\"format\": \"genx-rules\", \"version\": 1, \"provenance\": "
                            "{\"topology\": \"*\"}, \"allreduce\": []}";
    CHECK(parse(any, &f, "other-cluster").is_ok());
}

TEST_CASE("load policy: warn and use defaults, or abort when strict", "[rules]") {
    RulesFile f;
    std::string warning;
    const std::string missing = "genx-test-no-such-rules-file.json";
    std::remove(missing.c_str());
    REQUIRE(load_rules_or_defaults(missing, false, RulesCheck{}, &f, &warning).is_ok());
    CHECK(f.source == "built-in defaults");
    CHECK(has(warning, missing + ": cannot open"));
    CHECK(has(warning, "uses its built-in defaults"));
    const Status strict = load_rules_or_defaults(missing, true, RulesCheck{}, &f, &warning);
    REQUIRE_FALSE(strict.is_ok());
    CHECK(strict.code() == Code::IoError);
    CHECK(has(strict.message(), missing));
    CHECK(has(strict.message(), "aborting because rules_strict is set"));

    // A bad file is never half-applied: the defaults replace all of it.
    const std::string path = "genx-test-rules.json";
    {
        std::ofstream out(path);
        out << file_with("    {\"algorithm\": \"ring\"},\n    {\"bytes\": \"1K\", \"algorithm\": "
                         "\"ring\"}");
    }
    REQUIRE(load_rules_or_defaults(path, false, RulesCheck{}, &f, &warning).is_ok());
    CHECK(f.source == "built-in defaults");
    CHECK(has(warning, path + ":9: allreduce[1].bytes:"));
    CHECK_FALSE(load_rules_or_defaults(path, true, RulesCheck{}, &f, &warning).is_ok());

    // A good file without a model borrows the defaults' model.
    {
        std::ofstream out(path);
        out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": [{\"algorithm\": "
               "\"model\"}]}";
    }
    REQUIRE(load_rules_or_defaults(path, true, RulesCheck{}, &f, &warning).is_ok());
    CHECK(warning.empty());
    CHECK(f.source == path);
    CHECK(f.has_model);
    CHECK(f.model.inter.alpha == builtin_rules().model.inter.alpha);
    std::remove(path.c_str());

    REQUIRE(load_rules_or_defaults("", true, RulesCheck{}, &f, &warning).is_ok());
    CHECK(f.source == "built-in defaults");
}

TEST_CASE("rules accept exactly the executor's parameter keys", "[rules]") {
    // kExecParamKeys must be what split_exec_params takes away from a
    // generator's keys.
    ParamMap all;
    for (const std::string& k : kExecParamKeys) all[k] = k == "segment" ? "64K" : "2";
    ParamMap gen;
    ExecOptions opts;
    REQUIRE(split_exec_params(all, &gen, &opts).is_ok());
    CHECK(gen.empty());
    all["nosuchkey"] = "1";
    REQUIRE(split_exec_params(all, &gen, &opts).is_ok());
    CHECK(gen.size() == 1);
}

TEST_CASE("local fingerprint names machine, cpu and count", "[rules]") {
    const std::string fp = local_fingerprint();
    CHECK(has(fp, "; "));
    CHECK(has(fp, " cpus"));
    CHECK(fp == local_fingerprint());
}

TEST_CASE("load_model_file reads a rules file's model or a bare model", "[rules]") {
    const std::string path = "genx-test-model.json";
    {
        std::ofstream out(path);
        out << file_with("    {\"algorithm\": \"ring\"}");
    }
    ModelParams m;
    REQUIRE(load_model_file(path, &m).is_ok());
    CHECK(m.inter.alpha == 1e-6);
    CHECK(m.intra.beta == 1e-9);  // intra defaults to inter
    {
        std::ofstream out(path);
        out << "{\"links\": {\"inter\": {\"alpha\": 2e-6, \"beta\": 3e-9}}, "
               "\"host\": {\"gamma\": 0, \"delta\": 0}}";
    }
    REQUIRE(load_model_file(path, &m).is_ok());
    CHECK(m.inter.alpha == 2e-6);
    {
        std::ofstream out(path);
        out << "{\"format\": \"genx-rules\", \"version\": 1, \"allreduce\": []}";
    }
    REQUIRE(load_model_file(path, &m).is_ok());
    CHECK(m.inter.alpha == builtin_rules().model.inter.alpha);
    {
        std::ofstream out(path);
        out << "{\"format\": \"genx-rules\", \"version\": 7, \"allreduce\": []}";
    }
    const Status st = load_model_file(path, &m);
    CHECK_FALSE(st.is_ok());
    CHECK(has(st.message(), path + ":1: version:"));
    std::remove(path.c_str());
    CHECK_FALSE(load_model_file(path, &m).is_ok());
}
