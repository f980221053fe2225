package graph_test

import (
	"reflect"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// pscwRun writes a run of 3 ranks sharing window 1 (MPI_Win_create on
// MPI_COMM_WORLD), rank 0 the target of three exposure epochs:
//
//	epoch 1: rank 0 posts to {1, 2} at 1000 and waits 1100-3000. Rank 1's
//	  MPI_Win_start (500-1010) blocks until the post: Late Post 500 in the
//	  start. Rank 2's start returns at once (300-310); its first MPI_Put to
//	  0 (320-1050) waits for the post: Late Post 680 in the put; its second
//	  put ends at 1210 and it completes at 2900 (rank 1 at 2000): rank 0's
//	  Early Wait 2900-1100 = 1800, of which Late Complete 2900-1210 = 1690.
//	epoch 2: rank 2 starts (3800) and completes (3900-4020) before rank 0
//	  posts to {2} at 4000: Late Post 100 in the complete; rank 0's wait
//	  (4030) finds it complete: no wait.
//	epoch 3: rank 0 posts to {1} at 5000 and polls with MPI_Win_test
//	  (four unproductive calls 5100-5500, then the one that finds the epoch
//	  complete, 5600-5610); rank 1 starts at 4900 and completes at 5605:
//	  Early Wait from the first poll, 5605-5100 = 505, all of it Late
//	  Complete (no transfer).
//
// Epochs 1 and 2 of rank 0 with rank 2 match by order.
func pscwRun(t *testing.T) string {
	win := func(op trace.Op, start, end int64) trace.Record {
		r := call(op, start, end)
		r.Comm, r.Tag = trace.CommWorld, 1
		return r
	}
	coll := func(op trace.Op, start, end int64, seq uint32) trace.Record {
		r := win(op, start, end)
		r.Seq = seq
		return r
	}
	group := func(op trace.Op, start, end int64, members ...int32) []trace.Record {
		rs := []trace.Record{win(op, start, end)}
		for _, m := range members {
			rs = append(rs, trace.Record{Op: trace.OpWinGroupMember, Peer: m, Root: trace.PeerNone})
		}
		return rs
	}
	put := func(start, end int64) trace.Record {
		r := win(trace.OpPut, start, end)
		r.Peer, r.Bytes = 0, 8
		return r
	}
	polls := win(trace.OpWinTest, 5100, 5500)
	polls.Root = 4 // four unproductive calls, coalesced
	head := []trace.Record{call(trace.OpInit, 0, 10), coll(trace.OpWinCreate, 100, 200, 1)}
	tail := func(fin int64) []trace.Record {
		return []trace.Record{coll(trace.OpWinFree, 6000, 6100, 2), call(trace.OpFinalize, 6200, fin)}
	}
	cat := func(parts ...[]trace.Record) []trace.Record {
		var rs []trace.Record
		for _, p := range parts {
			rs = append(rs, p...)
		}
		return rs
	}
	recs := [][]trace.Record{
		cat(head, group(trace.OpWinPost, 1000, 1010, 1, 2), []trace.Record{win(trace.OpWinWait, 1100, 3000)},
			group(trace.OpWinPost, 4000, 4010, 2), []trace.Record{win(trace.OpWinWait, 4030, 4040)},
			group(trace.OpWinPost, 5000, 5010, 1), []trace.Record{polls, win(trace.OpWinTest, 5600, 5610)}, tail(6210)),
		cat(head, group(trace.OpWinStart, 500, 1010, 0), []trace.Record{put(1020, 1030), win(trace.OpWinComplete, 2000, 2010)},
			group(trace.OpWinStart, 4900, 4910, 0), []trace.Record{win(trace.OpWinComplete, 5605, 5608)}, tail(6210)),
		cat(head, group(trace.OpWinStart, 300, 310, 0), []trace.Record{put(320, 1050), put(1200, 1210), win(trace.OpWinComplete, 2900, 2910)},
			group(trace.OpWinStart, 3800, 3810, 0), []trace.Record{win(trace.OpWinComplete, 3900, 4020)}, tail(6220)),
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	return dir
}

// TestPSCW checks the design of pscwRun: the epochs matched in order, the
// Late Post on the call that waited for the post (start, put or complete),
// the Early Wait and its Late Complete part, the EdgeRMA edges, the
// critical path as the waits say, and the same at 2 and 3 analyzer ranks.
func TestPSCW(t *testing.T) {
	run, g := loadBuild(t, pscwRun(t))
	checkEdges(t, g)
	checkLastArriving(t, g, mustPath(t, g))
	// Calls by rank, in log order (the sub-records are not calls).
	c := func(rank, i int) int32 { return g.RankStart[rank] + int32(i) }
	post1, wait1, post2, wait2, post3, test3 := c(0, 2), c(0, 3), c(0, 4), c(0, 5), c(0, 6), c(0, 8)
	start11, complete11, start12, complete12 := c(1, 2), c(1, 4), c(1, 5), c(1, 6)
	start21, put21, complete21, start22, complete22 := c(2, 2), c(2, 3), c(2, 5), c(2, 6), c(2, 7)
	for _, x := range []struct {
		c  int32
		op trace.Op
	}{{post3, trace.OpWinPost}, {test3, trace.OpWinTest}, {complete12, trace.OpWinComplete}, {put21, trace.OpPut}, {complete22, trace.OpWinComplete}} {
		if g.Op[x.c] != x.op {
			t.Fatalf("call %d is %v, want %v", x.c, g.Op[x.c], x.op)
		}
	}

	if g.EpochPairs != 4 || g.Unmatched != 0 {
		t.Errorf("%d epoch pairs, %d unmatched; want 4, 0", g.EpochPairs, g.Unmatched)
	}
	wantPairs := []graph.EpochPair{
		{Post: post1, Wait: wait1, Start: start11, Complete: complete11, Waited: start11},
		{Post: post3, Wait: test3, Start: start12, Complete: complete12, Waited: complete12},
		{Post: post1, Wait: wait1, Start: start21, Complete: complete21, Waited: put21},
		{Post: post2, Wait: wait2, Start: start22, Complete: complete22, Waited: complete22},
	}
	if !reflect.DeepEqual(g.Epochs, wantPairs) {
		t.Errorf("epoch pairs\n %+v\nwant\n %+v", g.Epochs, wantPairs)
	}

	type want struct {
		call, cause int32
		kind        graph.WaitKind
		ns          int64
	}
	wants := []want{
		{wait1, complete21, graph.EarlyWait, 1800},
		{test3, complete12, graph.EarlyWait, 505},
		{start11, post1, graph.LatePost, 500},
		{put21, post1, graph.LatePost, 680},
		{complete22, post2, graph.LatePost, 100},
	}
	if len(g.Waits) != len(wants) {
		t.Errorf("%d waits, want %d: %+v", len(g.Waits), len(wants), g.Waits)
	}
	for _, w := range wants {
		got := waitOf(g, w.call)
		if got == nil || got.Cause != w.cause || got.Kind != w.kind || got.Ns != w.ns || got.Comm != 0 {
			t.Errorf("call %d: wait %+v, want %v of %d ns for call %d on W0.0", w.call, got, w.kind, w.ns, w.cause)
		}
	}
	if lc := []graph.CallNs{{wait1, 1690}, {test3, 505}}; !reflect.DeepEqual(g.LateComplete, lc) {
		t.Errorf("Late Complete %+v, want %+v", g.LateComplete, lc)
	}

	// The RMA edges: from each post into the call that needed it, from
	// each complete into the wait or test that ended the epoch.
	rma := map[[2]int32]int64{}
	for v := int32(0); v < int32(g.NumVertices()); v++ {
		for e := g.InStart[v]; e < g.InStart[v+1]; e++ {
			if g.InKind[e] == graph.EdgeRMA {
				rma[[2]int32{g.InSrc[e], v}] = g.InWeight.At(e)
			}
		}
	}
	wantRMA := map[[2]int32]int64{
		{g.S(post1), g.E(start11)}:    10, // the start's end after the post
		{g.S(post1), g.E(put21)}:      50,
		{g.S(post2), g.E(complete22)}: 20,
		{g.S(post3), g.E(complete12)}: 3, // the post came while rank 1 computed: the complete's own time
		{g.S(complete11), g.E(wait1)}: 100,
		{g.S(complete21), g.E(wait1)}: 100,
		{g.S(complete22), g.E(wait2)}: 10,
		{g.S(complete12), g.E(test3)}: 5,
	}
	if !reflect.DeepEqual(rma, wantRMA) {
		t.Errorf("RMA edges (from, to: weight)\n %v\nwant\n %v", rma, wantRMA)
	}

	for _, P := range []int{2, 3} {
		parts := buildParts(t, run, P, buildSplits)
		var lc []graph.CallNs
		var pairs []graph.EpochPair
		for q := range parts {
			lc = append(lc, parts[q].LateComplete...)
			pairs = append(pairs, parts[q].Epochs...)
			if parts[q].EpochPairs != g.EpochPairs {
				t.Errorf("P=%d part %d: %d epoch pairs, one process %d", P, q, parts[q].EpochPairs, g.EpochPairs)
			}
		}
		comparePartsTo(t, "pscw", g, parts)
		if !reflect.DeepEqual(lc, g.LateComplete) || !reflect.DeepEqual(pairs, g.Epochs) {
			t.Errorf("P=%d: Late Complete %+v, pairs %+v; one process %+v, %+v", P, lc, pairs, g.LateComplete, g.Epochs)
		}
	}
}
