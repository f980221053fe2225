//go:build mpi

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
)

// buildMPICpath returns cpath built with the mpi tag from the current
// source.
func buildMPICpath(t *testing.T) string {
	t.Helper()
	mpitest.OpenMPI.Mpirun(t)
	return mpitest.CPathBin(t)
}

// badInputJobTimeout bounds one analyzer job: a rank left waiting for
// another that gave up is a hang, and fails the test.
const badInputJobTimeout = 30 * time.Second

// mpirunCpath runs cpath with args as an np-rank MPI job. A job that
// outlives badInputJobTimeout is a hang: mpirun gets SIGTERM (it kills its
// ranks, each of which Open MPI puts in a process group of its own), and
// whatever of mpirun and its ranks is left after WaitDelay gets SIGKILL.
func mpirunCpath(t *testing.T, bin string, np int, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), badInputJobTimeout)
	defer cancel()
	margs := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np), bin}, args...)
	cmd := exec.CommandContext(ctx, mpitest.OpenMPI.Mpirun(t), margs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var left []int // mpirun's descendants when the job timed out
	cmd.Cancel = func() error {
		left = descendants(cmd.Process.Pid)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 5 * time.Second
	// Ranks waiting in MPI give the core away (3 ranks, 2 cores).
	cmd.Env = append(os.Environ(), "OMPI_MCA_mpi_yield_when_idle=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("mpirun %s: no exit after %v (hang); killed\nstdout: %.2000s\nstderr: %.2000s",
			strings.Join(margs, " "), badInputJobTimeout, out.String(), errs.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("mpirun %s: %v", strings.Join(margs, " "), err)
	}
	return code, out.String(), errs.String(), took
}

// descendants returns the processes below pid, from /proc.
func descendants(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	kids := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			kids[pp] = append(kids[pp], p)
		}
	}
	var out []int
	for todo := kids[pid]; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], kids[p]...)
		out = append(out, p)
	}
	return out
}

// TestAnalyzeBadInputMPI: every bad input of SPEC §5 (TestAnalyzeBadInput's
// table) given to the analyzer running as a 3-rank MPI job gives the single
// process's one line naming the file and the problem, a non-zero exit, no
// stack trace and no hang of the ranks that did not read the logs; the
// logs of a crashed rank are analysed with a note.
func TestAnalyzeBadInputMPI(t *testing.T) {
	const np = 3
	bin := buildMPICpath(t)
	tests := badInputs
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arg := tc.logdir(t)
			// The single process's verdict on the same directory.
			scode, sout, serr := runCLI(t, "analyze", arg)
			if scode != tc.code {
				t.Fatalf("single process: exit %d, want %d; stderr %q", scode, tc.code, serr)
			}

			// dag runs on rank 0 alone; split reads the logs on every rank
			// (each its share) and builds the graph together.
			for _, algo := range []string{"dag", "split"} {
				checkBadInputJob(t, bin, np, tc, arg, algo, serr, sout)
			}
		})
	}
}

// checkBadInputJob runs one bad input through an np-rank analyzer job with
// --algo=algo and checks its verdict against the single process's.
func checkBadInputJob(t *testing.T, bin string, np int, tc badInput, arg, algo, serr, sout string) {
	t.Helper()
	code, out, errs, took := mpirunCpath(t, bin, np, "analyze", "--algo="+algo, arg)
	t.Logf("mpirun -np %d cpath analyze --algo=%s: exit %d after %v", np, algo, code, took.Round(time.Millisecond))
	for _, bad := range []string{"goroutine", "panic"} {
		if strings.Contains(errs, bad) || strings.Contains(out, bad) {
			t.Fatalf("%q in the job's output:\nstderr: %s\nstdout: %.2000s", bad, errs, out)
		}
	}
	lines := cpathLines(errs)
	if tc.code != 0 {
		if code == 0 {
			t.Fatalf("exit 0, want non-zero; stderr %q", errs)
		}
		if len(lines) != 1 {
			t.Fatalf("%d lines start with \"cpath: \", want exactly one:\n%s", len(lines), errs)
		}
		if !regexp.MustCompile(tc.err).MatchString(lines[0]) {
			t.Errorf("%q does not match %q", lines[0], tc.err)
		}
		if want := strings.TrimSuffix(serr, "\n"); lines[0] != want {
			t.Errorf("the MPI job says %q, the single process %q", lines[0], want)
		}
		if strings.TrimSpace(out) != "" {
			t.Errorf("stdout not empty on error: %.2000s", out)
		}
		return
	}
	if code != 0 {
		t.Fatalf("exit %d, want 0:\nstderr: %s", code, errs)
	}
	if len(lines) != 0 {
		t.Errorf("stderr has cpath lines on success: %q", lines)
	}
	// The expected report names dag: the job's names its algorithm.
	wantOut := strings.ReplaceAll(tc.out, `(dag\)`, `(`+regexp.QuoteMeta(algo))
	if !regexp.MustCompile(wantOut).MatchString(out) {
		t.Fatalf("stdout does not match %q:\n%s", wantOut, out)
	}
	if !regexp.MustCompile(tc.out).MatchString(sout) {
		t.Fatalf("single process stdout does not match %q:\n%s", tc.out, sout)
	}
	if n := strings.Count(out, "critical path ("+algo); n != 1 {
		t.Errorf("the job printed %d reports, want one (rank 0's)", n)
	}
}

// TestAnalyzeOutputErrorsMPI: an output that cannot be written (the table
// of TestAnalyzeOutputErrors) gives the single process's one line and a
// non-zero exit from a 3-rank analyzer job too, with no rank left hanging.
func TestAnalyzeOutputErrorsMPI(t *testing.T) {
	const np = 3
	bin := buildMPICpath(t)
	logs := t.TempDir()
	writeRun(t, logs, 4)
	for _, tc := range outputErrors {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"analyze", "--algo=split"}, tc.args(outputDir(t))...), logs)
			code, out, errs, took := mpirunCpath(t, bin, np, args...)
			t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
			lines := cpathLines(errs)
			if code == 0 || len(lines) != 1 || !regexp.MustCompile(tc.err).MatchString(lines[0]) {
				t.Fatalf("exit %d, cpath lines %q; want non-zero and one line matching %q\nstderr: %s", code, lines, tc.err, errs)
			}
			if strings.Contains(errs, "goroutine") || strings.TrimSpace(out) != "" {
				t.Fatalf("stack trace or stdout on error:\nstderr: %s\nstdout: %.2000s", errs, out)
			}
		})
	}
}
