/*
 * fenceslow.c C_US S_US
 *
 * Three ranks share a window over MPI_COMM_WORLD. After a Barrier that
 * aligns them, MPI_Win_fence opens an epoch; every rank puts 4 ints into
 * the next rank's window, computes C_US (rank 1 S_US more) and closes the
 * epoch with MPI_Win_fence. Then every rank computes C_US and all meet in
 * a Barrier before freeing the window.
 *
 * Known by construction (C, S):
 *   in the closing fence ranks 0 and 2 wait about S each for rank 1 (Wait
 *   at Fence), rank 1 about nothing;
 *   critical path: rank 1's MPI_Put (MPI time), its C + S of computation,
 *   the closing fence, C of computation, the Barrier.
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "fenceslow";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 3 && size == 3, "usage: mpirun -np 3 fenceslow C_US S_US");
    long c = arg_long(prog, argv, 1), s = arg_long(prog, argv, 2);

    int *base;
    MPI_Win win;
    CHECK(prog, rank, MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS);
    int mine[4] = {rank, rank, rank, rank};

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(prog, rank, MPI_Win_fence(MPI_MODE_NOPRECEDE, win) == MPI_SUCCESS);
    CHECK(prog, rank, MPI_Put(mine, 4, MPI_INT, (rank + 1) % 3, 0, 4, MPI_INT, win) == MPI_SUCCESS);
    spin_us(c + (rank == 1 ? s : 0));
    CHECK(prog, rank, MPI_Win_fence(MPI_MODE_NOSUCCEED, win) == MPI_SUCCESS);
    if (base[0] != (rank + 2) % 3) {
        fprintf(stderr, "fenceslow: rank %d got %d from rank %d\n", rank, base[0], (rank + 2) % 3);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    spin_us(c);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(prog, rank, MPI_Win_free(&win) == MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
