// Generator registry: algorithm name -> pure generator.
//
// Every family registers here once (one line in registry.cpp); genx-plan,
// the checker tests, the selector and the component all find generators by
// name, so adding a family never touches them.
//
// Parameters are one string "key=value,key=value" (the user's
// coll_genx_allreduce_params and genx-plan's --param).  Keys a generator
// does not know are an error naming the key; executor keys (segment,
// window) are split off by split_params() before the generator sees them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/status.hpp"

namespace genx {

using ParamMap = std::map<std::string, std::string>;

// Parses "k=v,k=v" (spaces ignored, empty string = no params).  Errors name
// the offending item.
Status parse_params(const std::string& text, ParamMap* out);
// Canonical text form: keys sorted, "k=v,k=v".
std::string format_params(const ParamMap& params);
// Parses a byte size with optional K/M/G suffix (binary multiples): "64K".
Status parse_size(const std::string& text, size_t* out);

struct GenRequest {
    int nranks = 0;
    ParamMap params;  // generator keys only
};

using GeneratorFn = Status (*)(const GenRequest& req, Plan* out);

struct GeneratorInfo {
    std::string name;
    std::string summary;                 // one line, for --help and docs
    std::vector<std::string> param_keys; // accepted keys
    GeneratorFn fn = nullptr;
};

const std::vector<GeneratorInfo>& generators();
const GeneratorInfo* find_generator(const std::string& name);

// Finds the generator, rejects unknown keys, runs it, finalizes the plan.
Status generate(const std::string& name, int nranks, const ParamMap& params, Plan* out);

}  // namespace genx
