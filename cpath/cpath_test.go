package cpath

import (
	"fmt"
	"github.com/cpath/cpath/graph"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
)

// edge is cpathtest's, as a local type so that tables can list edges
// without field names.
type edge cpathtest.Edge

// build makes the CSR-by-destination graph of n vertices and edges es.
func build(n int, es []edge) *Graph {
	g := &Graph{N: n}
	g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(n, fromEdges(es))
	return g
}

func fromEdges(es []edge) []cpathtest.Edge {
	out := make([]cpathtest.Edge, len(es))
	for i, e := range es {
		out[i] = cpathtest.Edge(e)
	}
	return out
}

func toEdges(es []cpathtest.Edge) []edge {
	out := make([]edge, len(es))
	for i, e := range es {
		out[i] = edge(e)
	}
	return out
}

// randomDAG is cpathtest.RandomDAG with local edges.
// randomRef is a random DAG of n vertices (randomDAG), its target and
// DAG's result on it, the reference the other algorithms must match.
func randomRef(t *testing.T, rng *rand.Rand, n int) (*Graph, int32, *Result) {
	t.Helper()
	es, target := randomDAG(rng, n)
	g := build(n, es)
	ref, err := DAG(g, target)
	if err != nil {
		t.Fatal(err)
	}
	return g, target, ref
}

func randomDAG(rng *rand.Rand, n int) ([]edge, int32) {
	es, target := cpathtest.RandomDAG(rng, n)
	return toEdges(es), target
}

type algo struct {
	name string
	run  func(s *Solver, g *Graph, t int32) (*Result, error)
}

func deltaAlgo(name string, delta func(*Graph) int64) algo {
	return algo{name, func(s *Solver, g *Graph, t int32) (*Result, error) { return s.DeltaStepping(g, t, delta(g)) }}
}

func fixed(d int64) func(*Graph) int64 { return func(*Graph) int64 { return d } }

var algos = []algo{
	{"dag", (*Solver).DAG},
	{"dijkstra", (*Solver).Dijkstra},
	deltaAlgo("delta=1", fixed(1)),
	deltaAlgo("delta=3", fixed(3)),
	deltaAlgo("delta=default", DefaultDelta),
	deltaAlgo("delta=huge", fixed(math.MaxInt64)),
}

const U = Unreached

func TestKnownGraphs(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		edges  []edge
		target int32
		dist   []int64
		succ   []int32
		path   []int32
		length int64
	}{
		{"single vertex", 1, nil, 0, []int64{0}, []int32{-1}, []int32{0}, 0},
		{"chain", 4, []edge{{0, 1, 5}, {1, 2, 0}, {2, 3, 7}}, 3,
			[]int64{12, 7, 7, 0}, []int32{1, 2, 3, -1}, []int32{0, 1, 2, 3}, 12},
		{"chain reversed ids", 4, []edge{{3, 2, 5}, {2, 1, 0}, {1, 0, 7}}, 0,
			[]int64{0, 7, 7, 12}, []int32{-1, 0, 1, 2}, []int32{3, 2, 1, 0}, 12},
		{"diamond tie takes smaller successor", 4, []edge{{0, 2, 3}, {2, 3, 3}, {0, 1, 2}, {1, 3, 4}}, 3,
			[]int64{6, 4, 3, 0}, []int32{1, 3, 3, -1}, []int32{0, 1, 3}, 6},
		{"diamond longer via larger id", 4, []edge{{0, 1, 2}, {1, 3, 4}, {0, 2, 3}, {2, 3, 4}}, 3,
			[]int64{7, 4, 4, 0}, []int32{2, 3, 3, -1}, []int32{0, 2, 3}, 7},
		{"parallel edges", 2, []edge{{0, 1, 3}, {0, 1, 9}, {0, 1, 4}}, 1,
			[]int64{9, 0}, []int32{1, -1}, []int32{0, 1}, 9},
		{"two sources, longer wins", 4, []edge{{0, 2, 5}, {1, 2, 7}, {2, 3, 1}}, 3,
			[]int64{6, 8, 1, 0}, []int32{2, 2, 3, -1}, []int32{1, 2, 3}, 8},
		{"two sources tie, smaller id wins", 4, []edge{{1, 2, 5}, {0, 2, 5}, {2, 3, 1}}, 3,
			[]int64{6, 6, 1, 0}, []int32{2, 2, 3, -1}, []int32{0, 2, 3}, 6},
		{"source beats inner vertex of equal Dist", 3, []edge{{2, 0, 0}, {0, 1, 4}}, 1,
			[]int64{4, 0, 4}, []int32{1, -1, 0}, []int32{2, 0, 1}, 4},
		{"unreachable parts", 7, []edge{{0, 1, 2}, {1, 2, 3}, {2, 6, 1}, {4, 5, 9}, {3, 4, 1}, {1, 3, 8}}, 2,
			[]int64{5, 3, 0, U, U, U, U}, []int32{1, 2, -1, -1, -1, -1, -1}, []int32{0, 1, 2}, 5},
		{"zero weights everywhere", 4, []edge{{0, 2, 0}, {0, 1, 0}, {1, 2, 0}, {3, 2, 0}}, 2,
			[]int64{0, 0, 0, 0}, []int32{1, 2, -1, 2}, []int32{0, 1, 2}, 0},
		{"zero-weight tail", 4, []edge{{0, 1, 0}, {1, 2, 5}, {2, 3, 0}}, 3,
			[]int64{5, 5, 0, 0}, []int32{1, 2, 3, -1}, []int32{0, 1, 2, 3}, 5},
		{"target without predecessors", 3, []edge{{0, 1, 4}, {1, 2, 4}}, 0,
			[]int64{0, U, U}, []int32{-1, -1, -1}, []int32{0}, 0},
		{"heavy and light mixed", 5, []edge{{0, 1, 1}, {1, 2, 1}, {2, 4, 1}, {0, 3, 100}, {3, 4, 1}, {1, 3, 99}}, 4,
			[]int64{101, 100, 1, 1, 0}, []int32{1, 3, 4, 4, -1}, []int32{0, 1, 3, 4}, 101},
	}
	for _, tc := range tests {
		g := build(tc.n, tc.edges)
		if err := g.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, a := range algos {
			r, err := a.run(new(Solver), g, tc.target)
			if err != nil {
				t.Errorf("%s/%s: %v", tc.name, a.name, err)
				continue
			}
			if !reflect.DeepEqual(r.Dist, tc.dist) || !reflect.DeepEqual(r.Succ, tc.succ) {
				t.Errorf("%s/%s: Dist %v Succ %v, want %v %v", tc.name, a.name, r.Dist, r.Succ, tc.dist, tc.succ)
			}
			if !reflect.DeepEqual(r.Path.Vertices, tc.path) || r.Path.Length != tc.length {
				t.Errorf("%s/%s: path %v (%d), want %v (%d)", tc.name, a.name, r.Path.Vertices, r.Path.Length, tc.path, tc.length)
			}
			checkResult(t, g, tc.target, r)
		}
		ref, _ := DAG(g, tc.target)
		checkDAGPath(t, tc.name, new(Solver), g, tc.target, ref)
	}
}

// checkDAGPath checks that Solver.DAGPath finds ref's path (DAG's), vertex
// for vertex, and counts the same work, pipelined or not, keeping the
// order it finished the vertices in or not.
func checkDAGPath(t *testing.T, name string, s *Solver, g *Graph, target int32, ref *Result) {
	t.Helper()
	for _, pipeline := range []bool{false, true} {
		for _, keep := range []bool{true, false} {
			how := fmt.Sprintf("pipelined %v, keeping the order %v", pipeline, keep)
			p, st, err := s.dagPath(g, target, pipeline, keep)
			if err != nil {
				t.Fatalf("%s: DAGPath (%s): %v", name, how, err)
			}
			if !reflect.DeepEqual(p, ref.Path) {
				t.Fatalf("%s: DAGPath's path (%s) %v (%d), DAG's %v (%d)", name, how, p.Vertices, p.Length, ref.Path.Vertices, ref.Path.Length)
			}
			if st.Reached != ref.Stats.Reached || st.Relaxations != ref.Stats.Relaxations || st.Pops != ref.Stats.Pops {
				t.Fatalf("%s: DAGPath's stats (%s) %+v, DAG's %+v", name, how, st, ref.Stats)
			}
			if !keep {
				if len(s.Finished()) != 0 {
					t.Fatalf("%s: DAGPath (%s) kept %d vertices of its order", name, how, len(s.Finished()))
				}
				continue
			}
			checkFinished(t, fmt.Sprintf("%s (%s)", name, how), g, target, s.Finished())
		}
	}
}

// checkFinished: the order DAGPath finished the vertices in is a
// topological order of the target's ancestors (and the target), and
// TopoOrder's vertices after it make one of every vertex, each once.
func checkFinished(t *testing.T, name string, g *Graph, target int32, first []int32) {
	t.Helper()
	ancestor := make([]bool, g.N)
	ancestor[target] = true
	for stack := []int32{target}; len(stack) > 0; {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range g.InSrc[g.InStart[v]:g.InStart[v+1]] {
			if !ancestor[u] {
				ancestor[u] = true
				stack = append(stack, u)
			}
		}
	}
	want := 0
	for _, a := range ancestor {
		if a {
			want++
		}
	}
	if len(first) != want {
		t.Fatalf("%s: %d vertices finished, want the %d ancestors of %d", name, len(first), want, target)
	}
	order := slices.Clone(first)
	if err := TopoOrder(g, first, func(v int32) { order = append(order, v) }); err != nil {
		t.Fatalf("%s: TopoOrder: %v", name, err)
	}
	if len(order) != g.N || !slices.Equal(order[:len(first)], first) {
		t.Fatalf("%s: TopoOrder gave %d vertices (of %d), starting %v; want %v first", name, len(order), g.N, order[:min(len(order), 8)], first[:min(len(first), 8)])
	}
	pos := make([]int, g.N)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range order {
		if pos[v] >= 0 {
			t.Fatalf("%s: vertex %d twice in the order", name, v)
		}
		pos[v] = i
	}
	for v := int32(0); int(v) < g.N; v++ {
		for _, u := range g.InSrc[g.InStart[v]:g.InStart[v+1]] {
			if pos[u] >= pos[v] {
				t.Fatalf("%s: edge %d->%d, but %d comes at %d and %d at %d", name, u, v, u, pos[u], v, pos[v])
			}
			if i := pos[v]; i < len(first) && !ancestor[u] {
				t.Fatalf("%s: %d is in the order finished but its cause %d is no ancestor", name, v, u)
			}
		}
		if (pos[v] < len(first)) != ancestor[v] {
			t.Fatalf("%s: vertex %d at %d: ancestor %v, but %d finished", name, v, pos[v], ancestor[v], len(first))
		}
	}
}

// cycleCase is a graph with a cycle among the target's ancestors.
type cycleCase struct {
	name     string
	n        int
	edges    []edge
	target   int32
	positive bool // a positive cycle: every algorithm must report it; zero ones only must not hang (and DAG reports them)
}

// cycleCases are the cycles every algorithm is tested on, with rings of
// ring vertices (zeroRing for the zero-weight one).
func cycleCases(ring, zeroRing int) []cycleCase {
	ringOf := func(n int, w int64) []edge { // 1..n-1 in a ring, leaving to 0
		var es []edge
		for i := 1; i < n; i++ {
			es = append(es, edge{int32(i), int32(i%(n-1) + 1), w})
		}
		return append(es, edge{1, 0, 1})
	}
	return []cycleCase{
		{"self loop", 2, []edge{{1, 1, 1}, {1, 0, 1}}, 0, true},
		{"self loop at target", 1, []edge{{0, 0, 1}}, 0, true},
		{"two-cycle", 3, []edge{{1, 2, 3}, {2, 1, 1}, {2, 0, 1}}, 0, true},
		{"long ring", ring, ringOf(ring, 1), 0, true},
		{"zero self loop", 2, []edge{{1, 1, 0}, {1, 0, 1}}, 0, false},
		{"zero two-cycle, Succ loops", 4, []edge{{1, 2, 0}, {2, 1, 0}, {2, 3, 5}, {0, 1, 1}}, 3, false},
		{"zero two-cycle", 4, []edge{{1, 2, 0}, {2, 1, 0}, {1, 0, 5}, {3, 2, 1}}, 0, false},
		{"zero long ring", zeroRing, ringOf(zeroRing, 0), 0, false},
		{"zero ring without source", 3, []edge{{1, 2, 0}, {2, 1, 0}, {1, 0, 0}}, 0, false},
	}
}

func TestCycles(t *testing.T) {
	tests := cycleCases(20000, 2000)
	for _, tc := range tests {
		g := build(tc.n, tc.edges)
		for _, a := range algos {
			r, err := a.run(new(Solver), g, tc.target)
			switch {
			case err != nil && !strings.Contains(err.Error(), "cycle"):
				t.Errorf("%s/%s: error %q does not say cycle", tc.name, a.name, err)
			case err == nil && (tc.positive || a.name == "dag"):
				t.Errorf("%s/%s: no error, path %v", tc.name, a.name, r.Path.Vertices)
			}
		}
		for _, pipeline := range []bool{false, true} {
			for _, keep := range []bool{true, false} {
				if p, _, err := new(Solver).dagPath(g, tc.target, pipeline, keep); err == nil || !strings.Contains(err.Error(), "cycle") {
					t.Errorf("%s/DAGPath (pipelined %v, keeping the order %v): error %v, path %v, want a cycle", tc.name, pipeline, keep, err, p.Vertices)
				}
			}
		}
	}
	// A cycle that cannot reach the target is no obstacle.
	g := build(5, []edge{{1, 2, 1}, {2, 1, 1}, {0, 3, 2}, {4, 3, 1}})
	for _, a := range algos {
		if r, err := a.run(new(Solver), g, 3); err != nil || r.Path.Length != 2 {
			t.Errorf("unreachable cycle/%s: %v %+v", a.name, err, r)
		}
	}
}

func TestBadInput(t *testing.T) {
	g := build(3, []edge{{0, 1, 1}})
	for _, a := range algos {
		for _, target := range []int32{-1, 3} {
			if _, err := a.run(new(Solver), g, target); err == nil {
				t.Errorf("%s: target %d accepted", a.name, target)
			}
		}
		if _, err := a.run(new(Solver), &Graph{N: 2, InStart: []int32{0, 0}}, 0); err == nil {
			t.Errorf("%s: short InStart accepted", a.name)
		}
		if _, err := a.run(new(Solver), nil, 0); err == nil {
			t.Errorf("%s: nil graph accepted", a.name)
		}
	}
	for _, target := range []int32{-1, 3} {
		if _, _, err := new(Solver).DAGPath(g, target); err == nil {
			t.Errorf("DAGPath: target %d accepted", target)
		}
	}
	for _, d := range []int64{0, -5} {
		if _, err := DeltaStepping(g, 1, d); err == nil {
			t.Errorf("delta %d accepted", d)
		}
	}
	bad := []*Graph{
		{N: 2, InStart: []int32{0, 1, 1}, InSrc: []int32{2}, InWeight: graph.WeightsOf([]int64{1})},
		{N: 2, InStart: []int32{0, 1, 1}, InSrc: []int32{1}, InWeight: graph.WeightsOf([]int64{-1})},
		{N: 2, InStart: []int32{0, 1, 0}, InSrc: []int32{1}, InWeight: graph.WeightsOf([]int64{1})},
		{N: 2, InStart: []int32{1, 1, 1}, InSrc: []int32{1}, InWeight: graph.WeightsOf([]int64{1})},
	}
	for i, g := range bad {
		if g.Validate() == nil {
			t.Errorf("bad graph %d validated", i)
		}
	}
	if d := DefaultDelta(build(2, []edge{{0, 1, 0}})); d != 1 {
		t.Errorf("DefaultDelta without positive weights = %d", d)
	}
	if d := DefaultDelta(build(3, []edge{{0, 1, 0}, {0, 1, 2}, {1, 2, 5}})); d != 4 {
		t.Errorf("DefaultDelta = %d, want ceil(7/2) = 4", d)
	}
}

// checkResult verifies r without trusting any algorithm: on a DAG the
// longest distances are the unique solution of Dist[t] = 0 and Dist[u] =
// max over edges u->v of w + Dist[v], and Succ must pick the smallest v
// attaining it; the path must be a real path from the canonical source
// whose weights sum to Length.
func checkResult(t *testing.T, g *Graph, target int32, r *Result) {
	t.Helper()
	n := g.N
	best := make([]int64, n)
	arg := make([]int32, n)
	maxW := map[[2]int32]int64{}
	for i := range best {
		best[i], arg[i] = Unreached, NoVertex
	}
	for v := int32(0); v < int32(n); v++ {
		for j := g.InStart[v]; j < g.InStart[v+1]; j++ {
			u, w := g.InSrc[j], g.InWeight.At(j)
			if old, ok := maxW[[2]int32{u, v}]; !ok || w > old {
				maxW[[2]int32{u, v}] = w
			}
			if r.Dist[v] == Unreached {
				continue
			}
			if c := r.Dist[v] + w; c > best[u] || (c == best[u] && v < arg[u]) {
				best[u], arg[u] = c, v
			}
		}
	}
	best[target], arg[target] = 0, NoVertex
	for u := 0; u < n; u++ {
		if r.Dist[u] != best[u] || r.Succ[u] != arg[u] {
			t.Fatalf("vertex %d: Dist %d Succ %d, Bellman equations give %d %d", u, r.Dist[u], r.Succ[u], best[u], arg[u])
		}
	}
	p := r.Path.Vertices
	if len(p) == 0 || p[len(p)-1] != target {
		t.Fatalf("path %v does not end at target %d", p, target)
	}
	src := p[0]
	if g.InStart[src] != g.InStart[src+1] {
		t.Fatalf("path starts at %d, which has predecessors", src)
	}
	for v := int32(0); v < int32(n); v++ {
		if g.InStart[v] == g.InStart[v+1] && r.Dist[v] != Unreached &&
			(r.Dist[v] > r.Dist[src] || (r.Dist[v] == r.Dist[src] && v < src)) {
			t.Fatalf("path starts at %d (Dist %d), source %d has Dist %d", src, r.Dist[src], v, r.Dist[v])
		}
	}
	var sum int64
	for i := 0; i+1 < len(p); i++ {
		w, ok := maxW[[2]int32{p[i], p[i+1]}]
		if !ok {
			t.Fatalf("path step %d->%d is not an edge", p[i], p[i+1])
		}
		sum += w
	}
	if sum != r.Path.Length || r.Path.Length != r.Dist[src] {
		t.Fatalf("path weights sum to %d, Length %d, Dist[source] %d", sum, r.Path.Length, r.Dist[src])
	}
}

// bruteForce enumerates every path into target and returns the longest
// distance from each vertex (Unreached if none), for n <= 12 or so.
func bruteForce(n int, es []edge, target int32) []int64 {
	out := make([][]edge, n)
	for _, e := range es {
		out[e.U] = append(out[e.U], e)
	}
	var walk func(v int32, len int64) int64
	walk = func(v int32, l int64) int64 {
		best := Unreached
		if v == target {
			best = l
		}
		for _, e := range out[v] {
			if x := walk(e.V, l+e.W); x > best {
				best = x
			}
		}
		return best
	}
	d := make([]int64, n)
	for v := range d {
		d[v] = walk(int32(v), 0)
	}
	return d
}

func TestRandomDAGs(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	solvers := make([]Solver, len(algos)) // reused across graphs, as in production
	var dagPath Solver
	count := 3000
	if testing.Short() {
		count = 300
	}
	for it := 0; it < count; it++ {
		var n int
		switch rng.Intn(3) {
		case 0:
			n = 1 + rng.Intn(12)
		case 1:
			n = 1 + rng.Intn(200)
		default:
			n = 1 + rng.Intn(3000)
		}
		es, target := randomDAG(rng, n)
		g := build(n, es)
		name := fmt.Sprintf("graph %d (n=%d, m=%d, target %d)", it, n, len(es), target)
		ref, err := solvers[0].DAG(g, target)
		if err != nil {
			t.Fatalf("%s: dag: %v", name, err)
		}
		checkResult(t, g, target, ref)
		checkDAGPath(t, name, &dagPath, g, target, ref)
		if n <= 12 {
			bf := bruteForce(n, es, target)
			if !reflect.DeepEqual(bf, ref.Dist) {
				t.Fatalf("%s: Dist %v, brute force %v", name, ref.Dist, bf)
			}
			for v, d := range bf {
				if g.InStart[v] == g.InStart[v+1] && d > ref.Path.Length {
					t.Fatalf("%s: source %d has a path of %d > Length %d", name, v, d, ref.Path.Length)
				}
			}
		}
		for i, a := range algos[1:] {
			r, err := a.run(&solvers[i+1], g, target)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, a.name, err)
			}
			if !reflect.DeepEqual(r.Dist, ref.Dist) || !reflect.DeepEqual(r.Succ, ref.Succ) ||
				!reflect.DeepEqual(r.Path, ref.Path) || r.Stats.Reached != ref.Stats.Reached {
				checkResult(t, g, target, r) // says where it differs
				t.Fatalf("%s: %s differs from dag", name, a.name)
			}
		}
	}
}

// TestDAGPathLarge: graphs of many of the pipelined search's batches, so
// that its work runs beside the search rather than after it: chains (the
// ranks' calls) with edges between them, always forward in position, and
// a last vertex after every chain's end; weights of 0-3, for ties.
func TestDAGPathLarge(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for it := 0; it < 4; it++ {
		chains, length := 2+rng.Intn(15), 2000+rng.Intn(10_000)
		n := chains*length + 1
		var es []edge
		for c := 0; c < chains; c++ {
			for i := 1; i < length; i++ {
				es = append(es, edge{int32(c*length + i - 1), int32(c*length + i), int64(rng.Intn(4))})
			}
			es = append(es, edge{int32(c*length + length - 1), int32(n - 1), int64(rng.Intn(4))})
		}
		for k := 0; k < chains*length/4; k++ {
			i := rng.Intn(length - 1)
			j := i + 1 + rng.Intn(min(50, length-1-i))
			es = append(es, edge{int32(rng.Intn(chains)*length + i), int32(rng.Intn(chains)*length + j), int64(rng.Intn(4))})
		}
		g := build(n, es)
		ref, err := DAG(g, int32(n-1))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("graph %d: %d vertices, %d reach the target", it, n, ref.Stats.Reached)
		checkDAGPath(t, fmt.Sprintf("graph %d (n=%d)", it, n), new(Solver), g, int32(n-1), ref)
	}
}

// TestDeepSearch: DAGPath finds DAG's path on PAG-like graphs whose
// searches go hundreds of thousands of vertices deep, with one Solver
// serving graphs of growing and shrinking size.
func TestDeepSearch(t *testing.T) {
	s := new(Solver)
	for _, calls := range []int{1000, 300_000, 20_000, 600_000} {
		g, target := pagLike(calls, 2, 0, int64(calls))
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatal(err)
		}
		checkDAGPath(t, fmt.Sprintf("pagLike(%d)", calls), s, g, target, ref)
	}
}
