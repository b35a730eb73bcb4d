/*
 * genx-bench: an MPI_Allreduce latency benchmark whose default output is the
 * table of OSU Micro-Benchmarks 7.4's osu_allreduce, byte for byte, so that
 * scripts written for OSU read it unchanged and numbers compare directly.
 * Written from scratch from the documented format and timing method; no
 * OSU code.
 *
 * Timing is OSU's: per iteration MPI_Wtime, MPI_Allreduce, MPI_Wtime, then
 * an MPI_Barrier outside the timed region; warm-up iterations are not
 * timed.  Each rank's latency is its mean over the timed iterations; Avg is
 * the mean of those over ranks, Min and Max their extremes.
 *
 * Validation (-c) is stricter than OSU's: every rank contributes values
 * that depend on its rank, the element and the iteration, so a plan that
 * counts one rank twice and forgets another fails, and every element of
 * every call (warm-up included) is compared exactly.  The values are small
 * integers, so sums are exact in every type and in any order.
 *
 * Extra columns (bus bandwidth, the network bound and the fraction of it
 * reached) appear only when asked for, after OSU's columns.
 *
 * --iallreduce measures MPI_Iallreduce as OSU's osu_iallreduce does: first
 * the pure communication time (MPI_Iallreduce then MPI_Wait), then, with a
 * computation of that length between the two (optionally interrupted by
 * --probes MPI_Test calls, OSU's -t), the overall time and the time spent
 * computing; overlap = max(0, 100 - (overall - compute) / pure * 100) from
 * the averages over ranks.  The computation is a calibrated spin on
 * MPI_Wtime, as a stand-in for the application's work.  --phases splits
 * both passes' time into what MPI_Iallreduce took to return and what
 * MPI_Wait took after it (or after the computation): where the pure time is
 * work the ranks' CPUs do in those two calls (a TCP exchange's system
 * calls), no computation can hide it, which the overlap percentage alone
 * does not show.
 */
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"   /* built outside the project's make */
#endif
#define FIELD_WIDTH 18          /* what OSU's configure sets, not osu_util.h's 20 */
#define FLOAT_PRECISION 2
#define BENCH_VERSION "7.4"     /* the OSU release whose output format this follows */
#define DEFAULT_MIN 1
#define DEFAULT_MAX (1UL << 20)
#define LARGE_MESSAGE_SIZE 8192
#define ITERS_SMALL 1000
#define WARMUP_SMALL 100
#define ITERS_LARGE 100
#define WARMUP_LARGE 10
#define MAX_TYPES 8

enum dtype { T_CHAR, T_INT, T_FLOAT, T_DOUBLE };

static const struct {
    const char *name;       /* as OSU prints it */
    const char *shortname;
    size_t size;
} type_info[] = {
    [T_CHAR] = {"MPI_CHAR", "char", sizeof(char)},
    [T_INT] = {"MPI_INT", "int", sizeof(int)},
    [T_FLOAT] = {"MPI_FLOAT", "float", sizeof(float)},
    [T_DOUBLE] = {"MPI_DOUBLE", "double", sizeof(double)},
};

struct options {
    size_t min_size, max_size;
    size_t size_factor;         /* each size this many times the one before (2) */
    long iterations, warmup;    /* -1: OSU's size-dependent defaults */
    int full, validate, val_warmup, in_place;
    int busbw;
    double link_rate;           /* bit/s; 0 = no bound columns */
    double max_time;            /* seconds per size; 0 = OSU's fixed counts */
    int nonblocking;            /* --iallreduce: osu_iallreduce's method */
    int probes;                 /* --probes: MPI_Test calls during the computation */
    int phases;                 /* --phases: MPI_Iallreduce's and MPI_Wait's own times */
    enum dtype types[MAX_TYPES];
    int ntypes;
};

static int rank, nprocs;

static MPI_Datatype mpi_type(enum dtype t)
{
    switch (t) {
    case T_CHAR: return MPI_CHAR;
    case T_INT: return MPI_INT;
    case T_FLOAT: return MPI_FLOAT;
    default: return MPI_DOUBLE;
    }
}

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: genx-bench [options]\n"
        "MPI_Allreduce latency (MPI_SUM), output compatible with OSU 7.4 osu_allreduce.\n"
        "  -m, --message-size [MIN:]MAX  sizes in bytes, doubling or --size-factor (default 1:1048576;\n"
        "                                K, M, G suffixes accepted; -m 8: sets MIN only)\n"
        "      --size-factor F           each size F times the one before (default 2;\n"
        "                                2 to 1024): fewer sizes for long sweeps\n"
        "  -i, --iterations N            timed iterations per size (default 1000 up to\n"
        "                                8 KiB, 100 above)\n"
        "  -x, --warmup N                untimed iterations first (default 100 / 10)\n"
        "  -f, --full                    add Min, Max latency and Iterations columns\n"
        "  -c, --validation              check every element of every result; adds a\n"
        "                                Validation column; exits 1 on a mismatch\n"
        "  -u, --validation-warmup N     with -c: untimed allreduces before each timed\n"
        "                                one (default 5, at most 10)\n"
        "  -T, --type TYPE               char, int, float, double or all (repeatable,\n"
        "                                or comma-separated; default char)\n"
        "  -l, --in-place                use MPI_IN_PLACE\n"
        "      --busbw                   add bus bandwidth, S/t*2(P-1)/P, in MB/s\n"
        "      --link-rate RATE          add the bound 2(N-1)/N*S/RATE, RATE in bit/s\n"
        "      --max-time SECONDS        cap the time per size (fewer iterations)\n"
        "      --iallreduce              MPI_Iallreduce as OSU's osu_iallreduce: overall,\n"
        "                                compute and pure communication time, overlap %%\n"
        "      --probes N                with --iallreduce: MPI_Test calls spread over\n"
        "                                the computation (OSU's -t; default 0)\n"
        "      --phases                  with --iallreduce: add MPI_Iallreduce and MPI_Wait times\n"
        "  -v, --version                 print the version\n"
        "  -h, --help                    this text\n");
}

/* "64", "64K", "16M", "1G" -> bytes; returns 0 on success. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    switch (toupper((unsigned char) *end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return -1;
    *out = (size_t) v;
    return 0;
}

/* "200M", "200mbit", "10G", "1.5e9" -> bit/s (decimal prefixes). */
static int parse_rate(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return -1;
    switch (tolower((unsigned char) *end)) {
    case 'k': v *= 1e3; end++; break;
    case 'm': v *= 1e6; end++; break;
    case 'g': v *= 1e9; end++; break;
    default: break;
    }
    if (strcmp(end, "") != 0 && strcmp(end, "bit") != 0 && strcmp(end, "bit/s") != 0 &&
        strcmp(end, "bps") != 0)
        return -1;
    *out = v;
    return 0;
}

/* A whole decimal integer in [lo, hi]; returns 0 on success. */
static int parse_long_in(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int add_types(struct options *o, const char *arg, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *name = tok;
        for (char *p = name; *p; p++)
            *p = (char) tolower((unsigned char) *p);
        if (strncmp(name, "mpi_", 4) == 0)
            name += 4;
        if (strcmp(name, "all") == 0) {
            o->ntypes = 0;
            for (int t = T_CHAR; t <= T_DOUBLE; t++)
                o->types[o->ntypes++] = (enum dtype) t;
            continue;
        }
        int found = -1;
        for (int t = T_CHAR; t <= T_DOUBLE; t++)
            if (strcmp(name, type_info[t].shortname) == 0)
                found = t;
        if (found < 0) {
            snprintf(err, errlen, "unknown type '%s' (char, int, float, double, all)", tok);
            return -1;
        }
        if (o->ntypes == MAX_TYPES) {
            snprintf(err, errlen, "too many -T types (at most %d)", MAX_TYPES);
            return -1;
        }
        o->types[o->ntypes++] = (enum dtype) found;
    }
    return 0;
}

/* 0: run; 1: exit 0 (help/version printed); 2: exit 1 (error printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"message-size", required_argument, NULL, 'm'},
        {"iterations", required_argument, NULL, 'i'},
        {"warmup", required_argument, NULL, 'x'},
        {"full", no_argument, NULL, 'f'},
        {"validation", no_argument, NULL, 'c'},
        {"validation-warmup", required_argument, NULL, 'u'},
        {"type", required_argument, NULL, 'T'},
        {"in-place", no_argument, NULL, 'l'},
        {"busbw", no_argument, NULL, 'B'},
        {"link-rate", required_argument, NULL, 'R'},
        {"max-time", required_argument, NULL, 'S'},
        {"size-factor", required_argument, NULL, 'F'},
        {"iallreduce", no_argument, NULL, 'N'},
        {"probes", required_argument, NULL, 'P'},
        {"phases", no_argument, NULL, 'H'},
        {"version", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char err[256] = "";
    int c;

    memset(o, 0, sizeof(*o));
    o->min_size = DEFAULT_MIN;
    o->max_size = DEFAULT_MAX;
    o->size_factor = 2;
    o->iterations = o->warmup = -1;
    o->val_warmup = 5;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:hvfm:i:x:cu:T:l", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            if (rank == 0)
                usage(stdout);
            return 1;
        case 'v':
            if (rank == 0)
                printf("genx-bench (genx %s): MPI_Allreduce latency, OSU %s-compatible output\n",
                       PACKAGE_VERSION, BENCH_VERSION);
            return 1;
        case 'f': o->full = 1; break;
        case 'c': o->validate = 1; break;
        case 'l': o->in_place = 1; break;
        case 'B': o->busbw = 1; break;
        case 'N': o->nonblocking = 1; break;
        case 'H': o->phases = 1; break;
        case 'P': {
            long v;
            if (parse_long_in(optarg, 0, 1000000, &v) != 0)
                snprintf(err, sizeof(err), "bad --probes '%s' (0 to 1000000)", optarg);
            else
                o->probes = (int) v;
            break;
        }
        case 'm': {
            char lo[64];
            const char *colon = strchr(optarg, ':');
            if (!colon) {
                if (parse_size(optarg, &o->max_size) != 0)
                    snprintf(err, sizeof(err), "bad -m size '%s'", optarg);
                break;
            }
            snprintf(lo, sizeof(lo), "%.*s", (int) (colon - optarg), optarg);
            if (parse_size(lo, &o->min_size) != 0)
                snprintf(err, sizeof(err), "bad -m minimum in '%s'", optarg);
            else if (colon[1] != '\0' && parse_size(colon + 1, &o->max_size) != 0)
                snprintf(err, sizeof(err), "bad -m maximum in '%s'", optarg);
            break;
        }
        case 'i':
        case 'x':
        case 'u': {
            long v;
            if (parse_long_in(optarg, c == 'i' ? 1 : 0, LONG_MAX, &v) != 0) {
                snprintf(err, sizeof(err), "bad -%c value '%s'", c, optarg);
                break;
            }
            if (c == 'i')
                o->iterations = v;
            else if (c == 'x')
                o->warmup = v;
            else if (v > 10)
                snprintf(err, sizeof(err), "-u %ld: at most 10", v);
            else
                o->val_warmup = (int) v;
            break;
        }
        case 'T':
            add_types(o, optarg, err, sizeof(err));
            break;
        case 'R':
            if (parse_rate(optarg, &o->link_rate) != 0)
                snprintf(err, sizeof(err), "bad --link-rate '%s' (e.g. 200M, 10G)", optarg);
            break;
        case 'F': {
            long v;
            if (parse_long_in(optarg, 2, 1024, &v) != 0)
                snprintf(err, sizeof(err), "bad --size-factor '%s' (an integer, 2 to 1024)", optarg);
            else
                o->size_factor = (size_t) v;
            break;
        }
        case 'S': {
            char *end;
            o->max_time = strtod(optarg, &end);
            if (end == optarg || *end || o->max_time <= 0)
                snprintf(err, sizeof(err), "bad --max-time '%s' (seconds > 0)", optarg);
            break;
        }
        case ':':
            snprintf(err, sizeof(err), "option -%c needs a value", optopt);
            break;
        default:
            if (optopt)
                snprintf(err, sizeof(err), "unknown option -%c", optopt);
            else
                snprintf(err, sizeof(err), "unknown option %s", argv[optind - 1]);
            break;
        }
        if (err[0])
            break;
    }
    if (!err[0] && o->probes > 0 && !o->nonblocking)
        snprintf(err, sizeof(err), "--probes needs --iallreduce");
    if (!err[0] && o->phases && !o->nonblocking)
        snprintf(err, sizeof(err), "--phases needs --iallreduce");
    if (!err[0] && o->nonblocking && (o->busbw || o->link_rate > 0))
        snprintf(err, sizeof(err), "--busbw and --link-rate apply to MPI_Allreduce only");
    if (!err[0] && optind < argc)
        snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
    if (!err[0] && o->max_size > (size_t) 1 << 30)
        snprintf(err, sizeof(err), "-m: maximum %zu is above 1 GiB", o->max_size);
    if (!err[0] && o->min_size > o->max_size)
        snprintf(err, sizeof(err), "-m: minimum %zu is above maximum %zu", o->min_size, o->max_size);
    if (err[0]) {
        if (rank == 0) {
            fprintf(stderr, "genx-bench: %s\n", err);
            usage(stderr);
        }
        return 2;
    }
    if (o->ntypes == 0)
        o->types[o->ntypes++] = T_CHAR;
    if (o->min_size == 0)
        o->min_size = 1;    /* a zero-byte call has no elements: OSU skips it */
    return 0;
}

/* Rank r's contribution to element i on iteration k.  Bounded so that the
 * sum over ranks fits every type exactly (char: 127 total). */
static long contribution(long r, size_t i, long k, long bound)
{
    return (long) ((i * 7 + (size_t) r * 13 + (size_t) k * 3) % (size_t) bound);
}

static long value_bound(enum dtype t)
{
    long b = t == T_CHAR ? 127 / nprocs : 1000;
    return b < 1 ? 1 : b;
}

static void fill(void *buf, enum dtype t, size_t count, long k)
{
    long bound = value_bound(t);
    for (size_t i = 0; i < count; i++) {
        long v = contribution(rank, i, k, bound);
        switch (t) {
        case T_CHAR: ((char *) buf)[i] = (char) v; break;
        case T_INT: ((int *) buf)[i] = (int) v; break;
        case T_FLOAT: ((float *) buf)[i] = (float) v; break;
        case T_DOUBLE: ((double *) buf)[i] = (double) v; break;
        }
    }
}

/* Number of wrong elements. */
static long check(const void *buf, enum dtype t, size_t count, long k)
{
    long bound = value_bound(t), wrong = 0;
    for (size_t i = 0; i < count; i++) {
        long want = 0;
        for (long r = 0; r < nprocs; r++)
            want += contribution(r, i, k, bound);
        int ok;
        switch (t) {
        case T_CHAR: ok = ((const char *) buf)[i] == (char) want; break;
        case T_INT: ok = ((const int *) buf)[i] == (int) want; break;
        case T_FLOAT: ok = ((const float *) buf)[i] == (float) want; break;
        default: ok = ((const double *) buf)[i] == (double) want; break;
        }
        wrong += !ok;
    }
    return wrong;
}

static void fill_const(void *buf, enum dtype t, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        switch (t) {
        case T_CHAR: ((char *) buf)[i] = 1; break;
        case T_INT: ((int *) buf)[i] = 1; break;
        case T_FLOAT: ((float *) buf)[i] = 1.0f; break;
        case T_DOUBLE: ((double *) buf)[i] = 1.0; break;
        }
    }
}

/* Number of hosts: shared-memory domains, which under genx-cluster are the
 * emulated hosts. */
static int count_hosts(void)
{
    MPI_Comm node;
    int node_rank, leaders = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0;
    MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    return leaders;
}

struct call {
    const struct options *o;
    enum dtype t;
    MPI_Datatype mt;
    size_t count;
    void *sbuf, *rbuf;
    long errors;
    double start_s, wait_s;     /* --iallreduce: timed calls' MPI_Iallreduce, MPI_Wait */
};

/* The application's work between MPI_Iallreduce and MPI_Wait: a spin of
 * `seconds` on MPI_Wtime, cut by `probes` MPI_Test calls into equal parts. */
static volatile double spin_sink;
static void compute(double seconds, int probes, MPI_Request *req)
{
    double t0 = MPI_Wtime(), x = 1.0;
    for (int part = 0; part <= probes; part++) {
        double until = t0 + seconds * (double) (part + 1) / (double) (probes + 1);
        while (MPI_Wtime() < until)
            x = x * 1.0000001 + 1e-9;
        if (part < probes) {
            int flag;
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
    }
    spin_sink = x;
}

/* One allreduce through MPI_Iallreduce, timed as osu_iallreduce does: with
 * work < 0, MPI_Iallreduce then MPI_Wait (pure communication); otherwise
 * that much computation in between, whose own duration goes to *spent. */
static double one_icall(struct call *c, const void *send, double work, double *spent,
                        double phase[2])
{
    MPI_Request req;
    double t0 = MPI_Wtime();
    MPI_Iallreduce(send, c->rbuf, (int) c->count, c->mt, MPI_SUM, MPI_COMM_WORLD, &req);
    double t1 = MPI_Wtime(), w0 = t1;
    if (work >= 0) {
        compute(work, c->o->probes, &req);
        w0 = MPI_Wtime();
        *spent += w0 - t1;
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    double t2 = MPI_Wtime();
    phase[0] = t1 - t0;
    phase[1] = t2 - w0;
    return t2 - t0;
}

/* One measured allreduce (iteration k), with -c's set-up, extra untimed
 * calls and checks around it; returns the seconds the call took.  With
 * --iallreduce, `work` and `spent` are one_icall's. */
static double one_call_nb(struct call *c, long k, double work, double *spent);
static double one_call(struct call *c, long k)
{
    double unused = 0;
    if (c->o->nonblocking)
        return one_call_nb(c, k, -1.0, &unused);
    const struct options *o = c->o;
    void *in = o->in_place ? c->rbuf : c->sbuf;
    const void *send = o->in_place ? MPI_IN_PLACE : c->sbuf;
    if (o->validate) {
        for (int u = 0; u < o->val_warmup; u++) {
            fill(in, c->t, c->count, k);
            MPI_Allreduce(send, c->rbuf, (int) c->count, c->mt, MPI_SUM, MPI_COMM_WORLD);
            c->errors += check(c->rbuf, c->t, c->count, k);
        }
        fill(in, c->t, c->count, k);
        if (!o->in_place)       /* a result never written shows up as wrong */
            memset(c->rbuf, 0xA5, c->count * type_info[c->t].size);
    }
    double t0 = MPI_Wtime();
    MPI_Allreduce(send, c->rbuf, (int) c->count, c->mt, MPI_SUM, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    if (o->validate)
        c->errors += check(c->rbuf, c->t, c->count, k);
    MPI_Barrier(MPI_COMM_WORLD);
    return t1 - t0;
}

static double one_call_nb(struct call *c, long k, double work, double *spent)
{
    const struct options *o = c->o;
    void *in = o->in_place ? c->rbuf : c->sbuf;
    const void *send = o->in_place ? MPI_IN_PLACE : c->sbuf;
    if (o->validate) {
        for (int u = 0; u < o->val_warmup; u++) {
            double ignored = 0;
            fill(in, c->t, c->count, k);
            double unused[2];
            one_icall(c, send, -1.0, &ignored, unused);
            c->errors += check(c->rbuf, c->t, c->count, k);
        }
        fill(in, c->t, c->count, k);
        if (!o->in_place)
            memset(c->rbuf, 0xA5, c->count * type_info[c->t].size);
    }
    double phase[2];
    double t = one_icall(c, send, work, spent, phase);
    c->start_s += phase[0];
    c->wait_s += phase[1];
    if (o->validate)
        c->errors += check(c->rbuf, c->t, c->count, k);
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void print_header(const struct options *o)
{
    if (o->nonblocking) {
        printf("%-10s", "# Size");
        printf("%*s%*s%*s%*s", FIELD_WIDTH, "Overall(us)", FIELD_WIDTH, "Compute(us)",
               FIELD_WIDTH, "Pure Comm.(us)", FIELD_WIDTH, "Overlap(%)");
        if (o->full)
            printf("%*s%*s%12s", FIELD_WIDTH, "Min Comm.(us)", FIELD_WIDTH, "Max Comm.(us)",
                   "Iterations");
        if (o->validate)
            printf("%*s", FIELD_WIDTH, "Validation");
        if (o->phases)
            printf("%*s%*s%*s%*s", FIELD_WIDTH, "Start(us)", FIELD_WIDTH, "Wait(us)",
                   FIELD_WIDTH, "Ov. Start(us)", FIELD_WIDTH, "Ov. Wait(us)");
        printf("\n");
        fflush(stdout);
        return;
    }
    printf("%-10s", "# Size");
    printf("%*s", FIELD_WIDTH, "Avg Latency(us)");
    if (o->full) {
        printf("%*s", FIELD_WIDTH, "Min Latency(us)");
        printf("%*s", FIELD_WIDTH, "Max Latency(us)");
        printf("%12s", "Iterations");
    }
    if (o->validate)
        printf("%*s", FIELD_WIDTH, "Validation");
    if (o->busbw)
        printf("%*s", FIELD_WIDTH, "Busbw(MB/s)");
    if (o->link_rate > 0) {
        printf("%*s", FIELD_WIDTH, "BW bound(us)");
        printf("%*s", FIELD_WIDTH, "Frac of bound");
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct options o;
    int rc = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        MPI_Finalize();
        return parsed == 1 ? 0 : 1;
    }
    int hosts = o.link_rate > 0 ? count_hosts() : 0;

    /* The largest type's worth of slack keeps every count's buffer in bounds. */
    size_t bytes = o.max_size + sizeof(double);
    void *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign(&sbuf, 64, bytes) != 0 || posix_memalign(&rbuf, 64, bytes) != 0) {
        fprintf(stderr, "genx-bench: rank %d: cannot allocate 2 x %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 0, bytes);
    memset(rbuf, 0, bytes);

    if (rank == 0) {
        if (o.nonblocking)
            printf("\n# OSU MPI Non-blocking Allreduce Latency Test v%s\n"
                   "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait\n\n", BENCH_VERSION);
        else
            printf("\n# OSU MPI Allreduce Latency Test v%s\n", BENCH_VERSION);
        fflush(stdout);
    }
    for (int ti = 0; ti < o.ntypes && rc == 0; ti++) {
        enum dtype t = o.types[ti];
        MPI_Datatype mt = mpi_type(t);
        if (rank == 0) {
            printf("# Datatype: %s.\n", type_info[t].name);
            print_header(&o);
        }
        for (size_t size = o.min_size; size <= o.max_size; size *= o.size_factor) {
            size_t count = size / type_info[t].size;
            if (count == 0)
                continue;
            long iters = o.iterations > 0 ? o.iterations
                                          : (size > LARGE_MESSAGE_SIZE ? ITERS_LARGE : ITERS_SMALL);
            long warm = o.warmup >= 0 ? o.warmup
                                      : (size > LARGE_MESSAGE_SIZE ? WARMUP_LARGE : WARMUP_SMALL);
            long errors = 0;
            double timer = 0.0;

            struct call c = {&o, t, mt, count, sbuf, rbuf, 0, 0, 0};
            if (!o.validate) {
                fill_const(sbuf, t, count);
                fill_const(rbuf, t, count);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            long k = 0, priced = 0;
            double wstart = MPI_Wtime();
            for (long w = 0; w < warm; w++) {
                one_call(&c, k++);
                if (o.max_time > 0 && w == 0 && warm > 1) {
                    /* The first call may carry a component's one-time set-up
                     * (genx builds a communicator's decision table at its
                     * first allreduce): it would make the size look slow and
                     * cut its warm-up and timed calls.  Not priced. */
                    wstart = MPI_Wtime();
                    continue;
                }
                priced++;
                if (o.max_time > 0) {
                    /* Rank 0 decides for everyone, so all ranks make the same calls. */
                    int stop = rank == 0 && MPI_Wtime() - wstart > 0.1 * o.max_time;
                    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
                    if (stop)
                        break;
                }
            }
            if (o.max_time > 0) {
                if (priced == 0) {
                    wstart = MPI_Wtime();
                    one_call(&c, k++);  /* something to price the size with */
                    priced = 1;
                }
                double spent = MPI_Wtime() - wstart;
                long fit = (long) ((o.max_time - spent) / (spent / (double) priced));
                MPI_Bcast(&fit, 1, MPI_LONG, 0, MPI_COMM_WORLD);
                if (iters > fit)
                    iters = fit > 1 ? fit : 1;
            }
            c.start_s = c.wait_s = 0;
            for (long i = 0; i < iters; i++)
                timer += one_call(&c, k++);
            if (o.nonblocking) {
                /* Second pass: the same calls with as much computation as
                 * this rank's pure communication took. */
                double work = timer / (double) iters, overall = 0, spent = 0;
                double ph[4] = {c.start_s, c.wait_s, 0, 0}, phsum[4];
                c.start_s = c.wait_s = 0;
                for (long i = 0; i < iters; i++)
                    overall += one_call_nb(&c, k++, work, &spent);
                ph[2] = c.start_s;
                ph[3] = c.wait_s;
                for (int j = 0; j < 4; j++)
                    ph[j] *= 1e6 / (double) iters;
                MPI_Reduce(ph, phsum, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                double mine[3] = {overall * 1e6 / (double) iters, spent * 1e6 / (double) iters,
                                  work * 1e6}, sum[3], cmin, cmax;
                long all_errors = 0;
                MPI_Reduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                MPI_Reduce(&mine[2], &cmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
                MPI_Reduce(&mine[2], &cmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                MPI_Allreduce(&c.errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
                if (rank == 0) {
                    double ov = sum[0] / nprocs, cp = sum[1] / nprocs, pure = sum[2] / nprocs;
                    double overlap = pure > 0 ? 100.0 - (ov - cp) / pure * 100.0 : 0.0;
                    if (overlap < 0)
                        overlap = 0;
                    printf("%-10zu%*.*f%*.*f%*.*f%*.*f", size, FIELD_WIDTH, FLOAT_PRECISION, ov,
                           FIELD_WIDTH, FLOAT_PRECISION, cp, FIELD_WIDTH, FLOAT_PRECISION, pure,
                           FIELD_WIDTH, FLOAT_PRECISION, overlap);
                    if (o.full)
                        printf("%*.*f%*.*f%*lu", FIELD_WIDTH, FLOAT_PRECISION, cmin, FIELD_WIDTH,
                               FLOAT_PRECISION, cmax, 12, (unsigned long) iters);
                    if (o.validate)
                        printf("%*s", FIELD_WIDTH, all_errors ? "Fail" : "Pass");
                    if (o.phases)
                        for (int j = 0; j < 4; j++)
                            printf("%*.*f", FIELD_WIDTH, FLOAT_PRECISION, phsum[j] / nprocs);
                    printf("\n");
                    fflush(stdout);
                }
                if (all_errors) {
                    if (rank == 0)
                        fprintf(stderr, "DATA VALIDATION ERROR: %s exited with status %d on "
                                "message size %zu.\n", argv[0], 1, size);
                    rc = 1;
                    break;
                }
                continue;
            }
            errors = c.errors;
            double lat = timer * 1e6 / (double) iters, min_lat, max_lat, sum_lat;
            long all_errors = 0;
            MPI_Reduce(&lat, &min_lat, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
            MPI_Reduce(&lat, &max_lat, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(&lat, &sum_lat, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (rank == 0) {
                double avg = sum_lat / nprocs;
                printf("%-10zu", size);
                printf("%*.*f", FIELD_WIDTH, FLOAT_PRECISION, avg);
                if (o.full)
                    printf("%*.*f%*.*f%*lu", FIELD_WIDTH, FLOAT_PRECISION, min_lat, FIELD_WIDTH,
                           FLOAT_PRECISION, max_lat, 12, (unsigned long) iters);
                if (o.validate)
                    printf("%*s", FIELD_WIDTH, all_errors ? "Fail" : "Pass");
                if (o.busbw)
                    printf("%*.*f", FIELD_WIDTH, FLOAT_PRECISION,
                           avg > 0 ? (double) size / avg * 2.0 * (nprocs - 1) / nprocs : 0.0);
                if (o.link_rate > 0) {
                    /* Bytes leaving each host in a bandwidth-optimal allreduce. */
                    double bound = hosts > 1
                        ? 2.0 * (hosts - 1) / hosts * (double) size * 8.0 / o.link_rate * 1e6 : 0.0;
                    printf("%*.*f", FIELD_WIDTH, FLOAT_PRECISION, bound);
                    if (bound > 0 && avg > 0)
                        printf("%*.*f", FIELD_WIDTH, FLOAT_PRECISION, bound / avg);
                    else
                        printf("%*s", FIELD_WIDTH, "-");
                }
                printf("\n");
                fflush(stdout);
            }
            if (all_errors) {
                if (rank == 0)
                    fprintf(stderr,
                            "DATA VALIDATION ERROR: %s exited with status %d on message size %zu.\n",
                            argv[0], 1, size);
                rc = 1;
                break;
            }
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return rc;
}
