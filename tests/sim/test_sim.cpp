// The SimGrid side of genx (sim/): closed forms on tiny platforms under
// CM02 without correction factors, and genx's executor with real data
// through the SimGrid transport, every rank's result against the
// sequential reference.
//
// SimGrid has one engine per process, so each simulation runs in a child
// process (in_child) that writes its answer, or "error: ...", to a pipe.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "runtime/executor.hpp"
#include "sim/op_cost.hpp"
#include "sim/platform.hpp"
#include "tests/unit/make_plan.hpp"
#include "tests/unit/typed_data.hpp"
#include "topology/topology.hpp"

using namespace genx;
using namespace genx::sim;

namespace {

// Runs fn in a forked child and returns what it returned (or why the child
// failed).  Catch2 assertions stay in the parent.
std::string in_child(const std::function<std::string()>& fn) {
    int fd[2];
    if (pipe(fd) != 0) return "error: pipe";
    const pid_t pid = fork();
    if (pid < 0) return "error: fork";
    if (pid == 0) {
        close(fd[0]);
        std::string out;
        try {
            out = fn();
        } catch (const std::exception& e) {
            out = std::string("error: exception ") + e.what();
        }
        size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = write(fd[1], out.data() + done, out.size() - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        close(fd[1]);
        _exit(0);
    }
    close(fd[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "error: child died (status " + std::to_string(status) + ") after: " + out;
    return out;
}

std::string err(const Status& st) { return "error: " + st.message(); }

double as_seconds(const std::string& s) {
    INFO(s);
    REQUIRE(s.rfind("error", 0) != 0);
    return std::stod(s);
}

std::string num(double x) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", x);
    return b;
}

// Rank 0 sends `bytes` to the last rank; nothing else moves.
std::string one_message(const Topology& topo, size_t bytes) {
    PlatformOptions o;
    o.network = NetworkModel::CM02;
    std::unique_ptr<Simulation> sim;
    Status st = Simulation::create(topo, o, &sim);
    if (!st.is_ok()) return err(st);
    const int last = sim->ranks() - 1;
    Simulation::RunResult res;
    st = sim->run_ranks(
        [&](int rank, Transport& t) -> Status {
            if (rank != 0 && rank != last) return Status::ok();
            Request req = nullptr;
            GENX_RETURN_IF_ERROR(rank == 0 ? t.isend(nullptr, bytes, last, &req)
                                           : t.irecv(nullptr, bytes, 0, &req));
            return t.wait_all(&req, 1);
        },
        false, &res);
    return st.is_ok() ? num(res.seconds) : err(st);
}

// Every rank runs `algorithm` payload-free on `topo`, ops priced by `host`.
std::string simulate(const Topology& topo, const std::string& algorithm, const std::string& params,
                     size_t count, const HostParams& host, NetworkModel model = NetworkModel::CM02) {
    PlatformOptions o;
    o.network = model;
    std::unique_ptr<Simulation> sim;
    Status st = Simulation::create(topo, o, &sim);
    if (!st.is_ok()) return err(st);
    const int P = sim->ranks();
    ParamMap all, gen;
    ExecOptions eo;
    st = parse_params(params, &all);
    if (st.is_ok()) st = split_exec_params(all, &gen, &eo);
    RankGenerator g;
    if (st.is_ok()) st = prepare(algorithm, P, gen, &g);
    if (!st.is_ok()) return err(st);
    Simulation::RunResult res;
    st = sim->run_ranks(
        [&](int rank, Transport& t) -> Status {
            RankSchedule sched;
            GENX_RETURN_IF_ERROR(compile(g.header, g.program(rank), rank, count, 4, eo, &sched));
            GenModelOpCost cost(host);
            Execution ex;
            GENX_RETURN_IF_ERROR(ex.start_payload_free(sched, t, &cost));
            return ex.run();
        },
        false, &res);
    return st.is_ok() ? num(res.seconds) : err(st);
}

Topology preset(const std::string& name) {
    Topology t;
    const Status st = preset_topology(name, &t);
    INFO(st.message());
    REQUIRE(st.is_ok());
    return t;
}

constexpr double B = kPresetLinkRate;
constexpr double L = kPresetLinkLatency;

}  // namespace

TEST_CASE("one message between two hosts: latency + size / bandwidth", "[sim]") {
    // switch:2: the route is h0 -> switch -> h1, two links of L each.
    for (size_t bytes : {size_t{1}, size_t{1000}, size_t{1} << 20, size_t{100000000}}) {
        const double t = as_seconds(in_child([&] { return one_message(preset("switch:2"), bytes); }));
        const double want = 2 * L + static_cast<double>(bytes) / B;
        INFO(bytes << " B: simulated " << t << " s, closed form " << want << " s");
        CHECK(std::fabs(t - want) <= 1e-6 * want);
    }
}

TEST_CASE("ring on one switch: 2(P-1) steps of 2L + n/(P B)", "[sim]") {
    for (int P : {2, 4, 8}) {
        const size_t count = size_t{1} << 22;  // 16 MiB of int32, a multiple of P
        const double n = static_cast<double>(count) * 4;
        const double t = as_seconds(in_child([&] {
            return simulate(preset("switch:" + std::to_string(P)), "ring", "segment=0", count, {});
        }));
        const double want = 2 * (P - 1) * (2 * L + n / P / B);
        INFO("P=" << P << ": simulated " << t << " s, closed form " << want << " s");
        CHECK(std::fabs(t - want) <= 1e-6 * want);
    }
}

TEST_CASE("ring's reductions cost gamma and delta per step", "[sim]") {
    // The ring's P-1 reduce-scatter steps each reduce one block (k = 2:
    // n/P combined, 3n/P read or written); the allgather copies nothing.
    const int P = 4;
    const size_t count = size_t{1} << 20;
    const double n = static_cast<double>(count) * 4;
    HostParams h;
    h.gamma = 2e-10;
    h.delta = 1e-10;
    const double t = as_seconds(in_child([&] {
        return simulate(preset("switch:4"), "ring", "segment=0", count, h);
    }));
    const double want = 2 * (P - 1) * (2 * L + n / P / B) + (P - 1) * (h.gamma + 3 * h.delta) * n / P;
    INFO("simulated " << t << " s, closed form " << want << " s");
    CHECK(std::fabs(t - want) <= 1e-6 * want);
}

TEST_CASE("an oversubscribed uplink is shared", "[sim]") {
    // tree:2x2/2: uplinks of 2·B/2 = B.  Each host of leaf0 sends to the
    // host of leaf1 at the same index: two flows through each uplink, B/2
    // each, over four links.  Simulated with a 2-rank-per-leaf pairwise
    // exchange: rank r sends to r+2 and receives from it (r < 2).
    const size_t bytes = 10000000;
    const std::string out = in_child([&] {
        PlatformOptions o;
        o.network = NetworkModel::CM02;
        std::unique_ptr<Simulation> sim;
        Status st = Simulation::create(preset("tree:2x2/2"), o, &sim);
        if (!st.is_ok()) return err(st);
        Simulation::RunResult res;
        st = sim->run_ranks(
            [&](int rank, Transport& t) -> Status {
                Request req = nullptr;
                GENX_RETURN_IF_ERROR(rank < 2 ? t.isend(nullptr, bytes, rank + 2, &req)
                                              : t.irecv(nullptr, bytes, rank - 2, &req));
                return t.wait_all(&req, 1);
            },
            false, &res);
        return st.is_ok() ? num(res.seconds) : err(st);
    });
    const double t = as_seconds(out);
    const double want = 4 * L + static_cast<double>(bytes) / (B / 2);
    INFO("simulated " << t << " s, closed form " << want << " s");
    CHECK(std::fabs(t - want) <= 1e-6 * want);
    // Non-blocking (tree:2x2): each flow at full rate.
    const double nb = as_seconds(in_child([&] { return one_message(preset("tree:2x2"), bytes); }));
    const double want_nb = 4 * L + static_cast<double>(bytes) / B;
    CHECK(std::fabs(nb - want_nb) <= 1e-6 * want_nb);
}

TEST_CASE("two datacenters joined by a slow long-delay link", "[sim]") {
    // wan ─(cross-DC class: 1 Gbit/s, 5 ms)─ dc0, dc1 ─(host class)─ hosts.
    Topology t;
    const int host = t.class_index("host");
    t.classes[static_cast<size_t>(host)].rate = B;
    t.classes[static_cast<size_t>(host)].latency = L;
    const int wan = t.class_index("wan");
    t.classes[static_cast<size_t>(wan)].rate = 1e9 / 8;
    t.classes[static_cast<size_t>(wan)].latency = 5e-3;
    t.classes[static_cast<size_t>(wan)].cross_dc = true;
    const int root = t.add_node(TopoKind::Switch, "wan", -1);
    for (int d = 0; d < 2; ++d) {
        const int dc = t.add_node(TopoKind::Switch, "dc" + std::to_string(d), root, wan);
        for (int h = 0; h < 2; ++h) t.add_node(TopoKind::Host, "d" + std::to_string(d) + "h" + std::to_string(h), dc, host);
    }
    t.compute_levels();
    const size_t bytes = 1000000;
    const double got = as_seconds(in_child([&] { return one_message(t, bytes); }));
    const double want = 2 * L + 2 * 5e-3 + static_cast<double>(bytes) / (1e9 / 8);
    INFO("simulated " << got << " s, closed form " << want << " s");
    CHECK(std::fabs(got - want) <= 1e-6 * want);
}

// Ranks 1..n each send `bytes` to rank 0 at once on switch:(n+1): n flows
// converge on rank 0's downlink.
static std::string fan_in(int n, size_t bytes, const IncastParams& incast) {
    PlatformOptions o;
    o.network = NetworkModel::CM02;
    o.incast = incast;
    std::unique_ptr<Simulation> sim;
    Status st = Simulation::create(preset("switch:" + std::to_string(n + 1)), o, &sim);
    if (!st.is_ok()) return err(st);
    Simulation::RunResult res;
    st = sim->run_ranks(
        [&](int rank, Transport& t) -> Status {
            std::vector<Request> reqs(rank == 0 ? static_cast<size_t>(n) : 1, nullptr);
            if (rank == 0) {
                for (int s = 1; s <= n; ++s)
                    GENX_RETURN_IF_ERROR(t.irecv(nullptr, bytes, s, &reqs[static_cast<size_t>(s - 1)]));
            } else {
                GENX_RETURN_IF_ERROR(t.isend(nullptr, bytes, 0, &reqs[0]));
            }
            return t.wait_all(reqs.data(), static_cast<int>(reqs.size()));
        },
        false, &res);
    return st.is_ok() ? num(res.seconds) : err(st);
}

TEST_CASE("incast: n flows into one host pay GenModel's epsilon above w_t", "[sim]") {
    // GenModel: fan-in degree w = n + 1; the receiver's n·s bytes cost
    // n·s·β + max(w − w_t, 0)·n·s·ε, after the route's latency 2L.
    const size_t s = 1000000;
    IncastParams incast;
    incast.epsilon = 1e-10;
    incast.w_t = 3;
    for (int n : {1, 2, 4, 7}) {
        const double sn = static_cast<double>(n) * static_cast<double>(s);
        const double off = as_seconds(in_child([&] { return fan_in(n, s, IncastParams{}); }));
        const double want_off = 2 * L + sn / B;
        INFO("n=" << n << ": without incast " << off << " s, closed form " << want_off << " s");
        CHECK(std::fabs(off - want_off) <= 1e-6 * want_off);
        const double on = as_seconds(in_child([&] { return fan_in(n, s, incast); }));
        const double want_on = 2 * L + sn / B + std::max(n + 1 - incast.w_t, 0.0) * sn * incast.epsilon;
        INFO("n=" << n << ": with incast " << on << " s, closed form " << want_on << " s");
        CHECK(std::fabs(on - want_on) <= 1e-6 * want_on);
        if (n + 1 > incast.w_t) CHECK(on > off * (1 + 1e-3));
    }
    // The capacity itself, independent of sizes.
    CHECK(incast_capacity(B, 2, incast) == B);  // w = 3 = w_t: free
    CHECK(std::fabs(incast_capacity(B, 4, incast) - 1 / (1 / B + 2 * 1e-10)) <= 1e-9 * B);
}

TEST_CASE("incast parameters are checked", "[sim]") {
    IncastParams bad;
    bad.epsilon = -1;
    const std::string out = in_child([&] { return fan_in(2, 10, bad); });
    CHECK(out.find("error") == 0);
    CHECK(out.find("incast") != std::string::npos);
}

TEST_CASE("a link class without a rate is an error naming it", "[sim]") {
    Topology t;
    const int c = t.class_index("leafclass");
    const int sw = t.add_node(TopoKind::Switch, "s", -1);
    t.add_node(TopoKind::Host, "h0", sw, c);
    t.add_node(TopoKind::Host, "h1", sw, c);
    const std::string out = in_child([&] { return one_message(t, 10); });
    CHECK(out.find("error") == 0);
    CHECK(out.find("leafclass") != std::string::npos);
    CHECK(out.find("no rate") != std::string::npos);
}

TEST_CASE("presets", "[sim]") {
    Topology t;
    CHECK(preset_topology("switch:3", &t).is_ok());
    CHECK(t.hosts().size() == 3);
    CHECK(preset_topology("tree:3x4/2", &t).is_ok());
    CHECK(t.hosts().size() == 12);
    // The paper's Figure 11 platforms: server counts, and Table 5's rows as
    // classes (rate 1/beta, latency alpha/2).
    for (const auto& want : std::vector<std::pair<std::string, size_t>>{
             {"SS24", 24}, {"SS32", 32}, {"SYM384", 384}, {"SYM512", 512}, {"ASY384", 384}, {"CDC384", 384}}) {
        ModelParams m;
        INFO(want.first);
        REQUIRE(paper_preset(want.first, &t, &m).is_ok());
        CHECK(t.hosts().size() == want.second);
        CHECK(m.inter.w_t == 9);
        CHECK(m.host.gamma == 6.00e-10);
        const LinkClass& host_class =
            t.classes[static_cast<size_t>(t.nodes[static_cast<size_t>(t.hosts()[0])].up_class)];
        CHECK(std::fabs(host_class.rate - 1 / m.inter.beta) <= 1e-9 * host_class.rate);
        CHECK(host_class.latency == m.inter.alpha / 2);
        bool cross_dc = false;
        for (const LinkClass& c : t.classes) cross_dc = cross_dc || c.cross_dc;
        CHECK(cross_dc == (want.first == "CDC384"));
        Topology same;
        CHECK(preset_topology(want.first, &same).is_ok());
        CHECK(same.nodes.size() == t.nodes.size());
    }
    CHECK(!paper_preset("SS48", &t, nullptr).is_ok());
    for (const char* bad : {"switch:", "switch:0", "switch:x", "tree:3", "tree:3x", "tree:2x2/0", "ring:4"}) {
        const Status st = preset_topology(bad, &t);
        INFO(bad << ": " << st.message());
        CHECK(!st.is_ok());
        CHECK(st.message().find("switch:N") != std::string::npos);
    }
}

TEST_CASE("LV08, the default model, prices small messages above CM02", "[sim]") {
    const size_t count = 256;
    const double cm02 = as_seconds(in_child([&] {
        return simulate(preset("switch:4"), "ring", "", count, {}, NetworkModel::CM02);
    }));
    const double lv08 = as_seconds(in_child([&] {
        return simulate(preset("switch:4"), "ring", "", count, {}, NetworkModel::LV08);
    }));
    INFO("CM02 " << cm02 << " s, LV08 " << lv08 << " s");
    // LV08 multiplies latency by 13.01: latency-bound, nearly 13x.
    CHECK(lv08 > 10 * cm02);
}

TEST_CASE("real data through the SimGrid transport: every rank's result", "[sim]") {
    using genx_test::first_difference;
    using genx_test::make_input;
    using genx_test::reference_allreduce;
    struct Variant {
        std::string name, params;
    };
    const std::vector<Variant> variants = {{"ring", ""},       {"ring", "segment=64,window=2"},
                                           {"rhd", ""},        {"butterfly", ""},
                                           {"hcps", ""},       {"cps", ""},
                                           {"rb", "root=0"},   {"gentree", ""}};
    for (const Variant& v : variants) {
        for (int P : {3, 5, 8}) {
            const std::string out = in_child([&]() -> std::string {
                PlatformOptions o;
                o.network = NetworkModel::CM02;
                std::unique_ptr<Simulation> sim;
                Topology topo;
                Status st = preset_topology("switch:" + std::to_string(P), &topo);
                if (st.is_ok()) st = Simulation::create(topo, o, &sim);
                ParamMap all, gen;
                ExecOptions eo;
                if (st.is_ok()) st = parse_params(v.params, &all);
                if (st.is_ok()) st = split_exec_params(all, &gen, &eo);
                TopologyView view;
                if (st.is_ok()) st = to_view(topo, sim->host_of_rank(), &view);
                Plan plan;
                if (st.is_ok()) st = generate(v.name, P, gen, &view, &plan);
                if (!st.is_ok()) return err(st);
                const std::vector<std::pair<genx_dtype, genx_op>> cases = {
                    {GENX_DT_INT32, GENX_OP_SUM}, {GENX_DT_DOUBLE, GENX_OP_MAX}};
                const size_t count = 1001;
                Simulation::RunResult res;
                st = sim->run_ranks(
                    [&](int rank, Transport& t) -> Status {
                        Execution ex;
                        for (const auto& c : cases) {
                            const size_t es = genx_test::type_size(c.first);
                            RankSchedule sched;
                            GENX_RETURN_IF_ERROR(compile(plan, rank, count, es, eo, &sched));
                            ReduceKernel k;
                            GENX_RETURN_IF_ERROR(resolve_kernel(c.first, c.second, es, nullptr, &k));
                            const std::vector<unsigned char> in = make_input(c.first, c.second, rank, count);
                            std::vector<unsigned char> result(count * es);
                            std::vector<unsigned char> scratch(sched.scratch_bytes);
                            GENX_RETURN_IF_ERROR(ex.start(sched, in.data(), result.data(), scratch.data(),
                                                          scratch.size(), k, t));
                            GENX_RETURN_IF_ERROR(ex.run());
                            const std::vector<unsigned char> want =
                                reference_allreduce(c.first, c.second, P, count);
                            const long d = first_difference(c.first, result.data(), want.data(), count);
                            if (d >= 0)
                                return Status::internal(std::string(dtype_name(c.first)) + " " +
                                                        op_name(c.second) + ": element " +
                                                        std::to_string(d) + " differs");
                        }
                        return Status::ok();
                    },
                    true, &res);
                return st.is_ok() ? "ok " + num(res.seconds) : err(st);
            });
            INFO(v.name << " " << v.params << " P=" << P << ": " << out);
            CHECK(out.rfind("ok ", 0) == 0);
        }
    }
}
