// Test helpers for the runtime tests: genx's predefined types and ops, an
// independent table of the pairs MPI defines, integer-valued sample data
// whose reductions are exact in any order, and a naive scalar reference.
//
// The reference is written separately from runtime/reduce.cpp on purpose
// (64-bit wrap-around arithmetic, plain loops) so the kernels are compared
// with something that does not share their code.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "genx/genx_core.h"

namespace genx_test {

inline std::vector<genx_dtype> builtin_types() {
    return {GENX_DT_INT8,  GENX_DT_UINT8,  GENX_DT_INT16, GENX_DT_UINT16,
            GENX_DT_INT32, GENX_DT_UINT32, GENX_DT_INT64, GENX_DT_UINT64,
            GENX_DT_FLOAT, GENX_DT_DOUBLE, GENX_DT_LONG_DOUBLE, GENX_DT_BOOL};
}

inline std::vector<genx_op> builtin_ops() {
    return {GENX_OP_SUM,  GENX_OP_PROD, GENX_OP_MIN,  GENX_OP_MAX,  GENX_OP_LAND,
            GENX_OP_LOR,  GENX_OP_LXOR, GENX_OP_BAND, GENX_OP_BOR,  GENX_OP_BXOR};
}

inline bool is_float(genx_dtype t) {
    return t == GENX_DT_FLOAT || t == GENX_DT_DOUBLE || t == GENX_DT_LONG_DOUBLE;
}

inline bool is_signed_int(genx_dtype t) {
    return t == GENX_DT_INT8 || t == GENX_DT_INT16 || t == GENX_DT_INT32 || t == GENX_DT_INT64;
}

// MPI-3.1 §5.9.2: arithmetic ops on integer and floating types, logical ops
// on integer and logical types, bitwise ops on integer (and byte) types.
inline bool mpi_defines(genx_dtype t, genx_op op) {
    const bool integer = !is_float(t) && t != GENX_DT_BOOL;
    switch (op) {
        case GENX_OP_SUM: case GENX_OP_PROD: case GENX_OP_MIN: case GENX_OP_MAX:
            return t != GENX_DT_BOOL;
        case GENX_OP_LAND: case GENX_OP_LOR: case GENX_OP_LXOR:
            return integer || t == GENX_DT_BOOL;
        case GENX_OP_BAND: case GENX_OP_BOR: case GENX_OP_BXOR:
            return integer;
        default:
            return false;
    }
}

inline size_t type_size(genx_dtype t) {
    switch (t) {
        case GENX_DT_INT8: case GENX_DT_UINT8: case GENX_DT_BOOL: return 1;
        case GENX_DT_INT16: case GENX_DT_UINT16: return 2;
        case GENX_DT_INT32: case GENX_DT_UINT32: case GENX_DT_FLOAT: return 4;
        case GENX_DT_INT64: case GENX_DT_UINT64: case GENX_DT_DOUBLE: return 8;
        case GENX_DT_LONG_DOUBLE: return sizeof(long double);
        default: return 0;
    }
}

inline uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb3f9e5a7ca6bULL;
    x ^= x >> 33;
    return x;
}

// Integer sample for (rank, element) chosen so that any order of
// combination gives the same bits: sums stay small for floats, products
// are ±2^k, logical data has zeros, bitwise data uses every bit.
inline int64_t sample(genx_dtype t, genx_op op, int rank, size_t i, uint64_t seed = 1) {
    const uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(rank) * 1000003ULL + i);
    if (t == GENX_DT_BOOL) return static_cast<int64_t>(h & 1);
    switch (op) {
        case GENX_OP_SUM: return static_cast<int64_t>(h % 101) - 50;
        case GENX_OP_PROD: {
            static const int64_t v[] = {1, 2, -1, 1};
            return v[h % 4];
        }
        case GENX_OP_MIN: case GENX_OP_MAX: return static_cast<int64_t>(h % 2001) - 1000;
        case GENX_OP_LAND: case GENX_OP_LOR: case GENX_OP_LXOR: {
            static const int64_t v[] = {0, 1, 0, 5, -3, 64};
            return v[h % 6];
        }
        default: return static_cast<int64_t>(h);  // bitwise: all bits (integers only)
    }
}

// Writes integer v as type t (two's-complement truncation for integers).
inline void store(genx_dtype t, void* p, int64_t v) {
    switch (t) {
        case GENX_DT_INT8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
        case GENX_DT_UINT8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
        case GENX_DT_BOOL: { uint8_t x = v != 0; std::memcpy(p, &x, 1); break; }
        case GENX_DT_INT16: { int16_t x = static_cast<int16_t>(v); std::memcpy(p, &x, 2); break; }
        case GENX_DT_UINT16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
        case GENX_DT_INT32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
        case GENX_DT_UINT32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
        case GENX_DT_INT64: { std::memcpy(p, &v, 8); break; }
        case GENX_DT_UINT64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(p, &x, 8); break; }
        case GENX_DT_FLOAT: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
        case GENX_DT_DOUBLE: { double x = static_cast<double>(v); std::memcpy(p, &x, 8); break; }
        case GENX_DT_LONG_DOUBLE: {
            long double x = static_cast<long double>(v);
            std::memcpy(p, &x, sizeof x);
            break;
        }
        default: break;
    }
}

namespace detail {

template <typename T>
T combine_int(genx_op op, T a, T b) {
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (op) {
        case GENX_OP_SUM: return static_cast<T>(ua + ub);
        case GENX_OP_PROD: return static_cast<T>(ua * ub);
        case GENX_OP_MIN: return a < b ? a : b;
        case GENX_OP_MAX: return a > b ? a : b;
        case GENX_OP_LAND: return static_cast<T>(a != 0 && b != 0);
        case GENX_OP_LOR: return static_cast<T>(a != 0 || b != 0);
        case GENX_OP_LXOR: return static_cast<T>((a != 0) != (b != 0));
        case GENX_OP_BAND: return static_cast<T>(ua & ub);
        case GENX_OP_BOR: return static_cast<T>(ua | ub);
        case GENX_OP_BXOR: return static_cast<T>(ua ^ ub);
        default: return a;
    }
}

template <typename T>
T combine_float(genx_op op, T a, T b) {
    switch (op) {
        case GENX_OP_SUM: return a + b;
        case GENX_OP_PROD: return a * b;
        case GENX_OP_MIN: return a < b ? a : b;
        case GENX_OP_MAX: return a > b ? a : b;
        default: return a;
    }
}

template <typename T, typename F>
void apply(void* acc, const void* x, F f) {
    T a, b;
    std::memcpy(&a, acc, sizeof a);
    std::memcpy(&b, x, sizeof b);
    a = f(a, b);
    std::memcpy(acc, &a, sizeof a);
}

}  // namespace detail

// acc := acc (op) x for one element.
inline void ref_combine(genx_dtype t, genx_op op, void* acc, const void* x) {
    using namespace detail;
    auto i = [op](auto a, auto b) { return combine_int(op, a, b); };
    auto f = [op](auto a, auto b) { return combine_float(op, a, b); };
    switch (t) {
        case GENX_DT_INT8: apply<int8_t>(acc, x, i); break;
        case GENX_DT_UINT8: case GENX_DT_BOOL: apply<uint8_t>(acc, x, i); break;
        case GENX_DT_INT16: apply<int16_t>(acc, x, i); break;
        case GENX_DT_UINT16: apply<uint16_t>(acc, x, i); break;
        case GENX_DT_INT32: apply<int32_t>(acc, x, i); break;
        case GENX_DT_UINT32: apply<uint32_t>(acc, x, i); break;
        case GENX_DT_INT64: apply<int64_t>(acc, x, i); break;
        case GENX_DT_UINT64: apply<uint64_t>(acc, x, i); break;
        case GENX_DT_FLOAT: apply<float>(acc, x, f); break;
        case GENX_DT_DOUBLE: apply<double>(acc, x, f); break;
        case GENX_DT_LONG_DOUBLE: apply<long double>(acc, x, f); break;
        default: break;
    }
}

// Element-wise equality; long double compares values because 6 of its 16
// bytes are padding that no kernel promises to preserve.
inline bool same_element(genx_dtype t, const void* a, const void* b) {
    if (t == GENX_DT_LONG_DOUBLE) {
        long double x, y;
        std::memcpy(&x, a, sizeof x);
        std::memcpy(&y, b, sizeof y);
        return x == y;
    }
    return std::memcmp(a, b, type_size(t)) == 0;
}

// Index of the first differing element, or -1.
inline long first_difference(genx_dtype t, const void* a, const void* b, size_t count) {
    const size_t es = type_size(t);
    const auto* pa = static_cast<const unsigned char*>(a);
    const auto* pb = static_cast<const unsigned char*>(b);
    for (size_t i = 0; i < count; ++i)
        if (!same_element(t, pa + i * es, pb + i * es)) return static_cast<long>(i);
    return -1;
}

// Rank r's input vector for (t, op).
inline std::vector<unsigned char> make_input(genx_dtype t, genx_op op, int rank, size_t count,
                                             uint64_t seed = 1) {
    const size_t es = type_size(t);
    std::vector<unsigned char> v(count * es);
    for (size_t i = 0; i < count; ++i) store(t, v.data() + i * es, sample(t, op, rank, i, seed));
    return v;
}

// The allreduce of make_input over ranks 0..P-1, folded in rank order.
inline std::vector<unsigned char> reference_allreduce(genx_dtype t, genx_op op, int P, size_t count,
                                                      uint64_t seed = 1) {
    const size_t es = type_size(t);
    std::vector<unsigned char> acc = make_input(t, op, 0, count, seed);
    for (int r = 1; r < P; ++r) {
        const std::vector<unsigned char> x = make_input(t, op, r, count, seed);
        for (size_t i = 0; i < count; ++i) ref_combine(t, op, acc.data() + i * es, x.data() + i * es);
    }
    return acc;
}

}  // namespace genx_test
