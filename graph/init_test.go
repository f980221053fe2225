package graph_test

import (
	"slices"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// TestInitBarrier is the worked example of docs/analysis.md: MPI_Init is
// a barrier over MPI_COMM_WORLD (sequence number 0), so rank 0, launched
// 4 µs before rank 1, waits for it there (Wait at Barrier), and the path
// starts with rank 1's launch and runs through the MPI_Init hub to rank
// 0's send: start → S(Init₁) → hub → E(Init₀) → S(Send) → E(Send) →
// S(Barrier₀) → hub → E(Barrier₁), 321 µs. Ranks that mix MPI_Init and
// MPI_Init_thread make one instance.
func TestInitBarrier(t *testing.T) {
	const us = 1000
	for _, init1 := range []trace.Op{trace.OpInit, trace.OpInitThread} {
		t.Run(init1.String(), func(t *testing.T) {
			recs := [][]trace.Record{
				{call(trace.OpInit, 0, 10*us), msg(trace.OpSend, 100*us, 105*us, 1), barrier(300*us, 320*us)},
				{call(init1, 4*us, 12*us), msg(trace.OpRecv, 50*us, 110*us, 0), barrier(200*us, 321*us)},
			}
			dir := t.TempDir()
			writeLogs(t, dir, recs)
			g := mustBuild(t, dir)
			checkEdges(t, g)
			if len(g.Colls) != 2 || !g.Colls[0].Op.IsWorldBarrier() || g.Colls[0].Seq != 0 || g.Colls[0].N != 2 || g.Colls[0].NoData {
				t.Fatalf("instances %+v: want MPI_Init's first, sequence number 0, both ranks, then the barrier", g.Colls)
			}
			init0, send, bar0 := g.RankStart[0], g.RankStart[0]+1, g.RankStart[0]+2
			init1c, recv, bar1 := g.RankStart[1], g.RankStart[1]+1, g.RankStart[1]+2
			for _, w := range []struct {
				call, cause int32
				kind        graph.WaitKind
				ns          int64
			}{{init0, init1c, graph.WaitAtBarrier, 4 * us}, {recv, send, graph.LateSender, 50 * us}, {bar1, bar0, graph.WaitAtBarrier, 100 * us}} {
				got := waitOf(g, w.call)
				if got == nil || got.Cause != w.cause || got.Kind != w.kind || got.Ns != w.ns {
					t.Errorf("call %d's wait %+v, want %v of %d ns for call %d", w.call, got, w.kind, w.ns, w.cause)
				}
			}
			if w := waitOf(g, init1c); w != nil {
				t.Errorf("rank 1, the last to enter MPI_Init, waited: %+v", w)
			}
			path := pathAsLongAsRun(t, g)
			if path.Length != 321*us {
				t.Fatalf("path of %d ns, want 321 µs", path.Length)
			}
			// The hubs are numbered after the calls' vertices; leave them out.
			calls := slices.DeleteFunc(slices.Clone(path.Vertices), func(v int32) bool { return v >= g.StartVertex-g.Hubs && v != g.StartVertex })
			want := []int32{g.StartVertex, g.S(init1c), g.E(init0), g.S(send), g.E(send), g.S(bar0), g.E(bar1)}
			if !slices.Equal(calls, want) {
				t.Fatalf("path through the calls' vertices %v, want %v (all %v)", calls, want, path.Vertices)
			}
			if len(path.Vertices) != len(want)+2 {
				t.Fatalf("path %v: want two hubs, MPI_Init's and the barrier's", path.Vertices)
			}
		})
	}
}
