package cpath

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
)

// Solver holds the scratch buffers of the algorithms so that repeated runs
// (one per split, per benchmark iteration) do not reallocate them. The zero
// value is ready; a Solver is not safe for concurrent use. Results are
// always freshly allocated and never alias the scratch.
type Solver struct {
	stack    []int32  // depthFirst: the vertices in progress, N entries
	cursor   []int32  // depthFirst: their next edges, N entries
	colour   []uint64 // depthFirst: colours, 2 bits per vertex
	order    []int32  // DAG: topological order, N entries
	finished int      // DAGPath: order[:finished] is the ancestors as it finished them
	from     []int64  // DAGPath: each ancestor's longest distance from a source
	q        queue    // Dijkstra, Δ-stepping: pending entries
	cur      []entry  // Δ-stepping: the bucket being emptied
	done     []entry  // Δ-stepping: vertices processed in this phase
	tq       tqueue   // with vertex times: pending vertices, latest first
	queued   []uint64 // with vertex times: whether each vertex is in tq, a bit per vertex
}

// DAG is Solver.DAG with fresh buffers.
func DAG(g *Graph, target int32) (*Result, error) { return new(Solver).DAG(g, target) }

// Dijkstra is Solver.Dijkstra with fresh buffers.
func Dijkstra(g *Graph, target int32) (*Result, error) { return new(Solver).Dijkstra(g, target) }

// DeltaStepping is Solver.DeltaStepping with fresh buffers.
func DeltaStepping(g *Graph, target int32, delta int64) (*Result, error) {
	return new(Solver).DeltaStepping(g, target, delta)
}

// DAG is the exact sequential reference, linear in the ancestors of target
// and their edges. The depth-first search from the target over incoming
// edges puts the ancestors in topological order (every vertex after its
// predecessors) and finds any cycle among them; then each vertex, taken
// in reverse order, has its final Dist and relaxes its incoming edges.
func (s *Solver) DAG(g *Graph, target int32) (*Result, error) {
	if err := g.check(target); err != nil {
		return nil, err
	}
	n := g.N
	r := newResult(n)
	dist, succ := r.Dist, r.Succ
	if cap(s.order) < n {
		s.order = make([]int32, n)
	}
	order := s.order[:0]
	if _, err := s.depthFirst(g, target, false, func(v int32) { order = append(order, v) }); err != nil {
		return nil, err
	}
	dist[target] = 0
	var st Stats
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		d := dist[v]
		lo, hi := g.InStart[v], g.InStart[v+1]
		st.Relaxations += int64(hi - lo)
		for j := lo; j < hi; j++ {
			if relax(dist, succ, g.InSrc[j], v, d+g.InWeight.At(j)) {
				st.Updates++
			}
		}
	}
	st.Pops = int64(len(order))
	r.Stats = st
	if err := r.finish(g, target); err != nil {
		return nil, err
	}
	return r, nil
}

// DAGPath is DAG's path and Stats (Relaxations, Pops, Reached) without
// its Dist and Succ, found in one depth-first search rather than a
// search and a second pass in reverse order: each ancestor of target, as
// the search finishes it (all its predecessors finished, just visited
// and still in cache), takes its longest distance from a source,
// from[v] = max over in-edges u→v of from[u]+w. A second, short search
// from target over the tight edges (from[u]+w = from[v]) marks the
// vertices on some longest path, and each keeps its smallest successor
// so marked: the same path, vertex for vertex, that DAG's Succ chain
// gives (a vertex on DAG's path is such a vertex, and its Succ is the
// smallest tight successor on a longest path). On the 16 M-call log's
// 32 M vertices this took about half of DAG's time, whose second pass
// reads Dist and Succ in an order no cache follows. With more than one
// core, each vertex's distance is taken on a second one, in the order the
// search finishes them (pipelined): 0.67-0.72 s -> 0.46-0.51 s there.
// The order the search finished the ancestors in stays in s until its
// next search (Finished).
func (s *Solver) DAGPath(g *Graph, target int32) (Path, Stats, error) {
	return s.dagPath(g, target, runtime.GOMAXPROCS(0) > 1, true)
}

// Finished is the order in which DAGPath's last search finished the
// target's ancestors: a topological order of them, which TopoOrder can
// start from rather than search them again. It is s's buffer, valid until
// s searches again.
func (s *Solver) Finished() []int32 { return s.order[:s.finished] }

// dagPath is DAGPath, with the work on each vertex beside the search
// (pipelined) or in it; without keep, the order the search finished the
// vertices in is not kept (Finished is empty), which saves an array of N.
func (s *Solver) dagPath(g *Graph, target int32, pipeline, keep bool) (Path, Stats, error) {
	if err := g.check(target); err != nil {
		return Path{}, Stats{}, err
	}
	n := g.N
	if cap(s.from) < n {
		s.from = make([]int64, n)
	}
	from := s.from[:n]
	var st Stats
	var reached int
	var err error
	pull := func(v int32) {
		lo, hi := g.InStart[v], g.InStart[v+1]
		var d int64 // a source's
		if lo < hi {
			d = math.MinInt64
		}
		for j := lo; j < hi; j++ {
			d = max(d, from[g.InSrc[j]]+g.InWeight.At(j))
		}
		from[v] = d
		st.Relaxations += int64(hi - lo)
	}
	s.finished = 0
	switch {
	case pipeline:
		reached, err = s.pipelined(g, target, keep, pull)
	case keep:
		if cap(s.order) < n {
			s.order = make([]int32, n)
		}
		order, k := s.order[:n], 0
		reached, err = s.depthFirst(g, target, false, func(v int32) {
			pull(v)
			order[k] = v
			k++
		})
	default:
		reached, err = s.depthFirst(g, target, false, pull)
	}
	if err != nil {
		return Path{}, Stats{}, err
	}
	if keep {
		s.finished = reached
	}
	st.Pops, st.Reached = int64(reached), reached
	// The vertices on a longest path to target, each with its smallest
	// successor among them: the search's finished bit (set on every
	// ancestor) is cleared to mark one, and the search's stack and
	// cursors are free again for this search and the successors.
	colour, stack, succ := s.colour, s.stack, s.cursor
	onPath := func(v int32) bool { return colour[v/32]>>(2*(v%32))&2 == 0 }
	colour[target/32] &^= 2 << (2 * (target % 32))
	succ[target] = NoVertex
	src := NoVertex
	top := 0
	stack[0] = target
	for top >= 0 {
		v := stack[top]
		top--
		lo, hi := g.InStart[v], g.InStart[v+1]
		if lo == hi && (src == NoVertex || v < src) {
			src = v
		}
		for j := lo; j < hi; j++ {
			u := g.InSrc[j]
			if from[u]+g.InWeight.At(j) != from[v] {
				continue
			}
			if !onPath(u) {
				colour[u/32] &^= 2 << (2 * (u % 32))
				succ[u] = v
				top++
				stack[top] = u
			} else if v < succ[u] {
				succ[u] = v
			}
		}
	}
	p := Path{Length: from[target]}
	for v := src; ; v = succ[v] {
		p.Vertices = append(p.Vertices, v)
		if v == target {
			break
		}
	}
	return p, st, nil
}

// pipelined is depthFirst from target with finish run on a second
// goroutine, in the order the search finishes the vertices (so each after
// its predecessors): the search and the work on each vertex then take two
// cores. The search publishes what it finished in batches; finish runs
// on all of them before pipelined returns. With keep the order is kept
// whole in s.order; without, s.order is a ring of pipeRing vertices, and
// the search waits while it is a ring ahead.
func (s *Solver) pipelined(g *Graph, target int32, keep bool, finish func(v int32)) (int, error) {
	size, mask := g.N, -1 // mask: all bits, the whole order
	if !keep {
		size, mask = pipeRing, pipeRing-1
	}
	if cap(s.order) < size {
		s.order = make([]int32, size)
	}
	order := s.order[:size]
	const batch = 1 << 12
	var published atomic.Int64 // order[:published] is finished; -1-k: the search ended with k
	var consumed atomic.Int64  // finish has run on order[:consumed]
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; {
			p := published.Load()
			last := p < 0
			if last {
				p = -1 - p
			}
			for ; i < int(p); i++ {
				finish(order[i&mask])
			}
			consumed.Store(int64(i))
			if last {
				return
			}
			// Caught up: let the search (or anything else) have the core
			// rather than wait for the next batch on it.
			runtime.Gosched()
		}
	}()
	k := 0
	reached, err := s.depthFirst(g, target, false, func(v int32) {
		order[k&mask] = v
		k++
		if k%batch == 0 {
			published.Store(int64(k))
			for !keep && int64(k+batch)-consumed.Load() > pipeRing {
				runtime.Gosched() // the next batch's places are not finished yet
			}
		}
	})
	if err != nil {
		k = 0 // the vertices' work is moot
	}
	published.Store(-1 - int64(k))
	<-done
	return reached, err
}

// pipeRing is the vertices pipelined keeps in flight when it does not
// keep the order (a power of two, many batches).
const pipeRing = 1 << 16

// relax offers u the path through its successor v, c long: a longer one
// replaces Dist[u] and Succ[u] (true: u must be expanded again), an equal
// one keeps the smaller successor, so that every exact search ends with the
// same Succ (the distributed searches' distSearch.relax does the same).
func relax(dist []int64, succ []int32, u, v int32, c int64) bool {
	if c > dist[u] {
		dist[u], succ[u] = c, v
		return true
	}
	if c == dist[u] && v < succ[u] {
		succ[u] = v
	}
	return false
}

// Dijkstra is the paper's §4.1: weights negated, the search starts at the
// target (the vertex with the largest timestamp) and runs backwards over
// incoming edges, always expanding the smallest negated tentative distance,
// i.e. the largest Dist, from a binary heap. Negative weights void
// Dijkstra's settled-vertex invariant, so it is label-correcting: a vertex
// whose Dist increases is queued again, which makes it exact on any DAG.
//
// With g.Time, the priority is the vertex's time instead (see timed).
func (s *Solver) Dijkstra(g *Graph, target int32) (*Result, error) {
	if err := g.check(target); err != nil {
		return nil, err
	}
	if g.Time != nil {
		return s.timed(g, target, 0)
	}
	r := newResult(g.N)
	dist, succ := r.Dist, r.Succ
	var st Stats
	budget := cycleBudget(g)
	q := s.q[:0]
	dist[target] = 0
	q.push(entry{d: 0, v: target})
	st.MaxQueue = 1
	for len(q) > 0 {
		e := q.pop()
		v, d := e.v, e.d
		if dist[v] != d {
			st.Stale++
			continue
		}
		if st.Pops++; st.Pops > budget && st.CycleChecks == 0 {
			st.CycleChecks++
			if err := findCycle(g, target); err != nil {
				s.q = q[:0]
				return nil, err
			}
		}
		lo, hi := g.InStart[v], g.InStart[v+1]
		st.Relaxations += int64(hi - lo)
		for j := lo; j < hi; j++ {
			if u, c := g.InSrc[j], d+g.InWeight.At(j); relax(dist, succ, u, v, c) {
				q.push(entry{d: c, v: u})
				st.Updates++
			}
		}
		st.MaxQueue = max(st.MaxQueue, len(q))
	}
	st.Pushes = st.Updates + 1
	s.q = q[:0]
	r.Stats = st
	if err := r.finish(g, target); err != nil {
		return nil, err
	}
	return r, nil
}

// DeltaStepping is the paper's §4.2 (Meyer and Sanders' Δ-stepping) on the
// negated weights: tentative distances fall into buckets of width delta,
// the most negative bucket (largest Dist) is emptied first, re-relaxing
// light edges (weight <= delta) until the bucket stays empty, and heavy
// edges are relaxed once per phase from the vertices the bucket held.
// Negated weights only lead into the current bucket or ones still to come,
// so, as in Dijkstra, a vertex whose Dist increases is queued again and
// the result is exact.
//
// With g.Time, the buckets are of vertex times instead, delta ns wide,
// latest first (see timed).
//
// Only the current bucket is a list (FIFO). The others are kept in one heap
// ordered by distance, whose top entries make up the next bucket: distances
// are ns over a whole run, so an array of buckets would need up to
// runtime/delta slots, mostly empty.
func (s *Solver) DeltaStepping(g *Graph, target int32, delta int64) (*Result, error) {
	if err := g.check(target); err != nil {
		return nil, err
	}
	if delta <= 0 {
		return nil, errors.New("cpath: delta must be positive")
	}
	if g.Time != nil {
		return s.timed(g, target, delta)
	}
	r := newResult(g.N)
	dist, succ := r.Dist, r.Succ
	var st Stats
	budget := cycleBudget(g)
	q, cur, done := s.q[:0], s.cur[:0], s.done[:0]
	defer func() { s.q, s.cur, s.done = q[:0], cur[:0], done[:0] }()
	dist[target] = 0
	q.push(entry{d: 0, v: target})
	st.MaxQueue = 1
	for len(q) > 0 {
		lo := q[0].d - q[0].d%delta // the bucket is [lo, lo+delta)
		if lo > q[0].d {
			lo -= delta // floor: negative weights break the contract but must not hang
		}
		for len(q) > 0 && q[0].d >= lo {
			if e := q.pop(); dist[e.v] == e.d {
				cur = append(cur, e)
			} else {
				st.Stale++
			}
		}
		if len(cur) == 0 {
			continue
		}
		st.Phases++
		for i := 0; i < len(cur); i++ {
			v, d := cur[i].v, cur[i].d
			if dist[v] != d {
				st.Stale++
				continue
			}
			if st.Pops++; st.Pops > budget && st.CycleChecks == 0 {
				st.CycleChecks++
				if err := findCycle(g, target); err != nil {
					return nil, err
				}
			}
			done = append(done, cur[i])
			for j, hi := g.InStart[v], g.InStart[v+1]; j < hi; j++ {
				w := g.InWeight.At(j)
				if w > delta {
					continue
				}
				st.Light++
				if u, c := g.InSrc[j], d+w; relax(dist, succ, u, v, c) {
					st.Updates++
					if c-lo < delta {
						cur = append(cur, entry{d: c, v: u})
					} else {
						q.push(entry{d: c, v: u})
					}
				}
			}
		}
		st.MaxQueue = max(st.MaxQueue, len(q)+len(cur)+len(done))
		// Heavy edges lead past this bucket (c > d+delta >= lo+delta), so
		// they go to the heap, once per vertex that left the bucket with
		// its Dist unchanged since.
		for _, e := range done {
			v, d := e.v, e.d
			if dist[v] != d {
				continue
			}
			for j, hi := g.InStart[v], g.InStart[v+1]; j < hi; j++ {
				w := g.InWeight.At(j)
				if w <= delta {
					continue
				}
				st.Heavy++
				if u, c := g.InSrc[j], d+w; relax(dist, succ, u, v, c) {
					st.Updates++
					q.push(entry{d: c, v: u})
				}
			}
		}
		st.MaxQueue = max(st.MaxQueue, len(q)+len(cur)+len(done))
		cur, done = cur[:0], done[:0]
	}
	st.Relaxations = st.Light + st.Heavy
	st.Pushes = st.Updates + 1
	r.Stats = st
	if err := r.finish(g, target); err != nil {
		return nil, err
	}
	return r, nil
}

// timed is Dijkstra (delta 0) and DeltaStepping on a graph with vertex
// times: the paper's search "from the vertex with the largest timestamp".
// A vertex is queued under its time, at most once at a time, and processed
// latest first (the larger id first among equal times) with the Dist it
// has when it is taken, relaxing all its incoming edges. On a PAG with
// consistent clocks every edge u->v has Time[u] <= Time[v], so when v is
// taken everything after it is done and its Dist is final: each edge into
// an ancestor of the target is relaxed about once, where the largest-Dist
// order (which takes the vertices farthest from the target first) made
// 10^2 to 10^4 relaxations per edge on graphs shaped like the full PAG.
// The times only order the work: a vertex whose Dist increases after it
// was taken is queued again (label-correcting), so the result is exact
// whatever the times (ties, clock error, any order at all).
//
// In one process, Δ-stepping's buckets of times, emptied latest first in
// time order, take the vertices in the same order: delta only counts
// Phases (buckets emptied) and splits the relaxations into Light (weight
// <= delta) and Heavy.
func (s *Solver) timed(g *Graph, target int32, delta int64) (*Result, error) {
	if len(g.Time) != g.N {
		return nil, fmt.Errorf("cpath: graph has %d vertex times for %d vertices", len(g.Time), g.N)
	}
	r := newResult(g.N)
	dist, succ, tm := r.Dist, r.Succ, g.Time
	var st Stats
	budget := cycleBudget(g)
	words := (g.N + 63) / 64
	if cap(s.queued) < words {
		s.queued = make([]uint64, words)
	}
	queued := s.queued[:words]
	clear(queued)
	q := s.tq[:0]
	defer func() { s.tq = q[:0] }()
	dist[target] = 0
	q.push(tentry{tm[target], target})
	queued[target/64] |= 1 << (target % 64)
	st.Pushes, st.MaxQueue = 1, 1
	blo := int64(0) // delta: the current bucket's lower bound
	for len(q) > 0 {
		e := q.pop()
		v := e.v
		queued[v/64] &^= 1 << (v % 64)
		if st.Pops++; st.Pops > budget && st.CycleChecks == 0 {
			st.CycleChecks++
			if err := findCycle(g, target); err != nil {
				return nil, err
			}
		}
		if b := bucketLow(e.t, delta); delta > 0 && (st.Phases == 0 || b != blo) {
			blo = b
			st.Phases++
		}
		d := dist[v]
		lo, hi := g.InStart[v], g.InStart[v+1]
		st.Relaxations += int64(hi - lo)
		for j := lo; j < hi; j++ {
			u := g.InSrc[j]
			w := g.InWeight.At(j)
			if delta > 0 {
				if w <= delta {
					st.Light++
				} else {
					st.Heavy++
				}
			}
			if relax(dist, succ, u, v, d+w) {
				st.Updates++
				if queued[u/64]&(1<<(u%64)) == 0 {
					queued[u/64] |= 1 << (u % 64)
					q.push(tentry{tm[u], u})
					st.Pushes++
				}
			}
		}
		st.MaxQueue = max(st.MaxQueue, len(q))
	}
	r.Stats = st
	if err := r.finish(g, target); err != nil {
		return nil, err
	}
	return r, nil
}

// bucketLow is the lower bound of the bucket of width d > 0 that holds
// time t: the largest multiple of d at most t (math.MinInt64 if there is
// none in range). 0 if d <= 0.
func bucketLow(t, d int64) int64 {
	if d <= 0 {
		return 0
	}
	m := t % d
	if m < 0 {
		m += d
	}
	if t < math.MinInt64+m { // t-m would wrap
		return math.MinInt64
	}
	return t - m
}

// DefaultDelta is the mean positive edge weight, rounded up (1 if there is
// none): Δ near a typical weight keeps most edges light and buckets small,
// and the mean, unlike a median, needs one pass and no memory. Δ changes
// only the work of DeltaStepping, never its result.
func DefaultDelta(g *Graph) int64 {
	if g == nil {
		return 1
	}
	var sum float64
	var n int64
	for w := range g.InWeight.All() {
		if w > 0 {
			sum += float64(w)
			n++
		}
	}
	if n == 0 {
		return 1
	}
	d := math.Ceil(sum / float64(n))
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d)
}
