// GenTree's per-switch choice with the cost model's parameters (contracts
// in gentree_choice.hpp, formulas in docs/model.md).
#include "tuning/gentree_choice.hpp"

#include <algorithm>
#include <map>

#include "plan/hcps.hpp"

namespace genx {

namespace {

// The parameters one sub-tree's edges of `link` kind and view class `cls`
// are priced with (gentree_choice.hpp); `tree` holds the view's classes
// and host rate.
LinkParams edge_params(const TopologyView& view, const SwitchTree& tree, GenTreeLink link, int cls,
                       const ModelParams& params) {
    if (link == GenTreeLink::Intra) return params.intra;
    if (link != GenTreeLink::Switch) return params.inter;
    LinkParams p = tree.class_params(cls, params);
    const bool named = cls >= 0 && static_cast<size_t>(cls) < view.link_classes.size() &&
                       params.classes.count(view.link_classes[static_cast<size_t>(cls)].name) != 0;
    if (!named || (p.epsilon == 0 && p.w_t == 0)) {
        p.epsilon = params.inter.epsilon;
        p.w_t = params.inter.w_t;
    }
    return p;
}

// GenModel time of a sub-plan with `factors` whose servers start holding
// partial sums of v0 bytes each (reduce-scatter and allgather).
double subplan_seconds(const std::vector<int>& factors, double v0, const LinkParams& l,
                       const HostParams& h) {
    double t = 0, v = v0;
    for (int f : factors) {
        const double out = (f - 1.0) / f * v;
        t += 2 * l.alpha + 2 * out * l.beta + out * h.gamma + (f + 1.0) / f * v * h.delta +
             2 * std::max(f - l.w_t, 0.0) * out * l.epsilon;
        v /= f;
    }
    return t;
}

// The ring over c children (fan-in 2, c-1 rounds each way; every fold
// reads two inputs and writes one).
double ring_seconds(int c, double v0, const LinkParams& l, const HostParams& h) {
    const double out = (c - 1.0) / c * v0;
    return 2 * (c - 1) * l.alpha + 2 * out * l.beta + out * h.gamma + 3 * out * h.delta +
           2 * std::max(2 - l.w_t, 0.0) * out * l.epsilon;
}

// Algorithm 2's plan type selection: the cheapest of CPS, every ordered
// factorisation into at most kGenTreeMaxRounds factors, rhd (2^k children)
// and the ring; ACPS only on asymmetric children.  Ties keep the fewer rounds.
void choose_subplan(const LinkParams& l, const HostParams& h, double bytes,
                    std::map<int, std::vector<std::vector<int>>>* factorizations, GenTreeChoice* ch) {
    const std::vector<int>& cs = ch->node.child_servers;
    const int c = static_cast<int>(cs.size());
    const double v0 = bytes / *std::min_element(cs.begin(), cs.end());
    ch->factors = {c};
    ch->ring = false;
    ch->seconds = subplan_seconds(ch->factors, v0, l, h);
    if (!ch->symmetric()) return;
    // The same per fan-out: computed once per choice over the tree.
    auto cached = factorizations->find(c);
    if (cached == factorizations->end()) {
        std::vector<std::vector<int>> f = ordered_factorizations(c, kGenTreeMaxRounds);
        if ((c & (c - 1)) == 0 && c > (1 << kGenTreeMaxRounds)) {
            std::vector<int> halvings;
            for (int k = c; k > 1; k /= 2) halvings.push_back(2);
            f.push_back(halvings);
        }
        cached = factorizations->emplace(c, std::move(f)).first;
    }
    const std::vector<std::vector<int>>& candidates = cached->second;
    for (const std::vector<int>& f : candidates) {
        const double t = subplan_seconds(f, v0, l, h);
        if (t < ch->seconds * (1 - 1e-12)) {
            ch->factors = f;
            ch->seconds = t;
        }
    }
    if (c >= 3) {
        const double t = ring_seconds(c, v0, l, h);
        if (t < ch->seconds * (1 - 1e-12)) {
            ch->factors = {c};
            ch->ring = true;
            ch->seconds = t;
        }
    }
}

// Data rearrangement (docs/model.md): with n servers sending out through
// an uplink of w_t = k, the n - k flows above it pay incast on the whole
// partial vector, 2·(n - k)·S·ε(up); moving the blocks onto k servers
// first costs one CPS-like move inside (r = ceil(n/k) senders per
// receiver, S/n bytes each, at the children's parameters) each way,
// 2α + 2·(r-1)·V·β + 2·max(r - w_t, 0)·(r-1)·V·ε.  Returns k or 0.
int rearrange_onto(const LinkParams& up, const LinkParams& in, int n, double bytes) {
    const double w = up.w_t;
    if (!(w >= 1) || n <= w) return 0;
    const int k = static_cast<int>(w);
    const double origin = 2 * (n - k) * bytes * up.epsilon;
    const int r = (n + k - 1) / k;
    const double v = bytes / n;
    const double move = 2 * in.alpha + 2 * (r - 1) * v * in.beta +
                        2 * std::max(r - in.w_t, 0.0) * (r - 1) * v * in.epsilon;
    return move < origin ? k : 0;
}

bool is_root_row(const TopologyView& view, int cls) {
    // A class used by an edge into a root switch: the view's root, or a
    // switch whose uplink is cross-DC.
    for (const TopoNode& n : view.nodes) {
        if (n.is_host()) continue;
        const bool xdc_up = n.up_class >= 0 && static_cast<size_t>(n.up_class) < view.link_classes.size() &&
                            view.link_classes[static_cast<size_t>(n.up_class)].cross_dc;
        if (!(n.parent < 0 || xdc_up)) continue;
        for (int ch : n.children)
            if (view.nodes[static_cast<size_t>(ch)].up_class == cls) return true;
    }
    return false;
}

}  // namespace

bool GenTreeChoice::symmetric() const {
    const std::vector<int>& cs = node.child_servers;
    return std::all_of(cs.begin(), cs.end(), [&](int n) { return n == cs[0]; });
}

std::string GenTreeChoice::plan_name() const {
    if (!symmetric()) return "ACPS";
    if (ring) return "ring";
    if (factors.size() >= 2 && std::all_of(factors.begin(), factors.end(), [](int f) { return f == 2; }))
        return "rhd";
    if (factors.size() <= 1) return "CPS";
    return format_factors(factors);
}

ModelParams paper_model(const TopologyView& view) {
    ModelParams m;
    auto row = [&](int cls) {
        const TopoLinkClass& c = view.link_classes[static_cast<size_t>(cls)];
        if (c.cross_dc) return kTable5CrossDc;
        return is_root_row(view, cls) ? kTable5RootSw : kTable5MiddleSw;
    };
    std::map<int, int> host_classes;  // class -> hosts using it
    for (const TopoNode& n : view.nodes)
        if (n.is_host() && !n.ranks.empty() && n.up_class >= 0 &&
            static_cast<size_t>(n.up_class) < view.link_classes.size())
            ++host_classes[n.up_class];
    int host_class = -1, most = 0;
    for (const auto& [cls, count] : host_classes)
        if (count > most) {
            most = count;
            host_class = cls;
        }
    m.inter = host_class >= 0 ? row(host_class) : kTable5MiddleSw;
    m.intra = kTable5MiddleSw;
    for (const TopoNode& n : view.nodes)
        if (!n.is_host() && n.up_class >= 0 && static_cast<size_t>(n.up_class) < view.link_classes.size())
            m.classes[view.link_classes[static_cast<size_t>(n.up_class)].name] = row(n.up_class);
    m.host = kTable5Server;
    return m;
}

namespace {

// What choosing on one view needs at any size: its sub-trees, link classes
// and host rate, and the factorisations of each fan-out met so far.
struct ChoiceContext {
    std::vector<GenTreeSwitch> sw;
    SwitchTree tree;
    std::map<int, std::vector<std::vector<int>>> factorizations;

    Status init(const TopologyView& view) {
        GENX_RETURN_IF_ERROR(gentree_switches(view, &sw));
        tree.classes = view.link_classes;
        tree.host_rate = host_link_rate(view);
        return Status::ok();
    }
    void choose(const TopologyView& view, double bytes, const ModelParams& params,
                std::vector<GenTreeChoice>* out);
};

}  // namespace

Status gentree_choose(const TopologyView& view, double bytes, const ModelParams& params,
                      std::vector<GenTreeChoice>* out) {
    ChoiceContext ctx;
    GENX_RETURN_IF_ERROR(ctx.init(view));
    ctx.choose(view, bytes, params, out);
    return Status::ok();
}

void ChoiceContext::choose(const TopologyView& view, double bytes, const ModelParams& params,
                           std::vector<GenTreeChoice>* out) {
    out->clear();
    for (const GenTreeSwitch& s : sw) {
        GenTreeChoice ch;
        ch.node = s;
        const LinkParams in = edge_params(view, tree, ch.node.child_link, ch.node.child_class, params);
        choose_subplan(in, params.host, bytes, &factorizations, &ch);
        if (ch.node.up_link != GenTreeLink::None) {
            const LinkParams up = edge_params(view, tree, ch.node.up_link, ch.node.up_class, params);
            ch.rearranged_onto = rearrange_onto(up, in, ch.node.servers, bytes);
        }
        out->push_back(std::move(ch));
    }
}

std::string gentree_choice_params(const std::vector<GenTreeChoice>& choices) {
    if (choices.empty()) return "";
    std::string plans, rearrange;
    bool moved = false;
    for (const GenTreeChoice& c : choices) {
        plans += (plans.empty() ? "" : "/") + gentree_plan_token(c.factors, c.ring);
        rearrange += (rearrange.empty() ? "" : "/") + std::to_string(c.rearranged_onto);
        moved = moved || c.rearranged_onto > 0;
    }
    return "plans=" + plans + (moved ? ",rearrange=" + rearrange : std::string());
}

Status resolve_gentree(const std::string& algorithm, const TopologyView* view, double bytes,
                       const ModelParams& params, ParamMap* pm) {
    if (algorithm != "gentree" || pm->count("plans") != 0 || view == nullptr || view->empty() ||
        view->direct)
        return Status::ok();
    std::vector<GenTreeChoice> choices;
    GENX_RETURN_IF_ERROR(gentree_choose(*view, bytes, params, &choices));
    ParamMap chosen;
    GENX_RETURN_IF_ERROR(parse_params(gentree_choice_params(choices), &chosen));
    if (pm->count("rearrange") != 0) chosen.erase("rearrange");
    pm->insert(chosen.begin(), chosen.end());
    return Status::ok();
}

Status resolve_gentree_texts(const std::string& algorithm, const TopologyView* view,
                             const std::vector<double>& bytes, const ModelParams& params,
                             const std::string& text, std::vector<std::string>* out) {
    out->assign(bytes.size(), text);
    if (algorithm != "gentree" || view == nullptr || view->empty() || view->direct) return Status::ok();
    ParamMap pm;
    GENX_RETURN_IF_ERROR(parse_params(text, &pm));
    if (pm.count("plans") != 0) return Status::ok();
    ChoiceContext ctx;
    GENX_RETURN_IF_ERROR(ctx.init(*view));
    std::vector<GenTreeChoice> choices;
    for (size_t i = 0; i < bytes.size(); ++i) {
        ctx.choose(*view, bytes[i], params, &choices);
        ParamMap chosen, all = pm;
        GENX_RETURN_IF_ERROR(parse_params(gentree_choice_params(choices), &chosen));
        if (all.count("rearrange") != 0) chosen.erase("rearrange");
        all.insert(chosen.begin(), chosen.end());
        (*out)[i] = format_params(all);
    }
    return Status::ok();
}

Status resolve_gentree_text(const std::string& algorithm, const TopologyView* view, double bytes,
                            const ModelParams& params, std::string* text) {
    if (algorithm != "gentree") return Status::ok();
    ParamMap pm;
    GENX_RETURN_IF_ERROR(parse_params(*text, &pm));
    if (pm.count("plans") != 0) return Status::ok();
    GENX_RETURN_IF_ERROR(resolve_gentree(algorithm, view, bytes, params, &pm));
    *text = format_params(pm);
    return Status::ok();
}

}  // namespace genx
