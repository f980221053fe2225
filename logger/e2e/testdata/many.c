/* many N: every rank sends 8 bytes to itself and receives them N times
 * (2N calls, enough for the log to span several 4 MiB windows of the
 * logger's mapping), then one MPI_Allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int rank;
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double x = 1, y = 0;
	MPI_Status st;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < n; i++) {
		MPI_Send(&x, 1, MPI_DOUBLE, rank, (int)(i & 7), MPI_COMM_WORLD);
		MPI_Recv(&y, 1, MPI_DOUBLE, rank, (int)(i & 7), MPI_COMM_WORLD, &st);
	}
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
