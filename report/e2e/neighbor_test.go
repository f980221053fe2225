//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

const (
	nbCompute = 20 * time.Millisecond  // C: every rank's computation before and after the neighbour collective
	nbSlow    = 150 * time.Millisecond // S: rank 0's extra computation before it
	nbRing    = "K0.1"                 // the ring: world rank 0's first communicator
)

// TestNeighborSlowRank runs nbslow.c: on a ring of 4 ranks, rank 0 comes
// S late to MPI_Neighbor_allgather. Only its neighbours (1 and 3) wait for
// it there; rank 2, not a neighbour, does not (it waits in the Barrier
// after); the critical path runs through rank 0's computation and the
// neighbour collective's edge to rank 1 or 3.
func TestNeighborSlowRank(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "nbslow.c", "-Wall")
	bin := cpathBin(t)
	tol := tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}
	logDir, gate := retryUntilDesigned(t, func(logDir string) (gate string) {
		mpitest.Run(t, 4, lib, logDir, filepath.Dir(exe), exe, us(nbCompute), us(nbSlow))
		tl := timelines(mpitest.ReadLogs(t, logDir, 4))
		for r, calls := range tl {
			// The computation between the second Barrier and the
			// neighbour collective, and between it and the last Barrier.
			var before, after time.Duration
			bars := 0
			for i, c := range calls {
				switch {
				case c.Op == trace.OpNeighborAllgather && bars == 2:
					before = time.Duration(c.Start - calls[i-1].End)
					after = time.Duration(calls[i+1].Start - c.End)
				case c.Op == trace.OpBarrier:
					bars++
				}
			}
			wantBefore, wantAfter := nbCompute, nbCompute
			if r == 0 {
				wantBefore += nbSlow
			}
			if r == 1 || r == 3 {
				wantAfter = 2 * nbCompute
			}
			if !tol.ok(before, wantBefore) || !tol.ok(after, wantAfter) {
				gate = fmt.Sprintf("rank %d computed %v before and %v after the neighbour collective, designed %v and %v", r, before, after, wantBefore, wantAfter)
			}
		}
		return gate
	})
	if gate != "" {
		designMissed(t, "nbslow.c did not run as designed in %d runs (machine load): %s", attempts, gate)
	}
	for _, a := range []analyzer{{"dag", 0}, {"delta", 2}} {
		t.Run(a.String(), func(t *testing.T) { checkNeighborSlow(t, analyze(t, bin, logDir, a), tol) })
	}
}

func checkNeighborSlow(t *testing.T, rep *report.Report, tol tolerance) {
	t.Helper()
	op := trace.OpNeighborAllgather.String()
	// Waits: rank 0's neighbours wait S for it in the neighbour
	// collective (Wait at N x N, the only N x N after the aligning
	// Barrier); ranks 0 and 2 nothing there; rank 2 waits in the last
	// Barrier (S + C), as the design says.
	for _, w := range rep.Waitstates.ByRank {
		r, _ := strconv.Atoi(w.Key)
		nxn := time.Duration(w.WaitAtNxNNs)
		switch r {
		case 1, 3:
			if !tol.ok(nxn, nbSlow) {
				t.Errorf("rank %d (a neighbour of the slow rank) waits %v at N x N, designed %v", r, nxn, nbSlow)
			}
		default:
			if nxn > tol.of(nbSlow) {
				t.Errorf("rank %d (not a neighbour of the slow rank) waits %v at N x N, designed none", r, nxn)
			}
		}
		if r == 2 && !tol.ok(time.Duration(w.WaitAtBarrierNs), nbSlow+nbCompute) {
			t.Errorf("rank 2 waits %v at Barrier, designed %v", time.Duration(w.WaitAtBarrierNs), nbSlow+nbCompute)
		}
	}
	byKey := func(ws []report.WaitBreakdown, key string) time.Duration {
		for _, w := range ws {
			if w.Key == key {
				return time.Duration(w.WaitAtNxNNs)
			}
		}
		return 0
	}
	if got := byKey(rep.Waitstates.ByOp, op); !tol.ok(got, 2*nbSlow) {
		t.Errorf("by_op[%s] wait at N x N %v, designed %v (ranks 1 and 3)", op, got, 2*nbSlow)
	}
	if got := byKey(rep.Waitstates.ByComm, nbRing); !tol.ok(got, 2*nbSlow) {
		t.Errorf("by_comm[%s] wait at N x N %v, designed %v", nbRing, got, 2*nbSlow)
	}
	// The path: rank 0's C + S, then the neighbour collective's transfer
	// to a neighbour (1 or 3), whose 2C follows.
	var slow, after bool
	neighbor := -1
	for _, s := range rep.CriticalPath.Segments {
		d := time.Duration(s.EndNs - s.StartNs)
		switch {
		case s.Rank == 0 && s.Kind == "compute" && s.Op == op && tol.ok(d, nbCompute+nbSlow):
			slow = true
		case slow && neighbor < 0 && s.Kind == "transfer" && s.Op == op:
			neighbor = s.Rank
		case neighbor >= 0 && s.Rank == neighbor && s.Kind == "compute" && s.Op == trace.OpBarrier.String() && tol.ok(d, 2*nbCompute):
			after = true
		}
		if s.Rank == 2 && s.Kind == "compute" && d > nbCompute+tol.of(nbCompute) {
			t.Errorf("rank 2's computation of %v is on the path; it is off the slow rank's neighbourhood", d)
		}
	}
	if !slow || (neighbor != 1 && neighbor != 3) || !after {
		t.Errorf("path: rank 0's %v of computation %v, a transfer in %s to rank %d (want 1 or 3), its %v after %v; segments %+v",
			nbCompute+nbSlow, slow, op, neighbor, 2*nbCompute, after, rep.CriticalPath.Segments)
	}
	// One instance of the neighbour collective, not synchronising.
	n := 0
	for _, c := range rep.Calls {
		if c.Op == op {
			n++
			if c.Comm != nbRing || c.Synchronising {
				t.Errorf("calls[]: %+v, want on %s, not synchronising", c, nbRing)
			}
		}
	}
	if n != 1 {
		t.Errorf("calls[] has %d instances of %s, want 1", n, op)
	}
}
