package cpath

import (
	"fmt"

	"github.com/cpath/cpath/internal/par"
)

// newResult allocates Dist and Succ with every vertex unreached.
func newResult(n int) *Result {
	r := &Result{Dist: make([]int64, n), Succ: make([]int32, n)}
	// In chunks on every core: touching the pages first is most of the
	// cost (384 MB at 32 M vertices).
	const chunk = 1 << 20
	par.Do((n+chunk-1)/chunk, func(k int) {
		lo, hi := k*chunk, min(n, (k+1)*chunk)
		dist, succ := r.Dist[lo:hi], r.Succ[lo:hi]
		for i := range dist {
			dist[i] = Unreached
		}
		for i := range succ {
			succ[i] = NoVertex
		}
	})
	return r
}

// CanonicalPath extracts the critical path from Dist and Succ: it starts at
// the source (in-degree 0) with the largest Dist, the smallest id among
// equals, and follows Succ to the target. A Succ chain that does not reach
// the target within N steps means the graph had a cycle.
func CanonicalPath(g *Graph, dist []int64, succ []int32, target int32) (Path, error) {
	p, _, err := canonicalPath(g, dist, succ, target)
	return p, err
}

// canonicalPath also returns the number of vertices that reach the target.
func canonicalPath(g *Graph, dist []int64, succ []int32, target int32) (Path, int, error) {
	if err := g.check(target); err != nil {
		return Path{}, 0, err
	}
	src, reached := NoVertex, 0
	for v := 0; v < g.N; v++ {
		d := dist[v]
		if d == Unreached {
			continue
		}
		reached++
		if g.InStart[v] == g.InStart[v+1] && (src == NoVertex || d > dist[src]) {
			src = int32(v) // v ascends, so among equals the smallest id stays
		}
	}
	if src == NoVertex {
		// The target has predecessors (else it is a source itself) and
		// every ancestor has one too: there is a cycle among them.
		return Path{}, reached, fmt.Errorf("cpath: no source reaches target %d: the graph has a cycle", target)
	}
	steps := 1
	for v := src; v != target; v = succ[v] {
		if v == NoVertex {
			return Path{}, reached, fmt.Errorf("cpath: Succ chain from %d stops before target %d", src, target)
		}
		if steps > g.N {
			return Path{}, reached, cycleError(v)
		}
		steps++
	}
	p := Path{Vertices: make([]int32, 0, steps), Length: dist[src]}
	for v := src; ; v = succ[v] {
		p.Vertices = append(p.Vertices, v)
		if v == target {
			break
		}
	}
	return p, reached, nil
}

// finish fills r.Path and r.Stats.Reached.
func (r *Result) finish(g *Graph, target int32) error {
	p, reached, err := canonicalPath(g, r.Dist, r.Succ, target)
	if err != nil {
		return err
	}
	r.Path, r.Stats.Reached = p, reached
	return nil
}
