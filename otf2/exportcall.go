package otf2

// #include "cotf2.h"
import "C"

import (
	"strings"

	"github.com/cpath/cpath/trace"
)

// rankExport writes one rank's calls.
type rankExport struct {
	x     *exporter
	r     int
	hdr   *trace.Header // the reader's: it grows with the modules the log names
	cb    *trace.CommBuilder
	locs  []*locWriter // by thread
	k     int32        // calls so far: the next is Marks[RankStart[r]+k]
	comms []uint32     // by the rank's index: the definition, or unresolved
	sites map[uint64]callSite
	reqs  map[uint32]reqInfo
	wins  map[int32]uint32 // by the rank's window number: the definition
	evs   []C.cp_ev        // the call being written
}

const unresolved = undef32 - 1

// reqInfo is what a rank's request stands for, to write its start and
// completion events.
type reqInfo struct {
	kind       uint8
	persistent bool
	comm       uint32 // definition
	peer       uint32 // rank in comm, undef32 for none
	sendPeer   int32  // a send's peer as a world rank
	tag        int32
	bytes      uint64
	collOp     uint32
	root       uint32
}

const (
	reqOther = iota // completed by a cpath::subrecord parameter event
	reqSend
	reqRecv
	reqColl
)

func newRankExport(x *exporter, r int, h *trace.Header) *rankExport {
	x.mu.Lock()
	x.hosts[r] = h.Host
	x.mu.Unlock()
	return &rankExport{x: x, r: r, hdr: h, cb: trace.NewCommBuilder(h), sites: map[uint64]callSite{},
		reqs: map[uint32]reqInfo{}, wins: map[int32]uint32{}}
}

func (re *rankExport) close() {
	for _, l := range re.locs {
		if l != nil {
			l.free()
		}
	}
}

// loc is thread t's location writer.
func (re *rankExport) loc(t uint16) (*locWriter, error) {
	for int(t) >= len(re.locs) {
		re.locs = append(re.locs, nil)
	}
	if re.locs[t] == nil {
		l, err := re.x.newLocWriter(re.r, t)
		if err != nil {
			return nil, err
		}
		re.locs[t] = l
	}
	return re.locs[t], nil
}

// comm is the definition of the rank's communicator c.
func (re *rankExport) comm(c uint32) uint32 {
	if c == trace.CommNone {
		return undef32
	}
	for int(c) >= len(re.comms) {
		re.comms = append(re.comms, unresolved)
	}
	if re.comms[c] == unresolved {
		tab := re.cb.Comms()
		if int(c) >= len(tab) {
			return undef32 // not defined yet: look again later
		}
		re.comms[c] = re.x.commDef(&tab[c])
	}
	return re.comms[c]
}

// local is world rank w's rank in communicator definition comm (in the
// other group of an intercommunicator), undef32 if not a member.
func (re *rankExport) local(comm uint32, w int32) uint32 {
	if comm == undef32 || w < 0 {
		return undef32
	}
	x := re.x
	x.mu.Lock()
	c := x.commList[comm]
	x.mu.Unlock()
	m := c.members
	if c.remote != nil {
		m = c.remote
		for _, v := range c.remote {
			if v == int32(re.r) {
				m = c.members // this rank is of the other side
			}
		}
	}
	for i, v := range m {
		if v == w {
			return uint32(i)
		}
	}
	return undef32
}

// conveyed is what the events of a call carry of its record, as the
// import reads them back (events.go).
type conveyed struct {
	comm, peer, tag, bytes, root, req bool
	flags                             trace.Flags
}

// ev appends an event of the call.
func (re *rankExport) ev(kind C.uint32_t, t int64) *C.cp_ev {
	re.evs = append(re.evs, C.cp_ev{kind: kind, time: C.uint64_t(t)})
	return &re.evs[len(re.evs)-1]
}

// call writes a call: the visit of the function it was made from (the
// computation before it), the visit of its MPI region, and its events.
func (re *rankExport) call(rec trace.Record, subs []trace.Record) error {
	l, err := re.loc(rec.Thread)
	if err != nil {
		return err
	}
	x := re.x
	mark := uint8(0)
	if re.r < len(x.in.RankStart) {
		if g := int(x.in.RankStart[re.r]) + int(re.k); g < len(x.in.Marks) {
			mark = x.in.Marks[g]
		}
	}
	re.k++
	site, ok := re.sites[rec.CallSite]
	if !ok {
		site = x.functionOf(re.hdr, rec.CallSite)
		re.sites[rec.CallSite] = site
	}
	re.evs = re.evs[:0]
	wrapped := site.region != undef32
	from := rec.Start // the computation before the thread's first call is its launch, outside the archive
	if l.started {
		from = l.prevEnd
		re.metric(l, mark&MarkBefore != 0, from)
	}
	if wrapped {
		e := re.ev(C.CP_ENTER, from)
		e.a = C.uint64_t(site.region)
		if mark&MarkBefore != 0 {
			setAttr(e, C.CP_A_CRITICAL, 1)
		}
	}
	re.metric(l, mark&MarkCall != 0, rec.Start)
	enter := len(re.evs)
	e := re.ev(C.CP_ENTER, rec.Start)
	e.a = C.uint64_t(rec.Op)
	if site.scl != undef32 {
		setAttr(e, C.CP_A_SCL, uint64(site.scl))
	}
	if site.offset != 0 {
		setAttr(e, C.CP_A_OFFSET, site.offset)
	}
	if mark&MarkCall != 0 {
		setAttr(e, C.CP_A_CRITICAL, 1)
	}
	cv := re.events(&rec, subs)
	re.fields(&re.evs[enter], &rec, cv)
	re.ev(C.CP_LEAVE, rec.End).a = C.uint64_t(rec.Op)
	if wrapped {
		re.ev(C.CP_LEAVE, rec.End).a = C.uint64_t(site.region)
	}
	x.mu.Lock()
	x.opUsed[rec.Op] = true
	x.minTime, x.maxTime = min(x.minTime, rec.Start), max(x.maxTime, rec.End)
	x.mu.Unlock()
	if !l.started {
		l.start = rec.Start
	}
	l.started, l.prevEnd, l.end = true, rec.End, rec.End
	l.calls++
	for i := 0; i < len(re.evs); {
		if err := l.room(1); err != nil {
			return err
		}
		n := copy(l.evs[l.n:], re.evs[i:])
		l.n += n
		i += n
	}
	return nil
}

// metric appends a change of thread l's critical-path metric.
func (re *rankExport) metric(l *locWriter, on bool, t int64) {
	if on == l.crit {
		return
	}
	l.crit = on
	e := re.ev(C.CP_METRIC, t)
	if on {
		e.b = 1
	}
}

// fields puts on the call's ENTER event e the attributes for the fields
// of rec that its events do not carry (cv), and that differ from what
// the import takes without them.
func (re *rankExport) fields(e *C.cp_ev, rec *trace.Record, cv conveyed) {
	if rec.Op.IsPoll() && rec.Unproductive() {
		setAttr(e, C.CP_A_POLLS, uint64(rec.Root))
		cv.root = true
	}
	subFields(e, rec, cv)
	if !cv.comm && rec.Comm != trace.CommNone {
		if d := re.comm(rec.Comm); d != undef32 {
			setAttr(e, C.CP_A_COMM, uint64(d))
		} else {
			re.x.skip("communicators made by calls the logger does not record (their calls keep no communicator)", 1)
		}
	}
}

// subFields puts on a sub-record's event (or a call's ENTER: fields)
// the attributes for what the events do not carry (cv) and differ from
// the import's defaults; a sub-record with no event of its own is a
// cpath::subrecord parameter event carrying everything.
func subFields(e *C.cp_ev, s *trace.Record, cv conveyed) {
	if !cv.req && s.Req != 0 {
		setAttr(e, C.CP_A_REQ, uint64(s.Req))
	}
	if s.Flags != cv.flags {
		setAttr(e, C.CP_A_FLAGS, uint64(s.Flags))
	}
	if s.Seq != 0 {
		setAttr(e, C.CP_A_SEQ, uint64(s.Seq))
	}
	if !cv.peer && s.Peer != trace.PeerNone {
		setAttr(e, C.CP_A_PEER, uint64(int64(s.Peer)))
	}
	if !cv.tag && s.Tag != 0 {
		setAttr(e, C.CP_A_TAG, uint64(int64(s.Tag)))
	}
	if !cv.bytes && s.Bytes != 0 {
		setAttr(e, C.CP_A_BYTES, s.Bytes)
	}
	if !cv.root && s.Root != trace.PeerNone {
		setAttr(e, C.CP_A_ROOT, uint64(int64(s.Root)))
	}
}

// collOps are OTF2's collective operations by cpath's name of the
// operation without "MPI_", the "I" of nonblocking forms and
// "Neighbor_" (a neighbourhood collective is written as the collective
// it is over its neighbours).
var collOps = map[string]uint32{
	"barrier": C.OTF2_COLLECTIVE_OP_BARRIER, "bcast": C.OTF2_COLLECTIVE_OP_BCAST,
	"gather": C.OTF2_COLLECTIVE_OP_GATHER, "gatherv": C.OTF2_COLLECTIVE_OP_GATHERV,
	"scatter": C.OTF2_COLLECTIVE_OP_SCATTER, "scatterv": C.OTF2_COLLECTIVE_OP_SCATTERV,
	"allgather": C.OTF2_COLLECTIVE_OP_ALLGATHER, "allgatherv": C.OTF2_COLLECTIVE_OP_ALLGATHERV,
	"alltoall": C.OTF2_COLLECTIVE_OP_ALLTOALL, "alltoallv": C.OTF2_COLLECTIVE_OP_ALLTOALLV,
	"alltoallw": C.OTF2_COLLECTIVE_OP_ALLTOALLW, "allreduce": C.OTF2_COLLECTIVE_OP_ALLREDUCE,
	"reduce": C.OTF2_COLLECTIVE_OP_REDUCE, "reduce_scatter": C.OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
	"scan": C.OTF2_COLLECTIVE_OP_SCAN, "exscan": C.OTF2_COLLECTIVE_OP_EXSCAN,
	"reduce_scatter_block": C.OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
}

// collOp is OTF2's collective operation for op: its own, else what the
// call does to its communicator or window (a constructor creates a
// handle, MPI_File_open too, …), else a barrier over it.
func collOp(op trace.Op) uint32 {
	name := strings.ToLower(strings.TrimPrefix(op.String(), "MPI_"))
	base := strings.TrimPrefix(strings.TrimSuffix(name, "_init"), "neighbor_")
	if c, ok := collOps[base]; ok {
		return c
	}
	if strings.HasPrefix(base, "i") {
		if c, ok := collOps[strings.TrimPrefix(strings.TrimPrefix(base, "i"), "neighbor_")]; ok {
			return c
		}
	}
	switch {
	case op.Class() == trace.ClassCommCreate, op == trace.OpFileOpen:
		return C.OTF2_COLLECTIVE_OP_CREATE_HANDLE
	case op.Class() == trace.ClassCommFree, op == trace.OpFileClose:
		return C.OTF2_COLLECTIVE_OP_DESTROY_HANDLE
	case op == trace.OpWinCreate, op == trace.OpWinAllocate, op == trace.OpWinAllocateShared, op == trace.OpWinCreateDynamic:
		return C.OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE
	case op == trace.OpWinFree:
		return C.OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE
	}
	return C.OTF2_COLLECTIVE_OP_BARRIER
}
