//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
)

// TestBufferDetach runs bufdetach.c under Open MPI and MPICH: rank 0's
// MPI_Buffer_detach waits about 1 s for rank 1 to post the receive of a
// 1 MiB buffered message. The wait is a Late Receiver of rank 0's
// MPI_Buffer_detach, not computation: the critical path's second is rank
// 1's computation, and the detach itself is on it only for the transfer.
func TestBufferDetach(t *testing.T) {
	const delayNs = 1e9
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) {
			exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "bufdetach.c", "-Wall")
			logDir := filepath.Join(t.TempDir(), "logs")
			m.Run(t, 2, m.LoggerLib(t), logDir, filepath.Dir(exe), exe)
			for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
				t.Run(a.String(), func(t *testing.T) {
					rep := analyze(t, cpathBin(t), logDir, a)
					var detach report.WaitBreakdown
					for _, w := range rep.Waitstates.ByOp {
						if w.Key == "MPI_Buffer_detach" {
							detach = w
						}
					}
					if ns := float64(detach.LateReceiverSynchronousNs); ns < 0.9*delayNs || ns > 1.1*delayNs {
						t.Errorf("MPI_Buffer_detach waited %.3f s for the receive (Late Receiver), want 1 s within 10%%", ns/1e9)
					}
					compute := map[int]int64{}
					for _, s := range rep.CriticalPath.Segments {
						switch {
						case s.Kind == "compute":
							compute[s.Rank] += s.EndNs - s.StartNs
						case s.Op == "MPI_Buffer_detach" && s.EndNs-s.StartNs > 0.1*delayNs:
							t.Errorf("the critical path spends %.3f s in rank %d's MPI_Buffer_detach, want only its transfer", float64(s.EndNs-s.StartNs)/1e9, s.Rank)
						}
					}
					if c1 := float64(compute[1]); c1 < 0.9*delayNs || c1 > 1.1*delayNs || compute[0] > 0.1*delayNs {
						t.Errorf("the critical path's computation: rank 0 %.3f s, rank 1 %.3f s; want rank 1's 1 s, rank 0 next to none", float64(compute[0])/1e9, c1/1e9)
					}
					for _, u := range rep.Run.UnwrappedCalls {
						if u.Name == "MPI_Buffer_detach" {
							t.Errorf("MPI_Buffer_detach counted as an unwrapped call: %+v", u)
						}
					}
				})
			}
		})
	}
}
