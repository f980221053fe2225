//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
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
