/*
 * slowallreduce.c N BASE_US EXTRA_US SLOW
 *
 * N iterations of: every rank computes BASE_US, rank SLOW EXTRA_US more,
 * then all call MPI_Allreduce on MPI_COMM_WORLD. A Barrier before the loop
 * aligns the ranks after MPI_Init; one after it ends the run together.
 *
 * Known by construction (P ranks, B = BASE_US, X = EXTRA_US):
 *   critical path: rank SLOW's computation in every iteration,
 *                  compute on the path = N*(B+X) on SLOW, ~0 elsewhere;
 *   Wait at N x N = N*X on every other rank, (P-1)*N*X in all;
 *   each Allreduce instance: last_rank SLOW, wait_before = (P-1)*X.
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "slowallreduce";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 5, "usage: slowallreduce N BASE_US EXTRA_US SLOW");
    long n = arg_long(prog, argv, 1), base = arg_long(prog, argv, 2);
    long extra = arg_long(prog, argv, 3), slow = arg_long(prog, argv, 4);
    USAGE(prog, slow < size, "SLOW must be a rank of MPI_COMM_WORLD");

    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        spin_us(base + (rank == slow ? extra : 0));
        double v = rank + i, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(prog, rank, sum == (double)size * (size - 1) / 2 + (double)size * i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
