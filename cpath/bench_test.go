package cpath

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
)

// pagLike builds a graph shaped like graph/'s PAG: ranks threads of calls,
// calls numbered by rank, S(c) = 2c, E(c) = 2c+1, a call edge S->E and a
// program edge E(c)->S(c+1) on each rank, and for 90% of the calls a
// communication edge from the start of the latest earlier call on another
// rank: about 2.9 edges per call. Weights are time differences; clockErr
// adds up to ± that much to communication edges (clamped at 0), which
// breaks the PAG's telescoping sums so that label-correcting has to correct.
// The target is the last event of the run.
func pagLike(calls, ranks int, clockErr int64, seed int64) (*Graph, int32) {
	n, es, target := cpathtest.PAGLike(rand.New(rand.NewSource(seed)), calls, ranks, clockErr)
	return build(n, toEdges(es)), target
}

type benchGraph struct {
	name string
	g    *Graph
	t    int32
}

// benchGraphs: "pag" is the production case, 1M calls whose weights are
// exact time differences, so every path into the target from u has length
// t(target)-t(u) and the label-correcting algorithms never correct;
// "noisy4k" adds ±500 ns of clock error to communication edges, on which
// they re-process vertices many times (superlinearly: keep it small).
var benchGraphs = sync.OnceValue(func() []benchGraph {
	g1, t1 := pagLike(1<<20, 16, 0, 1)
	g2, t2 := pagLike(1<<12, 16, 500, 1)
	return []benchGraph{{"pag", g1, t1}, {"noisy4k", g2, t2}}
})

func bench(b *testing.B, run func(s *Solver, g *Graph, t int32) (*Result, error)) {
	for _, bg := range benchGraphs() {
		b.Run(bg.name, func(b *testing.B) {
			var s Solver
			var r *Result
			var err error
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r, err = run(&s, bg.g, bg.t); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(bg.g.N), "ns/vertex")
			b.ReportMetric(float64(r.Stats.Pops)/float64(bg.g.N), "pops/vertex")
			b.ReportMetric(float64(r.Stats.MaxQueue), "maxqueue")
		})
	}
}

func BenchmarkDAG(b *testing.B) { bench(b, (*Solver).DAG) }

func BenchmarkDijkstra(b *testing.B) { bench(b, (*Solver).Dijkstra) }

func BenchmarkDeltaStepping(b *testing.B) {
	bench(b, func(s *Solver, g *Graph, t int32) (*Result, error) { return s.DeltaStepping(g, t, DefaultDelta(g)) })
}
