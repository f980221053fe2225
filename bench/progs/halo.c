/*
 * halo: a regular 1-D halo exchange, the pattern of a stencil code.
 *
 * Usage: halo ITERATIONS WORK [ALLREDUCE_EVERY [HALO_DOUBLES]]
 *
 * Each rank owns a block of a periodic 1-D domain (LOCAL doubles plus
 * HALO_DOUBLES ghost cells on each side). Every iteration it posts
 * MPI_Irecv ×2, MPI_Isend ×2 to its left and right neighbours, completes them
 * with one MPI_Waitall, then sweeps a 3-point stencil WORK times over its
 * block (the computation). Every ALLREDUCE_EVERY iterations (default 10) it
 * sums a residual with MPI_Allreduce. So an iteration makes 5 MPI calls (5.1
 * with the default Allreduce period) and WORK sets how many calls per second
 * that is.
 *
 * Output (times in seconds, from CLOCK_MONOTONIC):
 *
 *   halo RANK ITERS MPI_CALLS INIT_S LOOP_S COMPUTE_S FINALIZE_S TOTAL_S ITER_MEDIAN_S CHECKSUM
 *   mem RANK VMHWM_KB_BEFORE_FINALIZE VMHWM_KB_AFTER_FINALIZE
 *   ctx RANK THREADS MAIN_VOLUNTARY MAIN_INVOLUNTARY PROC_VOLUNTARY PROC_INVOLUNTARY
 *
 * INIT_S is MPI_Init, LOOP_S the iterations (from a barrier after MPI_Init to
 * a barrier after the last iteration), COMPUTE_S the part of LOOP_S spent in
 * the stencil, FINALIZE_S MPI_Finalize, TOTAL_S main's entry to the end of
 * MPI_Finalize. ITER_MEDIAN_S is the median time of one iteration (from a
 * histogram with 0.1% wide bins), robust to the bursts of interference of a
 * shared machine. CHECKSUM depends only on the arguments and the number of
 * ranks (it proves both runs did the same work). The ctx line counts the
 * threads of the process and the context switches during the iterations, of
 * the main thread and of the whole process: a tool's helper threads show up
 * there.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <sys/resource.h>

#define LOCAL 1024

/* Histogram of iteration times: bin i holds times in [HMIN·HR^i, HMIN·HR^(i+1)). */
#define HMIN 50e-9
#define HR 1.001
#define HBINS 20000
static unsigned hist[HBINS];

static void hist_add(double t)
{
	long i = t <= HMIN ? 0 : (long)(log(t / HMIN) / log(HR));
	if (i >= HBINS)
		i = HBINS - 1;
	hist[i]++;
}

static double hist_median(long n)
{
	long i, seen = 0;
	for (i = 0; i < HBINS; i++) {
		seen += hist[i];
		if (2 * seen >= n)
			return HMIN * pow(HR, (double)i + 0.5);
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* status_field reads a number from /proc/self/status ("VmHWM:", "Threads:"). */
static long status_field(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(name);
	long v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, name, n) == 0) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long vmhwm_kb(void) { return status_field("VmHWM:"); }

int main(int argc, char **argv)
{
	double t_main = now_s(), t_init, t_loop0, t_loop1, t_fin0, t_fin1, compute = 0;
	long iters = 0, work = 0, every = 10, h = 8, it, w, i, calls = 0, hwm_before;
	int rank, size, left, right;
	double *u, *v, resid = 0, sum;
	struct rusage ru_t0, ru_t1, ru_p0, ru_p1;
	long threads;

	setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines per write: no interleaving of ranks */
	MPI_Init(&argc, &argv);
	t_init = now_s();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3 || argc > 5 || (iters = atol(argv[1])) <= 0 || (work = atol(argv[2])) < 0 ||
	    (argc > 3 && (every = atol(argv[3])) <= 0) || (argc > 4 && (h = atol(argv[4])) <= 0) || h > LOCAL) {
		if (rank == 0)
			fprintf(stderr, "usage: halo ITERATIONS WORK [ALLREDUCE_EVERY [HALO_DOUBLES]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	left = (rank + size - 1) % size;
	right = (rank + 1) % size;
	u = calloc(LOCAL + 2 * h, sizeof *u);
	v = calloc(LOCAL + 2 * h, sizeof *v);
	for (i = 0; i < LOCAL; i++)
		u[h + i] = (double)((rank * LOCAL + i) % 97);

	MPI_Barrier(MPI_COMM_WORLD);
	calls++;
	getrusage(RUSAGE_THREAD, &ru_t0);
	getrusage(RUSAGE_SELF, &ru_p0);
	t_loop0 = now_s();
	for (it = 0; it < iters; it++) {
		MPI_Request rq[4];
		double tc, ti = now_s();
		/* ghosts: u[0..h) from the left, u[h+LOCAL..) from the right */
		MPI_Irecv(u, (int)h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(u + h + LOCAL, (int)h, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
		MPI_Isend(u + LOCAL, (int)h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(u + h, (int)h, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		calls += 5;

		tc = now_s();
		for (w = 0; w < work; w++) {
			for (i = h; i < h + LOCAL; i++)
				v[i] = (u[i - 1] + u[i] + u[i + 1]) * (1.0 / 3.0);
			memcpy(u + h, v + h, LOCAL * sizeof *u);
		}
		compute += now_s() - tc;

		if ((it + 1) % every == 0) {
			double r = 0;
			for (i = h; i < h + LOCAL; i++)
				r += u[i];
			MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			calls++;
			resid = sum;
			/* keep the values bounded and the run deterministic */
			for (i = h; i < h + LOCAL; i++)
				u[i] = (double)((long)(u[i] * 8.0) % 97);
		}
		hist_add(now_s() - ti);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	calls++;
	t_loop1 = now_s();
	getrusage(RUSAGE_THREAD, &ru_t1);
	getrusage(RUSAGE_SELF, &ru_p1);
	threads = status_field("Threads:");
	hwm_before = vmhwm_kb();
	fflush(stdout);
	t_fin0 = now_s();
	MPI_Finalize();
	t_fin1 = now_s();
	printf("halo %d %ld %ld %.6f %.6f %.6f %.6f %.6f %.9f %.6g\n", rank, iters, calls, t_init - t_main,
	       t_loop1 - t_loop0, compute, t_fin1 - t_fin0, t_fin1 - t_main, hist_median(iters), resid);
	printf("mem %d %ld %ld\n", rank, hwm_before, vmhwm_kb());
	printf("ctx %d %ld %ld %ld %ld %ld\n", rank, threads, ru_t1.ru_nvcsw - ru_t0.ru_nvcsw,
	       ru_t1.ru_nivcsw - ru_t0.ru_nivcsw, ru_p1.ru_nvcsw - ru_p0.ru_nvcsw, ru_p1.ru_nivcsw - ru_p0.ru_nivcsw);
	free(u);
	free(v);
	return 0;
}
