// Rules files: the per-cluster file that tells genx which allreduce to run
// (docs/design.md §5.1; schema in docs/rules.md and docs/rules.schema.json).
//
// A rules file is JSON:
//
//   {"format": "genx-rules", "version": 1,
//    "provenance": {"genx_version": "0.1.0", "date": "2026-11-22T10:00:00Z",
//                   "hosts": 4, "topology": "x86_64; <cpu model>; 64 cpus"},
//    "model": {...},                       // ModelParams (cost_model.hpp)
//    "allreduce": [                        // ordered, first match wins
//      {"comm_size": "2-8", "bytes": "0-64K", "algorithm": "rhd"},
//      {"nodes": "2-inf", "ppn": 4, "bytes": "1M-inf",
//       "algorithm": "hcps", "params": "factors=4x2"},
//      {"algorithm": "model"}]}
//
// Matching.  A rule matches a call when every key it has matches; a missing
// key matches anything.  comm_size, nodes and ppn are inclusive count ranges
// (an integer, "N", "LO-HI" or "LO-inf"); bytes is a half-open byte range
// "LO-HI" = [LO, HI) with binary K/M/G suffixes and "inf", so consecutive
// ranges ("0-64K", "64K-1M", "1M-inf") tile the sizes without overlap.
// "model" chooses by the cost model among the applicable candidates (all
// families, or the rule's "families").  When no rule matches, genx chooses by
// the model, as if the list ended with {"algorithm": "model"}.
//
// Why the loader is strict and loud (no silently ignored keys or files):
// Open MPI's tuned reader discards a bad file without a word,
// which is how clusters end up running defaults they think they replaced.
// Every error names the file, the line, the field and what genx does about
// it: with rules_strict off genx warns and uses its built-in defaults (never
// half a file), with rules_strict on the caller aborts.
//
// genx's own defaults are a rules file in the same format (default_rules.cpp),
// parsed by the same code.
#pragma once

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <memory>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.hpp"
#include "plan/topology_view.hpp"
#include "tuning/cost_model.hpp"

namespace genx {

constexpr int kRulesFormatVersion = 1;
// The value of the "format" key: tells a rules file from the other JSON
// files a user may pass by mistake (a bare model, tuned's JSON rules).
constexpr const char* kRulesFormatName = "genx-rules";
// The "algorithm" value that asks the cost model to choose.
constexpr const char* kModelAlgorithm = "model";
// The component genx displaced (normally tuned): genx declines the call
// before sending anything and the glue hands it to that component.
constexpr const char* kFallbackAlgorithm = "fallback";
// A "fallback" rule may name one of Open MPI's own allreduce algorithms
// (coll/base, the functions tuned runs when an algorithm is forced) with
// params "base=NAME": then blocking calls run that algorithm instead of the
// displaced component's own choice; non-blocking and persistent calls still
// go to the displaced component (coll/base has no non-blocking forms).
// Numbered as coll_tuned_allreduce_algorithm numbers them; segmented_ring
// (5) is left out: it needs a segment size.
constexpr const char* kBaseParam = "base";
struct BaseAlgorithm {
    const char* name;
    int tuned_id;
};
const std::vector<BaseAlgorithm>& base_algorithms();
// The algorithm of that name, or of that tuned number; nullptr for one
// genx does not offer.
const BaseAlgorithm* find_base_algorithm(const std::string& name);
const BaseAlgorithm* find_base_algorithm(int tuned_id);
// The params that name it: "base=NAME".
std::string base_algorithm_params(const BaseAlgorithm& b);
// The tuned number of the algorithm a decision's or rule's params name
// ("base=NAME"), 0 when they name none (the displaced component decides).
int base_algorithm_id(const std::string& params);
// "basic_linear, nonoverlapping, ..." for messages.
std::string base_algorithm_names();

// Inclusive range of counts; hi < 0 means no upper bound.
struct CountRange {
    long lo = 1;
    long hi = -1;
    bool any = true;  // the key was absent
    bool contains(long v) const { return any || (v >= lo && (hi < 0 || v <= hi)); }
};

// Half-open byte range [lo, hi); hi == kNoLimit means no upper bound.
struct ByteRange {
    static constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();
    size_t lo = 0;
    size_t hi = kNoLimit;
    bool contains(size_t v) const { return v >= lo && (hi == kNoLimit || v < hi); }
};

// Which calls a rule applies to ("call" key): both (absent), blocking
// MPI_Allreduce only, or non-blocking and persistent ones only.
enum class CallKind : uint8_t { Any, Blocking, Nonblocking };

struct AllreduceRule {
    CallKind call = CallKind::Any;
    CountRange comm_size;
    CountRange nodes;
    CountRange ppn;
    // Switch levels between the hosts and the top of the topology file's
    // tree (CommShape::switch_levels: 0 without a topology file).
    CountRange switch_levels;
    // "rated": true: the rule applies only where the communicator's network
    // is known with a rate on every link (CommShape::rated()).
    bool rated_only = false;
    ByteRange bytes;
    std::string algorithm;              // a registered generator, "model" or "fallback"
    std::string params;                 // canonical "k=v,..." (generator + executor keys)
    std::vector<std::string> families;  // "model" only: candidate families, empty = all
    // "model" only, with families: the first family listed is the incumbent;
    // the model's best candidate of another family replaces the incumbent's
    // best only when predicted at least this fraction faster (0 = any gain).
    // The incumbent may be "fallback": the displaced component, priced as
    // what it runs (tuning/displaced.hpp: tuned 4.1's fixed decision, or the
    // best of Open MPI's ring, recursive doubling and Rabenseifner where
    // unknown); where no other family is that much faster, the size is left
    // to the displaced component.
    double margin = 0;
    // "model" only: measured ÷ predicted per family ("fallback": the
    // displaced component) where genx-tune timed them at these sizes; the
    // model's prices are multiplied by it before ranking, so that families
    // it mis-prices on this cluster are ranked as measured (docs/rules.md,
    // "Calibrated families").  A family not listed keeps its price.
    std::map<std::string, double> scale;
    // "model" only: per family, the pipeline depth (1: unpipelined) of the
    // plan whose time gave its scale; where the shape has plans of that
    // depth, only they are weighed, so a scale measured on pipelined plans
    // is not applied to unpipelined ones the model happens to price lower
    // (docs/rules.md, "Calibrated families").
    std::map<std::string, int> pipeline;
    std::string comment;
    int index = 0;  // position in the "allreduce" list
    int line = 0;   // line of the rule in its file

    bool by_model() const { return algorithm == kModelAlgorithm; }
    bool defers() const { return algorithm == kFallbackAlgorithm; }
    // Whether it applies to non-blocking (true) or blocking (false) calls.
    bool applies_to(bool nonblocking) const {
        return call == CallKind::Any || (call == CallKind::Nonblocking) == nonblocking;
    }
};

struct Provenance {
    std::string genx_version;
    std::string date;
    int hosts = 0;          // 0 = not recorded
    std::string topology;   // fingerprint; "" or "*" = any cluster
    std::string generator;  // the tool (and command) that wrote the file, free text
};

struct RulesFile {
    std::string source;  // file name, or "built-in defaults"
    int version = kRulesFormatVersion;
    Provenance provenance;
    bool has_model = false;  // false: "model" rules use the built-in defaults' model
    ModelParams model;
    std::vector<AllreduceRule> allreduce;
    // Some rule names a "call": non-blocking calls get a table of their own.
    // Whether blocking and non-blocking calls can decide differently: a
    // rule names one kind of call, a "fallback" rule names an Open MPI
    // algorithm (blocking only), or the model prices non-blocking steps
    // apart (ModelParams::nonblocking_step).
    bool splits_calls() const {
        if (model.nonblocking_step > 0) return true;
        for (const AllreduceRule& r : allreduce)
            if (r.call != CallKind::Any || (r.defers() && !r.params.empty())) return true;
        return false;
    }
};

// What the caller knows about the cluster it runs on, for the checks that
// depend on it.
struct RulesCheck {
    // This cluster's fingerprint (local_fingerprint()); "" skips the check.
    std::string fingerprint;
    // When given, a file made for another fingerprint loads and the error
    // it would have been ("<source>:<line>: provenance.topology: ...") is
    // written here instead (genx-plan shows such files; the component
    // leaves this null and refuses them).
    std::string* mismatch = nullptr;
};

// The communicator a call is on.  nodes / ppn 0 = unknown: a rule that
// constrains an unknown value does not match.  ppn is the largest number of
// the communicator's ranks on one node.
struct CommShape {
    CommShape() = default;
    CommShape(int size_, int nodes_, int ppn_, std::shared_ptr<const TopologyView> topology_ = nullptr)
        : size(size_), nodes(nodes_), ppn(ppn_), topology(std::move(topology_)) {}
    int size = 1;
    int nodes = 0;
    int ppn = 0;
    // The network the ranks sit on, when a topology file placed them
    // (plan/topology_view.hpp); null = hosts grouped by name only.
    std::shared_ptr<const TopologyView> topology;

    // Levels of switches above the hosts in `topology` (its depth: 1 for a
    // single switch, 2 for leaves under a root, 3 for 2dc's leaves, root and
    // the other datacenter's root); 0 without a topology file, for a direct
    // network (torus, mesh, graph), and when a link of the tree has no
    // declared rate (no overlay, or genx's virtual root over several top
    // switches): unpriced levels are not levels to plan for.
    int switch_levels() const;
    // Whether every link of the communicator's network has a rate: a switch
    // tree with rated levels (switch_levels() >= 1), or a direct network
    // (torus, mesh, graph) whose every link class has one.
    bool rated() const;
};

// Parses rules text; `source` names it in messages.  Errors:
//   "<source>:<line>: <field>: <what was wrong>"
// (ParseError for JSON syntax, InvalidArgument for the rest).  The error
// says only what is wrong; what genx does about it is the caller's policy
// (load_rules_or_defaults adds it).
Status parse_rules(const std::string& text, const std::string& source, const RulesCheck& check,
                   RulesFile* out);
// Reads and parses a file (IoError naming the path when it cannot be read).
Status load_rules_file(const std::string& path, const RulesCheck& check, RulesFile* out);

// genx's built-in defaults: the text (default_rules.cpp) and the file parsed
// from it, once (a parse failure there is a bug that unit tests catch; it
// yields an empty rule list, i.e. the model over all families).
const std::string& builtin_rules_text();
const RulesFile& builtin_rules();
// A loaded file without a "model" prices with the built-in one, as the
// component uses it (load_rules_or_defaults does this).
void use_builtin_model_if_none(RulesFile* f);

// The policy of docs/design.md §5.1 for `path` ("" = no file: the defaults):
//   * the file loads: *out is it, *warning empty, Ok;
//   * it does not, strict off: *out is the built-in defaults, *warning is
//     the error plus "genx ignores this file and uses its built-in
//     defaults", Ok;
//   * it does not, strict on: returns the error plus "aborting because
//     rules_strict is set".
// A file without a "model" gets the built-in defaults' model.
Status load_rules_or_defaults(const std::string& path, bool strict, const RulesCheck& check,
                              RulesFile* out, std::string* warning);

// Whether a rule applies to the kind of call (its "call" key) and its count
// keys (comm_size, nodes, ppn) admit the shape; an unknown placement (0)
// matches only rules without nodes/ppn keys.
bool rule_applies(const AllreduceRule& rule, const CommShape& shape, bool nonblocking = false);
// First rule that matches, or nullptr (the decision table applies the same
// order per size interval, after dropping rules whose plan cannot run).
const AllreduceRule* match_rule(const RulesFile& rules, const CommShape& shape, size_t bytes,
                                bool nonblocking = false);

// Text forms, as written in files: "64K-1M", "0-inf", "2-8", "4", "".
std::string format_byte_range(const ByteRange& r);
std::string format_count_range(const CountRange& r);
Status parse_byte_range(const std::string& text, ByteRange* out);
Status parse_count_range(const std::string& text, CountRange* out);
// "file:line" of a rule, for verbose output ("built-in defaults:14").
std::string rule_location(const RulesFile& rules, const AllreduceRule& rule);

// Serialises a RulesFile.  format_rules() writes the layout genx-tune uses:
// one rule per line, so files diff well and error line numbers point at
// the rule.
nlohmann::json rules_to_json(const RulesFile& rules);
std::string format_rules(const RulesFile& rules);

// The model in `path`, for tools that price plans (genx-plan --model): a
// rules file's "model" (the built-in defaults' model when it has none), or a
// file holding only a model object (cost_model.hpp's format).  The host
// fingerprint is not checked: pricing a plan for another cluster is fine.
Status load_model_file(const std::string& path, ModelParams* out);

// This host's fingerprint: "<machine>; <cpu model>; <n> cpus".  It is what
// genx-tune records and what the component compares against, so a file
// fitted on one kind of host is not applied to another.
std::string local_fingerprint();

}  // namespace genx
