package cpath

import (
	"fmt"
	"math"
	"runtime"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// DistDAG is the sequential reference on a distributed graph: the ranks'
// CSR shares are gathered on rank 0 (their vertex ranges are contiguous,
// so the shares are concatenated), which finds DAG's path on the whole
// graph (Solver.DAGPath). With one rank the graph is used in place,
// without copying. It must be called on every rank of c together; errors
// (a malformed share, a cycle) are returned on every rank, and the Path
// is complete on rank 0, with the whole graph and the order its search
// finished the ancestors of the target in (Whole).
//
// Rank 0 needs the whole graph in memory: this is the reference to check
// the distributed algorithms against and the fastest choice while the
// graph fits (no rounds: three gathers), not a way to scale.
func DistDAG(c mpix.Comm, g *DistGraph) (*DistResult, error) { return distDAG(c, g, true) }

// DistDAGPath is DistDAG without Whole, for a caller that needs only the
// path: its search keeps no order of the vertices (on the 16 M-call halo
// log's 32 M vertices, 128 MB at the analysis's peak).
func DistDAGPath(c mpix.Comm, g *DistGraph) (*DistResult, error) { return distDAG(c, g, false) }

func distDAG(c mpix.Comm, g *DistGraph, whole bool) (*DistResult, error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, err
	}
	b0, calls0 := c.Stats()
	graph.Timings().Mark(c.Rank(), "")
	all, err := Gather(c, g)
	if err != nil {
		return nil, err
	}
	graph.Timings().Mark(c.Rank(), "dag-gather")
	res := &DistResult{}
	if c.Rank() == 0 {
		s := new(Solver)
		res.Path, res.Stats.Stats, err = s.dagPath(all, g.Target, runtime.GOMAXPROCS(0) > 1, whole)
		if whole {
			res.Whole = &Whole{Graph: all, First: s.Finished()}
		}
	}
	// The others wait without polling, leaving rank 0 the cores.
	if ierr := mpix.Idle(c); err == nil {
		err = ierr
	}
	graph.Timings().Mark(c.Rank(), "dag-solve")
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
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
//
// The whole graph is the buffers MPI gathered into, renumbered in place:
// copied into arrays of their own, the 16 M-call log's 38 M edges took
// 1.2 s more of copies and first-touch page faults on rank 0.
func Gather(c mpix.Comm, g *DistGraph) (*Graph, error) {
	if c.Size() == 1 {
		return &Graph{N: g.N, InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight}, nil
	}
	// Rank 0's row starts with their leading 0, the others' without, so
	// that the parts concatenate into the whole graph's row starts once
	// offset.
	rows := g.InStart[1:]
	if c.Rank() == 0 {
		rows = g.InStart
	}
	var whole [4][]byte
	var sizes [4][]int
	for i, b := range [][]byte{mpix.Bytes(rows), mpix.Bytes(g.InSrc), mpix.Bytes(g.InWeight.W), mpix.Bytes(g.InWeight.Big)} {
		var err error
		if whole[i], sizes[i], err = mpix.GatherWhole(c, b); err != nil {
			return nil, err
		}
	}
	var out *Graph
	var err error
	if c.Rank() == 0 {
		out, err = joinShares(g.N, whole, sizes)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	return out, nil
}

// joinShares makes the gathered shares one graph in place: whole holds
// every rank's row starts (rank 0's with the leading 0), sources, weights
// and large values, each in rank order, sizes their parts' bytes. A
// share's row starts are offset by the edges before it, and its weights
// that index a large value by the large values before it.
func joinShares(n int, whole [4][]byte, sizes [4][]int) (*Graph, error) {
	starts, err := mpix.FromBytes[int32](whole[0])
	if err != nil {
		return nil, err
	}
	srcs, err := mpix.FromBytes[int32](whole[1])
	if err != nil {
		return nil, err
	}
	ws, err := mpix.FromBytes[int32](whole[2])
	if err != nil {
		return nil, err
	}
	big, err := mpix.FromBytes[int64](whole[3])
	if err != nil {
		return nil, err
	}
	if len(starts) != n+1 {
		return nil, fmt.Errorf("cpath: the ranks shipped %d vertices of %d", len(starts)-1, n)
	}
	if len(srcs) > math.MaxInt32 {
		return nil, fmt.Errorf("cpath: %d edges in the whole graph: more than its 32-bit rows hold", len(srcs))
	}
	if len(srcs) != len(ws) {
		return nil, fmt.Errorf("cpath: the ranks shipped %d sources and %d weights", len(srcs), len(ws))
	}
	v, e, b := 1, 0, 0 // where the share starts: row, edge, large value
	for p := range sizes[0] {
		nv, ne, nb := sizes[0][p]/4, sizes[1][p]/4, sizes[3][p]/8
		if p == 0 {
			nv-- // the leading 0
		}
		if sizes[2][p]/4 != ne || (nv > 0 && int(starts[v+nv-1]) != ne) || (nv == 0 && ne != 0) {
			return nil, fmt.Errorf("cpath: rank %d shipped %d sources and %d weights for %d edges", p, ne, sizes[2][p]/4, ne)
		}
		for i := v; i < v+nv; i++ {
			starts[i] += int32(e)
		}
		for i := e; i < e+ne; i++ {
			if w := ws[i]; w < 0 {
				if int(-1-w) >= nb {
					return nil, fmt.Errorf("cpath: rank %d shipped a weight outside its %d large ones", p, nb)
				}
				ws[i] = w - int32(b)
			}
		}
		v, e, b = v+nv, e+ne, b+nb
	}
	return &Graph{N: n, InStart: starts, InSrc: srcs, InWeight: graph.Weights{W: ws, Big: big}}, nil
}
