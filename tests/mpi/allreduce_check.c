/*
 * allreduce_check: MPI_Allreduce on MPI_COMM_WORLD (served by genx when the
 * component is loaded) checked bit for bit against
 *   1. a sequential reference: every input is a function of (rank, index),
 *      so each rank computes every other rank's input and folds them in
 *      rank order;
 *   2. Open MPI's own result on a duplicate of MPI_COMM_WORLD created with
 *      the info key ompi_comm_coll_preference = "^genx", which makes Open
 *      MPI 4.1 leave genx out when it selects that communicator's
 *      collectives.
 * Inputs are integer-valued and small, so every order of reduction gives
 * the same bits, also for float and double.
 *
 * Besides the built-in (type, op) pairs it runs cases genx must hand to
 * its fallback or reduce through MPI's own operators: a non-commutative
 * user op (2x2 integer matrix product), an MPI_Type_vector datatype (with
 * its gaps checked untouched), a commutative user op and MPI_MINLOC on
 * MPI_2INT.
 *
 * With --others it also checks collectives genx does not provide (barrier,
 * bcast, allgather, reduce, alltoall, ibarrier, ibcast, and allreduce and
 * barrier on an intercommunicator) and says so on rank 0 before PASS.
 *
 * Public MPI only.  Exit status 0 when everything matched; otherwise every
 * rank prints its first mismatches (type, op, count, in place, rank,
 * index, got, expected) and the program exits 1.
 */
#include <mpi.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPORTS 10

static int nranks, myrank;
static MPI_Comm ref_comm; /* genx excluded */
static long ncases, nfailures;

enum opcode { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR, OP_BXOR, OP_LAND, OP_LOR, OP_LXOR };
static const char *const op_names[] = { "SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR",
                                        "LAND", "LOR", "LXOR" };

static MPI_Op mpi_op(enum opcode op)
{
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_MAX: return MPI_MAX;
    case OP_MIN: return MPI_MIN;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_LXOR: return MPI_LXOR;
    }
    return MPI_OP_NULL;
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

static void report(const char *what, const char *type, const char *op, int count, bool in_place,
                   long index, const char *got, const char *expected)
{
    ++nfailures;
    if (nfailures <= MAX_REPORTS) {
        fprintf(stderr,
                "allreduce_check: MISMATCH (%s): type=%s op=%s count=%d in_place=%d "
                "rank=%d index=%ld: got %s, expected %s\n",
                what, type, op, count, in_place ? 1 : 0, myrank, index, got, expected);
    }
}

static void check_rc(int rc, const char *type, const char *op, int count, bool in_place)
{
    if (MPI_SUCCESS != rc) {
        char got[MPI_MAX_ERROR_STRING + 32];
        int len = 0;

        MPI_Error_string(rc, got, &len);
        report("MPI_Allreduce on MPI_COMM_WORLD returned an error", type, op, count, in_place,
               -1, got, "MPI_SUCCESS");
    }
}

/*
 * One C type: input generator, sequential reference, checked run.  Values
 * per op keep every result exact and free of signed overflow:
 * SUM in [-5,5] (unsigned [0,7]), PROD in {-1,1,2} (unsigned {1,2}),
 * MAX/MIN in [-1000,1000] (unsigned: full width), bitwise ops on wide
 * patterns (signed [-30000,30000]), logical ops on 0/1.
 */
#define DEFINE_TYPE(NAME, CTYPE, MPITYPE, IS_SIGNED, IS_FLOAT, FMT, CAST)                          \
    static CTYPE NAME##_input(int rank, long i, enum opcode op)                                 \
    {                                                                                           \
        uint64_t h = input_hash(rank, i, (int) op);                                             \
        switch (op) {                                                                           \
        case OP_SUM:                                                                            \
            return (IS_SIGNED || IS_FLOAT) ? (CTYPE) ((long long) (h % 11) - 5) : (CTYPE) (h % 8); \
        case OP_PROD: {                                                                         \
            CTYPE v = (CTYPE) ((0 == h % 4) ? 2 : 1);                                           \
            if ((IS_SIGNED || IS_FLOAT) && 0 == (h >> 8) % 5) {                                 \
                v = (CTYPE) (-(long long) v);                                                   \
            }                                                                                   \
            return v;                                                                           \
        }                                                                                       \
        case OP_MAX:                                                                            \
        case OP_MIN:                                                                            \
            return (IS_SIGNED || IS_FLOAT) ? (CTYPE) ((long long) (h % 2001) - 1000)            \
                                           : (CTYPE) (h >> 3);                                  \
        case OP_BAND:                                                                           \
        case OP_BOR:                                                                            \
        case OP_BXOR:                                                                           \
            return IS_SIGNED ? (CTYPE) ((long long) (h % 60001) - 30000) : (CTYPE) (h >> 5);    \
        case OP_LAND:                                                                           \
            return (CTYPE) (0 != h % 7);                                                        \
        case OP_LOR:                                                                            \
            return (CTYPE) (0 == h % 7);                                                        \
        case OP_LXOR:                                                                           \
            return (CTYPE) (h & 1);                                                             \
        }                                                                                       \
        return (CTYPE) 0;                                                                       \
    }                                                                                           \
                                                                                                \
    static CTYPE NAME##_combine(CTYPE a, CTYPE b, enum opcode op)                               \
    {                                                                                           \
        switch (op) {                                                                           \
        case OP_SUM: return (CTYPE) (a + b);                                                    \
        case OP_MAX: return (a > b) ? a : b;                                                    \
        case OP_MIN: return (a < b) ? a : b;                                                    \
        case OP_LAND: return (CTYPE) (a && b);                                                  \
        case OP_LOR: return (CTYPE) (a || b);                                                   \
        case OP_LXOR: return (CTYPE) (!a != !b);                                                \
        default: return NAME##_other(a, b, op);                                                 \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static void NAME##_run(enum opcode op, int count, bool in_place)                            \
    {                                                                                           \
        size_t n = (size_t) (count > 0 ? count : 1);                                            \
        CTYPE *in = malloc(n * sizeof(CTYPE));                                                  \
        CTYPE *out = malloc(n * sizeof(CTYPE));                                                 \
        CTYPE *ompi = malloc(n * sizeof(CTYPE));                                                \
        CTYPE *expect = malloc(n * sizeof(CTYPE));                                              \
        char got[64], want[64];                                                                 \
        int rc;                                                                                 \
                                                                                                \
        for (long i = 0; i < count; ++i) {                                                      \
            CTYPE acc = NAME##_input(0, i, op);                                                 \
            for (int r = 1; r < nranks; ++r) {                                                  \
                acc = NAME##_combine(acc, NAME##_input(r, i, op), op);                          \
            }                                                                                   \
            expect[i] = acc;                                                                    \
            in[i] = NAME##_input(myrank, i, op);                                                \
        }                                                                                       \
        memcpy(out, in, n * sizeof(CTYPE));                                                     \
        if (in_place) {                                                                         \
            rc = MPI_Allreduce(MPI_IN_PLACE, out, count, MPITYPE, mpi_op(op), MPI_COMM_WORLD);  \
        } else {                                                                                \
            memset(out, 0x5a, n * sizeof(CTYPE));                                               \
            rc = MPI_Allreduce(in, out, count, MPITYPE, mpi_op(op), MPI_COMM_WORLD);            \
        }                                                                                       \
        memcpy(ompi, in, n * sizeof(CTYPE));                                                    \
        MPI_Allreduce(MPI_IN_PLACE, ompi, count, MPITYPE, mpi_op(op), ref_comm);                \
        ++ncases;                                                                               \
        check_rc(rc, #MPITYPE, op_names[op], count, in_place);                                  \
        for (long i = 0; i < count; ++i) {                                                      \
            if (0 != memcmp(&out[i], &expect[i], sizeof(CTYPE))) {                              \
                snprintf(got, sizeof(got), FMT, (CAST) out[i]);                                 \
                snprintf(want, sizeof(want), FMT, (CAST) expect[i]);                            \
                report("MPI_COMM_WORLD vs sequential reference", #MPITYPE, op_names[op], count, \
                       in_place, i, got, want);                                                 \
                break;                                                                          \
            }                                                                                   \
        }                                                                                       \
        for (long i = 0; i < count; ++i) {                                                      \
            if (0 != memcmp(&out[i], &ompi[i], sizeof(CTYPE))) {                                \
                snprintf(got, sizeof(got), FMT, (CAST) out[i]);                                 \
                snprintf(want, sizeof(want), FMT, (CAST) ompi[i]);                              \
                report("MPI_COMM_WORLD vs Open MPI without genx", #MPITYPE, op_names[op],       \
                       count, in_place, i, got, want);                                          \
                break;                                                                          \
            }                                                                                   \
        }                                                                                       \
        free(in);                                                                               \
        free(out);                                                                              \
        free(ompi);                                                                             \
        free(expect);                                                                           \
    }

/* PROD and the bitwise ops, which differ between integer, floating and
 * boolean types (MPI accepts no bitwise op on floating types and no PROD
 * on MPI_C_BOOL, so those branches are never reached). */
#define DEFINE_INT_OTHER(NAME, CTYPE)                                                           \
    static CTYPE NAME##_other(CTYPE a, CTYPE b, enum opcode op)                                 \
    {                                                                                           \
        switch (op) {                                                                           \
        case OP_PROD: return (CTYPE) (a * b);                                                   \
        case OP_BAND: return (CTYPE) (a & b);                                                   \
        case OP_BOR: return (CTYPE) (a | b);                                                    \
        default: return (CTYPE) (a ^ b);                                                        \
        }                                                                                       \
    }
#define DEFINE_FLOAT_OTHER(NAME, CTYPE)                                                         \
    static CTYPE NAME##_other(CTYPE a, CTYPE b, enum opcode op)                                 \
    {                                                                                           \
        (void) op;                                                                              \
        return a * b;                                                                           \
    }
#define DEFINE_BOOL_OTHER(NAME, CTYPE)                                                          \
    static CTYPE NAME##_other(CTYPE a, CTYPE b, enum opcode op)                                 \
    {                                                                                           \
        switch (op) {                                                                           \
        case OP_BAND: return a && b;                                                            \
        case OP_BOR: return a || b;                                                             \
        default: return a != b;                                                                 \
        }                                                                                       \
    }

DEFINE_INT_OTHER(t_int, int)
DEFINE_TYPE(t_int, int, MPI_INT, 1, 0, "%lld", long long)
DEFINE_INT_OTHER(t_llong, long long)
DEFINE_TYPE(t_llong, long long, MPI_LONG_LONG, 1, 0, "%lld", long long)
DEFINE_INT_OTHER(t_long, long)
DEFINE_TYPE(t_long, long, MPI_LONG, 1, 0, "%lld", long long)
DEFINE_INT_OTHER(t_ulong, unsigned long)
DEFINE_TYPE(t_ulong, unsigned long, MPI_UNSIGNED_LONG, 0, 0, "%llu", unsigned long long)
DEFINE_INT_OTHER(t_short, short)
DEFINE_TYPE(t_short, short, MPI_SHORT, 1, 0, "%lld", long long)
DEFINE_INT_OTHER(t_uchar, unsigned char)
DEFINE_TYPE(t_uchar, unsigned char, MPI_UNSIGNED_CHAR, 0, 0, "%llu", unsigned long long)
DEFINE_INT_OTHER(t_u64, uint64_t)
DEFINE_TYPE(t_u64, uint64_t, MPI_UINT64_T, 0, 0, "%llu", unsigned long long)
DEFINE_INT_OTHER(t_byte, unsigned char)
DEFINE_TYPE(t_byte, unsigned char, MPI_BYTE, 0, 0, "%llu", unsigned long long)
DEFINE_BOOL_OTHER(t_bool, _Bool)
DEFINE_TYPE(t_bool, _Bool, MPI_C_BOOL, 0, 0, "%d", int)
DEFINE_FLOAT_OTHER(t_float, float)
DEFINE_TYPE(t_float, float, MPI_FLOAT, 1, 1, "%.9g", double)
DEFINE_FLOAT_OTHER(t_double, double)
DEFINE_TYPE(t_double, double, MPI_DOUBLE, 1, 1, "%.17g", double)

typedef struct {
    const char *name;
    void (*run)(enum opcode op, int count, bool in_place);
    const enum opcode *ops;
    int nops;
} type_case;

static const enum opcode int_ops[] = { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR, OP_BXOR };
static const enum opcode int_and_logic_ops[] = { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR,
                                                 OP_BXOR, OP_LAND, OP_LOR, OP_LXOR };
static const enum opcode float_ops[] = { OP_SUM, OP_PROD, OP_MAX, OP_MIN };
static const enum opcode bool_ops[] = { OP_LAND, OP_LOR, OP_LXOR };
static const enum opcode bitwise_ops[] = { OP_BAND, OP_BOR, OP_BXOR };

#define NOPS(a) ((int) (sizeof(a) / sizeof((a)[0])))

static const type_case type_cases[] = {
    { "int", t_int_run, int_and_logic_ops, NOPS(int_and_logic_ops) },
    { "long long", t_llong_run, int_ops, NOPS(int_ops) },
    { "float", t_float_run, float_ops, NOPS(float_ops) },
    { "double", t_double_run, float_ops, NOPS(float_ops) },
    { "unsigned char", t_uchar_run, int_ops, NOPS(int_ops) },
    { "short", t_short_run, int_ops, NOPS(int_ops) },
    { "long", t_long_run, int_ops, NOPS(int_ops) },
    { "unsigned long", t_ulong_run, int_ops, NOPS(int_ops) },
    { "uint64_t", t_u64_run, int_ops, NOPS(int_ops) },
    { "MPI_BYTE", t_byte_run, bitwise_ops, NOPS(bitwise_ops) },
    { "_Bool", t_bool_run, bool_ops, NOPS(bool_ops) },
};

/* ---------------------------------------------------------------------------
 * Non-commutative user op: 2x2 integer matrix product.  MPI combines in rank
 * order, so the result must be M(0) * M(1) * ... * M(P-1).  The factors
 * {{1,1},{0,1}}, {{1,0},{1,1}} and {{2,1},{1,1}} do not commute and keep the
 * entries far below INT_MAX for the process counts tested.
 */
typedef struct {
    int a, b, c, d;
} mat2;

static mat2 mat_input(int rank, long i)
{
    static const mat2 factors[3] = { { 1, 1, 0, 1 }, { 1, 0, 1, 1 }, { 2, 1, 1, 1 } };

    return factors[input_hash(rank, i, 99) % 3];
}

static mat2 mat_mul(mat2 x, mat2 y)
{
    mat2 r = { x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d,
               x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d };
    return r;
}

/* inout = in * inout: `in` holds the lower ranks' partial product. */
static void mat_mul_op(void *in, void *inout, int *len, MPI_Datatype *dtype)
{
    mat2 *x = in, *y = inout;

    (void) dtype;
    for (int k = 0; k < *len; ++k) {
        y[k] = mat_mul(x[k], y[k]);
    }
}

static void run_matmul(MPI_Datatype mat_type, MPI_Op op, int count, bool in_place)
{
    size_t n = (size_t) (count > 0 ? count : 1);
    mat2 *in = malloc(n * sizeof(mat2)), *out = malloc(n * sizeof(mat2));
    mat2 *ompi = malloc(n * sizeof(mat2));
    char got[96], want[96];
    int rc;

    for (long i = 0; i < count; ++i) {
        in[i] = mat_input(myrank, i);
    }
    memcpy(out, in, n * sizeof(mat2));
    if (in_place) {
        rc = MPI_Allreduce(MPI_IN_PLACE, out, count, mat_type, op, MPI_COMM_WORLD);
    } else {
        memset(out, 0, n * sizeof(mat2));
        rc = MPI_Allreduce(in, out, count, mat_type, op, MPI_COMM_WORLD);
    }
    memcpy(ompi, in, n * sizeof(mat2));
    MPI_Allreduce(MPI_IN_PLACE, ompi, count, mat_type, op, ref_comm);
    ++ncases;
    check_rc(rc, "2x2 int matrix", "non-commutative user op (matrix product)", count, in_place);
    for (long i = 0; i < count; ++i) {
        mat2 e = mat_input(0, i);

        for (int r = 1; r < nranks; ++r) {
            e = mat_mul(e, mat_input(r, i));
        }
        if (0 != memcmp(&out[i], &e, sizeof(e)) || 0 != memcmp(&ompi[i], &e, sizeof(e))) {
            const mat2 *bad = (0 != memcmp(&out[i], &e, sizeof(e))) ? &out[i] : &ompi[i];

            snprintf(got, sizeof(got), "{{%d,%d},{%d,%d}}", bad->a, bad->b, bad->c, bad->d);
            snprintf(want, sizeof(want), "{{%d,%d},{%d,%d}}", e.a, e.b, e.c, e.d);
            report(bad == &out[i] ? "MPI_COMM_WORLD vs sequential reference"
                                  : "Open MPI without genx vs sequential reference",
                   "2x2 int matrix", "non-commutative user op (matrix product)", count,
                   in_place, i, got, want);
            break;
        }
    }
    free(in);
    free(out);
    free(ompi);
}

/* Commutative user op: integer sum, so genx reduces through the callback. */
static void int_sum_op(void *in, void *inout, int *len, MPI_Datatype *dtype)
{
    const int *x = in;
    int *y = inout;

    (void) dtype;
    for (int k = 0; k < *len; ++k) {
        y[k] += x[k];
    }
}

static void run_user_sum(MPI_Op op, int count, bool in_place)
{
    size_t n = (size_t) (count > 0 ? count : 1);
    int *buf = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
    char got[32], want[32];
    int rc;

    for (long i = 0; i < count; ++i) {
        in[i] = t_int_input(myrank, i, OP_SUM);
    }
    if (in_place) {
        memcpy(buf, in, n * sizeof(int));
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_INT, op, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allreduce(in, buf, count, MPI_INT, op, MPI_COMM_WORLD);
    }
    ++ncases;
    check_rc(rc, "MPI_INT", "commutative user op (sum)", count, in_place);
    for (long i = 0; i < count; ++i) {
        int e = 0;

        for (int r = 0; r < nranks; ++r) {
            e += t_int_input(r, i, OP_SUM);
        }
        if (buf[i] != e) {
            snprintf(got, sizeof(got), "%d", buf[i]);
            snprintf(want, sizeof(want), "%d", e);
            report("MPI_COMM_WORLD vs sequential reference", "MPI_INT",
                   "commutative user op (sum)", count, in_place, i, got, want);
            break;
        }
    }
    free(buf);
    free(in);
}

/* MPI_Type_vector(2, 1, 2, MPI_INT): ints at offsets 0 and 2 of each
 * 3-int element, offset 1 a gap that must keep its sentinel.  Open MPI 4.1
 * accepts no predefined op on a derived datatype (MPI_ERR_OP), so the sum
 * is a user op that knows the layout. */
#define GAP_SENTINEL (-777)

static void vec_sum_op(void *in, void *inout, int *len, MPI_Datatype *dtype)
{
    const int *x = in;
    int *y = inout;

    (void) dtype;
    for (int k = 0; k < *len; ++k) {
        y[3 * k] += x[3 * k];
        y[3 * k + 2] += x[3 * k + 2];
    }
}

static void run_vector(MPI_Datatype vec_type, MPI_Op op, int count, bool in_place)
{
    size_t nints = 3 * (size_t) (count > 0 ? count : 1);
    int *in = malloc(nints * sizeof(int)), *out = malloc(nints * sizeof(int));
    char got[32], want[32];
    int rc;

    for (size_t k = 0; k < nints; ++k) {
        in[k] = (1 == k % 3) ? GAP_SENTINEL : t_int_input(myrank, (long) k, OP_SUM);
        out[k] = in_place ? in[k] : GAP_SENTINEL;
    }
    if (in_place) {
        rc = MPI_Allreduce(MPI_IN_PLACE, out, count, vec_type, op, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allreduce(in, out, count, vec_type, op, MPI_COMM_WORLD);
    }
    ++ncases;
    check_rc(rc, "MPI_Type_vector(2,1,2,MPI_INT)", "commutative user op (sum)", count, in_place);
    for (size_t k = 0; k < 3 * (size_t) count; ++k) {
        int e = GAP_SENTINEL;

        if (1 != k % 3) {
            e = 0;
            for (int r = 0; r < nranks; ++r) {
                e += t_int_input(r, (long) k, OP_SUM);
            }
        }
        if (out[k] != e) {
            snprintf(got, sizeof(got), "%d", out[k]);
            snprintf(want, sizeof(want), "%d", e);
            report("MPI_COMM_WORLD vs sequential reference (index counts ints in the buffer)",
                   "MPI_Type_vector(2,1,2,MPI_INT)", "commutative user op (sum)", count,
                   in_place, (long) k, got, want);
            break;
        }
    }
    free(in);
    free(out);
}

/* MPI_MINLOC on MPI_2INT: a predefined pair type with a predefined op that
 * genx has no kernel for.  Ties on the value go to the lower index. */
static void run_minloc(int count, bool in_place)
{
    size_t n = (size_t) (count > 0 ? count : 1);
    int *in = malloc(2 * n * sizeof(int)), *out = malloc(2 * n * sizeof(int));
    char got[48], want[48];
    int rc;

    for (long i = 0; i < count; ++i) {
        in[2 * i] = (int) (input_hash(myrank, i, 77) % 5);
        in[2 * i + 1] = myrank;
    }
    if (in_place) {
        memcpy(out, in, 2 * n * sizeof(int));
        rc = MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allreduce(in, out, count, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    }
    ++ncases;
    check_rc(rc, "MPI_2INT", "MINLOC", count, in_place);
    for (long i = 0; i < count; ++i) {
        int ev = (int) (input_hash(0, i, 77) % 5), el = 0;

        for (int r = 1; r < nranks; ++r) {
            int v = (int) (input_hash(r, i, 77) % 5);

            if (v < ev) {
                ev = v;
                el = r;
            }
        }
        if (out[2 * i] != ev || out[2 * i + 1] != el) {
            snprintf(got, sizeof(got), "(%d,%d)", out[2 * i], out[2 * i + 1]);
            snprintf(want, sizeof(want), "(%d,%d)", ev, el);
            report("MPI_COMM_WORLD vs sequential reference", "MPI_2INT", "MINLOC", count,
                   in_place, i, got, want);
            break;
        }
    }
    free(in);
    free(out);
}

/*
 * --others: the collectives genx does not provide, which must come from
 * Open MPI's own components on the same communicators (blocking from
 * tuned/basic, non-blocking from libnbc, intercommunicators from inter):
 * MPI_Barrier, MPI_Bcast, MPI_Allgather, MPI_Reduce, MPI_Alltoall,
 * MPI_Ibarrier, MPI_Ibcast on MPI_COMM_WORLD, then MPI_Allreduce and
 * MPI_Barrier on an intercommunicator between the even and the odd ranks.
 */
static void other_failed(const char *what, int rc, long index, long got, long expected)
{
    char msg[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;

    ++nfailures;
    if (nfailures > MAX_REPORTS) {
        return;
    }
    if (MPI_SUCCESS != rc) {
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "allreduce_check: MISMATCH (%s): rank=%d: returned %s\n", what, myrank,
                msg);
    } else {
        fprintf(stderr,
                "allreduce_check: MISMATCH (%s): rank=%d index=%ld: got %ld, expected %ld\n", what,
                myrank, index, got, expected);
    }
}

static void run_others(void)
{
    enum { N = 1000, K = 3 };
    int *buf = malloc(sizeof(int) * (size_t) N * (size_t) (nranks > K ? nranks : K));
    int *out = malloc(sizeof(int) * (size_t) N * (size_t) (nranks > K ? nranks : K));
    int root = nranks - 1, rc, value, sum;
    MPI_Request req;
    MPI_Comm half, inter;

    rc = MPI_Barrier(MPI_COMM_WORLD);
    ++ncases;
    if (MPI_SUCCESS != rc) {
        other_failed("MPI_Barrier", rc, 0, 0, 0);
    }

    for (int i = 0; i < N; ++i) {
        buf[i] = (myrank == root) ? 3 * i + 1 : -1;
    }
    rc = MPI_Bcast(buf, N, MPI_INT, root, MPI_COMM_WORLD);
    ++ncases;
    for (int i = 0; i < N; ++i) {
        if (MPI_SUCCESS != rc || buf[i] != 3 * i + 1) {
            other_failed("MPI_Bcast", rc, i, buf[i], 3 * i + 1);
            break;
        }
    }

    for (int k = 0; k < K; ++k) {
        buf[k] = 10 * myrank + k;
    }
    rc = MPI_Allgather(buf, K, MPI_INT, out, K, MPI_INT, MPI_COMM_WORLD);
    ++ncases;
    for (int i = 0; i < K * nranks; ++i) {
        int want = 10 * (i / K) + i % K;
        if (MPI_SUCCESS != rc || out[i] != want) {
            other_failed("MPI_Allgather", rc, i, out[i], want);
            break;
        }
    }

    for (int i = 0; i < N; ++i) {
        buf[i] = myrank + i;
    }
    rc = MPI_Reduce(buf, out, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    ++ncases;
    for (int i = 0; 0 == myrank && i < N; ++i) {
        int want = nranks * (nranks - 1) / 2 + nranks * i;
        if (MPI_SUCCESS != rc || out[i] != want) {
            other_failed("MPI_Reduce", rc, i, out[i], want);
            break;
        }
    }
    if (0 != myrank && MPI_SUCCESS != rc) {
        other_failed("MPI_Reduce", rc, 0, 0, 0);
    }

    for (int r = 0; r < nranks; ++r) {
        buf[r] = 100 * myrank + r;
    }
    rc = MPI_Alltoall(buf, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    ++ncases;
    for (int r = 0; r < nranks; ++r) {
        if (MPI_SUCCESS != rc || out[r] != 100 * r + myrank) {
            other_failed("MPI_Alltoall", rc, r, out[r], 100 * r + myrank);
            break;
        }
    }

    rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (MPI_SUCCESS == rc) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    ++ncases;
    if (MPI_SUCCESS != rc) {
        other_failed("MPI_Ibarrier", rc, 0, 0, 0);
    }

    for (int i = 0; i < N; ++i) {
        buf[i] = (0 == myrank) ? 5 * i - 7 : 0;
    }
    rc = MPI_Ibcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
    if (MPI_SUCCESS == rc) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    ++ncases;
    for (int i = 0; i < N; ++i) {
        if (MPI_SUCCESS != rc || buf[i] != 5 * i - 7) {
            other_failed("MPI_Ibcast", rc, i, buf[i], 5 * i - 7);
            break;
        }
    }

    /* Even ranks against odd ranks; each side's allreduce result is the
     * sum over the other side.  A single rank has no other side. */
    if (2 > nranks) {
        free(buf);
        free(out);
        return;
    }
    MPI_Comm_split(MPI_COMM_WORLD, myrank % 2, myrank, &half);
    rc = MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, (0 == myrank % 2) ? 1 : 0, 77, &inter);
    ++ncases;
    if (MPI_SUCCESS != rc) {
        other_failed("MPI_Intercomm_create", rc, 0, 0, 0);
    } else {
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        value = myrank;
        rc = MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, inter);
        ++ncases;
        {
            int want = 0;
            for (int r = (0 == myrank % 2) ? 1 : 0; r < nranks; r += 2) {
                want += r;
            }
            if (MPI_SUCCESS != rc || sum != want) {
                other_failed("MPI_Allreduce on an intercommunicator", rc, 0, sum, want);
            }
        }
        rc = MPI_Barrier(inter);
        ++ncases;
        if (MPI_SUCCESS != rc) {
            other_failed("MPI_Barrier on an intercommunicator", rc, 0, 0, 0);
        }
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&half);
    free(buf);
    free(out);
}

int main(int argc, char **argv)
{
    int counts[7];
    int ncounts = 0;
    int candidates[7];
    MPI_Info info;
    MPI_Datatype mat_type, vec_type;
    MPI_Op matmul, user_sum, vec_sum;
    long total_failures = 0;
    bool others = false;

    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; ++a) {
        others = others || 0 == strcmp(argv[a], "--others");
    }
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &myrank);
    /* Report failures as values instead of aborting inside MPI. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Info_create(&info);
    MPI_Info_set(info, "ompi_comm_coll_preference", "^genx");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &ref_comm);
    MPI_Info_free(&info);

    candidates[0] = 0;
    candidates[1] = 1;
    candidates[2] = nranks - 1;
    candidates[3] = nranks;
    candidates[4] = nranks + 1;
    candidates[5] = 1000;
    candidates[6] = 65537;
    for (int k = 0; k < 7; ++k) {
        bool seen = false;

        for (int j = 0; j < ncounts; ++j) {
            seen = seen || counts[j] == candidates[k];
        }
        if (!seen) {
            counts[ncounts++] = candidates[k];
        }
    }

    for (size_t t = 0; t < sizeof(type_cases) / sizeof(type_cases[0]); ++t) {
        for (int o = 0; o < type_cases[t].nops; ++o) {
            for (int c = 0; c < ncounts; ++c) {
                type_cases[t].run(type_cases[t].ops[o], counts[c], false);
                type_cases[t].run(type_cases[t].ops[o], counts[c], true);
            }
        }
    }

    MPI_Type_contiguous(4, MPI_INT, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(mat_mul_op, 0, &matmul);
    MPI_Op_create(int_sum_op, 1, &user_sum);
    MPI_Op_create(vec_sum_op, 1, &vec_sum);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec_type);
    MPI_Type_commit(&vec_type);
    for (int c = 0; c < ncounts; ++c) {
        for (int ip = 0; ip < 2; ++ip) {
            run_matmul(mat_type, matmul, counts[c], 1 == ip);
            run_user_sum(user_sum, counts[c], 1 == ip);
            run_vector(vec_type, vec_sum, counts[c], 1 == ip);
            run_minloc(counts[c], 1 == ip);
        }
    }
    MPI_Type_free(&vec_type);
    MPI_Op_free(&vec_sum);
    MPI_Op_free(&user_sum);
    MPI_Op_free(&matmul);
    MPI_Type_free(&mat_type);

    if (others) {
        run_others();
    }

    /* Counted on the communicator without genx, so a broken genx cannot
     * hide its own failures. */
    MPI_Allreduce(&nfailures, &total_failures, 1, MPI_LONG, MPI_SUM, ref_comm);
    if (0 == myrank) {
        if (0 == total_failures) {
            if (others) {
                printf("allreduce_check: other collectives OK: MPI_Barrier MPI_Bcast MPI_Allgather "
                       "MPI_Reduce MPI_Alltoall MPI_Ibarrier MPI_Ibcast%s\n",
                       (2 > nranks) ? "" : ", and MPI_Allreduce MPI_Barrier on an intercommunicator");
            }
            printf("allreduce_check: PASS: %d ranks, %ld cases per rank, results identical to "
                   "the sequential reference and to Open MPI without genx\n", nranks, ncases);
        } else {
            printf("allreduce_check: FAIL: %d ranks, %ld mismatches in %ld cases per rank "
                   "(details above, first %d per rank)\n", nranks, total_failures, ncases,
                   MAX_REPORTS);
        }
        fflush(stdout);
    }
    MPI_Comm_free(&ref_comm);
    MPI_Finalize();
    return (0 == total_failures) ? 0 : 1;
}
