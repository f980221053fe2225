package cpath

import "github.com/cpath/cpath/graph"

// FromPAG views a PAG as a Graph. The PAG keeps its edges in the same
// compressed sparse rows, so nothing is copied: the Graph shares them.
func FromPAG(g *graph.PAG) *Graph {
	return &Graph{N: len(g.InStart) - 1, InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight}
}

// FromPart views one analyzer rank's part of a distributed PAG as its
// share of a DistGraph: the edges are shared, the vertex times and the
// ranges of the other ranks computed.
func FromPart(p *graph.Part) *DistGraph {
	g := &DistGraph{N: 2 * p.NumCalls(), Lo: 2 * p.CallLo, Hi: 2 * p.CallHi,
		InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
	g.Bounds = make([]int32, len(p.PartRanks))
	for q, r := range p.PartRanks {
		g.Bounds[q] = 2 * p.RankStart[r]
	}
	g.Time = make([]int64, g.Hi-g.Lo)
	for c := range p.Start {
		g.Time[2*c], g.Time[2*c+1] = p.Start[c], p.End[c]
	}
	return g
}

// TopoFromPart gives the topological methods a part's calls.
func TopoFromPart(p *graph.Part) *TopoCalls {
	in := &TopoCalls{Ranks: p.Ranks, RankStart: p.RankStart, RankLo: p.RankLo, RankHi: p.RankHi,
		Start: p.Start, End: p.End, Prev: make([]int32, len(p.Start))}
	for c := range in.Prev {
		in.Prev[c] = -1
		// S(c)'s one incoming edge, if any, is the program edge from the
		// previous call of its thread.
		if e := p.InStart[2*c]; e < p.InStart[2*c+1] {
			in.Prev[c] = p.InSrc[e] >> 1
		}
	}
	return in
}
