// Generator registry and the params / size text formats (contracts in
// registry.hpp).
#include "plan/registry.hpp"
#include "plan/renumber.hpp"
#include "common/text_util.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "plan/butterfly.hpp"
#include "plan/cps.hpp"
#include "plan/gentree.hpp"
#include "plan/multitree.hpp"
#include "plan/mtree.hpp"
#include "plan/hcps.hpp"
#include "plan/rb.hpp"
#include "plan/rd.hpp"
#include "plan/rhd.hpp"
#include "plan/ring.hpp"
#include "plan/ring2d.hpp"

namespace genx {

Status parse_params(const std::string& text, ParamMap* out) {
    ParamMap result;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = trim(text.substr(pos, comma - pos));
        pos = comma + 1;
        // Empty items (an empty string, a trailing comma) carry no setting.
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos)
            return Status::invalid("params: item '" + item + "' in '" + text +
                                   "' is not key=value; no params were applied");
        const std::string key = trim(item.substr(0, eq));
        const std::string value = trim(item.substr(eq + 1));
        if (key.empty() || value.empty())
            return Status::invalid("params: item '" + item + "' in '" + text +
                                   "' has an empty " + (key.empty() ? "key" : "value") +
                                   "; no params were applied");
        if (!result.emplace(key, value).second)
            return Status::invalid("params: key '" + key + "' is given twice in '" + text +
                                   "'; no params were applied");
    }
    *out = std::move(result);
    return Status::ok();
}

Status merge_params(const std::vector<std::string>& texts, ParamMap* all) {
    for (const std::string& text : texts) {
        ParamMap more;
        GENX_RETURN_IF_ERROR(parse_params(text, &more));
        for (const auto& kv : more)
            if (!all->insert(kv).second) return Status::invalid("key '" + kv.first + "' is given twice");
    }
    return Status::ok();
}

std::string format_params(const ParamMap& params) {
    std::string out;
    for (const auto& kv : params) out += (out.empty() ? "" : ",") + kv.first + "=" + kv.second;
    return out;
}

Status parse_size(const std::string& text, size_t* out) {
    const std::string t = trim(text);
    size_t i = 0;
    size_t value = 0;
    constexpr size_t kMax = std::numeric_limits<size_t>::max();
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
        const size_t d = static_cast<size_t>(t[i] - '0');
        if (value > (kMax - d) / 10)
            return Status::invalid("size '" + text + "' is too large");
        value = value * 10 + d;
        ++i;
    }
    if (i == 0)
        return Status::invalid("size '" + text +
                               "' is not a byte count (expected digits with an optional "
                               "K, M or G suffix, e.g. 64K)");
    unsigned shift = 0;
    if (i < t.size()) {
        switch (std::tolower(static_cast<unsigned char>(t[i]))) {
            case 'k': shift = 10; break;
            case 'm': shift = 20; break;
            case 'g': shift = 30; break;
            default:
                return Status::invalid("size '" + text + "' has an unknown suffix '" +
                                       t.substr(i) + "' (expected K, M or G)");
        }
        if (i + 1 != t.size())
            return Status::invalid("size '" + text + "' has trailing text '" + t.substr(i + 1) +
                                   "' after the suffix");
    }
    if (shift != 0 && value > (kMax >> shift))
        return Status::invalid("size '" + text + "' is too large");
    *out = value << shift;
    return Status::ok();
}

const std::vector<std::string> kExecParamKeys = {kSegmentKey, kWindowKey};

bool is_exec_key(const std::string& key) {
    return std::find(kExecParamKeys.begin(), kExecParamKeys.end(), key) != kExecParamKeys.end();
}

void split_exec_keys(const ParamMap& all, ParamMap* generator, ParamMap* exec) {
    for (const auto& kv : all) {
        ParamMap* to = is_exec_key(kv.first) ? exec : generator;
        if (to != nullptr) to->insert(kv);
    }
}

std::string format_factors(const std::vector<int>& factors) {
    std::string out;
    for (int f : factors) out += (out.empty() ? "" : "x") + std::to_string(f);
    return out;
}

bool parse_int_in(const std::string& text, long lo, long hi, long* out) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

Status parse_factors(const std::string& text, std::vector<int>* out) {
    std::vector<int> factors;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t x = text.find_first_of("xX", pos);
        if (x == std::string::npos) x = text.size();
        const std::string item = text.substr(pos, x - pos);
        pos = x + 1;
        if (item.empty() || item.size() > 9 ||
            !std::all_of(item.begin(), item.end(),
                         [](unsigned char c) { return std::isdigit(c) != 0; }))
            return Status::invalid("factors '" + text + "': '" + item +
                                   "' is not a positive integer (expected e.g. 6x2)");
        factors.push_back(std::stoi(item));
    }
    *out = std::move(factors);
    return Status::ok();
}

// One line per family: {name, summary, accepted keys, generator, parameter space}.
const std::vector<GeneratorInfo>& generators() {
    static const std::vector<GeneratorInfo> table = {
        {"ring", "ring reduce-scatter + allgather, 2(P-1) steps, bandwidth optimal", {},
         prepare_ring, ring_candidates},
        {"rb", "reduce-broadcast through one parameter server (root=R), 2 steps", {"root"},
         prepare_rb, rb_candidates},
        {"cps", "co-located PS: full-mesh reduce-scatter + allgather, fan-in P, 2 steps", {},
         prepare_cps, cps_candidates},
        {"hcps", "hierarchical co-located PS over orthogonal groups (factors=6x2), 2m steps",
         {"factors"}, prepare_hcps, hcps_candidates},
        {"rhd", "recursive halving/doubling (Rabenseifner), non-power-of-two P by folding (distance=halving|doubling)",
         {"order", "distance"},
         prepare_rhd, rhd_candidates},
        {"rd", "recursive doubling of the whole vector, pairwise steps, non-power-of-two P by folding",
         {"order"}, prepare_rd, rd_candidates},
        {"butterfly", "Kolmakov-Zhang butterfly, any P, 2L-r steps (r=0..L, group=...)",
         {"r", "group", "order"}, prepare_butterfly, butterfly_candidates},
        {"gentree", "GenTree: per-switch CPS / mxn hierarchical CPS / ring sub-plans on the topology tree",
         {"pipeline", "plans", "rearrange"}, prepare_gentree, gentree_candidates, true, true},
        {"multitree", "MultiTree: one tree per root, contention-free per step on the network graph",
         {"order", "over", "trees"}, prepare_multitree, multitree_candidates, true},
        {"ring2d", "2D-ring (Ying et al.): rings along x and y of a torus or mesh, both orders at once, 2(X+Y-2) steps",
         {"dims"}, prepare_ring2d, ring2d_candidates, true},
        {"mtree", "MTREE: a few rate-weighted spanning trees of bounded height, pipelined reduce + broadcast",
         {"bytes", "chunks", "k", "over", "rho"}, prepare_mtree, mtree_candidates, true},
    };
    return table;
}

std::string retired_key_message(const GeneratorInfo& gen, const std::string& key) {
    // {family, key, what replaced it}
    static const struct {
        const char* family;
        const char* key;
        const char* note;
    } retired[] = {{"gentree", "bytes", kGenTreeRetiredPricing},
                   {"gentree", "model", kGenTreeRetiredPricing}};
    for (const auto& r : retired)
        if (gen.name == r.family && key == r.key)
            return "algorithm '" + gen.name + "': " + key + "= is gone: " + r.note;
    return "";
}

const GeneratorInfo* find_generator(const std::string& name) {
    for (const GeneratorInfo& g : generators())
        if (g.name == name) return &g;
    return nullptr;
}

Program RankGenerator::program(int rank) const {
    Program prog;
    emit(rank, &prog);
    finalize_program(prog);
    return prog;
}

const TopologyView* view_for_family(const GeneratorInfo& family, const TopologyView* topology) {
    if (topology == nullptr || family.inner_levels || !topology->network) return topology;
    return topology->network.get();
}

Status prepare(const std::string& name, int nranks, const ParamMap& params, RankGenerator* out) {
    return prepare(name, nranks, params, nullptr, out);
}

Status prepare(const std::string& name, int nranks, const ParamMap& params,
               const TopologyView* topology, RankGenerator* out) {
    const GeneratorInfo* gen = find_generator(name);
    if (gen == nullptr) {
        std::vector<std::string> names;
        for (const GeneratorInfo& g : generators()) names.push_back(g.name);
        return Status::not_found("unknown algorithm '" + name + "'; known algorithms: " +
                                 join(names, "(none)"));
    }
    for (const auto& kv : params) {
        bool known = false;
        for (const std::string& k : gen->param_keys) known = known || k == kv.first;
        if (!known && !retired_key_message(*gen, kv.first).empty())
            return Status::invalid(retired_key_message(*gen, kv.first));
        if (!known)
            return Status::invalid("algorithm '" + name + "' has no parameter '" + kv.first +
                                   "'; accepted keys: " + join(gen->param_keys, "(none)"));
    }
    if (nranks < 1)
        return Status::invalid("algorithm '" + name + "': number of ranks must be >= 1, got " +
                               std::to_string(nranks));
    if (topology != nullptr && !topology->empty() && topology->nranks() != nranks)
        return Status::invalid("algorithm '" + name + "': the topology places " +
                               std::to_string(topology->nranks()) + " ranks, not " +
                               std::to_string(nranks));
    RankGenerator g;
    GenRequest req;
    req.nranks = nranks;
    req.params = params;
    req.topology = topology != nullptr && !topology->empty() ? view_for_family(*gen, topology) : nullptr;
    // order= is the registry's: the family builds its own numbering and
    // the ranks are renamed after (renumber.hpp).
    std::vector<int> perm;
    if (auto it = req.params.find(kOrderKey); it != req.params.end() && renumberable_family(name)) {
        const Status st = rank_numbering(it->second, nranks, req.topology, &perm);
        if (!st) return Status::invalid("algorithm '" + name + "': " + st.message());
        req.params.erase(it);
    }
    GENX_RETURN_IF_ERROR(gen->prepare(req, &g));
    if (g.header.nranks != nranks || g.header.nblocks < 1 || !g.emit)
        return Status::internal("generator '" + name + "' returned a malformed header for P=" +
                                std::to_string(nranks) + " (nranks " +
                                std::to_string(g.header.nranks) + ", nblocks " +
                                std::to_string(g.header.nblocks) + ")");
    g.header.algorithm = name;
    // A generator that resolves defaults records them itself; otherwise the
    // user's keys are the canonical form.
    if (g.header.params.empty()) g.header.params = format_params(req.params);
    if (!perm.empty()) {
        renumber(perm, &g);
        ParamMap all;
        GENX_RETURN_IF_ERROR(parse_params(g.header.params, &all));
        all[kOrderKey] = params.at(kOrderKey);
        g.header.params = format_params(all);
    }
    *out = std::move(g);
    return Status::ok();
}

Status generate_rank(const std::string& name, int nranks, int rank, const ParamMap& params,
                     PlanHeader* header, Program* out) {
    return generate_rank(name, nranks, rank, params, nullptr, header, out);
}

Status generate_rank(const std::string& name, int nranks, int rank, const ParamMap& params,
                     const TopologyView* topology, PlanHeader* header, Program* out) {
    RankGenerator gen;
    GENX_RETURN_IF_ERROR(prepare(name, nranks, params, topology, &gen));
    if (rank < 0 || rank >= nranks)
        return Status::invalid("algorithm '" + name + "': rank " + std::to_string(rank) +
                               " is outside 0.." + std::to_string(nranks - 1));
    *out = gen.program(rank);
    *header = std::move(gen.header);
    return Status::ok();
}

Status generate(const RankGenerator& gen, Plan* out) {
    Plan plan;
    static_cast<PlanHeader&>(plan) = gen.header;
    plan.programs.resize(static_cast<size_t>(gen.header.nranks));
    for (int r = 0; r < gen.header.nranks; ++r) gen.emit(r, &plan.programs[static_cast<size_t>(r)]);
    finalize(plan);
    *out = std::move(plan);
    return Status::ok();
}

Status generate(const std::string& name, int nranks, const ParamMap& params, Plan* out) {
    return generate(name, nranks, params, nullptr, out);
}

Status generate(const std::string& name, int nranks, const ParamMap& params,
                const TopologyView* topology, Plan* out) {
    RankGenerator gen;
    GENX_RETURN_IF_ERROR(prepare(name, nranks, params, topology, &gen));
    return generate(gen, out);
}

}  // namespace genx
