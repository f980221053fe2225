//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestRMAFlushWait runs flushwait.c under Open MPI and MPICH: rank 0
// completes passive-target accumulates with each of the four flushes in
// turn. The time in them is the report's rma_flush_ns (a wait for the
// window's operations, not the rank's own MPI time): in the totals, on
// rank 0 and under each flush's operation, as much as the logs' flush
// calls took, at one and two analyzer ranks.
func TestRMAFlushWait(t *testing.T) {
	flushes := []trace.Op{trace.OpWinFlush, trace.OpWinFlushAll, trace.OpWinFlushLocal, trace.OpWinFlushLocalAll}
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) {
			exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "flushwait.c", "-Wall")
			logDir := filepath.Join(t.TempDir(), "logs")
			m.Run(t, 2, m.LoggerLib(t), logDir, filepath.Dir(exe), exe)
			byOp := map[string]int64{}
			var total int64
			for _, l := range mpitest.ReadLogs(t, logDir, 2) {
				for i := range l.Records {
					r := &l.Records[i]
					for _, f := range flushes {
						if r.Op == f {
							byOp[f.String()] += r.End - r.Start
							total += r.End - r.Start
						}
					}
				}
			}
			if len(byOp) != len(flushes) {
				t.Fatalf("the logs hold flushes %v, want each of %v", byOp, flushes)
			}
			near := func(got, want int64) bool { d := got - want; return d >= -want/100-10e3 && d <= want/100+10e3 }
			for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
				rep := analyze(t, cpathBin(t), logDir, a)
				ws := &rep.Waitstates
				if !near(ws.RMAFlushNs, total) || !near(ws.ByRank[0].RMAFlushNs, total) || ws.ByRank[1].RMAFlushNs != 0 {
					t.Errorf("%s: rma_flush_ns %d, rank 0's %d, rank 1's %d; the logs' flushes took %d ns, all rank 0's",
						a, ws.RMAFlushNs, ws.ByRank[0].RMAFlushNs, ws.ByRank[1].RMAFlushNs, total)
				}
				got := map[string]int64{}
				for _, b := range ws.ByOp {
					if b.RMAFlushNs != 0 {
						got[b.Key] = b.RMAFlushNs
					}
				}
				for op, want := range byOp {
					if !near(got[op], want) {
						t.Errorf("%s: %s's rma_flush_ns %d, the logs' %d (all by operation: %v)", a, op, got[op], want, got)
					}
				}
				if len(got) != len(byOp) {
					t.Errorf("%s: rma_flush_ns under %v, want only the flushes %v", a, got, byOp)
				}
			}
		})
	}
}
