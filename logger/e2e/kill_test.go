//go:build mpi

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestSIGKILLKeepsCommittedCalls: records go into a shared mapping of the
// log file as each call returns, so a rank killed by SIGKILL between calls
// loses nothing but a deferred call (TestDeferredAtDeath): rank 1 of
// failmodes kill raises SIGKILL right after its 50 barriers, which are not
// deferred, and its log must hold MPI_Init and all 50 of them (before the
// mapped log, up to 16384 buffered records were lost).
func TestSIGKILLKeepsCommittedCalls(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	logDir := filepath.Join(t.TempDir(), "logs")
	res := runFailJob(t, lib, logDir, exe, "kill")
	if res.code == 0 {
		t.Fatalf("mode kill: exit status 0, want the job to fail")
	}
	l, err := mpitest.ReadLog(t, filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", 1)))
	if err != nil {
		t.Fatalf("rank 1: %v", err)
	}
	var inits, barriers int
	for _, r := range l.Records {
		switch r.Op {
		case trace.OpInit:
			inits++
		case trace.OpBarrier:
			barriers++
		}
	}
	t.Logf("rank 1: trailer %v, %d records: %d MPI_Init, %d MPI_Barrier, damage %v", l.Trailer.Status, len(l.Records), inits, barriers, l.Damage)
	if l.Trailer.Status != trace.EndMissing || l.Damage != nil {
		t.Errorf("rank 1: trailer %v damage %v, want no trailer and an intact log", l.Trailer.Status, l.Damage)
	}
	if inits != 1 || barriers != failBarriers || len(l.Records) != 1+failBarriers {
		t.Errorf("rank 1: %d records (%d MPI_Init, %d MPI_Barrier), want exactly MPI_Init and %d barriers", len(l.Records), inits, barriers, failBarriers)
	}
	// The analyzer takes the run as far as it goes.
	out, err := exec.Command(cpathBin(t), logDir).CombinedOutput()
	t.Logf("cpath %s: %v\n%s", logDir, err, out)
	if err != nil {
		t.Errorf("cpath on the logs of a run with a killed rank: %v", err)
	}
}

// TestPollRunAtDeath: a run of unproductive polls is held open, unwritten,
// until its thread's next call. Rank 1 of failmodes pollMODE polls an
// unmatched receive 1000 times with MPI_Test and then dies: on SIGTERM and
// at exit without MPI_Finalize the logger's way out codes the open run (one
// MPI_Test record standing for 1000 calls) before the trailer; SIGKILL
// loses that record, and only it: MPI_Init, the barriers and the Irecv are
// in the log.
func TestPollRunAtDeath(t *testing.T) {
	const npolls = 1000
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	for _, mode := range []string{"term", "exit", "kill"} {
		t.Run(mode, func(t *testing.T) {
			logDir := filepath.Join(t.TempDir(), "logs")
			res := runFailJob(t, lib, logDir, exe, "poll"+mode)
			if res.code == 0 {
				t.Fatalf("mode poll%s: exit status 0, want the job to fail", mode)
			}
			l, err := mpitest.ReadLog(t, filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", 1)))
			if err != nil {
				t.Fatalf("rank 1: %v", err)
			}
			counts := map[trace.Op]int{}
			var polls uint64
			for i := range l.Records {
				r := &l.Records[i]
				counts[r.Op]++
				if r.Op == trace.OpTest {
					if !r.Unproductive() {
						t.Errorf("rank 1: productive MPI_Test %+v", *r)
					}
					polls += r.Polls()
				}
			}
			t.Logf("rank 1: trailer %v, %d records, %d MPI_Test records for %d calls, damage %v",
				l.Trailer.Status, len(l.Records), counts[trace.OpTest], polls, l.Damage)
			if l.Damage != nil || counts[trace.OpInit] != 1 || counts[trace.OpBarrier] != failBarriers || counts[trace.OpIrecv] != 1 {
				t.Errorf("rank 1: damage %v, %d MPI_Init, %d MPI_Barrier, %d MPI_Irecv; want none, 1, %d, 1",
					l.Damage, counts[trace.OpInit], counts[trace.OpBarrier], counts[trace.OpIrecv], failBarriers)
			}
			switch {
			case l.Trailer.Status == trace.EndMissing:
				// SIGKILL (or mpirun's, in mode exit): the open run is lost.
				if mode != "kill" && mode != "exit" {
					t.Errorf("rank 1: no trailer in mode poll%s", mode)
				}
				if counts[trace.OpTest] != 0 {
					t.Errorf("rank 1: %d MPI_Test records without a trailer, want the open run lost", counts[trace.OpTest])
				}
			case mode == "kill":
				t.Errorf("rank 1: trailer %v after SIGKILL", l.Trailer.Status)
			case mode == "exit" && l.Trailer.Status == trace.EndSignal:
				// mpirun's SIGTERM, sent when ranks 0 and 2 exited, came
				// while rank 1 still polled (a loaded machine): the open
				// run, as far as it went, is coded at the signal.
				if counts[trace.OpTest] != 1 || polls == 0 || polls > npolls {
					t.Errorf("rank 1: %d MPI_Test records for %d calls after mpirun's signal, want 1 for 1..%d", counts[trace.OpTest], polls, npolls)
				}
			default:
				if counts[trace.OpTest] != 1 || polls != npolls {
					t.Errorf("rank 1: %d MPI_Test records for %d calls, want 1 for %d", counts[trace.OpTest], polls, npolls)
				}
			}
		})
	}
}

// TestDeferredAtDeath: without threads, a call that waits for a message
// (here MPI_Recv) is coded with the rank's next recorded call, so a rank
// killed outright loses it as well as the call in flight: at most one call
// that returned. Rank 1 of failmodes recvMODE receives one int from rank 0
// with MPI_Recv right after its 50 barriers and then ends: MPI_Finalize
// and MPI_Abort code the deferred receive before their own record, and on
// SIGTERM and at exit without MPI_Finalize the logger's way out codes it
// before the trailer; SIGKILL loses that record and only it: MPI_Init and
// the barriers are in the log.
func TestDeferredAtDeath(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "failmodes.c")
	for _, mode := range []string{"ok", "abort", "term", "exit", "kill"} {
		t.Run(mode, func(t *testing.T) {
			logDir := filepath.Join(t.TempDir(), "logs")
			res := runFailJob(t, lib, logDir, exe, "recv"+mode)
			if (res.code == 0) != (mode == "ok") {
				t.Fatalf("mode recv%s: exit status %d", mode, res.code)
			}
			l, err := mpitest.ReadLog(t, filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", 1)))
			if err != nil {
				t.Fatalf("rank 1: %v", err)
			}
			counts := map[trace.Op]int{}
			for i := range l.Records {
				r := &l.Records[i]
				counts[r.Op]++
				if r.Op == trace.OpRecv && (r.Peer != 0 || r.Tag != 78 || r.Bytes != 4) {
					t.Errorf("rank 1: MPI_Recv %+v, want peer 0, tag 78, 4 bytes", *r)
				}
				// in call order: the receive after the barriers, before
				// MPI_Finalize's or MPI_Abort's record
				if r.Op == trace.OpRecv && (counts[trace.OpBarrier] != failBarriers || counts[trace.OpFinalize]+counts[trace.OpAbort] != 0) ||
					(r.Op == trace.OpFinalize || r.Op == trace.OpAbort) && counts[trace.OpRecv] != 1 {
					t.Errorf("rank 1: record %d %v out of call order", i, r.Op)
				}
			}
			if n := counts[trace.OpFinalize] + counts[trace.OpAbort]; n != map[string]int{"ok": 1, "abort": 1}[mode] {
				t.Errorf("rank 1: %d MPI_Finalize and %d MPI_Abort records in mode recv%s", counts[trace.OpFinalize], counts[trace.OpAbort], mode)
			}
			t.Logf("rank 1: trailer %v, %d records, %d MPI_Recv, damage %v", l.Trailer.Status, len(l.Records), counts[trace.OpRecv], l.Damage)
			if l.Damage != nil || counts[trace.OpInit] != 1 || counts[trace.OpBarrier] != failBarriers {
				t.Errorf("rank 1: damage %v, %d MPI_Init, %d MPI_Barrier; want none, 1, %d",
					l.Damage, counts[trace.OpInit], counts[trace.OpBarrier], failBarriers)
			}
			if n := len(l.Records) - counts[trace.OpInit] - counts[trace.OpBarrier] - counts[trace.OpRecv] - counts[trace.OpFinalize] - counts[trace.OpAbort]; n != 0 {
				t.Errorf("rank 1: %d records besides MPI_Init, MPI_Barrier, MPI_Recv, MPI_Finalize and MPI_Abort", n)
			}
			switch {
			case l.Trailer.Status == trace.EndMissing:
				// SIGKILL (or mpirun's, in mode exit): the deferred receive
				// is lost, and nothing else.
				if mode != "kill" && mode != "exit" {
					t.Errorf("rank 1: no trailer in mode recv%s", mode)
				}
				if counts[trace.OpRecv] != 0 {
					t.Errorf("rank 1: %d MPI_Recv records without a trailer, want the deferred receive lost", counts[trace.OpRecv])
				}
			case mode == "kill":
				t.Errorf("rank 1: trailer %v after SIGKILL", l.Trailer.Status)
			case mode == "exit" && l.Trailer.Status == trace.EndSignal:
				// mpirun's SIGTERM, sent when ranks 0 and 2 exited, came
				// before rank 1's own exit: the signal path codes the
				// receive if rank 1 had made it (it may still wait in it).
				if counts[trace.OpRecv] > 1 {
					t.Errorf("rank 1: %d MPI_Recv records after mpirun's signal, want at most 1", counts[trace.OpRecv])
				}
			default:
				if counts[trace.OpRecv] != 1 {
					t.Errorf("rank 1: %d MPI_Recv records, want the deferred receive coded on the way out", counts[trace.OpRecv])
				}
			}
		})
	}
}
