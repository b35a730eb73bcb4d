// What a communicator decides with (selection.hpp).
#include "genx/selection.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/hash.hpp"
#include "common/text_util.hpp"
#include "plan/registry.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/exec_defaults.hpp"
#include "tuning/gentree_choice.hpp"

namespace genx {

std::string algorithm_names() {
    std::string out;
    for (const GeneratorInfo& g : generators()) out += (out.empty() ? "" : ",") + g.name;
    return out;
}

void Selection::init(int rank, int size, const CommShape& shape) {
    rank_ = rank;
    size_ = size;
    shape_ = shape;
}

void Selection::use_topology(std::shared_ptr<const TopologyView> view, const std::string& source,
                             const CommLog& log) {
    shape_.topology = std::move(view);
    long_routes_ = long_fat_routes(shape_.topology.get());
    if (log.verbose() < 1 || rank_ != 0) return;
    char fp[32];
    std::snprintf(fp, sizeof(fp), "%016llx",
                  static_cast<unsigned long long>(shape_.topology->fingerprint()));
    size_t hosts_used = 0;
    for (size_t n = 0; n < shape_.topology->nodes.size(); ++n)
        hosts_used += shape_.topology->is_machine(static_cast<int>(n)) ? 1 : 0;
    log.say(1, "genx: topology " + source + ": " + std::to_string(size_) + " ranks on " +
                   std::to_string(hosts_used) + " hosts, " +
                   std::to_string(shape_.topology->depth()) + " switch level(s) (fingerprint " +
                   fp + ")" +
                   (long_routes_
                        ? "; its routes hold up to " +
                              format_bytes(static_cast<size_t>(route_bdp_bytes(*shape_.topology))) +
                              " B in flight, more than " + std::to_string(kDefaultWindow) +
                              " segments of " + format_bytes(kDefaultSegmentBytes) +
                              ": plans are sent unsegmented unless segment or window is set"
                        : std::string()));
}

// This rank's plan of (name, params), from the process-wide cache; the
// user's executor keys override the decision's own.
Selection::PlanRef Selection::plan_for(const std::string& name, const std::string& params) const {
    ParamMap all;
    const Status st = parse_params(params, &all);
    for (const auto& kv : user_exec_) all[kv.first] = kv.second;
    if (st.is_ok()) add_network_exec_defaults(long_routes_, &all);
    return rank_plan(name, st.is_ok() ? format_params(all) : params, size_, rank_,
                     shape_.topology.get());
}

// The forced algorithm's plan for this communicator (at configure, and
// again when the ranks are placed on a topology).  A single rank's
// allreduce is a copy (genx keeps such communicators where device memory
// is possible): parameters that shape P ranks' exchanges, or a topology the
// algorithm needs, do not apply to it, so a one-rank communicator whose
// plan fails runs the algorithm's defaults, else a ring of one, and says
// so at verbosity 1.  Every larger communicator still validates them.
void Selection::plan_forced(const CommLog& log) {
    forced_plan_ = plan_for(algorithm_, forced_params_);
    forced_sized_.clear();
    ParamMap pm;
    forced_by_size_ = algorithm_ == "gentree" && size_ > 1 && shape_.topology && !shape_.topology->direct &&
                      parse_params(forced_params_, &pm).is_ok() && pm.count("plans") == 0;
    if (size_ != 1 || forced_plan_->status.is_ok()) return;
    const std::string why = forced_plan_->status.message();
    forced_plan_ = plan_for(algorithm_, "");
    if (!forced_plan_->status.is_ok()) forced_plan_ = plan_for("ring", "");
    log.say(1, "genx: one-rank communicator: " + why + "; its allreduce (a copy) runs " +
                   forced_plan_->algorithm + " with default parameters");
}

Status Selection::configure(const genx_config* cfg, const CommLog& log) {
    const char* alg = cfg != nullptr ? cfg->algorithm : nullptr;
    algorithm_ = alg != nullptr && *alg != '\0' ? alg : "auto";
    forced_ = algorithm_ != "auto";
    const std::string text = cfg != nullptr && cfg->params != nullptr ? cfg->params : "";
    ParamMap all, gen_params;
    ExecOptions exec;
    GENX_RETURN_IF_ERROR(parse_params(text, &all));
    GENX_RETURN_IF_ERROR(split_exec_params(all, &gen_params, &exec));  // checks the executor's values
    split_exec_keys(all, nullptr, &user_exec_);
    if (!forced_) {
        if (!gen_params.empty())
            return Status::invalid(
                "params '" + format_params(gen_params) +
                "' are algorithm parameters, which need a forced algorithm "
                "(coll_genx_allreduce_algorithm); with auto only segment and window apply");
        const std::string path =
            cfg != nullptr && cfg->rules_path != nullptr ? cfg->rules_path : "";
        const bool strict = cfg != nullptr && cfg->rules_strict != 0;
        std::shared_ptr<const RulesFile> rules;
        std::string warning;
        GENX_RETURN_IF_ERROR(selector_rules(path, strict, &rules, &warning));
        log.report(warning);
        rules_ = std::move(rules);
        table_options_.strict = strict;
        table_options_.explain = log.verbose() >= 1;
        return Status::ok();
    }
    if (find_generator(algorithm_) == nullptr)
        return Status::not_found("unknown algorithm '" + algorithm_ +
                                 "' (coll_genx_allreduce_algorithm); known: auto," +
                                 algorithm_names());
    forced_params_ = format_params(all);
    // Generating now validates the params' values with the real P.
    plan_forced(log);
    return forced_plan_->status;
}

void Selection::placed_again(const CommLog& log) {
    prepared_ = false;
    prepare_status_ = Status::ok();
    table_.reset();
    nb_table_.reset();
    decision_plans_.clear();
    nb_decision_plans_.clear();
    trials_.clear();
    if (forced_) plan_forced(log);
}

void Selection::set_displaced(Displaced displaced, const CommLog& log) {
    if (displaced == table_options_.displaced) return;
    table_options_.displaced = displaced;
    if (prepared_ && !forced_) placed_again(log);
}

// Every plan `table` names, now rather than during a call (none for a
// decision that defers to the displaced component).  A plan that does not
// generate is kept with its status: calls in its interval decline with the
// reason, identically on every rank.
void Selection::plans_for_table(const DecisionTable& table, std::vector<PlanRef>* plans) const {
    const size_t n = table.intervals();
    plans->assign(n, PlanRef());
    for (size_t i = 0; i < n; ++i) {
        const Decision& d = table.decision(i);
        for (size_t j = 0; j < i && !(*plans)[i]; ++j) {
            const Decision& e = table.decision(j);
            if (e.algorithm == d.algorithm && e.params == d.params) (*plans)[i] = (*plans)[j];
        }
        if (!(*plans)[i] && !d.defers()) (*plans)[i] = plan_for(d.algorithm, d.params);
    }
}

Status Selection::prepare(const CommLog& log) {
    if (prepared_) return prepare_status_;
    prepared_ = true;
    if (forced_) return prepare_status_;
    std::vector<std::string> warnings;
    prepare_status_ = selector_table(rules_, shape_, table_options_, &table_, &warnings);
    if (prepare_status_ && rules_->splits_calls()) {
        TableOptions nb = table_options_;
        nb.nonblocking = true;
        prepare_status_ = selector_table(rules_, shape_, nb, &nb_table_, &warnings);
    }
    // Both tables check the same rules: each warning once.
    for (size_t i = 0; i < warnings.size(); ++i)
        if (std::find(warnings.begin(), warnings.begin() + static_cast<long>(i), warnings[i]) ==
            warnings.begin() + static_cast<long>(i))
            log.report(warnings[i]);
    if (!prepare_status_) {
        table_.reset();
        nb_table_.reset();
        return prepare_status_;
    }
    plans_for_table(*table_, &decision_plans_);
    prepare_trials();
    if (nb_table_) {
        plans_for_table(*nb_table_, &nb_decision_plans_);
    } else {
        nb_table_ = table_;
        nb_decision_plans_ = decision_plans_;
    }
    return prepare_status_;
}

// Each blocking interval whose decision names trial contenders gets a
// trial of them (trial.hpp).
void Selection::prepare_trials() {
    trials_.clear();
    if (trials_.rounds() == 0) return;
    for (size_t i = 0; i < table_->intervals(); ++i) {
        const Decision& d = table_->decision(i);
        if (!d.defers() || d.base != 0 || d.min_count != 0 || d.trial.empty()) continue;
        std::vector<FirstCallTrials::Candidate> contenders;
        for (const Decision::Contender& c : d.trial) {
            // A plan that does not generate stays: its turns decline on
            // every rank alike and run the displaced component.
            PlanRef plan = plan_for(c.algorithm, c.params);
            Decision run = d;
            run.algorithm = c.algorithm;
            run.params = c.params;
            run.predicted = c.predicted;
            run.trial.clear();
            run.why = "first-call trial of " + describe(c.algorithm, c.params) +
                      " against the displaced component (the model: " + d.why + ")";
            contenders.push_back({std::move(run), std::move(plan)});
        }
        trials_.add(i, d, std::move(contenders));
    }
}

Selection::Choice Selection::blocking_choice(size_t bytes) const {
    const size_t i = table_->index(bytes);
    if (const FirstCallTrials::Candidate* c = trials_.current(i))
        return Choice{&c->decision, c->plan.get()};
    return Choice{&table_->decision(i), decision_plans_[i].get()};
}

Selection::Choice Selection::choose(bool nonblocking, size_t bytes) const {
    Choice c;
    if (forced_) {
        c.plan = forced_by_size_ ? forced_plan_at(bytes) : forced_plan_.get();
        return c;
    }
    if (!nonblocking) return blocking_choice(bytes);
    const size_t i = nb_table_->index(bytes);
    c.decision = &nb_table_->decision(i);
    c.plan = nb_decision_plans_[i].get();
    return c;
}

int Selection::trial_next(size_t bytes) {
    return forced_ || !table_ || !trials_.any() ? -1 : trials_.next(table_->index(bytes));
}

int Selection::trial_record(size_t bytes, double seconds, double* medians, int max) {
    return forced_ || !table_ ? 0 : trials_.record(table_->index(bytes), seconds, medians, max);
}

void Selection::trial_settle(size_t bytes, const double* agreed, int n, const CommLog& log) {
    if (forced_ || !table_) return;
    const size_t i = table_->index(bytes);
    ByteRange r;
    r.lo = table_->interval_start(i);
    r.hi = i + 1 < table_->intervals() ? table_->interval_start(i + 1) : ByteRange::kNoLimit;
    trials_.settle(i, agreed, n, format_byte_range(r), log);
}

bool Selection::trial_running(size_t bytes) const {
    return !forced_ && table_ && trials_.running(table_->index(bytes));
}

const RankPlan* Selection::forced_plan_at(size_t bytes) const {
    const unsigned cls = genx_size_class(bytes);
    auto it = forced_sized_.find(cls);
    if (it != forced_sized_.end()) return it->second.get();
    // Every rank prices the same class bound on the same view: the same plan.
    const double at = cls <= 1 ? 1.0 : static_cast<double>(size_t{1} << (cls - 1));
    std::string params = forced_params_;
    PlanRef plan = forced_plan_;
    if (resolve_gentree_text(algorithm_, shape_.topology.get(), at, model_for_topology(model(), shape_.topology.get()),
                             &params)
            .is_ok()) {
        PlanRef sized = plan_for(algorithm_, params);
        if (sized->status.is_ok()) plan = std::move(sized);
    }
    return forced_sized_.emplace(cls, std::move(plan)).first->second.get();
}

int Selection::defers(int calls, size_t bytes, size_t count, const char** reason) const {
    if (bytes == GENX_EVERY_SIZE) return defers_throughout(calls, reason);
    const DecisionTable* table = calls == GENX_CALLS_BLOCKING      ? table_.get()
                                 : calls == GENX_CALLS_NONBLOCKING ? nb_table_.get()
                                                                   : nullptr;
    if (forced_ || table == nullptr) return 0;
    const Decision& d =
        table == table_.get() ? *blocking_choice(bytes).decision : table->lookup(bytes);
    if (!d.defers_at(count)) return 0;
    if (reason != nullptr) *reason = d.deferred_why().c_str();
    // (A non-blocking table never names an Open MPI algorithm: they are
    // blocking only, DecisionTable::build.)
    return GENX_DEFERS + d.base;
}

// Whether every size of every table `calls` names defers to the displaced
// component itself.
int Selection::defers_throughout(int calls, const char** reason) const {
    const int known = GENX_CALLS_BLOCKING | GENX_CALLS_NONBLOCKING;
    if (forced_ || !table_ || !nb_table_ || calls == 0 || (calls & ~known) != 0) return 0;
    const DecisionTable* asked[2] = {
        (calls & GENX_CALLS_BLOCKING) != 0 ? table_.get() : nullptr,
        (calls & GENX_CALLS_NONBLOCKING) != 0 ? nb_table_.get() : nullptr};
    const DecisionTable* first = nullptr;
    for (const DecisionTable* t : asked) {
        if (t == nullptr) continue;
        const size_t n = t->intervals();
        if (n == 0) return 0;
        // A blocking size whose trial may run or has kept a plan is genx's.
        if (t == table_.get() && trials_.any()) return 0;
        // A size that runs one of Open MPI's coll/base algorithms is genx's
        // choice, not the displaced component's: genx stays.
        for (size_t i = 0; i < n; ++i)
            if (!t->decision(i).defers() || t->decision(i).base != 0) return 0;
        if (first == nullptr) first = t;
    }
    if (reason != nullptr) *reason = first->decision(0).why.c_str();
    return GENX_DEFERS;
}

uint64_t Selection::topology() const {
    return shape_.topology ? shape_.topology->fingerprint() : 0;
}

uint64_t Selection::digest() const {
    // The placement on the network is part of what the ranks must agree on
    // (a topology file missing on one node makes its plans differ).
    const uint64_t topo = topology() * 0x9e3779b97f4a7c15ULL;
    if (!forced_) {
        // Unprepared or failed: a value no table digests to, so that a rank
        // without a table never agrees with one that has it.
        if (!table_) return 0;
        const uint64_t nb =
            nb_table_ && nb_table_ != table_ ? nb_table_->digest() * 0xc2b2ae3d27d4eb4fULL : 0;
        // Ranks that time trials for different numbers of rounds would
        // meet in different calls: the rounds are part of the decisions.
        const uint64_t trials =
            trials_.any() ? fnv1a("trial_rounds=" + std::to_string(trials_.rounds())) : 0;
        return table_->digest() ^ nb ^ topo ^ trials;
    }
    // Forced: the algorithm and its params decide everything.
    return fnv1a(algorithm_ + "|" + forced_params_) ^ topo;
}

const ModelParams& Selection::model() const {
    return rules_ != nullptr && rules_->has_model ? rules_->model : builtin_rules().model;
}

}  // namespace genx
