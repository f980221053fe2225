//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// threads.c's arguments: phases, iterations, base and extra µs.
// The slow thread's extra time per iteration is long against what
// scheduling adds to a message's way on this 2-core machine (6 threads,
// most polling in MPI: up to a few ms per iteration), so that the pair of
// fast threads finishes each phase well before the slow one.
const (
	thrPhases = 3
	thrIters  = 5
	thrBase   = 500 * time.Microsecond
	thrExtra  = 10 * time.Millisecond
)

// thrCall is one timed record of a rank's log on the global clock, with
// its thread.
type thrCall struct {
	Op         trace.Op
	Thread     uint16
	Start, End int64 // global ns
	Tag        int32
	Req        uint32   // the request it created (FlagNewReq)
	Done       []uint32 // the requests it completed
}

// TestThreads runs threads.c (MPI_THREAD_MULTIPLE, two worker threads per
// rank exchanging with their namesakes on the other rank, worker 1 of
// rank 1 slow by design) under the logger, checks that the logs keep the
// threads apart, and holds the analyzer's critical path to what a run of
// separate sequences of calls per (rank, thread) must give: every exact
// algorithm finds the same path, contiguous, ending at the run's end; every
// message is matched; its computation is that of the slow thread's rank;
// and no computation stretch joins calls of two different threads.
func TestThreads(t *testing.T) {
	const np = 2
	lib := mpitest.LoggerLib(t)
	// Unbound, a rank's three threads may use both cores.
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "threads.c", "-Wall", "-lpthread")
	logDir := filepath.Join(t.TempDir(), "logs")
	args := []string{fmt.Sprint(thrPhases), fmt.Sprint(thrIters), us(thrBase), us(thrExtra)}
	// Threads waiting in MPI give the core to those computing (6 threads,
	// 2 cores).
	out := mpitest.RunEnv(t, np, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, lib, logDir, filepath.Dir(exe), exe, args...)
	if strings.Contains(out, "CPATH-SKIP") {
		t.Skipf("Open MPI does not provide MPI_THREAD_MULTIPLE here: %s", out)
	}
	logs := mpitest.ReadLogs(t, logDir, np)

	// The logs: per rank, the calls by thread, and which thread is which.
	calls := make([][]thrCall, np)
	worker := make([][2]uint16, np) // rank → worker w → thread id
	t0, t1 := int64(1<<62), int64(-1<<62)
	for r, l := range logs {
		if l.Header.ThreadLevel != 3 { // MPI_THREAD_MULTIPLE in Open MPI
			t.Errorf("rank %d: header thread level %d, want 3 (MPI_THREAD_MULTIPLE)", r, l.Header.ThreadLevel)
		}
		clk := &l.Header.Clock
		for _, rec := range l.Records {
			if rec.Op.IsSub() {
				if n := len(calls[r]); n > 0 && rec.Op == trace.OpReqDone {
					calls[r][n-1].Done = append(calls[r][n-1].Done, rec.Req)
				}
				continue
			}
			c := thrCall{Op: rec.Op, Thread: rec.Thread, Start: clk.Global(rec.Start), End: clk.Global(rec.End), Tag: rec.Tag}
			if rec.Flags&trace.FlagNewReq != 0 {
				c.Req = rec.Req
			}
			calls[r] = append(calls[r], c)
			t0, t1 = min(t0, c.Start), max(t1, c.End)
		}
		worker[r] = checkThreadLogs(t, r, calls[r])
	}
	// Per rank and thread, the calls in program order, and the stretches of
	// computation between consecutive calls: (end of one, start of the
	// next) → thread.
	type gap struct{ from, to int64 }
	gaps := make([]map[gap]uint16, np)
	ends := make([]map[int64][]uint16, np)   // end time of a call → its threads
	starts := make([]map[int64][]uint16, np) // start time of a call → its threads
	for r := range calls {
		gaps[r], ends[r], starts[r] = map[gap]uint16{}, map[int64][]uint16{}, map[int64][]uint16{}
		last := map[uint16]int64{}
		for _, c := range calls[r] {
			if e, ok := last[c.Thread]; ok {
				gaps[r][gap{e, c.Start}] = c.Thread
			}
			last[c.Thread] = c.End
			ends[r][c.End] = append(ends[r][c.End], c.Thread)
			starts[r][c.Start] = append(starts[r][c.Start], c.Thread)
		}
	}

	bin := cpathBin(t)
	designed := time.Duration(thrPhases*thrIters) * (thrBase + thrExtra)
	wantMsgs := thrPhases * (4*thrIters + 4)
	var ref *report.Report
	for _, algo := range []string{"dag", "dijkstra", "delta"} {
		t.Run(algo, func(t *testing.T) {
			rep := analyze(t, bin, logDir, analyzer{algo, 0})
			cp := &rep.CriticalPath
			if algo == "dag" {
				ref = rep
			} else if ref != nil {
				samePath(t, algo, &ref.CriticalPath, cp)
			}
			if want := reportedAlgo(algo); cp.Algo != want {
				t.Errorf("critical_path.algo = %q, want %q", cp.Algo, want)
			}
			if rep.Run.Messages != wantMsgs || rep.Run.Unmatched != 0 {
				t.Errorf("run: %d messages matched, %d unmatched; the program sends %d, all received (skipped: %q)",
					rep.Run.Messages, rep.Run.Unmatched, wantMsgs, rep.Run.Skipped)
			}
			if d := time.Duration(rep.RuntimeNs - (t1 - t0)); d > 10*time.Microsecond || d < -10*time.Microsecond {
				t.Errorf("runtime_ns = %s, the logs span %s", ms(rep.RuntimeNs), ms(t1-t0))
			}
			segs := cp.Segments
			if len(segs) == 0 {
				t.Fatal("critical_path.segments is empty")
			}
			var sum int64
			lim := &limiter{t: t, max: 5}
			for i, s := range segs {
				if s.EndNs < s.StartNs {
					lim.errorf("order", "segment %d (%s %s on rank %d) runs backwards: %s to %s", i, s.Kind, s.Op, s.Rank, ms(s.StartNs), ms(s.EndNs))
				}
				if i > 0 && s.StartNs != segs[i-1].EndNs {
					lim.errorf("contiguity", "segment %d (%s %s on rank %d) starts at %s, segment %d ends at %s: the path is not contiguous",
						i, s.Kind, s.Op, s.Rank, ms(s.StartNs), i-1, ms(segs[i-1].EndNs))
				}
				sum += s.EndNs - s.StartNs
			}
			if sum != cp.LengthNs || cp.DiffNs != cp.LengthNs-rep.RuntimeNs {
				t.Errorf("the segments add up to %d ns, length_ns %d, runtime_ns %d, diff_ns %d", sum, cp.LengthNs, rep.RuntimeNs, cp.DiffNs)
			}
			if last := segs[len(segs)-1]; last.EndNs != rep.RuntimeNs {
				t.Errorf("the path ends at %s (%s on rank %d), the run at %s", ms(last.EndNs), last.Op, last.Rank, ms(rep.RuntimeNs))
			}

			// Computation joins consecutive calls of one thread, never
			// calls of two threads of a rank.
			byThread := map[[2]int]int64{}
			for i, s := range segs {
				if s.Kind != "compute" {
					continue
				}
				if s.Rank < 0 || s.Rank >= np {
					lim.errorf("rank", "segment %d: rank %d of %d", i, s.Rank, np)
					continue
				}
				from, to := s.StartNs+t0, s.EndNs+t0
				if th, ok := gaps[s.Rank][gap{from, to}]; ok {
					byThread[[2]int{s.Rank, int(th)}] += s.EndNs - s.StartNs
					continue
				}
				a, b := ends[s.Rank][from], starts[s.Rank][to]
				if len(a) > 0 && len(b) > 0 {
					lim.errorf("threads", "compute segment %d on rank %d, %s to %s (before %s): from the end of a call of thread(s) %v to the start of a call of thread(s) %v, not between consecutive calls of one thread (clock violations corrected: %d)",
						i, s.Rank, ms(s.StartNs), ms(s.EndNs), s.Op, a, b, rep.Run.ClockViolations)
				} else {
					lim.errorf("threads", "compute segment %d on rank %d, %s to %s (before %s): no call of the rank ends at its start (%v) or starts at its end (%v) (clock violations corrected: %d)",
						i, s.Rank, ms(s.StartNs), ms(s.EndNs), s.Op, len(a) > 0, len(b) > 0, rep.Run.ClockViolations)
				}
			}
			lim.flush()

			// The slow thread bounds the run: its rank's computation is
			// the path's, most of it in that thread.
			var comp [np]int64
			for _, rs := range cp.ByRank {
				if rs.Rank >= 0 && rs.Rank < np {
					comp[rs.Rank] = rs.ComputeNs
				}
			}
			slow := byThread[[2]int{1, int(worker[1][1])}]
			t.Logf("length %s, runtime %s, %d segments; compute on the path: rank 0 %s, rank 1 %s (slow thread %d: %s); designed for the slow thread %v",
				ms(cp.LengthNs), ms(rep.RuntimeNs), len(segs), ms(comp[0]), ms(comp[1]), worker[1][1], ms(slow), designed)
			for _, k := range sortedThreadKeys(byThread) {
				t.Logf("  compute on the path, rank %d thread %d: %s", k[0], k[1], ms(byThread[k]))
			}
			if floor := int64(designed) * 6 / 10; comp[1] < floor || slow < floor {
				t.Errorf("computation on the path on rank 1: %s, in its slow thread %d: %s; designed %v for the slow thread (want at least 60%% in both)",
					ms(comp[1]), worker[1][1], ms(slow), designed)
			}
			if comp[1] <= comp[0] {
				t.Errorf("computation on the path: rank 0 %s ≥ rank 1 %s, but rank 1 has the slow thread", ms(comp[0]), ms(comp[1]))
			}
		})
	}
}

// checkThreadLogs checks one rank's calls against threads.c: the main
// thread (thread 0, the first to call MPI) makes MPI_Init_thread, the
// Barriers, the Recvs of the "done" messages and MPI_Finalize; worker w
// (tag 1+w) its Irecvs, Isends and Waitalls and one Send per phase, all
// from one thread of its own; a thread's calls do not overlap in time; and
// every request is completed once, by its own thread's Waitall. It returns
// the workers' thread ids.
func checkThreadLogs(t *testing.T, r int, calls []thrCall) [2]uint16 {
	t.Helper()
	var ws [2]uint16
	lim := &limiter{t: t, max: 5}
	defer lim.flush()
	if len(calls) == 0 || calls[0].Op != trace.OpInitThread || calls[0].Thread != 0 {
		t.Errorf("rank %d: the first call is not MPI_Init_thread on thread 0", r)
		return ws
	}
	threads := map[uint16]map[trace.Op]int{}
	byTag := map[int32]map[uint16]bool{}
	for _, c := range calls {
		if threads[c.Thread] == nil {
			threads[c.Thread] = map[trace.Op]int{}
		}
		threads[c.Thread][c.Op]++
		switch c.Op {
		case trace.OpIrecv, trace.OpIsend, trace.OpSend:
			tag := c.Tag
			if c.Op == trace.OpSend {
				tag -= 99 // done message of worker w: tag 100+w
			}
			if byTag[tag] == nil {
				byTag[tag] = map[uint16]bool{}
			}
			byTag[tag][c.Thread] = true
		}
	}
	var ids []int
	for th := range threads {
		ids = append(ids, int(th))
	}
	sort.Ints(ids)
	if fmt.Sprint(ids) != "[0 1 2]" {
		t.Errorf("rank %d: calls from threads %v, want [0 1 2] (main, two workers)", r, ids)
	}
	for w := 0; w < 2; w++ {
		m := byTag[int32(1+w)]
		if len(m) != 1 {
			t.Errorf("rank %d: worker %d's calls (tag %d) come from threads %v, want one", r, w, 1+w, m)
			continue
		}
		for th := range m {
			ws[w] = th
		}
		want := map[trace.Op]int{trace.OpIrecv: thrPhases * thrIters, trace.OpIsend: thrPhases * thrIters,
			trace.OpWaitall: thrPhases * thrIters, trace.OpSend: thrPhases}
		if got := threads[ws[w]]; ws[w] == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rank %d: worker %d (thread %d) made %v, want %v on a thread of its own", r, w, ws[w], got, want)
		}
	}
	if ws[0] == ws[1] {
		t.Errorf("rank %d: both workers on thread %d", r, ws[0])
	}
	wantMain := map[trace.Op]int{trace.OpInitThread: 1, trace.OpBarrier: thrPhases + 2, trace.OpRecv: 2 * thrPhases, trace.OpFinalize: 1}
	if got := threads[0]; fmt.Sprint(got) != fmt.Sprint(wantMain) {
		t.Errorf("rank %d: the main thread made %v, want %v", r, got, wantMain)
	}

	// Program order: a thread's calls follow one another.
	last := map[uint16]int64{}
	for i, c := range calls {
		if e, ok := last[c.Thread]; ok && c.Start < e {
			lim.errorf("overlap", "rank %d: call %d (%v) of thread %d starts %d ns before the thread's previous call ends", r, i, c.Op, c.Thread, e-c.Start)
		}
		last[c.Thread] = c.End
	}
	// Requests: each completed exactly once, by a Waitall of the thread
	// that created it (threads.c waits for its own requests only).
	owner := map[uint32]uint16{}
	op := map[uint32]trace.Op{}
	for _, c := range calls {
		if c.Req != 0 {
			owner[c.Req], op[c.Req] = c.Thread, c.Op
		}
	}
	done := map[uint32]int{}
	for i, c := range calls {
		for _, q := range c.Done {
			done[q]++
			if th, ok := owner[q]; !ok {
				lim.errorf("requests", "rank %d: call %d (%v of thread %d) completes request %d, which no call created", r, i, c.Op, c.Thread, q)
			} else if th != c.Thread {
				lim.errorf("requests", "rank %d: call %d (%v of thread %d) completes request %d, an %v of thread %d",
					r, i, c.Op, c.Thread, q, op[q], th)
			}
		}
	}
	var never, twice int
	for q := range owner {
		switch {
		case done[q] == 0:
			never++
		case done[q] > 1:
			twice++
		}
	}
	if never > 0 || twice > 0 {
		t.Errorf("rank %d: of %d requests, %d never completed and %d completed more than once in the log", r, len(owner), never, twice)
	}
	return ws
}

func sortedThreadKeys(m map[[2]int]int64) [][2]int {
	var ks [][2]int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i][0] != ks[j][0] {
			return ks[i][0] < ks[j][0]
		}
		return ks[i][1] < ks[j][1]
	})
	return ks
}
