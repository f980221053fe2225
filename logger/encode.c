/* encode.c: the log's record stream, coded in C as calls complete and
 * written straight into a shared mapping of the log file.
 *
 * Each call's records (built by runtime.c in a small staging buffer) are
 * coded into stream items (docs/log-format.md, "Stream items"; the Go twin
 * is trace/stream.go) directly in a MAP_SHARED window of the file. The
 * kernel owns those pages: a rank killed by SIGKILL leaves every committed
 * call in the file (a run of unproductive polls is committed when it is
 * closed: runtime.c, cp_runs). A batch is committed by storing its first
 * byte last (the file is zero beyond the data, and the reader stops at a
 * zero tag), with a compare-and-swap that the signal path also uses, so
 * that a call interrupted half-coded is either whole in the log or
 * skipped.
 *
 * Times stay in clock ticks; calibration points (tick, ns) go into the
 * stream every ~100 ms and the reader converts. Nothing is compressed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpathlog.h"
#include "encode.h"

#define TAG_DEF 0xF0
#define TAG_CAL 0xF1
#define TAG_CHUNK 0xF2
#define TAG_SKIP 0xF3
#define TAG_CHECK 0xF4
#define NSLOTS 0xF0 /* slots 1..0xEF */
#define MAXSLOT 0xEF

#define M_PEER 1
#define M_TAG 2
#define M_BYTES 4
#define M_SEQ 8
#define M_REQ 16
#define M_FLAGS 32
#define M_COUNT 64
#define M_COMM 128
#define M_ROOT 256
#define M_THREAD 512

/* Worst-case bytes of one record's items (definition + record + times). */
#define CP_MAXREC 128
/* Room kept free at the end of the window for the end of the log (a
 * calibration point, a checksum, the final clock chunk and the trailer). */
#define CP_TAILROOM 512
/* Window size: the file grows and is mapped by this much at a time. */
#define CP_WINDOW (2u << 20)

typedef struct cp_slot {
	uint8_t defined, op, flags, kop;
	uint16_t thread;
	uint32_t comm;
	int32_t peer, tag, root;
	uint32_t count, seq, seqstep, req, reqstep, ksub;
	uint64_t bytes, callsite, kcs, used;
} cp_slot;

static cp_slot cp_slots[NSLOTS];
static uint64_t cp_clock, cp_parent_cs;
static uint32_t cp_subpos;
static int64_t cp_prev_end;

static int cp_efd = -1;
static uint8_t *cp_map;          /* the window */
static uint64_t cp_win_off;      /* file offset of cp_map[0] */
static uint64_t cp_win_end;      /* file offset where the window ends */
static volatile uint64_t cp_pos; /* file offset of the end of the committed data */
static volatile uint64_t cp_res; /* end of the reservation of the batch being coded */
static volatile uint64_t cp_bend; /* end of the batch being committed */
static volatile int cp_coding;   /* a batch is being coded */
static volatile int cp_finished_enc; /* the log has ended: commit nothing more */
static uint64_t cp_crc_from;     /* CRC-32C of [cp_crc_from, cp_pos) is cp_crc */
static uint32_t cp_crc;
static int64_t cp_cal_last, cp_cal_every;
/* Records since the last calibration point: the reader holds the records
 * between two points to interpolate, so they come at least this often. */
static uint32_t cp_cal_recs;
#define CP_CAL_RECS 16384
uint64_t cp_nrec, cp_dropped;
/* Set from the entry to the exit of cp_enc_batch and cp_enc_chunk (wider
 * than cp_coding: it covers growing the window), for the signal path. */
volatile int cp_enc_busy;
static int cp_broken; /* the file could not grow: records are dropped */

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

/* ---- coding ---- */

static inline uint8_t *uv(uint8_t *p, uint64_t v) {
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static inline int cp_is_sub(uint8_t op) { return op >= CP_OP_REQDONE && op <= CP_OP_MEMBER; }

/* cp_code codes r at p, except its first byte, which it puts in *first:
 * the caller stores it (last, for the first item of a batch). */
static inline uint8_t *cp_code(uint8_t *p, const cp_rec *r, uint8_t *first) {
	uint64_t kcs;
	uint32_t ksub;
	if (cp_is_sub(r->op)) {
		kcs = cp_parent_cs;
		cp_subpos++;
		ksub = cp_subpos < 64 ? cp_subpos : 64;
	} else {
		kcs = cp_parent_cs = r->callsite;
		cp_subpos = 0;
		ksub = 0;
	}
	uint64_t h = kcs * 0x9E3779B97F4A7C15ULL ^ (uint64_t)r->op * 0xC2B2AE3D27D4EB4FULL ^
		     (uint64_t)ksub * 0x165667B19E3779F9ULL;
	h ^= h >> 29;
	/* two candidate slots, 1..128 and 129..192: no division */
	unsigned s1 = 1 + (unsigned)(h & 127), s2 = 129 + (unsigned)((h >> 32) & 63), s;
	int def = 0;
	cp_slot *sl = &cp_slots[s1];
	cp_clock++;
	if (sl->defined && sl->kcs == kcs && sl->kop == r->op && sl->ksub == ksub && sl->callsite == r->callsite) {
		s = s1;
	} else if (sl = &cp_slots[s2], sl->defined && sl->kcs == kcs && sl->kop == r->op && sl->ksub == ksub &&
					     sl->callsite == r->callsite) {
		s = s2;
	} else {
		s = cp_slots[s2].used < cp_slots[s1].used ? s2 : s1;
		sl = &cp_slots[s];
		memset(sl, 0, sizeof *sl);
		sl->defined = 1;
		sl->op = sl->kop = r->op;
		sl->callsite = r->callsite;
		sl->kcs = kcs;
		sl->ksub = ksub;
		sl->peer = sl->root = -1;
		def = 1;
	}
	if (__builtin_expect(def, 0)) {
		*first = TAG_DEF;
		p++;
		*p++ = (uint8_t)s;
		*p++ = r->op;
		p = uv(p, r->callsite);
		*p++ = (uint8_t)s;
	} else {
		*first = (uint8_t)s;
		p++;
	}
	sl->used = cp_clock;
	uint8_t *mp = p; /* the mask: one byte unless comm, root or thread differ */
	p += 1;
	unsigned mask = 0;
	if (r->peer != sl->peer) {
		mask |= M_PEER;
		p = uv(p, zz(r->peer));
		sl->peer = r->peer;
	}
	if (r->tag != sl->tag) {
		mask |= M_TAG;
		p = uv(p, zz(r->tag));
		sl->tag = r->tag;
	}
	if (r->bytes != sl->bytes) {
		mask |= M_BYTES;
		p = uv(p, r->bytes);
		sl->bytes = r->bytes;
	}
	if (r->seq != sl->seq + sl->seqstep) {
		mask |= M_SEQ;
		uint32_t d = r->seq - sl->seq;
		p = uv(p, zz((int32_t)d));
		sl->seqstep = d;
	}
	sl->seq = r->seq;
	if (r->req != sl->req + sl->reqstep) {
		mask |= M_REQ;
		uint32_t d = r->req - sl->req;
		p = uv(p, zz((int32_t)d));
		sl->reqstep = d;
	}
	sl->req = r->req;
	if (r->flags != sl->flags) {
		mask |= M_FLAGS;
		p = uv(p, r->flags);
		sl->flags = r->flags;
	}
	if (r->count != sl->count) {
		mask |= M_COUNT;
		p = uv(p, r->count);
		sl->count = r->count;
	}
	if (__builtin_expect(r->comm != sl->comm || r->root != sl->root || r->thread != sl->thread, 0)) {
		/* a two-byte mask: move what follows it up by one */
		uint8_t tmp[3 * 10];
		uint8_t *q = tmp;
		if (r->comm != sl->comm) {
			mask |= M_COMM;
			q = uv(q, r->comm);
			sl->comm = r->comm;
		}
		if (r->root != sl->root) {
			mask |= M_ROOT;
			q = uv(q, zz(r->root));
			sl->root = r->root;
		}
		if (r->thread != sl->thread) {
			mask |= M_THREAD;
			q = uv(q, r->thread);
			sl->thread = r->thread;
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
	if (!cp_is_sub(r->op)) {
		p = uv(p, zz(r->start - cp_prev_end));
		p = uv(p, zz(r->end - r->start));
		cp_prev_end = r->end;
	}
	return p;
}

static uint8_t *cp_code_cal(uint8_t *p, int64_t tick, int64_t ns) {
	*p++ = TAG_CAL;
	p = uv(p, zz(tick));
	p = uv(p, zz(ns));
	return p;
}

/* cp_put_check commits a CHECK item at file offset cp_pos: the CRC-32C of
 * [cp_crc_from, cp_pos), then of extra (bytes of the same stretch not yet
 * in the file, which the caller puts before the CHECK; NULL for none). The
 * tag is stored last. */
static uint32_t cp_crc_to(uint64_t at) {
	return cp_crc_update(cp_crc, cp_map + (cp_crc_from - cp_win_off), (size_t)(at - cp_crc_from));
}

static void cp_put_check(void) {
	uint8_t *p = cp_map + (cp_pos - cp_win_off);
	uint32_t c = cp_crc_to(cp_pos);
	memcpy(p + 1, &c, 4);
	__atomic_store_n(p, (uint8_t)TAG_CHECK, __ATOMIC_SEQ_CST);
	cp_pos += 5;
	cp_crc = 0;
	cp_crc_from = cp_pos;
}

/* ---- the window ---- */

/* cp_grow maps a new window that starts at the page holding cp_pos and
 * holds at least need bytes after it. The CRC of the old window's data not
 * yet checked is closed with a CHECK first, so every window is checked on
 * its own. Returns 0 if the file cannot grow. */
static int cp_grow(size_t need) {
	if (cp_map && cp_pos > cp_crc_from)
		cp_put_check();
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t off = cp_pos & ~(uint64_t)(pg - 1);
	uint64_t len = (uint64_t)CP_WINDOW;
	while (len < (cp_pos - off) + need + CP_TAILROOM)
		len *= 2;
	/* Reserve the blocks, so that a full disk is an error here and not a
	 * SIGBUS when a page of the mapping is first written. */
	int rc = posix_fallocate(cp_efd, (off_t)off, (off_t)len);
	if (rc == EOPNOTSUPP || rc == EINVAL)
		rc = ftruncate(cp_efd, (off_t)(off + len)) ? errno : 0;
	if (rc != 0)
		return 0;
	void *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, cp_efd, (off_t)off);
	if (m == MAP_FAILED)
		return 0;
	/* Fault the whole window in, writable, now: one pass of page faults
	 * (and of the file system's page_mkwrite) here instead of one fault per
	 * page on the calls' path: 82-94 ns of CPU per self send/recv call
	 * instead of 87-147 in side-by-side runs. Linux ≥ 5.14; elsewhere the
	 * pages fault in as they are written. The window is resident: 2 MiB. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
	(void)madvise(m, (size_t)len, MADV_POPULATE_WRITE);
	if (cp_map)
		munmap(cp_map, (size_t)(cp_win_end - cp_win_off));
	cp_map = m;
	cp_win_off = off;
	cp_win_end = off + len;
	return 1;
}

/* cp_enc_open starts the stream at file offset off of fd (after the header
 * Go wrote); tick0 is the header's calibration tick, every is the number of
 * ticks between calibration points. */
int cp_enc_open(int fd, uint64_t off, int64_t tick0, int64_t every) {
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	cp_have_sse42 = (c >> 20) & 1;
	cp_crc_init();
	cp_efd = fd;
	cp_pos = cp_crc_from = off;
	cp_prev_end = tick0;
	cp_cal_last = tick0;
	cp_cal_every = every > 0 ? every : 1;
	return cp_grow(CP_MAXREC);
}

/* cp_enc_batch codes n records (whole calls) and commits them. Caller holds
 * the logger's lock. */
static void cp_enc_batch1(const cp_rec *recs, int n);

void cp_enc_batch(const cp_rec *recs, int n) {
	if (n <= 0)
		return;
	cp_enc_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_enc_batch1(recs, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_enc_busy = 0;
}

static void cp_enc_batch1(const cp_rec *recs, int n) {
	if (cp_broken || cp_efd < 0) {
		cp_dropped += (uint64_t)n;
		return;
	}
	size_t need = (size_t)(n + 2) * CP_MAXREC;
	if (cp_pos + need + CP_TAILROOM > cp_win_end && !cp_grow(need)) {
		cp_broken = 1;
		cp_dropped += (uint64_t)n;
		return;
	}
	cp_res = cp_pos + need;
	uint8_t *start = cp_map + (cp_pos - cp_win_off);
	cp_coding = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Everything but the batch's first byte, which commits it. */
	uint8_t first;
	uint8_t *p = cp_code(start, &recs[0], &first);
	for (int i = 1; i < n; i++) {
		uint8_t *at = p;
		p = cp_code(p, &recs[i], at);
	}
	uint64_t cfrom = 0;
	cp_cal_recs += (uint32_t)n;
	if (!cp_is_sub(recs[0].op) && (recs[0].end - cp_cal_last > cp_cal_every || cp_cal_recs >= CP_CAL_RECS)) {
		/* After the call: a CHECK of the stream so far (this call
		 * included), then a calibration point read now, after every time
		 * before it and before every time after it, so that the reader's
		 * interpolation keeps the calls in order across it. */
		cp_cal_recs = 0;
		uint32_t c = cp_crc_update(cp_crc_to(cp_pos), &first, 1);
		c = cp_crc_update(c, start + 1, (size_t)(p - start - 1));
		*p = TAG_CHECK;
		memcpy(p + 1, &c, 4);
		p += 5;
		cfrom = cp_pos + (uint64_t)(p - start);
		cp_cal_last = cp_now();
		p = cp_code_cal(p, cp_cal_last, cp_skew_ns(cp_use_tsc ? cp_mono_ns() : cp_cal_last));
	}
	uint64_t end = cp_pos + (uint64_t)(p - start);
	cp_bend = end;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Commit, unless the signal path has ended the log meanwhile (it then
	 * skipped this batch). A plain store: x86 keeps stores in order, and
	 * the signal path checks the byte. */
	if (!cp_finished_enc) {
		__atomic_store_n(start, first, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (cfrom) {
			cp_crc = 0;
			cp_crc_from = cfrom;
		}
		cp_pos = end;
		cp_nrec += (uint64_t)n;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_coding = 0;
}

/* cp_enc_chunk appends a CHUNK item (from Go: the final clock point, a
 * module list). */
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
	if (cp_broken || cp_efd < 0 || len < 0)
		return 0;
	size_t need = (size_t)len + 32;
	if (cp_pos + need + CP_TAILROOM > cp_win_end && !cp_grow(need)) {
		cp_broken = 1;
		return 0;
	}
	uint8_t *start = cp_map + (cp_pos - cp_win_off);
	uint8_t *p = start + 1;
	p = uv(p, (uint64_t)kind);
	p = uv(p, (uint64_t)len);
	memcpy(p, payload, (size_t)len);
	p += len;
	__atomic_store_n(start, (uint8_t)TAG_CHUNK, __ATOMIC_SEQ_CST);
	cp_pos += (uint64_t)(p - start);
	return 1;
}

/* cp_enc_end writes a calibration point, the trailer and a checksum. It is
 * async-signal-safe: the signal path calls it too, possibly while a batch
 * is half coded (then it is skipped, or kept if it got committed). With
 * truncate, the file is cut to the end of the data and unmapped. */
void cp_enc_end(int status, int info, int truncate) {
	if (cp_efd < 0 || !cp_map)
		return;
	cp_finished_enc = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t pos = cp_pos;
	if (cp_coding) {
		/* A batch is being coded (this thread was interrupted in it, or
		 * another thread is in it): skip it unless it got committed. An
		 * encoder that resumes sees cp_finished_enc and does not commit. */
		uint8_t *at = cp_map + (pos - cp_win_off);
		if (__atomic_load_n(at, __ATOMIC_ACQUIRE) == 0) {
			uint32_t skip = (uint32_t)(cp_res - (pos + 5));
			memcpy(at + 1, &skip, 4);
			__atomic_store_n(at, (uint8_t)TAG_SKIP, __ATOMIC_RELEASE);
			pos = cp_res;
		} else {
			pos = cp_bend; /* the batch got committed */
		}
	}
	if (pos + 128 > cp_win_end)
		return; /* no room left (the file could not grow) */
	uint8_t tmp[128], *p = tmp;
	int64_t tick = cp_now();
	p = cp_code_cal(p, tick, cp_skew_ns(cp_use_tsc ? cp_mono_ns() : tick));
	/* trailer: status u32, info i32, records u64, dropped u64 */
	*p++ = TAG_CHUNK;
	*p++ = 4;
	*p++ = 24;
	uint32_t st = (uint32_t)status;
	int32_t in = info;
	memcpy(p, &st, 4);
	memcpy(p + 4, &in, 4);
	memcpy(p + 8, &cp_nrec, 8);
	memcpy(p + 16, &cp_dropped, 8);
	p += 24;
	/* CHECK: the CRC of the file since the last one, then of tmp */
	uint32_t c = cp_crc_update(cp_crc_to(pos), tmp, (size_t)(p - tmp));
	*p++ = TAG_CHECK;
	memcpy(p, &c, 4);
	p += 4;
	uint8_t *start = cp_map + (pos - cp_win_off);
	memcpy(start + 1, tmp + 1, (size_t)(p - tmp) - 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(start, tmp[0], __ATOMIC_RELEASE);
	cp_pos = pos + (uint64_t)(p - tmp);
	if (truncate) {
		munmap(cp_map, (size_t)(cp_win_end - cp_win_off));
		cp_map = NULL;
		if (ftruncate(cp_efd, (off_t)cp_pos) != 0) {
			/* the zero tail stays: the reader stops after the trailer */
		}
	}
	cp_efd = -1;
}
