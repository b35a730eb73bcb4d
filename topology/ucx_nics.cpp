// UcxNicSource: UCT's interfaces and what each says of its bandwidth
// (nic_rates.hpp says why this source is opt-in and last).  Walks the
// components, memory domains and transports as `ucx_info -d` does, opens
// each network interface on a private worker, copies its attributes into
// UctIfaceFacts and leaves the conversion to nics_from_uct (tested without
// UCX).  Linked into genx-topo only.
#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>
#include <ucs/config/global_opts.h>
#include <ucs/sys/topo/base/topo.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "topology/nic_rates.hpp"

namespace genx {

namespace {

std::string ucs_error(const char* what, ucs_status_t s) {
    return std::string(what) + " failed: " + ucs_status_string(s);
}

// Whether `dev` is a loopback interface (UCX's tcp transport lists "lo";
// the sysfs source skips loopback devices too).
bool is_loopback(const char* dev) {
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return false;
    ifreq req{};
    const size_t n = strnlen(dev, IFNAMSIZ);
    if (n == IFNAMSIZ) {  // longer than any interface name
        close(fd);
        return false;
    }
    std::memcpy(req.ifr_name, dev, n);
    const bool loop = ioctl(fd, SIOCGIFFLAGS, &req) == 0 && (req.ifr_flags & IFF_LOOPBACK) != 0;
    close(fd);
    return loop;
}

// A transport UCT listed but could not open or query: its device and why.
struct Skipped {
    std::string dev_name;  // "" when the whole memory domain failed
    std::string why;
};

// The network interfaces of one memory domain, each opened and queried.
// A transport that cannot be opened (no permission, no link) is skipped and
// said in `skipped`.
void query_md(uct_component_h component, const char* md_name, uct_worker_h worker,
              std::vector<UctIfaceFacts>* out, std::vector<Skipped>* skipped) {
    uct_md_config_t* md_config = nullptr;
    if (uct_md_config_read(component, nullptr, nullptr, &md_config) != UCS_OK) {
        skipped->push_back({"", std::string(md_name) + ": configuration not readable"});
        return;
    }
    uct_md_h md = nullptr;
    const ucs_status_t opened = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (opened != UCS_OK) {
        skipped->push_back({"", std::string(md_name) + ": " + ucs_status_string(opened)});
        return;
    }
    uct_tl_resource_desc_t* tls = nullptr;
    unsigned ntls = 0;
    if (uct_md_query_tl_resources(md, &tls, &ntls) != UCS_OK) {
        uct_md_close(md);
        skipped->push_back({"", std::string(md_name) + ": transports not listed"});
        return;
    }
    for (unsigned i = 0; i < ntls; ++i) {
        const uct_tl_resource_desc_t& tl = tls[i];
        if (tl.dev_type != UCT_DEVICE_TYPE_NET || is_loopback(tl.dev_name)) continue;
        uct_iface_config_t* iface_config = nullptr;
        if (uct_md_iface_config_read(md, tl.tl_name, nullptr, nullptr, &iface_config) != UCS_OK) {
            skipped->push_back({tl.dev_name, std::string(tl.tl_name) + ": configuration not readable"});
            continue;
        }
        uct_iface_params_t params{};
        params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                            UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM |
                            UCT_IFACE_PARAM_FIELD_CPU_MASK;
        params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name = tl.tl_name;
        params.mode.device.dev_name = tl.dev_name;
        params.stats_root = nullptr;
        params.rx_headroom = 0;
        UCS_CPU_ZERO(&params.cpu_mask);
        uct_iface_h iface = nullptr;
        const ucs_status_t s = uct_iface_open(md, worker, &params, iface_config, &iface);
        uct_config_release(iface_config);
        if (s != UCS_OK) {
            skipped->push_back({tl.dev_name, std::string(tl.tl_name) + ": " + ucs_status_string(s)});
            continue;
        }
        uct_iface_attr_t attr{};
        if (uct_iface_query(iface, &attr) == UCS_OK) {
            UctIfaceFacts f;
            f.tl_name = tl.tl_name;
            f.dev_name = tl.dev_name;
            f.network = true;
            f.dedicated = attr.bandwidth.dedicated;
            f.shared = attr.bandwidth.shared;
            f.latency = attr.latency.c;
            if (tl.sys_device != UCS_SYS_DEVICE_ID_UNKNOWN) {
                char bdf[64] = "";
                f.pci_busid = ucs_topo_sys_device_bdf_name(tl.sys_device, bdf, sizeof bdf);
            }
            out->push_back(f);
        } else {
            skipped->push_back({tl.dev_name, std::string(tl.tl_name) + ": not queryable"});
        }
        uct_iface_close(iface);
    }
    uct_release_tl_resource_list(tls);
    uct_md_close(md);
}

}  // namespace

Status UcxNicSource::list(std::vector<NicInfo>* out) {
    out->clear();
    notes_.clear();
    // UCX logs to stdout by default: an interface that fails to open would
    // print into genx-topo's JSON.  What failed is reported below instead.
    struct Quiet {
        ucs_log_level_t saved = ucs_global_opts.log_component.log_level;
        Quiet() { ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_FATAL; }
        ~Quiet() { ucs_global_opts.log_component.log_level = saved; }
    } quiet;
    ucs_async_context_t* async = nullptr;
    ucs_status_t s = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    if (s != UCS_OK) return Status::io_error(ucs_error("ucs_async_context_create", s));
    uct_worker_h worker = nullptr;
    s = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
    if (s != UCS_OK) {
        ucs_async_context_destroy(async);
        return Status::io_error(ucs_error("uct_worker_create", s));
    }
    uct_component_h* components = nullptr;
    unsigned ncomponents = 0;
    s = uct_query_components(&components, &ncomponents);
    if (s != UCS_OK) {
        uct_worker_destroy(worker);
        ucs_async_context_destroy(async);
        return Status::io_error(ucs_error("uct_query_components", s));
    }
    std::vector<UctIfaceFacts> facts;
    std::vector<Skipped> skipped;
    for (unsigned c = 0; c < ncomponents; ++c) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) continue;
        std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        if (!mds.empty() && uct_component_query(components[c], &attr) != UCS_OK) continue;
        for (const uct_md_resource_desc_t& md : mds)
            query_md(components[c], md.md_name, worker, &facts, &skipped);
    }
    uct_release_component_list(components);
    uct_worker_destroy(worker);
    ucs_async_context_destroy(async);
    *out = nics_from_uct(facts);
    // Transports UCT listed for a NIC but could not open or query: said in
    // that NIC's detail, matched by device name and port exactly; a device
    // none of whose transports opened, and a memory domain that failed as
    // a whole, are said in notes().
    for (const Skipped& sk : skipped) {
        if (sk.dev_name.empty()) {
            notes_.push_back("memory domain " + sk.why);
            continue;
        }
        std::string name;
        int port = 0;
        split_uct_device(sk.dev_name, &name, &port);
        bool said = false;
        for (NicInfo& n : *out)
            if (n.name == name && n.port == port) {
                n.detail += "; not opened: " + sk.why;
                said = true;
            }
        if (!said) notes_.push_back(sk.dev_name + ": " + sk.why);
    }
    return Status::ok();
}

}  // namespace genx
