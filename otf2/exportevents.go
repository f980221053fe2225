package otf2

// #include "cotf2.h"
import "C"

import (
	"github.com/cpath/cpath/trace"
)

// events appends the MPI events of a call and its sub-records (as the
// import reads them back: events.go), and says what of the record they
// carry.
func (re *rankExport) events(rec *trace.Record, subs []trace.Record) conveyed {
	var cv conveyed
	comm := re.comm(rec.Comm)
	switch cls := rec.Op.Class(); {
	case rec.Op.IsRMA():
		members := re.rma(rec, subs, comm, &cv)
		for i := range subs {
			if !members || subs[i].Op != trace.OpWinGroupMember {
				re.generic(&subs[i], conveyed{}, rec.End)
			}
		}
		return cv
	case cls == trace.ClassSend, cls == trace.ClassSendRecv:
		re.p2p(C.CP_MPI_SEND, rec.Start, rec, comm, &cv)
		for i := range subs {
			s := &subs[i]
			var sc conveyed
			if s.Op == trace.OpRecvPart {
				re.p2p(C.CP_MPI_RECV, rec.End, s, comm, &sc)
			}
			re.generic(s, sc, rec.End)
		}
		return cv
	case cls == trace.ClassRecv, cls == trace.ClassMrecv && rec.Op == trace.OpMrecv:
		if rec.Flags&trace.FlagCancelled == 0 {
			re.p2p(C.CP_MPI_RECV, rec.End, rec, comm, &cv)
		}
	case cls == trace.ClassIsend:
		if re.p2p(C.CP_MPI_ISEND, rec.Start, rec, comm, &cv) && rec.Flags&trace.FlagNewReq != 0 {
			re.evs[len(re.evs)-1].e = C.uint64_t(rec.Req - 1)
			cv.req, cv.flags = true, trace.FlagNewReq
			re.reqs[rec.Req] = reqInfo{kind: reqSend, sendPeer: rec.Peer, tag: rec.Tag, bytes: rec.Bytes}
		}
	case cls == trace.ClassIrecv, cls == trace.ClassMrecv && rec.Flags&trace.FlagNewReq != 0:
		if rec.Flags&trace.FlagNewReq != 0 && rec.Req != 0 {
			re.ev(C.CP_MPI_IRECV_REQUEST, rec.Start).a = C.uint64_t(rec.Req - 1)
			cv.req, cv.flags = true, trace.FlagNewReq
			re.reqs[rec.Req] = reqInfo{kind: reqRecv, comm: comm}
		}
	case cls == trace.ClassSendInit, cls == trace.ClassRecvInit:
		if rec.Req != 0 && rec.Op != trace.OpPsendInit && rec.Op != trace.OpPrecvInit {
			q := reqInfo{kind: reqSend, persistent: true, comm: comm, peer: re.local(comm, rec.Peer), sendPeer: rec.Peer, tag: rec.Tag, bytes: rec.Bytes}
			if cls == trace.ClassRecvInit {
				q.kind = reqRecv
			}
			re.reqs[rec.Req] = q
		}
	case cls == trace.ClassCollInit:
		if rec.Req != 0 {
			re.reqs[rec.Req] = reqInfo{kind: reqColl, persistent: true, comm: comm, collOp: collOp(rec.Op), root: re.local(comm, rec.Root)}
		}
	case cls == trace.ClassStart:
		if rec.Op == trace.OpStart && rec.Req != 0 && re.start(rec.Req, rec.Start) {
			cv.req = true
		}
		for i := range subs {
			s := &subs[i]
			var sc conveyed
			if s.Op == trace.OpReqStart && s.Req != 0 && re.start(s.Req, rec.Start) {
				sc.req = true
			}
			re.generic(s, sc, rec.Start)
		}
		return cv
	case cls == trace.ClassComplete:
		re.completions(subs, rec.End)
		return cv
	case cls == trace.ClassCollective, cls == trace.ClassCommCreate && !rec.Op.IsNonblockingCommCreate(), cls == trace.ClassCommFree:
		if comm != undef32 && !rec.Op.IsWorldBarrier() {
			re.ev(C.CP_MPI_COLL_BEGIN, rec.Start)
			e := re.ev(C.CP_MPI_COLL_END, rec.End)
			e.a, e.b, e.c, e.d, e.e = C.uint64_t(collOp(rec.Op)), C.uint64_t(comm), C.uint64_t(re.local(comm, rec.Root)), C.uint64_t(rec.Bytes), C.uint64_t(rec.Bytes)
			cv.comm, cv.bytes = true, true
			cv.root = rec.Root == trace.PeerNone || uint32(e.c) != undef32
			if cls == trace.ClassCommFree {
				re.ev(C.CP_COMM_DESTROY, rec.End).a = C.uint64_t(comm)
			}
			if cls == trace.ClassCommCreate && re.created(rec.Req, rec.End) {
				cv.req = true
			}
		}
	case cls == trace.ClassIcollective, rec.Op.IsNonblockingCommCreate():
		if rec.Flags&trace.FlagNewReq != 0 && rec.Req != 0 {
			re.ev(C.CP_NBC_REQUEST, rec.Start).a = C.uint64_t(rec.Req - 1)
			cv.req, cv.flags = true, trace.FlagNewReq
			re.reqs[rec.Req] = reqInfo{kind: reqColl, comm: comm, collOp: collOp(rec.Op), root: re.local(comm, rec.Root), bytes: rec.Bytes}
		}
		if rec.Op.IsNonblockingCommCreate() && rec.Tag > 0 && re.created(uint32(rec.Tag), rec.Start) {
			cv.tag = true
		}
	case cls == trace.ClassFileIIO, cls == trace.ClassGrequest:
		// Completed locally, by no message: their completions are
		// cpath::subrecord events.
	}
	for i := range subs {
		re.generic(&subs[i], conveyed{}, rec.End)
	}
	return cv
}

// created appends the CommCreate event of the communicator a
// constructor made, the rank's index idx: the import puts the
// constructor's Req (or an idup's Tag) and Member sub-records back from
// its definition. It says whether it did.
func (re *rankExport) created(idx uint32, t int64) bool {
	d := re.comm(idx)
	if idx == 0 || d == undef32 {
		return false
	}
	re.ev(C.CP_COMM_CREATE, t).a = C.uint64_t(d)
	return true
}

// p2p appends a point-to-point event of kind carrying rec's peer, tag,
// bytes and communicator, if the peer is a rank of it; it says whether.
func (re *rankExport) p2p(kind C.uint32_t, t int64, rec *trace.Record, comm uint32, cv *conveyed) bool {
	peer := re.local(comm, rec.Peer)
	if peer == undef32 {
		return false
	}
	e := re.ev(kind, t)
	e.a, e.b, e.c, e.d = C.uint64_t(peer), C.uint64_t(comm), C.uint64_t(uint32(rec.Tag)), C.uint64_t(rec.Bytes)
	cv.comm, cv.peer, cv.tag, cv.bytes = true, true, true, true
	return true
}

// start appends the event that starts persistent request req, as Score-P
// writes an MPI_Start: the send, or the receive's or collective's
// request; false if the request is not one of those.
func (re *rankExport) start(req uint32, t int64) bool {
	q, ok := re.reqs[req]
	if !ok {
		return false
	}
	switch q.kind {
	case reqSend:
		e := re.ev(C.CP_MPI_ISEND, t)
		e.a, e.b, e.c, e.d, e.e = C.uint64_t(q.peer), C.uint64_t(q.comm), C.uint64_t(uint32(q.tag)), C.uint64_t(q.bytes), C.uint64_t(req-1)
		if q.peer == undef32 || q.comm == undef32 {
			re.evs = re.evs[:len(re.evs)-1] // MPI_PROC_NULL: no message
			return false
		}
	case reqRecv:
		re.ev(C.CP_MPI_IRECV_REQUEST, t).a = C.uint64_t(req - 1)
	case reqColl:
		re.ev(C.CP_NBC_REQUEST, t).a = C.uint64_t(req - 1)
	default:
		return false
	}
	return true
}

// completions appends the events of a Wait/Test's completed requests.
func (re *rankExport) completions(subs []trace.Record, t int64) {
	for i := range subs {
		s := &subs[i]
		var cv conveyed
		q, ok := re.reqs[s.Req]
		switch {
		case s.Op != trace.OpReqDone || !ok:
		case q.kind == reqSend:
			re.ev(C.CP_MPI_ISEND_COMPLETE, t).a = C.uint64_t(s.Req - 1)
			// The import takes its peer, tag and bytes from the send.
			cv.req, cv.peer, cv.tag, cv.bytes = true, s.Peer == q.sendPeer, s.Tag == q.tag, s.Bytes == q.bytes
		case q.kind == reqRecv && s.Flags&trace.FlagCancelled != 0:
			re.ev(C.CP_MPI_REQUEST_CANCELLED, t).a = C.uint64_t(s.Req - 1)
			cv.req, cv.flags = true, trace.FlagCancelled
		case q.kind == reqRecv && q.comm != undef32:
			peer := re.local(q.comm, s.Peer)
			if peer == undef32 {
				break
			}
			e := re.ev(C.CP_MPI_IRECV, t)
			e.a, e.b, e.c, e.d, e.e = C.uint64_t(peer), C.uint64_t(q.comm), C.uint64_t(uint32(s.Tag)), C.uint64_t(s.Bytes), C.uint64_t(s.Req-1)
			cv.req, cv.peer, cv.tag, cv.bytes = true, true, true, true
		case q.kind == reqColl && q.comm != undef32:
			e := re.ev(C.CP_NBC_COMPLETE, t)
			e.a, e.b, e.c, e.d, e.e, e.f = C.uint64_t(q.collOp), C.uint64_t(q.comm), C.uint64_t(q.root), C.uint64_t(q.bytes), C.uint64_t(q.bytes), C.uint64_t(s.Req-1)
			cv.req = true
		}
		if ok && !q.persistent && s.Op == trace.OpReqDone {
			delete(re.reqs, s.Req)
		}
		if cv.req {
			re.subAttrs(s, cv)
			continue
		}
		re.generic(s, cv, t)
	}
}

// subAttrs puts a sub-record's attributes on its event, the last
// appended.
func (re *rankExport) subAttrs(s *trace.Record, cv conveyed) {
	subFields(&re.evs[len(re.evs)-1], s, cv)
}

// generic writes a sub-record no event carried (cv says so when one
// did): as a cpath::subrecord parameter event at t, whose value is its
// operation and whose attributes are its fields.
func (re *rankExport) generic(s *trace.Record, cv conveyed, t int64) {
	if cv != (conveyed{}) {
		re.subAttrs(s, cv)
		return
	}
	if s.Op == trace.OpMember {
		return // a communicator's members are its definition's group (the import's CommCreate)
	}
	e := re.ev(C.CP_PARAM_UINT, t)
	e.a, e.b = 0, C.uint64_t(s.Op) // parameter 0: cpath::subrecord
	subFields(e, s, conveyed{})
}
