//go:build mpi

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// The families beyond point-to-point and collectives through the Fortran
// binding ("use mpi"; mpif.h reaches the same entry points), under Open
// MPI and MPICH, each with its own logger. Each Fortran program makes the
// same calls as its C twin, so the C test's checks apply unchanged,
// checkCallSites among them: a call recorded at the program's call site
// was recorded by the Fortran wrapper, not by the C one that MPICH's
// Fortran library calls.

// TestFortranMatchedProbes runs fmprobe.f90, mprobe.c's twin: see
// TestMatchedProbes.
func TestFortranMatchedProbes(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testMatchedProbes(t, m, m.FC(t), "fmprobe.f90") })
	}
}

// checkCallSites checks that every call of every rank was recorded at a
// call site in the program (the first module of the log), not inside an
// MPI library.
func checkCallSites(t *testing.T, logs []*trace.Log) {
	t.Helper()
	for rank, l := range logs {
		if len(l.Header.Modules) == 0 {
			t.Errorf("rank %d: no modules in the log", rank)
			continue
		}
		prog := &l.Header.Modules[0]
		bad := 0
		for i := range l.Records {
			r := &l.Records[i]
			if r.Op.IsSub() || prog.Contains(r.CallSite) {
				continue
			}
			if bad++; bad <= 5 {
				where := "no module"
				for k := range l.Header.Modules {
					if m := &l.Header.Modules[k]; m.Contains(r.CallSite) {
						where = filepath.Base(m.Path)
					}
				}
				t.Errorf("rank %d: record %d %v: call site %#x is in %s, not in the program %s", rank, i, r.Op, r.CallSite, where, filepath.Base(prog.Path))
			}
		}
		if bad > 5 {
			t.Errorf("rank %d: %d more calls recorded outside the program", rank, bad-5)
		}
	}
}

// TestFortranRMA runs frma.f90, rma.c's twin: see TestRMA.
func TestFortranRMA(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testRMA(t, m, m.FC(t), "frma.f90") })
	}
}

// TestFortranNeighbor runs fneighbor.f90, neighbor.c's twin: see
// TestNeighbor.
func TestFortranNeighbor(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testNeighbor(t, m, m.FC(t), "fneighbor.f90") })
	}
}

// TestFortranPartitioned runs fpartitioned.f90, partitioned.c's twin,
// under MPICH (Open MPI 4.1 lacks partitioned communication): see
// TestPartitioned.
func TestFortranPartitioned(t *testing.T) {
	// gfortran >= 10 rejects mpif.h's untyped buffers without it.
	testPartitioned(t, mpitest.MPICH.FC(t), "fpartitioned.f90", "-fallow-argument-mismatch")
}
