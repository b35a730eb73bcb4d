// The element operators of genx's reductions, shared by the host kernels
// (reduce.cpp) and the CUDA kernels (cuda/genx_cuda.cu): one definition, so
// the device computes bit for bit what the host does (integer wrap-around,
// NaN behaviour of MIN/MAX, 0/1 results of the logical ops).  Under nvcc
// the operators are __host__ __device__; elsewhere plain functions.
#pragma once

#include <type_traits>

#ifdef __CUDACC__
#define GENX_HOST_DEVICE __host__ __device__
#else
#define GENX_HOST_DEVICE
#endif

namespace genx {
namespace ops {

// Unsigned type wide enough that arithmetic on it never promotes to int
// (uint16_t * uint16_t promotes to int and can overflow it).
template <typename T>
using WrapT = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Integer SUM and PROD wrap modulo 2^bits, computed in unsigned arithmetic
// so that signed overflow is never undefined behaviour.
template <typename T>
struct Sum {
    GENX_HOST_DEVICE static T f(T a, T b) {
        if constexpr (std::is_integral_v<T>) {
            return static_cast<T>(static_cast<WrapT<T>>(a) + static_cast<WrapT<T>>(b));
        } else {
            return a + b;
        }
    }
};
template <typename T>
struct Prod {
    GENX_HOST_DEVICE static T f(T a, T b) {
        if constexpr (std::is_integral_v<T>) {
            return static_cast<T>(static_cast<WrapT<T>>(a) * static_cast<WrapT<T>>(b));
        } else {
            return a * b;
        }
    }
};
// MIN/MAX keep the left operand when the comparison is false (NaN: whatever
// the comparison gives, as in Open MPI's own kernels).
template <typename T>
struct Min {
    GENX_HOST_DEVICE static T f(T a, T b) { return b < a ? b : a; }
};
template <typename T>
struct Max {
    GENX_HOST_DEVICE static T f(T a, T b) { return a < b ? b : a; }
};
template <typename T>
struct LAnd {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>((a != 0) & (b != 0)); }
};
template <typename T>
struct LOr {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>((a != 0) | (b != 0)); }
};
template <typename T>
struct LXor {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>((a != 0) ^ (b != 0)); }
};
template <typename T>
struct BAnd {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>(a & b); }
};
template <typename T>
struct BOr {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>(a | b); }
};
template <typename T>
struct BXor {
    GENX_HOST_DEVICE static T f(T a, T b) { return static_cast<T>(a ^ b); }
};

}  // namespace ops
}  // namespace genx
