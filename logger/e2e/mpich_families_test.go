//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// The families whose tests run under Open MPI alone, run under MPICH with
// its logger: the same programs, the same checks.

// runLoggedWith is runLogged under m: it runs prog with m's logger and
// mpirun in prog's directory and returns the decoded logs and the job's
// output.
func runLoggedWith(t *testing.T, m *mpitest.Impl, np int, prog string, args ...string) ([]*trace.Log, string) {
	t.Helper()
	lib := m.LoggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	out := m.Run(t, np, lib, logDir, filepath.Dir(prog), prog, args...)
	return mpitest.ReadLogs(t, logDir, np), out
}

// TestNeighborMPICH runs neighbor.c under MPICH: see TestNeighbor.
func TestNeighborMPICH(t *testing.T) {
	m := mpitest.MPICH
	testNeighbor(t, m, m.CC(t), "neighbor.c")
}

// TestFileIOMPICH runs io.c under MPICH: see TestFileIO.
func TestFileIOMPICH(t *testing.T) { testFileIO(t, mpitest.MPICH) }

// TestFortranFileIOMPICH runs fio.f90 under MPICH: see TestFortranFileIO.
func TestFortranFileIOMPICH(t *testing.T) { testFortranFileIO(t, mpitest.MPICH) }
