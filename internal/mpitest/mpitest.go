// Package mpitest is the shared harness of cpath's MPI tests: it finds the
// repository, builds the logger library lib/libcpathlog.so once per test
// binary, compiles MPI test programs, runs them under mpirun with the logger
// preloaded, and reads the per-rank logs back.
//
// The package itself needs no MPI to compile (it only runs the MPI tools),
// so it carries no build tag; the tests that use it carry the mpi tag.
// Missing tools skip the test, naming the Debian package to install. The
// package functions use Open MPI, named explicitly (mpicc.openmpi,
// mpirun.openmpi): with MPICH installed too, Debian's alternatives may
// point plain mpicc and mpirun at either; MPICH's are the methods of MPICH.
package mpitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpath/cpath/trace"
)

// RunTimeout bounds one mpirun: a hang in the logger must fail the test,
// not the whole package's 10-minute budget.
const RunTimeout = 90 * time.Second

// modulePath is what go.mod must declare for a directory to be the root.
const modulePath = "module github.com/cpath/cpath"

// RepoRoot returns the directory holding the cpath go.mod, found by walking
// up from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte(modulePath)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the cpath repository root (go.mod) above the test directory")
		}
		dir = parent
	}
}

// NeedTool returns the path of tool, skipping the test when it is missing
// and naming the Debian package that provides it, so that a machine without
// Open MPI reports skips rather than silent passes.
func NeedTool(t testing.TB, tool, debianPkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not found in PATH: install the Debian package %s to run this test", tool, debianPkg)
	}
	return p
}

// LoggerLib returns the absolute path of the Open MPI logger,
// lib/libcpathlog.so, building it once per test binary with the
// repository's make rule (or go build when there is no Makefile) so that
// the tests always run the current logger source. $CPATH_LOGGER_LIB names a
// prebuilt library to use instead. It skips the test when Open MPI's mpicc
// or mpirun is missing.
func LoggerLib(t testing.TB) string {
	t.Helper()
	return OpenMPI.LoggerLib(t)
}

// LoggerLib returns the absolute path of the logger built for m, built
// once per test binary (see the package function LoggerLib); it skips the
// test when m's mpicc or mpirun is missing.
func (m *Impl) LoggerLib(t testing.TB) string {
	t.Helper()
	m.NeedTools(t)
	m.libOnce.Do(func() { m.libPath, m.libErr = m.buildLoggerLib() })
	if m.libErr != nil {
		t.Fatalf("logger library for %s: %v", m.Name, m.libErr)
	}
	return m.libPath
}

func (m *Impl) buildLoggerLib() (string, error) {
	if p := os.Getenv(m.libEnv); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		_, err = os.Stat(abs)
		return abs, err
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	lib := filepath.Join(root, "lib", m.Logger)
	var cmd *exec.Cmd
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err == nil {
		cmd = exec.Command("make", "lib/"+m.Logger)
	} else {
		cmd = exec.Command("go", "build", "-tags", m.tags, "-buildmode=c-shared", "-o", lib, "./logger")
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the logger (%s): %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	_, err = os.Stat(lib)
	return lib, err
}

var (
	binOnce sync.Once
	binPath string
	binDir  string // made for binPath: Main removes it
	binErr  error
)

// Main runs a test binary's tests, for its TestMain, and removes the
// cpath command CPathBin built for them (19 MB a run, left in the
// temporary directory otherwise).
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// CPathBin returns the cpath command built with the mpi tag, once per test
// binary, from the current source ($CPATH_BIN names one to use instead).
// A package that calls it has a TestMain that calls Main.
func CPathBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("CPATH_BIN"); p != "" {
			binPath, binErr = filepath.Abs(p)
			return
		}
		root, err := repoRoot()
		if err != nil {
			binErr = err
			return
		}
		dir, err := os.MkdirTemp("", "cpath-bin")
		if err != nil {
			binErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "cpath")
		cmd := exec.Command("go", "build", "-tags", "mpi", "-o", binPath, "./cmd/cpath")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build -tags mpi ./cmd/cpath: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Compile builds one test program into dir with the MPI compiler wrapper
// and returns the executable's path, dir/ followed by the source's base
// name without its extension. The generic names "mpicc" and "mpif90" mean
// Open MPI's (OpenMPI.CC, OpenMPI.FC): with MPICH installed too, Debian's
// alternatives may point them at either. A relative src is taken from the
// test package's testdata/ directory; an absolute one is used as is. The
// program is compiled with -g -O1, then flags, so a later -O in flags
// overrides the optimisation level.
func Compile(t testing.TB, dir, compiler, src string, flags ...string) string {
	t.Helper()
	m := OpenMPI
	switch compiler {
	case "mpicc":
		compiler = m.CC(t)
	case "mpif90", "mpifort":
		compiler = m.FC(t)
	default:
		pkg := "libopenmpi-dev or libmpich-dev"
		if strings.Contains(compiler, "f90") || strings.Contains(compiler, "fort") {
			pkg += ", and gfortran"
		}
		NeedTool(t, compiler, pkg)
	}
	abs := src
	if !filepath.IsAbs(src) {
		var err error
		abs, err = filepath.Abs(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Base(abs)
	exe := filepath.Join(dir, strings.TrimSuffix(base, filepath.Ext(base)))
	// -g -O1: realistic code, and call sites that symbolize.
	args := append([]string{"-g", "-O1", "-o", exe, abs}, flags...)
	cmd := exec.Command(compiler, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
	}
	return exe
}

// Run runs prog with args under Open MPI's mpirun with np ranks in
// workDir. With lib set, the logger is preloaded and writes into logDir. It
// fails the test unless the job exits 0 within RunTimeout, and returns the
// job's combined output.
func Run(t testing.TB, np int, lib, logDir, workDir, prog string, args ...string) string {
	t.Helper()
	return OpenMPI.RunEnv(t, np, nil, lib, logDir, workDir, prog, args...)
}

// RunEnv is Run with extra environment for the ranks: each VAR=value of env
// is passed to mpirun as -x VAR=value.
func RunEnv(t testing.TB, np int, env []string, lib, logDir, workDir, prog string, args ...string) string {
	t.Helper()
	return OpenMPI.RunEnv(t, np, env, lib, logDir, workDir, prog, args...)
}

// Run is the package's Run under m's mpirun.
func (m *Impl) Run(t testing.TB, np int, lib, logDir, workDir, prog string, args ...string) string {
	t.Helper()
	return m.RunEnv(t, np, nil, lib, logDir, workDir, prog, args...)
}

// RunEnv is the package's RunEnv under m's mpirun.
func (m *Impl) RunEnv(t testing.TB, np int, env []string, lib, logDir, workDir, prog string, args ...string) string {
	t.Helper()
	mpirun := m.Mpirun(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	if lib != "" {
		env = append([]string{"LD_PRELOAD=" + lib, "CPATH_DIR=" + logDir}, env...)
	}
	mpiArgs := append(m.JobArgs(np, env), prog)
	mpiArgs = append(mpiArgs, args...)
	cmd := exec.CommandContext(ctx, mpirun, mpiArgs...)
	cmd.Dir = workDir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: no exit after %v (a hang, or a machine too busy for it: load average %s)\n%s", filepath.Base(mpirun), strings.Join(mpiArgs, " "), RunTimeout, LoadAverage(), out.String())
	}
	if err != nil {
		var ee *exec.ExitError
		code := -1
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		t.Fatalf("%s %s: exit code %d (%v), want 0\n%s", filepath.Base(mpirun), strings.Join(mpiArgs, " "), code, err, out.String())
	}
	return out.String()
}

// ReadLogs reads rank-%06d.cplog for every rank of an np-rank run. It
// reports an error unless the directory holds exactly those files, and
// fails the test if any of them cannot be read.
func ReadLogs(t testing.TB, dir string, np int) []*trace.Log {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("log directory: %v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != np {
		t.Errorf("log directory %s holds %d files %v, want %d (one per rank)", dir, len(names), names, np)
	}
	logs := make([]*trace.Log, np)
	for r := 0; r < np; r++ {
		p := filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r))
		l, err := ReadLog(t, p)
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		logs[r] = l
	}
	return logs
}

// ReadLog is trace.ReadFile, and then, for a log it reads, checkTailCalls.
func ReadLog(t testing.TB, path string) (*trace.Log, error) {
	t.Helper()
	l, err := trace.ReadFile(path)
	if err == nil {
		checkTailCalls(t, path, l)
	}
	return l, err
}

// checkTailCalls fails the test if the count of calls the analyzer would
// take from the log's end (trace.TailCalls) is not the calls the log
// holds: every recorded run checks the logger's count, however the rank
// ended.
func checkTailCalls(t testing.TB, path string, l *trace.Log) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	n, ok := trace.TailCalls(f, st.Size())
	if !ok {
		return // counted by reading
	}
	calls := 0
	for i := range l.Records {
		if !l.Records[i].Op.IsSub() {
			calls++
		}
	}
	if n != uint64(calls) {
		t.Errorf("%s (%s): the trailer counts %d calls, the log holds %d", path, l.Trailer.Ending(), n, calls)
	}
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, for
// messages about runs the machine's load may have changed.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// Lenient says whether design checks that the machine did not run as
// designed skip rather than fail: only with CPATH_DESIGN_LENIENT=1, for a
// machine known to be busy. make test and CI run them strict: a design
// check that cannot run fails, saying which and why.
func Lenient() bool { return os.Getenv("CPATH_DESIGN_LENIENT") == "1" }

// DesignMissed ends a design check whose program the machine did not run
// as designed (after the check's retries): it fails the test, saying
// which check and why; under Lenient it skips it instead, and counts it
// in $CPATH_SKIPPED_DESIGN_CHECKS (a file: one line per skip, its name
// and why) when that is set, so that make test can say how many were
// skipped, and why.
func DesignMissed(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if !Lenient() {
		t.Fatalf("design check failed: %s (CPATH_DESIGN_LENIENT=1 skips it)", why)
	}
	countSkipped(t, why)
	t.Skip(why)
}

// LeaveOutCheck is DesignMissed for one check of a test: it fails the
// test but lets it go on with the rest; under Lenient it says why in the
// output and counts it among the skipped design checks.
func LeaveOutCheck(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if !Lenient() {
		t.Errorf("design check failed: %s (CPATH_DESIGN_LENIENT=1 leaves it out)", why)
		return
	}
	countSkipped(t, "check left out: "+why)
	t.Log("check left out: " + why)
}

// countSkipped adds a line to $CPATH_SKIPPED_DESIGN_CHECKS: the test's
// name and why, on one line, so that a CI log says what the load changed.
func countSkipped(t testing.TB, why string) {
	if f := os.Getenv("CPATH_SKIPPED_DESIGN_CHECKS"); f != "" {
		if fd, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			why = strings.Join(strings.Fields(why), " ")
			if r := []rune(why); len(r) > 300 {
				why = string(r[:300]) + "…"
			}
			fmt.Fprintf(fd, "%s: %s\n", t.Name(), why)
			fd.Close()
		}
	}
}
