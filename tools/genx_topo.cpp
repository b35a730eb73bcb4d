// genx-topo: what genx sees of the machine and the network.
//
//   genx-topo topology.conf [--overlay links.json]   the switch tree, as text
//   genx-topo --check topology.conf [--overlay ...]  validate; exit 1 if bad
//   genx-topo FILE --json | --svg out.svg             JSON on stdout / drawing
//   genx-topo FILE --ranks 'node[01-04],node01'       ranks placed on hosts
//                                       (rank r on the r-th name), as the
//                                       component places a communicator
//   genx-topo                                         this host: hwloc
//                                       (packages, NUMA, cores, NICs, GPUs),
//                                       NIC rates from sysfs and libfabric
//   genx-topo --sysfs-root DIR --hwloc-xml FILE --binding 2-3 --no-libfabric
//                                       the same from fixtures (tests)
//   mpirun --map-by node genx-topo --probe [--out FILE] [--overlay-out JSON]
//                                       measure the hosts of the job and write
//                                       a topology.conf (and overlay) to review
//
// Why a tool: a topology file is written by hand and read by every rank of
// every job; a mistake should be found once, by its author, with the file
// and line, not by a job falling back.  And "what does genx think this
// host has" must be answerable without running MPI.
//
// Exit status: 0 success, 1 the topology (file, overlay, discovery or rank
// placement) is invalid, 2 bad command line.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "topology/hwloc_host.hpp"
#include "topology/nic_rates.hpp"
#include "topology/graph.hpp"
#include "topology/slurm_topology.hpp"
#include "tune/net_probe.hpp"
#include "topology/topology.hpp"

namespace {

using namespace genx;

struct Options {
    std::string file;
    std::string check_file;
    std::string overlay;
    bool json = false;
    std::string svg_file;
    std::string ranks;
    std::string sysfs_root = "/sys";
    std::string hwloc_xml;
    std::string binding;
    std::string host_name;
    bool no_libfabric = false;
    bool ucx = false;
    bool probe = false;
    tune::ProbeArgs probe_args;
};

int bad_input(const std::string& m) {
    std::cerr << "genx-topo: " << m << "\n";
    return 2;
}

int invalid(const std::string& m) {
    std::cerr << "genx-topo: " << m << "\n";
    return 1;
}

int print(const Topology& t, const Options& o) {
    if (!o.svg_file.empty()) {
        std::ofstream out(o.svg_file);
        if (!out) return invalid(o.svg_file + ": cannot be written");
        out << t.to_svg();
    }
    if (o.json)
        std::cout << t.to_json();
    else if (o.svg_file.empty())
        std::cout << t.to_text();
    return 0;
}

int from_file(const Options& o) {
    const std::string& file = o.check_file.empty() ? o.file : o.check_file;
    Topology t;
    if (Status s = load_network(file, o.overlay, &t); !s) return invalid(s.message());
    if (!o.ranks.empty()) {
        std::vector<std::string> hosts;
        if (Status s = expand_hostlist(o.ranks, &hosts); !s)
            return bad_input("--ranks: " + s.message());
        if (Status s = t.map_ranks(hosts); !s) return invalid("--ranks: " + s.message());
        TopologyView v;
        if (Status s = to_view(t, hosts, &v); !s) return invalid("--ranks: " + s.message());
    }
    if (!o.check_file.empty()) {
        int switches = 0, hosts = 0, unknown = 0;
        for (const Node& n : t.nodes) {
            switches += n.kind == TopoKind::Switch;
            hosts += n.kind == TopoKind::Host;
        }
        for (const LinkClass& c : t.classes) unknown += c.rate <= 0;
        char fp[32];
        std::snprintf(fp, sizeof fp, "0x%016llx", static_cast<unsigned long long>(network_view(t).fingerprint()));
        std::cout << "ok: " << file << (o.overlay.empty() ? "" : " with " + o.overlay) << ": "
                  << switches << " switch(es), " << hosts << " host(s), " << t.nodes[0].level
                  << " level(s), " << t.classes.size() << " link class(es)";
        if (unknown > 0) std::cout << " (" << unknown << " without a rate)";
        std::cout << ", fingerprint " << fp << "\n";
        for (const std::string& n : t.notes) std::cout << "note: " << n << "\n";
        return 0;
    }
    return print(t, o);
}

int this_host(const Options& o) {
    std::vector<std::vector<NicInfo>> lists;
    std::vector<std::string> notes;
    // Each source in order (nic_rates.hpp says why this order); one that
    // fails is said and the others still count.
    auto ask = [&](NicRateSource& source) {
        std::vector<NicInfo> l;
        if (Status s = source.list(&l); !s)
            notes.push_back(source.name() + ": " + s.message());
        else
            lists.push_back(l);
    };
    SysfsNicSource sysfs(o.sysfs_root);
    ask(sysfs);
    if (!o.no_libfabric) {
        LibfabricNicSource fab;
        ask(fab);
    }
    if (o.ucx) {
        UcxNicSource ucx;
        ask(ucx);
        for (const std::string& n : ucx.notes()) notes.push_back("ucx: not opened: " + n);
    }
    const std::vector<NicInfo> nics = merge_nic_rates(lists, &notes);
    HostHardware hw;
    if (Status s = HwlocHostSource(o.hwloc_xml, o.binding).load(&hw); !s)
        return invalid("hwloc: " + s.message());
    Topology t;
    const int host =
        t.add_node(TopoKind::Host, o.host_name.empty() ? local_host_name() : o.host_name, -1);
    if (Status s = add_host_hardware(&t, host, hw, nics, 0); !s) return invalid(s.message());
    t.notes.push_back("binding of this process (rank 0 here): " + hw.binding);
    for (const std::string& n : notes) t.notes.push_back(n);
    t.notes.push_back("no switch tree: give a topology.conf (genx-topo FILE)");
    return print(t, o);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"genx-topo: print and check what genx sees of the machine and the network"};
    Options o;
    app.add_option("file", o.file,
                   "a topology.conf, graph file or preset; without it, this host");
    app.add_option("--check", o.check_file,
                   "validate this topology.conf, graph file or preset; exit 1 if invalid");
    app.add_option("--overlay", o.overlay,
                   "a JSON overlay with link rates and latencies (docs/topology.md)");
    app.add_flag("--json", o.json, "print the topology as JSON");
    app.add_option("--svg", o.svg_file, "draw the switch tree and hosts as SVG into FILE");
    app.add_option("--ranks", o.ranks,
                   "place ranks 0, 1, ... on the hosts of this hostlist");
    app.add_option("--sysfs-root", o.sysfs_root,
                   "read NIC rates from DIR/class/... instead of /sys")
        ->capture_default_str();
    app.add_option("--hwloc-xml", o.hwloc_xml,
                   "read the host from this hwloc XML instead of this machine");
    app.add_option("--binding", o.binding,
                   "the process's cpus (a list like 0-3,8) instead of asking hwloc");
    app.add_option("--host-name", o.host_name,
                   "name of this host (default: SLURMD_NODENAME, else the hostname)");
    app.add_flag("--no-libfabric", o.no_libfabric, "do not ask libfabric for NIC rates");
    app.add_flag("--ucx", o.ucx,
                 "also ask UCX for NIC rates (after sysfs and libfabric)");
    app.add_flag("--probe", o.probe,
                 "under mpirun: measure the network and print a topology.conf");
    app.add_option("--out", o.probe_args.out, "with --probe: write the topology.conf here");
    app.add_option("--overlay-out", o.probe_args.overlay_out,
                   "with --probe: write the measured rates and latencies as an overlay");
    app.add_option("--pings", o.probe_args.pings,
                   "with --probe: ping-pongs per host pair (the minimum is kept)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    }
    if (o.probe) {
        if (!o.file.empty() || !o.check_file.empty() || o.json || !o.svg_file.empty() ||
            !o.overlay.empty() || !o.ranks.empty())
            return bad_input("--probe measures the network; it takes no topology file and prints "
                             "a topology.conf (--out, --overlay-out)");
        if (!o.hwloc_xml.empty() || !o.binding.empty() || o.sysfs_root != "/sys" ||
            o.no_libfabric || o.ucx || !o.host_name.empty())
            return bad_input("--probe measures between hosts; --sysfs-root, --hwloc-xml, "
                             "--binding, --host-name, --no-libfabric and --ucx describe this host");
        return tune::run_probe(o.probe_args);
    }
    if (!o.probe_args.out.empty() || !o.probe_args.overlay_out.empty() || app.count("--pings") > 0)
        return bad_input("--out, --overlay-out and --pings need --probe");
    if (!o.check_file.empty() && !o.file.empty())
        return bad_input("give the file either with --check or alone");
    const bool file_mode = !o.file.empty() || !o.check_file.empty();
    if (!file_mode && (!o.overlay.empty() || !o.ranks.empty()))
        return bad_input("--overlay and --ranks need a topology.conf");
    if (file_mode && (!o.hwloc_xml.empty() || !o.binding.empty() || o.sysfs_root != "/sys" ||
                      o.no_libfabric || o.ucx || !o.host_name.empty()))
        return bad_input(
            "--sysfs-root, --hwloc-xml, --binding, --host-name, --no-libfabric and --ucx describe this "
            "host; they do not apply to a topology.conf");
    if (!o.check_file.empty() && (o.json || !o.svg_file.empty()))
        return bad_input("--check prints no tree");
    return file_mode ? from_file(o) : this_host(o);
}
