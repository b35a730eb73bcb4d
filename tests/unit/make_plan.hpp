// Test helper: a plan from the registry, failing the test (with the
// generator's message) when generation fails.  A family that reads the
// topology (GeneratorInfo::uses_topology) gets the plainest view: one
// switch with P hosts of one rank each; ring2d without params (it needs a
// grid or dims=XxY) a torus of the squarest X x Y = P, one rank per host.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "plan/topology_view.hpp"
#include "topology/graph.hpp"
#include "topology/topology.hpp"

inline genx::TopologyView one_switch_view(int P) {
    genx::TopologyView v;
    v.link_classes = {{"leaf", 1.25e9, 5e-6, false}};
    v.nodes.resize(static_cast<size_t>(P) + 1);
    v.nodes[0].name = "sw";
    for (int r = 0; r < P; ++r) {
        genx::TopoNode& h = v.nodes[static_cast<size_t>(r) + 1];
        h.name = "h" + std::to_string(r);
        h.parent = 0;
        h.up_class = 0;
        h.ranks = {r};
        v.nodes[0].children.push_back(r + 1);
    }
    return v;
}

// torus:XxY with X >= Y the squarest factorisation of P, rank r on host nr.
inline genx::TopologyView torus_view(int P) {
    int Y = 1;
    for (int d = 1; d * d <= P; ++d)
        if (P % d == 0) Y = d;
    genx::Topology topo;
    REQUIRE(genx::topology_preset("torus:" + std::to_string(P / Y) + "x" + std::to_string(Y), &topo).is_ok());
    std::vector<std::string> hosts;
    for (int r = 0; r < P; ++r) hosts.push_back("n" + std::to_string(r));
    genx::TopologyView v;
    REQUIRE(genx::to_view(topo, hosts, &v).is_ok());
    return v;
}

inline genx::Plan make_plan(const std::string& name, int P, const std::string& params = "") {
    genx::ParamMap pm;
    REQUIRE(genx::parse_params(params, &pm).is_ok());
    genx::Plan plan;
    const genx::GeneratorInfo* info = genx::find_generator(name);
    const genx::TopologyView view = name == "ring2d" && params.empty() ? torus_view(P) : one_switch_view(P);
    const genx::Status st = genx::generate(
        name, P, pm, info != nullptr && info->uses_topology ? &view : nullptr, &plan);
    INFO(name << " P=" << P << " params='" << params << "': " << st.message());
    REQUIRE(st.is_ok());
    return plan;
}
