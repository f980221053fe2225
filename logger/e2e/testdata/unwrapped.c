/*
 * unwrapped.c: MPI calls the logger counts but does not record
 * (logger/internal/gen/unwrapped.sigs), a known number of times each, on
 * 2 ranks; usage: unwrapped DIR LATE_MS (DIR for a scratch file).
 *
 * Rank r (0 or 1):
 *   MPI_Buffer_detach        r+1 times (attach, detach): recorded since
 *                            op 198, the rest counted only
 *   MPI_Comm_set_info        2
 *   MPI_File_set_size, MPI_File_preallocate, MPI_File_set_atomicity,
 *   MPI_File_seek_shared, MPI_File_set_info     1 each
 *   MPI_Win_set_info         1
 * and where MPI 4 is (MPICH):
 *   MPI_Allreduce_init       1 (then started and waited for 3 times)
 *   MPI_Barrier_init         1 (started and waited for once)
 *   MPI_Send_c (rank 0) / MPI_Recv_c (rank 1)   2
 *   MPI_Isendrecv            1 (waited for)
 *   MPI_Allreduce_c          1, which rank 1 enters LATE_MS late: rank 0
 *                            waits that long in it, then computes LATE_MS/4
 *                            so that the run ends on rank 0 (the critical
 *                            path runs through its wait, which the logs
 *                            show as computation)
 * It prints "mpi4 1" or "mpi4 0" for the test to know which.
 */
#define PROG "unwrapped"
#include "check.h"

#include <string.h>
#include <time.h>

#if MPI_VERSION >= 4
static void spin_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}
#endif

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    require_size(2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: unwrapped DIR LATE_MS\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long late = atol(argv[2]);

    static char bsend[1 << 12];
    for (int k = 0; k <= rank; k++) {
        void *b;
        int n;
        CHECK(MPI_Buffer_attach(bsend, sizeof bsend));
        CHECK(MPI_Buffer_detach(&b, &n));
    }

    MPI_Info info;
    CHECK(MPI_Info_create(&info));
    CHECK(MPI_Info_set(info, "cpath_test_hint", "1"));
    CHECK(MPI_Comm_set_info(MPI_COMM_WORLD, info));
    CHECK(MPI_Comm_set_info(MPI_COMM_WORLD, info));

    char path[4096];
    snprintf(path, sizeof path, "%s/unwrapped.dat", argv[1]);
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK(MPI_File_set_size(fh, 4096));
    CHECK(MPI_File_preallocate(fh, 8192));
    CHECK(MPI_File_set_atomicity(fh, 1));
    CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK(MPI_File_set_info(fh, info));
    CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);

    int winbuf[4];
    MPI_Win win;
    CHECK(MPI_Win_create(winbuf, sizeof winbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(MPI_Win_set_info(win, info));
    CHECK(MPI_Win_free(&win));
    MPI_Info_free(&info);

    int mpi4 = 0;
#if MPI_VERSION >= 4
    mpi4 = 1;
    double x = rank + 1, sum = 0;
    MPI_Request req;
    CHECK(MPI_Allreduce_init(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int k = 0; k < 3; k++) {
        CHECK(MPI_Start(&req));
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (sum != 3) {
            fprintf(stderr, "unwrapped: rank %d: persistent Allreduce gave %g, want 3\n", rank, sum);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    CHECK(MPI_Request_free(&req));
    CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK(MPI_Start(&req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(MPI_Request_free(&req));

    int v[2] = {rank, 0};
    for (int k = 0; k < 2; k++) {
        if (rank == 0)
            CHECK(MPI_Send_c(v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        else
            CHECK(MPI_Recv_c(v + 1, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHECK(MPI_Isendrecv(v, 1, MPI_INT, 1 - rank, 6, v + 1, 1, MPI_INT, 1 - rank, 6, MPI_COMM_WORLD, &req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    if (rank == 1)
        spin_ms(late);
    CHECK(MPI_Allreduce_c(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0)
        spin_ms(late / 4);
#else
    (void)late;
#endif
    if (rank == 0)
        printf("mpi4 %d\n", mpi4);
    MPI_Finalize();
    return 0;
}
