/*
 * latesender.c N M D_US
 *
 * Two ranks. N iterations of: rank 0 (the receiver) posts M MPI_Irecv at
 * once and completes them with one MPI_Waitall; rank 1 (the sender)
 * computes D_US before each of its M messages, sent alternately with
 * MPI_Send (even m) and MPI_Isend (odd m, completed by an MPI_Waitall after
 * the last). Small messages: the sends never wait. Barriers before and
 * after the loop.
 *
 * Known by construction:
 *   critical path: rank 1's computation, compute on the path = N*M*D on
 *                  rank 1, ~0 on rank 0;
 *   Late Sender = D per message (Waitall counts as one Wait per request,
 *                  paper 5.2), N*M*D in all, on rank 0, in MPI_Waitall;
 *                  no message arrives in the wrong order.
 */
#include "spin.h"

#define MAXM 64

int main(int argc, char **argv)
{
    const char *prog = "latesender";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc == 4, "usage: latesender N M D_US");
    long n = arg_long(prog, argv, 1), m = arg_long(prog, argv, 2);
    long d = arg_long(prog, argv, 3);
    USAGE(prog, m >= 1 && m <= MAXM, "M must be 1..64");

    int buf[MAXM];
    MPI_Request rq[MAXM];
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            for (int k = 0; k < m; k++)
                MPI_Irecv(&buf[k], 1, MPI_INT, 1, k, MPI_COMM_WORLD, &rq[k]);
            MPI_Waitall(m, rq, MPI_STATUSES_IGNORE);
            for (int k = 0; k < m; k++)
                CHECK(prog, rank, buf[k] == (int)(i * m + k));
        } else {
            int nrq = 0;
            for (int k = 0; k < m; k++) {
                spin_us(d);
                buf[k] = (int)(i * m + k);
                if (k % 2 == 0)
                    MPI_Send(&buf[k], 1, MPI_INT, 0, k, MPI_COMM_WORLD);
                else
                    MPI_Isend(&buf[k], 1, MPI_INT, 0, k, MPI_COMM_WORLD, &rq[nrq++]);
            }
            MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
