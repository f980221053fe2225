package cpath

import "github.com/cpath/cpath/internal/mpix"

// DistDAG is the sequential reference's path (DAG's, vertex for vertex)
// on a graph distributed over the ranks of c, without gathering it: a
// sweep pipelined over the ranks in topological order (Schedule.DAGPath),
// the graph taken as one frame; SweepDAG takes its splits as frames too,
// which keeps the rounds few. It must be called on every rank of c
// together; errors (a malformed share, a cycle before the target) are
// returned on every rank, and the Path is complete on rank 0.
func DistDAG(c mpix.Comm, g *DistGraph) (*DistResult, error) {
	res, _, err := SweepDAG(c, g, nil, nil)
	return res, err
}
