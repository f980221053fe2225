//go:build mpi

package e2e

import (
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// ioSpec is an independent file read or write of io.c, in call order.
type ioSpec struct {
	Op    trace.Op
	Bytes uint64
}

// expectIO is io.c's independent file operations, in call order: the same
// on every rank, all on the world file (the rank's file 1).
var expectIO = []ioSpec{
	{trace.OpFileWriteAt, 32}, {trace.OpFileWrite, 12}, {trace.OpFileWriteShared, 5},
	{trace.OpFileReadAt, 32}, {trace.OpFileRead, 12}, {trace.OpFileReadShared, 4},
	{trace.OpFileIwriteAt, 16}, {trace.OpFileIreadAt, 16}, {trace.OpFileIwrite, 8}, {trace.OpFileIread, 4},
	{trace.OpFileIwriteShared, 3}, {trace.OpFileIreadShared, 3},
}

// expectIOColls is io.c's collectives per communicator, in Seq order: the
// file operations are collectives over the file's communicator, numbered
// with its other collectives, also after MPI_Comm_free of it.
func expectIOColls() map[string][]collSpec {
	perRank := bytesPer(func(r uint64) uint64 { return 4 * (r + 1) }) // rank+1 ints
	half := []collSpec{
		{trace.OpFileOpen, none, bytesAll(0)},
		{trace.OpCommFree, none, nil},
		{trace.OpFileWriteAtAll, none, bytesAll(8)},
		{trace.OpFileClose, none, bytesAll(0)},
	}
	return map[string][]collSpec{
		"W0.0": {
			{trace.OpFileOpen, none, bytesAll(0)},
			{trace.OpFileSetView, none, bytesAll(0)},
			{trace.OpFileWriteAtAll, none, perRank},
			{trace.OpFileWriteAll, none, bytesAll(16)},
			{trace.OpFileWriteOrdered, none, bytesAll(8)},
			{trace.OpFileSync, none, bytesAll(0)},
			{trace.OpBarrier, none, bytesAll(0)},
			{trace.OpFileReadAtAll, none, perRank},
			{trace.OpFileReadAll, none, bytesAll(8)},
			{trace.OpFileReadOrdered, none, bytesAll(2)},
			{trace.OpFileIwriteAtAll, none, bytesAll(8)},
			{trace.OpFileIreadAtAll, none, bytesAll(8)},
			{trace.OpFileIwriteAll, none, bytesAll(8)},
			{trace.OpFileIreadAll, none, bytesAll(8)},
			{trace.OpFileClose, none, bytesAll(0)},
			{trace.OpCommSplit, none, nil},
		},
		"S0.1": half,
		"S1.1": half,
	}
}

func TestFileIO(t *testing.T) { testFileIO(t, mpitest.OpenMPI) }

// testFileIO runs io.c under m and checks it.
func testFileIO(t *testing.T, m *mpitest.Impl) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "io.c")
	logs, _ := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	r := check(t, logs, np, "io")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		// Comm_split and Comm_free are in the collectives' lists.
		m := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpWait: 8, trace.OpWaitall: 1}
		for _, s := range expectIO {
			m[s.Op]++
		}
		for name, specs := range expectIOColls() {
			if name == "W0.0" || name == "S0.1" && rank%2 == 0 || name == "S1.1" && rank%2 == 1 {
				for _, s := range specs {
					m[s.Op]++
				}
			}
		}
		return m
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpWait: 8, trace.OpWaitall: 2, trace.OpCommSplit: 2}
	})
	r.checkCommTable(t, expectNames([]commSpec{{'S', []int32{0, 2}, nil}, {'S', []int32{1, 3}, nil}}))
	r.checkColls(t, expectIOColls())
	if len(r.sends)+len(r.recvs) != 0 {
		t.Errorf("io.c sends no point-to-point messages; logs show %d sends, %d receives", len(r.sends), len(r.recvs))
	}

	for rank := 0; rank < np; rank++ {
		half := "S0.1"
		if rank%2 == 1 {
			half = "S1.1"
		}
		// Every file record names its file: the world file is the rank's
		// first, the half file its second, each on its own communicator.
		var indep []*call
		reqs := map[uint32]bool{}
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.IsIO() }) {
			wantComm, wantTag := "W0.0", int32(1)
			if c.CommName != "W0.0" {
				wantComm, wantTag = half, 2
			}
			if c.CommName != wantComm || c.Tag != wantTag || c.Root != none || c.Peer != none {
				t.Errorf("rank %d: %v: want communicator %s, file %d, no root or peer", rank, c, wantComm, wantTag)
			}
			switch c.Op.Class() {
			case trace.ClassFileIO, trace.ClassFileIIO:
				indep = append(indep, c)
				if c.Seq != 0 {
					t.Errorf("rank %d: %v: an independent file operation with seq %d", rank, c, c.Seq)
				}
			}
			if nb := c.Op.Class() == trace.ClassFileIIO || c.Op.Class() == trace.ClassIcollective; nb != (c.Flags&trace.FlagNewReq != 0) {
				t.Errorf("rank %d: %v: creates a request %v, want %v", rank, c, !nb, nb)
			} else if nb {
				reqs[c.Req] = true
			}
		}
		if len(indep) != len(expectIO) {
			t.Errorf("rank %d: %d independent file operations, want %d", rank, len(indep), len(expectIO))
		}
		for i := 0; i < len(indep) && i < len(expectIO); i++ {
			if c, w := indep[i], expectIO[i]; c.Op != w.Op || c.Bytes != w.Bytes {
				t.Errorf("rank %d: independent file operation %d is %v, want %v of %d bytes", rank, i, c, w.Op, w.Bytes)
			}
		}
		// The file requests complete in the Waits, with no peer.
		done := 0
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.Class() == trace.ClassComplete }) {
			for _, s := range c.Subs {
				if reqs[s.Req] {
					done++
					if s.Peer != none || s.Comm != c.Subs[0].Comm {
						t.Errorf("rank %d: %v completes file request %d with peer %d comm %d", rank, c, s.Req, s.Peer, s.Comm)
					}
				}
			}
		}
		if done != len(reqs) || len(reqs) != 10 {
			t.Errorf("rank %d: %d file requests, %d completions; want 10 and 10", rank, len(reqs), done)
		}
	}
}

// TestFortranFileIO runs fio.f90: MPI-IO calls through the Fortran
// binding, with a Fortran string and INTEGER(MPI_OFFSET_KIND) offsets.
func TestFortranFileIO(t *testing.T) { testFortranFileIO(t, mpitest.OpenMPI) }

// testFortranFileIO runs fio.f90 under m and checks it.
func testFortranFileIO(t *testing.T, m *mpitest.Impl) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), m.FC(t), "fio.f90")
	logs, _ := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	r := check(t, logs, np, "fio")
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpFileOpen: 1, trace.OpFileSetView: 1,
			trace.OpFileWriteAt: 1, trace.OpFileWriteAtAll: 1, trace.OpFileIwriteAt: 1, trace.OpWait: 1,
			trace.OpFileReadAtAll: 1, trace.OpFileClose: 1}
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int { return map[trace.Op]int{trace.OpWait: 1} })
	r.checkColls(t, map[string][]collSpec{"W0.0": {
		{trace.OpFileOpen, none, bytesAll(0)},
		{trace.OpFileSetView, none, bytesAll(0)},
		{trace.OpFileWriteAtAll, none, bytesPer(func(r uint64) uint64 { return 8 * (r + 1) })},
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
	}
}
