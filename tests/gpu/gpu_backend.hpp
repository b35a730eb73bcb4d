// The start both device_query_cost and device_rates share: genx's device
// backend for `library` (argv[1]; empty = the built-in places), or the exit
// status to leave with: 77 and "SKIP: why" without a driver or device,
// 1 and "FAIL: why" when libgenx-cuda.so cannot be used.
#pragma once

#include <cstdio>
#include <string>

#include "runtime/device.hpp"

inline genx::DeviceBackend* gpu_backend(int argc, char** argv, int* exit_status) {
    genx::DeviceConfig dc;
    if (argc > 1) dc.library = argv[1];
    std::string note;
    genx::DeviceBackend* b = genx::device_probe(dc, &note);
    if (b == nullptr) {
        std::printf("SKIP: %s\n", note.c_str());
        *exit_status = 77;
        return nullptr;
    }
    const genx::Status ready = b->ready();
    if (!ready.is_ok()) {
        std::printf("FAIL: %s\n", ready.message().c_str());
        *exit_status = 1;
        return nullptr;
    }
    return b;
}
