/* standin.c: a stand-in for the logger, preloaded as loggerbench's
 * reference side (-ref-lib standin) to tell what the MPI library and the
 * machine make of a per-call cost from what the logger's own design does.
 *
 * Its MPI_Send and MPI_Recv spend STANDIN_NS of the calling thread's own
 * time around the PMPI call, half before and half after, and touch nothing
 * shared: no buffer, no atomic, no lock. With one thread it adds
 * STANDIN_NS per call; whatever it adds beyond that with more threads
 * comes from the MPI library's contention among them (micro.c's threads
 * mode), not from anything a logger shares. STANDIN_NS is 36, the
 * logger's added CPU per call in threads-1. The other calls are MPI's. */
#include <mpi.h>
#include <time.h>
#include <x86intrin.h>

#define STANDIN_NS 36

static unsigned long half_ticks; /* STANDIN_NS/2 in TSC ticks */

static void calibrate(void) {
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	unsigned long t0 = __rdtsc();
	double ns;
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	} while (ns < 5e6);
	half_ticks = (unsigned long)((__rdtsc() - t0) / ns * STANDIN_NS / 2);
}

static inline void spend(void) {
	unsigned long t = __rdtsc();
	while (__rdtsc() - t < half_ticks)
		;
}

int MPI_Init(int *argc, char ***argv) {
	calibrate();
	return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
	calibrate();
	return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
	spend();
	int rc = PMPI_Send(buf, count, type, dest, tag, comm);
	spend();
	return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Status *status) {
	spend();
	int rc = PMPI_Recv(buf, count, type, src, tag, comm, status);
	spend();
	return rc;
}
