//go:build mpi

package cpath

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
)

// TestDistMPI runs internal/distcheck under mpirun with 1 to 4 ranks: on
// every generated graph (random DAGs, chains, PAG-like runs with and
// without clock error, graphs with a cycle, full-PAG-like graphs with and
// without vertex times), split evenly and unevenly,
// ParallelDijkstra and ParallelDeltaStepping (default Δ and small ones),
// and on split-structured graphs (and the others as one split) DistDAG and
// Split in its four modes, must give DAG's path vertex for vertex, or, on
// a cycle, an error on every rank. The driver checks; here only its
// verdict lines are counted.
func TestDistMPI(t *testing.T) {
	mpitest.OpenMPI.Mpirun(t)
	root := mpitest.RepoRoot(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "distcheck")
	build := exec.Command("go", "build", "-tags", "mpi", "-o", exe, "./cpath/internal/distcheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building distcheck: %v\n%s", err, out)
	}
	runs := []struct {
		args []string
		want int // OK lines
	}{
		// 5 kinds × 2 seeds × 2 splits × 2 algorithms.
		{[]string{"-kind=random,chain,chain-exact,pag-like,cycle", "-n=2000", "-count=2", "-algo=dijkstra,delta"}, 40},
		// Small graphs, many seeds, small Δ (many phases).
		{[]string{"-kind=random,chain,pag-like,cycle", "-n=60", "-count=12", "-seed=10", "-algo=dijkstra,delta,delta:1,delta:7"}, 384},
		// Split-structured graphs (full-PAG-like: many in-edges, hubs,
		// exits), 2 and 12 splits: 2 seeds × 2 splits × 7 algorithms each.
		{[]string{"-kind=split", "-n=3000", "-count=2", "-splits=2", "-algo=dag,split:par-par,split:seq-par,split:par-seq,split:seq-seq,dijkstra,delta"}, 28},
		{[]string{"-kind=split", "-n=500", "-count=6", "-seed=20", "-splits=12", "-algo=dag,split:par-par,split:seq-par,split:par-seq,split:seq-seq"}, 60},
		// Full-PAG-like graphs with vertex times (dijkstra and delta take
		// them latest first): 2 seeds × 2 splits × 8 algorithms.
		{[]string{"-kind=full-pag", "-n=4000", "-count=2", "-procs=6", "-splits=9", "-algo=dag,split:par-par,split:seq-par,split:par-seq,split:seq-seq,dijkstra,delta,delta:100"}, 32},
		// The same without times (the largest Dist first): small, as that
		// order reprocesses much on such graphs; 2 seeds × 2 splits × 2.
		{[]string{"-kind=full-pag", "-n=600", "-count=2", "-procs=4", "-splits=3", "-time=false", "-algo=dijkstra,delta"}, 8},
		// A split input with an edge between splits: every split mode fails
		// on every rank (dag is unaffected): 2 seeds × 2 splits × 5.
		{[]string{"-kind=bad-split", "-n=500", "-count=2", "-algo=dag,split:par-par,split:seq-par,split:par-seq,split:seq-seq"}, 20},
		// The other kinds as one split, and cycles: 4 kinds × 3 seeds × 2 splits × 5 algorithms.
		{[]string{"-kind=random,pag-like,chain,cycle", "-n=400", "-count=3", "-algo=dag,split:par-par,split:seq-par,split:par-seq,split:seq-seq"}, 120},
		// A longer chain, ids ascending and reversed.
		{[]string{"-kind=chain-exact", "-n=200000", "-count=2", "-split=even", "-algo=dijkstra,delta"}, 4},
	}
	for P := 1; P <= 4; P++ {
		for _, r := range runs {
			out := mpitest.Run(t, P, "", "", dir, exe, r.args...)
			if !strings.Contains(out, fmt.Sprintf("job size=%d\n", P)) {
				t.Fatalf("P=%d %v: the driver did not run in a job of %d ranks\n%s", P, r.args, P, out)
			}
			ok := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "OK ") {
					ok++
				}
			}
			if ok != r.want {
				t.Fatalf("P=%d %v: %d OK lines, want %d\n%s", P, r.args, ok, r.want, out)
			}
		}
	}
}
