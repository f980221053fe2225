/*
 * nbslow.c C_US S_US
 *
 * Four ranks on a periodic 1-D cart (a ring: rank r's neighbours are r-1
 * and r+1), made after a Barrier. After another Barrier that aligns them, every rank computes C_US,
 * rank 0 S_US more, and all call MPI_Neighbor_allgather on the ring. Then
 * rank 0's neighbours (1 and 3) compute 2*C_US, the others C_US, and all
 * meet in a Barrier before MPI_Finalize.
 *
 * Known by construction (C, S):
 *   only rank 0's neighbours wait for it in the neighbour collective:
 *   ranks 1 and 3 about S each (Wait at N x N), ranks 0 and 2 about
 *   nothing; rank 2 waits for the others in the last Barrier instead
 *   (S + C), rank 0 there C.
 *   critical path: rank 0's C + S of computation, the transfer of its
 *   data to rank 1 or 3 (the edge of the neighbour collective), that
 *   rank's 2C, the last Barrier.
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "nbslow";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 3 && size == 4, "usage: mpirun -np 4 nbslow C_US S_US");
    long c = arg_long(prog, argv, 1), s = arg_long(prog, argv, 2);

    MPI_Barrier(MPI_COMM_WORLD); /* the ranks leave MPI_Init apart */
    MPI_Comm ring;
    int dims[1] = {4}, periods[1] = {1};
    CHECK(prog, rank, MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring) == MPI_SUCCESS);
    int mine[4] = {rank, rank, rank, rank}, theirs[8];

    MPI_Barrier(MPI_COMM_WORLD);
    spin_us(c + (rank == 0 ? s : 0));
    CHECK(prog, rank, MPI_Neighbor_allgather(mine, 4, MPI_INT, theirs, 4, MPI_INT, ring) == MPI_SUCCESS);
    if (theirs[0] != (rank + 3) % 4 || theirs[4] != (rank + 1) % 4) {
        fprintf(stderr, "nbslow: rank %d got %d and %d from its neighbours\n", rank, theirs[0], theirs[4]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    spin_us(rank == 1 || rank == 3 ? 2 * c : c);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
