// Generator registry: algorithm name -> pure per-rank generator and the
// family's parameter space.
//
// Every family registers here once (one line in registry.cpp); genx-plan,
// the checker tests, the selector and the component all find generators by
// name, and the selector asks each family for its candidates, so adding a
// family never touches them.
//
// Parameters are one string "key=value,key=value" (the user's
// coll_genx_allreduce_params and genx-plan's --param).  Keys a generator
// does not know are an error naming the key; executor keys (segment,
// window) are split off by split_params() before the generator sees them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "plan/topology_view.hpp"
#include "common/status.hpp"

namespace genx {

using ParamMap = std::map<std::string, std::string>;

// Parses "k=v,k=v" (spaces ignored, empty string = no params).  Errors name
// the offending item.
Status parse_params(const std::string& text, ParamMap* out);
// Several such texts (a tool's repeated -p) into one map; a key given twice
// is an error.
Status merge_params(const std::vector<std::string>& texts, ParamMap* all);
// Canonical text form: keys sorted, "k=v,k=v".
std::string format_params(const ParamMap& params);
// Parses a byte size with optional K/M/G suffix (binary multiples): "64K".
Status parse_size(const std::string& text, size_t* out);

// The executor's keys, which params may carry besides a generator's own
// (runtime/executor.hpp split_exec_params reads them; rules files accept
// them): segment (bytes per message, K/M/G) and window (segments in flight).
constexpr const char* kSegmentKey = "segment";
constexpr const char* kWindowKey = "window";
// Their defaults: 1 MiB per message, 4 segments in flight per transfer.
constexpr size_t kDefaultSegmentBytes = size_t{1} << 20;
constexpr int kDefaultWindow = 4;
extern const std::vector<std::string> kExecParamKeys;
bool is_exec_key(const std::string& key);
// The one split of params into the generator's keys and the executor's
// (either output may be null); values are not checked here
// (split_exec_params parses the executor's).
void split_exec_keys(const ParamMap& all, ParamMap* generator, ParamMap* exec);

// A generator's integer parameter: `text` is a decimal integer in
// [lo, hi] (strtol's syntax, the whole text); false otherwise, and the
// caller says what the key means.
bool parse_int_in(const std::string& text, long lo, long hi, long* out);

// "6x2" <-> {6, 2}: the one spelling of a factor list (hcps factors,
// butterfly groups).  Factors are positive decimal integers joined by 'x'
// (or 'X'); range checks belong to the caller.
std::string format_factors(const std::vector<int>& factors);
Status parse_factors(const std::string& text, std::vector<int>* out);

struct GenRequest {
    int nranks = 0;
    ParamMap params;  // generator keys only
    // The network the ranks sit on (topology_view.hpp), not owned; null or
    // empty when none is known.  Only topology-following families read it.
    const TopologyView* topology = nullptr;
};

// A generator prepared for one (P, params): the params are validated and
// whatever does not depend on the rank is computed (butterfly's schedule
// over its group), so that program(rank) is a cheap, pure, infallible
// function of the rank.  A running rank builds only its own program; the
// all-rank Plan (checker, printers, tests) calls the same function for
// every rank, so what is proven is what runs.  Immutable once prepared:
// program() may be called from several threads.
struct RankGenerator {
    PlanHeader header;
    // Appends rank `rank`'s steps to out->steps (0 <= rank < nranks).
    std::function<void(int rank, Program* out)> emit;

    // Rank `rank`'s finalized program.
    Program program(int rank) const;
};

using PrepareFn = Status (*)(const GenRequest& req, RankGenerator* out);

// What the selector tells a family when it asks for its parameter space.
struct CandidateContext {
    int nranks = 0;
    int ranks_per_node = 0;   // 0 = unknown
    int max_hcps_levels = 0;  // hierarchical factorisations with at most this many levels (0 = all)
    const TopologyView* topology = nullptr;  // as GenRequest::topology
};
// Appends the canonical params of every variant of the family worth pricing
// for the context (nothing when the family does not apply).
using CandidatesFn = void (*)(const CandidateContext& ctx, std::vector<std::string>* out);

struct GeneratorInfo {
    std::string name;
    std::string summary;                 // one line, for --help and docs
    std::vector<std::string> param_keys; // accepted keys
    PrepareFn prepare = nullptr;
    CandidatesFn candidates = nullptr;
    // The family reads GenRequest::topology: its plans depend on the view,
    // so caches key them by the view's fingerprint too.
    bool uses_topology = false;
    // The family follows levels inside hosts (packages, NUMA nodes:
    // topology/locality.hpp); the others are given the view without them
    // (TopologyView::network), their hosts as leaves.
    bool inner_levels = false;
};

// The view `family` reads of `topology`: the view itself, or its network
// without levels inside hosts for a family that does not follow them.
const TopologyView* view_for_family(const GeneratorInfo& family, const TopologyView* topology);

// Keys a family no longer accepts get an error naming what replaced them
// rather than "unknown key": "algorithm 'NAME': KEY= is gone: ..." for a
// retired key (registry.cpp's table), else "".
std::string retired_key_message(const GeneratorInfo& gen, const std::string& key);

const std::vector<GeneratorInfo>& generators();
const GeneratorInfo* find_generator(const std::string& name);

// Up to this many ranks the tools and the cost model read every rank's
// program, exact for any count.  Beyond, a plan's statistics come from its
// declared representatives and its price from one node's ranks (the
// cost-model quotient), which is what keeps 10⁵ ranks cheap.
constexpr int kWholePlanMaxRanks = 64;

// Finds the generator, rejects unknown keys and a bad P, prepares it.
Status prepare(const std::string& name, int nranks, const ParamMap& params, RankGenerator* out);
// The same on a topology view (null = none known); a view that does not
// hold exactly nranks ranks is an error.  The view must outlive `out`.
Status prepare(const std::string& name, int nranks, const ParamMap& params,
               const TopologyView* topology, RankGenerator* out);
// One rank's program (and the header every rank shares).
Status generate_rank(const std::string& name, int nranks, int rank, const ParamMap& params,
                     PlanHeader* header, Program* out);
Status generate_rank(const std::string& name, int nranks, int rank, const ParamMap& params,
                     const TopologyView* topology, PlanHeader* header, Program* out);
// Every rank's program, finalized: the all-rank Plan.
Status generate(const std::string& name, int nranks, const ParamMap& params, Plan* out);
Status generate(const std::string& name, int nranks, const ParamMap& params,
                const TopologyView* topology, Plan* out);
Status generate(const RankGenerator& gen, Plan* out);

}  // namespace genx
