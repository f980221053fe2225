package cpath

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
)

// Tests of the time-ordered searches: Dijkstra and Δ-stepping, sequential
// and distributed, on graphs with vertex times.

// fullPAGTimed is a cpathtest.FullPAGTime graph with its times.
func fullPAGTimed(rng *rand.Rand, procs, steps, every int) (*Graph, int32) {
	es, split, _, target, tm := cpathtest.FullPAGTime(rng, procs, steps, every)
	g := &Graph{N: len(split), Time: tm}
	g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(len(split), es)
	return g, target
}

// withTime is g with other times (the same edges).
func withTime(g *Graph, tm []int64) *Graph {
	h := *g
	h.Time = tm
	return &h
}

// timeVariants are times that break the consistency of a PAG's, under
// which the searches must stay exact: shuffled, reversed, all equal, the
// consistent ones with clock error, and none.
func timeVariants(rng *rand.Rand, tm []int64) map[string][]int64 {
	out := map[string][]int64{}
	sh := slices.Clone(tm)
	rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
	out["shuffled"] = sh
	rev := make([]int64, len(tm))
	for i, t := range tm {
		rev[i] = -t
	}
	out["reversed"] = rev
	out["equal"] = make([]int64, len(tm))
	skew := slices.Clone(tm)
	for i := range skew {
		skew[i] += rng.Int63n(801) - 400
	}
	out["clock error"] = skew
	ext := make([]int64, len(tm))
	for i := range ext {
		ext[i] = []int64{math.MinInt64, math.MaxInt64, 0, math.MinInt64 + 1}[rng.Intn(4)]
	}
	out["extreme"] = ext
	out["nil"] = nil
	return out
}

// sameAsDAG checks Dist, Succ and the path vertex for vertex.
func sameAsDAG(t *testing.T, name string, ref, r *Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(r.Dist, ref.Dist) || !reflect.DeepEqual(r.Succ, ref.Succ) || !reflect.DeepEqual(r.Path, ref.Path) {
		for v := range r.Dist {
			if r.Dist[v] != ref.Dist[v] || r.Succ[v] != ref.Succ[v] {
				t.Fatalf("%s: vertex %d: Dist %d Succ %d, dag %d %d", name, v, r.Dist[v], r.Succ[v], ref.Dist[v], ref.Succ[v])
			}
		}
		t.Fatalf("%s: path %v, dag %v", name, r.Path, ref.Path)
	}
}

// fullPAGCases are FullPAG shapes: procs, steps, every.
var fullPAGCases = []struct{ procs, steps, every int }{
	{1, 5, 2}, {3, 40, 7}, {8, 60, 10}, {5, 30, 100}, {4, 50, 1}, {16, 200, 20},
}

// TestTimedFullPAGSequential: on FullPAG graphs with their times, Dijkstra
// and DeltaStepping equal DAG vertex for vertex and relax each edge about
// once; with times that are not consistent, and without, they stay exact.
func TestTimedFullPAGSequential(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	for i, c := range fullPAGCases {
		g, target := fullPAGTimed(rng, c.procs, c.steps, c.every)
		for v := int32(0); v < int32(g.N); v++ {
			for j := g.InStart[v]; j < g.InStart[v+1]; j++ {
				if u := g.InSrc[j]; g.InWeight.At(j) > g.Time[v]-g.Time[u] {
					t.Fatalf("case %d: edge %d->%d of weight %d between times %d and %d", i, u, v, g.InWeight.At(j), g.Time[u], g.Time[v])
				}
			}
		}
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatal(err)
		}
		edges := float64(len(g.InSrc))
		for _, a := range algos[1:] {
			name := fmt.Sprintf("case %d %+v/%s", i, c, a.name)
			r, err := a.run(new(Solver), g, target)
			sameAsDAG(t, name, ref, r, err)
			if per := float64(r.Stats.Relaxations) / edges; per > 1 {
				t.Errorf("%s: %.2f relaxations per edge", name, per)
			}
			if r.Stats.Stale != 0 || r.Stats.Pops > int64(r.Stats.Reached) {
				t.Errorf("%s: %d pops, %d stale for %d vertices reached", name, r.Stats.Pops, r.Stats.Stale, r.Stats.Reached)
			}
		}
		if g.N > 1000 {
			continue // the variants are slow (nil: the largest-Dist order): the small cases suffice
		}
		for vname, tm := range timeVariants(rng, g.Time) {
			h := withTime(g, tm)
			for _, a := range algos[1:] {
				name := fmt.Sprintf("case %d %+v/%s times/%s", i, c, vname, a.name)
				r, err := a.run(new(Solver), h, target)
				sameAsDAG(t, name, ref, r, err)
			}
		}
	}
}

// TestTimedRandomSequential: random DAGs with random times (most not
// consistent) and with times consistent with a topological order.
func TestTimedRandomSequential(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	s := new(Solver) // reused: scratch must not leak between runs
	for it := 0; it < 300; it++ {
		n := 1 + rng.Intn(200)
		g, target, ref := randomRef(t, rng, n)
		tm := make([]int64, n)
		switch it % 3 {
		case 0:
			for v := range tm {
				tm[v] = rng.Int63n(10)
			}
		case 1:
			for v := range tm {
				tm[v] = rng.Int63() - math.MaxInt64/2
				if rng.Intn(10) == 0 {
					tm[v] = []int64{math.MinInt64, math.MaxInt64}[rng.Intn(2)]
				}
			}
		default: // a topological order's positions: consistent
			pos := topoPositions(g)
			for v := range tm {
				tm[v] = int64(pos[v]) * 10
			}
		}
		h := withTime(g, tm)
		for _, a := range algos[1:] {
			r, err := a.run(s, h, target)
			sameAsDAG(t, fmt.Sprintf("graph %d n=%d/%s", it, n, a.name), ref, r, err)
		}
	}
}

// topoPositions gives each vertex its position in a topological order.
func topoPositions(g *Graph) []int {
	indeg := make([]int, g.N)
	out := make([][]int32, g.N)
	for v := int32(0); v < int32(g.N); v++ {
		for j := g.InStart[v]; j < g.InStart[v+1]; j++ {
			out[g.InSrc[j]] = append(out[g.InSrc[j]], v)
			indeg[v]++
		}
	}
	var queue []int32
	for v := range indeg {
		if indeg[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	pos := make([]int, g.N)
	for k := 0; k < len(queue); k++ {
		v := queue[k]
		pos[v] = k
		for _, w := range out[v] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return pos
}

// timedDistAlgos are the distributed searches that use the times.
var timedDistAlgos = []distAlgo{
	{"pdijkstra", ParallelDijkstra},
	{"pdelta=default", distDeltaRun(0)},
	{"pdelta=1", distDeltaRun(1)},
	{"pdelta=huge", distDeltaRun(math.MaxInt64)},
}

// TestTimedFullPAGDist: on FullPAG graphs with their times, at 1 to 4
// ranks (even and random vertex ranges), ParallelDijkstra and
// ParallelDeltaStepping give DAG's path and do a bounded amount of work:
// ParallelDijkstra and Δ-stepping with the default Δ at most
// maxPerEdge relaxations per edge (they are logged); with other times and
// without, they stay exact.
func TestTimedFullPAGDist(t *testing.T) {
	const maxPerEdge = 3
	rng := rand.New(rand.NewSource(23))
	for i, c := range fullPAGCases {
		g, target := fullPAGTimed(rng, c.procs, c.steps, c.every)
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatal(err)
		}
		for P := 1; P <= 4; P++ {
			bounds := distEvenBounds(g.N, P)
			if i%2 == 1 {
				bounds = distRandomBounds(rng, g.N, P)
			}
			for _, a := range timedDistAlgos {
				name := fmt.Sprintf("case %d %+v/P=%d/%s", i, c, P, a.name)
				res, errs := distRun(distShares(g, target, bounds), a.run)
				checkDistResult(t, name, ref, res, errs)
				st := res[0].Stats
				per := float64(st.Relaxations) / float64(st.Edges)
				if a.name == "pdijkstra" || a.name == "pdelta=default" {
					if per > maxPerEdge {
						t.Errorf("%s: %.2f relaxations per edge", name, per)
					}
					t.Logf("%s: %.3f relaxations per edge, %d rounds, %d phases", name, per, st.Rounds, st.Phases)
				}
			}
		}
		if g.N > 1000 {
			continue // the variants are slow (many rounds): the small cases suffice
		}
		for vname, tm := range timeVariants(rng, g.Time) {
			h := withTime(g, tm)
			for P := 1; P <= 4; P++ {
				for _, a := range timedDistAlgos[:2] {
					name := fmt.Sprintf("case %d %+v/%s times/P=%d/%s", i, c, vname, P, a.name)
					res, errs := distRun(distShares(h, target, distRandomBounds(rng, g.N, P)), a.run)
					checkDistResult(t, name, ref, res, errs)
				}
			}
		}
	}
}

// TestTimedRandomDist: random DAGs with random or consistent times, at 1
// to 5 ranks with random ranges, every Δ.
func TestTimedRandomDist(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	count := 200
	if testing.Short() {
		count = 40
	}
	for it := 0; it < count; it++ {
		n := 1 + rng.Intn(300)
		g, target, ref := randomRef(t, rng, n)
		tm := make([]int64, n)
		pos := topoPositions(g)
		for v := range tm {
			switch it % 3 {
			case 0:
				tm[v] = rng.Int63n(5)
				if it%2 == 0 {
					tm[v] = math.MinInt64 + tm[v] // buckets at the end of the range
				}
			case 1:
				tm[v] = int64(pos[v])*7 + rng.Int63n(3)
			default:
				tm[v] = int64(pos[v]) * 1000
			}
		}
		g.Time = tm
		P := 1 + rng.Intn(5)
		bounds := distRandomBounds(rng, n, P)
		for _, a := range append(timedDistAlgos, distAlgo{"pdelta=3", distDeltaRun(3)}) {
			name := fmt.Sprintf("graph %d (n=%d, bounds %v)/%s", it, n, bounds, a.name)
			res, errs := distRun(distShares(g, target, bounds), a.run)
			checkDistResult(t, name, ref, res, errs)
		}
	}
}

// TestTimedCycles: positive cycles are found with times too, on every rank.
func TestTimedCycles(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	for _, tc := range cycleCases(300, 50) {
		tm := make([]int64, tc.n)
		for v := range tm {
			tm[v] = rng.Int63n(1000)
		}
		g := withTime(build(tc.n, tc.edges), tm)
		for _, a := range algos[1:] {
			name := fmt.Sprintf("%s/%s", tc.name, a.name)
			_, err := a.run(new(Solver), g, tc.target)
			if tc.positive && (err == nil || !strings.Contains(err.Error(), "cycle")) {
				t.Errorf("%s: error %v", name, err)
			}
		}
		for _, P := range []int{1, 2, 3} {
			for _, a := range timedDistAlgos {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, a.name)
				res, errs := distRun(distShares(g, tc.target, distEvenBounds(tc.n, P)), a.run)
				checkDistCycle(t, name, tc, res, errs)
			}
		}
	}
}

// TestTimedBadInput: wrong numbers of times are refused, by every rank.
func TestTimedBadInput(t *testing.T) {
	g := build(6, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}})
	if _, err := Dijkstra(withTime(g, make([]int64, 5)), 5); err == nil {
		t.Error("Dijkstra accepted 5 times for 6 vertices")
	}
	if _, err := DeltaStepping(withTime(g, make([]int64, 7)), 5, 1); err == nil {
		t.Error("DeltaStepping accepted 7 times for 6 vertices")
	}
	for _, P := range []int{1, 2, 3} {
		for _, a := range timedDistAlgos[:2] {
			gs := distShares(withTime(g, []int64{0, 1, 2, 3, 4, 5}), 5, distEvenBounds(6, P))
			gs[0].Time = gs[0].Time[:len(gs[0].Time)-1]
			if err := distSameError(t, "short", func() []error { _, e := distRun(gs, a.run); return e }()); err == nil {
				t.Errorf("P=%d/%s: short times accepted", P, a.name)
			}
			if P == 1 {
				continue
			}
			gs = distShares(withTime(g, []int64{0, 1, 2, 3, 4, 5}), 5, distEvenBounds(6, P))
			gs[P-1].Time = nil
			err := distSameError(t, "some without", func() []error { _, e := distRun(gs, a.run); return e }())
			if err == nil || !strings.Contains(err.Error(), "times") {
				t.Errorf("P=%d/%s: ranks with and without times: %v", P, a.name, err)
			}
		}
	}
}

// TestDistExchangeChunks: an exchange larger than distChunkBytes goes in
// several calls, with the same results.
func TestDistExchangeChunks(t *testing.T) {
	defer func(b int) { distChunkBytes = b }(distChunkBytes)
	rng := rand.New(rand.NewSource(26))
	g, target := fullPAGTimed(rng, 6, 40, 8)
	ref, err := DAG(g, target)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{1, 100, 1000} {
		distChunkBytes = b
		for _, P := range []int{1, 2, 3} {
			for _, tm := range [][]int64{g.Time, nil} {
				h := withTime(g, tm)
				for _, a := range append(timedDistAlgos[:2], distAlgo{"split/par-par", func(c mpix.Comm, d *DistGraph) (*DistResult, error) {
					return Split(c, d, &SplitInput{Split: make([]int32, d.Hi-d.Lo), Exit: []int32{target}}, ParPar)
				}}) {
					name := fmt.Sprintf("chunk=%d/P=%d/timed=%v/%s", b, P, tm != nil, a.name)
					res, errs := distRun(distShares(h, target, distRandomBounds(rng, g.N, P)), a.run)
					checkDistResult(t, name, ref, res, errs)
				}
			}
		}
	}
}

func TestDistDefaultTimeDelta(t *testing.T) {
	// 1000 vertices at times 5..5+999·640: 64 buckets.
	n := 1000
	tm := make([]int64, n)
	var es []edge
	for v := range tm {
		tm[v] = 5 + int64(v)*640
		if v > 0 {
			es = append(es, edge{int32(v - 1), int32(v), 640})
		}
	}
	g := withTime(build(n, es), tm)
	for _, P := range []int{1, 2, 3} {
		gs := distShares(g, int32(n-1), distRandomBounds(rand.New(rand.NewSource(int64(P))), n, P))
		got := make([]int64, P)
		distRun(gs, func(c mpix.Comm, d *DistGraph) (*DistResult, error) {
			var err error
			got[c.Rank()], err = DistDefaultTimeDelta(c, d)
			return nil, err
		})
		for _, d := range got {
			if d != (999*640+63)/64 {
				t.Errorf("P=%d: DistDefaultTimeDelta %v, want %d", P, got, (999*640+63)/64)
			}
		}
	}
	// 99 840 vertices: N/256 = 390 buckets.
	big := &DistGraph{N: 99_840, Time: []int64{-1000, 389_000}}
	if d, _ := DistDefaultTimeDelta(&mpix.Single{}, big); d != 1000 {
		t.Errorf("DistDefaultTimeDelta on 99 840 vertices = %d, want 1000", d)
	}
	if d, _ := DistDefaultTimeDelta(&mpix.Single{}, &DistGraph{N: 3, Time: []int64{7, 7, 7}}); d != 1 {
		t.Errorf("DistDefaultTimeDelta of equal times = %d, want 1", d)
	}
}

func TestBucketLow(t *testing.T) {
	for _, c := range []struct{ t, d, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 10}, {-1, 10, -10}, {-10, 10, -10}, {-11, 10, -20},
		{math.MaxInt64, 10, math.MaxInt64 - 7}, {math.MinInt64, 10, math.MinInt64},
		{math.MinInt64 + 1, 10, math.MinInt64}, {math.MinInt64 + 9, 1 << 62, math.MinInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64}, {5, math.MaxInt64, 0}, {-5, math.MaxInt64, -math.MaxInt64},
	} {
		if got := bucketLow(c.t, c.d); got != c.want {
			t.Errorf("bucketLow(%d, %d) = %d, want %d", c.t, c.d, got, c.want)
		}
	}
}

// TestTimedDijkstraHeld: ParallelDijkstra's timed search gives the same
// results whether it holds back no vertex (stops at the first that must
// wait), one, or many per round.
func TestTimedDijkstraHeld(t *testing.T) {
	defer func(h int) { distMaxHeld = h }(distMaxHeld)
	rng := rand.New(rand.NewSource(27))
	g, target := fullPAGTimed(rng, 8, 40, 9)
	ref, err := DAG(g, target)
	if err != nil {
		t.Fatal(err)
	}
	tms := timeVariants(rng, g.Time)
	tms["consistent"] = g.Time
	for _, held := range []int{0, 1, 4096} {
		distMaxHeld = held
		for vname, tm := range tms {
			for _, P := range []int{2, 3, 4} {
				name := fmt.Sprintf("held=%d/%s times/P=%d", held, vname, P)
				res, errs := distRun(distShares(withTime(g, tm), target, distRandomBounds(rng, g.N, P)), ParallelDijkstra)
				checkDistResult(t, name, ref, res, errs)
				if st := res[0].Stats; vname == "consistent" {
					t.Logf("%s: %d rounds, %.3f relaxations per edge", name, st.Rounds, float64(st.Relaxations)/float64(st.Edges))
				}
			}
		}
	}
}

// BenchmarkTimedFullPAG: the sequential searches on a full-PAG-like graph
// of about 200k vertices (16 processes, 10 splits), with its times; the
// largest-Dist order (no times) only at 10k vertices, as it is slow.
func BenchmarkTimedFullPAG(b *testing.B) {
	for _, c := range []struct {
		steps int
		time  bool
	}{{6250, true}, {312, true}, {312, false}} {
		g, target := fullPAGTimed(rand.New(rand.NewSource(1)), 16, c.steps, c.steps/10)
		if !c.time {
			g.Time = nil
		}
		for _, a := range []algo{{"dag", (*Solver).DAG}, {"dijkstra", (*Solver).Dijkstra}, deltaAlgo("delta", DefaultDelta)} {
			b.Run(fmt.Sprintf("n=%d/time=%v/%s", g.N, c.time, a.name), func(b *testing.B) {
				s := new(Solver)
				var r *Result
				for i := 0; i < b.N; i++ {
					var err error
					if r, err = a.run(s, g, target); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(r.Stats.Relaxations)/float64(len(g.InSrc)), "relax/edge")
			})
		}
	}
}

// TestOrderWork: on graphs where the order of the vertices by time and by
// distance label differ, the two orders do different work, counted by
// hand. Graph "reorder" (S=0, B=1, X=2, T=3; edges S->B 1, B->T 5,
// B->X 100, X->T 1; times 0, 1, 101, 102, consistent):
//
//   - by distance (largest tentative Dist first), Dijkstra takes T, then
//     B at 5 (relaxing S->B), S, X (B grows to 101), B again (S->B
//     again) and S: 5 relaxations for 4 edges, 5 updates, 6 pops;
//   - Δ-stepping by distance with Δ = 10 (B->X heavy, the rest light)
//     empties [0,10) (T, B, X, S: 3 light relaxations, then B->X heavy),
//     then [100,110) (B, S->B again): 4 light + 1 heavy in 2 phases;
//   - by time (latest first) both take T, X, B, S, each once with its
//     final Dist: 4 relaxations, one per edge, and 4 updates.
//
// "two diamonds" puts a second one before S (S'=4, B'=5, X'=6), so that
// each growth of S is passed on again: by distance 13 relaxations for 8
// edges (Δ-stepping: 10 light, 3 heavy, in 3 phases), by time 8.
//
// Every order gives DAG's result, at one process and distributed.
func TestOrderWork(t *testing.T) {
	type work struct{ relax, updates, pops, light, heavy, phases int64 }
	tests := []struct {
		name   string
		edges  []cpathtest.Edge
		time   []int64
		target int32
		delta  int64
		// Dijkstra and Δ-stepping, by distance and by time
		distDijkstra, distDelta, timeDijkstra, timeDelta work
	}{
		{
			name:  "reorder",
			edges: []cpathtest.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 3, W: 5}, {U: 1, V: 2, W: 100}, {U: 2, V: 3, W: 1}},
			time:  []int64{0, 1, 101, 102}, target: 3, delta: 10,
			distDijkstra: work{relax: 5, updates: 5, pops: 6},
			distDelta:    work{relax: 5, updates: 5, pops: 6, light: 4, heavy: 1, phases: 2},
			timeDijkstra: work{relax: 4, updates: 4, pops: 4},
			timeDelta:    work{relax: 4, updates: 4, pops: 4, light: 3, heavy: 1, phases: 2},
		},
		{
			name: "two diamonds",
			edges: []cpathtest.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 3, W: 5}, {U: 1, V: 2, W: 100}, {U: 2, V: 3, W: 1},
				{U: 4, V: 0, W: 1}, {U: 5, V: 4, W: 1}, {U: 5, V: 6, W: 100}, {U: 6, V: 0, W: 1}},
			time:   []int64{103, 104, 204, 205, 102, 0, 101},
			target: 3, delta: 10,
			distDijkstra: work{relax: 13, updates: 12, pops: 13},
			distDelta:    work{relax: 13, updates: 12, pops: 13, light: 10, heavy: 3, phases: 3},
			timeDijkstra: work{relax: 8, updates: 8, pops: 7},
			timeDelta:    work{relax: 8, updates: 8, pops: 7, light: 6, heavy: 2, phases: 3},
		},
	}
	for _, tc := range tests {
		n := len(tc.time)
		for _, e := range tc.edges {
			if e.W > tc.time[e.V]-tc.time[e.U] {
				t.Fatalf("%s: edge %+v not consistent with the times", tc.name, e)
			}
		}
		g := &Graph{N: n}
		g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(n, tc.edges)
		ref, err := DAG(g, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		timed := withTime(g, tc.time)
		runs := []struct {
			name  string
			g     *Graph
			delta bool
			want  work
		}{
			{"distance/dijkstra", g, false, tc.distDijkstra},
			{"distance/delta", g, true, tc.distDelta},
			{"time/dijkstra", timed, false, tc.timeDijkstra},
			{"time/delta", timed, true, tc.timeDelta},
		}
		for _, r := range runs {
			name := tc.name + "/" + r.name
			var res *Result
			if r.delta {
				res, err = new(Solver).DeltaStepping(r.g, tc.target, tc.delta)
			} else {
				res, err = new(Solver).Dijkstra(r.g, tc.target)
			}
			sameAsDAG(t, name, ref, res, err)
			st := res.Stats
			got := work{st.Relaxations, st.Updates, st.Pops, st.Light, st.Heavy, st.Phases}
			if got != r.want {
				t.Errorf("%s: work %+v, counted by hand %+v", name, got, r.want)
			}
		}
		// Distributed, at 1 to 4 ranks: the same path, and Δ-stepping
		// the same work at every P (its buckets are emptied by all ranks
		// together, as by one). Dijkstra takes each rank's queue in turn
		// between exchanges, so by distance its work depends on the
		// ranks' shares (by time it stays one relaxation per edge); at
		// P = 1 it is the sequential count.
		m := int64(len(tc.edges))
		for P := 1; P <= 4; P++ {
			for _, r := range runs {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, r.name)
				run := ParallelDijkstra
				if r.delta {
					run = distDeltaRun(tc.delta)
				}
				res, errs := distRun(distShares(r.g, tc.target, distEvenBounds(n, P)), run)
				checkDistResult(t, name, ref, res, errs)
				relax := res[0].Stats.Relaxations
				t.Logf("%s: %d relaxations for %d edges", name, relax, m)
				if exact := r.delta || P == 1 || r.g.Time != nil; exact && relax != r.want.relax || relax < m {
					t.Errorf("%s: %d relaxations for %d edges, sequentially %d", name, relax, m, r.want.relax)
				}
			}
		}
	}
}

// TestWorkBound: a search by distance label whose queue outgrows its
// bound gives up with workError on every rank, at the same exchange,
// rather than grow until the machine has no memory left (delta on the
// 198 k-call LAMMPS log took 24 GB before); under the bound it finds
// dag's path. On the "two diamonds" graph of TestOrderWork the queues
// hold 2 entries or more.
func TestWorkBound(t *testing.T) {
	edges := []cpathtest.Edge{{U: 0, V: 1, W: 1}, {U: 1, V: 3, W: 5}, {U: 1, V: 2, W: 100}, {U: 2, V: 3, W: 1},
		{U: 4, V: 0, W: 1}, {U: 5, V: 4, W: 1}, {U: 5, V: 6, W: 100}, {U: 6, V: 0, W: 1}}
	const n, target = 7, 3
	g := &Graph{N: n}
	g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(n, edges)
	ref, err := DAG(g, target)
	if err != nil {
		t.Fatal(err)
	}
	defer func(m, e int64) { minWorkCap, workCapPerVertex = m, e }(minWorkCap, workCapPerVertex)
	workCapPerVertex = 0
	for _, tc := range []struct {
		cap  int64
		fail bool
	}{{2, true}, {1 << 22, false}} {
		minWorkCap = tc.cap
		for P := 1; P <= 3; P++ {
			for _, a := range []distAlgo{{"dijkstra", ParallelDijkstra}, {"delta", distDeltaRun(10)}} {
				name := fmt.Sprintf("cap=%d/P=%d/%s", tc.cap, P, a.name)
				res, errs := distRun(distShares(g, target, distEvenBounds(n, P)), a.run)
				if !tc.fail {
					checkDistResult(t, name, ref, res, errs)
					continue
				}
				for p, e := range errs {
					if e != workError {
						t.Errorf("%s: rank %d returned %v, want the work bound's error", name, p, e)
					}
				}
			}
		}
	}
}
