/*
 * nullwait.c N
 *
 * Two ranks. N times each: MPI_Waitall with a count of 0, MPI_Waitall of
 * four MPI_REQUEST_NULL, MPI_Wait and MPI_Waitany on MPI_REQUEST_NULL,
 * then one message from rank 0 to rank 1 (MPI_Isend/MPI_Irecv and a
 * MPI_Waitall that completes it), and MPI_Barrier.
 *
 * Known by construction: the waits given only null requests wait for
 * nothing; they are MPI time with no partner, not calls the analysis has
 * no model for (a wait on requests the logs lack).
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "nullwait";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc == 2, "usage: nullwait N");
    long n = arg_long(prog, argv, 1);
    int buf = 0, idx;
    for (long i = 0; i < n; i++) {
        MPI_Request none[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
        MPI_Waitall(4, none, MPI_STATUSES_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Waitany(4, none, &idx, MPI_STATUS_IGNORE);
        CHECK(prog, rank, idx == MPI_UNDEFINED);
        spin_us(100);
        MPI_Request one[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (rank == 0)
            MPI_Isend(&buf, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &one[1]);
        else
            MPI_Irecv(&buf, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &one[1]);
        MPI_Waitall(2, one, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
