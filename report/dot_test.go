package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestCondensedSites: a condensed drawing shows CondensedSites call sites
// a rank (the one the critical path runs through, however little time its
// edges carry, then those with the most) and merges the rest of each
// rank's into one node, keeping the edges' time, their counts and the
// path's colour; ranks are not clusters. A full drawing is untouched.
func TestCondensedSites(t *testing.T) {
	const sites = 30
	site := func(r int, s uint64) DOTNode { return DOTNode{Rank: r, Site: s, Vertex: -1} }
	hub := DOTNode{Rank: -1, Vertex: -1, Label: "hub"}
	var edges []DOTEdge
	var total int64
	for r := 0; r < 2; r++ {
		for s := uint64(1); s <= sites; s++ {
			// Site s's edges carry s µs; site 1 is on the path.
			e := DOTEdge{From: site(r, s), To: hub, Ns: int64(s) * 1000, N: 1, OnPath: s == 1}
			edges = append(edges, e, DOTEdge{From: hub, To: site(r, s%sites+1), Ns: 7, N: 2})
			total += e.Ns + 7
		}
	}
	var b strings.Builder
	if err := WriteDOT(&b, edges, func(r int, pc uint64) string { return fmt.Sprintf("site%d", pc) }); err != nil {
		t.Fatal(err)
	}
	src := b.String()
	if strings.Contains(src, "cluster") {
		t.Error("the condensed drawing has clusters")
	}
	labels := regexp.MustCompile(`label="rank ([0-9]+)\\n([^"]*)"`).FindAllStringSubmatch(src, -1)
	perRank := map[string][]string{}
	for _, l := range labels {
		perRank[l[1]] = append(perRank[l[1]], l[2])
	}
	for r, ls := range perRank {
		want := []string{"site1", fmt.Sprintf("%d other call sites", sites-CondensedSites)}
		for s := sites; s > sites-(CondensedSites-1); s-- {
			want = append(want, fmt.Sprintf("site%d", s))
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(ls, "|"), w) {
				t.Errorf("rank %s: nodes %v lack %q", r, ls, w)
			}
		}
		if len(ls) != CondensedSites+1 {
			t.Errorf("rank %s: %d nodes, want %d", r, len(ls), CondensedSites+1)
		}
	}
	var sum int64
	for _, e := range condense(edges) {
		sum += e.Ns
	}
	if sum != total {
		t.Errorf("the merged edges carry %d ns, the drawing's %d", sum, total)
	}
	if n := strings.Count(src, "color=red"); n != 2 {
		t.Errorf("%d edges on the path, want 2 (site 1 of each rank)", n)
	}

	full := []DOTEdge{{From: DOTNode{Rank: 0, Vertex: 0, Label: "S MPI_Send"}, To: DOTNode{Rank: 0, Vertex: 1, Label: "E MPI_Send"}, Ns: 5, N: 1}}
	if got := condense(full); len(got) != 1 || got[0] != full[0] {
		t.Errorf("a full drawing condensed to %+v", got)
	}
}
