package otf2

import (
	"github.com/cpath/cpath/trace"
)

// maxHold is how many calls a location's reader holds back behind a
// nonblocking receive or collective whose communicator (OTF2 names it
// only at the completion) it waits for; beyond, the post goes out
// without it, counted.
const maxHold = 1 << 16

// locReader turns one location's events into its calls: the ENTER and
// LEAVE of an MPI region (a visit) are a call, the MPI events between
// them its fields and sub-records.
type locReader struct {
	rr     *rankReader
	loc    uint64
	thread uint16
	src    eventSource
	eof    bool
	events uint64 // read so far, for errors

	stack   []uint32 // the non-MPI regions open, innermost last
	inVisit bool
	nested  int // MPI regions entered inside the visit
	v       visit

	// The calls converted, in order, each a timed record and its
	// sub-records: recs[calls[i]:calls[i+1]]. Those from head on are
	// still to go; a call marked open waits for its completion to name
	// its communicator, and holds back those after it.
	recs  []trace.Record
	calls []int32
	held  []bool
	head  int
	ready int              // calls[head:ready] may go
	open  map[uint64]int32 // by OTF2 request id: the index in calls of the post that waits
	// sends are the location's send requests (by OTF2 request id), whose
	// completions name only the request: their peer, tag and bytes.
	sends  map[uint64]sendEnd
	ending []int64 // by call index: its end, for the merge
}

// sendEnd is what a send request's completion says of its message.
type sendEnd struct {
	peer, tag int32
	bytes     uint64
}

// visit is the MPI call being read.
type visit struct {
	region uint32
	rec    trace.Record
	subs   []trace.Record
	enter  event  // the ENTER event: the call's attributes
	held   uint64 // the OTF2 request its post waits for, if waits
	waits  bool
	// newComm is the communicator a constructor made (CommCreate), if
	// made, in an archive cpath wrote.
	newComm uint32
	made    bool
}

func (l *locReader) close() {
	if l.src != nil {
		l.src.close()
		l.src = nil
	}
}

// fill reads events until a call is ready to go or the location ends.
func (l *locReader) fill() error {
	for l.ready == l.head && !l.eof {
		evs, n, last, err := l.src.next()
		want := l.rr.a.nevents[l.loc]
		if err != nil && want > 0 {
			// The same words as for a count that falls short: which of the
			// two a cut file gives depends on what the library finds after
			// the end of what it read.
			return l.cut(want)
		}
		if err != nil {
			return archiveErr(l.rr.a.evtFile(l.loc), "cannot read the events of location %d (rank %d) after %d events: truncated or corrupt (%v)",
				l.loc, l.rr.rank, l.events, err)
		}
		l.events += n
		for i := range evs {
			l.event(&evs[i])
		}
		if last {
			// The library may take a file cut short for one that ends
			// there (it parses the rest of a chunk it did not read): the
			// definitions say how many events the location has.
			if want > 0 && l.events != want {
				return l.cut(want)
			}
			l.eof = true
			l.ready = len(l.calls)
			break
		}
		l.release()
	}
	return nil
}

// cut is the error for a location whose events (want of them, its
// definition says) cannot all be read.
func (l *locReader) cut(want uint64) error {
	return archiveErr(l.rr.a.evtFile(l.loc), "truncated or corrupt: the %d events of location %d (rank %d) cannot all be read", want, l.loc, l.rr.rank)
}

// peek is the end of the next call to go, if any.
func (l *locReader) peek() (int64, bool) {
	if l.head == l.ready {
		return 0, false
	}
	return l.ending[l.head], true
}

// take appends the next call to out.
func (l *locReader) take(out []trace.Record, rr *rankReader) []trace.Record {
	lo, hi := l.callRange(l.head)
	n := len(out)
	out = append(out, l.recs[lo:hi]...)
	for i := n; i < len(out); i++ {
		rr.emit(&out[i])
	}
	l.head++
	l.compact()
	return out
}

func (l *locReader) callRange(i int) (int32, int32) {
	if i == len(l.calls) {
		return int32(len(l.recs)), int32(len(l.recs))
	}
	if i+1 == len(l.calls) {
		return l.calls[i], int32(len(l.recs))
	}
	return l.calls[i], l.calls[i+1]
}

// compact drops the calls that went, once they are most of the buffer.
func (l *locReader) compact() {
	if l.head < 4096 || l.head < len(l.calls)/2 {
		return
	}
	lo, _ := l.callRange(l.head)
	l.recs = append(l.recs[:0], l.recs[lo:]...)
	for i := l.head; i < len(l.calls); i++ {
		l.calls[i-l.head] = l.calls[i] - lo
	}
	l.calls = l.calls[:len(l.calls)-l.head]
	l.held = append(l.held[:0], l.held[l.head:]...)
	l.ending = append(l.ending[:0], l.ending[l.head:]...)
	for k, i := range l.open {
		l.open[k] = i - int32(l.head)
	}
	l.ready -= l.head
	l.head = 0
}

// release lets go the calls up to the first that waits for its
// completion, or beyond it when it has waited too long.
func (l *locReader) release() {
	for l.ready < len(l.calls) {
		if l.held[l.ready] {
			if len(l.calls)-l.ready <= maxHold {
				return
			}
			l.held[l.ready] = false
			for k, i := range l.open {
				if int(i) == l.ready {
					delete(l.open, k)
				}
			}
			l.rr.count("nonblocking receives and collectives completed more than 65536 calls after their post (communicator unknown)", 1)
		}
		l.ready++
	}
}

// event takes one event of the location.
func (l *locReader) event(e *event) {
	switch e.kind {
	case evEnter:
		l.enter(e)
	case evLeave:
		l.leave(e)
	case evProgramBegin:
		if l.rr.hdr.Exe == "" {
			l.rr.hdr.Exe = l.rr.a.d.str(uint32(e.a))
		}
	default:
		switch {
		case !l.inVisit:
			l.rr.count("MPI events outside any MPI call", 1)
		case l.nested > 0:
		case l.v.rec.Op == trace.OpInvalid:
			l.rr.count("MPI events inside MPI calls cpath has no operation for", 1)
		default:
			l.mpiEvent(e)
		}
	}
}

func (l *locReader) enter(e *event) {
	a, region := l.rr.a, uint32(e.a)
	mpi := int(region) < len(a.regionMPI) && a.regionMPI[region]
	switch {
	case l.inVisit && mpi:
		l.nested++
		l.rr.count("MPI calls inside another MPI call", 1)
	case mpi:
		l.inVisit, l.nested = true, 0
		v := &l.v
		v.region, v.enter, v.subs, v.waits, v.made = region, *e, v.subs[:0], false, false
		scl, off := uint32(undef32), uint64(0)
		if e.has(aSCL) {
			scl = uint32(e.av[aSCL])
		}
		if e.has(aOffset) {
			off = uint64(e.av[aOffset])
		}
		top := uint32(undef32)
		if n := len(l.stack); n > 0 {
			top = l.stack[n-1]
		}
		v.rec = trace.Record{Op: a.regionOp[region], Thread: l.thread, Start: a.ns(uint64(e.time)), Comm: trace.CommNone,
			Peer: trace.PeerNone, Root: trace.PeerNone, CallSite: l.rr.site(top, scl, off)}
	default:
		l.stack = append(l.stack, region)
	}
}

func (l *locReader) leave(e *event) {
	a, region := l.rr.a, uint32(e.a)
	mpi := int(region) < len(a.regionMPI) && a.regionMPI[region]
	switch {
	case l.inVisit && mpi && l.nested > 0:
		l.nested--
	case l.inVisit && region == l.v.region:
		l.inVisit = false
		l.v.rec.End = a.ns(uint64(e.time))
		l.endVisit()
	default:
		for i := len(l.stack) - 1; i >= 0; i-- {
			if l.stack[i] == region {
				l.stack = l.stack[:i]
				break
			}
		}
	}
}

// endVisit makes the call of the visit that ended.
func (l *locReader) endVisit() {
	v, rr := &l.v, l.rr
	rec := &v.rec
	if rec.Op == trace.OpInvalid {
		// An MPI function cpath has no operation for: counted with its
		// time, as the logger counts the calls it does not record.
		rr.addUnwrapped(rr.a.d.str(rr.a.d.regions[v.region].name), 1, rec.End-rec.Start)
		return
	}
	l.applyAttrs(rec, &v.enter)
	if v.made {
		l.madeComm(rec)
	}
	if rec.Op.IsPoll() {
		switch {
		case v.enter.has(aPolls):
			if p := int32(v.enter.av[aPolls]); p > 0 && len(v.subs) == 0 {
				rec.Root = p
			}
		case !rr.a.fromCPath && len(v.subs) == 0:
			rec.Root = 1 // a poll that completed nothing
		}
	}
	rec.Count = uint32(len(v.subs))
	l.calls = append(l.calls, int32(len(l.recs)))
	l.recs = append(l.recs, *rec)
	l.recs = append(l.recs, v.subs...)
	l.ending = append(l.ending, rec.End)
	l.held = append(l.held, v.waits)
	if v.waits {
		l.open[v.held] = int32(len(l.calls) - 1)
	}
}

// applyAttrs sets the fields of rec that e's cpath attributes give: an
// archive cpath wrote carries there what its events do not.
func (l *locReader) applyAttrs(rec *trace.Record, e *event) {
	if e.amask == 0 {
		return
	}
	has := e.has
	if has(aSeq) {
		rec.Seq = uint32(e.av[aSeq])
	}
	if has(aFlags) {
		rec.Flags = trace.Flags(e.av[aFlags])
	}
	if has(aReq) {
		rec.Req = uint32(e.av[aReq])
	}
	if has(aPeer) {
		rec.Peer = int32(int64(e.av[aPeer]))
	}
	if has(aTag) {
		rec.Tag = int32(int64(e.av[aTag]))
	}
	if has(aBytes) {
		rec.Bytes = uint64(e.av[aBytes])
	}
	if has(aRoot) {
		rec.Root = int32(int64(e.av[aRoot]))
	}
	if has(aComm) {
		rec.Comm = l.comm(uint32(e.av[aComm]))
	}
}

// comm is the rank's index of communicator ref, CommNone if it has none.
func (l *locReader) comm(ref uint32) uint32 {
	idx := l.rr.a.commIndex[l.rr.rank]
	if int(ref) < len(idx) && idx[ref] >= 0 {
		return uint32(idx[ref])
	}
	l.rr.count("MPI events on communicators cpath has no definition of", 1)
	return trace.CommNone
}

// world is the world rank of rank local of communicator ref (of the
// other group, on an intercommunicator, as MPI's point-to-point ranks
// are).
func (l *locReader) world(ref, local uint32) int32 {
	a := l.rr.a
	if local == undef32 || int(ref) >= len(a.comms) || !a.comms[ref].ok {
		return trace.PeerUnknown
	}
	c := &a.comms[ref]
	m := c.members
	switch {
	case c.self:
		return int32(l.rr.rank)
	case c.remote != nil && !containsRank(c.remote, l.rr.rank):
		m = c.remote
	case c.remote != nil:
		m = c.members
	}
	if int(local) >= len(m) {
		return trace.PeerUnknown
	}
	return m[local]
}

func containsRank(m []int32, r int) bool {
	for _, x := range m {
		if x == int32(r) {
			return true
		}
	}
	return false
}

// req is a tool request id for OTF2 request id id (0 is none in cpath).
func req(id uint64) uint32 { return uint32(id) + 1 }
