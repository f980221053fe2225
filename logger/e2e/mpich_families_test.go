//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// The families whose tests ran under Open MPI alone, run under MPICH with
// its logger: the same programs, the same checks. Not the dynamic
// processes (TestSpawn, TestConnectJoin): Debian's MPICH 4.0 (ch4:ucx)
// fails MPI_Comm_spawn and MPI_Open_port with or without the logger
// ("not supported with ucx netmod").

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

// TestP2PMPICH runs p2p.c under MPICH: see TestP2P.
func TestP2PMPICH(t *testing.T) { testP2P(t, mpitest.MPICH) }

// TestCollectivesMPICH runs coll.c under MPICH: see TestCollectives.
func TestCollectivesMPICH(t *testing.T) { testCollectives(t, mpitest.MPICH) }

// TestMoreCallsMPICH runs more.c's "calls" part under MPICH: see
// TestMoreCalls.
func TestMoreCallsMPICH(t *testing.T) { testMoreCalls(t, mpitest.MPICH) }

// TestGrequestOtherThreadMPICH runs lifetime.c's generalized requests
// under MPICH: see TestGrequestOtherThread.
func TestGrequestOtherThreadMPICH(t *testing.T) { testGrequestOtherThread(t, mpitest.MPICH) }

// TestFortranLifetimeMPICH runs flifetime.f90 under MPICH: see
// TestFortranLifetime.
func TestFortranLifetimeMPICH(t *testing.T) { testFortranLifetime(t, mpitest.MPICH) }
