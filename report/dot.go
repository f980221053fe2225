package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// FullDOTCalls is the largest run drawn vertex by vertex; larger ones are
// drawn condensed, one node per rank and call site.
const FullDOTCalls = 200

// CondensedSites is how many call sites of a rank the condensed drawing
// shows: those whose edges carry the most of the critical path, then the
// most time. A rank's other sites become one node. Every site of a large
// program is more than Graphviz lays out: HPCC at 6 ranks made 445 nodes
// and 4657 edges, on which dot -Tsvg gave up after 1.5 minutes ("trouble
// in init_rank").
const CondensedSites = 12

// otherSites is the Site of a rank's node that stands for its call sites
// beyond CondensedSites.
const otherSites = math.MaxUint64

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
// call site) gives it (Input.SiteLabel), CondensedSites a rank.
func WriteDOT(w io.Writer, edges []DOTEdge, name func(rank int, pc uint64) string) error {
	edges = condense(edges)
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
		case n.Site == otherSites:
			return fmt.Sprintf("rank %d\\n%s", n.Rank, n.Label)
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
	// The full drawing clusters each rank's vertices. The condensed one's
	// labels name the rank: clusters there made dot fail to route edges
	// between the many sites of a large program (HPCC: "Pshortestpath
	// failed").
	full := len(nodes) > 0 && slices.ContainsFunc(nodes, func(n DOTNode) bool { return n.Vertex >= 0 })
	for _, r := range ranks {
		indent := "  "
		cluster := r >= 0 && full
		if cluster {
			fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=\"rank %d\";\n", r, r)
			indent = "    "
		}
		for _, i := range byRank[r] {
			fmt.Fprintf(w, "%sn%d [label=\"%s\"];\n", indent, i, label(nodes[i]))
		}
		if cluster {
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

// condense keeps, of a condensed drawing's call-site nodes, CondensedSites
// a rank (those on the critical path first, by the time of its edges on
// it, then by the time of all their edges) and merges each rank's others
// into one node; an edge merged from one on the path is on the path. A
// full drawing (nodes of vertices) is returned as it is.
func condense(edges []DOTEdge) []DOTEdge {
	type score struct{ path, all int64 }
	scores := map[DOTNode]*score{}
	for _, e := range edges {
		for _, n := range []DOTNode{e.From, e.To} {
			if n.Vertex >= 0 {
				return edges
			}
			if n.Rank < 0 {
				continue
			}
			sc := scores[n]
			if sc == nil {
				sc = &score{}
				scores[n] = sc
			}
			sc.all += e.Ns
			if e.OnPath {
				sc.path += e.Ns
			}
		}
	}
	byRank := map[int][]DOTNode{}
	for n := range scores {
		byRank[n.Rank] = append(byRank[n.Rank], n)
	}
	merged := map[DOTNode]DOTNode{}
	for r, ns := range byRank {
		if len(ns) <= CondensedSites {
			continue
		}
		slices.SortFunc(ns, func(a, b DOTNode) int {
			x, y := scores[a], scores[b]
			return cmp.Or(cmp.Compare(y.path, x.path), cmp.Compare(y.all, x.all), cmp.Compare(a.Site, b.Site))
		})
		other := DOTNode{Rank: r, Site: otherSites, Vertex: -1, Label: fmt.Sprintf("%d other call sites", len(ns)-CondensedSites)}
		for _, n := range ns[CondensedSites:] {
			merged[n] = other
		}
	}
	if len(merged) == 0 {
		return edges
	}
	to := func(n DOTNode) DOTNode {
		if m, ok := merged[n]; ok {
			return m
		}
		return n
	}
	m := map[[2]DOTNode]*DOTEdge{}
	for _, e := range edges {
		from, dst := to(e.From), to(e.To)
		AddDOTEdge(m, from, dst, e.Ns, e.N)
		m[[2]DOTNode{from, dst}].OnPath = m[[2]DOTNode{from, dst}].OnPath || e.OnPath
	}
	out := make([]DOTEdge, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	return out
}

func cmpNode(a, b DOTNode) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Site, b.Site), cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Label, b.Label))
}

// dotEscape quotes s for a DOT label string (function names may hold
// quotes: operator"").
var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
