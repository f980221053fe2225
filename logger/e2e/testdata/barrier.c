/* barrier.c: MPI_Init, one MPI_Barrier, MPI_Finalize: the least a log
 * can hold, for tests of what the logger writes around the calls (its
 * header). */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
