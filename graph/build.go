package graph

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cpath/cpath/trace"
)

// RendezvousBytes is the size from which a standard-mode send is taken to
// wait for its receiver (rendezvous protocol) when it completes after the
// receive was posted. Smaller sends are eager: MPI buffers them.
const RendezvousBytes = 64 << 10

// msgEnd is one side of a point-to-point message.
type msgEnd struct {
	comm, src, dst, tag int32
	post, done          int32 // call that posted it, call that completed it
	bytes               uint64
	sync                bool // a synchronous send, or a rendezvous-sized one
}

// collEnd is one member's part in a collective instance.
type collEnd struct {
	comm       int32
	seq        uint32
	op         trace.Op
	root       int32
	post, done int32
}

type rankOut struct {
	sends, recvs []msgEnd
	colls        []collEnd
	open         int // requests never completed in the log
	notes        []string
}

// Build builds the PAG of a run. It does not keep the logs' records.
func Build(run *Run) (*PAG, error) {
	P := len(run.Logs)
	g := &PAG{Ranks: P, RunID: run.Logs[0].Header.RunID, RankStart: make([]int32, P+1),
		Exe: make([]string, P), LoadAddress: make([]uint64, P), Notes: append([]string(nil), run.Notes...)}
	for r, l := range run.Logs {
		n := 0
		for i := range l.Records {
			if !l.Records[i].Op.IsSub() {
				n++
			}
		}
		if int64(g.RankStart[r])+int64(n) > 1<<30 {
			return nil, fmt.Errorf("%s: more than 2^30 calls in the run: too large for one analyzer process", run.Dir)
		}
		g.RankStart[r+1] = g.RankStart[r] + int32(n)
		g.Exe[r], g.LoadAddress[r] = l.Header.Exe, l.Header.LoadAddress
	}
	N := int(g.RankStart[P])
	if N == 0 {
		return nil, fmt.Errorf("%s: the logs hold no MPI calls", run.Dir)
	}
	g.Op = make([]trace.Op, N)
	g.Thread = make([]uint16, N)
	g.Start = make([]int64, N)
	g.End = make([]int64, N)
	g.CallSite = make([]uint64, N)
	g.Comm = make([]int32, N)
	g.Bytes = make([]uint64, N)
	g.Prev = make([]int32, N)

	gids, err := g.globalComms(run)
	if err != nil {
		return nil, err
	}
	outs := make([]rankOut, P)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for r := range run.Logs {
		wg.Add(1)
		sem <- struct{}{}
		go func(r int) {
			defer func() { <-sem; wg.Done() }()
			outs[r] = g.extract(r, run.Logs[r], gids[r])
		}(r)
	}
	wg.Wait()
	open := 0
	for r := range outs {
		open += outs[r].open
		g.Notes = append(g.Notes, outs[r].notes...)
	}
	if open > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d requests were never completed in the logs; their messages are not matched", open))
	}
	msgs := g.match(outs)
	g.collectives(outs)
	deps := g.correctClocks(g.dependencies(msgs))
	g.waitsAndEdges(deps, msgs)
	return g, nil
}

// globalComms builds the run's communicator table from the ranks' tables,
// by name, and returns each rank's local-index → global-index map.
func (g *PAG) globalComms(run *Run) ([][]int32, error) {
	byName := map[string]int32{}
	gids := make([][]int32, len(run.Logs))
	for r, l := range run.Logs {
		gids[r] = make([]int32, len(l.Comms))
		for i, c := range l.Comms {
			if c.Name == "" {
				gids[r][i] = -1 // made by a call the logger does not wrap
				continue
			}
			id, ok := byName[c.Name]
			if !ok {
				id = int32(len(g.Comms))
				byName[c.Name] = id
				g.Comms = append(g.Comms, CommInfo{Name: c.Name, Members: c.Members})
			}
			gids[r][i] = id
		}
	}
	return gids, nil
}

// reqInfo is what a rank's log says about one request.
type reqInfo struct {
	class      trace.Class
	persistent bool
	post       int32
	comm       int32
	peer, tag  int32
	bytes      uint64
	sync       bool
	op         trace.Op
	seq        uint32
	root       int32
	active     []int32 // persistent: the Start calls not yet completed, oldest first
}

// extract fills rank r's calls and returns its message ends and collective
// memberships. It touches only rank r's slice of the call arrays.
func (g *PAG) extract(r int, l *trace.Log, gid []int32) rankOut {
	var out rankOut
	clk := &l.Header.Clock
	comm := func(i uint32) int32 {
		if int(i) < len(gid) {
			return gid[i]
		}
		return -1
	}
	reqs := map[uint32]*reqInfo{}
	lastOfThread := map[uint16]int32{}
	c := g.RankStart[r] - 1
	recs := l.Records
	isSync := func(op trace.Op, bytes uint64) bool {
		switch op {
		case trace.OpSsend, trace.OpIssend, trace.OpSsendInit:
			return true
		case trace.OpSend, trace.OpIsend, trace.OpSendInit, trace.OpSendrecv, trace.OpSendrecvReplace:
			return bytes >= RendezvousBytes
		}
		return false
	}
	for i := 0; i < len(recs); i++ {
		rec := &recs[i]
		c++
		g.Op[c] = rec.Op
		g.Thread[c] = rec.Thread
		g.Start[c] = clk.Global(rec.Start)
		g.End[c] = clk.Global(rec.End)
		g.CallSite[c] = rec.CallSite
		g.Comm[c] = comm(rec.Comm)
		g.Bytes[c] = rec.Bytes
		if p, ok := lastOfThread[rec.Thread]; ok {
			g.Prev[c] = p
		} else {
			g.Prev[c] = -1
		}
		lastOfThread[rec.Thread] = c
		subs := recs[i+1 : i+1+min(int(rec.Count), len(recs)-i-1)]
		i += len(subs)
		me := int32(r)
		switch rec.Op.Class() {
		case trace.ClassSend:
			if rec.Peer >= 0 {
				out.sends = append(out.sends, msgEnd{comm(rec.Comm), me, rec.Peer, rec.Tag, c, c, rec.Bytes, isSync(rec.Op, rec.Bytes)})
			}
		case trace.ClassRecv:
			if rec.Peer >= 0 && rec.Flags&trace.FlagCancelled == 0 {
				out.recvs = append(out.recvs, msgEnd{comm(rec.Comm), rec.Peer, me, rec.Tag, c, c, rec.Bytes, false})
			}
		case trace.ClassSendRecv:
			if rec.Peer >= 0 {
				out.sends = append(out.sends, msgEnd{comm(rec.Comm), me, rec.Peer, rec.Tag, c, c, rec.Bytes, isSync(rec.Op, rec.Bytes)})
			}
			for _, s := range subs {
				if s.Op == trace.OpRecvPart && s.Peer >= 0 && s.Flags&trace.FlagCancelled == 0 {
					out.recvs = append(out.recvs, msgEnd{comm(rec.Comm), s.Peer, me, s.Tag, c, c, s.Bytes, false})
				}
			}
		case trace.ClassIsend, trace.ClassIrecv, trace.ClassSendInit, trace.ClassRecvInit, trace.ClassIcollective:
			if rec.Flags&trace.FlagNewReq != 0 {
				reqs[rec.Req] = &reqInfo{class: rec.Op.Class(), persistent: rec.Flags&trace.FlagPersistent != 0,
					post: c, comm: comm(rec.Comm), peer: rec.Peer, tag: rec.Tag, bytes: rec.Bytes,
					sync: isSync(rec.Op, rec.Bytes), op: rec.Op, seq: rec.Seq, root: rec.Root}
			}
		case trace.ClassCommCreate:
			if rec.Op == trace.OpCommIdup {
				if rec.Flags&trace.FlagNewReq != 0 {
					reqs[rec.Req] = &reqInfo{class: trace.ClassIcollective, post: c, comm: comm(rec.Comm), op: rec.Op, seq: rec.Seq, root: -1}
				}
			} else if rec.Seq != 0 {
				out.colls = append(out.colls, collEnd{comm(rec.Comm), rec.Seq, rec.Op, -1, c, c})
			}
		case trace.ClassCollective:
			out.colls = append(out.colls, collEnd{comm(rec.Comm), rec.Seq, rec.Op, rec.Root, c, c})
		case trace.ClassStart:
			if rec.Op == trace.OpStart {
				if q := reqs[rec.Req]; q != nil {
					q.active = append(q.active, c)
				}
			}
			for _, s := range subs {
				if q := reqs[s.Req]; q != nil && s.Op == trace.OpReqStart {
					q.active = append(q.active, c)
				}
			}
		case trace.ClassRequestFree:
			if q := reqs[rec.Req]; q != nil && (!q.persistent || len(q.active) == 0) {
				delete(reqs, rec.Req)
			}
		case trace.ClassComplete:
			for _, s := range subs {
				q := reqs[s.Req]
				if s.Op != trace.OpReqDone || q == nil {
					continue
				}
				post := q.post
				if q.persistent {
					if len(q.active) == 0 {
						continue
					}
					post, q.active = q.active[0], q.active[1:]
				} else {
					delete(reqs, s.Req)
				}
				switch q.class {
				case trace.ClassIsend, trace.ClassSendInit:
					if q.peer >= 0 {
						out.sends = append(out.sends, msgEnd{q.comm, me, q.peer, q.tag, post, c, q.bytes, q.sync})
					}
				case trace.ClassIrecv, trace.ClassRecvInit:
					if s.Peer >= 0 && s.Flags&trace.FlagCancelled == 0 {
						out.recvs = append(out.recvs, msgEnd{q.comm, s.Peer, me, s.Tag, post, c, s.Bytes, false})
					}
				case trace.ClassIcollective:
					out.colls = append(out.colls, collEnd{q.comm, q.seq, q.op, q.root, post, c})
				}
			}
		}
	}
	for _, q := range reqs {
		if !q.persistent {
			out.open++
		} else {
			out.open += len(q.active)
		}
	}
	return out
}

type msgPair struct{ send, recv msgEnd }

// match pairs sends and receives as MPI does: per communicator, source,
// destination and tag, in the order they were posted (the k-th send with the
// k-th receive); wildcard receives were resolved from their status.
func (g *PAG) match(outs []rankOut) []msgPair {
	var sends, recvs []msgEnd
	for r := range outs {
		sends = append(sends, outs[r].sends...)
		recvs = append(recvs, outs[r].recvs...)
		outs[r].sends, outs[r].recvs = nil, nil
	}
	cmp := func(a, b msgEnd) int {
		switch {
		case a.comm != b.comm:
			return int(a.comm - b.comm)
		case a.src != b.src:
			return int(a.src - b.src)
		case a.dst != b.dst:
			return int(a.dst - b.dst)
		case a.tag != b.tag:
			if a.tag < b.tag {
				return -1
			}
			return 1
		}
		return int(a.post - b.post)
	}
	slices.SortFunc(sends, cmp)
	slices.SortFunc(recvs, cmp)
	same := func(a, b msgEnd) bool { return a.comm == b.comm && a.src == b.src && a.dst == b.dst && a.tag == b.tag }
	pairs := make([]msgPair, 0, min(len(sends), len(recvs)))
	i, j := 0, 0
	for i < len(sends) && j < len(recvs) {
		s, r := sends[i], recvs[j]
		switch {
		case s.comm < 0:
			i++
			g.Unmatched++
		case r.comm < 0:
			j++
			g.Unmatched++
		case same(s, r):
			pairs = append(pairs, msgPair{s, r})
			i++
			j++
		case cmp(msgEnd{comm: s.comm, src: s.src, dst: s.dst, tag: s.tag}, msgEnd{comm: r.comm, src: r.src, dst: r.dst, tag: r.tag}) < 0:
			i++
			g.Unmatched++
		default:
			j++
			g.Unmatched++
		}
	}
	g.Unmatched += len(sends) - i + len(recvs) - j
	g.Messages = len(pairs)
	if g.Unmatched > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d sends or receives have no partner in the logs", g.Unmatched))
	}
	return pairs
}

// collectives groups the members of each collective instance by
// communicator and sequence number.
func (g *PAG) collectives(outs []rankOut) {
	var all []collEnd
	for r := range outs {
		all = append(all, outs[r].colls...)
		outs[r].colls = nil
	}
	slices.SortFunc(all, func(a, b collEnd) int {
		if a.comm != b.comm {
			return int(a.comm - b.comm)
		}
		if a.seq != b.seq {
			if a.seq < b.seq {
				return -1
			}
			return 1
		}
		return int(a.post - b.post)
	})
	partial, mixed := 0, 0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].comm == all[i].comm && all[j].seq == all[i].seq {
			j++
		}
		grp := all[i:j]
		i = j
		if grp[0].comm < 0 {
			continue
		}
		ok := true
		for _, m := range grp {
			if m.op != grp[0].op {
				ok = false
			}
		}
		if !ok {
			mixed++
			continue
		}
		if want := len(g.Comms[grp[0].comm].Members); len(grp) != want && !isIntercomm(g, grp[0].comm) {
			partial++
			if len(grp) < 2 {
				continue
			}
		}
		root := int32(-1)
		for _, m := range grp {
			if m.root >= 0 {
				root = m.root
			}
		}
		g.Colls = append(g.Colls, Collective{Op: grp[0].op, Comm: grp[0].comm, Seq: grp[0].seq, Root: root,
			First: int32(len(g.CollPost)), N: int32(len(grp))})
		for _, m := range grp {
			g.CollPost = append(g.CollPost, m.post)
			g.CollDone = append(g.CollDone, m.done)
		}
	}
	if partial > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d collective instances lack members in the logs (a rank ended early); analysed with the members present", partial))
	}
	if mixed > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d collective instances disagree on the operation across ranks; skipped", mixed))
	}
}

func isIntercomm(g *PAG, comm int32) bool {
	n := g.Comms[comm].Name
	return len(n) > 0 && n[0] == 'I'
}
