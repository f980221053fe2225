package graph_test

import (
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// TestHeldSend: a send waited for its receiver (Late Receiver) when the
// logs show it: synchronous, or completed as soon as the receiver entered
// MPI after both were posted (the progress rule). Rank 0 sends at 1 µs;
// rank 1 posted its receive at 0.1 µs and enters MPI_Wait at 50 µs.
func TestHeldSend(t *testing.T) {
	const us, ms = 1000, 1000_000
	for _, tc := range []struct {
		name               string
		op                 trace.Op
		sendEnd            int64 // rank 0's send call
		irecvStart         int64 // rank 1's MPI_Irecv
		waitStart, waitEnd int64 // rank 1's MPI_Wait
		want               graph.WaitRule
		wantNs             int64 // the send's wait
		nextStart          int64 // rank 1's MPI_Barrier after its MPI_Wait, if not at 199 ms
	}{
		{"held until the receiver's Wait", trace.OpSend, 50*us + 20, 100, 50 * us, 50*us + 30, graph.RuleProgress, 49 * us, 0},
		{"a descheduled sender was still held", trace.OpSend, 54 * us, 100, 50 * us, 50*us + 30, graph.RuleProgress, 49 * us, 0},
		{"a sender descheduled for a scheduler tick after the receiver's Wait returned was still held",
			trace.OpSend, 54 * ms, 100, 50 * ms, 50*ms + 30*us, graph.RuleProgress, 50*ms - 1*us, 0},
		// The receiver's next call began as the send completed, to the ns:
		// what let the send go began before, its MPI_Wait (heldsend.c at
		// times, where the hold had been dropped).
		{"held until the receiver's Wait, its next call beginning as the send ended", trace.OpSend, 50*us + 40, 100, 50 * us, 50*us + 30, graph.RuleProgress, 49 * us, 50*us + 40},
		{"completed long after the receiver entered", trace.OpSend, 200 * us, 100, 50 * us, 50*us + 30, graph.RuleNone, 0, 0},
		{"eager: completed while the receiver computed", trace.OpSend, 1*us + 10, 100, 50 * us, 50*us + 30, graph.RuleNone, 0, 0},
		{"completed before the receive was posted", trace.OpSend, 1*us + 500, 2 * us, 50 * us, 50*us + 30, graph.RuleNone, 0, 0},
		{"buffered sends never wait", trace.OpBsend, 50*us + 20, 100, 50 * us, 50*us + 30, graph.RuleNone, 0, 0},
		{"ready sends never wait", trace.OpRsend, 50*us + 20, 100, 50 * us, 50*us + 30, graph.RuleNone, 0, 0},
		{"synchronous, receive posted early: held", trace.OpSsend, 50*us + 20, 100, 50 * us, 50*us + 30, graph.RuleProgress, 49 * us, 0},
		{"synchronous, receive posted late", trace.OpSsend, 50*us + 20, 50 * us, 60 * us, 60*us + 30, graph.RuleSynchronous, 49 * us, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := call(tc.op, 1*us, tc.sendEnd)
			send.Comm, send.Peer, send.Bytes = trace.CommWorld, 1, 4000
			irecv := call(trace.OpIrecv, tc.irecvStart, tc.irecvStart+5)
			irecv.Comm, irecv.Peer, irecv.Flags, irecv.Req = trace.CommWorld, 0, trace.FlagNewReq, 1
			wait := call(trace.OpWait, tc.waitStart, tc.waitEnd)
			done := trace.Record{Op: trace.OpReqDone, Req: 1, Peer: 0, Bytes: 4000}
			next := int64(199 * ms)
			if tc.nextStart != 0 {
				next = tc.nextStart
			}
			recs := [][]trace.Record{
				{call(trace.OpInit, 0, 10), send, barrier(200*ms, 200*ms+10)},
				{call(trace.OpInit, 0, 10), irecv, wait, done, barrier(next, 200*ms+10)},
			}
			dir := t.TempDir()
			writeLogs(t, dir, recs)
			g := mustBuild(t, dir)
			checkEdges(t, g)
			w := waitOf(g, g.RankStart[0]+1)
			switch {
			case tc.want == graph.RuleNone && w != nil:
				t.Fatalf("the send waited: %+v, want no wait", *w)
			case tc.want != graph.RuleNone && (w == nil || w.Kind != graph.LateReceiver || w.Rule != tc.want || w.Ns != tc.wantNs):
				t.Fatalf("the send's wait: %+v, want Late Receiver (%v) of %d ns", w, tc.want, tc.wantNs)
			}
			path := mustPath(t, g)
			if path.Length != g.T1-g.T0 {
				t.Fatalf("path %d ns, run %d ns", path.Length, g.T1-g.T0)
			}
			checkLastArriving(t, g, path)
		})
	}
}
