/*
 * latereceiver.c N D_US
 *
 * Two ranks. N iterations of: rank 0 calls MPI_Ssend at once; rank 1
 * computes D_US, then posts the matching MPI_Recv. A synchronous send
 * cannot complete before its receive has started, so each Ssend waits for
 * the late receiver. Barriers before and after the loop.
 *
 * Known by construction:
 *   critical path: rank 1's computation, compute on the path = N*D on
 *                  rank 1, ~0 on rank 0;
 *   Late Receiver = D per message, N*D in all, on rank 0, in MPI_Ssend;
 *   no Late Sender (each Recv finds its message already there).
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "latereceiver";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc == 3, "usage: latereceiver N D_US");
    long n = arg_long(prog, argv, 1), d = arg_long(prog, argv, 2);

    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        int v = (int)i;
        if (rank == 0) {
            MPI_Ssend(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        } else {
            spin_us(d);
            v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, v == (int)i);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
