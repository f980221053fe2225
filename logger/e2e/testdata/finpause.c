/* finpause MODE: ranks that skip logging at MPI_Finalize. Three ranks make
 * 20 MPI_Allreduces, then:
 *   one   rank 1 calls MPI_Pcontrol(0) before MPI_Finalize
 *   all   every rank calls MPI_Pcontrol(0) before MPI_Finalize
 *   none  nobody pauses (with an unwritable log for one rank: the test
 *         makes that rank's log path a directory)
 * Rank 0 prints "finpause: ok" after MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
	int rank, x = 1, y = 0;
	const char *mode = argc > 1 ? argv[1] : "none";
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < 20; i++)
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if ((!strcmp(mode, "one") && rank == 1) || !strcmp(mode, "all"))
		MPI_Pcontrol(0);
	MPI_Finalize();
	if (rank == 0) {
		printf("finpause: ok\n");
		fflush(stdout);
	}
	return 0;
}
