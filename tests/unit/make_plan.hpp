// Test helper: a plan from the registry, failing the test (with the
// generator's message) when generation fails.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "plan/registry.hpp"

inline genx::Plan make_plan(const std::string& name, int P, const std::string& params = "") {
    genx::ParamMap pm;
    REQUIRE(genx::parse_params(params, &pm).is_ok());
    genx::Plan plan;
    const genx::Status st = genx::generate(name, P, pm, &plan);
    INFO(name << " P=" << P << " params='" << params << "': " << st.message());
    REQUIRE(st.is_ok());
    return plan;
}
