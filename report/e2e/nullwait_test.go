//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestNullRequestWaits runs nullwait.c: its waits given only
// MPI_REQUEST_NULL (or a count of 0) are logged as such
// (trace.FlagNullRequests) and are MPI time with no partner in the report,
// not unclassified; the waitall that completes a message among nulls is a
// wait as any.
func TestNullRequestWaits(t *testing.T) {
	const n = 20
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "nullwait.c", "-Wall")
	logDir := filepath.Join(t.TempDir(), "logs")
	mpitest.RunEnv(t, 2, nil, lib, logDir, filepath.Dir(exe), exe, fmt.Sprint(n))
	logs := mpitest.ReadLogs(t, logDir, 2)
	for r, calls := range timelines(logs) {
		null, real := 0, 0
		for _, c := range calls {
			if c.Op.Class() != trace.ClassComplete {
				continue
			}
			if len(c.Done) == 0 {
				null++
			} else {
				real++
			}
		}
		if null != 4*n || real != n {
			t.Errorf("rank %d: %d completions of nothing and %d of a request, want %d and %d", r, null, real, 4*n, n)
		}
	}
	for r, l := range logs {
		flagged := 0
		for _, rec := range l.Records {
			if rec.Op.Class() == trace.ClassComplete && rec.Flags&trace.FlagNullRequests != 0 {
				flagged++
			}
		}
		if flagged != 4*n {
			t.Errorf("rank %d: %d completion records flagged as given only null requests, want %d", r, flagged, 4*n)
		}
	}
	for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
		t.Run(a.String(), func(t *testing.T) {
			rep := analyze(t, cpathBin(t), logDir, a)
			var onPath int64
			for _, s := range rep.CriticalPath.Segments {
				if s.Kind == "mpi" && (s.Op == "MPI_Waitall" || s.Op == "MPI_Wait" || s.Op == "MPI_Waitany") {
					onPath += s.EndNs - s.StartNs
				}
			}
			if onPath == 0 {
				t.Fatal("no wait on the critical path: the test shows nothing")
			}
			for _, o := range rep.CriticalPath.UnclassifiedByOp {
				if o.Op == "MPI_Waitall" || o.Op == "MPI_Wait" || o.Op == "MPI_Waitany" {
					t.Errorf("unclassified: %s %d ns: the waits on null requests are counted as waits on requests the logs lack", o.Op, o.Ns)
				}
			}
		})
	}
}
