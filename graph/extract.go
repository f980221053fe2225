package graph

import (
	"cmp"
	"fmt"
	"io"
	"os"

	"github.com/cpath/cpath/trace"
)

// msgKey is what MPI matches a message by, from one rank's side: its
// communicator (an index into the rank's table), the peer (the
// destination of a send, the source of a receive) and the tag.
type msgKey struct {
	comm uint32
	peer int32
	tag  int32
	recv bool
	// init tells partitioned transfers apart: MPI matches them by order
	// of initialisation per envelope, so the k-th MPI_Psend_init and the
	// k-th MPI_Precv_init of one envelope both have init k (0: not
	// partitioned), and their transfers pair in start order.
	init int32
}

// keyList is the list of one rank's message ends with one key, linked
// through msgEnd.next in the order they completed.
type keyList struct {
	msgKey
	head, tail int32
	n          int32
	unsorted   bool // some end was posted before the one completed ahead of it
}

// msgEnd is one side of a point-to-point message: the call that posted it
// and the call that completed it (local indices; done's top bits carry the
// send's mode, modeMask), and for a send the bytes it sent.
type msgEnd struct {
	post, done, next int32
	bytes            uint64
}

// A send's mode, in the top bits of msgEnd.done (a rank has fewer than
// 2^30 calls). A synchronous send cannot complete before its receive is
// posted; a standard or synchronous one may be held until the receiver
// enters MPI (graph/match.go, heldBy). Buffered and ready sends never wait
// for their receiver.
const (
	syncBit  = -1 << 31
	mayHold  = 1 << 30
	modeMask = syncBit | mayHold
)

// sendMode is the mode bits of a send posted by op.
func sendMode(op trace.Op) int32 {
	switch op {
	case trace.OpSsend, trace.OpIssend, trace.OpSsendInit:
		return syncBit | mayHold
	case trace.OpSend, trace.OpIsend, trace.OpSendInit, trace.OpSendrecv, trace.OpSendrecvReplace:
		return mayHold
	}
	return 0
}

// collEnd is one member's part in a collective instance.
type collEnd struct {
	comm       int32 // local index while extracting, then global
	seq        uint32
	op         trace.Op
	root       int32
	post, done int32
	clean      bool   // no other request of the rank was pending when it was posted (a global split may cut here)
	inPlace    bool   // MPI_IN_PLACE was passed: its bytes may not say what it moved
	bytes      uint64 // what the call that made it logged (a persistent one's MPI_Start logs none)
}

// reqInfo is what a rank's log says about one request.
type reqInfo struct {
	class      trace.Class
	persistent bool
	inPlace    bool  // a collective's: MPI_IN_PLACE was passed
	mode       int32 // of a send: sendMode
	op         trace.Op
	post       int32
	comm       uint32
	peer, tag  int32
	seq        uint32
	root       int32
	active     int32  // persistent: index in extractor.active of the Start calls not yet completed, -1 for none yet
	bytes      uint64 // what the call that made it says it sends or receives
	init       int32  // partitioned: msgKey.init; 0 for other requests
	parts      int32  // partitioned: the partition count
}

// partEvent is a partition of one partitioned transfer made ready (at
// the sender: an MPI_Pready*) or seen complete (at the receiver: a
// successful MPI_Parrived, or with part -1 the completion of the whole
// receive). post is the transfer's MPI_Start, call the call; local ids.
type partEvent struct {
	post, call  int32
	part, parts int32
	peer        int32 // the other side's world rank
}

// rankData is what Build keeps of one rank's log.
type rankData struct {
	hdr     trace.Header // with the clock measured at MPI_Finalize, if any
	trailer trace.Trailer
	comms   []trace.Comm
	n       int32             // calls
	polls   int64             // the calls its coalesced polls stand for beyond their one record each (PAG.CoalescedPolls)
	rmaTo   map[int32]RMAPair // by target world rank: its one-sided transfers (PAG.RMATraffic)
	firsts  int32             // calls that are the first of their thread (the number of threads)
	ordered bool              // each call starts no earlier than the one before ends, and ends no earlier than it starts
	keys    []keyList
	ends    endStore
	colls   []collEnd
	open    int         // receive and collective requests no call of the log completed (freed or left pending)
	ready   []partEvent // partitioned sends: each partition's MPI_Pready*, in log order
	arrived []partEvent // partitioned receives: successful MPI_Parrived calls and completions, in log order
	pscw    pscwLog     // general active target synchronisation (graph/pscw.go)
	cut     error       // the damage a log cut short ends in, read up to it (Run.callsOnly); nil: whole
	sites   []uint64    // its calls' call sites (Calls.Site indexes them from 0 until Build joins the ranks')
	// sitePath is, beside sites, each site's call path as the log's
	// reader numbers them (trace.Record.Path; 0 for none), and paths
	// that reader's table of them.
	sitePath []uint32
	paths    [][]uint64
}

// openRankLog opens rank r's log and checks that its header says so.
func openRankLog(path string, rank int) (*os.File, *trace.Reader, error) {
	f, rd, err := openLog(path, 256<<10)
	if err != nil {
		return nil, nil, err
	}
	if h := rd.Header(); h.Rank != rank {
		f.Close()
		return nil, nil, fmt.Errorf("%s: header says rank %d, expected rank %d", path, h.Rank, rank)
	}
	return f, rd, nil
}

// countCalls counts the calls of rank r's log, for a log without a trailer
// that counts them (a rank that died): it reads the log through once
// (trace.Reader.Skim). Damage anywhere (a corrupt or cut frame, a call cut
// from its sub-records) is the error naming the file that the reading
// proper would give; a rank that died between frames is counted up to its
// last record.
func countCalls(run *Run, rank int) (int64, error) {
	rd, err := run.OpenRank(rank)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	n, err := rd.Skim(func(trace.Op) bool { return false }, nil)
	if err != nil && !run.cutShort(err) {
		return 0, err
	}
	if err := rd.Incomplete(); err != nil && !run.cutShort(err) {
		return 0, err
	}
	return int64(n), nil
}

// readRank reads rank r's log (owned rank i) into the PAG's calls from
// g.rankStart[i] on, as many as Build placed there: with times on the
// rank's clock and its own communicator numbers, which place turns into
// the run's once every rank's communicators are known. The rankData's n
// is the calls the log holds, which Build checks against the count it
// placed (calls beyond the places are not kept). Damage is an error
// naming the file, as for countCalls.
func readRank(run *Run, rank, i int, g *rankCalls) (*rankData, error) {
	if run.Source == nil && run.Files[rank] == "" {
		// A log missing (LoadCalls): no calls, and nothing to say but
		// Load's note.
		return &rankData{hdr: run.Headers[rank], trailer: trace.Trailer{Status: trace.EndFinalized}}, nil
	}
	rd, err := run.OpenRank(rank)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	d := &rankData{}
	x := newExtractor(d, g, i, trace.NewCommBuilder(rd.Header()))
	x.threads, x.callsOnly = rd.Header().Threads, run.callsOnly
	for {
		var recs []trace.Record
		recs, err = rd.Batch()
		for k := range recs {
			x.add(&recs[k])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if !run.cutShort(err) {
				return nil, err
			}
			d.cut = err
			break
		}
	}
	if err := rd.Incomplete(); err != nil && !run.cutShort(err) {
		return nil, err
	} else if err != nil {
		d.cut = err
	}
	d.n = x.n
	if int(x.n) != len(x.op) {
		return d, nil // placed again by its count (Build)
	}
	x.finish()
	d.hdr, d.trailer, d.comms, d.sites = *rd.Header(), rd.Trailer(), x.cb.Comms(), x.sites
	d.sitePath, d.paths = x.sitePath, rd.Paths()
	return d, nil
}

// place puts owned rank i's calls, as readRank left them, in the run's
// terms: communicators in the run's table (gid: the rank's index → the
// run's), times on the global clock (the rank's clock model, which takes
// the offset measured at MPI_Finalize, at the end of the log). It notes
// whether the calls are in time order.
func (d *rankData) place(g *rankCalls, i int, gids []int32) {
	lo, hi := g.rankStart[i], g.rankStart[i+1]
	clk := d.hdr.Clock.Line()
	comm, start, end := g.Comm[lo:hi], g.Start[lo:hi], g.End[lo:hi]
	d.ordered = true
	for c := range comm {
		comm[c] = gid(gids, uint32(comm[c]))
		s, e := start[c]+clk.Offset(start[c]), end[c]+clk.Offset(end[c])
		start[c], end[c] = s, e
		if e < s || c > 0 && s < end[c-1] {
			d.ordered = false
		}
	}
}

// extractor turns a rank's records, one at a time, into its calls (in the
// PAG's arrays: times on the global clock, communicators in the run's
// table), message ends and collective memberships.
type extractor struct {
	*rankData
	n      int32 // calls so far
	op     []trace.Op
	thread []uint16
	start  []int64
	end    []int64
	bytes  []uint64
	comm   []int32
	site   []uint32 // index in sites
	// sites are the rank's call sites, by first use, a site being a
	// return address and the call path above it; siteIdx finds them,
	// siteCache the last few.
	sites     []uint64
	sitePath  []uint32
	siteIdx   map[siteKey]uint32
	siteCache [64]siteEntry
	cb        *trace.CommBuilder // the rank's communicators, from the calls that make them
	last      []int32            // last call of each thread, -1 for none yet
	cur       int32              // the call the next sub-records belong to
	cls       trace.Class
	curComm   uint32
	reqs      reqTable
	pool      []reqInfo // no pointers, so that filling one is plain stores
	free      []int32
	active    [][]int32 // persistent requests' Start calls not yet completed, oldest first
	// activeSeq is, beside active, the sequence numbers of a persistent
	// collective's starts (empty for other requests).
	activeSeq [][]uint32
	keyTab    []int32 // open addressing into keys
	base      int32   // the rank's first call among the analyzer rank's
	threads   bool    // the log's threads called MPI at once (trace.Header.Threads)
	callsOnly bool    // keep no message ends (Run.callsOnly)
	// unproductive marks the coalesced runs of polls that completed
	// nothing (trace.Record.Unproductive), by the analyzer rank's call.
	unproductive bitset
	fileDone     bitset           // the completions of MPI-IO requests, by the analyzer rank's call
	waitUnknown  bitset           // the blocking completions of no request the log holds, likewise
	pending      int32            // requests started and not yet completed or freed (approximate if Open MPI reuses a live handle: <= 0 is none)
	freedRecvs   int32            // nonblocking receives freed before a call completed them: matched to nothing
	pinits       map[msgKey]int32 // partitioned inits so far by envelope (made at the first)
	curReady     *reqInfo         // the partitioned send request of an MPI_Pready_list, for its sub-records
}

func newExtractor(d *rankData, g *rankCalls, rank int, cb *trace.CommBuilder) *extractor {
	lo, hi := g.rankStart[rank], g.rankStart[rank+1]
	x := &extractor{rankData: d, cur: -1, cb: cb, base: lo, unproductive: g.unproductive, fileDone: g.fileDone, waitUnknown: g.waitUnknown,
		op: g.Op[lo:hi], thread: g.Thread[lo:hi], start: g.Start[lo:hi], end: g.End[lo:hi],
		site: g.Site[lo:hi], bytes: g.Bytes[lo:hi], comm: g.Comm[lo:hi], siteIdx: map[siteKey]uint32{}}
	x.keyTab = make([]int32, 16)
	for i := range x.keyTab {
		x.keyTab[i] = -1
	}
	x.reqs.init()
	return x
}

// siteOf is the index of call site pc by call path path (the reader's
// number of it) among the rank's (x.sites): from a small cache of the
// last ones seen (a loop makes its calls from a few sites), else from the
// map of all.
func (x *extractor) siteOf(pc uint64, path uint32) uint32 {
	key := siteKey{pc, path}
	h := pc ^ pc>>7 ^ uint64(path)*0x9e3779b1
	e := &x.siteCache[h&uint64(len(x.siteCache)-1)]
	if e.key == key && e.ok {
		return e.idx
	}
	k, ok := x.siteIdx[key]
	if !ok {
		k = uint32(len(x.sites))
		x.siteIdx[key] = k
		x.sites = append(x.sites, pc)
		x.sitePath = append(x.sitePath, path)
	}
	*e = siteEntry{key, k, true}
	return k
}

// siteKey is a call site: its return address and call path.
type siteKey struct {
	pc   uint64
	path uint32
}

// siteEntry is a slot of extractor.siteCache.
type siteEntry struct {
	key siteKey
	idx uint32
	ok  bool
}

// opClass is trace.Op.Class by table.
var opClass = func() (t [256]trace.Class) {
	for o := range t {
		t[o] = trace.Op(o).Class()
	}
	return t
}()

// rmaTransfer counts a one-sided call (ClassRMA or ClassRMARequest) that
// is a transfer to its target (PAG.RMATraffic).
func (x *extractor) rmaTransfer(rec *trace.Record) {
	if !rec.Op.IsRMATransfer() || rec.Peer < 0 || rec.Flags&trace.FlagError != 0 {
		return
	}
	if x.rmaTo == nil {
		x.rmaTo = map[int32]RMAPair{}
	}
	t := x.rmaTo[rec.Peer]
	t.Count++
	t.Bytes += int64(rec.Bytes)
	x.rmaTo[rec.Peer] = t
}

// add takes the next record of the log.
func (x *extractor) add(rec *trace.Record) {
	cls := opClass[rec.Op]
	if cls == trace.ClassSub {
		x.sub(rec)
		return
	}
	c := x.n
	x.n++
	if int(c) >= len(x.op) {
		x.cls = trace.ClassOther // more calls than counted: an error (readRank)
		return
	}
	x.op[c] = rec.Op
	x.thread[c] = rec.Thread
	x.start[c], x.end[c] = rec.Start, rec.End // on the rank's clock until place
	x.site[c] = x.siteOf(rec.CallSite, rec.Path)
	x.bytes[c] = rec.Bytes
	if rec.Op == trace.OpPcontrol {
		x.bytes[c] = PcontrolBytes(rec.Tag) // a phase mark: its level (see Calls.Bytes)
	}
	if rec.Unproductive() {
		x.unproductive.setAtomic(int(x.base + c)) // ranks are read in parallel
		x.polls += int64(rec.Polls()) - 1
	}
	if cls == trace.ClassComplete && rec.Count == 0 && !rec.Op.IsPoll() && rec.Flags&trace.FlagNullRequests == 0 && len(x.waitUnknown) > 0 {
		x.waitUnknown.setAtomic(int(x.base + c))
	}
	comm := rec.Comm
	if rec.Op.IsWorldBarrier() {
		comm = trace.CommWorld // its record names none
	}
	x.comm[c] = int32(comm) // the rank's index (CommNone: -1) until place
	t := int(rec.Thread)
	if t >= len(x.last) {
		for len(x.last) <= t {
			x.last = append(x.last, -1)
		}
	}
	if x.last[t] < 0 {
		x.firsts++
	}
	x.last[t] = c
	x.cur, x.cls, x.curComm = c, cls, rec.Comm

	switch cls {
	case trace.ClassOther:
		if rec.Op.IsWorldBarrier() {
			x.colls = append(x.colls, collEnd{int32(trace.CommWorld), 0, rec.Op, -1, c, c, true, false, 0})
		}
	case trace.ClassSend:
		if rec.Peer >= 0 {
			x.addEnd(msgKey{rec.Comm, rec.Peer, rec.Tag, false, 0}, c, c, sendMode(rec.Op), rec.Bytes)
		}
	case trace.ClassRecv:
		if rec.Peer >= 0 && rec.Flags&trace.FlagCancelled == 0 {
			x.addEnd(msgKey{rec.Comm, rec.Peer, rec.Tag, true, 0}, c, c, 0, 0)
		}
	case trace.ClassSendRecv:
		if rec.Peer >= 0 {
			x.addEnd(msgKey{rec.Comm, rec.Peer, rec.Tag, false, 0}, c, c, sendMode(rec.Op), rec.Bytes)
		}
	case trace.ClassMprobe:
		// The probe matched the message: the receive's end in the message
		// order, and what waited for the sender. Mrecv and Imrecv only
		// take it through its handle (an Imrecv's request is followed, to
		// be dropped at its completion, but matches nothing). A run of
		// MPI_Improbe calls that found nothing (its Peer the source asked
		// for) matched no message: as one, it took the place of the next
		// receive and shifted every later message of the key.
		if rec.Peer >= 0 && !rec.Unproductive() {
			x.addEnd(msgKey{rec.Comm, rec.Peer, rec.Tag, true, 0}, c, c, 0, 0)
		}
	case trace.ClassIsend, trace.ClassIrecv, trace.ClassSendInit, trace.ClassRecvInit, trace.ClassIcollective, trace.ClassMrecv,
		trace.ClassFileIIO, trace.ClassRMARequest, // file and RMA requests complete locally: followed only to retire them
		trace.ClassCollInit:
		if cls == trace.ClassRMARequest {
			x.pscw.call(rec, c)
			x.rmaTransfer(rec)
		}
		if rec.Flags&trace.FlagNewReq != 0 {
			q := x.newReq(rec.Req)
			*q = reqInfo{class: cls, persistent: rec.Flags&trace.FlagPersistent != 0, inPlace: rec.Flags&trace.FlagInPlace != 0,
				post: c, comm: rec.Comm, peer: rec.Peer, tag: rec.Tag,
				mode: sendMode(rec.Op), op: rec.Op, seq: rec.Seq, root: rec.Root, active: -1, bytes: rec.Bytes}
			if rec.Op == trace.OpPsendInit || rec.Op == trace.OpPrecvInit {
				x.partitionedInit(q, rec)
			}
			if rec.Flags&trace.FlagPersistent == 0 {
				x.pending++ // a persistent one is pending once started
			}
		}
	case trace.ClassCommCreate:
		x.cb.Add(rec)
		if rec.Op.IsNonblockingCommCreate() {
			if rec.Flags&trace.FlagNewReq != 0 {
				*x.newReq(rec.Req) = reqInfo{class: trace.ClassIcollective, post: c, comm: rec.Comm, op: rec.Op, seq: rec.Seq, root: -1, active: -1}
				x.pending++
			}
		} else if rec.Seq != 0 {
			x.colls = append(x.colls, collEnd{int32(rec.Comm), rec.Seq, rec.Op, -1, c, c, x.pending <= 0, false, rec.Bytes})
		}
	case trace.ClassCollective:
		x.colls = append(x.colls, collEnd{int32(rec.Comm), rec.Seq, rec.Op, rec.Root, c, c, x.pending <= 0, rec.Flags&trace.FlagInPlace != 0, rec.Bytes})
		if rec.Op.IsRMA() {
			x.pscw.created(rec)
		}
	case trace.ClassRMA:
		x.pscw.call(rec, c)
		x.rmaTransfer(rec)
	case trace.ClassRMAGroup:
		x.pscw.group(rec, c)
	case trace.ClassStart:
		if rec.Op == trace.OpStart {
			if q := x.req(rec.Req); q != nil {
				x.startReq(q, c, rec.Seq)
			}
		}
	case trace.ClassPartitioned:
		x.partitioned(rec, c)
	case trace.ClassRequestFree:
		if qi := x.reqs.get(rec.Req); qi >= 0 {
			q := &x.pool[qi]
			n := int32(1)
			if q.persistent {
				n = int32(x.nactive(q))
			}
			if x.uncompletedSends(q) {
				x.pending -= n
				x.dropReq(rec.Req, qi)
			} else if !q.persistent || x.nactive(q) == 0 {
				if !q.persistent {
					x.pending-- // freed while pending: no longer followed
					if q.class == trace.ClassIrecv {
						x.freedRecvs++
					}
				}
				x.dropReq(rec.Req, qi)
			}
		}
	}
}

// uncompletedSends puts the messages of send request q that no call of
// the log completes (q is freed or left pending) into their key's order,
// as MPI matches them, by posting: a nonblocking send's post, or each
// Start of a persistent one not yet completed. Each completes in no call
// of the sender, so it holds none (mode 0: no Late Receiver). Without
// them a later send of the same key would take the receive they matched
// (MPI_Isend and MPI_Request_free, as LAMMPS's irregular exchanges do,
// made cycles). It returns false, doing nothing, for other requests.
func (x *extractor) uncompletedSends(q *reqInfo) bool {
	if q.class != trace.ClassIsend && q.class != trace.ClassSendInit || q.init > 0 {
		return false
	}
	if q.peer < 0 {
		return true // MPI_PROC_NULL: no message
	}
	k := msgKey{q.comm, q.peer, q.tag, false, 0}
	if !q.persistent {
		x.addEnd(k, q.post, q.post, 0, q.bytes)
		return true
	}
	if q.active >= 0 {
		for _, c := range x.active[q.active] {
			x.addEnd(k, c, c, 0, q.bytes)
		}
		x.active[q.active] = nil
	}
	return true
}

// sub takes a sub-record of call x.cur.
func (x *extractor) sub(s *trace.Record) {
	c := x.cur
	switch x.cls {
	case trace.ClassSendRecv:
		if s.Op == trace.OpRecvPart && s.Peer >= 0 && s.Flags&trace.FlagCancelled == 0 {
			x.addEnd(msgKey{x.curComm, s.Peer, s.Tag, true, 0}, c, c, 0, 0)
		}
	case trace.ClassStart:
		if s.Op == trace.OpReqStart {
			if q := x.req(s.Req); q != nil {
				x.startReq(q, c, s.Seq)
			}
		}
	case trace.ClassRMAGroup:
		if s.Op == trace.OpWinGroupMember {
			x.pscw.member(s.Peer)
		}
	case trace.ClassCommCreate:
		x.cb.Add(s) // its members and neighbours
	case trace.ClassPartitioned:
		if s.Op == trace.OpPartition && x.curReady != nil {
			x.readyPart(x.curReady, c, s.Tag)
		}
	case trace.ClassComplete:
		if s.Op != trace.OpReqDone {
			return
		}
		qi := x.reqs.get(s.Req)
		if qi < 0 {
			return
		}
		q := &x.pool[qi]
		post, seq := q.post, q.seq
		if q.persistent {
			if x.nactive(q) == 0 {
				return
			}
			a := &x.active[q.active]
			post, *a = (*a)[0], (*a)[1:]
			if q.class == trace.ClassCollInit {
				sq := &x.activeSeq[q.active]
				seq, *sq = (*sq)[0], (*sq)[1:]
			}
		} else {
			x.dropReq(s.Req, qi) // q stays valid until the next newReq
		}
		x.pending--
		if q.op.IsIO() && len(x.fileDone) > 0 {
			x.fileDone.setAtomic(int(x.base + c)) // ranks are read in parallel
		}
		switch q.class {
		case trace.ClassIsend, trace.ClassSendInit:
			if q.peer >= 0 {
				x.addEnd(msgKey{q.comm, q.peer, q.tag, false, q.init}, post, c, q.mode, q.bytes)
			}
		case trace.ClassIrecv, trace.ClassRecvInit:
			if s.Peer >= 0 && s.Flags&trace.FlagCancelled == 0 {
				x.addEnd(msgKey{q.comm, s.Peer, s.Tag, true, q.init}, post, c, 0, 0)
				if q.init > 0 {
					x.arrived = append(x.arrived, partEvent{post, c, -1, q.parts, s.Peer})
				}
			}
		case trace.ClassIcollective, trace.ClassCollInit:
			x.colls = append(x.colls, collEnd{int32(q.comm), seq, q.op, q.root, post, c, false, q.inPlace, q.bytes})
		}
	}
}

// startReq records that call c started persistent request q; seq numbers
// the start of a persistent collective in its communicator's sequence.
func (x *extractor) startReq(q *reqInfo, c int32, seq uint32) {
	x.pending++
	if q.active < 0 {
		q.active = int32(len(x.active))
		x.active = append(x.active, nil)
		x.activeSeq = append(x.activeSeq, nil)
	}
	x.active[q.active] = append(x.active[q.active], c)
	if q.class == trace.ClassCollInit {
		x.activeSeq[q.active] = append(x.activeSeq[q.active], seq)
	}
}

func (x *extractor) nactive(q *reqInfo) int {
	if q.active < 0 {
		return 0
	}
	return len(x.active[q.active])
}

func (x *extractor) req(id uint32) *reqInfo {
	if qi := x.reqs.get(id); qi >= 0 {
		return &x.pool[qi]
	}
	return nil
}

// newReq returns the slot for request id, replacing what was there.
func (x *extractor) newReq(id uint32) *reqInfo {
	if qi := x.reqs.get(id); qi >= 0 {
		return &x.pool[qi]
	}

	var qi int32
	if n := len(x.free); n > 0 {
		qi = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		qi = int32(len(x.pool))
		x.pool = append(x.pool, reqInfo{})
	}
	x.reqs.put(id, qi)
	return &x.pool[qi]
}

func (x *extractor) dropReq(id uint32, qi int32) {
	x.reqs.del(id)
	x.free = append(x.free, qi)
}

func hashKey(k msgKey) uint32 {
	h := k.comm*0x9E3779B1 ^ uint32(k.peer)*0x85EBCA77 ^ uint32(k.tag)*0xC2B2AE3D ^ uint32(k.init)*0x165667B1
	if k.recv {
		h ^= 0x27D4EB2F
	}
	return h ^ h>>15
}

// addEnd appends a message end to the list of its key.
func (x *extractor) addEnd(k msgKey, post, done int32, mode int32, bytes uint64) {
	if x.callsOnly {
		return // nothing will be matched (ReadCalls)
	}
	mask := uint32(len(x.keyTab) - 1)
	h := hashKey(k) & mask
	var id int32
	for {
		id = x.keyTab[h]
		if id < 0 {
			id = int32(len(x.keys))
			x.keys = append(x.keys, keyList{msgKey: k, head: -1, tail: -1})
			x.keyTab[h] = id
			if 2*len(x.keys) > len(x.keyTab) {
				x.growKeys()
			}
			break
		}
		if x.keys[id].msgKey == k {
			break
		}
		h = (h + 1) & mask
	}
	e := x.ends.add(msgEnd{post, done | mode, -1, bytes})
	l := &x.keys[id]
	if l.tail < 0 {
		l.head = e
	} else {
		t := x.ends.at(l.tail)
		if x.postedBefore(post, t.post) {
			l.unsorted = true
		}
		t.next = e
	}
	l.tail = e
	l.n++
}

// postedBefore reports whether call a posted its message end before call
// b (local ids). On one thread at a time that is the log's order; with
// MPI_THREAD_MULTIPLE the log holds the threads' calls in the order they
// ended, and the order they were posted in, the one MPI matches in, is
// their starts'.
func (x *extractor) postedBefore(a, b int32) bool {
	return postOrder(x.threads, x.start, a, b) < 0
}

// postOrder orders two calls that posted message ends by when they were
// posted (postedBefore), start holding the calls' starts by id.
func postOrder(threads bool, start []int64, a, b int32) int {
	if threads {
		if c := cmp.Compare(start[a], start[b]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

// endStore holds a rank's message ends in blocks, so that they are never
// copied as they grow.
type endStore struct {
	blocks []*[endBlockLen]msgEnd
	n      int32
}

const endBlockBits = 12
const endBlockLen = 1 << endBlockBits

func (s *endStore) add(e msgEnd) int32 {
	i := s.n
	if int(i>>endBlockBits) == len(s.blocks) {
		s.blocks = append(s.blocks, new([endBlockLen]msgEnd))
	}
	s.blocks[i>>endBlockBits][i&(endBlockLen-1)] = e
	s.n++
	return i
}

func (s *endStore) at(i int32) *msgEnd { return &s.blocks[i>>endBlockBits][i&(endBlockLen-1)] }

func (x *extractor) growKeys() {
	x.keyTab = make([]int32, 2*len(x.keyTab))
	for i := range x.keyTab {
		x.keyTab[i] = -1
	}
	mask := uint32(len(x.keyTab) - 1)
	for id := range x.keys {
		h := hashKey(x.keys[id].msgKey) & mask
		for x.keyTab[h] >= 0 {
			h = (h + 1) & mask
		}
		x.keyTab[h] = int32(id)
	}
}

// finish completes the rank's data once its log has been read.
func (x *extractor) finish() {
	d := x.rankData
	d.open = int(x.freedRecvs)
	x.reqs.each(func(qi int32) {
		q := &x.pool[qi]
		switch {
		case x.uncompletedSends(q):
		case !q.persistent:
			d.open++
		default:
			d.open += x.nactive(q)
		}
	})
}

// reqTable maps live request ids to reqInfo slots: open addressing with
// linear probing, no tombstones.
type reqTable struct {
	keys []uint32
	vals []int32 // -1: empty
	n    int
}

func (t *reqTable) init() {
	t.keys = make([]uint32, 64)
	t.vals = make([]int32, 64)
	for i := range t.vals {
		t.vals[i] = -1
	}
}

func (t *reqTable) home(k uint32) int {
	return int((k * 0x9E3779B1) & uint32(len(t.keys)-1))
}

func (t *reqTable) get(k uint32) int32 {
	mask := len(t.keys) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v < 0 || t.keys[i] == k {
			return v
		}
	}
}

func (t *reqTable) put(k uint32, v int32) {
	mask := len(t.keys) - 1
	i := t.home(k)
	for t.vals[i] >= 0 && t.keys[i] != k {
		i = (i + 1) & mask
	}
	if t.vals[i] < 0 {
		t.n++
	}
	t.keys[i], t.vals[i] = k, v
	if 2*t.n > len(t.keys) {
		old := *t
		t.keys = make([]uint32, 2*len(old.keys))
		t.vals = make([]int32, 2*len(old.vals))
		for i := range t.vals {
			t.vals[i] = -1
		}
		t.n = 0
		for i, v := range old.vals {
			if v >= 0 {
				t.put(old.keys[i], v)
			}
		}
	}
}

func (t *reqTable) del(k uint32) {
	mask := len(t.keys) - 1
	i := t.home(k)
	for {
		if t.vals[i] < 0 {
			return
		}
		if t.keys[i] == k {
			break
		}
		i = (i + 1) & mask
	}
	t.vals[i] = -1
	t.n--
	// Shift back the entries of the probe run that can move into the hole.
	for j := (i + 1) & mask; t.vals[j] >= 0; j = (j + 1) & mask {
		h := t.home(t.keys[j])
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			t.vals[j] = -1
			i = j
		}
	}
}

// each calls f for every live entry, in table order.
func (t *reqTable) each(f func(v int32)) {
	for _, v := range t.vals {
		if v >= 0 {
			f(v)
		}
	}
}

// partitionedInit numbers partitioned request q (made by rec) among the
// rank's partitioned inits of its envelope, and keeps its partition
// count (trace: Root of MPI_Psend_init and MPI_Precv_init).
func (x *extractor) partitionedInit(q *reqInfo, rec *trace.Record) {
	if x.pinits == nil {
		x.pinits = map[msgKey]int32{}
	}
	k := msgKey{rec.Comm, rec.Peer, rec.Tag, rec.Op == trace.OpPrecvInit, 0}
	x.pinits[k]++
	q.init, q.parts = x.pinits[k], max(rec.Root, 1)
	q.mode = syncBit // its transfer completes only once the receive is started (MPICH's clear-to-send)
}

// partitioned takes an MPI_Pready* or MPI_Parrived call c on a started
// partitioned request.
func (x *extractor) partitioned(rec *trace.Record, c int32) {
	x.curReady = nil
	q := x.req(rec.Req)
	if q == nil || q.init == 0 || x.nactive(q) == 0 {
		return
	}
	switch rec.Op {
	case trace.OpPready:
		x.readyPart(q, c, rec.Tag)
	case trace.OpPreadyRange:
		for i := max(rec.Tag, 0); i <= int32(rec.Bytes) && i < q.parts; i++ {
			x.readyPart(q, c, i)
		}
	case trace.OpPreadyList:
		x.curReady = q // the partitions follow in sub-records
	case trace.OpParrived:
		if rec.Bytes != 0 && rec.Tag >= 0 && rec.Tag < q.parts { // the flag: the partition had arrived
			a := x.active[q.active]
			x.arrived = append(x.arrived, partEvent{a[len(a)-1], c, rec.Tag, q.parts, q.peer})
		}
	}
}

// readyPart records that call c made partition i of partitioned send q's
// current transfer ready.
func (x *extractor) readyPart(q *reqInfo, c, i int32) {
	if i < 0 || i >= q.parts || q.class != trace.ClassSendInit || x.nactive(q) == 0 {
		return
	}
	a := x.active[q.active]
	x.ready = append(x.ready, partEvent{a[len(a)-1], c, i, q.parts, q.peer})
}
