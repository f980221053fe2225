/* failmodes MODE: a run that ends badly, for the logger's "must not break
 * the program" tests. Three ranks make 50 MPI_Barriers, then rank 1 does
 * MODE while the other ranks wait on MPI_Barrier (which cannot complete
 * without rank 1):
 *   ok     every rank finalizes normally (exit status 0)
 *   abort  rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3)
 *   term   rank 1 raises SIGTERM
 *   kill   rank 1 raises SIGKILL
 *   exit   every rank calls exit(4) without MPI_Finalize
 *   pollterm, pollkill, pollexit: as term, kill and exit, but rank 1 first
 *          posts an MPI_Irecv no one matches and polls it NPOLLS times
 *          with MPI_Test (one open run of unproductive polls)
 *   recvterm, recvkill, recvexit: as term, kill and exit, but rank 0 first
 *          sends rank 1 one int (tag 78), which rank 1 receives with
 *          MPI_Recv right before it dies (a call whose coding the logger
 *          defers to the next call)
 * Before the barriers every rank calls MPI_Comm_set_info once, which the
 * logger counts but does not record, so that every end of the log must
 * carry the count.
 * Rank 0 prints "failmodes: 50 barriers done" after the barriers and, in
 * mode ok, "failmodes: ok" after MPI_Finalize. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBARRIERS 50
#define NPOLLS 1000

int main(int argc, char **argv) {
	int rank, size;
	if (argc != 2) {
		fprintf(stderr, "usage: failmodes [poll|recv]ok|abort|term|kill|exit\n");
		return 2;
	}
	const char *mode = argv[1];
	int polls = !strncmp(mode, "poll", 4);
	int recv = !strncmp(mode, "recv", 4);
	if (polls || recv)
		mode += 4;
	if (strcmp(mode, "ok") && strcmp(mode, "abort") && strcmp(mode, "term") && strcmp(mode, "kill") &&
	    strcmp(mode, "exit")) {
		fprintf(stderr, "failmodes: unknown mode %s\n", mode);
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Info info;
	MPI_Info_create(&info);
	MPI_Comm_set_info(MPI_COMM_WORLD, info);
	MPI_Info_free(&info);
	for (int i = 0; i < NBARRIERS; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		printf("failmodes: %d barriers done on %d ranks\n", NBARRIERS, size);
		fflush(stdout);
	}
	if (recv && rank < 2) {
		int v = 7;
		if (rank == 0)
			MPI_Send(&v, 1, MPI_INT, 1, 78, MPI_COMM_WORLD);
		else
			MPI_Recv(&v, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (polls && rank == 1) {
		static int buf;
		MPI_Request req;
		int flag = 0;
		MPI_Irecv(&buf, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &req);
		for (int i = 0; i < NPOLLS; i++)
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			fprintf(stderr, "failmodes: the receive nobody sent completed\n");
			return 1;
		}
	}
	if (!strcmp(mode, "ok")) {
		MPI_Finalize();
		if (rank == 0) {
			printf("failmodes: ok\n");
			fflush(stdout);
		}
		return 0;
	}
	if (!strcmp(mode, "exit"))
		exit(4);
	if (rank == 1) {
		if (!strcmp(mode, "abort"))
			MPI_Abort(MPI_COMM_WORLD, 3);
		else if (!strcmp(mode, "term"))
			raise(SIGTERM);
		else
			raise(SIGKILL);
		/* not reached */
		fprintf(stderr, "failmodes: rank 1 survived mode %s\n", mode);
		return 1;
	}
	/* The others wait for rank 1, which never comes: mpirun must end them. */
	for (;;)
		MPI_Barrier(MPI_COMM_WORLD);
}
