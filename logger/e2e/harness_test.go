//go:build mpi

package e2e

import (
	"fmt"
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

// designAttempts is how many times a designed program runs before its
// design check fails (mpitest.DesignMissed).
const designAttempts = 3

// retryDesign runs a designed program up to designAttempts times, until a
// run follows its design (run returns no reason it did not), and returns
// why the last run did not: "" when one did. A loaded machine stretches
// a program's computation and delays its wake-ups.
func retryDesign(t *testing.T, run func() (missed string)) string {
	t.Helper()
	var missed string
	for attempt := 1; attempt <= designAttempts; attempt++ {
		if missed = run(); missed == "" {
			return ""
		}
		t.Logf("attempt %d did not follow the design: %s", attempt, missed)
	}
	return fmt.Sprintf("in %d runs; the last: %s", designAttempts, missed)
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
