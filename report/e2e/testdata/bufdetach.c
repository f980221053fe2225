/* bufdetach: MPI_Buffer_detach waiting for a buffered message to be
 * delivered.
 *
 * Rank 0 attaches a buffer, sends 1 MiB to rank 1 with MPI_Bsend (which
 * returns at once: the message is copied into the buffer) and detaches
 * the buffer, which returns only once the message is delivered. Rank 1
 * computes DELAY_MS before it posts the receive: a message this large
 * goes by rendezvous, so it cannot be delivered before that, and rank 0
 * waits about DELAY_MS in MPI_Buffer_detach, for rank 1. Both then meet
 * in MPI_Barrier. The computation is by nanosleep: the check is about the
 * dependency, not CPU.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BYTES (1 << 20)
#define DELAY_MS 1000

int main(int argc, char **argv) {
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "bufdetach: run on 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char *msg = calloc(BYTES, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int bsize = BYTES + MPI_BSEND_OVERHEAD;
		void *buf = malloc(bsize);
		MPI_Buffer_attach(buf, bsize);
		MPI_Bsend(msg, BYTES, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
		MPI_Buffer_detach(&buf, &bsize);
		free(buf);
	} else {
		struct timespec ts = {DELAY_MS / 1000, (DELAY_MS % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0)
			;
		MPI_Recv(msg, BYTES, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(msg);
	MPI_Finalize();
	return 0;
}
