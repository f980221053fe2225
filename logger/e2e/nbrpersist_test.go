//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// nbrInits are nbrpersist.c's persistent neighbourhood collectives in
// init order, with what each rank sends per start (two ring neighbours).
var nbrInits = []struct {
	op    trace.Op
	bytes uint64
}{
	{trace.OpNeighborAllgatherInit, 24}, {trace.OpNeighborAllgathervInit, 16}, {trace.OpNeighborAlltoallInit, 8},
	{trace.OpNeighborAlltoallvInit, 12}, {trace.OpNeighborAlltoallwInit, 12},
}

// TestPersistentNeighbor runs testdata/nbrpersist.c (see there) under
// MPICH: Open MPI 4.1 has these calls only as MPIX_ extensions (MPI 3.1),
// which the logger does not wrap. Exact call counts; the inits' bytes and
// persistent requests; every start numbered in the ring's collective
// sequence between the Barriers; and the analysis: one instance of the 4
// ranks per start, rank 0's late start waited for by its neighbours 1
// and 3 only.
func TestPersistentNeighbor(t *testing.T) {
	const np, iters, lateMs = 4, 3, 80
	m := mpitest.MPICH
	lib := m.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "nbrpersist.c", "-Wall")
	var logs []*trace.Log
	var p *graph.PAG
	missed := retryDesign(t, func() string {
		logDir := filepath.Join(t.TempDir(), "logs")
		m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
		logs, p = mpitest.ReadLogs(t, logDir, np), buildPAG(t, logDir)
		for _, rank := range []int{1, 3} {
			if w, _ := nbrLastWait(p, rank, iters); w != nil && w.Ns < lateMs/2*1e6 {
				return fmt.Sprintf("rank %d waited %v ms for rank 0's late start, designed %d ms", rank, float64(w.Ns)/1e6, lateMs)
			}
		}
		return ""
	})
	r := check(t, logs, np, "nbrpersist")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		want := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCartCreate: 1, trace.OpCommFree: 1,
			trace.OpStart: iters, trace.OpWait: iters, trace.OpStartall: iters, trace.OpWaitall: iters,
			trace.OpBarrier: iters, trace.OpRequestFree: len(nbrInits)}
		for _, in := range nbrInits {
			want[in.op] = 1
		}
		return want
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpCartCreate: np, trace.OpWait: iters, trace.OpStartall: 4 * iters, trace.OpWaitall: 4 * iters}
	})

	// The ring's sequence: per iteration the 5 starts and the Barrier,
	// then MPI_Comm_free.
	var want []string
	for k := 0; k < iters; k++ {
		for _, in := range nbrInits {
			want = append(want, in.op.String())
		}
		want = append(want, trace.OpBarrier.String())
	}
	want = append(want, trace.OpCommFree.String())
	for rank := 0; rank < np; rank++ {
		initOp := map[uint32]trace.Op{}
		var ring string
		for i, in := range nbrInits {
			cs := r.find(rank, func(c *call) bool { return c.Op == in.op })
			if len(cs) != 1 {
				continue // counted above
			}
			c := cs[0]
			if c.Bytes != in.bytes || c.Flags&trace.FlagPersistent == 0 || c.Seq != 0 || c.Root != none {
				t.Errorf("rank %d: init %d: %v, want %d bytes, persistent, no seq, no root", rank, i, c, in.bytes)
			}
			initOp[c.Req] = c.Op
			ring = c.CommName
		}
		got := make([]string, 20)
		seqOf := func(seq uint32, what string) {
			if seq == 0 || int(seq) > len(got) || got[seq-1] != "" {
				t.Errorf("rank %d: %s has seq %d, taken or out of range", rank, what, seq)
				return
			}
			got[seq-1] = what
		}
		for _, c := range r.find(rank, func(c *call) bool { return c.CommName == ring || c.Op == trace.OpStartall }) {
			switch c.Op {
			case trace.OpStart:
				seqOf(c.Seq, initOp[c.Req].String())
			case trace.OpStartall:
				for _, s := range c.Subs {
					seqOf(s.Seq, initOp[s.Req].String())
				}
			default:
				if c.Op.IsCollective() {
					seqOf(c.Seq, c.Op.String())
				}
			}
		}
		got = got[:len(want)]
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: ring sequence\n%v\nwant\n%v", rank, got, want)
		}
	}

	inst := map[trace.Op]int{}
	for _, c := range p.Colls {
		if c.Op.Class() == trace.ClassCollInit {
			inst[c.Op]++
			if c.N != np {
				t.Errorf("analysis: %v instance seq %d has %d members, want %d", c.Op, c.Seq, c.N, np)
			}
		}
	}
	for _, in := range nbrInits {
		if inst[in.op] != iters {
			t.Errorf("analysis: %d instances of %v, want %d", inst[in.op], in.op, iters)
		}
	}

	// The design: rank 0's last MPI_Start of the allgather came lateMs
	// late; its neighbours 1 and 3 waited for it in their MPI_Wait.
	for _, rank := range []int{1, 3} {
		w, late := nbrLastWait(p, rank, iters)
		if w == nil || w.Cause != late || w.Kind != graph.WaitAtNxN {
			t.Errorf("rank %d's last MPI_Wait: wait %+v, want Wait at N x N for rank 0's late MPI_Start (call %d)", rank, w, late)
		}
	}
	if w, late := nbrLastWait(p, 2, iters); w != nil && w.Cause == late {
		t.Errorf("rank 2, not rank 0's neighbour, waited for its start: %+v", w)
	}
	if missed != "" {
		mpitest.DesignMissed(t, "the machine did not run nbrpersist.c as designed %s", missed)
	}
}

// nbrLastWait is the wait of rank's last MPI_Wait in nbrpersist (nil if
// it did not wait), and rank 0's last MPI_Start, the late one.
func nbrLastWait(p *graph.PAG, rank, iters int) (w *graph.Wait, late int32) {
	starts, waits := make([][]int32, p.Ranks), make([][]int32, p.Ranks)
	for c := p.CallLo; c < p.CallHi; c++ {
		switch p.Op[c-p.CallLo] {
		case trace.OpStart:
			starts[p.Rank(c)] = append(starts[p.Rank(c)], c)
		case trace.OpWait:
			waits[p.Rank(c)] = append(waits[p.Rank(c)], c)
		}
	}
	if len(starts[0]) < iters || len(waits[rank]) < iters {
		return nil, -1
	}
	late = starts[0][iters-1]
	for k := range p.Waits {
		if p.Waits[k].Call == waits[rank][iters-1] {
			return &p.Waits[k], late
		}
	}
	return nil, late
}
