/* encode.c: the log's record stream, coded in C as calls complete and
 * written straight into a shared mapping of the log file.
 *
 * Each call's records (built by runtime.c in its thread's staging buffer,
 * or in registers for a call of one record) are coded into stream items
 * (docs/log-format.md, "Stream items"; the Go twin is trace/stream.go) by
 * the coder in code.h, inline in the calls' path. The file is mapped once, MAP_SHARED, over far
 * more address space than it will need, and grown under the mapping as the
 * data reaches its end; the kernel owns the pages, so a rank killed by
 * SIGKILL leaves every committed call in the file. An item is committed by
 * storing its first byte last: the file is zero beyond the data, and the
 * reader stops at a zero tag.
 *
 * Without MPI_THREAD_MULTIPLE (one thread in MPI at a time) there is one
 * stream, coded in place at the end of the data: a batch is committed with
 * a compare-and-swap that the signal path also uses, so that a call
 * interrupted half-coded is either whole in the log or skipped.
 *
 * With MPI_THREAD_MULTIPLE every thread has a stream of its own (its
 * slots and times) and a *region* of the file: a BLOCK naming the stream,
 * claimed ahead with one atomic add (its length and stream stored before
 * its tag), which the thread's calls fill one after another. A call is
 * coded into the thread's scratch buffer and copied to the end of what the
 * region holds, its first byte stored last; the region's unfilled rest is
 * zero, which the reader skips. So the threads' calls share neither a
 * lock, nor an atomic, nor the cache lines they write: one claim per
 * region, whose size grows while the thread fills regions (up to
 * CP_REGION_MAX) and shrinks when CHECKs close them mostly empty.
 * CHECKs and calibration points are written by whichever thread finds one
 * due, while runtime.c holds every thread out of the logger (no call is
 * then half-written); the CHECK closes every region, so that what it
 * covers never changes, and no call after it lands before it.
 *
 * Times stay in clock ticks; calibration points (tick, ns) go into the
 * stream every ~100 ms and the reader converts. Nothing is compressed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "code.h"
#include "cpathlog.h"
#include "encode.h"
#include "unwrapped.h"

/* The file grows by this much at a time. */
#define CP_WINDOW (2u << 20)
/* Pages this far behind the end of the data (and the last CHECK) are
 * dropped from the mapping when it grows: they stay in the file. */
#define CP_KEEP (512u << 10)
/* Room in front of a thread's scratch items for the block's frame. */
#define CP_FRAME 16
/* A thread's region sizes: a first region, and the largest one grown to
 * (a call longer than that gets a region of its own size). */
#define CP_REGION_MIN 1024u
#define CP_REGION_MAX (16u << 10)

static cp_enc *cp_streams[CP_MAXSTREAMS];
cp_enc *cp_enc0;
static int cp_threads; /* MPI_THREAD_MULTIPLE: streams in blocks */
static int cp_depth_max;
static int64_t cp_tick0;

static int cp_efd = -1;
uint8_t *cp_map;
static uint64_t cp_maplen;
static volatile uint64_t cp_avail; /* the file is reserved up to here */
volatile uint64_t cp_room;
static uint64_t cp_dropped_to;     /* pages before this are dropped from the mapping */
static pthread_mutex_t cp_grow_mu = PTHREAD_MUTEX_INITIALIZER;
volatile uint64_t cp_pos_line[8] __attribute__((aligned(64)));
volatile uint64_t cp_res, cp_bend;
volatile int cp_coding, cp_finished_enc;
static uint64_t cp_crc_from; /* CRC-32C of [cp_crc_from, the end of the data) is cp_crc */
static uint32_t cp_crc;
volatile int64_t cp_cal_last;
int64_t cp_cal_every;
uint32_t cp_cal_recs;
uint64_t cp_nrec, cp_ncalls, cp_ncalls_next, cp_dropped; /* one stream; threads count per stream */
/* Set from the entry to the exit of cp_enc_batch and cp_enc_chunk (wider
 * than cp_coding: it covers growing the file), for the signal path. */
volatile int cp_enc_busy;
static volatile int cp_broken; /* the file could not grow: records are dropped */

/* cp_set_broken stops the writing of records: the file could not grow. */
static void cp_set_broken(void) {
	cp_broken = 1;
	cp_room = 0;
}

int64_t cp_skew_ns(int64_t ns); /* runtime.c: test-only distortion */

/* ---- CRC-32C, software, slicing by one byte (only at window ends) ---- */

static uint32_t cp_crctab[256];
static void cp_crc_init(void) {
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		cp_crctab[i] = c;
	}
}

__attribute__((target("sse4.2"))) static uint32_t cp_crc_hw(uint32_t crc, const uint8_t *p, size_t n) {
	uint64_t c = ~crc;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	uint32_t c32 = (uint32_t)c;
	for (; n; n--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return ~c32;
}

static int cp_have_sse42;
static uint32_t cp_crc_update(uint32_t crc, const uint8_t *p, size_t n) {
	if (cp_have_sse42)
		return cp_crc_hw(crc, p, n);
	crc = ~crc;
	while (n--)
		crc = cp_crctab[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

/* ---- coding: code.h, and here what it calls out of line ---- */

uint8_t cp_uvlen[64];
uint32_t cp_uvcont[64];
int cp_fast_pdep;

/* cp_pdep_is_fast says whether the CPU has BMI2 (PDEP) and LZCNT, and
 * PDEP is not microcoded: Intel's, and AMD's from Zen 3 on (before, and on
 * Hygon's Zen-based CPUs, it takes hundreds of cycles). */
static int cp_pdep_is_fast(void) {
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	unsigned maxleaf = a;
	int intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e; /* "Genu" "ineI" "ntel" */
	int amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;   /* "Auth" "enti" "cAMD" */
	if (maxleaf < 7 || (!intel && !amd))
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
	int bmi2 = (b >> 8) & 1;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a < 0x80000001u)
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000001u), "c"(0));
	int lzcnt = (c >> 5) & 1;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	unsigned family = ((a >> 8) & 0xF) + ((a >> 8 & 0xF) == 0xF ? (a >> 20) & 0xFF : 0);
	return bmi2 && lzcnt && (!amd || family >= 0x19);
}
uint8_t cp_subop[256];

static void cp_uvf_init(void) {
	for (int lz = 0; lz < 64; lz++) {
		int len = (64 - lz + 6) / 7;
		cp_uvlen[lz] = (uint8_t)len;
		cp_uvcont[lz] = len <= 4 ? 0x808080u & (uint32_t)((1ULL << (8 * (len - 1))) - 1) : 0;
	}
}

static void cp_subop_init(void) {
	for (int op = 0; op < 256; op++)
		cp_subop[op] = (op >= CP_OP_REQDONE && op <= CP_OP_MEMBER) || op == CP_OP_NEIGHBOR_SOURCE ||
			       op == CP_OP_NEIGHBOR_DEST || op == CP_OP_WIN_GROUP_MEMBER || op == CP_OP_PARTITION;
}

/* cp_path_differs says whether path is not slot s's last one. */
static inline int cp_path_differs(const cp_enc *e, unsigned s, const cp_path *path) {
	int n = path ? path->n : 0;
	if (n != CP_KEY_NPATH(e->slots[s].key))
		return 1;
	for (int i = 0; i < n; i++)
		if (path->pc[i] != e->path[s][i])
			return 1;
	return 0;
}

/* cp_code_path codes a call path against slot s's last one (element by
 * element; past its end, against the element before, the call site for
 * the first) and makes it the slot's. */
static uint8_t *cp_code_path(uint8_t *q, cp_enc *e, unsigned s, const cp_path *path) {
	cp_slot *sl = &e->slots[s];
	uint64_t *last = e->path[s];
	int n = path ? path->n : 0, ln = CP_KEY_NPATH(sl->key);
	q = uv(q, (uint64_t)n);
	for (int i = 0; i < n; i++) {
		uint64_t pred = i < ln ? last[i] : i == 0 ? sl->kcs : path->pc[i - 1];
		q = uv(q, zz((int64_t)(path->pc[i] - pred)));
	}
	for (int i = 0; i < n; i++)
		last[i] = path->pc[i];
	sl->key = (sl->key & CP_KEY_MASK) | (uint64_t)n << 16;
	return q;
}

/* cp_code_fields codes the fields of r that its slot does not predict:
 * the mask at p, then their values; it makes them the slot's. */
__attribute__((noinline)) uint8_t *cp_code_fields(cp_enc *e, unsigned s, uint8_t *p, const cp_rec *r,
							  const cp_path *path) {
	cp_slot *sl = &e->slots[s];
	uint8_t *mp = p; /* the mask: one byte unless comm, root, thread or the path differ */
	p += 1;
	unsigned mask = 0;
	if (r->peer != sl->p.peer) {
		mask |= M_PEER;
		p = uv(p, zz(r->peer));
		sl->p.peer = r->peer;
	}
	if (r->tag != sl->p.tag) {
		mask |= M_TAG;
		p = uv(p, zz(r->tag));
		sl->p.tag = r->tag;
	}
	if (r->bytes != sl->p.bytes) {
		mask |= M_BYTES;
		p = uv(p, r->bytes);
		sl->p.bytes = r->bytes;
	}
	if (r->seq != sl->p.seq) {
		mask |= M_SEQ;
		uint32_t d = r->seq - (sl->p.seq - sl->seqstep);
		p = uv(p, zz((int32_t)d));
		sl->seqstep = d;
	}
	sl->p.seq = r->seq + sl->seqstep;
	if (r->req != sl->p.req) {
		mask |= M_REQ;
		uint32_t d = r->req - (sl->p.req - sl->reqstep);
		p = uv(p, zz((int32_t)d));
		sl->reqstep = d;
	}
	sl->p.req = r->req + sl->reqstep;
	if (r->flags != sl->p.flags) {
		mask |= M_FLAGS;
		p = uv(p, r->flags);
		sl->p.flags = r->flags;
	}
	if (r->count != sl->p.count) {
		mask |= M_COUNT;
		p = uv(p, r->count);
		sl->p.count = r->count;
	}
	int newpath = cp_path_differs(e, s, path);
	if (r->comm != sl->p.comm || r->root != sl->p.root || r->thread != sl->p.thread || newpath) {
		/* a two-byte mask: move what follows it up by one */
		uint8_t tmp[3 * 10 + 1 + CP_MAXDEPTH * 10];
		uint8_t *q = tmp;
		if (r->comm != sl->p.comm) {
			mask |= M_COMM;
			q = uv(q, r->comm);
			sl->p.comm = r->comm;
		}
		if (r->root != sl->p.root) {
			mask |= M_ROOT;
			q = uv(q, zz(r->root));
			sl->p.root = r->root;
		}
		if (r->thread != sl->p.thread) {
			mask |= M_THREAD;
			q = uv(q, r->thread);
			sl->p.thread = r->thread;
		}
		if (newpath) {
			mask |= M_PATH;
			q = cp_code_path(q, e, s, path);
		}
		memmove(mp + 2, mp + 1, (size_t)(p - (mp + 1)));
		p++;
		mp[0] = (uint8_t)((mask & 0x7F) | 0x80);
		mp[1] = (uint8_t)(mask >> 7);
		memcpy(p, tmp, (size_t)(q - tmp));
		p += q - tmp;
	} else {
		mp[0] = (uint8_t)mask;
	}
	return p;
}

/* cp_code_def picks the slot for a record of key key at call site kcs that
 * neither of its two candidate slots holds (the one defined longer ago), and
 * resets it as a DEF item does. */
__attribute__((noinline)) unsigned cp_code_def(cp_enc *e, unsigned s1, unsigned s2, uint64_t key, uint64_t kcs) {
	unsigned s = e->used[s2] < e->used[s1] ? s2 : s1;
	e->used[s] = ++e->clock;
	cp_slot *sl = &e->slots[s];
	memset(sl, 0, sizeof *sl);
	sl->p.op = (uint8_t)key;
	sl->p.peer = sl->p.root = -1;
	sl->key = key;
	sl->kcs = kcs;
	return s;
}

static uint8_t *cp_code_cal(uint8_t *p, int64_t tick, int64_t ns) {
	*p++ = TAG_CAL;
	p = uv(p, zz(tick));
	p = uv(p, zz(ns));
	return p;
}

/* cp_cal_read reads a calibration point: a tick, and the local ns read
 * between it and a second tick read; a pair whose two ticks lie more than
 * about a microsecond apart (the thread was preempted between them) is
 * read again, up to four times, and the closest kept, so that the points
 * are true to well under a microsecond. Async-signal-safe. */
static void cp_cal_read(int64_t *tick, int64_t *ns) {
	if (!cp_use_tsc) {
		*tick = cp_mono_ns();
		*ns = cp_skew_ns(*tick);
		return;
	}
	int64_t best = INT64_MAX, tol = cp_cal_every / 100000 + 1;
	for (int i = 0; i < 4 && best > tol; i++) {
		int64_t a = cp_now(), n = cp_mono_ns(), b = cp_now();
		if (b - a < best) {
			best = b - a;
			*tick = a + (b - a) / 2;
			*ns = n;
		}
	}
	*ns = cp_skew_ns(*ns);
}

/* cp_crc_to returns the CRC-32C of [cp_crc_from, at) of the file. */
static uint32_t cp_crc_to(uint64_t at) {
	return cp_crc_update(cp_crc, cp_map + cp_crc_from, (size_t)(at - cp_crc_from));
}

/* ---- the file ---- */

/* cp_grow reserves the file up to at least end (and CP_WINDOW more) and
 * faults the new pages in, having first dropped from the mapping the pages
 * well behind the data, so that the resident log stays within a window and
 * a half. Threads may call it at once. Returns 0 if the file cannot grow. */
static int cp_grow(uint64_t end) {
	if (end > cp_maplen)
		return 0;
	pthread_mutex_lock(&cp_grow_mu);
	int ok = 1;
	long pg = sysconf(_SC_PAGESIZE);
	while (ok && cp_avail < end) {
		uint64_t from = cp_avail, len = CP_WINDOW;
		while (from + len < end)
			len += CP_WINDOW;
		if (from + len > cp_maplen)
			len = cp_maplen - from;
		/* Reserve the blocks, so that a full disk is an error here and
		 * not a SIGBUS when a page of the mapping is first written. */
		int rc = posix_fallocate(cp_efd, (off_t)from, (off_t)len);
		if (rc == EOPNOTSUPP || rc == EINVAL)
			rc = ftruncate(cp_efd, (off_t)(from + len)) ? errno : 0;
		if (rc != 0 || len == 0) {
			ok = 0;
			break;
		}
		/* The pages behind stay in the page cache and the file; a write
		 * to one (a thread that claimed its place long ago) or a CHECK's
		 * read faults it back in. */
		uint64_t keep = cp_crc_from < cp_pos ? cp_crc_from : cp_pos;
		if (keep > CP_KEEP) {
			keep = (keep - CP_KEEP) & ~(uint64_t)(pg - 1);
			if (keep > cp_dropped_to) {
				(void)madvise(cp_map + cp_dropped_to, (size_t)(keep - cp_dropped_to), MADV_DONTNEED);
				cp_dropped_to = keep;
			}
		}
		/* Fault the new pages in, writable, now: one pass of page faults
		 * (and of the file system's page_mkwrite) here instead of one
		 * fault per page on the calls' path: 82-94 ns of CPU per self
		 * send/recv call instead of 87-147 in side-by-side runs. Linux ≥
		 * 5.14; elsewhere the pages fault in as they are written. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
		uint64_t a = from & ~(uint64_t)(pg - 1);
		(void)madvise(cp_map + a, (size_t)(from + len - a), MADV_POPULATE_WRITE);
		__atomic_store_n(&cp_avail, from + len, __ATOMIC_RELEASE);
		if (!cp_broken && cp_efd >= 0)
			cp_room = from + len;
	}
	pthread_mutex_unlock(&cp_grow_mu);
	return ok;
}

/* cp_room_signal makes room for the end of the log from the signal path:
 * the grow lock cannot be taken there, but fallocate is a system call. */
static int cp_room_signal(uint64_t end) {
	if (end <= __atomic_load_n(&cp_avail, __ATOMIC_ACQUIRE))
		return 1;
	if (end > cp_maplen)
		return 0;
	return syscall(SYS_fallocate, cp_efd, 0, (off_t)0, (off_t)end) == 0;
}

/* cp_enc_open starts the stream at file offset off of fd (after the header
 * Go wrote); tick0 is the header's calibration tick, every is the number of
 * ticks between calibration points, threads says whether the threads code
 * streams of their own (MPI_THREAD_MULTIPLE), depth is the call depth. */
int cp_enc_open(int fd, uint64_t off, int64_t tick0, int64_t every, int threads, int depth) {
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	cp_have_sse42 = (c >> 20) & 1;
	cp_fast_pdep = cp_pdep_is_fast();
	cp_crc_init();
	cp_subop_init();
	cp_uvf_init();
	cp_efd = fd;
	cp_threads = threads;
	cp_depth_max = depth;
	cp_pos = cp_crc_from = off;
	cp_avail = off;
	cp_tick0 = tick0;
	cp_cal_last = tick0;
	cp_cal_every = every > 0 ? every : 1;
	/* Address space for the whole log, mapped once, so that a thread
	 * never writes into a window another one is replacing: pages beyond
	 * the end of the file are never touched. */
	for (uint64_t len = 1ULL << 40; len >= (1ULL << 28); len >>= 2) {
		void *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		if (m != MAP_FAILED) {
			cp_map = m;
			cp_maplen = len;
			break;
		}
	}
	if (!cp_map || !cp_enc_stream(0))
		return 0;
	return cp_grow(off + CP_TAILROOM);
}

/* cp_enc_stream returns stream n's coding state, made on first use (the
 * caller serialises the first uses). */
cp_enc *cp_enc_stream(uint32_t n) {
	if (n >= CP_MAXSTREAMS)
		return NULL;
	cp_enc *e = cp_streams[n];
	if (!e) {
		if (posix_memalign((void **)&e, 64, sizeof *e) != 0)
			return NULL;
		memset(e, 0, sizeof *e);
		e->stream = n;
		e->prev_end = cp_tick0;
		e->regsz = CP_REGION_MIN;
		__atomic_store_n(&cp_streams[n], e, __ATOMIC_RELEASE);
		if (n == 0)
			cp_enc0 = e;
	}
	return e;
}

/* ---- one stream ---- */

/* cp_enc_room makes room for a batch of n records that must end before
 * end, or drops them (1: there is room). */
__attribute__((noinline)) int cp_enc_room(int n, uint64_t end) {
	if (n <= 0)
		return 0;
	if (cp_broken || cp_efd < 0) {
		cp_dropped += (uint64_t)n;
		return 0;
	}
	if (end > cp_avail && !cp_grow(end)) {
		cp_set_broken();
		cp_dropped += (uint64_t)n;
		return 0;
	}
	return 1;
}

/* cp_enc_commit_check ends the batch at start, coded up to p but for its
 * first byte first (not stored yet), with a CHECK of the stream so far
 * (this batch included), then a calibration point read now, after every
 * time before it and before every time after it, so that the reader's
 * interpolation keeps the calls in order across it; then commits it, as
 * cp_enc_batch_in does. */
__attribute__((noinline)) void cp_enc_commit_check(uint8_t *start, uint8_t first, uint8_t *p, int n, int calls) {
	cp_cal_recs = 0;
	uint32_t c = cp_crc_update(cp_crc_to(cp_pos), &first, 1);
	c = cp_crc_update(c, start + 1, (size_t)(p - start - 1));
	*p = TAG_CHECK;
	memcpy(p + 1, &c, 4);
	p += 5;
	uint64_t cfrom = cp_pos + (uint64_t)(p - start);
	int64_t tick, ns;
	cp_cal_read(&tick, &ns);
	cp_cal_last = tick;
	p = cp_code_cal(p, tick, ns);
	uint64_t end = cp_pos + (uint64_t)(p - start);
	cp_bend = end;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!cp_finished_enc) {
		cp_ncalls_next = cp_ncalls + (uint64_t)calls;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(start, first, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cp_ncalls = cp_ncalls_next; /* before cp_pos moves past the batch */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cp_crc = 0;
		cp_crc_from = cfrom;
		cp_pos = end;
		cp_nrec += (uint64_t)n;
	}
}

/* cp_enc_batch codes n records and commits them (code.h: cp_enc_batch_in). */
void cp_enc_batch(const cp_rec *recs, const cp_path *paths, int n) {
	if (n <= 0)
		return;
	cp_enc_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_enc_batch_in(recs, paths, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_enc_busy = 0;
}

/* ---- threads: blocks ---- */

/* cp_enc_code codes n records (whole calls, or the first part of one) into
 * e's scratch buffer; cp_enc_commit writes them as one block. Only e's
 * thread (or one that holds it out of the logger) calls them. */
int cp_enc_code(cp_enc *e, const cp_rec *recs, const cp_path *paths, int n) {
	if (n <= 0)
		return 1;
	size_t need = CP_FRAME + e->len + (size_t)n * CP_MAXREC;
	if (need > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		while (cap < need)
			cap *= 2;
		uint8_t *b = realloc(e->buf, cap);
		if (!b)
			return 0;
		e->buf = b;
		e->cap = cap;
	}
	uint8_t *p = e->buf + CP_FRAME + e->len;
	for (int i = 0; i < n; i++) {
		p = cp_code(e, p, &recs[i], paths ? &paths[i] : NULL, p);
		e->ncbuf += 1u - (uint32_t)cp_is_sub(recs[i].op);
	}
	e->len = (size_t)(p - (e->buf + CP_FRAME));
	e->nbuf += (uint32_t)n;
	return 1;
}

/* cp_claim reserves total bytes of the file for a block and makes sure
 * they are mapped; CP_NOROOM (and the log marked broken) if they cannot be. */
#define CP_NOROOM UINT64_MAX
static inline uint64_t cp_claim(size_t total) {
	uint64_t pos = __atomic_fetch_add(&cp_pos, (uint64_t)total, __ATOMIC_RELAXED);
	uint64_t end = pos + total + CP_TAILROOM;
	if (end > __atomic_load_n(&cp_avail, __ATOMIC_ACQUIRE) && !cp_grow(end)) {
		cp_set_broken();
		return CP_NOROOM;
	}
	return pos;
}

static inline void cp_copy(uint8_t *dst, const uint8_t *src, size_t n);

/* cp_publish writes a claimed block: the length before anything else (a
 * reader that finds the tag still zero skips the block by it), each byte
 * once, in order, then the rest, then the tag, which commits it. */
static inline void cp_publish(uint64_t pos, const uint8_t *blk, size_t total, int lenbytes) {
	uint8_t *dst = cp_map + pos;
	for (int i = 1; i <= lenbytes; i++)
		__atomic_store_n(&dst[i], blk[i], __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_copy(dst + 1 + lenbytes, blk + 1 + lenbytes, total - 1 - (size_t)lenbytes);
	__atomic_store_n(dst, blk[0], __ATOMIC_RELEASE);
}

/* cp_copy copies n bytes without a call for the small blocks of most
 * calls, never writing outside dst[0:n) (another thread's block may
 * follow). */
static inline void cp_copy(uint8_t *dst, const uint8_t *src, size_t n) {
	uint64_t a, b;
	if (n >= 8 && n <= 16) {
		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n < 8) {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	} else {
		memcpy(dst, src, n);
	}
}

/* cp_put_block claims room for the block blk[0:total) at the end of the
 * data and commits it there: the length after the tag first, then the
 * rest, then the tag. Returns the block's file offset, or 0 if it was
 * dropped. */
static inline uint64_t cp_put_block(const uint8_t *blk, size_t total, int lenbytes) {
	uint64_t pos = cp_claim(total);
	if (pos == CP_NOROOM)
		return 0;
	cp_publish(pos, blk, total, lenbytes);
	return pos;
}

/* cp_frame puts a block's frame (tag, length, stream) in front of the n
 * bytes of items at items, which has CP_FRAME bytes of room before it, and
 * returns the block's start; *total is its size, *lenbytes the length's. */
static inline uint8_t *cp_frame(uint8_t *items, size_t n, uint32_t stream, size_t *total, int *lenbytes) {
	int sl = uvlen(stream);
	uint64_t len = (uint64_t)sl + n;
	int ll = uvlen(len);
	uint8_t *b = items - sl - ll - 1;
	b[0] = TAG_BLOCK;
	uv(b + 1, len);
	uv(b + 1 + ll, stream);
	*total = (size_t)(1 + ll) + (size_t)len;
	*lenbytes = ll;
	return b;
}

/* cp_region_new claims a region for stream e with room for need bytes of
 * items at least, and commits its frame; it returns 0 if the file cannot
 * grow. */
static __attribute__((noinline)) int cp_region_new(cp_enc *e, size_t need) {
	if (e->rend > 0 && e->regsz < CP_REGION_MAX)
		e->regsz *= 2; /* the last one filled up: this thread writes much */
	int sl = uvlen(e->stream);
	size_t sz = e->regsz;
	if (sz < need + 1 + 5 + (size_t)sl)
		sz = need + 1 + 5 + (size_t)sl;
	int ll;
	for (;; sz++) { /* the length's uvarint counts itself out */
		ll = uvlen(sz);
		if (uvlen(sz - 1 - (size_t)ll) == ll)
			break;
	}
	uint64_t pos = cp_claim(sz);
	if (pos == CP_NOROOM)
		return 0;
	uint8_t hdr[1 + 10 + 10];
	hdr[0] = TAG_BLOCK;
	uv(hdr + 1, sz - 1 - (size_t)ll);
	uint8_t *end = uv(hdr + 1 + ll, e->stream);
	size_t hl = (size_t)(end - hdr);
	uint8_t *dst = cp_map + pos;
	for (size_t i = 1; i < hl; i++)
		__atomic_store_n(&dst[i], hdr[i], __ATOMIC_RELAXED);
	__atomic_store_n(dst, hdr[0], __ATOMIC_RELEASE);
	e->rpos = pos + hl;
	e->rend = pos + sz;
	return 1;
}

/* cp_regions_close closes every stream's region (the caller holds every
 * thread out of the logger): a CHECK covers their unfilled rests as zero,
 * and the calls after it go to regions after it. A region closed mostly
 * empty halves its thread's next one. */
static void cp_regions_close(void) {
	for (int i = 0; i < CP_MAXSTREAMS; i++) {
		cp_enc *s = __atomic_load_n(&cp_streams[i], __ATOMIC_ACQUIRE);
		if (!s)
			break;
		if (s->rend - s->rpos > s->regsz / 2 && s->regsz > CP_REGION_MIN)
			s->regsz /= 2;
		s->rpos = s->rend = 0;
	}
}

static inline void cp_enc_commit1(cp_enc *e) {
	if (e->len == 0)
		return;
	uint32_t n = e->nbuf, nc = e->ncbuf;
	size_t len = e->len;
	e->len = 0;
	e->nbuf = e->ncbuf = 0;
	if (cp_broken || cp_finished_enc || cp_efd < 0) {
		e->dropped += n;
		return;
	}
	if (len > e->rend - e->rpos && !cp_region_new(e, len)) {
		e->dropped += n;
		return;
	}
	/* the call's items, their first byte last: it commits them */
	const uint8_t *items = e->buf + CP_FRAME;
	uint8_t *dst = cp_map + e->rpos;
	cp_copy(dst + 1, items + 1, len - 1);
	__atomic_store_n(dst, items[0], __ATOMIC_RELEASE);
	e->rpos += len;
	e->nrec += n;
	e->ncalls += nc;
	e->ckrecs += n;
	if (__builtin_expect(e->cap > (4u << 20) && len < e->cap / 8, 0)) {
		/* a huge call is done: give its scratch memory back */
		free(e->buf);
		e->buf = NULL;
		e->cap = 0;
	}
}

void cp_enc_commit(cp_enc *e) { cp_enc_commit1(e); }

/* cp_enc_due says whether stream e (which just wrote a call that ended at
 * tick now) should write a CHECK and a calibration point. */
int cp_enc_due(cp_enc *e, int64_t now) {
	return now - cp_cal_last > cp_cal_every || e->ckrecs >= CP_CAL_RECS;
}

/* cp_enc_put codes n records, the end of a call (or all of it), and
 * commits the call as one block: cp_enc_code and cp_enc_commit in one, for
 * the calls' path. Returns cp_enc_due(e, now). */
int cp_enc_put(cp_enc *e, const cp_rec *recs, const cp_path *paths, int n, int64_t now) {
	if (n > 0 && CP_FRAME + e->len + (size_t)n * CP_MAXREC <= e->cap) {
		uint8_t *p = e->buf + CP_FRAME + e->len;
		for (int i = 0; i < n; i++) {
			p = cp_code(e, p, &recs[i], paths ? &paths[i] : NULL, p);
			e->ncbuf += 1u - (uint32_t)cp_is_sub(recs[i].op);
		}
		e->len = (size_t)(p - (e->buf + CP_FRAME));
		e->nbuf += (uint32_t)n;
	} else {
		cp_enc_code(e, recs, paths, n);
	}
	cp_enc_commit1(e);
	return now - cp_cal_last > cp_cal_every || e->ckrecs >= CP_CAL_RECS;
}

/* cp_enc_checkpoint writes a CHECK of everything since the last one and a
 * calibration point, in a block of stream e. The caller holds every thread
 * out of the logger, so every block claimed so far is committed. */
void cp_enc_checkpoint(cp_enc *e) {
	if (cp_broken || cp_finished_enc || cp_efd < 0)
		return;
	uint8_t buf[CP_FRAME + 64];
	uint8_t *items = buf + CP_FRAME, *p = items;
	*p = TAG_CHECK;
	p += 5;
	int64_t tick, ns;
	cp_cal_read(&tick, &ns);
	p = cp_code_cal(p, tick, ns);
	size_t total;
	int ll;
	uint8_t *blk = cp_frame(items, (size_t)(p - items), e->stream, &total, &ll);
	size_t hdr = (size_t)(items - blk); /* the frame, before the CHECK's tag */
	cp_regions_close();
	/* The room first, then the CRC up to it, the frame included. */
	uint64_t pos = cp_claim(total);
	if (pos == CP_NOROOM)
		return;
	uint32_t c = cp_crc_update(cp_crc_to(pos), blk, hdr);
	memcpy(items + 1, &c, 4);
	cp_publish(pos, blk, total, ll);
	cp_crc = 0;
	cp_crc_from = pos + hdr + 5;
	cp_cal_last = tick;
	for (int i = 0; i < CP_MAXSTREAMS; i++) {
		cp_enc *s = __atomic_load_n(&cp_streams[i], __ATOMIC_ACQUIRE);
		if (!s)
			break;
		s->ckrecs = 0;
	}
}

/* ---- chunks and the end ---- */

/* cp_enc_chunk appends a CHUNK item (from Go: the final clock point, a
 * module list); with threads, in a block of stream 0. */
static int cp_enc_chunk1(int kind, const void *payload, int len);

int cp_enc_chunk(int kind, const void *payload, int len) {
	cp_enc_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int ok = cp_enc_chunk1(kind, payload, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_enc_busy = 0;
	return ok;
}

static int cp_enc_chunk1(int kind, const void *payload, int len) {
	if (cp_broken || cp_efd < 0 || len < 0 || cp_finished_enc)
		return 0;
	if (cp_threads) {
		uint8_t *buf = malloc(CP_FRAME + 32 + (size_t)len);
		if (!buf)
			return 0;
		uint8_t *items = buf + CP_FRAME, *p = items;
		*p++ = TAG_CHUNK;
		p = uv(p, (uint64_t)kind);
		p = uv(p, (uint64_t)len);
		memcpy(p, payload, (size_t)len);
		p += len;
		size_t total;
		int ll;
		uint8_t *blk = cp_frame(items, (size_t)(p - items), 0, &total, &ll);
		uint64_t at = cp_put_block(blk, total, ll);
		free(buf);
		return at != 0;
	}
	size_t need = (size_t)len + 32;
	if (cp_pos + need + CP_TAILROOM > cp_avail && !cp_grow(cp_pos + need + CP_TAILROOM)) {
		cp_set_broken();
		return 0;
	}
	uint8_t *start = cp_map + cp_pos;
	uint8_t *p = start + 1;
	p = uv(p, (uint64_t)kind);
	p = uv(p, (uint64_t)len);
	memcpy(p, payload, (size_t)len);
	p += len;
	__atomic_store_n(start, (uint8_t)TAG_CHUNK, __ATOMIC_SEQ_CST);
	cp_pos += (uint64_t)(p - start);
	return 1;
}

/* cp_enc_end writes a calibration point, the trailer and, if checked, a
 * CHECK. It is async-signal-safe: the signal path calls it too. With one
 * stream, possibly while a batch is half coded (then it is skipped, or kept
 * if it got committed). With threads, checked says that the caller holds
 * every thread out of the logger (no block is half-written): otherwise the
 * trailer comes without a CHECK, and the reader keeps the records since the
 * last one unverified, as for a killed rank. With truncate (and, with
 * threads, checked), the file is cut to the end of the data and unmapped.
 * Returns the records dropped. */
uint64_t cp_enc_end(int status, int info, int truncate, int checked) {
	if (cp_efd < 0 || !cp_map)
		return 0;
	cp_finished_enc = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t nrec = cp_nrec, dropped = cp_dropped, ncalls = cp_ncalls;
	if (!cp_threads && cp_coding && __atomic_load_n(cp_map + cp_pos, __ATOMIC_ACQUIRE) != 0)
		ncalls = cp_ncalls_next; /* the batch interrupted got committed, cp_pos not past it yet (below) */
	for (int i = 0; cp_threads && i < CP_MAXSTREAMS; i++) {
		cp_enc *s = __atomic_load_n(&cp_streams[i], __ATOMIC_ACQUIRE);
		if (!s)
			break;
		nrec += s->nrec;
		ncalls += s->ncalls;
		dropped += s->dropped;
	}
	/* Static: the end is written once (cp_finished_enc), and its room
	 * for the unwrapped calls' counts would be much for a signal stack. */
	static uint8_t buf[CP_FRAME + 128 + CP_UW_ROOM];
	uint8_t *tmp = buf + CP_FRAME, *p = tmp;
	int64_t tick, ns;
	cp_cal_read(&tick, &ns);
	p = cp_code_cal(p, tick, ns);
	/* the counts of the calls not recorded (unwrapped.c), if any */
	size_t uwn;
	const uint8_t *uw = cp_uw_payload(&uwn);
	if (uwn > 0) {
		*p++ = TAG_CHUNK;
		p = uv(p, CP_CHUNK_UNWRAPPED);
		p = uv(p, uwn);
		memcpy(p, uw, uwn);
		p += uwn;
	}
	/* trailer: status u32, info i32, records u64, dropped u64, calls u64 */
	*p++ = TAG_CHUNK;
	*p++ = 4;
	*p++ = 32;
	uint32_t st = (uint32_t)status;
	int32_t in = info;
	memcpy(p, &st, 4);
	memcpy(p + 4, &in, 4);
	memcpy(p + 8, &nrec, 8);
	memcpy(p + 16, &dropped, 8);
	memcpy(p + 24, &ncalls, 8);
	p += 32;
	uint64_t pos, end;
	if (cp_threads) {
		uint8_t *chk = p;
		if (checked)
			p += 5;
		size_t total;
		int ll;
		uint8_t *blk = cp_frame(tmp, (size_t)(p - tmp), 0, &total, &ll);
		pos = __atomic_fetch_add(&cp_pos, (uint64_t)total, __ATOMIC_RELAXED);
		end = pos + total;
		if (!cp_room_signal(end))
			return dropped;
		if (checked) {
			uint32_t c = cp_crc_update(cp_crc_to(pos), blk, (size_t)(chk - blk));
			*chk = TAG_CHECK;
			memcpy(chk + 1, &c, 4);
		}
		uint8_t *dst = cp_map + pos;
		for (int i = 1; i <= ll; i++)
			__atomic_store_n(&dst[i], blk[i], __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memcpy(dst + 1 + ll, blk + 1 + ll, total - 1 - (size_t)ll);
		__atomic_store_n(dst, blk[0], __ATOMIC_RELEASE);
		truncate = truncate && checked;
	} else {
		pos = cp_pos;
		if (cp_coding) {
			/* A batch is being coded (this thread was interrupted in
			 * it): skip it unless it got committed. An encoder that
			 * resumes sees cp_finished_enc and does not commit. */
			uint8_t *at = cp_map + pos;
			if (__atomic_load_n(at, __ATOMIC_ACQUIRE) == 0) {
				uint32_t skip = (uint32_t)(cp_res - (pos + 5));
				memcpy(at + 1, &skip, 4);
				__atomic_store_n(at, (uint8_t)TAG_SKIP, __ATOMIC_RELEASE);
				pos = cp_res;
			} else {
				pos = cp_bend; /* the batch got committed */
			}
		}
		/* CHECK: the CRC of the file since the last one, then of tmp */
		uint32_t c = cp_crc_update(cp_crc_to(pos), tmp, (size_t)(p - tmp));
		*p++ = TAG_CHECK;
		memcpy(p, &c, 4);
		p += 4;
		end = pos + (uint64_t)(p - tmp);
		if (!cp_room_signal(end))
			return dropped;
		uint8_t *start = cp_map + pos;
		memcpy(start + 1, tmp + 1, (size_t)(p - tmp) - 1);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(start, tmp[0], __ATOMIC_RELEASE);
		cp_pos = end;
	}
	if (truncate) {
		munmap(cp_map, (size_t)cp_maplen);
		cp_map = NULL;
		if (ftruncate(cp_efd, (off_t)end) != 0) {
			/* the zero tail stays: the reader stops after the trailer */
		}
	}
	cp_efd = -1;
	cp_room = 0;
	return dropped;
}
