/*
 * micro: the logger issue's per-call micro-benchmarks, one per run.
 *
 * Usage: micro MODE CALLS [THREADS]
 *
 *   self       every rank sends 8 bytes (one MPI_DOUBLE) to itself with
 *              MPI_Send and receives them with MPI_Recv (status kept):
 *              CALLS calls in all (CALLS/2 pairs). Run on 1 rank for "one
 *              rank", on 2 for "both cores busy".
 *   selfpost   as self, the receive posted first: MPI_Irecv from itself,
 *              MPI_Send, MPI_Wait; CALLS calls in all (CALLS/3 messages).
 *              MPICH (ch4:ucx) holds a blocking MPI_Send to the rank itself
 *              until the receive is posted, so self deadlocks there (the
 *              standard allows it): this runs under every MPI.
 *   latency    osu_latency style: ranks 0 and 1 ping-pong 8 bytes
 *              (MPI_Send/MPI_Recv), CALLS/2 round trips; reports half a
 *              round trip (one message's latency) — each rank makes one
 *              send and one receive per round trip.
 *   allreduce  8-byte MPI_Allreduce (one double, MPI_SUM), CALLS calls.
 *   threads    MPI_Init_thread(MPI_THREAD_MULTIPLE); THREADS threads each
 *              make CALLS/THREADS self send/recv pairs on their own tag;
 *              reports wall ns per call (all threads' calls).
 *   nulltest   as threads, but each thread makes CALLS/THREADS calls of
 *              MPI_Test(MPI_REQUEST_NULL), which Open MPI answers without
 *              a lock: what the threads share is the logger's, not the
 *              MPI library's (each call is recorded: it completes at once).
 *   init       MPI_Init itself, once (CALLS is ignored): what the logger's
 *              start-up (clock synchronisation, the log file, modules)
 *              adds to the call every run's critical path begins with.
 *
 * Every mode but init first makes CALLS/10 calls of the same kind untimed (warm-up),
 * then times the whole loop with CLOCK_MONOTONIC (wall) and with
 * CLOCK_PROCESS_CPUTIME_ID (CPU time of all the process's threads, kernel
 * time included: on a machine shared with other jobs it does not count the
 * time the rank waits for a core), flushes included. Output (rank 0 only,
 * after MPI_Finalize, so that no output happens while timing):
 *
 *   micro MODE NS_PER_CALL CALLS VMHWM_KB CPU_NS_PER_CALL
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long vmhwm_kb(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

static double cpu_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int rank;

static void self_pairs(long pairs, int tag) {
	double x = 1, y = 0;
	MPI_Status st;
	for (long i = 0; i < pairs; i++) {
		MPI_Send(&x, 1, MPI_DOUBLE, rank, tag, MPI_COMM_WORLD);
		MPI_Recv(&y, 1, MPI_DOUBLE, rank, tag, MPI_COMM_WORLD, &st);
	}
}

static void self_posted(long msgs) {
	double x = 1, y = 0;
	MPI_Request rq;
	for (long i = 0; i < msgs; i++) {
		MPI_Irecv(&y, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &rq);
		MPI_Send(&x, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
}

static void pingpong(long rounds) {
	double x = 1;
	for (long i = 0; i < rounds; i++) {
		if (rank == 0) {
			MPI_Send(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
		}
	}
}

static void allreduce(long n) {
	double x = 1, y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

struct targ {
	long pairs;
	int tag;
};

static int nulltest;

static void null_tests(long n) {
	MPI_Request r = MPI_REQUEST_NULL;
	int flag;
	for (long i = 0; i < n; i++)
		MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
}

static void *thread_main(void *p) {
	struct targ *a = p;
	if (nulltest)
		null_tests(2 * a->pairs);
	else
		self_pairs(a->pairs, a->tag);
	return NULL;
}

static void threads(long pairs, int nt) {
	pthread_t th[64];
	struct targ a[64];
	for (int i = 0; i < nt; i++) {
		a[i].pairs = pairs / nt;
		a[i].tag = 100 + i;
		pthread_create(&th[i], NULL, thread_main, &a[i]);
	}
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: micro self|selfpost|latency|allreduce|threads|nulltest|init CALLS [THREADS]\n");
		return 2;
	}
	const char *mode = argv[1];
	long calls = atol(argv[2]);
	int nt = argc > 3 ? atoi(argv[3]) : 4;
	if (nt < 1 || nt > 64)
		nt = 4;
	nulltest = !strcmp(mode, "nulltest");
	if (!strcmp(mode, "threads") || nulltest) {
		int prov;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
		if (prov != MPI_THREAD_MULTIPLE) {
			fprintf(stderr, "micro: no MPI_THREAD_MULTIPLE\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	double t0 = 0, t1 = 0, c0 = 0, c1 = 0;
	if (!strcmp(mode, "init")) {
		c0 = cpu_ns();
		t0 = now_ns();
		MPI_Init(&argc, &argv);
		t1 = now_ns();
		c1 = cpu_ns();
		calls = 1;
	} else if (strcmp(mode, "threads") && !nulltest) {
		MPI_Init(&argc, &argv);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!strcmp(mode, "init")) {
		/* timed above */
	} else if (!strcmp(mode, "self")) {
		self_pairs(calls / 20, 1);
		c0 = cpu_ns();
		t0 = now_ns();
		self_pairs(calls / 2, 1);
		t1 = now_ns();
		c1 = cpu_ns();
	} else if (!strcmp(mode, "selfpost")) {
		self_posted(calls / 30);
		c0 = cpu_ns();
		t0 = now_ns();
		self_posted(calls / 3);
		t1 = now_ns();
		c1 = cpu_ns();
		calls = calls / 3 * 3;
	} else if (!strcmp(mode, "latency")) {
		pingpong(calls / 20);
		MPI_Barrier(MPI_COMM_WORLD);
		c0 = cpu_ns();
		t0 = now_ns();
		pingpong(calls / 2);
		t1 = now_ns();
		c1 = cpu_ns();
		calls = calls / 2 * 2; /* per rank: one send and one receive per round trip */
		/* half a round trip per message: the time per call on one rank */
	} else if (!strcmp(mode, "allreduce")) {
		allreduce(calls / 10);
		MPI_Barrier(MPI_COMM_WORLD);
		c0 = cpu_ns();
		t0 = now_ns();
		allreduce(calls);
		t1 = now_ns();
		c1 = cpu_ns();
	} else if (!strcmp(mode, "threads") || nulltest) {
		threads(calls / 20, nt);
		c0 = cpu_ns();
		t0 = now_ns();
		threads(calls / 2, nt);
		t1 = now_ns();
		c1 = cpu_ns();
	} else {
		fprintf(stderr, "micro: unknown mode %s\n", mode);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	if (rank == 0)
		printf("micro %s %.2f %ld %ld %.2f\n", mode, (t1 - t0) / (double)calls, calls, vmhwm_kb(),
		       (c1 - c0) / (double)calls);
	return 0;
}
