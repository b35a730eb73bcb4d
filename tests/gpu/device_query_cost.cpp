// What asking a pointer's memory space costs where a CUDA driver is present
// (docs/device.md): genx asks it for sendbuf and recvbuf on every
// MPI_Allreduce.  Prints nanoseconds per query for host memory (malloc),
// page-locked host memory and device memory, each the median of 7 runs of
// 200000 queries.  Without a driver or device it prints SKIP and exits 77
// (there the query is never made: genx checks one null pointer).
//
// Usage: device_query_cost [LIBGENX_CUDA_SO]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/device.hpp"
#include "tests/gpu/gpu_backend.hpp"

namespace {

double ns_per_query(genx::DeviceBackend* b, const void* p, genx::MemKind want, bool* ok) {
    constexpr int kQueries = 200000;
    std::vector<double> runs;
    for (int r = 0; r < 7; ++r) {
        int device = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kQueries; ++i) device += b->space_of(p).kind == want ? 1 : 0;
        const auto t1 = std::chrono::steady_clock::now();
        if (device != kQueries) *ok = false;
        runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kQueries);
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int status = 0;
    genx::DeviceBackend* b = gpu_backend(argc, argv, &status);
    if (b == nullptr) return status;
    void* host = std::malloc(1 << 20);
    void* pinned = nullptr;
    void* dev = nullptr;
    if (!b->host_alloc(1 << 20, &pinned).is_ok() || !b->device_alloc(0, 1 << 20, &dev).is_ok()) {
        std::printf("FAIL: allocation\n");
        return 1;
    }
    bool ok = true;
    std::printf("# %s\n", b->describe().c_str());
    std::printf("# memory            ns/query (median of 7 x 200000)\n");
    std::printf("  malloc            %8.1f\n", ns_per_query(b, host, genx::MemKind::Host, &ok));
    std::printf("  cudaHostAlloc     %8.1f\n", ns_per_query(b, pinned, genx::MemKind::Host, &ok));
    std::printf("  cudaMalloc        %8.1f\n", ns_per_query(b, dev, genx::MemKind::Device, &ok));
    b->device_free(0, dev);
    b->host_free(pinned);
    std::free(host);
    if (!ok) {
        std::printf("FAIL: a query answered the wrong memory space\n");
        return 1;
    }
    return 0;
}
