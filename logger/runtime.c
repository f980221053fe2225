/* runtime.c: the logger's C runtime: the threads' record staging, the
 * communicator and request tables, and the paths that run when a rank ends
 * (finalize, abort, signal, exit without finalize). Go (logger.go) owns
 * the file.
 *
 * Every thread that calls MPI gets a state of its own (cp_thr): its
 * staging buffer, its open run of polls, the requests it created and, under
 * MPI_THREAD_MULTIPLE, its own record stream (encode.c). Under
 * MPI_THREAD_MULTIPLE a thread records its call holding only its own
 * state's lock, which no other thread takes on its calls' path: another
 * takes it to find a request this thread created (its Wait completes it),
 * and to hold every thread out of the logger for what must see them all at
 * rest (a CHECK, MPI_Pcontrol, MPI_Finalize, MPI_Abort). Locks are taken in
 * this order, never the other way: cp_admin_mu, cp_reg_mu, the states'
 * locks by index; a thread that holds its own takes no other state's, only
 * the leaves (the communicator table's, the modules', encode.c's growth).
 * Without MPI_THREAD_MULTIPLE only one thread is in MPI at a time: no lock
 * is taken and the states share one stream. */
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code.h"
#include "cpathlog.h"
#include "encode.h"
#include "modules.h"
#include "unwind.h"
#include "_cgo_export.h"

volatile int cp_on;
volatile int cp_logging;
int cp_inited;
int cp_use_tsc;
int cp_calldepth; /* CPATH_CALLDEPTH, set by Go at MPI_Init */
CP_TLS int cp_depth;
CP_TLS void *cp_fp;
static int cp_mt; /* MPI_THREAD_MULTIPLE: the threads record at once */

/* Injected clock skew (test only), applied to calibration points. */
int64_t cp_skew_off, cp_skew_base;
double cp_skew_ppm;
/* Clock read at MPI_Init's entry, to measure the tick rate. */
int64_t cp_setup_tick, cp_setup_ns;

/* ---- threads ---- */

/* A run of unproductive polls. A poll that completed nothing is not coded
 * when it returns: its record stays open in its thread's state, and the
 * thread's next identical poll extends it (end, and the number of calls in
 * root). Any other recorded call of the thread (cp_call), MPI_Pcontrol,
 * and the ends of the log (finalize, abort, exit, a signal) close the run:
 * its one record is then coded, ahead of whatever closed it. A rank killed
 * outright loses the open runs (at most one record per thread). */
typedef struct cp_run {
	cp_rec rec;
	cp_path path;
	uint64_t key; /* hash of the poll's arguments */
	int open;
} cp_run;

/* The staging buffer holds a call's records until the call is done. A call
 * with more sub-records than fit is coded in parts: in one batch after
 * another with one stream, all into one block with threads. */
#define CP_TBUF 512

/* cp_walked is a walk of a call path (cp_walk) kept for the next call
 * from the same call site: where it started, the stack slots it read and
 * what they held, and the path. A call from the same frame whose slots
 * hold the same values has the same path: read without the rules'
 * lookups, every load independent of the others. */
#define CP_WALKED 8 /* cp_walk indexes them by the top 3 bits of a hash */
typedef struct cp_walked {
	uintptr_t fp, slot[2 * CP_MAXDEPTH + 2], val[2 * CP_MAXDEPTH + 2];
	int slots;
	cp_path path;
} cp_walked;

typedef struct cp_thr {
	volatile int lock; /* MPI_THREAD_MULTIPLE: see the top of the file */
	int idx;           /* in cp_thrs; with threads, its stream */
	int tid;           /* the records' Thread: one per thread, never reused */
	int live;          /* a thread owns it (else it waits to be reused) */
	int n;             /* records staged */
	int cur;           /* one stream: where the call being recorded starts in buf (-1: it was coded in parts) */
	int npend;         /* one stream: records of the deferred call, at the front of buf (see cp_pend) */
	int64_t last_end;  /* the last call's end */
	cp_rec buf[CP_TBUF];
	cp_path *paths; /* with call paths: paths[i] is buf[i]'s */
	cp_run run;
	cp_enc *enc; /* with threads */
	/* The requests this thread created: a table of handles (open
	 * addressing), each with the list of its live requests, oldest first,
	 * in a pool of nodes. */
	struct cp_rbucket *rtab;
	int rcap, rlen; /* buckets: room, used */
	struct cp_rnode *rnodes;
	int32_t nnodes, rfree; /* the pool's size; its free list (index + 1, 0: none) */
	uint32_t req_next, req_end; /* a block of request ids */
	uint64_t claims;
	uintptr_t stk_lo, stk_hi; /* the thread's stack, for call paths */
	cp_walked walked[CP_WALKED]; /* the last walks, by call site (cp_walk) */
} cp_thr;

static cp_thr *cp_thrs[CP_MAXSTREAMS];
static volatile int cp_nthrs;
static pthread_mutex_t cp_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cp_admin_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t cp_key;
static atomic_int cp_ntid;
static CP_TLS cp_thr *cp_me;
/* Without threads: set while a thread is inside the logger, so that the
 * signal path leaves the poll runs and the deferred call alone. */
static volatile int cp_held;

/* Deferred coding (one stream only). A call that waits for a message (a
 * blocking receive, a Wait, a productive Test, a probe: cp_defer_op) is
 * usually followed at once by a send that the peer waits for: coding its
 * records as it returns would delay that send. So its records stay staged
 * in its thread's buffer (cp_pend is that state, npend the records) and are
 * coded with the next recorded call's, in the same batch, after that
 * call's MPI function has returned: for a ping-pong, off the round trip.
 * The log is the same: the records, in the same order (the deferred ones
 * come before anything staged after them: a run of polls the next call
 * closes, the next call's). The deferred call is coded before any other
 * record: by the next recorded call of any thread (cp_pend_take, from
 * cp_call, cp_call1 and cp_runs_close), by MPI_Pcontrol, MPI_Finalize and
 * MPI_Abort (cp_runs_close, then the flush), by a thread state's reuse
 * (cp_self_new) and, on the way out of a signal or an exit without
 * MPI_Finalize, by the signal path (cp_runs_rescue), unless a thread is
 * inside the logger then. A rank killed outright (SIGKILL) loses it: the
 * call in flight and at most one call that returned before it. With
 * threads (MPI_THREAD_MULTIPLE) nothing is deferred. */
static cp_thr *cp_pend;
static const uint8_t cp_defer_op[256] = {
	[CP_OP_RECV] = 1,    [CP_OP_MRECV] = 1,   [CP_OP_SENDRECV] = 1, [CP_OP_SENDRECV_REPLACE] = 1,
	[CP_OP_WAIT] = 1,    [CP_OP_WAITALL] = 1, [CP_OP_WAITANY] = 1,  [CP_OP_WAITSOME] = 1,
	[CP_OP_TEST] = 1,    [CP_OP_TESTALL] = 1, [CP_OP_TESTANY] = 1,  [CP_OP_TESTSOME] = 1,
	[CP_OP_PROBE] = 1,   [CP_OP_IPROBE] = 1,  [CP_OP_MPROBE] = 1,   [CP_OP_IMPROBE] = 1,
};

static uint32_t cp_world_rank_self;

/* cp_defer_ok says whether the call whose n records start at r is
 * deferred: one that waits for a message, unless the message is the
 * rank's own (its peer, or its first sub-record's: a completed request's,
 * the receive half of a Sendrecv). Deferring costs CPU (the record is
 * stored, then coded from memory: a few ns of a self send/recv pair), and
 * a rank's message to itself is not one a peer waits on its next call for. */
static inline int cp_defer_ok(const cp_rec *r, int n) {
	if (!cp_defer_op[r->op])
		return 0;
	int32_t peer = n > 1 ? r[1].peer : r->peer;
	return peer != (int32_t)cp_world_rank_self;
}

static void cp_spin(volatile int *l) {
	for (int i = 0; __atomic_load_n(l, __ATOMIC_RELAXED); i++) {
		if (i < 100)
			_mm_pause();
		else
			sched_yield(); /* its holder may be waiting for our core */
	}
}

static inline void cp_tlock(cp_thr *t) {
	if (!cp_mt)
		return;
	while (__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE))
		cp_spin(&t->lock);
}

static inline int cp_ttrylock(cp_thr *t) {
	return !cp_mt || !__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE);
}

static inline void cp_tunlock(cp_thr *t) {
	if (cp_mt)
		__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

static void cp_stack_bounds(cp_thr *t) {
	pthread_attr_t a;
	void *addr;
	size_t size;
	t->stk_lo = t->stk_hi = 0;
	for (int i = 0; i < CP_WALKED; i++)
		t->walked[i].fp = 0; /* no walk on this stack yet */
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0) {
		t->stk_lo = (uintptr_t)addr;
		t->stk_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

static void cp_flush(cp_thr *t);
static inline void cp_pend_take(cp_thr *t);
static void cp_commit(cp_thr *t);
static void cp_run_close(cp_thr *t, cp_thr *into);

/* cp_self_new gives the calling thread a state: one a thread that ended
 * left, or a new one. NULL past CP_MAXSTREAMS threads at once: their
 * calls are not recorded. */
static cp_thr *cp_self_new(void) {
	pthread_mutex_lock(&cp_reg_mu);
	cp_thr *t = NULL;
	for (int i = 0; i < cp_nthrs && !t; i++)
		if (!cp_thrs[i]->live)
			t = cp_thrs[i];
	if (t) {
		/* A run its last thread left open is closed first. */
		cp_tlock(t);
		if (t->run.open) {
			cp_pend_take(t); /* one stream: a deferred call first */
			cp_run_close(t, t);
			cp_flush(t);
			cp_commit(t);
		}
		t->live = 1;
		t->tid = atomic_fetch_add(&cp_ntid, 1);
		cp_tunlock(t);
	} else if (cp_nthrs < CP_MAXSTREAMS && (t = calloc(1, sizeof *t)) != NULL) {
		t->idx = cp_nthrs;
		t->tid = atomic_fetch_add(&cp_ntid, 1);
		t->live = 1;
		if (cp_mt && !(t->enc = cp_enc_stream((uint32_t)t->idx))) {
			free(t);
			t = NULL;
		} else {
			__atomic_store_n(&cp_thrs[cp_nthrs], t, __ATOMIC_RELEASE);
			__atomic_store_n(&cp_nthrs, cp_nthrs + 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&cp_reg_mu);
	if (t) {
		cp_stack_bounds(t);
		if (cp_calldepth && !t->paths)
			t->paths = calloc(CP_TBUF, sizeof *t->paths);
		cp_me = t;
		pthread_setspecific(cp_key, t);
	}
	return t;
}

static inline cp_thr *cp_self(void) {
	cp_thr *t = cp_me;
	if (__builtin_expect(t != NULL, 1))
		return t;
	return cp_self_new();
}

/* cp_thr_exit runs when a thread that called MPI ends: its state waits for
 * the next new thread. With threads, its open run is committed now; with
 * one stream, another thread may be coding, so the run waits for the next
 * MPI_Pcontrol, the end of the log or the state's next thread. */
static void cp_thr_exit(void *p) {
	cp_thr *t = p;
	cp_me = NULL;
	if (cp_mt) {
		cp_tlock(t);
		if (t->run.open && cp_logging) {
			cp_run_close(t, t);
			cp_flush(t);
			cp_commit(t);
		}
		cp_tunlock(t);
	}
	pthread_mutex_lock(&cp_reg_mu);
	t->live = 0;
	pthread_mutex_unlock(&cp_reg_mu);
}

/* cp_world_stop holds every thread out of the logger (with threads): no
 * state changes and no block is half-written until cp_world_start. The
 * caller holds no state's lock. */
static void cp_world_stop(void) {
	if (!cp_mt)
		return;
	pthread_mutex_lock(&cp_admin_mu);
	pthread_mutex_lock(&cp_reg_mu);
	for (int i = 0; i < cp_nthrs; i++)
		cp_tlock(cp_thrs[i]);
}

static void cp_world_start(void) {
	if (!cp_mt)
		return;
	for (int i = 0; i < cp_nthrs; i++)
		cp_tunlock(cp_thrs[i]);
	pthread_mutex_unlock(&cp_reg_mu);
	pthread_mutex_unlock(&cp_admin_mu);
}

/* cp_flush codes t's staged records: with one stream into the log (they
 * are committed), with threads into t's scratch buffer. */
static inline void cp_flush(cp_thr *t) {
	t->cur = -1; /* a call being recorded is coded in parts: not deferred */
	if (t->n == 0)
		return;
	if (cp_mt) {
		cp_enc_code(t->enc, t->buf, cp_calldepth ? t->paths : NULL, t->n);
	} else {
		cp_enc_batch(t->buf, cp_calldepth ? t->paths : NULL, t->n);
		if (cp_pend == t)
			cp_pend = NULL;
	}
	t->n = 0;
}

/* cp_pend_flush codes the deferred call, staged in p, another thread's
 * state (one stream: no other thread is in the logger). */
static __attribute__((noinline)) void cp_pend_flush(cp_thr *p) { cp_flush(p); }

/* cp_pend_take puts the deferred call's records ahead of what t stages
 * next: another thread's are coded now; t's own are already at the front
 * of its buffer, and are coded with what follows them. */
static inline __attribute__((always_inline)) void cp_pend_take(cp_thr *t) {
	cp_thr *p = cp_pend;
	if (__builtin_expect(p != NULL && p != t, 0))
		cp_pend_flush(p);
}

/* cp_commit writes what t coded as one block (threads). */
static void cp_commit(cp_thr *t) {
	if (cp_mt)
		cp_enc_commit(t->enc);
}

/* cp_begin starts recording a call: the calling thread's state, locked
 * (NULL when it has none: the call is not recorded). */
static inline __attribute__((always_inline)) cp_thr *cp_begin(void) {
	cp_thr *t = cp_self();
	if (__builtin_expect(t == NULL, 0))
		return NULL;
	if (__builtin_expect(cp_mt, 0))
		cp_tlock(t);
	else
		cp_held = 1;
	return t;
}

static void cp_checkpoint(cp_thr *t);

/* cp_mods_flush has Go log the modules of call sites outside every module
 * logged so far. */
static void cp_mods_flush(void) {
	pthread_mutex_lock(&cp_mods_mu);
	if (cp_mods_stale) {
		cp_mods_stale = 0;
		cp_depth++;
		cpathGoModules();
		cp_depth--;
	}
	pthread_mutex_unlock(&cp_mods_mu);
}

/* cp_end commits the call's records and lets go of the state. */
static __attribute__((noinline)) void cp_end_mt(cp_thr *t) {
	int due = cp_enc_put(t->enc, t->buf, cp_calldepth ? t->paths : NULL, t->n, t->last_end);
	t->n = 0;
	if (__builtin_expect(cp_mods_stale, 0))
		cp_mods_flush();
	cp_tunlock(t);
	if (__builtin_expect(due, 0))
		cp_checkpoint(t);
}

/* cp_defer codes what t staged before the call being recorded (from cur
 * on) and keeps that call's records staged, deferred (see cp_pend). */
static __attribute__((noinline)) void cp_defer(cp_thr *t, int cur) {
	if (cur > 0) {
		cp_enc_batch_in(t->buf, cp_calldepth ? t->paths : NULL, cur);
		memmove(t->buf, t->buf + cur, sizeof t->buf[0] * (size_t)(t->n - cur));
		if (cp_calldepth && t->paths)
			memmove(t->paths, t->paths + cur, sizeof t->paths[0] * (size_t)(t->n - cur));
		t->n -= cur;
	}
	t->npend = t->n;
	cp_pend = t;
}

static inline __attribute__((always_inline)) void cp_end(cp_thr *t) {
	if (!t)
		return;
	if (__builtin_expect(cp_mt, 0)) {
		cp_end_mt(t);
		return;
	}
	int n = t->n, cur = t->cur;
	if (__builtin_expect(n > 0, 1)) {
		if (cur >= 0 && cur < n && cp_defer_ok(&t->buf[cur], n - cur) && !cp_mods_stale) {
			/* a call that waits for a message: deferred */
			cp_defer(t, cur);
		} else if (cur == n && cp_pend == t && n == t->npend && !cp_mods_stale) {
			/* the call staged nothing (a poll joined or opened a run):
			 * the deferred call stays deferred */
		} else {
			cp_enc_batch_in(t->buf, cp_calldepth ? t->paths : NULL, n);
			t->n = 0;
			if (cp_pend == t)
				cp_pend = NULL;
		}
	}
	t->cur = t->n;
	if (__builtin_expect(cp_mods_stale, 0))
		cp_mods_flush();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_held = 0;
}

/* cp_checkpoint writes a CHECK and a calibration point (threads), unless
 * another thread is at it. */
static void cp_checkpoint(cp_thr *t) {
	if (pthread_mutex_trylock(&cp_admin_mu) != 0)
		return;
	pthread_mutex_lock(&cp_reg_mu);
	for (int i = 0; i < cp_nthrs; i++)
		cp_tlock(cp_thrs[i]);
	if (cp_enc_due(t->enc, t->last_end))
		cp_enc_checkpoint(t->enc);
	cp_world_start();
}

/* cp_put returns the next free record. */
static inline cp_rec *cp_put(cp_thr *t) {
	if (t->n == CP_TBUF)
		cp_flush(t);
	cp_rec *r = &t->buf[t->n++];
	memset(r, 0, sizeof *r);
	r->thread = (uint16_t)t->tid;
	return r;
}

/* cp_reserve keeps a call and its sub-records in one batch (unless they
 * could never fit), so that, with one stream, a flush or a dying rank
 * never splits them; one more record's room is for the run of polls the
 * call closes. */
static inline void cp_reserve(cp_thr *t, int n) {
	if (t->n + n + 1 > CP_TBUF && n < CP_TBUF)
		cp_flush(t);
}

/* cp_run_close stages t's open run, if any, into into's staging buffer
 * (the caller holds both). */
static void cp_run_close(cp_thr *t, cp_thr *into) {
	if (!t->run.open)
		return;
	t->run.open = 0;
	if (into->n == CP_TBUF)
		cp_flush(into);
	into->buf[into->n] = t->run.rec;
	if (cp_calldepth && into->paths)
		into->paths[into->n] = t->run.path;
	into->n++;
}

/* cp_runs_close stages every thread's open run into t's buffer (the
 * caller has stopped the world, or there is one stream). */
static void cp_runs_close(cp_thr *t) {
	cp_pend_take(t); /* the deferred call before them all */
	for (int i = 0; i < cp_nthrs; i++)
		cp_run_close(cp_thrs[i], t);
}

/* cp_walk reads the call path of the call being recorded: the return
 * addresses of the frames above the MPI entry point's caller. Each step
 * from a frame to its caller's follows the rule of the frame's code
 * (unwind.h: its call frame information, looked up once per return
 * address), so that the path goes through code built without frame
 * pointers as through code built with them. The walk never reads outside
 * the thread's stack, goes up it, and ends at the first return address
 * outside the modules' executable segments (or in a library loaded since
 * they were last listed), or without a rule, rather than log a caller
 * that is none. Each address it walks to has its module put in the log;
 * a path taken from a kept walk had them put there by that walk. */
static inline void cp_walk(cp_thr *t, cp_path *out) {
	uintptr_t fp = (uintptr_t)cp_fp, lo = t->stk_lo, hi = t->stk_hi;
	out->n = 0;
	if (fp < lo || fp + 16 > hi || (fp & 7))
		return;
	/* The entry point keeps a frame pointer: its caller's rbp and the
	 * return address into its caller are at fp, the caller's stack
	 * pointer after the call just above them. */
	uintptr_t rbp = ((const uintptr_t *)fp)[0], pc = ((const uintptr_t *)fp)[1], sp = fp + 16;
	cp_walked *w = &t->walked[(pc * 0x9e3779b97f4a7c15ull) >> 61];
	if (fp == w->fp) {
		int same = 1;
		for (int i = 0; i < w->slots; i++)
			same &= *(const uintptr_t *)w->slot[i] == w->val[i];
		if (same) {
			*out = w->path;
			return;
		}
	}
	int ns = 0;
	w->slot[ns] = fp;
	w->val[ns++] = rbp;
	w->slot[ns] = fp + 8;
	w->val[ns++] = pc;
	cp_frame_rule r;
	if (!cp_rule_find(pc, &r))
		cp_rule_miss(pc, &r); /* the call site: code */
	while (out->n < cp_calldepth && r.kind != CP_RULE_NONE) {
		uintptr_t cfa = (r.kind == CP_RULE_SP ? sp : rbp) + (uintptr_t)(intptr_t)r.cfa_off;
		uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)r.ra_off, bp_at = cfa + (uintptr_t)(intptr_t)r.rbp_off;
		if (cfa <= sp || cfa > hi || ra_at < sp || ra_at + 8 > hi || (ra_at & 7))
			break;
		if (r.rbp_saved) {
			if (bp_at < sp || bp_at + 8 > hi || (bp_at & 7))
				break;
			rbp = *(const uintptr_t *)bp_at;
			w->slot[ns] = bp_at;
			w->val[ns++] = rbp;
		}
		pc = *(const uintptr_t *)ra_at;
		w->slot[ns] = ra_at;
		w->val[ns++] = pc;
		sp = cfa;
		/* An address in the table was code when entered (a live frame's
		 * return address stays mapped); a new one is checked first. */
		if (!cp_rule_find(pc, &r)) {
			if (!cp_code_seen(pc))
				break;
			cp_rule_miss(pc, &r);
		}
		cp_module_seen(pc); /* its module in the log: a path kept here has them all */
		out->pc[out->n++] = pc;
	}
	w->fp = fp;
	w->slots = ns;
	w->path = *out;
}

/* cp_path_of reads the call path of the call being recorded into *p (its
 * modules in the log: cp_walk). 0: no memory for the thread's paths, so
 * no more call paths. */
static inline int cp_path_of(cp_thr *t, cp_path *p) {
	if (!t->paths && !(t->paths = calloc(CP_TBUF, sizeof *t->paths))) {
		cp_calldepth = 0;
		return 0;
	}
	cp_walk(t, p);
	return 1;
}

/* cp_call_path records the call path of the call just staged. */
static __attribute__((noinline)) void cp_call_path(cp_thr *t) {
	cp_path p;
	if (cp_path_of(t, &p))
		t->paths[t->n - 1] = p;
}

static inline cp_rec *cp_call(cp_thr *t, int op, int64_t t0, int64_t t1, uint64_t cs, uint32_t comm, int rc) {
	cp_pend_take(t);
	cp_run_close(t, t);
	t->cur = t->n;
	cp_rec *r = cp_put(t);
	cp_module_seen(cs);
	r->op = (uint8_t)op;
	r->start = t0;
	r->end = t1;
	r->callsite = cs;
	r->comm = comm;
	r->peer = CP_PEER_NONE;
	r->root = CP_PEER_NONE;
	if (rc != MPI_SUCCESS)
		r->flags |= CP_F_ERROR;
	t->last_end = t1;
	if (__builtin_expect(cp_calldepth, 0))
		cp_call_path(t);
	return r;
}

/* A call without sub-records, on the calls' path, builds its record in a
 * variable of its own (cp_call1) rather than in the staging buffer, and
 * cp_end1 codes it from there, without a trip through memory, when it is
 * the only record to code (one stream, nothing staged, no call path);
 * otherwise it is staged, as cp_call would have. */
static inline __attribute__((always_inline)) void cp_call1(cp_thr *t, cp_rec *r, int op, int64_t t0, int64_t t1,
							    uint64_t cs, uint32_t comm, int rc) {
	cp_pend_take(t);
	cp_run_close(t, t);
	cp_module_seen(cs);
	*r = (cp_rec){.start = t0, .end = t1, .callsite = cs, .op = (uint8_t)op,
		      .flags = rc != MPI_SUCCESS ? CP_F_ERROR : 0, .thread = (uint16_t)t->tid, .comm = comm,
		      .peer = CP_PEER_NONE, .root = CP_PEER_NONE};
	t->last_end = t1;
}

/* cp_rec_put copies r into *d field by field: a struct copy would read r
 * with wide loads over the narrow stores that just wrote it, and wait for
 * them (no store forwarding); r itself, never passed on, stays in
 * registers. */
static inline __attribute__((always_inline)) void cp_rec_put(cp_rec *d, const cp_rec *r) {
	d->start = r->start;
	d->end = r->end;
	d->callsite = r->callsite;
	d->bytes = r->bytes;
	d->op = r->op;
	d->flags = r->flags;
	d->thread = r->thread;
	d->comm = r->comm;
	d->peer = r->peer;
	d->tag = r->tag;
	d->root = r->root;
	d->count = r->count;
	d->seq = r->seq;
	d->req = r->req;
}

/* cp_staged1 commits the record just staged: the general way. */
static __attribute__((noinline)) void cp_staged1(cp_thr *t) {
	if (__builtin_expect(cp_calldepth, 0))
		cp_call_path(t);
	cp_end(t);
}

static __attribute__((noinline)) void cp_flush_full(cp_thr *t) { cp_flush(t); }

/* cp_end1_path is cp_end1's ways for one thread, with call paths: r is
 * the only record to code, or follows one deferred call of one record. */
static __attribute__((noinline)) void cp_end1_path(cp_thr *t, const cp_rec *r) {
	cp_path p;
	if (!cp_path_of(t, &p))
		p.n = 0;
	int alone = t->n == 0;
	if (cp_defer_ok(r, 1) && !cp_mods_stale) {
		/* deferred (see cp_pend): staged with its path, coded with the
		 * next call; the one deferred before, if any, coded alone */
		if (!alone)
			cp_flush_full(t);
		cp_rec_put(&t->buf[0], r);
		if (t->paths)
			t->paths[0] = p;
		t->n = t->npend = t->cur = 1;
		cp_pend = t;
	} else if (alone) {
		cp_enc_batch_in(r, &p, 1);
	} else {
		cp_rec a;
		cp_path pa = t->paths ? t->paths[0] : (cp_path){.n = 0};
		memcpy(&a, &t->buf[0], sizeof a);
		cp_enc_batch_pair_paths(&a, &pa, r, &p);
		t->n = t->cur = 0;
		cp_pend = NULL;
	}
	if (__builtin_expect(cp_mods_stale, 0) && t->n == 0)
		cp_mods_flush();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_held = 0;
}

/* cp_end1_mt codes and commits r, the only record, with threads. */
static __attribute__((noinline)) void cp_end1_mt(cp_thr *t, const cp_rec *r) {
	int due = cp_enc_put(t->enc, r, NULL, 1, r->end);
	if (__builtin_expect(cp_mods_stale, 0))
		cp_mods_flush();
	cp_tunlock(t);
	if (__builtin_expect(due, 0))
		cp_checkpoint(t);
}

static inline __attribute__((always_inline)) void cp_end1(cp_thr *t, cp_rec *r) {
	if (__builtin_expect(cp_mt, 0)) {
		if (t->n == 0 && !cp_calldepth) {
			cp_rec m;
			cp_rec_put(&m, r);
			cp_end1_mt(t, &m);
			return;
		}
	} else if (__builtin_expect(t->n == 0 && !cp_calldepth, 1)) {
		/* nothing staged */
		if (cp_defer_ok(r, 1) && !cp_mods_stale) {
			/* deferred (see cp_pend): staged, coded with the next call */
			cp_rec_put(&t->buf[0], r);
			t->n = t->npend = t->cur = 1;
			cp_pend = t;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
		} else {
			cp_enc_batch_in(r, NULL, 1);
			if (__builtin_expect(cp_mods_stale, 0))
				cp_mods_flush();
		}
		cp_held = 0;
		return;
	} else if (__builtin_expect(cp_pend == t && t->n == 1 && t->npend == 1 && !cp_calldepth, 1)) {
		/* nothing staged but a deferred call of one record */
		if (cp_defer_ok(r, 1) && !cp_mods_stale) {
			/* deferred in turn: the one before is coded alone */
			cp_flush_full(t);
			cp_rec_put(&t->buf[0], r);
			t->n = t->npend = t->cur = 1;
			cp_pend = t;
		} else {
			/* the deferred record, then r, in one batch, both from
			 * registers (a copy of the deferred one: the coder's
			 * stores into the log cannot change it) */
			cp_rec a;
			memcpy(&a, &t->buf[0], sizeof a);
			cp_enc_batch_pair(&a, r);
			t->n = t->cur = 0;
			cp_pend = NULL;
			if (__builtin_expect(cp_mods_stale, 0))
				cp_mods_flush();
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cp_held = 0;
		return;
	} else if (t->n == 0 || (cp_pend == t && t->n == 1 && t->npend == 1)) {
		cp_end1_path(t, r); /* with call paths */
		return;
	}
	if (t->n == CP_TBUF)
		cp_flush_full(t);
	t->cur = t->n;
	cp_rec_put(&t->buf[t->n++], r);
	cp_staged1(t);
}

static inline cp_rec *cp_sub(cp_thr *t, int op) {
	cp_rec *r = cp_put(t);
	r->op = (uint8_t)op;
	r->peer = CP_PEER_NONE;
	r->root = CP_PEER_NONE;
	return r;
}

/* ---- communicators ---- */

static cp_comm cp_cworld, cp_cself;

/* A communicator's record is shared by the table (while its handle is
 * live) and by every pending request on it: MPI_Comm_free only marks a
 * communicator for freeing once its pending operations complete, and their
 * completions still need its rank map. The last reference frees it. */
static inline int cp_comm_predef(const cp_comm *c) { return c == &cp_cworld || c == &cp_cself; }

static void cp_comm_ref(cp_comm *c) {
	if (c && !cp_comm_predef(c))
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

static void cp_comm_unref(cp_comm *c) {
	if (!c || cp_comm_predef(c) || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(c->world);
	free(c->rworld);
	free(c->nbr);
	free(c);
}

/* The table: open addressing by handle. Threads look communicators up
 * without a lock: a writer (under cp_comm_mu) makes cp_cseq odd while it
 * changes the table, and a reader that saw it change (or odd) looks again.
 * A table outgrown is kept, not freed: a reader may still be in it. */
typedef struct cp_centry {
	MPI_Comm h;
	cp_comm *c; /* NULL: empty */
} cp_centry;
typedef struct cp_ctable {
	int cap;
	cp_centry e[];
} cp_ctable;
static cp_ctable *volatile cp_ctabp;
static cp_centry *cp_ctab; /* cp_ctabp->e, for the writer */
static int cp_ccap, cp_clen;
static volatile unsigned cp_cseq;
static pthread_mutex_t cp_comm_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint cp_next_comm = 2;
static atomic_int cp_created; /* this rank's constructor counter, for names */

/* Handles are pointers in Open MPI and ints in MPICH: hashed as integers. */
#define cp_hash(h, cap) cp_hashu((uintptr_t)(h), cap)
static inline size_t cp_hashu(uintptr_t x, int cap) {
	x ^= x >> 17;
	x *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(x >> 20) & (size_t)(cap - 1);
}

static void cp_comm_lock(void) {
	if (cp_mt)
		pthread_mutex_lock(&cp_comm_mu);
	__atomic_add_fetch(&cp_cseq, 1, __ATOMIC_ACQ_REL);
}

static void cp_comm_unlock(void) {
	__atomic_add_fetch(&cp_cseq, 1, __ATOMIC_RELEASE);
	if (cp_mt)
		pthread_mutex_unlock(&cp_comm_mu);
}

/* cp_ctab_put1 puts c into the table (cp_comm_lock held). */
static void cp_ctab_put1(cp_comm *c) {
	if ((cp_clen + 1) * 2 > cp_ccap) {
		int ncap = cp_ccap ? cp_ccap * 2 : 64;
		cp_ctable *tb = calloc(1, sizeof *tb + (size_t)ncap * sizeof(cp_centry));
		tb->cap = ncap;
		cp_centry *nt = tb->e;
		for (int i = 0; i < cp_ccap; i++)
			if (cp_ctab[i].c) {
				size_t j = cp_hash(cp_ctab[i].h, ncap);
				while (nt[j].c)
					j = (j + 1) & (size_t)(ncap - 1);
				nt[j] = cp_ctab[i];
			}
		__atomic_store_n(&cp_ctabp, tb, __ATOMIC_RELEASE); /* the old one stays: see above */
		cp_ctab = nt;
		cp_ccap = ncap;
	}
	size_t j = cp_hash(c->h, cp_ccap);
	while (cp_ctab[j].c && cp_ctab[j].h != c->h)
		j = (j + 1) & (size_t)(cp_ccap - 1);
	if (!cp_ctab[j].c)
		cp_clen++;
	else if (cp_ctab[j].c != c) /* the handle was freed by a call not wrapped and reused */
		cp_comm_unref(cp_ctab[j].c);
	cp_ctab[j].h = c->h;
	cp_ctab[j].c = c;
}

static void cp_ctab_put(cp_comm *c) {
	cp_comm_lock();
	cp_ctab_put1(c);
	cp_comm_unlock();
}

/* cp_ctab_unlink takes c out of the table (its handle is no longer valid)
 * and drops the table's reference. */
static void cp_ctab_unlink(cp_comm *c) {
	if (!c || cp_comm_predef(c))
		return;
	cp_comm_lock();
	size_t j = 0;
	int found = 0;
	if (cp_ccap) {
		j = cp_hash(c->h, cp_ccap);
		while (cp_ctab[j].c && cp_ctab[j].c != c)
			j = (j + 1) & (size_t)(cp_ccap - 1);
		found = cp_ctab[j].c != NULL;
	}
	if (found) {
		cp_ctab[j].c = NULL;
		cp_clen--;
		/* re-insert the rest of the cluster so lookups still find them */
		for (size_t k = (j + 1) & (size_t)(cp_ccap - 1); cp_ctab[k].c; k = (k + 1) & (size_t)(cp_ccap - 1)) {
			cp_comm *o = cp_ctab[k].c;
			cp_ctab[k].c = NULL;
			cp_clen--;
			cp_ctab_put1(o);
		}
	}
	cp_comm_unlock();
	if (found)
		cp_comm_unref(c);
}

/* cp_ctab_find looks h up. */
static cp_comm *cp_ctab_find(MPI_Comm h) {
	for (;;) {
		unsigned s = __atomic_load_n(&cp_cseq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			_mm_pause();
			continue;
		}
		cp_ctable *tb = __atomic_load_n(&cp_ctabp, __ATOMIC_ACQUIRE);
		cp_comm *found = NULL;
		if (tb) {
			int cap = tb->cap;
			cp_centry *tab = tb->e;
			size_t j = cp_hash(h, cap);
			for (int k = 0; k < cap; k++, j = (j + 1) & (size_t)(cap - 1)) {
				cp_comm *c = __atomic_load_n(&tab[j].c, __ATOMIC_RELAXED);
				if (!c)
					break;
				if (__atomic_load_n(&tab[j].h, __ATOMIC_RELAXED) == h) {
					found = c;
					break;
				}
			}
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&cp_cseq, __ATOMIC_RELAXED) == s)
			return found;
	}
}

static int32_t *cp_group_world(MPI_Group g, int n) {
	MPI_Group wg;
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		in[i] = i;
	PMPI_Group_translate_ranks(g, n, in, wg, out);
	PMPI_Group_free(&wg);
	for (int i = 0; i < n; i++)
		if (out[i] == MPI_UNDEFINED)
			out[i] = CP_PEER_UNKNOWN;
	free(in);
	return (int32_t *)out;
}

/* cp_comm_topology keeps the rank's neighbours in c's topology, as world
 * ranks in the order neighbourhood collectives use them (MPI 4.0 §8.6):
 * a cart's are, for each dimension, the neighbour at -1 then at +1 (in and
 * out alike, MPI_PROC_NULL where a non-periodic dimension ends); a graph's
 * MPI_Graph_neighbors (in and out alike); a dist graph's
 * MPI_Dist_graph_neighbors. All local queries. */
static void cp_comm_topology(cp_comm *c) {
	int topo = MPI_UNDEFINED, me = 0;
	if (PMPI_Topo_test(c->h, &topo) != MPI_SUCCESS || topo == MPI_UNDEFINED)
		return;
	PMPI_Comm_rank(c->h, &me);
	int nin = 0, nout = 0, weighted = 0;
	int *loc = NULL; /* local ranks, sources then destinations */
	if (topo == MPI_CART) {
		int nd = 0;
		PMPI_Cartdim_get(c->h, &nd);
		nin = nout = 2 * nd;
		loc = malloc(sizeof(int) * (size_t)(2 * nin + 1));
		for (int d = 0; d < nd; d++)
			PMPI_Cart_shift(c->h, d, 1, &loc[2 * d], &loc[2 * d + 1]);
		memcpy(loc + nin, loc, sizeof(int) * (size_t)nin);
	} else if (topo == MPI_GRAPH) {
		PMPI_Graph_neighbors_count(c->h, me, &nin);
		nout = nin;
		loc = malloc(sizeof(int) * (size_t)(2 * nin + 1));
		PMPI_Graph_neighbors(c->h, me, nin, loc);
		memcpy(loc + nin, loc, sizeof(int) * (size_t)nin);
	} else if (topo == MPI_DIST_GRAPH) {
		PMPI_Dist_graph_neighbors_count(c->h, &nin, &nout, &weighted);
		loc = malloc(sizeof(int) * (size_t)(nin + nout + 1));
		int *w = malloc(sizeof(int) * (size_t)(nin + nout + 1));
		PMPI_Dist_graph_neighbors(c->h, nin, loc, weighted ? w : MPI_UNWEIGHTED, nout, loc + nin,
					  weighted ? w + nin : MPI_UNWEIGHTED);
		free(w);
	} else {
		return;
	}
	c->nbr = malloc(sizeof(int32_t) * (size_t)(nin + nout + 1));
	for (int i = 0; i < nin + nout; i++)
		c->nbr[i] = loc[i] == MPI_PROC_NULL ? CP_PEER_PROCNULL
			    : (loc[i] >= 0 && loc[i] < c->size) ? c->world[loc[i]] : CP_PEER_UNKNOWN;
	free(loc);
	c->nsrc = nin;
	c->ndst = nout;
}

/* cp_comm_register adds a communicator to the table with its rank maps. */
static cp_comm *cp_comm_register(MPI_Comm h) {
	cp_comm *c = calloc(1, sizeof *c);
	c->h = h;
	c->id = atomic_fetch_add(&cp_next_comm, 1);
	c->refs = 1; /* the table's */
	MPI_Group g;
	PMPI_Comm_size(h, &c->size);
	PMPI_Comm_group(h, &g);
	c->world = cp_group_world(g, c->size);
	PMPI_Group_free(&g);
	int inter = 0;
	PMPI_Comm_test_inter(h, &inter);
	if (inter) {
		PMPI_Comm_remote_size(h, &c->rsize);
		PMPI_Comm_remote_group(h, &g);
		c->rworld = cp_group_world(g, c->rsize);
		PMPI_Group_free(&g);
	} else {
		cp_comm_topology(c);
	}
	cp_ctab_put(c);
	return c;
}

cp_comm *cp_comm_get(MPI_Comm h) {
	if (h == MPI_COMM_WORLD)
		return &cp_cworld;
	if (h == MPI_COMM_SELF)
		return &cp_cself;
	if (h == MPI_COMM_NULL)
		return NULL;
	cp_comm *c = cp_ctab_find(h);
	if (c)
		return c;
	/* A communicator made by a call the logger does not wrap: known by its
	 * ranks but nameless in the log. */
	return cp_comm_register(h);
}

static inline uint32_t cp_comm_id(cp_comm *c) { return c ? c->id : 0xFFFFFFFFu; }

static inline __attribute__((always_inline)) int32_t cp_world_rank_in(cp_comm *c, int r, int remote) {
	if (__builtin_expect(c == &cp_cworld && r >= 0, 1))
		return r;
	if (r == MPI_PROC_NULL)
		return CP_PEER_PROCNULL;
	if (r == MPI_ANY_SOURCE)
		return CP_PEER_ANY;
	if (!c || r < 0)
		return CP_PEER_UNKNOWN;
	if (c == &cp_cworld)
		return r;
	if (c->rworld && remote) { /* p2p peers of an intercommunicator are remote ranks */
		return r < c->rsize ? c->rworld[r] : CP_PEER_UNKNOWN;
	}
	return r < c->size ? c->world[r] : CP_PEER_UNKNOWN;
}

int32_t cp_world_rank(cp_comm *c, int r, int remote) { return cp_world_rank_in(c, r, remote); }

/* Root argument of a collective: intercommunicators use MPI_ROOT and
 * MPI_PROC_NULL in the root group. */
static int32_t cp_root_rank(cp_comm *c, int root) {
	if (root == MPI_ROOT)
		return (int32_t)cp_world_rank_self;
	if (root == MPI_PROC_NULL)
		return CP_PEER_PROCNULL;
	if (c && c->rworld)
		return root < c->rsize ? c->rworld[root] : CP_PEER_UNKNOWN;
	if (c == &cp_cworld)
		return root;
	return (c && root >= 0 && root < c->size) ? c->world[root] : CP_PEER_UNKNOWN;
}

/* The out-neighbours of comm's topology (NULL, 0 without one). */
static const int32_t *cp_nbr_dests(MPI_Comm h, int *n) {
	cp_comm *c = cp_comm_get(h);
	*n = c ? c->ndst : 0;
	return c ? c->nbr + c->nsrc : NULL;
}

uint64_t cp_nbr_bytes(MPI_Comm h, int count, MPI_Datatype t) {
	int n;
	const int32_t *d = cp_nbr_dests(h, &n);
	uint64_t real = 0;
	for (int i = 0; i < n; i++)
		real += d[i] != CP_PEER_PROCNULL;
	return real * cp_bytes(count, t);
}

uint64_t cp_nbr_bytes_v(MPI_Comm h, const int *counts, MPI_Datatype t) {
	int n;
	const int32_t *d = cp_nbr_dests(h, &n);
	uint64_t b = 0;
	for (int i = 0; i < n && counts; i++)
		if (d[i] != CP_PEER_PROCNULL)
			b += cp_bytes(counts[i], t);
	return b;
}

uint64_t cp_nbr_bytes_w(MPI_Comm h, const int *counts, const MPI_Datatype *t) {
	int n;
	const int32_t *d = cp_nbr_dests(h, &n);
	uint64_t b = 0;
	for (int i = 0; i < n && counts && t; i++)
		if (d[i] != CP_PEER_PROCNULL)
			b += cp_bytes(counts[i], t[i]);
	return b;
}

int cp_nbr_deg(MPI_Comm h, int out) {
	cp_comm *c = cp_comm_get(h);
	return c ? (out ? c->ndst : c->nsrc) : 0;
}

int cp_comm_npeers(MPI_Comm h) {
	int n = 0, inter = 0;
	PMPI_Comm_test_inter(h, &inter);
	if (inter)
		PMPI_Comm_remote_size(h, &n);
	else
		PMPI_Comm_size(h, &n);
	return n;
}

/* An in-place MPI_Allgatherv's contribution: its own block of the
 * receive buffer, recvcounts[its rank] elements (MPI_IN_PLACE is not
 * allowed on an intercommunicator). */
uint64_t cp_own_bytes(MPI_Comm h, const int *counts, MPI_Datatype t) {
	int r = -1;
	if (!counts || PMPI_Comm_rank(h, &r) != MPI_SUCCESS || r < 0)
		return 0;
	return cp_bytes(counts[r], t);
}

/* ---- sizes ---- */

/* Datatype sizes. The sizes of predefined datatypes never change, so they
 * are cached; a derived datatype's handle may be freed and reused for
 * another type, so it is asked every time. Open MPI's predefined datatypes
 * are static objects (MPI_INT is &ompi_mpi_int): inside libmpi, or inside
 * the executable when its copy relocations moved them there; derived ones
 * are on the heap. A handle inside libmpi's or the executable's segments is
 * predefined. A cache entry is one word, handle << 16 | size, so that
 * threads read it whole without a lock. */
static uintptr_t cp_mpi_lo, cp_mpi_hi, cp_exe_lo, cp_exe_hi;
uint64_t cp_tcache[CP_TCACHE]; /* cpathlog.h reads it (cp_bytes) */

static int cp_mpi_range_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	int *first = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	int exe = *first;
	*first = 0;
	if (!exe && !strstr(name, "libmpi.so"))
		return 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (hi >= ((uintptr_t)1 << 48))
		return 0; /* cannot pack such a handle */
	if (exe) {
		cp_exe_lo = lo;
		cp_exe_hi = hi;
	} else {
		cp_mpi_lo = lo;
		cp_mpi_hi = hi;
	}
	return 0;
}

static void cp_types_setup(void) {
#ifdef OPEN_MPI
	int first = 1;
	dl_iterate_phdr(cp_mpi_range_cb, &first);
#endif
}

/* MPICH's handles are ints whose top two bits say the kind: 01 for the
 * built-in (predefined) objects. */
static inline int cp_type_predefined(uintptr_t a) {
#ifdef MPICH
	return (a >> 30) == 1;
#else
	return (a >= cp_mpi_lo && a < cp_mpi_hi) || (a >= cp_exe_lo && a < cp_exe_hi);
#endif
}

static inline int cp_type_size(MPI_Datatype t) {
	uintptr_t a = (uintptr_t)t;
	int sz = 0;
	if (cp_type_predefined(a)) {
		size_t j = CP_TCACHE_AT(a);
		uint64_t e = __atomic_load_n(&cp_tcache[j], __ATOMIC_RELAXED);
		if (e >> 16 == (uint64_t)a)
			return (int)(e & 0xFFFF);
		PMPI_Type_size(t, &sz);
		if (sz >= 0 && sz < 0x10000)
			__atomic_store_n(&cp_tcache[j], (uint64_t)a << 16 | (uint64_t)sz, __ATOMIC_RELAXED);
		return sz;
	}
	PMPI_Type_size(t, &sz);
	return sz;
}

uint64_t cp_bytes_slow(int count, MPI_Datatype t) {
	if (count <= 0 || t == MPI_DATATYPE_NULL)
		return 0;
	return (uint64_t)count * (uint64_t)cp_type_size(t);
}

uint64_t cp_bytes_v(const int *counts, int n, MPI_Datatype t) {
	uint64_t s = 0;
	if (!counts)
		return 0;
	for (int i = 0; i < n; i++)
		s += counts[i] > 0 ? (uint64_t)counts[i] : 0;
	int sz = 0;
	if (t != MPI_DATATYPE_NULL)
		sz = cp_type_size(t);
	return s * (uint64_t)sz;
}

uint64_t cp_bytes_w(const int *counts, int n, const MPI_Datatype *t) {
	uint64_t s = 0;
	if (!counts || !t)
		return 0;
	for (int i = 0; i < n; i++)
		s += cp_bytes(counts[i], t[i]);
	return s;
}

/* The bytes a status says were received, and whether it was cancelled:
 * Open MPI keeps both in the public status struct, so the wrappers read
 * them there instead of calling PMPI_Get_count and PMPI_Test_cancelled.
 * So does MPICH, coded (MPIR_STATUS_GET_COUNT, _GET_CANCEL_BIT: the count
 * in count_lo and the bits of count_hi_and_cancelled above its lowest,
 * the cancelled bit); cp_status_check (at MPI_Init) makes sure that this
 * MPICH codes them so, else the PMPI calls are made. */
#if !defined(OPEN_MPI) && defined(MPICH)
static int cp_status_direct;

static inline uint64_t cp_status_count(const MPI_Status *st) {
	return (uint64_t)(unsigned)st->count_lo | (uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32;
}

static void cp_status_check(void) {
	MPI_Status st;
	memset(&st, 0, sizeof st);
	int n = 0, canc = 0, ok = 1;
	for (int i = 0; i < 2 && ok; i++) {
		int want = i ? 7 : 123457;
		if (PMPI_Status_set_elements(&st, MPI_BYTE, want) != MPI_SUCCESS ||
		    PMPI_Status_set_cancelled(&st, !i) != MPI_SUCCESS || PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS ||
		    PMPI_Test_cancelled(&st, &canc) != MPI_SUCCESS)
			ok = 0;
		else
			ok = n == want && cp_status_count(&st) == (uint64_t)want && !canc == !!i &&
			     (st.count_hi_and_cancelled & 1) == !i;
	}
	cp_status_direct = ok;
}
#else
static void cp_status_check(void) {}
#endif

static uint64_t cp_status_bytes(const MPI_Status *st) {
#ifdef OPEN_MPI
	return (uint64_t)st->_ucount;
#endif
#if !defined(OPEN_MPI) && defined(MPICH)
	if (__builtin_expect(cp_status_direct, 1)) {
		/* as PMPI_Get_count's MPI_UNDEFINED beyond an int: 0 */
		uint64_t c = cp_status_count(st);
		return c > INT32_MAX ? 0 : c;
	}
#endif
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return (uint64_t)n;
}

MPI_Status *cp_statuses(MPI_Status *user, int n, MPI_Status *small, int nsmall) {
	if (user != MPI_STATUSES_IGNORE)
		return user;
	if (n <= nsmall)
		return small;
	return malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
}

void cp_statuses_free(MPI_Status *st, MPI_Status *user, MPI_Status *small) {
	if (st != user && st != small)
		free(st);
}

/* ---- requests ---- */

/* Each thread's table holds the requests it created, keyed by handle; a
 * Wait or Test looks in its own thread's table first, then in the others'.
 * A handle may stand for several live requests: Open MPI returns one
 * shared pre-completed request for every Isend that finished at once (a
 * burst of thousands of small Isends, then a Waitall). So a handle's
 * bucket holds a list of its requests, oldest (smallest id: a thread's
 * ids grow) first, and a Wait's claims walk it from where its previous
 * claim of the same call stopped: inserting, claiming and deleting the
 * oldest are O(1) however many requests share a handle (one probe
 * cluster of them made a Waitall of 6000 such requests take seconds). */
static atomic_uint cp_next_req;

/* A node of a thread's pool: a request, and the next of its handle's. */
typedef struct cp_rnode {
	cp_req r;
	int32_t next; /* index + 1, 0: the last */
} cp_rnode;

/* A handle's bucket: its requests' list, and the claim that walked it
 * last with the node it stopped at (the nodes before are all claimed by
 * that claim: a call claims in list order, and deletes none meanwhile). */
typedef struct cp_rbucket {
	MPI_Request h;
	int32_t head, tail; /* node index + 1, 0: none (the handle has no live request) */
	int32_t cnode;
	int32_t used; /* 0: an empty slot */
	uint64_t cclaim;
} cp_rbucket;

/* cp_req_id returns a new request id: from a block of 64 taken at a time,
 * so that threads do not share a counter on their calls' path. */
static uint32_t cp_req_id(cp_thr *t) {
	if (t->req_next == t->req_end) {
		t->req_next = atomic_fetch_add(&cp_next_req, 64) + 1;
		t->req_end = t->req_next + 64;
	}
	return t->req_next++;
}

/* cp_rb_find returns h's bucket in t's table, or NULL. */
static cp_rbucket *cp_rb_find(cp_thr *t, MPI_Request h) {
	if (!t->rcap)
		return NULL;
	for (size_t j = cp_hash(h, t->rcap); t->rtab[j].used; j = (j + 1) & (size_t)(t->rcap - 1))
		if (t->rtab[j].h == h)
			return &t->rtab[j];
	return NULL;
}

/* cp_rb_place puts bucket b into table tab of cap slots (h not there). */
static void cp_rb_place(cp_rbucket *tab, int cap, const cp_rbucket *b) {
	size_t j = cp_hash(b->h, cap);
	while (tab[j].used)
		j = (j + 1) & (size_t)(cap - 1);
	tab[j] = *b;
	tab[j].used = 1;
}

/* cp_rtab_grow makes room for one more handle: the buckets of handles
 * with no live request are dropped (they stay while the handle may come
 * back: MPI reuses its request objects, and a bucket taken out and put
 * back on every request cost a few ns a call), and the table doubles if
 * the rest would fill it over a quarter. */
static int cp_rtab_grow(cp_thr *t) {
	int live = 0;
	for (int i = 0; i < t->rcap; i++)
		live += t->rtab[i].used && t->rtab[i].head;
	int ncap = t->rcap ? t->rcap : 256;
	while ((live + 1) * 4 > ncap)
		ncap *= 2;
	cp_rbucket *nt = calloc((size_t)ncap, sizeof *nt);
	if (!nt)
		return 0;
	for (int i = 0; i < t->rcap; i++)
		if (t->rtab[i].used && t->rtab[i].head)
			cp_rb_place(nt, ncap, &t->rtab[i]);
	free(t->rtab);
	t->rtab = nt;
	t->rcap = ncap;
	t->rlen = live;
	return 1;
}

/* cp_rnode_new returns the index + 1 of a free node of t's pool, 0 if
 * memory ran out. */
static int32_t cp_rnode_new(cp_thr *t) {
	if (!t->rfree) {
		int32_t n = t->nnodes ? t->nnodes * 2 : 256;
		cp_rnode *p = realloc(t->rnodes, sizeof *p * (size_t)n);
		if (!p)
			return 0;
		t->rnodes = p;
		for (int32_t i = n - 1; i >= t->nnodes; i--) {
			p[i].next = t->rfree;
			t->rfree = i + 1;
		}
		t->nnodes = n;
	}
	int32_t k = t->rfree;
	t->rfree = t->rnodes[k - 1].next;
	return k;
}

/* cp_req_put adds a new request to t's table (t held), which keeps its
 * communicator's record. Out of memory, the request is not tracked (its
 * completion is then logged as unknown). */
static void cp_req_put(cp_thr *t, const cp_req *e) {
	cp_rbucket *b = cp_rb_find(t, e->h);
	if (!b && (t->rlen + 1) * 2 > t->rcap && !cp_rtab_grow(t))
		return;
	int32_t k = cp_rnode_new(t); /* the pool, not the table: b stays */
	if (!k)
		return;
	cp_comm_ref(e->c);
	cp_rnode *n = &t->rnodes[k - 1];
	n->r = *e;
	n->r.owner = t->idx;
	n->next = 0;
	if (b) {
		if (b->tail)
			t->rnodes[b->tail - 1].next = k;
		else
			b->head = k;
		b->tail = k;
	} else {
		cp_rbucket nb = {.h = e->h, .head = k, .tail = k};
		cp_rb_place(t->rtab, t->rcap, &nb);
		t->rlen++;
	}
}

/* cp_req_claim copies into *out the oldest entry of o's table (o held) for
 * h not yet claimed by call claim, and claims it, so that a handle given
 * twice in one Waitall maps to two different requests. */
static int cp_req_claim(cp_thr *o, MPI_Request h, uint64_t claim, cp_req *out) {
	cp_rbucket *b = cp_rb_find(o, h);
	if (!b)
		return 0;
	/* The oldest not yet claimed by this call: the head, or the node
	 * after the one its last claim took (see cp_rbucket). */
	int32_t k = b->cclaim == claim ? o->rnodes[b->cnode - 1].next : b->head;
	if (!k)
		return 0;
	cp_rnode *n = &o->rnodes[k - 1];
	n->r.claim = claim;
	b->cclaim = claim;
	b->cnode = k;
	*out = n->r;
	return 1;
}

/* cp_req_del deletes request id of handle h from o's table (o held). */
static void cp_req_del(cp_thr *o, MPI_Request h, uint32_t id) {
	cp_rbucket *b = cp_rb_find(o, h);
	if (!b)
		return;
	int32_t prev = 0, k = b->head;
	while (k && o->rnodes[k - 1].r.id != id) {
		prev = k;
		k = o->rnodes[k - 1].next;
	}
	if (!k)
		return;
	cp_rnode *n = &o->rnodes[k - 1];
	cp_comm *c = n->r.c;
	if (prev)
		o->rnodes[prev - 1].next = n->next;
	else
		b->head = n->next;
	if (b->tail == k)
		b->tail = prev;
	b->cclaim = 0; /* the walk's place may be gone */
	n->next = o->rfree;
	o->rfree = k;
	cp_comm_unref(c);
}

/* cp_reqs_drop deletes the requests of p that a call completed or freed
 * (idx[k] their positions, NULL: the first n; persistent ones too with
 * all): those of other threads' tables first, each under its owner's lock,
 * before t locks its own; then, with locked, t's own. */
static inline void cp_reqs_drop(cp_thr *t, cp_pre *p, int n, const int *idx, int all, int locked) {
	for (int j = 0; j < n; j++) {
		int i = idx ? idx[j] : j;
		if (i < 0 || i >= p->n || !p->ents[i].id || (p->ents[i].persistent && !all))
			continue;
		cp_req *e = &p->ents[i];
		int mine = t && e->owner == t->idx;
		if (mine != locked || e->owner < 0 || e->owner >= cp_nthrs)
			continue;
		cp_thr *o = cp_thrs[e->owner];
		if (!locked)
			cp_tlock(o);
		cp_req_del(o, e->h, e->id);
		if (!locked)
			cp_tunlock(o);
	}
}

void cp_pre_reqs(cp_pre *p, int n, const MPI_Request *reqs) {
	p->n = n < 0 ? 0 : n;
	p->ents = p->n <= 8 ? p->small : malloc(sizeof(cp_req) * (size_t)p->n);
	int missing = 0;
	for (int i = 0; i < p->n; i++) {
		p->ents[i].id = 0;
		p->ents[i].h = reqs[i]; /* the handle still identifies the request to cp_poll */
		missing += reqs[i] != MPI_REQUEST_NULL;
	}
	p->nonnull = missing;
	cp_thr *t = cp_self();
	if (!t || !missing)
		return;
	uint64_t claim = (uint64_t)(t->idx + 1) << 40 | ++t->claims;
	/* Its own thread's table, then the others', one at a time. */
	for (int k = -1; k < cp_nthrs && missing; k++) {
		cp_thr *o = k < 0 ? t : __atomic_load_n(&cp_thrs[k], __ATOMIC_ACQUIRE);
		if (k >= 0 && o == t)
			continue;
		cp_tlock(o);
		for (int i = 0; i < p->n; i++)
			if (!p->ents[i].id && reqs[i] != MPI_REQUEST_NULL && cp_req_claim(o, reqs[i], claim, &p->ents[i]))
				missing--;
		cp_tunlock(o);
	}
}

void cp_pre_free(cp_pre *p) {
	if (p->ents != p->small)
		free(p->ents);
}

/* ---- recording, by family ---- */

/* cp_seq_next numbers a collective on c: a locked add only when threads
 * may number collectives on c at once. */
static inline uint32_t cp_seq_next(cp_comm *c) {
	if (!c)
		return 0;
	if (!cp_mt)
		return ++c->seq;
	return __atomic_add_fetch(&c->seq, 1, __ATOMIC_RELAXED);
}

void cp_p2p(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int peer, int tag,
	    uint64_t bytes, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec r;
	cp_call1(t, &r, op, t0, t1, cs, cp_comm_id(c), rc);
	r.peer = cp_world_rank_in(c, peer, 1);
	r.tag = tag;
	r.bytes = bytes;
	cp_end1(t, &r);
}

/* cp_local records a call that names no communicator or peer
 * (MPI_Buffer_detach). */
void cp_local(int op, int64_t t0, int64_t t1, uint64_t cs, uint64_t bytes, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec r;
	cp_call1(t, &r, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	r.bytes = bytes;
	cp_end1(t, &r);
}

static inline __attribute__((always_inline)) void cp_fill_from_status(cp_rec *r, cp_comm *c, int source, int tag,
								       const MPI_Status *st) {
	r->peer = cp_world_rank_in(c, source, 1);
	r->tag = tag;
	if (source == MPI_ANY_SOURCE)
		r->flags |= CP_F_WILDCARD;
	if (tag == MPI_ANY_TAG)
		r->flags |= CP_F_ANYTAG;
	if (st && st != MPI_STATUS_IGNORE && source != MPI_PROC_NULL) {
		r->peer = cp_world_rank_in(c, st->MPI_SOURCE, 1);
		r->tag = st->MPI_TAG;
		r->bytes = cp_status_bytes(st);
		int canc = 0;
#ifdef OPEN_MPI
		canc = st->_cancelled;
#else
#ifdef MPICH
		if (__builtin_expect(cp_status_direct, 1))
			canc = st->count_hi_and_cancelled & 1;
		else
#endif
		if (PMPI_Test_cancelled(st, &canc) != MPI_SUCCESS)
			canc = 0;
#endif
		if (canc)
			r->flags |= CP_F_CANCELLED;
	}
}


void cp_recv(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag,
	     const MPI_Status *st, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec r;
	cp_call1(t, &r, op, t0, t1, cs, cp_comm_id(c), rc);
	cp_fill_from_status(&r, c, source, tag, st);
	cp_end1(t, &r);
}

void cp_sendrecv(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int dest, int sendtag,
		 uint64_t sendbytes, int source, int recvtag, const MPI_Status *st, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_reserve(t, 2);
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
	r->peer = cp_world_rank_in(c, dest, 1);
	r->tag = sendtag;
	r->bytes = sendbytes;
	r->count = 1;
	uint32_t comm_id = r->comm;
	cp_rec *s = cp_sub(t, CP_OP_RECVPART);
	s->comm = comm_id;
	cp_fill_from_status(s, c, source, recvtag, st);
	cp_end(t);
}

void cp_newreq(int op, int64_t t0, int64_t t1, uint64_t cs, int kind, int persistent, MPI_Comm comm,
	       int peer, int tag, int root, uint64_t bytes, int flags, MPI_Request req, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec rec, *r = &rec;
	cp_call1(t, r, op, t0, t1, cs, cp_comm_id(c), rc);
	r->flags |= (uint8_t)flags;
	r->tag = tag;
	r->bytes = bytes;
	if (kind == CP_RK_COLL) {
		r->seq = cp_seq_next(c);
		r->root = root == CP_PEER_NONE ? CP_PEER_NONE : cp_root_rank(c, root);
	} else {
		r->peer = cp_world_rank_in(c, peer, 1);
		if (root != CP_PEER_NONE)
			r->root = root; /* Psend_init, Precv_init: the partition count */
		if (kind == CP_RK_RECV && peer == MPI_ANY_SOURCE)
			r->flags |= CP_F_WILDCARD;
		if (kind == CP_RK_RECV && tag == MPI_ANY_TAG)
			r->flags |= CP_F_ANYTAG;
	}
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = (uint8_t)kind,
			    .persistent = (uint8_t)persistent, .comm = r->comm, .c = c,
			    .peer = r->peer, .tag = tag};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ;
		if (persistent)
			r->flags |= CP_F_PERSISTENT;
	}
	cp_end1(t, r);
}

void cp_coll_init(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, uint64_t bytes, MPI_Request req, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
	r->bytes = bytes;
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = CP_RK_COLL, .persistent = 1, .comm = r->comm, .c = c,
			    .peer = CP_PEER_NONE, .tag = 0};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ | CP_F_PERSISTENT;
	}
	cp_end(t);
}

/* A start of a persistent collective is an instance of it: the next
 * number of its communicator's sequence. */
static inline uint32_t cp_start_seq(const cp_req *e) { return e->kind == CP_RK_COLL ? cp_seq_next(e->c) : 0; }

void cp_start(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_reserve(t, 1 + p->n);
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (op == CP_OP_START) {
		if (p->n == 1 && p->ents[0].id) {
			r->req = p->ents[0].id;
			r->comm = p->ents[0].comm;
			r->peer = p->ents[0].peer;
			r->tag = p->ents[0].tag;
			r->seq = cp_start_seq(&p->ents[0]);
		}
	} else {
		int k = 0;
		for (int i = 0; i < p->n; i++)
			if (p->ents[i].id)
				k++;
		r->count = (uint32_t)k;
		for (int i = 0; i < p->n; i++)
			if (p->ents[i].id) {
				cp_rec *s = cp_sub(t, CP_OP_REQSTART);
				s->req = p->ents[i].id;
				s->comm = p->ents[i].comm;
				s->peer = p->ents[i].peer;
				s->tag = p->ents[i].tag;
				s->seq = cp_start_seq(&p->ents[i]);
			}
	}
	cp_end(t);
}

/* cp_forget deletes the requests a call completed (or freed) without
 * recording it: the logger is paused, or the thread has no state. */
static void cp_forget(cp_thr *t, cp_pre *p, int n, const int *idx, int all) {
	cp_reqs_drop(t, p, n, idx, all, 0);
	if (t) {
		cp_tlock(t);
		cp_reqs_drop(t, p, n, idx, all, 1);
		cp_tunlock(t);
	}
}

void cp_reqfree(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc) {
	cp_thr *t = cp_self();
	if (!cp_on || !t) {
		cp_forget(t, p, 1, NULL, 1);
		return;
	}
	t = cp_begin();
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (p->n == 1 && p->ents[0].id) {
		r->req = p->ents[0].id;
		r->comm = p->ents[0].comm;
	}
	cp_reqs_drop(t, p, 1, NULL, 1, 1);
	cp_end(t);
	cp_reqs_drop(t, p, 1, NULL, 1, 0);
}

void cp_complete(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int ndone, const int *idx,
		 const MPI_Status *st, int rc) {
	cp_thr *t = cp_self();
	if (!cp_on || !t) { /* paused: forget completed requests, record nothing */
		cp_forget(t, p, ndone, idx, 0);
		return;
	}
	t = cp_begin();
	int k = 0;
	for (int j = 0; j < ndone; j++) {
		int i = idx ? idx[j] : j;
		if (i >= 0 && i < p->n && p->ents[i].id)
			k++;
	}
	if (k == 0) {
		/* no request the logger knows: one record, no table to change;
		 * one given none but MPI_REQUEST_NULL (or a count of 0) says so,
		 * as it waited for nothing */
		cp_rec r1;
		cp_call1(t, &r1, op, t0, t1, cs, 0xFFFFFFFFu, rc);
		if (p->nonnull == 0)
			r1.flags |= CP_F_NULLREQS;
		cp_end1(t, &r1);
		return;
	}
	cp_reserve(t, 1 + ndone);
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	r->count = (uint32_t)k;
	for (int j = 0; j < ndone; j++) {
		int i = idx ? idx[j] : j;
		if (i < 0 || i >= p->n || !p->ents[i].id)
			continue;
		cp_req *e = &p->ents[i];
		cp_rec *s = cp_sub(t, CP_OP_REQDONE);
		s->req = e->id;
		s->comm = e->comm;
		s->peer = e->peer;
		s->tag = e->tag;
		if (e->persistent)
			s->flags |= CP_F_PERSISTENT;
		/* A receive from MPI_PROC_NULL keeps its peer: MPICH leaves the
		 * status of such a request as it was (source 0) in Waitall. */
		if (e->kind == CP_RK_RECV && st && e->peer != CP_PEER_PROCNULL)
			cp_fill_from_status(s, e->c, e->peer == CP_PEER_ANY ? MPI_ANY_SOURCE : 0, e->tag, &st[j]);
		if (e->kind == CP_RK_RECV && e->peer == CP_PEER_ANY)
			s->flags |= CP_F_WILDCARD;
	}
	/* After the records: the table entries hold the communicators the
	 * statuses were read against. */
	cp_reqs_drop(t, p, ndone, idx, 0, 1);
	cp_end(t);
	cp_reqs_drop(t, p, ndone, idx, 0, 0);
}

static inline uint64_t cp_mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001B3ULL; }

/* cp_poll_extend extends t's open run if the call is the same poll (op,
 * argument hash). The call site may differ: a compiler that unrolls a
 * polling loop makes one loop call from several. A run is cut at 2^31-1
 * calls. */
static inline int cp_poll_extend(cp_thr *t, int op, uint64_t key, int64_t t1) {
	cp_run *u = &t->run;
	if (!u->open || u->key != key || u->rec.op != op || u->rec.root == INT32_MAX)
		return 0;
	u->rec.end = t1;
	u->rec.root++;
	t->last_end = t1;
	return 1;
}

/* cp_poll_open makes r, the last record staged (by cp_call), t's open run
 * of one call, taking it back out of the staging buffer. */
static inline void cp_poll_open(cp_thr *t, cp_rec *r, uint64_t key) {
	r->root = 1;
	cp_run *u = &t->run;
	u->rec = *r;
	u->key = key;
	u->open = 1;
	u->path.n = 0;
	if (cp_calldepth && t->paths)
		u->path = t->paths[t->n - 1];
	t->n--;
}

/* cp_poll records a call of the Test family. One that completed nothing
 * (idle) joins the thread's run of identical unproductive polls: one
 * record, first start to last end, with the number of calls in root. */
void cp_poll(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int ndone, const int *idx,
	     const MPI_Status *st, int rc, int idle) {
	if (!idle || rc != MPI_SUCCESS || !cp_on) {
		cp_complete(op, t0, t1, cs, p, ndone, idx, st, rc);
		return;
	}
	uint64_t key = cp_mix(0xCBF29CE484222325ULL, (uint64_t)p->n);
	for (int i = 0; i < p->n; i++)
		key = cp_mix(cp_mix(key, (uint64_t)(uintptr_t)p->ents[i].h), p->ents[i].id);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (!cp_poll_extend(t, op, key, t1))
		cp_poll_open(t, cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc), key);
	cp_end(t);
}

/* cp_iprobe records MPI_Iprobe; one that found no message is a poll. */
void cp_iprobe(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag, int flag,
	       const MPI_Status *st, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (!flag && rc == MPI_SUCCESS) {
		uint64_t key = cp_mix(cp_mix(cp_mix(0xCBF29CE484222325ULL, (uint64_t)(uintptr_t)comm), (uint64_t)source),
				      (uint64_t)tag);
		if (!cp_poll_extend(t, op, key, t1)) {
			cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
			cp_fill_from_status(r, c, source, tag, NULL);
			cp_poll_open(t, r, key);
		}
	} else {
		cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
		cp_fill_from_status(r, c, source, tag, flag ? st : NULL);
	}
	cp_end(t);
}

/* ---- matched probes ---- */

/* The messages found and not yet received, by handle: few at a time, so a
 * small table under a lock (matched probes exist for threads: one may
 * probe and another receive). Full, a message is recorded without id. */
#define CP_MSGS 256
static cp_msg cp_msgs[CP_MSGS];
static pthread_mutex_t cp_msg_mu = PTHREAD_MUTEX_INITIALIZER;

static void cp_msg_put(const cp_msg *m) {
	pthread_mutex_lock(&cp_msg_mu);
	size_t j = cp_hash(m->h, CP_MSGS);
	for (int k = 0; k < CP_MSGS; k++, j = (j + 1) & (CP_MSGS - 1))
		if (!cp_msgs[j].id) {
			cp_msgs[j] = *m;
			break;
		}
	pthread_mutex_unlock(&cp_msg_mu);
}

cp_msg cp_msg_take(MPI_Message h) {
	cp_msg m = {.h = h, .peer = CP_PEER_UNKNOWN, .comm = 0xFFFFFFFFu};
	if (h == MPI_MESSAGE_NULL)
		return m;
	if (h == MPI_MESSAGE_NO_PROC) {
		m.peer = CP_PEER_PROCNULL;
		return m;
	}
	pthread_mutex_lock(&cp_msg_mu);
	size_t j = cp_hash(h, CP_MSGS);
	for (int k = 0; k < CP_MSGS && cp_msgs[j].id; k++, j = (j + 1) & (CP_MSGS - 1))
		if (cp_msgs[j].h == h) {
			m = cp_msgs[j];
			/* Backward-shift deletion keeps the probe chains whole. */
			size_t i = j;
			for (size_t n = (i + 1) & (CP_MSGS - 1); cp_msgs[n].id; n = (n + 1) & (CP_MSGS - 1)) {
				size_t home = cp_hash(cp_msgs[n].h, CP_MSGS);
				if (((n - home) & (CP_MSGS - 1)) >= ((n - i) & (CP_MSGS - 1))) {
					cp_msgs[i] = cp_msgs[n];
					i = n;
				}
			}
			cp_msgs[i].id = 0;
			break;
		}
	pthread_mutex_unlock(&cp_msg_mu);
	return m;
}

/* cp_mprobe records MPI_Mprobe and MPI_Improbe: a message found gets an id
 * (Seq), its source, tag and size from the status; an Improbe that found
 * nothing is a poll, as an Iprobe. */
void cp_mprobe(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag, int flag,
	       MPI_Message msg, const MPI_Status *st, int rc) {
	if (!flag) {
		cp_iprobe(op, t0, t1, cs, comm, source, tag, 0, st, rc);
		return;
	}
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
	cp_fill_from_status(r, c, source, tag, msg == MPI_MESSAGE_NO_PROC ? NULL : st);
	if (msg == MPI_MESSAGE_NO_PROC)
		r->peer = CP_PEER_PROCNULL;
	if (rc == MPI_SUCCESS && msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC) {
		cp_msg m = {.h = msg, .id = cp_req_id(t), .comm = r->comm, .c = c, .peer = r->peer, .tag = r->tag,
			    .bytes = r->bytes};
		r->seq = m.id;
		cp_msg_put(&m);
	}
	cp_end(t);
}

/* cp_mcall starts the record of a call that receives matched message m
 * (MPI_Mrecv, MPI_Imrecv): the message's id in Seq, its envelope and the
 * bytes its probe saw. */
static inline cp_rec *cp_mcall(cp_thr *t, int op, int64_t t0, int64_t t1, uint64_t cs, const cp_msg *m, int rc) {
	cp_rec *r = cp_call(t, op, t0, t1, cs, m->comm, rc);
	r->seq = m->id;
	r->peer = m->peer;
	r->tag = m->tag;
	r->bytes = m->bytes;
	return r;
}

/* cp_mrecv records MPI_Mrecv: the message's id in Seq, what the status says
 * was received. */
void cp_mrecv(int op, int64_t t0, int64_t t1, uint64_t cs, const cp_msg *m, const MPI_Status *st, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_mcall(t, op, t0, t1, cs, m, rc);
	if (m->id && m->peer != CP_PEER_PROCNULL)
		cp_fill_from_status(r, m->c, 0, m->tag, st);
	cp_end(t);
}

/* cp_imrecv records MPI_Imrecv: the message's id in Seq, and a new receive
 * request whose completion's status says what was received. */
void cp_imrecv(int op, int64_t t0, int64_t t1, uint64_t cs, const cp_msg *m, MPI_Request req, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_mcall(t, op, t0, t1, cs, m, rc);
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = CP_RK_RECV, .comm = r->comm, .c = m->c,
			    .peer = r->peer, .tag = r->tag};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ;
	}
	cp_end(t);
}

/* Generalized requests: the program completes them itself, possibly on
 * another thread; MPI_Grequest_complete's record names the request, and
 * its Thread the thread that completed it. */
void cp_grequest_start(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Request req, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = CP_RK_OTHER, .comm = 0xFFFFFFFFu,
			    .peer = CP_PEER_NONE};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ;
	}
	cp_end(t);
}

void cp_grequest_complete(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (p->n == 1 && p->ents[0].id)
		r->req = p->ents[0].id;
	cp_end(t);
}

void cp_coll(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int root, uint64_t bytes,
	     int flags, int rc) {
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_begin();
	if (!t) {
		cp_seq_next(c); /* the numbering must stay the same on every member */
		return;
	}
	cp_rec r;
	cp_call1(t, &r, op, t0, t1, cs, cp_comm_id(c), rc);
	r.flags |= (uint8_t)flags;
	r.seq = cp_seq_next(c);
	r.bytes = bytes;
	if (root != CP_PEER_NONE)
		r.root = cp_root_rank(c, root);
	cp_end1(t, &r);
}


/* cp_comm_name agrees on the name of a new communicator: the world rank of
 * a leader and that leader's creation counter (mpisee's scheme). Blocking:
 * called outside the lock, while every member is in the constructor. */
static void cp_comm_name(MPI_Comm parent, MPI_Comm newcomm, int op, int32_t *leader, int *counter) {
	int inter = 0, lr = 0;
	PMPI_Comm_test_inter(newcomm, &inter);
	PMPI_Comm_rank(newcomm, &lr);
	int mine = lr == 0 ? atomic_fetch_add(&cp_created, 1) + 1 : 0;
	cp_comm *nc = cp_comm_get(newcomm);
	if (!inter) {
		PMPI_Bcast(&mine, 1, MPI_INT, 0, newcomm);
		*leader = nc->world[0];
		*counter = mine;
		return;
	}
	/* Both sides of an intercommunicator must pick the same name: that of
	 * the leader with the lower world rank. An Allreduce over an
	 * intercommunicator delivers the other group's value, so two of them
	 * give each process both leaders' counters. */
	int theirs = 0, own = 0, relay;
	PMPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_MAX, newcomm);
	relay = lr == 0 ? theirs : 0;
	PMPI_Allreduce(&relay, &own, 1, MPI_INT, MPI_MAX, newcomm);
	(void)parent;
	(void)op;
	if (nc->world[0] <= nc->rworld[0]) {
		*leader = nc->world[0];
		*counter = own;
	} else {
		*leader = nc->rworld[0];
		*counter = theirs;
	}
}

static void cp_put_members(cp_thr *t, cp_rec *r, cp_comm *nc) {
	r->count = (uint32_t)(nc->size + nc->rsize + nc->nsrc + nc->ndst);
	for (int i = 0; i < nc->size; i++)
		cp_sub(t, CP_OP_MEMBER)->peer = nc->world[i];
	for (int i = 0; i < nc->rsize; i++) {
		cp_rec *s = cp_sub(t, CP_OP_MEMBER);
		s->peer = nc->rworld[i];
		s->flags |= CP_F_REMOTE;
	}
	for (int i = 0; i < nc->nsrc + nc->ndst; i++)
		cp_sub(t, i < nc->nsrc ? CP_OP_NEIGHBOR_SOURCE : CP_OP_NEIGHBOR_DEST)->peer = nc->nbr[i];
}

/* cp_record_ctor records a constructor's call: the new communicator's
 * index, name (counter and leader) and members, if one was made. */
static void cp_record_ctor(int op, int64_t t0, int64_t t1, uint64_t cs, cp_comm *pc, int rc, uint32_t seq,
			   cp_comm *nc, int counter, int32_t leader) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (nc)
		cp_reserve(t, 1 + nc->size + nc->rsize + nc->nsrc + nc->ndst);
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(pc), rc);
	r->seq = seq;
	if (nc) {
		r->req = nc->id;
		r->tag = counter;
		r->root = leader;
		cp_put_members(t, r, nc);
	}
	cp_end(t);
}

void cp_comm_new(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm,
		 int rc) {
	cp_comm *pc = NULL, *nc = NULL;
	int counter = 0;
	int32_t leader = CP_PEER_NONE;
	pc = cp_comm_get(parent);
	/* MPI_Comm_create_group is collective over the group only: it must not
	 * advance the parent's collective numbering on some ranks alone. */
	uint32_t seq = op != CP_OP_COMM_CREATE_GROUP ? cp_seq_next(pc) : 0;
	if (rc == MPI_SUCCESS && newcomm != MPI_COMM_NULL)
		nc = cp_comm_register(newcomm);
	if (nc)
		cp_comm_name(parent, newcomm, op, &leader, &counter);
	cp_record_ctor(op, t0, t1, cs, pc, rc, seq, nc, counter, leader);
}

/* MPI_Comm_idup: the new communicator may not be used until the request
 * completes, so nothing can be sent on it to agree on a name. Its ranks are
 * the parent's; the analyzer names it after the parent and the sequence
 * number of the idup on it, which all members share. */
void cp_comm_idup(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm,
		  MPI_Request req, int rc) {
	cp_comm *pc = cp_comm_get(parent);
	cp_comm *nc = NULL;
	if (rc == MPI_SUCCESS && pc && newcomm != MPI_COMM_NULL) {
		nc = calloc(1, sizeof *nc);
		nc->h = newcomm;
		nc->id = atomic_fetch_add(&cp_next_comm, 1);
		nc->refs = 1;
		nc->size = pc->size;
		nc->rsize = pc->rsize;
		nc->world = malloc(sizeof(int32_t) * (size_t)nc->size);
		for (int i = 0; i < nc->size; i++)
			nc->world[i] = pc == &cp_cworld ? i : pc->world[i];
		if (pc->rsize) {
			nc->rworld = malloc(sizeof(int32_t) * (size_t)pc->rsize);
			memcpy(nc->rworld, pc->rworld, sizeof(int32_t) * (size_t)pc->rsize);
		}
		cp_ctab_put(nc);
	}
	uint32_t seq = cp_seq_next(pc);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (pc)
		cp_reserve(t, 1 + pc->size + pc->rsize);
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(pc), rc);
	r->seq = seq;
	if (nc) {
		r->tag = (int32_t)nc->id;
		r->root = nc->world[0];
		if (req != MPI_REQUEST_NULL) {
			cp_req e = {.h = req, .id = cp_req_id(t), .kind = CP_RK_COLL, .comm = r->comm, .c = pc,
				    .peer = CP_PEER_NONE};
			cp_req_put(t, &e);
			r->req = e.id;
			r->flags |= CP_F_NEWREQ;
		}
		cp_put_members(t, r, nc);
	}
	cp_end(t);
}

/* cp_comm_hold runs before MPI_Comm_free (or _disconnect): it finds the
 * record, or makes it while MPI can still answer, and keeps it for
 * cp_comm_free, which never queries the handle. */
cp_comm *cp_comm_hold(MPI_Comm h) {
	cp_comm *c = cp_comm_get(h);
	cp_comm_ref(c);
	return c;
}

void cp_comm_free(int op, int64_t t0, int64_t t1, uint64_t cs, cp_comm *c, int rc) {
	uint32_t seq = cp_seq_next(c);
	cp_thr *t = cp_begin();
	if (t) {
		cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
		r->seq = seq;
		cp_end(t);
	}
	if (rc == MPI_SUCCESS)
		cp_ctab_unlink(c); /* pending requests keep the record */
	cp_comm_unref(c);
}

/* cp_comm_dyn records a dynamic-process constructor (spawn, accept,
 * connect, join). When every rank of the other group is in this job's
 * MPI_COMM_WORLD (accept/connect or join within one job), the other side
 * runs the logger too and both agree on a name as for MPI_Intercomm_create.
 * Otherwise the other group is another job, perhaps not logged, so nothing
 * goes over the new intercommunicator: the local group names it, after its
 * own leader (local rank 0) and that leader's counter, broadcast over the
 * parent. The two jobs' names differ; ranks of the other job are
 * CP_PEER_UNKNOWN. Both sides make the same test, so both exchange or
 * neither does. */
void cp_comm_dyn(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm, int rc) {
	cp_comm *pc, *nc = NULL;
	pc = cp_comm_get(parent);
	uint32_t seq = cp_seq_next(pc);
	if (rc == MPI_SUCCESS && newcomm != MPI_COMM_NULL)
		nc = cp_comm_register(newcomm);
	int counter = 0;
	int32_t leader = nc ? nc->world[0] : CP_PEER_NONE;
	int samejob = nc && nc->rsize > 0;
	for (int i = 0; samejob && i < nc->rsize; i++)
		samejob = nc->rworld[i] >= 0;
	if (samejob) {
		cp_comm_name(parent, newcomm, op, &leader, &counter);
	} else if (nc) {
		int lr = 0, n = 1, inter = 0;
		PMPI_Comm_rank(parent, &lr);
		PMPI_Comm_size(parent, &n);
		PMPI_Comm_test_inter(parent, &inter);
		counter = lr == 0 ? atomic_fetch_add(&cp_created, 1) + 1 : 0;
		if (!inter && n > 1)
			PMPI_Bcast(&counter, 1, MPI_INT, 0, parent);
	}
	cp_record_ctor(op, t0, t1, cs, pc, rc, seq, nc, counter, leader);
}

/* MPI_Comm_get_parent: the intercommunicator to the parent job, made in
 * MPI_Init. Not collective, so named without agreement: "Y" + world rank of
 * local rank 0 + ".0" (a process has one parent). Every call repeats the
 * same entry, so that a log read from any point finds it. */
void cp_comm_get_parent(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, int rc) {
	cp_comm *nc = (rc == MPI_SUCCESS && parent != MPI_COMM_NULL) ? cp_comm_get(parent) : NULL;
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (nc)
		cp_reserve(t, 1 + nc->size + nc->rsize + nc->nsrc + nc->ndst);
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (nc) {
		r->req = nc->id;
		r->root = nc->world[0];
		cp_put_members(t, r, nc);
	}
	cp_end(t);
}

void cp_partitioned(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int a, int b, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (p->n == 1 && p->ents[0].id) {
		r->req = p->ents[0].id;
		r->comm = p->ents[0].comm;
		r->peer = p->ents[0].peer;
	}
	r->tag = a;
	r->bytes = (uint64_t)(int64_t)b;
	cp_end(t);
}

void cp_parrived(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int part, int flag, int rc) {
	if (flag || rc != MPI_SUCCESS || !cp_on || p->n != 1) {
		cp_partitioned(op, t0, t1, cs, p, part, flag, rc);
		return;
	}
	uint64_t key = cp_mix(cp_mix(cp_mix(0xCBF29CE484222325ULL, (uint64_t)(uintptr_t)p->ents[0].h), p->ents[0].id),
			      (uint64_t)(uint32_t)part);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (!cp_poll_extend(t, op, key, t1)) {
		cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
		if (p->ents[0].id) {
			r->req = p->ents[0].id;
			r->comm = p->ents[0].comm;
			r->peer = p->ents[0].peer;
		}
		r->tag = part;
		cp_poll_open(t, r, key);
	}
	cp_end(t);
}

/* MPI_Pready_list: Tag is the list's length, each partition follows in a
 * Partition sub-record (Tag), in the list's order. */
void cp_pready_list(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int n, const int *parts, int rc) {
	cp_thr *t = cp_begin();
	if (!t)
		return;
	int k = (rc == MPI_SUCCESS && n > 0 && parts) ? n : 0;
	if (k > (1 << 24))
		k = 0;
	cp_reserve(t, 1 + k);
	cp_rec *r = cp_call(t, op, t0, t1, cs, 0xFFFFFFFFu, rc);
	if (p->n == 1 && p->ents[0].id) {
		r->req = p->ents[0].id;
		r->comm = p->ents[0].comm;
		r->peer = p->ents[0].peer;
	}
	r->tag = n;
	r->count = (uint32_t)k;
	for (int i = 0; i < k; i++)
		cp_sub(t, CP_OP_PARTITION)->tag = parts[i];
	cp_end(t);
}

/* ---- handles made over a communicator: files and windows ---- */

/* A cp_htab maps the handles of one kind (MPI_File, MPI_Win) to the
 * communicator they were made over (held: the program may free that
 * communicator while the handle lives) and the rank's number for them (1,
 * 2, … in creation order, in the records' Tag). Programs keep few files
 * and windows: a list under a lock is enough. gen changes at every
 * removal, so that a caller may cache a lookup while it is unchanged. */
typedef struct cp_hent {
	uintptr_t h;
	cp_comm *c;
	int32_t id;
	uint32_t split; /* files: the request of the split collective begun and not yet ended (0: none) */
} cp_hent;
typedef struct cp_htab {
	cp_hent *e;
	int n, cap;
	int32_t next;
	unsigned gen;
	pthread_mutex_t mu;
} cp_htab;

/* cp_htab_add records h, made over c (whose reference it takes), and
 * returns its number. */
static int32_t cp_htab_add(cp_htab *t, uintptr_t h, cp_comm *c) {
	cp_comm_ref(c);
	pthread_mutex_lock(&t->mu);
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->e = realloc(t->e, sizeof *t->e * (size_t)t->cap);
	}
	int32_t id = ++t->next;
	t->e[t->n++] = (cp_hent){.h = h, .c = c, .id = id};
	pthread_mutex_unlock(&t->mu);
	return id;
}

/* cp_htab_find returns the entry of h, and with drop removes it (its
 * communicator reference passes to the caller); a handle the logger did
 * not see made has no communicator. *gen, if set, gets the table's
 * generation as of the lookup. */
static cp_hent cp_htab_find(cp_htab *t, uintptr_t h, int drop, unsigned *gen) {
	cp_hent x = {.h = h, .c = NULL, .id = 0};
	pthread_mutex_lock(&t->mu);
	for (int i = t->n - 1; i >= 0; i--)
		if (t->e[i].h == h) {
			x = t->e[i];
			if (drop) {
				t->e[i] = t->e[--t->n];
				__atomic_add_fetch(&t->gen, 1, __ATOMIC_RELEASE);
			}
			break;
		}
	if (gen)
		*gen = t->gen;
	pthread_mutex_unlock(&t->mu);
	return x;
}

/* cp_htab_made records the collective call that made handle h (valid: it
 * is not the null handle) over comm, and enters it in t. */
static void cp_htab_made(cp_htab *tab, int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, uintptr_t h,
			 int valid, uint64_t bytes, int rc) {
	cp_comm *c = cp_comm_get(comm);
	uint32_t seq = cp_seq_next(c);
	int32_t id = 0;
	if (rc == MPI_SUCCESS && valid && c)
		id = cp_htab_add(tab, h, c);
	if (!cp_on)
		return;
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(c), rc);
	r->seq = seq;
	r->tag = id;
	r->bytes = bytes;
	cp_end(t);
}

/* cp_htab_gone records the collective call that closed or freed handle h,
 * and takes it out of t once it succeeded. */
static void cp_htab_gone(cp_htab *tab, int op, int64_t t0, int64_t t1, uint64_t cs, uintptr_t h, int rc) {
	/* Gone: its communicator reference passes to x. */
	cp_hent x = cp_htab_find(tab, h, rc == MPI_SUCCESS, NULL);
	uint32_t seq = cp_seq_next(x.c);
	if (cp_on) {
		cp_thr *t = cp_begin();
		if (t) {
			cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(x.c), rc);
			r->seq = seq;
			r->tag = x.id;
			cp_end(t);
		}
	}
	if (rc == MPI_SUCCESS)
		cp_comm_unref(x.c);
}

/* ---- MPI-IO ---- */

/* Open files, by handle (see cp_htab). File calls cost far more than the
 * lookup. */
static cp_htab cp_files = {.gen = 1, .mu = PTHREAD_MUTEX_INITIALIZER};

static cp_hent cp_file_find(MPI_File h) { return cp_htab_find(&cp_files, (uintptr_t)h, 0, NULL); }

void cp_file_open(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, MPI_File fh, int rc) {
	cp_htab_made(&cp_files, op, t0, t1, cs, comm, (uintptr_t)fh, fh != MPI_FILE_NULL, 0, rc);
}

void cp_file_close(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, int rc) {
	cp_htab_gone(&cp_files, op, t0, t1, cs, (uintptr_t)fh, rc);
}

/* cp_file_ireq records a file operation; collective ones take the next
 * number of the file communicator's sequence. A non-blocking one creates
 * request req: it completes locally (CP_RK_OTHER) or, for the collective
 * forms, as a collective over the file's communicator. */
void cp_file_ireq(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int coll,
		  MPI_Request req, int rc) {
	cp_hent f = cp_file_find(fh);
	uint32_t seq = coll ? cp_seq_next(f.c) : 0;
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(f.c), rc);
	r->seq = seq;
	r->tag = f.id;
	r->bytes = bytes;
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = (uint8_t)(coll ? CP_RK_COLL : CP_RK_OTHER),
			    .comm = r->comm, .c = f.c, .peer = CP_PEER_NONE, .tag = f.id};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ;
	}
	cp_end(t);
}

/* cp_file_call records a blocking file operation: as a non-blocking one
 * without its request. */
void cp_file_call(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int coll, int rc) {
	cp_file_ireq(op, t0, t1, cs, fh, bytes, coll, MPI_REQUEST_NULL, rc);
}

/* cp_file_split sets the pending split collective of file h to id and
 * returns the one it had (0: none, or a file the logger did not see open). */
static uint32_t cp_file_split(MPI_File h, uint32_t id) {
	uint32_t old = 0;
	pthread_mutex_lock(&cp_files.mu);
	for (int i = cp_files.n - 1; i >= 0; i--)
		if (cp_files.e[i].h == (uintptr_t)h) {
			old = cp_files.e[i].split;
			cp_files.e[i].split = id;
			break;
		}
	pthread_mutex_unlock(&cp_files.mu);
	return old;
}

/* cp_file_begin records the _begin of a split collective: as its
 * non-blocking form, with a request id that no MPI handle stands for. */
void cp_file_begin(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int rc) {
	cp_hent f = cp_file_find(fh);
	uint32_t seq = cp_seq_next(f.c);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(f.c), rc);
	r->seq = seq;
	r->tag = f.id;
	r->bytes = bytes;
	if (rc == MPI_SUCCESS && f.id) {
		r->req = cp_req_id(t);
		r->flags |= CP_F_NEWREQ;
		cp_file_split(fh, r->req);
	}
	cp_end(t);
}

/* cp_file_end records the _end of a split collective, completing the
 * request of its _begin (also while paused, which records nothing). */
void cp_file_end(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, int rc) {
	uint32_t id = cp_file_split(fh, 0);
	if (!cp_on)
		return;
	cp_hent f = cp_file_find(fh);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_reserve(t, 2);
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(f.c), rc);
	r->tag = f.id;
	if (id) {
		r->count = 1;
		cp_rec *s = cp_sub(t, CP_OP_REQDONE);
		s->req = id;
		s->comm = r->comm;
		s->tag = f.id;
	}
	cp_end(t);
}

/* ---- one-sided communication ---- */

/* Windows, by handle (see cp_htab), with a per-thread cache of the last
 * window looked up, since transfers on one window come in runs: valid
 * while the table's generation is unchanged (it changes at every free). */
static cp_htab cp_wins = {.gen = 1, .mu = PTHREAD_MUTEX_INITIALIZER};
static CP_TLS cp_hent cp_win_last;
static CP_TLS unsigned cp_win_last_gen;

/* cp_win_find returns the window record of h; a window the logger did not
 * see created has no communicator. */
static cp_hent cp_win_find(MPI_Win h) {
	unsigned gen = __atomic_load_n(&cp_wins.gen, __ATOMIC_ACQUIRE);
	if (cp_win_last_gen == gen && cp_win_last.h == (uintptr_t)h)
		return cp_win_last;
	cp_hent w = cp_htab_find(&cp_wins, (uintptr_t)h, 0, &gen);
	if (w.c) {
		cp_win_last = w;
		cp_win_last_gen = gen;
	}
	return w;
}

void cp_win_new(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, MPI_Win win, uint64_t bytes, int rc) {
	cp_htab_made(&cp_wins, op, t0, t1, cs, comm, (uintptr_t)win, win != MPI_WIN_NULL, bytes, rc);
}

void cp_win_free(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int rc) {
	cp_htab_gone(&cp_wins, op, t0, t1, cs, (uintptr_t)win, rc);
}

/* cp_win_record starts the record of a call on window w. */
static cp_rec *cp_win_record(cp_thr *t, int op, int64_t t0, int64_t t1, uint64_t cs, const cp_hent *w,
			     int has_target, int target, uint64_t bytes, int rc) {
	cp_rec *r = cp_call(t, op, t0, t1, cs, cp_comm_id(w->c), rc);
	r->tag = w->id;
	r->bytes = bytes;
	if (has_target)
		r->peer = cp_world_rank_in(w->c, target, 0);
	return r;
}

void cp_win_call(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int coll, int has_target, int target,
		 uint64_t bytes, int rc) {
	cp_hent w = cp_win_find(win);
	uint32_t seq = coll ? cp_seq_next(w.c) : 0;
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_win_record(t, op, t0, t1, cs, &w, has_target, target, bytes, rc);
	r->seq = seq;
	cp_end(t);
}

/* cp_win_ireq records MPI_Rput and the like: the request completes
 * locally (CP_RK_OTHER: no message to match at its completion). */
void cp_win_ireq(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int target, uint64_t bytes,
		 MPI_Request req, int rc) {
	cp_hent w = cp_win_find(win);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	cp_rec *r = cp_win_record(t, op, t0, t1, cs, &w, 1, target, bytes, rc);
	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		cp_req e = {.h = req, .id = cp_req_id(t), .kind = CP_RK_OTHER, .comm = r->comm, .c = w.c,
			    .peer = CP_PEER_NONE, .tag = w.id};
		cp_req_put(t, &e);
		r->req = e.id;
		r->flags |= CP_F_NEWREQ;
	}
	cp_end(t);
}

/* cp_win_group records MPI_Win_post or MPI_Win_start with its group's
 * world ranks (a local query, before the record is started). */
void cp_win_group(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, MPI_Group group, int rc) {
	cp_hent w = cp_win_find(win);
	int n = 0;
	int32_t *world = NULL;
	if (group != MPI_GROUP_NULL && PMPI_Group_size(group, &n) == MPI_SUCCESS && n > 0)
		world = cp_group_world(group, n);
	else
		n = 0;
	cp_thr *t = cp_begin();
	if (t) {
		cp_reserve(t, 1 + n);
		cp_rec *r = cp_win_record(t, op, t0, t1, cs, &w, 0, 0, 0, rc);
		r->count = (uint32_t)n;
		for (int i = 0; i < n; i++)
			cp_sub(t, CP_OP_WIN_GROUP_MEMBER)->peer = world[i];
		cp_end(t);
	}
	free(world);
}

/* cp_win_test records MPI_Win_test: one that found the exposure epoch
 * not yet complete is an unproductive poll, coalesced with the thread's
 * identical ones (same window) as cp_poll does; one that completed it is
 * recorded alone and ends the epoch. */
void cp_win_test(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int flag, int rc) {
	cp_hent w = cp_win_find(win);
	cp_thr *t = cp_begin();
	if (!t)
		return;
	if (!flag && rc == MPI_SUCCESS) {
		uint64_t key = cp_mix(0xCBF29CE484222325ULL, (uint64_t)(uintptr_t)win);
		if (!cp_poll_extend(t, op, key, t1))
			cp_poll_open(t, cp_win_record(t, op, t0, t1, cs, &w, 0, 0, 0, rc), key);
	} else
		cp_win_record(t, op, t0, t1, cs, &w, 0, 0, 0, rc);
	cp_end(t);
}

/* ---- life cycle ---- */

static void cp_install_signals(void);
static void cp_atexit(void);
static volatile int cp_finished;

static int cp_has_invariant_tsc(void) {
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u));
	if (a < 0x80000007u)
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u));
	return (d >> 8) & 1;
}

static int cp_load_cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	*(uint64_t *)data = (uint64_t)info->dlpi_addr;
	return 1; /* the first object is the executable */
}

uint64_t cp_load_address(void) {
	uint64_t a = 0;
	dl_iterate_phdr(cp_load_cb, &a);
	return a;
}

/* cp_after_init starts logging once PMPI_Init has returned. The Init record
 * ends after the logger's own start-up (clock synchronisation, opening the
 * log), so that time counts as MPI_Init, not as the program's computation. */
void cp_after_init(int op, int64_t t0, uint64_t cs, int provided, int rc) {
	if (rc != MPI_SUCCESS || cp_inited)
		return;
	cp_inited = 1;
	cp_mt = provided == MPI_THREAD_MULTIPLE;
	int wr = 0, ws = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
	PMPI_Comm_size(MPI_COMM_WORLD, &ws);
	cp_world_rank_self = (uint32_t)wr;
	cp_status_check();
	int32_t *wmap = malloc(sizeof(int32_t) * (size_t)ws);
	for (int i = 0; i < ws; i++)
		wmap[i] = i;
	cp_cworld = (cp_comm){.h = MPI_COMM_WORLD, .id = 0, .size = ws, .world = wmap};
	static int32_t selfmap[1];
	selfmap[0] = wr;
	cp_cself = (cp_comm){.h = MPI_COMM_SELF, .id = 1, .size = 1, .world = selfmap};
	cp_depth++;
	int ok = cpathGoInit(provided, t0, cp_mt);
	cp_depth--;
	if (!ok)
		return; /* CPATH_DIR unusable: reported once by Go, the program runs on unlogged */
	cp_install_signals();
	atexit(cp_atexit);
	cp_logging = 1;
	cp_on = 1;
	cp_thr *t = cp_begin();
	if (t) {
		cp_rec *r = cp_call(t, op, t0, cp_now(), cs, 0, rc);
		r->tag = provided;
		cp_end(t);
	}
}

/* cp_writer is the state the ends of the log write with, the world
 * stopped: the calling thread's, or, for a thread that has none, the
 * first (its thread is held out of the logger). */
static cp_thr *cp_writer(cp_thr *t) {
	if (t || cp_nthrs == 0)
		return t;
	return cp_thrs[0];
}

/* cp_finish closes every thread's run, codes what is staged and hands the
 * end of the log to Go; the caller has stopped the world. */
static void cp_finish(cp_thr *w, int status, int info) {
	cp_finished = 1;
	cp_on = 0;
	cp_logging = 0;
	if (w) {
		cp_runs_close(w);
		cp_flush(w);
		cp_commit(w);
	}
	if (cp_mods_stale)
		cp_mods_flush();
	cp_depth++;
	cpathGoFinish(status, info);
	cp_depth--;
}

/* Every rank that initialised through the logger takes part in the clock
 * synchronisation at MPI_Finalize, or none does: rank 0's ping-pong waits
 * for every other rank. A rank paused by MPI_Pcontrol(0) records no
 * Finalize call but still finishes its log (with the final sync point, so
 * drift is kept even when every rank is paused); a rank whose log could not
 * be opened only answers the sync. */
void cp_before_finalize(int64_t t0, uint64_t cs) {
	if (!cp_inited || cp_finished)
		return;
	if (!cp_logging) {
		cp_depth++;
		cpathGoFinalizeSync();
		cp_depth--;
		return;
	}
	cp_thr *t = cp_self();
	cp_world_stop();
	if (!cp_finished) {
		cp_thr *w = cp_writer(t);
		cp_held = 1;
		if (cp_on && w) {
			cp_runs_close(w); /* every thread's, before the Finalize */
			cp_call(w, CP_OP_FINALIZE, t0, cp_now(), cs, 0, MPI_SUCCESS);
		}
		cp_finish(w, CP_END_FINALIZED, 0);
		cp_held = 0;
	}
	cp_world_start();
}

void cp_before_abort(int64_t t0, uint64_t cs, MPI_Comm comm, int errorcode) {
	if (!cp_logging)
		return;
	cp_comm *c = cp_comm_get(comm);
	cp_thr *t = cp_self();
	cp_world_stop();
	if (!cp_finished) {
		cp_thr *w = cp_writer(t);
		cp_held = 1;
		if (cp_on && w) {
			cp_runs_close(w);
			cp_rec *r = cp_call(w, CP_OP_ABORT, t0, cp_now(), cs, cp_comm_id(c), MPI_SUCCESS);
			r->tag = errorcode;
		}
		cp_finish(w, CP_END_ABORTED, errorcode);
		cp_held = 0;
	}
	cp_world_start();
}

void cp_pcontrol(int64_t t0, int64_t t1, uint64_t cs, int level) {
	if (!cp_inited || cp_finished || !cp_logging)
		return;
	cp_thr *t = cp_self();
	if (!t)
		return;
	cp_world_stop();
	cp_held = 1;
	cp_runs_close(t); /* MPI_Pcontrol cuts every thread's run of polls */
	cp_rec *r = cp_call(t, CP_OP_PCONTROL, t0, t1, cs, 0xFFFFFFFFu, MPI_SUCCESS);
	r->tag = level;
	cp_on = level != 0;
	cp_flush(t);
	cp_commit(t);
	if (cp_mods_stale)
		cp_mods_flush();
	cp_held = 0;
	cp_world_start();
}

/* ---- the signal-safe path: a dying rank ends its log ---- */

int64_t cp_skew_ns(int64_t ns) {
	if (!cp_skew_off && cp_skew_ppm == 0)
		return ns;
	return ns + cp_skew_off + (int64_t)((double)(ns - cp_skew_base) * cp_skew_ppm / 1e6);
}

/* cp_runs_rescue codes the deferred call and then the open poll runs on
 * the way out (one stream), if no thread is inside the logger (it would be
 * changing them, or coding); otherwise they are lost, with the call in
 * flight. Records go through a small array (the deferred call's are in
 * its state's buffer already): the signal stack may be small. */
static void cp_runs_rescue(void) {
	if (cp_held || cp_enc_busy)
		return;
	cp_thr *p = cp_pend;
	if (p) {
		/* the deferred call first: it returned before the runs' ends */
		cp_pend = NULL;
		cp_enc_batch(p->buf, cp_calldepth ? p->paths : NULL, p->n);
		p->n = 0;
	}
	cp_rec tmp[8];
	cp_path paths[8];
	int n = 0;
	for (int i = 0; i < cp_nthrs; i++) {
		cp_run *u = &cp_thrs[i]->run;
		if (!u->open)
			continue;
		u->open = 0;
		paths[n] = u->path;
		tmp[n++] = u->rec;
		if (n == 8) {
			cp_enc_batch(tmp, cp_calldepth ? paths : NULL, n);
			n = 0;
		}
	}
	cp_enc_batch(tmp, cp_calldepth ? paths : NULL, n);
}

/* The committed calls are in the file already (the kernel holds the mapped
 * pages): only the deferred call, the open runs and the trailer are left
 * to write, without allocation or Go. The call in flight, if any, is lost
 * (with the deferred call, if it was being coded with it). With threads, the states that can
 * be had at once are held while the end is written, their open runs coded
 * first; if every one could (no thread is in the logger), the trailer gets
 * a CHECK. The file is not cut to size here (a program whose handler
 * returns goes on with the file mapped), except at exit with every state
 * held. */
static void cp_emergency(int status, int info, int truncate) {
	if (!cp_logging || cp_finished)
		return;
	cp_finished = 1;
	cp_on = 0;
	cp_logging = 0;
	if (!cp_mt) {
		cp_runs_rescue();
		cp_enc_end(status, info, truncate, 1);
		return;
	}
	int reg = pthread_mutex_trylock(&cp_reg_mu) == 0;
	int all = reg, n = cp_nthrs;
	unsigned char held[CP_MAXSTREAMS / 8];
	memset(held, 0, sizeof held);
	for (int i = 0; i < n; i++) {
		cp_thr *t = cp_thrs[i];
		if (!cp_ttrylock(t)) {
			all = 0;
			continue;
		}
		held[i / 8] |= (unsigned char)(1u << (i % 8));
		if (t->run.open && t->n == 0) {
			/* coded in its own stream, its scratch empty between calls */
			t->run.open = 0;
			cp_enc_code(t->enc, &t->run.rec, cp_calldepth ? &t->run.path : NULL, 1);
			cp_enc_commit(t->enc);
		}
	}
	cp_enc_end(status, info, truncate, all);
	for (int i = 0; i < n; i++)
		if (held[i / 8] & (1u << (i % 8)))
			cp_tunlock(cp_thrs[i]);
	if (reg)
		pthread_mutex_unlock(&cp_reg_mu);
}

static const int cp_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
			      SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU};
#define CP_NSIGS (int)(sizeof cp_sigs / sizeof cp_sigs[0])
static struct sigaction cp_oldsa[CP_NSIGS];

static void cp_on_signal(int sig, siginfo_t *si, void *uc) {
	int i;
	for (i = 0; i < CP_NSIGS && cp_sigs[i] != sig; i++)
		;
	cp_emergency(CP_END_SIGNAL, sig, 0);
	if (i == CP_NSIGS)
		return;
	/* Hand the signal on exactly as if the logger were not there. */
	struct sigaction *o = &cp_oldsa[i];
	if (o->sa_flags & SA_SIGINFO) {
		if (o->sa_sigaction) {
			o->sa_sigaction(sig, si, uc);
			return;
		}
	} else if (o->sa_handler == SIG_IGN) {
		return;
	} else if (o->sa_handler != SIG_DFL) {
		o->sa_handler(sig);
		return;
	}
	sigaction(sig, o, NULL);
	raise(sig);
}

static void cp_install_signals(void) {
	for (int i = 0; i < CP_NSIGS; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = cp_on_signal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(cp_sigs[i], NULL, &cp_oldsa[i]) == 0 && cp_oldsa[i].sa_handler == SIG_IGN &&
		    !(cp_oldsa[i].sa_flags & SA_SIGINFO))
			continue; /* the program ignores it: so do we */
		sigaction(cp_sigs[i], &sa, NULL);
	}
}

static void cp_atexit(void) {
	if (cp_inited && !cp_finished)
		cp_emergency(CP_END_NOFINALIZE, 0, 1);
}

static pthread_once_t cp_once = PTHREAD_ONCE_INIT;
static void cp_key_init(void) { pthread_key_create(&cp_key, cp_thr_exit); }

void cp_runtime_setup(void) {
	cp_use_tsc = cp_has_invariant_tsc() && !getenv("CPATH_NO_TSC");
	cp_setup_tick = cp_now();
	cp_setup_ns = cp_mono_ns();
	cp_types_setup();
	pthread_once(&cp_once, cp_key_init);
}

/* Fortran sentinels: Open MPI's common blocks, and MPICH's pointers to its
 * own; weak so C programs load. */
extern void *MPIR_F_MPI_IN_PLACE __attribute__((weak));
extern void *MPIR_F_MPI_BOTTOM __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place __attribute__((weak));
extern int mpi_fortran_bottom __attribute__((weak));
extern int mpi_fortran_in_place__ __attribute__((weak));
extern int mpi_fortran_bottom__ __attribute__((weak));
extern int MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern int MPI_FORTRAN_BOTTOM __attribute__((weak));

const void *cp_f_buf(const void *buf) {
	if (!buf)
		return buf;
	if (buf == &mpi_fortran_in_place_ || buf == &mpi_fortran_in_place || buf == &mpi_fortran_in_place__ ||
	    buf == &MPI_FORTRAN_IN_PLACE || (&MPIR_F_MPI_IN_PLACE && buf == MPIR_F_MPI_IN_PLACE))
		return MPI_IN_PLACE;
	if (buf == &mpi_fortran_bottom_ || buf == &mpi_fortran_bottom || buf == &mpi_fortran_bottom__ ||
	    buf == &MPI_FORTRAN_BOTTOM || (&MPIR_F_MPI_BOTTOM && buf == MPIR_F_MPI_BOTTOM))
		return MPI_BOTTOM;
	return buf;
}
