// The C side of package otf2: OTF2's callbacks fill, and its writers
// drain, arrays of cp_ev, so that Go crosses into C once per batch of
// events rather than once per event.
#ifndef CPATH_OTF2_H
#define CPATH_OTF2_H

#include <stdint.h>
#include <otf2/otf2.h>

// Event kinds, in both directions.
enum {
	CP_ENTER = 1,           // a: region
	CP_LEAVE,               // a: region
	CP_MPI_SEND,            // a: receiver, b: comm, c: tag, d: length
	CP_MPI_ISEND,           // as CP_MPI_SEND, e: request
	CP_MPI_ISEND_COMPLETE,  // a: request
	CP_MPI_IRECV_REQUEST,   // a: request
	CP_MPI_RECV,            // a: sender, b: comm, c: tag, d: length
	CP_MPI_IRECV,           // as CP_MPI_RECV, e: request
	CP_MPI_REQUEST_TEST,    // a: request
	CP_MPI_REQUEST_CANCELLED, // a: request
	CP_MPI_COLL_BEGIN,      //
	CP_MPI_COLL_END,        // a: collective op, b: comm, c: root, d: sent, e: received
	CP_NBC_REQUEST,         // a: request
	CP_NBC_COMPLETE,        // as CP_MPI_COLL_END, f: request
	CP_COMM_CREATE,         // a: comm
	CP_COMM_DESTROY,        // a: comm
	CP_RMA_WIN_CREATE,      // a: win
	CP_RMA_WIN_DESTROY,     // a: win
	CP_RMA_COLL_BEGIN,      //
	CP_RMA_COLL_END,        // a: collective op, b: sync level, c: win, d: root, e: sent, f: received
	CP_RMA_GROUP_SYNC,      // a: sync level, b: win, c: group
	CP_RMA_ACQUIRE_LOCK,    // a: win, b: remote, c: lock id, d: lock type
	CP_RMA_RELEASE_LOCK,    // a: win, b: remote, c: lock id
	CP_RMA_SYNC,            // a: win, b: remote, c: sync type
	CP_RMA_PUT,             // a: win, b: remote, c: bytes, d: matching id
	CP_RMA_GET,             // as CP_RMA_PUT
	CP_RMA_ATOMIC,          // a: win, b: remote, c: type, d: sent, e: received, f: matching id
	CP_RMA_OP_COMPLETE_BLOCKING,    // a: win, b: matching id
	CP_RMA_OP_COMPLETE_NONBLOCKING, // a: win, b: matching id
	CP_PARAM_UINT,          // a: parameter, b: value
	CP_METRIC,              // a: metric (instance or class), b: the one uint64 value
	CP_PROGRAM_BEGIN,       // a: program name (string)
	CP_NKINDS
};

// Events read but not handed to Go (cpath has no meaning for them):
// counted by kind, CP_SKIP_* indexing cp_reader.skipped.
enum {
	CP_SKIP_BUFFER_FLUSH, CP_SKIP_MEASUREMENT_ON_OFF, CP_SKIP_METRIC, CP_SKIP_PARAMETER,
	CP_SKIP_PROGRAM_END, CP_SKIP_THREAD, CP_SKIP_OMP, CP_SKIP_CALLING_CONTEXT, CP_SKIP_IO,
	CP_SKIP_RMA_OTHER, CP_SKIP_UNKNOWN, CP_NSKIP
};

// The attributes cpath reads and writes on events (docs/otf2.md): bit i
// of cp_ev.amask says av[i] holds attribute i.
enum {
	CP_A_SEQ, CP_A_FLAGS, CP_A_POLLS, CP_A_REQ, CP_A_PEER, CP_A_TAG, CP_A_BYTES,
	CP_A_ROOT, CP_A_COMM, CP_A_CRITICAL, CP_A_SCL, CP_A_OFFSET, CP_NATTR
};

typedef struct {
	uint64_t time;
	uint64_t a, b, c, d, e, f;
	uint32_t kind;
	uint32_t amask;
	uint64_t av[CP_NATTR];
} cp_ev;

// cp_reader reads one location's events.
typedef struct {
	OTF2_Reader* reader;
	OTF2_EvtReader* evt;
	cp_ev* buf;
	int n, cap;
	uint32_t attr_id[CP_NATTR]; // global attribute ids, OTF2_UNDEFINED_ATTRIBUTE if absent
	uint32_t own_metric;        // the critical-path metric of an archive cpath wrote (not counted as skipped)
	uint64_t skipped[CP_NSKIP];
	// The clock offsets of the location's local definitions.
	uint64_t off_time[64];
	int64_t off_value[64];
	double off_stddev[64];
	int noff;
	uint64_t noff_all;
} cp_reader;

int cp_reader_open(cp_reader* r, const char* anchor, uint64_t location, cp_ev* buf, int cap);
int cp_reader_read(cp_reader* r, uint64_t* nread);
void cp_reader_close(cp_reader* r);

// cp_writer writes one location's events.
typedef struct {
	OTF2_EvtWriter* evt;
	OTF2_AttributeList* attrs;
	uint32_t attr_id[CP_NATTR];
} cp_writer;

int cp_write(cp_writer* w, const cp_ev* evs, int n);

// Errors: OTF2's messages go to a per-thread buffer, not stderr.
void cp_quiet(void);
const char* cp_last_error(void);
void cp_clear_error(void);

// The global definitions, handed to Go one at a time (cpDef).
int cp_read_defs(const char* anchor, uintptr_t handle, uint64_t* trace_id, char* creator, int creator_len);

// Writing an archive.
OTF2_Archive* cp_archive_create(const char* dir, const char* name);
OTF2_EvtWriter* cp_archive_evt_writer(OTF2_Archive* a, uint64_t location);
int cp_archive_close_evt_writer(OTF2_Archive* a, OTF2_EvtWriter* w);
int cp_def_locprop_u64(OTF2_GlobalDefWriter* w, uint64_t loc, uint32_t name, uint64_t v);

#endif
