/*
 * tokenring.c [-f] R C0_US C1_US ... C(P-1)_US
 *
 * A token goes R times around the ring 0 -> 1 -> ... -> P-1 -> 0 with
 * MPI_Send/MPI_Recv; rank k computes Ck_US before it forwards the token
 * (rank 0 before it starts each round). Small messages: the sends are eager
 * and never wait. A Barrier aligns the ranks before the ring and ends it.
 * With -f, the even rounds' sends are MPI_Isend with the request freed at
 * once (MPI_Request_free: nothing completes them, as in LAMMPS's irregular
 * exchanges), the odd rounds' MPI_Send, on the same tag: each receive must
 * still match the send of its own round.
 *
 * Known by construction (C = sum of all Ck):
 *   critical path: 0, 1, ..., P-1, 0, 1, ... (R rounds), then rank 0;
 *                  compute on the path = R*Ck on rank k;
 *   Late Sender (in MPI_Recv): rank 0: R*(C - C0);
 *                  rank k > 0: (C0 + ... + C(k-1)) + (R-1)*(C - Ck);
 *   Wait at Barrier (the final one): rank k > 0: C(k+1) + ... + C(P-1).
 */
#include "spin.h"
#include <string.h>

/* send_token sends token from *buf to next, by MPI_Send, or by MPI_Isend
 * with the request freed at once. */
static void send_token(int *buf, int token, int next, int freed)
{
    *buf = token;
    if (!freed) {
        MPI_Send(buf, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        return;
    }
    MPI_Request rq;
    MPI_Isend(buf, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &rq);
    MPI_Request_free(&rq);
}

int main(int argc, char **argv)
{
    const char *prog = "tokenring";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int freed = argc > 1 && strcmp(argv[1], "-f") == 0;
    if (freed) {
        argc--;
        argv++;
    }
    USAGE(prog, size >= 2, "run with at least 2 ranks");
    USAGE(prog, argc == size + 2, "usage: tokenring [-f] R C0_US ... C(P-1)_US (one time per rank)");
    long rounds = arg_long(prog, argv, 1), c = arg_long(prog, argv, 2 + rank);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* A freed send's buffer is never known to be free again: one a round. */
    int *out = malloc((rounds + 1) * sizeof *out);
    CHECK(prog, rank, out != NULL);

    int token = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long r = 0; r < rounds; r++) {
        if (rank == 0) {
            spin_us(c);
            token++;
            send_token(&out[r], token, next, freed && r % 2 == 0);
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, token == (int)((r + 1) * size));
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, token == (int)(r * size + rank));
            spin_us(c);
            token++;
            send_token(&out[r], token, next, freed && r % 2 == 0);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    MPI_Finalize();
    return 0;
}
