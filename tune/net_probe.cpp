// The network probe of genx-topo --probe and genx-tune --site: measure the
// hosts of an MPI job and write a topology.conf (and its overlay) a user can
// review (topology/probe.hpp infers the tree; this file only measures).
//
// One rank per host takes part (the lowest rank of each host name); the
// others wait in barriers.  Three measurements, each between hosts only:
//  1. round-trip time of every host pair: a round-robin tournament, so each
//     host is in one pair per round; the minimum over `pings` 1-byte
//     ping-pongs;
//  2. a host link's rate: host 0 sends `bytes` to each other host in turn
//     (nothing else on the network), the best of 3;
//  3. each switch's uplink: every host below it sends `bytes` at once to a
//     distinct host outside it (as many pairs as both sides have hosts);
//     the aggregate rate is what the uplink carried.  An oversubscribed
//     uplink shows as an aggregate below the hosts' sum.
// Rank 0 prints the topology.conf on stdout (or --out) and the overlay to
// --overlay-out; a progress line per phase goes to stderr.
// MPI through runtime/mpi_comm.hpp, as genx-tune.
#include "tune/net_probe.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <vector>

#include "runtime/mpi_comm.hpp"
#include "topology/probe.hpp"
#include "topology/topology.hpp"

namespace genx::tune {

namespace {

int g_rank = 0;
std::string g_who = "genx-topo --probe";

void say(const std::string& m) {
    if (g_rank == 0) std::fprintf(stderr, "%s: %s\n", g_who.c_str(), m.c_str());
}

// Pairs of round `r` of a round-robin tournament over n players (circle
// method; with n odd one player sits out, marked -1).
std::vector<int> round_partner(int n, int r) {
    const int m = n % 2 == 0 ? n : n + 1;  // with a dummy player m - 1 when n is odd
    std::vector<int> partner(static_cast<size_t>(n), -1);
    auto player = [m](int k) { return 1 + ((k % (m - 1)) + (m - 1)) % (m - 1); };
    auto pair = [&](int x, int y) {
        if (x < n && y < n) {
            partner[static_cast<size_t>(x)] = y;
            partner[static_cast<size_t>(y)] = x;
        }
    };
    pair(0, player(r));
    for (int i = 1; i < m / 2; ++i) pair(player(r + i), player(r - i));
    return partner;
}

double pingpong(const mpi::Comm& c, int me, int peer, int pings) {
    char b = 0;
    double best = 1e30;
    for (int i = 0; i < pings + 3; ++i) {
        const double t0 = mpi::wtime();
        if (me < peer) {
            c.send(&b, 1, peer, 1);
            c.recv(&b, 1, peer, 1);
        } else {
            c.recv(&b, 1, peer, 1);
            c.send(&b, 1, peer, 1);
        }
        if (i >= 3) best = std::min(best, mpi::wtime() - t0);
    }
    return best;
}

// Round-trip times of every host pair (H x H, row-major) on rank 0:
// a round-robin tournament among the host leaders, one pair per host a
// round.
std::vector<double> measure_rtt(const mpi::Comm& hc, int me, int H, int pings) {
    std::vector<double> mine(static_cast<size_t>(H), 0);
    const int rounds = H % 2 == 0 ? H - 1 : H;
    for (int r = 0; r < rounds; ++r) {
        const int p = round_partner(H, r)[static_cast<size_t>(me)];
        if (p >= 0) mine[static_cast<size_t>(p)] = pingpong(hc, me, p, pings);
        hc.barrier();
    }
    return hc.gather(mine);
}

// 2. A host link alone: host 0 to each other host, best of 3 (on host 0).
double measure_host_rate(const mpi::Comm& hc, int me, int H, std::vector<char>& buf) {
    const size_t bytes = buf.size();
    double best = 0;
    for (int h = 1; h < H; ++h)
        for (int rep = 0; rep < 3; ++rep) {
            hc.barrier();
            const double t0 = mpi::wtime();
            if (me == 0) {
                hc.send(buf.data(), bytes, h, 2);
                hc.recv(nullptr, 0, h, 3);
                best = std::max(best, static_cast<double>(bytes) / (mpi::wtime() - t0));
            } else if (me == h) {
                hc.recv(buf.data(), bytes, 0, 2);
                hc.send(nullptr, 0, 0, 3);
            }
        }
    return best;
}

// 3. Each switch's uplink, under the load of all its hosts at once
// (`member`: host x switch table); the rates land in rank 0's tree.
void measure_uplinks(const mpi::Comm& hc, int me, int H, int nswitches,
                     const std::vector<int>& member, std::vector<char>& buf, ProbeTree* tree) {
    const size_t bytes = buf.size();
    for (int s = 1; s < nswitches; ++s) {
        std::vector<int> in, out;
        for (int h = 0; h < H; ++h)
            (member[static_cast<size_t>(h) * static_cast<size_t>(nswitches) + static_cast<size_t>(s)] ? in : out)
                .push_back(h);
        const size_t pairs = std::min(in.size(), out.size());
        say("uplink of switch " + std::to_string(s) + ": " + std::to_string(pairs) +
            " host(s) sending out at once");
        hc.barrier();
        const double t0 = mpi::wtime();
        for (size_t i = 0; i < pairs; ++i) {
            if (me == in[i]) hc.send(buf.data(), bytes, out[i], 4);
            if (me == out[i]) hc.recv(buf.data(), bytes, in[i], 4);
        }
        hc.barrier();
        const double t = mpi::wtime() - t0;
        if (me == 0) {
            tree->switches[static_cast<size_t>(s)].rate = static_cast<double>(pairs * bytes) / t;
            tree->switches[static_cast<size_t>(s)].senders = static_cast<int>(pairs);
        }
    }
}

// Latency an uplink adds: a quarter of the RTT step from inside the switch
// to across its uplink (two crossings, both directions).  "Inside" pairs
// sit under different children of the switch, so the links below it,
// already counted on their own, are on both sides of the step.
void infer_uplink_latency(const std::vector<double>& rtt, int H, ProbeTree* tree) {
    auto child_of = [&](size_t s, int h) {  // the child switch of s holding h, else -1 - h
        for (size_t c = 1; c < tree->switches.size(); ++c) {
            const ProbeSwitch& cs = tree->switches[c];
            if (cs.parent == static_cast<int>(s) &&
                std::find(cs.members.begin(), cs.members.end(), h) != cs.members.end())
                return static_cast<int>(c);
        }
        return -1 - h;
    };
    for (size_t s = 1; s < tree->switches.size(); ++s) {
        const ProbeSwitch& sw = tree->switches[s];
        double inside = 1e30, across = 1e30;
        for (int x = 0; x < H; ++x)
            for (int y = 0; y < H; ++y) {
                if (x == y) continue;
                const bool xi = std::find(sw.members.begin(), sw.members.end(), x) != sw.members.end();
                const bool yi = std::find(sw.members.begin(), sw.members.end(), y) != sw.members.end();
                const double v = rtt[static_cast<size_t>(x) * static_cast<size_t>(H) + static_cast<size_t>(y)];
                if (v <= 0) continue;
                if (xi && yi && child_of(s, x) != child_of(s, y)) inside = std::min(inside, v);
                if (xi != yi) across = std::min(across, v);
            }
        if (inside < 1e30 && across < 1e30 && across > inside)
            tree->switches[s].latency = (across - inside) / 4;
    }
}

// The topology.conf of an inferred tree, its header saying how it was found.
std::string probe_conf_text(const ProbeTree& tree, int H, int pings) {
    char line[256];
    std::vector<std::string> comment = {
        "written by " + g_who + " from measurements: review before use",
        std::to_string(H) + " hosts grouped by minimum round-trip time (" +
            std::to_string(pings) + " pings per pair); rates in the overlay"};
    for (size_t l = 0; l < tree.level_rtt.size(); ++l) {
        std::snprintf(line, sizeof line, "level %zu: round trips up to %.0f us", l + 1,
                      tree.level_rtt[l] * 1e6);
        comment.push_back(line);
    }
    if (tree.host_rate > 0) {
        std::snprintf(line, sizeof line, "host link: %.0f Mbit/s", tree.host_rate * 8 / 1e6);
        comment.push_back(line);
    } else {
        comment.push_back("host link: not measured (one host)");
    }
    for (size_t s = 1; s < tree.switches.size(); ++s) {
        const ProbeSwitch& sw = tree.switches[s];
        std::snprintf(line, sizeof line,
                      "%s uplink: %.0f Mbit/s carried by %d host(s) at once (%.1f:1 against their links)",
                      sw.name.c_str(), sw.rate * 8 / 1e6, sw.senders,
                      sw.rate > 0 ? tree.host_rate * sw.senders / sw.rate : 0.0);
        comment.push_back(line);
    }
    return probe_topology_conf(tree, comment);
}

// genx-topo --probe's files (rank 0); 1 when a file cannot be written.
int write_outputs(const ProbeArgs& a, const NetProbe& p) {
    int rc = 0;
    const std::string& conf = p.conf;
    if (a.out.empty()) {
        std::cout << conf;
    } else if (!(std::ofstream(a.out) << conf)) {
        say(a.out + ": cannot be written");
        rc = 1;
    }
    if (!a.overlay_out.empty() && !(std::ofstream(a.overlay_out) << p.overlay)) {
        say(a.overlay_out + ": cannot be written");
        rc = 1;
    }
    return rc;
}

// Rank 0 groups the hosts by round-trip time; every rank learns the
// switches' membership as a host x switch table.  False (on every rank)
// when the grouping failed.
bool group_hosts(const mpi::Comm& world, const std::vector<std::string>& hosts,
                 const std::vector<double>& rtt, ProbeTree* tree, std::vector<int>* member,
                 int* nswitches, std::string* error_out) {
    const int H = static_cast<int>(hosts.size());
    std::string error;
    if (g_rank == 0) {
        Status s = group_by_rtt(hosts, rtt, ProbeOptions{}, tree);
        if (!s) error = s.message();
        *nswitches = static_cast<int>(tree->switches.size());
    }
    int failed = error.empty() ? 0 : 1;
    world.bcast(&failed, 1);
    if (failed) {
        *error_out = error;
        return false;
    }
    world.bcast(nswitches, 1);
    member->assign(static_cast<size_t>(H) * static_cast<size_t>(*nswitches), 0);
    if (g_rank == 0)
        for (int s = 0; s < *nswitches; ++s)
            for (int h : tree->switches[static_cast<size_t>(s)].members)
                (*member)[static_cast<size_t>(h) * static_cast<size_t>(*nswitches) + static_cast<size_t>(s)] = 1;
    world.bcast(member->data(), static_cast<int>(member->size()));
    return true;
}

// The given tree as the probe measures it: the root, then every switch
// holding some but not all of the job's hosts (only those have an uplink
// the job can load), each with the job's hosts below it.
ProbeTree tree_of(const Topology& t, const std::vector<std::string>& hosts) {
    ProbeTree tree;
    tree.hosts = hosts;
    const int H = static_cast<int>(hosts.size());
    std::vector<std::vector<int>> below(t.nodes.size());
    for (int h = 0; h < H; ++h)
        for (int n = t.find(hosts[static_cast<size_t>(h)]); n >= 0; n = t.nodes[static_cast<size_t>(n)].parent)
            below[static_cast<size_t>(n)].push_back(h);
    ProbeSwitch root;
    root.name = t.nodes.empty() ? "root" : t.nodes[0].name;
    for (int h = 0; h < H; ++h) root.members.push_back(h);
    tree.switches.push_back(root);
    for (size_t n = 1; n < t.nodes.size(); ++n) {
        const size_t m = below[n].size();
        if (t.nodes[n].kind != TopoKind::Switch || m == 0 || m == static_cast<size_t>(H)) continue;
        ProbeSwitch s;
        s.name = t.nodes[n].name;
        s.parent = 0;  // only the root is known to hold it among those kept
        s.members = below[n];
        tree.switches.push_back(s);
    }
    return tree;
}

// The job's hosts in order of their lowest rank, and each rank's.
std::vector<std::string> job_hosts(const mpi::Comm& world, std::string* mine, bool* is_leader) {
    // Hosts are named as genx names them when it reads the file back
    // (SLURMD_NODENAME, else the host name), not by MPI_Get_processor_name:
    // under Slurm the two can differ, and the topology.conf written here
    // would then place no rank.
    *mine = local_host_name();
    const std::vector<std::string> names = world.allgather_names(*mine);
    std::vector<std::string> hosts;
    std::map<std::string, int> leader;
    for (int r = 0; r < world.size(); ++r) {
        const std::string& h = names[static_cast<size_t>(r)];
        if (leader.emplace(h, r).second) hosts.push_back(h);
    }
    *is_leader = leader[*mine] == world.rank();
    return hosts;
}

// The rates of the tree over H hosts (its member table shared by every
// rank; the tree itself only rank 0's), as the leaders measure them; they
// land in rank 0's tree.
void measure_rates(const mpi::Comm& world, bool is_leader, int H, size_t bytes,
                   const std::vector<int>& member, int nswitches, ProbeTree* tree) {
    mpi::Comm hc = world.split(is_leader ? 0 : -1, world.rank());
    if (!is_leader) return;
    const int me = hc.rank();  // host index: leaders in rank order = hosts order
    std::vector<char> buf(bytes);
    say("host link rate (" + std::to_string(bytes) + " bytes, host 0 to each host)");
    const double best = measure_host_rate(hc, me, H, buf);
    measure_uplinks(hc, me, H, nswitches, member, buf, tree);
    if (me == 0) tree->host_rate = best;
}

}  // namespace

Status probe_network(const mpi::Comm& world, const ProbeRun& run, NetProbe* out) {
    g_rank = world.rank();
    g_who = run.who;
    std::string name;
    bool is_leader = false;
    const std::vector<std::string> hosts = job_hosts(world, &name, &is_leader);
    const int H = static_cast<int>(hosts.size());
    out->hosts = hosts;
    if (H < 2 && !run.one_host_ok)
        return Status::invalid("all " + std::to_string(world.size()) + " ranks run on one host (" +
                               hosts[0] + "): nothing to probe; run one rank per host "
                               "(mpirun --map-by node)");
    std::vector<double> rtt(static_cast<size_t>(H) * static_cast<size_t>(H), 0);
    ProbeTree tree;
    std::vector<int> member;
    int nswitches = 0;
    if (run.given) {
        tree = tree_of(*run.given, hosts);
        nswitches = static_cast<int>(tree.switches.size());
        member.assign(static_cast<size_t>(H) * static_cast<size_t>(nswitches), 0);
        for (int s = 0; s < nswitches; ++s)
            for (int h : tree.switches[static_cast<size_t>(s)].members)
                member[static_cast<size_t>(h) * static_cast<size_t>(nswitches) + static_cast<size_t>(s)] = 1;
    } else {
        say(std::to_string(H) + " host(s), " + std::to_string(world.size()) +
            " ranks: round-trip times (" + std::to_string(run.pings) + " pings per pair)");
        if (H > 1) {
            mpi::Comm hc = world.split(is_leader ? 0 : -1, world.rank());
            if (is_leader) rtt = measure_rtt(hc, hc.rank(), H, run.pings);
        }
        std::string error;
        if (!group_hosts(world, hosts, rtt, &tree, &member, &nswitches, &error))
            return Status::invalid(error);
    }
    if (H > 1) measure_rates(world, is_leader, H, run.bytes, member, nswitches, &tree);
    if (g_rank == 0) {
        if (!run.given) infer_uplink_latency(rtt, H, &tree);
        out->tree = tree;
        if (!run.given) out->conf = probe_conf_text(tree, H, run.pings);
        out->overlay = probe_overlay_json(tree);
    }
    return Status::ok();
}

int run_probe(const ProbeArgs& a) {
    mpi::init(nullptr, nullptr);
    int rc = 0;
    {
        const mpi::Comm world = mpi::Comm::world();
        NetProbe probe;
        ProbeRun run;
        run.pings = a.pings;
        run.bytes = a.bytes;
        const Status st = probe_network(world, run, &probe);
        if (!st) {
            say(st.message());
            rc = 1;
        } else if (g_rank == 0) {
            rc = write_outputs(a, probe);
        }
        world.bcast(&rc, 1);
    }
    mpi::finalize();
    return rc;
}

}  // namespace genx::tune
