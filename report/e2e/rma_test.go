//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

const (
	fenceCompute = 20 * time.Millisecond  // C: every rank's computation inside the epoch and after it
	fenceSlow    = 150 * time.Millisecond // S: rank 1's extra computation inside the epoch
)

// TestFenceSlowRank runs fenceslow.c: in a fence epoch on a window over
// 3 ranks, rank 1 computes S longer before the closing MPI_Win_fence.
// Ranks 0 and 2 wait about S there (Wait at Fence, not N x N); the
// critical path runs through rank 1's MPI_Put (as MPI time) and its
// computation into the fence.
func TestFenceSlowRank(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "fenceslow.c", "-Wall")
	bin := cpathBin(t)
	tol := tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}
	logDir, gate := retryUntilDesigned(t, func(logDir string) (gate string) {
		mpitest.Run(t, 3, lib, logDir, filepath.Dir(exe), exe, us(fenceCompute), us(fenceSlow))
		tl := timelines(mpitest.ReadLogs(t, logDir, 3))
		for r, calls := range tl {
			// The computation between the Put and the closing fence.
			var inEpoch time.Duration
			for i, c := range calls {
				if c.Op == trace.OpPut && i+1 < len(calls) && calls[i+1].Op == trace.OpWinFence {
					inEpoch = time.Duration(calls[i+1].Start - c.End)
				}
			}
			want := fenceCompute
			if r == 1 {
				want += fenceSlow
			}
			if !tol.ok(inEpoch, want) {
				gate = fmt.Sprintf("rank %d computed %v in the epoch, designed %v", r, inEpoch, want)
			}
		}
		return gate
	})
	// The one-sided traffic, whatever the timing: each rank put 4 ints to
	// the next, once.
	for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
		rep := analyze(t, bin, logDir, a)
		want := []report.Pair{{Src: 0, Dst: 1, Count: 1, Bytes: 16}, {Src: 1, Dst: 2, Count: 1, Bytes: 16}, {Src: 2, Dst: 0, Count: 1, Bytes: 16}}
		if !reflect.DeepEqual(rep.CommMatrix.OneSided, want) {
			t.Errorf("%s: one-sided pairs %+v, want each rank's MPI_Put to the next: %+v", a, rep.CommMatrix.OneSided, want)
		}
	}
	if gate != "" {
		designMissed(t, "fenceslow.c did not run as designed in %d runs (machine load): %s", attempts, gate)
	}
	for _, a := range []analyzer{{"dag", 0}, {"delta", 2}} {
		t.Run(a.String(), func(t *testing.T) { checkFenceSlow(t, analyze(t, bin, logDir, a), tol) })
	}
}

func checkFenceSlow(t *testing.T, rep *report.Report, tol tolerance) {
	t.Helper()
	fence, put := trace.OpWinFence.String(), trace.OpPut.String()
	// Waits: ranks 0 and 2 wait S for rank 1 in the fence, as Wait at
	// Fence; rank 1 does not wait there.
	for _, w := range rep.Waitstates.ByRank {
		r, _ := strconv.Atoi(w.Key)
		got := time.Duration(w.WaitAtFenceNs)
		switch r {
		case 0, 2:
			if !tol.ok(got, fenceSlow) {
				t.Errorf("rank %d waits %v at fence, designed %v", r, got, fenceSlow)
			}
		case 1:
			if got > tol.of(fenceSlow) {
				t.Errorf("rank 1 (the slow rank) waits %v at fence, designed none", got)
			}
		}
	}
	if got := time.Duration(rep.Waitstates.WaitAtFenceNs); !tol.ok(got, 2*fenceSlow) {
		t.Errorf("wait at fence %v in all, designed %v (ranks 0 and 2)", got, 2*fenceSlow)
	}
	// The fence's waiting is not counted as N x N.
	if got := time.Duration(rep.Waitstates.WaitAtNxNNs); got > tol.of(fenceSlow) {
		t.Errorf("wait at N x N %v: the fence's waits counted as N x N?", got)
	}
	fenceOf := func(ws []report.WaitBreakdown, key string) time.Duration {
		for _, w := range ws {
			if w.Key == key {
				return time.Duration(w.WaitAtFenceNs)
			}
		}
		return 0
	}
	if got := fenceOf(rep.Waitstates.ByOp, fence); !tol.ok(got, 2*fenceSlow) {
		t.Errorf("by_op[%s] wait at fence %v, designed %v", fence, got, 2*fenceSlow)
	}
	if got := fenceOf(rep.Waitstates.ByComm, "W0.0"); !tol.ok(got, 2*fenceSlow) {
		t.Errorf("by_comm[W0.0] wait at fence %v, designed %v", got, 2*fenceSlow)
	}
	// The path: rank 1's Put as MPI time, then its C + S of computation
	// into the fence; no other rank's computation in the epoch (C).
	var putOnPath, slow bool
	for _, s := range rep.CriticalPath.Segments {
		d := time.Duration(s.EndNs - s.StartNs)
		switch {
		case s.Rank == 1 && s.Op == put && s.Kind == "mpi":
			putOnPath = true
		case s.Rank == 1 && s.Kind == "compute" && s.Op == fence && tol.ok(d, fenceCompute+fenceSlow):
			slow = putOnPath
		case s.Rank != 1 && s.Kind == "compute" && s.Op == fence && d > fenceCompute/2:
			t.Errorf("rank %d's computation of %v before the fence is on the path; rank 1 is the slow one", s.Rank, d)
		}
	}
	if !putOnPath || !slow {
		t.Errorf("path: rank 1's MPI_Put as mpi %v, then its %v of computation into the fence %v; segments %+v",
			putOnPath, fenceCompute+fenceSlow, slow, rep.CriticalPath.Segments)
	}
	// The fences are synchronising collective instances on W0.0: the
	// closing one has 2S waiting before it, rank 1 last to arrive.
	var fences []report.Collective
	for _, c := range rep.Calls {
		if c.Op == fence {
			fences = append(fences, c)
			if c.Comm != "W0.0" || !c.Synchronising {
				t.Errorf("calls[]: %+v, want on W0.0, synchronising", c)
			}
		}
	}
	if len(fences) != 2 {
		t.Fatalf("calls[] has %d instances of %s, want 2", len(fences), fence)
	}
	if c := fences[1]; c.Seq != fences[0].Seq+1 || c.LastRank != 1 || !tol.ok(time.Duration(c.WaitBeforeNs), 2*fenceSlow) {
		t.Errorf("closing fence %+v: want seq %d, last to arrive rank 1, %v waiting before", c, fences[0].Seq+1, 2*fenceSlow)
	}
}
