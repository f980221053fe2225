package mpitest

import (
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Impl is an MPI implementation the tests run programs under, with its
// tools named explicitly: Debian installs Open MPI and MPICH side by side
// and its alternatives point the plain names (mpicc, mpirun) at either.
type Impl struct {
	Name   string // "Open MPI", "MPICH"
	Key    string // "openmpi", "mpich": cpath record's names
	Logger string // the logger built for it, in lib/
	cc     []string
	fc     []string
	run    []string
	pkgs   [2]string // Debian packages: the compilers, mpirun
	tags   string    // go build tags of its logger
	libEnv string    // names a prebuilt logger to use instead

	libOnce sync.Once
	libPath string
	libErr  error
}

var (
	// OpenMPI is the MPI the analyzer itself runs on. The plain names come
	// last, for machines without Debian's suffixed ones.
	OpenMPI = &Impl{Name: "Open MPI", Key: "openmpi", Logger: "libcpathlog.so",
		cc: []string{"mpicc.openmpi", "mpicc"}, fc: []string{"mpif90.openmpi", "mpif90"},
		run: []string{"mpirun.openmpi", "mpirun"}, pkgs: [2]string{"libopenmpi-dev", "openmpi-bin"},
		tags: "mpi", libEnv: "CPATH_LOGGER_LIB"}
	// MPICH (Debian's mpich, MPI 4.0).
	MPICH = &Impl{Name: "MPICH", Key: "mpich", Logger: "libcpathlog-mpich.so",
		cc: []string{"mpicc.mpich"}, fc: []string{"mpif90.mpich"},
		run: []string{"mpirun.mpich"}, pkgs: [2]string{"libmpich-dev", "mpich"},
		tags: "mpi,mpich", libEnv: "CPATH_LOGGER_LIB_MPICH"}
	// Impls are both, Open MPI first.
	Impls = []*Impl{OpenMPI, MPICH}
)

func (m *Impl) tool(t testing.TB, names []string, pkg string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skipf("%s not found in PATH: install the Debian package %s to run this test", names[0], pkg)
	return ""
}

// CC is m's C compiler wrapper; it skips the test when there is none.
func (m *Impl) CC(t testing.TB) string { t.Helper(); return m.tool(t, m.cc, m.pkgs[0]) }

// FC is m's Fortran compiler wrapper; it skips the test when there is none.
func (m *Impl) FC(t testing.TB) string {
	t.Helper()
	return m.tool(t, m.fc, m.pkgs[0]+" and gfortran")
}

// Mpirun is m's launcher; it skips the test when there is none.
func (m *Impl) Mpirun(t testing.TB) string { t.Helper(); return m.tool(t, m.run, m.pkgs[1]) }

// NeedTools skips the test unless m's mpicc and mpirun are installed.
func (m *Impl) NeedTools(t testing.TB) {
	t.Helper()
	m.CC(t)
	m.Mpirun(t)
}

// JobArgs are m's mpirun options for an np-rank job on this machine (as
// root, more ranks than cores) whose ranks get env (VAR=value each).
func (m *Impl) JobArgs(np int, env []string) []string {
	var a []string
	if m == OpenMPI {
		a = []string{"--oversubscribe", "--allow-run-as-root"}
		for _, e := range env {
			a = append(a, "-x", e)
		}
	} else {
		// Hydra runs as root and oversubscribes without being asked.
		for _, e := range env {
			k, v, _ := strings.Cut(e, "=")
			a = append(a, "-genv", k, v)
		}
	}
	return append(a, "-np", strconv.Itoa(np))
}
