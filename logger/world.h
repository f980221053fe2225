/* world.h: MPI_COMM_WORLD for the logger's Go side (clock synchronisation,
 * the run id), through PMPI so that none of it is logged. */
#ifndef CPATH_WORLD_H
#define CPATH_WORLD_H
#include <stdint.h>

int cp_w_rank_size(int *rank, int *size);
int cp_w_barrier(void);
int cp_w_allreduce_max(int64_t v, int64_t *out);
int cp_w_bcast(int64_t *v, int n, int root);
int cp_w_send(const int64_t *v, int n, int to, int tag);
int cp_w_recv(int64_t *v, int n, int from, int tag);
#endif
