//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// splitEnd maps each split collective's _begin to its _end.
var splitEnd = map[trace.Op]trace.Op{
	trace.OpFileWriteAtAllBegin: trace.OpFileWriteAtAllEnd, trace.OpFileWriteAllBegin: trace.OpFileWriteAllEnd,
	trace.OpFileWriteOrderedBegin: trace.OpFileWriteOrderedEnd, trace.OpFileReadAtAllBegin: trace.OpFileReadAtAllEnd,
	trace.OpFileReadAllBegin: trace.OpFileReadAllEnd, trace.OpFileReadOrderedBegin: trace.OpFileReadOrderedEnd,
}

// expectSplitColls is iosplit.c's collectives on MPI_COMM_WORLD, in Seq
// order: every _begin takes the next number, as a collective file
// operation.
func expectSplitColls() map[string][]collSpec {
	perRank := bytesPer(func(r uint64) uint64 { return 4 * (r + 1) })
	return map[string][]collSpec{"W0.0": {
		{trace.OpFileOpen, none, bytesAll(0)},
		{trace.OpFileSetView, none, bytesAll(0)},
		{trace.OpFileWriteAtAllBegin, none, perRank},
		{trace.OpFileWriteAllBegin, none, bytesAll(16)},
		{trace.OpFileWriteOrderedBegin, none, bytesAll(8)},
		{trace.OpFileSync, none, bytesAll(0)},
		{trace.OpBarrier, none, bytesAll(0)},
		{trace.OpFileReadAtAllBegin, none, perRank},
		{trace.OpFileReadAllBegin, none, bytesAll(12)},
		{trace.OpFileReadOrderedBegin, none, bytesAll(3)},
		{trace.OpFileClose, none, bytesAll(0)},
	}}
}

// TestFileSplitCollectives runs iosplit.c under Open MPI and MPICH: each
// split collective's _begin is a collective file operation numbered in the
// file communicator's sequence with its bytes, creating a request that the
// _end right after it completes (one ReqDone on the file), and the
// analysis makes one collective instance of the 4 ranks of each.
func TestFileSplitCollectives(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testFileSplit(t, m) })
	}
}

func testFileSplit(t *testing.T, m *mpitest.Impl) {
	const np = 4
	lib := m.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "iosplit.c", "-Wall")
	logDir := filepath.Join(t.TempDir(), "logs")
	m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, "iosplit")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		want := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1}
		for _, s := range expectSplitColls()["W0.0"] {
			want[s.Op]++
			if e, ok := splitEnd[s.Op]; ok {
				want[e]++
			}
		}
		return want
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		want := map[trace.Op]int{}
		for _, e := range splitEnd {
			want[e] = 1
		}
		return want
	})
	r.checkColls(t, expectSplitColls())

	for rank := 0; rank < np; rank++ {
		calls := r.find(rank, func(c *call) bool { return c.Op.IsIO() })
		for i, c := range calls {
			if c.CommName != "W0.0" || c.Tag != 1 {
				t.Errorf("rank %d: %v: want the world file (W0.0, file 1)", rank, c)
			}
			e, ok := splitEnd[c.Op]
			if !ok {
				continue
			}
			if c.Flags&trace.FlagNewReq == 0 || c.Req == 0 {
				t.Errorf("rank %d: %v creates no request", rank, c)
				continue
			}
			if i+1 >= len(calls) {
				t.Errorf("rank %d: %v: no call after it", rank, c)
				continue
			}
			end := calls[i+1]
			if end.Op != e || len(end.Subs) != 1 || end.Subs[0].Req != c.Req || end.Subs[0].Comm != c.Comm ||
				end.Subs[0].Peer != none || end.Bytes != 0 || end.Seq != 0 {
				t.Errorf("rank %d: %v is followed by %v %+v, want %v completing request %d on its file", rank, c, end, end.Subs, e, c.Req)
			}
		}
	}

	p := buildPAG(t, logDir)
	inst := map[trace.Op]int{}
	for _, c := range p.Colls {
		if _, ok := splitEnd[c.Op]; ok {
			inst[c.Op]++
			if c.N != np {
				t.Errorf("analysis: %v instance (seq %d) has %d members, want %d", c.Op, c.Seq, c.N, np)
			}
		}
	}
	for b := range splitEnd {
		if inst[b] != 1 {
			t.Errorf("analysis: %d instances of %v, want 1", inst[b], b)
		}
	}
	if p.Messages != 0 || p.Unmatched != 0 {
		t.Errorf("analysis: %d messages, %d unmatched; want none", p.Messages, p.Unmatched)
	}
}

// TestFortran08FileIO runs ffio08.f90 under Open MPI and MPICH: MPI-IO and
// a split collective through the mpi_f08 binding, with a Fortran string,
// INTEGER(MPI_OFFSET_KIND) offsets and OPTIONAL ierror.
func TestFortran08FileIO(t *testing.T) {
	const np = 4
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) {
			lib := m.LoggerLib(t)
			exe := mpitest.Compile(t, t.TempDir(), m.FC(t), "ffio08.f90")
			logDir := filepath.Join(t.TempDir(), "logs")
			m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
			r := check(t, mpitest.ReadLogs(t, logDir, np), np, "ffio08")
			r.checkCounts(t, func(rank int) map[trace.Op]int {
				return map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpFileOpen: 1, trace.OpFileSetView: 1,
					trace.OpFileWriteAt: 1, trace.OpFileWriteAtAll: 1, trace.OpFileIwriteAt: 1, trace.OpWait: 1,
					trace.OpFileWriteAtAllBegin: 1, trace.OpFileWriteAtAllEnd: 1, trace.OpFileReadAtAll: 1, trace.OpFileClose: 1}
			})
			r.checkSubs(t, func(rank int) map[trace.Op]int {
				return map[trace.Op]int{trace.OpWait: 1, trace.OpFileWriteAtAllEnd: 1}
			})
			r.checkColls(t, map[string][]collSpec{"W0.0": {
				{trace.OpFileOpen, none, bytesAll(0)},
				{trace.OpFileSetView, none, bytesAll(0)},
				{trace.OpFileWriteAtAll, none, bytesPer(func(r uint64) uint64 { return 8 * (r + 1) })},
				{trace.OpFileWriteAtAllBegin, none, bytesAll(12)},
				{trace.OpFileReadAtAll, none, bytesAll(16)},
				{trace.OpFileClose, none, bytesAll(0)},
			}})
			for rank := 0; rank < np; rank++ {
				for _, w := range []ioSpec{{trace.OpFileWriteAt, 16}, {trace.OpFileIwriteAt, 8}} {
					cs := r.find(rank, func(c *call) bool { return c.Op == w.Op })
					if len(cs) != 1 || cs[0].Bytes != w.Bytes || cs[0].CommName != "W0.0" || cs[0].Tag != 1 {
						t.Errorf("rank %d: %v, want one %v of %d bytes on W0.0's file 1", rank, cs, w.Op, w.Bytes)
					}
				}
				b := r.find(rank, func(c *call) bool { return c.Op == trace.OpFileWriteAtAllBegin })
				e := r.find(rank, func(c *call) bool { return c.Op == trace.OpFileWriteAtAllEnd })
				if len(b) != 1 || len(e) != 1 || len(e[0].Subs) != 1 || e[0].Subs[0].Req != b[0].Req || b[0].Req == 0 {
					t.Errorf("rank %d: split collective %v ended by %v, want the _end completing the _begin's request", rank, b, e)
				}
			}
		})
	}
}
