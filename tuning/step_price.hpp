// The price of one step's links, shared by the cost model's pricing pass
// (cost_model.cpp) and the closed-form prices (closed_form.cpp), so that
// both do the same floating-point operations on the same loads.  Internal
// to tuning/; the formulas are documented in cost_model.hpp.
#pragma once

#include <algorithm>

#include "tuning/cost_model.hpp"

namespace genx {
namespace step_price {

struct StepCost {
    double cost = 0;
    LinkKind link = LinkKind::None;
    int w = 0;
    int extra_msgs = 0;
    bool shift = false;
    TermTimes terms;
    ModelCoefficients coeff;
};

// One class of links: `msgs` is the larger of the messages the rank sends
// and receives over the class in the step (>= 1 when there is any
// transfer); `shift`: the rank sends and receives over the class in the
// step, but not pairwise (LinkParams::alpha_shift).
inline StepCost price_link(const LinkParams& p, double sent, double recv, int flows_in, int msgs,
                           bool shift, double hops = 1) {
    StepCost c;
    const double bytes = std::max(sent, recv);
    c.w = 1 + flows_in;
    const double over = std::max(static_cast<double>(c.w) - p.w_t, 0.0);
    c.extra_msgs = std::max(msgs - 1, 0);
    c.shift = shift && sent > 0 && recv > 0;
    c.terms.alpha = p.alpha * hops + p.alpha_msg * c.extra_msgs + (c.shift ? p.alpha_shift : 0.0);
    c.terms.beta = p.beta * bytes;
    c.terms.epsilon = p.epsilon * over * recv;
    c.cost = c.terms.alpha + c.terms.beta + c.terms.epsilon;
    return c;
}

// The intra-node part of a step: the rank's own intra-node bytes, the
// ranks sending to it over intra-node links (`flows_in`), its messages and
// shift (as price_link).
inline StepCost intra_price(const ModelParams& params, double sent, double recv, int flows_in,
                            int msgs, bool shift) {
    StepCost c = price_link(params.intra, sent, recv, flows_in, msgs, shift);
    c.link = LinkKind::Intra;
    c.coeff.steps_intra = 1;
    c.coeff.extra_msgs_intra = c.extra_msgs;
    c.coeff.shift_steps_intra = c.shift ? 1 : 0;
    c.coeff.bytes_intra = std::max(sent, recv);
    c.coeff.incast_bytes_intra =
        std::max(static_cast<double>(c.w) - params.intra.w_t, 0.0) * recv;
    return c;
}

// The NIC part of an inter-node step: `sent` and `recv` are the node's
// inter-node bytes in the step, `sources` the distinct nodes sending to
// it, `msgs` and `shift` the rank's own (as price_link).  On a
// heterogeneous direct network (`by_links`) the links price the bytes and
// only the extra messages are charged here.
inline StepCost nic_price(const ModelParams& params, double sent, double recv, int sources,
                          int msgs, bool shift, double hops, bool by_links) {
    LinkParams nic = params.inter;
    if (by_links) nic.alpha = nic.beta = nic.epsilon = 0;
    StepCost e = price_link(nic, sent, recv, sources, msgs, shift, hops);
    e.link = LinkKind::Inter;
    e.coeff.steps_inter = by_links ? 0 : 1;
    e.coeff.extra_msgs_inter = e.extra_msgs;
    e.coeff.shift_steps_inter = e.shift ? 1 : 0;
    e.coeff.bytes_inter = by_links ? 0 : std::max(sent, recv);
    e.coeff.incast_bytes_inter =
        by_links ? 0 : std::max(static_cast<double>(e.w) - params.inter.w_t, 0.0) * recv;
    return e;
}

// A step's link cost: the slower of its intra-node part (`intra`, link
// None when the rank has no intra-node transfer) and its inter-node part
// (`inter`, when it has one), the inter-node part on a tie.
inline StepCost slower_part(const StepCost& intra, const StepCost* inter) {
    if (inter != nullptr && (intra.link == LinkKind::None || inter->cost >= intra.cost))
        return *inter;
    return intra;
}

// A non-blocking call's step waits for the application's next MPI call
// (ModelParams::nonblocking_step): added to a step that moves data.
inline void add_nonblocking(const ModelParams& params, StepCost* c) {
    if (!params.price_nonblocking || c->link == LinkKind::None) return;
    c->terms.alpha += params.nonblocking_step;
    c->cost += params.nonblocking_step;
}

inline void add_coefficients(const ModelCoefficients& c, ModelCoefficients* C) {
    C->steps_intra += c.steps_intra;
    C->steps_inter += c.steps_inter;
    C->extra_msgs_intra += c.extra_msgs_intra;
    C->extra_msgs_inter += c.extra_msgs_inter;
    C->shift_steps_intra += c.shift_steps_intra;
    C->shift_steps_inter += c.shift_steps_inter;
    C->bytes_intra += c.bytes_intra;
    C->bytes_inter += c.bytes_inter;
    C->incast_bytes_intra += c.incast_bytes_intra;
    C->incast_bytes_inter += c.incast_bytes_inter;
    C->reduce_bytes += c.reduce_bytes;
    C->memory_bytes += c.memory_bytes;
    C->route_seconds += c.route_seconds;
}

// One step of a critical path, walked from the last step back: `c` is the
// link price that set its communication time, `reduce` and `memory` the
// rank's own bytes combined and accessed; `ps` holds its rank, step, link
// rank and step, start and end.  Appends it and adds its terms and
// coefficients to the prediction's.
inline void add_path_step(const HostParams& host, StepCost c, double reduce, double memory,
                          PathStep ps, Prediction* pred) {
    c.terms.gamma = host.gamma * reduce;
    c.terms.delta = host.delta * memory;
    c.coeff.reduce_bytes = reduce;
    c.coeff.memory_bytes = memory;
    ps.link = c.link;
    ps.fan_in_degree = c.link == LinkKind::None ? 0 : c.w;
    ps.terms = c.terms;
    pred->critical_path.push_back(ps);
    TermTimes& T = pred->terms;
    T.alpha += c.terms.alpha;
    T.beta += c.terms.beta;
    T.gamma += c.terms.gamma;
    T.delta += c.terms.delta;
    T.epsilon += c.terms.epsilon;
    add_coefficients(c.coeff, &pred->coefficients);
}

}  // namespace step_price
}  // namespace genx
