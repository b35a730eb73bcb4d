/*
 * thread_check: genx under MPI_THREAD_MULTIPLE.
 *
 * MPI allows collectives on different communicators from different threads
 * at the same time (never two on one communicator).  T threads (default 4)
 * each own a duplicate of MPI_COMM_WORLD (created in order by the main
 * thread) and run N rounds (default 300) of MPI_Allreduce, MPI_Iallreduce
 * completed by MPI_Wait or an MPI_Test loop, and a persistent
 * allreduce request (MPI_Allreduce_init; MPIX_Allreduce_init in Open MPI
 * 4.1: allreduce_init.h) started each round, on counts that change
 * every round (1 to 70000, float and int, sums, in place or not).  Every
 * value is a small integer, so the expected sum is computed locally and
 * compared exactly.  The threads start together (a barrier on world before
 * they are created), and the communicators' first calls (genx's agreement
 * check) happen concurrently too.
 *
 * Before the threads start, one communicator's first call is an
 * MPI_Iallreduce (genx cannot check the ranks' agreement there under
 * MPI_THREAD_MULTIPLE and hands it to the fallback; the run script checks
 * genx says so).
 *
 * Usage: thread_check [THREADS [ROUNDS]].  Prints
 * "thread_check: PASS: ..." on rank 0 and exits 0, "thread_check: SKIP"
 * (exit 77) when the MPI library does not provide MPI_THREAD_MULTIPLE, or
 * names the first failure and exits 1.
 */
#include <mpi.h>
#include "allreduce_init.h"
#if !GENX_HAVE_ALLREDUCE_INIT
#error "thread_check needs MPI_Allreduce_init or Open MPI's MPIX_Allreduce_init"
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_THREADS = 16 };

static int rank, size, rounds = 300;

typedef struct {
    int id;
    MPI_Comm comm;
    long calls;
    int failures;
    char first[256];
} thread_arg;

/* Input of `r` at element i in round k of thread t: small integers. */
static int value(int r, int t, int k, int i) { return (r * 5 + t * 3 + k * 7 + i) % 13 - 6; }

static int expected(int t, int k, int i)
{
    int s = 0;
    for (int r = 0; r < size; ++r) {
        s += value(r, t, k, i);
    }
    return s;
}

static void record(thread_arg *a, const char *what, int k, int n)
{
    if (0 == a->failures++) {
        snprintf(a->first, sizeof(a->first), "rank %d thread %d round %d count %d: %s", rank, a->id,
                 k, n, what);
    }
}

static int count_of(int t, int k)
{
    static const int counts[] = { 1, 3, 17, 256, 1000, 4099, 16384, 70000 };
    return counts[(t + k * 3) % (int) (sizeof(counts) / sizeof(counts[0]))];
}

static void *worker(void *p)
{
    thread_arg *a = (thread_arg *) p;
    enum { NMAX = 70000 };
    float *fin = malloc(sizeof(float) * NMAX), *fout = malloc(sizeof(float) * NMAX);
    int *iin = malloc(sizeof(int) * NMAX), *iout = malloc(sizeof(int) * NMAX);
    int *pin = calloc(4099, sizeof(int)), *pout = calloc(4099, sizeof(int));
    MPI_Request preq;

    /* A persistent request bound once, started every round. */
    GENX_ALLREDUCE_INIT(pin, pout, 4099, MPI_INT, MPI_SUM, a->comm, MPI_INFO_NULL, &preq);
    for (int k = 0; k < rounds; ++k) {
        const int n = count_of(a->id, k);
        const int in_place = (k / 2) % 2;
        MPI_Request req;

        /* Blocking, float. */
        for (int i = 0; i < n; ++i) {
            fin[i] = (float) value(rank, a->id, k, i);
            fout[i] = in_place ? fin[i] : -1000.0f;
        }
        MPI_Allreduce(in_place ? MPI_IN_PLACE : fin, fout, n, MPI_FLOAT, MPI_SUM, a->comm);
        for (int i = 0; i < n; ++i) {
            if (fout[i] != (float) expected(a->id, k, i)) {
                record(a, "MPI_Allreduce result differs", k, n);
                break;
            }
        }
        /* Non-blocking, int, waited or tested. */
        for (int i = 0; i < n; ++i) {
            iin[i] = value(rank, a->id, k + 1, i);
            iout[i] = -1000;
        }
        MPI_Iallreduce(iin, iout, n, MPI_INT, MPI_SUM, a->comm, &req);
        if (k % 2) {
            int done = 0;
            while (!done) {
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < n; ++i) {
            if (iout[i] != expected(a->id, k + 1, i)) {
                record(a, "MPI_Iallreduce result differs", k, n);
                break;
            }
        }
        /* Persistent. */
        for (int i = 0; i < 4099; ++i) {
            pin[i] = value(rank, a->id, k + 2, i);
            pout[i] = -1000;
        }
        MPI_Start(&preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4099; ++i) {
            if (pout[i] != expected(a->id, k + 2, i)) {
                record(a, "persistent allreduce result differs", k, 4099);
                break;
            }
        }
        a->calls += 3;
    }
    MPI_Request_free(&preq);
    free(fin);
    free(fout);
    free(iin);
    free(iout);
    free(pin);
    free(pout);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, nthreads = argc > 1 ? atoi(argv[1]) : 4, failures = 0, all = 0;
    long calls = 0;
    thread_arg args[MAX_THREADS];
    pthread_t tid[MAX_THREADS];

    if (argc > 2) {
        rounds = atoi(argv[2]);
    }
    if (nthreads < 1 || nthreads > MAX_THREADS || rounds < 1) {
        fprintf(stderr, "usage: thread_check [THREADS (1-%d) [ROUNDS]]\n", MAX_THREADS);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_THREAD_MULTIPLE > provided) {
        if (0 == rank) {
            printf("thread_check: SKIP: the MPI library provides thread level %d, not "
                   "MPI_THREAD_MULTIPLE\n", provided);
        }
        MPI_Finalize();
        return 77;
    }
    /* A communicator whose first call is an MPI_Iallreduce: under
     * MPI_THREAD_MULTIPLE genx cannot check the ranks' agreement there
     * (Open MPI makes such calls from its progress engine), so this call
     * goes to the fallback, and the blocking MPI_Allreduce after it checks
     * the agreement; the MPI_Iallreduce after that runs on genx. */
    {
        MPI_Comm c;
        MPI_Request r;
        int in = rank + 1, out = 0, want = size * (size + 1) / 2;

        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        failures += (out != want);
        out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, c);
        failures += (out != want);
        out = 0;
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        failures += (out != want);
        if (0 != failures) {
            fprintf(stderr, "thread_check: FAIL: rank %d: a communicator whose first call is "
                    "MPI_Iallreduce gave a wrong sum\n", rank);
        }
        MPI_Comm_free(&c);
    }
    for (int t = 0; t < nthreads; ++t) {
        args[t].id = t;
        args[t].calls = 0;
        args[t].failures = 0;
        args[t].first[0] = '\0';
        MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nthreads; ++t) {
        pthread_create(&tid[t], NULL, worker, &args[t]);
    }
    for (int t = 0; t < nthreads; ++t) {
        pthread_join(tid[t], NULL);
        if (0 != args[t].failures) {
            fprintf(stderr, "thread_check: FAIL: %s (%d failures in this thread)\n", args[t].first,
                    args[t].failures);
        }
        failures += args[t].failures;
        calls += args[t].calls;
        MPI_Comm_free(&args[t].comm);
    }
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        if (0 == all) {
            printf("thread_check: PASS: %d ranks x %d threads, %ld calls per rank (allreduce, "
                   "iallreduce, persistent), every result exact\n", size, nthreads, calls);
        } else {
            printf("thread_check: FAIL (%d failures)\n", all);
        }
    }
    MPI_Finalize();
    return 0 == all ? 0 : 1;
}
