// What asking a pointer's memory space costs where a CUDA driver is present
// (docs/device.md): genx asks it for sendbuf and recvbuf on every
// MPI_Allreduce.  Prints nanoseconds per query for host memory (malloc),
// page-locked host memory and device memory, each the median of 7 runs of
// 200000 queries.  Without a driver or device it prints SKIP and exits 77
// (there the query is never made: genx checks one null pointer).
//
// Then the driver calls a cheaper test could be built from, each timed the
// same way on malloc memory: before the process has any CUDA context,
// after the primary context exists (on this thread and on another thread,
// where it is not current): cuPointerGetAttributes with genx's three
// attributes, cuPointerGetAttribute with the memory type alone,
// cuCtxGetCurrent, and cuDevicePrimaryCtxGetState for every device.
//
// Usage: device_query_cost [LIBGENX_CUDA_SO]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/device.hpp"
#include "tests/gpu/gpu_backend.hpp"

namespace {

// Nanoseconds per call of f: the median of 7 runs of 200000 calls.
template <class F>
double ns_per_call(F&& f) {
    constexpr int kCalls = 200000;
    std::vector<double> runs;
    for (int r = 0; r < 7; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; ++i) f();
        const auto t1 = std::chrono::steady_clock::now();
        runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kCalls);
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

// genx's space query on p; *ok becomes false if any answer is not `want`.
double ns_per_query(genx::DeviceBackend* b, const void* p, genx::MemKind want, bool* ok) {
    bool right = true;
    const double ns = ns_per_call([&] { right = (b->space_of(p).kind == want) && right; });
    if (!right) *ok = false;
    return ns;
}

// The driver's calls, from its documented ABI (CUresult int, CUdeviceptr
// an unsigned pointer-sized integer, CUcontext and CUdevice opaque/int).
struct Driver {
    int (*attrs)(unsigned, int*, void**, uintptr_t) = nullptr;
    int (*attr)(void*, int, uintptr_t) = nullptr;
    genx::ContextWatch::CurrentFn ctx_current = nullptr;
    genx::ContextWatch::PrimaryStateFn primary_state = nullptr;
    int (*device_get)(int*, int) = nullptr;
    int (*count)(int*) = nullptr;
    bool load() {
        void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) return false;
        attrs = reinterpret_cast<decltype(attrs)>(dlsym(h, "cuPointerGetAttributes"));
        attr = reinterpret_cast<decltype(attr)>(dlsym(h, "cuPointerGetAttribute"));
        ctx_current = reinterpret_cast<decltype(ctx_current)>(dlsym(h, "cuCtxGetCurrent"));
        primary_state = reinterpret_cast<decltype(primary_state)>(dlsym(h, "cuDevicePrimaryCtxGetState"));
        device_get = reinterpret_cast<decltype(device_get)>(dlsym(h, "cuDeviceGet"));
        count = reinterpret_cast<decltype(count)>(dlsym(h, "cuDeviceGetCount"));
        return attrs && attr && ctx_current && primary_state && device_get && count;
    }
    // How many of the first n devices have their primary context active
    // (cuDeviceGet and cuDevicePrimaryCtxGetState for each).
    int active_primaries(int n) const {
        int active = 0;
        for (int i = 0; i < n; ++i) {
            int dev = 0;
            unsigned flags = 0;
            int a = 0;
            if (device_get(&dev, i) == 0 && primary_state(dev, &flags, &a) == 0 && a != 0) ++active;
        }
        return active;
    }
};

void driver_calls(const Driver& d, const void* host, const char* when) {
    const auto p = reinterpret_cast<uintptr_t>(host);
    volatile int sink = 0;
    int ndev = 0;
    (void)d.count(&ndev);
    std::printf("# driver calls on malloc memory, %s (%d device(s)):\n", when, ndev);
    std::printf("  cuPointerGetAttributes (3)     %8.1f\n", ns_per_call([&] {
        unsigned type = 0, managed = 0;
        int ordinal = -1;
        int a[3] = {2, 8, 9};
        void* v[3] = {&type, &managed, &ordinal};
        sink = sink + d.attrs(3, a, v, p);
    }));
    std::printf("  cuPointerGetAttribute (type)   %8.1f\n", ns_per_call([&] {
        unsigned type = 0;
        sink = sink + d.attr(&type, 2, p);
    }));
    std::printf("  cuCtxGetCurrent                %8.1f\n", ns_per_call([&] {
        void* c = nullptr;
        sink = sink + d.ctx_current(&c) + (c != nullptr ? 1 : 0);
    }));
    std::printf("  cuDevicePrimaryCtxGetState x%d  %8.1f\n", ndev,
                ns_per_call([&] { sink = sink + d.active_primaries(ndev); }));
    void* c = nullptr;
    (void)d.ctx_current(&c);
    std::printf("  (current context: %s; active primary contexts: %d)\n", c != nullptr ? "yes" : "none",
                d.active_primaries(ndev));
}

}  // namespace

int main(int argc, char** argv) {
    int status = 0;
    genx::DeviceBackend* b = gpu_backend(argc, argv, &status);
    if (b == nullptr) return status;
    void* host = std::malloc(1 << 20);
    Driver drv;
    const bool have_driver = drv.load();
    if (have_driver) driver_calls(drv, host, "before any context");
    // genx's own check (ContextWatch): armed where few devices are visible;
    // then no context yet means no device memory, and a context means "may".
    const bool before = b->may_hold_device_memory();
    const double check_ns = ns_per_call([&] { (void)b->may_hold_device_memory(); });
    const bool armed = b->context_check_armed();
    std::printf("# genx's context check: %s; before any context: %s (%.1f ns per check)\n",
                armed ? "armed" : "not armed (queries every call)",
                before ? "may hold device memory" : "host only", check_ns);
    void* pinned = nullptr;
    void* dev = nullptr;
    if (!b->host_alloc(1 << 20, &pinned).is_ok() || !b->device_alloc(0, 1 << 20, &dev).is_ok()) {
        std::printf("FAIL: allocation\n");
        return 1;
    }
    bool ok = !(armed && before);
    if (!ok) std::printf("FAIL: the armed check said 'may' before any context\n");
    if (!b->may_hold_device_memory()) {
        std::printf("FAIL: the check says 'host only' with a context active\n");
        ok = false;
    }
    std::printf("# %s\n", b->describe().c_str());
    std::printf("# memory            ns/query (median of 7 x 200000)\n");
    std::printf("  malloc            %8.1f\n", ns_per_query(b, host, genx::MemKind::Host, &ok));
    std::printf("  cudaHostAlloc     %8.1f\n", ns_per_query(b, pinned, genx::MemKind::Host, &ok));
    std::printf("  cudaMalloc        %8.1f\n", ns_per_query(b, dev, genx::MemKind::Device, &ok));
    if (have_driver) {
        driver_calls(drv, host, "primary context current");
        std::thread t([&] { driver_calls(drv, host, "primary context, another thread"); });
        t.join();
    }
    b->device_free(0, dev);
    b->host_free(pinned);
    std::free(host);
    if (!ok) {
        std::printf("FAIL: a query answered the wrong memory space\n");
        return 1;
    }
    return 0;
}
