/*
 * heldpop.c POST SEND N C_US BYTES
 *
 * Two ranks, N rounds of: rank 0 computes C_US/20, sends BYTES to rank 1
 * (SEND send: MPI_Send; ssend: MPI_Ssend), then computes C_US; rank 1 computes C_US and receives them, with its
 * MPI_Irecv posted before the round's MPI_Barrier (POST early) or after
 * its computation (POST late), and MPI_Wait after both; then both call
 * MPI_Barrier.
 *
 * A send that MPI holds until its receiver enters MPI delays rank 0's
 * computation until rank 1's is done: each round takes 2·C_US, rank 0
 * computing 1.05·C_US of it, rank 1 C_US. Known by construction, by POP's
 * definitions (the ideal network delivers a message as soon as it is
 * sent):
 *   - POST early: the receive is posted when the send starts, so only the
 *     receiver's progress held the send: ideal, 1.05·C_US a round, so
 *     serialisation 1 and transfer 0.52;
 *   - POST late, BYTES above the eager limit: the send must wait for its
 *     receive's post (a rendezvous), after rank 1's computation: the
 *     ideal run keeps that, so serialisation 0.52 and transfer 1;
 *   - POST late, BYTES below it: the send may go eagerly, nothing need
 *     wait: serialisation 1 (and transfer 1 where it did);
 *   - SEND ssend: the send waits for its receive's post (serialisation
 *     0.52 if POST late), and an MPI lets it complete only once the
 *     receiver has matched it, inside MPI: held, whatever its size.
 */
#include <string.h>

#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "heldpop";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc == 6, "usage: heldpop early|late send|ssend N C_US BYTES");
    int early = !strcmp(argv[1], "early"), ssend = !strcmp(argv[2], "ssend");
    USAGE(prog, early || !strcmp(argv[1], "late"), "POST is early or late");
    USAGE(prog, ssend || !strcmp(argv[2], "send"), "SEND is send or ssend");
    long n = arg_long(prog, argv, 3), c = arg_long(prog, argv, 4), bytes = arg_long(prog, argv, 5);
    char *buf = calloc(bytes > 0 ? bytes : 1, 1);
    CHECK(prog, rank, buf != NULL);

    /* An early receive is posted before the barrier that the send waits
     * for: before the send starts, whatever the ranks' speeds. */
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 1 && early && n > 0)
        MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            /* Rank 1 is computing when the message arrives, not still in
             * the barrier (where it would match it at once). */
            spin_us(c / 20);
            if (ssend)
                MPI_Ssend(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            else
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            spin_us(c);
        } else {
            spin_us(c);
            if (!early)
                MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (early && i + 1 < n)
                MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
