/* threadmatch SEND RECV: messages between the threads of two ranks, all
 * on one source, tag and communicator, for the analyzer's matching.
 *
 * Rank 0 runs NT sender threads, rank 1 NT receiver threads
 * (MPI_THREAD_MULTIPLE). Each thread first calls MPI_Pcontrol(1000+k):
 * its worker number k, for the test. Sender
 * k sends NM messages of 8 bytes, { k, i }, to rank 1 on tag 7 of
 * MPI_COMM_WORLD, message i at DELAY_MS + (NT i + k) GAP_US after the
 * barrier that starts the threads: the senders take turns, and each
 * starts its send GAP_US after the one before started, at the earliest
 * (a sender whose synchronous send completed late sends late, and the
 * others after it). Receiver j receives NM messages and, at the end, rank 1
 * prints the true pairs from their payloads, one line each:
 *
 *     pair J M K I    (receiver J's M-th receive got sender K's I-th send)
 *
 * SEND: send (MPI_Send), isend (MPI_Isend + MPI_Wait), ssend (MPI_Ssend),
 *       psend, pbsend, pssend (MPI_Send_init, MPI_Bsend_init,
 *       MPI_Ssend_init once, then MPI_Start + MPI_Wait per message),
 *       mixed (MPI_Ssend from even senders, MPI_Send from odd ones),
 *       ssendburst (MPI_Ssend, every sender's message i at once, at
 *       DELAY_MS + i (NT + 1) GAP_US: nothing outside MPI says in which
 *       order it queued them, only when each completed; with RECV one),
 *       sendburst (the same with MPI_Send: nothing in the logs says which
 *       receive took which of the sends whose calls overlapped, and the
 *       analysis must count those pairings as guesses).
 * RECV: recv (MPI_Recv from 0, tag 7), any (MPI_Recv from MPI_ANY_SOURCE
 *       with MPI_ANY_TAG), irecv (MPI_Irecv + MPI_Wait), late (MPI_Recv,
 *       receiver j posting its first at DELAY_MS + (NT + j) GAP_US, once
 *       the senders' first messages are all sent), one (receiver 0 alone
 *       receives all NT NM messages, receive r of round i at DELAY_MS +
 *       (i (NT + 1) + r + 1) GAP_US: for ssendburst, each round's
 *       synchronous sends wait 1, 2, …, NT GAP_US, a Late Receiver; it
 *       prints its receive m as "pair 0 m K I").
 *
 * The design: the receivers post their first receives at once, POST_MS
 * after the start, so that nothing outside MPI says in which order it
 * queued them: only when each completed. The one that gets sender k's
 * first message waits for it DELAY_MS - POST_MS + k GAP_US, a Late
 * Sender. The senders' calls
 * interleave, so that the order in which the threads' calls end (the
 * log's) is not the order in which they sent.
 *
 * With mixed and late, even sender k's first MPI_Ssend waits (NT - k)
 * GAP_US, until receiver 0 posts its first receive and takes the
 * messages already sent, one by one (a Late Receiver), while the odd
 * senders' MPI_Send return at once: the log holds each even sender's first send
 * after the odd sender's that followed it, though MPI matched it first.
 * The waiting is by clock_nanosleep: the check is about dependencies,
 * not CPU. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NT 4
#define NM 10
#define TAG 7
#define POST_MS 10
#define DELAY_MS 110
#define GAP_US 10000

static int rank;
static const char *smode, *rmode;
static int got[NT][NM][2];
static struct timespec t0; /* the threads' start, CLOCK_MONOTONIC */
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn;       /* the next send's number, NT i + k */
static long last_us;   /* when the last send started, µs after t0 */

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec - t0.tv_sec) * 1000000L + (ts.tv_nsec - t0.tv_nsec) / 1000;
}

/* sleep_until sleeps until us µs after t0. */
static void sleep_until(long us) {
	struct timespec ts = t0;
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

/* mark names the thread's worker in the log. (Not by a poll: a receive
 * that follows polls waits from their start.) */
static void mark(int k) { MPI_Pcontrol(1000 + k); }

/* take_turn waits for send number n's turn and time, and passes the
 * turn on. */
static void take_turn(int n) {
	pthread_mutex_lock(&turn_mu);
	while (turn != n)
		pthread_cond_wait(&turn_cv, &turn_mu);
	long at = DELAY_MS * 1000L + (long)n * GAP_US;
	if (n > 0 && last_us + GAP_US > at)
		at = last_us + GAP_US;
	sleep_until(at);
	last_us = now_us();
	turn++;
	pthread_cond_broadcast(&turn_cv);
	pthread_mutex_unlock(&turn_mu);
}

static void *sender(void *arg) {
	int k = (int)(long)arg, msg[2] = {k, 0};
	MPI_Request req = MPI_REQUEST_NULL;
	mark(k);
	if (!strcmp(smode, "psend"))
		MPI_Send_init(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, &req);
	else if (!strcmp(smode, "pbsend"))
		MPI_Bsend_init(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, &req);
	else if (!strcmp(smode, "pssend"))
		MPI_Ssend_init(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, &req);
	for (int i = 0; i < NM; i++) {
		msg[1] = i;
		if (!strcmp(smode, "ssendburst") || !strcmp(smode, "sendburst")) {
			sleep_until(DELAY_MS * 1000L + (long)i * (NT + 1) * GAP_US);
			if (!strcmp(smode, "ssendburst"))
				MPI_Ssend(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD);
			else
				MPI_Send(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD);
			continue;
		}
		take_turn(NT * i + k);
		if (!strcmp(smode, "send") || (!strcmp(smode, "mixed") && k % 2))
			MPI_Send(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD);
		else if (!strcmp(smode, "ssend") || !strcmp(smode, "mixed"))
			MPI_Ssend(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD);
		else if (!strcmp(smode, "isend")) {
			MPI_Isend(msg, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		} else {
			MPI_Start(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
	}
	if (req != MPI_REQUEST_NULL)
		MPI_Request_free(&req);
	return NULL;
}

static void *receiver(void *arg) {
	int j = (int)(long)arg;
	mark(j);
	if (!strcmp(rmode, "one")) {
		for (int m = 0; j == 0 && m < NT * NM; m++) {
			int i = m / NT, r = m % NT;
			sleep_until(DELAY_MS * 1000L + ((long)i * (NT + 1) + r + 1) * GAP_US);
			MPI_Recv(got[m / NM][m % NM], 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		return NULL;
	}
	if (!strcmp(rmode, "late"))
		sleep_until(DELAY_MS * 1000L + (long)(NT + j) * GAP_US);
	else
		sleep_until(POST_MS * 1000L);
	for (int m = 0; m < NM; m++) {
		int *buf = got[j][m];
		if (!strcmp(rmode, "recv") || !strcmp(rmode, "late"))
			MPI_Recv(buf, 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else if (!strcmp(rmode, "any"))
			MPI_Recv(buf, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else {
			MPI_Request req;
			MPI_Irecv(buf, 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	int provided, size;
	static const char *smodes[] = {"send", "isend", "ssend", "psend", "pbsend", "pssend", "mixed", "ssendburst", "sendburst"};
	static const char *rmodes[] = {"recv", "any", "irecv", "late", "one"};
	int ok = argc == 3, oks = 0, okr = 0;
	for (int i = 0; ok && i < 9; i++)
		oks |= !strcmp(argv[1], smodes[i]);
	for (int i = 0; ok && i < 5; i++)
		okr |= !strcmp(argv[2], rmodes[i]);
	if (!ok || !oks || !okr) {
		fprintf(stderr, "usage: threadmatch send|isend|ssend|psend|pbsend|pssend|mixed|ssendburst|sendburst recv|any|irecv|late|one\n");
		return 2;
	}
	smode = argv[1];
	rmode = argv[2];
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided != MPI_THREAD_MULTIPLE || size != 2) {
		if (rank == 0)
			printf("CPATH-SKIP: MPI_THREAD_MULTIPLE not provided (%d) or not 2 ranks (%d)\n", provided, size);
		MPI_Finalize();
		return 0;
	}
	void *bbuf = NULL;
	int bsize = NT * NM * (8 + MPI_BSEND_OVERHEAD);
	if (rank == 0 && !strcmp(smode, "pbsend")) {
		bbuf = malloc(bsize);
		MPI_Buffer_attach(bbuf, bsize);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[NT];
	for (long k = 0; k < NT; k++)
		pthread_create(&th[k], NULL, rank == 0 ? sender : receiver, (void *)k);
	for (int k = 0; k < NT; k++)
		pthread_join(th[k], NULL);
	if (bbuf) {
		MPI_Buffer_detach(&bbuf, &bsize);
		free(bbuf);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1)
		for (int j = 0; j < NT; j++)
			for (int m = 0; m < NM; m++)
				printf("pair %d %d %d %d\n", strcmp(rmode, "one") ? j : 0, strcmp(rmode, "one") ? m : j * NM + m,
				       got[j][m][0], got[j][m][1]);
	MPI_Finalize();
	return 0;
}
