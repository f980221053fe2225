/*
 * traffic.c N0 S0 N1 S1 N2 S2 N3 S3   (4 ranks)
 *
 * Point-to-point messages and collectives whose counts, bytes, sizes and
 * communicators are known by construction (traffic_test.go holds the same
 * plan). After a world Barrier and an MPI_Comm_split of world into the
 * even and the odd ranks (keyed by world rank):
 *
 *   ring:        rank r sends Nr messages of Sr bytes to r+1 (mod 4) with
 *                MPI_Send; r+1 receives them with MPI_Recv;
 *   nonblocking: rank 0 sends 5 messages of 4 bytes to rank 2, MPI_Isend
 *                each, then MPI_Waitall; rank 2 MPI_Irecv each, MPI_Waitall;
 *   sendrecv:    ranks 1 and 3 MPI_Sendrecv 16 bytes each way;
 *   persistent:  rank 3 sends 256 bytes to rank 2 twice through one
 *                MPI_Send_init request (MPI_Start, MPI_Wait), then frees it;
 *   world:       MPI_Allreduce of 8 doubles, twice; MPI_Bcast of 3 ints
 *                from rank 2;
 *   halves:      MPI_Allreduce of 1 int; MPI_Bcast of 100 bytes from the
 *                half's rank 0; MPI_Comm_free;
 *   then a world Barrier.
 */
#include "spin.h"

enum { MAXMSG = 1 << 17 };
static char sbuf[MAXMSG], rbuf[MAXMSG];

int main(int argc, char **argv)
{
    const char *prog = "traffic";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 4, "run with 4 ranks");
    USAGE(prog, argc == 9, "usage: traffic N0 S0 N1 S1 N2 S2 N3 S3");
    long n[4], s[4];
    for (int r = 0; r < 4; r++) {
        n[r] = arg_long(prog, argv, 1 + 2 * r);
        s[r] = arg_long(prog, argv, 2 + 2 * r);
        USAGE(prog, s[r] <= MAXMSG, "message sizes up to 131072 bytes");
    }

    MPI_Comm half;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);

    /* The ring: rank 0 sends first, the others receive first, so that no
     * send waits for a receive that waits for it. */
    int to = (rank + 1) % 4, from = (rank + 3) % 4;
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (rank == 0))
            for (long i = 0; i < n[rank]; i++)
                MPI_Send(sbuf, (int)s[rank], MPI_BYTE, to, 1, MPI_COMM_WORLD);
        else
            for (long i = 0; i < n[from]; i++)
                MPI_Recv(rbuf, MAXMSG, MPI_BYTE, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    MPI_Request rq[5];
    if (rank == 0) {
        for (int i = 0; i < 5; i++)
            MPI_Isend(sbuf + 4 * i, 4, MPI_BYTE, 2, 2, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(5, rq, MPI_STATUSES_IGNORE);
    } else if (rank == 2) {
        for (int i = 0; i < 5; i++)
            MPI_Irecv(rbuf + 4 * i, 4, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(5, rq, MPI_STATUSES_IGNORE);
    }

    if (rank == 1 || rank == 3)
        MPI_Sendrecv(sbuf, 16, MPI_BYTE, 4 - rank, 3, rbuf, 16, MPI_BYTE, 4 - rank, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);

    if (rank == 3) {
        MPI_Request p;
        MPI_Send_init(sbuf, 256, MPI_BYTE, 2, 4, MPI_COMM_WORLD, &p);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&p);
    } else if (rank == 2) {
        for (int i = 0; i < 2; i++)
            MPI_Recv(rbuf, 256, MPI_BYTE, 3, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    double x[8] = {0}, y[8];
    for (int i = 0; i < 2; i++) {
        x[0] = rank;
        MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(prog, rank, y[0] == 6);
    }
    int v[3] = {rank, rank, rank};
    MPI_Bcast(v, 3, MPI_INT, 2, MPI_COMM_WORLD);
    CHECK(prog, rank, v[0] == 2);

    int a = rank, b = -1;
    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, half);
    CHECK(prog, rank, b == (rank % 2 ? 1 + 3 : 0 + 2));
    MPI_Bcast(sbuf, 100, MPI_BYTE, 0, half);
    MPI_Comm_free(&half);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
