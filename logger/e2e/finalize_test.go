//go:build mpi

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// MPI_Finalize must never hang: every rank takes part in the final clock
// synchronisation or none does. Ranks paused by MPI_Pcontrol(0) and ranks
// whose log could not be opened used to skip it while rank 0 waited for
// them in its ping-pong forever.
func TestFinalizeNeverHangs(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "finpause.c")
	cpath := cpathBin(t)
	for _, tc := range []struct {
		mode   string
		paused []bool // ranks paused at MPI_Finalize
		nolog  int    // rank whose log path is made unwritable, -1 none
	}{
		{"one", []bool{false, true, false}, -1},
		{"all", []bool{true, true, true}, -1},
		{"none", []bool{false, false, false}, 1},
	} {
		name := tc.mode
		if tc.nolog >= 0 {
			name = "unwritable"
		}
		t.Run(name, func(t *testing.T) {
			logDir := filepath.Join(t.TempDir(), "logs")
			if tc.nolog >= 0 {
				// A directory where the rank's log should go: it cannot be
				// opened for writing, the other ranks' logs can.
				if err := os.MkdirAll(filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", tc.nolog)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			res := runFailJob(t, lib, logDir, exe, tc.mode) // fails the test on a hang (60 s)
			if res.code != 0 || res.stdout != "finpause: ok\n" {
				t.Fatalf("mode %s: exit status %d, stdout %q, want 0 and %q\nstderr:\n%s", tc.mode, res.code, res.stdout, "finpause: ok\n", res.stderr)
			}
			for rank := 0; rank < failNP; rank++ {
				if rank == tc.nolog {
					continue
				}
				l, err := mpitest.ReadLog(t, filepath.Join(logDir, fmt.Sprintf("rank-%06d.cplog", rank)))
				if err != nil {
					t.Fatalf("rank %d: %v", rank, err)
				}
				if !l.Complete() {
					t.Errorf("rank %d: log not complete: trailer %v, damage %v", rank, l.Trailer.Status, l.Damage)
				}
				// The final sync point is there whether the rank was paused
				// or not: drift is not lost.
				if l.Header.Clock.Method == "pingpong" && l.Header.Clock.Final == nil {
					t.Errorf("rank %d: no clock sync point from MPI_Finalize", rank)
				}
				var fin, allr int
				for _, r := range l.Records {
					switch r.Op {
					case trace.OpFinalize:
						fin++
					case trace.OpAllreduce:
						allr++
					}
				}
				wantFin := 1
				if tc.paused[rank] {
					wantFin = 0
				}
				if fin != wantFin || allr != 20 {
					t.Errorf("rank %d: %d MPI_Finalize and %d MPI_Allreduce records, want %d and 20", rank, fin, allr, wantFin)
				}
			}
			if tc.nolog >= 0 {
				if !strings.Contains(res.stderr, failWarn) {
					t.Errorf("no warning about the unwritable log on stderr:\n%s", res.stderr)
				}
				// The analyzer needs every rank's log: it must refuse the
				// directory with one line, not hang or crash.
				out, err := exec.Command(cpath, logDir).CombinedOutput()
				if err == nil || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
					t.Errorf("cpath %s with rank %d's log missing: err %v, want one line and an error:\n%s", logDir, tc.nolog, err, out)
				}
				t.Logf("cpath: %s", strings.TrimSpace(string(out)))
				return
			}
			out, err := exec.Command(cpath, logDir).CombinedOutput()
			if err != nil {
				t.Errorf("cpath %s: %v\n%s", logDir, err, out)
			}
		})
	}
}
