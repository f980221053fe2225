/* callpath: calls with known call paths, for CPATH_CALLDEPTH. Each rank
 * makes ITERS times, in turn, main → f → g → MPI_Send + MPI_Recv (tag 1)
 * and main → h → g → MPI_Send + MPI_Recv (tag 2), to itself: one call
 * site per operation (in g), two call paths. Built with frame pointers and
 * without inlining or tail calls, so that every function keeps its frame. */
#include <mpi.h>
#include <stdio.h>

#define ITERS 50

static int rank;
static volatile double sink;

__attribute__((noinline)) void g(int tag) {
	double x = tag, y = 0;
	MPI_Send(&x, 1, MPI_DOUBLE, rank, tag, MPI_COMM_WORLD);
	MPI_Recv(&y, 1, MPI_DOUBLE, rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	sink += y;
}

__attribute__((noinline)) void f(void) {
	g(1);
	sink += 1;
}

__attribute__((noinline)) void h(void) {
	g(2);
	sink += 2;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < ITERS; i++) {
		f();
		h();
	}
	MPI_Finalize();
	if (rank == 0)
		printf("callpath: done\n");
	return 0;
}
