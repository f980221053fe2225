/* burst: one rank posts N receives from itself, then N small sends to
 * itself (each completes at once: Open MPI hands all of them one shared
 * pre-completed request), then completes all 2N in one MPI_Waitall, the
 * sends first; ITERS times. It prints how many distinct handles its sends
 * got, so that the test knows whether the shared handle was exercised. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4000
#define ITERS 3

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	static MPI_Request rq[2 * N];
	static int in[N], out[N];
	int distinct = 0;
	for (int it = 0; it < ITERS; it++) {
		for (int i = 0; i < N; i++)
			MPI_Irecv(&in[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &rq[N + i]);
		for (int i = 0; i < N; i++) {
			out[i] = i;
			MPI_Isend(&out[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &rq[i]);
		}
		if (it == 0)
			for (int i = 0; i < N; i++)
				distinct += i == 0 || rq[i] != rq[i - 1];
		MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE);
		for (int i = 0; i < N; i++)
			if (in[i] != i) {
				printf("burst: receive %d got %d\n", i, in[i]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
	}
	if (rank == 0)
		printf("burst: %d sends, %d distinct handles\n", N, distinct);
	MPI_Finalize();
	return 0;
}
