//go:build mpi

package mpix_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
)

// TestExchangesMPI runs internal/exchcheck under mpirun with 2 and 3
// ranks: every exchange must deliver what each rank sent, in one MPI call
// and in rounds (over MPI's int counts; checked with the bytes of a call
// lowered), on every rank alike (a rank left waiting would hang the job,
// and the test's timeout would say so).
func TestExchangesMPI(t *testing.T) {
	mpitest.OpenMPI.Mpirun(t)
	root := mpitest.RepoRoot(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "exchcheck")
	build := exec.Command("go", "build", "-tags", "mpi", "-o", exe, "./internal/mpix/internal/exchcheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building exchcheck: %v\n%s", err, out)
	}
	const cases = 13
	for _, np := range []int{2, 3} {
		out := mpitest.Run(t, np, "", "", dir, exe)
		for r := 0; r < np; r++ {
			if got := strings.Count(out, fmt.Sprintf("OK rank %d: ", r)); got != cases {
				t.Errorf("np %d: rank %d passed %d cases of %d:\n%s", np, r, got, cases, out)
			}
		}
	}
}
