// Plan drawing: one arrow per message, every rank and step labelled, marks
// for local reduces, and well-formed, escaped XML.
#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/make_plan.hpp"
#include "plan/registry.hpp"
#include "plan/svg.hpp"

using namespace genx;

namespace {

size_t occurrences(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
}


}  // namespace

TEST_CASE("plan_to_svg draws ranks, steps, messages and reduces", "[svg]") {
    for (const auto& c :
         {std::make_pair(7, std::string("r=0")), std::make_pair(7, std::string("r=2")),
          std::make_pair(8, std::string("r=1,group=xor"))}) {
        const Plan plan = make_plan("butterfly", c.first, c.second);
        const std::string svg = plan_to_svg(plan);
        INFO("P=" << c.first << " " << c.second);
        CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
        CHECK(svg.size() >= 7);
        CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
        size_t sends = 0, reducing_steps = 0;
        for (const Program& prog : plan.programs)
            for (const Step& st : prog.steps) {
                sends += st.sends.size();
                reducing_steps += st.ops.empty() ? 0 : 1;
            }
        // One arrow (a line with an arrowhead) per message.
        CHECK(occurrences(svg, "marker-end=") == sends);
        // One ⊕ mark per rank and step that reduces.
        CHECK(occurrences(svg, "<circle") == reducing_steps);
        for (int r = 0; r < plan.nranks; ++r)
            CHECK(occurrences(svg, ">rank " + std::to_string(r) + "<") == 1);
        for (int s = 0; s < plan.max_steps(); ++s)
            CHECK(occurrences(svg, ">step " + std::to_string(s) + "<") == 1);
        CHECK(occurrences(svg, "<g>") == occurrences(svg, "</g>"));
        CHECK(occurrences(svg, "<text") == occurrences(svg, "</text>"));
    }
}

TEST_CASE("plan_to_svg labels blocks and escapes text", "[svg]") {
    Plan plan;
    plan.algorithm = "hand<&>";
    plan.nranks = 2;
    plan.nblocks = 2;
    plan.programs.resize(2);
    Step a, b;
    a.sends.push_back(Transfer{1, {0, 1}, kResult});
    b.recvs.push_back(Transfer{0, {0, 1}, 0});
    b.ops.push_back(LocalOp{OpKind::Copy, kResult, {0}, {0, 1}});
    plan.programs[0].steps.push_back(a);
    plan.programs[1].steps.push_back(b);
    finalize(plan);
    const std::string svg = plan_to_svg(plan);
    CHECK(svg.find("hand&lt;&amp;&gt;") != std::string::npos);
    CHECK(svg.find("hand<&>") == std::string::npos);
    CHECK(svg.find(">b[0..1]<") != std::string::npos);
    // A copy is marked "=" and its arrow is not a reduce (blue).
    CHECK(svg.find(">=</text>") != std::string::npos);
    CHECK(svg.find("url(#ar)") != std::string::npos);
    CHECK(svg.find("url(#ar-red)") == std::string::npos);
    // The empty plan still renders.
    Plan empty;
    empty.nranks = 1;
    empty.nblocks = 1;
    empty.programs.resize(1);
    CHECK(plan_to_svg(empty).find("</svg>") != std::string::npos);
}
