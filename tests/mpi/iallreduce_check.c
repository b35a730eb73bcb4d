/*
 * iallreduce_check: MPI_Iallreduce through genx, checked exactly.
 *
 *  1. correctness: float, double, int and unsigned char sums and a MAX, in
 *     place and not, at counts from 1 to 100000, each compared element by
 *     element with MPI_Allreduce on a reference communicator served
 *     without genx (info key ompi_comm_coll_preference = "^genx"); values
 *     are small integers so every order of summation is exact;
 *     then a user-defined op on a derived datatype (two ints), also
 *     persistent: Open MPI retains both on the request genx returns;
 *  2. concurrency: 6 operations of different counts in flight at once on
 *     one communicator and 2 on a duplicate, completed by one MPI_Waitall,
 *     with a blocking MPI_Allreduce issued between them;
 *  3. asynchrony: after a warm-up, rank 1 starts 200 ms late; rank 0's
 *     MPI_Iallreduce must return at once (under 1 ms of CPU time, 20 ms of wall
 *     time), and its MPI_Test must stay
 *     false for as long as rank 1 has not started (tested for 150 ms);
 *  4. persistent: MPI_Allreduce_init (Open MPI 5.0; MPIX_Allreduce_init,
 *     the pcollreq extension, in 4.1: allreduce_init.h) at
 *     counts 1 to 100000, in place and not, each request started 4 times
 *     with new inputs in the same buffers, completed alternately by
 *     MPI_Wait and an MPI_Test loop with computation between, checked
 *     against the reference; two requests on two communicators started
 *     together by MPI_Startall; then freed.
 *
 * Prints "iallreduce_check: PASS" on rank 0 and exits 0, or names the first
 * failure and exits 1.
 */
#include <mpi.h>
#include "allreduce_init.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;

static void fail(int rank, const char *what)
{
    fprintf(stderr, "iallreduce_check: rank %d: FAIL: %s\n", rank, what);
    ++failures;
}

/* Rank- and element-dependent small integers (exact in every type). */
static double value(int rank, int i, int salt) { return (double) ((rank * 7 + i * 3 + salt) % 11); }

static void fill(MPI_Datatype t, void *buf, int n, int rank, int salt)
{
    for (int i = 0; i < n; ++i) {
        double v = value(rank, i, salt);
        if (MPI_FLOAT == t) ((float *) buf)[i] = (float) v;
        else if (MPI_DOUBLE == t) ((double *) buf)[i] = v;
        else if (MPI_INT == t) ((int *) buf)[i] = (int) v;
        else ((unsigned char *) buf)[i] = (unsigned char) v;
    }
}

static size_t tsize(MPI_Datatype t)
{
    int s;
    MPI_Type_size(t, &s);
    return (size_t) s;
}

static void check_one(MPI_Comm comm, MPI_Comm ref, MPI_Datatype t, MPI_Op op, int n, int in_place,
                      int rank, int salt)
{
    size_t bytes = tsize(t) * (size_t) n;
    void *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    MPI_Request req;
    char what[256];

    fill(t, in, n, rank, salt);
    MPI_Allreduce(in, want, n, t, op, ref);
    if (in_place) {
        memcpy(out, in, bytes);
        MPI_Iallreduce(MPI_IN_PLACE, out, n, t, op, comm, &req);
    } else {
        memset(out, 0xEE, bytes);
        MPI_Iallreduce(in, out, n, t, op, comm, &req);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (0 != memcmp(out, want, bytes)) {
        snprintf(what, sizeof(what), "count %d, type size %zu, %s%s: result differs from the reference",
                 n, tsize(t), MPI_SUM == op ? "SUM" : "MAX", in_place ? ", in place" : "");
        fail(rank, what);
    }
    free(in);
    free(out);
    free(want);
}

/* A user-defined sum of ints, over any datatype made of ints. */
static void int_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int n = *len * (int) (tsize(*t) / sizeof(int));
    for (int i = 0; i < n; ++i) {
        ((int *) inout)[i] += ((const int *) in)[i];
    }
}

/* A user-defined op on a derived datatype (two ints): Open MPI retains both
 * on the request the component returns (ompi_coll_base_retain_op, after
 * MPI_Iallreduce and the persistent init return), writing to fields of its
 * own non-blocking request structure.  persistent: the persistent
 * allreduce, started twice, instead of MPI_Iallreduce. */
static void check_user_op(MPI_Comm comm, MPI_Comm ref, MPI_Datatype pair, MPI_Op op, int n,
                          int in_place, int persistent, int rank, int salt)
{
    size_t bytes = 2 * sizeof(int) * (size_t) n;
    int *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    MPI_Request req;
    char what[256];

    for (int start = 0; start < (persistent ? 2 : 1); ++start) {
        for (int i = 0; i < 2 * n; ++i) {
            in[i] = (int) value(rank, i, salt + start);
        }
        MPI_Allreduce(in, want, n, pair, op, ref);
        if (in_place) {
            memcpy(out, in, bytes);
        } else {
            memset(out, 0xEE, bytes);
        }
        if (!persistent) {
            MPI_Iallreduce(in_place ? MPI_IN_PLACE : in, out, n, pair, op, comm, &req);
        }
#if GENX_HAVE_ALLREDUCE_INIT
        else if (0 == start) {
            GENX_ALLREDUCE_INIT(in_place ? MPI_IN_PLACE : in, out, n, pair, op, comm, MPI_INFO_NULL,
                                &req);
        }
        if (persistent) {
            MPI_Start(&req);
        }
#endif
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (0 != memcmp(out, want, bytes)) {
            snprintf(what, sizeof(what), "user-defined op on a derived datatype, count %d%s%s: "
                     "result differs from the reference", n, in_place ? ", in place" : "",
                     persistent ? ", persistent" : "");
            fail(rank, what);
        }
    }
    if (persistent) {
        MPI_Request_free(&req);
    }
    free(in);
    free(out);
    free(want);
}

#if GENX_HAVE_ALLREDUCE_INIT
/* One persistent request started `rounds` times; the input changes between
 * starts and the result must follow. */
static void check_persistent(MPI_Comm comm, MPI_Comm ref, MPI_Datatype t, int n, int in_place,
                             int rank, int salt)
{
    size_t bytes = tsize(t) * (size_t) n;
    void *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    MPI_Request req;
    char what[256];

    GENX_ALLREDUCE_INIT(in_place ? MPI_IN_PLACE : in, out, n, t, MPI_SUM, comm, MPI_INFO_NULL, &req);
    for (int round = 0; round < 4; ++round) {
        fill(t, in, n, rank, salt + 17 * round);
        MPI_Allreduce(in, want, n, t, MPI_SUM, ref);
        if (in_place) {
            memcpy(out, in, bytes);
        } else {
            memset(out, 0xEE, bytes);
        }
        MPI_Start(&req);
        if (round % 2) {
            int done = 0;
            volatile double x = 0;
            while (!done) {
                for (int i = 0; i < 1000; ++i) x += i; /* computation between tests */
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (0 != memcmp(out, want, bytes)) {
            snprintf(what, sizeof(what), "persistent: count %d, type size %zu%s, start %d: result "
                     "differs from the reference", n, tsize(t), in_place ? ", in place" : "", round + 1);
            fail(rank, what);
        }
    }
    MPI_Request_free(&req);
    free(in);
    free(out);
    free(want);
}
#endif

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm ref, dup;
    MPI_Info info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info_create(&info);
    MPI_Info_set(info, "ompi_comm_coll_preference", "^genx");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &ref);
    MPI_Info_free(&info);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    /* 1. correctness */
    {
        const int counts[] = { 1, 2, 7, 64, 1000, 4099, 100000 };
        const MPI_Datatype types[] = { MPI_FLOAT, MPI_DOUBLE, MPI_INT, MPI_UNSIGNED_CHAR };
        int salt = 0;
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c)
            for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
                for (int ip = 0; ip < 2; ++ip)
                    check_one(MPI_COMM_WORLD, ref, types[t], MPI_UNSIGNED_CHAR == types[t] ? MPI_MAX : MPI_SUM,
                              counts[c], ip, rank, ++salt);
    }

    /* 1b. a user-defined op on a derived datatype */
    {
        const int counts[] = { 1, 500, 20000 };
        MPI_Datatype pair;
        MPI_Op usum;
        int salt = 300;

        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        MPI_Op_create(int_sum, 1, &usum);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c)
            for (int ip = 0; ip < 2; ++ip)
                for (int p = 0; p < (GENX_HAVE_ALLREDUCE_INIT ? 2 : 1); ++p)
                    check_user_op(MPI_COMM_WORLD, ref, pair, usum, counts[c], ip, p, rank, ++salt);
        MPI_Op_free(&usum);
        MPI_Type_free(&pair);
        if (0 == rank) {
            printf("iallreduce_check: user-defined op on a derived datatype OK\n");
        }
    }

    /* 2. concurrency */
    {
        enum { K = 6, KD = 2 };
        const int n[K + KD] = { 5, 1000, 33, 70000, 1, 257, 999, 12345 };
        float *in[K + KD], *out[K + KD], *want[K + KD];
        MPI_Request reqs[K + KD];
        float mid_in[16], mid_out[16], mid_want[16];
        for (int k = 0; k < K + KD; ++k) {
            in[k] = malloc(sizeof(float) * (size_t) n[k]);
            out[k] = malloc(sizeof(float) * (size_t) n[k]);
            want[k] = malloc(sizeof(float) * (size_t) n[k]);
            fill(MPI_FLOAT, in[k], n[k], rank, 100 + k);
            MPI_Allreduce(in[k], want[k], n[k], MPI_FLOAT, MPI_SUM, ref);
        }
        fill(MPI_FLOAT, mid_in, 16, rank, 99);
        MPI_Allreduce(mid_in, mid_want, 16, MPI_FLOAT, MPI_SUM, ref);
        for (int k = 0; k < K; ++k) {
            MPI_Iallreduce(in[k], out[k], n[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &reqs[k]);
            if (2 == k) {
                MPI_Allreduce(mid_in, mid_out, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            }
        }
        for (int k = K; k < K + KD; ++k) {
            MPI_Iallreduce(in[k], out[k], n[k], MPI_FLOAT, MPI_SUM, dup, &reqs[k]);
        }
        MPI_Waitall(K + KD, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < K + KD; ++k) {
            if (0 != memcmp(out[k], want[k], sizeof(float) * (size_t) n[k])) {
                char what[128];
                snprintf(what, sizeof(what), "concurrent operation %d (count %d%s) differs", k, n[k],
                         k >= K ? ", on the duplicate" : "");
                fail(rank, what);
            }
            free(in[k]);
            free(out[k]);
            free(want[k]);
        }
        if (0 != memcmp(mid_out, mid_want, sizeof(mid_out))) {
            fail(rank, "the blocking allreduce between non-blocking ones differs");
        }
    }

    /* 3. asynchrony (ranks 0 and 1; the others start at once) */
    {
        float x[256], y[256];
        MPI_Request req;
        int flag = 0, early_true = 0;
        double t0, started, waited, cpu;
        struct timespec cpu0, cpu1;
        fill(MPI_FLOAT, x, 256, rank, 7);
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == rank) {
            usleep(200000);
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
        t0 = MPI_Wtime();
        MPI_Iallreduce(x, y, 256, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        started = MPI_Wtime() - t0;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
        cpu = (cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * (cpu1.tv_nsec - cpu0.tv_nsec);
        if (0 == rank) {
            while (MPI_Wtime() - t0 < 0.150) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    early_true = 1;
                    break;
                }
                usleep(1000);
            }
        }
        if (!flag) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        waited = MPI_Wtime() - t0;
        if (0 == rank) {
            char what[160];
            /* Under a millisecond of CPU time (a wait spins in Open MPI's
             * progress loop, while being descheduled on a loaded machine
             * costs none: make check runs tests side by side on
             * oversubscribed cores), and a wall time that any wait for
             * rank 1 (200 ms) exceeds.  The start takes microseconds. */
            if (cpu > 0.001 || started > 0.020) {
                snprintf(what, sizeof(what), "MPI_Iallreduce took %.3f ms (%.3f ms of CPU) to "
                         "return while rank 1 was late", started * 1e3, cpu * 1e3);
                fail(rank, what);
            }
            if (early_true) {
                fail(rank, "MPI_Test returned true before rank 1 had started");
            }
            if (waited < 0.150) {
                snprintf(what, sizeof(what), "the operation finished after %.3f ms, before rank 1 started",
                         waited * 1e3);
                fail(rank, what);
            }
            printf("iallreduce_check: rank 0: MPI_Iallreduce returned in %.1f us; done after %.1f ms "
                   "(rank 1 started 200 ms late)\n", started * 1e6, waited * 1e3);
        }
    }

#if GENX_HAVE_ALLREDUCE_INIT
    /* 4. persistent */
    {
        const int counts[] = { 1, 7, 1000, 4099, 100000 };
        const MPI_Datatype types[] = { MPI_FLOAT, MPI_INT };
        enum { N2 = 3000 };
        float a_in[N2], a_out[N2], a_want[N2], b_in[N2], b_out[N2], b_want[N2];
        MPI_Request two[2];
        int salt = 500;

        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c)
            for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
                for (int ip = 0; ip < 2; ++ip)
                    check_persistent(MPI_COMM_WORLD, ref, types[t], counts[c], ip, rank, ++salt);
        GENX_ALLREDUCE_INIT(a_in, a_out, N2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]);
        GENX_ALLREDUCE_INIT(b_in, b_out, N2, MPI_FLOAT, MPI_SUM, dup, MPI_INFO_NULL, &two[1]);
        for (int round = 0; round < 3; ++round) {
            fill(MPI_FLOAT, a_in, N2, rank, 900 + round);
            fill(MPI_FLOAT, b_in, N2, rank, 950 + round);
            MPI_Allreduce(a_in, a_want, N2, MPI_FLOAT, MPI_SUM, ref);
            MPI_Allreduce(b_in, b_want, N2, MPI_FLOAT, MPI_SUM, ref);
            MPI_Startall(2, two);
            MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
            if (0 != memcmp(a_out, a_want, sizeof(a_out)) || 0 != memcmp(b_out, b_want, sizeof(b_out))) {
                fail(rank, "persistent: MPI_Startall of two requests on two communicators: result differs");
            }
        }
        MPI_Request_free(&two[0]);
        MPI_Request_free(&two[1]);
        if (0 == rank) {
            printf("iallreduce_check: persistent allreduce OK (%zu requests x 4 starts, 2 by MPI_Startall x 3)\n",
                   sizeof(counts) / sizeof(counts[0]) * sizeof(types) / sizeof(types[0]) * 2);
        }
    }
#else
    if (0 == rank) {
        printf("iallreduce_check: persistent allreduce not tested (neither MPI_Allreduce_init nor MPIX_Allreduce_init in this MPI)\n");
    }
#endif

    MPI_Comm_free(&dup);
    MPI_Comm_free(&ref);
    {
        int all = 0;
        MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (0 == rank) {
            printf(0 == all ? "iallreduce_check: PASS\n" : "iallreduce_check: FAIL (%d failures)\n", all);
        }
        MPI_Finalize();
        return 0 == all ? 0 : 1;
    }
}
