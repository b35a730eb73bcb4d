// The executor options a network calls for: a network policy decided in
// tuning/ and handed to the executor as params (runtime/ only runs them).
#pragma once

#include <string>

#include "plan/registry.hpp"
#include "plan/topology_view.hpp"

namespace genx {

// An upper bound on the bytes one route of `view` holds in flight: a rate
// no route exceeds times a latency no route exceeds.  A switch tree: the
// fastest host link (the first declared rate on a host's way up) times the
// two largest host-to-root latency sums.  A direct network: the fastest
// link (rate × units) times twice a node's eccentricity in links (≥ the
// diameter; one BFS per connected part) times the largest link latency.
// 0 when the view declares no rate or no latency.
double route_bdp_bytes(const TopologyView& view);

// Whether a network's routes hold more than the default window of
// segments in flight (route_bdp_bytes > kDefaultWindow ×
// kDefaultSegmentBytes): there a transfer cut into default segments is
// capped at window × segment per route latency whatever the link's rate
// (docs/design.md; bench/RESULTS.md, the B4-like graph), so a plan whose
// params set neither `segment` nor `window` is sent unsegmented
// (segment=0) on such a network.
bool long_fat_routes(const TopologyView* view);

// The executor keys a network adds to a plan's params: segment=0 when
// `long_routes` (long_fat_routes() of the placement) and the params set
// neither segment nor window; nothing otherwise.  The component and
// genx-sim both apply it, so a simulation runs what a job would.
void add_network_exec_defaults(bool long_routes, ParamMap* params);

}  // namespace genx
