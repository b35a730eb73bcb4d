// The model's decisions: every candidate plan priced at every grid size for
// one communicator size (tune/phases.hpp; docs/genx-tune.md, "Decisions").
#include <algorithm>

#include "plan/registry.hpp"
#include "tuning/gentree_choice.hpp"
#include "tune/phases.hpp"
#include "tune/report.hpp"

namespace genx::tune {

namespace {

// Whether two plans are the same schedule (same transfers, ops and blocks
// on every rank): at P = 2 ring, cps and both butterfly groups are, and
// measuring one against another only measures noise.
bool same_transfers(const std::vector<Transfer>& x, const std::vector<Transfer>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i].peer != y[i].peer || x[i].blocks != y[i].blocks ||
            (x[i].buffer == kResult) != (y[i].buffer == kResult))
            return false;
    return true;
}

bool same_step(const Step& a, const Step& b) {
    if (!same_transfers(a.sends, b.sends) || !same_transfers(a.recvs, b.recvs) ||
        a.ops.size() != b.ops.size())
        return false;
    for (size_t o = 0; o < a.ops.size(); ++o)
        if (a.ops[o].kind != b.ops[o].kind || a.ops[o].blocks != b.ops[o].blocks ||
            a.ops[o].srcs.size() != b.ops[o].srcs.size())
            return false;
    return true;
}

bool same_schedule(const Plan& a, const Plan& b) {
    if (a.nranks != b.nranks || a.nblocks != b.nblocks || a.programs.size() != b.programs.size())
        return false;
    for (size_t r = 0; r < a.programs.size(); ++r) {
        const auto& sa = a.programs[r].steps;
        const auto& sb = b.programs[r].steps;
        if (sa.size() != sb.size()) return false;
        for (size_t i = 0; i < sa.size(); ++i)
            if (!same_step(sa[i], sb[i])) return false;
    }
    return true;
}

// With --topology the families that follow the network (GenTree) are
// candidates too, built on the first c ranks' placement, as the component
// builds them from coll_genx_topology_file.
void enumerate(const Context& ctx, Decision* d) {
    const CommShape shape = ctx.cluster.shape_of_first(d->ranks);
    CandidateOptions copt;
    copt.max_hcps_levels = ctx.opt.max_hcps_levels;
    copt.ranks_per_node = shape.ppn;
    copt.topology = d->view.get();
    const ModelParams chooser = model_for_topology(ctx.model, d->view.get());
    auto add = [&](const Candidate& cand, const ParamMap& pm) {
        auto plan = std::make_shared<Plan>();
        check(generate(cand.algorithm, d->ranks, pm, d->view.get(), plan.get()),
              "candidate " + describe(cand.algorithm, cand.params));
        // The first of identical schedules stands for all of them.
        for (const auto& cp : d->candidates)
            if (same_schedule(*cp.second, *plan)) return;
        // GenTree by its canonical params (every sub-plan named): a rule
        // then runs the plan measured, where "pipeline=16" alone would have
        // the component choose sub-plans and rearrangement again at each
        // call's size (on 2dc it added a rearrangement that measured 18 %
        // slower than the plan timed here).
        Candidate named = cand;
        if (cand.algorithm == "gentree") named.params = plan->params;
        d->candidates.emplace_back(named, plan);
    };
    for (const Candidate& cand : enumerate_candidates(d->ranks, copt)) {
        ParamMap pm;
        check(parse_params(cand.params, &pm), "candidate params");
        add(cand, pm);
        // GenTree also with the sub-plans the model chooses at each grid
        // size (gentree_choice.hpp), with and without its rearrangement:
        // measured, not assumed.
        if (cand.algorithm != "gentree" || d->view == nullptr) continue;
        std::vector<std::string> texts;
        check(resolve_gentree_texts(cand.algorithm, d->view.get(),
                                    std::vector<double>(ctx.grid.begin(), ctx.grid.end()), chooser,
                                    cand.params, &texts),
              "choosing GenTree's sub-plans for " + describe(cand.algorithm, cand.params));
        // Most sizes choose alike: each distinct choice is generated once.
        std::sort(texts.begin(), texts.end());
        texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
        for (const std::string& text : texts) {
            ParamMap chosen;
            check(parse_params(text, &chosen), "candidate params");
            add(cand, chosen);
            if (chosen.erase("rearrange") != 0) add(cand, chosen);
        }
    }
}

// Every candidate's price at `bytes`, fastest first, each a CSV row.
Point price(Context* ctx, const Decision& d, size_t bytes) {
    Point p;
    p.bytes = bytes;
    for (const auto& [cand, plan] : d.candidates) {
        const Prediction pr = predict(*plan, bytes / sizeof(float), sizeof(float), ctx->model, d.map);
        check(pr.status, "pricing " + describe(cand.algorithm, cand.params));
        p.ranked.emplace_back(pr.seconds, cand);
        Record r;
        r.kind = "predict";
        r.series = describe(cand.algorithm, cand.params) + " (P=" + std::to_string(d.ranks) + ")";
        r.algorithm = cand.algorithm;
        r.params = cand.params;
        r.ranks = d.ranks;
        r.bytes = bytes;
        r.predicted = pr.seconds;
        ctx->records.push_back(r);
    }
    std::stable_sort(p.ranked.begin(), p.ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    p.choice_alg = p.ranked[0].second.algorithm;
    p.choice_params = p.ranked[0].second.params;
    p.note = "model " + format_seconds(p.ranked[0].first);
    if (p.ranked.size() > 1)
        p.note += ", runner-up " + describe(p.ranked[1].second.algorithm, p.ranked[1].second.params) +
                  " " + format_seconds(p.ranked[1].first);
    return p;
}

}  // namespace

Decision decide(Context* ctx, int ranks) {
    Decision d;
    d.ranks = ranks;
    d.view = ctx->cluster.view_of_first(ranks);
    d.map = ctx->cluster.map_of_first(ranks, d.view);
    enumerate(*ctx, &d);
    progress("pricing " + std::to_string(d.candidates.size()) + " distinct candidates for " +
             std::to_string(ranks) + " ranks on " + std::to_string(ctx->grid.size()) + " sizes");
    for (size_t bytes : ctx->grid) d.points.push_back(price(ctx, d, bytes));
    return d;
}

}  // namespace genx::tune
