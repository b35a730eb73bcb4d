// genx-topo --probe: measure the network under mpirun and write a
// topology.conf (and its overlay) a user can review (topology/probe.hpp
// infers the tree; this file only measures).
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
#include "tools/topo_probe.hpp"

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <vector>

#include "tools/host_names.hpp"
#include "topology/probe.hpp"
#include "topology/topology.hpp"

namespace genx::tools {

namespace {

int g_rank = 0;

void say(const std::string& m) {
    if (g_rank == 0) std::fprintf(stderr, "genx-topo --probe: %s\n", m.c_str());
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

double pingpong(MPI_Comm c, int me, int peer, int pings) {
    char b = 0;
    double best = 1e30;
    for (int i = 0; i < pings + 3; ++i) {
        const double t0 = MPI_Wtime();
        if (me < peer) {
            MPI_Send(&b, 1, MPI_CHAR, peer, 1, c);
            MPI_Recv(&b, 1, MPI_CHAR, peer, 1, c, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&b, 1, MPI_CHAR, peer, 1, c, MPI_STATUS_IGNORE);
            MPI_Send(&b, 1, MPI_CHAR, peer, 1, c);
        }
        if (i >= 3) best = std::min(best, MPI_Wtime() - t0);
    }
    return best;
}

}  // namespace

int run_probe(const ProbeArgs& a) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // Hosts are named as genx names them when it reads the file back
    // (SLURMD_NODENAME, else the host name), not by MPI_Get_processor_name:
    // under Slurm the two can differ, and the topology.conf written here
    // would then place no rank.
    const std::string name = local_host_name();
    const std::vector<std::string> names = allgather_names(name, MPI_COMM_WORLD);
    std::vector<std::string> hosts;
    std::map<std::string, int> leader;
    for (int r = 0; r < size; ++r) {
        const std::string& h = names[static_cast<size_t>(r)];
        if (leader.emplace(h, r).second) hosts.push_back(h);
    }
    const int H = static_cast<int>(hosts.size());
    if (H < 2) {
        say("all " + std::to_string(size) + " ranks run on one host (" + hosts[0] +
            "): nothing to probe; run one rank per host (mpirun --map-by node)");
        MPI_Finalize();
        return 1;
    }
    const bool is_leader = leader[name] == g_rank;
    MPI_Comm hc;
    MPI_Comm_split(MPI_COMM_WORLD, is_leader ? 0 : MPI_UNDEFINED, g_rank, &hc);
    std::vector<double> rtt(static_cast<size_t>(H) * static_cast<size_t>(H), 0);
    int me = -1;
    if (is_leader) MPI_Comm_rank(hc, &me);  // host index: leaders in rank order = hosts order
    say(std::to_string(H) + " hosts, " + std::to_string(size) + " ranks: round-trip times (" +
        std::to_string(a.pings) + " pings per pair)");
    if (is_leader) {
        const int rounds = H % 2 == 0 ? H - 1 : H;
        std::vector<double> mine(static_cast<size_t>(H), 0);
        for (int r = 0; r < rounds; ++r) {
            const int p = round_partner(H, r)[static_cast<size_t>(me)];
            if (p >= 0) mine[static_cast<size_t>(p)] = pingpong(hc, me, p, a.pings);
            MPI_Barrier(hc);
        }
        MPI_Gather(mine.data(), H, MPI_DOUBLE, rtt.data(), H, MPI_DOUBLE, 0, hc);
    }
    ProbeTree tree;
    std::vector<int> group(static_cast<size_t>(H), 0);  // per host: its leaf switch, broadcast
    int nswitches = 0;
    std::string error;
    if (g_rank == 0) {
        Status s = group_by_rtt(hosts, rtt, ProbeOptions{}, &tree);
        if (!s) error = s.message();
        nswitches = static_cast<int>(tree.switches.size());
    }
    int failed = error.empty() ? 0 : 1;
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed) {
        say(error);
        MPI_Finalize();
        return 1;
    }
    MPI_Bcast(&nswitches, 1, MPI_INT, 0, MPI_COMM_WORLD);
    // Membership of every switch below the root, as a host × switch table.
    std::vector<int> member(static_cast<size_t>(H) * static_cast<size_t>(nswitches), 0);
    if (g_rank == 0)
        for (int s = 0; s < nswitches; ++s)
            for (int h : tree.switches[static_cast<size_t>(s)].members)
                member[static_cast<size_t>(h) * static_cast<size_t>(nswitches) + static_cast<size_t>(s)] = 1;
    MPI_Bcast(member.data(), static_cast<int>(member.size()), MPI_INT, 0, MPI_COMM_WORLD);

    std::vector<char> buf(a.bytes);
    if (is_leader) {
        // 2. A host link alone: host 0 to each other host, best of 3.
        say("host link rate (" + std::to_string(a.bytes) + " bytes, host 0 to each host)");
        double best = 0;
        for (int h = 1; h < H; ++h)
            for (int rep = 0; rep < 3; ++rep) {
                MPI_Barrier(hc);
                const double t0 = MPI_Wtime();
                if (me == 0) {
                    MPI_Send(buf.data(), static_cast<int>(a.bytes), MPI_CHAR, h, 2, hc);
                    MPI_Recv(nullptr, 0, MPI_CHAR, h, 3, hc, MPI_STATUS_IGNORE);
                    best = std::max(best, static_cast<double>(a.bytes) / (MPI_Wtime() - t0));
                } else if (me == h) {
                    MPI_Recv(buf.data(), static_cast<int>(a.bytes), MPI_CHAR, 0, 2, hc, MPI_STATUS_IGNORE);
                    MPI_Send(nullptr, 0, MPI_CHAR, 0, 3, hc);
                }
            }
        // 3. Each switch's uplink, under the load of all its hosts at once.
        for (int s = 1; s < nswitches; ++s) {
            std::vector<int> in, out;
            for (int h = 0; h < H; ++h)
                (member[static_cast<size_t>(h) * static_cast<size_t>(nswitches) + static_cast<size_t>(s)] ? in : out)
                    .push_back(h);
            const size_t pairs = std::min(in.size(), out.size());
            say("uplink of switch " + std::to_string(s) + ": " + std::to_string(pairs) +
                " host(s) sending out at once");
            MPI_Barrier(hc);
            const double t0 = MPI_Wtime();
            for (size_t i = 0; i < pairs; ++i) {
                if (me == in[i]) MPI_Send(buf.data(), static_cast<int>(a.bytes), MPI_CHAR, out[i], 4, hc);
                if (me == out[i])
                    MPI_Recv(buf.data(), static_cast<int>(a.bytes), MPI_CHAR, in[i], 4, hc, MPI_STATUS_IGNORE);
            }
            MPI_Barrier(hc);
            const double t = MPI_Wtime() - t0;
            if (me == 0) {
                tree.switches[static_cast<size_t>(s)].rate = static_cast<double>(pairs * a.bytes) / t;
                tree.switches[static_cast<size_t>(s)].senders = static_cast<int>(pairs);
            }
        }
        if (me == 0) tree.host_rate = best;
        MPI_Comm_free(&hc);
    }
    int rc = 0;
    if (g_rank == 0) {
        // Latency an uplink adds: a quarter of the RTT step from inside the
        // switch to across its uplink (two crossings, both directions).
        // "Inside" pairs sit under different children of the switch, so
        // the links below it, already counted on their own, are on both
        // sides of the step.
        auto child_of = [&](size_t s, int h) {  // the child switch of s holding h, else -1 - h
            for (size_t c = 1; c < tree.switches.size(); ++c) {
                const ProbeSwitch& cs = tree.switches[c];
                if (cs.parent == static_cast<int>(s) &&
                    std::find(cs.members.begin(), cs.members.end(), h) != cs.members.end())
                    return static_cast<int>(c);
            }
            return -1 - h;
        };
        for (size_t s = 1; s < tree.switches.size(); ++s) {
            const ProbeSwitch& sw = tree.switches[s];
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
                tree.switches[s].latency = (across - inside) / 4;
        }
        char line[256];
        std::vector<std::string> comment = {
            "written by genx-topo --probe from measurements: review before use",
            std::to_string(H) + " hosts grouped by minimum round-trip time (" +
                std::to_string(a.pings) + " pings per pair); rates in the overlay"};
        for (size_t l = 0; l < tree.level_rtt.size(); ++l) {
            std::snprintf(line, sizeof line, "level %zu: round trips up to %.0f us", l + 1,
                          tree.level_rtt[l] * 1e6);
            comment.push_back(line);
        }
        std::snprintf(line, sizeof line, "host link: %.0f Mbit/s", tree.host_rate * 8 / 1e6);
        comment.push_back(line);
        for (size_t s = 1; s < tree.switches.size(); ++s) {
            const ProbeSwitch& sw = tree.switches[s];
            std::snprintf(line, sizeof line,
                          "%s uplink: %.0f Mbit/s carried by %d host(s) at once (%.1f:1 against their links)",
                          sw.name.c_str(), sw.rate * 8 / 1e6, sw.senders,
                          sw.rate > 0 ? tree.host_rate * sw.senders / sw.rate : 0.0);
            comment.push_back(line);
        }
        const std::string conf = probe_topology_conf(tree, comment);
        if (a.out.empty()) {
            std::cout << conf;
        } else if (!(std::ofstream(a.out) << conf)) {
            say(a.out + ": cannot be written");
            rc = 1;
        }
        if (!a.overlay_out.empty() && !(std::ofstream(a.overlay_out) << probe_overlay_json(tree))) {
            say(a.overlay_out + ": cannot be written");
            rc = 1;
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}

}  // namespace genx::tools
