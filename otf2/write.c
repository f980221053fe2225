// Writing an OTF2 archive: a location's events come from Go as arrays of
// cp_ev; the definitions are written by Go call by call.

#include <stdlib.h>
#include <string.h>
#include <otf2/OTF2_Pthread_Locks.h>

#include "cotf2.h"

static OTF2_FlushType pre_flush(void* ud, OTF2_FileType ft, OTF2_LocationRef loc, void* cb, bool final) {
	(void)ud; (void)ft; (void)loc; (void)cb; (void)final;
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void* ud, OTF2_FileType ft, OTF2_LocationRef loc) {
	(void)ud; (void)ft; (void)loc;
	return 0; // no buffer-flush events: cpath writes no measurement of its own
}

static OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

// cp_archive_create opens dir/name.otf2 for writing, events of several
// locations from several threads at once (pthread locking).
OTF2_Archive* cp_archive_create(const char* dir, const char* name) {
	cp_clear_error();
	OTF2_Archive* a = OTF2_Archive_Open(dir, name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
	                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!a) return NULL;
	if (OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, NULL) != OTF2_SUCCESS ||
	    OTF2_Archive_SetSerialCollectiveCallbacks(a) != OTF2_SUCCESS ||
	    OTF2_Pthread_Archive_SetLockingCallbacks(a, NULL) != OTF2_SUCCESS ||
	    OTF2_Archive_OpenEvtFiles(a) != OTF2_SUCCESS) {
		OTF2_Archive_Close(a);
		return NULL;
	}
	return a;
}

OTF2_EvtWriter* cp_archive_evt_writer(OTF2_Archive* a, uint64_t location) {
	return OTF2_Archive_GetEvtWriter(a, location);
}

int cp_archive_close_evt_writer(OTF2_Archive* a, OTF2_EvtWriter* w) {
	return OTF2_Archive_CloseEvtWriter(a, w) == OTF2_SUCCESS ? 0 : -1;
}

// add puts e's attributes in w's list, which the next event written takes.
static void add(cp_writer* w, const cp_ev* e) {
	for (int i = 0; i < CP_NATTR; i++) {
		if (!(e->amask & (1u << i))) continue;
		uint32_t id = w->attr_id[i];
		uint64_t v = e->av[i];
		switch (i) {
		case CP_A_PEER: case CP_A_TAG: case CP_A_ROOT:
			OTF2_AttributeList_AddInt64(w->attrs, id, (int64_t)v);
			break;
		case CP_A_COMM:
			OTF2_AttributeList_AddCommRef(w->attrs, id, (OTF2_CommRef)v);
			break;
		case CP_A_SCL:
			OTF2_AttributeList_AddSourceCodeLocationRef(w->attrs, id, (OTF2_SourceCodeLocationRef)v);
			break;
		default:
			OTF2_AttributeList_AddUint64(w->attrs, id, v);
		}
	}
}

// cp_write writes n events; it returns the index of the event that
// failed, or n.
int cp_write(cp_writer* w, const cp_ev* evs, int n) {
	OTF2_EvtWriter* ew = w->evt;
	for (int i = 0; i < n; i++) {
		const cp_ev* e = &evs[i];
		OTF2_AttributeList* al = NULL;
		if (e->amask) {
			add(w, e);
			al = w->attrs;
		}
		OTF2_TimeStamp t = e->time;
		OTF2_ErrorCode err = OTF2_SUCCESS;
		switch (e->kind) {
		case CP_ENTER: err = OTF2_EvtWriter_Enter(ew, al, t, e->a); break;
		case CP_LEAVE: err = OTF2_EvtWriter_Leave(ew, al, t, e->a); break;
		case CP_MPI_SEND: err = OTF2_EvtWriter_MpiSend(ew, al, t, e->a, e->b, e->c, e->d); break;
		case CP_MPI_ISEND: err = OTF2_EvtWriter_MpiIsend(ew, al, t, e->a, e->b, e->c, e->d, e->e); break;
		case CP_MPI_ISEND_COMPLETE: err = OTF2_EvtWriter_MpiIsendComplete(ew, al, t, e->a); break;
		case CP_MPI_IRECV_REQUEST: err = OTF2_EvtWriter_MpiIrecvRequest(ew, al, t, e->a); break;
		case CP_MPI_RECV: err = OTF2_EvtWriter_MpiRecv(ew, al, t, e->a, e->b, e->c, e->d); break;
		case CP_MPI_IRECV: err = OTF2_EvtWriter_MpiIrecv(ew, al, t, e->a, e->b, e->c, e->d, e->e); break;
		case CP_MPI_REQUEST_TEST: err = OTF2_EvtWriter_MpiRequestTest(ew, al, t, e->a); break;
		case CP_MPI_REQUEST_CANCELLED: err = OTF2_EvtWriter_MpiRequestCancelled(ew, al, t, e->a); break;
		case CP_MPI_COLL_BEGIN: err = OTF2_EvtWriter_MpiCollectiveBegin(ew, al, t); break;
		case CP_MPI_COLL_END: err = OTF2_EvtWriter_MpiCollectiveEnd(ew, al, t, e->a, e->b, e->c, e->d, e->e); break;
		case CP_NBC_REQUEST: err = OTF2_EvtWriter_NonBlockingCollectiveRequest(ew, al, t, e->a); break;
		case CP_NBC_COMPLETE:
			err = OTF2_EvtWriter_NonBlockingCollectiveComplete(ew, al, t, e->a, e->b, e->c, e->d, e->e, e->f);
			break;
		case CP_COMM_CREATE: err = OTF2_EvtWriter_CommCreate(ew, al, t, e->a); break;
		case CP_COMM_DESTROY: err = OTF2_EvtWriter_CommDestroy(ew, al, t, e->a); break;
		case CP_RMA_WIN_CREATE: err = OTF2_EvtWriter_RmaWinCreate(ew, al, t, e->a); break;
		case CP_RMA_WIN_DESTROY: err = OTF2_EvtWriter_RmaWinDestroy(ew, al, t, e->a); break;
		case CP_RMA_COLL_BEGIN: err = OTF2_EvtWriter_RmaCollectiveBegin(ew, al, t); break;
		case CP_RMA_COLL_END: err = OTF2_EvtWriter_RmaCollectiveEnd(ew, al, t, e->a, e->b, e->c, e->d, e->e, e->f); break;
		case CP_RMA_GROUP_SYNC: err = OTF2_EvtWriter_RmaGroupSync(ew, al, t, e->a, e->b, e->c); break;
		case CP_RMA_ACQUIRE_LOCK: err = OTF2_EvtWriter_RmaAcquireLock(ew, al, t, e->a, e->b, e->c, e->d); break;
		case CP_RMA_RELEASE_LOCK: err = OTF2_EvtWriter_RmaReleaseLock(ew, al, t, e->a, e->b, e->c); break;
		case CP_RMA_SYNC: err = OTF2_EvtWriter_RmaSync(ew, al, t, e->a, e->b, e->c); break;
		case CP_RMA_PUT: err = OTF2_EvtWriter_RmaPut(ew, al, t, e->a, e->b, e->c, e->d); break;
		case CP_RMA_GET: err = OTF2_EvtWriter_RmaGet(ew, al, t, e->a, e->b, e->c, e->d); break;
		case CP_RMA_ATOMIC: err = OTF2_EvtWriter_RmaAtomic(ew, al, t, e->a, e->b, e->c, e->d, e->e, e->f); break;
		case CP_RMA_OP_COMPLETE_BLOCKING: err = OTF2_EvtWriter_RmaOpCompleteBlocking(ew, al, t, e->a, e->b); break;
		case CP_RMA_OP_COMPLETE_NONBLOCKING: err = OTF2_EvtWriter_RmaOpCompleteNonBlocking(ew, al, t, e->a, e->b); break;
		case CP_PARAM_UINT: err = OTF2_EvtWriter_ParameterUnsignedInt(ew, al, t, e->a, e->b); break;
		case CP_METRIC: {
			OTF2_Type ty = OTF2_TYPE_UINT64;
			OTF2_MetricValue v;
			v.unsigned_int = e->b;
			err = OTF2_EvtWriter_Metric(ew, al, t, e->a, 1, &ty, &v);
			break;
		}
		default:
			err = OTF2_ERROR_INVALID_ARGUMENT;
		}
		if (err != OTF2_SUCCESS) return i;
	}
	return n;
}

// cp_def_locprop_u64 writes an unsigned location property (the
// attribute value is a union, awkward from Go).
int cp_def_locprop_u64(OTF2_GlobalDefWriter* w, uint64_t loc, uint32_t name, uint64_t v) {
	OTF2_AttributeValue av;
	av.uint64 = v;
	return OTF2_GlobalDefWriter_WriteLocationProperty(w, loc, name, OTF2_TYPE_UINT64, av) == OTF2_SUCCESS ? 0 : -1;
}
