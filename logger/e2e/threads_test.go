//go:build mpi

package e2e

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// threads4.c's design.
const (
	t4Threads = 4
	t4Polls   = 100
	t4KillAt  = 3000
)

func t4Calls(k int) int { return 400 + 100*k }

// workerOf says which worker of threads4 made a call on tag 100+k (send
// or receive on itself), -1 for another call.
func workerOf(r *trace.Record) int {
	if (r.Op == trace.OpSend || r.Op == trace.OpRecv) && r.Tag >= 100 && r.Tag < 100+t4Threads {
		return int(r.Tag - 100)
	}
	return -1
}

// byThread splits a log's timed records by Thread, each in log order with
// its sub-records.
func byThread(l *trace.Log) map[uint16][]call {
	out := map[uint16][]call{}
	for i := 0; i < len(l.Records); i++ {
		r := l.Records[i]
		c := call{Record: r, Index: i}
		for k := 0; k < int(r.Count) && i+1 < len(l.Records); k++ {
			i++
			c.Subs = append(c.Subs, l.Records[i])
		}
		out[r.Thread] = append(out[r.Thread], c)
	}
	return out
}

// TestThreadsMultiple runs threads4 run on 2 ranks: 4 threads per rank call
// MPI at once, each logging into its own stream. Every thread's calls come
// out exactly, in its program order: the main thread's, and each
// worker's coalesced polls, its send/receive pairs and the Wait that
// completes a receive the main thread posted (found in the main thread's
// request table). The logs analyse.
func TestThreadsMultiple(t *testing.T) {
	const np = 2
	lib := mpitest.LoggerLib(t)
	dir := t.TempDir()
	exe := mpitest.Compile(t, dir, "mpicc", "threads4.c", "-lpthread")
	logDir := filepath.Join(dir, "logs")
	out := mpitest.Run(t, np, lib, logDir, dir, exe, "run")
	if strings.Contains(out, "CPATH-SKIP") {
		t.Skipf("Open MPI does not provide MPI_THREAD_MULTIPLE here: %s", out)
	}
	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, "threads4")
	for rank, l := range logs {
		if !l.Header.Threads || !l.Complete() {
			t.Errorf("rank %d: header threads %v, complete %v: want a complete threaded log", rank, l.Header.Threads, l.Complete())
		}
		th := byThread(l)
		if len(th) != 1+t4Threads {
			t.Errorf("rank %d: calls from %d threads, want %d", rank, len(th), 1+t4Threads)
		}
		main := th[l.Records[0].Thread]
		// The main thread: Init, the workers' receives, the sends that
		// match them, then the Barrier and Finalize.
		want := []trace.Op{trace.OpInitThread}
		for k := 0; k < t4Threads; k++ {
			want = append(want, trace.OpIrecv)
		}
		for k := 0; k < t4Threads; k++ {
			want = append(want, trace.OpSend)
		}
		want = append(want, trace.OpBarrier, trace.OpFinalize)
		reqOf := map[int32]uint32{} // tag 900+k → the Irecv's request
		if len(main) != len(want) {
			t.Errorf("rank %d: main thread made %d calls, want %d", rank, len(main), len(want))
		}
		for i := range main {
			if i >= len(want) || main[i].Op != want[i] {
				t.Errorf("rank %d: main thread's call %d is %v, want the sequence %v", rank, i, main[i].Op, want)
				break
			}
			if main[i].Op == trace.OpIrecv {
				reqOf[main[i].Tag] = main[i].Req
			}
		}
		for tid, cs := range th {
			if tid == l.Records[0].Thread {
				continue
			}
			k := -1
			for i := range cs {
				if w := workerOf(&cs[i].Record); w >= 0 {
					k = w
					break
				}
			}
			if k < 0 {
				t.Errorf("rank %d: thread %d made no send or receive of a worker", rank, tid)
				continue
			}
			n := t4Calls(k)
			if len(cs) != 2+2*n {
				t.Errorf("rank %d worker %d (thread %d): %d calls, want %d", rank, k, tid, len(cs), 2+2*n)
				continue
			}
			if c := cs[0]; c.Op != trace.OpIprobe || !c.Unproductive() || c.Polls() != t4Polls {
				t.Errorf("rank %d worker %d: first call %v (%d polls), want one record of %d unproductive MPI_Iprobe", rank, k, c.Op, c.Polls(), t4Polls)
			}
			for i := 0; i < n; i++ {
				for j, op := range []trace.Op{trace.OpSend, trace.OpRecv} {
					c := cs[1+2*i+j]
					if c.Op != op || c.Tag != int32(100+k) || c.Peer != int32(rank) || c.Bytes != 8 {
						t.Fatalf("rank %d worker %d: call %d is %v tag %d peer %d bytes %d, want %v tag %d peer %d bytes 8 (pair %d)",
							rank, k, 1+2*i+j, c.Op, c.Tag, c.Peer, c.Bytes, op, 100+k, rank, i)
					}
				}
			}
			w := cs[len(cs)-1]
			if w.Op != trace.OpWait || len(w.Subs) != 1 || w.Subs[0].Req != reqOf[int32(900+k)] || w.Subs[0].Tag != int32(900+k) {
				t.Errorf("rank %d worker %d: last call %v %+v, want MPI_Wait completing the main thread's request %d (tag %d)",
					rank, k, w.Op, w.Subs, reqOf[int32(900+k)], 900+k)
			}
		}
		var calls int
		for _, n := range r.counts[rank] {
			calls += n
		}
		want1 := 1 + 2*t4Threads + 2
		for k := 0; k < t4Threads; k++ {
			want1 += t4Polls + 2*t4Calls(k) + 1
		}
		if calls != want1 || l.Trailer.Records != uint64(len(l.Records)) {
			t.Errorf("rank %d: %d MPI calls (trailer: %d records, log %d), want %d", rank, calls, l.Trailer.Records, len(l.Records), want1)
		}
	}
	cmd := exec.Command(mpitest.CPathBin(t), logDir)
	rep, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(rep), "critical path") {
		t.Errorf("cpath %s: %v\n%s", logDir, err, rep)
	}
}

// TestThreadsKilled: rank 1 of threads4 kill (term) is killed by SIGKILL
// (SIGTERM) while three of its four threads are calling MPI, each having
// made thousands of calls. Each thread's calls that returned are in the
// log, in order, and at most the one in flight more: the threads'
// progress, counted after each call returns in a file mapped shared,
// bounds each thread's logged calls from both sides. The killer thread's
// calls are all there, exactly. With SIGTERM the
// logger's signal path writes the trailer while the other threads call on
// (their progress then runs past the log: only the upper bound holds).
func TestThreadsKilled(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	for _, mode := range []string{"kill", "term"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			exe := mpitest.Compile(t, dir, "mpicc", "threads4.c", "-lpthread")
			logDir := filepath.Join(dir, "logs")
			res := runFailJob(t, lib, logDir, exe, mode)
			if strings.Contains(res.stdout, "CPATH-SKIP") {
				t.Skipf("Open MPI does not provide MPI_THREAD_MULTIPLE here: %s", res.stdout)
			}
			if res.code == 0 {
				t.Fatalf("exit status 0, want the job to fail")
			}
			checkKilledThreads(t, dir, logDir, mode == "kill")
		})
	}
}

func checkKilledThreads(t *testing.T, dir, logDir string, kill bool) {
	b, err := os.ReadFile(filepath.Join(dir, "threads4.progress"))
	if err != nil || len(b) != 8*t4Threads {
		t.Fatalf("progress file: %v (%d bytes)", err, len(b))
	}
	l, err := mpitest.ReadLog(t, filepath.Join(logDir, "rank-000001.cplog"))
	if err != nil {
		t.Fatalf("rank 1: %v", err)
	}
	wantEnd := trace.EndMissing
	if !kill {
		wantEnd = trace.EndSignal
	}
	if l.Trailer.Status != wantEnd || l.Damage != nil || !l.Header.Threads {
		t.Errorf("rank 1: trailer %v damage %v threads %v, want %v and an intact threaded log", l.Trailer.Status, l.Damage, l.Header.Threads, wantEnd)
	}
	logged := make([]int, t4Threads)
	for tid, cs := range byThread(l) {
		if cs[0].Op == trace.OpInitThread {
			if len(cs) != 1 {
				t.Errorf("rank 1: the main thread made %d calls, want MPI_Init_thread only", len(cs))
			}
			continue
		}
		k := workerOf(&cs[0].Record)
		if k < 0 {
			t.Errorf("rank 1: thread %d starts with %v tag %d", tid, cs[0].Op, cs[0].Tag)
			continue
		}
		for i, c := range cs {
			want := []trace.Op{trace.OpSend, trace.OpRecv}[i%2]
			if c.Op != want || workerOf(&c.Record) != k {
				t.Errorf("rank 1 worker %d: call %d is %v tag %d, want %v tag %d: a call is missing or out of order", k, i, c.Op, c.Tag, want, 100+k)
				break
			}
		}
		logged[k] = len(cs)
	}
	for k := 0; k < t4Threads; k++ {
		done := int(binary.LittleEndian.Uint64(b[8*k:]))
		t.Logf("rank 1 worker %d: %d calls returned, %d logged", k, done, logged[k])
		switch {
		case done < t4KillAt:
			t.Errorf("rank 1 worker %d: %d calls returned before the signal, want at least %d", k, done, t4KillAt)
		case k == 0 && logged[k] != done:
			t.Errorf("rank 1 worker 0: %d calls logged, want the %d it made before raising the signal", logged[k], done)
		case logged[k] > done+1 || kill && logged[k] < done:
			t.Errorf("rank 1 worker %d: %d calls logged, %d returned: want those and at most the one in flight", k, logged[k], done)
		}
	}
	rep, err := exec.Command(mpitest.CPathBin(t), logDir).CombinedOutput()
	if err != nil {
		t.Errorf("cpath on the logs of a run with a killed rank: %v\n%s", err, rep)
	}
}
