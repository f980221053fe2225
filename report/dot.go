package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
)

// FullDOTCalls is the largest run drawn vertex by vertex; larger ones are
// drawn condensed, one node per rank and call site.
const FullDOTCalls = 200

// WriteDOT writes the PAG for Graphviz with the critical path in red: every
// vertex for small runs, a condensed graph (ranks × call sites, edges
// weighted by the time they carry) for large ones.
func WriteDOT(w io.Writer, g *graph.PAG, path cpath.Path) error {
	onPath := make(map[int32]bool, len(path.Vertices))
	for _, v := range path.Vertices {
		onPath[v] = true
	}
	pathEdge := func(v int32) bool {
		p, _, _ := g.Pred(v)
		return onPath[v] && p >= 0 && onPath[p]
	}
	if g.NumCalls() <= FullDOTCalls {
		return fullDOT(w, g, pathEdge)
	}
	return condensedDOT(w, g, pathEdge)
}

func fullDOT(w io.Writer, g *graph.PAG, pathEdge func(int32) bool) error {
	fmt.Fprintln(w, "digraph pag {\n  rankdir=LR;\n  node [shape=box, fontsize=10];")
	for r := 0; r < g.Ranks; r++ {
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=\"rank %d\";\n", r, r)
		for c := g.RankStart[r]; c < g.RankStart[r+1]; c++ {
			fmt.Fprintf(w, "    v%d [label=\"S %s\"];\n    v%d [label=\"E %s\"];\n", 2*c, g.Op[c], 2*c+1, g.Op[c])
		}
		fmt.Fprintln(w, "  }")
	}
	for v := int32(0); v < int32(g.NumVertices()); v++ {
		if p, pw, _ := g.Pred(v); p >= 0 {
			attr := ""
			if pathEdge(v) {
				attr = ", color=red, penwidth=3"
			}
			fmt.Fprintf(w, "  v%d -> v%d [label=\"%s\"%s];\n", p, v, ns(pw), attr)
		}
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}

// DOTEdge is an edge of the condensed graph: all the PAG edges (calls'
// own excepted) from one rank and call site to another, with the time
// they carry.
type DOTEdge struct {
	FromRank int
	FromSite uint64
	ToRank   int
	ToSite   uint64
	Ns       int64
	N        int
	OnPath   bool
}

// AddDOTEdge adds a PAG edge to the condensed graph's edges m.
func AddDOTEdge(m map[[4]uint64]*DOTEdge, fromRank int, fromSite uint64, toRank int, toSite uint64, ns int64, onPath bool) {
	k := [4]uint64{uint64(fromRank), fromSite, uint64(toRank), toSite}
	e := m[k]
	if e == nil {
		e = &DOTEdge{FromRank: fromRank, FromSite: fromSite, ToRank: toRank, ToSite: toSite}
		m[k] = e
	}
	e.Ns += ns
	e.N++
	e.OnPath = e.OnPath || onPath
}

func condensedDOT(w io.Writer, g *graph.PAG, pathEdge func(int32) bool) error {
	m := map[[4]uint64]*DOTEdge{}
	for v := int32(0); v < int32(g.NumVertices()); v++ {
		p, pw, kind := g.Pred(v)
		if p < 0 || kind == graph.EdgeCall {
			continue
		}
		cu, cv := p>>1, v>>1
		AddDOTEdge(m, g.Rank(cu), g.CallSite[cu], g.Rank(cv), g.CallSite[cv], pw, pathEdge(v))
	}
	edges := make([]DOTEdge, 0, len(m))
	for _, e := range m {
		edges = append(edges, *e)
	}
	return WriteCondensedDOT(w, edges, g.LoadAddress)
}

// WriteCondensedDOT writes the condensed graph: one node per rank and call
// site (shown as an offset in the rank's executable), the edges summed.
func WriteCondensedDOT(w io.Writer, edges []DOTEdge, loadAddress []uint64) error {
	slices.SortFunc(edges, func(a, b DOTEdge) int {
		return cmp.Or(cmp.Compare(a.FromRank, b.FromRank), cmp.Compare(a.FromSite, b.FromSite),
			cmp.Compare(a.ToRank, b.ToRank), cmp.Compare(a.ToSite, b.ToSite))
	})
	type node struct {
		rank int
		site uint64
	}
	ids := map[node]int{}
	var nodes []node
	id := func(n node) int {
		if i, ok := ids[n]; ok {
			return i
		}
		ids[n] = len(nodes)
		nodes = append(nodes, n)
		return len(nodes) - 1
	}
	type pair struct{ from, to int }
	pairs := make([]pair, len(edges))
	for i, e := range edges {
		pairs[i] = pair{id(node{e.FromRank, e.FromSite}), id(node{e.ToRank, e.ToSite})}
	}
	fmt.Fprintln(w, "digraph pag {\n  node [shape=box, fontsize=10];")
	for i, n := range nodes {
		off := n.site
		if n.rank < len(loadAddress) && n.site >= loadAddress[n.rank] {
			off -= loadAddress[n.rank]
		}
		fmt.Fprintf(w, "  n%d [label=\"rank %d\\n0x%x\"];\n", i, n.rank, off)
	}
	for i, e := range edges {
		attr := ""
		if e.OnPath {
			attr = ", color=red, penwidth=3"
		}
		fmt.Fprintf(w, "  n%d -> n%d [label=\"%s ×%d\"%s];\n", pairs[i].from, pairs[i].to, ns(e.Ns), e.N, attr)
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}
