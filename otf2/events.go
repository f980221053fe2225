package otf2

import (
	"github.com/cpath/cpath/trace"
)

// mpiEvent takes an MPI event inside the visit: the call's fields, its
// sub-records, or a completion that names an earlier post's
// communicator.
func (l *locReader) mpiEvent(e *event) {
	v := &l.v
	rec := &v.rec
	cls := rec.Op.Class()
	switch e.kind {
	case evMpiSend:
		l.p2p(rec, uint32(e.b), uint32(e.a), e.c, e.d)
	case evMpiIsend:
		l.sends[e.e] = sendEnd{l.world(uint32(e.b), uint32(e.a)), int32(e.c), e.d}
		if cls == trace.ClassStart {
			l.start(e.e, e)
			return
		}
		l.p2p(rec, uint32(e.b), uint32(e.a), e.c, e.d)
		rec.Req, rec.Flags = req(e.e), rec.Flags|trace.FlagNewReq
	case evMpiIrecvRequest, evNbcRequest:
		if cls == trace.ClassStart {
			l.start(e.a, e)
			return
		}
		rec.Req, rec.Flags = req(e.a), rec.Flags|trace.FlagNewReq
		if !l.rr.a.fromCPath {
			// OTF2 names the communicator (and the receive's source and
			// tag) only at the completion: the call waits for it.
			v.held, v.waits = uint64(e.a), true
		}
	case evMpiRecv:
		if cls == trace.ClassSendRecv {
			s := l.sub(trace.OpRecvPart, e)
			s.Peer, s.Tag, s.Bytes = l.world(uint32(e.b), uint32(e.a)), int32(e.c), uint64(e.d)
			return
		}
		l.p2p(rec, uint32(e.b), uint32(e.a), e.c, e.d)
	case evMpiIrecv:
		s := l.sub(trace.OpReqDone, e)
		s.Req, s.Peer, s.Tag, s.Bytes = req(e.e), l.world(uint32(e.b), uint32(e.a)), int32(e.c), uint64(e.d)
		if p := l.completes(uint64(e.e)); p != nil {
			p.Comm, p.Peer, p.Tag, p.Bytes = l.comm(uint32(e.b)), s.Peer, s.Tag, s.Bytes
		}
	case evMpiIsendComplete:
		s := l.sub(trace.OpReqDone, e)
		s.Req = req(e.a)
		if m, ok := l.sends[e.a]; ok {
			// Its fields came before its attributes: those win.
			*s = trace.Record{Op: trace.OpReqDone, Thread: l.thread, Comm: trace.CommNone, Req: req(e.a), Peer: m.peer, Tag: m.tag, Bytes: m.bytes, Root: trace.PeerNone}
			l.applyAttrs(s, e)
			delete(l.sends, e.a) // a persistent one's next start names it again
		}
	case evMpiRequestCancelled:
		s := l.sub(trace.OpReqDone, e)
		s.Req, s.Flags = req(e.a), s.Flags|trace.FlagCancelled
	case evMpiCollEnd:
		rec.Comm, rec.Root, rec.Bytes = l.comm(uint32(e.b)), l.root(uint32(e.b), uint32(e.c)), uint64(e.d)
	case evNbcComplete:
		l.sub(trace.OpReqDone, e).Req = req(e.f)
		if p := l.completes(uint64(e.f)); p != nil {
			p.Comm, p.Root, p.Bytes = l.comm(uint32(e.b)), l.root(uint32(e.b), uint32(e.c)), uint64(e.d)
		}
	case evRmaWinCreate:
		l.window(rec, uint32(e.a), true)
	case evRmaWinDestroy, evRmaOpCompleteBlocking, evRmaOpCompleteNonblocking:
		l.window(rec, uint32(e.a), false)
	case evRmaCollEnd:
		l.window(rec, uint32(e.c), false)
		if w := l.winComm(uint32(e.c)); w != undef32 && rec.Op.IsRMA() {
			rec.Root = l.root(w, uint32(e.d))
		}
	case evRmaGroupSync:
		l.window(rec, uint32(e.b), false)
		if g, ok := l.rr.a.group(uint32(e.c)); ok {
			for _, m := range g.members {
				l.sub(trace.OpWinGroupMember, nil).Peer = int32(m)
			}
		}
	case evRmaAcquireLock, evRmaReleaseLock, evRmaSync:
		l.window(rec, uint32(e.a), false)
		l.target(rec, uint32(e.a), uint32(e.b))
	case evRmaPut, evRmaGet:
		l.window(rec, uint32(e.a), false)
		l.target(rec, uint32(e.a), uint32(e.b))
		rec.Bytes = uint64(e.c)
	case evRmaAtomic:
		l.window(rec, uint32(e.a), false)
		l.target(rec, uint32(e.a), uint32(e.b))
		rec.Bytes = uint64(max(e.d, e.e))
	case evParamUint:
		if uint32(e.a) == l.rr.a.subParam && trace.Op(e.b).IsSub() {
			l.sub(trace.Op(e.b), e)
			return
		}
		l.rr.count("ParameterUnsignedInt events", 1)
	case evCommCreate:
		if rec.Op.Class() == trace.ClassCommCreate && l.rr.a.fromCPath {
			v.made, v.newComm = true, uint32(e.a)
		}
	case evMpiRequestTest, evMpiCollBegin, evRmaCollBegin, evCommDestroy:
		// A Test that completed nothing, the start of a collective (the
		// call's), and the communicators a call freed (defined up front):
		// nothing the call does not say already.
	}
}

// madeComm puts back what a constructor of an archive cpath wrote says
// of the communicator it made (CommCreate): its index in the rank's
// table (Req, an idup's Tag) and its members as Member sub-records,
// before the sub-records of its topology's neighbours, so that the
// communicator table is built from the records as a log's is
// (trace.CommBuilder), neighbours and all.
func (l *locReader) madeComm(rec *trace.Record) {
	v := &l.v
	idx := l.comm(v.newComm)
	if idx == trace.CommNone {
		return
	}
	if rec.Op.IsNonblockingCommCreate() {
		rec.Tag = int32(idx)
	} else {
		rec.Req = idx
	}
	c := &l.rr.a.tables[l.rr.rank][idx]
	var m []trace.Record
	for _, w := range c.Members {
		m = append(m, trace.Record{Op: trace.OpMember, Thread: l.thread, Comm: trace.CommNone, Peer: w, Root: trace.PeerNone})
	}
	for _, w := range c.Remote {
		m = append(m, trace.Record{Op: trace.OpMember, Thread: l.thread, Comm: trace.CommNone, Peer: w, Root: trace.PeerNone, Flags: trace.FlagRemote})
	}
	v.subs = append(m, v.subs...)
}

// p2p sets a point-to-point call's fields from its event.
func (l *locReader) p2p(rec *trace.Record, comm, peer uint32, tag, length uint64) {
	rec.Comm, rec.Peer, rec.Tag, rec.Bytes = l.comm(comm), l.world(comm, peer), int32(tag), uint64(length)
}

// root is a collective's root as a world rank, PeerNone for none.
func (l *locReader) root(comm, root uint32) int32 {
	if root == undef32 {
		return trace.PeerNone
	}
	return l.world(comm, root)
}

// start takes the request an MPI_Start or MPI_Startall starts: the
// former names it, the latter has a sub-record for each.
func (l *locReader) start(id uint64, e *event) {
	rec := &l.v.rec
	if rec.Op == trace.OpStart {
		rec.Req = req(id)
		return
	}
	l.sub(trace.OpReqStart, e).Req = req(id)
}

// sub appends a sub-record to the visit's call, its fields from e's
// attributes (if e is not nil).
func (l *locReader) sub(op trace.Op, e *event) *trace.Record {
	v := &l.v
	v.subs = append(v.subs, trace.Record{Op: op, Thread: l.thread, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone})
	s := &v.subs[len(v.subs)-1]
	if e != nil {
		l.applyAttrs(s, e)
	}
	return s
}

// completes returns the post of OTF2 request id that waits for this
// completion to name its communicator, and lets it go; nil if none waits.
func (l *locReader) completes(id uint64) *trace.Record {
	i, ok := l.open[id]
	if !ok {
		return nil
	}
	delete(l.open, id)
	l.held[i] = false
	return &l.recs[l.calls[i]]
}

// winComm is the communicator a window was created over, undef32 if
// unknown.
func (l *locReader) winComm(win uint32) uint32 {
	ws := l.rr.a.d.wins
	if int(win) < len(ws) && ws[win].defined {
		return ws[win].comm
	}
	return undef32
}

// window sets the communicator and window number (Tag) of an RMA call
// on win; created numbers the window, in the order the rank creates
// them (as the logger does).
func (l *locReader) window(rec *trace.Record, win uint32, created bool) {
	if !rec.Op.IsRMA() {
		return // a Wait's completion of a request of a window: not the Wait's
	}
	rr := l.rr
	n, ok := rr.wins[win]
	if created || !ok {
		rr.nwins++
		n = rr.nwins
		rr.wins[win] = n
	}
	if c := l.winComm(win); c != undef32 {
		rec.Comm = l.comm(c)
	}
	rec.Tag = n
}

// target sets an RMA call's target, a rank of its window's
// communicator.
func (l *locReader) target(rec *trace.Record, win, remote uint32) {
	if !rec.Op.IsRMA() {
		return
	}
	if c := l.winComm(win); c != undef32 && remote != undef32 {
		rec.Peer = l.world(c, remote)
	}
}
