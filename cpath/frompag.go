package cpath

import "github.com/cpath/cpath/graph"

// FromPAG views a PAG as a Graph. Every PAG vertex has at most one
// incoming edge, so the rows are built in one pass with no sorting.
func FromPAG(g *graph.PAG) *Graph {
	n := len(g.Pred)
	cg := &Graph{N: n, InStart: make([]int32, n+1), InSrc: make([]int32, 0, n), InWeight: make([]int64, 0, n)}
	for v := 0; v < n; v++ {
		if p := g.Pred[v]; p >= 0 {
			cg.InSrc = append(cg.InSrc, p)
			cg.InWeight = append(cg.InWeight, g.PredW[v])
		}
		cg.InStart[v+1] = int32(len(cg.InSrc))
	}
	return cg
}
