// Package cpath finds the critical path of a program activity graph: the
// longest path ending at the run's last event. It owns the algorithms of
// the paper's §4 (sequential reference in topological order, Dijkstra with
// negated weights, Δ-stepping) on one graph form, Graph, that graph/
// fills from the PAG.
//
// Every algorithm computes, for each vertex u that can reach the target,
// Dist[u] = the longest distance from u to the target, and Succ[u] = the
// next vertex on a longest path from u (the smallest vertex id among
// equals). The critical path starts at the source (a vertex without
// incoming edges) with the largest Dist (smallest id among equals) and
// follows Succ. Because Dist is exact and ties are broken by id, exact
// algorithms return the same path, vertex for vertex.
package cpath

import "github.com/cpath/cpath/graph"

// Graph is a directed acyclic graph in compressed sparse rows, indexed by
// destination: the incoming edges of vertex v are InSrc[InStart[v]:InStart[v+1]]
// with weights InWeight[...]. Weights are in ns and non-negative.
//
// Time, if not nil, is each vertex's time in ns (len N): Dijkstra and
// DeltaStepping then take the vertices latest first (the paper's "start
// the search from the vertex with the largest timestamp"), which on a PAG
// with consistent clocks (Time[u] <= Time[v] on every edge u->v) processes
// almost every vertex once, with its final Dist. The times only order the
// work: the results are exact whatever they are.
type Graph struct {
	N        int
	InStart  []int32 // len N+1
	InSrc    []int32
	InWeight graph.Weights
	Time     []int64 // nil, or len N: each vertex's time, ns
}

// Path is a critical path.
type Path struct {
	Vertices []int32 // from the source to the target
	Length   int64   // sum of the weights along it, ns
}

// Unreached marks Dist of vertices that cannot reach the target.
const Unreached = int64(-1) << 62

// NoVertex is Succ of the target and of vertices that cannot reach it.
const NoVertex = int32(-1)

// Result is what every algorithm returns for one target.
type Result struct {
	Dist  []int64 // longest distance to the target, Unreached if none
	Succ  []int32 // next vertex on a longest path (smallest id among equals), NoVertex if none
	Path  Path
	Stats Stats
}

// Stats reports how much work an algorithm did; fields that do not apply
// to it stay zero.
type Stats struct {
	Reached     int   // vertices that can reach the target (the target included)
	Relaxations int64 // edges examined
	Updates     int64 // times a Dist increased
	Pushes      int64 // queue insertions
	Pops        int64 // vertices processed (a vertex re-inserted after an update counts again)
	Stale       int64 // queue entries dropped because their vertex had improved since
	Phases      int64 // Δ-stepping: buckets emptied
	Light       int64 // Δ-stepping: relaxations of edges of weight <= Δ
	Heavy       int64 // Δ-stepping: relaxations of edges of weight > Δ
	MaxQueue    int   // most queue entries held at once (16 bytes each)
	CycleChecks int   // full cycle checks run because the work looked unbounded
}
