//go:build mpi

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// polled parses the program's "CPATH-EXPECT rank=R OP=N ..." lines: the
// numbers of calls in polling loops, which only the program can know.
func polled(t *testing.T, out string, np int) []map[trace.Op]int {
	t.Helper()
	res := make([]map[trace.Op]int, np)
	line := regexp.MustCompile(`(?m)^CPATH-EXPECT rank=(\d+)((?: MPI_\w+=\d+)+)\s*$`)
	field := regexp.MustCompile(`(MPI_\w+)=(\d+)`)
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		rank, _ := strconv.Atoi(m[1])
		if rank >= np || res[rank] != nil {
			t.Fatalf("bad or repeated CPATH-EXPECT line for rank %d in output:\n%s", rank, out)
		}
		res[rank] = map[trace.Op]int{}
		for _, f := range field.FindAllStringSubmatch(m[2], -1) {
			op, ok := trace.OpByName(f[1])
			if !ok {
				t.Fatalf("CPATH-EXPECT names unknown op %s", f[1])
			}
			res[rank][op], _ = strconv.Atoi(f[2])
		}
	}
	for rank, m := range res {
		if m == nil {
			t.Fatalf("no CPATH-EXPECT line for rank %d in output:\n%s", rank, out)
		}
	}
	return res
}

// expectP2P is the number of calls p2p.c makes on each rank (see the
// numbered phases there); poll holds the polling-loop counts it printed.
func expectP2P(rank int, poll map[trace.Op]int) map[trace.Op]int {
	m := map[trace.Op]int{
		trace.OpInit: 1, trace.OpFinalize: 1,
		trace.OpSend:  []int{4, 5, 6, 6}[rank],
		trace.OpRecv:  []int{9, 5, 6, 6}[rank],
		trace.OpSsend: 1, trace.OpBsend: 1, trace.OpBufferDetach: 1, trace.OpRsend: 1, trace.OpIssend: 1,
		trace.OpSendrecv: 1, trace.OpSendrecvReplace: 1,
		trace.OpIrecv: 13, trace.OpIsend: 11,
		trace.OpWait: 8, trace.OpWaitall: 4, trace.OpWaitany: 4,
		trace.OpSendInit: 1, trace.OpRecvInit: 1, trace.OpStart: 4, trace.OpStartall: 2,
		trace.OpRequestFree: 2,
		trace.OpBarrier:     2, trace.OpCommSplit: 1, trace.OpCommFree: 1,
	}
	switch rank {
	case 0, 3:
		m[trace.OpProbe] = 1
	case 1:
		m[trace.OpIrecv] += 3
		m[trace.OpWaitall]++
	}
	for op, n := range poll {
		m[op] = n
	}
	return m
}

// expectP2PSubs is the number of sub-records under each op per rank: one
// request completion per completed request, one start per Startall entry.
func expectP2PSubs(rank int) map[trace.Op]int {
	m := map[trace.Op]int{
		trace.OpWait: 8, trace.OpWaitall: 10, trace.OpWaitany: 4, trace.OpWaitsome: 4,
		trace.OpTest: 1, trace.OpTestall: 2, trace.OpTestany: 2, trace.OpTestsome: 2,
		trace.OpStartall: 4, trace.OpSendrecv: 1, trace.OpSendrecvReplace: 1,
		trace.OpCommSplit: 2, trace.OpStart: 0, trace.OpIsend: 0, trace.OpRecv: 0,
	}
	if rank == 1 {
		m[trace.OpWaitall] += 3
	}
	return m
}

// expectP2PMessages lists every message p2p.c sends, as the send and the
// receive side must log it (with the call that logged each side).
func expectP2PMessages() (sends, recvs []message) {
	const np = 4
	w := "W0.0"
	var l messages
	add := l.add
	for r := 0; r < np; r++ {
		right, left := (r+1)%np, (r+np-1)%np
		add(r, right, w, 1, 40, trace.OpSend, trace.OpRecv, false)
		add(r, right, w, 2, 40, trace.OpSsend, trace.OpRecv, false)
		add(r, right, w, 3, 56, trace.OpBsend, trace.OpRecv, false)
		add(r, right, w, 4, 24, trace.OpRsend, trace.OpWait, false)
		add(r, right, w, 5, 24, trace.OpSendrecv, trace.OpSendrecv, false)
		add(r, left, w, 6, 16, trace.OpSendrecvReplace, trace.OpSendrecvReplace, false)
		add(r, right, w, 7, 32, trace.OpIsend, trace.OpWait, false)
		for _, nb := range []int{left, right} {
			add(r, nb, w, 8, 16, trace.OpIsend, trace.OpWaitall, false)
			add(r, nb, w, 9, 48, trace.OpIsend, trace.OpWaitany, false) // 2 × 3 doubles
			add(r, nb, w, 10, 24, trace.OpIsend, trace.OpWaitsome, false)
		}
		add(r, right, w, 11, 36, trace.OpIsend, trace.OpTest, false)
		add(r, right, w, 12, 44, trace.OpIsend, trace.OpTestall, false)
		add(r, right, w, 13, 48, trace.OpIsend, trace.OpTestany, false)
		add(r, right, w, 14, 52, trace.OpIsend, trace.OpTestsome, false)
		add(r, right, w, 15, 56, trace.OpIssend, trace.OpWaitall, false)
		// Persistent: iterations 0 and 2 Start + Wait, 1 and 3 Startall + Waitall.
		for it := 0; it < 4; it++ {
			if it%2 == 0 {
				add(r, right, w, 16, 20, trace.OpStart, trace.OpWait, false)
			} else {
				add(r, right, w, 16, 20, trace.OpStartall, trace.OpWaitall, false)
			}
		}
	}
	for src := 1; src < np; src++ {
		add(src, 0, w, 20, uint64(16*(src+1)), trace.OpSend, trace.OpRecv, true)
	}
	for _, src := range []int{0, 2, 3} {
		add(src, 1, w, 21, uint64(4*(10+src)), trace.OpSend, trace.OpWaitall, true)
	}
	add(3, 2, w, 22, 8, trace.OpSend, trace.OpRecv, false)
	add(2, 3, w, 30, 72, trace.OpSend, trace.OpRecv, false)
	add(1, 0, w, 31, 8, trace.OpSend, trace.OpRecv, false)
	// Comm_split with key -rank: {2,0} ("S2.1") and {3,1} ("S3.1").
	add(2, 0, "S2.1", 50, 40, trace.OpSend, trace.OpRecv, false)
	add(3, 1, "S3.1", 50, 40, trace.OpSend, trace.OpRecv, false)
	add(0, 2, "S2.1", 51, 24, trace.OpSend, trace.OpRecv, true)
	add(1, 3, "S3.1", 51, 24, trace.OpSend, trace.OpRecv, true)
	return l.sends, l.recvs
}

// sameMessages compares two message lists as multisets.
func sameMessages(t *testing.T, what string, got, want []message) {
	t.Helper()
	str := func(ms []message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%d->%d %s tag %d %d B by %v on rank %d wild=%v",
				m.Src, m.Dst, m.Comm, m.Tag, m.Bytes, m.Op, m.Rank, m.Wild))
		}
		slices.Sort(out)
		return out
	}
	g, w := str(got), str(want)
	var missing, extra []string
	i, j := 0, 0
	for i < len(g) || j < len(w) {
		switch {
		case j == len(w) || (i < len(g) && g[i] < w[j]):
			extra = append(extra, g[i])
			i++
		case i == len(g) || w[j] < g[i]:
			missing = append(missing, w[j])
			j++
		default:
			i++
			j++
		}
	}
	for _, s := range missing {
		t.Errorf("%s: missing %s", what, s)
	}
	for _, s := range extra {
		t.Errorf("%s: unexpected %s", what, s)
	}
}

func TestP2P(t *testing.T) { testP2P(t, mpitest.OpenMPI) }

// testP2P runs p2p.c under m and checks it.
func testP2P(t *testing.T, m *mpitest.Impl) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "p2p.c")
	logs, out := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	poll := polled(t, out, np)
	r := check(t, logs, np, "p2p")

	r.checkCounts(t, func(rank int) map[trace.Op]int { return expectP2P(rank, poll[rank]) })
	r.checkSubs(t, expectP2PSubs)
	r.checkCommTable(t, expectNames([]commSpec{{'S', []int32{2, 0}, nil}, {'S', []int32{3, 1}, nil}}))
	r.checkColls(t, map[string][]collSpec{
		"W0.0": unrooted(trace.OpBarrier, trace.OpCommSplit, trace.OpBarrier),
		"S2.1": unrooted(trace.OpCommFree),
		"S3.1": unrooted(trace.OpCommFree),
	})
	sends, recvs := expectP2PMessages()
	sameMessages(t, "sends", r.sends, sends)
	sameMessages(t, "receives", r.recvs, recvs)

	// Calls that carry no message, or whose arguments the message lists
	// do not show.
	for _, tc := range []struct {
		name string
		rank int
		keep func(*call) bool
		want int
		ok   func(*call) bool
	}{
		{"send to MPI_PROC_NULL", -1, func(c *call) bool { return c.Op == trace.OpSend && c.Tag == 40 }, 1,
			func(c *call) bool { return c.Peer == trace.PeerProcNull && c.Bytes == 12 }},
		{"receive from MPI_PROC_NULL", -1, func(c *call) bool { return c.Op == trace.OpRecv && c.Tag == 40 }, 1,
			func(c *call) bool { return c.Peer == trace.PeerProcNull && c.Bytes == 0 }},
		{"wildcard Irecv", 1, func(c *call) bool { return c.Op == trace.OpIrecv && c.Tag == 21 }, 3,
			func(c *call) bool {
				return c.Peer == trace.PeerAny && c.Flags&trace.FlagWildcard != 0 && c.Bytes == 64*4
			}},
		{"MPI_ANY_TAG receive", 2, func(c *call) bool { return c.Op == trace.OpRecv && c.Flags&trace.FlagAnyTag != 0 }, 1,
			func(c *call) bool { return c.Tag == 22 && c.Peer == 3 && c.Bytes == 8 }},
		{"wildcard Probe", 3, func(c *call) bool { return c.Op == trace.OpProbe }, 1,
			func(c *call) bool { return c.Peer == 2 && c.Tag == 30 && c.Flags&trace.FlagWildcard != 0 }},
		{"Probe", 0, func(c *call) bool { return c.Op == trace.OpProbe }, 1,
			func(c *call) bool { return c.Peer == 1 && c.Tag == 31 && c.Flags&trace.FlagWildcard == 0 }},
		{"Recv_init", -1, func(c *call) bool { return c.Op == trace.OpRecvInit }, 1,
			func(c *call) bool { return c.Tag == 16 && c.Bytes == 20 && c.Peer == int32((c.Rank+np-1)%np) }},
		{"Testall that completed nothing", -1, func(c *call) bool { return c.Op == trace.OpTestall && c.Count == 0 }, -1,
			func(c *call) bool { return len(c.Subs) == 0 }},
		{"Test that completed", -1, func(c *call) bool { return c.Op == trace.OpTest && c.Count == 1 }, 1,
			func(c *call) bool { return c.Subs[0].Tag == 11 && c.Subs[0].Bytes == 36 }},
		{"Request_free", -1, func(c *call) bool { return c.Op == trace.OpRequestFree }, 2,
			func(c *call) bool { return c.Req != 0 }},
	} {
		for rank := 0; rank < np; rank++ {
			if tc.rank >= 0 && rank != tc.rank {
				continue
			}
			cs := r.find(rank, tc.keep)
			if tc.want >= 0 && len(cs) != tc.want {
				t.Errorf("%s: rank %d logged %d such calls, want %d", tc.name, rank, len(cs), tc.want)
			}
			for _, c := range cs {
				if !tc.ok(c) {
					t.Errorf("%s: rank %d: wrong arguments: %v", tc.name, rank, c)
				}
			}
		}
	}
	// Each Test/Testall/Testany/Testsome loop ends with its last call.
	for rank := 0; rank < np; rank++ {
		for _, op := range []trace.Op{trace.OpTest, trace.OpTestall} {
			cs := r.find(rank, func(c *call) bool { return c.Op == op })
			for i, c := range cs {
				if (c.Count != 0) != (i == len(cs)-1) {
					t.Errorf("rank %d: %v call %d of %d completed %d requests", rank, op, i+1, len(cs), c.Count)
				}
			}
		}
	}
}
