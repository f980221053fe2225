//go:build mpi

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestDesignedMPICH runs designed programs built against MPICH and
// recorded by MPICH's logger (lib/libcpathlog-mpich.so, mpirun.mpich), and
// holds the report to the logs and to the design as
// TestDesignedCriticalPath does under Open MPI: a slow rank before an
// Allreduce, a late sender, a late rank at a Barrier. The analyzer stays an
// Open MPI program (also as a 2-rank job): the logs are the same format
// whichever MPI wrote them.
func TestDesignedMPICH(t *testing.T) {
	const ms = time.Millisecond
	m := mpitest.MPICH
	lib := m.LoggerLib(t)
	exeDir := t.TempDir()
	for _, d := range []design{
		slowAllreduce(2, 5, 10*ms, 20*ms, 1),
		lateSenderDesign(3, 4, 10*ms),
		lateBarrier(2, 6, 5*ms, 20*ms),
	} {
		t.Run(d.name, func(t *testing.T) {
			exe := mpitest.Compile(t, exeDir, m.CC(t), d.src, "-Wall")
			rn := runDesignedOn(t, m, lib, exe, &d)
			l, err := trace.ReadFile(filepath.Join(rn.logDir, "rank-000000.cplog"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(l.Header.MPILibrary, "MPICH") {
				t.Fatalf("the log says MPI library %q, want MPICH", l.Header.MPILibrary)
			}
			bin := cpathBin(t)
			for _, a := range []analyzer{{"dag", 0}, {"delta", 2}} {
				t.Run(a.String(), func(t *testing.T) {
					rep := analyze(t, bin, rn.logDir, a)
					checkReport(t, &d, rn, rep, a.algo)
					t.Run("design", func(t *testing.T) {
						if !rn.designed {
							designMissed(t, "the machine did not run %s as designed under MPICH (load average %s), so the report was held to the logs only:\n  %s",
								d.src, mpitest.LoadAverage(), strings.Join(rn.gate, "\n  "))
						}
						checkDesign(t, &d, rn, rep)
					})
				})
			}
		})
	}
}
