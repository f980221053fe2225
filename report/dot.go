package report

import (
	"fmt"
	"io"

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

func condensedDOT(w io.Writer, g *graph.PAG, pathEdge func(int32) bool) error {
	type node struct {
		rank int
		site uint64
	}
	type edge struct{ from, to int }
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
	type acc struct {
		ns     int64
		n      int
		onPath bool
	}
	edges := map[edge]*acc{}
	for v := int32(0); v < int32(g.NumVertices()); v++ {
		p, pw, kind := g.Pred(v)
		if p < 0 || kind == graph.EdgeCall {
			continue
		}
		cu, cv := p>>1, v>>1
		e := edge{id(node{g.Rank(cu), g.CallSite[cu]}), id(node{g.Rank(cv), g.CallSite[cv]})}
		a := edges[e]
		if a == nil {
			a = &acc{}
			edges[e] = a
		}
		a.ns += pw
		a.n++
		a.onPath = a.onPath || pathEdge(v)
	}
	fmt.Fprintln(w, "digraph pag {\n  node [shape=box, fontsize=10];")
	for i, n := range nodes {
		fmt.Fprintf(w, "  n%d [label=\"rank %d\\n0x%x\"];\n", i, n.rank, n.site-g.LoadAddress[n.rank])
	}
	for e, a := range edges {
		attr := ""
		if a.onPath {
			attr = ", color=red, penwidth=3"
		}
		fmt.Fprintf(w, "  n%d -> n%d [label=\"%s ×%d\"%s];\n", e.from, e.to, ns(a.ns), a.n, attr)
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}
