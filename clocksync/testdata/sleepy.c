/* sleepy: barriers spaced by sleeps, so that a run lasts long enough
 * (about half a second) for an injected clock drift to matter. */
#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	for (int i = 0; i < 20; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		usleep(25000);
	}
	MPI_Finalize();
	return 0;
}
