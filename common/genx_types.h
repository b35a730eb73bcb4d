/*
 * genx_types.h: the plain C value types every layer of genx shares: return
 * codes, element types, operations, the reduce callback, the
 * point-to-point transport and the host fallback supplied by the caller.
 * The runtime's kernels, transports and device path use them, and the C
 * API (genx/genx_core.h) passes them through from the Open MPI glue;
 * keeping them here lets runtime/ depend on no layer above it.
 */
#ifndef GENX_TYPES_H
#define GENX_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
enum {
    GENX_OK = 0,
    GENX_DECLINE = 1, /* genx will not run this call; use the fallback (why says why) */
    GENX_ERROR = 2,   /* a real failure (transport error, out of memory, ...) */
    GENX_ERROR_BUFFER = 3 /* the buffers are device memory genx cannot stage (why says why);
                             nothing was sent, and no other component may be handed them */
};

/* Element types genx reduces with its own kernels.  GENX_DT_OTHER means a
 * contiguous type genx can only move as bytes and reduce through the glue's
 * reduce callback (MINLOC/MAXLOC pairs, user ops). */
typedef enum {
    GENX_DT_INT8, GENX_DT_UINT8, GENX_DT_INT16, GENX_DT_UINT16,
    GENX_DT_INT32, GENX_DT_UINT32, GENX_DT_INT64, GENX_DT_UINT64,
    GENX_DT_FLOAT, GENX_DT_DOUBLE, GENX_DT_LONG_DOUBLE,
    GENX_DT_BOOL, /* C _Bool / MPI_C_BOOL */
    GENX_DT_OTHER
} genx_dtype;

typedef enum {
    GENX_OP_SUM, GENX_OP_PROD, GENX_OP_MIN, GENX_OP_MAX,
    GENX_OP_LAND, GENX_OP_LOR, GENX_OP_LXOR,
    GENX_OP_BAND, GENX_OP_BOR, GENX_OP_BXOR,
    GENX_OP_OTHER /* reduce through genx_reduce_cb */
} genx_op;

/* inout[i] = in[i] (op) inout[i] for i < count elements: MPI_Reduce_local's
 * contract.  Used for GENX_OP_OTHER or GENX_DT_OTHER. */
typedef struct {
    void *ctx;
    void (*reduce)(void *ctx, const void *in, void *inout, size_t count);
} genx_reduce_cb;

/* Non-blocking point-to-point, supplied by the caller.  All calls return 0
 * on success, non-zero on error.  `test` sets *done and, when done, releases
 * the request.  Messages between a pair with the same tag are matched in
 * posting order (MPI's non-overtaking rule); the core relies on nothing else. */
typedef struct {
    void *ctx;
    int (*isend)(void *ctx, const void *buf, size_t bytes, int peer, void **req);
    int (*irecv)(void *ctx, void *buf, size_t bytes, int peer, void **req);
    int (*test)(void *ctx, void *req, int *done);
    int (*progress)(void *ctx);
    /* Optional (NULL: the core loops test and progress): blocks until all n
     * requests completed and releases them.  On error, the entries still
     * posted stay in reqs and the released ones are set to NULL. */
    int (*wait_all)(void *ctx, void **reqs, int n);
    /* Optional (NULL: isend and wait): blocking send, returns once the
     * buffer may be reused.  The core uses it only where waiting for the
     * send cannot hold up a message its peer needs first. */
    int (*send)(void *ctx, const void *buf, size_t bytes, int peer);
    /* Optional (NULL: nothing can be cancelled): tries to cancel a posted
     * request after a failure.  Sets *cancelled to 1 when the request is
     * released and will never touch its buffer again (cancelled or already
     * complete), else 0 and the request stays posted. */
    int (*cancel)(void *ctx, void *req, int *cancelled);
} genx_transport_ops;

/* The displaced component's allreduce on host memory, for calls on device
 * memory that genx leaves to it: genx copies the data into host memory,
 * calls this in place (sendbuf NULL) and copies the result back.  Returns
 * 0 on success, else the MPI error code, which genx returns as why. */
typedef struct genx_host_fallback {
    void *ctx;
    int (*allreduce)(void *ctx, const void *sendbuf, void *recvbuf, size_t count);
} genx_host_fallback;

#ifdef __cplusplus
}
#endif

#endif /* GENX_TYPES_H */
