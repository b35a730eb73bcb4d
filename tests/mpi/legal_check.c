/*
 * legal_check: legal MPI programs that must complete whichever component
 * runs MPI_Iallreduce and persistent allreduce (run-legal-tests.sh runs it
 * under genx).  MPI orders collectives per communicator only, and an
 * initiation call (MPI_Iallreduce, MPI_Start) must not wait for another
 * rank, so each case puts genx's first call on fresh communicators:
 *
 *   cross2, cross3  one rank starts MPI_Iallreduce on communicators A, B
 *                   (and C) in that order, the others in reverse, then all
 *                   wait;
 *   nb-blocking     one rank starts MPI_Iallreduce on A and then calls a
 *                   blocking MPI_Allreduce on B, the others the reverse;
 *   nb-barrier      the same with MPI_Barrier on B;
 *   late            one rank starts 300 ms late: the others' MPI_Iallreduce
 *                   returns at once (under 1 ms of CPU and 20 ms of wall
 *                   time; the time is printed) and MPI_Test stays false for
 *                   150 ms;
 *   p-cross2        persistent requests initialised on A and B in the same
 *                   order everywhere (MPI-4.0 lets initialisation
 *                   synchronise), started in opposite orders, three times;
 *   p-blocking      MPI_Start on A, then MPI_Allreduce on B, the others the
 *                   reverse;
 *   p-late          one rank starts 300 ms late: as late, for MPI_Start.
 *
 * --threads: MPI_THREAD_MULTIPLE, every case run by two threads at once on
 * communicators of their own (the rank that takes the other order differs
 * between them).  Every result is checked exactly (integer sums).  Prints
 * "legal_check: <case> OK" per case and thread on rank 0, then
 * "legal_check: PASS" when every rank passed every case; exits 1 otherwise.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allreduce_init.h"

enum { NCOMMS = 15, NCOUNTS = 3, MAXCOUNT = 20000 };
static const int counts[NCOUNTS] = { 1, 300, MAXCOUNT };

/* The start of a call that must not wait, in two bounds: its CPU time
 * under a millisecond (a wait spins in Open MPI's progress loop; being
 * descheduled on a loaded machine costs no CPU time), and its wall time
 * far below the 300 ms a late rank sleeps (a wait that sleeps instead of
 * spinning). */
#define START_CPU_LIMIT_S 0.001
#define START_LIMIT_S 0.020

/* This thread's CPU time in seconds. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
    int rank, size;
    int odd;      /* the rank that takes the other order */
    int late;     /* the rank that starts late */
    int thread;   /* 0 or 1 */
    MPI_Comm comms[NCOMMS];
    int failures;
    char report[1024];
} set_t;

static void fail(set_t *s, const char *what, const char *detail)
{
    fprintf(stderr, "legal_check: FAIL rank %d thread %d: %s: %s\n", s->rank, s->thread, what,
            detail);
    ++s->failures;
}

static void fill(int *x, int n, int rank, int salt)
{
    for (int i = 0; i < n; ++i) {
        x[i] = (rank + 1) * (i % 7 + 1) + salt;
    }
}

/* The sum over ranks of fill(rank, salt), element i. */
static int want(int i, int size, int salt)
{
    return (i % 7 + 1) * size * (size + 1) / 2 + size * salt;
}

static void check(set_t *s, const char *what, const int *y, int n, int salt)
{
    for (int i = 0; i < n; ++i) {
        if (y[i] != want(i, s->size, salt)) {
            char d[160];
            snprintf(d, sizeof(d), "element %d of %d is %d, expected %d", i, n, y[i],
                     want(i, s->size, salt));
            fail(s, what, d);
            return;
        }
    }
}

typedef struct {
    int x[MAXCOUNT], y[MAXCOUNT];
} buf_t;

/* cross2 / cross3: n communicators from `first`, started in opposite
 * orders by the odd rank and the others. */
static void case_cross(set_t *s, const char *name, int first, int n, buf_t *b)
{
    for (int c = 0; c < NCOUNTS; ++c) {
        MPI_Request req[3];
        for (int k = 0; k < n; ++k) {
            int j = (s->rank == s->odd) ? k : n - 1 - k;
            fill(b[j].x, counts[c], s->rank, j + c);
            MPI_Iallreduce(b[j].x, b[j].y, counts[c], MPI_INT, MPI_SUM, s->comms[first + j],
                           &req[j]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        for (int j = 0; j < n; ++j) {
            check(s, name, b[j].y, counts[c], j + c);
        }
    }
}

/* nb-blocking / nb-barrier: MPI_Iallreduce on A, a blocking collective on
 * B; the others the reverse. */
static void case_nb_blocking(set_t *s, const char *name, int a, int bc, int barrier, buf_t *b)
{
    for (int c = 0; c < NCOUNTS; ++c) {
        MPI_Request req;
        int one = 1, total = 0;
        fill(b[0].x, counts[c], s->rank, c);
        if (s->rank == s->odd) {
            MPI_Iallreduce(b[0].x, b[0].y, counts[c], MPI_INT, MPI_SUM, s->comms[a], &req);
        }
        if (barrier) {
            MPI_Barrier(s->comms[bc]);
        } else {
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, s->comms[bc]);
            if (total != s->size) {
                fail(s, name, "the blocking allreduce on B is wrong");
            }
        }
        if (s->rank != s->odd) {
            MPI_Iallreduce(b[0].x, b[0].y, counts[c], MPI_INT, MPI_SUM, s->comms[a], &req);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(s, name, b[0].y, counts[c], c);
    }
}

/* After a start made while the late rank sleeps: the start's time is
 * bounded and MPI_Test stays false for 150 ms. */
static void late_after_start(set_t *s, const char *name, MPI_Request *req, double t0,
                             double started, double cpu)
{
    int flag = 0;
    char d[200];

    if (started > START_LIMIT_S || cpu > START_CPU_LIMIT_S) {
        snprintf(d, sizeof(d), "the start took %.3f ms (%.3f ms of CPU) while rank %d was late",
                 started * 1e3, cpu * 1e3, s->late);
        fail(s, name, d);
    }
    while (MPI_Wtime() - t0 < 0.150) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            snprintf(d, sizeof(d), "MPI_Test was true after %.3f ms, before rank %d started",
                     (MPI_Wtime() - t0) * 1e3, s->late);
            fail(s, name, d);
            break;
        }
        usleep(1000);
    }
    if (0 == s->rank) {
        snprintf(s->report + strlen(s->report), sizeof(s->report) - strlen(s->report),
                 " %s start %.1f us;", name, started * 1e6);
    }
}

/* The ranks meet, the late rank sleeps 300 ms, the others time `start`
 * (which posts *req: an MPI_Iallreduce or an MPI_Start) and check it with
 * late_after_start; then every rank waits for *req. */
typedef void (*start_fn)(set_t *s, buf_t *b, MPI_Request *req);

static void late_start(set_t *s, const char *name, start_fn start, buf_t *b, MPI_Request *req)
{
    double t0, started, cpu;

    MPI_Barrier(s->comms[10]);
    if (s->rank == s->late) {
        usleep(300000);
    }
    cpu = thread_cpu();
    t0 = MPI_Wtime();
    start(s, b, req);
    started = MPI_Wtime() - t0;
    cpu = thread_cpu() - cpu;
    if (s->rank != s->late) {
        late_after_start(s, name, req, t0, started, cpu);
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void start_iallreduce(set_t *s, buf_t *b, MPI_Request *req)
{
    MPI_Iallreduce(b[0].x, b[0].y, counts[1], MPI_INT, MPI_SUM, s->comms[9], req);
}

static void case_late(set_t *s, buf_t *b)
{
    MPI_Request req;

    fill(b[0].x, counts[1], s->rank, 3);
    late_start(s, "late", start_iallreduce, b, &req);
    check(s, "late", b[0].y, counts[1], 3);
}

#if GENX_HAVE_ALLREDUCE_INIT
static void start_persistent(set_t *s, buf_t *b, MPI_Request *req)
{
    (void) s;
    (void) b;
    MPI_Start(req);
}

static void case_persistent(set_t *s, buf_t *b)
{
    MPI_Request req[2], late_req;
    int one = 1, total = 0;

    /* p-cross2: initialised in one order everywhere, started in two. */
    for (int j = 0; j < 2; ++j) {
        GENX_ALLREDUCE_INIT(b[j].x, b[j].y, counts[2], MPI_INT, MPI_SUM, s->comms[11 + j],
                            MPI_INFO_NULL, &req[j]);
    }
    for (int it = 0; it < 3; ++it) {
        for (int k = 0; k < 2; ++k) {
            int j = (s->rank == s->odd) ? k : 1 - k;
            fill(b[j].x, counts[2], s->rank, j + it);
            MPI_Start(&req[j]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        for (int j = 0; j < 2; ++j) {
            check(s, "p-cross2", b[j].y, counts[2], j + it);
        }
    }
    /* p-blocking: MPI_Start on A, MPI_Allreduce on B; the others the
     * reverse. */
    fill(b[0].x, counts[2], s->rank, 5);
    if (s->rank == s->odd) {
        MPI_Start(&req[0]);
    }
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, s->comms[13]);
    if (s->rank != s->odd) {
        MPI_Start(&req[0]);
    }
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    check(s, "p-blocking", b[0].y, counts[2], 5);
    if (total != s->size) {
        fail(s, "p-blocking", "the blocking allreduce on B is wrong");
    }
    /* p-late */
    GENX_ALLREDUCE_INIT(b[2].x, b[2].y, counts[1], MPI_INT, MPI_SUM, s->comms[14], MPI_INFO_NULL,
                        &late_req);
    fill(b[2].x, counts[1], s->rank, 6);
    late_start(s, "p-late", start_persistent, b, &late_req);
    check(s, "p-late", b[2].y, counts[1], 6);
    for (int j = 0; j < 2; ++j) {
        MPI_Request_free(&req[j]);
    }
    MPI_Request_free(&late_req);
}
#endif

static void say_ok(set_t *s, const char *name, int before)
{
    if (0 == s->rank && s->failures == before) {
        printf("legal_check: %s OK (thread %d)\n", name, s->thread);
        fflush(stdout);
    }
}

static void *run_set(void *arg)
{
    set_t *s = (set_t *) arg;
    buf_t *b = malloc(3 * sizeof(buf_t));
    int before;

    if (NULL == b) {
        fail(s, "setup", "out of memory");
        return NULL;
    }
    before = s->failures;
    case_cross(s, "cross2", 0, 2, b);
    say_ok(s, "cross2", before);
    before = s->failures;
    case_cross(s, "cross3", 2, 3, b);
    say_ok(s, "cross3", before);
    before = s->failures;
    case_nb_blocking(s, "nb-blocking", 5, 6, 0, b);
    say_ok(s, "nb-blocking", before);
    before = s->failures;
    case_nb_blocking(s, "nb-barrier", 7, 8, 1, b);
    say_ok(s, "nb-barrier", before);
    before = s->failures;
    case_late(s, b);
    say_ok(s, "late", before);
#if GENX_HAVE_ALLREDUCE_INIT
    before = s->failures;
    case_persistent(s, b);
    say_ok(s, "persistent (p-cross2, p-blocking, p-late)", before);
#endif
    free(b);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = (argc > 1 && 0 == strcmp(argv[1], "--threads")) ? 2 : 1;
    int provided = MPI_THREAD_SINGLE, rank, size, failures = 0, total = 0;
    set_t *sets;
    pthread_t tid[2];

    if (2 == threads) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 == threads && MPI_THREAD_MULTIPLE != provided) {
        if (0 == rank) {
            printf("legal_check: SKIP: MPI_THREAD_MULTIPLE not provided\n");
        }
        MPI_Finalize();
        return 77;
    }
    if (size < 2) {
        if (0 == rank) {
            fprintf(stderr, "legal_check: needs at least 2 ranks\n");
        }
        MPI_Finalize();
        return 1;
    }
    sets = calloc((size_t) threads, sizeof(*sets));
    for (int t = 0; t < threads; ++t) {
        sets[t].rank = rank;
        sets[t].size = size;
        sets[t].thread = t;
        sets[t].odd = (0 == t) ? 0 : size - 1;
        sets[t].late = (0 == t) ? 1 : size - 2;
        for (int c = 0; c < NCOMMS; ++c) {
            MPI_Comm_dup(MPI_COMM_WORLD, &sets[t].comms[c]);
        }
    }
    if (1 == threads) {
        run_set(&sets[0]);
    } else {
        for (int t = 0; t < threads; ++t) {
            pthread_create(&tid[t], NULL, run_set, &sets[t]);
        }
        for (int t = 0; t < threads; ++t) {
            pthread_join(tid[t], NULL);
        }
    }
    for (int t = 0; t < threads; ++t) {
        failures += sets[t].failures;
        if (0 == rank && '\0' != sets[t].report[0]) {
            printf("legal_check: rank 0 thread %d:%s\n", t, sets[t].report);
        }
        for (int c = 0; c < NCOMMS; ++c) {
            MPI_Comm_free(&sets[t].comms[c]);
        }
    }
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf(0 == total ? "legal_check: PASS\n" : "legal_check: FAILED (%d failures)\n", total);
    }
    free(sets);
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
