// GenModel fitting: NNLS on known problems, the benchmark plans' costs, and
// recovery of known parameters (α, α_m, α_s, β, ε, w_t per link class, γ, δ) from
// synthetic measurements with noise, with the held-out error reported.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <cstdio>
#include <fstream>
#include <unistd.h>
#include <stdlib.h>

#include "plan/registry.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/fit.hpp"
#include "topology/placement.hpp"

using namespace genx;

namespace {

bool rel_close(double got, double want, double tol) {
    return std::fabs(got - want) <= tol * std::fabs(want);
}

ModelParams truth() {
    ModelParams p;
    p.intra = LinkParams{2e-6, 2e-10, 5e-11, 4, 5e-7, 1e-6};
    p.inter = LinkParams{8e-6, 8e-10, 2e-10, 6, 4e-6, 7e-6};
    p.host = HostParams{3e-11, 1.2e-10};
    return p;
}

std::shared_ptr<const Plan> plan_of(const std::string& name, int P) {
    auto plan = std::make_shared<Plan>();
    REQUIRE(generate(name, P, ParamMap{}, plan.get()).is_ok());
    return plan;
}

// The measurements genx-tune takes, timed by the model with `p` and
// multiplied by (1 + noise), noise uniform in [-amp, amp].
std::vector<Measurement> synthetic(const ModelParams& p, double amp, bool with_inter) {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Measurement> out;
    auto add = [&](const std::string& kind, const std::string& label,
                   std::shared_ptr<const Plan> plan, const RankMap& ranks, size_t bytes) {
        Measurement m;
        m.kind = kind;
        m.label = label;
        m.plan = std::move(plan);
        m.ranks = ranks;
        m.count = bytes;
        m.elem_size = 1;
        const Prediction pr = predict(*m.plan, m.count, 1, p, ranks);
        REQUIRE(pr.status.is_ok());
        m.seconds = pr.seconds * (1 + amp * u(rng));
        out.push_back(std::move(m));
    };
    auto pp = std::make_shared<Plan>(exchange_plan());
    for (size_t bytes = 8; bytes <= (size_t{16} << 20); bytes *= 4) {
        add("p2p-intra", "p2p intra " + std::to_string(bytes), pp, RankMap{{0, 0}, nullptr, nullptr}, bytes);
        if (with_inter)
            add("p2p-inter", "p2p inter " + std::to_string(bytes), pp, RankMap{{0, 1}, nullptr, nullptr}, bytes);
    }
    for (int x = 2; x <= 12; ++x) {
        auto cps = plan_of("cps", x);
        for (size_t bytes : {size_t{4} << 10, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20}) {
            const std::string tag = "P=" + std::to_string(x) + " " + std::to_string(bytes);
            add("cps-intra", "cps intra " + tag, cps, RankMap::by_slot(x, x), bytes);
            if (with_inter) add("cps-inter", "cps inter " + tag, cps, RankMap{}, bytes);
        }
    }
    // genx-tune's shift benchmark: the first 3 and all ranks (here 3 … 8).
    for (int x = 3; x <= 8; ++x) {
        auto sh = std::make_shared<Plan>(shift_plan(x));
        for (size_t bytes : {size_t{8}, size_t{512}, size_t{4096}}) {
            const std::string tag = "P=" + std::to_string(x) + " " + std::to_string(bytes);
            add("shift-intra", "shift intra " + tag, sh, RankMap::by_slot(x, x), bytes);
            if (with_inter) add("shift-inter", "shift inter " + tag, sh, RankMap{}, bytes);
        }
    }
    for (int k = 2; k <= 8; ++k) {
        auto red = std::make_shared<Plan>(local_reduce_plan(k));
        for (size_t bytes : {size_t{1} << 20, size_t{8} << 20, size_t{32} << 20})
            add("reduce", "reduce k=" + std::to_string(k), red, RankMap{}, bytes);
    }
    return out;
}

// gamma_tol: γ is the weakest-determined parameter, only (k−1)γ against
// (k+1)δ in the reduce benchmark, about a fifth of its time with these values.
void check_recovered(const ModelParams& got, const ModelParams& want, double tol,
                     double gamma_tol) {
    CHECK(rel_close(got.intra.alpha, want.intra.alpha, tol));
    CHECK(rel_close(got.intra.alpha_msg, want.intra.alpha_msg, tol));
    CHECK(rel_close(got.intra.alpha_shift, want.intra.alpha_shift, tol));
    CHECK(rel_close(got.intra.beta, want.intra.beta, tol));
    CHECK(rel_close(got.intra.epsilon, want.intra.epsilon, tol));
    CHECK(got.intra.w_t == want.intra.w_t);
    CHECK(rel_close(got.inter.alpha, want.inter.alpha, tol));
    CHECK(rel_close(got.inter.alpha_msg, want.inter.alpha_msg, tol));
    CHECK(rel_close(got.inter.alpha_shift, want.inter.alpha_shift, tol));
    CHECK(rel_close(got.inter.beta, want.inter.beta, tol));
    CHECK(rel_close(got.inter.epsilon, want.inter.epsilon, tol));
    CHECK(got.inter.w_t == want.inter.w_t);
    CHECK(rel_close(got.host.gamma, want.host.gamma, gamma_tol));
    CHECK(rel_close(got.host.delta, want.host.delta, tol));
}

}  // namespace

TEST_CASE("nnls: an active bound and the KKT conditions", "[fit]") {
    // Unconstrained least squares gives x = (1, -1); with x >= 0 the second
    // is held at 0 and the first minimises (x-1)^2 + 1 + x^2: x = 1/2.
    std::vector<double> x;
    REQUIRE(nnls({1, 0, 0, 1, 1, 1}, 3, 2, {1, -1, 0}, &x).is_ok());
    CHECK(x[0] == Approx(0.5).epsilon(1e-12));
    CHECK(x[1] == 0);

    // Random problems: x >= 0, and the gradient A^T(b - Ax) is ~0 on the
    // positive components and <= 0 on the zero ones.
    std::mt19937 rng(7);
    std::normal_distribution<double> g(0.0, 1.0);
    for (int trial = 0; trial < 20; ++trial) {
        const size_t m = 30, n = 6;
        std::vector<double> a(m * n), b(m);
        for (double& v : a) v = g(rng);
        for (double& v : b) v = g(rng);
        REQUIRE(nnls(a, m, n, b, &x).is_ok());
        std::vector<double> r(m);
        for (size_t i = 0; i < m; ++i) {
            r[i] = b[i];
            for (size_t j = 0; j < n; ++j) r[i] -= a[i * n + j] * x[j];
        }
        for (size_t j = 0; j < n; ++j) {
            double w = 0;
            for (size_t i = 0; i < m; ++i) w += a[i * n + j] * r[i];
            CHECK(x[j] >= 0);
            if (x[j] > 0)
                CHECK(std::fabs(w) < 1e-9);
            else
                CHECK(w < 1e-9);
        }
    }

    // Columns of very different scale (steps vs bytes) and an all-zero one.
    REQUIRE(nnls({1, 1e8, 0, 1, 2e8, 0, 1, 4e8, 0}, 3, 3, {3, 5, 9}, &x).is_ok());
    CHECK(x[0] == Approx(1.0).epsilon(1e-9));
    CHECK(x[1] == Approx(2e-8).epsilon(1e-9));
    CHECK(x[2] == 0);
    CHECK_FALSE(nnls({1, 2}, 3, 2, {1, 2, 3}, &x).is_ok());
}

TEST_CASE("benchmark plans cost what the papers say", "[fit]") {
    const ModelParams p = truth();
    const Plan pp = exchange_plan();
    const size_t n = 1 << 20;
    // A full-duplex swap: α + nβ; w = 2 < w_t, no incast.
    CHECK(predict(pp, n, 1, p, RankMap{{0, 0}, nullptr, nullptr}).seconds ==
          Approx(p.intra.alpha + n * p.intra.beta).epsilon(1e-12));
    CHECK(predict(pp, n, 1, p, RankMap{{0, 1}, nullptr, nullptr}).seconds ==
          Approx(p.inter.alpha + n * p.inter.beta).epsilon(1e-12));
    // Eq. (5): T(k) = (k+1)Sδ + (k−1)Sγ.
    for (int k = 2; k <= 9; ++k) {
        const Prediction pr = predict(local_reduce_plan(k), n, 4, p);
        REQUIRE(pr.status.is_ok());
        const double S = 4.0 * n;
        CHECK(pr.seconds == Approx((k + 1) * S * p.host.delta + (k - 1) * S * p.host.gamma)
                                .epsilon(1e-12));
    }
}

TEST_CASE("fit recovers exact parameters from noise-free data", "[fit]") {
    const ModelParams want = truth();
    const std::vector<Measurement> data = synthetic(want, 0.0, true);
    FitResult r;
    const Status st = fit_model(data, FitOptions{}, &r);
    INFO(st.message());
    REQUIRE(st.is_ok());
    std::cout << "noise-free fit (" << data.size() << " measurements):\n"
              << format_fit_report(data, r);
    check_recovered(r.params, want, 1e-6, 1e-6);
    CHECK(r.unidentified.empty());
    CHECK_FALSE(r.intra_copied);
    CHECK_FALSE(r.inter_copied);
    // Every 4th measurement of each kind is held out.
    std::map<std::string, size_t> per_kind;
    for (const Measurement& m : data) ++per_kind[m.kind];
    size_t expect_held = 0;
    for (const auto& kv : per_kind) expect_held += kv.second / 4;
    CHECK(r.held_out.points == expect_held);
    CHECK(r.fit.points == data.size() - expect_held);
    CHECK(r.held_out.max_rel < 1e-6);
}

TEST_CASE("fit recovers parameters from data with 2% noise", "[fit]") {
    const ModelParams want = truth();
    const std::vector<Measurement> data = synthetic(want, 0.02, true);
    FitResult r;
    REQUIRE(fit_model(data, FitOptions{}, &r).is_ok());
    std::cout << "fit with ±2% noise:\n" << format_fit_report(data, r);
    check_recovered(r.params, want, 0.05, 0.25);
    // Predictions on points the fit never saw are as good as the noise.
    CHECK(r.held_out.points > 20);
    CHECK(r.held_out.mean_rel < 0.02);
    CHECK(r.held_out.max_rel < 0.05);
    CHECK(r.fit.mean_rel < 0.02);
}

TEST_CASE("one node: the inter class is unidentified and copied from intra", "[fit]") {
    const ModelParams want = truth();
    const std::vector<Measurement> data = synthetic(want, 0.0, false);
    FitResult r;
    REQUIRE(fit_model(data, FitOptions{}, &r).is_ok());
    CHECK(r.inter_copied);
    CHECK_FALSE(r.intra_copied);
    CHECK(r.unidentified == std::vector<std::string>{"alpha_inter", "beta_inter", "epsilon_inter",
                                                     "alpha_msg_inter", "alpha_shift_inter"});
    CHECK(rel_close(r.params.intra.beta, want.intra.beta, 1e-6));
    CHECK(r.params.inter.beta == r.params.intra.beta);
    CHECK(r.params.inter.w_t == r.params.intra.w_t);
}

TEST_CASE("no incast in the data: epsilon 0 and w_t at the largest degree seen", "[fit]") {
    ModelParams want = truth();
    want.intra.epsilon = 0;
    want.inter.epsilon = 0;
    const std::vector<Measurement> data = synthetic(want, 0.0, true);
    FitResult r;
    REQUIRE(fit_model(data, FitOptions{}, &r).is_ok());
    CHECK(r.params.intra.epsilon == 0);
    CHECK(r.params.inter.epsilon == 0);
    CHECK(r.params.intra.w_t == 12);  // cps up to x = 12: degree 12
    CHECK(rel_close(r.params.host.delta, want.host.delta, 1e-6));
}

TEST_CASE("robust fit: a few measurements slowed down by other processes", "[fit]") {
    // Every 9th fitted measurement 3x to 20x too slow, as when another job
    // takes the core: the plain fit is pulled off, the robust one is not,
    // and flags them.
    const ModelParams want = truth();
    std::vector<Measurement> data = synthetic(want, 0.01, true);
    size_t planted = 0;
    for (size_t i = 0; i < data.size(); i += 9) {
        data[i].seconds *= 3.0 + static_cast<double>(i % 17);
        data[i].role = Measurement::Role::Fit;
        ++planted;
    }
    FitOptions plain;
    plain.robust = false;
    FitResult a, r;
    REQUIRE(fit_model(data, plain, &a).is_ok());
    REQUIRE(fit_model(data, FitOptions{}, &r).is_ok());
    std::cout << "plain fit with " << planted << " outliers:\n"
              << format_fit_report(data, a) << "robust fit:\n"
              << format_fit_report(data, r);
    check_recovered(r.params, want, 0.05, 0.25);
    CHECK(r.outliers.size() >= planted);
    CHECK(r.outliers.size() <= planted + 3);
    for (size_t i = 0; i < data.size(); i += 9)
        CHECK(std::find(r.outliers.begin(), r.outliers.end(), i) != r.outliers.end());
    // Held-out points are clean here: the robust fit predicts them well,
    // the plain one does not.
    CHECK(r.held_out.median_rel < 0.02);
    CHECK(a.held_out.median_rel > 2 * r.held_out.median_rel);
}

TEST_CASE("fit input errors", "[fit]") {
    FitResult r;
    CHECK_FALSE(fit_model({}, FitOptions{}, &r).is_ok());
    Measurement m;
    m.kind = "p2p";
    m.plan = std::make_shared<Plan>(exchange_plan());
    m.count = 8;
    m.seconds = 0;
    CHECK_FALSE(fit_model({m}, FitOptions{}, &r).is_ok());  // no time
    m.seconds = 1e-6;
    m.role = Measurement::Role::HeldOut;
    const Status st = fit_model({m}, FitOptions{}, &r);
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find("held out") != std::string::npos);
}

// A switch tree written to a temporary topology.conf and overlay, six
// hosts h0..h5 placed on it one rank each; the files go with it.
struct TreeOnDisk {
    std::string dir, conf, overlay;
    std::shared_ptr<const TopologyView> view;
    std::shared_ptr<const SwitchTree> tree;
    std::vector<int> node;
    TreeOnDisk(const std::string& conf_text, const std::string& overlay_text) {
        char d[] = "/tmp/genx-fit-XXXXXX";
        REQUIRE(mkdtemp(d) != nullptr);
        dir = d;
        conf = dir + "/topology.conf";
        overlay = dir + "/o.json";
        std::ofstream(conf) << conf_text;
        std::ofstream(overlay) << overlay_text;
        const std::vector<std::string> hosts = {"h0", "h1", "h2", "h3", "h4", "h5"};
        REQUIRE(place_ranks(conf, overlay, hosts, &view).is_ok());
        tree = switch_tree(*view);
        REQUIRE(tree);
        node = view->host_of_rank();
    }
    ~TreeOnDisk() {
        std::remove(overlay.c_str());
        std::remove(conf.c_str());
        rmdir(dir.c_str());
    }
    // A p2p-route measurement from h0 to `peer` of `bytes`, timed by `truth`.
    Measurement route(const std::shared_ptr<const Plan>& pp, int peer, size_t bytes, const ModelParams& truth) const {
        Measurement m;
        m.kind = "p2p-route";
        m.label = "to h" + std::to_string(peer);
        m.plan = pp;
        m.ranks.node = {node[0], node[static_cast<size_t>(peer)]};
        m.ranks.tree = tree;
        m.count = bytes;
        m.elem_size = 1;
        const Prediction pr = predict(*pp, bytes, 1, truth, m.ranks);
        REQUIRE(pr.status.is_ok());
        m.seconds = pr.seconds;
        return m;
    }
};

TEST_CASE("switch-tree classes fitted from exchanges across them", "[fit]") {
    // Two datacenters: dc-a over leaves a0, a1 and, across a slow "xdc"
    // link, dc-b over b0; two hosts per leaf; the leaves' uplinks are the
    // class "up".
    const TreeOnDisk t("SwitchName=a0 Nodes=h[0-1]\nSwitchName=a1 Nodes=h[2-3]\nSwitchName=b0 Nodes=h[4-5]\n"
                       "SwitchName=dc-b Switches=b0\nSwitchName=dc-a Switches=a[0-1],dc-b\n",
                       R"({"version": 1, "levels": {"1": {"rate": "1 Gbit/s", "latency": "1 us"}},
                 "switches": {"a[0-1],b0": {"rate": "1 Gbit/s", "latency": "2 us", "class": "up"},
                              "dc-b": {"rate": "100 Mbit/s", "latency": "1 ms", "cross_dc": true, "class": "xdc"}}})");

    // The truth: a NIC of 1 Gbit/s; uplinks 30 µs a link, as fast as the
    // NIC; the cross-DC link 2 ms and 12.5 MB/s.
    ModelParams host = truth();
    host.inter.beta = 8e-9;
    ModelParams want = host;
    want.classes["up"] = LinkParams{3e-5, 8e-9};
    want.classes["xdc"] = LinkParams{2e-3, 8e-8};
    auto pp = std::make_shared<Plan>(exchange_plan());
    std::vector<Measurement> routes;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (double amp : {0.0, 0.02}) {
        CAPTURE(amp);
        routes.clear();
        // From h0: h2 (up a0, down a1: two "up" links) and h4 (up a0, down
        // dc-b then b0: two "up" and one xdc).
        for (int peer : {2, 4})
            for (size_t bytes = 8; bytes <= (size_t{4} << 20); bytes *= 4) {
                Measurement m = t.route(pp, peer, bytes, want);
                m.seconds *= 1 + amp * u(rng);
                routes.push_back(m);
            }
        ModelParams got;
        std::vector<ClassFit> rows;
        REQUIRE(fit_link_classes(routes, host, &got, &rows).is_ok());
        std::string names;
        for (const ClassFit& c : rows) names += c.name + "(" + c.note + ") ";
        INFO(names);
        REQUIRE(rows.size() == 2);
        const double tol = amp == 0 ? 1e-6 : 0.1;
        // "up" first (the route crossing it alone), then xdc above it.
        CHECK(rows[0].name == "up");
        CHECK_FALSE(rows[0].beta_measured);  // as fast as the NIC
        CHECK(rel_close(got.classes.at("up").alpha, 3e-5, amp == 0 ? 1e-6 : 0.5));
        CHECK(got.classes.at("up").beta == Approx(8e-9));  // the declared rate's, as the NIC's
        CHECK(rows[1].name == "xdc");
        CHECK(rows[1].beta_measured);
        CHECK(rel_close(got.classes.at("xdc").alpha, 2e-3, tol));
        CHECK(rel_close(got.classes.at("xdc").beta, 8e-8, tol));
        // The fitted model predicts the routes it was fitted on.
        for (const Measurement& m : routes)
            CHECK(rel_close(predict(*pp, m.count, 1, got, m.ranks).seconds, m.seconds, 2 * amp + 1e-6));
        // The hosts' own classes are untouched.
        CHECK(got.inter.alpha == host.inter.alpha);
        CHECK(got.inter.beta == host.inter.beta);
    }
    // A route whose only crossing is of two unfitted classes fits nothing;
    // a route without a tree is an error.
    std::vector<Measurement> only_far;
    for (const Measurement& m : routes)
        if (m.label == "to h4") only_far.push_back(m);
    ModelParams got;
    std::vector<ClassFit> rows;
    REQUIRE(fit_link_classes(only_far, host, &got, &rows).is_ok());
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].note.find("not fitted") == 0);
    CHECK(got.classes.empty());
    only_far[0].ranks.tree.reset();
    CHECK(fit_link_classes(only_far, host, &got, &rows).message().find("has no switch tree") !=
          std::string::npos);
}

TEST_CASE("a class no route group can fit is reported once", "[fit]") {
    // The tree genx-tune's probe wrote on 2dc (two leaves under one
    // datacenter's switch, none seen under the other's), one class per
    // switch: from h0, h1 crosses {s3, s4} and h4 {s3, s1, s2}; neither
    // route isolates a class, and s3 is in both.
    const TreeOnDisk t("SwitchName=root Switches=s1,s2\nSwitchName=s1 Switches=s3,s4\nSwitchName=s2 Nodes=h[4-5]\n"
                       "SwitchName=s3 Nodes=h0,h2\nSwitchName=s4 Nodes=h1,h3\n",
                       R"({"version": 1, "levels": {"1": {"rate": "1 Gbit/s", "latency": "1 us"}},
                 "switches": {"s1": {"rate": "100 Mbit/s", "latency": "1 ms"},
                              "s2": {"rate": "100 Mbit/s", "latency": "1 ms"},
                              "s3": {"rate": "1 Gbit/s", "latency": "5 us"},
                              "s4": {"rate": "1 Gbit/s", "latency": "5 us"}}})");
    ModelParams host = truth();
    host.inter.beta = 8e-9;
    auto pp = std::make_shared<Plan>(exchange_plan());
    std::vector<Measurement> routes;
    for (int peer : {1, 4})
        for (size_t bytes = 8; bytes <= (size_t{1} << 20); bytes *= 16) routes.push_back(t.route(pp, peer, bytes, host));
    ModelParams got;
    std::vector<ClassFit> rows;
    REQUIRE(fit_link_classes(routes, host, &got, &rows).is_ok());
    std::map<std::string, int> seen;
    for (const ClassFit& c : rows) {
        ++seen[c.name];
        CHECK(c.note.find("not fitted") == 0);
    }
    CHECK(seen == std::map<std::string, int>{{"s1", 1}, {"s2", 1}, {"s3", 1}, {"s4", 1}});
    CHECK(got.classes.empty());
}
