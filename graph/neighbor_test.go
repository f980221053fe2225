package graph_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// neighborRing writes a run of 4 ranks on a periodic 1-D cart (each
// rank's neighbours r-1 and r+1) calling one neighbourhood collective
// (op; an I-form is completed by an MPI_Wait) at 300 ns, but rank 0 at
// 1000 ns. Every member ends once its neighbours have arrived: ranks 1
// and 3 (rank 0's neighbours) and rank 0 at 1010, rank 2 at 310.
func neighborRing(t *testing.T, op trace.Op) string {
	const ranks = 4
	recs := make([][]trace.Record, ranks)
	for r := range recs {
		w := int32(r)
		cart := call(trace.OpCartCreate, 100, 200)
		cart.Comm, cart.Seq, cart.Req, cart.Tag, cart.Root = trace.CommWorld, 1, 2, 1, 0
		rs := []trace.Record{call(trace.OpInit, 0, 10), cart}
		for m := int32(0); m < ranks; m++ {
			rs = append(rs, trace.Record{Op: trace.OpMember, Peer: m})
		}
		left, right := (w+ranks-1)%ranks, (w+1)%ranks
		for _, sub := range []trace.Op{trace.OpNeighborSource, trace.OpNeighborDest} {
			rs = append(rs, trace.Record{Op: sub, Peer: left}, trace.Record{Op: sub, Peer: right})
		}
		start, end := int64(300), int64(1010)
		switch r {
		case 0:
			start = 1000
		case 2:
			end = 310
		}
		nc := call(op, start, end)
		nc.Comm, nc.Seq, nc.Bytes = 2, 1, 16
		if op.Class() == trace.ClassIcollective {
			nc.End = start + 2
			nc.Flags, nc.Req = trace.FlagNewReq, 1
			rs = append(rs, nc, call(trace.OpWait, start+5, end), trace.Record{Op: trace.OpReqDone, Req: 1, Peer: trace.PeerNone})
		} else {
			rs = append(rs, nc)
		}
		fin := end + 10
		if r == 1 {
			fin = end + 20 // the run's last event
		}
		rs = append(rs, call(trace.OpFinalize, end+5, fin))
		recs[r] = rs
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	return dir
}

// TestNeighborRing: in a neighbourhood collective a member waits only for
// its in-neighbours. The late rank 0's neighbours (1 and 3) wait for it
// (Wait at N x N, 700 ns), rank 2 does not; rank 2's completion has edges
// from ranks 1 and 3 only; no hub; the critical path runs from rank 0's
// post to its neighbour's completion; the same in 2 analyzer parts.
func TestNeighborRing(t *testing.T) {
	for _, op := range []trace.Op{trace.OpNeighborAllgather, trace.OpIneighborAlltoallv} {
		t.Run(op.String(), func(t *testing.T) {
			dir := neighborRing(t, op)
			run, g := loadBuild(t, dir)
			checkEdges(t, g)
			if g.Hubs != 2 {
				t.Errorf("%d hubs, want 2, MPI_Init's and MPI_Cart_create's (neighbourhood collectives have none)", g.Hubs)
			}
			// The collective's post and completing call on each rank.
			post, done := make([]int32, 4), make([]int32, 4)
			for r := range post {
				post[r] = g.RankStart[r] + 2
				done[r] = post[r]
				if op.Class() == trace.ClassIcollective {
					done[r]++
				}
				if g.Op[post[r]] != op {
					t.Fatalf("rank %d call %d is %v, want %v", r, post[r], g.Op[post[r]], op)
				}
			}
			ci := g.Comms[g.Comm[post[0]]]
			if len(ci.Sources) != 4 || fmt.Sprint(ci.Sources[2]) != "[1 3]" || fmt.Sprint(ci.Dests[0]) != "[3 1]" {
				t.Fatalf("communicator %s: sources %v dests %v", ci.Name, ci.Sources, ci.Dests)
			}
			for r := 0; r < 4; r++ {
				w := waitOf(g, done[r])
				switch r {
				case 1, 3:
					if w == nil || w.Kind != graph.WaitAtNxN || w.Cause != post[0] || w.Ns != 1000-300-int64(done[r]-post[r])*5 {
						t.Errorf("rank %d: wait %+v, want Wait at N x N for rank 0's call %d", r, w, post[0])
					}
				default:
					if w != nil {
						t.Errorf("rank %d: wait %+v, want none (its neighbours were not late)", r, w)
					}
				}
				// Collective edges into the completion: from the in-neighbours.
				var from []int
				e := g.E(done[r])
				for k := g.InStart[e]; k < g.InStart[e+1]; k++ {
					if g.InKind[k] == graph.EdgeCollective {
						c, _ := g.Vertex(g.InSrc[k])
						from = append(from, g.Rank(c))
						if g.InSrc[k] != g.S(c) || c != post[g.Rank(c)] {
							t.Errorf("rank %d: collective edge from vertex %d, want a neighbour's post", r, g.InSrc[k])
						}
					}
				}
				slices.Sort(from)
				want := []int{(r + 1) % 4, (r + 3) % 4}
				slices.Sort(want)
				if !slices.Equal(from, want) {
					t.Errorf("rank %d: collective edges from ranks %v, want %v", r, from, want)
				}
			}
			path := mustPath(t, g)
			if path.Length != g.T1-g.T0 {
				t.Errorf("path %d ns, run %d ns", path.Length, g.T1-g.T0)
			}
			checkLastArriving(t, g, path)
			onPath := map[int32]bool{}
			for _, v := range path.Vertices {
				onPath[v] = true
			}
			if !onPath[g.S(post[0])] || !onPath[g.E(done[1])] || onPath[g.E(done[2])] {
				t.Errorf("path %v: want rank 0's post and rank 1's completion on it, not rank 2's", path.Vertices)
			}
			parts := make([]*graph.PAG, 2)
			errs := make([]error, 2)
			mpixtest.Run(2, func(c mpix.Comm) { parts[c.Rank()], errs[c.Rank()] = buildSplits(c, run) })
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			comparePartsTo(t, "P=2", g, parts)
		})
	}
}
