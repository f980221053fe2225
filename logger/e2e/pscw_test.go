//go:build mpi

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// pscwRank is what one rank of pscw.c (and fpscw.f90) does in general
// active target synchronisation, in call order: its MPI_Win_post and
// MPI_Win_start groups (world ranks), its puts (target world rank,
// bytes) and on which window (1: over MPI_COMM_WORLD, 2: over rev).
type pscwRank struct {
	posts, starts [][]int32
	postWin       []int32
	startWin      []int32
	puts          []pscwPut
	waits         int // MPI_Win_wait calls (rank 2 ends window 2's epoch with MPI_Win_test instead)
}

type pscwPut struct {
	peer   int32
	bytes  uint64
	window int32
}

// expectPSCW is rank r's part of pscw.c: the fan-in to rank 0 on window
// 1, the fan-out from world rank 3 (rev rank 0) to rev ranks 1, 2, 3
// (world 2, 1, 0) on window 2, and the ring twice on window 1.
func expectPSCW(r int) pscwRank {
	var e pscwRank
	post := func(w int32, g ...int32) { e.posts, e.postWin = append(e.posts, g), append(e.postWin, w) }
	start := func(w int32, g ...int32) { e.starts, e.startWin = append(e.starts, g), append(e.startWin, w) }
	put := func(w, peer int32, bytes uint64) { e.puts = append(e.puts, pscwPut{peer, bytes, w}) }
	if r == 0 {
		post(1, 1, 2, 3)
		e.waits++
	} else {
		start(1, 0)
		put(1, 0, 4)
	}
	if r == 3 {
		start(2, 2, 1, 0)
		put(2, 2, 8)
		put(2, 1, 8)
		put(2, 0, 8)
	} else {
		post(2, 3)
		if r != 2 {
			e.waits++
		}
	}
	for round := 0; round < 2; round++ {
		prev, next := int32((r+3)%4), int32((r+1)%4)
		post(1, prev)
		start(1, next)
		put(1, next, 4)
		e.waits++
	}
	return e
}

// pscwPairs are the epoch pairs of pscw.c as "origin->target window",
// with how many of each.
var pscwPairs = map[string]int{
	"1->0 W0.0": 1, "2->0 W0.0": 1, "3->0 W0.0": 3, // fan-in, and the ring's 3->0 twice
	"0->1 W0.0": 2, "1->2 W0.0": 2, "2->3 W0.0": 2,
	"3->0 S3.1": 1, "3->1 S3.1": 1, "3->2 S3.1": 1,
}

// TestPSCW runs pscw.c (C) and fpscw.f90 (Fortran, "use mpi") under Open
// MPI and under MPICH, each with its own logger: exact counts of the
// post/start/complete/wait/test calls, their groups as world ranks (on a
// window over a communicator whose ranks run opposite to the world's),
// the puts' targets as world ranks, the unproductive MPI_Win_test calls
// coalesced; the analysis pairs every exposure epoch with its access
// epochs (in order), and the report says so alike at 1 and 2 analyzer
// ranks.
func TestPSCW(t *testing.T) {
	for _, m := range mpitest.Impls {
		for _, lang := range []string{"c", "fortran"} {
			t.Run(m.Key+"/"+lang, func(t *testing.T) {
				var exe string
				if lang == "c" {
					exe = mpitest.Compile(t, t.TempDir(), m.CC(t), "pscw.c", "-Wall")
				} else {
					exe = mpitest.Compile(t, t.TempDir(), m.FC(t), "fpscw.f90")
				}
				testPSCW(t, m, exe)
			})
		}
	}
}

var wintestLine = regexp.MustCompile(`wintest calls (\d+)`)

func testPSCW(t *testing.T, m *mpitest.Impl, exe string) {
	const np = 4
	lib := m.LoggerLib(t)
	logDir := filepath.Join(t.TempDir(), "logs")
	out := m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
	mm := wintestLine.FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("no \"wintest calls\" line in the output:\n%s", out)
	}
	tests, _ := strconv.Atoi(mm[1])
	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, filepath.Base(exe))

	r.checkCounts(t, func(rank int) map[trace.Op]int {
		e := expectPSCW(rank)
		c := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpBarrier: 5, trace.OpWinAllocate: 1, trace.OpWinCreate: 1,
			trace.OpWinFree: 2, trace.OpCommSplit: 1, trace.OpCommFree: 1,
			trace.OpWinPost: len(e.posts), trace.OpWinStart: len(e.starts), trace.OpWinComplete: len(e.starts),
			trace.OpPut: len(e.puts), trace.OpWinWait: e.waits}
		if rank == 2 {
			c[trace.OpWinTest] = tests // a coalesced record counts the calls it stands for
		}
		return c
	})
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		e := expectPSCW(rank)
		n := func(gs [][]int32) (k int) {
			for _, g := range gs {
				k += len(g)
			}
			return k
		}
		return map[trace.Op]int{trace.OpWinPost: n(e.posts), trace.OpWinStart: n(e.starts), trace.OpWinComplete: 0, trace.OpWinWait: 0,
			trace.OpWinTest: 0}
	})
	r.checkCommTable(t, expectNames([]commSpec{{'S', []int32{3, 2, 1, 0}, nil}}))

	windowComm := map[int32]string{1: "W0.0", 2: "S3.1"}
	for rank := 0; rank < np; rank++ {
		e := expectPSCW(rank)
		groups := func(op trace.Op) (gs [][]int32, ws []int32) {
			for _, c := range r.find(rank, func(c *call) bool { return c.Op == op }) {
				var g []int32
				for _, s := range c.Subs {
					if s.Op == trace.OpWinGroupMember {
						g = append(g, s.Peer)
					}
				}
				gs, ws = append(gs, g), append(ws, c.Tag)
				if c.CommName != windowComm[c.Tag] || c.Peer != none {
					t.Errorf("rank %d: %v: want window %d over %s, no peer", rank, c, c.Tag, windowComm[c.Tag])
				}
			}
			return gs, ws
		}
		if gs, ws := groups(trace.OpWinPost); !reflect.DeepEqual(gs, e.posts) || !slices.Equal(ws, e.postWin) {
			t.Errorf("rank %d: MPI_Win_post groups %v on windows %v, want %v on %v", rank, gs, ws, e.posts, e.postWin)
		}
		if gs, ws := groups(trace.OpWinStart); !reflect.DeepEqual(gs, e.starts) || !slices.Equal(ws, e.startWin) {
			t.Errorf("rank %d: MPI_Win_start groups %v on windows %v, want %v on %v", rank, gs, ws, e.starts, e.startWin)
		}
		var puts []pscwPut
		for _, c := range r.find(rank, func(c *call) bool { return c.Op == trace.OpPut }) {
			puts = append(puts, pscwPut{c.Peer, c.Bytes, c.Tag})
			if c.CommName != windowComm[c.Tag] {
				t.Errorf("rank %d: %v: want window %d over %s", rank, c, c.Tag, windowComm[c.Tag])
			}
		}
		if !slices.Equal(puts, e.puts) {
			t.Errorf("rank %d: puts (target, bytes, window) %v, want %v", rank, puts, e.puts)
		}
		// MPI_Win_test: the unproductive calls coalesced (one record,
		// unless a call of the thread came between), then the one that
		// found the epoch complete, on window 2.
		ts := r.find(rank, func(c *call) bool { return c.Op == trace.OpWinTest })
		if rank != 2 {
			continue
		}
		if len(ts) == 0 || ts[len(ts)-1].Unproductive() || (tests > 1) != (len(ts) == 2 && ts[0].Unproductive()) {
			t.Errorf("rank 2: MPI_Win_test records %v for %d calls: want the unproductive ones as one record, then the productive one", ts, tests)
		}
		for _, c := range ts {
			if c.Tag != 2 || c.CommName != "S3.1" {
				t.Errorf("rank 2: %v: want window 2 over S3.1", c)
			}
		}
	}

	// The analysis: every epoch paired, in order, with the calls that
	// close them.
	p := buildPAG(t, logDir)
	if p.EpochPairs != 14 || p.Unmatched != 0 {
		t.Errorf("analysis: %d epoch pairs, %d unmatched; want 14, 0 (notes %v)", p.EpochPairs, p.Unmatched, p.Notes)
	}
	pairs := map[string]int{}
	last := map[string]graph.EpochPair{}
	for _, e := range p.Epochs {
		o, tg := p.Rank(e.Start), p.Rank(e.Post)
		key := fmt.Sprintf("%d->%d %s", o, tg, p.Comms[p.Comm[e.Start]].Name)
		pairs[key]++
		if x, ok := last[key]; ok && (x.Post >= e.Post || x.Start >= e.Start) {
			t.Errorf("pair %s: epochs %+v then %+v, not matched in order", key, x, e)
		}
		last[key] = e
		op := func(c int32) trace.Op {
			if c < 0 {
				return trace.OpInvalid
			}
			return p.Op[c]
		}
		wantClose := trace.OpWinWait
		if tg == 2 && p.Comms[p.Comm[e.Post]].Name == "S3.1" {
			wantClose = trace.OpWinTest
		}
		if op(e.Post) != trace.OpWinPost || op(e.Start) != trace.OpWinStart || op(e.Complete) != trace.OpWinComplete ||
			op(e.Wait) != wantClose || e.Waited < e.Start || e.Waited > e.Complete || e.Post > e.Wait {
			t.Errorf("pair %s: %+v: want post, %v; start, complete, and a call between them that needed the post", key, e, wantClose)
		}
		if w := op(e.Waited); w != trace.OpWinStart && w != trace.OpPut && w != trace.OpWinComplete {
			t.Errorf("pair %s: the call that needed the post is %v", key, w)
		}
	}
	if !reflect.DeepEqual(pairs, pscwPairs) {
		t.Errorf("epoch pairs %v, want %v", pairs, pscwPairs)
	}

	// The report at 1 and 2 analyzer ranks.
	bin := mpitest.CPathBin(t)
	one := analyzeJSON(t, exec.Command(bin, "--json", "-", "--json-segments", logDir))
	two := analyzeJSON(t, exec.Command(mpitest.OpenMPI.Mpirun(t), append(mpitest.OpenMPI.JobArgs(2, nil), bin, "--json", "-", "--json-segments", logDir)...))
	if one.Run.RMAEpochPairs != 14 || two.Run.RMAEpochPairs != 14 {
		t.Errorf("report: rma_epoch_pairs %d at 1 analyzer rank, %d at 2; want 14", one.Run.RMAEpochPairs, two.Run.RMAEpochPairs)
	}
	if !reflect.DeepEqual(one.Waitstates, two.Waitstates) {
		t.Errorf("wait states differ at 1 and 2 analyzer ranks:\n%+v\n%+v", one.Waitstates, two.Waitstates)
	}
}
