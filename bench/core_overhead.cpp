// genx-core-overhead [ALGORITHM [CALLS [RANKS]]]
//
// What genx's core costs per MPI_Allreduce-sized call by itself: rank 0 of
// a communicator of RANKS (default 2) runs ALGORITHM (default rd) on 8 B
// of int8 CALLS times (default 5e6) over a transport whose every operation
// completes at once (receives fill their buffer, sends do nothing), so the
// time is the core's alone: decision, schedule, executor, reduction.  Three
// rounds, nanoseconds per call each.  Not a test (nothing is asserted): the
// hot path's own cost, for before/after comparisons of the core
// (bench/RESULTS.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "genx/genx_core.h"

namespace {
int dummy;
int isend(void*, const void*, size_t, int, void** r) { *r = &dummy; return 0; }
int irecv(void*, void* b, size_t n, int, void** r) {
    std::memset(b, 1, n);
    *r = &dummy;
    return 0;
}
int test(void*, void*, int* done) { *done = 1; return 0; }
int progress(void*) { return 0; }
int wait_all(void*, void**, int) { return 0; }
int send(void*, const void*, size_t, int) { return 0; }
}  // namespace

int main(int argc, char** argv) {
    const char* alg = argc > 1 ? argv[1] : "rd";
    const long calls = argc > 2 ? std::atol(argv[2]) : 5000000;
    const int ranks = argc > 3 ? std::atoi(argv[3]) : 2;
    if (calls <= 0 || ranks < 2) {
        std::fprintf(stderr, "usage: genx-core-overhead [ALGORITHM [CALLS > 0 [RANKS >= 2]]]\n");
        return 2;
    }
    genx_config cfg{};
    cfg.algorithm = alg;
    cfg.params = "";
    cfg.device_off = 1;
    char err[512] = "";
    genx_comm* comm = genx_comm_create(0, ranks, 0, 0, nullptr, &cfg, err, sizeof err);
    if (comm == nullptr) {
        std::fprintf(stderr, "genx-core-overhead: %s\n", err);
        return 1;
    }
    genx_transport_ops ops{};
    ops.isend = isend;
    ops.irecv = irecv;
    ops.test = test;
    ops.progress = progress;
    ops.wait_all = wait_all;
    ops.send = send;
    signed char in[8] = {1}, out[8];
    for (int round = 0; round < 3; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < calls; ++i)
            if (genx_allreduce(comm, in, out, 8, GENX_DT_INT8, 1, GENX_OP_SUM, 1, nullptr, &ops,
                               nullptr, err, sizeof err) != GENX_OK) {
                std::fprintf(stderr, "genx-core-overhead: %s\n", err);
                return 1;
            }
        const double ns = std::chrono::duration<double, std::nano>(
                              std::chrono::steady_clock::now() - t0).count() / static_cast<double>(calls);
        std::printf("%s, %d ranks, rank 0, 8 B: %.1f ns per call\n", alg, ranks, ns);
    }
    genx_comm_destroy(comm);
    return 0;
}
