/* code.h: the coder of records into stream items (docs/log-format.md,
 * "Records in the stream"; encode.c owns the stream). Inline here, so that
 * the calls' path (runtime.c's cp_end) codes a call's records without a
 * call; what is rare (a slot defined, a field not predicted, the file
 * grown, a CHECK) is out of line in encode.c. */
#ifndef CPATH_CODE_H
#define CPATH_CODE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cpathlog.h"
#include "encode.h"

#pragma GCC visibility push(hidden)

#define TAG_DEF 0xF0
#define TAG_CAL 0xF1
#define TAG_CHUNK 0xF2
#define TAG_SKIP 0xF3
#define TAG_CHECK 0xF4
#define TAG_BLOCK 0xF5
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
#define M_PATH 1024

/* Worst-case bytes of one record's items (definition, record, times, a
 * call path of CP_MAXDEPTH addresses). */
#define CP_MAXREC 192
/* Room kept free at the end of the file for the end of the log (a
 * calibration point, a checksum, the final clock chunk and the trailer). */
#define CP_TAILROOM 512

/* A slot's prediction of its next record's fields: Seq and Req are the
 * last ones plus their steps, the others the last ones. */
typedef struct cp_pred {
	uint64_t bytes;
	uint8_t op, flags;
	uint16_t thread;
	uint32_t comm;
	int32_t peer, tag, root;
	uint32_t count, seq, req;
} cp_pred;

/* A slot: one cache line of what every record coded against it reads. Its
 * key is CP_KEY(op, position among the sub-records) with the length of its
 * last call path in bits 16-19 (0: undefined); kcs the call site, for a
 * sub-record its call's. */
typedef struct cp_slot {
	cp_pred p;
	uint32_t seqstep, reqstep;
	uint64_t key, kcs;
} __attribute__((aligned(64))) cp_slot;
#define CP_KEY(op, ksub) ((uint64_t)(op) | (uint64_t)(ksub) << 8 | 1ULL << 63)
#define CP_KEY_NPATH(k) ((int)((k) >> 16 & 0xF))
#define CP_KEY_MASK (~(0xFULL << 16))
_Static_assert(sizeof(cp_slot) == 64, "a slot is one cache line");

/* cp_enc is one stream's coding state (the Go twin's encoder). */
struct cp_enc {
	cp_slot slots[NSLOTS];
	uint64_t used[NSLOTS]; /* when each slot was defined, by clock */
	uint64_t path[NSLOTS][CP_MAXDEPTH]; /* each slot's last call path */
	uint64_t clock, parent_cs;
	uint32_t subpos;
	int64_t prev_end;
	uint32_t stream;
	/* threads: the items of the call being coded, behind CP_FRAME bytes
	 * of room for the block's frame */
	uint8_t *buf;
	size_t cap, len;
	uint32_t nbuf;    /* records in buf */
	uint32_t ncbuf;   /* calls in buf: its records but sub-records */
	uint32_t ckrecs;  /* records since the last CHECK */
	uint64_t nrec, ncalls, dropped;
	/* threads: the stream's region, a block claimed ahead that its calls
	 * fill one after another: the file from rpos to rend is free */
	uint64_t rpos, rend;
	uint32_t regsz; /* the next region's size */
};

static inline uint8_t *uv(uint8_t *p, uint64_t v) {
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline int uvlen(uint64_t v) {
	int n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* cp_uvf is uv for the varints of every record (its times): without a
 * branch on the value below 2^28 (a time's varint length varies from call
 * to call: a branch on it is mispredicted), one 8-byte store whose bytes
 * past the varint are zero. The caller has 8 bytes of room; the zeros land
 * where the next item goes, or on the zero tail of the data. */
extern uint8_t cp_uvlen[64];   /* by leading zeros: bytes of the uvarint */
extern uint32_t cp_uvcont[64]; /* by leading zeros: its continuation bits */

/* Whether PDEP is fast and LZCNT there (cp_enc_open): one instruction
 * each for the spreading and the length below. */
extern int cp_fast_pdep;

static inline uint8_t *cp_uvf(uint8_t *p, uint64_t v) {
	if (__builtin_expect(v >= (1u << 28), 0))
		return uv(p, v);
	uint64_t x, lz;
	if (__builtin_expect(cp_fast_pdep, 1)) {
		__asm__("pdep %2, %1, %0" : "=r"(x) : "r"(v), "r"((uint64_t)0x7F7F7F7F));
		__asm__("lzcnt %1, %0" : "=r"(lz) : "r"(v | 1));
	} else {
		x = (v & 0x7F) | (v & 0x3F80) << 1 | (v & 0x1FC000) << 2 | (v & 0xFE00000) << 3;
		lz = (uint64_t)__builtin_clzll(v | 1);
	}
	x |= cp_uvcont[lz];
	memcpy(p, &x, 8);
	return p + cp_uvlen[lz];
}

/* Sub-records (no times of their own; they extend the timed record
 * before them), by op. */
extern uint8_t cp_subop[256];

static inline int cp_is_sub(uint8_t op) { return cp_subop[op]; }

/* cp_code_fields codes the fields of r that its slot does not predict:
 * the mask at p, then their values; it makes them the slot's. */
uint8_t *cp_code_fields(cp_enc *e, unsigned s, uint8_t *p, const cp_rec *r, const cp_path *path);

/* cp_code_def picks the slot for a record of key key at call site kcs that
 * neither of its two candidate slots holds (the one defined longer ago), and
 * resets it as a DEF item does. */
unsigned cp_code_def(cp_enc *e, unsigned s1, unsigned s2, uint64_t key, uint64_t kcs);

/* cp_code codes r (with its call path, NULL for none) at p, except its
 * first byte, which it puts in *first: the caller stores it (last, for the
 * first item of a batch). The caller has CP_MAXREC bytes of room. */
static inline __attribute__((always_inline)) uint8_t *cp_code(cp_enc *e, uint8_t *p, const cp_rec *r,
							       const cp_path *path, uint8_t *first) {
	uint64_t kcs;
	uint32_t ksub;
	int sub = cp_is_sub(r->op);
	if (__builtin_expect(sub, 0)) {
		kcs = e->parent_cs;
		e->subpos++;
		ksub = e->subpos < 64 ? e->subpos : 64;
		path = NULL;
	} else {
		kcs = e->parent_cs = r->callsite;
		e->subpos = 0;
		ksub = 0;
	}
	/* two candidate slots, 1..128 and 129..192, from the top bits of one
	 * multiplicative hash: no division */
	uint64_t h = (kcs ^ (uint64_t)r->op << 48 ^ (uint64_t)ksub << 56) * 0x9E3779B97F4A7C15ULL;
	unsigned s1 = 1 + (unsigned)(h >> 57), s2 = 129 + (unsigned)(h >> 51 & 63), s = s1;
	uint64_t key = CP_KEY(r->op, ksub);
	cp_slot *sl = &e->slots[s1];
	if (__builtin_expect(((sl->key ^ key) & CP_KEY_MASK) | (sl->kcs ^ kcs), 0)) {
		sl = &e->slots[s = s2];
		if (((sl->key ^ key) & CP_KEY_MASK) | (sl->kcs ^ kcs)) {
			/* DEF: slot, op, call site, then the record against it */
			sl = &e->slots[s = cp_code_def(e, s1, s2, key, kcs)];
			*first = TAG_DEF;
			p++;
			*p++ = (uint8_t)s;
			*p++ = r->op;
			p = uv(p, r->callsite);
			*p++ = (uint8_t)s;
			goto slotted;
		}
	}
	*first = (uint8_t)s;
	p++;
slotted:
	/* Every field as predicted, and the same call path: a zero mask.
	 * Compared field by field, each load as wide as the store that wrote
	 * the field: a wider load over several fields just stored would wait
	 * for the stores to reach the cache (no store forwarding). */
	const cp_pred *q = &sl->p;
	uint64_t d = (r->bytes ^ q->bytes) | (uint64_t)((r->flags ^ q->flags) | (r->thread ^ q->thread)) |
		     (uint64_t)((r->comm ^ q->comm) | (uint32_t)(r->peer ^ q->peer) | (uint32_t)(r->tag ^ q->tag) |
				(uint32_t)(r->root ^ q->root) | (r->count ^ q->count) | (r->seq ^ q->seq) | (r->req ^ q->req));
	if (__builtin_expect(d == 0 && CP_KEY_NPATH(sl->key) == 0 && (!path || !path->n), 1)) {
		*p++ = 0;
		sl->p.seq += sl->seqstep;
		sl->p.req += sl->reqstep;
	} else {
		cp_rec copy = *r; /* r itself stays in registers (the calls' path builds it there) */
		p = cp_code_fields(e, s, p, &copy, path);
	}
	if (__builtin_expect(!sub, 1)) {
		p = cp_uvf(p, zz(r->start - e->prev_end));
		p = cp_uvf(p, zz(r->end - r->start));
		e->prev_end = r->end;
	}
	return p;
}

/* ---- one stream (no MPI_THREAD_MULTIPLE): its state, in encode.c ---- */

extern cp_enc *cp_enc0; /* stream 0 */
extern uint8_t *cp_map; /* the file, from offset 0 */
/* One stream: the end of the committed data. Threads: the end of the
 * space claimed (atomic): on a cache line of its own, so that the threads'
 * adds do not evict what they only read (cp_avail, cp_cal_last, …). */
extern volatile uint64_t cp_pos_line[8];
#define cp_pos (cp_pos_line[0])
/* One stream: a batch's reservation may end up to here (the file reserved
 * less the tail room); 0 while records cannot be written (no log, or a
 * file that could not grow), so that one compare sends every batch that
 * cannot simply be coded to cp_enc_room. */
extern volatile uint64_t cp_room;
extern volatile uint64_t cp_res;  /* end of the reservation of the batch being coded */
extern volatile uint64_t cp_bend; /* end of the batch being committed */
extern volatile int cp_coding;    /* a batch is being coded */
extern volatile int cp_finished_enc; /* the log has ended: commit nothing more */
extern volatile int64_t cp_cal_last;
extern int64_t cp_cal_every;
/* Records since the last calibration point: the reader holds the records
 * between two points to interpolate, so they come at least this often (per
 * thread, with threads). */
extern uint32_t cp_cal_recs;
#define CP_CAL_RECS 16384
/* Calls committed, for the trailer; cp_ncalls_next is the count with the
 * batch being committed, set before its first byte is stored: a signal
 * that finds the batch committed takes it (encode.c's cp_enc_end). */
extern uint64_t cp_nrec, cp_ncalls, cp_ncalls_next;

int cp_enc_room(int n, uint64_t end);
void cp_enc_commit_check(uint8_t *start, uint8_t first, uint8_t *p, int n, int calls);

/* cp_enc_batch_gen codes n ≥ 1 records (whole calls; paths[i] is record i's
 * call path, paths NULL for none), or, with a set, the two records a and
 * b (calls of one record, with call paths pa and pb, NULL for none), and
 * commits them: cp_enc_batch, inline for the calls' path. One thread at a
 * time, which tells the signal path that it is in the logger (runtime.c's
 * cp_held, or cp_enc_busy). */
static inline __attribute__((always_inline)) void cp_enc_batch_gen(const cp_rec *recs, const cp_path *paths, int n,
								    const cp_rec *a, const cp_rec *b, const cp_path *pa,
								    const cp_path *pb) {
	uint64_t pos = cp_pos;
	size_t need = (size_t)(n + 2) * CP_MAXREC;
	if (__builtin_expect(pos + need + CP_TAILROOM > cp_room, 0) && !cp_enc_room(n, pos + need + CP_TAILROOM))
		goto out;
	cp_res = pos + need;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_coding = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A signal that came before cp_coding was set ended the log at pos. */
	if (__builtin_expect(cp_finished_enc, 0))
		goto done;
	{
		/* Everything but the batch's first byte, which commits it. */
		cp_enc *e = cp_enc0;
		uint8_t *start = cp_map + pos, first;
		const cp_rec *r0 = a ? a : &recs[0];
		uint8_t *p;
		int calls; /* for the trailer, which lets the analyzer place them unread */
		if (a) {
			p = cp_code(e, start, a, pa, &first);
			uint8_t *at = p;
			p = cp_code(e, p, b, pb, at);
			calls = 2 - cp_is_sub(a->op) - cp_is_sub(b->op);
		} else {
			p = cp_code(e, start, &recs[0], paths ? &paths[0] : NULL, &first);
			calls = 1 - cp_is_sub(recs[0].op);
			for (int i = 1; i < n; i++) {
				uint8_t *at = p;
				p = cp_code(e, p, &recs[i], paths ? &paths[i] : NULL, at);
				calls += 1 - cp_is_sub(recs[i].op);
			}
		}
		cp_cal_recs += (uint32_t)n;
		if (__builtin_expect(r0->end - cp_cal_last > cp_cal_every || cp_cal_recs >= CP_CAL_RECS, 0) &&
		    !cp_is_sub(r0->op)) {
			cp_enc_commit_check(start, first, p, n, calls);
			goto done;
		}
		uint64_t end = pos + (uint64_t)(p - start);
		cp_bend = end;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* Commit, unless the signal path has ended the log meanwhile (it
		 * then skipped this batch). A plain store: x86 keeps stores in
		 * order, and the signal path checks the byte. */
		if (__builtin_expect(!cp_finished_enc, 1)) {
			cp_ncalls_next = cp_ncalls + (uint64_t)calls;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			__atomic_store_n(start, first, __ATOMIC_RELEASE);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			cp_ncalls = cp_ncalls_next; /* before cp_pos moves past the batch */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			cp_pos = end;
			cp_nrec += (uint64_t)n;
		}
	}
done:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cp_coding = 0;
out:;
}

/* cp_enc_batch_pair codes a then b (calls of one record, without call
 * paths) in one batch and commits them (cp_enc_batch_gen). */
static inline __attribute__((always_inline)) void cp_enc_batch_pair(const cp_rec *a, const cp_rec *b) {
	cp_enc_batch_gen(NULL, NULL, 2, a, b, NULL, NULL);
}

/* cp_enc_batch_pair_paths is cp_enc_batch_pair with the calls' paths. */
static inline __attribute__((always_inline)) void cp_enc_batch_pair_paths(const cp_rec *a, const cp_path *pa, const cp_rec *b,
									   const cp_path *pb) {
	cp_enc_batch_gen(NULL, NULL, 2, a, b, pa, pb);
}

/* cp_enc_batch_in codes n ≥ 1 records and commits them (cp_enc_batch_gen). */
static inline __attribute__((always_inline)) void cp_enc_batch_in(const cp_rec *recs, const cp_path *paths, int n) {
	cp_enc_batch_gen(recs, paths, n, NULL, NULL, NULL, NULL);
}

#pragma GCC visibility pop
#endif
