/*
 * heldsend.c MODE N D_US SIZE...
 *
 * Two ranks. For each SIZE (bytes), N iterations of: rank 1 posts an
 * MPI_Irecv, computes D_US, then calls MPI_Wait; rank 0 sends SIZE bytes
 * (MODE send: MPI_Send; isend: MPI_Isend + MPI_Wait; persistent: one
 * MPI_Send_init, then MPI_Start + MPI_Wait per message). Barriers before
 * and after each size.
 *
 * Whether a send returns before rank 1 reaches its MPI_Wait depends on the
 * MPI (eager limits, how many fragments it may buffer), not on a size the
 * analyzer could know, so the program measures it: rank 0 prints, per
 * size, how long its send calls blocked in all,
 *     heldsend: size SIZE blocked_ns NS
 * which is the test's oracle for Late Receiver.
 *
 * Known by construction: rank 1's computation (N*D per size) is on the
 * critical path; the sends' blocking is waiting for rank 1 to enter MPI
 * (Late Receiver), not time of MPI_Send.
 */
#include <string.h>

#include "spin.h"

int main(int argc, char **argv)
{
    const char *prog = "heldsend";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc >= 5, "usage: heldsend send|isend|persistent N D_US SIZE...");
    const char *mode = argv[1];
    USAGE(prog, !strcmp(mode, "send") || !strcmp(mode, "isend") || !strcmp(mode, "persistent"),
          "MODE is send, isend or persistent");
    long n = arg_long(prog, argv, 2), d = arg_long(prog, argv, 3);
    long max = 0;
    for (int a = 4; a < argc; a++)
        if (arg_long(prog, argv, a) > max)
            max = arg_long(prog, argv, a);
    char *buf = calloc(max > 0 ? max : 1, 1);
    CHECK(prog, rank, buf != NULL);

    for (int a = 4; a < argc; a++) {
        int bytes = (int)arg_long(prog, argv, a);
        int64_t blocked = 0;
        MPI_Request req;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && !strcmp(mode, "persistent"))
            MPI_Send_init(buf, bytes, MPI_BYTE, 1, a, MPI_COMM_WORLD, &req);
        for (long i = 0; i < n; i++) {
            if (rank == 0) {
                int64_t t0 = now_ns();
                if (!strcmp(mode, "send")) {
                    MPI_Send(buf, bytes, MPI_BYTE, 1, a, MPI_COMM_WORLD);
                } else if (!strcmp(mode, "isend")) {
                    MPI_Isend(buf, bytes, MPI_BYTE, 1, a, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else {
                    MPI_Start(&req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                }
                blocked += now_ns() - t0;
            } else {
                MPI_Irecv(buf, bytes, MPI_BYTE, 0, a, MPI_COMM_WORLD, &req);
                spin_us(d);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
        if (rank == 0 && !strcmp(mode, "persistent"))
            MPI_Request_free(&req);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("heldsend: size %d blocked_ns %lld\n", bytes, (long long)blocked);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
