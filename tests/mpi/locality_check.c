/*
 * locality_check: MPI_Allreduce on MPI_COMM_WORLD, then on the halves of a
 * split and on a duplicate, each checked against the sum it must give.
 * run-locality-tests.sh runs it with coll_genx_verbose 2 and counts genx's
 * locality lines: the world communicator gathers the ranks' locality
 * records, the split and the duplicate find them in the process's cache.
 *
 * Public MPI only.  Exit status 0 and "PASS" on rank 0 when every result
 * matched; otherwise each rank prints its first mismatch and exits 1.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

/* Sums value(rank, i) = rank + i over comm's ranks for `count` elements
 * and compares with the closed form; 0 when it matches. */
static int check(MPI_Comm comm, const char *what, int count)
{
    int size, rank, wrank, bad = 0;
    long *in = malloc((size_t) count * sizeof(long));
    long *out = malloc((size_t) count * sizeof(long));
    long rank_sum = 0;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (NULL == in || NULL == out) {
        fprintf(stderr, "locality_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < count; ++i) {
        in[i] = wrank + i;
    }
    MPI_Allreduce(in, out, count, MPI_LONG, MPI_SUM, comm);
    MPI_Allreduce(&wrank, &rank_sum, 1, MPI_LONG, MPI_SUM, comm);
    /* rank_sum came from the same component: check it by its own closed
     * form over the world ranks of comm, gathered with MPI_Allgather. */
    {
        int *wranks = malloc((size_t) size * sizeof(int));
        long want = 0;
        MPI_Allgather(&wrank, 1, MPI_INT, wranks, 1, MPI_INT, comm);
        for (int r = 0; r < size; ++r) {
            want += wranks[r];
        }
        free(wranks);
        if (rank_sum != want) {
            fprintf(stderr, "locality_check: %s: rank %d: sum of ranks %ld, expected %ld\n",
                    what, wrank, rank_sum, want);
            bad = 1;
        }
        for (int i = 0; i < count && !bad; ++i) {
            if (out[i] != want + (long) size * i) {
                fprintf(stderr, "locality_check: %s count %d: rank %d index %d: got %ld, "
                        "expected %ld\n", what, count, wrank, i, out[i], want + (long) size * i);
                bad = 1;
            }
        }
    }
    free(in);
    free(out);
    return bad;
}

int main(int argc, char **argv)
{
    static const int counts[] = {1, 1000, 65537};
    MPI_Comm half, dup;
    int rank, bad = 0, any;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int c = 0; c < 3; ++c) {
        bad |= check(MPI_COMM_WORLD, "world", counts[c]);
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int c = 0; c < 3; ++c) {
        bad |= check(half, "split", counts[c]);
        bad |= check(dup, "dup", counts[c]);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && 0 == any) {
        printf("PASS\n");
    }
    MPI_Finalize();
    return any ? 1 : 0;
}
