/*
 * halo: a small 1-D halo exchange, the example program bundled with cpath.
 *
 * Each rank owns N cells of a 1-D rod and relaxes them with a 3-point
 * stencil. Every iteration it
 *   1. posts MPI_Irecv for its two ghost cells and MPI_Isend of its two
 *      boundary cells to its neighbours (MPI_PROC_NULL at the ends),
 *   2. relaxes the interior while the messages travel,
 *   3. MPI_Waitall, then relaxes the two boundary cells,
 *   4. MPI_Allreduce of the residual, which every rank waits for.
 * One rank (by default the last) does SLOW times more sweeps than the others,
 * so the others wait for it in MPI_Waitall and MPI_Allreduce: the critical
 * path runs through its computation.
 *
 * Usage: halo [ITERS [N [SLOW [SLOWRANK]]]]
 *   ITERS     iterations (default 300)
 *   N         cells per rank (default 40000)
 *   SLOW      work factor of the slow rank (default 2)
 *   SLOWRANK  the slow rank (default: the last rank)
 *
 * About 1 s at 4 ranks on 2 cores with the defaults (0.5 s of it the loop).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SWEEPS = 6, TAG = 17 };

/* One Gauss-Seidel sweep over cells lo..hi-1; returns the sum of squared changes. */
static double relax(double *u, long lo, long hi)
{
	double r = 0;
	for (long i = lo; i < hi; i++) {
		double v = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
		r += (v - u[i]) * (v - u[i]);
		u[i] = v;
	}
	return r;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	int iters = argc > 1 ? atoi(argv[1]) : 300;
	long n = argc > 2 ? atol(argv[2]) : 40000;
	int slow = argc > 3 ? atoi(argv[3]) : 2;
	int slowrank = argc > 4 ? atoi(argv[4]) : size - 1;
	if (iters < 1 || n < 2 || slow < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: %s [ITERS [N [SLOW [SLOWRANK]]]]\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	int sweeps = rank == slowrank ? SWEEPS * slow : SWEEPS;

	/* cells 1..n are ours, 0 and n+1 are the ghost cells */
	double *u = malloc((n + 2) * sizeof *u);
	if (!u)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (long i = 0; i < n + 2; i++)
		u[i] = (double)((rank * n + i) * 7919 % 1000) / 1000.0;

	double t0 = MPI_Wtime(), residual = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Request req[4];
		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, TAG, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, TAG, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, TAG, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(&u[n], 1, MPI_DOUBLE, right, TAG, MPI_COMM_WORLD, &req[3]);

		/* the interior (cells 2..n-1) needs neither the ghost cells nor
		 * changes the cells being sent */
		double local = 0;
		for (int s = 0; s < sweeps; s++)
			local = relax(u, 2, n);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		local += relax(u, 1, 2) + relax(u, n, n + 1);
		MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	double t1 = MPI_Wtime();

	if (rank == 0)
		printf("halo: %d ranks, %d iterations, %ld cells per rank, rank %d %dx slower: "
		       "residual %.6e, %.3f s\n", size, iters, n, slowrank, slow, residual, t1 - t0);
	free(u);
	MPI_Finalize();
	return 0;
}
