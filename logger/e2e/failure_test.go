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
	"syscall"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// SPEC §2, "Must not break the program": a job that fails (MPI_Abort, a
// fatal signal, exit without MPI_Finalize) must end exactly as it would
// without the logger, and the logger must leave a readable log for every
// rank, marked as incomplete, holding what was logged before the failure.

const (
	failNP       = 3
	failBarriers = 50 // MPI_Barriers every rank of failmodes.c makes first
	// failTimeout bounds one mpirun of failmodes: a job that does not end
	// (a rank the logger keeps alive, a handler that deadlocks) fails the
	// test rather than the package's budget.
	failTimeout = 60 * time.Second
	// failOKOut is rank 0's output from a failmodes run in mode ok.
	failOKOut = "failmodes: 50 barriers done on 3 ranks\nfailmodes: ok\n"
	// failWarn starts the line the logger prints when CPATH_DIR is unusable.
	failWarn = "cpath logger: cannot write logs to"
)

// failResult is one mpirun of failmodes.
type failResult struct {
	code           int // mpirun's exit status; 128+n if mpirun itself died of signal n
	stdout, stderr string
	elapsed        time.Duration
}

// runFailJob runs exe MODE under mpirun with failNP ranks, with the logger
// preloaded and writing to logDir when lib is set. Unlike mpitest.Run it
// accepts any exit status (returned to the caller), keeps stdout and stderr
// apart, and kills the whole process group of a job that hangs.
func runFailJob(t *testing.T, lib, logDir, exe, mode string) failResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failTimeout)
	defer cancel()
	args := []string{"--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(failNP)}
	if lib != "" {
		args = append(args, "-x", "LD_PRELOAD="+lib, "-x", "CPATH_DIR="+logDir)
	}
	args = append(args, exe, mode)
	cmd := exec.CommandContext(ctx, mpitest.OpenMPI.Mpirun(t), args...)
	cmd.Dir = filepath.Dir(exe)
	// Own process group, so that a hang kills mpirun and its ranks alike.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	res := failResult{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	what := "without the logger"
	if lib != "" {
		what = "with the logger"
	}
	if ctx.Err() != nil {
		t.Fatalf("mode %s %s: mpirun %s: no exit after %v (hang)\nstdout:\n%s\nstderr:\n%s",
			mode, what, strings.Join(args, " "), failTimeout, res.stdout, res.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.code = 128 + int(ws.Signal())
		}
	default:
		t.Fatalf("mode %s %s: mpirun %s: %v", mode, what, strings.Join(args, " "), err)
	}
	t.Logf("mode %s %s: mpirun exit status %d after %v", mode, what, res.code, res.elapsed.Round(time.Millisecond))
	return res
}

// failEnd is how one rank's log may end: any of the statuses, and, for
// EndAborted and EndSignal, the trailer's Info.
type failEnd struct {
	status []trace.EndStatus
	info   int32
}

func (e failEnd) String() string {
	var s []string
	for _, st := range e.status {
		switch st {
		case trace.EndAborted, trace.EndSignal:
			s = append(s, fmt.Sprintf("%v (info %d)", st, e.info))
		default:
			s = append(s, st.String())
		}
	}
	return strings.Join(s, " or ")
}

func (e failEnd) allows(tr trace.Trailer) bool {
	for _, st := range e.status {
		if tr.Status != st {
			continue
		}
		if st == trace.EndAborted || st == trace.EndSignal {
			return tr.Info == e.info
		}
		return true
	}
	return false
}

var (
	endFinalized = failEnd{status: []trace.EndStatus{trace.EndFinalized}}
	endAbort3    = failEnd{status: []trace.EndStatus{trace.EndAborted}, info: 3}
	endSIGTERM   = failEnd{status: []trace.EndStatus{trace.EndSignal}, info: int32(syscall.SIGTERM)}
	// A rank mpirun ends while it waits for the dead rank 1: mpirun's
	// cleanup sends SIGTERM (caught: EndSignal 15), then SIGKILL to a rank
	// still alive (no trailer).
	endCleanup = failEnd{status: []trace.EndStatus{trace.EndSignal, trace.EndMissing}, info: int32(syscall.SIGTERM)}
	// Every rank exits without MPI_Finalize; the first to go makes mpirun
	// end the others, which may get its SIGTERM before their own exit.
	endExitOrCleanup = failEnd{status: []trace.EndStatus{trace.EndNoFinalize, trace.EndSignal, trace.EndMissing}, info: int32(syscall.SIGTERM)}
	endSIGKILL       = failEnd{status: []trace.EndStatus{trace.EndMissing}} // nothing runs after SIGKILL
)

// TestFailureModes runs failmodes.c in each mode without and with the
// logger: the exit status must be the same, and every rank's log readable,
// holding the records written before the failure and marked as not
// complete.
func TestFailureModes(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	cases := []struct {
		mode string
		fail bool                   // the job must exit non-zero
		end  func(rank int) failEnd // how rank's log must end
	}{
		{"ok", false, func(int) failEnd { return endFinalized }},
		{"abort", true, func(r int) failEnd {
			if r == 1 {
				return endAbort3
			}
			return endCleanup
		}},
		{"term", true, func(r int) failEnd {
			if r == 1 {
				return endSIGTERM
			}
			return endCleanup
		}},
		{"kill", true, func(r int) failEnd {
			if r == 1 {
				return endSIGKILL
			}
			return endCleanup
		}},
		{"exit", true, func(int) failEnd { return endExitOrCleanup }},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			plain := runFailJob(t, "", "", exe, tc.mode)
			logDir := filepath.Join(t.TempDir(), "logs")
			logged := runFailJob(t, lib, logDir, exe, tc.mode)

			if logged.code != plain.code {
				t.Errorf("mode %s: mpirun exit status %d with the logger, %d without\nstderr with the logger:\n%s\nstderr without:\n%s",
					tc.mode, logged.code, plain.code, logged.stderr, plain.stderr)
			}
			if tc.fail && plain.code == 0 {
				t.Errorf("mode %s: mpirun exit status 0 without the logger, want non-zero (the job failed)", tc.mode)
			}
			if !tc.fail && plain.code != 0 {
				t.Errorf("mode %s: mpirun exit status %d without the logger, want 0\nstderr:\n%s", tc.mode, plain.code, plain.stderr)
			}
			if tc.mode == "ok" {
				for _, r := range []struct {
					what string
					res  failResult
				}{{"without the logger", plain}, {"with the logger", logged}} {
					if r.res.stdout != failOKOut {
						t.Errorf("mode ok %s: stdout %q, want %q", r.what, r.res.stdout, failOKOut)
					}
				}
			}
			if strings.Contains(logged.stderr, "cpath logger:") {
				t.Errorf("mode %s: the logger complained:\n%s", tc.mode, logged.stderr)
			}

			for rank := 0; rank < failNP; rank++ {
				checkFailLog(t, tc.mode, rank, logDir, tc.end(rank))
			}
			if ents, err := os.ReadDir(logDir); err == nil && len(ents) != failNP {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("mode %s: log directory holds %v, want one file per rank", tc.mode, names)
			}
		})
	}
}

// checkFailLog reads rank's log of a failmodes run in mode and holds it to
// want.
func checkFailLog(t *testing.T, mode string, rank int, logDir string, want failEnd) {
	t.Helper()
	path := filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", rank))
	l, err := mpitest.ReadLog(t, path)
	if err != nil {
		t.Errorf("mode %s, rank %d: expected a readable log, got %v", mode, rank, err)
		return
	}
	tr := l.Trailer
	var inits, barriers int
	for _, r := range l.Records {
		switch r.Op {
		case trace.OpInit:
			inits++
		case trace.OpBarrier:
			barriers++
		}
	}
	t.Logf("mode %s, rank %d: trailer %v info %d (records %d, dropped %d); %d records read: %d MPI_Init, %d MPI_Barrier; damage %v",
		mode, rank, tr.Status, tr.Info, tr.Records, tr.Dropped, len(l.Records), inits, barriers, l.Damage)

	if l.Header.Rank != rank || l.Header.Size != failNP {
		t.Errorf("mode %s, rank %d: header says rank %d of %d, want %d of %d", mode, rank, l.Header.Rank, l.Header.Size, rank, failNP)
	}
	if !want.allows(tr) {
		t.Errorf("mode %s, rank %d: expected trailer %v, got %v (info %d)", mode, rank, want, tr.Status, tr.Info)
	}
	wantComplete := mode == "ok" // only a finalized, undamaged log is complete
	if l.Complete() != wantComplete {
		t.Errorf("mode %s, rank %d: expected Complete() %v, got %v (trailer %v, damage %v)", mode, rank, wantComplete, l.Complete(), tr.Status, l.Damage)
	}
	if mode != "ok" && tr.Status == trace.EndFinalized {
		t.Errorf("mode %s, rank %d: log marked finalized, but the rank never called MPI_Finalize", mode, rank)
	}

	if tr.Status == trace.EndMissing {
		// Killed: whatever was flushed before, possibly nothing, but no
		// more than the rank made.
		if inits > 1 || barriers > failBarriers {
			t.Errorf("mode %s, rank %d: log without trailer holds %d MPI_Init and %d MPI_Barrier, want at most 1 and %d",
				mode, rank, inits, barriers, failBarriers)
		}
		if len(l.Records) > 0 && l.Records[0].Op != trace.OpInit {
			t.Errorf("mode %s, rank %d: first record %v, want MPI_Init", mode, rank, l.Records[0].Op)
		}
		return
	}
	// A trailer: the log holds everything up to the failure.
	if l.Damage != nil {
		t.Errorf("mode %s, rank %d: log with a %v trailer is damaged: %v", mode, rank, tr.Status, l.Damage)
	}
	if inits != 1 {
		t.Errorf("mode %s, rank %d: expected 1 MPI_Init record, got %d", mode, rank, inits)
	}
	least := failBarriers
	if mode == "exit" && tr.Status == trace.EndSignal {
		// Ended by mpirun's cleanup while still inside the last barrier,
		// which the others had left before exiting: a call is recorded when
		// it returns.
		least--
	}
	if barriers < least {
		t.Errorf("mode %s, rank %d: expected at least %d MPI_Barrier records, got %d", mode, rank, least, barriers)
	}
	if tr.Records != uint64(len(l.Records)) {
		t.Errorf("mode %s, rank %d: trailer counts %d records, the log holds %d", mode, rank, tr.Records, len(l.Records))
	}
	if tr.Dropped != 0 {
		t.Errorf("mode %s, rank %d: trailer reports %d dropped records, want 0", mode, rank, tr.Dropped)
	}
	// Every end of the log writes the counts of the calls not recorded:
	// the rank's one MPI_Comm_set_info, before the barriers.
	if u := l.Header.Unwrapped; len(u) != 1 || u[0].Name != "MPI_Comm_set_info" || u[0].Calls != 1 {
		t.Errorf("mode %s, rank %d: unwrapped calls %+v, want MPI_Comm_set_info once", mode, rank, u)
	}
	if mode == "abort" && rank == 1 {
		last := l.Records[len(l.Records)-1]
		if last.Op != trace.OpAbort || last.Tag != 3 {
			t.Errorf("mode abort, rank 1: last record %v (tag %d), want MPI_Abort with error code 3", last.Op, last.Tag)
		}
	}
}

// TestFailureUnwritableDir: when CPATH_DIR cannot be created (here a path
// under a regular file) the program runs on unlogged, exits 0 with its
// normal output, and the logger says so once for the job, not per rank.
func TestFailureUnwritableDir(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(file, "logs")

	plain := runFailJob(t, "", "", exe, "ok")
	res := runFailJob(t, lib, logDir, exe, "ok")
	if res.code != 0 || plain.code != 0 {
		t.Errorf("unwritable CPATH_DIR: mpirun exit status %d with the logger, %d without, want 0\nstderr:\n%s", res.code, plain.code, res.stderr)
	}
	if res.stdout != plain.stdout || res.stdout != failOKOut {
		t.Errorf("unwritable CPATH_DIR: stdout %q with the logger, %q without, want %q", res.stdout, plain.stdout, failOKOut)
	}
	var warns []string
	for _, line := range strings.Split(res.stderr, "\n") {
		if strings.HasPrefix(line, failWarn) {
			warns = append(warns, line)
		}
	}
	if len(warns) != 1 {
		t.Errorf("unwritable CPATH_DIR: expected exactly one line starting %q on stderr, got %d\nstderr:\n%s", failWarn, len(warns), res.stderr)
	} else {
		t.Logf("logger: %s", warns[0])
		if !strings.Contains(warns[0], logDir) {
			t.Errorf("unwritable CPATH_DIR: the warning does not name %s: %s", logDir, warns[0])
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "not a directory\n" {
		t.Errorf("unwritable CPATH_DIR: %s changed: %q, %v", file, b, err)
	}
}
