/* flushwait: passive-target one-sided traffic whose MPI_Win_flush* calls
 * wait. Rank 0 locks rank 1's window and, ROUNDS times, accumulates
 * 1 MiB into it and completes it with one of the four flushes in turn
 * (MPI_Win_flush, _all, _local, _local_all), then unlocks; rank 1
 * computes meanwhile, in MPI only at the end. Where the MPI moves the
 * data only when the target enters MPI, the flushes wait for it; where
 * it does not, they take the transfer's time. Either way the time in the
 * flushes is waiting for the window's operations to complete, which the
 * report gives as rma_flush_ns. */
#include "spin.h"

#define ROUNDS 8
#define N (1 << 17) /* doubles: 1 MiB */

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *base, *src = malloc(N * sizeof *src);
    for (int i = 0; i < N; i++)
        src[i] = i;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int r = 0; r < ROUNDS; r++) {
            MPI_Accumulate(src, N, MPI_DOUBLE, 1, 0, N, MPI_DOUBLE, MPI_SUM, win);
            switch (r % 4) {
            case 0: MPI_Win_flush(1, win); break;
            case 1: MPI_Win_flush_all(win); break;
            case 2: MPI_Win_flush_local(1, win); break;
            default: MPI_Win_flush_local_all(win); break;
            }
        }
        MPI_Win_unlock(1, win);
    } else {
        spin_us(200000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(src);
    if (rank == 0)
        printf("flushwait: done\n");
    MPI_Finalize();
    return 0;
}
