// Decision table construction and lookup (design in decision_table.hpp).
#include "tuning/decision_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <memory>

#include "common/hash.hpp"
#include "common/text_util.hpp"
#include "plan/registry.hpp"
#include "tuning/closed_form.hpp"
#include "tuning/gentree_choice.hpp"

namespace genx {

RankMap rank_map_for(const CommShape& shape) {
    // A topology file says where each rank is: same host = intra-node,
    // whatever the order of the ranks (a round-robin placement included).
    if (shape.topology && shape.topology->nranks() == shape.size) {
        // Levels inside hosts (discovered, unrated) are not network: ranks
        // of one host are priced with the model's intra class.
        const TopologyView net = shape.topology->without_inner();
        RankMap m;
        m.node = net.host_of_rank();
        // A direct network's hosts talk over links of their own; a switch
        // tree's uplinks are shared by the transfers crossing them.
        m.direct = direct_network(net);
        m.tree = switch_tree(net);
        return m;
    }
    if (shape.ppn > 1) return RankMap::by_slot(shape.size, shape.ppn);
    return RankMap{};
}

namespace {

// One path's line: seconds = fixed + slope · bytes.
struct Line {
    double fixed = 0;
    double slope = 0;
};

// The latency terms are fixed, the rest grows with the size (for this
// critical path): α·steps + α_m·messages + the switch links' latency, and
// β, ε, γ, δ per byte.
Line line_of(const Prediction& p, double bytes) {
    Line l;
    l.fixed = p.terms.alpha;
    const double var = p.terms.total() - p.terms.alpha;
    l.slope = bytes > 0 ? var / bytes : 0;
    return l;
}

}  // namespace

std::string describe(const std::string& alg, const std::string& params) {
    return params.empty() ? alg : alg + " (" + params + ")";
}

double full_model_cost(const RankGenerator& gen) {
    const PlanHeader& h = gen.header;
    std::vector<int> reps = h.representatives;
    if (reps.empty()) reps.push_back(0);
    size_t most = 0, least = SIZE_MAX;
    const bool by_factors =
        (h.algorithm == "hcps" || h.algorithm == "cps") && reps == std::vector<int>{0};
    if (by_factors) {
        // Rank 0's program from its factors (the symmetry), without building
        // its Σ 2(f_i − 1) transfers: round i sends and receives len_i =
        // Π_{j>i} f_j blocks to and from f_i − 1 peers in both phases and
        // reduces len_i blocks once.
        size_t n = 0, len = 1;
        for (size_t i = h.symmetry.size(); i-- > 0;) {
            const size_t f = static_cast<size_t>(h.symmetry[i]);
            n += 4 * (f - 1) * (len + 30) + len + 1;
            len *= f;
        }
        most = least = n;
    }
    for (int r : by_factors ? std::vector<int>{} : reps) {
        const Program p = gen.program(r);
        size_t n = 0;
        for (const Step& st : p.steps) {
            for (const Transfer& t : st.sends) n += t.blocks.size() + 30;
            for (const Transfer& t : st.recvs) n += t.blocks.size() + 30;
            for (const LocalOp& op : st.ops) n += op.blocks.size() + 1;
        }
        most = std::max(most, n);
        least = std::min(least, n);
    }
    return static_cast<double>(most) + static_cast<double>(least) * (h.nranks - 1);
}

namespace {

// GenTree's per-switch plans depend on the size (gentree_choice.hpp): each
// gentree candidate becomes one per distinct choice over `sizes`, marked in
// `chosen_at` as priced only at the sizes that chose it (empty: every size).
Status sized_candidates(const std::vector<Candidate>& offered, const CommShape& shape,
                        const std::vector<size_t>& sizes, const ModelParams& params,
                        std::vector<Candidate>* candidates,
                        std::vector<std::vector<bool>>* chosen_at) {
    for (const Candidate& c : offered) {
        if (c.algorithm != "gentree") {
            candidates->push_back(c);
            chosen_at->emplace_back();
            continue;
        }
        std::map<std::string, size_t> index;
        std::vector<std::string> resolved;
        const Status st = resolve_gentree_texts(c.algorithm, shape.topology.get(),
                                                std::vector<double>(sizes.begin(), sizes.end()),
                                                params, c.params, &resolved);
        if (!st)
            return Status::internal("candidate " + describe(c.algorithm, c.params) +
                                    ": per-switch choice: " + st.message());
        auto add = [&](const std::string& p, size_t i) {
            auto it = index.find(p);
            if (it == index.end()) {
                it = index.emplace(p, candidates->size()).first;
                candidates->push_back({c.algorithm, p});
                chosen_at->emplace_back(sizes.size(), false);
            }
            (*chosen_at)[it->second][i] = true;
        };
        for (size_t i = 0; i < sizes.size(); ++i) {
            add(resolved[i], i);
            // The per-switch rearrangement rule (gentree_choice.hpp) prices
            // one sub-tree alone; the whole plan without it is priced beside
            // it, and the plan model keeps the cheaper (pipelined on 2dc, the
            // rearranged plan measured 18 % slower: docs/model.md).
            ParamMap pm;
            if (parse_params(resolved[i], &pm) && pm.erase("rearrange") != 0) add(format_params(pm), i);
        }
    }
    return Status::ok();
}

// A candidate's seconds at `sizes`, from `predict` (count -> Prediction):
// every size itself in exact mode; else the upper envelope of the lines
// through three counts that are multiples of nblocks, where the one-node
// quotient and the closed forms are exact.
template <typename Predict>
Status price_sizes(const Candidate& c, int nblocks, const std::vector<size_t>& sizes, bool exact,
                   Predict predict, std::vector<double>* seconds) {
    if (exact) {
        for (size_t s : sizes) {
            const Prediction p = predict(s);
            if (!p.status)
                return Status::internal("candidate " + describe(c.algorithm, c.params) + ": " +
                                        p.status.message());
            seconds->push_back(p.seconds);
        }
        return Status::ok();
    }
    std::vector<Line> lines;
    for (size_t per_block : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
        const size_t n = per_block * static_cast<size_t>(nblocks);
        const Prediction p = predict(n);
        if (!p.status)
            return Status::internal("candidate " + describe(c.algorithm, c.params) + ": " +
                                    p.status.message());
        lines.push_back(line_of(p, static_cast<double>(n)));
    }
    for (size_t s : sizes) {
        double t = 0;
        for (const Line& l : lines) t = std::max(t, l.fixed + l.slope * static_cast<double>(s));
        seconds->push_back(t);
    }
    return Status::ok();
}

}  // namespace

Status price_candidates(const ModelParams& params, const CommShape& shape,
                        const std::vector<std::string>& families,
                        const std::vector<size_t>& sizes, const TableOptions& options,
                        std::vector<PricedCandidate>* out, int* unpriced_out) {
    CandidateOptions copt;
    copt.families = families;
    copt.max_hcps_levels = options.max_hcps_levels;
    copt.ranks_per_node = shape.ppn;
    copt.topology = shape.topology.get();
    const RankMap ranks = rank_map_for(shape);
    std::vector<PricedCandidate> result;
    int unpriced = 0;
    std::vector<Candidate> candidates;
    std::vector<std::vector<bool>> chosen_at;  // per candidate; empty: every size
    GENX_RETURN_IF_ERROR(sized_candidates(enumerate_candidates(shape.size, copt), shape, sizes,
                                          params, &candidates, &chosen_at));
    const bool at_scale = shape.size > kWholePlanMaxRanks && !options.exact;
    // Beyond kWholePlanMaxRanks, the families closed_form.hpp knows are
    // priced from P and their params, without a program (one or K
    // consecutive ranks per node, no topology).  They spend none of the
    // full-model budget below, whatever path they replace.
    std::vector<ClosedForm> closed(candidates.size());
    std::vector<bool> is_closed(candidates.size(), false);
    const int ppn = at_scale ? ClosedForm::ranks_per_node(ranks, shape.size) : 0;
    if (ppn > 0)
        for (size_t ci = 0; ci < candidates.size(); ++ci) {
            ParamMap pm;
            is_closed[ci] = parse_params(candidates[ci].params, &pm) &&
                            ClosedForm::make(candidates[ci].algorithm, pm, shape.size, ppn,
                                             &closed[ci]);
        }
    // Beyond kWholePlanMaxRanks, a plan the one-node quotient cannot price
    // (no declared symmetry, or one that does not map the nodes onto each
    // other) needs every rank's program: cheap for rb, O(P²) for an hcps
    // factorisation across node boundaries or rhd folding at 10⁵.  Those
    // candidates share kFullModelBudget, spent cheapest first by their
    // estimated size (deterministic, so every rank prices the same set);
    // the rest are counted as unpriced.
    std::set<std::string> over_budget;  // candidate keys left unpriced
    std::map<std::string, RankGenerator> prepared_gens;  // from the pre-pass
    if (at_scale) {
        std::map<std::vector<int>, bool> quotient_ok;  // by symmetry group and fixed digits
        std::vector<std::pair<double, std::string>> costs;
        for (size_t ci = 0; ci < candidates.size(); ++ci) {
            const Candidate& c = candidates[ci];
            if (is_closed[ci]) continue;
            ParamMap pm;
            RankGenerator gen;
            if (!parse_params(c.params, &pm) ||
                !prepare(c.algorithm, shape.size, pm, shape.topology.get(), &gen))
                continue;  // reported by the main loop
            const std::string key = c.algorithm + "|" + c.params;
            bool quotient = false;
            if (!gen.header.symmetry.empty()) {
                std::vector<int> group = gen.header.symmetry;
                group.push_back(-1);
                group.insert(group.end(), gen.header.symmetry_fixed.begin(),
                             gen.header.symmetry_fixed.end());
                auto it = quotient_ok.find(group);
                if (it == quotient_ok.end())
                    it = quotient_ok.emplace(group, PlanModel::quotient_applies(gen.header, ranks))
                             .first;
                quotient = it->second;
            }
            if (!quotient) costs.emplace_back(full_model_cost(gen), key);
            prepared_gens.emplace(key, std::move(gen));
        }
        std::sort(costs.begin(), costs.end());
        double spent = 0;
        for (const auto& c : costs) {
            spent += c.first;
            if (spent > kFullModelBudget) over_budget.insert(c.second);
        }
    }
    for (size_t ci = 0; ci < candidates.size(); ++ci) {
        const Candidate& c = candidates[ci];
        const std::string key = c.algorithm + "|" + c.params;
        if (over_budget.count(key) != 0) {
            ++unpriced;
            continue;
        }
        PricedCandidate pc;
        pc.candidate = c;
        if (is_closed[ci]) {
            const ClosedForm& cf = closed[ci];
            GENX_RETURN_IF_ERROR(price_sizes(
                c, cf.nblocks(), sizes, false,
                [&](size_t n) { return cf.predict(n, 1, params); }, &pc.seconds));
        } else {
            Status st;
            RankGenerator gen;
            auto pre = prepared_gens.find(key);
            if (pre != prepared_gens.end()) {
                gen = std::move(pre->second);
            } else {
                ParamMap pm;
                st = parse_params(c.params, &pm);
                if (st) st = prepare(c.algorithm, shape.size, pm, shape.topology.get(), &gen);
            }
            if (!st)
                return Status::internal("candidate " + describe(c.algorithm, c.params) +
                                        " for P=" + std::to_string(shape.size) +
                                        " does not generate: " + st.message());
            PlanModel model;
            st = PlanModel::build(gen, ranks, &model, at_scale);
            if (!st)
                return Status::internal("candidate " + describe(c.algorithm, c.params) + ": " +
                                        st.message());
            GENX_RETURN_IF_ERROR(price_sizes(
                c, gen.header.nblocks, sizes, options.exact,
                [&](size_t n) { return model.predict(n, 1, params); }, &pc.seconds));
        }
        for (size_t i = 0; i < sizes.size() && !chosen_at[ci].empty(); ++i)
            if (!chosen_at[ci][i]) pc.seconds[i] = std::numeric_limits<double>::infinity();
        result.push_back(std::move(pc));
    }
    *out = std::move(result);
    if (unpriced_out != nullptr) *unpriced_out = unpriced;
    return Status::ok();
}

bool price_lower_bound(const ModelParams& params, const CommShape& shape, const Candidate& c,
                       const std::vector<size_t>& sizes, PricedCandidate* out) {
    const RankMap routed = rank_map_for(shape);
    if (!routed.tree || routed.direct) return false;
    // The same hosts, numbered in order of their first rank, no tree.
    RankMap flat;
    std::map<int, int> dense;
    for (int r = 0; r < shape.size; ++r)
        flat.node.push_back(
            dense.emplace(routed.node_of(r), static_cast<int>(dense.size())).first->second);
    const int K = ClosedForm::ranks_per_node(flat, shape.size);
    ParamMap pm;
    ClosedForm cf;
    if (K < 1 || !parse_params(c.params, &pm) ||
        !ClosedForm::make(c.algorithm, pm, shape.size, K, &cf))
        return false;
    PricedCandidate pc;
    pc.candidate = c;
    if (!price_sizes(c, cf.nblocks(), sizes, false,
                     [&](size_t n) { return cf.predict(n, 1, params); }, &pc.seconds))
        return false;
    *out = std::move(pc);
    return true;
}

namespace {

// The rules that can match this shape (their count keys), minus those whose
// explicit plan does not generate for it: an error when strict, else a
// warning and the rule is skipped.
Status live_rules(const RulesFile& rules, const CommShape& shape, const TableOptions& options,
                  std::vector<const AllreduceRule*>* live, std::vector<std::string>* warnings) {
    for (const AllreduceRule& r : rules.allreduce) {
        if (!rule_applies(r, shape, options.nonblocking)) continue;
        if (!r.by_model() && !r.defers()) {
            ParamMap all, gen;
            Status st = parse_params(r.params, &all);
            split_exec_keys(all, &gen, nullptr);
            RankGenerator prepared;
            if (st) st = prepare(r.algorithm, shape.size, gen, shape.topology.get(), &prepared);
            if (!st) {
                const std::string msg = rule_location(rules, r) + ": " +
                                        describe(r.algorithm, r.params) + " cannot run on " +
                                        std::to_string(shape.size) + " ranks: " + st.message();
                if (options.strict) return Status::invalid(msg);
                if (warnings != nullptr)
                    warnings->push_back(msg + "; genx skips this rule for this communicator");
                continue;
            }
        }
        live->push_back(&r);
    }
    return Status::ok();
}

// Interval starts: every power of two, every live rule bound.
std::vector<size_t> interval_starts(const std::vector<const AllreduceRule*>& live,
                                    const TableOptions& options) {
    std::vector<size_t> starts = {0};
    for (int k = 0; k <= options.max_class_log2 && k < 63; ++k) starts.push_back(size_t{1} << k);
    for (const AllreduceRule* r : live) {
        starts.push_back(r->bytes.lo);
        if (r->bytes.hi != ByteRange::kNoLimit) starts.push_back(r->bytes.hi);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    return starts;
}

// Best and second best at interval i, skipping `exclude` (the rule's own
// choice when explaining it).
void rank_candidates(const std::vector<PricedCandidate>& v, size_t i, const Candidate* exclude,
                     const PricedCandidate** best, const PricedCandidate** second) {
    *best = *second = nullptr;
    for (const PricedCandidate& c : v) {
        if (exclude != nullptr && c.candidate.algorithm == exclude->algorithm &&
            c.candidate.params == exclude->params)
            continue;
        if (*best == nullptr || c.seconds[i] < (*best)->seconds[i]) {
            *second = *best;
            *best = &c;
        } else if (*second == nullptr || c.seconds[i] < (*second)->seconds[i]) {
            *second = &c;
        }
    }
}

// A margin keeps the incumbent (the first family listed) unless another
// family's best is predicted that much faster: moves *best to the
// incumbent and says why, or returns "" and leaves *best alone.
std::string keep_incumbent(const AllreduceRule* rule, const std::vector<PricedCandidate>& v,
                           size_t i, const PricedCandidate** best) {
    if (rule == nullptr || !(rule->margin > 0) || rule->families.empty() ||
        (*best)->candidate.algorithm == rule->families[0])
        return std::string();
    const PricedCandidate* inc = nullptr;
    for (const PricedCandidate& c : v)
        if (c.candidate.algorithm == rule->families[0] &&
            (inc == nullptr || c.seconds[i] < inc->seconds[i]))
            inc = &c;
    if (inc == nullptr || !((*best)->seconds[i] > (1 - rule->margin) * inc->seconds[i]))
        return std::string();
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.3g", rule->margin * 100);  // 18.3, not 18.2909
    const std::string kept = "; kept " + rule->families[0] + ": " +
                             describe((*best)->candidate.algorithm, (*best)->candidate.params) +
                             " " + format_seconds((*best)->seconds[i]) + " is not " + pct +
                             " % faster";
    *best = inc;
    return kept;
}

// Decides one interval at a time.  Model prices per family list are
// computed when first needed, all with the rules' model as this
// communicator's topology states it, for this kind of call (a non-blocking
// step waits for the application's next MPI call:
// ModelParams::nonblocking_step).
class IntervalDecider {
  public:
    IntervalDecider(const RulesFile& rules, const CommShape& shape, const TableOptions& options,
                    const std::vector<size_t>& at)
        : rules_(rules),
          shape_(shape),
          options_(options),
          at_(at),
          model_(model_for_call(model_for_topology(rules.model, shape.topology.get()),
                                options.nonblocking)) {}

    // The decision at interval i, where `rule` (null: none) matches.
    Status decide(const AllreduceRule* rule, size_t i, Decision* d) {
        d->rule = rule != nullptr ? rule->index : -1;
        const std::string where =
            rule != nullptr ? "rule " + rule_location(rules_, *rule) : "no rule matched";
        if (rule == nullptr || rule->by_model()) return by_model(rule, i, where, d);
        if (rule->defers()) {
            deferred(*rule, where, d);
            return Status::ok();
        }
        return fixed(*rule, i, where, d);
    }

    // The most candidates any pricing left unpriced.
    int unpriced() const { return unpriced_; }

    // Each family's cheapest plan and the displaced component, unscaled,
    // at every interval (price_families()).
    Status family_prices(const std::vector<std::string>& families, size_t elem_size,
                         FamilyPrices* out) {
        const std::vector<PricedCandidate>* v = nullptr;
        GENX_RETURN_IF_ERROR(prices(families, &v));
        const double none = std::numeric_limits<double>::infinity();
        for (const PricedCandidate& c : *v) {
            auto& best = out->best[c.candidate.algorithm];
            auto& depth = out->by_pipeline[c.candidate.algorithm][pipeline_of(c.candidate.params)];
            if (best.empty()) best.assign(at_.size(), none);
            if (depth.empty()) depth.assign(at_.size(), none);
            for (size_t i = 0; i < at_.size(); ++i) {
                best[i] = std::min(best[i], c.seconds[i]);
                depth[i] = std::min(depth[i], c.seconds[i]);
            }
        }
        out->displaced.assign(at_.size(), none);
        out->displaced_family.assign(at_.size(), std::string());
        for (size_t i = 0; i < at_.size(); ++i) {
            const PricedCandidate* theirs = nullptr;
            std::string vs;
            const size_t many = many_elements(i);
            const bool counted = elem_size > 0 && many > 0 && at_[i] / elem_size >= many;
            GENX_RETURN_IF_ERROR(incumbent(i, &theirs, &vs, counted));
            if (theirs == nullptr) continue;
            out->displaced[i] = theirs->seconds[i];
            out->displaced_family[i] = theirs->candidate.algorithm;
        }
        return Status::ok();
    }

  private:
    // The prices of `families`, computed once; lean: by the model without
    // α_msg and ε (lean_model()), for a trial's third view.
    Status prices(const std::vector<std::string>& families,
                  const std::vector<PricedCandidate>** p, bool lean = false) {
        auto& cache = lean ? lean_priced_ : priced_;
        auto it = cache.find(families);
        if (it == cache.end()) {
            std::vector<PricedCandidate> v;
            int skipped = 0;
            GENX_RETURN_IF_ERROR(price_candidates(lean ? lean_model(model_) : model_, shape_,
                                                  families, at_, options_, &v, &skipped));
            if (!lean) unpriced_ = std::max(unpriced_, skipped);
            it = cache.emplace(families, std::move(v)).first;
        }
        *p = &it->second;
        return Status::ok();
    }

    static ModelParams lean_model(ModelParams m) {
        auto lean = [](LinkParams& l) { l.alpha_msg = l.epsilon = 0; };
        lean(m.intra);
        lean(m.inter);
        for (auto& [name, l] : m.classes) lean(l);
        return m;
    }

    // The prices of `families` for `rule`, each multiplied by the rule's
    // scale for its family (rules.hpp), computed once per rule.  A family
    // the rule names a pipeline depth for keeps only its plans of that
    // depth where it has any: its scale was measured on such a plan.
    Status scaled_prices(const AllreduceRule* rule, const std::vector<std::string>& families,
                         const std::vector<PricedCandidate>** p) {
        GENX_RETURN_IF_ERROR(prices(families, p));
        if (rule == nullptr || (rule->scale.empty() && rule->pipeline.empty())) return Status::ok();
        auto it = scaled_.find(rule->index);
        if (it == scaled_.end()) {
            const std::vector<bool> weighed = at_named_depth(*rule, **p);
            std::vector<PricedCandidate> v;
            for (size_t k = 0; k < (*p)->size(); ++k) {
                const PricedCandidate& c = (**p)[k];
                if (!weighed[k]) continue;
                v.push_back(c);
                for (double& s : v.back().seconds) s *= scale_of(*rule, c.candidate.algorithm);
            }
            it = scaled_.emplace(rule->index, std::move(v)).first;
        }
        *p = &it->second;
        return Status::ok();
    }

    // Which plans of v `rule` weighs: a family the rule names a pipeline
    // depth for keeps only its plans of that depth where it has any.
    static std::vector<bool> at_named_depth(const AllreduceRule& rule,
                                            const std::vector<PricedCandidate>& v) {
        std::vector<bool> of_depth;
        std::set<std::string> has_depth;
        for (const PricedCandidate& c : v) {
            of_depth.push_back(depth_of(rule, c.candidate.algorithm) == pipeline_of(c.candidate.params));
            if (of_depth.back()) has_depth.insert(c.candidate.algorithm);
        }
        std::vector<bool> weighed(v.size());
        for (size_t k = 0; k < v.size(); ++k)
            weighed[k] = of_depth[k] || has_depth.count(v[k].candidate.algorithm) == 0;
        return weighed;
    }

    // The pipeline depth `rule` names for `family`, 0 where none.
    static int depth_of(const AllreduceRule& rule, const std::string& family) {
        auto it = rule.pipeline.find(family);
        return it == rule.pipeline.end() ? 0 : it->second;
    }

    static double scale_of(const AllreduceRule& rule, const std::string& family) {
        auto it = rule.scale.find(family);
        return it == rule.scale.end() ? 1.0 : it->second;
    }

    // No rule, or a "model" rule: the model's best of the rule's families.
    Status by_model(const AllreduceRule* rule, size_t i, const std::string& where, Decision* d) {
        if (rule != nullptr && !rule->families.empty() && rule->families[0] == kFallbackAlgorithm)
            return against_fallback(*rule, i, where, d);
        const std::vector<PricedCandidate>* v = nullptr;
        GENX_RETURN_IF_ERROR(scaled_prices(
            rule, rule != nullptr ? rule->families : std::vector<std::string>{}, &v));
        const PricedCandidate *best = nullptr, *second = nullptr;
        rank_candidates(*v, i, nullptr, &best, &second);
        if (best == nullptr)
            return Status::internal("decision table: no candidate for " +
                                    std::to_string(shape_.size) + " ranks");
        const std::string kept = keep_incumbent(rule, *v, i, &best);
        d->by_model = true;
        d->algorithm = best->candidate.algorithm;
        d->params = best->candidate.params;
        d->predicted = best->seconds[i];
        d->why = where + "; model predicts " + format_seconds(d->predicted) + " at " +
                 format_bytes(at_[i]) + " B" + kept;
        if (second != nullptr && kept.empty()) {
            d->runner_up = second->candidate.algorithm;
            d->runner_up_params = second->candidate.params;
            d->runner_up_predicted = second->seconds[i];
            d->why += ", runner-up " + describe(d->runner_up, d->runner_up_params) + " " +
                      format_seconds(d->runner_up_predicted);
        }
        return Status::ok();
    }

    // A "model" rule whose incumbent is "fallback": the best plan of the
    // other families runs only where the model prices it `margin` ahead of
    // the displaced component (incumbent()); elsewhere the size defers.
    // Where tuned's choice runs another schedule for few elements, a size
    // the plan wins only against the schedule tuned runs for many runs the
    // plan from that many elements on (Decision::min_count).
    Status against_fallback(const AllreduceRule& rule, size_t i, const std::string& where,
                            Decision* d) {
        GENX_RETURN_IF_ERROR(weigh(rule, i, where, false, d));
        const size_t many = many_elements(i);
        if (!d->defers() || many == 0) return Status::ok();
        Decision m;
        GENX_RETURN_IF_ERROR(weigh(rule, i, where, true, &m));
        if (m.defers()) return Status::ok();
        m.rule = d->rule;
        m.min_count = many;
        m.few_why = d->why;
        m.why += "; for " + std::to_string(many) +
                 " elements or more (fewer: left to the component genx displaced)";
        *d = std::move(m);
        return Status::ok();
    }

    // The element count from which tuned runs the first of its plans at
    // interval i (DisplacedPlans::few_below), where the others are cheaper
    // for fewer and a call of interval i's size can hold that many; else 0.
    size_t many_elements(size_t i) const {
        if (options_.displaced != Displaced::TunedFixed41 || options_.nonblocking) return 0;
        const DisplacedPlans dp = ompi41_tuned_plans(shape_.size, at_[i]);
        const size_t hi = i + 1 < at_.size() ? at_[i + 1] : SIZE_MAX;
        return !dp.stand_in && dp.plans.size() > 1 && dp.few_below > 1 && hi > dp.few_below
                   ? dp.few_below
                   : 0;
    }

    // against_fallback's test at interval i; many: the incumbent is the plan
    // tuned runs for many elements, not the cheapest it may run.
    Status weigh(const AllreduceRule& rule, size_t i, const std::string& where, bool many,
                 Decision* d) {
        const std::vector<std::string> ours(rule.families.begin() + 1, rule.families.end());
        const std::vector<PricedCandidate>* v = nullptr;
        GENX_RETURN_IF_ERROR(scaled_prices(&rule, ours, &v));
        const PricedCandidate *best = nullptr, *second = nullptr, *theirs = nullptr;
        std::string vs;
        GENX_RETURN_IF_ERROR(incumbent(i, &theirs, &vs, many, true));
        const double f = scale_of(rule, kFallbackAlgorithm);
        const double their_s = theirs != nullptr ? f * theirs->seconds[i] : 0;
        if (theirs != nullptr && f != 1.0) {
            char x[48];
            std::snprintf(x, sizeof x, " × %.2f as measured = ", f);
            vs += x + format_seconds(their_s);
        }
        rank_candidates(*v, i, nullptr, &best, &second);
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.3g", rule.margin * 100);
        d->by_model = true;
        if (best == nullptr || theirs == nullptr || best->seconds[i] > (1 - rule.margin) * their_s) {
            if (theirs != nullptr) GENX_RETURN_IF_ERROR(add_contenders(rule, *v, i, their_s, *theirs, d));
            d->algorithm = kFallbackAlgorithm;
            d->why = where + ": left to the component genx displaced; model at " +
                     format_bytes(at_[i]) + " B: " +
                     (best != nullptr ? describe(best->candidate.algorithm, best->candidate.params) +
                                            " " + format_seconds(best->seconds[i])
                                      : std::string("no plan of ") + join_names(ours)) +
                     " is not " + pct + " % faster than " + vs;
            return Status::ok();
        }
        // Scales come from another shape and may carry an error of the
        // model in kind (a factor measured at one rank count): a plan
        // displaces the component only where the unscaled model does not
        // price it more than the margin slower (docs/rules.md, `scale`).
        // The guard keeps the cheapest reading of what tuned may run, also
        // where the count tells which one it does: the count corrects the
        // incumbent, not the model's error in kind.
        const double raw = best->seconds[i] / scale_of(rule, best->candidate.algorithm);
        double guard_s = theirs->seconds[i];
        if (many) {
            const PricedCandidate* cheapest = nullptr;
            std::string unused;
            GENX_RETURN_IF_ERROR(incumbent(i, &cheapest, &unused, false, true));
            if (cheapest != nullptr) guard_s = std::min(guard_s, cheapest->seconds[i]);
        }
        if (!rule.scale.empty() && !(raw <= (1 + rule.margin) * guard_s)) {
            GENX_RETURN_IF_ERROR(add_contenders(rule, *v, i, their_s, *theirs, d));
            d->algorithm = kFallbackAlgorithm;
            d->why = where + ": left to the component genx displaced; model at " +
                     format_bytes(at_[i]) + " B: " +
                     describe(best->candidate.algorithm, best->candidate.params) + " " +
                     format_seconds(best->seconds[i]) + " as measured is " + pct +
                     " % faster than " + vs + ", but unscaled " + format_seconds(raw) +
                     " is more than " + pct + " % slower than " + format_seconds(guard_s);
            return Status::ok();
        }
        d->algorithm = best->candidate.algorithm;
        d->params = best->candidate.params;
        d->predicted = best->seconds[i];
        d->runner_up = theirs->candidate.algorithm;
        d->runner_up_params = theirs->candidate.params;
        d->runner_up_predicted = their_s;
        d->why = where + "; model predicts " + format_seconds(d->predicted) + " at " +
                 format_bytes(at_[i]) + " B" +
                 (rule.scale.empty() ? "" : " (prices × each family's measured/predicted)") +
                 " against " + vs;
        return Status::ok();
    }

    // Decision::trial where interval i defers under `rule`: with the rule's
    // scales (a site measured them), in a blocking table, and where a trial
    // is cheap (the displaced component priced at most kTrialMaxSeconds),
    // the model's best plan in each of three views, where it is priced
    // below the displaced component (`theirs`) in the same view:
    //  - scaled (their_s: the displaced component scaled);
    //  - unscaled: the best plans of families not named yet, up to two
    //    contenders so far;
    //  - lean, the model without its per-message and incast terms, which
    //    the fit is least sure of (docs/rules.md, "First-call trial"): its
    //    best plan if no contender is that plan.
    Status add_contenders(const AllreduceRule& rule, const std::vector<PricedCandidate>& v,
                          size_t i, double their_s, const PricedCandidate& theirs, Decision* d) {
        if (rule.scale.empty() || options_.nonblocking || !(their_s <= kTrialMaxSeconds))
            return Status::ok();
        const PricedCandidate* scaled = nullptr;
        std::vector<std::pair<double, const PricedCandidate*>> raw;
        for (const PricedCandidate& c : v) {
            if (scaled == nullptr || c.seconds[i] < scaled->seconds[i]) scaled = &c;
            raw.emplace_back(c.seconds[i] / scale_of(rule, c.candidate.algorithm), &c);
        }
        auto named = [d](const Candidate& c, bool family) {
            for (const Decision::Contender& t : d->trial)
                if (t.algorithm == c.algorithm && (family || t.params == c.params)) return true;
            return false;
        };
        auto add = [d, i](const PricedCandidate& c) {
            d->trial.push_back({c.candidate.algorithm, c.candidate.params, c.seconds[i]});
        };
        if (scaled != nullptr && scaled->seconds[i] < their_s) add(*scaled);
        std::stable_sort(raw.begin(), raw.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [price, c] : raw) {
            if (d->trial.size() >= 2 || !(price < theirs.seconds[i])) break;
            if (!named(c->candidate, true)) add(*c);
        }
        const std::vector<std::string> ours(rule.families.begin() + 1, rule.families.end());
        const bool tuned = options_.displaced == Displaced::TunedFixed41;
        const std::vector<PricedCandidate> *lean = nullptr, *base = nullptr;
        GENX_RETURN_IF_ERROR(prices(ours, &lean, true));
        GENX_RETURN_IF_ERROR(prices({tuned ? kTunedFamilies : kOpenMpiFamilies}, &base, true));
        const PricedCandidate *best = nullptr, *their_lean = nullptr;
        for (const PricedCandidate& c : *base)
            if (c.candidate.algorithm == theirs.candidate.algorithm &&
                c.candidate.params == theirs.candidate.params)
                their_lean = &c;
        const std::vector<bool> weighed = at_named_depth(rule, *lean);
        for (size_t k = 0; k < lean->size(); ++k)
            if (weighed[k] && (best == nullptr || (*lean)[k].seconds[i] < best->seconds[i]))
                best = &(*lean)[k];
        if (best == nullptr || their_lean == nullptr ||
            !(best->seconds[i] < their_lean->seconds[i]) || named(best->candidate, false))
            return Status::ok();
        // Its full price, scaled, where the scaled view priced it (GenTree
        // picks its sub-plans per size by the model in use: the full model
        // may not have priced the lean view's choice), else its lean one.
        double full = best->seconds[i] * scale_of(rule, best->candidate.algorithm);
        for (const PricedCandidate& c : v)
            if (c.candidate.algorithm == best->candidate.algorithm &&
                c.candidate.params == best->candidate.params && std::isfinite(c.seconds[i]))
                full = c.seconds[i];
        d->trial.push_back({best->candidate.algorithm, best->candidate.params, full});
        return Status::ok();
    }

    // The displaced component's price at interval i and how *vs names it:
    // Open MPI 4.1 tuned's fixed choice as genx's plan of the same schedule
    // (the cheapest of the plans it may run there, displaced.hpp) where the
    // blocking table knows tuned decides, else the cheapest of Open MPI's
    // modelled algorithms.  *theirs stays null when nothing was priced.
    // many: only the plan tuned runs for DisplacedPlans::few_below elements
    // or more.
    // bound: where tuned's plan was not priced, its lower bound
    // (price_lower_bound) stands in for it, said so in *vs.
    Status incumbent(size_t i, const PricedCandidate** theirs, std::string* vs, bool many = false,
                     bool bound = false) {
        *theirs = nullptr;
        const bool tuned = options_.displaced == Displaced::TunedFixed41 && !options_.nonblocking;
        const std::vector<PricedCandidate>* base = nullptr;
        GENX_RETURN_IF_ERROR(prices({tuned ? kTunedFamilies : kOpenMpiFamilies}, &base));
        if (!tuned) {
            const PricedCandidate* unused = nullptr;
            rank_candidates(*base, i, nullptr, theirs, &unused);
            *vs = *theirs != nullptr
                      ? "Open MPI's best modelled (" +
                            describe((*theirs)->candidate.algorithm, (*theirs)->candidate.params) +
                            ") " + format_seconds((*theirs)->seconds[i])
                      : std::string("Open MPI (not priced)");
            return Status::ok();
        }
        const DisplacedPlans dp = ompi41_tuned_plans(shape_.size, at_[i]);
        std::vector<const PricedCandidate*> found(dp.plans.size(), nullptr);
        std::vector<bool> at_least(dp.plans.size(), false);
        for (size_t k = 0; k < dp.plans.size(); ++k) {
            for (const PricedCandidate& c : *base)
                if (c.candidate.algorithm == dp.plans[k].algorithm &&
                    c.candidate.params == dp.plans[k].params)
                    found[k] = &c;
            if (found[k] == nullptr && bound) {
                found[k] = lower_bound(dp.plans[k]);
                at_least[k] = found[k] != nullptr;
            }
        }
        // The plan of tuned's schedule must be priced (budgets leave some
        // unpriced at scale): the others only lower its price.
        size_t which = 0;
        if (dp.stand_in || found[0] != nullptr)
            for (size_t k = 0; k < (many ? 1 : found.size()); ++k)
                if (found[k] != nullptr &&
                    (*theirs == nullptr || found[k]->seconds[i] < (*theirs)->seconds[i])) {
                    *theirs = found[k];
                    which = k;
                }
        const std::string name = tuned_allreduce_name(dp.tuned_id);
        if (*theirs == nullptr) {
            *vs = "Open MPI tuned's fixed choice (" + name + ", not priced)";
            return Status::ok();
        }
        *vs = "Open MPI tuned's fixed choice (" + name + " → " +
              describe((*theirs)->candidate.algorithm, (*theirs)->candidate.params) +
              (dp.why[which].empty() ? "" : ", " + dp.why[which]) + ") " +
              (at_least[which] ? "at least " : "") + format_seconds((*theirs)->seconds[i]) +
              (at_least[which] ? " (its closed form without the switches above the hosts: "
                                 "every rank's program is beyond the budget)"
                               : "");
        return Status::ok();
    }

    static std::string join_names(const std::vector<std::string>& v) {
        std::string out;
        for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
        return out;
    }

    // A "fallback" rule: Open MPI's coll/base algorithms are blocking only,
    // so a non-blocking table leaves such sizes to the displaced
    // component's own iallreduce.
    void deferred(const AllreduceRule& rule, const std::string& where, Decision* d) const {
        d->algorithm = rule.algorithm;
        const BaseAlgorithm* base =
            options_.nonblocking ? nullptr : find_base_algorithm(base_algorithm_id(rule.params));
        if (base != nullptr) {
            d->params = rule.params;
            d->base = base->tuned_id;
        }
        d->why = where + ": left to " +
                 (base != nullptr ? std::string("Open MPI's ") + base->name + " (coll/base)"
                                  : std::string("the component genx displaced")) +
                 (rule.comment.empty() ? std::string() : " (" + rule.comment + ")");
    }

    // A rule naming its plan; explained, it says what the model predicts
    // for it and for the best alternative.
    Status fixed(const AllreduceRule& rule, size_t i, const std::string& where, Decision* d) {
        d->algorithm = rule.algorithm;
        d->params = rule.params;
        // A rule naming gentree without plans= gets them chosen at this
        // interval's size by the rules' model.
        GENX_RETURN_IF_ERROR(resolve_gentree_text(d->algorithm, shape_.topology.get(),
                                                  static_cast<double>(at_[i]), model_, &d->params));
        d->why = where;
        if (!options_.explain) return Status::ok();
        const std::vector<PricedCandidate>* v = nullptr;
        GENX_RETURN_IF_ERROR(prices({}, &v));
        const Candidate own{rule.algorithm, d->params};
        for (const PricedCandidate& c : *v)
            if (c.candidate.algorithm == own.algorithm && c.candidate.params == own.params)
                d->predicted = c.seconds[i];
        const PricedCandidate *best = nullptr, *second = nullptr;
        rank_candidates(*v, i, &own, &best, &second);
        if (best != nullptr) {
            d->runner_up = best->candidate.algorithm;
            d->runner_up_params = best->candidate.params;
            d->runner_up_predicted = best->seconds[i];
            d->why += "; model: " +
                      (d->predicted > 0 ? format_seconds(d->predicted) + " for it, " : "") +
                      "best alternative " + describe(d->runner_up, d->runner_up_params) + " " +
                      format_seconds(d->runner_up_predicted) + " at " + format_bytes(at_[i]) +
                      " B";
        }
        return Status::ok();
    }

    // tuned's plan `c` priced by price_lower_bound (null where it has no
    // closed form), computed once per plan.
    const PricedCandidate* lower_bound(const Candidate& c) {
        const std::string key = c.algorithm + "|" + c.params;
        auto it = bounds_.find(key);
        if (it == bounds_.end()) {
            PricedCandidate pc;
            const bool ok = price_lower_bound(model_, shape_, c, at_, &pc);
            it = bounds_.emplace(key, ok ? std::make_unique<PricedCandidate>(std::move(pc))
                                         : nullptr)
                     .first;
        }
        return it->second.get();
    }

    const RulesFile& rules_;
    const CommShape& shape_;
    const TableOptions& options_;
    const std::vector<size_t>& at_;  // the size each interval is priced at
    const ModelParams model_;
    std::map<std::vector<std::string>, std::vector<PricedCandidate>> priced_;
    // The trial's third view (add_contenders): model_ without its
    // per-message and incast terms, priced only where a trial is offered.
    std::map<std::vector<std::string>, std::vector<PricedCandidate>> lean_priced_;
    std::map<int, std::vector<PricedCandidate>> scaled_;  // by rule index
    std::map<std::string, std::unique_ptr<PricedCandidate>> bounds_;
    int unpriced_ = 0;
};

}  // namespace

Status DecisionTable::build(const RulesFile& rules, const CommShape& shape,
                            const TableOptions& options, DecisionTable* out,
                            std::vector<std::string>* warnings) {
    if (shape.size < 1)
        return Status::invalid("decision table: communicator size " + std::to_string(shape.size));
    std::vector<const AllreduceRule*> live;
    GENX_RETURN_IF_ERROR(live_rules(rules, shape, options, &live, warnings));
    const std::vector<size_t> starts = interval_starts(live, options);
    std::vector<size_t> at(starts.size());
    for (size_t i = 0; i < starts.size(); ++i) at[i] = std::max<size_t>(starts[i], 1);

    DecisionTable t;
    IntervalDecider decider(rules, shape, options, at);
    for (size_t i = 0; i < starts.size(); ++i) {
        // The first live rule whose sizes hold the interval's start.
        const AllreduceRule* rule = nullptr;
        for (const AllreduceRule* r : live)
            if (r->bytes.contains(starts[i])) {
                rule = r;
                break;
            }
        Decision d;
        GENX_RETURN_IF_ERROR(decider.decide(rule, i, &d));
        t.starts_.push_back(starts[i]);
        t.decisions_.push_back(std::move(d));
    }
    t.unpriced_ = decider.unpriced();
    *out = std::move(t);
    return Status::ok();
}

int pipeline_of(const std::string& params) {
    ParamMap pm;
    long k = 1;
    if (!parse_params(params, &pm)) return 1;
    auto it = pm.find("pipeline");
    if (it == pm.end() || !parse_int_in(it->second, 1, 1L << 20, &k)) return 1;
    return static_cast<int>(k);
}

Status price_families(const RulesFile& rules, const CommShape& shape, const TableOptions& options,
                      const std::vector<size_t>& sizes, const std::vector<std::string>& families,
                      FamilyPrices* out, size_t elem_size) {
    *out = FamilyPrices{};
    std::vector<size_t> at(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) at[i] = std::max<size_t>(sizes[i], 1);
    IntervalDecider decider(rules, shape, options, at);
    return decider.family_prices(families, elem_size, out);
}

size_t DecisionTable::index(size_t bytes) const {
    // Last start <= bytes; starts_[0] == 0.
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), bytes);
    return static_cast<size_t>(it - starts_.begin()) - 1;
}

uint64_t DecisionTable::digest() const {
    // FNV-1a over the text of each interval.
    uint64_t h = kFnvOffset;
    auto mix = [&h](const std::string& s) { h = fnv1a_field(s, h); };
    for (size_t i = 0; i < starts_.size(); ++i) {
        mix(std::to_string(starts_[i]));
        mix(decisions_[i].algorithm);
        mix(decisions_[i].params);
        if (decisions_[i].min_count != 0) mix(std::to_string(decisions_[i].min_count));
        for (const Decision::Contender& c : decisions_[i].trial) {
            mix(c.algorithm);
            mix(c.params);
        }
    }
    return h;
}

std::string DecisionTable::format() const {
    std::string out;
    for (size_t i = 0; i < starts_.size(); ++i) {
        ByteRange r;
        r.lo = starts_[i];
        r.hi = i + 1 < starts_.size() ? starts_[i + 1] : ByteRange::kNoLimit;
        const Decision& d = decisions_[i];
        std::string trial;
        for (const Decision::Contender& c : d.trial)
            trial += (trial.empty() ? "; first-call trial against " : ", ") +
                     describe(c.algorithm, c.params) + " " + format_seconds(c.predicted);
        out += format_byte_range(r) + "  " + describe(d.algorithm, d.params) + "  [" + d.why +
               trial + "]\n";
    }
    return out;
}

}  // namespace genx
