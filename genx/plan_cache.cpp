// Process-wide plan cache (design in plan_cache.hpp).
#include "genx/plan_cache.hpp"

#include <list>
#include <map>
#include <mutex>
#include <tuple>
#include <cstdint>

#include "plan/registry.hpp"
#include "plan/renumber.hpp"

namespace genx {

namespace {

// (algorithm, params, P, rank, topology fingerprint or 0).
using Key = std::tuple<std::string, std::string, int, int, uint64_t>;

struct Cache {
    std::mutex m;
    // Most recently requested at the front.
    std::list<std::pair<Key, std::shared_ptr<const RankPlan>>> lru;
    std::map<Key, decltype(lru)::iterator> index;
    size_t bytes = 0;
    size_t cap = kPlanCacheDefaultCap;
    uint64_t generated = 0;
    uint64_t evicted = 0;

    // Drops unused entries from the back until within the cap (or nothing
    // unused is left).  Caller holds m.
    void trim() {
        for (auto it = lru.end(); bytes > cap && it != lru.begin();) {
            --it;
            // use_count 1: only the cache holds it, so no communicator (and
            // no call in flight, which runs on a communicator's reference)
            // can be using it.
            if (it->second.use_count() != 1) continue;
            bytes -= it->second->bytes;
            index.erase(it->first);
            it = lru.erase(it);
            ++evicted;
        }
    }
};

Cache& cache() {
    static Cache* c = new Cache();  // never destroyed: communicators may outlive statics
    return *c;
}

template <typename T>
size_t vec_bytes(const std::vector<T>& v) {
    return v.capacity() * sizeof(T);
}

std::shared_ptr<RankPlan> generate(const std::string& algorithm, const std::string& params,
                                   int nranks, int rank, const TopologyView* topology) {
    auto e = std::make_shared<RankPlan>();
    e->algorithm = algorithm;
    e->params = params;
    e->nranks = nranks;
    e->rank = rank;
    ParamMap all, gen;
    e->status = parse_params(params, &all);
    if (e->status) e->status = split_exec_params(all, &gen, &e->exec);
    if (e->status)
        e->status = generate_rank(algorithm, nranks, rank, gen, topology, &e->header, &e->program);
    e->bytes = sizeof(RankPlan) + algorithm.size() + params.size() + program_bytes(e->program) +
               vec_bytes(e->header.symmetry) + vec_bytes(e->header.symmetry_fixed) +
               vec_bytes(e->header.representatives);
    return e;
}

}  // namespace

size_t program_bytes(const Program& program) {
    size_t b = vec_bytes(program.steps) + vec_bytes(program.slot_layout);
    for (const Step& s : program.steps) {
        b += vec_bytes(s.recvs) + vec_bytes(s.sends) + vec_bytes(s.ops);
        for (const Transfer& t : s.recvs) b += vec_bytes(t.blocks);
        for (const Transfer& t : s.sends) b += vec_bytes(t.blocks);
        for (const LocalOp& o : s.ops) b += vec_bytes(o.srcs) + vec_bytes(o.blocks);
    }
    for (const std::vector<int>& l : program.slot_layout) b += vec_bytes(l);
    return b;
}

std::shared_ptr<const RankPlan> rank_plan(const std::string& algorithm, const std::string& params,
                                          int nranks, int rank) {
    return rank_plan(algorithm, params, nranks, rank, nullptr);
}

std::shared_ptr<const RankPlan> rank_plan(const std::string& algorithm, const std::string& params,
                                          int nranks, int rank, const TopologyView* topology) {
    Cache& c = cache();
    // Only a plan that reads the view (its family, or order=topo) is keyed
    // (and generated) by it:
    // the others share their plans across communicators on any network.
    const GeneratorInfo* info = find_generator(algorithm);
    const bool reads_view = info != nullptr && (info->uses_topology || order_reads_topology(params));
    if (!reads_view || (topology != nullptr && topology->empty())) topology = nullptr;
    Key key{algorithm, params, nranks, rank, topology != nullptr ? topology->fingerprint() : 0};
    {
        std::lock_guard<std::mutex> lock(c.m);
        auto it = c.index.find(key);
        if (it != c.index.end()) {
            c.lru.splice(c.lru.begin(), c.lru, it->second);
            return it->second->second;
        }
    }
    // Generated outside the lock: another thread may generate the same
    // plan meanwhile; the first to publish wins and the other copy is
    // dropped, so equal requests still end up sharing one entry.
    std::shared_ptr<const RankPlan> plan = generate(algorithm, params, nranks, rank, topology);
    std::lock_guard<std::mutex> lock(c.m);
    auto it = c.index.find(key);
    if (it != c.index.end()) {
        c.lru.splice(c.lru.begin(), c.lru, it->second);
        return it->second->second;
    }
    c.lru.emplace_front(key, plan);
    c.index.emplace(std::move(key), c.lru.begin());
    c.bytes += plan->bytes;
    ++c.generated;
    c.trim();
    return plan;
}

PlanCacheStats plan_cache_stats() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.m);
    PlanCacheStats s;
    s.entries = c.lru.size();
    s.bytes = c.bytes;
    s.cap = c.cap;
    s.generated = c.generated;
    s.evicted = c.evicted;
    return s;
}

void set_plan_cache_cap(size_t bytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.m);
    c.cap = bytes;
    c.trim();
}

}  // namespace genx
