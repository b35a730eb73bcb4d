// The CUDA backend and the process's backend registry (device.hpp).
//
// Two libraries, loaded at run time so that genx never links CUDA:
//  * libcuda.so.1, the driver, as soon as device memory is enabled: only
//    cuInit and cuPointerGetAttributes, which need no context (the runtime
//    API's cudaPointerGetAttributes would create one on the current device
//    in every rank), and for ContextWatch cuCtxGetCurrent,
//    cuDevicePrimaryCtxGetState and cuDeviceGet, which create none either.
//    Missing driver or no device: no backend at all.
//  * libgenx-cuda.so (runtime/cuda/genx_cuda_abi.h), at the first device
//    buffer: copies, streams, events, pinned memory and the kernels.
//
// The driver's types and constants are the few this file uses, declared
// here from the driver API's documented ABI (cuda.h: CUresult is an int,
// CUdeviceptr an unsigned pointer-sized integer; the attribute and memory
// type values are fixed by NVIDIA's ABI and checked against cuda.h where
// the toolkit is present at build time).
#include "runtime/device.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/cuda/genx_cuda_abi.h"

#if defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define GENX_CHECK_CUDA_H 1
#endif
#endif

namespace genx {

namespace {

namespace drv {
using Result = int;
using DevicePtr = uintptr_t;
constexpr int kAttrMemoryType = 2;     // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttrIsManaged = 8;      // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr int kAttrDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr unsigned kMemoryDevice = 2;  // CU_MEMORYTYPE_DEVICE
constexpr unsigned kMemoryUnified = 4; // CU_MEMORYTYPE_UNIFIED
using InitFn = Result (*)(unsigned);
using GetAttributesFn = Result (*)(unsigned, int*, void**, DevicePtr);
using GetCountFn = Result (*)(int*);
using DeviceGetFn = Result (*)(int*, int);
}  // namespace drv

#ifdef GENX_CHECK_CUDA_H
static_assert(drv::kAttrMemoryType == CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "CUDA ABI");
static_assert(drv::kAttrIsManaged == CU_POINTER_ATTRIBUTE_IS_MANAGED, "CUDA ABI");
static_assert(drv::kAttrDeviceOrdinal == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "CUDA ABI");
static_assert(drv::kMemoryDevice == CU_MEMORYTYPE_DEVICE, "CUDA ABI");
static_assert(drv::kMemoryUnified == CU_MEMORYTYPE_UNIFIED, "CUDA ABI");
static_assert(sizeof(drv::DevicePtr) == sizeof(CUdeviceptr), "CUDA ABI");
static_assert(sizeof(int) == sizeof(CUdevice), "CUDA ABI");  // ContextWatch's device handles
#endif

#ifndef GENX_CUDA_LIBDIR
#define GENX_CUDA_LIBDIR ""
#endif
#ifndef GENX_CUDA_BUILDDIR
#define GENX_CUDA_BUILDDIR ""
#endif

Status cuda_error(const genx_cuda_ops* ops, const char* what, int code) {
    return Status::internal(std::string("CUDA ") + what + ": " +
                            (ops != nullptr ? ops->error_string(code) : "error") + " (" +
                            std::to_string(code) + ")");
}

class CudaBackend final : public DeviceBackend {
  public:
    CudaBackend(void* driver, drv::GetAttributesFn attrs, int ndevices, std::string library,
                ContextWatch::CurrentFn current, ContextWatch::PrimaryStateFn primary,
                std::vector<int> devices)
        : driver_(driver), attrs_(attrs), ndevices_(ndevices), library_(std::move(library)),
          watch_(current, primary, std::move(devices)) {}

    std::string describe() const override {
        const genx_cuda_ops* ops = ops_.load(std::memory_order_acquire);
        return "cuda (" + std::to_string(ndevices_) + " device(s)" +
               (watch_.armed() ? "; no query before a context exists" : "") +
               (ops != nullptr ? std::string("; ") + ops->describe() : std::string()) + ")";
    }

    MemSpace space_of(const void* p) override {
        MemSpace s;
        if (p == nullptr) return s;
        unsigned type = 0;
        unsigned managed = 0;
        int ordinal = -1;
        int attrs[3] = {drv::kAttrMemoryType, drv::kAttrIsManaged, drv::kAttrDeviceOrdinal};
        void* data[3] = {&type, &managed, &ordinal};
        // A pointer the driver does not know (plain host memory) either
        // fails or reports type 0: both are host memory.
        if (attrs_(3, attrs, data, reinterpret_cast<drv::DevicePtr>(p)) != 0) return s;
        if (type == drv::kMemoryDevice || type == drv::kMemoryUnified || managed != 0) {
            s.kind = MemKind::Device;
            s.device = ordinal;
            s.managed = managed != 0;
        }
        return s;
    }

    bool may_hold_device_memory() override { return watch_.may_hold_device_memory(); }
    bool context_check_armed() const override { return watch_.armed(); }

    Status ready() override {
        std::call_once(load_once_, [this] { load(); });
        return load_status_;
    }

    Status host_alloc(size_t bytes, void** p) override {
        return call("cudaHostAlloc", ops()->host_alloc(bytes, p));
    }
    void host_free(void* p) override { (void)ops()->host_free(p); }
    Status device_alloc(int device, size_t bytes, void** p) override {
        return call("cudaMalloc", ops()->device_alloc(device, bytes, p));
    }
    void device_free(int device, void* p) override { (void)ops()->device_free(device, p); }
    Status stream_create(int device, DeviceStream* s) override {
        return call("cudaStreamCreate", ops()->stream_create(device, s));
    }
    void stream_destroy(int device, DeviceStream s) override { (void)ops()->stream_destroy(device, s); }
    Status stream_synchronize(int device, DeviceStream s) override {
        return call("cudaStreamSynchronize", ops()->stream_synchronize(device, s));
    }
    Status event_create(int device, DeviceEvent* e) override {
        return call("cudaEventCreate", ops()->event_create(device, e));
    }
    void event_destroy(int device, DeviceEvent e) override { (void)ops()->event_destroy(device, e); }
    Status event_record(int device, DeviceEvent e, DeviceStream s) override {
        return call("cudaEventRecord", ops()->event_record(device, e, s));
    }
    Status event_query(int device, DeviceEvent e, bool* done) override {
        int d = 0;
        const int rc = ops()->event_query(device, e, &d);
        *done = d != 0;
        return call("cudaEventQuery", rc);
    }
    Status event_synchronize(int device, DeviceEvent e) override {
        return call("cudaEventSynchronize", ops()->event_synchronize(device, e));
    }
    Status memcpy_async(int device, void* dst, const void* src, size_t bytes,
                        DeviceStream s) override {
        return call("cudaMemcpyAsync", ops()->memcpy_async(device, dst, src, bytes, s));
    }
    bool reduce_supported(genx_dtype dtype, genx_op op) const override {
        const genx_cuda_ops* o = ops_.load(std::memory_order_acquire);
        return o != nullptr && o->reduce_supported(dtype, op) != 0;
    }
    Status reduce_async(int device, genx_dtype dtype, genx_op op, void* dst,
                        const void* const* srcs, int nsrcs, size_t count,
                        DeviceStream s) override {
        return call("reduce kernel", ops()->reduce_async(device, dtype, op, dst, srcs, nsrcs, count, s));
    }

  private:
    const genx_cuda_ops* ops() const { return ops_.load(std::memory_order_acquire); }
    Status call(const char* what, int rc) const {
        return rc == 0 ? Status::ok() : cuda_error(ops(), what, rc);
    }

    // The library named by the configuration, else the build tree's (tests
    // and tools run uninstalled), else the installed one.
    void load() {
        std::string tried;
        void* h = nullptr;
        auto attempt = [&](const std::string& path) {
            if (h != nullptr || path.empty()) return;
            h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h == nullptr) {
                const char* e = dlerror();
                tried += (tried.empty() ? "" : "; ") + (e != nullptr ? std::string(e) : path);
            } else {
                path_ = path;
            }
        };
        attempt(library_);
        if (library_.empty()) {
            if (*GENX_CUDA_BUILDDIR != '\0') {
                const std::string b = std::string(GENX_CUDA_BUILDDIR) + "/libgenx-cuda.so";
                if (exists(b)) attempt(b);
            }
            if (*GENX_CUDA_LIBDIR != '\0') attempt(std::string(GENX_CUDA_LIBDIR) + "/libgenx-cuda.so");
        }
        if (h == nullptr) {
            load_status_ = Status::unsupported(
                "device memory needs libgenx-cuda.so, which could not be loaded (" +
                (tried.empty() ? std::string("genx was built without CUDA: configure --with-cuda")
                               : tried) +
                ")");
            return;
        }
        auto fn = reinterpret_cast<genx_cuda_ops_fn>(dlsym(h, "genx_cuda_ops_v1"));
        const genx_cuda_ops* ops = fn != nullptr ? fn() : nullptr;
        if (ops == nullptr || ops->abi_version != GENX_CUDA_ABI_VERSION ||
            ops->struct_size < sizeof(genx_cuda_ops)) {
            load_status_ = Status::unsupported(
                path_ + " is not a libgenx-cuda.so of ABI version " +
                std::to_string(GENX_CUDA_ABI_VERSION) + " (found " +
                (ops == nullptr ? std::string("no genx_cuda_ops_v1")
                                : "version " + std::to_string(ops->abi_version)) +
                "); rebuild genx and the library together");
            dlclose(h);
            return;
        }
        library_handle_ = h;
        ops_.store(ops, std::memory_order_release);
    }
    static bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

    void* driver_;
    drv::GetAttributesFn attrs_;
    int ndevices_;
    std::string library_;
    std::string path_;
    void* library_handle_ = nullptr;
    std::once_flag load_once_;
    Status load_status_;
    std::atomic<const genx_cuda_ops*> ops_{nullptr};
    ContextWatch watch_;
};

std::atomic<DeviceBackend*> g_backend{nullptr};
std::once_flag g_probe_once;
std::string g_probe_note;

// The CUDA backend when a driver with at least one device is present.
DeviceBackend* probe_cuda(const DeviceConfig& config, std::string* note) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        *note = "no CUDA driver (libcuda.so.1 not found): every buffer is host memory";
        return nullptr;
    }
    auto init = reinterpret_cast<drv::InitFn>(dlsym(h, "cuInit"));
    auto attrs = reinterpret_cast<drv::GetAttributesFn>(dlsym(h, "cuPointerGetAttributes"));
    auto count = reinterpret_cast<drv::GetCountFn>(dlsym(h, "cuDeviceGetCount"));
    int n = 0;
    if (init == nullptr || attrs == nullptr || count == nullptr) {
        *note = "libcuda.so.1 lacks cuInit, cuDeviceGetCount or cuPointerGetAttributes: every buffer is host memory";
    } else if (const int rc = init(0); rc != 0) {
        *note = "CUDA driver present but cuInit failed (error " + std::to_string(rc) +
                "): every buffer is host memory";
    } else if (count(&n) != 0 || n <= 0) {
        *note = "CUDA driver present but no device: every buffer is host memory";
    } else {
        *note = "CUDA driver with " + std::to_string(n) +
                " device(s): device buffers are staged through host memory";
        // The context watch, where the driver has its calls and there are
        // few enough devices for it to pay (ContextWatch).
        auto current = reinterpret_cast<ContextWatch::CurrentFn>(dlsym(h, "cuCtxGetCurrent"));
        auto primary = reinterpret_cast<ContextWatch::PrimaryStateFn>(
            dlsym(h, "cuDevicePrimaryCtxGetState"));
        auto device_get = reinterpret_cast<drv::DeviceGetFn>(dlsym(h, "cuDeviceGet"));
        // No devices (cuDeviceGet missing or failing): not armed.
        std::vector<int> devices;
        for (int i = 0; device_get != nullptr && i < n; ++i) {
            int d = 0;
            if (device_get(&d, i) != 0) {
                devices.clear();
                break;
            }
            devices.push_back(d);
        }
        // Kept for the life of the process (the driver must stay loaded
        // while any pointer it describes may be passed to genx).
        auto* backend =
            new CudaBackend(h, attrs, n, config.library, current, primary, std::move(devices));
        if (backend->context_check_armed())
            *note += "; no pointer is queried while the process has no CUDA context";
        return backend;
    }
    dlclose(h);
    return nullptr;
}

}  // namespace

ContextWatch::ContextWatch(CurrentFn current, PrimaryStateFn primary, std::vector<int> devices)
    : current_(current), primary_(primary), devices_(std::move(devices)) {
    armed_ = current_ != nullptr && primary_ != nullptr && !devices_.empty() &&
             devices_.size() <= kMaxDevices;
    // The first answer decides nothing by itself: a context made before
    // genx was loaded is found by the first call's check like any other.
}

// Out of line: taken only until a context is seen.
bool ContextWatch::context_appeared() {
    void* ctx = nullptr;
    bool seen = current_(&ctx) != 0 || ctx != nullptr;
    for (size_t i = 0; !seen && i < devices_.size(); ++i) {
        unsigned flags = 0;
        int active = 0;
        seen = primary_(devices_[i], &flags, &active) != 0 || active != 0;
    }
    if (seen) seen_.store(true, std::memory_order_relaxed);
    return seen;
}

DeviceBackend* device_probe(const DeviceConfig& config, std::string* note) {
    if (config.enabled) {
        std::call_once(g_probe_once, [&] {
            DeviceBackend* b = probe_cuda(config, &g_probe_note);
            if (b != nullptr) {
                DeviceBackend* expected = nullptr;
                // A test's fake backend, installed first, stays.
                if (!g_backend.compare_exchange_strong(expected, b)) delete b;
            }
        });
        if (note != nullptr) *note = g_probe_note;
    } else if (note != nullptr) {
        *note = "device memory support is off: every buffer is host memory";
    }
    return config.enabled ? g_backend.load(std::memory_order_acquire) : nullptr;
}

DeviceBackend* device_backend() { return g_backend.load(std::memory_order_acquire); }

DeviceBackend* set_device_backend(DeviceBackend* b) { return g_backend.exchange(b); }

}  // namespace genx
