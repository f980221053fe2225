package cpath

import (
	"fmt"
	"github.com/cpath/cpath/graph"

	"github.com/cpath/cpath/internal/mpix"
)

// DistDAG is the sequential reference, Solver.DAG, on a distributed graph:
// the ranks' CSR shares are gathered on rank 0 (their vertex ranges are
// contiguous, so the shares are concatenated), which runs DAG on the whole
// graph. With one rank the graph is used in place, without copying. It
// must be called on every rank of c together; errors (a malformed share,
// a cycle) are returned on every rank, and the Path is complete on rank 0.
//
// Rank 0 needs the whole graph in memory: this is the reference to check
// the distributed algorithms against and the fastest choice while the
// graph fits (no rounds: three gathers), not a way to scale.
func DistDAG(c mpix.Comm, g *DistGraph) (*DistResult, error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, err
	}
	b0, calls0 := c.Stats()
	whole, err := Gather(c, g)
	if err != nil {
		return nil, err
	}
	var r *Result
	if c.Rank() == 0 {
		r, err = new(Solver).DAG(whole, g.Target)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	res := &DistResult{}
	if c.Rank() == 0 {
		res.Path = r.Path
		res.Stats.Stats = r.Stats
	}
	b1, calls1 := c.Stats()
	// Rank 0's counters and every rank's bytes and edges, summed.
	x := []int64{int64(res.Stats.Reached), res.Stats.Relaxations, res.Stats.Updates, res.Stats.Pops,
		b1 - b0, int64(len(g.InSrc))}
	if err := c.Allreduce(x, mpix.Sum); err != nil {
		return nil, err
	}
	res.Stats.Reached, res.Stats.Relaxations, res.Stats.Updates, res.Stats.Pops = int(x[0]), x[1], x[2], x[3]
	res.Stats.BytesSent, res.Stats.Edges = x[4], x[5]
	res.Stats.Rounds = calls1 - calls0
	return res, nil
}

// Gather returns the whole graph on rank 0 (nil on the others): the
// ranks' CSR shares, whose vertex ranges are contiguous, concatenated. With
// one rank it is g's rows in place, without copying. It must be called on
// every rank of c together; errors (shares that do not fit together) are
// returned on every rank.
func Gather(c mpix.Comm, g *DistGraph) (*Graph, error) {
	if c.Size() == 1 {
		return &Graph{N: g.N, InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight}, nil
	}
	// InStart without its leading 0, so that the parts concatenate
	// into the row ends of the whole graph once offset.
	starts, err := c.Gatherv(mpix.Bytes(g.InStart[1:]))
	if err != nil {
		return nil, err
	}
	srcs, err := c.Gatherv(mpix.Bytes(g.InSrc))
	if err != nil {
		return nil, err
	}
	weights, err := c.Gatherv(mpix.Bytes(g.InWeight.W))
	if err != nil {
		return nil, err
	}
	bigs, err := c.Gatherv(mpix.Bytes(g.InWeight.Big))
	if err != nil {
		return nil, err
	}
	var whole *Graph
	if c.Rank() == 0 {
		whole, err = concatShares(g.N, starts, srcs, weights, bigs)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	return whole, nil
}

// concatShares joins the gathered shares (row ends without the leading 0,
// sources, weights and their large values, by rank) into the whole graph.
func concatShares(n int, starts, srcs, weights, bigs [][]byte) (*Graph, error) {
	g := &Graph{N: n, InStart: make([]int32, 1, n+1)}
	for p := range starts {
		ends, err := mpix.FromBytes[int32](starts[p])
		if err != nil {
			return nil, err
		}
		us, err := mpix.FromBytes[int32](srcs[p])
		if err != nil {
			return nil, err
		}
		ws, err := mpix.FromBytes[int32](weights[p])
		if err != nil {
			return nil, err
		}
		big, err := mpix.FromBytes[int64](bigs[p])
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w < 0 && int(-1-w) >= len(big) {
				return nil, fmt.Errorf("cpath: rank %d shipped a weight outside its %d large ones", p, len(big))
			}
		}
		if len(us) != len(ws) || (len(ends) > 0 && int(ends[len(ends)-1]) != len(us)) {
			return nil, fmt.Errorf("cpath: rank %d shipped %d sources and %d weights for %d edges", p, len(us), len(ws), len(us))
		}
		base := int32(len(g.InSrc))
		for _, e := range ends {
			g.InStart = append(g.InStart, base+e)
		}
		g.InSrc = append(g.InSrc, us...)
		g.InWeight.Concat(graph.Weights{W: ws, Big: big})
	}
	if len(g.InStart) != n+1 {
		return nil, fmt.Errorf("cpath: the ranks shipped %d vertices of %d", len(g.InStart)-1, n)
	}
	return g, nil
}
