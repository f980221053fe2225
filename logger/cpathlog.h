/* cpathlog.h: the C half of the logger. The per-call wrappers (generated
 * into wrappers_gen.c from gen/mpi.sigs) and the runtime (runtime.c) share
 * these declarations. The hot path is pure C: Go runs only at MPI_Init, when
 * a call site needs a module logged, and at MPI_Finalize. */
#ifndef CPATHLOG_H
#define CPATHLOG_H

#include <mpi.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#include "ops_gen.h"

/* The runtime's symbols are the library's own: hidden, so that calls to
 * them are direct and can be inlined (the MPI entry points keep mpi.h's
 * default visibility). */
#pragma GCC visibility push(hidden)

/* One record: trace.Record's fields but its call path (cp_path, kept
 * beside it). Start/End hold raw clock ticks; the reader converts them to
 * ns. */
typedef struct cp_rec {
	int64_t start, end;
	uint64_t callsite, bytes;
	uint8_t op, flags;
	uint16_t thread;
	uint32_t comm;
	int32_t peer, tag, root;
	uint32_t count, seq, req;
} cp_rec;

/* Flags: keep in step with trace.Flags. */
/* A call path: the return addresses above the call site, innermost first
 * (CPATH_CALLDEPTH, at most CP_MAXDEPTH; trace.MaxCallDepth). */
#define CP_MAXDEPTH 8
typedef struct cp_path {
	uint8_t n;
	uint64_t pc[CP_MAXDEPTH];
} cp_path;

/* Threads that record at once, at most (trace.MaxStreams). */
#define CP_MAXSTREAMS 4096

#define CP_F_NEWREQ 1
#define CP_F_WILDCARD 2
#define CP_F_ANYTAG 4
#define CP_F_INPLACE 8
#define CP_F_ERROR 16
#define CP_F_REMOTE 32
#define CP_F_CANCELLED 64 /* ReqDone, a receive: cancelled */
#define CP_F_NULLREQS 64 /* a Wait/Test call given no request but MPI_REQUEST_NULL (trace.FlagNullRequests) */
#define CP_F_PERSISTENT 128

#define CP_PEER_NONE (-1)
#define CP_PEER_PROCNULL (-2)
#define CP_PEER_ANY (-3)
#define CP_PEER_UNKNOWN (-4)

/* End statuses: keep in step with trace.EndStatus. */
#define CP_END_FINALIZED 1
#define CP_END_ABORTED 2
#define CP_END_SIGNAL 3
#define CP_END_NOFINALIZE 4

/* Request kinds in the request table. */
#define CP_RK_SEND 1
#define CP_RK_RECV 2
#define CP_RK_COLL 3
#define CP_RK_OTHER 4

#define CP_TLS __thread __attribute__((tls_model("initial-exec")))

extern volatile int cp_on;      /* recording: after init, not paused, before finalize */
extern volatile int cp_logging; /* a log is open (paused or not): constructors are recorded */
extern int cp_inited;        /* MPI_Init has run through the logger */
extern int cp_use_tsc;       /* timestamps from rdtsc (invariant TSC), else clock_gettime */
extern CP_TLS int cp_depth;  /* >0 while inside the tool: calls are passed through unlogged */
extern CP_TLS void *cp_fp;   /* frame of the MPI entry point being recorded, for its call path */

static inline int64_t cp_mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t cp_now(void) {
	if (__builtin_expect(cp_use_tsc, 1))
		return (int64_t)__rdtsc();
	return cp_mono_ns();
}

#define CP_SKIP() (__builtin_expect(!cp_on || cp_depth, 0))
/* Some wrappers run even while MPI_Pcontrol(0) pauses logging: communicator
 * constructors are recorded (later calls need the communicator's name and
 * ranks), and completions keep the request table true without recording
 * (a stale entry would be matched to a later request reusing the handle). */
#define CP_SKIP_PAUSED() (__builtin_expect(!cp_logging || cp_depth, 0))
#define CP_ENTER() (cp_depth++)
#define CP_LEAVE() (cp_depth--)
#define CP_CALLSITE() ((uint64_t)(uintptr_t)__builtin_return_address(0))
/* The entry point's frame: its saved frame pointer and return address
 * start the call path. Taking it makes the function keep a frame pointer. */
#define CP_SETFP() (cp_fp = __builtin_frame_address(0))
/* After a call whose callee reads the caller's frame: not a tail call. */
#define CP_NOTAIL() __asm__ volatile("" ::: "memory")

/* Communicator table entry. */
typedef struct cp_comm {
	MPI_Comm h;
	uint32_t id;
	int size, rsize;      /* local size; remote size of an intercommunicator (0 else) */
	int32_t *world;       /* local rank -> world rank (NULL: identity, for MPI_COMM_WORLD) */
	int32_t *rworld;      /* remote rank -> world rank */
	int nsrc, ndst;       /* topology: in- and out-neighbours of this rank (0 without one) */
	int32_t *nbr;         /* their world ranks, sources then destinations (CP_PEER_PROCNULL kept) */
	uint32_t seq;         /* collectives so far (atomic) */
	int refs;             /* the table's (while the handle is live) + pending requests' (atomic) */
} cp_comm;

/* Request table entry. */
typedef struct cp_req {
	MPI_Request h;
	uint32_t id;
	uint8_t kind, persistent;
	uint32_t comm;   /* communicator index */
	cp_comm *c;
	int32_t peer, tag;
	uint64_t claim; /* the Wait/Test call that last claimed it */
	int32_t owner;  /* the thread state whose table holds it */
} cp_req;

/* Snapshot of the requests a Wait/Test call was given, taken before the
 * call because MPI resets completed handles to MPI_REQUEST_NULL. */
typedef struct cp_pre {
	int n;
	cp_req small[8];
	cp_req *ents;   /* n entries; id 0 where the handle was null or unknown */
	int nonnull;    /* the handles that were not MPI_REQUEST_NULL */
} cp_pre;

/* Runtime API used by the generated wrappers (runtime.c). */
cp_comm *cp_comm_get(MPI_Comm c);
int32_t cp_world_rank(cp_comm *c, int r, int remote);
uint64_t cp_bytes_slow(int count, MPI_Datatype t);
/* The sizes of predefined datatypes, cached (runtime.c): an entry is
 * handle << 16 | size, and only predefined handles are entered, so a hit
 * needs no other check. */
#define CP_TCACHE 64
#define CP_TCACHE_AT(a) ((size_t)(((a) >> 3) ^ ((a) >> 9)) & (CP_TCACHE - 1))
extern uint64_t cp_tcache[CP_TCACHE];
/* cp_bytes is count × the size of t, 0 for no data. */
static inline uint64_t cp_bytes(int count, MPI_Datatype t) {
	uintptr_t a = (uintptr_t)t;
	uint64_t e = __atomic_load_n(&cp_tcache[CP_TCACHE_AT(a)], __ATOMIC_RELAXED);
	if (__builtin_expect(e >> 16 == (uint64_t)a && count > 0, 1))
		return (uint64_t)count * (e & 0xFFFF);
	return cp_bytes_slow(count, t);
}
uint64_t cp_bytes_v(const int *counts, int n, MPI_Datatype t);
uint64_t cp_own_bytes(MPI_Comm c, const int *counts, MPI_Datatype t); /* counts[the rank in c] elements of t */
uint64_t cp_bytes_w(const int *counts, int n, const MPI_Datatype *t);
int cp_comm_npeers(MPI_Comm c); /* size of the group counts arrays refer to */
/* Neighbourhood collectives: bytes sent to the out-neighbours of comm's
 * topology that are not MPI_PROC_NULL (count each; counts[i]; counts[i]
 * of types[i]), and the in- (out=0) or out-degree (out=1). */
uint64_t cp_nbr_bytes(MPI_Comm comm, int count, MPI_Datatype t);
uint64_t cp_nbr_bytes_v(MPI_Comm comm, const int *counts, MPI_Datatype t);
uint64_t cp_nbr_bytes_w(MPI_Comm comm, const int *counts, const MPI_Datatype *t);
int cp_nbr_deg(MPI_Comm comm, int out);

void cp_after_init(int op, int64_t t0, uint64_t cs, int provided, int rc);
void cp_before_finalize(int64_t t0, uint64_t cs);
void cp_before_abort(int64_t t0, uint64_t cs, MPI_Comm comm, int errorcode);
void cp_pcontrol(int64_t t0, int64_t t1, uint64_t cs, int level);

void cp_p2p(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int peer, int tag,
	    uint64_t bytes, int rc);
void cp_local(int op, int64_t t0, int64_t t1, uint64_t cs, uint64_t bytes, int rc);
void cp_recv(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag,
	     const MPI_Status *st, int rc);
void cp_sendrecv(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int dest, int sendtag,
		 uint64_t sendbytes, int source, int recvtag, const MPI_Status *st, int rc);
void cp_newreq(int op, int64_t t0, int64_t t1, uint64_t cs, int kind, int persistent, MPI_Comm comm,
	       int peer, int tag, int root, uint64_t bytes, int flags, MPI_Request req, int rc);
/* A persistent collective's init (MPI_Neighbor_allgather_init, …): a
 * persistent request over comm; its starts take sequence numbers. */
void cp_coll_init(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, uint64_t bytes, MPI_Request req, int rc);
void cp_pre_reqs(cp_pre *p, int n, const MPI_Request *reqs);
void cp_pre_free(cp_pre *p);
void cp_start(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc);
void cp_reqfree(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc);
/* ndone completed requests; idx[k] is the position of the k-th (NULL: all
 * n in order); st[k] its status (NULL: none available). */
void cp_complete(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int ndone, const int *idx,
		 const MPI_Status *st, int rc);
void cp_coll(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int root, uint64_t bytes,
	     int flags, int rc);
void cp_comm_new(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm,
		 int rc);
void cp_comm_idup(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm,
		  MPI_Request req, int rc);
cp_comm *cp_comm_hold(MPI_Comm c);
void cp_comm_free(int op, int64_t t0, int64_t t1, uint64_t cs, cp_comm *c, int rc);
void cp_comm_dyn(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, MPI_Comm newcomm, int rc);
void cp_comm_get_parent(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm parent, int rc);
/* The Test family: as cp_complete, and idle when the call completed nothing. */
void cp_poll(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int ndone, const int *idx,
	     const MPI_Status *st, int rc, int idle);
void cp_iprobe(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag, int flag,
	       const MPI_Status *st, int rc);
/* Matched probes: a message found by MPI_Mprobe/MPI_Improbe is known by
 * its handle until MPI_Mrecv/MPI_Imrecv receives it (cp_msg_take, before
 * the call resets the handle). */
typedef struct {
	MPI_Message h;
	uint32_t id; /* the tool's message id, 0: unknown */
	uint32_t comm;
	cp_comm *c;
	int32_t peer, tag;
	uint64_t bytes;
} cp_msg;
void cp_mprobe(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, int source, int tag, int flag,
	       MPI_Message msg, const MPI_Status *st, int rc);
cp_msg cp_msg_take(MPI_Message h);
void cp_mrecv(int op, int64_t t0, int64_t t1, uint64_t cs, const cp_msg *m, const MPI_Status *st, int rc);
void cp_imrecv(int op, int64_t t0, int64_t t1, uint64_t cs, const cp_msg *m, MPI_Request req, int rc);
void cp_grequest_start(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Request req, int rc);
void cp_grequest_complete(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int rc);
void cp_partitioned(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int a, int b, int rc);
void cp_pready_list(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int n, const int *parts, int rc);
/* MPI_Parrived: one that found its partition not arrived (flag 0) joins
 * the thread's run of such calls on the same request and partition, as
 * the Test family's unproductive polls do (cp_poll). */
void cp_parrived(int op, int64_t t0, int64_t t1, uint64_t cs, cp_pre *p, int part, int flag, int rc);
/* MPI-IO: the file table maps a handle to its MPI_File_open's communicator;
 * coll: a collective over it (takes a sequence number). */
void cp_file_open(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, MPI_File fh, int rc);
void cp_file_close(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, int rc);
void cp_file_call(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int coll, int rc);
void cp_file_ireq(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int coll,
		  MPI_Request req, int rc);
/* Split collectives: the _begin creates a request of the tool's, kept in
 * the file's entry, which the _end completes. */
void cp_file_begin(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, uint64_t bytes, int rc);
void cp_file_end(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_File fh, int rc);
/* One-sided communication: the window table maps a window to the
 * communicator it was created over. coll: a collective over it (fence);
 * has_target: target is a rank of the window's group. */
void cp_win_new(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Comm comm, MPI_Win win, uint64_t bytes, int rc);
void cp_win_free(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int rc);
void cp_win_call(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int coll, int has_target, int target,
		 uint64_t bytes, int rc);
void cp_win_ireq(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int target, uint64_t bytes,
		 MPI_Request req, int rc);
void cp_win_group(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, MPI_Group group, int rc);
void cp_win_test(int op, int64_t t0, int64_t t1, uint64_t cs, MPI_Win win, int flag, int rc);

/* Scratch status arrays for calls given MPI_STATUSES_IGNORE. */
MPI_Status *cp_statuses(MPI_Status *user, int n, MPI_Status *small, int nsmall);
void cp_statuses_free(MPI_Status *st, MPI_Status *user, MPI_Status *small);

/* Fortran helpers (fortran sentinels are Open MPI's common blocks). */
const void *cp_f_buf(const void *buf);

/* Fortran PMPI entry points: weak, since libmpi_mpifh is only loaded into
 * Fortran programs, and only those call the Fortran wrappers. */
#pragma GCC visibility pop
#endif
