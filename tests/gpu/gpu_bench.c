/*
 * gpu_bench: MPI_Allreduce latency on CUDA device buffers (MPI_FLOAT,
 * MPI_SUM), printed in the table of OSU Micro-Benchmarks 7.4's
 * osu_allreduce with -f (Avg, Min, Max, Iterations), so that the same
 * scripts read it and numbers compare with osu_allreduce -d cuda.
 *
 *   --device      MPI_Allreduce straight on cudaMalloc send and receive
 *                 buffers: what an application of a CUDA-aware MPI does,
 *                 and what genx serves on Open MPI builds that are not
 *                 CUDA-aware.
 *   --app-staged  what an application must do on an MPI that is not
 *                 CUDA-aware: cudaMemcpy the device send buffer to pinned
 *                 host memory, MPI_Allreduce on host memory, cudaMemcpy the
 *                 result back.  The copies are inside the timed region,
 *                 since the application pays for them.  Pinned
 *                 (cudaMallocHost) rather than pageable memory is the
 *                 fastest such application, the fair baseline.
 *
 * Timing is OSU's: per iteration MPI_Wtime, the operation, MPI_Wtime, then
 * an MPI_Barrier outside the timed region; warm-up iterations are not
 * timed.  Each rank's latency is its mean over the timed iterations; Avg is
 * the mean of those over ranks, Min and Max their extremes.
 *
 * Iterations follow OSU: -i (default 1000) and -x (default 100) up to
 * 8 KiB, 100 and 10 above.  Above 1 MiB they shrink further in proportion
 * to the size (at least 5 timed and 2 warm-up at 256 MiB), since a run to
 * 256 MiB with 100 iterations a size would take minutes.  -I and -X set
 * the large-message counts the shrinking starts from.
 *
 * After each size's timed calls every element of the result is checked
 * (each rank sends rank+1, so the sum P(P+1)/2 is exact); a wrong result
 * stops the run with OSU's "DATA VALIDATION ERROR" line and exit status 1.
 * Without a usable CUDA device: "SKIP: no CUDA device (...)" on rank 0 and
 * exit status 77 on every rank.
 *
 * Public MPI API and the CUDA runtime API only.
 */
#include <mpi.h>
#include <cuda_runtime_api.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_WIDTH 18          /* what OSU's configure sets, as bench/genx_bench.c */
#define FLOAT_PRECISION 2
#define BENCH_VERSION "7.4"     /* the OSU release whose output format this follows */
#define DEFAULT_MIN 8
#define DEFAULT_MAX (256UL << 20)
#define LARGE_MESSAGE_SIZE 8192 /* OSU's switch to the large-message counts */
#define SHRINK_FROM (1UL << 20) /* above this the counts shrink with the size */
#define MIN_ITERS 5
#define MIN_WARMUP 2

static int rank, nprocs;

#define CK(call)                                                                         \
    do {                                                                                 \
        cudaError_t ck_err_ = (call);                                                    \
        if (cudaSuccess != ck_err_) {                                                    \
            fprintf(stderr, "gpu_bench: rank %d: %s failed: %s (%s:%d)\n", rank, #call,  \
                    cudaGetErrorString(ck_err_), __FILE__, __LINE__);                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

struct options {
    size_t min_size, max_size;
    long iters, warmup, iters_large, warmup_large;
    int staged; /* 0: --device, 1: --app-staged */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpu_bench --device|--app-staged [-m MIN:MAX] [-i ITER] [-x WARMUP]\n"
            "                 [-I ITER] [-X WARMUP]\n"
            "MPI_Allreduce latency (MPI_FLOAT, MPI_SUM) on CUDA device buffers, in\n"
            "osu_allreduce's format.\n"
            "  --device          MPI_Allreduce on cudaMalloc buffers\n"
            "  --app-staged      cudaMemcpy to pinned host memory, MPI_Allreduce there,\n"
            "                    cudaMemcpy back (all timed)\n"
            "  -m, --message-size MIN:MAX  bytes, powers of 2 from MIN (default 8:268435456)\n"
            "  -i, --iterations N  timed iterations up to 8 KiB (default 1000)\n"
            "  -x, --warmup N      untimed iterations up to 8 KiB (default 100)\n"
            "  -I, --iterations-large N  above 8 KiB (default 100), shrinking above 1 MiB\n"
            "                    in proportion to the size, at least 5\n"
            "  -X, --warmup-large N      above 8 KiB (default 10), shrinking likewise, at least 2\n");
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0')
        return -1;
    *out = (size_t) v;
    return 0;
}

static int parse_count(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* 0: run; 1: exit 0 (help); -1: exit 1 (error, already printed). */
static int parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"device", no_argument, NULL, 'd'},
        {"app-staged", no_argument, NULL, 's'},
        {"message-size", required_argument, NULL, 'm'},
        {"iterations", required_argument, NULL, 'i'},
        {"warmup", required_argument, NULL, 'x'},
        {"iterations-large", required_argument, NULL, 'I'},
        {"warmup-large", required_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char err[160] = "";
    int c, modes = 0;

    *o = (struct options) {DEFAULT_MIN, DEFAULT_MAX, 1000, 100, 100, 10, 0};
    opterr = 0;
    while ('\0' == err[0] && (c = getopt_long(argc, argv, ":m:i:x:I:X:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o->staged = 0;
            ++modes;
            break;
        case 's':
            o->staged = 1;
            ++modes;
            break;
        case 'm': {
            const char *colon = strchr(optarg, ':');
            char lo[64];
            if (NULL == colon) {
                if (parse_size(optarg, &o->max_size))
                    snprintf(err, sizeof err, "bad -m size '%s'", optarg);
                break;
            }
            snprintf(lo, sizeof lo, "%.*s", (int) (colon - optarg), optarg);
            if (lo[0] != '\0' && parse_size(lo, &o->min_size))
                snprintf(err, sizeof err, "bad -m minimum in '%s'", optarg);
            else if (colon[1] != '\0' && parse_size(colon + 1, &o->max_size))
                snprintf(err, sizeof err, "bad -m maximum in '%s'", optarg);
            break;
        }
        case 'i':
        case 'x':
        case 'I':
        case 'X': {
            long *dst = 'i' == c ? &o->iters : 'x' == c ? &o->warmup
                      : 'I' == c ? &o->iters_large : &o->warmup_large;
            if (parse_count(optarg, dst) || (('i' == c || 'I' == c) && *dst < 1))
                snprintf(err, sizeof err, "bad -%c value '%s'", c, optarg);
            break;
        }
        case 'h':
            if (0 == rank)
                usage(stdout);
            return 1;
        case ':':
            snprintf(err, sizeof err, "option %s needs a value", argv[optind - 1]);
            break;
        default:
            snprintf(err, sizeof err, "unknown option %s", argv[optind - 1]);
            break;
        }
    }
    if ('\0' == err[0] && optind < argc)
        snprintf(err, sizeof err, "unexpected argument '%s'", argv[optind]);
    if ('\0' == err[0] && 1 != modes)
        snprintf(err, sizeof err, "give exactly one of --device and --app-staged");
    if ('\0' == err[0] && o->min_size < sizeof(float))
        o->min_size = sizeof(float); /* a call needs one element: OSU starts at the type's size */
    if ('\0' == err[0] && o->max_size > (1UL << 30))
        snprintf(err, sizeof err, "-m: maximum %zu is above 1 GiB", o->max_size);
    if ('\0' == err[0] && o->min_size > o->max_size)
        snprintf(err, sizeof err, "-m: minimum %zu is above maximum %zu", o->min_size, o->max_size);
    if ('\0' != err[0]) {
        if (0 == rank) {
            fprintf(stderr, "gpu_bench: %s\n", err);
            usage(stderr);
        }
        return -1;
    }
    return 0;
}

/* OSU's counts, shrunk in proportion to the size above SHRINK_FROM. */
static long scaled(long large, size_t size, long floor)
{
    if (size <= SHRINK_FROM)
        return large;
    long v = (long) ((double) large * (double) SHRINK_FROM / (double) size);
    return v > floor ? v : (large < floor ? large : floor);
}

int main(int argc, char **argv)
{
    struct options o;
    int ndev = 0, have = 1, all_have = 0, rc = 0;
    cudaError_t err;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    int p = parse(argc, argv, &o);
    if (0 != p) {
        MPI_Finalize();
        return p > 0 ? 0 : 1;
    }

    /* All ranks skip together, or none does (see gpu_allreduce_check.c). */
    err = cudaGetDeviceCount(&ndev);
    if (cudaSuccess != err || ndev < 1)
        have = 0;
    MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_have) {
        if (0 == rank)
            printf("SKIP: no CUDA device (%s)\n",
                   !have ? (cudaSuccess != err ? cudaGetErrorString(err)
                                               : "cudaGetDeviceCount found 0 devices")
                         : "another rank has none");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm node;
    int local_rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    CK(cudaSetDevice(local_rank % ndev));

    size_t max_count = o.max_size / sizeof(float);
    size_t bytes = max_count * sizeof(float);
    float *dsend, *drecv, *hsend = NULL, *hrecv = NULL;
    float *check = malloc(bytes);
    if (NULL == check) {
        fprintf(stderr, "gpu_bench: rank %d: cannot allocate %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CK(cudaMalloc((void **) &dsend, bytes));
    CK(cudaMalloc((void **) &drecv, bytes));
    if (o.staged) {
        CK(cudaMallocHost((void **) &hsend, bytes));
        CK(cudaMallocHost((void **) &hrecv, bytes));
    }
    for (size_t i = 0; i < max_count; ++i)
        check[i] = (float) (rank + 1);
    CK(cudaMemcpy(dsend, check, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(drecv, 0, bytes));
    CK(cudaDeviceSynchronize());
    const float expect = (float) nprocs * (float) (nprocs + 1) / 2.0f;

    if (0 == rank) {
        printf("\n# OSU MPI-CUDA Allreduce Latency Test v%s\n", BENCH_VERSION);
        printf("# Buffers: %s\n",
               o.staged ? "app-staged (cudaMemcpy to pinned host memory, MPI_Allreduce on host "
                          "memory, cudaMemcpy back)"
                        : "device (MPI_Allreduce on cudaMalloc memory)");
        printf("# Datatype: MPI_FLOAT.\n");
        printf("%-10s", "# Size");
        printf("%*s", FIELD_WIDTH, "Avg Latency(us)");
        printf("%*s", FIELD_WIDTH, "Min Latency(us)");
        printf("%*s", FIELD_WIDTH, "Max Latency(us)");
        printf("%12s\n", "Iterations");
        fflush(stdout);
    }

    for (size_t size = o.min_size; size <= o.max_size && 0 == rc; size *= 2) {
        int count = (int) (size / sizeof(float));
        size_t nb = (size_t) count * sizeof(float);
        long iters = size > LARGE_MESSAGE_SIZE ? scaled(o.iters_large, size, MIN_ITERS) : o.iters;
        long warm = size > LARGE_MESSAGE_SIZE ? scaled(o.warmup_large, size, MIN_WARMUP) : o.warmup;
        double timer = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long k = 0; k < warm + iters; ++k) {
            double t0 = MPI_Wtime();
            if (o.staged) {
                CK(cudaMemcpy(hsend, dsend, nb, cudaMemcpyDeviceToHost));
                MPI_Allreduce(hsend, hrecv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                CK(cudaMemcpy(drecv, hrecv, nb, cudaMemcpyHostToDevice));
            } else {
                MPI_Allreduce(dsend, drecv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            }
            double t1 = MPI_Wtime();
            if (k >= warm)
                timer += t1 - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }

        /* Untimed: the whole result, and the receive buffer cleared for the
         * next size so that a call that writes nothing cannot pass on the
         * previous size's result. */
        long errors = 0, all_errors = 0;
        CK(cudaMemcpy(check, drecv, nb, cudaMemcpyDeviceToHost));
        for (int i = 0; i < count; ++i)
            if (check[i] != expect)
                ++errors;
        CK(cudaMemset(drecv, 0, nb));
        CK(cudaDeviceSynchronize());

        double lat = timer * 1e6 / (double) iters, min_lat, max_lat, sum_lat;
        MPI_Reduce(&lat, &min_lat, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &max_lat, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &sum_lat, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (0 == rank) {
            printf("%-10zu%*.*f%*.*f%*.*f%12lu\n", size, FIELD_WIDTH, FLOAT_PRECISION,
                   sum_lat / nprocs, FIELD_WIDTH, FLOAT_PRECISION, min_lat, FIELD_WIDTH,
                   FLOAT_PRECISION, max_lat, (unsigned long) iters);
            fflush(stdout);
            if (all_errors)
                fprintf(stderr,
                        "DATA VALIDATION ERROR: %s exited with status %d on message size %zu.\n",
                        argv[0], 1, size);
        }
        if (all_errors)
            rc = 1;
    }

    CK(cudaFree(dsend));
    CK(cudaFree(drecv));
    if (o.staged) {
        CK(cudaFreeHost(hsend));
        CK(cudaFreeHost(hrecv));
    }
    free(check);
    MPI_Finalize();
    return rc;
}
