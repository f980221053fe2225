package cpath

import (
	"github.com/cpath/cpath/graph"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
)

// DistGraph is one analyzer rank's share of a graph distributed over the
// ranks of a job by vertex ranges (paper §4.3: each process stores its
// vertices and all their incoming edges). Rank p owns the vertices
// [Bounds[p], Bounds[p+1]); edge sources are global vertex ids, so an edge
// whose source another rank owns is a cross-rank edge.
type DistGraph struct {
	N        int           // vertices in the whole graph
	Bounds   []int32       // len Size()+1, Bounds[0] = 0, Bounds[Size()] = N
	Lo, Hi   int32         // this rank's range: Bounds[Rank()], Bounds[Rank()+1]
	InStart  []int32       // len Hi-Lo+1: the edges into v are InSrc[InStart[v-Lo]:InStart[v-Lo+1]]
	InSrc    []int32       // global vertex ids
	InWeight graph.Weights // ns, non-negative
	Time     []int64       // len Hi-Lo: each owned vertex's time, ns (topological methods, splits)
	Target   int32         // global id of the vertex the critical path ends at (known to every rank)
}

// Owner returns the rank that owns vertex v.
func (g *DistGraph) Owner(v int32) int {
	return sort.Search(len(g.Bounds)-1, func(p int) bool { return g.Bounds[p+1] > v })
}

// DistStats is what a distributed algorithm reports of its work, summed
// over the ranks (Rounds and MaxQueue: the largest on any rank).
type DistStats struct {
	Stats
	Rounds    int64 // exchange rounds (each one or more collective calls)
	BytesSent int64 // bytes shipped between ranks, summed over the ranks
	RawBytes  int64 // topo-shuffle with compression: the bytes before compressing
	Splits    int   // split: the number of splits solved
	// Edges is the number of edges in the whole graph (summed over the
	// ranks), so that Relaxations/Edges is the work per edge: at most 1
	// for dag and the seq split modes (each ancestor's edges once), any
	// amount for the label-correcting searches (an edge is examined again
	// each time its destination's Dist increases).
	Edges int64
}

// DistResult is a distributed algorithm's answer. Path is complete on rank
// 0 and empty on the others.
type DistResult struct {
	Path  Path
	Stats DistStats
}

var _ mpix.Comm = (*mpix.Single)(nil)
