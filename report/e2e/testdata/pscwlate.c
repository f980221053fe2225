/*
 * pscwlate.c POST_US COMPLETE_US C_US
 *
 * Three ranks share a window over MPI_COMM_WORLD; rank 0 is the target of
 * two general active target epochs, ranks 1 and 2 the origins. A Barrier
 * aligns them before each epoch and after it.
 *
 *   epoch 1, late post: rank 0 computes POST_US, then posts to {1, 2},
 *     computes C_US and waits. Ranks 1 and 2 start {0} at once, put 4
 *     ints into rank 0's window and complete; rank 1 then computes 3 C_US,
 *     rank 2 nothing.
 *   epoch 2, late complete: rank 0 posts to {1, 2} and waits, then
 *     computes 3 C_US. Ranks 1 and 2 start and put at once; rank 1
 *     completes at once, rank 2 computes COMPLETE_US first.
 *
 * Known by construction (P = POST_US, L = COMPLETE_US, C = C_US):
 *   Late Post: ranks 1 and 2 wait about P each for rank 0's post (in
 *   MPI_Win_start, MPI_Put or MPI_Win_complete: where the MPI blocks);
 *   Early Wait: rank 0 waits about L in its second MPI_Win_wait for rank
 *   2's MPI_Win_complete, all of it Late Complete (rank 2's put ended
 *   before its computation);
 *   critical path: rank 0's P of computation, its post, the transfer
 *   into rank 1's call that waited for it, rank 1's 3 C into the Barrier;
 *   then rank 2's L of computation, its complete, the transfer into rank
 *   0's wait, rank 0's 3 C into the last Barrier.
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "pscwlate";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 4 && size == 3, "usage: mpirun -np 3 pscwlate POST_US COMPLETE_US C_US");
    long post = arg_long(prog, argv, 1), late = arg_long(prog, argv, 2), c = arg_long(prog, argv, 3);

    int *base;
    MPI_Win win;
    CHECK(prog, rank, MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS);
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int origins[2] = {1, 2}, target = 0;
    if (rank == 0)
        MPI_Group_incl(world, 2, origins, &g);
    else
        MPI_Group_incl(world, 1, &target, &g);
    int mine[4] = {rank, rank, rank, rank};

    for (int epoch = 1; epoch <= 2; epoch++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            if (epoch == 1)
                spin_us(post);
            CHECK(prog, rank, MPI_Win_post(g, 0, win) == MPI_SUCCESS);
            if (epoch == 1)
                spin_us(c);
            CHECK(prog, rank, MPI_Win_wait(win) == MPI_SUCCESS);
            if (base[0] != 1 || base[4] != 2) {
                fprintf(stderr, "pscwlate: epoch %d: rank 0 got %d and %d\n", epoch, base[0], base[4]);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            base[0] = base[4] = -1;
            if (epoch == 2)
                spin_us(3 * c);
        } else {
            CHECK(prog, rank, MPI_Win_start(g, 0, win) == MPI_SUCCESS);
            CHECK(prog, rank, MPI_Put(mine, 4, MPI_INT, 0, 4 * (rank - 1), 4, MPI_INT, win) == MPI_SUCCESS);
            if (epoch == 2 && rank == 2)
                spin_us(late);
            CHECK(prog, rank, MPI_Win_complete(win) == MPI_SUCCESS);
            if (epoch == 1 && rank == 1)
                spin_us(3 * c);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    CHECK(prog, rank, MPI_Win_free(&win) == MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
