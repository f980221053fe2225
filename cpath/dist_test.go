package cpath

import (
	"fmt"
	"github.com/cpath/cpath/graph"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
)

// distShares splits g into the DistGraphs of the ranks with the given bounds.
func distShares(g *Graph, target int32, bounds []int32) []*DistGraph {
	P := len(bounds) - 1
	out := make([]*DistGraph, P)
	for p := 0; p < P; p++ {
		lo, hi := bounds[p], bounds[p+1]
		a, b := g.InStart[lo], g.InStart[hi]
		st := make([]int32, hi-lo+1)
		for i := range st {
			st[i] = g.InStart[int(lo)+i] - a
		}
		// Each share's large weights its own, numbered from 0, as a
		// rank's part of the PAG holds them.
		w := g.InWeight.Slice(a, b)
		out[p] = &DistGraph{N: g.N, Bounds: bounds, Lo: lo, Hi: hi, InStart: st,
			InSrc: g.InSrc[a:b], InWeight: graph.WeightsOf(w.Int64s()), Target: target}
		if g.Time != nil {
			out[p].Time = g.Time[lo:hi]
		}
	}
	return out
}

func distEvenBounds(n, P int) []int32 {
	b := make([]int32, P+1)
	for p := range b {
		b[p] = int32(int64(n) * int64(p) / int64(P))
	}
	return b
}

// distRandomBounds cuts [0,n) at random points, so ranks may own nothing.
func distRandomBounds(rng *rand.Rand, n, P int) []int32 {
	b := make([]int32, P+1)
	for p := 1; p < P; p++ {
		b[p] = int32(rng.Intn(n + 1))
	}
	b[P] = int32(n)
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return b
}

type distAlgo struct {
	name string
	run  func(c mpix.Comm, g *DistGraph) (*DistResult, error)
}

func distDeltaRun(d int64) func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
	return func(c mpix.Comm, g *DistGraph) (*DistResult, error) { return ParallelDeltaStepping(c, g, d) }
}

var distAlgos = []distAlgo{
	{"pdijkstra", ParallelDijkstra},
	{"pdelta=default", distDeltaRun(0)},
	{"pdelta=1", distDeltaRun(1)},
	{"pdelta=3", distDeltaRun(3)},
	{"pdelta=huge", distDeltaRun(math.MaxInt64)},
	{"distdag", DistDAG}, // the sweep pipelined over the ranks; Reached counts the path's ties only
}

// distRun runs f on every rank of a job of len(gs) ranks: mpix.Single for
// one, an in-process hub for more.
func distRun(gs []*DistGraph, f func(c mpix.Comm, g *DistGraph) (*DistResult, error)) ([]*DistResult, []error) {
	P := len(gs)
	res := make([]*DistResult, P)
	errs := make([]error, P)
	if P == 1 {
		res[0], errs[0] = f(&mpix.Single{}, gs[0])
		return res, errs
	}
	cpathtest.Run(P, func(c mpix.Comm) { res[c.Rank()], errs[c.Rank()] = f(c, gs[c.Rank()]) })
	return res, errs
}

// distSameError checks that every rank failed, with the same message, or
// none did; it returns the error.
func distSameError(t *testing.T, name string, errs []error) error {
	t.Helper()
	for p, e := range errs {
		if (e == nil) != (errs[0] == nil) || (e != nil && e.Error() != errs[0].Error()) {
			t.Fatalf("%s: rank 0 returned %v, rank %d %v", name, errs[0], p, e)
		}
	}
	return errs[0]
}

// checkDistResult compares a job's results with DAG's.
func checkDistResult(t *testing.T, name string, ref *Result, res []*DistResult, errs []error) {
	t.Helper()
	if err := distSameError(t, name, errs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := res[0]
	if !reflect.DeepEqual(r.Path, ref.Path) {
		t.Fatalf("%s: path %v (%d), dag %v (%d)", name, r.Path.Vertices, r.Path.Length, ref.Path.Vertices, ref.Path.Length)
	}
	if r.Stats.Reached != ref.Stats.Reached && !strings.Contains(name, "/sweep") && !strings.Contains(name, "/distdag") && !strings.Contains(name, "/frames") {
		t.Fatalf("%s: Reached %d, dag %d", name, r.Stats.Reached, ref.Stats.Reached)
	}
	for p, x := range res[1:] {
		if len(x.Path.Vertices) != 0 {
			t.Fatalf("%s: rank %d has a path", name, p+1)
		}
		if x.Stats != r.Stats {
			t.Fatalf("%s: rank %d stats %+v, rank 0 %+v", name, p+1, x.Stats, r.Stats)
		}
	}
	if r.Stats.Pops < int64(r.Stats.Reached) || r.Stats.Rounds < 1 || r.Stats.Relaxations < r.Stats.Updates {
		t.Fatalf("%s: implausible stats %+v", name, r.Stats)
	}
}

func TestDistKnownGraphs(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		edges  []edge
		target int32
	}{
		{"single vertex", 1, nil, 0},
		{"chain", 4, []edge{{0, 1, 5}, {1, 2, 0}, {2, 3, 7}}, 3},
		{"chain reversed ids", 4, []edge{{3, 2, 5}, {2, 1, 0}, {1, 0, 7}}, 0},
		{"diamond tie takes smaller successor", 4, []edge{{0, 2, 3}, {2, 3, 3}, {0, 1, 2}, {1, 3, 4}}, 3},
		{"diamond longer via larger id", 4, []edge{{0, 1, 2}, {1, 3, 4}, {0, 2, 3}, {2, 3, 4}}, 3},
		{"parallel edges", 2, []edge{{0, 1, 3}, {0, 1, 9}, {0, 1, 4}}, 1},
		{"two sources tie, smaller id wins", 4, []edge{{1, 2, 5}, {0, 2, 5}, {2, 3, 1}}, 3},
		{"source beats inner vertex of equal Dist", 3, []edge{{2, 0, 0}, {0, 1, 4}}, 1},
		{"unreachable parts", 7, []edge{{0, 1, 2}, {1, 2, 3}, {2, 6, 1}, {4, 5, 9}, {3, 4, 1}, {1, 3, 8}}, 2},
		{"zero weights everywhere", 4, []edge{{0, 2, 0}, {0, 1, 0}, {1, 2, 0}, {3, 2, 0}}, 2},
		{"target without predecessors", 3, []edge{{0, 1, 4}, {1, 2, 4}}, 0},
		{"heavy and light mixed", 5, []edge{{0, 1, 1}, {1, 2, 1}, {2, 4, 1}, {0, 3, 100}, {3, 4, 1}, {1, 3, 99}}, 4},
		{"zigzag between ranks", 6, []edge{{0, 5, 1}, {5, 1, 1}, {1, 4, 1}, {4, 2, 1}, {2, 3, 1}, {0, 3, 4}}, 3},
	}
	for _, tc := range tests {
		g := build(tc.n, tc.edges)
		ref, err := DAG(g, tc.target)
		if err != nil {
			t.Fatalf("%s: dag: %v", tc.name, err)
		}
		for P := 1; P <= tc.n+1; P++ {
			for _, a := range distAlgos {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, a.name)
				res, errs := distRun(distShares(g, tc.target, distEvenBounds(tc.n, P)), a.run)
				checkDistResult(t, name, ref, res, errs)
			}
		}
	}
}

func TestDistRandomDAGs(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	count := 400
	if testing.Short() {
		count = 60
	}
	for it := 0; it < count; it++ {
		n := 1 + rng.Intn(12)
		if it%2 == 1 {
			n = 1 + rng.Intn(600)
		}
		g, target, ref := randomRef(t, rng, n)
		P := 1 + rng.Intn(5)
		bounds := distEvenBounds(n, P)
		if rng.Intn(2) == 0 {
			bounds = distRandomBounds(rng, n, P)
		}
		for _, a := range distAlgos {
			name := fmt.Sprintf("graph %d (n=%d, m=%d, target %d, bounds %v)/%s", it, n, len(g.InSrc), target, bounds, a.name)
			res, errs := distRun(distShares(g, target, bounds), a.run)
			checkDistResult(t, name, ref, res, errs)
		}
	}
}

// TestDistPAGLike runs the shapes of the benchmarks, one range of
// vertices per process of the run as the analyzer distributes them, with
// exact time differences and with clock error (label-correcting at work).
func TestDistPAGLike(t *testing.T) {
	seeds := int64(3)
	if testing.Short() {
		seeds = 1
	}
	for _, clockErr := range []int64{0, 500} {
		for seed := int64(1); seed <= seeds; seed++ {
			const procs = 8
			g, target := pagLike(4000, procs, clockErr, seed)
			ref, err := DAG(g, target)
			if err != nil {
				t.Fatal(err)
			}
			for _, P := range []int{1, 2, 3, procs} {
				for _, a := range distAlgos[:2] {
					name := fmt.Sprintf("pag clockErr=%d seed=%d P=%d/%s", clockErr, seed, P, a.name)
					res, errs := distRun(distShares(g, target, distEvenBounds(g.N, P)), a.run)
					checkDistResult(t, name, ref, res, errs)
					st := res[0].Stats
					t.Logf("%s: %d rounds, %d phases, %.2f pops/vertex (dag %.2f), %d bytes",
						name, st.Rounds, st.Phases, float64(st.Pops)/float64(g.N), float64(ref.Stats.Pops)/float64(g.N), st.BytesSent)
				}
			}
		}
	}
}

// TestDistChainRounds checks what makes the search fast on chains: a round
// empties the local queues, so the rounds follow the crossings between
// ranks, not the path's length, and the default Δ keeps the phases few.
func TestDistChainRounds(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewSource(3))
	var es []edge
	for v := 0; v+1 < n; v++ {
		es = append(es, edge{int32(v), int32(v + 1), rng.Int63n(1000)})
	}
	for _, rev := range []bool{false, true} {
		es := append([]edge(nil), es...)
		target := int32(n - 1)
		if rev {
			for i := range es {
				es[i].U, es[i].V = n-1-es[i].U, n-1-es[i].V
			}
			target = 0
		}
		g := build(n, es)
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatal(err)
		}
		for _, P := range []int{1, 2, 4} {
			name := fmt.Sprintf("chain rev=%v P=%d", rev, P)
			res, errs := distRun(distShares(g, target, distEvenBounds(n, P)), ParallelDijkstra)
			checkDistResult(t, name+"/pdijkstra", ref, res, errs)
			// P-1 crossings, then a round in which nobody ships anything.
			if st := res[0].Stats; st.Rounds != int64(P) || st.Pops != n {
				t.Errorf("%s/pdijkstra: %d rounds, %d pops, want %d, %d", name, st.Rounds, st.Pops, P, n)
			}
			// The search ships a header per rank pair per round and one
			// relaxation per crossing; the path's vertices (4 bytes each)
			// go to rank 0.
			if P > 1 && res[0].Stats.BytesSent > 4*n+100*int64(P*P*P) {
				t.Errorf("%s/pdijkstra: %d bytes sent", name, res[0].Stats.BytesSent)
			}
			res, errs = distRun(distShares(g, target, distEvenBounds(n, P)), distDeltaRun(0))
			checkDistResult(t, name+"/pdelta", ref, res, errs)
			if st := res[0].Stats; st.Phases > distDeltaPhases+2 || st.Rounds > 2*st.Phases+int64(P) {
				t.Errorf("%s/pdelta: %d phases, %d rounds", name, st.Phases, st.Rounds)
			}
		}
	}
}

// checkDistCycle checks a job's verdict on a cycle case: the same error
// on every rank, one that says cycle, or none where the cycle cannot
// matter (not tc.positive).
func checkDistCycle(t *testing.T, name string, tc cycleCase, res []*DistResult, errs []error) {
	t.Helper()
	err := distSameError(t, name, errs)
	switch {
	case err != nil && !strings.Contains(err.Error(), "cycle"):
		t.Errorf("%s: error %q does not say cycle", name, err)
	case err == nil && tc.positive:
		t.Errorf("%s: no error, path %v", name, res[0].Path.Vertices)
	}
}

func TestDistCycles(t *testing.T) {
	tests := cycleCases(3000, 500)
	for _, tc := range tests {
		g := build(tc.n, tc.edges)
		for _, P := range []int{1, 2, 3} {
			for _, a := range distAlgos {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, a.name)
				res, errs := distRun(distShares(g, tc.target, distEvenBounds(tc.n, P)), a.run)
				checkDistCycle(t, name, tc, res, errs)
			}
		}
	}
	// A cycle that cannot reach the target is no obstacle.
	g := build(5, []edge{{1, 2, 1}, {2, 1, 1}, {0, 3, 2}, {4, 3, 1}})
	ref, _ := DAG(g, 3)
	for _, a := range distAlgos {
		res, errs := distRun(distShares(g, 3, distEvenBounds(5, 2)), a.run)
		checkDistResult(t, "unreachable cycle/"+a.name, ref, res, errs)
	}
}

func TestDistBadInput(t *testing.T) {
	g := build(6, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}})
	type mod func(gs []*DistGraph) []*DistGraph
	copyShare := func(d *DistGraph) *DistGraph {
		e := *d
		e.InSrc = append([]int32(nil), d.InSrc...)
		e.InWeight = graph.Weights{W: slices.Clone(d.InWeight.W), Big: slices.Clone(d.InWeight.Big)}
		e.InStart = append([]int32(nil), d.InStart...)
		e.Bounds = append([]int32(nil), d.Bounds...)
		return &e
	}
	tests := []struct {
		name string
		f    mod
	}{
		{"target too large", func(gs []*DistGraph) []*DistGraph {
			for _, d := range gs {
				d.Target = 6
			}
			return gs
		}},
		{"negative target", func(gs []*DistGraph) []*DistGraph {
			for _, d := range gs {
				d.Target = -1
			}
			return gs
		}},
		{"targets differ", func(gs []*DistGraph) []*DistGraph { gs[len(gs)-1].Target = 4; return gs }},
		{"source out of range on the last rank", func(gs []*DistGraph) []*DistGraph {
			d := gs[len(gs)-1]
			d.InSrc[len(d.InSrc)-1] = 9
			return gs
		}},
		{"negative weight", func(gs []*DistGraph) []*DistGraph { gs[0].InWeight.Set(0, -1); return gs }},
		{"short InStart", func(gs []*DistGraph) []*DistGraph { gs[0].InStart = gs[0].InStart[:1]; return gs }},
		{"InStart decreases", func(gs []*DistGraph) []*DistGraph { gs[0].InStart[1] = 5; return gs }},
		{"range not the bounds'", func(gs []*DistGraph) []*DistGraph { gs[0].Hi--; return gs }},
		{"bounds differ", func(gs []*DistGraph) []*DistGraph {
			if len(gs) > 1 {
				gs[1].Bounds[1]++
				gs[1].Lo++
				gs[1].InStart = gs[1].InStart[1:]
				for i := range gs[1].InStart {
					gs[1].InStart[i]--
				}
				gs[1].InSrc, gs[1].InWeight = gs[1].InSrc[1:], gs[1].InWeight.Slice(1, int32(gs[1].InWeight.Len()))
			} else {
				gs[0].Bounds = []int32{0, 3, 6}
			}
			return gs
		}},
		{"N differs", func(gs []*DistGraph) []*DistGraph {
			gs[0].N = 7
			gs[0].Bounds[len(gs[0].Bounds)-1] = 7
			return gs
		}},
		{"nil share", func(gs []*DistGraph) []*DistGraph { gs[len(gs)-1] = nil; return gs }},
	}
	for _, tc := range tests {
		for _, P := range []int{1, 2, 3} {
			for _, a := range distAlgos[:2] {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, a.name)
				gs := distShares(g, 5, distEvenBounds(6, P))
				for i := range gs {
					gs[i] = copyShare(gs[i])
				}
				if tc.name == "targets differ" && P == 1 {
					continue
				}
				_, errs := distRun(tc.f(gs), a.run)
				if distSameError(t, name, errs) == nil {
					t.Errorf("%s: accepted", name)
				}
			}
		}
	}
	// Ranks that disagree on delta must fail together.
	gs := distShares(g, 5, distEvenBounds(6, 2))
	_, errs := distRun(gs, func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
		return ParallelDeltaStepping(c, g, int64(c.Rank()))
	})
	if err := distSameError(t, "delta differs", errs); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("delta differs: %v", err)
	}
}

func TestDistDefaultDelta(t *testing.T) {
	var es []edge
	for v := 0; v < 999; v++ {
		es = append(es, edge{int32(v), int32(v + 1), 640})
	}
	es = append(es, edge{0, 1, 0})
	g := build(1000, es)
	for _, P := range []int{1, 2, 3} {
		gs := distShares(g, 999, distEvenBounds(1000, P))
		got := make([]int64, P)
		distRun(gs, func(c mpix.Comm, d *DistGraph) (*DistResult, error) {
			var err error
			got[c.Rank()], err = DistDefaultDelta(c, d)
			return nil, err
		})
		for _, d := range got {
			if d != 999*640/64 {
				t.Errorf("P=%d: DistDefaultDelta %v, want %d", P, got, 999*640/64)
			}
		}
	}
	small := build(3, []edge{{0, 1, 0}, {0, 1, 2}, {1, 2, 5}})
	if d, _ := DistDefaultDelta(&mpix.Single{}, distShares(small, 2, distEvenBounds(3, 1))[0]); d != 4 {
		t.Errorf("DistDefaultDelta on a small graph = %d, want the mean 4", d)
	}
	if d, _ := DistDefaultDelta(&mpix.Single{}, distShares(build(2, []edge{{0, 1, 0}}), 1, distEvenBounds(2, 1))[0]); d != 1 {
		t.Errorf("DistDefaultDelta without positive weights = %d", d)
	}
}
