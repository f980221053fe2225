package replay

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/par"
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
	order     []int32       // by position: the vertex id
	start     []int32       // by position: its row is edges [start[i], start[i+1])
	src       []int32       // by edge: the source's position
	weight    graph.Weights // the PAG's, in this order (sharing its large values)
	kind      []graph.EdgeKind
	op        []trace.Op // by call
	rankStart []int32
	ranks     int
	calls     int32 // vertex ids [0, 2·calls) are the calls' S and E
}

// solver is the scratch of one solve at a time, by position: each
// vertex's longest distance from a source under the rule of the last
// solve. The edge each came over is not kept: walk finds it again on the
// path's few rows, which saves a third of the scratch and its writes.
type solver struct {
	*whole
	dist []int64
	rule *rule // the last solve's
}

func (w *whole) newSolver() *solver {
	return &solver{whole: w, dist: make([]int64, w.n)}
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

const numKinds = int(graph.EdgeRMA) + 1

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
// transfers of messages, collectives and one-sided synchronisations.
// Waiting has no weight in the PAG: it comes back as the longest path's
// slack.
var transferKinds = []graph.EdgeKind{graph.EdgeCall, graph.EdgeLateSender, graph.EdgeLateReceiver, graph.EdgeCollective, graph.EdgeHubOut, graph.EdgeRMA}

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
	return r.mul == ones && !r.perCall()
}

// perCall reports whether the factors of program edges or of MPI calls'
// edges depend on the call.
func (r *rule) perCall() bool {
	return r.rankLo < r.rankHi && r.rankMul != 1 || r.sites != nil && r.siteMul != 1 ||
		r.notUseful != nil && r.outside != r.mul[graph.EdgeProgram] || r.fixed != nil
}

// scale is weight w (non-negative) times m, rounded: exact for m = 1
// (weights are far below 2⁵³ ns).
func scale(w int64, m float64) int64 { return int64(float64(w)*m + 0.5) }

// newWhole renumbers the gathered graph in topological order
// (cpath.TopoOrder: first, then each vertex's position is when the search
// finishes it, after all its predecessors), then writes every position's row, with
// its sources' positions, by source id (so that the first of equal edges
// is the same however the graph was cut). The search is sequential; the
// rows are written on every core, by ranges of positions: written as the
// search finished each vertex, they took 1.3 s of the 16 M-call log's
// 2.0 s on one core. Rows whose sources do not come before them (a first
// that was not topological) are an error.
func newWhole(g *cpath.Graph, first []int32, kind []graph.EdgeKind, op []trace.Op, rankStart []int32, ranks int) (*whole, error) {
	if len(kind) != len(g.InSrc) {
		return nil, fmt.Errorf("replay: %d edge kinds for %d edges", len(kind), len(g.InSrc))
	}
	calls := rankStart[ranks]
	if int(calls) != len(op) || 2*int(calls) > g.N {
		return nil, fmt.Errorf("replay: %d operations for %d calls in a graph of %d vertices", len(op), calls, g.N)
	}
	n, m := g.N, len(g.InSrc)
	// The order goes into first's buffer if it has room: first's
	// vertices are where they already are.
	order := first[:0]
	if cap(first) < n {
		order = make([]int32, n)
	}
	w := &whole{n: n, order: order[:n], start: make([]int32, n+1), src: make([]int32, m), weight: graph.Weights{W: make([]int32, m), Big: g.InWeight.Big},
		kind: make([]graph.EdgeKind, m), op: op, rankStart: rankStart, ranks: ranks, calls: calls}
	// first's vertices are at their places already (w.order is first's
	// buffer) or copied there; the search places the rest after them.
	copy(w.order, first)
	at := make([]int32, n) // a vertex's position
	nord := int32(len(first))
	if err := cpath.TopoOrder(g, first, func(v int32) {
		w.order[nord], at[v] = v, nord
		nord++
	}); err != nil {
		return nil, err // "cpath: the order given has vertex …", "cpath: the graph has a cycle through vertex …"
	}
	parts := 4 * runtime.GOMAXPROCS(0)
	firstBounds := par.Bounds(len(first), parts)
	par.Do(parts, func(k int) {
		for i := firstBounds[k]; i < firstBounds[k+1]; i++ {
			at[first[i]] = int32(i)
		}
	})
	// The rows' starts: each range's sum of row lengths, then the ranges'
	// rows offset by the ranges before.
	bounds := par.Bounds(n, parts)
	sums := make([]int32, parts+1)
	par.Do(parts, func(k int) {
		var e int32
		for _, v := range w.order[bounds[k]:bounds[k+1]] {
			e += g.InStart[v+1] - g.InStart[v]
		}
		sums[k+1] = e
	})
	for k := range parts {
		sums[k+1] += sums[k]
	}
	// A source at or after its edge's target is an order that is not
	// topological: a first that was not (by position, the first such
	// target in each range).
	late := make([]int32, parts)
	par.Do(parts, func(k int) {
		e := sums[k]
		late[k] = -1
		var ids []int32 // an unsorted row's edges, by source id
		for i := bounds[k]; i < bounds[k+1]; i++ {
			v := w.order[i]
			w.start[i] = e
			lo, hi := g.InStart[v], g.InStart[v+1]
			row := g.InSrc[lo:hi]
			if slices.IsSorted(row) {
				for x := lo; x < hi; x++ {
					w.src[e], w.weight.W[e], w.kind[e] = at[g.InSrc[x]], g.InWeight.W[x], kind[x]
					e++
				}
			} else {
				ids = ids[:0]
				for x := lo; x < hi; x++ {
					ids = append(ids, x)
				}
				slices.SortStableFunc(ids, func(a, b int32) int { return cmp.Compare(g.InSrc[a], g.InSrc[b]) })
				for _, x := range ids {
					w.src[e], w.weight.W[e], w.kind[e] = at[g.InSrc[x]], g.InWeight.W[x], kind[x]
					e++
				}
			}
			if late[k] < 0 && hi > lo && int(slices.Max(w.src[e-(hi-lo):e])) >= i {
				late[k] = int32(i)
			}
		}
	})
	for _, i := range late {
		if i >= 0 {
			return nil, fmt.Errorf("replay: the order given is not topological: vertex %d comes before one of its causes", w.order[i])
		}
	}
	w.start[n] = int32(m)
	return w, nil
}

// solve computes every vertex's longest distance from a source under the
// rule's weights (into s.dist, for walk), and returns the longest, the
// predicted run time, and the position of the vertex it ends at. Ties go
// to the smaller vertex id, so that the answers do not depend on the
// order of the rows (that is, on how the graph was cut).
func (s *solver) solve(r *rule) (length int64, end int32) {
	w := s.whole
	start, src, weight, kind, order := w.start, w.src, w.weight, w.kind, w.order
	dist := s.dist
	s.rule = r
	modes := r.modes()
	perCall := r.perCall()
	tab := r.mul
	for i, v := range order {
		lo, hi := start[i], start[i+1]
		if hi == lo {
			dist[i] = 0
			continue
		}
		var best int64
		m, mode := w.rowRule(r, &modes, perCall, v, &tab)
		switch mode {
		case plainRow:
			best = dist[src[lo]] + weight.At(lo)
			for e := lo + 1; e < hi; e++ {
				best = max(best, dist[src[e]]+weight.At(e))
			}
		case zeroRow:
			best = dist[src[lo]]
			for e := lo + 1; e < hi; e++ {
				best = max(best, dist[src[e]])
			}
		default:
			best = dist[src[lo]] + scale(weight.At(lo), m[kind[lo]])
			for e := lo + 1; e < hi; e++ {
				best = max(best, dist[src[e]]+scale(weight.At(e), m[kind[e]]))
			}
		}
		dist[i] = best
		length = max(length, best)
	}
	// The vertex it ends at: the smallest id among the longest.
	end = -1
	for i, d := range dist {
		if d == length && (end < 0 || order[i] < order[end]) {
			end = int32(i)
		}
	}
	return length, end
}

// rowRule is how the edges into vertex v are taken under r: their
// factors by kind (tab, a copy of r.mul that perCall rules change) and
// the mode.
func (w *whole) rowRule(r *rule, modes *rowModes, perCall bool, v int32, tab *[numKinds]float64) (*[numKinds]float64, int) {
	switch {
	case perCall:
		return w.row(r, modes, v, tab)
	case v >= 2*w.calls:
		return tab, plainRow
	case v&1 == 0:
		return tab, modes.start
	}
	return tab, modes.end
}

// How a row's weights are taken: as they are, all 0, or each times its
// factor.
const (
	plainRow = iota
	zeroRow
	scaledRow
)

// rowModes is what a rule makes of the rows of calls' starts (program
// and launch edges) and ends (the call's own and transfer edges).
type rowModes struct {
	launch float64
	start  int // the mode of the rows of calls' starts, if not set by the call
	end    int // the mode of the rows of calls' ends (not fixed)
}

func (r *rule) modes() rowModes {
	rm := rowModes{launch: r.mul[graph.EdgeLaunch], start: scaledRow, end: scaledRow}
	switch p := r.mul[graph.EdgeProgram]; {
	case p == 1 && rm.launch == 1:
		rm.start = plainRow
	case p == 0 && rm.launch == 0:
		rm.start = zeroRow
	}
	ones, zeros := true, true
	for _, k := range transferKinds {
		ones = ones && r.mul[k] == 1
		zeros = zeros && r.mul[k] == 0
	}
	switch {
	case ones:
		rm.end = plainRow
	case zeros:
		rm.end = zeroRow
	}
	return rm
}

// row is how the edges into vertex v are taken under r: their factors by
// kind (tab, with its program entry set for a call's start) and the mode.
// Hubs' rows (edges of weight 0 from their members) are plain.
func (w *whole) row(r *rule, rm *rowModes, v int32, tab *[numKinds]float64) (*[numKinds]float64, int) {
	switch {
	case v >= 2*w.calls:
		return tab, plainRow
	case v&1 == 0:
		p := r.progMul(v)
		tab[graph.EdgeProgram] = p
		switch {
		case p == 1 && rm.launch == 1:
			return tab, plainRow
		case p == 0 && rm.launch == 0:
			return tab, zeroRow
		}
		return tab, scaledRow
	case r.fixed != nil && r.fixed.get(v>>1):
		return &ones, plainRow
	}
	return tab, rm.end
}

// solvePhases is the POP ideal run of each phase at once: the longest
// path of useful computation that stays within one phase (an edge between
// vertices of different phases starts the path afresh), by phase. phase
// is each position's phase (calls' vertices set by the caller, -1 for
// none); a hub takes the phase of its first member.
func (s *solver) solvePhases(r *rule, phase []int32, phases int) []int64 {
	w := s.whole
	start, src, weight, kind, order, dist := w.start, w.src, w.weight, w.kind, w.order, s.dist
	modes := r.modes()
	longest := make([]int64, phases)
	for i, v := range order {
		lo, hi := start[i], start[i+1]
		if v >= 2*w.calls {
			phase[i] = -1
			if lo < hi && kind[lo] == graph.EdgeHubIn {
				phase[i] = phase[src[lo]]
			}
		}
		tab := r.mul
		m, _ := w.row(r, &modes, v, &tab)
		pv := phase[i]
		var best int64
		for e := lo; e < hi; e++ {
			if u := src[e]; phase[u] == pv {
				if d := dist[u] + scale(weight.At(e), m[kind[e]]); d > best {
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

// walk follows the longest path the last solve found back from position
// end to its source, calling f with each edge's target vertex, kind and
// weight under the solve's rule (the difference of the distances it
// joins). The edge it takes into a vertex is the first of its row (rows
// are by source id) that gives the vertex's distance, the one a solve
// keeping its edges would keep.
func (s *solver) walk(end int32, f func(v int32, k graph.EdgeKind, weight int64)) {
	w, r, dist := s.whole, s.rule, s.dist
	modes, perCall, tab := r.modes(), r.perCall(), r.mul
	for i := end; ; {
		lo, hi := w.start[i], w.start[i+1]
		if lo == hi {
			return
		}
		m, mode := w.rowRule(r, &modes, perCall, w.order[i], &tab)
		e := lo
		for ; e < hi-1; e++ {
			var we int64
			switch mode {
			case plainRow:
				we = w.weight.At(e)
			case scaledRow:
				we = scale(w.weight.At(e), m[w.kind[e]])
			}
			if dist[w.src[e]]+we == dist[i] {
				break
			}
		}
		u := w.src[e]
		f(w.order[i], w.kind[e], dist[i]-dist[u])
		i = u
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
