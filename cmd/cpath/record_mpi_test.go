//go:build mpi

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
)

// needMPI returns the logger library, built with the repository's make rule
// so that the test runs the current logger source ($CPATH_LOGGER_LIB: a
// prebuilt one instead). It skips the test when Open MPI is missing, or
// fails under CI, where it must be there.
func needMPI(t *testing.T) string {
	t.Helper()
	if os.Getenv("CI") != "" {
		for _, c := range []string{"mpirun.openmpi", "mpicc.openmpi"} {
			if _, err := exec.LookPath(c); err != nil {
				t.Fatalf("%s not found: install Open MPI (make deps)", c)
			}
		}
	}
	return mpitest.LoggerLib(t)
}

// buildHalo compiles the bundled example into a temporary directory.
func buildHalo(t *testing.T) string {
	t.Helper()
	src := filepath.Join(mpitest.RepoRoot(t), "examples", "halo.c")
	return mpitest.Compile(t, t.TempDir(), "mpicc", src, "-O2")
}

// TestRecordHalo records the bundled example on 4 ranks under the real
// logger and checks what cpath info makes of the logs: built against Open
// MPI and against MPICH, with cpath record choosing the logger and the
// mpirun from the program alone; and refusing the other MPI's mpirun.
func TestRecordHalo(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testRecordHalo(t, m) })
	}
}

func testRecordHalo(t *testing.T, m *mpitest.Impl) {
	var halo string
	var np []string
	if m == mpitest.OpenMPI {
		t.Setenv("CPATH_LOGGER", needMPI(t))
		halo = buildHalo(t)
		np = []string{"-np", "4", "--oversubscribe"}
	} else {
		t.Setenv("CPATH_LOGGER_MPICH", m.LoggerLib(t))
		src := filepath.Join(mpitest.RepoRoot(t), "examples", "halo.c")
		halo = mpitest.Compile(t, t.TempDir(), m.CC(t), src, "-O2")
		np = []string{"-np", "4"} // Hydra oversubscribes unasked
	}
	dir := filepath.Join(t.TempDir(), "logs")

	const iters = 20
	code, out, errs := runCLI(t, append(append([]string{"record", "-o", dir}, np...), "--", halo, "20", "1000")...)
	if code != 0 {
		t.Fatalf("record: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "halo: 4 ranks, 20 iterations") {
		t.Errorf("program output missing:\n%s", out)
	}
	if !strings.Contains(errs, "cpath: 4 log(s) in "+dir) {
		t.Errorf("stderr:\n%s", errs)
	}

	code, out, errs = runCLI(t, "info", "--json", dir)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, errs)
	}
	var s struct {
		MPI      string   `json:"mpi_library"`
		Size     int      `json:"size"`
		Complete bool     `json:"complete"`
		Problems []string `json:"problems"`
		Exe      []string `json:"exe"`
		Ranks    []struct {
			Rank      int    `json:"rank"`
			Calls     uint64 `json:"calls"`
			BytesSent uint64 `json:"bytes_sent"`
			End       string `json:"end"`
		} `json:"ranks"`
		Ops []struct {
			Op    string `json:"op"`
			Calls uint64 `json:"calls"`
			Bytes uint64 `json:"bytes"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Size != 4 || !s.Complete || len(s.Ranks) != 4 || len(s.Exe) != 1 || s.Exe[0] != halo {
		t.Fatalf("info: size %d, complete %v (%q), %d ranks, exe %q", s.Size, s.Complete, s.Problems, len(s.Ranks), s.Exe)
	}
	if !strings.HasPrefix(s.MPI, m.Name) {
		t.Errorf("info: MPI library %q, want %s's", s.MPI, m.Name)
	}
	// Init, iters × (Irecv, Irecv, Isend, Isend, Waitall, Allreduce), Finalize.
	for _, r := range s.Ranks {
		sent := uint64(2 * iters * 8) // two neighbours, one double each
		if r.Rank == 0 || r.Rank == 3 {
			sent /= 2 // MPI_PROC_NULL at the ends
		}
		if r.Calls != 2+6*iters || r.BytesSent != sent || r.End != "finalized" {
			t.Errorf("rank %d: %d calls (want %d), %d bytes sent (want %d), %s", r.Rank, r.Calls, 2+6*iters, r.BytesSent, sent, r.End)
		}
	}
	want := map[string]uint64{"MPI_Isend": 8 * iters, "MPI_Irecv": 8 * iters, "MPI_Waitall": 4 * iters, "MPI_Allreduce": 4 * iters}
	for _, o := range s.Ops {
		if n, ok := want[o.Op]; ok && n != o.Calls {
			t.Errorf("%s: %d calls, want %d", o.Op, o.Calls, n)
		}
		delete(want, o.Op)
	}
	if len(want) > 0 {
		t.Errorf("operations missing: %v", want)
	}

	// The text form too.
	code, out, _ = runCLI(t, "info", dir)
	if code != 0 || !strings.Contains(out, "complete:   yes") || !strings.Contains(out, "MPI_Allreduce") {
		t.Errorf("info: exit %d\n%s", code, out)
	}

	// A second record into the same directory is refused.
	code, _, errs = runCLI(t, "record", "-o", dir, "-np", "2", "--", halo, "2", "100")
	if code != 1 || !strings.Contains(errs, "already holds 4 log(s)") {
		t.Errorf("second record: exit %d, stderr %q", code, errs)
	}

	// The logs analyse: 2 × 3 neighbour pairs × iters messages.
	code, out, errs = runCLI(t, "analyze", "--json", "-", "--json-segments", dir)
	var r struct {
		Run struct {
			Messages  int `json:"messages"`
			Unmatched int `json:"unmatched"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Run.Messages != 6*iters || r.Run.Unmatched != 0 {
		t.Errorf("analyze: exit %d (%v), %d messages (want %d), %d unmatched; stderr %q", code, err, r.Run.Messages, 6*iters, r.Run.Unmatched, errs)
	}

	// The other MPI's mpirun cannot run the program: one line, no run.
	other := mpitest.MPICH
	if m == other {
		other = mpitest.OpenMPI
	}
	launcher := other.Mpirun(t)
	code, out, errs = runCLI(t, "record", "-o", filepath.Join(t.TempDir(), "x"), "--mpirun", launcher, "-np", "2", "--", halo)
	wantErr := "cpath: record: " + halo + " links " + m.Name + " ("
	if code != 1 || out != "" || !strings.HasPrefix(errs, wantErr) || strings.Count(errs, "\n") != 1 {
		t.Errorf("record with %s: exit %d, stdout %q, stderr %q, want one line %q…", launcher, code, out, errs, wantErr)
	}
}

// TestRecordExitStatus checks that the program's exit status comes through
// mpirun and cpath (halo exits 2 on bad arguments, after MPI_Finalize).
func TestRecordExitStatus(t *testing.T) {
	lib := needMPI(t)
	t.Setenv("CPATH_LOGGER", lib)
	halo := buildHalo(t)
	dir := filepath.Join(t.TempDir(), "logs")
	code, _, errs := runCLI(t, "record", "-o", dir, "-np", "2", "--", halo, "0")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, errs)
	}
	if !strings.Contains(errs, "exited with status 2; 2 log(s) in "+dir) {
		t.Errorf("stderr:\n%s", errs)
	}
	if code, out, errs := runCLI(t, "info", dir); code != 0 || !strings.Contains(out, "complete:   yes") {
		t.Errorf("info: exit %d, stderr %q\n%s", code, errs, out)
	}
}
