// The device figures of genx's reduction-site estimate (runtime/staging.hpp
// DeviceRates, MCA coll_genx_cuda_rates), measured through genx's own
// device backend, and the host reduction rate the estimate takes from the
// rules file's model (GenModel's gamma and delta), measured with genx's
// host kernel:
//
//   copy_latency     an asynchronous 4-byte copy device -> page-locked host
//                    and the poll of its event, as BounceTransport does it
//                    (median of 2000)
//   pcie             64 MiB copies each way between device and page-locked
//                    memory (median of 7; the slower direction is printed)
//   kernel_latency   a 1-element float SUM reduction and its synchronisation
//   device_reduce    a 2-operand float SUM of 64 Mi elements: bytes read and
//                    written per second
//   host             the same reduction by genx's host kernel on one core:
//                    seconds per byte reduced, which GenModel prices as
//                    gamma + 3 delta (the built-in model: 3.5e-10)
//
// Prints the figures in coll_genx_cuda_rates's form at the end.  They are
// tight-loop figures: inside MPI calls, with other processes on the same
// GPU, the fixed costs were 20-30 times higher (bench/RESULTS.md), which
// is what genx's defaults hold.  Without a driver or device: SKIP, exit 77.
//
// Usage: device_rates [LIBGENX_CUDA_SO]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "tests/gpu/gpu_backend.hpp"
#include "runtime/reduce.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median_seconds(int runs, const std::function<bool()>& fn, bool* ok) {
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        if (!fn()) *ok = false;
        t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int status = 0;
    genx::DeviceBackend* b = gpu_backend(argc, argv, &status);
    if (b == nullptr) return status;
    constexpr size_t kBig = size_t{64} << 20;  // bytes per copy
    constexpr size_t kElems = size_t{64} << 20;  // floats per reduction operand
    void* pinned = nullptr;
    void* dev = nullptr;
    void* da = nullptr;
    void* db = nullptr;
    genx::DeviceStream s = nullptr;
    genx::DeviceEvent e = nullptr;
    if (!b->host_alloc(kBig, &pinned).is_ok() || !b->device_alloc(0, kBig, &dev).is_ok() ||
        !b->device_alloc(0, kElems * 4, &da).is_ok() || !b->device_alloc(0, kElems * 4, &db).is_ok() ||
        !b->stream_create(0, &s).is_ok() || !b->event_create(0, &e).is_ok()) {
        std::printf("FAIL: allocation\n");
        return 1;
    }
    std::memset(pinned, 0, kBig);
    bool ok = true;
    auto copy = [&](void* dst, const void* src, size_t n) {
        return b->memcpy_async(0, dst, src, n, s).is_ok() && b->event_record(0, e, s).is_ok();
    };
    auto poll = [&] {
        bool done = false;
        while (!done)
            if (!b->event_query(0, e, &done).is_ok()) return false;
        return true;
    };
    std::printf("# %s\n", b->describe().c_str());
    // Warm up: first copies and kernels load modules and map memory.
    ok = ok && copy(pinned, dev, kBig) && poll() && copy(dev, pinned, kBig) && poll();
    const void* srcs[1] = {db};
    ok = ok && b->reduce_async(0, GENX_DT_FLOAT, GENX_OP_SUM, da, srcs, 1, kElems, s).is_ok() &&
         b->stream_synchronize(0, s).is_ok();

    const double latency = median_seconds(2001, [&] { return copy(pinned, dev, 4) && poll(); }, &ok);
    const double d2h = median_seconds(7, [&] { return copy(pinned, dev, kBig) && poll(); }, &ok);
    const double h2d = median_seconds(7, [&] { return copy(dev, pinned, kBig) && poll(); }, &ok);
    const double pcie = kBig / std::max(d2h, h2d);
    const double kernel = median_seconds(2001, [&] {
        return b->reduce_async(0, GENX_DT_FLOAT, GENX_OP_SUM, da, srcs, 1, 1, s).is_ok() &&
               b->stream_synchronize(0, s).is_ok();
    }, &ok);
    const double dred = median_seconds(7, [&] {
        return b->reduce_async(0, GENX_DT_FLOAT, GENX_OP_SUM, da, srcs, 1, kElems, s).is_ok() &&
               b->stream_synchronize(0, s).is_ok();
    }, &ok);
    const double device_reduce = 3.0 * kElems * 4 / dred;

    genx::ReduceKernel k;
    if (!genx::resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, 4, nullptr, &k).is_ok()) {
        std::printf("FAIL: no host kernel for float SUM\n");
        return 1;
    }
    std::vector<float> ha(kElems, 1.0f), hb(kElems, 2.0f);
    const void* hsrcs[1] = {hb.data()};
    const double hred = median_seconds(7, [&] {
        k.apply(ha.data(), hsrcs, 1, kElems, nullptr);
        return true;
    }, &ok);
    const double host_per_byte = hred / (kElems * 4.0);

    std::printf("# figure           value\n");
    std::printf("  copy_latency     %.3g s   (4 B device -> page-locked, async copy + event poll)\n", latency);
    std::printf("  pcie             %.3g B/s (64 MiB: device -> host %.3g B/s, host -> device %.3g B/s)\n",
                pcie, kBig / d2h, kBig / h2d);
    std::printf("  kernel_latency   %.3g s   (1-element float SUM + stream sync)\n", kernel);
    std::printf("  device_reduce    %.3g B/s (2-operand float SUM of 256 MiB, bytes read + written)\n",
                device_reduce);
    std::printf("  host             %.3g s per byte reduced (2-operand float SUM, one core;"
                " GenModel: gamma + 3 delta, built-in 3.5e-10)\n", host_per_byte);
    std::printf("tight loop: pcie=%.3g,copy_latency=%.3g,device_reduce=%.3g,kernel_latency=%.3g\n",
                pcie, latency, device_reduce, kernel);
    b->event_destroy(0, e);
    b->stream_destroy(0, s);
    b->device_free(0, da);
    b->device_free(0, db);
    b->device_free(0, dev);
    b->host_free(pinned);
    if (!ok) {
        std::printf("FAIL: a copy, kernel or event call failed\n");
        return 1;
    }
    return 0;
}
