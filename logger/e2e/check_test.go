//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/trace"
)

// call is one timed record of a rank with the sub-records that extend it.
type call struct {
	trace.Record
	Rank     int
	Index    int // position of the record in Log.Records
	Subs     []trace.Record
	CommName string // name of Record.Comm in the rank's table, "" for CommNone
}

func (c *call) String() string {
	return fmt.Sprintf("record %d %v (comm %q peer %d tag %d root %d bytes %d seq %d req %d count %d flags %#x)",
		c.Index, c.Op, c.CommName, c.Peer, c.Tag, c.Root, c.Bytes, c.Seq, c.Req, c.Count, c.Flags)
}

// message is one point-to-point message as one side logged it.
type message struct {
	Src, Dst int32 // world ranks
	Comm     string
	Tag      int32
	Bytes    uint64
	Op       trace.Op // the call that posted (send side) or completed (receive side) it
	Rank     int      // the rank whose log it comes from
	Wild     bool     // receive posted with MPI_ANY_SOURCE
}

// messages collects expected messages as both sides log them.
type messages struct{ sends, recvs []message }

// add expects a message from src to dst, logged by the call sop on the
// sender and the call rop on the receiver.
func (l *messages) add(src, dst int, comm string, tag int32, bytes uint64, sop, rop trace.Op, wild bool) {
	l.sends = append(l.sends, message{Src: int32(src), Dst: int32(dst), Comm: comm, Tag: tag, Bytes: bytes, Op: sop, Rank: src})
	l.recvs = append(l.recvs, message{Src: int32(src), Dst: int32(dst), Comm: comm, Tag: tag, Bytes: bytes, Op: rop, Rank: dst, Wild: wild})
}

// request is what a rank's log says about one tool request id.
type request struct {
	create   *call
	active   bool
	done     int // completions
	starts   int // persistent: activations
	freed    bool
	comm     string
	isRecv   bool
	isSend   bool
	isPersis bool
}

// run is a logged MPI run after the checks every program must pass.
type run struct {
	np     int
	logs   []*trace.Log
	calls  [][]call
	counts []map[trace.Op]int // per rank: MPI calls per op (a coalesced poll record counts its calls)
	subs   []map[trace.Op]int // per rank: sub-records under calls of each op (not neighbour lists)
	sends  []message
	recvs  []message
	comms  map[string]trace.Comm // by name, as rank tables agree on them
}

// rootedOps are the collectives whose Root must name a member.
var rootedOps = map[trace.Op]bool{
	trace.OpBcast: true, trace.OpReduce: true, trace.OpGather: true, trace.OpGatherv: true,
	trace.OpScatter: true, trace.OpScatterv: true,
	trace.OpIbcast: true, trace.OpIreduce: true, trace.OpIgather: true, trace.OpIgatherv: true,
	trace.OpIscatter: true, trace.OpIscatterv: true,
}

// hasComm reports whether calls of class c take a communicator argument,
// and so must name a communicator of the rank's table.
func hasComm(c trace.Class) bool {
	switch c {
	case trace.ClassSend, trace.ClassRecv, trace.ClassSendRecv, trace.ClassIsend, trace.ClassIrecv,
		trace.ClassSendInit, trace.ClassRecvInit, trace.ClassProbe, trace.ClassCollective,
		trace.ClassIcollective, trace.ClassCommCreate, trace.ClassCommFree, trace.ClassFileIO, trace.ClassFileIIO,
		trace.ClassRMA, trace.ClassRMARequest, trace.ClassRMAGroup, trace.ClassCollInit:
		return true
	}
	return false
}

// inParentSeq reports whether calls of op are collectives over their
// communicator and so take the next number of its sequence.
// MPI_Comm_create_group is collective over the new group only: the other
// ranks of the parent communicator do not call it, so counting it there
// would put their sequences out of step.
func inParentSeq(op trace.Op) bool {
	return op.IsCollective() && op != trace.OpCommCreateGroup && !noParent(op)
}

// noParent reports the constructors that have no parent communicator.
func noParent(op trace.Op) bool {
	switch op {
	case trace.OpCommGetParent, trace.OpCommCreateFromGroup, trace.OpIntercommCreateFromGroups:
		return true
	}
	return false
}

// check runs the checks every complete log of an np-rank run must pass and
// indexes the logs for the program-specific assertions. exe is the base name
// of the program the headers must name.
func check(t *testing.T, logs []*trace.Log, np int, exe string) *run {
	t.Helper()
	r := &run{np: np, logs: logs, comms: map[string]trace.Comm{}}
	checkHeaders(t, logs, np, exe)
	for rank, l := range logs {
		r.calls = append(r.calls, nil)
		r.counts = append(r.counts, map[trace.Op]int{})
		r.subs = append(r.subs, map[trace.Op]int{})
		r.checkRank(t, rank, l)
	}
	r.checkComms(t)
	r.checkSeq(t)
	r.checkMessages(t)
	return r
}

func checkHeaders(t *testing.T, logs []*trace.Log, np int, exe string) {
	t.Helper()
	pids := map[string]int{}
	for rank, l := range logs {
		h := &l.Header
		if h.Version != trace.Version || h.Rank != rank || h.Size != np {
			t.Errorf("rank %d: header version %d rank %d size %d, want %d, %d, %d",
				rank, h.Version, h.Rank, h.Size, trace.Version, rank, np)
		}
		if h.RunID == "" || h.RunID != logs[0].Header.RunID {
			t.Errorf("rank %d: run id %q, rank 0 has %q (want equal, non-empty)", rank, h.RunID, logs[0].Header.RunID)
		}
		if h.Host == "" || h.PID <= 0 {
			t.Errorf("rank %d: header host %q pid %d", rank, h.Host, h.PID)
		}
		if h.CPUs <= 0 || h.HostCPUs < h.CPUs {
			t.Errorf("rank %d: header cpus %d, host_cpus %d: want the process's at most the host's, both recorded", rank, h.CPUs, h.HostCPUs)
		}
		key := h.Host + ":" + strconv.Itoa(h.PID)
		if prev, ok := pids[key]; ok {
			t.Errorf("ranks %d and %d both claim process %s", prev, rank, key)
		}
		pids[key] = rank
		if exe != "" && filepath.Base(h.Exe) != exe {
			t.Errorf("rank %d: header exe %q, want a path to %q", rank, h.Exe, exe)
		}
		if l.Damage != nil {
			t.Errorf("rank %d: damaged log: %v", rank, l.Damage)
		}
		tr := l.Trailer
		if tr.Status != trace.EndFinalized || tr.Dropped != 0 {
			t.Errorf("rank %d: trailer status %v, dropped %d; want finalized, 0", rank, tr.Status, tr.Dropped)
		}
		if tr.Records != uint64(len(l.Records)) {
			t.Errorf("rank %d: trailer counts %d records, the log holds %d", rank, tr.Records, len(l.Records))
		}
		if !l.Complete() {
			t.Errorf("rank %d: log not complete", rank)
		}
		if h.Clock.Final == nil {
			t.Errorf("rank %d: no clock measurement at MPI_Finalize in a finalized run", rank)
		}
	}
}

// checkRank checks one rank's records on their own: timing, sub-record
// structure, communicator references, sequence numbers, roots and request
// life cycles; and collects its messages.
func (r *run) checkRank(t *testing.T, rank int, l *trace.Log) {
	t.Helper()
	recs := l.Records
	errs := 0
	errorf := func(f string, a ...any) {
		// One broken invariant tends to repeat on every record: report a
		// few, then say how many.
		errs++
		if errs <= 10 {
			t.Errorf("rank %d: "+f, append([]any{rank}, a...)...)
		}
	}
	defer func() {
		if errs > 10 {
			t.Errorf("rank %d: %d more errors", rank, errs-10)
		}
	}()

	commName := func(idx uint32) string {
		if idx == trace.CommNone || int(idx) >= len(l.Comms) {
			return ""
		}
		return l.Comms[idx].Name
	}
	lastEnd := map[uint16]int64{}
	seq := map[uint32]uint32{}
	created := map[uint32]bool{}
	reqs := map[uint32]*request{}
	var calls []call
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec.Op.IsSub() {
			errorf("record %d: stray sub-record %v", i, rec.Op)
			continue
		}
		c := call{Record: rec, Rank: rank, Index: i, CommName: commName(rec.Comm)}
		n := int(rec.Count)
		if i+1+n > len(recs) {
			errorf("%v: %d sub-records, the log ends first", &c, n)
			n = len(recs) - 1 - i
		}
		c.Subs = recs[i+1 : i+1+n]
		i += n
		calls = append(calls, c)
		r.counts[rank][c.Op] += int(c.Polls())
		for _, s := range c.Subs {
			// Counted: members, completions, …; a topology's neighbour
			// lists are checked against the table (checkConstructor) and
			// by neighbor_test.go.
			if s.Op != trace.OpNeighborSource && s.Op != trace.OpNeighborDest {
				r.subs[rank][c.Op]++
			}
		}
	}
	r.calls[rank] = calls
	if len(calls) < 2 {
		errorf("%d calls logged, want at least MPI_Init and MPI_Finalize", len(calls))
		return
	}
	if op := calls[0].Op; op != trace.OpInit && op != trace.OpInitThread {
		errorf("first call is %v, want MPI_Init or MPI_Init_thread", op)
	}
	if op := calls[len(calls)-1].Op; op != trace.OpFinalize {
		errorf("last call is %v, want MPI_Finalize", op)
	}

	for ci := range calls {
		c := &calls[ci]
		cls := c.Op.Class()
		// Timing: a call ends after it starts, and calls of one thread do
		// not overlap.
		if c.End < c.Start {
			errorf("%v: ends %d ns before it starts", c, c.Start-c.End)
		}
		if prev, ok := lastEnd[c.Thread]; ok && c.Start < prev {
			errorf("%v: starts %d ns before the previous call of thread %d ends", c, prev-c.Start, c.Thread)
		}
		lastEnd[c.Thread] = c.End
		if c.Flags&trace.FlagError != 0 {
			errorf("%v: flagged as an MPI error", c)
		}
		// Polls: Root counts the calls of a run that completed nothing;
		// a productive poll has none.
		if c.Op.IsPoll() && c.Root != trace.PeerNone && (c.Root < 1 || c.Count != 0) {
			errorf("%v: a poll with root %d and %d completions: want root %d, or root >= 1 (unproductive calls) and none",
				c, c.Root, c.Count, trace.PeerNone)
		}

		if hasComm(cls) && c.CommName == "" && !noParent(c.Op) {
			errorf("%v: communicator %d is not in the table", c, c.Comm)
		}
		// Sub-records: only the families that have them, of the right kind.
		want := trace.OpInvalid
		switch {
		case cls == trace.ClassComplete:
			want = trace.OpReqDone
		case c.Op == trace.OpStartall:
			want = trace.OpReqStart
		case cls == trace.ClassSendRecv:
			want = trace.OpRecvPart
			if len(c.Subs) != 1 {
				errorf("%v: %d sub-records, want 1 receive part", c, len(c.Subs))
			}
		case cls == trace.ClassCommCreate:
			want = trace.OpMember
		case cls == trace.ClassRMAGroup:
			want = trace.OpWinGroupMember
		case c.Op == trace.OpPreadyList:
			want = trace.OpPartition
		}
		for k, s := range c.Subs {
			// A constructor's neighbour lists follow its members:
			// sources, then destinations.
			topo := want == trace.OpMember && k > 0 && (s.Op == trace.OpNeighborSource && c.Subs[k-1].Op != trace.OpNeighborDest ||
				s.Op == trace.OpNeighborDest)
			if s.Op != want && !topo {
				errorf("%v: sub-record %v, want only %v", c, s.Op, want)
			}
		}

		// Collective sequence numbers increase per communicator (the
		// programs' tables check that they run 1, 2, …; a Pcontrol pause
		// may leave a gap), and every member agrees on them (checkSeq).
		switch {
		case inParentSeq(c.Op):
			if c.Seq <= seq[c.Comm] {
				errorf("%v: seq %d, the previous collective on the communicator had %d", c, c.Seq, seq[c.Comm])
			}
			seq[c.Comm] = c.Seq
		case c.Op == trace.OpStart && c.Seq != 0 && reqs[c.Req] != nil && reqs[c.Req].create.Op.Class() == trace.ClassCollInit:
			// A start of a persistent collective: an instance on its
			// communicator (a Startall's are in its sub-records).
			if c.Seq <= seq[c.Comm] {
				errorf("%v: seq %d, the previous collective on the communicator had %d", c, c.Seq, seq[c.Comm])
			}
			seq[c.Comm] = c.Seq
		case c.Op == trace.OpCommCreateGroup:
			// Collective over the new group only: it takes no number of
			// the parent's sequence.
			if c.Seq != 0 {
				errorf("%v: seq %d, want 0: MPI_Comm_create_group is not a collective of its parent", c, c.Seq)
			}
		case c.Seq != 0:
			errorf("%v: seq %d on a non-collective", c, c.Seq)
		}
		if cls == trace.ClassCollective || cls == trace.ClassIcollective {
			if rootedOps[c.Op] {
				if c.CommName != "" && !slices.Contains(l.Comms[c.Comm].Members, c.Root) {
					errorf("%v: root %d is not a world rank of a member %v", c, c.Root, l.Comms[c.Comm].Members)
				}
			} else if c.Root != trace.PeerNone {
				errorf("%v: root %d on an unrooted collective, want %d", c, c.Root, trace.PeerNone)
			}
		}

		if cls == trace.ClassCommCreate {
			r.checkConstructor(c, l, created, errorf)
		}

		r.trackRequests(c, reqs, errorf)
		r.collectMessages(c, reqs, l, errorf)
	}
	for id, q := range reqs {
		if q.isPersis {
			if q.active && !q.freed {
				errorf("persistent request %d (%v) still active at the end", id, q.create)
			}
			continue
		}
		if q.done+btoi(q.freed) != 1 {
			errorf("request %d (%v) completed %d times, freed %v; want exactly once", id, q.create, q.done, q.freed)
		}
	}
}

// checkConstructor checks a communicator constructor record against the
// rank's table. Every constructor but MPI_Comm_idup names the new
// communicator's index in Req (0 when the call gave MPI_COMM_NULL) and the
// naming leader's creation counter in Tag; MPI_Comm_idup creates request
// Req and names the index in Tag. The Member sub-records list the local
// group, then (FlagRemote) an intercommunicator's remote group. Root is the
// naming leader: local rank 0, or for an intercommunicator whichever local
// rank 0 of the two groups has the lower world rank.
func (r *run) checkConstructor(c *call, l *trace.Log, created map[uint32]bool, errorf func(string, ...any)) {
	idup := c.Op.IsNonblockingCommCreate()
	idx := c.Req
	if idup {
		if c.Flags&trace.FlagNewReq == 0 || c.Req == 0 {
			errorf("%v: MPI_Comm_idup without a new request", c)
		}
		if c.Tag <= int32(trace.CommSelf) {
			errorf("%v: new communicator index %d, want > %d", c, c.Tag, trace.CommSelf)
			return
		}
		idx = uint32(c.Tag)
	} else if c.Flags&trace.FlagNewReq != 0 {
		errorf("%v: blocking constructor flagged as creating a request", c)
	}
	var members, remote, sources, dests []int32
	for _, s := range c.Subs {
		switch {
		case s.Op == trace.OpNeighborSource:
			sources = append(sources, s.Peer)
		case s.Op == trace.OpNeighborDest:
			dests = append(dests, s.Peer)
		case s.Op != trace.OpMember:
			errorf("%v: a %v sub-record", c, s.Op)
		case s.Flags&trace.FlagRemote != 0:
			remote = append(remote, s.Peer)
		default:
			members = append(members, s.Peer)
		}
	}
	if idx == 0 {
		// MPI_COMM_NULL: no communicator, so no members either.
		if len(c.Subs) != 0 {
			errorf("%v: no new communicator, but %d member sub-records", c, len(c.Subs))
		}
		return
	}
	if created[idx] || idx <= trace.CommSelf {
		errorf("%v: communicator index %d reused", c, idx)
	}
	created[idx] = true
	if len(members) == 0 {
		errorf("%v: no local members", c)
		return
	}
	if !slices.Contains(members, int32(c.Rank)) {
		errorf("%v: members %v do not include this rank", c, members)
	}
	seen := map[int32]bool{}
	for _, m := range append(slices.Clone(members), remote...) {
		if m < 0 || int(m) >= r.np || seen[m] {
			errorf("%v: members %v and remote group %v are not disjoint sets of world ranks", c, members, remote)
			break
		}
		seen[m] = true
	}
	leader := members[0]
	if len(remote) > 0 && remote[0] < leader {
		leader = remote[0]
	}
	if c.Root != leader {
		errorf("%v: root %d, want the naming leader's world rank %d (members %v, remote %v)", c, c.Root, leader, members, remote)
	}
	if int(idx) >= len(l.Comms) {
		errorf("%v: communicator %d is not in the table", c, idx)
		return
	}
	tc := l.Comms[idx]
	if tc.Op != c.Op || tc.Parent != c.Comm || !slices.Equal(tc.Members, members) || !slices.Equal(tc.Remote, remote) ||
		!slices.Equal(tc.Sources, sources) || !slices.Equal(tc.Dests, dests) {
		errorf("%v: table entry %d is %+v, want the communicator this record made", c, idx, tc)
	}
	var name string
	if idup {
		// The parent's ranks, and a name every member can derive from the
		// parent's and the call's sequence number on it.
		if int(c.Comm) < len(l.Comms) {
			p := l.Comms[c.Comm]
			if !slices.Equal(members, p.Members) || !slices.Equal(remote, p.Remote) {
				errorf("%v: members %v remote %v, want the parent's %v remote %v", c, members, remote, p.Members, p.Remote)
			}
			name = string(c.Op.CommLetter()) + p.Name + "." + strconv.Itoa(int(c.Seq))
		}
		if c.Seq == 0 {
			errorf("%v: seq 0, want its number in the parent's collective sequence", c)
		}
	} else {
		if c.Tag < 1 {
			errorf("%v: creation counter %d, want >= 1", c, c.Tag)
		}
		name = string(c.Op.CommLetter()) + strconv.Itoa(int(leader)) + "." + strconv.Itoa(int(c.Tag))
	}
	if tc.Name != name {
		errorf("%v: communicator %d is named %q, want %q", c, idx, tc.Name, name)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// trackRequests follows tool request ids through creation, (re)start,
// completion and Request_free, and checks that each step names a live
// request.
func (r *run) trackRequests(c *call, reqs map[uint32]*request, errorf func(string, ...any)) {
	cls := c.Op.Class()
	if c.Flags&trace.FlagNewReq != 0 {
		if c.Req == 0 || reqs[c.Req] != nil {
			errorf("%v: new request id %d is zero or reused", c, c.Req)
			return
		}
		persistent := cls == trace.ClassSendInit || cls == trace.ClassRecvInit || cls == trace.ClassCollInit
		if (c.Flags&trace.FlagPersistent != 0) != persistent {
			errorf("%v: persistent flag %v, want %v", c, c.Flags&trace.FlagPersistent != 0, persistent)
		}
		reqs[c.Req] = &request{create: c, active: !persistent, comm: c.CommName,
			isRecv:   cls == trace.ClassIrecv || cls == trace.ClassRecvInit,
			isSend:   cls == trace.ClassIsend || cls == trace.ClassSendInit,
			isPersis: persistent}
		return
	}
	switch cls {
	case trace.ClassIsend, trace.ClassIrecv, trace.ClassSendInit, trace.ClassRecvInit, trace.ClassIcollective, trace.ClassFileIIO,
		trace.ClassRMARequest, trace.ClassCollInit:
		errorf("%v: creates a request but has no FlagNewReq", c)
	}
	start := func(id uint32) {
		q := reqs[id]
		switch {
		case q == nil:
			errorf("%v: starts unknown request %d", c, id)
		case !q.isPersis || q.active || q.freed:
			errorf("%v: starts request %d (persistent %v, active %v, freed %v)", c, id, q.isPersis, q.active, q.freed)
		default:
			q.active = true
			q.starts++
		}
	}
	switch {
	case c.Op == trace.OpStart:
		start(c.Req)
	case c.Op == trace.OpStartall:
		for _, s := range c.Subs {
			start(s.Req)
		}
	case cls == trace.ClassComplete:
		for _, s := range c.Subs {
			q := reqs[s.Req]
			switch {
			case q == nil:
				errorf("%v: completes unknown request %d", c, s.Req)
			case !q.active:
				errorf("%v: completes inactive request %d (%v)", c, s.Req, q.create)
			default:
				q.active = false
				q.done++
				if s.Comm != q.create.Comm {
					errorf("%v: completion of request %d names communicator %d, it was created on %d", c, s.Req, s.Comm, q.create.Comm)
				}
				if q.create.Op.IsNonblockingCommCreate() && s.Peer != trace.PeerNone {
					errorf("%v: completion of MPI_Comm_idup request %d has peer %d, want none (%d)", c, s.Req, s.Peer, trace.PeerNone)
				}
			}
		}
	case cls == trace.ClassRequestFree:
		q := reqs[c.Req]
		if q == nil {
			errorf("%v: frees unknown request %d", c, c.Req)
		} else {
			q.freed = true
		}
	}
}

// collectMessages records the messages a call sent or received. Sends count
// when posted (a persistent send at each start), receives when completed,
// with the source, tag and size from the status.
func (r *run) collectMessages(c *call, reqs map[uint32]*request, l *trace.Log, errorf func(string, ...any)) {
	me := int32(c.Rank)
	send := func(peer int32, comm string, tag int32, bytes uint64) {
		if peer == trace.PeerProcNull {
			return
		}
		if peer < 0 || int(peer) >= r.np {
			errorf("%v: send to peer %d, not a world rank", c, peer)
			return
		}
		r.sends = append(r.sends, message{Src: me, Dst: peer, Comm: comm, Tag: tag, Bytes: bytes, Op: c.Op, Rank: c.Rank})
	}
	recv := func(s trace.Record, comm string) {
		if s.Peer == trace.PeerProcNull || s.Flags&trace.FlagCancelled != 0 {
			return
		}
		if s.Peer < 0 || int(s.Peer) >= r.np {
			errorf("%v: received from peer %d, not a world rank", c, s.Peer)
			return
		}
		if s.Tag < 0 {
			errorf("%v: received with tag %d (wildcard not resolved)", c, s.Tag)
		}
		r.recvs = append(r.recvs, message{Src: s.Peer, Dst: me, Comm: comm, Tag: s.Tag, Bytes: s.Bytes,
			Op: c.Op, Rank: c.Rank, Wild: s.Flags&trace.FlagWildcard != 0})
	}
	memberOK := func(peer int32) {
		if c.CommName == "" || peer < 0 {
			return
		}
		// On an intercommunicator, peers are ranks of the remote group.
		group := l.Comms[c.Comm].Members
		if len(l.Comms[c.Comm].Remote) > 0 {
			group = l.Comms[c.Comm].Remote
		}
		if !slices.Contains(group, peer) {
			errorf("%v: peer %d is not a world rank of a member of %s %v", c, peer, c.CommName, group)
		}
	}
	switch c.Op.Class() {
	case trace.ClassSend:
		memberOK(c.Peer)
		send(c.Peer, c.CommName, c.Tag, c.Bytes)
	case trace.ClassIsend:
		memberOK(c.Peer)
		send(c.Peer, c.CommName, c.Tag, c.Bytes)
	case trace.ClassRecv:
		memberOK(c.Peer)
		recv(c.Record, c.CommName)
	case trace.ClassSendRecv:
		memberOK(c.Peer)
		send(c.Peer, c.CommName, c.Tag, c.Bytes)
		if len(c.Subs) == 1 {
			memberOK(c.Subs[0].Peer)
			recv(c.Subs[0], c.CommName)
		}
	case trace.ClassProbe, trace.ClassIrecv, trace.ClassSendInit, trace.ClassRecvInit:
		if c.Peer != trace.PeerAny {
			memberOK(c.Peer)
		}
	case trace.ClassStart:
		ids := []uint32{c.Req}
		if c.Op == trace.OpStartall {
			ids = ids[:0]
			for _, s := range c.Subs {
				ids = append(ids, s.Req)
			}
		}
		for _, id := range ids {
			if q := reqs[id]; q != nil && q.isSend {
				send(q.create.Peer, q.comm, q.create.Tag, q.create.Bytes)
			}
		}
	case trace.ClassComplete:
		for _, s := range c.Subs {
			q := reqs[s.Req]
			if q == nil || !q.isRecv {
				continue
			}
			if p := q.create.Peer; p != trace.PeerAny && s.Peer != p {
				errorf("%v: request %d posted for source %d completed from %d", c, s.Req, p, s.Peer)
			}
			if q.create.Peer == trace.PeerAny && s.Flags&trace.FlagWildcard == 0 {
				errorf("%v: wildcard request %d completed without FlagWildcard", c, s.Req)
			}
			recv(s, q.comm)
		}
	}
}

// checkComms checks that a communicator name means the same communicator on
// every rank that has it, that exactly its members have it, and that names
// follow the mpisee rule: the letter, the world rank of the naming leader and
// a counter, where the naming leader is local rank 0, or for an
// intercommunicator whichever local rank 0 of the two groups has the lower
// world rank; MPI_Comm_idup's is "d", the parent's name, "." and a sequence
// number. Both sides of an intercommunicator share its name, each with its
// own group as Members and the other as Remote. r.comms keeps, per name, the
// entry of the naming leader's side.
func (r *run) checkComms(t *testing.T) {
	t.Helper()
	type held struct {
		rank int
		c    trace.Comm
	}
	byName := map[string][]held{}
	for rank, l := range r.logs {
		for i, c := range l.Comms {
			if c.Name == "" {
				t.Errorf("rank %d: communicator %d has no constructor record", rank, i)
				continue
			}
			byName[c.Name] = append(byName[c.Name], held{rank, c})
			if i <= int(trace.CommSelf) {
				continue
			}
			if len(c.Members) == 0 {
				t.Errorf("rank %d: communicator %d (%s) has no members", rank, i, c.Name)
				continue
			}
			if !slices.Contains(c.Members, int32(rank)) || slices.Contains(c.Remote, int32(rank)) {
				t.Errorf("rank %d: communicator %s: members %v, remote group %v; want this rank among the members only",
					rank, c.Name, c.Members, c.Remote)
			}
			var want string
			if c.Op.IsNonblockingCommCreate() {
				parent := "?"
				if int(c.Parent) < len(l.Comms) {
					parent = l.Comms[c.Parent].Name
				}
				want = string(c.Op.CommLetter()) + parent + "."
			} else {
				lead := c.Members[0]
				if len(c.Remote) > 0 && c.Remote[0] < lead {
					lead = c.Remote[0]
				}
				want = string(c.Op.CommLetter()) + strconv.Itoa(int(lead)) + "."
			}
			if n, err := strconv.Atoi(strings.TrimPrefix(c.Name, want)); !strings.HasPrefix(c.Name, want) || err != nil || n < 1 {
				t.Errorf("rank %d: communicator %s made by %v with members %v, remote %v: name should be %q and a number >= 1",
					rank, c.Name, c.Op, c.Members, c.Remote, want)
			}
		}
	}
	for name, hs := range byName {
		ref := hs[0].c
		if len(ref.Remote) > 0 && ref.Remote[0] < ref.Members[0] {
			ref.Members, ref.Remote = ref.Remote, ref.Members
		}
		r.comms[name] = ref
		var got []int32
		for _, h := range hs {
			got = append(got, int32(h.rank))
			sameSide := slices.Equal(h.c.Members, ref.Members) && slices.Equal(h.c.Remote, ref.Remote)
			otherSide := len(ref.Remote) > 0 && slices.Equal(h.c.Members, ref.Remote) && slices.Equal(h.c.Remote, ref.Members)
			// Letters, not ops: MPI_Comm_accept and MPI_Comm_connect make
			// one communicator.
			if (!sameSide && !otherSide) || h.c.Op.CommLetter() != ref.Op.CommLetter() {
				t.Errorf("communicator %s: rank %d has %v members %v remote %v, rank %d %v members %v remote %v (want the same, or for an intercommunicator the two groups swapped)",
					name, h.rank, h.c.Op, h.c.Members, h.c.Remote, hs[0].rank, hs[0].c.Op, hs[0].c.Members, hs[0].c.Remote)
			}
		}
		want := append(slices.Clone(ref.Members), ref.Remote...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("communicator %s with members %v, remote group %v is in the tables of ranks %v", name, ref.Members, ref.Remote, got)
		}
	}
}

// collective is one collective call reduced to what all members must agree on.
type collective struct {
	Op   trace.Op
	Root int32
	Seq  uint32
}

// collSeq returns, per communicator name and rank, the collectives in Seq
// order.
func (r *run) collSeq() map[string]map[int][]collective {
	out := map[string]map[int][]collective{}
	for rank, calls := range r.calls {
		for _, c := range calls {
			if !inParentSeq(c.Op) || c.CommName == "" {
				continue
			}
			m := out[c.CommName]
			if m == nil {
				m = map[int][]collective{}
				out[c.CommName] = m
			}
			root := c.Root
			if c.Op.Class() == trace.ClassCommCreate {
				root = trace.PeerNone // local rank 0 of the result, not an argument
			}
			m[rank] = append(m[rank], collective{c.Op, root, c.Seq})
		}
	}
	return out
}

// checkSeq checks that every member of a communicator logged the same
// collectives, with the same roots and Seq numbers.
func (r *run) checkSeq(t *testing.T) {
	t.Helper()
	for name, byRank := range r.collSeq() {
		ranks := make([]int, 0, len(byRank))
		for k := range byRank {
			ranks = append(ranks, k)
		}
		sort.Ints(ranks)
		ref := byRank[ranks[0]]
		for _, rank := range ranks[1:] {
			if got := byRank[rank]; !slices.Equal(got, ref) {
				t.Errorf("communicator %s: rank %d logged collectives %v, rank %d %v",
					name, rank, fmtColl(got), ranks[0], fmtColl(ref))
			}
		}
		if c, ok := r.comms[name]; ok {
			all := allRanks(c)
			slices.Sort(all)
			got := make([]int32, len(ranks))
			for i, rank := range ranks {
				got[i] = int32(rank)
			}
			if !slices.Equal(got, all) {
				t.Errorf("communicator %s: collectives logged by ranks %v, members are %v", name, ranks, all)
			}
		}
	}
}

// allRanks lists the ranks that hold c: its members, and an
// intercommunicator's remote group.
func allRanks(c trace.Comm) []int32 {
	return append(slices.Clone(c.Members), c.Remote...)
}

func fmtColl(cs []collective) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%d:%v", c.Seq, c.Op)
		if c.Root != trace.PeerNone {
			fmt.Fprintf(&b, "(root %d)", c.Root)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

type msgKey struct {
	Src, Dst int32
	Comm     string
	Tag      int32
}

// checkMessages matches sends to completed receives: for every (source,
// destination, communicator, tag) the sizes sent and received must be the
// same multiset, and so the bytes a sent to b add up to the bytes b
// received from a.
func (r *run) checkMessages(t *testing.T) {
	t.Helper()
	sent := map[msgKey][]uint64{}
	got := map[msgKey][]uint64{}
	pairSent := map[[2]int32]uint64{}
	pairGot := map[[2]int32]uint64{}
	for _, m := range r.sends {
		k := msgKey{m.Src, m.Dst, m.Comm, m.Tag}
		sent[k] = append(sent[k], m.Bytes)
		pairSent[[2]int32{m.Src, m.Dst}] += m.Bytes
	}
	for _, m := range r.recvs {
		k := msgKey{m.Src, m.Dst, m.Comm, m.Tag}
		got[k] = append(got[k], m.Bytes)
		pairGot[[2]int32{m.Src, m.Dst}] += m.Bytes
	}
	keys := map[msgKey]bool{}
	for k := range sent {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	bad := 0
	for k := range keys {
		s, g := slices.Clone(sent[k]), slices.Clone(got[k])
		slices.Sort(s)
		slices.Sort(g)
		if !slices.Equal(s, g) {
			bad++
			if bad <= 10 {
				t.Errorf("messages %d->%d on %s tag %d: sent sizes %v, received %v", k.Src, k.Dst, k.Comm, k.Tag, s, g)
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d more unmatched message streams", bad-10)
	}
	for p, b := range pairSent {
		if pairGot[p] != b {
			t.Errorf("bytes %d->%d: %d sent, %d received", p[0], p[1], b, pairGot[p])
		}
	}
	for p, b := range pairGot {
		if _, ok := pairSent[p]; !ok {
			t.Errorf("bytes %d->%d: 0 sent, %d received", p[0], p[1], b)
		}
	}
}

// checkCounts compares the per-rank call counts of the run with want, op by
// op: ops missing from want must not occur at all.
func (r *run) checkCounts(t *testing.T, want func(rank int) map[trace.Op]int) {
	t.Helper()
	for rank := 0; rank < r.np; rank++ {
		w := want(rank)
		ops := map[trace.Op]bool{}
		for op := range w {
			ops[op] = true
		}
		for op := range r.counts[rank] {
			ops[op] = true
		}
		for op := range ops {
			if got := r.counts[rank][op]; got != w[op] {
				t.Errorf("rank %d: %d %v calls logged, want %d", rank, got, op, w[op])
			}
		}
	}
}

// checkSubs compares the per-rank numbers of sub-records under each op with
// want (ops not in want are not checked).
func (r *run) checkSubs(t *testing.T, want func(rank int) map[trace.Op]int) {
	t.Helper()
	for rank := 0; rank < r.np; rank++ {
		for op, n := range want(rank) {
			if got := r.subs[rank][op]; got != n {
				t.Errorf("rank %d: %d sub-records under %v calls, want %d", rank, got, op, n)
			}
		}
	}
}

// find returns the calls of a rank that satisfy keep.
func (r *run) find(rank int, keep func(*call) bool) []*call {
	var out []*call
	for i := range r.calls[rank] {
		if c := &r.calls[rank][i]; keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// commSpec is an expected communicator: the constructor letter, its members
// in local rank order and, for an intercommunicator, the other group in its
// local rank order (nil else).
type commSpec struct {
	Letter  byte
	Members []int32
	Remote  []int32
}

// expectNames names communicators the way the logger must: the letter, the
// world rank of the naming leader, and how many communicators that rank has
// been local rank 0 of so far, counting MPI_COMM_WORLD ("W0.0") as its 0th.
// The naming leader is local rank 0; for an intercommunicator, local rank 0
// of the group with the lower-ranked one (both leaders count it). specs must
// be in creation order. MPI_Comm_idup is named after its parent, not a
// counter: leave it out. Intercommunicators come back oriented like
// run.comms: Members is the naming leader's group.
func expectNames(specs []commSpec) map[string]commSpec {
	counter := map[int32]int{}
	out := map[string]commSpec{}
	for _, s := range specs {
		if s.Letter == 'd' {
			panic("expectNames: MPI_Comm_idup is not named by a counter")
		}
		lead := s.Members[0]
		counter[lead]++
		n := counter[lead]
		if len(s.Remote) > 0 {
			other := s.Remote[0]
			counter[other]++
			if other < lead {
				s.Members, s.Remote = s.Remote, s.Members
				lead, n = other, counter[other]
			}
		}
		out[fmt.Sprintf("%c%d.%d", s.Letter, lead, n)] = s
	}
	return out
}

// checkCommTable checks that the run's communicators are exactly world, the
// self communicators and the expected ones, with their constructors, members
// and remote groups.
func (r *run) checkCommTable(t *testing.T, want map[string]commSpec) {
	t.Helper()
	all := map[string]commSpec{}
	for rank := 0; rank < r.np; rank++ {
		all["s"+strconv.Itoa(rank)+".0"] = commSpec{0, []int32{int32(rank)}, nil}
	}
	world := make([]int32, r.np)
	for i := range world {
		world[i] = int32(i)
	}
	all["W0.0"] = commSpec{0, world, nil}
	for k, v := range want {
		all[k] = v
	}
	for name, w := range all {
		c, ok := r.comms[name]
		if !ok {
			t.Errorf("communicator %s %v/%v missing from every rank's table", name, w.Members, w.Remote)
			continue
		}
		if !slices.Equal(c.Members, w.Members) || !slices.Equal(c.Remote, w.Remote) {
			t.Errorf("communicator %s: members %v remote %v, want %v remote %v", name, c.Members, c.Remote, w.Members, w.Remote)
		}
		if w.Letter != 0 && c.Op.CommLetter() != w.Letter {
			t.Errorf("communicator %s: made by %v, want a constructor with letter %c", name, c.Op, w.Letter)
		}
	}
	for name := range r.comms {
		if _, ok := all[name]; !ok {
			t.Errorf("unexpected communicator %s %v/%v", name, r.comms[name].Members, r.comms[name].Remote)
		}
	}
}

// collSpec is an expected collective call: its op, root (a world rank, or
// PeerNone) and, where bytes is set, the byte count each rank must log.
type collSpec struct {
	Op    trace.Op
	Root  int32
	Bytes func(rank int) uint64
}

// unrooted lists collectives without roots and without byte expectations.
func unrooted(ops ...trace.Op) []collSpec {
	var out []collSpec
	for _, op := range ops {
		out = append(out, collSpec{op, trace.PeerNone, nil})
	}
	return out
}

// checkColls checks the collectives logged on each named communicator, in
// Seq order, against want, on every member rank: op, root and bytes.
func (r *run) checkColls(t *testing.T, want map[string][]collSpec) {
	t.Helper()
	for name, specs := range want {
		c, ok := r.comms[name]
		if !ok {
			t.Errorf("communicator %s: not in any table, want collectives %v", name, specs)
			continue
		}
		for _, rank := range allRanks(c) {
			var got []*call
			for i := range r.calls[rank] {
				if cl := &r.calls[rank][i]; inParentSeq(cl.Op) && cl.CommName == name {
					got = append(got, cl)
				}
			}
			if len(got) != len(specs) {
				var ops []trace.Op
				for _, g := range got {
					ops = append(ops, g.Op)
				}
				t.Errorf("communicator %s rank %d: %d collectives %v, want %d", name, rank, len(got), ops, len(specs))
			}
			for i := 0; i < len(got) && i < len(specs); i++ {
				g, w := got[i], specs[i]
				root := g.Root
				if g.Op.Class() == trace.ClassCommCreate {
					root = trace.PeerNone
				}
				switch {
				case g.Op != w.Op || root != w.Root || g.Seq != uint32(i+1):
					t.Errorf("communicator %s rank %d: collective %d is %v, want %v root %d seq %d", name, rank, i+1, g, w.Op, w.Root, i+1)
				case w.Bytes != nil && g.Bytes != w.Bytes(int(rank)):
					t.Errorf("communicator %s rank %d: %v logged %d bytes, want %d", name, rank, g, g.Bytes, w.Bytes(int(rank)))
				}
			}
		}
	}
}
