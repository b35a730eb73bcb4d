// Process-wide caches of rules and decision tables (see selector.hpp).
#include "tuning/selector.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace genx {

namespace {

std::mutex& cache_mutex() {
    static std::mutex m;
    return m;
}

}  // namespace

Status selector_rules(const std::string& path, bool strict,
                      std::shared_ptr<const RulesFile>* out, std::string* warning) {
    static std::map<std::pair<std::string, bool>, std::shared_ptr<const RulesFile>> cache;
    if (warning != nullptr) warning->clear();
    std::lock_guard<std::mutex> lock(cache_mutex());
    const auto key = std::make_pair(path, strict);
    auto it = cache.find(key);
    if (it != cache.end()) {
        *out = it->second;
        return Status::ok();
    }
    RulesCheck check;
    check.fingerprint = local_fingerprint();
    auto rules = std::make_shared<RulesFile>();
    GENX_RETURN_IF_ERROR(load_rules_or_defaults(path, strict, check, rules.get(), warning));
    cache.emplace(key, rules);
    *out = std::move(rules);
    return Status::ok();
}

Status selector_table(const std::shared_ptr<const RulesFile>& rules, const CommShape& shape,
                      const TableOptions& options, std::shared_ptr<const DecisionTable>* out,
                      std::vector<std::string>* warnings) {
    using Key = std::tuple<const RulesFile*, int, int, int, int, int, bool, bool, bool, bool, uint64_t,
                           int>;
    static std::map<Key, std::shared_ptr<const DecisionTable>> cache;
    // Keyed by the topology's fingerprint too: the same size and placement
    // on another network (or other hosts of it) is another table.
    const uint64_t topo = shape.topology ? shape.topology->fingerprint() : 0;
    const Key key{rules.get(),     shape.size,   shape.nodes,   shape.ppn,
                  options.max_hcps_levels, options.max_class_log2, options.exact,
                  options.explain, options.strict, options.nonblocking, topo,
                  static_cast<int>(options.displaced)};
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = cache.find(key);
    if (it != cache.end()) {
        *out = it->second;
        return Status::ok();
    }
    auto table = std::make_shared<DecisionTable>();
    GENX_RETURN_IF_ERROR(DecisionTable::build(*rules, shape, options, table.get(), warnings));
    cache.emplace(key, table);
    *out = std::move(table);
    return Status::ok();
}

}  // namespace genx
