package replay

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// The run of the tests, in ns, both ranks' clocks alike. Each call follows
// the computation given before it (useful computation: after MPI_Init):
//
//	rank 0: Init [0,100]  100 Pcontrol(1) [200,201]  1000 Allreduce [1201,3510]
//	        100 Pcontrol(2) [3610,3611]  1000 Send→1 [4611,4621]  100 Finalize [4721,4730]
//	rank 1: Init [0,100]  100 Pcontrol(1) [200,201]  3300 Allreduce [3501,3510]
//	        100 Pcontrol(2) [3610,3611]  100 Recv←0 [3711,4625]  1000 Finalize [5625,5630]
//
// Useful computation: rank 0 2300, rank 1 4600 (mean 3450). The window is
// [100, 5625], 5525 ns. The critical path: rank 1 to its Allreduce (3400
// of computation), the Allreduce (9), rank 0 to its Send (1100), the
// message (14), rank 1 to the end (1000 + Finalize 5): 5630.
var testRanks = [][]testCall{
	{
		{trace.OpInit, 0, 100, 0x100, 0},
		{trace.OpPcontrol, 200, 201, 0x901, 1},
		{trace.OpAllreduce, 1201, 3510, 0x3000, 0},
		{trace.OpPcontrol, 3610, 3611, 0x902, 2},
		{trace.OpSend, 4611, 4621, 0x5000, 0},
		{trace.OpFinalize, 4721, 4730, 0x6000, 0},
	},
	{
		{trace.OpInit, 0, 100, 0x100, 0},
		{trace.OpPcontrol, 200, 201, 0x901, 1},
		{trace.OpAllreduce, 3501, 3510, 0x3000, 0},
		{trace.OpPcontrol, 3610, 3611, 0x902, 2},
		{trace.OpRecv, 3711, 4625, 0x5100, 0},
		{trace.OpFinalize, 5625, 5630, 0x6000, 0},
	},
}

type testCall struct {
	op         trace.Op
	start, end int64
	site       uint64
	level      int32
}

// writeTestRun writes the run's logs into a new directory.
func writeTestRun(t *testing.T) string {
	t.Helper()
	ranks := make([][]trace.Record, len(testRanks))
	for r, calls := range testRanks {
		for _, c := range calls {
			rec := trace.Record{Op: c.op, Start: c.start, End: c.end, CallSite: c.site, Comm: trace.CommNone,
				Peer: trace.PeerNone, Root: trace.PeerNone}
			switch c.op {
			case trace.OpPcontrol:
				rec.Tag = c.level
			case trace.OpAllreduce:
				rec.Comm, rec.Seq, rec.Bytes = trace.CommWorld, 1, 8
			case trace.OpSend:
				rec.Comm, rec.Peer, rec.Tag, rec.Bytes = trace.CommWorld, 1, 5, 8
			case trace.OpRecv:
				rec.Comm, rec.Peer, rec.Tag, rec.Bytes = trace.CommWorld, 0, 5, 8
			}
			ranks[r] = append(ranks[r], rec)
		}
	}
	return writeRecs(t, ranks)
}

// writeRecs writes a run's logs, ranks[r] rank r's records, into a new
// directory.
func writeRecs(t *testing.T, ranks [][]trace.Record) string {
	t.Helper()
	dir := t.TempDir()
	for r, recs := range ranks {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriter(f)
		h := &trace.Header{RunID: "replay-test", Rank: r, Size: len(ranks), Host: "test", PID: 1 + r,
			Exe: "/test/replay", Logger: "replay test", Clock: trace.Clock{Method: "pingpong"}}
		w, err := trace.NewWriter(bw, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecords(recs); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return dir
}

// replayAt builds the run's PAG over P in-process ranks, finds the exact
// critical path and replays it with the scenarios, as the analyzer does.
func replayAt(t *testing.T, dir string, P int, scenarios []Scenario) (*Result, error) {
	return replayWith(t, dir, P, scenarios, true, nil)
}

// replayWith is replayAt, giving Run the exact critical path (whose length
// is then the baseline) or not (the baseline is solved).
// With win, the window's factors are asked too.
func replayWith(t *testing.T, dir string, P int, scenarios []Scenario, givePath bool, win *graph.Window) (*Result, error) {
	t.Helper()
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	errs := make([]error, P)
	mpixtest.Run(P, func(c mpix.Comm) {
		p, err := graph.Build(c, run)
		if err != nil {
			errs[c.Rank()] = err
			return
		}
		cp, sched, err := pathOf(c, p)
		if err != nil {
			errs[c.Rank()] = err
			return
		}
		var want []int32
		for _, v := range cp.Path.Vertices {
			if x, kind := p.Vertex(v); kind <= graph.VertexEnd {
				want = append(want, x)
			}
		}
		calls, err := p.FetchCalls(c, want)
		if err != nil {
			errs[c.Rank()] = err
			return
		}
		o := Options{Scenarios: scenarios, Path: cp.Path, PathCalls: calls, Names: hexNames{}, Window: win, Schedule: sched}
		if !givePath {
			o.Path = cpath.Path{}
		}
		r, err := Run(c, p, o)
		errs[c.Rank()] = err
		if c.Rank() == 0 {
			res = r
		}
	})
	for _, err := range errs[1:] {
		if (err == nil) != (errs[0] == nil) || err != nil && err.Error() != errs[0].Error() {
			t.Fatalf("P=%d: the ranks disagree: %v", P, errs)
		}
	}
	return res, errs[0]
}

// pathOf is the exact critical path of p's run and the schedule it was
// found on, as the analyzer has them.
func pathOf(c mpix.Comm, p *graph.PAG) (*cpath.DistResult, *cpath.Schedule, error) {
	res, s, _, err := pathIn(c, p, false)
	return res, s, err
}

// pathIn is pathOf, with frames on the rows redistributed by frame
// where they balance (FrameDAG; the schedule is nil then).
func pathIn(c mpix.Comm, p *graph.PAG, frames bool) (*cpath.DistResult, *cpath.Schedule, *cpath.Rows, error) {
	if err := p.Splits(c); err != nil {
		return nil, nil, nil, err
	}
	me := p.Part
	dg := &cpath.DistGraph{N: p.NumVertices(), Bounds: p.Bounds, Lo: p.Bounds[me], Hi: p.Bounds[me+1],
		InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
	in := &cpath.SplitInput{Split: p.Split, Exit: append(slices.Clone(p.SyncHub), p.Target)}
	if frames {
		kinds, err := mpix.FromBytes[uint8](mpix.Bytes(p.InKind))
		if err != nil {
			return nil, nil, nil, err
		}
		res, rows, ok, err := cpath.FrameDAG(c, dg, in, kinds)
		if err != nil || ok {
			return res, nil, rows, err
		}
	}
	res, s, err := cpath.SweepDAG(c, dg, in, p.Streams())
	return res, s, nil, err
}

// hexNames names call sites by their addresses, in no function.
type hexNames struct{}

func (hexNames) Callsite(rank int, pc uint64) string { return "0x" + strconv.FormatUint(pc, 16) }
func (hexNames) Hex(rank int, pc uint64) string      { return "0x" + strconv.FormatUint(pc, 16) }
func (hexNames) Function(rank int, pc uint64) string { return "" }

func parseAll(t *testing.T, ss ...string) []Scenario {
	var out []Scenario
	for _, s := range ss {
		x, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// wantFactors are factors worked out by hand from the run above.
type wantFactors struct {
	from, to, ideal int64
	useful          []int64
	lb, ser, trf    float64
}

func checkFactors(t *testing.T, what string, got Factors, want wantFactors) {
	t.Helper()
	if got.From != want.from || got.To != want.to || got.IdealRuntimeNs != want.ideal || !reflect.DeepEqual(got.UsefulNs, want.useful) {
		t.Errorf("%s: window [%d, %d], ideal %d, useful %v; want [%d, %d], %d, %v",
			what, got.From, got.To, got.IdealRuntimeNs, got.UsefulNs, want.from, want.to, want.ideal, want.useful)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	ce := want.ser * want.trf
	if !near(got.LoadBalance, want.lb) || !near(got.SerialisationEfficiency, want.ser) || !near(got.TransferEfficiency, want.trf) ||
		!near(got.CommunicationEfficiency, ce) || !near(got.ParallelEfficiency, want.lb*ce) {
		t.Errorf("%s: load balance %g, serialisation %g, transfer %g, communication %g, parallel %g; want %g, %g, %g, %g, %g",
			what, got.LoadBalance, got.SerialisationEfficiency, got.TransferEfficiency, got.CommunicationEfficiency,
			got.ParallelEfficiency, want.lb, want.ser, want.trf, ce, want.lb*ce)
	}
}

func TestReplay(t *testing.T) {
	dir := writeTestRun(t)
	user := parseAll(t, "rank:0=0", "callsite:0x3000=0.5")
	var first *Result
	for _, P := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("P=%d", P), func(t *testing.T) {
			res, err := replayAt(t, dir, P, user)
			if err != nil {
				t.Fatal(err)
			}
			if res.BaselineNs != 5630 {
				t.Errorf("baseline %d, want the run's 5630", res.BaselineNs)
			}
			// The replay's own solve of the run as it was is the exact path
			// (without the path there are no default fixes, which halve its
			// stretches; the other answers are the same).
			solved, err := replayWith(t, dir, P, user, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if solved.BaselineNs != res.BaselineNs || len(solved.WhatIf) > len(res.WhatIf) || !reflect.DeepEqual(solved.WhatIf, res.WhatIf[:len(solved.WhatIf)]) {
				t.Errorf("without the path: baseline %d, what-if %+v; with it: %d, %+v", solved.BaselineNs, solved.WhatIf, res.BaselineNs, res.WhatIf)
			}
			// Whole run: the ideal path is rank 1 to its Allreduce (3400),
			// rank 0 to its Send (1100), rank 1 to MPI_Finalize (1000).
			checkFactors(t, "run", res.POP.Factors, wantFactors{100, 5625, 5500, []int64{2300, 4600},
				3450.0 / 4600, 4600.0 / 5500, 5500.0 / 5525})
			if len(res.POP.Phases) != 3 {
				t.Fatalf("%d phases, want 3", len(res.POP.Phases))
			}
			levels := []string{"none", "1", "2"}
			for k, ph := range res.POP.Phases {
				l := "none"
				if ph.Level != nil {
					l = strconv.Itoa(int(*ph.Level))
				}
				if ph.Index != k || l != levels[k] {
					t.Errorf("phase %d: index %d, level %s; want %d, %s", k, ph.Index, l, k, levels[k])
				}
			}
			checkFactors(t, "phase 0", res.POP.Phases[0].Factors, wantFactors{100, 200, 100, []int64{100, 100}, 1, 1, 1})
			checkFactors(t, "phase 1", res.POP.Phases[1].Factors, wantFactors{201, 3610, 3400, []int64{1100, 3400},
				2250.0 / 3400, 1, 3400.0 / 3409})
			// Phase 2: rank 0's 1000 before its Send, then rank 1's 1000
			// after the message: serialised.
			checkFactors(t, "phase 2", res.POP.Phases[2].Factors, wantFactors{3611, 5625, 2000, []int64{1100, 1100},
				1, 1100.0 / 2000, 2000.0 / 2014})

			// What-if, worked out by hand on the graph's weights (the
			// Allreduce's hub edges 9 each, the message and the Recv's own
			// part 14 each, MPI_Init 100, MPI_Finalize 9 and 5).
			want := []struct {
				scenario string
				runtime  int64
				fix      bool
				onPath   int64
				rank     int // the new critical path's top rank
			}{
				{"rank:0=0", 4730, false, 0, 1},              // rank 1 alone: 100+100+1+3300+9+100+1+100+14+1000+5
				{"callsite:0x3000=0.5", 3980, false, 0, 1},   // 1650 before rank 1's Allreduce
				{"transfers=0", 5607, false, 0, 1},           // the calls' own times stay (the Pcontrols' 1 each, the Recv's 14 off the path)
				{"mpi=0", 5628, false, 0, 1},                 // the hub's 9 and the message's 14 stay, the Pcontrols' 1 each go
				{"balance:1", 4530, false, 0, 1},             // rank 1's useful computation × 0.75
				{"callsite:0x3000=0.5", 3980, true, 3300, 1}, // the path's longest stretches, halved
				{"callsite:0x5000=0.5", 5130, true, 1000, 1},
				{"callsite:0x6000=0.5", 5130, true, 1000, 1},
			}
			if len(res.WhatIf) != len(want) {
				t.Fatalf("%d what-ifs, want %d: %+v", len(res.WhatIf), len(want), res.WhatIf)
			}
			for i, w := range want {
				got := res.WhatIf[i]
				if got.Scenario != w.scenario || got.RuntimeNs != w.runtime || got.GainNs != 5630-w.runtime || got.Fix != w.fix || got.OnPathNs != w.onPath {
					t.Errorf("what-if %d: %s: runtime %d, gain %d, fix %v on path %d; want %s: %d, %d, %v %d",
						i, got.Scenario, got.RuntimeNs, got.GainNs, got.Fix, got.OnPathNs, w.scenario, w.runtime, 5630-w.runtime, w.fix, w.onPath)
				}
				if len(got.Ranks) == 0 || got.Ranks[0].Rank != w.rank {
					t.Errorf("what-if %s: the new path's ranks %v, want rank %d first", got.Scenario, got.Ranks, w.rank)
				}
				var sum int64
				for _, r := range got.Ranks {
					sum += r.Ns
				}
				if sum != got.RuntimeNs {
					t.Errorf("what-if %s: the new path's ranks %v sum to %d, not its length %d", got.Scenario, got.Ranks, sum, got.RuntimeNs)
				}
			}
			if b := res.WhatIf[4]; !strings.Contains(b.Description, "0.75") {
				t.Errorf("balance:1: %q does not give the factor 0.75", b.Description)
			}
			if first == nil {
				first = res
			} else if !reflect.DeepEqual(res, first) {
				t.Errorf("P=%d: the result differs from P=1's:\n%+v\n%+v", P, res, first)
			}
		})
	}
}

// TestReplayErrors: scenarios naming what the run does not have are
// rejected alike on every rank.
func TestReplayErrors(t *testing.T) {
	dir := writeTestRun(t)
	for _, tc := range []struct {
		scenario, err string
	}{
		{"balance:2", `--what-if balance:2: rank 2 is not in the run \(ranks 0-1\)`},
		{"rank:7=0.5", `rank 7 is not in the run`},
		{"callsite:nosuch.c:9=0.5", `--what-if callsite:nosuch.c:9=0.5: no call site "nosuch.c:9" in the run`},
		{"callsite:0x4444=0.5", `no call site "0x4444"`},
	} {
		for _, P := range []int{1, 2} {
			_, err := replayAt(t, dir, P, parseAll(t, tc.scenario))
			if err == nil || !regexp.MustCompile(tc.err).MatchString(err.Error()) {
				t.Errorf("P=%d %s: error %v, want %s", P, tc.scenario, err, tc.err)
			}
		}
	}
}

// FuzzParse: a --what-if argument parses to an error naming it, or to a
// scenario that shows as the text given, with a usable factor and rank.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"balance:3", "rank:2=0.25", "callsite:a.c:42=0.5", "callsite:0x4011d6=0", "transfers=2", "rank:1=-2", "transfers=NaN", "faster", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--what-if") {
				t.Fatalf("Parse(%q): %v: the error does not say which flag", s, err)
			}
			return
		}
		if x.Text != s || x.Rank < 0 || x.Factor < 0 || math.IsInf(x.Factor, 0) || math.IsNaN(x.Factor) {
			t.Fatalf("Parse(%q) = %+v", s, x)
		}
	})
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scenario
		err  string
	}{
		{"balance:3", Scenario{Text: "balance:3", Kind: Balance, Rank: 3, Factor: 1}, ""},
		{"rank:2=0.25", Scenario{Text: "rank:2=0.25", Kind: RankScale, Rank: 2, Factor: 0.25}, ""},
		{"callsite:a.c:42=0.5", Scenario{Text: "callsite:a.c:42=0.5", Kind: Callsite, Site: "a.c:42", Factor: 0.5}, ""},
		{"callsite:0x4011d6=0", Scenario{Text: "callsite:0x4011d6=0", Kind: Callsite, Site: "0x4011d6", Factor: 0}, ""},
		{"transfers=0", Scenario{Text: "transfers=0", Kind: Transfers}, ""},
		{"transfers=2", Scenario{Text: "transfers=2", Kind: Transfers, Factor: 2}, ""},
		{"balance:x", Scenario{}, "RANK is not a rank number"},
		{"balance:-1", Scenario{}, "RANK is not a rank number"},
		{"rank:1", Scenario{}, "no =FACTOR"},
		{"rank:1=-2", Scenario{}, "FACTOR is not a non-negative number"},
		{"callsite:=0.5", Scenario{}, "no SITE=FACTOR"},
		{"callsite:a.c:4", Scenario{}, "no SITE=FACTOR"},
		{"transfers=fast", Scenario{}, "FACTOR is not a non-negative number"},
		{"transfers=NaN", Scenario{}, "FACTOR is not a non-negative number"},
		{"faster", Scenario{}, "unknown scenario"},
	} {
		got, err := Parse(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Parse(%q): error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestMatchSite(t *testing.T) {
	for _, tc := range []struct {
		x, name, function, hex string
		want                   bool
	}{
		{"halo.c:83", "halo.c:83", "main", "0x1234", true},
		{"src/halo.c:83", "/home/u/src/halo.c:83", "", "0x1234", true},
		{"alo.c:83", "/home/u/src/halo.c:83", "", "0x1234", false},
		{"0x1234", "halo.c:83", "", "0x1234", true},
		{"0x01234", "halo.c:83", "", "0x1234", true},
		{"0x1235", "halo.c:83", "", "0x1234", false},
		{"main", "halo.c:83", "main", "0x1234", true},
		{"mai", "halo.c:83", "main", "0x1234", false},
		{"MPI_Allreduce", "PMPI_Allreduce+0x12", "", "0x12", false},
		{"solve", "solve+0x1a", "", "0x99", true},
		{"solv", "solve+0x1a", "", "0x99", false},
	} {
		if got := matchSite(tc.x, tc.name, tc.function, tc.hex); got != tc.want {
			t.Errorf("matchSite(%q, %q, %q, %q) = %v, want %v", tc.x, tc.name, tc.function, tc.hex, got, tc.want)
		}
	}
}

// TestReplayWindow checks the factors of --from/--to windows against the
// run above, by hand.
func TestReplayWindow(t *testing.T) {
	dir := writeTestRun(t)
	for _, tc := range []struct {
		name string
		win  graph.Window
		want wantFactors
	}{
		// Phase 1's window: phase 1's factors.
		{"phase 1", graph.Window{From: 201, To: 3610}, wantFactors{201, 3610, 3400, []int64{1100, 3400}, 2250.0 / 3400, 1, 3400.0 / 3409}},
		// Across stretches: rank 0 201 of its 1000 before the Allreduce,
		// 100, then 389 of its 1000 before the Send; rank 1 2501 of its
		// 3300, 100 and 100. The ideal run: rank 1's 2501 into the
		// Allreduce, 100 to Pcontrol(2), rank 0's 389 to the window's end.
		{"across", graph.Window{From: 1000, To: 4000}, wantFactors{1000, 4000, 2990, []int64{690, 2701}, 1695.5 / 2701, 2701.0 / 2990, 2990.0 / 3000}},
		// Inside one stretch of each rank: all computation.
		{"inside", graph.Window{From: 400, To: 900}, wantFactors{400, 900, 500, []int64{500, 500}, 1, 1, 1}},
		// Before MPI_Init ends: nothing of the POP window.
		{"before", graph.Window{From: 0, To: 50}, wantFactors{0, 0, 0, []int64{0, 0}, 1, 1, 1}},
		// Past the POP window's end, clipped to it.
		{"end", graph.Window{From: 5000, To: 5630}, wantFactors{5000, 5625, 625, []int64{0, 625}, 312.5 / 625, 1, 1}},
	} {
		for _, P := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/P=%d", tc.name, P), func(t *testing.T) {
				win := tc.win
				res, err := replayWith(t, dir, P, nil, true, &win)
				if err != nil {
					t.Fatal(err)
				}
				if res.POP.Window == nil {
					t.Fatal("no window factors")
				}
				checkFactors(t, "window", *res.POP.Window, tc.want)
			})
		}
	}
}

// TestThreadedPOP: a rank of two threads computing at once (rank 0: 1100
// and 1000 ns of useful computation, rank 1 110) has POP factors within
// [0, 1], its threads the units of work as in POP's hybrid model: the
// ranks' sum (2100) would give communication 1.89 in a window of 1112.
// Worked by hand: units 1100, 1000, 110 (max 1100, mean 736.67); the
// ideal run is thread 0's 1000 and 100 (rank 1 waits for its sends), 1100.
//
//	rank 0 thread 0: Init [0,100]  1000  Send(5)→1 [1100,1110]  100  Finalize [1210,1220]
//	rank 0 thread 1:      Send(7)→1 [100,105]  1000  Send(8)→1 [1105,1110]
//	rank 1:          Init [0,100]  Recv(7) [100,106]  10  Recv(8) [116,1111]  Recv(5) [1111,1112]  100  Finalize [1212,1220]
func TestThreadedPOP(t *testing.T) {
	rec := func(op trace.Op, thread uint16, start, end int64, peer, tag int32) trace.Record {
		r := trace.Record{Op: op, Thread: thread, Start: start, End: end, CallSite: 0x100, Comm: trace.CommNone,
			Peer: trace.PeerNone, Root: trace.PeerNone}
		if op == trace.OpSend || op == trace.OpRecv {
			r.Comm, r.Peer, r.Tag, r.Bytes = trace.CommWorld, peer, tag, 8
		}
		return r
	}
	dir := writeRecs(t, [][]trace.Record{
		{rec(trace.OpInitThread, 0, 0, 100, 0, 0), rec(trace.OpSend, 1, 100, 105, 1, 7), rec(trace.OpSend, 0, 1100, 1110, 1, 5),
			rec(trace.OpSend, 1, 1105, 1110, 1, 8), rec(trace.OpFinalize, 0, 1210, 1220, 0, 0)},
		{rec(trace.OpInit, 0, 0, 100, 0, 0), rec(trace.OpRecv, 0, 100, 106, 0, 7), rec(trace.OpRecv, 0, 116, 1111, 0, 8),
			rec(trace.OpRecv, 0, 1111, 1112, 0, 5), rec(trace.OpFinalize, 0, 1212, 1220, 0, 0)},
	})
	for _, P := range []int{1, 2} {
		res, err := replayAt(t, dir, P, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkFactors(t, fmt.Sprintf("P=%d", P), res.POP.Factors, wantFactors{100, 1212, 1100, []int64{2100, 110},
			(2210.0 / 3) / 1100, 1, 1100.0 / 1112})
		if f := res.POP.Factors; f.MaxUsefulNs != 1100 {
			t.Errorf("P=%d: max useful %d, want thread 0's 1100", P, f.MaxUsefulNs)
		}
	}
}
