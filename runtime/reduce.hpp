// genx's reduction kernels: one fused k-ary pass per local reduce.
//
// A plan's reduce  dst ⊕= s1 ⊕ ... ⊕ s(k-1)  reads k arrays and writes one,
// in a single pass: that single pass is what the GenModel δ term prices, so
// a chain of k-1 binary reductions (k-1 reads and writes of dst) would make
// the model wrong as well as slow.  Kernels exist for every (type, op) pair
// MPI defines on the predefined types genx knows (common/genx_types.h):
//
//   SUM PROD MIN MAX        all integer and floating types (not BOOL)
//   LAND LOR LXOR           integer types and BOOL
//   BAND BOR BXOR           integer types
//
// Everything else (GENX_OP_OTHER, GENX_DT_OTHER: user ops, MINLOC pairs,
// complex types) goes through the glue's MPI_Reduce_local-style callback.
//
// Operand order.  A kernel computes the left fold
//     dst := ((dst ⊕ s1) ⊕ s2) ⊕ ... ⊕ s(k-1)
// so for a non-commutative op a plan that wants "lower ranks on the left"
// puts the lower-rank partial in dst.  The callback's contract is
// inout := in ⊕ inout, which can only prepend to its inout array, so the
// order-exact callback path folds from the right into a temporary strip:
//     t := s(k-1);  t := s(j) ⊕ t  for j = k-2..1;  t := dst ⊕ t;  dst := t
// which equals the left fold by associativity (MPI requires every op to be
// associative).  When the glue says the op is commutative the callback is
// applied directly as  dst := s(j) ⊕ dst, without the temporary.
//
// Integer SUM and PROD wrap modulo 2^bits (computed in unsigned arithmetic,
// so signed overflow is never undefined behaviour); MIN/MAX on floating
// types keep dst when the comparison is false (NaN handling is whatever the
// comparison gives, as in Open MPI's own kernels).  BOOL is C's _Bool (one
// byte, 0 or 1); logical ops on it and on integers yield 0 or 1.
#pragma once

#include <cstddef>

#include "common/status.hpp"
#include "common/genx_types.h"

namespace genx {

// Size in bytes of a predefined genx type; 0 for GENX_DT_OTHER (the glue
// supplies the size) and for values outside the enum.
size_t genx_dtype_size(genx_dtype dtype);

// Names used in messages: "int32", "long double", "bool", "other";
// "SUM", "BXOR", "OTHER".
const char* dtype_name(genx_dtype dtype);
const char* op_name(genx_op op);

// True when MPI defines `op` on `dtype` and genx has a kernel for it.
bool has_builtin_kernel(genx_dtype dtype, genx_op op);

// The vector instructions a built-in kernel uses.  Baseline: the build's
// target (SSE2 on x86-64).  Avx2: 32-byte vectors, on x86-64 CPUs that
// have AVX2.  Element-wise, so both give the same bits.
enum class ReduceIsa { Baseline, Avx2 };
// What resolve_kernel() uses on this CPU: Avx2 where the CPU has it.
ReduceIsa reduce_isa();
bool reduce_isa_available(ReduceIsa isa);
const char* reduce_isa_name(ReduceIsa isa);  // "baseline", "avx2"

// A reduction resolved once per call.  Either a built-in fused kernel or
// the glue's callback; apply() hides the difference.
class ReduceKernel {
  public:
    // dst[i] = dst[i] ⊕ srcs[0][i] ⊕ ... ⊕ srcs[nsrcs-1][i] for i < count.
    using Fn = void (*)(void* dst, const void* const* srcs, int nsrcs, size_t count);

    ReduceKernel() = default;

    // Left fold (see the file comment) over `count` elements.  No operand
    // may overlap another.  `temp` must hold temp_bytes() bytes; it is only
    // used by the order-exact callback path (nullptr is fine otherwise).
    void apply(void* dst, const void* const* srcs, int nsrcs, size_t count,
               void* temp = nullptr) const;

    // Scratch apply() needs in `temp`: 0 except for an order-exact callback.
    size_t temp_bytes() const;

    bool valid() const { return fn_ != nullptr || cb_.reduce != nullptr; }
    bool is_callback() const { return fn_ == nullptr && cb_.reduce != nullptr; }
    size_t elem_size() const { return elem_size_; }
    genx_dtype dtype() const { return dtype_; }
    genx_op op() const { return op_; }

  private:
    friend Status resolve_kernel(genx_dtype, genx_op, size_t, const genx_reduce_cb*, bool,
                                 ReduceIsa, ReduceKernel*);
    Fn fn_ = nullptr;
    genx_reduce_cb cb_{nullptr, nullptr};
    bool cb_commutative_ = false;
    size_t elem_size_ = 0;
    genx_dtype dtype_ = GENX_DT_OTHER;
    genx_op op_ = GENX_OP_OTHER;
};

// Resolves the kernel for (dtype, op) on elements of `elem_size` bytes.
//  - A predefined type with a predefined op uses genx's kernel; a pair MPI
//    does not define (BAND on float, SUM on bool) is Unsupported, with a
//    message naming both, even when a callback is given: the fallback
//    component then reports the error MPI mandates.
//  - GENX_OP_OTHER or GENX_DT_OTHER use `cb` (Unsupported when cb is NULL
//    or has no function).
//  - elem_size must equal genx_dtype_size() for a predefined type and be
//    non-zero for GENX_DT_OTHER (InvalidArgument otherwise).
// `commutative` only matters for the callback path: false makes apply()
// keep the exact left-fold order (costs two strip copies per source pass).
Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      bool commutative, ReduceKernel* out);
// The same with built-in kernels of a given ISA (tests compare them);
// Unsupported where reduce_isa_available(isa) is false.
Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      bool commutative, ReduceIsa isa, ReduceKernel* out);

// Same with commutative = false (order-exact), for callers that do not know.
Status resolve_kernel(genx_dtype dtype, genx_op op, size_t elem_size, const genx_reduce_cb* cb,
                      ReduceKernel* out);

}  // namespace genx
