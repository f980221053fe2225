/*
 * latebarrier.c N BASE_US LATE_US
 *
 * N iterations of: every rank computes BASE_US, and rank i % P (a
 * different rank each iteration, in rank order) LATE_US more, then all call
 * MPI_Barrier. A Barrier before the loop aligns the ranks after MPI_Init.
 *
 * Known by construction (P ranks, N a multiple of P, D = LATE_US):
 *   critical path: ranks 0, 1, ..., P-1, 0, ... (the late one of each
 *                  iteration); compute on the path = (N/P)*(BASE+D) per rank;
 *   Wait at Barrier = (P-1)*D per barrier, (N/P)*(P-1)*D per rank,
 *                  N*(P-1)*D in all.
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "latebarrier";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 4, "usage: latebarrier N BASE_US LATE_US");
    long n = arg_long(prog, argv, 1), base = arg_long(prog, argv, 2);
    long late = arg_long(prog, argv, 3);

    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        spin_us(base + (rank == i % size ? late : 0));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
