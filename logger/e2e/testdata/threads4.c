/* threads4 MODE: four threads per rank calling MPI at once under
 * MPI_THREAD_MULTIPLE, for the logger's per-thread streams.
 *
 *   run   on every rank, the main thread posts one MPI_Irecv per worker
 *         (from itself, tag 900+k), then starts 4 workers. Worker k first
 *         polls a message nobody sends with MPI_Iprobe POLLS times (one
 *         coalesced record), then makes NCALLS(k) = 400 + 100*k self
 *         send/receive pairs on tag 100+k (MPI_Send, then MPI_Recv), then
 *         MPI_Waits for the main thread's receive 900+k, which the main
 *         thread's MPI_Send (tag 900+k) after starting the workers matches.
 *         After the joins: MPI_Barrier, MPI_Finalize. Per thread the calls
 *         and their order are known exactly.
 *   kill  rank 1 only (the others wait in MPI_Barrier): the workers make
 *         self send/receive pairs on tag 100+k without end, and after each
 *         call returns store the number of calls made in slot k of
 *         threads4.progress (in the working directory), a file mapped
 *         shared, which survives the process; worker 0
 *         raises SIGKILL after KILLAT calls, the others still calling. */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define NT 4
#define POLLS 100
#define KILLAT 3000
#define NCALLS(k) (400 + 100 * (k))

static int rank, killmode;
static MPI_Request rreq[NT];
static int rbuf[NT];
static volatile int64_t *progress;

static void *worker(void *arg) {
	int k = (int)(intptr_t)arg, flag = 1;
	double x = k, y = 0;
	if (killmode) {
		for (int64_t n = 0;;) {
			MPI_Send(&x, 1, MPI_DOUBLE, rank, 100 + k, MPI_COMM_WORLD);
			__atomic_store_n(&progress[k], ++n, __ATOMIC_RELEASE);
			MPI_Recv(&y, 1, MPI_DOUBLE, rank, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			__atomic_store_n(&progress[k], ++n, __ATOMIC_RELEASE);
			if (k == 0 && n >= KILLAT)
				raise(SIGKILL);
		}
	}
	for (int i = 0; i < POLLS; i++)
		MPI_Iprobe(rank, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	if (flag) {
		fprintf(stderr, "threads4: a message nobody sent arrived\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < NCALLS(k); i++) {
		MPI_Send(&x, 1, MPI_DOUBLE, rank, 100 + k, MPI_COMM_WORLD);
		MPI_Recv(&y, 1, MPI_DOUBLE, rank, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Wait(&rreq[k], MPI_STATUS_IGNORE);
	return NULL;
}

int main(int argc, char **argv) {
	int provided;
	if (argc != 2 || (strcmp(argv[1], "run") && strcmp(argv[1], "kill"))) {
		fprintf(stderr, "usage: threads4 run|kill\n");
		return 2;
	}
	killmode = !strcmp(argv[1], "kill");
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (provided != MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("CPATH-SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Finalize();
		return 0;
	}
	if (killmode && rank != 1) {
		for (;;) /* rank 1 never comes: mpirun ends these */
			MPI_Barrier(MPI_COMM_WORLD);
	}
	if (killmode) {
		int fd = open("threads4.progress", O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, NT * sizeof(int64_t)) != 0)
			return 3;
		progress = mmap(NULL, NT * sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (progress == MAP_FAILED)
			return 3;
	} else {
		for (int k = 0; k < NT; k++)
			MPI_Irecv(&rbuf[k], 1, MPI_INT, rank, 900 + k, MPI_COMM_WORLD, &rreq[k]);
	}
	pthread_t th[NT];
	for (int k = 0; k < NT; k++)
		pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k);
	if (!killmode)
		for (int k = 0; k < NT; k++)
			MPI_Send(&k, 1, MPI_INT, rank, 900 + k, MPI_COMM_WORLD);
	for (int k = 0; k < NT; k++)
		pthread_join(th[k], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0)
		printf("threads4: done\n");
	return 0;
}
