//go:build mpi

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// ringMessages lists one message per rank to its right neighbour, logged by
// sop on the sender and rop on the receiver, n times.
func ringMessages(np int, comm string, tag int32, bytes uint64, sop, rop trace.Op, n int) (sends, recvs []message) {
	for r := 0; r < np; r++ {
		right := (r + 1) % np
		for i := 0; i < n; i++ {
			sends = append(sends, message{Src: int32(r), Dst: int32(right), Comm: comm, Tag: tag, Bytes: bytes, Op: sop, Rank: r})
			recvs = append(recvs, message{Src: int32(r), Dst: int32(right), Comm: comm, Tag: tag, Bytes: bytes, Op: rop, Rank: right})
		}
	}
	return sends, recvs
}

// TestMoreCalls runs more.c's "calls" part: the other send modes, the
// other persistent inits and the other communicator constructors.
func TestMoreCalls(t *testing.T) { testMoreCalls(t, mpitest.OpenMPI) }

// testMoreCalls runs more.c's "calls" part under m and checks it.
func testMoreCalls(t *testing.T, m *mpitest.Impl) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "more.c", "-lpthread")
	logs, _ := runLoggedWith(t, m, np, exe, "calls")
	checkCallSites(t, logs)
	r := check(t, logs, np, "more")

	odd := func(rank int) int { return rank % 2 }
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{
			trace.OpInit: 1, trace.OpFinalize: 1,
			trace.OpIbsend: 1, trace.OpBufferDetach: 2, trace.OpIrsend: 1, trace.OpIrecv: 1,
			trace.OpRecv: 1 + rank/2, trace.OpSend: 1 - rank/2, // intercomm: local rank 0 sends
			trace.OpWait: 4, trace.OpWaitall: 4, trace.OpBarrier: 7,
			trace.OpRecvInit: 3, trace.OpSsendInit: 1, trace.OpBsendInit: 1, trace.OpRsendInit: 1,
			trace.OpStartall: 2, trace.OpStart: 4, trace.OpRequestFree: 6,
			trace.OpCommIdup: 1, trace.OpCommSplitType: 1, trace.OpCommCreateGroup: odd(rank),
			trace.OpGraphCreate: 1, trace.OpDistGraphCreateAdjacent: 1, trace.OpDistGraphCreate: 1,
			trace.OpCommSplit: 1, trace.OpIntercommCreate: 1, trace.OpIntercommMerge: 1,
			trace.OpAllreduce: 2 + odd(rank), trace.OpCommFree: 8 + odd(rank),
		}
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpWait: 4, trace.OpWaitall: 8, trace.OpStartall: 4,
			trace.OpCommIdup: 4, trace.OpCommSplitType: 4, trace.OpCommCreateGroup: 2 * odd(rank),
			trace.OpGraphCreate: 4, trace.OpDistGraphCreateAdjacent: 4, trace.OpDistGraphCreate: 4,
			trace.OpCommSplit: 2, trace.OpIntercommCreate: 4, trace.OpIntercommMerge: 4}
	})

	all := []int32{0, 1, 2, 3}
	even, odds := []int32{0, 2}, []int32{1, 3}
	want := expectNames([]commSpec{
		{'T', all, nil}, {'G', []int32{3, 1}, nil}, {'R', all, nil}, {'a', all, nil}, {'r', all, nil},
		{'S', even, nil}, {'S', odds, nil},
		{'I', even, odds}, // leaders 0 and 1: named after 0, but both count it
		{'M', []int32{0, 2, 1, 3}, nil},
	})
	// MPI_Comm_idup is named after its parent and its sequence number there.
	want["dW0.0.8"] = commSpec{'d', all, nil}
	r.checkCommTable(t, want)
	// Both sides of the intercommunicator have it under one name, each with
	// its own group as members and the other as remote.
	for rank, l := range logs {
		var found []trace.Comm
		for _, c := range l.Comms {
			if len(c.Remote) > 0 {
				found = append(found, c)
			}
		}
		mine, other := even, odds
		if rank%2 == 1 {
			mine, other = other, mine
		}
		if len(found) != 1 || found[0].Name != "I0.6" || found[0].Op != trace.OpIntercommCreate ||
			!slices.Equal(found[0].Members, mine) || !slices.Equal(found[0].Remote, other) {
			t.Errorf("rank %d: intercommunicators %+v, want one, I0.6, with members %v, remote %v", rank, found, mine, other)
		}
		// Its constructor record names the leader with the lower world
		// rank (0) and its counter, on both sides.
		ic := r.find(rank, func(c *call) bool { return c.Op == trace.OpIntercommCreate })
		if len(ic) != 1 || ic[0].Root != 0 || ic[0].Tag != 6 {
			t.Errorf("rank %d: MPI_Intercomm_create records %v, want one with root 0, tag 6", rank, ic)
		}
	}
	// MPI_Comm_idup creates a request, completed by the MPI_Wait before
	// the Allreduce on the new communicator; the new index is in Tag.
	for rank, l := range logs {
		id := r.find(rank, func(c *call) bool { return c.Op == trace.OpCommIdup })
		if len(id) != 1 {
			continue // checkCounts reports it
		}
		d := id[0]
		if d.Flags&trace.FlagNewReq == 0 || d.Req == 0 || d.Root != 0 || d.Seq != 8 || d.Comm != trace.CommWorld ||
			d.Tag <= int32(trace.CommSelf) || int(d.Tag) >= len(l.Comms) || l.Comms[d.Tag].Name != "dW0.0.8" {
			t.Errorf("rank %d: %v: want a new request, root 0, seq 8 on world, and Tag the index of dW0.0.8", rank, d)
			continue
		}
		waits := r.find(rank, func(c *call) bool {
			return c.Op == trace.OpWait && len(c.Subs) == 1 && c.Subs[0].Req == d.Req
		})
		uses := r.find(rank, func(c *call) bool { return c.Op == trace.OpAllreduce && c.CommName == "dW0.0.8" })
		if len(waits) != 1 || len(uses) != 1 || !(d.Index < waits[0].Index && waits[0].Index < uses[0].Index) {
			t.Errorf("rank %d: idup request %d completed by %v, new communicator used by %v; want one MPI_Wait between the idup (record %d) and the Allreduce",
				rank, d.Req, waits, uses, d.Index)
		}
	}

	barrierFree := unrooted(trace.OpBarrier, trace.OpCommFree)
	allreduceFree := []collSpec{{trace.OpAllreduce, none, bytesAll(4)}, {trace.OpCommFree, none, nil}}
	r.checkColls(t, map[string][]collSpec{
		// Comm_create_group is not a collective of world: see inParentSeq.
		"W0.0": unrooted(trace.OpBarrier, trace.OpBarrier, trace.OpCommSplitType,
			trace.OpGraphCreate, trace.OpDistGraphCreateAdjacent, trace.OpDistGraphCreate,
			trace.OpCommSplit, trace.OpCommIdup, trace.OpBarrier),
		"T0.1":    barrierFree,
		"G3.1":    allreduceFree,
		"R0.2":    barrierFree,
		"a0.3":    barrierFree,
		"r0.4":    barrierFree,
		"S0.5":    unrooted(trace.OpIntercommCreate, trace.OpCommFree),
		"S1.1":    unrooted(trace.OpIntercommCreate, trace.OpCommFree),
		"I0.6":    unrooted(trace.OpIntercommMerge, trace.OpCommFree),
		"M0.7":    allreduceFree,
		"dW0.0.8": allreduceFree,
	})

	var sends, recvs []message
	for _, m := range []struct {
		tag      int32
		bytes    uint64
		sop, rop trace.Op
		n        int
	}{
		{1, 16, trace.OpIbsend, trace.OpRecv, 1},
		{2, 24, trace.OpIrsend, trace.OpWaitall, 1},
		{3, 8, trace.OpStartall, trace.OpWaitall, 2},
		{4, 20, trace.OpStart, trace.OpWaitall, 1},
		{5, 8, trace.OpStart, trace.OpWait, 1},
	} {
		s, rc := ringMessages(np, "W0.0", m.tag, m.bytes, m.sop, m.rop, m.n)
		sends, recvs = append(sends, s...), append(recvs, rc...)
	}
	// Across the intercommunicator: local rank 0 to remote rank 1.
	for _, p := range [][2]int{{0, 3}, {1, 2}} {
		sends = append(sends, message{Src: int32(p[0]), Dst: int32(p[1]), Comm: "I0.6", Tag: 8, Bytes: 24, Op: trace.OpSend, Rank: p[0]})
		recvs = append(recvs, message{Src: int32(p[0]), Dst: int32(p[1]), Comm: "I0.6", Tag: 8, Bytes: 24, Op: trace.OpRecv, Rank: p[1]})
	}
	sameMessages(t, "sends", r.sends, sends)
	sameMessages(t, "receives", r.recvs, recvs)

	for rank := 0; rank < np; rank++ {
		// Persistent inits of every mode create persistent requests with
		// the arguments they were given.
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.Class() == trace.ClassSendInit }) {
			if c.Peer != int32((rank+1)%np) || c.Flags&trace.FlagPersistent == 0 {
				t.Errorf("rank %d: %v: want peer %d, persistent", rank, c, (rank+1)%np)
			}
		}
	}
}

// TestMorePause runs more.c's "pause" part: calls between MPI_Pcontrol(0)
// and MPI_Pcontrol(1) are not logged, except communicator constructors (and
// MPI_Comm_free), so that the communicator created there is known by name
// and members when it is used after the pause.
func TestMorePause(t *testing.T) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "more.c", "-lpthread")
	logs, _ := runLogged(t, np, exe, "pause")
	r := check(t, logs, np, "more")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{
			trace.OpInit: 1, trace.OpFinalize: 1, trace.OpPcontrol: 2, trace.OpCommDup: 1,
			trace.OpSend: 1, trace.OpRecv: 1, trace.OpBarrier: 2, trace.OpCommFree: 1,
		}
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int { return map[trace.Op]int{trace.OpCommDup: np} })
	for rank := 0; rank < np; rank++ {
		pc := r.find(rank, func(c *call) bool { return c.Op == trace.OpPcontrol })
		if len(pc) != 2 || pc[0].Tag != 0 || pc[1].Tag != 1 {
			t.Errorf("rank %d: Pcontrol calls %v, want levels 0 then 1", rank, pc)
			continue
		}
		// The pause logged the Comm_dup and nothing else.
		var paused []trace.Op
		for _, c := range r.calls[rank] {
			if c.Index > pc[0].Index && c.Index < pc[1].Index {
				paused = append(paused, c.Op)
			}
		}
		if !slices.Equal(paused, []trace.Op{trace.OpCommDup}) {
			t.Errorf("rank %d: calls logged between Pcontrol(0) and Pcontrol(1): %v, want only MPI_Comm_dup", rank, paused)
		}
	}
	// The duplicate made while paused is the only communicator besides
	// world and self, with its proper name; the paused Barrier did not take
	// a number of world's sequence.
	r.checkCommTable(t, expectNames([]commSpec{{'D', []int32{0, 1, 2, 3}, nil}}))
	r.checkColls(t, map[string][]collSpec{
		"W0.0": unrooted(trace.OpCommDup, trace.OpBarrier),
		"D0.1": unrooted(trace.OpBarrier, trace.OpCommFree),
	})
	s, rc := ringMessages(np, "D0.1", 10, 8, trace.OpSend, trace.OpRecv, 1)
	sameMessages(t, "sends", r.sends, s)
	sameMessages(t, "receives", r.recvs, rc)
}

// TestMoreThreads runs more.c's "threads" part: under
// MPI_THREAD_MULTIPLE two threads per rank communicate at once, each on its
// own communicator.
func TestMoreThreads(t *testing.T) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "more.c", "-lpthread")
	logs, out := runLogged(t, np, exe, "threads")
	if strings.Contains(out, "CPATH-SKIP") {
		t.Skipf("Open MPI does not provide MPI_THREAD_MULTIPLE here: %s", out)
	}
	r := check(t, logs, np, "more")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{
			trace.OpInitThread: 1, trace.OpFinalize: 1, trace.OpCommDup: 2,
			trace.OpSendrecv: 40, trace.OpAllreduce: 10, trace.OpCommFree: 2, trace.OpBarrier: 1,
		}
	})
	r.checkCommTable(t, expectNames([]commSpec{{'D', []int32{0, 1, 2, 3}, nil}, {'D', []int32{0, 1, 2, 3}, nil}}))
	var worker []collSpec
	for i := 0; i < 5; i++ {
		worker = append(worker, collSpec{trace.OpAllreduce, none, bytesAll(4)})
	}
	worker = append(worker, collSpec{trace.OpCommFree, none, nil})
	r.checkColls(t, map[string][]collSpec{
		"W0.0": unrooted(trace.OpCommDup, trace.OpCommDup, trace.OpBarrier),
		"D0.1": worker,
		"D0.2": worker,
	})
	s0, r0 := ringMessages(np, "D0.1", 10, 8, trace.OpSendrecv, trace.OpSendrecv, 20)
	s1, r1 := ringMessages(np, "D0.2", 11, 8, trace.OpSendrecv, trace.OpSendrecv, 20)
	sameMessages(t, "sends", r.sends, append(s0, s1...))
	sameMessages(t, "receives", r.recvs, append(r0, r1...))

	for rank, l := range logs {
		if l.Header.ThreadLevel != 3 { // MPI_THREAD_MULTIPLE in Open MPI
			t.Errorf("rank %d: header thread level %d, want 3 (MPI_THREAD_MULTIPLE)", rank, l.Header.ThreadLevel)
		}
		// Each worker's 25 calls come from one thread of their own.
		byComm := map[string]map[uint16]int{}
		for _, c := range r.calls[rank] {
			if c.Op == trace.OpSendrecv || c.Op == trace.OpAllreduce {
				if byComm[c.CommName] == nil {
					byComm[c.CommName] = map[uint16]int{}
				}
				byComm[c.CommName][c.Thread]++
			}
		}
		threads := map[uint16]bool{r.calls[rank][0].Thread: true}
		for _, name := range []string{"D0.1", "D0.2"} {
			m := byComm[name]
			if len(m) != 1 {
				t.Errorf("rank %d: calls on %s come from threads %v, want one worker thread", rank, name, m)
				continue
			}
			for th, n := range m {
				if n != 25 || threads[th] {
					t.Errorf("rank %d: thread %d made %d calls on %s (want 25, and a thread of its own)", rank, th, n, name)
				}
				threads[th] = true
			}
		}
	}
}
