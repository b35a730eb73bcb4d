// Platforms and the engine (design in platform.hpp).
#include "sim/platform.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>

#include "sim/sim_transport.hpp"
#include "tuning/gentree_choice.hpp"

namespace genx::sim {

namespace s4u = simgrid::s4u;

const char* network_model_name(NetworkModel m) { return m == NetworkModel::CM02 ? "CM02" : "LV08"; }

Status parse_network_model(const std::string& text, NetworkModel* out) {
    if (text == "LV08" || text == "lv08") {
        *out = NetworkModel::LV08;
    } else if (text == "CM02" || text == "cm02") {
        *out = NetworkModel::CM02;
    } else {
        return Status::invalid("network model '" + text + "': expected LV08 or CM02");
    }
    return Status::ok();
}

double incast_capacity(double capacity, int flows, const IncastParams& incast) {
    const double over = std::max(flows + 1 - incast.w_t, 0.0);
    if (!(capacity > 0) || over == 0) return capacity;
    return 1 / (1 / capacity + over * incast.epsilon);
}

std::string engine_name() {
    int major = 0, minor = 0, patch = 0;
    sg_version_get(&major, &minor, &patch);
    return "simgrid " + std::to_string(major) + "." + std::to_string(minor) +
           (patch != 0 ? "." + std::to_string(patch) : std::string());
}


std::string paper_preset_names() { return "SS24, SS32, SYM384, SYM512, ASY384, CDC384"; }

std::string preset_names() { return topology_preset_names() + ", " + paper_preset_names(); }

namespace {

// Table 5 of Xiong et al.: the rows tuning/gentree_choice.hpp keeps.
using PaperRow = LinkParams;
constexpr const PaperRow& kCrossDc = kTable5CrossDc;
constexpr const PaperRow& kRootSw = kTable5RootSw;
constexpr const PaperRow& kMiddleSw = kTable5MiddleSw;
constexpr double kServerGamma = kTable5Server.gamma;
constexpr double kServerDelta = kTable5Server.delta;

int add_row(Topology* t, const std::string& name, const PaperRow& row, bool cross_dc) {
    const int c = t->class_index(name);
    LinkClass& lc = t->classes[static_cast<size_t>(c)];
    lc.rate = 1 / row.beta;
    lc.latency = row.alpha / 2;
    lc.cross_dc = cross_dc;
    lc.source = "Table 5 (Xiong et al.)";
    return c;
}

// Middle switches `per_middle[i]` servers each under `root`; host names
// carry `prefix` so that two datacenters' hosts stay distinct.
void add_middles(Topology* t, int root, const std::string& prefix, const std::vector<int>& per_middle,
                 int root_class, int middle_class) {
    for (size_t m = 0; m < per_middle.size(); ++m) {
        const std::string sw = prefix + "M-SW" + std::to_string(m);
        const int mid = t->add_node(TopoKind::Switch, sw, root, root_class);
        for (int h = 0; h < per_middle[m]; ++h)
            t->add_node(TopoKind::Host, sw + "-h" + std::to_string(h), mid, middle_class);
    }
}

}  // namespace

bool is_paper_preset(const std::string& name) {
    for (const char* p : {"SS24", "SS32", "SYM384", "SYM512", "ASY384", "CDC384"})
        if (name == p) return true;
    return false;
}

Status paper_preset(const std::string& name, Topology* topo, ModelParams* model) {
    if (!is_paper_preset(name))
        return Status::invalid("preset '" + name + "': not one of the paper's (" + paper_preset_names() + ")");
    Topology t;
    PaperRow server_row = kMiddleSw;
    if (name == "SS24" || name == "SS32") {
        server_row = kRootSw;
        const int root = add_row(&t, "root", kRootSw, false);
        const int sw = t.add_node(TopoKind::Switch, "R-SW", -1);
        const int n = name == "SS24" ? 24 : 32;
        for (int h = 0; h < n; ++h) t.add_node(TopoKind::Host, "h" + std::to_string(h), sw, root);
    } else if (name == "CDC384") {
        const int middle = add_row(&t, "middle", kMiddleSw, false);
        const int root = add_row(&t, "root", kRootSw, false);
        const int xdc = add_row(&t, "xdc", kCrossDc, true);
        const int top = t.add_node(TopoKind::Switch, "XDC", -1);
        for (int dc = 0; dc < 2; ++dc) {
            const std::string prefix = "DC" + std::to_string(dc) + "-";
            const int r = t.add_node(TopoKind::Switch, prefix + "R-SW", top, xdc);
            add_middles(&t, r, prefix, std::vector<int>(8, dc == 0 ? 32 : 16), root, middle);
        }
    } else {
        std::vector<int> per_middle(16, name == "SYM512" ? 32 : 24);
        if (name == "ASY384")
            for (size_t m = 0; m < 16; ++m) per_middle[m] = m < 8 ? 32 : 16;
        const int middle = add_row(&t, "middle", kMiddleSw, false);
        const int root = add_row(&t, "root", kRootSw, false);
        const int sw = t.add_node(TopoKind::Switch, "R-SW", -1);
        add_middles(&t, sw, "", per_middle, root, middle);
    }
    t.compute_levels();
    t.compute_oversubscription();
    const std::string invalid = t.validate();
    if (!invalid.empty()) return Status::internal("preset '" + name + "': " + invalid);
    ModelParams m;
    m.inter.alpha = server_row.alpha;
    m.inter.beta = server_row.beta;
    m.inter.epsilon = server_row.epsilon;
    m.inter.w_t = server_row.w_t;
    m.intra = m.inter;
    m.host.gamma = kServerGamma;
    m.host.delta = kServerDelta;
    *topo = std::move(t);
    if (model != nullptr) *model = m;
    return Status::ok();
}

Status preset_topology(const std::string& name, Topology* out) {
    if (is_paper_preset(name)) return paper_preset(name, out, nullptr);
    if (is_topology_preset(name)) return topology_preset(name, out);
    return Status::invalid("preset '" + name + "': unknown preset (presets: " + preset_names() + ")");
}

Simulation::~Simulation() = default;

namespace {

using NetPoint = simgrid::kernel::routing::NetPoint;

// The cores each host needs: ranks_per_host, or the most ranks rank_host
// places on one host; an error for a host index the platform lacks.
Status host_cores(const PlatformOptions& options, int nhosts, int* cores) {
    *cores = options.ranks_per_host;
    if (options.rank_host.empty()) return Status::ok();
    std::vector<int> per(static_cast<size_t>(nhosts), 0);
    for (size_t r = 0; r < options.rank_host.size(); ++r) {
        const int h = options.rank_host[r];
        if (h < 0 || h >= nhosts)
            return Status::invalid("rank " + std::to_string(r) + " is placed on host index " +
                                   std::to_string(h) + "; the platform has " +
                                   std::to_string(nhosts) + " hosts");
        *cores = std::max(*cores, ++per[static_cast<size_t>(h)]);
    }
    return Status::ok();
}

// Every edge of the switch tree and every graph link needs a rate; say
// which class lacks one.
Status check_link_rates(const Topology& topo) {
    for (const Node& n : topo.nodes) {
        if (n.parent < 0 || (n.kind != TopoKind::Switch && n.kind != TopoKind::Host)) continue;
        if (topo.direct && n.up_class < 0) continue;  // below the container root: no link
        if (n.up_class < 0)
            return Status::invalid("topology: the link from '" + n.name + "' to '" +
                                   topo.nodes[static_cast<size_t>(n.parent)].name +
                                   "' has no link class");
        const LinkClass& c = topo.classes[static_cast<size_t>(n.up_class)];
        if (!(c.rate > 0))
            return Status::invalid("topology: link class '" + c.name + "' (the link from '" + n.name +
                                   "' up) has no rate: give it in the overlay");
    }

    for (const GraphLink& l : topo.links)
        if (!(topo.classes[static_cast<size_t>(l.cls)].rate > 0))
            return Status::invalid("topology: link class '" + topo.classes[static_cast<size_t>(l.cls)].name +
                                   "' has no rate");
    return Status::ok();
}

// The engine's network model, and the intra-host class as its loopback.
void configure_engine(const Topology& topo, const PlatformOptions& options) {
    // SimGrid logs every configuration change at INFO.
    xbt_log_control_set("xbt_cfg.thresh:warning");
    if (options.network == NetworkModel::CM02) {
        s4u::Engine::set_config("network/model:CM02");
        s4u::Engine::set_config("network/latency-factor:1");
        s4u::Engine::set_config("network/bandwidth-factor:1");
        s4u::Engine::set_config("network/weight-S:0");
        s4u::Engine::set_config("network/crosstraffic:0");
        // 3.32 bounds each flow by TCP-gamma / (2 latency) and reads 0
        // as a bound of 0: a window no flow can reach instead.
        s4u::Engine::set_config("network/TCP-gamma:1e30");
    }
    if (topo.intra_class >= 0) {
        const LinkClass& c = topo.classes[static_cast<size_t>(topo.intra_class)];
        if (c.rate > 0) s4u::Engine::set_config("network/loopback-bw", c.rate);
        if (c.latency > 0) s4u::Engine::set_config("network/loopback-lat", c.latency);
    }
}

// Floyd's all-pairs routing costs O(N³) time and O(N²) memory at seal():
// 70 s and 640 MB for the 4161 nodes of tree:64x64.  A switch tree has one
// path between any two hosts, so on large trees Dijkstra's zone (shortest
// paths from a source when it first sends, cached) gives the same routes at
// a cost that grows with the sources used.  Direct networks (ties between
// shortest paths) and small trees keep Floyd's routes.
s4u::NetZone* create_zone(const Topology& topo) {
    return !topo.direct && topo.nodes.size() > kFloydMaxNodes
               ? s4u::create_dijkstra_zone("genx", true)
               : s4u::create_floyd_zone("genx");
}

// Each node's net point: a router per switch (not a direct network's
// container), a host of `cores` cores per host.
std::vector<NetPoint*> create_points(s4u::NetZone* zone, const Topology& topo, int cores) {
    std::vector<NetPoint*> point(topo.nodes.size(), nullptr);
    for (size_t i = 0; i < topo.nodes.size(); ++i) {
        const Node& n = topo.nodes[i];
        if (n.kind == TopoKind::Switch) {
            if (topo.direct && n.is_virtual) continue;  // a container, not a router
            point[i] = zone->create_router(n.name);
        } else if (n.kind == TopoKind::Host) {
            s4u::Host* h = zone->create_host(n.name, kHostSpeed);
            h->set_core_count(cores);
            h->seal();
            point[i] = h->get_netpoint();
        }
    }
    return point;
}

// Incast on the link half `name` (the port that feeds a host).
void limit_incast(const std::string& name, const IncastParams& incast) {
    s4u::Link* down = s4u::Link::by_name(name);
    down->set_sharing_policy(s4u::Link::SharingPolicy::NONLINEAR,
                             [incast](double capacity, int flows) {
                                 return incast_capacity(capacity, flows, incast);
                             });
}

// A direct network: each host's router, the NI link to it, and the
// topology's links between routers.
void add_direct_network(s4u::NetZone* zone, const Topology& topo, const PlatformOptions& options,
                        const std::vector<NetPoint*>& point) {
    std::vector<NetPoint*> router(topo.nodes.size(), nullptr);
    std::vector<double> ni(topo.nodes.size(), 0);
    for (const GraphLink& l : topo.links) {
        const double r = topo.classes[static_cast<size_t>(l.cls)].rate * l.units;
        ni[static_cast<size_t>(l.a)] += r;
        ni[static_cast<size_t>(l.b)] += r;
    }
    for (size_t i = 0; i < topo.nodes.size(); ++i) {
        if (topo.nodes[i].kind != TopoKind::Host) continue;
        const Node& n = topo.nodes[i];
        router[i] = zone->create_router("r:" + n.name);
        // A host without links still needs a route to its router.
        s4u::SplitDuplexLink* link =
            zone->create_split_duplex_link("ni:" + n.name, ni[i] > 0 ? ni[i] : kPresetLinkRate);
        link->set_latency(0);
        if (options.incast.enabled()) limit_incast("ni:" + n.name + "_DOWN", options.incast);
        link->seal();
        zone->add_route(point[i], router[i], nullptr, nullptr,
                        {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
    }
    for (size_t k = 0; k < topo.links.size(); ++k) {
        const GraphLink& l = topo.links[k];
        const LinkClass& c = topo.classes[static_cast<size_t>(l.cls)];
        s4u::SplitDuplexLink* link = zone->create_split_duplex_link(
            "link" + std::to_string(k) + ":" + topo.nodes[static_cast<size_t>(l.a)].name + "-" +
                topo.nodes[static_cast<size_t>(l.b)].name,
            c.rate * l.units);
        link->set_latency(c.latency);
        link->seal();
        zone->add_route(router[static_cast<size_t>(l.a)], router[static_cast<size_t>(l.b)],
                        nullptr, nullptr,
                        {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
    }
}

// The switch tree's edges: each node's link up to its parent.
void add_tree_links(s4u::NetZone* zone, const Topology& topo, const PlatformOptions& options,
                    const std::vector<NetPoint*>& point) {
    for (size_t i = 0; i < topo.nodes.size(); ++i) {
        const Node& n = topo.nodes[i];
        if (n.parent < 0 || point[i] == nullptr) continue;
        if (topo.direct && n.up_class < 0) continue;
        const LinkClass& c = topo.classes[static_cast<size_t>(n.up_class)];
        s4u::SplitDuplexLink* link = zone->create_split_duplex_link("up:" + n.name, c.rate);
        link->set_latency(c.latency);
        // The host edge's DOWN half (switch to host) is the port that
        // feeds the host.  SimGrid names a split-duplex link's halves
        // <name>_UP and <name>_DOWN; the routes below use UP from the
        // host, so DOWN carries what the host receives.
        if (n.kind == TopoKind::Host && options.incast.enabled())
            limit_incast("up:" + n.name + "_DOWN", options.incast);
        link->seal();
        zone->add_route(point[i], point[static_cast<size_t>(n.parent)], nullptr, nullptr,
                        {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
    }
}

}  // namespace

Status Simulation::create(const Topology& topo, const PlatformOptions& options,
                          std::unique_ptr<Simulation>* out) {
    if (options.ranks_per_host < 1)
        return Status::invalid("ranks per host " + std::to_string(options.ranks_per_host) +
                               " (must be >= 1)");
    int cores = 0;
    GENX_RETURN_IF_ERROR(host_cores(options, static_cast<int>(topo.hosts().size()), &cores));
    if (!(options.incast.epsilon >= 0) || !std::isfinite(options.incast.epsilon) ||
        !(options.incast.w_t >= 0) || !std::isfinite(options.incast.w_t))
        return Status::invalid("incast: epsilon and w_t must be finite numbers >= 0");
    const std::string invalid = topo.validate();
    if (!invalid.empty()) return Status::invalid("topology: " + invalid);
    const std::vector<int> host_nodes = topo.hosts();
    if (host_nodes.empty()) return Status::invalid("topology: no hosts");
    GENX_RETURN_IF_ERROR(check_link_rates(topo));

    std::unique_ptr<Simulation> sim(new Simulation());
    sim->options_ = options;
    try {
        sim->engine_ = std::make_unique<s4u::Engine>("genx-sim");
        configure_engine(topo, options);
        s4u::NetZone* zone = create_zone(topo);
        const std::vector<NetPoint*> point = create_points(zone, topo, cores);
        if (topo.direct) add_direct_network(zone, topo, options, point);
        add_tree_links(zone, topo, options, point);
        zone->seal();
        for (int idx : host_nodes) {
            const std::string& name = topo.nodes[static_cast<size_t>(idx)].name;
            sim->hosts_.push_back(s4u::Host::by_name(name));
            sim->host_names_.push_back(name);
        }
    } catch (const std::exception& e) {
        return Status::internal(std::string("simgrid: building the platform: ") + e.what());
    }
    *out = std::move(sim);
    return Status::ok();
}

std::vector<std::string> Simulation::host_of_rank() const {
    std::vector<std::string> out;
    for (int r = 0; r < ranks(); ++r) out.push_back(host_names_[static_cast<size_t>(host_index(r))]);
    return out;
}

Status Simulation::run_ranks(const RankFn& fn, bool payload, RunResult* out,
                             const ProgressFn& progress, double interval) {
    if (ran_) return Status::invalid("sim: run_ranks called twice on one simulation");
    ran_ = true;
    const int n = ranks();
    SimFabric fabric(n, payload);
    std::vector<Status> status(static_cast<size_t>(n));
    std::vector<char> finished(static_cast<size_t>(n), 0);
    std::vector<double> end(static_cast<size_t>(n), 0);
    int nfinished = 0;
    // SimGrid's signal cannot be disconnected: whatever the return path, the
    // progress callback stops touching this frame once run_ranks returns.
    struct Quiet {
        std::shared_ptr<bool> live = std::make_shared<bool>(true);
        ~Quiet() { *live = false; }
    } quiet;
    if (progress) {
        // One engine per process, one run_ranks per engine: the signal is
        // connected once for this run.
        using clock = std::chrono::steady_clock;
        const clock::time_point t0 = clock::now();
        auto last = std::make_shared<clock::time_point>(t0);
        s4u::Engine::on_time_advance_cb([&, t0, last, interval, live = quiet.live](double) {
            if (!*live) return;
            const clock::time_point now = clock::now();
            if (std::chrono::duration<double>(now - *last).count() < interval) return;
            *last = now;
            Progress p;
            p.simulated = s4u::Engine::get_clock();
            p.messages = fabric.messages();
            p.finished = nfinished;
            p.ranks = n;
            p.wall = std::chrono::duration<double>(now - t0).count();
            progress(p);
        });
    }
    for (int r = 0; r < n; ++r) {
        s4u::Host* host = hosts_[static_cast<size_t>(host_index(r))];
        s4u::Actor::create("rank" + std::to_string(r), host, [&, r] {
            Status st;
            // SimGrid's ForcefulKillException (an actor killed at a
            // deadlock) is not a std::exception and passes through.
            try {
                st = fn(r, fabric.transport(r));
            } catch (const std::exception& e) {
                st = Status::internal(std::string("exception: ") + e.what());
            }
            status[static_cast<size_t>(r)] = st;
            finished[static_cast<size_t>(r)] = 1;
            ++nfinished;
            end[static_cast<size_t>(r)] = s4u::Engine::get_clock();
        });
    }
    try {
        engine_->run();
    } catch (const std::exception& e) {
        return Status::internal(std::string("simgrid: ") + e.what());
    }
    Status first;
    std::string stuck;
    for (int r = 0; r < n; ++r) {
        const Status& st = status[static_cast<size_t>(r)];
        if (!st.is_ok() && first.is_ok())
            first = Status(st.code(), "rank " + std::to_string(r) + ": " + st.message());
        if (!finished[static_cast<size_t>(r)]) stuck += (stuck.empty() ? "" : ", ") + std::to_string(r);
    }
    if (!first.is_ok()) return first;
    if (!stuck.empty())
        return Status::internal("sim: ranks " + stuck +
                                " never finished (every actor was blocked: a deadlock)");
    out->seconds = 0;
    for (double e : end) out->seconds = std::max(out->seconds, e);
    out->rank_end = std::move(end);
    out->messages = fabric.messages();
    out->bytes = fabric.bytes();
    return Status::ok();
}

}  // namespace genx::sim
