//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// runLogged builds the logger, runs prog under it with np ranks, and
// returns the decoded logs and the job's output.
func runLogged(t *testing.T, np int, prog string, args ...string) ([]*trace.Log, string) {
	t.Helper()
	lib := mpitest.LoggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	out := mpitest.Run(t, np, lib, logDir, filepath.Dir(prog), prog, args...)
	return mpitest.ReadLogs(t, logDir, np), out
}

// buildPAG builds the program activity graph of the logs in dir in one
// process, failing the test on an error.
func buildPAG(t *testing.T, dir string) *graph.PAG {
	t.Helper()
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Build(&mpix.Single{}, run)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
