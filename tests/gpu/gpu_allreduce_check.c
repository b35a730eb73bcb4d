/*
 * gpu_allreduce_check: MPI_Allreduce on CUDA memory, the buffers handed to
 * MPI exactly as an application of a CUDA-aware MPI would hand them, checked
 * bit for bit against a sequential reference computed on the host.
 *
 * Debian's Open MPI 4.1 is not CUDA-aware: its own components dereference
 * device pointers on the host and crash.  genx accepts device buffers and
 * stages them through pinned host memory, so this program passes only where
 * genx serves every call (and must also pass wherever MPI is CUDA-aware).
 *
 * Every (type, op) pair MPI defines for the types below, a commutative user
 * op (MPI_Op_create) on int32, counts 0 1 7 1000 1048579 (and 16777216 for
 * int32 and float), each in six buffer arrangements:
 *   dev        cudaMalloc send and receive buffers
 *   dev-inplace  MPI_IN_PLACE on a cudaMalloc buffer
 *   host->dev  malloc send buffer, cudaMalloc receive buffer
 *   dev->host  cudaMalloc send buffer, malloc receive buffer
 *   managed    cudaMallocManaged send and receive buffers
 *   managed-inplace  MPI_IN_PLACE on a cudaMallocManaged buffer
 * Each rank's input is a function of (rank, index, op), so every rank
 * computes all inputs and folds them in rank order; the values are small
 * integers (or 0/1, or bit patterns), so every reduction order gives the
 * same bits, floating types included.  Besides the result, the send buffer
 * must be unchanged after a call that is not in place and the 64 bytes
 * after the receive buffer's count elements must be untouched.
 *
 * One line per failure on the rank that saw it:
 *   gpu_allreduce_check: FAIL <type> <op> count=<n> <arrangement> rank=<r>
 *     index=<i>: <what>: got <x>, expected <y>
 * (index -1 for an error returned by MPI), then on rank 0
 *   gpu_allreduce_check: N cases, F failures on P ranks (device: <name>)
 * Exit status 0 when every case passed, 1 otherwise, 77 (on every rank,
 * after MPI_Finalize) when some rank has no usable CUDA device.
 *
 * Each rank uses device (node-local rank) % (devices on its node); on one
 * node that is rank % devices.  The application synchronises the device
 * before every MPI call, as CUDA-aware MPIs require (cudaMemset is
 * asynchronous with respect to the host).
 *
 * Public MPI API and the CUDA runtime API only.
 */
#include <mpi.h>
#include <cuda_runtime_api.h>

#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 64
#define GUARD_BYTE 0xa5
#define FILL_BYTE 0x5a

static int nranks, myrank;
static long ncases, nfailures;

/* A CUDA call of the harness itself (allocation, copy) failing is not a
 * result of MPI_Allreduce: the program cannot go on meaningfully. */
#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t ck_err_ = (call);                                                         \
        if (cudaSuccess != ck_err_) {                                                         \
            fprintf(stderr, "gpu_allreduce_check: rank %d: %s failed: %s (%s:%d)\n", myrank,  \
                    #call, cudaGetErrorString(ck_err_), __FILE__, __LINE__);                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                     \
        }                                                                                     \
    } while (0)

enum opcode { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_LAND, OP_LOR, OP_BAND, OP_BXOR, OP_USER, NOPS };
static const char *const op_names[NOPS] = { "SUM", "PROD", "MIN", "MAX", "LAND",
                                            "LOR", "BAND", "BXOR", "USER(a+b+1)" };
#define OPS_INTEGER ((1u << OP_SUM) | (1u << OP_PROD) | (1u << OP_MIN) | (1u << OP_MAX) | \
                     (1u << OP_LAND) | (1u << OP_LOR) | (1u << OP_BAND) | (1u << OP_BXOR))
#define OPS_FLOAT ((1u << OP_SUM) | (1u << OP_PROD) | (1u << OP_MIN) | (1u << OP_MAX))
#define OPS_BOOL ((1u << OP_LAND) | (1u << OP_LOR))

static MPI_Op user_op;

static MPI_Op mpi_op(enum opcode op)
{
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    case OP_MAX: return MPI_MAX;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_BAND: return MPI_BAND;
    case OP_BXOR: return MPI_BXOR;
    case OP_USER: return user_op;
    case NOPS: break;
    }
    return MPI_OP_NULL;
}

/* Commutative and associative: f(f(a,b),c) = a+b+c+2 = f(a,f(b,c)).  The
 * +1 makes a plan that counts a rank twice or drops one visible, and MPI
 * calls it on the host, so genx must hand it host memory. */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (int i = 0; i < *len; ++i)
        b[i] = a[i] + b[i] + 1;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t input_hash(int rank, long index, int salt)
{
    return mix(((uint64_t) rank << 40) ^ ((uint64_t) index << 8) ^ (uint64_t) salt);
}

/*
 * Per C type: fill (one rank's inputs), fold (acc = acc op in, elementwise)
 * and format (one element, for a failure line).  Values per op keep every
 * result exact and free of signed overflow for the rank counts this runs
 * on: SUM and USER in [-5,5] (unsigned [0,7]), PROD in {-1,1,2} (unsigned
 * {1,2}), MIN/MAX in [-1000,1000] (unsigned: full width), bitwise ops on
 * wide patterns, logical ops on 0/1.  PROD folds in unsigned arithmetic so
 * that a large rank count wraps as MPI's kernels do instead of being
 * undefined behaviour here.
 */
#define DEFINE_TYPE(NAME, CTYPE, IS_SIGNED, IS_FLOAT, FMT, CAST)                          \
    static CTYPE NAME##_input(int rank, long i, enum opcode op)                                 \
    {                                                                                           \
        uint64_t h = input_hash(rank, i, (int) op);                                             \
        switch (op) {                                                                           \
        case OP_SUM:                                                                            \
        case OP_USER:                                                                           \
            return (IS_SIGNED || IS_FLOAT) ? (CTYPE) ((long long) (h % 11) - 5) : (CTYPE) (h % 8); \
        case OP_PROD: {                                                                         \
            CTYPE v = (CTYPE) ((0 == h % 4) ? 2 : 1);                                           \
            if ((IS_SIGNED || IS_FLOAT) && 0 == (h >> 8) % 5)                                   \
                v = (CTYPE) (-(long long) v);                                                   \
            return v;                                                                           \
        }                                                                                       \
        case OP_MIN:                                                                            \
        case OP_MAX:                                                                            \
            return (IS_SIGNED || IS_FLOAT) ? (CTYPE) ((long long) (h % 2001) - 1000)            \
                                           : (CTYPE) (h >> 3);                                  \
        case OP_BAND:                                                                           \
        case OP_BXOR:                                                                           \
            return IS_SIGNED ? (CTYPE) ((long long) (h % 60001) - 30000) : (CTYPE) (h >> 5);    \
        case OP_LAND:                                                                           \
            return (CTYPE) (0 != h % 7);                                                        \
        case OP_LOR:                                                                            \
            return (CTYPE) (0 == h % 7);                                                        \
        case NOPS:                                                                              \
            break;                                                                              \
        }                                                                                       \
        return (CTYPE) 0;                                                                       \
    }                                                                                           \
    static void NAME##_fill(void *buf, long count, int rank, enum opcode op)                    \
    {                                                                                           \
        CTYPE *p = buf;                                                                         \
        for (long i = 0; i < count; ++i)                                                        \
            p[i] = NAME##_input(rank, i, op);                                                   \
    }                                                                                           \
    static void NAME##_fold(void *acc, const void *in, long count, enum opcode op)              \
    {                                                                                           \
        CTYPE *a = acc;                                                                         \
        const CTYPE *b = in;                                                                    \
        for (long i = 0; i < count; ++i)                                                        \
            a[i] = NAME##_combine(a[i], b[i], op);                                              \
    }                                                                                           \
    static void NAME##_format(const void *elem, char *buf, size_t len)                          \
    {                                                                                           \
        CTYPE v;                                                                                \
        memcpy(&v, elem, sizeof v);                                                             \
        snprintf(buf, len, FMT, (CAST) v);                                                      \
    }

#define DEFINE_INT_COMBINE(NAME, CTYPE, UTYPE)                                                  \
    static CTYPE NAME##_combine(CTYPE a, CTYPE b, enum opcode op)                               \
    {                                                                                           \
        switch (op) {                                                                           \
        case OP_SUM: return (CTYPE) ((UTYPE) a + (UTYPE) b);                                    \
        case OP_USER: return (CTYPE) ((UTYPE) a + (UTYPE) b + 1u);                              \
        case OP_PROD: return (CTYPE) ((UTYPE) a * (UTYPE) b);                                   \
        case OP_MIN: return a < b ? a : b;                                                      \
        case OP_MAX: return a > b ? a : b;                                                      \
        case OP_LAND: return (CTYPE) (a && b);                                                  \
        case OP_LOR: return (CTYPE) (a || b);                                                   \
        case OP_BAND: return (CTYPE) (a & b);                                                   \
        case OP_BXOR: return (CTYPE) (a ^ b);                                                   \
        case NOPS: break;                                                                       \
        }                                                                                       \
        return a;                                                                               \
    }
#define DEFINE_FLOAT_COMBINE(NAME, CTYPE)                                                       \
    static CTYPE NAME##_combine(CTYPE a, CTYPE b, enum opcode op)                               \
    {                                                                                           \
        switch (op) {                                                                           \
        case OP_SUM: return a + b;                                                              \
        case OP_PROD: return a * b;                                                             \
        case OP_MIN: return a < b ? a : b;                                                      \
        case OP_MAX: return a > b ? a : b;                                                      \
        default: break; /* MPI defines no other op on floating types */                         \
        }                                                                                       \
        return a;                                                                               \
    }
#define DEFINE_BOOL_COMBINE(NAME, CTYPE)                                                        \
    static CTYPE NAME##_combine(CTYPE a, CTYPE b, enum opcode op)                               \
    {                                                                                           \
        return OP_LAND == op ? (a && b) : (a || b);                                             \
    }

DEFINE_INT_COMBINE(t_i32, int32_t, uint32_t)
DEFINE_TYPE(t_i32, int32_t, 1, 0, "%lld", long long)
DEFINE_INT_COMBINE(t_i64, int64_t, uint64_t)
DEFINE_TYPE(t_i64, int64_t, 1, 0, "%lld", long long)
DEFINE_INT_COMBINE(t_u8, uint8_t, unsigned)
DEFINE_TYPE(t_u8, uint8_t, 0, 0, "%u", unsigned)
DEFINE_FLOAT_COMBINE(t_flt, float)
DEFINE_TYPE(t_flt, float, 1, 1, "%.9g", double)
DEFINE_FLOAT_COMBINE(t_dbl, double)
DEFINE_TYPE(t_dbl, double, 1, 1, "%.17g", double)
DEFINE_BOOL_COMBINE(t_bool, _Bool)
DEFINE_TYPE(t_bool, _Bool, 0, 0, "%d", int)
DEFINE_FLOAT_COMBINE(t_ldbl, long double)
DEFINE_TYPE(t_ldbl, long double, 1, 1, "%.21Lg", long double)

/* x87 extended precision keeps its 80 value bits in the first 10 bytes of
 * a 16-byte long double; the rest is padding no kernel need preserve. */
#if LDBL_MANT_DIG == 64
#define LDBL_VALUE_BYTES 10
#else
#define LDBL_VALUE_BYTES sizeof(long double)
#endif

struct type_desc {
    const char *name;
    MPI_Datatype dt;
    size_t size;        /* bytes per element */
    size_t value_bytes; /* bytes of each element that must match */
    unsigned ops;       /* bit mask of enum opcode */
    bool huge;          /* also runs the 16 Mi element count */
    void (*fill)(void *, long, int, enum opcode);
    void (*fold)(void *, const void *, long, enum opcode);
    void (*format)(const void *, char *, size_t);
};

enum arrangement { A_DEV, A_DEV_INPLACE, A_HOST_DEV, A_DEV_HOST, A_MANAGED, A_MANAGED_INPLACE,
                   NARR };
static const char *const arr_names[NARR] = { "dev", "dev-inplace", "host->dev",
                                             "dev->host", "managed", "managed-inplace" };

enum space { S_HOST, S_DEVICE, S_MANAGED };

static void *alloc_in(enum space s, size_t bytes)
{
    void *p = NULL;
    switch (s) {
    case S_HOST:
        p = malloc(bytes);
        if (NULL == p) {
            fprintf(stderr, "gpu_allreduce_check: rank %d: malloc(%zu) failed\n", myrank, bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        break;
    case S_DEVICE:
        CK(cudaMalloc(&p, bytes));
        break;
    case S_MANAGED:
        CK(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal));
        break;
    }
    return p;
}

static void free_in(enum space s, void *p)
{
    if (S_HOST == s)
        free(p);
    else
        CK(cudaFree(p));
}

/* Host <-> any space: with unified addressing cudaMemcpyDefault takes the
 * direction from the pointers, for pageable host memory as well. */
static void copy(void *dst, const void *src, size_t bytes)
{
    if (bytes > 0)
        CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

static void set_bytes(enum space s, void *p, int byte, size_t bytes)
{
    if (S_HOST == s)
        memset(p, byte, bytes);
    else
        CK(cudaMemset(p, byte, bytes));
}

static void fail(const struct type_desc *t, enum opcode op, long count, enum arrangement a,
                 long index, const char *what, const char *got, const char *expected)
{
    ++nfailures;
    fprintf(stderr,
            "gpu_allreduce_check: FAIL %s %s count=%ld %s rank=%d index=%ld: %s: got %s, "
            "expected %s\n",
            t->name, op_names[op], count, arr_names[a], myrank, index, what, got, expected);
}

/* First element whose value bytes differ, or -1. */
static long first_diff(const struct type_desc *t, const char *x, const char *y, long count)
{
    for (long i = 0; i < count; ++i)
        if (0 != memcmp(x + (size_t) i * t->size, y + (size_t) i * t->size, t->value_bytes))
            return i;
    return -1;
}

static void fail_elem(const struct type_desc *t, enum opcode op, long count, enum arrangement a,
                      long i, const char *what, const char *got, const char *expected)
{
    char g[64], e[64];
    t->format(got + (size_t) i * t->size, g, sizeof g);
    t->format(expected + (size_t) i * t->size, e, sizeof e);
    fail(t, op, count, a, i, what, g, e);
}

/*
 * One case: `input` is this rank's input, `expect` the reduction over all
 * ranks (both on the host); `scratch` holds what is copied back.  The
 * receive buffer carries GUARD_BYTES after its count elements.
 */
static void run_case(const struct type_desc *t, enum opcode op, long count, enum arrangement a,
                     const char *input, const char *expect, char *scratch)
{
    static const enum space send_space[NARR] = { S_DEVICE, S_DEVICE, S_HOST,
                                                 S_DEVICE, S_MANAGED, S_MANAGED };
    static const enum space recv_space[NARR] = { S_DEVICE, S_DEVICE, S_DEVICE,
                                                 S_HOST, S_MANAGED, S_MANAGED };
    bool in_place = A_DEV_INPLACE == a || A_MANAGED_INPLACE == a;
    size_t bytes = (size_t) count * t->size;
    /* At least one element, so that count 0 still passes real device pointers. */
    size_t alloc = (count > 0 ? bytes : t->size);
    void *sbuf = in_place ? NULL : alloc_in(send_space[a], alloc);
    void *rbuf = alloc_in(recv_space[a], alloc + GUARD_BYTES);
    int rc;

    set_bytes(recv_space[a], rbuf, FILL_BYTE, alloc);
    set_bytes(recv_space[a], (char *) rbuf + alloc, GUARD_BYTE, GUARD_BYTES);
    copy(in_place ? rbuf : sbuf, input, bytes);
    CK(cudaDeviceSynchronize());
    rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, (int) count, t->dt, mpi_op(op),
                       MPI_COMM_WORLD);
    ++ncases;

    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fail(t, op, count, a, -1, "MPI_Allreduce returned an error", msg, "MPI_SUCCESS");
    } else {
        long i;
        copy(scratch, rbuf, bytes);
        if ((i = first_diff(t, scratch, expect, count)) >= 0)
            fail_elem(t, op, count, a, i, "result", scratch, expect);
        unsigned char guard[GUARD_BYTES];
        copy(guard, (char *) rbuf + alloc, GUARD_BYTES);
        for (int g = 0; g < GUARD_BYTES; ++g) {
            if (GUARD_BYTE != guard[g]) {
                char got[16], want[16];
                snprintf(got, sizeof got, "0x%02x", guard[g]);
                snprintf(want, sizeof want, "0x%02x", GUARD_BYTE);
                fail(t, op, count, a, count, "byte after the receive buffer written", got, want);
                break;
            }
        }
        if (!in_place) {
            copy(scratch, sbuf, bytes);
            /* The send buffer is compared byte for byte, padding included:
             * MPI may not write to it at all. */
            if (0 != memcmp(scratch, input, bytes)) {
                for (i = 0; i < count; ++i)
                    if (0 != memcmp(scratch + (size_t) i * t->size, input + (size_t) i * t->size,
                                    t->size))
                        break;
                fail_elem(t, op, count, a, i, "send buffer changed", scratch, input);
            }
        }
    }
    if (!in_place)
        free_in(send_space[a], sbuf);
    free_in(recv_space[a], rbuf);
}

int main(int argc, char **argv)
{
    int ndev = 0, have = 1, all_have = 0;
    cudaError_t err;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &myrank);

    /* Every rank decides together: one rank skipping while the others go
     * on would leave them waiting in the first collective. */
    err = cudaGetDeviceCount(&ndev);
    if (cudaSuccess != err || ndev < 1)
        have = 0;
    MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_have) {
        if (0 == myrank)
            printf("SKIP: no CUDA device (%s)\n",
                   !have ? (cudaSuccess != err ? cudaGetErrorString(err)
                                               : "cudaGetDeviceCount found 0 devices")
                         : "another rank has none");
        MPI_Finalize();
        return 77;
    }

    /* The node-local rank picks the device, so ranks on several nodes
     * spread over each node's devices (on one node: rank % devices). */
    MPI_Comm node;
    int local_rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    int dev = local_rank % ndev;
    CK(cudaSetDevice(dev));
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));

    /* Errors come back as return codes, so a failing call is reported as
     * one failure instead of aborting the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op_create(user_fn, 1, &user_op);

    const struct type_desc types[] = {
        { "MPI_INT32_T", MPI_INT32_T, sizeof(int32_t), sizeof(int32_t),
          OPS_INTEGER | (1u << OP_USER), true, t_i32_fill, t_i32_fold, t_i32_format },
        { "MPI_INT64_T", MPI_INT64_T, sizeof(int64_t), sizeof(int64_t), OPS_INTEGER, false,
          t_i64_fill, t_i64_fold, t_i64_format },
        { "MPI_UINT8_T", MPI_UINT8_T, sizeof(uint8_t), sizeof(uint8_t), OPS_INTEGER, false,
          t_u8_fill, t_u8_fold, t_u8_format },
        { "MPI_FLOAT", MPI_FLOAT, sizeof(float), sizeof(float), OPS_FLOAT, true, t_flt_fill,
          t_flt_fold, t_flt_format },
        { "MPI_DOUBLE", MPI_DOUBLE, sizeof(double), sizeof(double), OPS_FLOAT, false,
          t_dbl_fill, t_dbl_fold, t_dbl_format },
        { "MPI_C_BOOL", MPI_C_BOOL, sizeof(_Bool), sizeof(_Bool), OPS_BOOL, false, t_bool_fill,
          t_bool_fold, t_bool_format },
        { "MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, sizeof(long double), LDBL_VALUE_BYTES,
          1u << OP_SUM, false, t_ldbl_fill, t_ldbl_fold, t_ldbl_format },
    };
    const long counts[] = { 0, 1, 7, 1000, 1048579, 16777216 };
    const int ncounts = (int) (sizeof counts / sizeof counts[0]);
    const long max_count = counts[ncounts - 1];
    size_t max_bytes = (size_t) max_count * sizeof(long double);
    char *input = malloc(max_bytes), *expect = malloc(max_bytes), *other = malloc(max_bytes),
         *scratch = malloc(max_bytes);
    if (!input || !expect || !other || !scratch) {
        fprintf(stderr, "gpu_allreduce_check: rank %d: cannot allocate 4 x %zu bytes\n", myrank,
                max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
        const struct type_desc *t = &types[ti];
        for (int op = 0; op < NOPS; ++op) {
            if (!(t->ops & (1u << op)))
                continue;
            for (int ci = 0; ci < ncounts; ++ci) {
                long count = counts[ci];
                if (count == max_count && !t->huge)
                    continue;
                /* The reference once per (type, op, count), for all six
                 * arrangements: rank 0's input folded with each next rank's. */
                t->fill(expect, count, 0, (enum opcode) op);
                for (int r = 1; r < nranks; ++r) {
                    t->fill(other, count, r, (enum opcode) op);
                    t->fold(expect, other, count, (enum opcode) op);
                }
                t->fill(input, count, myrank, (enum opcode) op);
                for (int a = 0; a < NARR; ++a)
                    run_case(t, (enum opcode) op, count, (enum arrangement) a, input, expect,
                             scratch);
            }
        }
    }

    long total_failures = 0;
    MPI_Reduce(&nfailures, &total_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == myrank) {
        printf("gpu_allreduce_check: %ld cases, %ld failures on %d ranks (device: %s)\n", ncases,
               total_failures, nranks, prop.name);
        fflush(stdout);
    }
    int status = total_failures > 0;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);

    MPI_Op_free(&user_op);
    free(input);
    free(expect);
    free(other);
    free(scratch);
    MPI_Finalize();
    return status;
}
