// libgenx-cuda.so: the CUDA runtime calls and the reduction kernels behind
// genx_cuda_abi.h (the contracts are there and in runtime/reduce.hpp).
//
// The kernels mirror runtime/reduce.cpp operator for operator, so that a
// reduction gives the same bytes whether the host or the device ran it:
// integer SUM and PROD in unsigned arithmetic (wrap-around, no signed
// overflow), MIN and MAX as the same comparisons (so NaN operands behave as
// on the host), logical ops yielding 0 or 1, BOOL through the uint8 logical
// kernels.  Floating results are bit-identical to the host's left fold
// because every step is one IEEE operation rounded to nearest: the library
// is compiled with -fmad=false (no a*b+c contraction) and without fast-math
// flags (no flush-to-zero, no reassociation).
#include "runtime/cuda/genx_cuda_abi.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/genx_types.h"
#include "runtime/reduce_ops.hpp"

namespace genx {
namespace {

// ------------------------------------------------------------ device guard
// The calling thread's current device belongs to the application: switch
// only when needed (cudaSetDevice is cheap but not free) and always put it
// back, whatever the call returned.
class DeviceGuard {
  public:
    explicit DeviceGuard(int device) {
        error_ = cudaGetDevice(&saved_);
        if (error_ != cudaSuccess || saved_ == device) return;
        error_ = cudaSetDevice(device);
        switched_ = error_ == cudaSuccess;
    }
    ~DeviceGuard() {
        if (switched_) cudaSetDevice(saved_);
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

    cudaError_t error() const { return error_; }

  private:
    int saved_ = 0;
    bool switched_ = false;
    cudaError_t error_ = cudaSuccess;
};

// Runs f() (returning a cudaError_t) with `device` current.
template <typename F>
int on_device(int device, F&& f) {
    DeviceGuard guard(device);
    if (guard.error() != cudaSuccess) return guard.error();
    return static_cast<int>(f());
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }

// --------------------------------------------------------------- operators
using namespace ops;  // the element operators (reduce_ops.hpp)

// ------------------------------------------------------------------ kernel
// The sources of one launch, passed by value in the kernel's parameter
// space (256 bytes), so a launch needs no device-side pointer array and no
// copy before it.
struct SrcPack {
    const void* p[GENX_CUDA_MAX_SRCS];
};

// One pass over the elements: each thread keeps dst[i] in a register while
// it folds in every source, so dst is read and written once and each source
// read once, whatever nsrcs is (the single pass the cost model prices).
template <typename T, typename Op>
__global__ void fold_kernel(T* __restrict__ dst, SrcPack srcs, int nsrcs, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        T acc = dst[i];
        for (int j = 0; j < nsrcs; ++j) acc = Op::f(acc, static_cast<const T*>(srcs.p[j])[i]);
        dst[i] = acc;
    }
}

constexpr unsigned kThreads = 256;
// Enough blocks of kThreads to fill every SM of current parts several times
// over (an H200 holds 132 x 8 such blocks); beyond that the grid-stride loop
// gives each thread more elements instead of launching blocks that would
// only queue.
constexpr size_t kMaxBlocks = 4096;

using Launch = cudaError_t (*)(void* dst, const void* const* srcs, int nsrcs, size_t n,
                               cudaStream_t stream);

// Folds the sources in groups of GENX_CUDA_MAX_SRCS, one launch each, in
// order: the stream serialises the launches, so the result is the left fold
// over all of them.  cudaLaunchKernel's return value reports a failed launch
// without reading or clearing the application's last-error state, which
// cudaGetLastError after <<<>>> would.
template <typename T, typename Op>
cudaError_t launch(void* dst, const void* const* srcs, int nsrcs, size_t n, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(std::min((n + kThreads - 1) / kThreads, kMaxBlocks)));
    const dim3 block(kThreads);
    T* d = static_cast<T*>(dst);
    for (int lo = 0; lo < nsrcs; lo += GENX_CUDA_MAX_SRCS) {
        SrcPack pack{};
        int k = std::min(GENX_CUDA_MAX_SRCS, nsrcs - lo);
        std::copy(srcs + lo, srcs + lo + k, pack.p);
        void* args[] = {&d, &pack, &k, &n};
        cudaError_t err = cudaLaunchKernel(&fold_kernel<T, Op>, grid, block, args, 0, stream);
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}

// The (type, op) table: the same pairs as runtime/reduce.cpp's builtin_kernel.
template <typename T>
Launch arith_launch(int op) {
    switch (op) {
        case GENX_OP_SUM: return &launch<T, Sum<T>>;
        case GENX_OP_PROD: return &launch<T, Prod<T>>;
        case GENX_OP_MIN: return &launch<T, Min<T>>;
        case GENX_OP_MAX: return &launch<T, Max<T>>;
        default: return nullptr;
    }
}

template <typename T>
Launch logical_launch(int op) {
    switch (op) {
        case GENX_OP_LAND: return &launch<T, LAnd<T>>;
        case GENX_OP_LOR: return &launch<T, LOr<T>>;
        case GENX_OP_LXOR: return &launch<T, LXor<T>>;
        default: return nullptr;
    }
}

template <typename T>
Launch integer_launch(int op) {
    if (Launch f = arith_launch<T>(op)) return f;
    if (Launch f = logical_launch<T>(op)) return f;
    switch (op) {
        case GENX_OP_BAND: return &launch<T, BAnd<T>>;
        case GENX_OP_BOR: return &launch<T, BOr<T>>;
        case GENX_OP_BXOR: return &launch<T, BXor<T>>;
        default: return nullptr;
    }
}

// nullptr for long double (no device type matches the host's x87 format),
// for GENX_*_OTHER and for pairs MPI does not define.
Launch find_launch(int dtype, int op) {
    switch (dtype) {
        case GENX_DT_INT8: return integer_launch<int8_t>(op);
        case GENX_DT_UINT8: return integer_launch<uint8_t>(op);
        case GENX_DT_INT16: return integer_launch<int16_t>(op);
        case GENX_DT_UINT16: return integer_launch<uint16_t>(op);
        case GENX_DT_INT32: return integer_launch<int32_t>(op);
        case GENX_DT_UINT32: return integer_launch<uint32_t>(op);
        case GENX_DT_INT64: return integer_launch<int64_t>(op);
        case GENX_DT_UINT64: return integer_launch<uint64_t>(op);
        case GENX_DT_FLOAT: return arith_launch<float>(op);
        case GENX_DT_DOUBLE: return arith_launch<double>(op);
        // _Bool is one byte holding 0 or 1, as on the host.
        case GENX_DT_BOOL: return logical_launch<uint8_t>(op);
        default: return nullptr;
    }
}

// ---------------------------------------------------------------- the table
std::string version_text(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// "N device(s): A, B x2": identical neighbours counted, not repeated.
std::string devices_text() {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) return std::string("no device (") + cudaGetErrorString(err) + ")";
    std::string out = std::to_string(n) + " device(s)";
    std::string last;
    int repeat = 0;
    const char* sep = ": ";
    auto flush = [&]() {
        if (repeat == 0) return;
        out += sep + last;
        if (repeat > 1) out += " x" + std::to_string(repeat);
        sep = ", ";
    };
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp prop{};
        std::string name = cudaGetDeviceProperties(&prop, d) == cudaSuccess ? prop.name : "unknown";
        if (repeat > 0 && name == last) {
            ++repeat;
            continue;
        }
        flush();
        last = name;
        repeat = 1;
    }
    flush();
    return out;
}

const char* describe() {
    // A function-local static is initialised once, thread-safely.
    static const std::string text = [] {
        int runtime = 0;
        int driver = 0;
        cudaRuntimeGetVersion(&runtime);
        cudaDriverGetVersion(&driver);
        return "CUDA runtime " + version_text(runtime) + ", driver " +
               (driver > 0 ? version_text(driver) : std::string("none")) + ", " + devices_text();
    }();
    return text.c_str();
}

const char* error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

int device_count(int* n) { return cudaGetDeviceCount(n); }

int host_alloc(size_t bytes, void** p) { return cudaHostAlloc(p, bytes, cudaHostAllocPortable); }

int host_free(void* p) { return cudaFreeHost(p); }

int device_alloc(int device, size_t bytes, void** p) {
    return on_device(device, [&] { return cudaMalloc(p, bytes); });
}

int device_free(int device, void* p) {
    return on_device(device, [&] { return cudaFree(p); });
}

int stream_create(int device, void** stream) {
    return on_device(device, [&] {
        cudaStream_t s = nullptr;
        cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        if (err == cudaSuccess) *stream = s;
        return err;
    });
}

int stream_destroy(int device, void* stream) {
    return on_device(device, [&] { return cudaStreamDestroy(as_stream(stream)); });
}

int stream_synchronize(int device, void* stream) {
    return on_device(device, [&] { return cudaStreamSynchronize(as_stream(stream)); });
}

int event_create(int device, void** event) {
    return on_device(device, [&] {
        cudaEvent_t e = nullptr;
        cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        if (err == cudaSuccess) *event = e;
        return err;
    });
}

int event_destroy(int device, void* event) {
    return on_device(device, [&] { return cudaEventDestroy(as_event(event)); });
}

int event_record(int device, void* event, void* stream) {
    return on_device(device, [&] { return cudaEventRecord(as_event(event), as_stream(stream)); });
}

int event_query(int device, void* event, int* done) {
    return on_device(device, [&] {
        cudaError_t err = cudaEventQuery(as_event(event));
        *done = err == cudaSuccess;
        return err == cudaErrorNotReady ? cudaSuccess : err;
    });
}

int event_synchronize(int device, void* event) {
    return on_device(device, [&] { return cudaEventSynchronize(as_event(event)); });
}

int memcpy_async(int device, void* dst, const void* src, size_t bytes, void* stream) {
    return on_device(device, [&] {
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream));
    });
}

int reduce_supported(int dtype, int op) { return find_launch(dtype, op) != nullptr; }

int reduce_async(int device, int dtype, int op, void* dst, const void* const* srcs, int nsrcs,
                 size_t count, void* stream) {
    Launch f = find_launch(dtype, op);
    if (f == nullptr || nsrcs < 0) return cudaErrorInvalidValue;
    if (count == 0 || nsrcs == 0) return cudaSuccess;
    return on_device(device, [&] { return f(dst, srcs, nsrcs, count, as_stream(stream)); });
}

const genx_cuda_ops kOps = {
    GENX_CUDA_ABI_VERSION,
    sizeof(genx_cuda_ops),
    describe,
    error_string,
    device_count,
    host_alloc,
    host_free,
    device_alloc,
    device_free,
    stream_create,
    stream_destroy,
    stream_synchronize,
    event_create,
    event_destroy,
    event_record,
    event_query,
    event_synchronize,
    memcpy_async,
    reduce_supported,
    reduce_async,
};

}  // namespace
}  // namespace genx

// The library's only exported symbol (it is built with -fvisibility=hidden).
extern "C" __attribute__((visibility("default"))) const genx_cuda_ops* genx_cuda_ops_v1(void) {
    return &genx::kOps;
}
