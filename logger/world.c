/* world.c: see world.h. */
#include <mpi.h>
#include "world.h"

int cp_w_rank_size(int *rank, int *size) {
	int rc = PMPI_Comm_rank(MPI_COMM_WORLD, rank);
	return rc != MPI_SUCCESS ? rc : PMPI_Comm_size(MPI_COMM_WORLD, size);
}

int cp_w_barrier(void) { return PMPI_Barrier(MPI_COMM_WORLD); }

int cp_w_allreduce_max(int64_t v, int64_t *out) {
	return PMPI_Allreduce(&v, out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
}

int cp_w_bcast(int64_t *v, int n, int root) { return PMPI_Bcast(v, n, MPI_INT64_T, root, MPI_COMM_WORLD); }

int cp_w_send(const int64_t *v, int n, int to, int tag) {
	return PMPI_Send(v, n, MPI_INT64_T, to, tag, MPI_COMM_WORLD);
}

int cp_w_recv(int64_t *v, int n, int from, int tag) {
	return PMPI_Recv(v, n, MPI_INT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
