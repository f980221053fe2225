//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// rmaSpec is a one-sided call of rma.c that is not a collective: its op,
// target (a world rank, or none), bytes, and the rank's window number it
// names (Tag).
type rmaSpec struct {
	Op     trace.Op
	Peer   int32
	Bytes  uint64
	Window int32
}

// expectRMA is rank r's one-sided calls but the collectives, in call
// order. Targets in half are local ranks: 0 is world rank r%2+2, 1 is
// world rank r%2.
func expectRMA(r int) []rmaSpec {
	h0, h1 := int32(r%2+2), int32(r%2)
	s := []rmaSpec{
		{trace.OpPut, int32((r + 1) % 4), 8, 1},
		{trace.OpGet, int32((r + 3) % 4), 12, 1},
		{trace.OpAccumulate, 0, 4, 1},
		{trace.OpWinLock, h0, 0, 2},
		{trace.OpFetchAndOp, h0, 8, 2},
		{trace.OpCompareAndSwap, h0, 8, 2},
		{trace.OpGetAccumulate, h0, 16, 2},
		{trace.OpWinFlush, h0, 0, 2},
		{trace.OpWinUnlock, h0, 0, 2},
		{trace.OpWinLockAll, none, 0, 2},
		{trace.OpRput, h1, 8, 2},
		{trace.OpRget, h1, 16, 2},
		{trace.OpRaccumulate, h0, 24, 2},
		{trace.OpRgetAccumulate, h0, 8, 2},
		{trace.OpWinFlushAll, none, 0, 2},
		{trace.OpWinFlushLocal, h1, 0, 2},
		{trace.OpWinFlushLocalAll, none, 0, 2},
		{trace.OpWinSync, none, 0, 2},
		{trace.OpWinUnlockAll, none, 0, 2},
	}
	if r%2 == 0 { // PSCW on window 1: the even rank is the origin
		return append(s, rmaSpec{trace.OpWinStart, none, 0, 1}, rmaSpec{trace.OpPut, int32(r + 1), 4, 1},
			rmaSpec{trace.OpWinComplete, none, 0, 1})
	}
	return append(s, rmaSpec{trace.OpWinPost, none, 0, 1}, rmaSpec{trace.OpWinWait, none, 0, 1})
}

// expectRMAColls is rma.c's collectives per communicator, in Seq order:
// window creation, free and MPI_Win_fence are collectives over the
// window's communicator, numbered with its other collectives. Bytes of a
// creation: the local window size.
func expectRMAColls() map[string][]collSpec {
	half := []collSpec{
		{trace.OpWinCreate, none, bytesAll(32)},
		{trace.OpWinAllocateShared, none, bytesAll(16)},
		{trace.OpWinFree, none, bytesAll(0)},
		{trace.OpWinFree, none, bytesAll(0)},
	}
	return map[string][]collSpec{
		"W0.0": {
			{trace.OpWinAllocate, none, bytesAll(32)},
			{trace.OpWinFence, none, bytesAll(0)},
			{trace.OpWinFence, none, bytesAll(0)},
			{trace.OpCommSplit, none, nil},
			{trace.OpWinCreateDynamic, none, bytesAll(0)},
			{trace.OpWinFree, none, bytesAll(0)},
			{trace.OpWinFree, none, bytesAll(0)},
		},
		"S2.1": half,
		"S3.1": half,
	}
}

// rmaWindow is the window number (Tag) each collective of rma.c names, in
// the rank's call order, and its communicator.
var rmaWindows = []struct {
	Op     trace.Op
	Window int32
	Half   bool
}{
	{trace.OpWinAllocate, 1, false}, {trace.OpWinFence, 1, false}, {trace.OpWinFence, 1, false},
	{trace.OpWinCreate, 2, true}, {trace.OpWinAllocateShared, 3, true},
	{trace.OpWinFree, 2, true}, {trace.OpWinFree, 3, true},
	{trace.OpWinCreateDynamic, 4, false}, {trace.OpWinFree, 4, false}, {trace.OpWinFree, 1, false},
}

// TestRMA runs rma.c under Open MPI and under MPICH, each with its own
// logger: every one-sided call the logger wraps, on windows over
// MPI_COMM_WORLD and over a split communicator whose ranks differ from the
// world's. Open MPI 4.1's default one-sided component (osc/rdma over the
// vader transport) crashes in MPI_Compare_and_swap with or without the
// logger: the run asks for osc sm,pt2pt.
func TestRMA(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testRMA(t, m, m.CC(t), "rma.c") })
	}
}

// testRMA runs src (rma.c, or its Fortran twin frma.f90) compiled with
// compiler under m and checks it.
func testRMA(t *testing.T, m *mpitest.Impl, compiler, src string, flags ...string) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), compiler, src, flags...)
	lib := m.LoggerLib(t)
	logDir := t.TempDir()
	m.RunEnv(t, np, []string{"OMPI_MCA_osc=sm,pt2pt"}, lib, logDir, t.TempDir(), exe)
	logs := mpitest.ReadLogs(t, logDir, np)
	checkCallSites(t, logs)
	r := check(t, logs, np, filepath.Base(exe))

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		m := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpWaitall: 1}
		for _, s := range expectRMA(rank) {
			m[s.Op]++
		}
		for name, specs := range expectRMAColls() {
			if name == "W0.0" || name == fmt.Sprintf("S%d.1", rank%2+2) {
				for _, s := range specs {
					m[s.Op]++
				}
			}
		}
		return m
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpWaitall: 4, trace.OpCommSplit: 2, trace.OpWinStart: 1 - rank%2, trace.OpWinPost: rank % 2}
	})
	r.checkCommTable(t, expectNames([]commSpec{{'S', []int32{2, 0}, nil}, {'S', []int32{3, 1}, nil}}))
	r.checkColls(t, expectRMAColls())
	if len(r.sends)+len(r.recvs) != 0 {
		t.Errorf("rma.c sends no point-to-point messages; logs show %d sends, %d receives", len(r.sends), len(r.recvs))
	}

	for rank := 0; rank < np; rank++ {
		half := fmt.Sprintf("S%d.1", rank%2+2)
		commOf := func(w int32) string {
			if w == 2 || w == 3 {
				return half
			}
			return "W0.0"
		}
		// The collectives name their window and its communicator.
		colls := r.find(rank, func(c *call) bool { return c.Op.IsRMA() && c.Op.IsCollective() })
		if len(colls) != len(rmaWindows) {
			t.Errorf("rank %d: %d window collectives, want %d", rank, len(colls), len(rmaWindows))
		}
		for i := 0; i < len(colls) && i < len(rmaWindows); i++ {
			c, w := colls[i], rmaWindows[i]
			if c.Op != w.Op || c.Tag != w.Window || c.CommName != commOf(w.Window) || c.Peer != none {
				t.Errorf("rank %d: window collective %d is %v, want %v on window %d over %s", rank, i, c, w.Op, w.Window, commOf(w.Window))
			}
		}
		// The rest: target as a world rank, bytes, window, communicator.
		got := r.find(rank, func(c *call) bool { return c.Op.IsRMA() && !c.Op.IsCollective() })
		want := expectRMA(rank)
		if len(got) != len(want) {
			t.Errorf("rank %d: %d one-sided calls, want %d", rank, len(got), len(want))
		}
		reqs := map[uint32]bool{}
		for i := 0; i < len(got) && i < len(want); i++ {
			c, w := got[i], want[i]
			if c.Op != w.Op || c.Peer != w.Peer || c.Bytes != w.Bytes || c.Tag != w.Window || c.CommName != commOf(w.Window) || c.Seq != 0 {
				t.Errorf("rank %d: one-sided call %d is %v, want %v target %d, %d bytes, window %d over %s",
					rank, i, c, w.Op, w.Peer, w.Bytes, w.Window, commOf(w.Window))
			}
			if nb := c.Op.Class() == trace.ClassRMARequest; nb != (c.Flags&trace.FlagNewReq != 0) {
				t.Errorf("rank %d: %v: creates a request %v, want %v", rank, c, !nb, nb)
			} else if nb {
				reqs[c.Req] = true
			}
			// PSCW: the group, as world ranks.
			if c.Op.Class() == trace.ClassRMAGroup {
				other := int32(rank ^ 1)
				var g []int32
				for _, s := range c.Subs {
					g = append(g, s.Peer)
				}
				if !slices.Equal(g, []int32{other}) {
					t.Errorf("rank %d: %v: group %v, want [%d]", rank, c, g, other)
				}
			}
		}
		// The Rput/Rget… requests complete in the Waitall, with no peer.
		done := 0
		for _, c := range r.find(rank, func(c *call) bool { return c.Op == trace.OpWaitall }) {
			for _, s := range c.Subs {
				if reqs[s.Req] {
					done++
					if s.Peer != none {
						t.Errorf("rank %d: %v completes RMA request %d with peer %d, want none", rank, c, s.Req, s.Peer)
					}
				}
			}
		}
		if len(reqs) != 4 || done != 4 {
			t.Errorf("rank %d: %d RMA requests, %d completions; want 4 and 4", rank, len(reqs), done)
		}
	}
}
