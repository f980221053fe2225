// Reading an OTF2 archive: the global definitions go to Go one by one
// (cpDef), a location's events into an array of cp_ev by the batch.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cotf2.h"
#include "_cgo_export.h"

// ---- errors ----

static __thread char cp_err[1024];

static OTF2_ErrorCode cp_on_error(void* ud, const char* file, uint64_t line, const char* fn,
                                  OTF2_ErrorCode code, const char* fmt, va_list va) {
	(void)ud; (void)file; (void)line; (void)fn;
	// The first error says what went wrong; those after it, what gave up.
	if (cp_err[0]) return code;
	char msg[768];
	msg[0] = 0;
	if (fmt) vsnprintf(msg, sizeof msg, fmt, va);
	snprintf(cp_err, sizeof cp_err, "%s%s%s", OTF2_Error_GetDescription(code), msg[0] ? ": " : "", msg);
	return code;
}

void cp_quiet(void) { OTF2_Error_RegisterCallback(cp_on_error, NULL); }
const char* cp_last_error(void) { return cp_err; }
void cp_clear_error(void) { cp_err[0] = 0; }

// ---- global definitions ----

// Kinds of cpDef calls.
enum {
	CP_DEF_STRING = 1, CP_DEF_CLOCK, CP_DEF_STN, CP_DEF_LG, CP_DEF_LOC, CP_DEF_REGION, CP_DEF_GROUP,
	CP_DEF_COMM, CP_DEF_INTERCOMM, CP_DEF_ATTR, CP_DEF_PARAM, CP_DEF_RMAWIN, CP_DEF_LOCPROP, CP_DEF_SCL,
	CP_DEF_PARADIGM
};

#define DEF(kind, id, a, b, c, d, e, f, s, m, n) \
	(cpDef((uintptr_t)ud, kind, id, a, b, c, d, e, f, (char*)(s), (uint64_t*)(m), n) ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS)

static OTF2_CallbackCode d_string(void* ud, OTF2_StringRef self, const char* s) {
	return DEF(CP_DEF_STRING, self, 0, 0, 0, 0, 0, 0, s, NULL, 0);
}
static OTF2_CallbackCode d_clock(void* ud, uint64_t res, uint64_t off, uint64_t len, uint64_t rt) {
	return DEF(CP_DEF_CLOCK, 0, res, off, len, rt, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_stn(void* ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                               OTF2_SystemTreeNodeRef parent) {
	return DEF(CP_DEF_STN, self, name, cls, parent, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_lg(void* ud, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType t,
                              OTF2_SystemTreeNodeRef parent, OTF2_LocationGroupRef creator) {
	(void)creator;
	return DEF(CP_DEF_LG, self, name, t, parent, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_loc(void* ud, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType t,
                               uint64_t nev, OTF2_LocationGroupRef group) {
	return DEF(CP_DEF_LOC, self, name, t, nev, group, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_region(void* ud, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
                                  OTF2_StringRef descr, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                  OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin, uint32_t end) {
	(void)descr; (void)flags; (void)end;
	return DEF(CP_DEF_REGION, self, name, canonical, role, paradigm, file, begin, NULL, NULL, 0);
}
static OTF2_CallbackCode d_group(void* ud, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType t,
                                 OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n, const uint64_t* members) {
	return DEF(CP_DEF_GROUP, self, name, t, paradigm, flags, 0, 0, NULL, members, n);
}
static OTF2_CallbackCode d_comm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                                OTF2_CommRef parent, OTF2_CommFlag flags) {
	(void)flags;
	return DEF(CP_DEF_COMM, self, name, group, parent, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_intercomm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef a,
                                     OTF2_GroupRef b, OTF2_CommRef common, OTF2_CommFlag flags) {
	(void)flags;
	return DEF(CP_DEF_INTERCOMM, self, name, a, b, common, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_attr(void* ud, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef descr,
                                OTF2_Type t) {
	(void)descr;
	return DEF(CP_DEF_ATTR, self, name, t, 0, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_param(void* ud, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType t) {
	return DEF(CP_DEF_PARAM, self, name, t, 0, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_rmawin(void* ud, OTF2_RmaWinRef self, OTF2_StringRef name, OTF2_CommRef comm,
                                  OTF2_RmaWinFlag flags) {
	(void)flags;
	return DEF(CP_DEF_RMAWIN, self, name, comm, 0, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_locprop(void* ud, OTF2_LocationRef loc, OTF2_StringRef name, OTF2_Type t,
                                   OTF2_AttributeValue v) {
	return DEF(CP_DEF_LOCPROP, loc, name, t, v.uint64, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_scl(void* ud, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t line) {
	return DEF(CP_DEF_SCL, self, file, line, 0, 0, 0, 0, NULL, NULL, 0);
}
static OTF2_CallbackCode d_paradigm(void* ud, OTF2_Paradigm p, OTF2_StringRef name, OTF2_ParadigmClass cls) {
	return DEF(CP_DEF_PARADIGM, p, name, cls, 0, 0, 0, 0, NULL, NULL, 0);
}

int cp_read_defs(const char* anchor, uintptr_t ud, uint64_t* trace_id, char* creator, int creator_len) {
	cp_clear_error();
	OTF2_Reader* rd = OTF2_Reader_Open(anchor);
	if (!rd) return -1;
	int ret = -1;
	OTF2_GlobalDefReaderCallbacks* cb = NULL;
	if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS) goto out;
	char* cr = NULL;
	if (OTF2_Reader_GetCreator(rd, &cr) == OTF2_SUCCESS && cr) {
		snprintf(creator, creator_len, "%s", cr);
		free(cr);
	}
	OTF2_Reader_GetTraceId(rd, trace_id);
	OTF2_GlobalDefReader* gd = OTF2_Reader_GetGlobalDefReader(rd);
	if (!gd) goto out;
	cb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, d_string);
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, d_clock);
	OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, d_stn);
	OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, d_lg);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, d_loc);
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, d_region);
	OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, d_group);
	OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, d_comm);
	OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, d_intercomm);
	OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, d_attr);
	OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, d_param);
	OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, d_rmawin);
	OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cb, d_locprop);
	OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(cb, d_scl);
	OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(cb, d_paradigm);
	if (OTF2_Reader_RegisterGlobalDefCallbacks(rd, gd, cb, (void*)ud) != OTF2_SUCCESS) goto out;
	uint64_t n = 0;
	if (OTF2_Reader_ReadAllGlobalDefinitions(rd, gd, &n) != OTF2_SUCCESS) goto out;
	ret = 0;
out:
	if (cb) OTF2_GlobalDefReaderCallbacks_Delete(cb);
	OTF2_Reader_Close(rd);
	return ret;
}

// ---- a location's events ----

// next is the slot for the next event, NULL when the batch is full (the
// reader asks for no more events than there are slots).
static cp_ev* next(void* ud, uint64_t time) {
	cp_reader* r = ud;
	if (r->n >= r->cap) return NULL;
	cp_ev* e = &r->buf[r->n++];
	// Not the attribute values: Go reads only those amask names.
	e->time = time;
	e->a = e->b = e->c = e->d = e->e = e->f = 0;
	e->amask = 0;
	return e;
}

// attrs copies the cpath attributes (and the source code location) of an
// event into e.
static void attrs(cp_reader* r, cp_ev* e, OTF2_AttributeList* l) {
	if (!l) return;
	// By index: a lookup by id of an attribute the list lacks is an
	// error, which OTF2 formats (and serialises) for its error callback.
	uint32_t n = OTF2_AttributeList_GetNumberOfElements(l);
	for (uint32_t k = 0; k < n; k++) {
		OTF2_AttributeRef id;
		OTF2_Type t;
		OTF2_AttributeValue v;
		if (OTF2_AttributeList_GetAttributeByIndex(l, k, &id, &t, &v) != OTF2_SUCCESS) continue;
		int i = 0;
		while (i < CP_NATTR && r->attr_id[i] != id) i++;
		if (i == CP_NATTR) continue;
		uint64_t x;
		switch (t) {
		case OTF2_TYPE_UINT8: x = v.uint8; break;
		case OTF2_TYPE_UINT16: x = v.uint16; break;
		case OTF2_TYPE_UINT32: x = v.uint32; break;
		case OTF2_TYPE_INT8: x = (uint64_t)(int64_t)v.int8; break;
		case OTF2_TYPE_INT16: x = (uint64_t)(int64_t)v.int16; break;
		case OTF2_TYPE_INT32: x = (uint64_t)(int64_t)v.int32; break;
		case OTF2_TYPE_INT64: x = (uint64_t)v.int64; break;
		case OTF2_TYPE_COMM: x = v.commRef; break;
		case OTF2_TYPE_SOURCE_CODE_LOCATION: x = v.sourceCodeLocationRef; break;
		default: x = v.uint64;
		}
		e->amask |= 1u << i;
		e->av[i] = x;
	}
}

#define EV(kind_) \
	cp_ev* e = next(ud, time); \
	(void)loc; (void)pos; \
	if (!e) return OTF2_CALLBACK_INTERRUPT; \
	e->kind = kind_; \
	attrs(ud, e, al)

#define HEAD OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* ud, OTF2_AttributeList* al

static OTF2_CallbackCode e_enter(HEAD, OTF2_RegionRef region) { EV(CP_ENTER); e->a = region; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_leave(HEAD, OTF2_RegionRef region) { EV(CP_LEAVE); e->a = region; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_send(HEAD, uint32_t to, OTF2_CommRef comm, uint32_t tag, uint64_t len) {
	EV(CP_MPI_SEND); e->a = to; e->b = comm; e->c = tag; e->d = len; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_isend(HEAD, uint32_t to, OTF2_CommRef comm, uint32_t tag, uint64_t len, uint64_t req) {
	EV(CP_MPI_ISEND); e->a = to; e->b = comm; e->c = tag; e->d = len; e->e = req; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_isend_complete(HEAD, uint64_t req) { EV(CP_MPI_ISEND_COMPLETE); e->a = req; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_irecv_request(HEAD, uint64_t req) { EV(CP_MPI_IRECV_REQUEST); e->a = req; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_recv(HEAD, uint32_t from, OTF2_CommRef comm, uint32_t tag, uint64_t len) {
	EV(CP_MPI_RECV); e->a = from; e->b = comm; e->c = tag; e->d = len; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_irecv(HEAD, uint32_t from, OTF2_CommRef comm, uint32_t tag, uint64_t len, uint64_t req) {
	EV(CP_MPI_IRECV); e->a = from; e->b = comm; e->c = tag; e->d = len; e->e = req; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_request_test(HEAD, uint64_t req) { EV(CP_MPI_REQUEST_TEST); e->a = req; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_request_cancelled(HEAD, uint64_t req) { EV(CP_MPI_REQUEST_CANCELLED); e->a = req; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_coll_begin(HEAD) { EV(CP_MPI_COLL_BEGIN); return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_coll_end(HEAD, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t recvd) {
	EV(CP_MPI_COLL_END); e->a = op; e->b = comm; e->c = root; e->d = sent; e->e = recvd; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_nbc_request(HEAD, uint64_t req) { EV(CP_NBC_REQUEST); e->a = req; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_nbc_complete(HEAD, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
                                        uint64_t recvd, uint64_t req) {
	EV(CP_NBC_COMPLETE); e->a = op; e->b = comm; e->c = root; e->d = sent; e->e = recvd; e->f = req;
	return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_comm_create(HEAD, OTF2_CommRef comm) { EV(CP_COMM_CREATE); e->a = comm; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_comm_destroy(HEAD, OTF2_CommRef comm) { EV(CP_COMM_DESTROY); e->a = comm; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_win_create(HEAD, OTF2_RmaWinRef win) { EV(CP_RMA_WIN_CREATE); e->a = win; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_win_destroy(HEAD, OTF2_RmaWinRef win) { EV(CP_RMA_WIN_DESTROY); e->a = win; return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_rma_coll_begin(HEAD) { EV(CP_RMA_COLL_BEGIN); return OTF2_CALLBACK_SUCCESS; }
static OTF2_CallbackCode e_rma_coll_end(HEAD, OTF2_CollectiveOp op, OTF2_RmaSyncLevel lvl, OTF2_RmaWinRef win, uint32_t root,
                                        uint64_t sent, uint64_t recvd) {
	EV(CP_RMA_COLL_END); e->a = op; e->b = lvl; e->c = win; e->d = root; e->e = sent; e->f = recvd;
	return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_group_sync(HEAD, OTF2_RmaSyncLevel lvl, OTF2_RmaWinRef win, OTF2_GroupRef group) {
	EV(CP_RMA_GROUP_SYNC); e->a = lvl; e->b = win; e->c = group; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_acquire_lock(HEAD, OTF2_RmaWinRef win, uint32_t remote, uint64_t id, OTF2_LockType t) {
	EV(CP_RMA_ACQUIRE_LOCK); e->a = win; e->b = remote; e->c = id; e->d = t; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_release_lock(HEAD, OTF2_RmaWinRef win, uint32_t remote, uint64_t id) {
	EV(CP_RMA_RELEASE_LOCK); e->a = win; e->b = remote; e->c = id; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_rma_sync(HEAD, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType t) {
	EV(CP_RMA_SYNC); e->a = win; e->b = remote; e->c = t; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_put(HEAD, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t match) {
	EV(CP_RMA_PUT); e->a = win; e->b = remote; e->c = bytes; e->d = match; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_get(HEAD, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t match) {
	EV(CP_RMA_GET); e->a = win; e->b = remote; e->c = bytes; e->d = match; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_atomic(HEAD, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType t, uint64_t sent,
                                  uint64_t recvd, uint64_t match) {
	EV(CP_RMA_ATOMIC); e->a = win; e->b = remote; e->c = t; e->d = sent; e->e = recvd; e->f = match;
	return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_op_blocking(HEAD, OTF2_RmaWinRef win, uint64_t match) {
	EV(CP_RMA_OP_COMPLETE_BLOCKING); e->a = win; e->b = match; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_op_nonblocking(HEAD, OTF2_RmaWinRef win, uint64_t match) {
	EV(CP_RMA_OP_COMPLETE_NONBLOCKING); e->a = win; e->b = match; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_param_uint(HEAD, OTF2_ParameterRef p, uint64_t v) {
	EV(CP_PARAM_UINT); e->a = p; e->b = v; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_program_begin(HEAD, OTF2_StringRef name, uint32_t nargs, const OTF2_StringRef* args) {
	(void)nargs; (void)args;
	EV(CP_PROGRAM_BEGIN); e->a = name; return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_metric(HEAD, OTF2_MetricRef m, uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* vals) {
	(void)n; (void)types; (void)vals; (void)loc; (void)time; (void)pos; (void)al;
	cp_reader* r = ud;
	if (m != r->own_metric) r->skipped[CP_SKIP_METRIC]++;
	return OTF2_CALLBACK_SUCCESS;
}

// skip counts an event cpath has no meaning for. The events come through
// callbacks of many signatures: each is a function of its own that
// counts under its kind.
#define SKIP(name, kind, ...) \
	static OTF2_CallbackCode s_##name(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* ud, \
	                                  OTF2_AttributeList* al, __VA_ARGS__) { \
		(void)loc; (void)time; (void)pos; (void)al; \
		((cp_reader*)ud)->skipped[kind]++; \
		return OTF2_CALLBACK_SUCCESS; \
	}

SKIP(buffer_flush, CP_SKIP_BUFFER_FLUSH, OTF2_TimeStamp stop)
SKIP(measurement, CP_SKIP_MEASUREMENT_ON_OFF, OTF2_MeasurementMode mode)
SKIP(param_string, CP_SKIP_PARAMETER, OTF2_ParameterRef p, OTF2_StringRef v)
SKIP(param_int, CP_SKIP_PARAMETER, OTF2_ParameterRef p, int64_t v)
SKIP(program_end, CP_SKIP_PROGRAM_END, int64_t status)
SKIP(thread_fork, CP_SKIP_THREAD, OTF2_Paradigm p, uint32_t n)
SKIP(thread_join, CP_SKIP_THREAD, OTF2_Paradigm p)
SKIP(thread_team_begin, CP_SKIP_THREAD, OTF2_CommRef c)
SKIP(thread_team_end, CP_SKIP_THREAD, OTF2_CommRef c)
SKIP(thread_acquire_lock, CP_SKIP_THREAD, OTF2_Paradigm p, uint32_t lock, uint32_t order)
SKIP(thread_release_lock, CP_SKIP_THREAD, OTF2_Paradigm p, uint32_t lock, uint32_t order)
SKIP(thread_task_create, CP_SKIP_THREAD, OTF2_CommRef c, uint32_t creator, uint32_t gen)
SKIP(thread_task_switch, CP_SKIP_THREAD, OTF2_CommRef c, uint32_t creator, uint32_t gen)
SKIP(thread_task_complete, CP_SKIP_THREAD, OTF2_CommRef c, uint32_t creator, uint32_t gen)
SKIP(thread_create, CP_SKIP_THREAD, OTF2_CommRef c, uint64_t seq)
SKIP(thread_begin, CP_SKIP_THREAD, OTF2_CommRef c, uint64_t seq)
SKIP(thread_wait, CP_SKIP_THREAD, OTF2_CommRef c, uint64_t seq)
SKIP(thread_end, CP_SKIP_THREAD, OTF2_CommRef c, uint64_t seq)
SKIP(omp_fork, CP_SKIP_OMP, uint32_t n)
SKIP(omp_acquire_lock, CP_SKIP_OMP, uint32_t lock, uint32_t order)
SKIP(omp_release_lock, CP_SKIP_OMP, uint32_t lock, uint32_t order)
SKIP(omp_task_create, CP_SKIP_OMP, uint64_t task)
SKIP(omp_task_switch, CP_SKIP_OMP, uint64_t task)
SKIP(omp_task_complete, CP_SKIP_OMP, uint64_t task)
SKIP(cc_enter, CP_SKIP_CALLING_CONTEXT, OTF2_CallingContextRef c, uint32_t unwind)
SKIP(cc_leave, CP_SKIP_CALLING_CONTEXT, OTF2_CallingContextRef c)
SKIP(cc_sample, CP_SKIP_CALLING_CONTEXT, OTF2_CallingContextRef c, uint32_t unwind, OTF2_InterruptGeneratorRef g)
SKIP(io_create, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_IoAccessMode m, OTF2_IoCreationFlag c, OTF2_IoStatusFlag s)
SKIP(io_destroy, CP_SKIP_IO, OTF2_IoHandleRef h)
SKIP(io_dup, CP_SKIP_IO, OTF2_IoHandleRef a, OTF2_IoHandleRef b, OTF2_IoStatusFlag s)
SKIP(io_seek, CP_SKIP_IO, OTF2_IoHandleRef h, int64_t o, OTF2_IoSeekOption w, uint64_t r)
SKIP(io_flags, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_IoStatusFlag s)
SKIP(io_delete, CP_SKIP_IO, OTF2_IoParadigmRef p, OTF2_IoFileRef f)
SKIP(io_begin, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_IoOperationMode m, OTF2_IoOperationFlag f, uint64_t b, uint64_t id)
SKIP(io_test, CP_SKIP_IO, OTF2_IoHandleRef h, uint64_t id)
SKIP(io_issued, CP_SKIP_IO, OTF2_IoHandleRef h, uint64_t id)
SKIP(io_complete, CP_SKIP_IO, OTF2_IoHandleRef h, uint64_t b, uint64_t id)
SKIP(io_cancelled, CP_SKIP_IO, OTF2_IoHandleRef h, uint64_t id)
SKIP(io_acquire, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_LockType t)
SKIP(io_release, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_LockType t)
SKIP(io_try, CP_SKIP_IO, OTF2_IoHandleRef h, OTF2_LockType t)
SKIP(rma_request_lock, CP_SKIP_RMA_OTHER, OTF2_RmaWinRef w, uint32_t r, uint64_t id, OTF2_LockType t)
SKIP(rma_try_lock, CP_SKIP_RMA_OTHER, OTF2_RmaWinRef w, uint32_t r, uint64_t id, OTF2_LockType t)
SKIP(rma_wait_change, CP_SKIP_RMA_OTHER, OTF2_RmaWinRef w)
SKIP(rma_op_test, CP_SKIP_RMA_OTHER, OTF2_RmaWinRef w, uint64_t id)
SKIP(rma_op_remote, CP_SKIP_RMA_OTHER, OTF2_RmaWinRef w, uint64_t id)

// SKIP0 is SKIP for the events of no fields.
#define SKIP0(name, kind) \
	static OTF2_CallbackCode s_##name(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* ud, \
	                                  OTF2_AttributeList* al) { \
		(void)loc; (void)time; (void)pos; (void)al; \
		((cp_reader*)ud)->skipped[kind]++; \
		return OTF2_CALLBACK_SUCCESS; \
	}

SKIP0(omp_join, CP_SKIP_OMP)
SKIP0(unknown, CP_SKIP_UNKNOWN)

static OTF2_CallbackCode d_clock_offset(void* ud, OTF2_TimeStamp t, int64_t off, double sd) {
	cp_reader* r = ud;
	r->noff_all++;
	// The first offsets and the last: the clock model takes the first
	// and the last one (trace.Clock's Init and Final).
	int i = r->noff < 64 ? r->noff++ : 63;
	r->off_time[i] = t;
	r->off_value[i] = off;
	r->off_stddev[i] = sd;
	return OTF2_CALLBACK_SUCCESS;
}

static void set_event_callbacks(OTF2_EvtReaderCallbacks* c) {
	OTF2_EvtReaderCallbacks_SetEnterCallback(c, e_enter);
	OTF2_EvtReaderCallbacks_SetLeaveCallback(c, e_leave);
	OTF2_EvtReaderCallbacks_SetMpiSendCallback(c, e_send);
	OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c, e_isend);
	OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c, e_isend_complete);
	OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c, e_irecv_request);
	OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c, e_recv);
	OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c, e_irecv);
	OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(c, e_request_test);
	OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c, e_request_cancelled);
	OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(c, e_coll_begin);
	OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c, e_coll_end);
	OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(c, e_nbc_request);
	OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(c, e_nbc_complete);
	OTF2_EvtReaderCallbacks_SetCommCreateCallback(c, e_comm_create);
	OTF2_EvtReaderCallbacks_SetCommDestroyCallback(c, e_comm_destroy);
	OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(c, e_win_create);
	OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(c, e_win_destroy);
	OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(c, e_rma_coll_begin);
	OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(c, e_rma_coll_end);
	OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(c, e_group_sync);
	OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(c, e_acquire_lock);
	OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(c, e_release_lock);
	OTF2_EvtReaderCallbacks_SetRmaSyncCallback(c, e_rma_sync);
	OTF2_EvtReaderCallbacks_SetRmaPutCallback(c, e_put);
	OTF2_EvtReaderCallbacks_SetRmaGetCallback(c, e_get);
	OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(c, e_atomic);
	OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(c, e_op_blocking);
	OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(c, e_op_nonblocking);
	OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(c, e_param_uint);
	OTF2_EvtReaderCallbacks_SetProgramBeginCallback(c, e_program_begin);
	OTF2_EvtReaderCallbacks_SetMetricCallback(c, e_metric);

	OTF2_EvtReaderCallbacks_SetUnknownCallback(c, s_unknown);
	OTF2_EvtReaderCallbacks_SetBufferFlushCallback(c, s_buffer_flush);
	OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(c, s_measurement);
	OTF2_EvtReaderCallbacks_SetParameterStringCallback(c, s_param_string);
	OTF2_EvtReaderCallbacks_SetParameterIntCallback(c, s_param_int);
	OTF2_EvtReaderCallbacks_SetProgramEndCallback(c, s_program_end);
	OTF2_EvtReaderCallbacks_SetThreadForkCallback(c, s_thread_fork);
	OTF2_EvtReaderCallbacks_SetThreadJoinCallback(c, s_thread_join);
	OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(c, s_thread_team_begin);
	OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(c, s_thread_team_end);
	OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(c, s_thread_acquire_lock);
	OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(c, s_thread_release_lock);
	OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback(c, s_thread_task_create);
	OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback(c, s_thread_task_switch);
	OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback(c, s_thread_task_complete);
	OTF2_EvtReaderCallbacks_SetThreadCreateCallback(c, s_thread_create);
	OTF2_EvtReaderCallbacks_SetThreadBeginCallback(c, s_thread_begin);
	OTF2_EvtReaderCallbacks_SetThreadWaitCallback(c, s_thread_wait);
	OTF2_EvtReaderCallbacks_SetThreadEndCallback(c, s_thread_end);
	OTF2_EvtReaderCallbacks_SetOmpForkCallback(c, s_omp_fork);
	OTF2_EvtReaderCallbacks_SetOmpJoinCallback(c, s_omp_join);
	OTF2_EvtReaderCallbacks_SetOmpAcquireLockCallback(c, s_omp_acquire_lock);
	OTF2_EvtReaderCallbacks_SetOmpReleaseLockCallback(c, s_omp_release_lock);
	OTF2_EvtReaderCallbacks_SetOmpTaskCreateCallback(c, s_omp_task_create);
	OTF2_EvtReaderCallbacks_SetOmpTaskSwitchCallback(c, s_omp_task_switch);
	OTF2_EvtReaderCallbacks_SetOmpTaskCompleteCallback(c, s_omp_task_complete);
	OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(c, s_cc_enter);
	OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(c, s_cc_leave);
	OTF2_EvtReaderCallbacks_SetCallingContextSampleCallback(c, s_cc_sample);
	OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(c, s_io_create);
	OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(c, s_io_destroy);
	OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(c, s_io_dup);
	OTF2_EvtReaderCallbacks_SetIoSeekCallback(c, s_io_seek);
	OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback(c, s_io_flags);
	OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback(c, s_io_delete);
	OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(c, s_io_begin);
	OTF2_EvtReaderCallbacks_SetIoOperationTestCallback(c, s_io_test);
	OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback(c, s_io_issued);
	OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(c, s_io_complete);
	OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(c, s_io_cancelled);
	OTF2_EvtReaderCallbacks_SetIoAcquireLockCallback(c, s_io_acquire);
	OTF2_EvtReaderCallbacks_SetIoReleaseLockCallback(c, s_io_release);
	OTF2_EvtReaderCallbacks_SetIoTryLockCallback(c, s_io_try);
	OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(c, s_rma_request_lock);
	OTF2_EvtReaderCallbacks_SetRmaTryLockCallback(c, s_rma_try_lock);
	OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(c, s_rma_wait_change);
	OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(c, s_rma_op_test);
	OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(c, s_rma_op_remote);
}

// cp_reader_open opens location's events for reading into buf (cap
// events a batch), after its local definitions: the mapping of its ids
// to the global ones, which the reader applies, and its clock offsets,
// which it does not (cpath applies them: trace.Clock).
int cp_reader_open(cp_reader* r, const char* anchor, uint64_t location, cp_ev* buf, int cap) {
	cp_clear_error();
	r->buf = buf;
	r->cap = cap;
	r->reader = OTF2_Reader_Open(anchor);
	if (!r->reader) return -1;
	OTF2_Reader* rd = r->reader;
	if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS) return -1;
	if (OTF2_Reader_SelectLocation(rd, location) != OTF2_SUCCESS) return -1;
	if (OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS) {
		OTF2_DefReader* dr = OTF2_Reader_GetDefReader(rd, location);
		if (dr) {
			OTF2_DefReaderCallbacks* dc = OTF2_DefReaderCallbacks_New();
			OTF2_DefReaderCallbacks_SetClockOffsetCallback(dc, d_clock_offset);
			OTF2_Reader_RegisterDefCallbacks(rd, dr, dc, r);
			OTF2_DefReaderCallbacks_Delete(dc);
			uint64_t n = 0;
			OTF2_ErrorCode err = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
			OTF2_Reader_CloseDefReader(rd, dr);
			if (err != OTF2_SUCCESS) return -2;
		}
		OTF2_Reader_CloseDefFiles(rd);
	}
	if (OTF2_Reader_OpenEvtFiles(rd) != OTF2_SUCCESS) return -1;
	r->evt = OTF2_Reader_GetEvtReader(rd, location);
	if (!r->evt) return -1;
	OTF2_EvtReader_ApplyClockOffsets(r->evt, false);
	OTF2_EvtReaderCallbacks* c = OTF2_EvtReaderCallbacks_New();
	set_event_callbacks(c);
	OTF2_ErrorCode err = OTF2_Reader_RegisterEvtCallbacks(rd, r->evt, c, r);
	OTF2_EvtReaderCallbacks_Delete(c);
	return err == OTF2_SUCCESS ? 0 : -1;
}

// cp_reader_read reads the next batch of events into the buffer (r->n of
// them); *nread is the number of events read, 0 at the end.
int cp_reader_read(cp_reader* r, uint64_t* nread) {
	r->n = 0;
	*nread = 0;
	// Every event takes at most one slot.
	OTF2_ErrorCode err = OTF2_Reader_ReadLocalEvents(r->reader, r->evt, (uint64_t)r->cap, nread);
	if (err != OTF2_SUCCESS && err != OTF2_ERROR_INTERRUPTED_BY_CALLBACK) return -1;
	return 0;
}

void cp_reader_close(cp_reader* r) {
	if (!r->reader) return;
	if (r->evt) OTF2_Reader_CloseEvtReader(r->reader, r->evt);
	OTF2_Reader_CloseEvtFiles(r->reader);
	OTF2_Reader_Close(r->reader);
	r->reader = NULL;
	r->evt = NULL;
}
