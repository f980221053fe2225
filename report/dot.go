package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FullDOTCalls is the largest run drawn vertex by vertex; larger ones are
// drawn condensed, one node per rank and call site.
const FullDOTCalls = 200

// DOTNode is a node of the drawing: one vertex of the PAG (the full
// drawing), or one rank and call site (the condensed one). Hubs and the
// run's start have rank -1.
type DOTNode struct {
	Rank   int
	Site   uint64 // condensed: the call site
	Vertex int32  // full: the vertex; -1 when condensed
	Label  string // full: "S MPI_Send", "E MPI_Send", "hub", "start"
}

// DOTEdge is an edge of the drawing: the PAG's edges from one node to
// another (one, in the full drawing), with the time they carry.
type DOTEdge struct {
	From, To DOTNode
	Ns       int64
	N        int
	OnPath   bool
}

// AddDOTEdge adds a PAG edge to the drawing's edges m.
func AddDOTEdge(m map[[2]DOTNode]*DOTEdge, from, to DOTNode, ns int64, n int) {
	k := [2]DOTNode{from, to}
	e := m[k]
	if e == nil {
		e = &DOTEdge{From: from, To: to}
		m[k] = e
	}
	e.Ns += ns
	e.N += n
}

// WriteDOT writes the PAG for Graphviz with the critical path in red, from
// its edges (all analyzer ranks' merged): the full drawing clusters the
// vertices by rank; the condensed one shows each call site as name(rank,
// call site) gives it (Input.SiteLabel).
func WriteDOT(w io.Writer, edges []DOTEdge, name func(rank int, pc uint64) string) error {
	slices.SortFunc(edges, func(a, b DOTEdge) int {
		return cmp.Or(cmpNode(a.From, b.From), cmpNode(a.To, b.To))
	})
	ids := map[DOTNode]int{}
	var nodes []DOTNode
	id := func(n DOTNode) int {
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
		pairs[i] = pair{id(e.From), id(e.To)}
	}
	label := func(n DOTNode) string {
		switch {
		case n.Vertex >= 0:
			return n.Label
		case n.Rank < 0: // condensed: all hubs are one node
			return n.Label
		}
		return fmt.Sprintf("rank %d\\n%s", n.Rank, dotEscape(orDash(name(n.Rank, n.Site))))
	}
	fmt.Fprintln(w, "digraph pag {\n  rankdir=LR;\n  node [shape=box, fontsize=10];")
	byRank := map[int][]int{}
	for i, n := range nodes {
		byRank[n.Rank] = append(byRank[n.Rank], i)
	}
	ranks := make([]int, 0, len(byRank))
	for r := range byRank {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	for _, r := range ranks {
		indent := "  "
		if r >= 0 {
			fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=\"rank %d\";\n", r, r)
			indent = "    "
		}
		for _, i := range byRank[r] {
			fmt.Fprintf(w, "%sn%d [label=\"%s\"];\n", indent, i, label(nodes[i]))
		}
		if r >= 0 {
			fmt.Fprintln(w, "  }")
		}
	}
	for i, e := range edges {
		attr := ""
		if e.OnPath {
			attr = ", color=red, penwidth=3"
		}
		times := ""
		if e.N > 1 {
			times = fmt.Sprintf(" ×%d", e.N)
		}
		fmt.Fprintf(w, "  n%d -> n%d [label=\"%s%s\"%s];\n", pairs[i].from, pairs[i].to, ns(e.Ns), times, attr)
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}

func cmpNode(a, b DOTNode) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Site, b.Site), cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Label, b.Label))
}

// dotEscape quotes s for a DOT label string (function names may hold
// quotes: operator"").
var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
