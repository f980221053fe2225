/*
 * threads.c PHASES ITERS BASE_US EXTRA_US
 *
 * Two ranks under MPI_THREAD_MULTIPLE, two worker threads per rank (w = 0,
 * 1) besides the main thread. Worker w of each rank exchanges messages
 * with worker w of the other rank on tag 1+w: PHASES phases of ITERS
 * iterations of compute BASE_US (worker 1 of rank 1: BASE_US + EXTRA_US),
 * then Irecv, Isend, Waitall. At the end of a phase each worker sends one
 * "done" message (tag 100+w) to the other rank's main thread, which
 * receives both, waits for its own workers (a pthread barrier) and calls
 * MPI_Barrier before the next phase. A Barrier after MPI_Init_thread
 * aligns the ranks; one after the last phase ends the run together.
 *
 * Known by construction (P = PHASES, N = ITERS, B = BASE_US, X = EXTRA_US):
 *   worker 1 of rank 1 is the slowest sequence of calls; its partner
 *   waits for it in every Waitall (Late Sender) and the main threads wait
 *   for its "done" message, so the critical path follows worker 1 of
 *   rank 1: computation on the path on rank 1 >= P*N*(B+X);
 *   messages: P*(4*N + 4), all matched.
 *
 * If MPI_THREAD_MULTIPLE is not provided it prints CPATH-SKIP and exits 0.
 */
#include "spin.h"

#include <pthread.h>
#include <string.h>

#define DONE_TAG 100

static const char *prog = "threads";
static int rank, peer;
static long phases, iters, base, extra;
static pthread_barrier_t phase_start, phase_end;

static void *worker(void *arg)
{
    int w = (int)(long)arg;
    long us = base + (rank == 1 && w == 1 ? extra : 0);
    for (long p = 0; p < phases; p++) {
        pthread_barrier_wait(&phase_start);
        for (long i = 0; i < iters; i++) {
            spin_us(us);
            long out = rank * 1000000 + w * 100000 + p * 1000 + i, in = -1;
            MPI_Request req[2];
            MPI_Irecv(&in, 1, MPI_LONG, peer, 1 + w, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(&out, 1, MPI_LONG, peer, 1 + w, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            CHECK(prog, rank, in == peer * 1000000 + w * 100000 + p * 1000 + i);
        }
        long done = p;
        MPI_Send(&done, 1, MPI_LONG, peer, DONE_TAG + w, MPI_COMM_WORLD);
        pthread_barrier_wait(&phase_end);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("CPATH-SKIP MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        return 0;
    }
    USAGE(prog, size == 2, "run with 2 ranks");
    USAGE(prog, argc == 5, "usage: threads PHASES ITERS BASE_US EXTRA_US");
    phases = arg_long(prog, argv, 1);
    iters = arg_long(prog, argv, 2);
    base = arg_long(prog, argv, 3);
    extra = arg_long(prog, argv, 4);
    peer = 1 - rank;

    MPI_Barrier(MPI_COMM_WORLD);
    pthread_barrier_init(&phase_start, NULL, 3);
    pthread_barrier_init(&phase_end, NULL, 3);
    pthread_t th[2];
    for (long w = 0; w < 2; w++)
        CHECK(prog, rank, pthread_create(&th[w], NULL, worker, (void *)w) == 0);
    for (long p = 0; p < phases; p++) {
        pthread_barrier_wait(&phase_start);
        for (int w = 0; w < 2; w++) {
            long done = -1;
            MPI_Recv(&done, 1, MPI_LONG, peer, DONE_TAG + w, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, done == p);
        }
        pthread_barrier_wait(&phase_end);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int w = 0; w < 2; w++)
        pthread_join(th[w], NULL);
    pthread_barrier_destroy(&phase_start);
    pthread_barrier_destroy(&phase_end);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
