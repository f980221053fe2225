/*
 * tokenring.c R C0_US C1_US ... C(P-1)_US
 *
 * A token goes R times around the ring 0 -> 1 -> ... -> P-1 -> 0 with
 * MPI_Send/MPI_Recv; rank k computes Ck_US before it forwards the token
 * (rank 0 before it starts each round). Small messages: the sends are eager
 * and never wait. A Barrier aligns the ranks before the ring and ends it.
 *
 * Known by construction (C = sum of all Ck):
 *   critical path: 0, 1, ..., P-1, 0, 1, ... (R rounds), then rank 0;
 *                  compute on the path = R*Ck on rank k;
 *   Late Sender (in MPI_Recv): rank 0: R*(C - C0);
 *                  rank k > 0: (C0 + ... + C(k-1)) + (R-1)*(C - Ck);
 *   Wait at Barrier (the final one): rank k > 0: C(k+1) + ... + C(P-1).
 */
#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "tokenring";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size >= 2, "run with at least 2 ranks");
    USAGE(prog, argc == size + 2, "usage: tokenring R C0_US ... C(P-1)_US (one time per rank)");
    long rounds = arg_long(prog, argv, 1), c = arg_long(prog, argv, 2 + rank);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    int token = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long r = 0; r < rounds; r++) {
        if (rank == 0) {
            spin_us(c);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, token == (int)((r + 1) * size));
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, token == (int)(r * size + rank));
            spin_us(c);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
