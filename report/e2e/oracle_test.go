//go:build mpi

package e2e

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// oracle is what the logs of a run say its wait states and collective
// instances are, computed directly from the records of these simple
// programs (no wildcards, no persistent requests), by the definitions of
// SPEC §3 and paper §5.2: a call waits from its start until its cause
// starts, at most until it ends; the cause of a receive completion is the
// matching send (Late Sender), of a synchronous send the matching receive
// (Late Receiver), of a collective the last member to arrive (Wait at
// Barrier, Wait at N x N). It holds the analyzer to exact numbers whatever
// the machine's load did to the designed timings.
type oracle struct {
	wait   map[[2]int]callWait // (rank, call index) → how long it waited, and for what
	colls  []report.Collective
	lead   map[collKey]int64 // by instance: how long before the last arrival the one before it came
	total  map[string]int64
	byRank []map[string]int64
	byOp   map[string]map[string]int64
	byComm map[string]map[string]int64
}

type callWait struct {
	kind string
	ns   int64
	comm string // the communicator of what it waited for (a Wait call has none of its own)
}

type collKey struct {
	op, comm string
	seq      uint32
}

// tieNs is how close the last two arrivals at a collective instance may
// be for the analysis to name either as the last.
const tieNs = 2000

// nxnOps are the collectives whose waits are Wait at N x N.
var nxnOps = map[trace.Op]bool{
	trace.OpAllreduce: true, trace.OpAllgather: true, trace.OpAllgatherv: true,
	trace.OpAlltoall: true, trace.OpAlltoallv: true, trace.OpAlltoallw: true,
	trace.OpReduceScatter: true, trace.OpReduceScatterBlock: true,
}

func oracleOf(tl [][]call) *oracle {
	o := &oracle{wait: map[[2]int]callWait{}, lead: map[collKey]int64{}, total: map[string]int64{},
		byOp: map[string]map[string]int64{}, byComm: map[string]map[string]int64{}}
	for range tl {
		o.byRank = append(o.byRank, map[string]int64{})
	}
	book := func(c *call, kind, comm string, cause int64) {
		w := min(cause, c.End) - c.Start
		if w <= 0 {
			return
		}
		k := [2]int{c.Rank, c.Idx}
		if old, ok := o.wait[k]; ok && old.ns >= w {
			return
		}
		o.wait[k] = callWait{kind, w, comm}
	}

	// Point to point: FIFO per (communicator, source, destination, tag).
	type p2pKey struct {
		comm          string
		src, dst, tag int32
	}
	type end struct {
		post *call // the send or receive call (Recv, Irecv, Send, Ssend, Isend…)
		done *call // the call that completed it
	}
	completion := func(rank int, c *call) *call {
		if c.Req == 0 {
			return c
		}
		for i := c.Idx + 1; i < len(tl[rank]); i++ {
			for _, q := range tl[rank][i].Done {
				if q == c.Req {
					return &tl[rank][i]
				}
			}
		}
		return nil
	}
	sends, recvs := map[p2pKey][]end{}, map[p2pKey][]end{}
	for r := range tl {
		for i := range tl[r] {
			c := &tl[r][i]
			switch c.Op.Class() {
			case trace.ClassSend, trace.ClassIsend:
				k := p2pKey{c.Comm, int32(r), c.Peer, c.Tag}
				sends[k] = append(sends[k], end{c, completion(r, c)})
			case trace.ClassRecv, trace.ClassIrecv:
				k := p2pKey{c.Comm, c.Peer, int32(r), c.Tag}
				recvs[k] = append(recvs[k], end{c, completion(r, c)})
			}
		}
	}
	for k, ss := range sends {
		rs := recvs[k]
		for i := 0; i < min(len(ss), len(rs)); i++ {
			s, rv := ss[i], rs[i]
			if rv.done != nil {
				book(rv.done, lateSender, k.comm, s.post.Start)
			}
			if (s.post.Op == trace.OpSsend || s.post.Op == trace.OpIssend) && s.done != nil {
				book(s.done, lateReceiver, k.comm, rv.post.Start)
			}
		}
	}

	// Collectives: instances by (operation, communicator, sequence number).
	inst := map[collKey][]*call{}
	var keys []collKey
	for r := range tl {
		for i := range tl[r] {
			c := &tl[r][i]
			// Communicator constructors are collectives too (the logger
			// numbers them in the parent's sequence), and MPI_Init is a
			// barrier over MPI_COMM_WORLD (the logger's clock
			// synchronisation inside it): sequence number 0 there.
			k := collKey{c.Op.String(), c.Comm, c.Seq}
			switch {
			case c.Op.IsWorldBarrier():
				k.comm = "W0.0"
			case c.Op.Class() != trace.ClassCollective && (c.Op.Class() != trace.ClassCommCreate || c.Seq == 0):
				continue
			}
			if inst[k] == nil {
				keys = append(keys, k)
			}
			inst[k] = append(inst[k], c)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].comm != keys[j].comm {
			return keys[i].comm < keys[j].comm
		}
		return keys[i].seq < keys[j].seq
	})
	for _, k := range keys {
		ms := inst[k]
		maxStart, minEnd, last := ms[0].Start, ms[0].End, ms[0].Rank
		second := int64(-1 << 62)
		for _, c := range ms[1:] {
			if c.Start > maxStart {
				second, maxStart, last = maxStart, c.Start, c.Rank
			} else if c.Start > second {
				second = c.Start
			}
			minEnd = min(minEnd, c.End)
		}
		if len(ms) > 1 {
			o.lead[k] = maxStart - second
		}
		rc := report.Collective{Op: k.op, Comm: k.comm, Seq: int(k.seq), Members: len(ms), LastRank: last,
			ExecutionNs: minEnd - maxStart}
		for _, c := range ms {
			rc.WaitBeforeNs += maxStart - c.Start
			rc.WaitAfterNs += c.End - minEnd
			switch {
			case c.Op == trace.OpBarrier || c.Op.IsWorldBarrier():
				book(c, waitAtBarrier, k.comm, maxStart)
			case nxnOps[c.Op] || c.Op.Class() == trace.ClassCommCreate:
				// A communicator constructor synchronises its members like
				// an Allgather (the analyzer counts its waits as N x N).
				book(c, waitAtNxN, c.Comm, maxStart)
			}
		}
		if rc.ExecutionNs > 0 {
			rc.Imbalance = float64(rc.WaitBeforeNs+rc.WaitAfterNs) / float64(rc.ExecutionNs)
		}
		o.colls = append(o.colls, rc)
	}

	add := func(m map[string]map[string]int64, key, kind string, ns int64) {
		if m[key] == nil {
			m[key] = map[string]int64{}
		}
		m[key][kind] += ns
	}
	for k, w := range o.wait {
		c := &tl[k[0]][k[1]]
		o.total[w.kind] += w.ns
		o.byRank[c.Rank][w.kind] += w.ns
		add(o.byOp, c.Op.String(), w.kind, w.ns)
		add(o.byComm, w.comm, w.kind, w.ns)
	}
	return o
}

// waitsText renders the waits the oracle finds in each rank's designed
// part (after its first align calls after MPI_Init), for the test log.
func (o *oracle) waitsText(align int, tl [][]call) string {
	var b strings.Builder
	for r := range tl {
		got := map[string]int64{}
		for _, c := range tl[r][min(align+1, len(tl[r])):] {
			if w := o.wait[[2]int{r, c.Idx}]; w.ns > 0 {
				got[w.kind] += w.ns
			}
		}
		fmt.Fprintf(&b, "  rank %d waits: %s\n", r, fmtKinds(got))
	}
	return b.String()
}
