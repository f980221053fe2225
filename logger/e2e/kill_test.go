//go:build mpi

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestSIGKILLKeepsCommittedCalls: records go into a shared mapping of the
// log file as each call returns, so a rank killed by SIGKILL between calls
// loses nothing: rank 1 of failmodes kill raises SIGKILL right after its
// 50 barriers, and its log must hold MPI_Init and all 50 of them (before
// the mapped log, up to 16384 buffered records were lost).
func TestSIGKILLKeepsCommittedCalls(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	logDir := filepath.Join(t.TempDir(), "logs")
	res := runFailJob(t, lib, logDir, exe, "kill")
	if res.code == 0 {
		t.Fatalf("mode kill: exit status 0, want the job to fail")
	}
	l, err := trace.ReadFile(filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", 1)))
	if err != nil {
		t.Fatalf("rank 1: %v", err)
	}
	var inits, barriers int
	for _, r := range l.Records {
		switch r.Op {
		case trace.OpInit:
			inits++
		case trace.OpBarrier:
			barriers++
		}
	}
	t.Logf("rank 1: trailer %v, %d records: %d MPI_Init, %d MPI_Barrier, damage %v", l.Trailer.Status, len(l.Records), inits, barriers, l.Damage)
	if l.Trailer.Status != trace.EndMissing || l.Damage != nil {
		t.Errorf("rank 1: trailer %v damage %v, want no trailer and an intact log", l.Trailer.Status, l.Damage)
	}
	if inits != 1 || barriers != failBarriers || len(l.Records) != 1+failBarriers {
		t.Errorf("rank 1: %d records (%d MPI_Init, %d MPI_Barrier), want exactly MPI_Init and %d barriers", len(l.Records), inits, barriers, failBarriers)
	}
	// The analyzer takes the run as far as it goes.
	out, err := exec.Command(cpathBin(t), logDir).CombinedOutput()
	t.Logf("cpath %s: %v\n%s", logDir, err, out)
	if err != nil {
		t.Errorf("cpath on the logs of a run with a killed rank: %v", err)
	}
}
