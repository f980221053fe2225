/*
 * neighbor.c: neighbourhood collectives end-to-end test program for the
 * cpath logger. Run with exactly 4 ranks. Every topology, call count and
 * byte count is fixed; keep this file and neighbor_test.go in step.
 *
 * Communicators, in creation order (no reordering):
 *   ring  Cart_create 1-D, 4, periodic        neighbours r-1, r+1
 *   grid  Cart_create 2-D, 2x2, non-periodic  MPI_PROC_NULL at the edges
 *   row   Cart_sub(grid, keep dim 1)          {0,1} and {2,3}, non-periodic
 *   star  Graph_create: 0 - {1,2,3}
 *   dring Dist_graph_create_adjacent: source r-1, destination r+1
 *   dnext Dist_graph_create: edge r -> r+1 (given by r), in-neighbour r-1
 *   dup   Comm_dup(ring): the topology is duplicated
 */
#define PROG "neighbor"
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    require_size(N);
    int sbuf[64], rbuf[256];
    double dbuf[8] = {0}, drbuf[32];
    for (int i = 0; i < 64; i++)
        sbuf[i] = rank * 100 + i;

    MPI_Comm ring, grid, row, star, dring, dnext, dup;
    int one[1] = {N}, per1[1] = {1}, two[2] = {2, 2}, per2[2] = {0, 0}, keep[2] = {0, 1};
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, per1, 0, &ring));
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, two, per2, 0, &grid));
    CHECK(MPI_Cart_sub(grid, keep, &row));
    int index[N] = {3, 4, 5, 6}, edges[6] = {1, 2, 3, 0, 0, 0};
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, N, index, edges, 0, &star));
    int src = (rank + N - 1) % N, dst = (rank + 1) % N;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &dring));
    int deg = 1;
    CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dnext));
    CHECK(MPI_Comm_dup(ring, &dup));

    /* ring: 2 out-neighbours each. */
    /* What a rank receives in a slot is what that neighbour sent the other way. */
    int c2[2] = {1, 2}, d2[2] = {0, 4}, rc2[2] = {2, 1}, rd2[2] = {0, 8};
    MPI_Aint ad2[2] = {0, 16}, ard2[2] = {0, 64};
    MPI_Datatype tw[2] = {MPI_INT, MPI_DOUBLE}, rtw[2] = {MPI_DOUBLE, MPI_INT};
    int w2[2] = {1, 1};
    CHECK(MPI_Neighbor_allgather(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, ring));               /* 2 x 12 */
    int ag[2] = {2, 2}, agd[2] = {0, 2};
    CHECK(MPI_Neighbor_allgatherv(sbuf, 2, MPI_INT, rbuf, ag, agd, MPI_INT, ring));        /* 2 x 8 */
    CHECK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, ring));                /* 2 x 4 */
    CHECK(MPI_Neighbor_alltoallv(sbuf, c2, d2, MPI_INT, rbuf, rc2, rd2, MPI_INT, ring));   /* 4 + 8 */
    CHECK(MPI_Neighbor_alltoallw(sbuf, w2, ad2, tw, rbuf, w2, ard2, rtw, ring));            /* 4 + 8 */

    /* grid: 4 slots, 2 of them MPI_PROC_NULL on every rank. */
    int c4[4] = {1, 2, 3, 4}, d4[4] = {0, 4, 8, 12}, rc4[4] = {2, 1, 4, 3};
    CHECK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, grid));                /* 2 x 4 */
    CHECK(MPI_Neighbor_alltoallv(sbuf, c4, d4, MPI_INT, rbuf, rc4, d4, MPI_INT, grid));     /* the real slots' counts */

    /* Non-blocking forms, completed by one Waitall. */
    MPI_Request rq[5];
    CHECK(MPI_Ineighbor_allgather(dbuf, 1, MPI_DOUBLE, drbuf, 1, MPI_DOUBLE, star, &rq[0])); /* degree x 8 */
    int g1[1] = {5}, g1d[1] = {0};
    CHECK(MPI_Ineighbor_allgatherv(sbuf, 5, MPI_INT, rbuf, g1, g1d, MPI_INT, dring, &rq[1])); /* 20 */
    CHECK(MPI_Ineighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, dnext, &rq[2]));       /* 8 */
    int cr[2] = {3, 7}, crd[2] = {0, 8}, rcr[2] = {7, 3}, rcrd[2] = {0, 8};
    CHECK(MPI_Ineighbor_alltoallv(sbuf, cr, crd, MPI_INT, rbuf, rcr, rcrd, MPI_INT, row, &rq[3])); /* the real slot's */
    int w21[2] = {2, 1}, rw21[2] = {1, 2};
    MPI_Datatype ti[2] = {MPI_INT, MPI_INT};
    MPI_Aint adi[2] = {0, 8}, ardi[2] = {0, 32};
    CHECK(MPI_Ineighbor_alltoallw(sbuf, w21, adi, ti, rbuf, rw21, ardi, ti, dup, &rq[4]));  /* 8 + 4 */
    CHECK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));

    MPI_Comm_free(&dup);
    MPI_Comm_free(&dnext);
    MPI_Comm_free(&dring);
    MPI_Comm_free(&star);
    MPI_Comm_free(&row);
    MPI_Comm_free(&grid);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
