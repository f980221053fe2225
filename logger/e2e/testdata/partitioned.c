/*
 * partitioned.c: MPI 4 partitioned point-to-point communication on 3
 * ranks (MPICH; Open MPI 4.1 lacks it), every count, peer and size known
 * by construction (partitioned_test.go):
 *
 *  1. On MPI_COMM_WORLD, rank 0 initialises two partitioned sends to rank
 *     1 with the same envelope (tag 7): A1, 4 partitions of 8 ints (128 B
 *     in all), then A2, 2 partitions of 32 ints (256 B). Rank 1
 *     initialises the receives in the same order: R1, 2 partitions of 16
 *     ints (128 B), then R2, 4 partitions of 16 ints (256 B). MPI matches
 *     them by order of initialisation (A1-R1, A2-R2); rank 0 starts them
 *     in the other order (A2 first), so matching by start order would
 *     pair the wrong sizes.
 *  2. ITERS iterations of: both Start; rank 0 readies A2 with
 *     MPI_Pready_range(0, 1), then A1's partitions with MPI_Pready(0),
 *     MPI_Pready_list({2, 1}) and MPI_Pready(3), then MPI_Wait(A2),
 *     MPI_Wait(A1); in the polled iterations rank 0 computes POLL_MS ms
 *     after its starts. Rank 1 polls MPI_Parrived(R1, 0) (every 20 us)
 *     until it is set (receive partition 0 needs send partitions 0 and
 *     1), then MPI_Wait(R1), MPI_Wait(R2): a tight loop of unproductive
 *     calls, which the logger coalesces. Iteration LATE_ITER is the designed
 *     one: it begins with a barrier; rank 0 computes LATE_MS ms before
 *     MPI_Pready(3), a late Pready; rank 1 polls no MPI_Parrived, so its
 *     MPI_Wait(R1) completes both receive partitions and waits for the
 *     late one (receive partition 1 needs send partitions 2 and 3).
 *     (MPICH 4.0 moves a partitioned message only once every partition
 *     is ready: a MPI_Parrived polled there would wait as long.)
 *  3. After the late iteration rank 1 computes AFTER_MS ms, then every
 *     rank enters a barrier: rank 1 arrives last, so the critical path
 *     runs through its computation, its MPI_Wait(R1) and, across the
 *     transfer, rank 0's late MPI_Pready.
 *  4. On "rev", MPI_COMM_WORLD with the ranks reversed (local r is world
 *     2-r), world rank 1 sends world rank 2 one partition of 10 doubles
 *     (80 B, tag 9), once: peers must be logged as world ranks.
 *
 * Prints "parrived calls N" (rank 1's MPI_Parrived calls, all iterations).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 3
#define LATE_ITER 1
#define POLL_MS 5
#define LATE_MS 80
#define AFTER_MS 120

static void spin_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000.0 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "partitioned: check failed at line %d: %s\n", \
				__LINE__, #c);                                     \
			MPI_Abort(MPI_COMM_WORLD, 3);                              \
		}                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 3);
	MPI_Comm rev;
	MPI_Comm_split(MPI_COMM_WORLD, 0, 2 - rank, &rev);

	int a1[32], a2[64];
	MPI_Request q1, q2;
	if (rank == 0) {
		MPI_Psend_init(a1, 4, 8, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q1);
		MPI_Psend_init(a2, 2, 32, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q2);
	} else if (rank == 1) {
		MPI_Precv_init(a1, 2, 16, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q1);
		MPI_Precv_init(a2, 4, 16, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q2);
	}
	long parrived = 0;
	for (int it = 0; it < ITERS; it++) {
		if (it == LATE_ITER)
			MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			for (int i = 0; i < 32; i++)
				a1[i] = 1000 * it + i;
			for (int i = 0; i < 64; i++)
				a2[i] = -1000 * it - i;
			MPI_Start(&q2);
			MPI_Start(&q1);
			if (it != LATE_ITER)
				spin_ms(POLL_MS); /* rank 1 polls MPI_Parrived meanwhile */
			MPI_Pready_range(0, 1, q2);
			MPI_Pready(0, q1);
			int list[2] = {2, 1};
			MPI_Pready_list(2, list, q1);
			if (it == LATE_ITER)
				spin_ms(LATE_MS);
			MPI_Pready(3, q1);
			MPI_Wait(&q2, MPI_STATUS_IGNORE);
			MPI_Wait(&q1, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Start(&q1);
			MPI_Start(&q2);
			int flag = 0;
			while (it != LATE_ITER) {
				MPI_Parrived(q1, 0, &flag);
				parrived++;
				if (flag)
					break;
				struct timespec ts = {0, 20000};
				nanosleep(&ts, NULL);
			}
			for (int i = 0; i < 16 && flag; i++)
				CHECK(a1[i] == 1000 * it + i);
			MPI_Wait(&q1, MPI_STATUS_IGNORE);
			MPI_Wait(&q2, MPI_STATUS_IGNORE);
			for (int i = 0; i < 32; i++)
				CHECK(a1[i] == 1000 * it + i);
			for (int i = 0; i < 64; i++)
				CHECK(a2[i] == -1000 * it - i);
			if (it == LATE_ITER)
				spin_ms(AFTER_MS);
		}
		if (it == LATE_ITER)
			MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank <= 1) {
		MPI_Request_free(&q1);
		MPI_Request_free(&q2);
	}

	double d[10];
	MPI_Request q;
	if (rank == 1) {
		for (int i = 0; i < 10; i++)
			d[i] = i;
		MPI_Psend_init(d, 1, 10, MPI_DOUBLE, 0, 9, rev, MPI_INFO_NULL, &q); /* local 0: world 2 */
		MPI_Start(&q);
		MPI_Pready(0, q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		MPI_Request_free(&q);
	} else if (rank == 2) {
		MPI_Precv_init(d, 1, 10, MPI_DOUBLE, 1, 9, rev, MPI_INFO_NULL, &q); /* local 1: world 1 */
		MPI_Start(&q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		CHECK(d[9] == 9.0);
		MPI_Request_free(&q);
	}
	if (rank == 1)
		printf("parrived calls %ld\n", parrived);
	MPI_Comm_free(&rev);
	MPI_Finalize();
	return 0;
}
