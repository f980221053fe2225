/*
 * tightloop: cost per intercepted MPI call on a tight loop of cheap calls.
 *
 * Usage: tightloop CALLS_PER_BATCH BATCHES
 *
 * Every rank times, independently and with no communication, batches of
 * CALLS_PER_BATCH cheap calls that the cpath logger intercepts, for each of
 * these kinds (one batch of each kind per round, round-robin, so that noise
 * spreads evenly over the kinds):
 *
 *   test      MPI_Test(&MPI_REQUEST_NULL)
 *   wait      MPI_Wait(&MPI_REQUEST_NULL)
 *   sendrecv  MPI_Sendrecv of 0 bytes to and from MPI_PROC_NULL
 *   isend     MPI_Isend of 0 bytes to MPI_PROC_NULL, then MPI_Wait (2 calls)
 *   irecv     MPI_Irecv of 0 bytes from MPI_PROC_NULL, then MPI_Wait (2 calls)
 *
 * and, as references for a timing breakdown (no MPI call, never intercepted):
 *
 *   clock     clock_gettime(CLOCK_MONOTONIC)
 *   rdtsc     the x86 time-stamp counter (clock_gettime on other CPUs)
 *   record    what a logger's hot path must do at least: two rdtsc and one
 *             64-byte record written into a 1 MiB ring buffer
 *   empty     an empty loop iteration
 *
 * Output, one line per batch (the harness takes medians over batches),
 * printed at the end so that no output happens while timing:
 *
 *   tight RANK KIND BATCH CALLS NS_PER_CALL
 *
 * Keep CALLS_PER_BATCH well below the logger's buffer (16384 records) so that
 * most batches do not include a buffer flush: the median over batches is
 * then the cost of the hot path, and the mean includes the flushes.
 *
 * then one line with the calls made (to check the logger recorded them all)
 * and the peak resident set size, read from /proc/self/status before and
 * after MPI_Finalize:
 *
 *   calls RANK MPI_CALLS
 *   mem RANK VMHWM_KB_BEFORE_FINALIZE VMHWM_KB_AFTER_FINALIZE
 *
 * Deterministic apart from the times: no other output.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long vmhwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

enum { K_TEST, K_WAIT, K_SENDRECV, K_ISEND, K_IRECV, K_CLOCK, K_RDTSC, K_RECORD, K_EMPTY, NKINDS };
static const char *kind_name[NKINDS] = {"test", "wait", "sendrecv", "isend", "irecv", "clock", "rdtsc", "record", "empty"};
/* MPI calls made per loop iteration of each kind */
static const int kind_calls[NKINDS] = {1, 1, 1, 2, 2, 0, 0, 0, 0};

static volatile long sink;

static inline int64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (int64_t)((uint64_t)hi << 32 | lo);
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

/* A record the size and shape of the logger's (trace.Record). */
struct rec {
	int64_t start, end;
	uint64_t callsite, bytes;
	uint8_t op, flags;
	uint16_t thread;
	uint32_t comm;
	int32_t peer, tag, root;
	uint32_t count, seq, req;
};
#define NREC 16384 /* 1 MiB */
static struct rec ring[NREC];
static volatile int nrec;

/* run_batch runs n iterations of kind k and returns the elapsed ns. */
static double run_batch(int k, long n)
{
	MPI_Request req;
	MPI_Status st;
	int flag;
	long i;
	double t0 = now_ns(), t1;
	switch (k) {
	case K_TEST:
		for (i = 0; i < n; i++) {
			req = MPI_REQUEST_NULL;
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		}
		break;
	case K_WAIT:
		for (i = 0; i < n; i++) {
			req = MPI_REQUEST_NULL;
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
		break;
	case K_SENDRECV:
		for (i = 0; i < n; i++)
			MPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 1, NULL, 0, MPI_BYTE, MPI_PROC_NULL, 1,
			             MPI_COMM_WORLD, &st);
		break;
	case K_ISEND:
		for (i = 0; i < n; i++) {
			MPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, &st);
		}
		break;
	case K_IRECV:
		for (i = 0; i < n; i++) {
			MPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, &st);
		}
		break;
	case K_CLOCK:
		for (i = 0; i < n; i++) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		break;
	case K_RDTSC:
		for (i = 0; i < n; i++)
			sink += ticks();
		break;
	case K_RECORD:
		for (i = 0; i < n; i++) {
			int64_t a = ticks(), b;
			struct rec *r;
			__asm__ __volatile__("" ::: "memory"); /* the call would be here */
			b = ticks();
			if (nrec == NREC)
				nrec = 0;
			r = &ring[nrec++];
			memset(r, 0, sizeof *r);
			r->start = a;
			r->end = b;
			r->callsite = (uint64_t)(uintptr_t)__builtin_return_address(0);
			r->op = 34;
			r->peer = -1;
			r->root = -1;
		}
		break;
	case K_EMPTY:
		for (i = 0; i < n; i++)
			__asm__ __volatile__("" ::: "memory");
		break;
	}
	t1 = now_ns();
	return t1 - t0;
}

int main(int argc, char **argv)
{
	long n = 0, batches = 0, b, calls = 0;
	int rank, k, warm;
	long hwm_before;
	double *res;

	/* whole lines per write, so that mpirun cannot interleave two ranks'
	   output inside a line */
	setvbuf(stdout, NULL, _IOLBF, 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3 || (n = atol(argv[1])) <= 0 || (batches = atol(argv[2])) <= 0) {
		if (rank == 0)
			fprintf(stderr, "usage: tightloop CALLS_PER_BATCH BATCHES\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	memset(ring, 0, sizeof ring); /* fault the model's buffer in, as a long-running logger's is */
	/* warm-up: two untimed batches of each kind (page faults, lazy init) */
	for (warm = 0; warm < 2; warm++)
		for (k = 0; k < NKINDS; k++) {
			run_batch(k, n);
			calls += (long)kind_calls[k] * n;
		}
	res = malloc(sizeof *res * (size_t)batches * NKINDS);
	if (!res)
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Barrier(MPI_COMM_WORLD);
	calls++;
	for (b = 0; b < batches; b++)
		for (k = 0; k < NKINDS; k++) {
			res[b * NKINDS + k] = run_batch(k, n);
			calls += (long)kind_calls[k] * n;
		}
	MPI_Barrier(MPI_COMM_WORLD);
	calls++;
	for (b = 0; b < batches; b++)
		for (k = 0; k < NKINDS; k++) {
			long c = kind_calls[k] ? (long)kind_calls[k] * n : n;
			printf("tight %d %s %ld %ld %.3f\n", rank, kind_name[k], b, c, res[b * NKINDS + k] / (double)c);
		}
	free(res);
	printf("calls %d %ld\n", rank, calls);
	hwm_before = vmhwm_kb();
	fflush(stdout);
	MPI_Finalize();
	printf("mem %d %ld %ld\n", rank, hwm_before, vmhwm_kb());
	return 0;
}
