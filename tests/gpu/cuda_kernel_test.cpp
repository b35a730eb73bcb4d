// cuda_kernel_test: libgenx-cuda.so's reduction kernels against genx's host
// kernels (runtime/reduce.hpp), bit for bit, for every (type, op) pair the
// library supports, several source counts (one launch, and more than
// GENX_CUDA_MAX_SRCS sources, so several launches) and element counts.
//
//   cuda_kernel_test [LIBRARY]   default: the build tree's libgenx-cuda.so
//
// Like the core it only dlopen()s the library and goes through the ABI's
// table: it is not linked with the CUDA runtime.  The checks that need no
// device (ABI version, which pairs are supported) always run; without a
// driver or a device the rest is skipped with status 77.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/genx_types.h"
#include "runtime/cuda/genx_cuda_abi.h"
#include "runtime/reduce.hpp"

namespace genx {
namespace {

constexpr int kSkip = 77;
constexpr int kNsrcs[] = {1, 2, 3, 7, 33, 70};
constexpr size_t kCounts[] = {0, 1, 1000003};
constexpr int kMaxSrcs = 70;
constexpr size_t kMaxCount = 1000003;
constexpr size_t kMaxElem = 8;

// splitmix64: a cheap, well-mixed hash, so the inputs are the same on
// every run and generating 70 million of them takes well under a second.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

template <typename T>
T from_bits(uint64_t bits) {
    T v;
    if constexpr (sizeof(T) == 4) {
        auto b = static_cast<uint32_t>(bits);
        std::memcpy(&v, &b, sizeof v);
    } else {
        std::memcpy(&v, &bits, sizeof v);
    }
    return v;
}

// A non-zero logical operand: 1, or (not for BOOL) another value with bit 7
// set, so non-zero at every width.
template <typename T>
T nonzero(uint64_t h, bool is_bool) {
    if (is_bool || (h >> 20) % 2 == 0) return 1;
    return static_cast<T>((h >> 24) | 0x80);
}

// Element values chosen per op so the fold stays interesting over 70
// sources: wrap-around and negatives for integer SUM and PROD (odd factors,
// so products do not collapse to 0), NaN, infinities and signed zeros for
// MIN and MAX on floats, magnitudes near 1 for float PROD (no overflow to
// infinity, whose inf * 0 NaN would differ in sign between host and device
// and say nothing about the kernels).
template <typename T>
T value(genx_op op, bool is_bool, uint64_t h) {
    constexpr int bits = 8 * sizeof(T);
    // Mostly true for LAND and mostly false for LOR, so that even a fold of
    // 71 operands is not constant.
    if (op == GENX_OP_LAND) return h % 128 == 0 ? T(0) : nonzero<T>(h, is_bool);
    if (op == GENX_OP_LOR) return h % 128 == 0 ? nonzero<T>(h, is_bool) : T(0);
    if (op == GENX_OP_LXOR) return h % 2 == 0 ? T(0) : nonzero<T>(h, is_bool);
    if constexpr (std::is_integral_v<T>) {
        switch (op) {
            case GENX_OP_PROD: return static_cast<T>(h | 1);
            case GENX_OP_BAND: return static_cast<T>(~(uint64_t{1} << ((h >> 8) % bits)));
            case GENX_OP_BOR: return static_cast<T>(uint64_t{1} << ((h >> 8) % bits));
            default: return static_cast<T>(h);
        }
    } else {
        const T sign = h & 1 ? T(-1) : T(1);
        const T unit = static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53);  // [0, 1)
        if (op == GENX_OP_PROD) {
            if ((h >> 1) % 256 == 0) return sign * T(0);
            return sign * (T(0.5) + T(1.5) * unit);
        }
        if (op == GENX_OP_MIN || op == GENX_OP_MAX) {
            switch ((h >> 1) % 32) {
                case 0: {  // a quiet NaN, either sign, with a payload
                    constexpr uint64_t quiet = sizeof(T) == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
                    constexpr uint64_t payload = sizeof(T) == 4 ? 0x3fffffu : 0x7ffffffffffffull;
                    constexpr uint64_t sign_bit = sizeof(T) == 4 ? 0x80000000u : 0x8000000000000000ull;
                    return from_bits<T>(quiet | ((h >> 8) & payload) | (h & 2 ? sign_bit : 0));
                }
                case 1: return sign * std::numeric_limits<T>::infinity();
                case 2: return sign * T(0);
                default: break;
            }
        }
        return sign * std::ldexp(unit, static_cast<int>((h >> 2) % 61) - 30);
    }
}

template <typename T>
void fill(genx_dtype dtype, genx_op op, unsigned char* out, size_t n, uint64_t seed) {
    auto* p = reinterpret_cast<T*>(out);
    for (size_t i = 0; i < n; ++i) p[i] = value<T>(op, dtype == GENX_DT_BOOL, mix(seed + i));
}

void fill_values(genx_dtype dtype, genx_op op, unsigned char* out, size_t n, uint64_t seed) {
    switch (dtype) {
        case GENX_DT_INT8: return fill<int8_t>(dtype, op, out, n, seed);
        case GENX_DT_UINT8: return fill<uint8_t>(dtype, op, out, n, seed);
        case GENX_DT_INT16: return fill<int16_t>(dtype, op, out, n, seed);
        case GENX_DT_UINT16: return fill<uint16_t>(dtype, op, out, n, seed);
        case GENX_DT_INT32: return fill<int32_t>(dtype, op, out, n, seed);
        case GENX_DT_UINT32: return fill<uint32_t>(dtype, op, out, n, seed);
        case GENX_DT_INT64: return fill<int64_t>(dtype, op, out, n, seed);
        case GENX_DT_UINT64: return fill<uint64_t>(dtype, op, out, n, seed);
        case GENX_DT_FLOAT: return fill<float>(dtype, op, out, n, seed);
        case GENX_DT_DOUBLE: return fill<double>(dtype, op, out, n, seed);
        case GENX_DT_BOOL: return fill<uint8_t>(dtype, op, out, n, seed);
        default: return;
    }
}

std::string hex(const unsigned char* p, size_t n) {
    std::string s = "0x";
    char b[3];
    for (size_t k = n; k-- > 0;) {  // little-endian: most significant byte first
        std::snprintf(b, sizeof b, "%02x", p[k]);
        s += b;
    }
    return s;
}

// The checks that need no device: the table's version and size, and that
// the library offers a kernel for exactly the host's pairs, less long double.
int check_table(const genx_cuda_ops* ops) {
    if (ops->abi_version != GENX_CUDA_ABI_VERSION || ops->struct_size != sizeof(genx_cuda_ops)) {
        std::printf("FAIL: ABI version %d, table size %zu; this test expects %d and %zu\n",
                    ops->abi_version, ops->struct_size, GENX_CUDA_ABI_VERSION, sizeof(genx_cuda_ops));
        return 1;
    }
    int bad = 0;
    for (int t = GENX_DT_INT8; t <= GENX_DT_OTHER; ++t) {
        for (int o = GENX_OP_SUM; o <= GENX_OP_OTHER; ++o) {
            const auto dtype = static_cast<genx_dtype>(t);
            const auto op = static_cast<genx_op>(o);
            const int want = dtype != GENX_DT_LONG_DOUBLE && has_builtin_kernel(dtype, op);
            if (ops->reduce_supported(t, o) != want) {
                std::printf("FAIL: reduce_supported(%s, %s) = %d, expected %d\n", dtype_name(dtype),
                            op_name(op), ops->reduce_supported(t, o), want);
                ++bad;
            }
        }
    }
    return bad;
}

class Device {
  public:
    explicit Device(const genx_cuda_ops* ops) : ops_(ops) {}
    ~Device() {
        for (void* p : srcs_) ops_->device_free(0, p);
        if (dst_ != nullptr) ops_->device_free(0, dst_);
        if (stream_ != nullptr) ops_->stream_destroy(0, stream_);
    }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    // Every call's status; the first failure ends the test.
    bool ok(int rc, const char* what) {
        if (rc != 0) std::printf("FAIL: %s: %s (%d)\n", what, ops_->error_string(rc), rc);
        return rc == 0;
    }

    bool init() {
        if (!ok(ops_->stream_create(0, &stream_), "stream_create")) return false;
        if (!ok(ops_->device_alloc(0, kMaxCount * kMaxElem, &dst_), "device_alloc")) return false;
        srcs_.assign(kMaxSrcs, nullptr);
        for (void*& p : srcs_)
            if (!ok(ops_->device_alloc(0, kMaxCount * kMaxElem, &p), "device_alloc")) return false;
        return true;
    }

    bool upload(void* dst, const void* src, size_t bytes) {
        return ok(ops_->memcpy_async(0, dst, src, bytes, stream_), "memcpy_async to the device") &&
               ok(ops_->stream_synchronize(0, stream_), "stream_synchronize");
    }

    const genx_cuda_ops* ops_;
    void* stream_ = nullptr;
    void* dst_ = nullptr;
    std::vector<void*> srcs_;
};

// One (type, op) pair over every source and element count; the number of
// mismatching cases, or -1 when a CUDA call failed.
int check_pair(Device& dev, genx_dtype dtype, genx_op op, int* cases) {
    const genx_cuda_ops* ops = dev.ops_;
    const size_t elem = genx_dtype_size(dtype);
    const size_t bytes = kMaxCount * elem;
    ReduceKernel host;
    Status st = resolve_kernel(dtype, op, elem, nullptr, &host);
    if (!st.is_ok()) {
        std::printf("FAIL: host kernel for %s %s: %s\n", dtype_name(dtype), op_name(op), st.message().c_str());
        return 1;
    }
    const uint64_t seed = (uint64_t{static_cast<unsigned>(dtype)} << 56) | (uint64_t{static_cast<unsigned>(op)} << 48);
    std::vector<unsigned char> srcs(kMaxSrcs * bytes), init(bytes), want(bytes), got(bytes);
    std::vector<const void*> host_srcs(kMaxSrcs);
    for (int j = 0; j < kMaxSrcs; ++j) {
        unsigned char* p = srcs.data() + j * bytes;
        fill_values(dtype, op, p, kMaxCount, seed + (uint64_t(j) + 1) * (uint64_t{1} << 32));
        host_srcs[j] = p;
        if (!dev.upload(dev.srcs_[j], p, bytes)) return -1;
    }
    fill_values(dtype, op, init.data(), kMaxCount, seed);

    int bad = 0;
    for (int nsrcs : kNsrcs) {
        for (size_t count : kCounts) {
            ++*cases;
            // Count 0 must leave dst alone: its first element is compared.
            const size_t compared = std::max<size_t>(count, 1);
            if (!dev.upload(dev.dst_, init.data(), compared * elem)) return -1;
            if (!dev.ok(ops->reduce_async(0, dtype, op, dev.dst_, dev.srcs_.data(), nsrcs, count, dev.stream_),
                        "reduce_async") ||
                !dev.ok(ops->memcpy_async(0, got.data(), dev.dst_, compared * elem, dev.stream_),
                        "memcpy_async from the device") ||
                !dev.ok(ops->stream_synchronize(0, dev.stream_), "stream_synchronize"))
                return -1;
            std::memcpy(want.data(), init.data(), compared * elem);
            host.apply(want.data(), host_srcs.data(), nsrcs, count);
            if (std::memcmp(want.data(), got.data(), compared * elem) == 0) continue;
            size_t i = 0;
            while (std::memcmp(want.data() + i * elem, got.data() + i * elem, elem) == 0) ++i;
            std::printf("FAIL: %s %s, %d sources, %zu elements: element %zu is %s, host gives %s (dst was %s)\n",
                        dtype_name(dtype), op_name(op), nsrcs, count, i, hex(got.data() + i * elem, elem).c_str(),
                        hex(want.data() + i * elem, elem).c_str(), hex(init.data() + i * elem, elem).c_str());
            ++bad;
        }
    }
    return bad;
}

int run(const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::printf("FAIL: dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    auto entry = reinterpret_cast<genx_cuda_ops_fn>(dlsym(lib, "genx_cuda_ops_v1"));
    if (entry == nullptr) {
        std::printf("FAIL: %s has no genx_cuda_ops_v1: %s\n", path, dlerror());
        return 1;
    }
    const genx_cuda_ops* ops = entry();
    if (check_table(ops) != 0) return 1;

    // The library loads the driver itself, lazily; asking first gives the
    // real reason instead of the runtime's "driver version is insufficient".
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) {
        std::printf("SKIP: no CUDA device (%s)\n", dlerror());
        return kSkip;
    }
    dlclose(driver);
    int ndev = 0;
    if (int rc = ops->device_count(&ndev)) {
        std::printf("SKIP: no CUDA device (device_count: %s)\n", ops->error_string(rc));
        return kSkip;
    }
    if (ndev == 0) {
        std::printf("SKIP: no CUDA device (device_count is 0)\n");
        return kSkip;
    }
    std::printf("%s\n", ops->describe());

    Device dev(ops);
    if (!dev.init()) return 1;
    int bad = 0;
    int cases = 0;
    for (int t = GENX_DT_INT8; t < GENX_DT_OTHER; ++t) {
        for (int o = GENX_OP_SUM; o < GENX_OP_OTHER; ++o) {
            if (!ops->reduce_supported(t, o)) continue;
            const int r = check_pair(dev, static_cast<genx_dtype>(t), static_cast<genx_op>(o), &cases);
            if (r < 0) return 1;
            bad += r;
        }
    }
    if (bad != 0) {
        std::printf("FAIL: %d of %d cases differ from the host kernels\n", bad, cases);
        return 1;
    }
    std::printf("PASS: %d cases bit-identical to the host kernels\n", cases);
    return 0;
}

}  // namespace
}  // namespace genx

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : GENX_CUDA_BUILDDIR "/libgenx-cuda.so";
    return genx::run(path.c_str());
}
