package cpath

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
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

// BenchmarkSchedule: ordering a PAG-like graph of 1M calls cut into
// frames of about 1000 calls for one rank's sweeps, and one sweep.
func BenchmarkSchedule(b *testing.B) {
	const procs, steps = 16, 1 << 16
	es, split, exit, target := cpathtest.FullPAG(rand.New(rand.NewSource(1)), procs, steps, 64)
	g := build(len(split), toEdges(es))
	d := &DistGraph{N: g.N, Bounds: []int32{0, int32(g.N)}, Lo: 0, Hi: int32(g.N), InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight, Target: target}
	in := &SplitInput{Split: split, Exit: exit}
	streams := fullPAGStreams(procs, steps, 0, int32(g.N))
	for _, tc := range []struct {
		name    string
		streams []int32
	}{{"schedule/runs", streams}, {"schedule/kahn", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				if _, err := NewSchedule(&mpix.Single{}, d, in, tc.streams); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.N), "ns/vertex")
		})
	}
	b.Run("dagpath", func(b *testing.B) {
		s, err := NewSchedule(&mpix.Single{}, d, in, streams)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := s.DAGPath(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.N), "ns/vertex")
	})
	b.Run("dag-reference", func(b *testing.B) {
		var s Solver
		for range b.N {
			if _, _, err := s.DAGPath(g, target); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.N), "ns/vertex")
	})
}

// fullPAGStreams cuts the vertices [lo, hi) of cpathtest.FullPAG's graph
// into its streams, as local indices: the start vertex, each process's
// calls, the hubs.
func fullPAGStreams(procs, steps int, lo, hi int32) []int32 {
	cuts := []int32{0, 1}
	for r := 1; r <= procs; r++ {
		cuts = append(cuts, int32(1+2*r*steps))
	}
	out := []int32{0}
	for _, x := range cuts {
		if x > lo && x < hi {
			out = append(out, x-lo)
		}
	}
	return append(out, hi-lo)
}
