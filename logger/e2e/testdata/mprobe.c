/*
 * mprobe.c: matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv) beside the plain ones (MPI_Iprobe, MPI_Probe), on 3 ranks,
 * with every count, peer and size known by construction (mprobe_test.go):
 *
 *  1. rank 1 sends rank 0 400 B (tag 5), 80 B (tag 6), 4 B (tag 5) on
 *     MPI_COMM_WORLD; rank 0 takes the first with Mprobe+Mrecv, the second
 *     with Improbe (polled, MPI_ANY_SOURCE)+Imrecv+Wait, the third with
 *     Iprobe (polled)+Recv.
 *  2. on "rev", MPI_COMM_WORLD with the ranks reversed (local r is world
 *     2-r), rank 2 sends rank 0 16 B (tag 7): Mprobe(MPI_ANY_SOURCE) and
 *     Mrecv, whose peer must be logged as world rank 2.
 *  3. rank 0 probes MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, received by Mrecv.
 *  4. rank 2 computes LATE_MS ms, then sends 8 B (tag 9): rank 0 is
 *     already in Mprobe, which waits for it (a Late Sender at the probe).
 *
 * Prints "improbe polls N" and "iprobe polls N" (rank 0's unproductive
 * probes).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LATE_MS 60

static void spin_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000.0 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "mprobe: run with 3 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm rev;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);

	int a[100], one = 1;
	double d[10];
	char s16[16];
	double late = 0;
	memset(a, 0, sizeof a);
	memset(d, 0, sizeof d);
	memset(s16, 0, sizeof s16);

	/* 1. */
	if (rank == 1) {
		MPI_Send(a, 100, MPI_INT, 0, 5, MPI_COMM_WORLD);
		MPI_Send(d, 10, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
		MPI_Send(&one, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Message m;
		MPI_Status st;
		MPI_Request r;
		int flag = 0, n = 0;
		MPI_Mprobe(1, 5, MPI_COMM_WORLD, &m, &st);
		MPI_Mrecv(a, 100, MPI_INT, &m, &st);
		while (!flag) {
			MPI_Improbe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &m, &st);
			n += !flag;
		}
		MPI_Imrecv(d, 10, MPI_DOUBLE, &m, &r);
		MPI_Wait(&r, &st);
		printf("improbe polls %d\n", n);
		flag = 0, n = 0;
		while (!flag) {
			MPI_Iprobe(1, 5, MPI_COMM_WORLD, &flag, &st);
			n += !flag;
		}
		MPI_Recv(&one, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("iprobe polls %d\n", n);
	}

	/* 2. rank 2 is local 0 of rev, rank 0 local 2. */
	if (rank == 2) {
		MPI_Send(s16, 16, MPI_CHAR, 2, 7, rev);
	} else if (rank == 0) {
		MPI_Message m;
		MPI_Status st;
		MPI_Mprobe(MPI_ANY_SOURCE, 7, rev, &m, &st);
		MPI_Mrecv(s16, 16, MPI_CHAR, &m, MPI_STATUS_IGNORE);
	}

	/* 3. */
	if (rank == 0) {
		MPI_Message m;
		MPI_Status st;
		MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st);
		if (m != MPI_MESSAGE_NO_PROC)
			fprintf(stderr, "mprobe: MPI_PROC_NULL gave no MPI_MESSAGE_NO_PROC\n");
		MPI_Mrecv(NULL, 0, MPI_INT, &m, &st);
	}

	/* 4. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 2) {
		spin_ms(LATE_MS);
		MPI_Send(&late, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Message m;
		MPI_Mprobe(2, 9, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
		MPI_Mrecv(&late, 1, MPI_DOUBLE, &m, MPI_STATUS_IGNORE);
	}

	MPI_Comm_free(&rev);
	MPI_Finalize();
	return 0;
}
