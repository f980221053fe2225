package cpath

import (
	"errors"
	"fmt"
	"math"

	"github.com/cpath/cpath/graph"
)

// check does the O(1) checks every algorithm needs before indexing; the full
// O(N+E) check is Validate.
func (g *Graph) check(target int32) error {
	if g == nil {
		return errors.New("cpath: nil graph")
	}
	if g.N < 0 || g.N > math.MaxInt32 || len(g.InStart) != g.N+1 {
		return fmt.Errorf("cpath: graph has N=%d and %d row starts", g.N, len(g.InStart))
	}
	if e := int(g.InStart[g.N]); e != len(g.InSrc) || e != g.InWeight.Len() {
		return fmt.Errorf("cpath: graph has %d edges but %d sources and %d weights", e, len(g.InSrc), g.InWeight.Len())
	}
	if target < 0 || int(target) >= g.N {
		return fmt.Errorf("cpath: target %d out of range [0,%d)", target, g.N)
	}
	return nil
}

// Validate checks the whole CSR structure: monotone row starts, sources in
// range and non-negative weights. The algorithms only check sizes, so a
// graph from untrusted input should pass Validate first. Acyclicity is
// checked by DAG.
func (g *Graph) Validate() error {
	if g == nil {
		return errors.New("cpath: nil graph")
	}
	if g.N < 0 || g.N > math.MaxInt32 || len(g.InStart) != g.N+1 {
		return fmt.Errorf("cpath: graph has N=%d and %d row starts", g.N, len(g.InStart))
	}
	return checkRows(g.InStart, g.InSrc, &g.InWeight, 0, g.N)
}

// checkRows checks rows of incoming edges (the vertices from first on,
// sources among n vertices): monotone starts from 0, as many sources and
// weights as the last row ends at, sources in range, weights
// non-negative.
func checkRows(inStart, inSrc []int32, w *graph.Weights, first, n int) error {
	if inStart[0] != 0 {
		return fmt.Errorf("cpath: InStart[0] = %d, want 0", inStart[0])
	}
	nv := len(inStart) - 1
	for i := 0; i < nv; i++ {
		if inStart[i+1] < inStart[i] {
			return fmt.Errorf("cpath: InStart decreases at vertex %d", first+i)
		}
	}
	if e := int(inStart[nv]); e != len(inSrc) || e != w.Len() {
		return fmt.Errorf("cpath: graph has %d edges but %d sources and %d weights", e, len(inSrc), w.Len())
	}
	for i, u := range inSrc {
		if u < 0 || int(u) >= n {
			return fmt.Errorf("cpath: edge %d has source %d out of range", i, u)
		}
		if x := w.At(int32(i)); x < 0 {
			return fmt.Errorf("cpath: edge %d->? has negative weight %d", u, x)
		}
	}
	return nil
}

// ErrCycle is what a search returns (wrapped, naming a vertex) on a graph
// with a cycle: built from logs, their times contradict each other.
var ErrCycle = errors.New("the graph has a cycle")

func cycleError(u int32) error {
	return fmt.Errorf("cpath: %w through vertex %d", ErrCycle, u)
}

// findCycle returns an error naming a vertex on a cycle among the ancestors
// of target, or nil if they form a DAG. It is the rare path of Dijkstra and
// DeltaStepping (see cycleBudget), so it allocates its own state rather than
// keeping it in Solver.
func findCycle(g *Graph, target int32) error {
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, g.N)
	type frame struct{ v, next int32 }
	stack := []frame{{target, g.InStart[target]}}
	colour[target] = grey
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == g.InStart[f.v+1] {
			colour[f.v] = black
			stack = stack[:len(stack)-1]
			continue
		}
		u := g.InSrc[f.next]
		f.next++
		switch colour[u] {
		case grey:
			return cycleError(u)
		case white:
			colour[u] = grey
			stack = append(stack, frame{u, g.InStart[u]})
		}
	}
	return nil
}

// cycleBudget is the number of vertex pops after which the label-correcting
// algorithms stop trusting that the input is acyclic and run findCycle once:
// a positive cycle would make them run forever, a DAG rarely needs more than
// a few pops per vertex. Past the check the run continues unbounded, which
// is safe because the ancestors of the target are then known to be a DAG.
func cycleBudget(g *Graph) int64 {
	return 4*int64(g.N) + int64(len(g.InSrc)) + 1024
}
