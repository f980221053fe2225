/*
 * rma.c: one-sided communication (RMA) end-to-end test program for the
 * cpath logger. Run with exactly 4 ranks. Every call, its target and byte
 * count, and the order of the collectives on each communicator are fixed;
 * keep this file and rma_test.go in step.
 *
 * Windows, in creation order (the rank's window numbers 1-4):
 *   1  w1  MPI_Win_allocate on MPI_COMM_WORLD, 8 ints: fence epoch, then PSCW
 *   2  w2  MPI_Win_create on half, 4 long longs: passive target
 *   3  wsh MPI_Win_allocate_shared on half, 16 bytes
 *   4  wd  MPI_Win_create_dynamic on MPI_COMM_WORLD
 * half = Comm_split(world, rank%2, -rank): its local rank 0 is world rank
 * rank%2+2 and local rank 1 world rank rank%2, so targets given as ranks
 * of half differ from the world ranks the log must name.
 */
#define PROG "rma"
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    require_size(N);

    /* Active target, fence: a Put to the next rank, a Get from the
     * previous one, an Accumulate into rank 0. */
    int *base1;
    MPI_Win w1;
    CHECK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base1, &w1));
    for (int i = 0; i < 8; i++)
        base1[i] = rank;
    int src[4] = {rank, rank, rank, rank}, dst[4];
    CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w1));
    CHECK(MPI_Put(src, 2, MPI_INT, (rank + 1) % N, 0, 2, MPI_INT, w1));
    CHECK(MPI_Get(dst, 3, MPI_INT, (rank + N - 1) % N, 2, 3, MPI_INT, w1));
    CHECK(MPI_Accumulate(src, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_SUM, w1));
    CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w1));
    if (base1[0] != (rank + N - 1) % N || dst[0] != (rank + N - 1) % N ||
        (rank == 0 && base1[6] != 0 + 0 + 1 + 2 + 3)) {
        fprintf(stderr, "rma: rank %d: fence epoch moved the wrong data\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    MPI_Comm half;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hr;
    MPI_Comm_rank(half, &hr);

    /* Passive target on half: target 0 of half is world rank rank%2+2,
     * target 1 world rank rank%2. */
    long long buf2[4] = {0, 0, 0, 0}, o[4] = {1, 1, 1, 1}, res[4], cmp = 0;
    MPI_Win w2, wsh;
    long long *bsh;
    CHECK(MPI_Win_create(buf2, sizeof buf2, sizeof(long long), MPI_INFO_NULL, half, &w2));
    CHECK(MPI_Win_allocate_shared(16, 1, MPI_INFO_NULL, half, &bsh, &wsh));
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w2));
    CHECK(MPI_Fetch_and_op(o, res, MPI_LONG_LONG, 0, 0, MPI_SUM, w2));
    CHECK(MPI_Compare_and_swap(o, &cmp, res + 1, MPI_LONG_LONG, 0, 1, w2));
    CHECK(MPI_Get_accumulate(o, 2, MPI_LONG_LONG, res + 2, 2, MPI_LONG_LONG, 0, 2, 2, MPI_LONG_LONG, MPI_SUM, w2));
    CHECK(MPI_Win_flush(0, w2));
    CHECK(MPI_Win_unlock(0, w2));

    MPI_Request rq[4];
    long long g[2], one = 1;
    CHECK(MPI_Win_lock_all(0, w2));
    CHECK(MPI_Rput(&one, 1, MPI_LONG_LONG, 1, hr, 1, MPI_LONG_LONG, w2, &rq[0]));
    CHECK(MPI_Rget(g, 2, MPI_LONG_LONG, 1, 2, 2, MPI_LONG_LONG, w2, &rq[1]));
    CHECK(MPI_Raccumulate(o, 3, MPI_LONG_LONG, 0, 1, 3, MPI_LONG_LONG, MPI_SUM, w2, &rq[2]));
    CHECK(MPI_Rget_accumulate(o, 1, MPI_LONG_LONG, res, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, w2, &rq[3]));
    CHECK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(MPI_Win_flush_all(w2));
    CHECK(MPI_Win_flush_local(1, w2));
    CHECK(MPI_Win_flush_local_all(w2));
    CHECK(MPI_Win_sync(w2));
    CHECK(MPI_Win_unlock_all(w2));
    CHECK(MPI_Win_free(&w2));
    CHECK(MPI_Win_free(&wsh));
    (void)bsh;

    /* General active target (PSCW) on w1: each even rank accesses the
     * odd rank after it, which exposes its window to it. */
    MPI_Group wg, peer;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int other = rank % 2 == 0 ? rank + 1 : rank - 1;
    MPI_Group_incl(wg, 1, &other, &peer);
    if (rank % 2 == 0) {
        CHECK(MPI_Win_start(peer, 0, w1));
        CHECK(MPI_Put(src, 1, MPI_INT, other, 7, 1, MPI_INT, w1));
        CHECK(MPI_Win_complete(w1));
    } else {
        CHECK(MPI_Win_post(peer, 0, w1));
        CHECK(MPI_Win_wait(w1));
        if (base1[7] != other) {
            fprintf(stderr, "rma: rank %d: PSCW put %d, want %d\n", rank, base1[7], other);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Group_free(&peer);
    MPI_Group_free(&wg);

    MPI_Win wd;
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wd));
    CHECK(MPI_Win_free(&wd));
    CHECK(MPI_Win_free(&w1));
    MPI_Finalize();
    return 0;
}
