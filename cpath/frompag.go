package cpath

import "github.com/cpath/cpath/graph"

// FromPAG views a PAG as a Graph. The PAG keeps its edges in the same
// compressed sparse rows, so nothing is copied: the Graph shares them.
func FromPAG(g *graph.PAG) *Graph {
	return &Graph{N: len(g.InStart) - 1, InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight}
}
