/* pausereq: requests completed while MPI_Pcontrol(0) pauses logging must
 * leave the logger's request table, or a later request that Open MPI gives
 * the same handle is logged as completing the stale one. Two ranks. */
#include <mpi.h>
int main(int argc, char **argv) {
	int rank, x = 1, y = 0;
	MPI_Request r, ra, rb;
	MPI_Comm a, b;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		MPI_Irecv(&y, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
	else
		MPI_Isend(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
	MPI_Pcontrol(0);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Comm_idup(MPI_COMM_WORLD, &a, &ra);
	MPI_Wait(&ra, MPI_STATUS_IGNORE);
	MPI_Pcontrol(1);
	if (rank == 0)
		MPI_Irecv(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
	else
		MPI_Isend(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Comm_idup(MPI_COMM_WORLD, &b, &rb);
	MPI_Wait(&rb, MPI_STATUS_IGNORE);
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b);
	MPI_Comm_free(&a);
	MPI_Comm_free(&b);
	MPI_Finalize();
	return 0;
}
