/*
 * nbrpersist.c: persistent neighbourhood collectives (MPI 4) for the
 * cpath logger. Run with exactly 4 ranks under an MPI 4 library (MPICH).
 * Keep this file and nbrpersist_test.go in step.
 *
 * ring = Cart_create 1-D, 4, periodic: neighbours r-1 and r+1. On it,
 * the five inits (no sequence number), then ITERS iterations k = 0, 1, …
 * of
 *   MPI_Start(ag) + MPI_Wait                           ring seq 6k+1
 *   MPI_Startall(agv, a2a, a2av, a2aw) + MPI_Waitall   seq 6k+2 … 6k+5
 *   MPI_Barrier(ring)                                  seq 6k+6
 * and the five MPI_Request_free, then MPI_Comm_free (seq 6 ITERS + 1). In the last iteration rank 0 computes
 * LATE_MS before its MPI_Start(ag): its neighbours 1 and 3 wait for it in
 * their MPI_Wait; rank 2, not its neighbour, waits in the Barrier.
 */
#define PROG "nbrpersist"
#include "check.h"
#include <time.h>

#define N 4
#define ITERS 3
#define LATE_MS 80

/* spin_ms computes (busy-waits) ms milliseconds. */
static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    require_size(N);
    int sbuf[64], rbuf[256];
    for (int i = 0; i < 64; i++)
        sbuf[i] = rank * 100 + i;

    MPI_Comm ring;
    int one[1] = {N}, per1[1] = {1};
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, per1, 0, &ring));

    MPI_Request ag, rq[4];
    MPI_Status sts[4];
    int c2[2] = {1, 2}, d2[2] = {0, 4}, rc2[2] = {2, 1}, rd2[2] = {0, 8};
    int ac[2] = {2, 2}, ad[2] = {0, 2};
    int w2[2] = {1, 1};
    MPI_Aint ad2[2] = {0, 16}, ard2[2] = {0, 64};
    MPI_Datatype tw[2] = {MPI_INT, MPI_DOUBLE}, rtw[2] = {MPI_DOUBLE, MPI_INT};
    CHECK(MPI_Neighbor_allgather_init(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, ring, MPI_INFO_NULL, &ag)); /* 2 x 12 */
    CHECK(MPI_Neighbor_allgatherv_init(sbuf, 2, MPI_INT, rbuf, ac, ad, MPI_INT, ring, MPI_INFO_NULL, &rq[0])); /* 2 x 8 */
    CHECK(MPI_Neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, ring, MPI_INFO_NULL, &rq[1])); /* 2 x 4 */
    CHECK(MPI_Neighbor_alltoallv_init(sbuf, c2, d2, MPI_INT, rbuf, rc2, rd2, MPI_INT, ring, MPI_INFO_NULL,
                                      &rq[2])); /* 4 + 8 */
    CHECK(MPI_Neighbor_alltoallw_init(sbuf, w2, ad2, tw, rbuf, w2, ard2, rtw, ring, MPI_INFO_NULL,
                                      &rq[3])); /* 4 + 8 */

    int left = (rank + N - 1) % N;
    for (int it = 0; it < ITERS; it++) {
        if (it == ITERS - 1 && rank == 0)
            spin_ms(LATE_MS);
        CHECK(MPI_Start(&ag));
        CHECK(MPI_Wait(&ag, MPI_STATUS_IGNORE));
        /* Slot 0 is the left neighbour's 3 ints. */
        if (rbuf[0] != left * 100) {
            fprintf(stderr, "nbrpersist: rank %d got %d from its left neighbour, want %d\n", rank, rbuf[0], left * 100);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        CHECK(MPI_Startall(4, rq));
        CHECK(MPI_Waitall(4, rq, sts));
        CHECK(MPI_Barrier(ring));
    }
    CHECK(MPI_Request_free(&ag));
    for (int i = 0; i < 4; i++)
        CHECK(MPI_Request_free(&rq[i]));
    CHECK(MPI_Comm_free(&ring));
    MPI_Finalize();
    return 0;
}
