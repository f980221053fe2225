//go:build mpi

package e2e

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

// runTimeout bounds one mpirun: a hang in the logger must fail the test,
// not the whole package's 10-minute budget.
const runTimeout = 90 * time.Second

// repoRoot is the directory holding the cpath go.mod, found by walking up
// from the test's working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/cpath/cpath")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the cpath repository root (go.mod) above the test directory")
		}
		dir = parent
	}
}

// needTool skips the test when an MPI tool is missing, naming it, so that a
// machine without Open MPI reports skips rather than silent passes.
func needTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not found in PATH: install the Debian package %s to run this test", tool, pkg)
	}
	return p
}

var (
	libOnce sync.Once
	libPath string
	libErr  error
)

// loggerLib returns the path of libcpathlog.so, building it once per test
// binary with the repository's make rule (or go build when there is no
// Makefile) so that the tests always run the current logger source.
func loggerLib(t *testing.T) string {
	t.Helper()
	needTool(t, "mpicc", "libopenmpi-dev")
	needTool(t, "mpirun", "openmpi-bin")
	libOnce.Do(func() {
		if p := os.Getenv("CPATH_LOGGER_LIB"); p != "" {
			libPath, libErr = filepath.Abs(p)
			if libErr == nil {
				_, libErr = os.Stat(libPath)
			}
			return
		}
		root := repoRoot(t)
		libPath = filepath.Join(root, "lib", "libcpathlog.so")
		var cmd *exec.Cmd
		if _, err := os.Stat(filepath.Join(root, "Makefile")); err == nil {
			cmd = exec.Command("make", "lib/libcpathlog.so")
		} else {
			cmd = exec.Command("go", "build", "-tags", "mpi", "-buildmode=c-shared", "-o", libPath, "./logger")
		}
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			libErr = fmt.Errorf("building the logger (%s): %v\n%s", strings.Join(cmd.Args, " "), err, out)
			return
		}
		_, libErr = os.Stat(libPath)
	})
	if libErr != nil {
		t.Fatalf("logger library: %v", libErr)
	}
	return libPath
}

// compile builds one test program from testdata/ into dir with the MPI
// compiler wrapper (mpicc or mpif90) and returns the executable's path.
func compile(t *testing.T, dir, compiler, src string, flags ...string) string {
	t.Helper()
	pkg := "libopenmpi-dev"
	if compiler == "mpif90" {
		pkg = "libopenmpi-dev and gfortran"
	}
	needTool(t, compiler, pkg)
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	// -g -O1: realistic code, and call sites that symbolize.
	args := append([]string{"-g", "-O1", "-o", exe, abs}, flags...)
	cmd := exec.Command(compiler, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
	}
	return exe
}

// mpiRun runs prog with args under mpirun with np ranks. With lib set, the
// logger is preloaded and writes into logDir. It fails the test unless the
// job exits 0, and returns the job's combined output.
func mpiRun(t *testing.T, np int, lib, logDir, workDir string, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	mpiArgs := []string{"--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(np)}
	if lib != "" {
		mpiArgs = append(mpiArgs, "-x", "LD_PRELOAD="+lib, "-x", "CPATH_DIR="+logDir)
	}
	mpiArgs = append(mpiArgs, prog)
	mpiArgs = append(mpiArgs, args...)
	cmd := exec.CommandContext(ctx, "mpirun", mpiArgs...)
	cmd.Dir = workDir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mpirun %s: no exit after %v (hang)\n%s", strings.Join(mpiArgs, " "), runTimeout, out.String())
	}
	if err != nil {
		var ee *exec.ExitError
		code := -1
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		t.Fatalf("mpirun %s: exit code %d (%v), want 0\n%s", strings.Join(mpiArgs, " "), code, err, out.String())
	}
	return out.String()
}

// readLogs reads rank-%06d.cplog for every rank of an np-rank run and
// fails unless the directory holds exactly those files.
func readLogs(t *testing.T, dir string, np int) []*trace.Log {
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
		l, err := trace.ReadFile(p)
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		logs[r] = l
	}
	return logs
}

// runLogged builds the logger, runs prog under it with np ranks, and
// returns the decoded logs and the job's output.
func runLogged(t *testing.T, np int, prog string, args ...string) ([]*trace.Log, string) {
	t.Helper()
	lib := loggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	out := mpiRun(t, np, lib, logDir, filepath.Dir(prog), prog, args...)
	return readLogs(t, logDir, np), out
}
