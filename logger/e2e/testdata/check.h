/*
 * check.h: what the logger's test programs share. Define PROG, the
 * program's name for its messages, before including it; CHECK needs an
 * int rank in scope.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* CHECK aborts the job if an MPI call failed. */
#define CHECK(c)                                                           \
    do {                                                                   \
        if ((c) != MPI_SUCCESS) {                                          \
            fprintf(stderr, "%s: rank %d: call failed at line %d: %s\n",   \
                    PROG, rank, __LINE__, #c);                             \
            MPI_Abort(MPI_COMM_WORLD, 2);                                  \
        }                                                                  \
    } while (0)

/* require_size aborts the job unless it has n ranks. */
static void require_size(int n)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != n) {
        if (rank == 0)
            fprintf(stderr, "%s: run with %d ranks, not %d\n", PROG, n, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
