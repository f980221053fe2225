//go:build mpi

package cpath

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
)

// TestTopoMPI runs internal/topocheck under mpirun with 1 to 4 ranks: in
// it, topo and topo-shuffle, with and without compression, must give the
// segments of topo on one process for every generated run, whatever the
// split of the logged ranks. Here: the runs' digests are the same at every
// job size, and compression ships fewer bytes (16 ranks × 20k calls).
func TestTopoMPI(t *testing.T) {
	mpitest.OpenMPI.Mpirun(t)
	root := mpitest.RepoRoot(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "topocheck")
	build := exec.Command("go", "build", "-tags", "mpi", "-o", exe, "./cpath/internal/topocheck")
	build.Dir = root
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building topocheck: %v\n%s", err, out)
	}
	t.Logf("built topocheck in %v", time.Since(start).Round(time.Millisecond))
	var runs string
	for P := 1; P <= 4; P++ {
		args := []string{"-big-ranks=16", "-big-calls=20000"}
		if P%2 == 1 { // the compression run needs more than one rank to ship anything; keep the test short
			args = []string{"-big-ranks=0"}
		}
		start := time.Now()
		// Ranks that wait yield the core: the test shares a small machine.
		out := mpitest.RunEnv(t, P, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, "", "", dir, exe, args...)
		t.Logf("P=%d: ran in %v", P, time.Since(start).Round(time.Millisecond))
		var got []string
		var bytesLine string
		for _, l := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(l, "run "):
				got = append(got, l)
			case strings.HasPrefix(l, "bytes "):
				bytesLine = l
			}
		}
		if !strings.Contains(out, fmt.Sprintf("job size=%d\n", P)) {
			t.Fatalf("P=%d: the driver did not run in a job of %d ranks\n%s", P, P, out)
		}
		if len(got) != 12 {
			t.Fatalf("P=%d: %d run lines, want 12\n%s", P, len(got), out)
		}
		if P == 1 {
			runs = strings.Join(got, "\n")
		} else if s := strings.Join(got, "\n"); s != runs {
			t.Errorf("P=%d: runs differ from P=1:\n%s\nwant\n%s", P, s, runs)
		}
		if P%2 == 0 {
			var ranks, calls, segs int
			var plain, comp, raw int64
			if _, err := fmt.Sscanf(bytesLine, "bytes ranks=%d calls=%d segments=%d plain=%d compressed=%d raw=%d",
				&ranks, &calls, &segs, &plain, &comp, &raw); err != nil {
				t.Fatalf("P=%d: %q: %v\n%s", P, bytesLine, err, out)
			}
			if comp >= plain || raw != plain || plain == 0 {
				t.Errorf("P=%d: %d calls: %d bytes shipped uncompressed, %d compressed (raw %d): want fewer, raw = uncompressed", P, calls, plain, comp, raw)
			}
			t.Logf("P=%d: %d calls of %d ranks, %d segments: %d bytes, %d compressed (%.2f)", P, calls, ranks, segs, plain, comp, float64(comp)/float64(plain))
		}
	}
}
