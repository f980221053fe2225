package replay

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// benchPAG is a generated halo run (16 ranks; $CPATH_BENCH_CALLS calls per
// rank, 250000 by default: 4 M calls) built into one PAG.
var benchPAG = sync.OnceValues(func() (*graph.PAG, error) {
	calls := 250_000
	if s := os.Getenv("CPATH_BENCH_CALLS"); s != "" {
		calls, _ = strconv.Atoi(s)
	}
	dir, err := os.MkdirTemp("", "replay-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 16, CallsPerRank: calls, Pattern: gen.Halo, Seed: 1}); err != nil {
		return nil, err
	}
	run, err := graph.Load(dir)
	if err != nil {
		return nil, err
	}
	return graph.Build(&mpix.Single{}, run)
})

func benchWhole(b *testing.B) *whole {
	p, err := benchPAG()
	if err != nil {
		b.Fatal(err)
	}
	w, err := gatherWhole(&mpix.Single{}, p, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkWhole is the setup shared by the solves: the topological order
// and the renumbered copy.
func BenchmarkWhole(b *testing.B) {
	p, err := benchPAG()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := gatherWhole(&mpix.Single{}, p, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSolve(b *testing.B) {
	w := benchWhole(b)
	half := identity()
	half.mul[graph.EdgeProgram] = 0.5
	sites := identity()
	sites.sites, sites.siteMul = newBits(int(w.calls)), 0.5
	for _, tc := range []struct {
		name string
		r    *rule
	}{{"identity", identity()}, {"scaled", half}, {"callsite", sites}} {
		s := w.newSolver()
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				s.solve(tc.r)
			}
		})
		b.Run(tc.name+"+profile", func(b *testing.B) {
			for range b.N {
				_, end := s.solve(tc.r)
				s.profile(end)
			}
		})
	}
}
