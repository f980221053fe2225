package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mpiImpl is an MPI implementation the logger is built for. Debian installs
// both side by side and its alternatives may point plain mpicc and mpirun
// at either, so cpath names each one's launcher explicitly.
type mpiImpl struct {
	key      string   // the --mpi value: openmpi, mpich
	name     string   // as users know it
	lib      string   // the logger built for it, in ../lib
	launcher []string // its mpirun, most specific first
}

var (
	openMPI = &mpiImpl{key: "openmpi", name: "Open MPI", lib: "libcpathlog.so",
		launcher: []string{"mpirun.openmpi", "mpirun"}}
	mpich = &mpiImpl{key: "mpich", name: "MPICH", lib: "libcpathlog-mpich.so",
		launcher: []string{"mpirun.mpich", "mpiexec.hydra", "mpirun"}}
	mpiImpls = []*mpiImpl{openMPI, mpich}
)

// mpiByKey returns the implementation named key (openmpi, mpich).
func mpiByKey(key string) (*mpiImpl, error) {
	for _, m := range mpiImpls {
		if m.key == key {
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown MPI %q (want openmpi or mpich)", key)
}

// libMPI says which MPI a shared library name (a DT_NEEDED entry) belongs
// to, nil for none. MPICH's ABI is libmpi.so.12 where it is not renamed
// libmpich.so.12 (Debian); Open MPI's is libmpi.so.40.
func libMPI(soname string) *mpiImpl {
	base := filepath.Base(soname)
	switch {
	case strings.HasPrefix(base, "libmpich"), base == "libmpi.so.12" || strings.HasPrefix(base, "libmpi.so.12."):
		return mpich
	case strings.HasPrefix(base, "libmpi.so"), strings.HasPrefix(base, "libmpi_mpifh"), strings.HasPrefix(base, "libopen-pal"):
		return openMPI
	}
	return nil
}

// programMPI says which MPI the program links, and through which library:
// its own DT_NEEDED entries first, then, for a program that links MPI
// through a library of its own (LAMMPS's liblammps), what ldd resolves.
// nil if neither names an MPI (a script, a static binary).
func programMPI(path string) (*mpiImpl, string) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, ""
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	for _, l := range libs {
		if m := libMPI(l); m != nil {
			return m, l
		}
	}
	if len(libs) == 0 {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ldd", path).Output()
	if err != nil {
		return nil, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if m := libMPI(name); m != nil {
			return m, name
		}
	}
	return nil, ""
}

// launcherMPI says whose mpirun the executable at path is: by the name it
// resolves to (Debian's mpirun.openmpi is orterun, mpirun.mpich is
// mpiexec.hydra), else by what its --version prints. nil if unknown.
func launcherMPI(path string) *mpiImpl {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, p := range []string{path, real} {
		b := filepath.Base(p)
		switch {
		case strings.Contains(b, "openmpi"), strings.Contains(b, "orterun"), strings.Contains(b, "prterun"):
			return openMPI
		case strings.Contains(b, "mpich"), strings.Contains(b, "hydra"):
			return mpich
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	switch s := string(out); {
	case strings.Contains(s, "Open MPI"), strings.Contains(s, "OpenRTE"):
		return openMPI
	case strings.Contains(s, "HYDRA"), strings.Contains(s, "MPICH"):
		return mpich
	}
	return nil
}

// findLauncher is the first of m's launchers on PATH.
func findLauncher(m *mpiImpl) (string, error) {
	for _, name := range m.launcher {
		if p, err := exec.LookPath(name); err == nil {
			if name != "mpirun" || launcherMPI(p) == m {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s's mpirun not found (tried %s): install it (make deps) or use --mpirun",
		m.name, strings.Join(m.launcher, ", "))
}

// chooseMPI picks the MPI of a recording and its launcher: the one the
// program links, else the one of the mpirun given, else Open MPI. A
// program and an mpirun of different MPIs cannot run together: that is an
// error, not a run that hangs or crashes.
func chooseMPI(prog, mpirunFlag string) (*mpiImpl, string, error) {
	progPath, err := exec.LookPath(prog)
	if err != nil {
		progPath = prog
	}
	pm, plib := programMPI(progPath)
	if mpirunFlag == "" {
		m := pm
		if m == nil {
			m = openMPI
		}
		l, err := findLauncher(m)
		return m, l, err
	}
	l, err := exec.LookPath(mpirunFlag)
	if err != nil {
		return nil, "", fmt.Errorf("%s not found: install MPI (make deps) or fix --mpirun", mpirunFlag)
	}
	lm := launcherMPI(l)
	switch {
	case pm != nil && lm != nil && pm != lm:
		return nil, "", fmt.Errorf("%s links %s (%s) but %s is %s's mpirun: use --mpirun %s",
			prog, pm.name, plib, mpirunFlag, lm.name, pm.launcher[0])
	case pm != nil:
		return pm, l, nil
	case lm != nil:
		return lm, l, nil
	}
	return openMPI, l, nil
}
