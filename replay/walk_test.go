package replay

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// TestWalkFirstOfEquals: walk, which finds the path's edges again from
// the distances, follows the edges a solve that kept them would keep:
// into each vertex the first of its row (by source id) that gives its
// distance. Random graphs with weights of 0-3 have many ties; the rules
// take rows plain, as zero and scaled, by kind and by call.
func TestWalkFirstOfEquals(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	kinds := []graph.EdgeKind{graph.EdgeProgram, graph.EdgeCall, graph.EdgeLateSender, graph.EdgeLateReceiver, graph.EdgeCollective, graph.EdgeLaunch}
	for it := range 300 {
		calls := 1 + rng.Intn(40)
		n := 2*calls + rng.Intn(5) // the calls' S and E, then hubs
		g := &cpath.Graph{N: n, InStart: make([]int32, n+1)}
		var kind []graph.EdgeKind
		var ws []int64
		for v := 1; v < n; v++ {
			for range rng.Intn(4) {
				g.InSrc = append(g.InSrc, int32(rng.Intn(v)))
				ws = append(ws, int64(rng.Intn(4)))
				kind = append(kind, kinds[rng.Intn(len(kinds))])
			}
			g.InStart[v+1] = int32(len(g.InSrc))
		}
		g.InWeight = graph.WeightsOf(ws)
		ops := make([]trace.Op, calls)
		for c := range ops {
			ops[c] = trace.OpSend
		}
		w, err := newWhole(g, nil, kind, ops, []int32{0, int32(calls)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		sites, notUseful := newBits(calls), newBits(calls)
		for c := range int32(calls) {
			if rng.Intn(3) == 0 {
				sites.set(c)
			}
			if rng.Intn(4) == 0 {
				notUseful.set(c)
			}
		}
		half := identity()
		half.mul[graph.EdgeProgram] = 0.5
		free := identity()
		for _, k := range transferKinds {
			free.mul[k] = 0
		}
		site := identity()
		site.sites, site.siteMul = sites, 0.5
		rank := identity()
		rank.rankLo, rank.rankHi, rank.rankMul = 0, int32(calls), 0.3
		for ri, r := range []*rule{identity(), half, free, site, rank, usefulOnly(notUseful)} {
			s := w.newSolver()
			length, end := s.solve(r)
			want, wantLen := keptPath(w, r, end)
			if wantLen != length {
				t.Fatalf("graph %d, rule %d: solve's length %d, the reference's %d", it, ri, length, wantLen)
			}
			var got []string
			s.walk(end, func(v int32, k graph.EdgeKind, ns int64) { got = append(got, fmt.Sprint(v, k, ns)) })
			if !slices.Equal(got, want) {
				t.Fatalf("graph %d, rule %d: walk %v, the edges a solve keeps %v", it, ri, got, want)
			}
		}
	}
}

// keptPath is the path a solve keeping each vertex's edge finds: the
// first edge of the row that gives the longest distance. It returns the
// path's edges from end back, as walk reports them, and the distance at
// end.
func keptPath(w *whole, r *rule, end int32) ([]string, int64) {
	dist := make([]int64, w.n)
	pred := make([]int32, w.n)
	modes, perCall, tab := r.modes(), r.perCall(), r.mul
	weigh := func(i int, e int32) int64 {
		m, mode := w.rowRule(r, &modes, perCall, w.order[i], &tab)
		switch mode {
		case plainRow:
			return w.weight.At(e)
		case zeroRow:
			return 0
		}
		return scale(w.weight.At(e), m[w.kind[e]])
	}
	for i := range w.order {
		pred[i] = -1
		for e := w.start[i]; e < w.start[i+1]; e++ {
			if d := dist[w.src[e]] + weigh(i, e); pred[i] < 0 || d > dist[i] {
				dist[i], pred[i] = d, e
			}
		}
	}
	var out []string
	for i := end; pred[i] >= 0; i = w.src[pred[i]] {
		e := pred[i]
		out = append(out, fmt.Sprint(w.order[i], w.kind[e], weigh(int(i), e)))
	}
	return out, dist[end]
}
