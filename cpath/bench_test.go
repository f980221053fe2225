package cpath

import (
	"math/rand"
	"sort"
	"sync"
	"testing"
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
	rng := rand.New(rand.NewSource(seed))
	per := calls / ranks
	n := 2 * per * ranks
	start := make([]int64, per*ranks)
	end := make([]int64, per*ranks)
	for r := 0; r < ranks; r++ {
		t := rng.Int63n(1000)
		for i := 0; i < per; i++ {
			c := r*per + i
			t += rng.Int63n(2000) // computation
			start[c] = t
			t += 1 + rng.Int63n(1000) // inside MPI
			if rng.Intn(100) == 0 {
				t += 50_000 // a long wait
			}
			end[c] = t
		}
	}
	var es []edge
	target := int32(1)
	for r := 0; r < ranks; r++ {
		for i := 0; i < per; i++ {
			c := r*per + i
			s, e := int32(2*c), int32(2*c+1)
			es = append(es, edge{s, e, end[c] - start[c]})
			if i > 0 {
				es = append(es, edge{e - 2, s, start[c] - end[c-1]})
			}
			if end[c] > end[target/2] {
				target = e
			}
			if ranks == 1 || rng.Intn(10) == 0 {
				continue
			}
			o := rng.Intn(ranks - 1)
			if o >= r {
				o++
			}
			row := start[o*per : (o+1)*per]
			j := sort.Search(per, func(j int) bool { return row[j] >= end[c] }) - 1
			if j < 0 {
				continue
			}
			w := end[c] - row[j]
			if clockErr > 0 {
				w = max(0, w+rng.Int63n(2*clockErr+1)-clockErr)
			}
			es = append(es, edge{int32(2 * (o*per + j)), e, w})
		}
	}
	return build(n, es), target
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
