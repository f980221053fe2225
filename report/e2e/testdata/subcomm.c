/*
 * subcomm.c N BASE_US EXTRA_US SLOW
 *
 * MPI_Comm_split of MPI_COMM_WORLD into two halves, {0..P/2-1} and
 * {P/2..P-1} (P even), keyed by world rank, between two world Barriers
 * (the first makes the ranks arrive at the split together, the second
 * aligns them for the loop). N iterations of: every rank computes BASE_US,
 * rank SLOW EXTRA_US more, then MPI_Allreduce on its half, then
 * MPI_Barrier on MPI_COMM_WORLD.
 *
 * Known by construction (X = EXTRA_US, H = P/2 ranks per half):
 *   critical path: rank SLOW's computation, N*(BASE+X) on SLOW, ~0
 *                  elsewhere;
 *   Wait at N x N = N*X on each other member of SLOW's half only
 *                  ((H-1)*N*X in all), all of it on that half's
 *                  communicator (S<first rank of the half>.1);
 *   Wait at Barrier = N*X on each member of the other half (H*N*X in all),
 *                  on MPI_COMM_WORLD (W0.0).
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "subcomm";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size >= 2 && size % 2 == 0, "run with an even number of ranks");
    USAGE(prog, argc == 5, "usage: subcomm N BASE_US EXTRA_US SLOW");
    long n = arg_long(prog, argv, 1), base = arg_long(prog, argv, 2);
    long extra = arg_long(prog, argv, 3), slow = arg_long(prog, argv, 4);
    USAGE(prog, slow < size, "SLOW must be a rank of MPI_COMM_WORLD");

    int h = size / 2, half = rank / h;
    MPI_Comm sub;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, half, rank, &sub);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        spin_us(base + (rank == slow ? extra : 0));
        long v = rank, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, sub);
        /* sum of the half's world ranks: h*first + h*(h-1)/2 */
        CHECK(prog, rank, sum == (long)h * half * h + (long)h * (h - 1) / 2);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&sub);
    MPI_Finalize();
    return 0;
}
