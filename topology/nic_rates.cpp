// NIC rate sources (sysfs, libfabric) and their merge; why these sources
// and in this order: nic_rates.hpp.
#include "topology/nic_rates.hpp"

#include <dirent.h>
#include <rdma/fabric.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/text_util.hpp"
#include "topology/topology.hpp"

namespace genx {

namespace {

std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// First line of a small sysfs file; false when it cannot be read (sysfs
// returns EINVAL on read for `speed` of a device without link settings).
bool read_line(const std::string& path, std::string* out) {
    std::ifstream in(path);
    if (!in) return false;
    std::string line;
    if (!std::getline(in, line)) return false;
    *out = trim(line);
    return true;
}

bool is_pci_busid(const std::string& s) {  // dddd:bb:dd.f
    return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

// The PCI bus id of a sysfs `device` (a link to the device's directory):
// its uevent's PCI_SLOT_NAME, which every PCI device's directory has, else
// the last component of the link's target.  "" for a non-PCI device.
std::string pci_of(const std::string& device) {
    std::ifstream uevent(device + "/uevent");
    for (std::string line; std::getline(uevent, line);) {
        const std::string key = "PCI_SLOT_NAME=";
        if (line.compare(0, key.size(), key) == 0) {
            const std::string id = trim(line.substr(key.size()));
            if (is_pci_busid(id)) return id;
        }
    }
    char buf[4096];
    const ssize_t n = readlink(device.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return "";
    buf[n] = 0;
    std::string target(buf);
    const size_t slash = target.find_last_of('/');
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    return is_pci_busid(base) ? base : "";
}

}  // namespace

Status parse_ib_rate(const std::string& text, double* out) {
    // "<number> Gb/sec (<width>X <speed>)"; the kernel prints Gb/sec only.
    std::istringstream in(text);
    double v = 0;
    std::string unit;
    if (!(in >> v >> unit) || v < 0 || !std::isfinite(v))
        return Status::parse_error("InfiniBand rate '" + text +
                                   "' does not start with a number and a unit");
    if (unit == "Gb/sec")
        *out = v * 1e9 / 8;
    else if (unit == "Mb/sec")
        *out = v * 1e6 / 8;
    else
        return Status::parse_error("InfiniBand rate '" + text + "' has an unknown unit '" + unit +
                                   "'");
    return Status::ok();
}

Status SysfsNicSource::list(std::vector<NicInfo>* out) {
    out->clear();
    const std::string net = root_ + "/class/net";
    for (const std::string& ifname : list_dir(net)) {
        const std::string dir = net + "/" + ifname;
        std::string type;
        if (read_line(dir + "/type", &type) && type == "772") continue;  // loopback
        NicInfo n;
        n.name = ifname;
        n.kind = "network";
        n.source = "sysfs";
        n.pci_busid = pci_of(dir + "/device");
        std::string speed;
        if (!read_line(dir + "/speed", &speed)) {
            n.detail = "speed unreadable (no link settings)";
        } else {
            char* end = nullptr;
            const long mbps = std::strtol(speed.c_str(), &end, 10);
            if (end == speed.c_str() || *end != 0)
                n.detail = "speed '" + speed + "' is not a number";
            else if (mbps <= 0)
                n.detail = "speed " + speed + " (unknown or link down)";
            else {
                n.rate = static_cast<double>(mbps) * 1e6 / 8;
                n.detail = "speed " + speed + " Mb/s";
            }
        }
        out->push_back(n);
    }
    const std::string ib = root_ + "/class/infiniband";
    for (const std::string& hca : list_dir(ib)) {
        const std::string busid = pci_of(ib + "/" + hca + "/device");
        for (const std::string& port : list_dir(ib + "/" + hca + "/ports")) {
            const std::string dir = ib + "/" + hca + "/ports/" + port;
            NicInfo n;
            n.name = hca;
            n.port = std::atoi(port.c_str());
            n.kind = "openfabrics";
            n.source = "sysfs";
            n.pci_busid = busid;
            std::string rate, state;
            read_line(dir + "/state", &state);
            if (!read_line(dir + "/rate", &rate)) {
                n.detail = "rate unreadable";
            } else {
                const Status s = parse_ib_rate(rate, &n.rate);
                n.detail = s.is_ok() ? "rate " + rate : s.message();
                if (!s.is_ok()) n.rate = 0;
            }
            // An inactive port reports its last or lowest rate: not a rate
            // the port carries now.
            if (!state.empty() && state.find("ACTIVE") == std::string::npos) {
                n.detail += ", state " + state + " (rate not used)";
                n.rate = 0;
            }
            out->push_back(n);
        }
    }
    return Status::ok();
}

NicInfo nic_from_fi_info(const struct fi_info* info) {
    NicInfo n;
    n.source = "libfabric";
    const std::string prov =
        info->fabric_attr && info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?";
    if (info->domain_attr && info->domain_attr->name) n.name = info->domain_attr->name;
    n.kind = "openfabrics";
    if (!info->nic) {
        n.detail = "provider " + prov + " gives no NIC attributes (rate unknown)";
        return n;
    }
    if (info->nic->device_attr && info->nic->device_attr->name)
        n.name = info->nic->device_attr->name;
    if (info->nic->bus_attr && info->nic->bus_attr->bus_type == FI_BUS_PCI) {
        const auto& p = info->nic->bus_attr->attr.pci;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", p.domain_id, p.bus_id, p.device_id,
                      p.function_id);
        n.pci_busid = buf;
    }
    if (info->nic->link_attr && info->nic->link_attr->speed > 0) {
        n.rate = static_cast<double>(info->nic->link_attr->speed) / 8;
        n.detail = "provider " + prov + ", link speed " +
                   std::to_string(info->nic->link_attr->speed) + " bit/s";
        if (info->nic->link_attr->state == FI_LINK_DOWN) {
            n.detail += ", link down (rate not used)";
            n.rate = 0;
        }
    } else {
        n.detail = "provider " + prov + " gives no link speed (rate unknown)";
    }
    return n;
}

std::vector<NicInfo> nics_from_fi_info_list(const struct fi_info* head) {
    std::vector<NicInfo> out;
    std::set<std::pair<std::string, std::string>> seen;  // (provider, name)
    for (const struct fi_info* i = head; i; i = i->next) {
        const std::string prov =
            i->fabric_attr && i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "";
        if (prov.find(';') != std::string::npos || prov == "shm" || prov == "sm2") continue;
        NicInfo n = nic_from_fi_info(i);
        if (n.name.empty() || n.name == "lo" || !seen.insert({prov, n.name}).second) continue;
        out.push_back(n);
    }
    return out;
}

Status LibfabricNicSource::list(std::vector<NicInfo>* out) {
    out->clear();
    struct fi_info* info = nullptr;
    const int rc = fi_getinfo(FI_VERSION(1, 5), nullptr, nullptr, 0, nullptr, &info);
    if (rc != 0) {
        if (rc == -FI_ENODATA) return Status::ok();  // no provider: nothing to report
        return Status::io_error(std::string("fi_getinfo failed: ") + fi_strerror(-rc));
    }
    *out = nics_from_fi_info_list(info);
    fi_freeinfo(info);
    return Status::ok();
}

bool split_uct_device(const std::string& dev_name, std::string* name, int* port) {
    const size_t colon = dev_name.rfind(':');
    if (colon != std::string::npos && colon + 1 < dev_name.size() &&
        dev_name.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
        *name = dev_name.substr(0, colon);
        *port = std::atoi(dev_name.c_str() + colon + 1);
        return true;
    }
    *name = dev_name;
    *port = 0;
    return false;
}

std::vector<NicInfo> nics_from_uct(const std::vector<UctIfaceFacts>& ifaces) {
    std::vector<NicInfo> out;
    std::vector<std::vector<std::string>> said;  // per NIC: each transport's figures
    for (const UctIfaceFacts& f : ifaces) {
        if (!f.network || f.dev_name.empty()) continue;
        NicInfo n;
        n.source = "ucx";
        n.kind = split_uct_device(f.dev_name, &n.name, &n.port) ? "openfabrics" : "network";
        n.pci_busid = is_pci_busid(f.pci_busid) ? f.pci_busid : "";
        const double rate = f.dedicated + f.shared;
        n.rate = std::isfinite(rate) && rate > 0 ? rate : 0;
        std::ostringstream fig;
        fig << f.tl_name << ": " << (n.rate > 0 ? format_rate(n.rate) : std::string("no bandwidth"));
        if (f.latency > 0 && std::isfinite(f.latency)) fig << ", latency " << f.latency * 1e6 << " us";
        size_t i = 0;
        while (i < out.size() && !(out[i].name == n.name && out[i].port == n.port)) ++i;
        if (i == out.size()) {
            out.push_back(n);
            said.push_back({fig.str()});
            continue;
        }
        said[i].push_back(fig.str());
        if (n.rate > out[i].rate) {
            n.pci_busid = n.pci_busid.empty() ? out[i].pci_busid : n.pci_busid;
            out[i] = n;
        } else if (out[i].pci_busid.empty()) {
            out[i].pci_busid = n.pci_busid;
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        std::string all;
        for (const std::string& f : said[i]) all += (all.empty() ? "" : "; ") + f;
        out[i].detail = "UCT's bandwidth model, not a measurement (" + all + ")";
    }
    return out;
}

std::vector<NicInfo> merge_nic_rates(const std::vector<std::vector<NicInfo>>& by_source,
                                     std::vector<std::string>* notes) {
    std::vector<NicInfo> out;
    // Sources' entries for each merged NIC, in source order.
    std::vector<std::vector<NicInfo>> seen_by;
    auto matches = [](const NicInfo& a, const NicInfo& b) {
        if (a.name != b.name) return false;
        return a.port == b.port || (a.port <= 1 && b.port <= 1);
    };
    for (const auto& list : by_source)
        for (const NicInfo& n : list) {
            size_t i = 0;
            while (i < out.size() && !matches(out[i], n)) ++i;
            if (i == out.size()) {
                out.push_back(n);
                seen_by.push_back({n});
                continue;
            }
            seen_by[i].push_back(n);
            if (out[i].rate <= 0 && n.rate > 0) {
                const std::string keep_bus = out[i].pci_busid;
                const std::string keep_kind = out[i].kind;
                const int keep_port = std::max(out[i].port, n.port);
                out[i] = n;
                out[i].port = keep_port;
                out[i].kind = keep_kind;
                if (out[i].pci_busid.empty()) out[i].pci_busid = keep_bus;
            } else if (out[i].pci_busid.empty()) {
                out[i].pci_busid = n.pci_busid;
            }
        }
    for (size_t i = 0; i < out.size(); ++i) {
        const std::string who =
            out[i].name + (out[i].port > 0 ? " port " + std::to_string(out[i].port) : "");
        if (out[i].rate <= 0) {
            std::vector<std::string> why;
            for (const NicInfo& n : seen_by[i]) why.push_back(n.source + ": " + n.detail);
            notes->push_back(who + ": no source gives a rate (" + join(why) + ")");
            continue;
        }
        if (out[i].source == "ucx")
            notes->push_back(who + ": only UCX gives a rate, " + format_rate(out[i].rate) + ": " +
                             out[i].detail);
        for (const NicInfo& n : seen_by[i]) {
            if (n.rate <= 0 || n.source == out[i].source) continue;
            if (std::fabs(n.rate - out[i].rate) > 0.01 * out[i].rate)
                notes->push_back(who + ": " + out[i].source + " says " + format_rate(out[i].rate) +
                                 ", " + n.source + " says " + format_rate(n.rate) + "; genx uses " +
                                 out[i].source + "'s");
        }
    }
    return out;
}

}  // namespace genx
