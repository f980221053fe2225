//go:build mpi

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// Tests of lifetime.c: correct programs that once crashed under the logger
// or flooded its log (issue 14).

// TestCommFreedWithPendingReceive: a receive posted on a communicator that
// is freed before the Wait completing it. The logger must keep its record
// of the communicator until then, so the completion resolves the source.
func TestCommFreedWithPendingReceive(t *testing.T) {
	const np, n = 2, 200
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	logs, _ := runLogged(t, np, exe, "freewait", strconv.Itoa(n))
	r := check(t, logs, np, "lifetime")

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCommDup: n,
			trace.OpIrecv: n, trace.OpIsend: n, trace.OpCommFree: n, trace.OpWait: 2 * n}
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpWait: 2 * n, trace.OpCommDup: 2 * n}
	})
	var specs []commSpec
	var sends, recvs []message
	for i := 0; i < n; i++ {
		specs = append(specs, commSpec{'D', []int32{0, 1}, nil})
		name := fmt.Sprintf("D0.%d", i+1)
		for src := 0; src < np; src++ {
			sends = append(sends, message{Src: int32(src), Dst: int32(1 - src), Comm: name, Tag: int32(i), Bytes: 4, Op: trace.OpIsend, Rank: src})
			recvs = append(recvs, message{Src: int32(src), Dst: int32(1 - src), Comm: name, Tag: int32(i), Bytes: 4, Op: trace.OpWait, Rank: 1 - src})
		}
	}
	r.checkCommTable(t, expectNames(specs))
	sameMessages(t, "sends", r.sends, sends)
	sameMessages(t, "receives", r.recvs, recvs)

	// The order the test is about: each receive is completed after its
	// communicator was freed.
	for rank := 0; rank < np; rank++ {
		frees := r.find(rank, func(c *call) bool { return c.Op == trace.OpCommFree })
		for _, f := range frees {
			irecv := r.find(rank, func(c *call) bool { return c.Op == trace.OpIrecv && c.Comm == f.Comm })
			if len(irecv) != 1 {
				t.Errorf("rank %d: %d receives on %s, want 1", rank, len(irecv), f.CommName)
				continue
			}
			wait := r.find(rank, func(c *call) bool {
				return c.Op == trace.OpWait && len(c.Subs) == 1 && c.Subs[0].Req == irecv[0].Req
			})
			if len(wait) != 1 || wait[0].Index < f.Index || irecv[0].Index > f.Index {
				t.Errorf("rank %d: on %s: receive %v, free %v, completion %v: want receive, free, then the Wait",
					rank, f.CommName, irecv[0], f, wait)
			}
		}
	}
}

// TestCommDupWithInfo: communicators made by MPI_Comm_dup_with_info (and
// MPI_Comm_idup_with_info where MPI has it) are recorded, named and freed;
// the first is freed without other use, so the logger meets it first at
// the free.
func TestCommDupWithInfo(t *testing.T) {
	const np = 2
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	logs, out := runLogged(t, np, exe, "dupinfo")
	r := check(t, logs, np, "lifetime")
	idup := strings.Contains(out, "idup_with_info: yes")
	if !idup {
		t.Logf("MPI_Comm_idup_with_info is not in this MPI (%s): that part is not tested", strings.TrimSpace(out))
	}
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		w := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCommDupWithInfo: 2,
			trace.OpAllreduce: 1, trace.OpCommFree: 2}
		if idup {
			w[trace.OpCommIdupWithInfo], w[trace.OpWait], w[trace.OpAllreduce], w[trace.OpCommFree] = 1, 1, 2, 3
		}
		return w
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		return map[trace.Op]int{trace.OpCommDupWithInfo: 4}
	})
	want := expectNames([]commSpec{{'E', []int32{0, 1}, nil}, {'E', []int32{0, 1}, nil}})
	colls := map[string][]collSpec{
		"E0.1": unrooted(trace.OpCommFree),
		"E0.2": unrooted(trace.OpAllreduce, trace.OpCommFree),
		"W0.0": unrooted(trace.OpCommDupWithInfo, trace.OpCommDupWithInfo),
	}
	if idup {
		want["eW0.0.3"] = commSpec{'e', []int32{0, 1}, nil}
		colls["eW0.0.3"] = unrooted(trace.OpAllreduce, trace.OpCommFree)
		colls["W0.0"] = append(colls["W0.0"], unrooted(trace.OpCommIdupWithInfo)...)
	}
	r.checkCommTable(t, want)
	r.checkColls(t, colls)
}

// TestPollCoalescing: 10 M unsuccessful MPI_Test calls leave one record,
// a small log and a quick analysis; polls interrupted by other calls stay
// apart, and the successful poll is recorded with its message.
func TestPollCoalescing(t *testing.T) {
	const np, n = 2, 10_000_000
	const maxLog = 1 << 20
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	lib := mpitest.LoggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, np, lib, logDir, filepath.Dir(exe), exe, "poll", strconv.Itoa(n))
	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, "lifetime")

	fi, err := os.Stat(filepath.Join(logDir, "rank-000001.cplog"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rank 1 polled %d times: its log is %d bytes, %d records", n+3000, fi.Size(), len(logs[1].Records))
	if fi.Size() > maxLog {
		t.Errorf("rank 1's log is %d bytes, want at most %d", fi.Size(), maxLog)
	}

	// Rank 1: Init, Irecv, one record for the n Tests, 1000 times a record
	// for 2 Iprobes and one for 3 Tests, Send, then maybe a record of
	// unsuccessful Tests and the one that completed, Finalize.
	calls := r.calls[1]
	i := 0
	next := func(what string, ok func(c *call) bool) *call {
		t.Helper()
		if i >= len(calls) {
			t.Fatalf("rank 1: log ends before %s", what)
		}
		c := &calls[i]
		i++
		if !ok(c) {
			t.Fatalf("rank 1: %v, want %s", c, what)
		}
		return c
	}
	poll := func(op trace.Op, polls uint64) func(c *call) bool {
		return func(c *call) bool {
			return c.Op == op && c.Unproductive() && c.Polls() == polls && c.Count == 0 && uint64(c.Root) == polls
		}
	}
	next("MPI_Init", func(c *call) bool { return c.Op == trace.OpInit })
	irecv := next("MPI_Irecv from 0 tag 7", func(c *call) bool { return c.Op == trace.OpIrecv && c.Peer == 0 && c.Tag == 7 })
	big := next(fmt.Sprintf("one MPI_Test record of %d polls", n), poll(trace.OpTest, n))
	if d := time.Duration(big.End - big.Start); d <= 0 {
		t.Errorf("the %d polls span %v", n, d)
	}
	for k := 0; k < 1000; k++ {
		next("MPI_Iprobe record of 2 polls", func(c *call) bool {
			return poll(trace.OpIprobe, 2)(c) && c.Peer == 0 && c.Tag == 99 && c.CommName == "W0.0"
		})
		next("MPI_Test record of 3 polls", poll(trace.OpTest, 3))
	}
	next("MPI_Send to 0 tag 8", func(c *call) bool { return c.Op == trace.OpSend && c.Peer == 0 && c.Tag == 8 })
	if i < len(calls) && calls[i].Op == trace.OpTest && calls[i].Unproductive() {
		i++ // the last loop's polls before the message came
	}
	done := next("the MPI_Test that completed the receive", func(c *call) bool {
		return c.Op == trace.OpTest && !c.Unproductive() && c.Polls() == 1 && c.Root == trace.PeerNone && len(c.Subs) == 1
	})
	if s := done.Subs[0]; s.Req != irecv.Req || s.Peer != 0 || s.Tag != 7 || s.Bytes != 4 {
		t.Errorf("rank 1: %v completed %+v, want request %d from 0, tag 7, 4 bytes", done, s, irecv.Req)
	}
	next("MPI_Finalize", func(c *call) bool { return c.Op == trace.OpFinalize })
	sameMessages(t, "sends", r.sends, []message{
		{Src: 1, Dst: 0, Comm: "W0.0", Tag: 8, Bytes: 4, Op: trace.OpSend, Rank: 1},
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 7, Bytes: 4, Op: trace.OpSend, Rank: 0}})
	sameMessages(t, "receives", r.recvs, []message{
		{Src: 1, Dst: 0, Comm: "W0.0", Tag: 8, Bytes: 4, Op: trace.OpRecv, Rank: 0},
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 7, Bytes: 4, Op: trace.OpTest, Rank: 1}})

	// The analysis of those logs: best of three, so that one run slowed
	// by a loaded machine does not decide.
	bin := cpathBin(t)
	best := time.Duration(1 << 62)
	var times []string
	for k := 0; k < 3; k++ {
		t0 := time.Now()
		out, err := exec.Command(bin, logDir).CombinedOutput()
		d := time.Since(t0)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", bin, logDir, err, out)
		}
		times = append(times, d.Round(time.Millisecond).String())
		best = min(best, d)
	}
	t.Logf("cpath %s: %s (best %v)", logDir, strings.Join(times, ", "), best.Round(time.Millisecond))
	if best > 2*time.Second {
		t.Errorf("analysis took %v at best, want under 2s", best)
	}
}

// cpathBin returns the cpath command under test (internal/mpitest).
func cpathBin(t *testing.T) string { return mpitest.CPathBin(t) }

// TestGrequestOtherThread: a generalized request completed by a second
// thread while the first waits for it. The Wait completes the request, and
// the MPI_Grequest_complete record names it, on the thread that called it.
// Then one completed while the first thread polls it: its polls are one
// record, though the other thread's call comes before the last of them.
func TestGrequestOtherThread(t *testing.T) { testGrequestOtherThread(t, mpitest.OpenMPI) }

// testGrequestOtherThread runs lifetime.c's "grequest" part under m and
// checks it.
func testGrequestOtherThread(t *testing.T, m *mpitest.Impl) {
	const np = 2
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "lifetime.c", "-lpthread")
	logs, out := runLoggedWith(t, m, np, exe, "grequest")
	checkCallSites(t, logs)
	if strings.Contains(out, "no MPI_THREAD_MULTIPLE") {
		t.Skipf("skipped: this MPI does not provide MPI_THREAD_MULTIPLE: %s", strings.TrimSpace(out))
	}
	r := check(t, logs, np, "lifetime")
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		w := map[trace.Op]int{trace.OpInitThread: 1, trace.OpFinalize: 1, trace.OpGrequestStart: 2,
			trace.OpGrequestComplete: 2, trace.OpWait: 1, trace.OpBarrier: 2}
		w[trace.OpTest] = r.counts[rank][trace.OpTest] // any number of polls; checked below
		return w
	})
	for rank := 0; rank < np; rank++ {
		start := r.find(rank, func(c *call) bool { return c.Op == trace.OpGrequestStart })
		wait := r.find(rank, func(c *call) bool { return c.Op == trace.OpWait })
		comp := r.find(rank, func(c *call) bool { return c.Op == trace.OpGrequestComplete })
		tests := r.find(rank, func(c *call) bool { return c.Op == trace.OpTest })
		if len(start) != 2 || len(wait) != 1 || len(comp) != 2 {
			continue // checkCounts reports it
		}
		// The polls: one record of unproductive calls, then the one that
		// completed the request; the completion came from the other
		// thread between the two.
		if len(tests) != 2 || !tests[0].Unproductive() || tests[0].Polls() < 1 || tests[1].Unproductive() ||
			len(tests[1].Subs) != 1 || tests[1].Subs[0].Req != start[1].Req || tests[0].Thread != start[1].Thread ||
			tests[1].Thread != start[1].Thread {
			t.Errorf("rank %d: polls %v; want one record of unproductive MPI_Test calls, then one completing request %d, on thread %d",
				rank, tests, start[1].Req, start[1].Thread)
		} else if c := comp[1]; c.Req != start[1].Req || c.Thread == tests[0].Thread || c.Start < tests[0].Start || c.Start > tests[1].End {
			t.Errorf("rank %d: %v on thread %d: want request %d completed on the other thread while thread %d polled (%d to %d)",
				rank, c, c.Thread, start[1].Req, tests[0].Thread, tests[0].Start, tests[1].End)
		} else {
			t.Logf("rank %d: %d unproductive polls in one record while the other thread completed the request", rank, tests[0].Polls())
		}
		s, w, c := start[0], wait[0], comp[0]
		if s.Flags&trace.FlagNewReq == 0 || s.Req == 0 || s.Comm != trace.CommNone {
			t.Errorf("rank %d: %v: want a new request without a communicator", rank, s)
		}
		if len(w.Subs) != 1 || w.Subs[0].Req != s.Req || w.Thread != s.Thread {
			t.Errorf("rank %d: %v: want the completion of request %d on thread %d", rank, w, s.Req, s.Thread)
		}
		if c.Req != s.Req || c.Thread == w.Thread {
			t.Errorf("rank %d: %v on thread %d: want request %d completed on another thread than the Wait's (%d)",
				rank, c, c.Thread, s.Req, w.Thread)
		}
		// The second thread sleeps 50 ms first: by then the Wait waits.
		if c.Start < w.Start || c.Start > w.End {
			t.Errorf("rank %d: MPI_Grequest_complete ran from %d to %d, the Wait from %d to %d: want it inside the Wait",
				rank, c.Start, c.End, w.Start, w.End)
		}
	}
}

// splitCalls lists a log's timed records with their sub-records.
func splitCalls(rank int, l *trace.Log) []call {
	var out []call
	for i := 0; i < len(l.Records); i++ {
		c := call{Record: l.Records[i], Rank: rank, Index: i}
		n := min(int(c.Count), len(l.Records)-1-i)
		c.Subs = l.Records[i+1 : i+1+n]
		i += n
		out = append(out, c)
	}
	return out
}

// TestSpawn: MPI_Comm_spawn, MPI_Comm_get_parent and MPI_Comm_disconnect,
// and a message over the intercommunicator to the spawned job. The spawned
// job is a run of its own: its logs go to a subdirectory, not over the
// parent job's. Ranks of the other job are not world ranks of this one,
// so peers and members there are PeerUnknown.
func TestSpawn(t *testing.T) {
	const np = 2
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	lib := mpitest.LoggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, np, lib, logDir, filepath.Dir(exe), exe, "spawn")
	subs, err := filepath.Glob(filepath.Join(logDir, "spawned-*"))
	if err != nil || len(subs) != 1 {
		t.Fatalf("log directories of spawned jobs %v (%v), want one", subs, err)
	}
	read := func(dir string) []*trace.Log {
		var logs []*trace.Log
		for r := 0; r < np; r++ {
			l, err := mpitest.ReadLog(t, filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
			if err != nil {
				t.Fatal(err)
			}
			if !l.Complete() || l.Header.Rank != r || l.Header.Size != np {
				t.Errorf("%s: rank %d of %d, complete %v; want rank %d of %d, complete", l.Path, l.Header.Rank, l.Header.Size, l.Complete(), r, np)
			}
			logs = append(logs, l)
		}
		return logs
	}
	parents, children := read(logDir), read(subs[0])
	if parents[0].Header.RunID == children[0].Header.RunID || parents[1].Header.RunID != parents[0].Header.RunID ||
		children[1].Header.RunID != children[0].Header.RunID {
		t.Errorf("run ids: parents %s %s, children %s %s; want one per job, two jobs",
			parents[0].Header.RunID, parents[1].Header.RunID, children[0].Header.RunID, children[1].Header.RunID)
	}
	unknown := []int32{trace.PeerUnknown, trace.PeerUnknown}
	// members checks a constructor's Member sub-records and table entry.
	members := func(rank int, l *trace.Log, c *call, name string, op trace.Op) {
		var local, remote []int32
		for _, s := range c.Subs {
			if s.Flags&trace.FlagRemote != 0 {
				remote = append(remote, s.Peer)
			} else {
				local = append(local, s.Peer)
			}
		}
		if !slices.Equal(local, []int32{0, 1}) || !slices.Equal(remote, unknown) {
			t.Errorf("%s rank %d: %v: members %v remote %v, want [0 1] and %v", l.Path, rank, c, local, remote, unknown)
		}
		if int(c.Req) >= len(l.Comms) || l.Comms[c.Req].Name != name || l.Comms[c.Req].Op != op {
			t.Errorf("%s rank %d: %v: want table entry %d named %s, made by %v (table %+v)", l.Path, rank, c, c.Req, name, op, l.Comms)
		}
	}
	expect := func(l *trace.Log, rank int, want []trace.Op) []call {
		calls := splitCalls(rank, l)
		var got []trace.Op
		for _, c := range calls {
			got = append(got, c.Op)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: calls %v, want %v", l.Path, got, want)
		}
		return calls
	}
	for rank, l := range parents {
		want := []trace.Op{trace.OpInit, trace.OpCommGetParent, trace.OpCommSpawn, trace.OpCommDisconnect, trace.OpFinalize}
		if rank == 0 {
			want = slices.Insert(want, 3, trace.OpSend)
		}
		calls := expect(l, rank, want)
		if gp := calls[1]; gp.Req != 0 || gp.Count != 0 {
			t.Errorf("parent rank %d: %v: want no parent (Req 0, no members)", rank, &gp)
		}
		sp := &calls[2]
		if sp.Comm != trace.CommWorld || sp.Seq != 1 || sp.Root != 0 || sp.Tag != 1 || sp.Req <= trace.CommSelf {
			t.Errorf("parent rank %d: %v: want on world, seq 1, leader 0, counter 1, a new index", rank, sp)
		}
		members(rank, l, sp, "P0.1", trace.OpCommSpawn)
		if rank == 0 {
			if s := calls[3]; s.Comm != sp.Req || s.Peer != trace.PeerUnknown || s.Tag != 3 || s.Bytes != 4 {
				t.Errorf("parent rank 0: %v: want 4 bytes, tag 3, to a rank of the other job (%d) on %d", &s, trace.PeerUnknown, sp.Req)
			}
		}
		if d := calls[len(calls)-2]; d.Comm != sp.Req || d.Seq != 1 {
			t.Errorf("parent rank %d: %v: want the first collective on %d", rank, &d, sp.Req)
		}
	}
	for rank, l := range children {
		want := []trace.Op{trace.OpInit, trace.OpCommGetParent, trace.OpCommGetParent, trace.OpCommDisconnect, trace.OpFinalize}
		if rank == 0 {
			want = slices.Insert(want, 2, trace.OpRecv)
		}
		calls := expect(l, rank, want)
		var idx uint32
		for i := range calls {
			c := &calls[i]
			switch c.Op {
			case trace.OpCommGetParent:
				if c.Comm != trace.CommNone || c.Seq != 0 || c.Root != 0 || c.Tag != 0 || (idx != 0 && c.Req != idx) {
					t.Errorf("child rank %d: %v: want no parent communicator, seq 0, leader 0, counter 0, the same index each time", rank, c)
				}
				idx = c.Req
				members(rank, l, c, "Y0.0", trace.OpCommGetParent)
			case trace.OpRecv:
				if c.Comm != idx || c.Peer != trace.PeerUnknown || c.Tag != 3 || c.Bytes != 4 {
					t.Errorf("child rank 0: %v: want 4 bytes, tag 3, from a rank of the other job on %d", c, idx)
				}
			case trace.OpCommDisconnect:
				if c.Comm != idx || c.Seq != 1 {
					t.Errorf("child rank %d: %v: want the first collective on %d", rank, c, idx)
				}
			}
		}
	}
}

// TestFortranLifetime runs flifetime.f90: the same cases through the
// Fortran binding's wrappers.
func TestFortranLifetime(t *testing.T) { testFortranLifetime(t, mpitest.OpenMPI) }

// testFortranLifetime runs flifetime.f90 under m and checks it.
func testFortranLifetime(t *testing.T, m *mpitest.Impl) {
	const np, nfree, npoll = 2, 20, 1000
	exe := mpitest.Compile(t, t.TempDir(), m.FC(t), "flifetime.f90")
	logs, _ := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	r := check(t, logs, np, "flifetime")
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		w := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCommDup: nfree, trace.OpIrecv: nfree,
			trace.OpIsend: nfree, trace.OpCommFree: nfree + 1, trace.OpWait: 2 * nfree, trace.OpCommDupWithInfo: 1,
			trace.OpCommGetParent: 1, trace.OpSend: 1}
		if rank == 1 {
			w[trace.OpIrecv]++
			w[trace.OpWait]++
			w[trace.OpTest] = npoll
			w[trace.OpIprobe] = 2
		} else {
			w[trace.OpRecv] = 1
		}
		return w
	})
	var specs []commSpec
	var sends, recvs []message
	for i := 0; i < nfree; i++ {
		specs = append(specs, commSpec{'D', []int32{0, 1}, nil})
		name := fmt.Sprintf("D0.%d", i+1)
		for src := 0; src < np; src++ {
			sends = append(sends, message{Src: int32(src), Dst: int32(1 - src), Comm: name, Tag: int32(i + 1), Bytes: 4, Op: trace.OpIsend, Rank: src})
			recvs = append(recvs, message{Src: int32(src), Dst: int32(1 - src), Comm: name, Tag: int32(i + 1), Bytes: 4, Op: trace.OpWait, Rank: 1 - src})
		}
	}
	specs = append(specs, commSpec{'E', []int32{0, 1}, nil})
	r.checkCommTable(t, expectNames(specs))
	sends = append(sends, message{Src: 1, Dst: 0, Comm: "W0.0", Tag: 8, Bytes: 4, Op: trace.OpSend, Rank: 1},
		message{Src: 0, Dst: 1, Comm: "W0.0", Tag: 7, Bytes: 4, Op: trace.OpSend, Rank: 0})
	recvs = append(recvs, message{Src: 1, Dst: 0, Comm: "W0.0", Tag: 8, Bytes: 4, Op: trace.OpRecv, Rank: 0},
		message{Src: 0, Dst: 1, Comm: "W0.0", Tag: 7, Bytes: 4, Op: trace.OpWait, Rank: 1})
	sameMessages(t, "sends", r.sends, sends)
	sameMessages(t, "receives", r.recvs, recvs)
	// One record for the polls of each kind.
	tests := r.find(1, func(c *call) bool { return c.Op == trace.OpTest })
	probes := r.find(1, func(c *call) bool { return c.Op == trace.OpIprobe })
	if len(tests) != 1 || tests[0].Root != npoll || len(probes) != 1 || probes[0].Root != 2 || probes[0].Peer != 0 || probes[0].Tag != 99 {
		t.Errorf("rank 1: polls recorded as %v and %v, want one MPI_Test record of %d calls and one MPI_Iprobe record of 2 (source 0, tag 99)",
			tests, probes, npoll)
	}
	for rank := 0; rank < np; rank++ {
		gp := r.find(rank, func(c *call) bool { return c.Op == trace.OpCommGetParent })
		if len(gp) == 1 && (gp[0].Req != 0 || gp[0].Count != 0) {
			t.Errorf("rank %d: %v: want no parent", rank, gp[0])
		}
	}
}

// TestConnectJoin: MPI_Comm_accept/MPI_Comm_connect and MPI_Comm_join
// between the two ranks of one job. The other side is in this job, so both
// agree on one name, and the checks every run passes hold: members and
// peers are world ranks, and a message over each intercommunicator.
func TestConnectJoin(t *testing.T) {
	const np = 2
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	logs, _ := runLogged(t, np, exe, "connect")
	r := check(t, logs, np, "lifetime")
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		// Rank 0 sends the port name, the message on A0.1 and the TCP
		// port; rank 1 the message on J0.2.
		w := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCommJoin: 1, trace.OpCommDisconnect: 2,
			trace.OpSend: 3, trace.OpRecv: 1, trace.OpCommAccept: 1}
		if rank == 1 {
			w = map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpCommJoin: 1, trace.OpCommDisconnect: 2,
				trace.OpSend: 1, trace.OpRecv: 3, trace.OpCommConnect: 1}
		}
		return w
	})
	r.checkCommTable(t, expectNames([]commSpec{{'A', []int32{0}, []int32{1}}, {'J', []int32{0}, []int32{1}}}))
	r.checkColls(t, map[string][]collSpec{
		"A0.1": unrooted(trace.OpCommDisconnect),
		"J0.2": unrooted(trace.OpCommDisconnect),
	})
	sameMessages(t, "sends", r.sends, []message{
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 1, Bytes: 1024, Op: trace.OpSend, Rank: 0}, // the port name
		{Src: 0, Dst: 1, Comm: "A0.1", Tag: 2, Bytes: 4, Op: trace.OpSend, Rank: 0},
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 4, Bytes: 4, Op: trace.OpSend, Rank: 0}, // the TCP port
		{Src: 1, Dst: 0, Comm: "J0.2", Tag: 3, Bytes: 4, Op: trace.OpSend, Rank: 1}})
	sameMessages(t, "receives", r.recvs, []message{
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 1, Bytes: 1024, Op: trace.OpRecv, Rank: 1},
		{Src: 0, Dst: 1, Comm: "A0.1", Tag: 2, Bytes: 4, Op: trace.OpRecv, Rank: 1},
		{Src: 0, Dst: 1, Comm: "W0.0", Tag: 4, Bytes: 4, Op: trace.OpRecv, Rank: 1},
		{Src: 1, Dst: 0, Comm: "J0.2", Tag: 3, Bytes: 4, Op: trace.OpRecv, Rank: 0}})
	for rank := 0; rank < np; rank++ {
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.Class() == trace.ClassCommCreate }) {
			if c.Comm != trace.CommSelf {
				t.Errorf("rank %d: %v: want MPI_COMM_SELF as the parent", rank, c)
			}
		}
	}
}

// TestPollUnknownRequest: polls of a request the logger does not know
// (started while logging was paused) coalesce too: the handle identifies
// the request.
func TestPollUnknownRequest(t *testing.T) {
	const np = 2
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "lifetime.c", "-lpthread")
	logs, _ := runLogged(t, np, exe, "unknown")
	r := check(t, logs, np, "lifetime")
	for rank := 0; rank < np; rank++ {
		var got []string
		for i := range r.calls[rank] {
			c := &r.calls[rank][i]
			got = append(got, fmt.Sprintf("%v root %d req %d count %d", c.Op, c.Root, c.Req, c.Count))
		}
		want := []string{"MPI_Init root -1 req 0 count 0", "MPI_Pcontrol root -1 req 0 count 0",
			"MPI_Pcontrol root -1 req 0 count 0", "MPI_Test root 1000 req 0 count 0",
			"MPI_Grequest_complete root -1 req 0 count 0", "MPI_Test root -1 req 0 count 0",
			"MPI_Finalize root -1 req 0 count 0"}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: calls\n%s\nwant\n%s", rank, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
