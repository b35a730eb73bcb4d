/*
 * genx_cuda_abi.h: the C boundary between genx's core and libgenx-cuda.so,
 * the small library that holds everything that needs the CUDA toolkit: the
 * reduction kernels (compiled by nvcc) and the CUDA runtime calls (streams,
 * events, pinned host memory, cudaMemcpyAsync).
 *
 * Why a separate library: mca_coll_genx.so must load, and work, on machines
 * without CUDA.  It never links libcudart or libcuda; the core dlopen()s
 * libcuda.so.1 to ask a pointer's memory type, and dlopen()s this library
 * only once it has seen device memory (runtime/device.hpp).  The library
 * links the CUDA runtime statically (nvcc's default), so it needs nothing
 * from the toolkit at run time, only the driver (libcuda.so.1).
 *
 * Every call takes the ordinal of the device it works on and leaves the
 * calling thread's current device as it found it (the application's
 * cudaSetDevice is not genx's to change).  Every call returns 0 on success
 * or a cudaError_t value; error_string() names it.  Pointers to streams and
 * events are opaque (cudaStream_t, cudaEvent_t).
 *
 * The ABI is versioned: the core checks abi_version and struct_size before
 * it uses anything, so an old library and a new core (or the reverse) fail
 * with a message instead of calling through a wrong table.
 */
#ifndef GENX_CUDA_ABI_H
#define GENX_CUDA_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GENX_CUDA_ABI_VERSION 1
/* Most sources one reduce_async kernel launch folds; more are folded in
 * groups (left to right, so the order a non-commutative op needs holds). */
#define GENX_CUDA_MAX_SRCS 32

typedef struct genx_cuda_ops {
    int abi_version;    /* GENX_CUDA_ABI_VERSION */
    size_t struct_size; /* sizeof(genx_cuda_ops) the library was built with */

    /* "CUDA runtime 13.0, driver 13.0, 1 device(s): NVIDIA H200" (static string) */
    const char *(*describe)(void);
    const char *(*error_string)(int code);
    int (*device_count)(int *n);

    /* Page-locked host memory (cudaHostAlloc, portable): the staging buffers. */
    int (*host_alloc)(size_t bytes, void **p);
    int (*host_free)(void *p);
    int (*device_alloc)(int device, size_t bytes, void **p);
    int (*device_free)(int device, void *p);

    /* Non-blocking streams (cudaStreamNonBlocking: they do not synchronise
     * with the application's legacy default stream). */
    int (*stream_create)(int device, void **stream);
    int (*stream_destroy)(int device, void *stream);
    int (*stream_synchronize)(int device, void *stream);

    /* Events without timing (cudaEventDisableTiming). */
    int (*event_create)(int device, void **event);
    int (*event_destroy)(int device, void *event);
    int (*event_record)(int device, void *event, void *stream);
    /* *done = 1 when everything recorded before the event finished. */
    int (*event_query)(int device, void *event, int *done);
    int (*event_synchronize)(int device, void *event);

    /* cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream). */
    int (*memcpy_async)(int device, void *dst, const void *src, size_t bytes, void *stream);

    /* 1 when a kernel exists for (dtype, op): genx_dtype / genx_op values
     * of common/genx_types.h (no long double, no GENX_*_OTHER). */
    int (*reduce_supported)(int dtype, int op);
    /* dst[i] = ((dst[i] op srcs[0][i]) op srcs[1][i]) ... for i < count, on
     * device memory, queued on `stream`: the same left fold, the same
     * integer wrap-around and the same NaN behaviour as the host kernels
     * (runtime/reduce.hpp).  No operand may overlap another. */
    int (*reduce_async)(int device, int dtype, int op, void *dst, const void *const *srcs,
                        int nsrcs, size_t count, void *stream);
} genx_cuda_ops;

/* The library's one exported symbol. */
typedef const genx_cuda_ops *(*genx_cuda_ops_fn)(void);
const genx_cuda_ops *genx_cuda_ops_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* GENX_CUDA_ABI_H */
