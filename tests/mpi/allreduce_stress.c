/*
 * allreduce_stress: a seeded random generator of allreduce programs.
 *
 * Every rank draws the same sequence of steps from one seed, so all ranks
 * call collectives in the same order.  A step is one of
 *   - an allreduce call on one communicator slot: blocking MPI_Allreduce or
 *     non-blocking MPI_Iallreduce (left outstanding, several at a time),
 *     with a random count (log-uniform, a bounded number of large ones),
 *     built-in type, an op valid for it, in place or not;
 *   - a completion step: the outstanding requests are completed with
 *     MPI_Wait (oldest), MPI_Waitall, MPI_Waitany or an MPI_Testsome loop;
 *   - a communicator created (MPI_Comm_split of MPI_COMM_WORLD or of another
 *     slot, random colors, some ranks MPI_UNDEFINED, keys random, reversed
 *     or equal; MPI_Comm_dup of any slot) or freed mid-run.
 * A slot is split into disjoint groups (one communicator each); the groups
 * of one slot run concurrently, each with parameters drawn from its own
 * stream, so different communicators reduce different counts and types at
 * the same time.
 *
 * Every input element is a deterministic function of (seed, call index,
 * world rank, element index); values are small integers (or bit patterns,
 * or 0/1) so every reduction order gives the same bits, also for float,
 * double, long double and complex.  Each rank recomputes the expected
 * result from its communicator's members' inputs and compares every
 * element; it also checks that the send buffer is unchanged and that the
 * bytes after both buffers are untouched.
 *
 * Public MPI API only.  Options (all optional):
 *   --seed N            (default 1; 0 draws one from the clock, printed)
 *   --calls N           allreduce calls in the whole program (default 10000)
 *   --max-count N       largest count (default 1000000)
 *   --large-threshold N counts >= N are "large" (default 4096); the other
 *                       calls draw counts log-uniformly (uniform bit length)
 *                       over 0 .. N-1
 *   --large-calls N     at most this many large calls (default 16), spread
 *                       at random over the run, counts log-uniform over
 *                       N .. max-count
 *   --max-outstanding N non-blocking requests outstanding per rank (8)
 *   --max-comms N       dynamic communicator slots at once (default 6)
 *   --comm-rate N       per mille of steps that create or free a
 *                       communicator (default 10)
 *   --nonblocking N     per cent of calls that are MPI_Iallreduce (40)
 *   --plant-error CALL  test the test: on world rank 0, corrupt the expected
 *                       value of one element of the first call >= CALL
 *                       that rank takes part in with count > 0; the run
 *                       must then report exactly that mismatch and fail
 *   --verbose           print every step on rank 0
 * Exit 0 when every element matched; otherwise each rank prints its first
 * mismatches (seed, call, comm, count, type, op, in-place, rank, index,
 * got, expected) and the program exits 1.
 */
#include <mpi.h>

#include <complex.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPORTS 8
#define GUARD 32 /* bytes checked after every buffer */
#define GUARD_BYTE 0xa5
#define MAX_SLOTS 64

/* ------------------------------------------------------------------ random */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* splitmix64 stream */
typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *g)
{
    g->s += 0x9e3779b97f4a7c15ULL;
    return mix(g->s);
}

static uint64_t below(rng_t *g, uint64_t n) /* uniform in [0, n), n > 0 */
{
    return rnd(g) % n;
}

static int bitlen(uint64_t v)
{
    int n = 0;
    while (v) {
        v >>= 1;
        ++n;
    }
    return n;
}

/* Log-uniform in [lo, hi]: a bit length drawn uniformly, then a value of
 * that length.  Integer only, so every rank draws the same. */
static long log_uniform(rng_t *g, long lo, long hi)
{
    int blo = bitlen((uint64_t) lo), bhi = bitlen((uint64_t) hi);
    int b = blo + (int) below(g, (uint64_t) (bhi - blo + 1));
    long base, top, v;

    if (0 == b) {
        return 0;
    }
    base = 1L << (b - 1);
    top = (1L << b) - 1;
    if (base < lo) {
        base = lo;
    }
    if (top > hi) {
        top = hi;
    }
    v = base + (long) below(g, (uint64_t) (top - base + 1));
    return v;
}

/* ------------------------------------------------------------- types, ops */

enum opcode {
    OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_BAND, OP_BOR, OP_BXOR, OP_LAND, OP_LOR, OP_LXOR,
    OP_MINLOC, OP_MAXLOC, NUM_OPS
};
static const char *const op_names[NUM_OPS] = { "SUM", "PROD", "MIN", "MAX", "BAND", "BOR",
                                               "BXOR", "LAND", "LOR", "LXOR", "MINLOC",
                                               "MAXLOC" };
static MPI_Op mpi_ops[NUM_OPS];

static const enum opcode int_ops[] = { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_BAND,
                                       OP_BOR, OP_BXOR, OP_LAND, OP_LOR, OP_LXOR };
static const enum opcode float_ops[] = { OP_SUM, OP_PROD, OP_MIN, OP_MAX };
static const enum opcode bool_ops[] = { OP_LAND, OP_LOR, OP_LXOR };
static const enum opcode byte_ops[] = { OP_BAND, OP_BOR, OP_BXOR };
static const enum opcode complex_ops[] = { OP_SUM, OP_PROD };
static const enum opcode loc_ops[] = { OP_MINLOC, OP_MAXLOC };
#define NOPS(a) ((int) (sizeof(a) / sizeof((a)[0])))

typedef struct {
    int v, i;
} pair_2int;

typedef struct {
    const char *name;
    MPI_Datatype mpi;
    size_t size;
    const enum opcode *ops;
    int nops;
    /* writes the input for hash h and op into dst */
    void (*gen)(void *dst, uint64_t h, enum opcode op);
    /* acc = acc op val */
    void (*combine)(void *acc, const void *val, enum opcode op);
    bool (*equal)(const void *a, const void *b);
    void (*format)(char *s, size_t n, const void *v);
} type_info;

/*
 * Inputs per op, chosen so that every result is exact and every order of
 * reduction gives the same bits:
 *   SUM   signed/floating [-3,3], unsigned [0,3]
 *   PROD  1, or 2 with probability 1/5; signed/floating: negated with 1/7
 *         (integers wrap modulo 2^n like MPI's own ops; floating results
 *         are powers of two)
 *   MIN/MAX  integers: any bit pattern; floating: [-1000,1000]
 *   bitwise  any bit pattern
 *   logical  0 or a nonzero value (not only 1: the result must be 0 or 1)
 */
/*
 * Open MPI 4.1.4 and older compare MPI_UNSIGNED_LONG as signed in MIN and
 * MAX (open-mpi/ompi issues 10276, 10525 and 10648, fixed in 4.1.5): main()
 * probes MPI_Reduce_local and, where it is wrong, keeps those inputs below
 * 2^63, where both readings agree, and says so.
 */
static uint64_t ulong_minmax_mask = ~(uint64_t) 0;
static const uint64_t all_bits = ~(uint64_t) 0;

#define INT_TYPE(NAME, CTYPE, IS_SIGNED, FMT, CAST, MINMAX_MASK)                                         \
    static void NAME##_gen(void *dst, uint64_t h, enum opcode op)                              \
    {                                                                                          \
        CTYPE v = 0;                                                                           \
        switch (op) {                                                                          \
        case OP_SUM:                                                                           \
            v = IS_SIGNED ? (CTYPE) ((int) (h % 7) - 3) : (CTYPE) (h % 4);                     \
            break;                                                                             \
        case OP_PROD:                                                                          \
            v = (CTYPE) (0 == h % 5 ? 2 : 1);                                                  \
            if (IS_SIGNED && 0 == (h >> 16) % 7) {                                             \
                v = (CTYPE) (0 - v);                                                           \
            }                                                                                  \
            break;                                                                             \
        case OP_LAND:                                                                          \
            v = (CTYPE) (0 == h % 8 ? 0 : ((h >> 8) & 0x7f) | 1);                              \
            break;                                                                             \
        case OP_LOR:                                                                           \
            v = (CTYPE) (0 == h % 8 ? ((h >> 8) & 0x7f) | 2 : 0);                              \
            break;                                                                             \
        case OP_LXOR:                                                                          \
            v = (CTYPE) ((h & 1) ? ((h >> 8) & 0x7f) | 4 : 0);                                 \
            break;                                                                             \
        case OP_MIN:                                                                           \
        case OP_MAX:                                                                           \
            h &= (MINMAX_MASK);                                                                \
            memcpy(&v, &h, sizeof(v));                                                         \
            break;                                                                             \
        default: /* bitwise: any pattern */                                                    \
            memcpy(&v, &h, sizeof(v));                                                         \
            break;                                                                             \
        }                                                                                      \
        memcpy(dst, &v, sizeof(v));                                                            \
    }                                                                                          \
    static void NAME##_combine(void *accp, const void *valp, enum opcode op)                   \
    {                                                                                          \
        CTYPE a, b;                                                                            \
        memcpy(&a, accp, sizeof(a));                                                           \
        memcpy(&b, valp, sizeof(b));                                                           \
        switch (op) {                                                                          \
        case OP_SUM: a = (CTYPE) (a + b); break;                                               \
        case OP_PROD: a = (CTYPE) (a * b); break;                                              \
        case OP_MIN: a = b < a ? b : a; break;                                                 \
        case OP_MAX: a = b > a ? b : a; break;                                                 \
        case OP_BAND: a = (CTYPE) (a & b); break;                                              \
        case OP_BOR: a = (CTYPE) (a | b); break;                                               \
        case OP_BXOR: a = (CTYPE) (a ^ b); break;                                              \
        case OP_LAND: a = (CTYPE) (a && b); break;                                             \
        case OP_LOR: a = (CTYPE) (a || b); break;                                              \
        case OP_LXOR: a = (CTYPE) (!a != !b); break;                                           \
        default: break;                                                                        \
        }                                                                                      \
        memcpy(accp, &a, sizeof(a));                                                           \
    }                                                                                          \
    static bool NAME##_equal(const void *x, const void *y)                                     \
    {                                                                                          \
        return 0 == memcmp(x, y, sizeof(CTYPE));                                               \
    }                                                                                          \
    static void NAME##_format(char *s, size_t n, const void *p)                                \
    {                                                                                          \
        CTYPE v;                                                                               \
        memcpy(&v, p, sizeof(v));                                                              \
        snprintf(s, n, FMT, (CAST) v);                                                         \
    }

/* The unsigned products (e.g. uint16 * uint16 promoted to int) never
 * overflow int: one factor is always 1 or 2. */
INT_TYPE(t_int8, int8_t, 1, "%lld", long long, all_bits)
INT_TYPE(t_uint8, uint8_t, 0, "%llu", unsigned long long, all_bits)
INT_TYPE(t_int16, int16_t, 1, "%lld", long long, all_bits)
INT_TYPE(t_uint16, uint16_t, 0, "%llu", unsigned long long, all_bits)
INT_TYPE(t_int32, int32_t, 1, "%lld", long long, all_bits)
INT_TYPE(t_uint32, uint32_t, 0, "%llu", unsigned long long, all_bits)
INT_TYPE(t_int64, int64_t, 1, "%lld", long long, all_bits)
INT_TYPE(t_uint64, uint64_t, 0, "%llu", unsigned long long, all_bits)
INT_TYPE(t_schar, signed char, 1, "%lld", long long, all_bits)
INT_TYPE(t_short, short, 1, "%lld", long long, all_bits)
INT_TYPE(t_long, long, 1, "%lld", long long, all_bits)
INT_TYPE(t_ulong, unsigned long, 0, "%llu", unsigned long long, ulong_minmax_mask)
INT_TYPE(t_llong, long long, 1, "%lld", long long, all_bits)
INT_TYPE(t_ullong, unsigned long long, 0, "%llu", unsigned long long, all_bits)
/* MPI_BYTE takes the bitwise ops only; MPI_C_BOOL the logical ops only
 * (inputs stored as 0/1, as _Bool holds nothing else). */
INT_TYPE(t_byte, unsigned char, 0, "0x%02llx", unsigned long long, all_bits)

static void t_bool_gen(void *dst, uint64_t h, enum opcode op)
{
    _Bool v = (op == OP_LAND) ? (0 != h % 8) : (op == OP_LOR) ? (0 == h % 8) : (h & 1);
    memcpy(dst, &v, sizeof(v));
}
static void t_bool_combine(void *accp, const void *valp, enum opcode op)
{
    _Bool a, b;
    memcpy(&a, accp, sizeof(a));
    memcpy(&b, valp, sizeof(b));
    a = (op == OP_LAND) ? (a && b) : (op == OP_LOR) ? (a || b) : (a != b);
    memcpy(accp, &a, sizeof(a));
}
static bool t_bool_equal(const void *x, const void *y)
{
    return 0 == memcmp(x, y, sizeof(_Bool));
}
static void t_bool_format(char *s, size_t n, const void *p)
{
    unsigned char v;
    memcpy(&v, p, 1);
    snprintf(s, n, "%u", v);
}

/* Floating types: compared by value (long double has padding bytes). */
#define FLOAT_TYPE(NAME, CTYPE, FMT)                                                           \
    static void NAME##_gen(void *dst, uint64_t h, enum opcode op)                              \
    {                                                                                          \
        CTYPE v;                                                                               \
        switch (op) {                                                                          \
        case OP_SUM: v = (CTYPE) ((int) (h % 7) - 3); break;                                   \
        case OP_PROD:                                                                          \
            v = (CTYPE) (0 == h % 5 ? 2 : 1);                                                  \
            if (0 == (h >> 16) % 7) {                                                          \
                v = -v;                                                                        \
            }                                                                                  \
            break;                                                                             \
        default: v = (CTYPE) ((int) (h % 2001) - 1000); break;                                 \
        }                                                                                      \
        memcpy(dst, &v, sizeof(v));                                                            \
    }                                                                                          \
    static void NAME##_combine(void *accp, const void *valp, enum opcode op)                   \
    {                                                                                          \
        CTYPE a, b;                                                                            \
        memcpy(&a, accp, sizeof(a));                                                           \
        memcpy(&b, valp, sizeof(b));                                                           \
        switch (op) {                                                                          \
        case OP_SUM: a = a + b; break;                                                         \
        case OP_PROD: a = a * b; break;                                                        \
        case OP_MIN: a = b < a ? b : a; break;                                                 \
        case OP_MAX: a = b > a ? b : a; break;                                                 \
        default: break;                                                                        \
        }                                                                                      \
        memcpy(accp, &a, sizeof(a));                                                           \
    }                                                                                          \
    static bool NAME##_equal(const void *x, const void *y)                                     \
    {                                                                                          \
        CTYPE a, b;                                                                            \
        memcpy(&a, x, sizeof(a));                                                              \
        memcpy(&b, y, sizeof(b));                                                              \
        return a == b;                                                                         \
    }                                                                                          \
    static void NAME##_format(char *s, size_t n, const void *p)                                \
    {                                                                                          \
        CTYPE v;                                                                               \
        memcpy(&v, p, sizeof(v));                                                              \
        snprintf(s, n, FMT, v);                                                                \
    }

FLOAT_TYPE(t_float, float, "%.9g")
FLOAT_TYPE(t_double, double, "%.17g")
FLOAT_TYPE(t_ldouble, long double, "%.21Lg")

/* Complex: SUM of small Gaussian integers; PROD of 1, -1, i, -i, 1+i. */
#define COMPLEX_TYPE(NAME, CTYPE, RTYPE)                                                       \
    static void NAME##_gen(void *dst, uint64_t h, enum opcode op)                              \
    {                                                                                          \
        CTYPE v;                                                                               \
        if (OP_SUM == op) {                                                                    \
            v = (RTYPE) ((int) (h % 7) - 3) + (RTYPE) ((int) ((h >> 8) % 7) - 3) * I;          \
        } else {                                                                               \
            static const int re[8] = { 1, 1, 1, 1, -1, 0, 0, 1 };                              \
            static const int im[8] = { 0, 0, 0, 0, 0, 1, -1, 1 };                              \
            int k = (int) (h % 8);                                                             \
            v = (RTYPE) re[k] + (RTYPE) im[k] * I;                                             \
        }                                                                                      \
        memcpy(dst, &v, sizeof(v));                                                            \
    }                                                                                          \
    static void NAME##_combine(void *accp, const void *valp, enum opcode op)                   \
    {                                                                                          \
        CTYPE a, b;                                                                            \
        memcpy(&a, accp, sizeof(a));                                                           \
        memcpy(&b, valp, sizeof(b));                                                           \
        a = (OP_SUM == op) ? a + b : a * b;                                                    \
        memcpy(accp, &a, sizeof(a));                                                           \
    }                                                                                          \
    static bool NAME##_equal(const void *x, const void *y)                                     \
    {                                                                                          \
        CTYPE a, b;                                                                            \
        memcpy(&a, x, sizeof(a));                                                              \
        memcpy(&b, y, sizeof(b));                                                              \
        return creal(a) == creal(b) && cimag(a) == cimag(b);                                   \
    }                                                                                          \
    static void NAME##_format(char *s, size_t n, const void *p)                                \
    {                                                                                          \
        CTYPE v;                                                                               \
        memcpy(&v, p, sizeof(v));                                                              \
        snprintf(s, n, "(%.17g%+.17gi)", (double) creal(v), (double) cimag(v));                \
    }

COMPLEX_TYPE(t_cfloat, float _Complex, float)
COMPLEX_TYPE(t_cdouble, double _Complex, double)

/* MPI_2INT with MINLOC/MAXLOC: few distinct values, so ties are common and
 * the smaller index must win. */
static void t_2int_gen(void *dst, uint64_t h, enum opcode op)
{
    pair_2int v = { (int) (h % 9) - 4, (int) ((h >> 16) % 1000) };
    (void) op;
    memcpy(dst, &v, sizeof(v));
}
static void t_2int_combine(void *accp, const void *valp, enum opcode op)
{
    pair_2int a, b;
    memcpy(&a, accp, sizeof(a));
    memcpy(&b, valp, sizeof(b));
    if ((OP_MAXLOC == op && b.v > a.v) || (OP_MINLOC == op && b.v < a.v)) {
        a = b;
    } else if (b.v == a.v && b.i < a.i) {
        a.i = b.i;
    }
    memcpy(accp, &a, sizeof(a));
}
static bool t_2int_equal(const void *x, const void *y)
{
    return 0 == memcmp(x, y, sizeof(pair_2int));
}
static void t_2int_format(char *s, size_t n, const void *p)
{
    pair_2int v;
    memcpy(&v, p, sizeof(v));
    snprintf(s, n, "(%d,%d)", v.v, v.i);
}

#define TYPE(NAME, MPITYPE, CTYPE, OPS)                                                        \
    { #MPITYPE, MPITYPE, sizeof(CTYPE), OPS, NOPS(OPS), NAME##_gen, NAME##_combine,           \
      NAME##_equal, NAME##_format }

static type_info types[] = {
    TYPE(t_int8, MPI_INT8_T, int8_t, int_ops),
    TYPE(t_uint8, MPI_UINT8_T, uint8_t, int_ops),
    TYPE(t_int16, MPI_INT16_T, int16_t, int_ops),
    TYPE(t_uint16, MPI_UINT16_T, uint16_t, int_ops),
    TYPE(t_int32, MPI_INT32_T, int32_t, int_ops),
    TYPE(t_uint32, MPI_UINT32_T, uint32_t, int_ops),
    TYPE(t_int64, MPI_INT64_T, int64_t, int_ops),
    TYPE(t_uint64, MPI_UINT64_T, uint64_t, int_ops),
    TYPE(t_float, MPI_FLOAT, float, float_ops),
    TYPE(t_double, MPI_DOUBLE, double, float_ops),
    /* a few more */
    TYPE(t_schar, MPI_SIGNED_CHAR, signed char, int_ops),
    TYPE(t_short, MPI_SHORT, short, int_ops),
    TYPE(t_long, MPI_LONG, long, int_ops),
    TYPE(t_ulong, MPI_UNSIGNED_LONG, unsigned long, int_ops),
    TYPE(t_llong, MPI_LONG_LONG, long long, int_ops),
    TYPE(t_ullong, MPI_UNSIGNED_LONG_LONG, unsigned long long, int_ops),
    TYPE(t_byte, MPI_BYTE, unsigned char, byte_ops),
    TYPE(t_bool, MPI_C_BOOL, _Bool, bool_ops),
    TYPE(t_ldouble, MPI_LONG_DOUBLE, long double, float_ops),
    TYPE(t_cfloat, MPI_C_FLOAT_COMPLEX, float _Complex, complex_ops),
    TYPE(t_cdouble, MPI_C_DOUBLE_COMPLEX, double _Complex, complex_ops),
    TYPE(t_2int, MPI_2INT, pair_2int, loc_ops),
};
#define NUM_TYPES ((int) (sizeof(types) / sizeof(types[0])))

/* ------------------------------------------------------------ communicators */

/*
 * A slot is a set of disjoint communicators created by one call: every rank
 * knows every rank's group (-1: not a member) and rank in it, so it can
 * compute the expected results of its own group.
 */
typedef struct {
    bool used;
    int id;          /* creation number, for messages */
    char desc[96];   /* how it was made */
    int *group;      /* per world rank: group number or -1 */
    int *crank;      /* per world rank: rank in its group's communicator */
    MPI_Comm comm;   /* this rank's communicator or MPI_COMM_NULL */
    int my_size;     /* size of this rank's communicator */
    int *members;    /* world ranks of this rank's communicator in comm-rank order */
    int pending;     /* outstanding requests on comm */
    int ngroups;     /* communicators in this slot */
    int nmulti;      /* of them with 2 ranks or more */
} slot_t;

static int nranks, myrank;
static slot_t slots[MAX_SLOTS];
static int nslots_used;
static long comms_created;  /* creation calls (split or dup) */
static long comms_distinct; /* communicators those calls made (all groups) */
static long comms_freed;
static int next_slot_id;

static void slot_finish(slot_t *s)
{
    int n = 0;

    s->members = malloc((size_t) nranks * sizeof(int));
    if (MPI_COMM_NULL == s->comm) {
        s->my_size = 0;
        return;
    }
    for (int c = 0; c < nranks; ++c) {
        for (int r = 0; r < nranks; ++r) {
            if (s->group[r] == s->group[myrank] && s->crank[r] == c) {
                s->members[n++] = r;
            }
        }
    }
    s->my_size = n;
}

static slot_t *slot_alloc(void)
{
    for (int k = 0; k < MAX_SLOTS; ++k) {
        if (!slots[k].used) {
            memset(&slots[k], 0, sizeof(slots[k]));
            slots[k].used = true;
            slots[k].id = next_slot_id++;
            slots[k].group = malloc((size_t) nranks * sizeof(int));
            slots[k].crank = malloc((size_t) nranks * sizeof(int));
            slots[k].comm = MPI_COMM_NULL;
            ++nslots_used;
            return &slots[k];
        }
    }
    return NULL;
}

static int fail_mpi(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "allreduce_stress: rank %d: %s failed: %s\n", myrank, what, msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rc;
}

/* Groups numbered 0, 1, ... in order of their lowest world rank (nested
 * splits would otherwise multiply the numbers); counts them. */
static void renumber_groups(slot_t *s)
{
    int *map = malloc((size_t) nranks * sizeof(int)), *old = malloc((size_t) nranks * sizeof(int));
    int n = 0;

    memcpy(old, s->group, (size_t) nranks * sizeof(int));
    for (int r = 0; r < nranks; ++r) {
        int q;
        if (old[r] < 0) {
            continue;
        }
        for (q = 0; q < r && old[q] != old[r]; ++q) {
        }
        map[r] = (q < r) ? map[q] : n++;
        s->group[r] = map[r];
    }
    comms_distinct += n;
    s->ngroups = n;
    s->nmulti = 0;
    for (int gi = 0; gi < n; ++gi) {
        int members = 0;
        for (int r = 0; r < nranks; ++r) {
            members += s->group[r] == gi;
        }
        s->nmulti += members >= 2;
    }
    free(map);
    free(old);
}

/* A split of parent: colors in [0, ncolors) or MPI_UNDEFINED, keys by mode. */
static slot_t *make_split(rng_t *g, slot_t *parent)
{
    slot_t *s = slot_alloc();
    int ncolors = 1 + (int) below(g, (uint64_t) (nranks + 1) / 2); /* 1 .. ceil(P/2) */
    int undef_pm = (int) below(g, 3) * 100; /* 0, 10 or 20 % of ranks left out */
    int keymode = (int) below(g, 3);        /* 0 random, 1 reversed, 2 equal */
    static const char *const keynames[3] = { "random keys", "reversed keys", "equal keys" };
    int *color = malloc((size_t) nranks * sizeof(int)), *key = malloc((size_t) nranks * sizeof(int));

    for (int r = 0; r < nranks; ++r) {
        color[r] = ((int) below(g, 1000) < undef_pm) ? MPI_UNDEFINED : (int) below(g, (uint64_t) ncolors);
        key[r] = (0 == keymode) ? (int) below(g, 8) : (1 == keymode) ? nranks - r : 0;
    }
    /* group = (parent group, color); rank: by key, then by parent rank */
    for (int r = 0; r < nranks; ++r) {
        if (parent->group[r] < 0 || MPI_UNDEFINED == color[r]) {
            s->group[r] = -1;
            continue;
        }
        s->group[r] = parent->group[r] * nranks + color[r];
    }
    renumber_groups(s);
    for (int r = 0; r < nranks; ++r) {
        int pos = 0;
        if (s->group[r] < 0) {
            s->crank[r] = -1;
            continue;
        }
        for (int q = 0; q < nranks; ++q) {
            if (q != r && s->group[q] == s->group[r]
                && (key[q] < key[r] || (key[q] == key[r] && parent->crank[q] < parent->crank[r]))) {
                ++pos;
            }
        }
        s->crank[r] = pos;
    }
    snprintf(s->desc, sizeof(s->desc), "split of #%d, %d colors, %s%s", parent->id, ncolors,
             keynames[keymode], undef_pm ? ", some MPI_UNDEFINED" : "");
    if (MPI_COMM_NULL != parent->comm) {
        fail_mpi(MPI_Comm_split(parent->comm, color[myrank], key[myrank], &s->comm), "MPI_Comm_split");
    }
    if ((MPI_COMM_NULL == s->comm) != (s->group[myrank] < 0)) {
        fprintf(stderr, "allreduce_stress: rank %d: MPI_Comm_split membership differs from the model\n", myrank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (MPI_COMM_NULL != s->comm) {
        int rk;
        MPI_Comm_rank(s->comm, &rk);
        if (rk != s->crank[myrank]) {
            fprintf(stderr, "allreduce_stress: rank %d: MPI_Comm_split rank %d, model says %d\n",
                    myrank, rk, s->crank[myrank]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    ++comms_created;
    slot_finish(s);
    free(color);
    free(key);
    return s;
}

static slot_t *make_dup(slot_t *parent)
{
    slot_t *s = slot_alloc();

    memcpy(s->group, parent->group, (size_t) nranks * sizeof(int));
    memcpy(s->crank, parent->crank, (size_t) nranks * sizeof(int));
    renumber_groups(s);
    snprintf(s->desc, sizeof(s->desc), "dup of #%d", parent->id);
    if (MPI_COMM_NULL != parent->comm) {
        fail_mpi(MPI_Comm_dup(parent->comm, &s->comm), "MPI_Comm_dup");
    }
    ++comms_created;
    slot_finish(s);
    return s;
}

/* ------------------------------------------------------------------ calls */

typedef struct {
    long call;
    slot_t *slot;
    int type;
    enum opcode op;
    long count;
    bool in_place, nonblocking;
    uint64_t cseed; /* inputs of this call and group */
    unsigned char *sendbuf, *recvbuf;
    MPI_Request req;
    long plant; /* element whose expected value is corrupted, or -1 */
} call_t;

static uint64_t seed = 1;
static long ncalls = 10000, max_count = 1000000, large_threshold = 4096, large_calls = 16;
static int max_outstanding = 8, max_comms = 6, comm_rate = 10, nonblocking_pct = 40;
static long plant_call = -1;
static bool planted, verbose;

static long my_calls, my_nonblocking, my_inplace, my_elements, my_large, my_zero;
static long nfailures, nchecked_calls;

static call_t *pending[64];
static int npending;

static uint64_t elem_hash(uint64_t cseed, int wrank, long i)
{
    return mix(cseed ^ mix(((uint64_t) (unsigned) wrank << 40) ^ (uint64_t) i));
}

static void report(const call_t *c, long index, const char *what, const char *got, const char *want)
{
    ++nfailures;
    if (nfailures <= MAX_REPORTS) {
        fprintf(stderr,
                "allreduce_stress: MISMATCH seed=%" PRIu64 " call=%ld comm=#%d (%s, %d ranks) "
                "count=%ld type=%s op=%s in_place=%d %s rank=%d (comm rank %d) index=%ld: "
                "%s: got %s, expected %s\n",
                seed, c->call, c->slot->id, c->slot->desc, c->slot->my_size, c->count,
                types[c->type].name, op_names[c->op], c->in_place ? 1 : 0,
                c->nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", myrank,
                c->slot->crank[myrank], index, what, got, want);
    }
}

static void check_call(call_t *c)
{
    const type_info *t = &types[c->type];
    size_t sz = t->size, bytes = (size_t) c->count * sz;
    unsigned char acc[32], val[32];
    char got[96], want[96];

    ++nchecked_calls;
    for (long i = 0; i < c->count; ++i) {
        t->gen(acc, elem_hash(c->cseed, c->slot->members[0], i), c->op);
        for (int k = 1; k < c->slot->my_size; ++k) {
            t->gen(val, elem_hash(c->cseed, c->slot->members[k], i), c->op);
            t->combine(acc, val, c->op);
        }
        if (i == c->plant) { /* --plant-error: a wrong expectation */
            acc[0] ^= 1; /* lowest bit of every type here (little endian) */
        }
        if (!t->equal(c->recvbuf + (size_t) i * sz, acc)) {
            t->format(got, sizeof(got), c->recvbuf + (size_t) i * sz);
            t->format(want, sizeof(want), acc);
            report(c, i, "result", got, want);
            break; /* one report per call */
        }
    }
    for (size_t b = 0; b < GUARD; ++b) {
        if (GUARD_BYTE != c->recvbuf[bytes + b]) {
            snprintf(got, sizeof(got), "0x%02x", c->recvbuf[bytes + b]);
            snprintf(want, sizeof(want), "0x%02x", GUARD_BYTE);
            report(c, c->count + (long) (b / sz), "byte after the receive buffer written", got, want);
            break;
        }
    }
    if (!c->in_place) {
        for (long i = 0; i < c->count; ++i) {
            t->gen(val, elem_hash(c->cseed, myrank, i), c->op);
            if (!t->equal(c->sendbuf + (size_t) i * sz, val)) {
                t->format(got, sizeof(got), c->sendbuf + (size_t) i * sz);
                t->format(want, sizeof(want), val);
                report(c, i, "send buffer modified", got, want);
                break;
            }
        }
        for (size_t b = 0; b < GUARD; ++b) {
            if (GUARD_BYTE != c->sendbuf[bytes + b]) {
                snprintf(got, sizeof(got), "0x%02x", c->sendbuf[bytes + b]);
                snprintf(want, sizeof(want), "0x%02x", GUARD_BYTE);
                report(c, c->count + (long) (b / sz), "byte after the send buffer written", got, want);
                break;
            }
        }
    }
    free(c->sendbuf);
    free(c->recvbuf);
    c->slot->pending -= c->nonblocking ? 1 : 0;
    free(c);
}

static void complete_pending(int k) /* pending[k] is done */
{
    call_t *c = pending[k];
    memmove(&pending[k], &pending[k + 1], (size_t) (npending - k - 1) * sizeof(pending[0]));
    --npending;
    check_call(c);
}

/* Completion step: how the outstanding requests are completed. */
enum { DONE_WAIT_OLDEST, DONE_WAITALL, DONE_WAITANY, DONE_TESTSOME, DONE_KINDS };

static void complete(int how)
{
    MPI_Request reqs[64];
    int idx[64], n, done;

    if (0 == npending) {
        return;
    }
    switch (how) {
    case DONE_WAIT_OLDEST:
        fail_mpi(MPI_Wait(&pending[0]->req, MPI_STATUS_IGNORE), "MPI_Wait");
        complete_pending(0);
        break;
    case DONE_WAITALL:
        n = npending;
        for (int k = 0; k < n; ++k) {
            reqs[k] = pending[k]->req;
        }
        fail_mpi(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        while (npending > 0) {
            complete_pending(0);
        }
        break;
    case DONE_WAITANY: /* about half of them, in completion order */
        for (int left = (npending + 1) / 2; left > 0; --left) {
            int k;
            n = npending;
            for (int j = 0; j < n; ++j) {
                reqs[j] = pending[j]->req;
            }
            fail_mpi(MPI_Waitany(n, reqs, &k, MPI_STATUS_IGNORE), "MPI_Waitany");
            complete_pending(k);
        }
        break;
    case DONE_TESTSOME: /* poll until all are done */
        while (npending > 0) {
            n = npending;
            for (int j = 0; j < n; ++j) {
                reqs[j] = pending[j]->req;
            }
            fail_mpi(MPI_Testsome(n, reqs, &done, idx, MPI_STATUSES_IGNORE), "MPI_Testsome");
            if (MPI_UNDEFINED == done) {
                break;
            }
            /* remove from the highest index down so lower ones stay valid */
            for (int a = 0; a < done; ++a) {
                for (int b = a + 1; b < done; ++b) {
                    if (idx[b] > idx[a]) {
                        int tmp = idx[a];
                        idx[a] = idx[b];
                        idx[b] = tmp;
                    }
                }
            }
            for (int a = 0; a < done; ++a) {
                pending[idx[a]]->req = reqs[idx[a]];
                complete_pending(idx[a]);
            }
        }
        break;
    }
}

/* Waits for every outstanding request on slot s (before it is freed). */
static void complete_slot(slot_t *s)
{
    for (int k = 0; k < npending;) {
        if (pending[k]->slot == s) {
            fail_mpi(MPI_Wait(&pending[k]->req, MPI_STATUS_IGNORE), "MPI_Wait");
            complete_pending(k);
        } else {
            ++k;
        }
    }
}

static void free_slot(slot_t *s)
{
    complete_slot(s);
    if (MPI_COMM_NULL != s->comm) {
        fail_mpi(MPI_Comm_free(&s->comm), "MPI_Comm_free");
    }
    free(s->group);
    free(s->crank);
    free(s->members);
    s->used = false;
    --nslots_used;
    ++comms_freed;
}

/* One allreduce call on slot s: parameters of this rank's group from the
 * group's own stream, so concurrent groups differ. */
static void do_call(long call, slot_t *s, uint64_t call_seed, bool large)
{
    rng_t g;
    call_t *c;
    const type_info *t;
    size_t bytes;
    int rc;

    if (MPI_COMM_NULL == s->comm) {
        return;
    }
    g.s = mix(call_seed ^ mix((uint64_t) s->group[myrank] + 0x51ed));
    c = calloc(1, sizeof(*c));
    c->call = call;
    c->slot = s;
    c->type = (int) below(&g, NUM_TYPES);
    t = &types[c->type];
    c->op = t->ops[below(&g, (uint64_t) t->nops)];
    c->count = large ? log_uniform(&g, large_threshold, max_count)
                     : log_uniform(&g, 0, large_threshold - 1);
    c->in_place = 0 == below(&g, 3);
    c->nonblocking = (int) below(&g, 100) < nonblocking_pct;
    c->cseed = rnd(&g);
    c->plant = -1;
    if (plant_call >= 0 && !planted && call >= plant_call && c->count > 0 && 0 == myrank) {
        c->plant = c->count / 2;
        planted = true;
    }
    bytes = (size_t) c->count * t->size;
    c->recvbuf = malloc(bytes + GUARD);
    c->sendbuf = c->in_place ? NULL : malloc(bytes + GUARD);
    memset(c->recvbuf + bytes, GUARD_BYTE, GUARD);
    if (c->in_place) {
        for (long i = 0; i < c->count; ++i) {
            t->gen(c->recvbuf + (size_t) i * t->size, elem_hash(c->cseed, myrank, i), c->op);
        }
    } else {
        memset(c->sendbuf + bytes, GUARD_BYTE, GUARD);
        memset(c->recvbuf, 0x5a, bytes);
        for (long i = 0; i < c->count; ++i) {
            t->gen(c->sendbuf + (size_t) i * t->size, elem_hash(c->cseed, myrank, i), c->op);
        }
    }
    ++my_calls;
    my_elements += c->count;
    my_large += large;
    my_zero += 0 == c->count;
    my_inplace += c->in_place;
    if (verbose && 0 == myrank) {
        printf("call %ld: comm #%d (%d ranks) %s count=%ld %s %s%s\n", call, s->id, s->my_size,
               c->nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", c->count, t->name,
               op_names[c->op], c->in_place ? " in place" : "");
    }
    if (c->nonblocking) {
        if (npending >= max_outstanding) {
            complete(DONE_WAIT_OLDEST);
        }
        rc = MPI_Iallreduce(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->recvbuf, (int) c->count,
                            t->mpi, mpi_ops[c->op], s->comm, &c->req);
        fail_mpi(rc, "MPI_Iallreduce");
        pending[npending++] = c;
        ++s->pending;
        ++my_nonblocking;
    } else {
        rc = MPI_Allreduce(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->recvbuf, (int) c->count,
                           t->mpi, mpi_ops[c->op], s->comm);
        fail_mpi(rc, "MPI_Allreduce");
        check_call(c);
    }
}

/* ------------------------------------------------------------------- main */

static long parse_long(const char *opt, const char *v)
{
    char *end;
    long x = strtol(v, &end, 0);
    if (!*v || *end || x < 0) {
        if (0 == myrank) {
            fprintf(stderr, "allreduce_stress: %s needs a non-negative integer, not '%s'\n", opt, v);
        }
        MPI_Finalize();
        exit(2);
    }
    return x;
}

static void usage_exit(const char *bad)
{
    if (0 == myrank) {
        fprintf(stderr,
                "allreduce_stress: unknown option '%s'\n"
                "options: --seed N --calls N --max-count N --large-threshold N --large-calls N\n"
                "         --max-outstanding N --max-comms N --comm-rate PERMILLE --nonblocking PERCENT\n"
                "         --plant-error CALL --verbose\n",
                bad);
    }
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    rng_t g;
    slot_t *world;
    long call = 0, steps = 0, large_used = 0, collectives = 0, collectives_multi = 0;
    double t0, t1;
    long totals[9], mine[9];

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &myrank);

    for (int a = 1; a < argc; ++a) {
        const char *o = argv[a];
        if (0 == strcmp(o, "--verbose")) {
            verbose = true;
            continue;
        }
        if (a + 1 >= argc) {
            usage_exit(o);
        }
        if (0 == strcmp(o, "--seed")) {
            seed = (uint64_t) parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--calls")) {
            ncalls = parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--max-count")) {
            max_count = parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--large-threshold")) {
            large_threshold = parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--large-calls")) {
            large_calls = parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--max-outstanding")) {
            max_outstanding = (int) parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--max-comms")) {
            max_comms = (int) parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--comm-rate")) {
            comm_rate = (int) parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--nonblocking")) {
            nonblocking_pct = (int) parse_long(o, argv[++a]);
        } else if (0 == strcmp(o, "--plant-error")) {
            plant_call = parse_long(o, argv[++a]);
        } else {
            usage_exit(o);
        }
    }
    if (max_count > 2147483647L) {
        max_count = 2147483647L;
    }
    if (large_threshold < 1) {
        large_threshold = 1;
    }
    if (large_threshold > max_count) {
        large_threshold = max_count + 1; /* no large calls possible */
        large_calls = 0;
    }
    if (max_outstanding < 1) {
        max_outstanding = 1;
    }
    if (max_outstanding > 64) {
        max_outstanding = 64;
    }
    if (max_comms > MAX_SLOTS - 2) {
        max_comms = MAX_SLOTS - 2;
    }
    if (0 == seed) { /* from the clock, the same on every rank */
        uint64_t s = (uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);
        MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        seed = s ? s : 1;
    }

    mpi_ops[OP_SUM] = MPI_SUM;
    mpi_ops[OP_PROD] = MPI_PROD;
    mpi_ops[OP_MIN] = MPI_MIN;
    mpi_ops[OP_MAX] = MPI_MAX;
    mpi_ops[OP_BAND] = MPI_BAND;
    mpi_ops[OP_BOR] = MPI_BOR;
    mpi_ops[OP_BXOR] = MPI_BXOR;
    mpi_ops[OP_LAND] = MPI_LAND;
    mpi_ops[OP_LOR] = MPI_LOR;
    mpi_ops[OP_LXOR] = MPI_LXOR;
    mpi_ops[OP_MINLOC] = MPI_MINLOC;
    mpi_ops[OP_MAXLOC] = MPI_MAXLOC;

    {
        /* the Open MPI 4.1.4 MPI_UNSIGNED_LONG probe (see ulong_minmax_mask) */
        unsigned long big = (1UL << 63) + 5, one = 1, acc = big;
        MPI_Reduce_local(&one, &acc, 1, MPI_UNSIGNED_LONG, MPI_MAX);
        if (acc != big) {
            ulong_minmax_mask = ~(uint64_t) 0 >> 1;
            if (0 == myrank) {
                printf("allreduce_stress: note: this MPI's MPI_MAX on MPI_UNSIGNED_LONG compares as "
                       "signed (Open MPI <= 4.1.4, ompi issue 10525): MIN/MAX inputs of that type "
                       "kept below 2^63\n");
            }
        }
    }
    if (0 == myrank) {
        printf("allreduce_stress: seed %" PRIu64 ", %d ranks, %ld calls, counts 0..%ld "
               "(at most %ld calls >= %ld), %d%% non-blocking, up to %d outstanding, "
               "up to %d extra communicators%s\n",
               seed, nranks, ncalls, max_count, large_calls, large_threshold, nonblocking_pct,
               max_outstanding, max_comms, plant_call >= 0 ? ", ERROR PLANTED" : "");
        fflush(stdout);
    }

    /* #0 MPI_COMM_WORLD and #1 its duplicate live through the whole run. */
    world = slot_alloc();
    for (int r = 0; r < nranks; ++r) {
        world->group[r] = 0;
        world->crank[r] = r;
    }
    world->comm = MPI_COMM_WORLD;
    world->ngroups = 1;
    world->nmulti = nranks >= 2;
    snprintf(world->desc, sizeof(world->desc), "MPI_COMM_WORLD");
    slot_finish(world);
    make_dup(world);
    comms_created = comms_distinct = 0; /* count the mid-run ones only */

    g.s = seed;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    while (call < ncalls) {
        uint64_t r = below(&g, 1000);
        ++steps;
        if ((long) r < comm_rate) { /* create or free a communicator */
            int ndyn = nslots_used - 2;
            if (ndyn > 0 && (ndyn >= max_comms || 0 == below(&g, 2))) {
                int k = (int) below(&g, (uint64_t) ndyn), seen = 0;
                for (int j = 2; j < MAX_SLOTS; ++j) {
                    if (slots[j].used && seen++ == k) {
                        if (verbose && 0 == myrank) {
                            printf("step %ld: free #%d (%s)\n", steps, slots[j].id, slots[j].desc);
                        }
                        free_slot(&slots[j]);
                        break;
                    }
                }
            } else if (ndyn < max_comms) {
                /* parent: any slot in use, world more often */
                int k = (int) below(&g, (uint64_t) nslots_used + 2), seen = 0;
                slot_t *parent = world;
                for (int j = 0; j < MAX_SLOTS && k < nslots_used; ++j) {
                    if (slots[j].used && seen++ == k) {
                        parent = &slots[j];
                        break;
                    }
                }
                slot_t *s = (0 == below(&g, 3)) ? make_dup(parent) : make_split(&g, parent);
                if (verbose && 0 == myrank) {
                    printf("step %ld: created #%d (%s)\n", steps, s->id, s->desc);
                }
            }
        } else if (r < 1000 - 60) { /* an allreduce call */
            int k = (int) below(&g, (uint64_t) nslots_used), seen = 0;
            slot_t *s = world;
            uint64_t call_seed = rnd(&g);
            bool large = large_used < large_calls && (long) below(&g, (uint64_t) ncalls) < large_calls;

            large_used += large;

            for (int j = 0; j < MAX_SLOTS; ++j) {
                if (slots[j].used && seen++ == k) {
                    s = &slots[j];
                    break;
                }
            }
            do_call(call, s, call_seed, large);
            ++call;
            collectives += s->ngroups;
            collectives_multi += s->nmulti;
        } else { /* complete outstanding requests */
            complete((int) below(&g, DONE_KINDS));
        }
    }
    complete(DONE_WAITALL);
    for (int j = 2; j < MAX_SLOTS; ++j) {
        if (slots[j].used) {
            free_slot(&slots[j]);
        }
    }
    t1 = MPI_Wtime();

    mine[0] = my_calls;
    mine[1] = my_nonblocking;
    mine[2] = my_inplace;
    mine[3] = my_elements;
    mine[4] = my_large;
    mine[5] = my_zero;
    mine[6] = 0;
    mine[7] = nfailures;
    mine[8] = nchecked_calls;
    /* Totals through MPI_Reduce and MPI_Bcast, which genx does not serve. */
    MPI_Reduce(mine, totals, 9, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    {
        if (0 == myrank) {
            printf("allreduce_stress: seed %" PRIu64 ": %ld calls in %ld steps, %ld collective "
                   "allreduces (one per communicator of the call's slot; %ld on 2 ranks or more); "
                   "%ld rank-calls checked (%ld MPI_Iallreduce, %ld in place, %ld with count 0, "
                   "%ld large, %ld elements); %ld communicator creations made %ld communicators "
                   "(%ld creations freed mid-run or at the end); %ld mismatches; %.2f s\n",
                   seed, call, steps, collectives, collectives_multi, totals[8], totals[1],
                   totals[2], totals[5], totals[4], totals[3], comms_created, comms_distinct,
                   comms_freed, totals[7], t1 - t0);
            if (totals[7] > 0 || totals[8] != totals[0]) {
                printf("allreduce_stress: FAIL: seed %" PRIu64 ": %ld mismatches over all ranks "
                       "(first ones above on stderr)\n",
                       seed, totals[7]);
            } else {
                printf("allreduce_stress: PASS: seed %" PRIu64 ", %d ranks, %ld calls, "
                       "every element as expected\n",
                       seed, nranks, call);
            }
            fflush(stdout);
        }
    }
    free_slot(&slots[1]);
    free(slots[0].group);
    free(slots[0].crank);
    free(slots[0].members);
    MPI_Bcast(&totals[7], 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return (totals[7] > 0 || nfailures > 0) ? 1 : 0;
}
