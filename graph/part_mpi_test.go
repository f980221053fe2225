//go:build mpi

package graph_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/mpitest"
)

// TestPartMPI builds generated runs with BuildPart on 1 to 4 ranks of a
// real MPI job and checks every part against Build (see partcheck).
func TestPartMPI(t *testing.T) {
	mpitest.NeedTool(t, "mpirun", "openmpi-bin")
	bin := filepath.Join(t.TempDir(), "partcheck")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "./internal/partcheck").CombinedOutput(); err != nil {
		t.Fatalf("go build partcheck: %v\n%s", err, out)
	}
	for _, pat := range gen.Patterns {
		dir := t.TempDir()
		if err := gen.Write(gen.Spec{Dir: dir, Ranks: 6, CallsPerRank: 4000, Pattern: pat, Seed: 21}); err != nil {
			t.Fatal(err)
		}
		for np := 1; np <= 4; np++ {
			t.Run(fmt.Sprintf("%s/np=%d", pat, np), func(t *testing.T) {
				out := mpitest.RunEnv(t, np, nil, "", "", dir, bin, dir)
				if !strings.Contains(out, "ok") {
					t.Errorf("%s", out)
				}
			})
		}
	}
	// Skewed clocks: the correction's rounds cross parts.
	recs := simulate(7)
	for _, sc := range skewCases() {
		dir := t.TempDir()
		writeSkewed(t, dir, recs, sc)
		for _, np := range []int{2, 3} {
			t.Run(fmt.Sprintf("skew %s/np=%d", sc.name, np), func(t *testing.T) {
				out := mpitest.RunEnv(t, np, nil, "", "", dir, bin, dir)
				if !strings.Contains(out, "ok") {
					t.Errorf("%s", out)
				}
			})
		}
	}
}
