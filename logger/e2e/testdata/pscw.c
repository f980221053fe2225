/*
 * pscw.c: general active target synchronisation (MPI_Win_post, _start,
 * _complete, _wait, _test) at 4 ranks, on two windows:
 *
 *   window 1 (MPI_Win_allocate over MPI_COMM_WORLD), fan-in: rank 0
 *     posts to {1, 2, 3}; each of them starts {0}, puts its rank into
 *     slot rank of rank 0's window and completes; rank 0 waits.
 *   window 2 (MPI_Win_create over rev, MPI_COMM_WORLD split in reverse
 *     order: rev rank i is world rank 3 - i), fan-out: world rank 3 (rev
 *     rank 0) starts the group of rev ranks {1, 2, 3} (world 2, 1, 0),
 *     puts 2 ints into each (target ranks in rev) and completes after
 *     about 20 ms; world ranks 0 and 1 post {rev rank 0} and wait, world
 *     rank 2 posts and polls with MPI_Win_test until the epoch is
 *     complete. It prints "wintest calls N".
 *   window 1 again, a ring twice: each rank posts to {previous rank},
 *     starts {next rank}, puts 1 int into the next rank, completes and
 *     waits.
 *
 * Barriers separate the phases. Every window's contents are checked.
 * fpscw.f90 is the same program in Fortran: keep them in step (and
 * TestPSCW, logger/e2e/pscw_test.go).
 */
#define _POSIX_C_SOURCE 199309L
#define PROG "pscw"
#include "check.h"
#include <time.h>

static void spin_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    require_size(4);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Group world, g;
    CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* Window 1, fan-in to rank 0. */
    int *a, *b;
    MPI_Win wa;
    CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &wa));
    for (int i = 0; i < 4; i++)
        a[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int origins[3] = {1, 2, 3};
        CHECK(MPI_Group_incl(world, 3, origins, &g));
        CHECK(MPI_Win_post(g, 0, wa));
        CHECK(MPI_Win_wait(wa));
        for (int i = 1; i < 4; i++)
            if (a[i] != i) {
                fprintf(stderr, "pscw: fan-in: slot %d holds %d\n", i, a[i]);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
    } else {
        int target = 0;
        CHECK(MPI_Group_incl(world, 1, &target, &g));
        CHECK(MPI_Win_start(g, 0, wa));
        CHECK(MPI_Put(&rank, 1, MPI_INT, 0, rank, 1, MPI_INT, wa));
        CHECK(MPI_Win_complete(wa));
    }
    MPI_Group_free(&g);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Window 2 over rev, fan-out from world rank 3. */
    MPI_Comm rev;
    MPI_Group revg;
    int rr;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev));
    CHECK(MPI_Comm_rank(rev, &rr));
    CHECK(MPI_Comm_group(rev, &revg));
    static int bmem[2] = {-1, -1};
    MPI_Win wb;
    b = bmem;
    CHECK(MPI_Win_create(b, 2 * sizeof(int), sizeof(int), MPI_INFO_NULL, rev, &wb));
    if (rr == 0) {
        int targets[3] = {1, 2, 3};
        CHECK(MPI_Group_incl(revg, 3, targets, &g));
        CHECK(MPI_Win_start(g, 0, wb));
        int v[3][2]; /* not to be reused before the epoch completes */
        for (int i = 1; i < 4; i++) {
            v[i - 1][0] = 10 * i, v[i - 1][1] = 10 * i + 1;
            CHECK(MPI_Put(v[i - 1], 2, MPI_INT, i, 0, 2, MPI_INT, wb));
        }
        spin_ms(20); /* the target that tests finds the epoch open */
        CHECK(MPI_Win_complete(wb));
    } else {
        int origin = 0;
        CHECK(MPI_Group_incl(revg, 1, &origin, &g));
        CHECK(MPI_Win_post(g, 0, wb));
        if (rank == 2) {
            int flag = 0, calls = 0;
            while (!flag) {
                CHECK(MPI_Win_test(wb, &flag));
                calls++;
            }
            printf("wintest calls %d\n", calls);
            fflush(stdout);
        } else
            CHECK(MPI_Win_wait(wb));
        if (b[0] != 10 * rr || b[1] != 10 * rr + 1) {
            fprintf(stderr, "pscw: fan-out: rank %d holds %d %d\n", rank, b[0], b[1]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Group_free(&g);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Window 1, a ring twice. */
    MPI_Group prev, next;
    int p = (rank + size - 1) % size, n = (rank + 1) % size;
    CHECK(MPI_Group_incl(world, 1, &p, &prev));
    CHECK(MPI_Group_incl(world, 1, &n, &next));
    for (int round = 1; round <= 2; round++) {
        int v = 100 * round + rank;
        CHECK(MPI_Win_post(prev, 0, wa));
        CHECK(MPI_Win_start(next, 0, wa));
        CHECK(MPI_Put(&v, 1, MPI_INT, n, 0, 1, MPI_INT, wa));
        CHECK(MPI_Win_complete(wa));
        CHECK(MPI_Win_wait(wa));
        if (a[0] != 100 * round + p) {
            fprintf(stderr, "pscw: ring %d: rank %d holds %d\n", round, rank, a[0]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&prev);
    MPI_Group_free(&next);
    MPI_Group_free(&revg);
    MPI_Group_free(&world);

    CHECK(MPI_Win_free(&wb));
    CHECK(MPI_Win_free(&wa));
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
}
