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

// benchSweeper is the sweeper of benchPAG, on its path search's schedule.
func benchSweeper(b *testing.B) *sweeper {
	p, err := benchPAG()
	if err != nil {
		b.Fatal(err)
	}
	c := &mpix.Single{}
	_, sched, err := pathOf(c, p)
	if err != nil {
		b.Fatal(err)
	}
	w, err := newSweeper(c, p, sched, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkSolve is one scenario's sweep of the 4 M-call run, and with
// the walk back along its path.
func BenchmarkSolve(b *testing.B) {
	w := benchSweeper(b)
	half := identity()
	half.mul[graph.EdgeProgram] = 0.5
	sites := identity()
	sites.siteSet, sites.siteMul = 1, 0.5
	if err := w.setAttrs(make([]cattr, w.ncalls)); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    *rule
	}{{"identity", identity()}, {"scaled", half}, {"callsite", sites}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				if _, _, _, err := w.solve(tc.r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"+profile", func(b *testing.B) {
			for range b.N {
				_, end, at, err := w.solve(tc.r)
				if err == nil {
					_, _, err = w.profile(tc.r, end, at)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
