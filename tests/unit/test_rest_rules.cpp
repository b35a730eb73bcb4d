// genx-tune's rules for communicator shapes it never measured
// (tune/rest_rules.hpp): the model chooses among the families measured at
// that size, scaled as measured, or among those that measured faster than
// the displaced component where its price is unknown.
#include <catch2/catch.hpp>

#include <cmath>

#include <string>
#include <vector>

#include "tune/rest_rules.hpp"

using namespace genx;
using namespace genx::tune;

namespace {

const std::vector<std::string> kAll = {"ring", "rd", "gentree", "multitree"};

VouchedPoint pt(size_t bytes, bool verified, std::vector<std::string> vouched = {}) {
    VouchedPoint p;
    p.bytes = bytes;
    p.verified = verified;
    p.vouched = std::move(vouched);
    return p;
}

// Every size from 0 to no limit is covered by exactly one rule, in order.
void require_partition(const std::vector<AllreduceRule>& rules) {
    REQUIRE_FALSE(rules.empty());
    CHECK(rules.front().bytes.lo == 0);
    CHECK(rules.back().bytes.hi == ByteRange::kNoLimit);
    for (size_t i = 0; i + 1 < rules.size(); ++i) {
        CHECK(rules[i].bytes.hi == rules[i + 1].bytes.lo);
        CHECK(rules[i].bytes.lo < rules[i].bytes.hi);
    }
    for (const AllreduceRule& r : rules) CHECK(r.comm_size.any);
}

}  // namespace

TEST_CASE("unmeasured shapes defer where nothing beat the displaced component", "[rest_rules]") {
    // One measured shape: nothing vouched up to 4K, gentree and multitree
    // from 64K, gentree alone from 1M.
    const std::vector<std::vector<VouchedPoint>> shapes = {{
        pt(8, true), pt(4096, true), pt(65536, true, {"multitree", "gentree"}),
        pt(1 << 20, true, {"gentree"}), pt(16 << 20, true, {"gentree"}),
    }};
    const auto rules = rules_for_unmeasured_shapes(shapes, kAll, 0.26);
    require_partition(rules);
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].algorithm == kFallbackAlgorithm);
    CHECK(rules[0].bytes.hi == 65536);
    CHECK(rules[0].comment.find("no genx plan measured faster") != std::string::npos);
    CHECK(rules[1].algorithm == kModelAlgorithm);
    CHECK(rules[1].bytes.lo == 65536);
    CHECK(rules[1].bytes.hi == (1u << 20));
    CHECK(rules[1].families == std::vector<std::string>{"fallback", "gentree", "multitree"});
    CHECK(rules[1].margin == Approx(0.26));
    CHECK(rules[2].families == std::vector<std::string>{"fallback", "gentree"});
    CHECK(rules[2].bytes.lo == (1u << 20));
}

TEST_CASE("unmeasured shapes: unverified sizes keep every family", "[rest_rules]") {
    // The budget ran out from 1M: those sizes are not restricted.
    const std::vector<std::vector<VouchedPoint>> shapes = {{
        pt(8, true), pt(1 << 20, false), pt(16 << 20, false),
    }};
    const auto rules = rules_for_unmeasured_shapes(shapes, kAll, 0.3);
    require_partition(rules);
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].defers());
    CHECK(rules[1].by_model());
    CHECK(rules[1].families == std::vector<std::string>{"fallback", "ring", "rd", "gentree", "multitree"});
    CHECK(rules[1].comment.find("not verified") != std::string::npos);
}

TEST_CASE("unmeasured shapes: measured shapes vouch together", "[rest_rules]") {
    // Two measured sizes of communicator: a family vouched on either counts,
    // a size verified on one of them only is verified.
    const std::vector<std::vector<VouchedPoint>> shapes = {
        {pt(8, true), pt(65536, true, {"rd"})},
        {pt(8, true, {"ring"}), pt(65536, false)},
    };
    const auto rules = rules_for_unmeasured_shapes(shapes, kAll, 0.2);
    require_partition(rules);
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].families == std::vector<std::string>{"fallback", "ring"});
    CHECK(rules[1].families == std::vector<std::string>{"fallback", "rd"});
}

TEST_CASE("unmeasured shapes without --verify: one model rule as before", "[rest_rules]") {
    const auto none = rules_for_unmeasured_shapes({}, kAll, 0.2);
    require_partition(none);
    REQUIRE(none.size() == 1);
    CHECK(none[0].by_model());
    CHECK(none[0].families.size() == kAll.size() + 1);
    const auto unverified =
        rules_for_unmeasured_shapes({{pt(8, false), pt(4096, false)}}, kAll, 0.2);
    REQUIRE(unverified.size() == 1);
    CHECK(unverified[0].by_model());
}

TEST_CASE("unmeasured shapes: calibrated where the displaced component was priced", "[rest_rules]") {
    // 64K: multitree measured slower than the displaced component (not
    // vouched) still takes part, scaled as measured; the scales are the
    // geometric means over the two shapes that measured them.
    VouchedPoint a = pt(65536, true, {"gentree"});
    a.scale = {{"fallback", 1.2}, {"gentree", 2.0}, {"multitree", 1.5}};
    VouchedPoint b = pt(65536, true);
    b.scale = {{"fallback", 1.2 * 4}, {"gentree", 0.5}};
    VouchedPoint c = pt(1 << 20, true, {"gentree"});
    c.scale = {{"gentree", 1.1}};  // the displaced component not priced there
    const auto rules = rules_for_unmeasured_shapes({{pt(8, true), a, c}, {b}}, kAll, 0.2);
    require_partition(rules);
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].defers());
    CHECK(rules[0].scale.empty());
    const AllreduceRule& r = rules[1];
    CHECK(r.by_model());
    CHECK(r.bytes.lo == 65536);
    CHECK(r.families == std::vector<std::string>{"fallback", "gentree", "multitree"});
    REQUIRE(r.scale.size() == 3);
    CHECK(r.scale.at("fallback") == Approx(2.4));
    CHECK(r.scale.at("gentree") == Approx(1.0));
    CHECK(r.scale.at("multitree") == Approx(1.5));
    CHECK(r.margin == Approx(0.2));
    CHECK(r.comment.find("measured ÷ predicted") != std::string::npos);
    // Without the displaced component's scale: vouched families, unscaled.
    CHECK(rules[2].families == std::vector<std::string>{"fallback", "gentree"});
    CHECK(rules[2].scale.empty());
}

TEST_CASE("unmeasured shapes: a family scaled at one pipeline depth keeps it", "[rest_rules]") {
    // gentree measured pipelined 16 deep on both shapes at 1 MiB: the rule
    // weighs that depth; at 4 MiB the shapes disagree (16 and 32): no depth.
    VouchedPoint a = pt(1 << 20, true, {"gentree"}), b = pt(1 << 20, true);
    a.scale = {{"fallback", 1.2}, {"gentree", 0.6}, {"mtree", 0.9}};
    a.pipeline = {{"gentree", 16}};
    b.scale = {{"fallback", 1.0}, {"gentree", 0.7}};
    b.pipeline = {{"gentree", 16}};
    VouchedPoint c = pt(4 << 20, true, {"gentree"}), e = pt(4 << 20, true);
    c.scale = a.scale;
    c.pipeline = {{"gentree", 16}};
    e.scale = b.scale;
    e.pipeline = {{"gentree", 32}};
    const auto rules = rules_for_unmeasured_shapes({{a, c}, {b, e}}, kAll, 0.2);
    require_partition(rules);
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].pipeline == std::map<std::string, int>{{"gentree", 16}});
    CHECK(rules[0].scale.count("mtree") == 1);
    CHECK(rules[0].comment.find("pipeline depth measured") != std::string::npos);
    CHECK(rules[1].bytes.lo == (4 << 20));
    CHECK(rules[1].pipeline.empty());
    CHECK(rules[1].scale.at("gentree") == Approx(std::sqrt(0.6 * 0.7)));
}

TEST_CASE("unmeasured shapes: a scale of the displaced component alone keeps the old rule",
          "[rest_rules]") {
    VouchedPoint a = pt(4096, true);
    a.scale = {{"fallback", 0.9}};
    const auto rules = rules_for_unmeasured_shapes({{a}}, kAll, 0.2);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].defers());
}
