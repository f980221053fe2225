package otf2

// #include "cotf2.h"
import "C"

import (
	"github.com/cpath/cpath/trace"
)

// rma appends the events of a one-sided call: on its window's
// definition, which the creating call defines (the window created by
// collective Seq of its communicator: one per creation, as the logger's
// window numbers count them). It says whether the events carry the
// call's WinGroupMember sub-records (the group of a post or start).
func (re *rankExport) rma(rec *trace.Record, subs []trace.Record, comm uint32, cv *conveyed) bool {
	var win uint32
	switch rec.Op {
	case trace.OpWinCreate, trace.OpWinAllocate, trace.OpWinAllocateShared, trace.OpWinCreateDynamic:
		if comm == undef32 || rec.Tag <= 0 {
			break
		}
		win = re.x.winDef(comm, rec.Seq)
		re.wins[rec.Tag] = win
		re.ev(C.CP_RMA_COLL_BEGIN, rec.Start)
		re.ev(C.CP_RMA_WIN_CREATE, rec.End).a = C.uint64_t(win)
		re.rmaCollEnd(rec, win, cv)
		return false
	}
	win, ok := re.wins[rec.Tag]
	if !ok || comm == undef32 {
		return false // a window not seen created (logging paused): its fields are attributes
	}
	cv.comm, cv.tag = true, true
	w := C.uint64_t(win)
	remote := re.local(comm, rec.Peer)
	cv.peer = rec.Peer == trace.PeerNone || remote != undef32
	switch rec.Op {
	case trace.OpWinFree:
		re.ev(C.CP_RMA_COLL_BEGIN, rec.Start)
		re.rmaCollEnd(rec, win, cv)
		re.ev(C.CP_RMA_WIN_DESTROY, rec.End).a = w
	case trace.OpWinFence:
		re.ev(C.CP_RMA_COLL_BEGIN, rec.Start)
		re.rmaCollEnd(rec, win, cv)
	case trace.OpPut, trace.OpRput, trace.OpGet, trace.OpRget:
		kind := C.uint32_t(C.CP_RMA_PUT)
		if rec.Op == trace.OpGet || rec.Op == trace.OpRget {
			kind = C.CP_RMA_GET
		}
		if remote != undef32 {
			e := re.ev(kind, rec.Start)
			e.a, e.b, e.c = w, C.uint64_t(remote), C.uint64_t(rec.Bytes)
			cv.bytes = true
		}
	case trace.OpAccumulate, trace.OpGetAccumulate, trace.OpFetchAndOp, trace.OpCompareAndSwap, trace.OpRaccumulate, trace.OpRgetAccumulate:
		if remote != undef32 {
			e := re.ev(C.CP_RMA_ATOMIC, rec.Start)
			e.a, e.b, e.c, e.d = w, C.uint64_t(remote), C.uint64_t(atomicType(rec.Op)), C.uint64_t(rec.Bytes)
			cv.bytes = true
		}
	case trace.OpWinLock, trace.OpWinLockAll:
		e := re.ev(C.CP_RMA_ACQUIRE_LOCK, rec.End)
		e.a, e.b, e.d = w, C.uint64_t(remote), C.OTF2_LOCK_EXCLUSIVE
		if rec.Op == trace.OpWinLockAll {
			e.d = C.OTF2_LOCK_SHARED
		}
	case trace.OpWinUnlock, trace.OpWinUnlockAll:
		e := re.ev(C.CP_RMA_RELEASE_LOCK, rec.End)
		e.a, e.b = w, C.uint64_t(remote)
	case trace.OpWinPost, trace.OpWinStart:
		var members []int32
		for i := range subs {
			if subs[i].Op == trace.OpWinGroupMember {
				members = append(members, subs[i].Peer)
			}
		}
		e := re.ev(C.CP_RMA_GROUP_SYNC, rec.End)
		e.a, e.b, e.c = C.OTF2_RMA_SYNC_LEVEL_PROCESS|C.OTF2_RMA_SYNC_LEVEL_MEMORY, w, C.uint64_t(re.x.groupDef(members))
		return true
	default: // flushes, MPI_Win_sync, the ends of access and exposure epochs
		t := C.uint64_t(C.OTF2_RMA_SYNC_TYPE_MEMORY)
		switch rec.Op {
		case trace.OpWinComplete:
			t = C.OTF2_RMA_SYNC_TYPE_NOTIFY_OUT
		case trace.OpWinWait, trace.OpWinTest:
			t = C.OTF2_RMA_SYNC_TYPE_NOTIFY_IN
		}
		e := re.ev(C.CP_RMA_SYNC, rec.End)
		e.a, e.b, e.c = w, C.uint64_t(remote), t
	}
	return false
}

// rmaCollEnd appends the end of a collective over window win.
func (re *rankExport) rmaCollEnd(rec *trace.Record, win uint32, cv *conveyed) {
	e := re.ev(C.CP_RMA_COLL_END, rec.End)
	e.a, e.b, e.c, e.d = C.uint64_t(collOp(rec.Op)), C.OTF2_RMA_SYNC_LEVEL_PROCESS|C.OTF2_RMA_SYNC_LEVEL_MEMORY, C.uint64_t(win), undef32
	cv.comm, cv.tag, cv.root = true, true, rec.Root == trace.PeerNone
}

// atomicType is OTF2's kind of an accumulating one-sided call.
func atomicType(op trace.Op) uint32 {
	switch op {
	case trace.OpCompareAndSwap:
		return C.OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP
	case trace.OpFetchAndOp, trace.OpGetAccumulate, trace.OpRgetAccumulate:
		return C.OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE
	}
	return C.OTF2_RMA_ATOMIC_TYPE_ACCUMULATE
}
