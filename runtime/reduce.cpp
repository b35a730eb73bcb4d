// Fused k-ary reduction kernels (contracts in reduce.hpp).
//
// Layout of the code: an operator is a struct with a static f(a, b); one
// template per arity (2, 3, 4 operands counting dst) runs a single
// `omp simd` loop over __restrict pointers so the compiler vectorizes it;
// larger arities walk the arrays in cache-sized strips and fold up to three
// sources per sweep of a strip, so dst stays in L1 while each source is
// still read exactly once from memory.
#include "runtime/reduce.hpp"
#include "runtime/reduce_ops.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

// AVX2 kernels exist where the compiler can target them (x86-64 GCC or
// Clang); elsewhere every kernel is the baseline one.
#if defined(__x86_64__) && defined(__GNUC__)  // GCC, and Clang (which defines __GNUC__)
#define GENX_REDUCE_AVX2 1
#else
#define GENX_REDUCE_AVX2 0
#endif

namespace genx {

namespace {

using namespace ops;  // the element operators (reduce_ops.hpp)

// The loops are always inlined into the kernel that uses them, so each
// kernel's own target (fused_avx2 below) decides their vector width.
template <typename T, typename Op>
[[gnu::always_inline]] inline void fold2(T* __restrict d, const T* __restrict a, size_t n) {
#pragma omp simd
    for (size_t i = 0; i < n; ++i) d[i] = Op::f(d[i], a[i]);
}

template <typename T, typename Op>
[[gnu::always_inline]] inline void fold3(T* __restrict d, const T* __restrict a,
                                         const T* __restrict b, size_t n) {
#pragma omp simd
    for (size_t i = 0; i < n; ++i) d[i] = Op::f(Op::f(d[i], a[i]), b[i]);
}

template <typename T, typename Op>
[[gnu::always_inline]] inline void fold4(T* __restrict d, const T* __restrict a,
                                         const T* __restrict b, const T* __restrict c, size_t n) {
#pragma omp simd
    for (size_t i = 0; i < n; ++i) d[i] = Op::f(Op::f(Op::f(d[i], a[i]), b[i]), c[i]);
}

// Strip length for k > 4: small enough that a dst strip stays in L1 across
// the sweeps over the sources, large enough to amortize the loop overhead.
constexpr size_t kStripBytes = 8192;

template <typename T, typename Op>
[[gnu::always_inline]] inline void fused_body(void* dst, const void* const* srcs, int nsrcs, size_t n) {
    T* d = static_cast<T*>(dst);
    auto src = [srcs](int j) { return static_cast<const T*>(srcs[j]); };
    switch (nsrcs) {
        case 0:
            return;
        case 1:
            fold2<T, Op>(d, src(0), n);
            return;
        case 2:
            fold3<T, Op>(d, src(0), src(1), n);
            return;
        case 3:
            fold4<T, Op>(d, src(0), src(1), src(2), n);
            return;
        default:
            break;
    }
    const size_t strip = std::max<size_t>(1, kStripBytes / sizeof(T));
    for (size_t lo = 0; lo < n; lo += strip) {
        const size_t len = std::min(strip, n - lo);
        T* ds = d + lo;
        int j = 0;
        for (; j + 3 <= nsrcs; j += 3) fold4<T, Op>(ds, src(j) + lo, src(j + 1) + lo, src(j + 2) + lo, len);
        if (nsrcs - j == 2) fold3<T, Op>(ds, src(j) + lo, src(j + 1) + lo, len);
        if (nsrcs - j == 1) fold2<T, Op>(ds, src(j) + lo, len);
    }
}

// The baseline kernel: the build's target (x86-64's SSE2: 16-byte vectors).
template <typename T, typename Op>
void fused(void* dst, const void* const* srcs, int nsrcs, size_t n) {
    fused_body<T, Op>(dst, srcs, nsrcs, n);
}

#if GENX_REDUCE_AVX2
// The same loops in 32-byte vectors, for CPUs with AVX2 (chosen at run
// time, reduce_isa()): Open MPI's own op component (mca_op_avx) reduces
// with AVX2 or AVX-512 where the CPU has them, and a reduction of a few KiB
// at half its vector width showed in the small-message latency
// (bench/RESULTS.md).  Element-wise, so the width changes no result bit.
template <typename T, typename Op>
[[gnu::target("avx2")]] void fused_avx2(void* dst, const void* const* srcs, int nsrcs, size_t n) {
    fused_body<T, Op>(dst, srcs, nsrcs, n);
}
#endif

template <typename T, typename Op>
ReduceKernel::Fn pick(ReduceIsa isa) {
#if GENX_REDUCE_AVX2
    // long double has no vector form: one kernel for both.
    if constexpr (!std::is_same<T, long double>::value)
        if (isa == ReduceIsa::Avx2) return &fused_avx2<T, Op>;
#endif
    (void)isa;
    return &fused<T, Op>;
}

template <typename T>
ReduceKernel::Fn arith_kernel(genx_op op, ReduceIsa isa) {
    switch (op) {
        case GENX_OP_SUM: return pick<T, Sum<T>>(isa);
        case GENX_OP_PROD: return pick<T, Prod<T>>(isa);
        case GENX_OP_MIN: return pick<T, Min<T>>(isa);
        case GENX_OP_MAX: return pick<T, Max<T>>(isa);
        default: return nullptr;
    }
}

template <typename T>
ReduceKernel::Fn logical_kernel(genx_op op, ReduceIsa isa) {
    switch (op) {
        case GENX_OP_LAND: return pick<T, LAnd<T>>(isa);
        case GENX_OP_LOR: return pick<T, LOr<T>>(isa);
        case GENX_OP_LXOR: return pick<T, LXor<T>>(isa);
        default: return nullptr;
    }
}

template <typename T>
ReduceKernel::Fn integer_kernel(genx_op op, ReduceIsa isa) {
    if (ReduceKernel::Fn f = arith_kernel<T>(op, isa)) return f;
    if (ReduceKernel::Fn f = logical_kernel<T>(op, isa)) return f;
    switch (op) {
        case GENX_OP_BAND: return pick<T, BAnd<T>>(isa);
        case GENX_OP_BOR: return pick<T, BOr<T>>(isa);
        case GENX_OP_BXOR: return pick<T, BXor<T>>(isa);
        default: return nullptr;
    }
}

ReduceKernel::Fn builtin_kernel(genx_dtype dtype, genx_op op, ReduceIsa isa) {
    switch (dtype) {
        case GENX_DT_INT8: return integer_kernel<int8_t>(op, isa);
        case GENX_DT_UINT8: return integer_kernel<uint8_t>(op, isa);
        case GENX_DT_INT16: return integer_kernel<int16_t>(op, isa);
        case GENX_DT_UINT16: return integer_kernel<uint16_t>(op, isa);
        case GENX_DT_INT32: return integer_kernel<int32_t>(op, isa);
        case GENX_DT_UINT32: return integer_kernel<uint32_t>(op, isa);
        case GENX_DT_INT64: return integer_kernel<int64_t>(op, isa);
        case GENX_DT_UINT64: return integer_kernel<uint64_t>(op, isa);
        case GENX_DT_FLOAT: return arith_kernel<float>(op, isa);
        case GENX_DT_DOUBLE: return arith_kernel<double>(op, isa);
        case GENX_DT_LONG_DOUBLE: return arith_kernel<long double>(op, isa);
        // _Bool is one byte holding 0 or 1; the uint8 logical kernels give
        // the same bytes and never load a byte as a C++ bool.
        case GENX_DT_BOOL: return logical_kernel<uint8_t>(op, isa);
        default: return nullptr;
    }
}

// Order-exact callback strips: bounded so temp stays small and in cache.
constexpr size_t kCallbackStripBytes = 64 * 1024;

size_t callback_strip_elems(size_t elem_size) {
    return std::max<size_t>(1, kCallbackStripBytes / elem_size);
}

}  // namespace

size_t genx_dtype_size(genx_dtype dtype) {
    switch (dtype) {
        case GENX_DT_INT8: return sizeof(int8_t);
        case GENX_DT_UINT8: return sizeof(uint8_t);
        case GENX_DT_INT16: return sizeof(int16_t);
        case GENX_DT_UINT16: return sizeof(uint16_t);
        case GENX_DT_INT32: return sizeof(int32_t);
        case GENX_DT_UINT32: return sizeof(uint32_t);
        case GENX_DT_INT64: return sizeof(int64_t);
        case GENX_DT_UINT64: return sizeof(uint64_t);
        case GENX_DT_FLOAT: return sizeof(float);
        case GENX_DT_DOUBLE: return sizeof(double);
        case GENX_DT_LONG_DOUBLE: return sizeof(long double);
        case GENX_DT_BOOL: return 1;
        default: return 0;
    }
}

const char* dtype_name(genx_dtype dtype) {
    switch (dtype) {
        case GENX_DT_INT8: return "int8";
        case GENX_DT_UINT8: return "uint8";
        case GENX_DT_INT16: return "int16";
        case GENX_DT_UINT16: return "uint16";
        case GENX_DT_INT32: return "int32";
        case GENX_DT_UINT32: return "uint32";
        case GENX_DT_INT64: return "int64";
        case GENX_DT_UINT64: return "uint64";
        case GENX_DT_FLOAT: return "float";
        case GENX_DT_DOUBLE: return "double";
        case GENX_DT_LONG_DOUBLE: return "long double";
        case GENX_DT_BOOL: return "bool";
        case GENX_DT_OTHER: return "other";
    }
    return "invalid-type";
}

const char* op_name(genx_op op) {
    switch (op) {
        case GENX_OP_SUM: return "SUM";
        case GENX_OP_PROD: return "PROD";
        case GENX_OP_MIN: return "MIN";
        case GENX_OP_MAX: return "MAX";
        case GENX_OP_LAND: return "LAND";
        case GENX_OP_LOR: return "LOR";
        case GENX_OP_LXOR: return "LXOR";
        case GENX_OP_BAND: return "BAND";
        case GENX_OP_BOR: return "BOR";
        case GENX_OP_BXOR: return "BXOR";
        case GENX_OP_OTHER: return "OTHER";
    }
    return "invalid-op";
}

bool has_builtin_kernel(genx_dtype dtype, genx_op op) {
    return builtin_kernel(dtype, op, ReduceIsa::Baseline) != nullptr;
}

ReduceIsa reduce_isa() {
#if GENX_REDUCE_AVX2
    static const ReduceIsa isa = __builtin_cpu_supports("avx2") ? ReduceIsa::Avx2 : ReduceIsa::Baseline;
    return isa;
#else
    return ReduceIsa::Baseline;
#endif
}

bool reduce_isa_available(ReduceIsa isa) {
    return isa == ReduceIsa::Baseline || isa == reduce_isa();
}

const char* reduce_isa_name(ReduceIsa isa) {
    switch (isa) {
        case ReduceIsa::Baseline: return "baseline";
        case ReduceIsa::Avx2: return "avx2";
    }
    return "invalid";
}

void ReduceKernel::apply(void* dst, const void* const* srcs, int nsrcs, size_t count,
                         void* temp) const {
    if (fn_ != nullptr) {
        fn_(dst, srcs, nsrcs, count);
        return;
    }
    if (nsrcs <= 0 || count == 0) return;
    if (cb_commutative_) {
        for (int j = 0; j < nsrcs; ++j) cb_.reduce(cb_.ctx, srcs[j], dst, count);
        return;
    }
    const size_t strip = callback_strip_elems(elem_size_);
    auto* d = static_cast<unsigned char*>(dst);
    auto* t = static_cast<unsigned char*>(temp);
    for (size_t lo = 0; lo < count; lo += strip) {
        const size_t len = std::min(strip, count - lo);
        const size_t off = lo * elem_size_;
        std::memcpy(t, static_cast<const unsigned char*>(srcs[nsrcs - 1]) + off, len * elem_size_);
        for (int j = nsrcs - 2; j >= 0; --j)
            cb_.reduce(cb_.ctx, static_cast<const unsigned char*>(srcs[j]) + off, t, len);
        cb_.reduce(cb_.ctx, d + off, t, len);
        std::memcpy(d + off, t, len * elem_size_);
    }
}

size_t ReduceKernel::temp_bytes() const {
    if (!is_callback() || cb_commutative_) return 0;
    return callback_strip_elems(elem_size_) * elem_size_;
}

Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      bool commutative, ReduceKernel* out) {
    return resolve_kernel(dtype, op, elem_size, cb, commutative, reduce_isa(), out);
}

Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      bool commutative, ReduceIsa isa, ReduceKernel* out) {
    *out = ReduceKernel();
    if (!reduce_isa_available(isa))
        return Status::unsupported(std::string("reduce: kernels for ") + reduce_isa_name(isa) +
                                   " need a CPU (and a build) that has it");
    const bool known_type = dtype >= GENX_DT_INT8 && dtype < GENX_DT_OTHER;
    const bool known_op = op >= GENX_OP_SUM && op < GENX_OP_OTHER;
    if (!(known_type || dtype == GENX_DT_OTHER) || !(known_op || op == GENX_OP_OTHER))
        return Status::invalid("reduce: type code " + std::to_string(static_cast<int>(dtype)) +
                               " / op code " + std::to_string(static_cast<int>(op)) +
                               " is outside genx_core.h's enums");
    if (known_type && elem_size != genx_dtype_size(dtype))
        return Status::invalid(std::string("reduce: element size ") + std::to_string(elem_size) +
                               " B does not match type " + dtype_name(dtype) + " (" +
                               std::to_string(genx_dtype_size(dtype)) + " B)");
    if (elem_size == 0) return Status::invalid("reduce: element size 0 for a type genx does not know");
    out->elem_size_ = elem_size;
    out->dtype_ = dtype;
    out->op_ = op;
    if (known_type && known_op) {
        out->fn_ = builtin_kernel(dtype, op, isa);
        if (out->fn_ == nullptr)
            return Status::unsupported(std::string("reduce: MPI does not define ") + op_name(op) +
                                       " on type " + dtype_name(dtype) +
                                       "; genx declines, the fallback component handles it");
        return Status::ok();
    }
    if (cb == nullptr || cb->reduce == nullptr)
        return Status::unsupported(std::string("reduce: op ") + op_name(op) + " on type " +
                                   dtype_name(dtype) +
                                   " needs the glue's reduce callback and none was given");
    out->cb_ = *cb;
    out->cb_commutative_ = commutative;
    return Status::ok();
}

Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      ReduceKernel* out) {
    return resolve_kernel(dtype, op, elem_size, cb, false, out);
}

}  // namespace genx
