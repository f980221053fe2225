//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// expectFortranCounts is the number of calls fbody.inc makes per rank.
func expectFortranCounts(rank int) map[trace.Op]int {
	m := map[trace.Op]int{
		trace.OpInit: 1, trace.OpFinalize: 1,
		trace.OpSend:  []int{2, 3, 3, 2}[rank],
		trace.OpRecv:  []int{4, 1, 2, 2}[rank],
		trace.OpIrecv: 2, trace.OpIsend: 2, trace.OpWaitall: 3, trace.OpWait: 2,
		trace.OpRecvInit: 1, trace.OpSendInit: 1, trace.OpStart: 2, trace.OpStartall: 2,
		trace.OpRequestFree: 2,
		trace.OpBarrier:     2, trace.OpBcast: 2, trace.OpReduce: 1, trace.OpAllreduce: 3,
		trace.OpGather: 1, trace.OpAllgather: 1, trace.OpAlltoall: 1,
		trace.OpCommSplit: 1, trace.OpCommFree: 1,
	}
	if rank == 1 {
		m[trace.OpIrecv]++
		m[trace.OpWait]++
	}
	return m
}

// expectFortranMessages lists fbody.inc's messages as both sides log them.
func expectFortranMessages() (sends, recvs []message) {
	const np = 4
	w := "W0.0"
	var l messages
	add := l.add
	for r := 0; r < np; r++ {
		right, left := (r+1)%np, (r+np-1)%np
		add(r, right, w, 1, 40, trace.OpSend, trace.OpRecv, false)
		add(r, left, w, 2, 48, trace.OpIsend, trace.OpWaitall, false)
		add(r, right, w, 2, 48, trace.OpIsend, trace.OpWaitall, false)
		add(r, right, w, 3, 20, trace.OpStart, trace.OpWait, false)
		add(r, right, w, 3, 20, trace.OpStartall, trace.OpWaitall, false)
		add(r, right, w, 3, 20, trace.OpStartall, trace.OpWaitall, false)
	}
	for src := 1; src < np; src++ {
		add(src, 0, w, 4, uint64(8*(src+1)), trace.OpSend, trace.OpRecv, true)
	}
	add(2, 1, w, 5, 24, trace.OpSend, trace.OpWait, true)
	add(0, 2, "S0.1", 6, 28, trace.OpSend, trace.OpRecv, false)
	add(1, 3, "S1.1", 6, 28, trace.OpSend, trace.OpRecv, false)
	return l.sends, l.recvs
}

// TestFortran runs the same calls through the three Fortran bindings
// (fbody.inc through mpif.h and the mpi module, ff08.f90 through mpi_f08)
// under Open MPI and MPICH, each with its own logger: exact call counts,
// sub-records, communicators, collectives with roots and bytes, messages
// with peers as world ranks, every call recorded once at the program's
// call site (MPICH's mpi_f08 calls MPI_Send from inside libmpichfort),
// and logs that analyse with every message matched.
func TestFortran(t *testing.T) {
	for _, m := range mpitest.Impls {
		for _, tc := range []struct {
			name, src string
			flags     []string
		}{
			// gfortran >= 10 rejects mpif.h's untyped buffers without
			// -fallow-argument-mismatch; the mpi module declares them.
			{"mpif.h", "fmpi.f90", []string{"-fallow-argument-mismatch"}},
			{"use_mpi", "fuse.f90", nil},
			{"mpi_f08", "ff08.f90", nil},
		} {
			t.Run(m.Key+"/"+tc.name, func(t *testing.T) { testFortran(t, m, tc.src, tc.flags) })
		}
	}
}

func testFortran(t *testing.T, m *mpitest.Impl, src string, flags []string) {
	const np = 4
	lib := m.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), m.FC(t), src, flags...)
	logDir := filepath.Join(t.TempDir(), "logs")
	m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, filepath.Base(exe))

	r.checkCounts(t, expectFortranCounts)
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		want := map[trace.Op]int{trace.OpWaitall: 8, trace.OpWait: 2, trace.OpStartall: 4, trace.OpCommSplit: 2}
		if rank == 1 {
			want[trace.OpWait]++
		}
		return want
	})
	r.checkCommTable(t, expectNames([]commSpec{{'S', []int32{0, 2}, nil}, {'S', []int32{1, 3}, nil}}))
	r.checkColls(t, map[string][]collSpec{
		"W0.0": {
			{trace.OpBarrier, none, bytesAll(0)},
			{trace.OpBcast, 1, bytesAll(16)},
			{trace.OpReduce, 2, bytesAll(24)},
			{trace.OpAllreduce, none, bytesAll(8)}, // MPI_IN_PLACE
			{trace.OpAllreduce, none, bytesAll(16)},
			{trace.OpGather, 0, bytesAll(8)},
			{trace.OpAllgather, none, bytesAll(8)},
			{trace.OpAlltoall, none, bytesAll(48)},
			{trace.OpCommSplit, none, nil},
			{trace.OpBarrier, none, bytesAll(0)},
		},
		"S0.1": {
			{trace.OpAllreduce, none, bytesAll(4)},
			{trace.OpBcast, 2, bytesAll(16)},
			{trace.OpCommFree, none, nil},
		},
		"S1.1": {
			{trace.OpAllreduce, none, bytesAll(4)},
			{trace.OpBcast, 3, bytesAll(16)},
			{trace.OpCommFree, none, nil},
		},
	})
	sends, recvs := expectFortranMessages()
	sameMessages(t, "sends", r.sends, sends)
	sameMessages(t, "receives", r.recvs, recvs)

	for rank := 0; rank < np; rank++ {
		inplace := r.find(rank, func(c *call) bool { return c.Flags&trace.FlagInPlace != 0 })
		if len(inplace) != 1 || inplace[0].Op != trace.OpAllreduce || inplace[0].Seq != 4 {
			t.Errorf("rank %d: FlagInPlace on %v, want only the world Allreduce with seq 4", rank, inplace)
		}
		// Recorded at the program's call site, not inside the
		// MPI's Fortran library.
		l := logs[rank]
		for _, c := range r.find(rank, func(*call) bool { return true }) {
			if len(l.Header.Modules) == 0 || !l.Header.Modules[0].Contains(c.CallSite) {
				t.Errorf("rank %d: %v: call site %#x is not in the program", rank, c, c.CallSite)
				break
			}
		}
	}

	// The logs analyse: every message matched.
	p := buildPAG(t, logDir)
	if p.Messages != len(sends) || p.Unmatched != 0 {
		t.Errorf("analysis: %d messages, %d unmatched; want %d, 0", p.Messages, p.Unmatched, len(sends))
	}
}
