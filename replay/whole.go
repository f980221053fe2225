package replay

import (
	"fmt"
	"sync"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// whole is the run's whole PAG on rank 0, as the re-solves take it: its
// vertices renumbered in a topological order, found once, with the rows
// of incoming edges in that order and their sources as positions in it.
// A solve is then one sequential pass over the rows whose sources were
// computed shortly before: about ten times faster than taking the
// vertices in that order from the rows by vertex id, spread over all the
// ranks' ranges. It costs a copy of the edges (13 bytes each).
type whole struct {
	n         int
	order     []int32 // by position: the vertex id
	start     []int32 // by position: its row is edges [start[i], start[i+1])
	src       []int32 // by edge: the source's position
	weight    []int64
	kind      []graph.EdgeKind
	op        []trace.Op // by call
	rankStart []int32
	ranks     int
	calls     int32 // vertex ids [0, 2·calls) are the calls' S and E
}

// solver is the scratch of one solve at a time, by position: each
// vertex's longest distance from a source and the edge it came over (-1
// at a source).
type solver struct {
	*whole
	dist []int64
	pred []int32
}

func (w *whole) newSolver() *solver {
	return &solver{whole: w, dist: make([]int64, w.n), pred: make([]int32, w.n)}
}

// parallel runs the jobs on workers solvers at once, each job on one.
func (w *whole) parallel(workers int, jobs []func(s *solver)) {
	workers = max(1, min(workers, len(jobs)))
	next := make(chan func(*solver))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := w.newSolver()
			for job := range next {
				job(s)
			}
		}()
	}
	for _, job := range jobs {
		next <- job
	}
	close(next)
	wg.Wait()
}

// rule is the weights of one solve, each edge's weight times a factor: by
// kind, and for program edges (the computation before a call) also by the
// call: its rank's vertex range, whether its call site is in a set, and
// whether it lies in the POP window.
type rule struct {
	mul            [numKinds]float64
	rankLo, rankHi int32 // program edges into these vertices: times rankMul
	rankMul        float64
	sites          bits // program edges into S(c) for c in sites: times siteMul
	siteMul        float64
	// Program edges into S(c) for c in notUseful, outside the POP window,
	// are times outside instead: 0 in the ideal run, 1 (unchanged) when a
	// rank's useful computation is balanced.
	notUseful bits
	outside   float64
	// The MPI calls in fixed (MPI_Init, MPI_Finalize, anything outside the
	// window) keep the weights of the edges into their ends.
	fixed bits
}

const numKinds = int(graph.EdgeHubOut) + 1

var ones = func() (m [numKinds]float64) {
	for k := range m {
		m[k] = 1
	}
	return m
}()

// identity is the rule of the run as it was.
func identity() *rule {
	return &rule{mul: ones, rankMul: 1, siteMul: 1, outside: 1}
}

// transferKinds are the weights the POP ideal network makes free: the
// time inside MPI calls that is not waiting (their own activity: copies,
// protocol, the collective's work once everyone is there) and the
// transfers of messages and collectives. Waiting has no weight in the
// PAG: it comes back as the longest path's slack.
var transferKinds = []graph.EdgeKind{graph.EdgeCall, graph.EdgeLateSender, graph.EdgeLateReceiver, graph.EdgeCollective, graph.EdgeHubOut}

// usefulOnly is the rule of the POP ideal run: only the useful computation
// (program edges in the window) weighs.
func usefulOnly(notUseful bits) *rule {
	r := &rule{rankMul: 1, siteMul: 1, notUseful: notUseful, outside: 0}
	r.mul[graph.EdgeProgram] = 1
	return r
}

// progMul is the factor of the program edges into vertex v (an S vertex).
func (r *rule) progMul(v int32) float64 {
	m := r.mul[graph.EdgeProgram]
	c := v >> 1
	if r.notUseful != nil && r.notUseful.get(c) {
		return m * r.outside
	}
	if v >= r.rankLo && v < r.rankHi {
		m *= r.rankMul
	}
	if r.sites != nil && r.sites.get(c) {
		m *= r.siteMul
	}
	return m
}

// isIdentity reports whether the rule changes nothing.
func (r *rule) isIdentity() bool {
	return r.mul == ones && r.rankMul == 1 && r.siteMul == 1 && (r.notUseful == nil || r.outside == 1)
}

// rowMul is the factors of the edges into vertex v: by kind, and for its
// program edges (if v is a call's start).
func (w *whole) rowMul(r *rule, v int32) (mul *[numKinds]float64, prog float64) {
	if v < 2*w.calls {
		if v&1 == 0 {
			return &r.mul, r.progMul(v)
		}
		if r.fixed != nil && r.fixed.get(v>>1) {
			return &ones, 1
		}
	}
	return &r.mul, r.mul[graph.EdgeProgram]
}

// scale is weight w (non-negative) times m, rounded.
func scale(w int64, m float64) int64 {
	if m == 1 {
		return w
	}
	return int64(float64(w)*m + 0.5)
}

// newWhole renumbers the gathered graph in topological order.
func newWhole(g *cpath.Graph, kind []graph.EdgeKind, op []trace.Op, rankStart []int32, ranks int) (*whole, error) {
	if len(kind) != len(g.InSrc) {
		return nil, fmt.Errorf("replay: %d edge kinds for %d edges", len(kind), len(g.InSrc))
	}
	calls := rankStart[ranks]
	if int(calls) != len(op) || 2*int(calls) > g.N {
		return nil, fmt.Errorf("replay: %d operations for %d calls in a graph of %d vertices", len(op), calls, g.N)
	}
	order, err := topoOrder(g)
	if err != nil {
		return nil, err
	}
	n, m := g.N, len(g.InSrc)
	w := &whole{n: n, order: order, start: make([]int32, n+1), src: make([]int32, m), weight: make([]int64, m),
		kind: make([]graph.EdgeKind, m), op: op, rankStart: rankStart, ranks: ranks, calls: calls}
	pos := make([]int32, n)
	for i, v := range order {
		pos[v] = int32(i)
	}
	e := int32(0)
	for i, v := range order {
		w.start[i] = e
		for x, hi := g.InStart[v], g.InStart[v+1]; x < hi; x++ {
			w.src[e] = pos[g.InSrc[x]]
			w.weight[e] = g.InWeight[x]
			w.kind[e] = kind[x]
			e++
		}
	}
	w.start[n] = e
	return w, nil
}

// topoOrder puts every vertex of g after its predecessors: an iterative
// depth-first search over incoming edges from each unvisited vertex in id
// order, emitting vertices in post-order (as cpath's DAG does from its
// target). The post-order and the search's stack share one array: they
// hold disjoint vertices (finished, in progress).
func topoOrder(g *cpath.Graph) ([]int32, error) {
	n := g.N
	buf := make([]int32, n)
	cursor := make([]int32, n) // the next incoming edge of each vertex on the stack
	colour := make([]uint64, (n+31)/32)
	nord := 0
	for root := int32(0); int(root) < n; root++ {
		if colour[root/32]>>(2*(root%32))&3 != 0 {
			continue
		}
		top := n - 1
		buf[top], cursor[root] = root, g.InStart[root]
		colour[root/32] |= 1 << (2 * (root % 32))
	outer:
		for top < n {
			v := buf[top]
			for e, end := cursor[v], g.InStart[v+1]; e < end; e++ {
				u := g.InSrc[e]
				switch colour[u/32] >> (2 * (u % 32)) & 3 {
				case 0:
					cursor[v] = e + 1
					top--
					buf[top], cursor[u] = u, g.InStart[u]
					colour[u/32] |= 1 << (2 * (u % 32))
					continue outer
				case 1:
					return nil, fmt.Errorf("replay: the graph has a cycle through vertex %d", u)
				}
			}
			colour[v/32] |= 2 << (2 * (v % 32))
			top++
			buf[nord] = v
			nord++
		}
	}
	return buf, nil
}

// solve computes every vertex's longest distance from a source under the
// rule's weights (into s.dist), and with path the edge it came over (into
// s.pred, for walk), and returns the longest, the predicted run time, and the position of the
// vertex it ends at. Ties go to the smaller vertex id, so that the
// answers do not depend on the order of the rows (that is, on how the
// graph was cut).
func (s *solver) solve(r *rule, path bool) (length int64, end int32) {
	w := s.whole
	start, src, weight, kind, order := w.start, w.src, w.weight, w.kind, w.order
	dist, pred := s.dist, s.pred
	same := r.isIdentity()
	if !path {
		return s.solveLength(r, same)
	}
	end = -1
	for i, v := range order {
		best, from := int64(0), int32(-1)
		if same {
			for e, hi := start[i], start[i+1]; e < hi; e++ {
				d := dist[src[e]] + weight[e]
				if d > best || d == best && (from < 0 || order[src[e]] < order[src[from]]) {
					best, from = d, e
				}
			}
		} else {
			mul, prog := w.rowMul(r, v)
			for e, hi := start[i], start[i+1]; e < hi; e++ {
				k := kind[e]
				m := mul[k]
				if k == graph.EdgeProgram {
					m = prog
				}
				d := dist[src[e]] + scale(weight[e], m)
				if d > best || d == best && (from < 0 || order[src[e]] < order[src[from]]) {
					best, from = d, e
				}
			}
		}
		dist[i], pred[i] = best, from
		if best > length || best == length && (end < 0 || v < order[end]) {
			length, end = best, int32(i)
		}
	}
	return length, end
}

// solveLength is solve without the path.
func (s *solver) solveLength(r *rule, same bool) (length int64, end int32) {
	w := s.whole
	start, src, weight, kind, order, dist := w.start, w.src, w.weight, w.kind, w.order, s.dist
	end = -1
	for i, v := range order {
		var best int64
		if same {
			for e, hi := start[i], start[i+1]; e < hi; e++ {
				best = max(best, dist[src[e]]+weight[e])
			}
		} else {
			mul, prog := w.rowMul(r, v)
			for e, hi := start[i], start[i+1]; e < hi; e++ {
				k := kind[e]
				m := mul[k]
				if k == graph.EdgeProgram {
					m = prog
				}
				best = max(best, dist[src[e]]+scale(weight[e], m))
			}
		}
		dist[i] = best
		if best > length || best == length && (end < 0 || v < order[end]) {
			length, end = best, int32(i)
		}
	}
	return length, end
}

// solvePhases is the POP ideal run of each phase at once: the longest
// path of useful computation that stays within one phase (an edge between
// vertices of different phases starts the path afresh), by phase. phase
// is each position's phase (calls' vertices set by the caller, -1 for
// none); a hub takes the phase of its first member.
func (s *solver) solvePhases(r *rule, phase []int32, phases int) []int64 {
	w := s.whole
	start, src, weight, kind, order, dist := w.start, w.src, w.weight, w.kind, w.order, s.dist
	longest := make([]int64, phases)
	for i, v := range order {
		lo, hi := start[i], start[i+1]
		if v >= 2*w.calls {
			phase[i] = -1
			if lo < hi && kind[lo] == graph.EdgeHubIn {
				phase[i] = phase[src[lo]]
			}
		}
		mul, prog := w.rowMul(r, v)
		pv := phase[i]
		var best int64
		for e := lo; e < hi; e++ {
			if u := src[e]; phase[u] == pv {
				k := kind[e]
				m := mul[k]
				if k == graph.EdgeProgram {
					m = prog
				}
				if d := dist[u] + scale(weight[e], m); d > best {
					best = d
				}
			}
		}
		dist[i] = best
		if pv >= 0 && int(pv) < phases {
			longest[pv] = max(longest[pv], best)
		}
	}
	return longest
}

// walk follows the longest path the last solve(r, true) found back from
// position end to its source, calling f with each edge's target vertex,
// kind and weight under r.
func (s *solver) walk(r *rule, end int32, f func(v int32, k graph.EdgeKind, weight int64)) {
	w := s.whole
	for i := end; i >= 0; {
		e := s.pred[i]
		if e < 0 {
			return
		}
		v := w.order[i]
		k := w.kind[e]
		mul, prog := w.rowMul(r, v)
		m := mul[k]
		if k == graph.EdgeProgram {
			m = prog
		}
		f(v, k, scale(w.weight[e], m))
		i = w.src[e]
	}
}

// rankOf is the rank of call c.
func (w *whole) rankOf(c int32) int {
	lo, hi := 0, w.ranks
	for lo+1 < hi {
		m := (lo + hi) / 2
		if w.rankStart[m] <= c {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// bits is a bitset over calls.
type bits []uint64

func newBits(n int) bits { return make(bits, (n+63)/64) }

func (b bits) get(i int32) bool { return b[i>>6]>>(i&63)&1 != 0 }
func (b bits) set(i int32)      { b[i>>6] |= 1 << (i & 63) }

// orAt ors src, a bitset whose bits past its last one are clear, into b
// from bit off.
func (b bits) orAt(src bits, off int) {
	j, sh := off/64, uint(off%64)
	for i, x := range src {
		if x == 0 {
			continue
		}
		b[j+i] |= x << sh
		if sh != 0 && j+i+1 < len(b) {
			b[j+i+1] |= x >> (64 - sh)
		}
	}
}
