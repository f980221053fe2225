package graph_test

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// expected counts what the logs of a generated run say the analysis must
// find: per source, destination and tag, as many messages as the fewer of
// sends and receives (bench/gen makes them match but where a rank stopped
// before its partner), and every collective call is one member of an
// instance, MPI_Init too (the instance of sequence number 0 on
// MPI_COMM_WORLD).
func expected(t testing.TB, dir string, ranks int) (messages, unmatched, instances int) {
	type key struct{ src, dst, tag int32 }
	sends, recvs := map[key]int{}, map[key]int{}
	seqs := map[uint32]bool{}
	for r := 0; r < ranks; r++ {
		l, err := trace.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
		if err != nil {
			t.Fatal(err)
		}
		me := int32(r)
		for _, rec := range l.Records {
			switch rec.Op.Class() {
			case trace.ClassSend, trace.ClassIsend:
				sends[key{me, rec.Peer, rec.Tag}]++
			case trace.ClassRecv, trace.ClassIrecv:
				recvs[key{rec.Peer, me, rec.Tag}]++
			case trace.ClassCollective:
				seqs[rec.Seq] = true
			}
			if rec.Op.IsWorldBarrier() {
				seqs[0] = true
			}
		}
	}
	for k, n := range sends {
		messages += min(n, recvs[k])
		unmatched += max(n, recvs[k]) - min(n, recvs[k])
	}
	for k, n := range recvs {
		if sends[k] == 0 {
			unmatched += n
		}
	}
	return messages, unmatched, len(seqs)
}

// programColls is g's collective instances but MPI_Init's, in order.
func programColls(g *graph.PAG) []graph.Collective {
	return slices.DeleteFunc(slices.Clone(g.Colls), func(c graph.Collective) bool { return c.Op.IsWorldBarrier() })
}

// TestGenerated analyses generated runs of every pattern, with each rank's
// timeline on its own and synchronised: all messages (the generator
// matches every one) and collective instances are found, the graph has the
// shape and weights of the package comment, the critical path is as long
// as the run and is the chain of last-arriving causes; a synchronised run
// needs no clock correction, an independent one does.
func TestGenerated(t *testing.T) {
	for _, p := range gen.Patterns {
		for _, procs := range []int{1, 4} {
			for _, synced := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/procs=%d/synchronised=%v", p, procs, synced), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					testGenerated(t, gen.Spec{Dir: t.TempDir(), Ranks: 5, CallsPerRank: 3000, Pattern: p, Seed: 3, Synchronised: synced})
				})
			}
		}
	}
}

func testGenerated(t *testing.T, spec gen.Spec) {
	dir, ranks := spec.Dir, spec.Ranks
	if err := gen.Write(spec); err != nil {
		t.Fatal(err)
	}
	g := mustBuild(t, dir)
	msgs, unmatched, colls := expected(t, dir, ranks)
	if g.Messages != msgs || unmatched != 0 || g.Unmatched != 0 {
		t.Errorf("%d messages, %d unmatched; want %d, 0 (the logs have %d without a partner)", g.Messages, g.Unmatched, msgs, unmatched)
	}
	if spec.Synchronised != (g.ClockCorrections == 0) {
		t.Errorf("synchronised %v, but %d dependencies ran backwards", spec.Synchronised, g.ClockCorrections)
	}
	if len(g.Colls) != colls {
		t.Errorf("%d collective instances, want %d", len(g.Colls), colls)
	}
	for _, c := range g.Colls {
		if int(c.N) != ranks {
			t.Fatalf("collective %v seq %d has %d members, want %d", c.Op, c.Seq, c.N, ranks)
		}
	}
	checkEdges(t, g)
	path := mustPath(t, g)
	if path.Length != g.T1-g.T0 {
		t.Errorf("critical path %d ns, run time %d ns", path.Length, g.T1-g.T0)
	}
	checkLastArriving(t, g, path)
}

// graphOf is the whole graph of a one-process build, for cpath's
// sequential solver.
func graphOf(g *graph.PAG) *cpath.Graph {
	return &cpath.Graph{N: g.NumVertices(), InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight}
}

// mustPath is the critical path of a one-process build by the sequential
// reference.
func mustPath(t *testing.T, g *graph.PAG) cpath.Path {
	t.Helper()
	res, err := cpath.DAG(graphOf(g), g.Target)
	if err != nil {
		t.Fatal(err)
	}
	return res.Path
}

// checkEdges checks the PAG's shape and weights (package comment): every
// S(c) has one program edge from the previous call of its thread, or a
// launch edge from the start vertex; every E(c) its call edge unless a
// hub's replaces it; every weight lies between 0 and the time between its
// ends, and every vertex but the start (and the end of a poll, which
// waits) has an edge whose weight is that time exactly (its last-arriving
// cause), so that the longest distance to every vertex is its time since
// the run's start.
func checkEdges(t *testing.T, g *graph.PAG) {
	t.Helper()
	n := g.NumVertices()
	if len(g.InStart) != n+1 || int(g.InStart[n]) != len(g.InSrc) {
		t.Fatalf("CSR of %d vertices has %d row starts and %d edges", n, len(g.InStart), len(g.InSrc))
	}
	last := map[[2]int]int32{}
	for c := int32(0); c < int32(g.NumCalls()); c++ {
		key := [2]int{g.Rank(c), int(g.Thread[c])}
		p, ok := last[key]
		if !ok {
			p = -1
		}
		last[key] = c
		s := g.S(c)
		progs := 0
		for e := g.InStart[s]; e < g.InStart[s+1]; e++ {
			switch g.InKind[e] {
			case graph.EdgeProgram:
				progs++
				if p < 0 || g.InSrc[e] != g.E(p) {
					t.Fatalf("program edge into S(%d) from %d, want E(%d)", c, g.InSrc[e], p)
				}
			case graph.EdgeLaunch:
				progs++
				if p >= 0 || g.InSrc[e] != g.StartVertex {
					t.Fatalf("launch edge into S(%d), a call after %d", c, p)
				}
			}
		}
		if progs != 1 {
			t.Fatalf("S(%d) has %d program or launch edges", c, progs)
		}
	}
	edges := 0
	for v := int32(0); v < int32(n); v++ {
		tight := v == g.StartVertex
		for e := g.InStart[v]; e < g.InStart[v+1]; e++ {
			edges++
			u, w := g.InSrc[e], g.InWeight.At(e)
			d := g.Time(v) - g.Time(u)
			if w < 0 || w > d {
				t.Fatalf("%v edge %d -> %d: weight %d, time between %d", g.InKind[e], u, v, w, d)
			}
			tight = tight || w == d
		}
		if c, kind := g.Vertex(v); !tight && !(kind == graph.VertexEnd && g.Op[c].IsPoll()) {
			// (A poll that completed nothing is waiting: no edge carries it.)
			t.Fatalf("vertex %d: no edge into it carries the time since its cause", v)
		}
	}
	if g.Messages > 0 && edges <= n {
		t.Fatalf("%d edges for %d vertices in a run with messages", edges, n)
	}
}

// checkLastArriving compares the critical path with the oracle: the walk
// back from the last event through each completion's last-arriving cause
// (the Waits), each call's start, the previous call of its thread, and
// the run's start. Where they part, the two predecessors must be equally
// late (a tie the path breaks by vertex id).
func checkLastArriving(t *testing.T, g *graph.PAG, path cpath.Path) {
	t.Helper()
	cause := map[int32]int32{}
	for _, w := range g.Waits {
		cause[w.Call] = w.Cause
	}
	prev := map[int32]int32{}
	last := map[[2]int]int32{}
	for c := int32(0); c < int32(g.NumCalls()); c++ {
		key := [2]int{g.Rank(c), int(g.Thread[c])}
		if p, ok := last[key]; ok {
			prev[c] = p
		} else {
			prev[c] = -1
		}
		last[key] = c
	}
	var vs []int32 // the path without hubs, from the target back
	for i := len(path.Vertices) - 1; i >= 0; i-- {
		if _, kind := g.Vertex(path.Vertices[i]); kind != graph.VertexHub {
			vs = append(vs, path.Vertices[i])
		}
	}
	if vs[0] != g.Target || vs[len(vs)-1] != g.StartVertex {
		t.Fatalf("path runs from %d to %d, want the start %d to the target %d", vs[len(vs)-1], vs[0], g.StartVertex, g.Target)
	}
	for i := 0; i+1 < len(vs); i++ {
		v := vs[i]
		c, kind := g.Vertex(v)
		var want int32
		switch kind {
		case graph.VertexEnd:
			want = g.S(c)
			if x, ok := cause[c]; ok {
				want = g.S(x)
			}
		case graph.VertexStart:
			want = g.StartVertex
			if p := prev[c]; p >= 0 {
				want = g.E(p)
			}
		}
		if got := vs[i+1]; got != want && g.Time(got) != g.Time(want) {
			t.Fatalf("path reaches %d from %d (time %d); its last-arriving cause is %d (time %d)", v, got, g.Time(got), want, g.Time(want))
		}
	}
}

// TestChunking: how the records were cut into chunks and frames, down to
// a call whose sub-records are in the next chunk, does not change the PAG.
func TestChunking(t *testing.T) {
	dir := t.TempDir()
	const ranks = 4
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: 2000, Pattern: gen.Halo, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	cut := t.TempDir()
	for r := 0; r < ranks; r++ {
		name := fmt.Sprintf("rank-%06d.cplog", r)
		l, err := trace.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		w, err := trace.NewWriter(&b, &l.Header)
		if err != nil {
			t.Fatal(err)
		}
		for i, n := 0, 1; i < len(l.Records); i, n = i+n, n%7+1 {
			if err := w.WriteRecords(l.Records[i:min(i+n, len(l.Records))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(l.Trailer); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cut, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(dir string) *graph.PAG {
		g := mustBuild(t, dir)
		return g
	}
	a, b := build(dir), build(cut)
	if !slices.Equal(a.Start, b.Start) || !slices.Equal(a.End, b.End) || !slices.Equal(a.InSrc, b.InSrc) ||
		!slices.Equal(a.InWeight.Int64s(), b.InWeight.Int64s()) || !slices.Equal(a.Waits, b.Waits) || a.Messages != b.Messages {
		t.Fatal("the PAG depends on how the logs were chunked")
	}
}

// TestDamage: damage past the header is found while streaming and is one
// error naming the file.
func TestDamage(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 3, CallsPerRank: 40000, Pattern: gen.Halo, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rank-000001.cplog")
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		kind error
	}{
		{"corrupt", func() []byte { b := slices.Clone(good); b[len(b)/2] ^= 0xff; return b }(), trace.ErrCorrupt},
		{"cut", good[:len(good)*2/3], trace.ErrTruncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			run, err := graph.Load(dir)
			if err != nil {
				t.Fatal(err) // the header is intact
			}
			_, err = graph.Build(&mpix.Single{}, run)
			var te *trace.Error
			if !errors.As(err, &te) || te.File != p || !errors.Is(err, tc.kind) {
				t.Fatalf("Build: %v, want a %v error for %s", err, tc.kind, p)
			}
		})
	}

	// A trailer whose count of calls is wrong, under an intact CHECK (a
	// logger's error): the calls the log holds are placed again by the
	// count read, with a note, and the graph is the one of the good log.
	// The writer's trailer has a CHECK of its own: the chunk (tag, kind,
	// length, 32 bytes), then the CHECK's tag and CRC.
	if err := os.WriteFile(p, good, 0o644); err != nil {
		t.Fatal(err)
	}
	goodRun, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := buildParts(t, goodRun, 1, buildSplits)[0]
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, delta := range []int64{+1, -1, -1000} {
		bad := slices.Clone(good)
		chunk := bad[len(bad)-40 : len(bad)-5]
		if binary.LittleEndian.Uint32(bad[len(bad)-4:]) != crc32.Checksum(chunk, castagnoli) {
			t.Fatal("the log does not end with its trailer under a CHECK of its own")
		}
		calls := binary.LittleEndian.Uint64(chunk[3+24:])
		binary.LittleEndian.PutUint64(chunk[3+24:], uint64(int64(calls)+delta))
		binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(chunk, castagnoli))
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, P := range []int{1, 2, 3} {
			run, err := graph.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			parts := buildParts(t, run, P, buildSplits)
			note := fmt.Sprintf("rank-000001.cplog: its trailer counts %d calls, but the log holds %d; read again with that count", int64(calls)+delta, calls)
			if !slices.Contains(parts[0].Notes, note) {
				t.Fatalf("count %+d, P = %d: notes %q, want %q", delta, P, parts[0].Notes, note)
			}
			comparePartsTo(t, fmt.Sprintf("count %+d, P = %d", delta, P), want, parts)
		}
		// cpath info lists it as a problem of the log set.
		set, err := graph.ReadLogSet(dir)
		if err != nil {
			t.Fatal(err)
		}
		problem := fmt.Sprintf("rank 1 (rank-000001.cplog): the trailer counts %d calls, the log holds %d", int64(calls)+delta, calls)
		if !slices.Contains(set.Problems, problem) {
			t.Fatalf("count %+d: problems %q, want %q", delta, set.Problems, problem)
		}
	}
}

// BenchmarkBuild builds the PAG of a generated halo run
// (CPATH_BENCH_RANKS × CPATH_BENCH_CALLS, default 16 × 100000) and reports
// calls per second.
func BenchmarkBuild(b *testing.B) {
	ranks, calls := envInt("CPATH_BENCH_RANKS", 16), envInt("CPATH_BENCH_CALLS", 100_000)
	dir := b.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: calls, Pattern: gen.Halo, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		run, err := graph.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		g, err := graph.Build(&mpix.Single{}, run)
		if err != nil {
			b.Fatal(err)
		}
		n = g.NumCalls()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mcalls/s")
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestThreads: on a rank with several threads each call follows the
// previous call of its own thread.
func TestThreads(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 3, CallsPerRank: 3000, Pattern: gen.Halo, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "rank-000001.cplog")
	l, err := trace.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range l.Records {
		if r := &l.Records[i]; !r.Op.IsSub() {
			r.Thread = uint16(n % 3)
			n++
		}
	}
	var b bytes.Buffer
	w, err := trace.NewWriter(&b, &l.Header)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecords(l.Records); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(l.Trailer); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g := mustBuild(t, dir)
	checkEdges(t, g)
	c := g.RankStart[1] + 5
	for e := g.InStart[g.S(c)]; e < g.InStart[g.S(c)+1]; e++ {
		if g.InKind[e] == graph.EdgeProgram && g.InSrc[e] != g.E(c-3) {
			t.Fatalf("S(%d) follows %d, want E(%d)", c, g.InSrc[e], c-3)
		}
	}
	checkLastArriving(t, g, mustPath(t, g))
}

// mustBuild loads and builds the run in dir in one process, failing the
// test on error.
func mustBuild(t *testing.T, dir string) *graph.PAG {
	t.Helper()
	_, g := loadBuild(t, dir)
	return g
}

// loadRecs writes recs as the logs of a run (recs[r] rank r's) and loads
// them.
func loadRecs(t *testing.T, recs [][]trace.Record) *graph.Run {
	t.Helper()
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// loadBuild is mustBuild that returns the loaded run too.
func loadBuild(t *testing.T, dir string) (*graph.Run, *graph.PAG) {
	t.Helper()
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := buildSplits(&mpix.Single{}, run)
	if err != nil {
		t.Fatal(err)
	}
	return run, g
}

// buildParts builds the P parts of run's PAG in an in-process job of P
// ranks, each with build (graph.Build, or buildSplits); any rank's error
// fails the test.
func buildParts(t *testing.T, run *graph.Run, P int, build func(mpix.Comm, *graph.Run) (*graph.PAG, error)) []*graph.PAG {
	t.Helper()
	parts := make([]*graph.PAG, P)
	errs := make([]error, P)
	mpixtest.Run(P, func(c mpix.Comm) { parts[c.Rank()], errs[c.Rank()] = build(c, run) })
	for q, err := range errs {
		if err != nil {
			t.Fatalf("P=%d part %d: %v", P, q, err)
		}
	}
	return parts
}

// buildSplits builds c's part of the PAG with its splits labelled, for
// the tests that compare every part of it.
func buildSplits(c mpix.Comm, run *graph.Run) (*graph.PAG, error) {
	g, err := graph.Build(c, run)
	if err != nil {
		return nil, err
	}
	return g, g.Splits(c)
}

// TestPollingIsWaiting: a rank that posts MPI_Irecv and polls with
// MPI_Test (one coalesced record of 5000 unproductive polls) until the
// message arrives waits from the first poll: the Late Sender wait covers
// the polls, and the critical path runs through the sender, not through
// the polls as MPI time.
// call is a record of a call without communicator or peer, for logs
// written by hand.
func call(op trace.Op, start, end int64) trace.Record {
	none := trace.PeerNone
	return trace.Record{Op: op, Start: start, End: end, Comm: trace.CommNone, Peer: none, Root: none, CallSite: 0x1000}
}

// barrier is the record of the run's first MPI_Barrier on MPI_COMM_WORLD.
func barrier(start, end int64) trace.Record {
	r := call(trace.OpBarrier, start, end)
	r.Comm, r.Seq = trace.CommWorld, 1
	return r
}

// secondBarrier is the record of the run's second MPI_Barrier on
// MPI_COMM_WORLD, after a collective with sequence number 1.
func secondBarrier(start, end int64) trace.Record {
	r := barrier(start, end)
	r.Seq = 2
	return r
}

// pathAsLongAsRun finds g's critical path and fails unless it is as long
// as the run.
func pathAsLongAsRun(t *testing.T, g *graph.PAG) cpath.Path {
	t.Helper()
	path := mustPath(t, g)
	if path.Length != g.T1-g.T0 {
		t.Fatalf("path %d ns, run %d ns", path.Length, g.T1-g.T0)
	}
	return path
}

// msg is the record of a point-to-point call of 8 bytes with peer on
// MPI_COMM_WORLD.
func msg(op trace.Op, start, end int64, peer int32) trace.Record {
	r := call(op, start, end)
	r.Comm, r.Peer, r.Bytes = trace.CommWorld, peer, 8
	return r
}

// sendOf maps each matched message's receive completion to the call that
// posted its send.
func sendOf(g *graph.PAG) map[int32]int32 {
	got := map[int32]int32{}
	for i := range g.MsgRecv {
		got[g.MsgRecv[i]] = g.MsgSend[i]
	}
	return got
}

// waitOf is call c's wait, nil if it did not wait.
func waitOf(g *graph.PAG, c int32) *graph.Wait {
	for i := range g.Waits {
		if g.Waits[i].Call == c {
			return &g.Waits[i]
		}
	}
	return nil
}

func TestPollingIsWaiting(t *testing.T) {
	send := call(trace.OpSend, 1000, 1010)
	send.Comm, send.Peer, send.Bytes = trace.CommWorld, 1, 8
	irecv := call(trace.OpIrecv, 100, 105)
	irecv.Comm, irecv.Peer, irecv.Flags, irecv.Req = trace.CommWorld, 0, trace.FlagNewReq, 1
	polls := call(trace.OpTest, 200, 990)
	polls.Root = 5000 // coalesced: 5000 calls that completed nothing
	test := call(trace.OpTest, 995, 1020)
	done := trace.Record{Op: trace.OpReqDone, Req: 1, Peer: 0, Bytes: 8}
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), send, barrier(2000, 3010)},
		{call(trace.OpInit, 0, 10), irecv, polls, test, done, barrier(3000, 3010)},
	}
	if !recs[1][2].Unproductive() || recs[1][3].Unproductive() {
		t.Fatal("the test's records are not what the logger writes for polls")
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	g := mustBuild(t, dir)
	checkEdges(t, g)
	if g.CoalescedPolls != 4999 {
		t.Errorf("CoalescedPolls = %d, want 4999: the record of 5000 polls is one call of the graph", g.CoalescedPolls)
	}
	testCall := g.RankStart[1] + 3
	w := waitOf(g, testCall)
	if w == nil || w.Kind != graph.LateSender || w.Ns != 800 {
		t.Fatalf("the completing MPI_Test's wait: %+v, want Late Sender of 800 ns (from the first poll at 200 to the send at 1000)", w)
	}
	path := pathAsLongAsRun(t, g)
	checkLastArriving(t, g, path)
	onPath := map[int32]bool{}
	for _, v := range path.Vertices {
		onPath[v] = true
	}
	pollCall := g.RankStart[1] + 2
	if onPath[g.E(pollCall)] || !onPath[g.S(g.RankStart[0]+1)] || !onPath[g.E(testCall)] {
		t.Fatalf("the path %v runs through the polls, or not from the send to the completing test", path.Vertices)
	}
}

// TestPollRunStretches: a run of unproductive polls is waiting only for
// the call that completes what it polled for, and never hides the cause
// of another rank's wait (both found on HPCC, whose path fell short of its
// run by 0.2 ms).
//
//   - A blocking MPI_Ssend after MPI_Iprobe polls waits for its receiver
//     from its own start, not from the probes' (they polled for something
//     it does not complete): its Late Receiver wait is 1300 ns, and the
//     probes' time is theirs.
//   - A receiver that probed for the message since before its MPI_Ssend
//     was posted, then received it with MPI_Recv, was not late: the
//     sender gets no Late Receiver wait. Its dependency's cause is the
//     first probe, where the receiver entered MPI: a cause at the MPI_Recv,
//     inside the stretch the receiver itself waited in, lost that stretch
//     from every path through it, and the path fell short of the run.
func TestPollRunStretches(t *testing.T) {
	probes := func(start, end int64, peer int32) trace.Record {
		r := call(trace.OpIprobe, start, end)
		r.Comm, r.Peer, r.Root = trace.CommWorld, peer, 50 // coalesced: 50 calls that found nothing
		return r
	}
	end := func(start, end int64) trace.Record { r := barrier(start, end); return r }
	t.Run("send after probes", func(t *testing.T) {
		recs := [][]trace.Record{
			{call(trace.OpInit, 0, 10), msg(trace.OpRecv, 1900, 2010, 1), end(3000, 3010)},
			{call(trace.OpInit, 0, 10), probes(100, 500, 0), msg(trace.OpSsend, 600, 2000, 0), end(3000, 3010)},
		}
		dir := t.TempDir()
		writeLogs(t, dir, recs)
		g := mustBuild(t, dir)
		checkEdges(t, g)
		ssend := g.RankStart[1] + 2
		if w := waitOf(g, ssend); w == nil || w.Kind != graph.LateReceiver || w.From != g.Start[ssend] || w.Ns != 1300 {
			t.Fatalf("the MPI_Ssend's wait: %+v, want Late Receiver from its start (%d), 1300 ns", w, g.Start[ssend])
		}
		pr := g.RankStart[1] + 1
		for e := g.InStart[g.E(pr)]; e < g.InStart[g.E(pr)+1]; e++ {
			if g.InSrc[e] == g.S(pr) && g.InWeight.At(e) != 400 {
				t.Fatalf("the probes' call edge weighs %d, want their 400 ns", g.InWeight.At(e))
			}
		}
		pathAsLongAsRun(t, g)
	})
	t.Run("receiver probing before the send", func(t *testing.T) {
		recs := [][]trace.Record{
			{call(trace.OpInit, 0, 10), probes(100, 900, 1), msg(trace.OpRecv, 1000, 1200, 1), end(2000, 2510)},
			{call(trace.OpInit, 0, 10), msg(trace.OpSsend, 500, 1300, 0), end(2500, 2510)},
		}
		dir := t.TempDir()
		writeLogs(t, dir, recs)
		g := mustBuild(t, dir)
		checkEdges(t, g)
		recv, ssend := g.RankStart[0]+2, g.RankStart[1]+1
		if w := waitOf(g, recv); w == nil || w.Kind != graph.LateSender || w.Ns != 400 {
			t.Fatalf("the MPI_Recv's wait: %+v, want Late Sender of 400 ns (from the first probe at 100 to the send at 500)", w)
		}
		if w := waitOf(g, ssend); w != nil {
			t.Fatalf("the MPI_Ssend waited: %+v; its receiver was probing before it was posted", w)
		}
		path := pathAsLongAsRun(t, g)
		checkLastArriving(t, g, path)
	})
}

// TestPolledCollective: a member that polls its MPI_Ibarrier with
// MPI_Test waits from the first poll, and the last member's arrival
// during the polls starts the edge to the completing test: the path runs
// through the late member and is as long as the run. With the edge from
// the completing test's own start, the polls between the arrival and it
// (waiting up to the arrival, weightless) were on no path, and the path
// fell short of the run by 380 ns.
func TestPolledCollective(t *testing.T) {
	ibarrier := func(start, end int64) trace.Record {
		r := call(trace.OpIbarrier, start, end)
		r.Comm, r.Seq, r.Req, r.Flags = trace.CommWorld, 1, 1, trace.FlagNewReq
		return r
	}
	polls := call(trace.OpTest, 120, 900)
	polls.Root = 500 // coalesced: 500 calls that completed nothing
	done := trace.Record{Op: trace.OpReqDone, Req: 1, Peer: trace.PeerNone}
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), ibarrier(100, 110), polls, call(trace.OpTest, 900, 950), done, secondBarrier(2000, 2010)},
		{call(trace.OpInit, 0, 10), ibarrier(500, 510), call(trace.OpWait, 510, 600), done, secondBarrier(1500, 2010)},
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	g := mustBuild(t, dir)
	checkEdges(t, g)
	test := g.RankStart[0] + 3
	if w := waitOf(g, test); w == nil || w.From != 120 || w.Ns != 380 {
		t.Fatalf("the completing MPI_Test's wait: %+v, want 380 ns from the first poll at 120 to the last arrival at 500", w)
	}
	path := pathAsLongAsRun(t, g)
	checkLastArriving(t, g, path)
}

// TestZeroByteCollective: a collective that moves data orders its members
// only when it moves some. HPCC broadcasts 0 bytes from a root that came
// 7 ms later than the members, who had returned at once (Open MPI and
// MPICH return from a 0-count collective without communicating): the
// Late Broadcast dependency gave the members 7 ms waits they never had
// and moved their clocks 7 ms later. The same broadcast with 8 bytes
// still makes the member wait for its root.
func TestZeroByteCollective(t *testing.T) {
	bcast := func(start, end int64, root int32, bytes uint64) trace.Record {
		r := call(trace.OpBcast, start, end)
		r.Comm, r.Seq, r.Root, r.Bytes = trace.CommWorld, 1, root, bytes
		return r
	}
	for _, tc := range []struct {
		name   string
		member trace.Record
		bytes  uint64
		wait   int64 // the member's Late Broadcast
		noData bool
		shift  int64 // the clock correction's
	}{
		{"0 bytes", bcast(100, 110, 0, 0), 0, 0, true, 0},
		{"8 bytes", bcast(100, 5020, 0, 8), 8, 4900, false, 0},
		// Ended before its root started: the clocks are corrected, and
		// the report says by how much.
		{"8 bytes, clock error", bcast(100, 110, 0, 8), 8, 4900, false, 4890},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := [][]trace.Record{
				{call(trace.OpInit, 0, 10), bcast(5000, 5010, 0, tc.bytes), secondBarrier(6000, 6010)},
				{call(trace.OpInit, 0, 10), tc.member, secondBarrier(6000, 6010)},
			}
			dir := t.TempDir()
			writeLogs(t, dir, recs)
			g := mustBuild(t, dir)
			checkEdges(t, g)
			if want := min(tc.shift, 1); g.ClockCorrections != want || g.ClockShiftMax != tc.shift {
				t.Fatalf("%d clock corrections (by up to %d ns), want %d (by %d ns)", g.ClockCorrections, g.ClockShiftMax, want, tc.shift)
			}
			w := waitOf(g, g.RankStart[1]+1)
			switch {
			case tc.wait == 0 && w != nil:
				t.Fatalf("the member's MPI_Bcast waited: %+v", w)
			case tc.wait > 0 && (w == nil || w.Kind != graph.LateBroadcast || w.Ns != tc.wait):
				t.Fatalf("the member's MPI_Bcast's wait: %+v, want Late Broadcast of %d ns", w, tc.wait)
			}
			if cs := programColls(g); len(cs) == 0 || cs[0].Op != trace.OpBcast || cs[0].NoData != tc.noData {
				t.Fatalf("instances %+v: want the MPI_Bcast first, NoData %v", g.Colls, tc.noData)
			}
			noted := slices.ContainsFunc(g.Notes, func(n string) bool { return strings.HasPrefix(n, "1 collective instances moved no data") })
			if noted != tc.noData {
				t.Fatalf("notes %q: want the 0-byte instance noted: %v", g.Notes, tc.noData)
			}
			pathAsLongAsRun(t, g)
		})
	}
}

// TestRankTwiceInCollective: two threads of rank 0 log an MPI_Allreduce
// with one sequence number on one communicator (collectives from several
// threads at once, which MPI forbids). Such an instance had three members
// for two ranks, and rank 0's calls waited for each other; in the run
// FuzzBuild found (its seed e3efb0a54030db3f) the critical path fell
// short of the run. It is left out, with a note, and the path spans the
// run.
func TestRankTwiceInCollective(t *testing.T) {
	allreduce := func(start, end int64, thread uint16) trace.Record {
		r := call(trace.OpAllreduce, start, end)
		r.Comm, r.Seq, r.Thread, r.Bytes = trace.CommWorld, 1, thread, 8
		return r
	}
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), allreduce(100, 500, 0), allreduce(200, 300, 1), secondBarrier(6000, 6010)},
		{call(trace.OpInit, 0, 10), allreduce(400, 510, 0), secondBarrier(6000, 6010)},
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	g := mustBuild(t, dir)
	checkEdges(t, g)
	pathAsLongAsRun(t, g)
	if slices.ContainsFunc(g.Colls, func(c graph.Collective) bool { return c.Op == trace.OpAllreduce }) {
		t.Fatalf("instances %+v: want the MPI_Allreduce left out", g.Colls)
	}
	if !slices.ContainsFunc(g.Notes, func(n string) bool { return strings.HasPrefix(n, "1 collective instances have a rank take part twice") }) {
		t.Fatalf("notes %q: want the repeated rank noted", g.Notes)
	}
}

// TestImprobeRun: a run of MPI_Improbe calls that found nothing matched no
// message. As one, its record (Peer: the source asked for) took the place
// of the message the productive MPI_Improbe after it took, and every later
// message of the key went to the receive before its own.
func TestImprobeRun(t *testing.T) {
	polls := msg(trace.OpImprobe, 100, 900, 0)
	polls.Bytes = 0 // found nothing
	polls.Root = 40 // coalesced: 40 calls that found nothing
	probe := msg(trace.OpImprobe, 1000, 1010, 0)
	probe.Seq = 1 // the message handle
	mrecv := msg(trace.OpMrecv, 1020, 1030, 0)
	mrecv.Seq = 1
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), msg(trace.OpSend, 950, 960, 1), msg(trace.OpSend, 2000, 2010, 1), barrier(3000, 3010)},
		{call(trace.OpInit, 0, 10), polls, probe, mrecv, msg(trace.OpRecv, 1900, 2100, 0), barrier(3000, 3010)},
	}
	if !recs[1][1].Unproductive() || recs[1][2].Unproductive() {
		t.Fatal("the test's records are not what the logger writes for probes")
	}
	dir := t.TempDir()
	writeLogs(t, dir, recs)
	g := mustBuild(t, dir)
	checkEdges(t, g)
	if g.Messages != 2 || g.Unmatched != 0 || g.ClockCorrections != 0 {
		t.Fatalf("%d messages, %d unmatched, %d clock corrections; want 2, 0, 0 (notes %q)", g.Messages, g.Unmatched, g.ClockCorrections, g.Notes)
	}
	got := sendOf(g)
	if r := g.RankStart[1]; got[r+2] != 1 || got[r+4] != 2 {
		t.Fatalf("the probe and the receive matched sends %d and %d, want 1 and 2", got[r+2], got[r+4])
	}
	pathAsLongAsRun(t, g)
}

// TestZeroByteMembers: in MPI_Gatherv a member that sends 0 elements is
// not waited for by the root (Open MPI and MPICH skip it; on MPICH the
// root's dependency on such a member, 4 ms late, moved its clock by
// 4 ms). An in-place 0-element MPI_Allreduce moves nothing; an in-place
// MPI_Allgatherv logs 0 bytes whatever it moves, so it still orders its
// members.
func TestZeroByteMembers(t *testing.T) {
	coll := func(op trace.Op, start, end int64, root int32, bytes uint64, flags trace.Flags) trace.Record {
		r := call(op, start, end)
		r.Comm, r.Seq, r.Root, r.Bytes, r.Flags = trace.CommWorld, 1, root, bytes, flags
		return r
	}
	t.Run("Gatherv", func(t *testing.T) {
		recs := [][]trace.Record{
			{call(trace.OpInit, 0, 10), coll(trace.OpGatherv, 100, 600, 0, 8, trace.FlagInPlace), secondBarrier(6000, 6010)},
			{call(trace.OpInit, 0, 10), coll(trace.OpGatherv, 500, 510, 0, 8, 0), secondBarrier(6000, 6010)},
			{call(trace.OpInit, 0, 10), coll(trace.OpGatherv, 5000, 5010, 0, 0, 0), secondBarrier(5990, 6010)},
		}
		dir := t.TempDir()
		writeLogs(t, dir, recs)
		g := mustBuild(t, dir)
		checkEdges(t, g)
		if g.ClockCorrections != 0 {
			t.Fatalf("%d clock corrections (by up to %d ns), want none", g.ClockCorrections, g.ClockShiftMax)
		}
		if w := waitOf(g, 1); w == nil || w.Kind != graph.EarlyReduce || w.Ns != 400 || w.Cause != g.RankStart[1]+1 {
			t.Fatalf("the root's wait: %+v, want Early Reduce of 400 ns for rank 1 (rank 2 sent nothing)", w)
		}
		pathAsLongAsRun(t, g)
	})
	for _, tc := range []struct {
		op     trace.Op
		noData bool
	}{{trace.OpAllreduce, true}, {trace.OpAllgatherv, false}} {
		t.Run("in place "+tc.op.String(), func(t *testing.T) {
			recs := [][]trace.Record{
				{call(trace.OpInit, 0, 10), coll(tc.op, 100, 5020, -1, 0, trace.FlagInPlace), secondBarrier(6000, 6010)},
				{call(trace.OpInit, 0, 10), coll(tc.op, 5000, 5010, -1, 0, trace.FlagInPlace), secondBarrier(6000, 6010)},
			}
			dir := t.TempDir()
			writeLogs(t, dir, recs)
			g := mustBuild(t, dir)
			if cs := programColls(g); len(cs) == 0 || cs[0].NoData != tc.noData {
				t.Fatalf("instances %+v: want NoData %v first", g.Colls, tc.noData)
			}
			if w := waitOf(g, 1); (w != nil) == tc.noData {
				t.Fatalf("rank 0's wait: %+v; want one: %v", w, !tc.noData)
			}
		})
	}
}

// TestPairCounts: in an MPI_Alltoallv a member needs only the members it
// exchanges a non-zero count with, and the log keeps only the sum of its
// counts: ranks 0 and 1 that returned before rank 2 arrived did not need
// it (on MPICH the dependency moved their clocks 3-7 ms). The dependency
// holds where the times show it and corrects no clock. So does one of a
// collective file write, which the MPI-IO layer may do without
// synchronising. The same times in an MPI_Alltoall, where everyone needs
// everyone, are clock error.
func TestPairCounts(t *testing.T) {
	coll := func(op trace.Op, start, end int64) trace.Record {
		r := call(op, start, end)
		r.Comm, r.Seq, r.Bytes = trace.CommWorld, 1, 64
		return r
	}
	for _, tc := range []struct {
		op        trace.Op
		corrected int64
	}{{trace.OpAlltoallv, 0}, {trace.OpFileWriteAll, 0}, {trace.OpAlltoall, 2}} {
		t.Run(tc.op.String(), func(t *testing.T) {
			recs := [][]trace.Record{
				{call(trace.OpInit, 0, 10), coll(tc.op, 100, 300), secondBarrier(6000, 6010)},
				{call(trace.OpInit, 0, 10), coll(tc.op, 200, 310), secondBarrier(6000, 6010)},
				{call(trace.OpInit, 0, 10), coll(tc.op, 5000, 5100), secondBarrier(5990, 6010)},
			}
			dir := t.TempDir()
			writeLogs(t, dir, recs)
			g := mustBuild(t, dir)
			checkEdges(t, g)
			if g.ClockCorrections != tc.corrected {
				t.Fatalf("%d dependencies corrected (by up to %d ns), want %d", g.ClockCorrections, g.ClockShiftMax, tc.corrected)
			}
			if tc.corrected == 0 {
				for r := int32(0); r < 2; r++ {
					if w := waitOf(g, g.RankStart[r]+1); w != nil && w.Cause == g.RankStart[2]+1 {
						t.Fatalf("rank %d's %v waited for rank 2: %+v", r, tc.op, w)
					}
				}
			}
			pathAsLongAsRun(t, g)
		})
	}
}

// TestPartsAreTheGraph builds generated runs (every pattern, and skewed
// clocks) with 2, 3 and 4 analyzer ranks of an in-process job: the parts
// together are the graph one process builds (vertex ids do not depend on
// the cut), edge for edge, with the same times, waits, collectives,
// synchronisation points and splits.
func TestPartsAreTheGraph(t *testing.T) {
	for name, dir := range testRuns(t, 7, 1500, 11) {
		run, one := loadBuild(t, dir)
		for P := 2; P <= 4; P++ {
			parts := buildParts(t, run, P, buildSplits)
			comparePartsTo(t, fmt.Sprintf("%s P=%d", name, P), one, parts)
			if P == 4 {
				t.Logf("%s: %d vertices, %d edges, %d hubs, %d synchronisation points, the same in 2, 3 and 4 parts", name, one.NumVertices(), len(one.InSrc), one.Hubs, len(one.Syncs))
			}
		}
	}
}

// testRuns writes generated runs of every pattern (ranks × calls) and the
// skew cases' simulated runs, and returns their directories by name.
func testRuns(t *testing.T, ranks, calls int, seed int64) map[string]string {
	dirs := map[string]string{}
	for _, p := range gen.Patterns {
		for _, synced := range []bool{false, true} {
			if synced && p != gen.Halo { // the halo's sends held by their receivers
				continue
			}
			dir := t.TempDir()
			if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: calls, Pattern: p, Seed: seed, Synchronised: synced}); err != nil {
				t.Fatal(err)
			}
			name := string(p)
			if synced {
				name += "-synchronised"
			}
			dirs[name] = dir
		}
	}
	for _, sc := range skewCases() {
		dir := t.TempDir()
		writeSkewed(t, dir, simulate(seed), sc)
		dirs["skew-"+sc.name] = dir
	}
	return dirs
}

// comparePartsTo checks that parts, together, are the graph one.
func comparePartsTo(t *testing.T, what string, one *graph.PAG, parts []*graph.PAG) {
	t.Helper()
	type in struct {
		src  int32
		w    int64
		kind graph.EdgeKind
	}
	rows := func(g *graph.PAG, lo, hi int32) map[int32][]in {
		m := map[int32][]in{}
		for v := lo; v < hi; v++ {
			l := v - lo
			for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
				m[v] = append(m[v], in{g.InSrc[e], g.InWeight.At(e), g.InKind[e]})
			}
			slices.SortFunc(m[v], func(a, b in) int {
				return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.w, b.w), cmp.Compare(a.kind, b.kind))
			})
		}
		return m
	}
	want := rows(one, 0, int32(one.NumVertices()))
	var waits []graph.Wait
	colls := 0
	for q, p := range parts {
		if p.NumVertices() != one.NumVertices() || p.Target != one.Target || p.StartVertex != one.StartVertex ||
			p.T0 != one.T0 || p.T1 != one.T1 || p.Messages != one.Messages || p.CoalescedPolls != one.CoalescedPolls || p.Unmatched != one.Unmatched ||
			p.ClockViolations != one.ClockViolations || p.Inconsistent != one.Inconsistent {
			t.Fatalf("%s: part %d's counts differ from one process's", what, q)
		}
		if !reflect.DeepEqual(p.Syncs, one.Syncs) || !reflect.DeepEqual(p.SyncHub, one.SyncHub) {
			t.Fatalf("%s: part %d has %d synchronisation points, one process %d", what, q, len(p.Syncs), len(one.Syncs))
		}
		lo, hi := p.Bounds[q], p.Bounds[q+1]
		for v, es := range rows(p, lo, hi) {
			if !reflect.DeepEqual(es, want[v]) {
				t.Fatalf("%s: vertex %d: edges %v in part %d, %v in one process", what, v, es, q, want[v])
			}
			if p.Time(v) != one.Time(v) || p.Split[v-lo] != one.Split[v] {
				t.Fatalf("%s: vertex %d: time %d split %d in part %d, %d %d in one process", what, v, p.Time(v), p.Split[v-lo], q, one.Time(v), one.Split[v])
			}
		}
		waits = append(waits, p.Waits...)
		colls += len(p.Colls)
	}
	if !reflect.DeepEqual(waits, one.Waits) || colls != len(one.Colls) {
		t.Fatalf("%s: %d waits and %d collectives in the parts, %d and %d in one process", what, len(waits), colls, len(one.Waits), len(one.Colls))
	}
}

// exactAlgo is one exact critical-path algorithm as the analyzer runs it
// on an analyzer rank's part of the PAG.
type exactAlgo struct {
	name string
	run  func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error)
}

// exactAlgos are every exact algorithm: dag (with its whole graph for the
// replay and without), Dijkstra and Δ-stepping (by distance and by vertex
// time), and split in each mode.
func exactAlgos() []exactAlgo {
	dist := func(g *graph.PAG) *cpath.DistGraph {
		return &cpath.DistGraph{N: g.NumVertices(), Bounds: g.Bounds, Lo: g.Bounds[g.Part], Hi: g.Bounds[g.Part+1],
			InStart: g.InStart, InSrc: g.InSrc, InWeight: g.InWeight, Target: g.Target}
	}
	algos := []exactAlgo{
		{"dag", func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) { return cpath.DistDAG(c, dist(g)) }},
		{"dijkstra", func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) { return cpath.ParallelDijkstra(c, dist(g)) }},
		{"delta", func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) {
			return cpath.ParallelDeltaStepping(c, dist(g), 0)
		}},
		{"dijkstra-by-time", func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) {
			d := dist(g)
			d.Time = g.Times()
			return cpath.ParallelDijkstra(c, d)
		}},
		{"delta-by-time", func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) {
			d := dist(g)
			d.Time = g.Times()
			return cpath.ParallelDeltaStepping(c, d, 0)
		}},
	}
	for _, mode := range cpath.SplitModes {
		algos = append(algos, exactAlgo{"split/" + string(mode), func(c mpix.Comm, g *graph.PAG) (*cpath.DistResult, error) {
			if err := g.Splits(c); err != nil {
				return nil, err
			}
			return cpath.Split(c, dist(g), &cpath.SplitInput{Split: g.Split, Exit: append(slices.Clone(g.SyncHub), g.Target)}, mode)
		}})
	}
	return algos
}

// pathAtP builds run's PAG in an in-process job of P ranks and runs a on
// it: rank 0's path, or the first rank's error.
func pathAtP(run *graph.Run, a exactAlgo, P int) (cpath.Path, error) {
	res := make([]*cpath.DistResult, P)
	errs := make([]error, P)
	mpixtest.Run(P, func(c mpix.Comm) {
		g, err := graph.Build(c, run)
		if err != nil {
			errs[c.Rank()] = err
			return
		}
		res[c.Rank()], errs[c.Rank()] = a.run(c, g)
	})
	for _, err := range errs {
		if err != nil {
			return cpath.Path{}, err
		}
	}
	return res[0].Path, nil
}

// TestExactAlgorithmsAgree runs every exact algorithm on the graph of
// generated runs (every pattern, and skewed clocks) built by 1 to 4
// analyzer ranks of an in-process job: each returns the path one
// process's dag finds, vertex for vertex, and its length.
func TestExactAlgorithmsAgree(t *testing.T) {
	algos := exactAlgos()
	if testing.Short() {
		algos = slices.DeleteFunc(algos, func(a exactAlgo) bool { return a.name == "dijkstra" || a.name == "delta" })
		t.Log("-short: dijkstra and delta without times left out")
	}
	for name, dir := range testRuns(t, 5, 600, 13) {
		run, one := loadBuild(t, dir)
		ref := mustPath(t, one)
		if ref.Length != one.T1-one.T0 {
			t.Errorf("%s: path %d ns, run %d ns", name, ref.Length, one.T1-one.T0)
		}
		for _, a := range algos {
			for P := 1; P <= 4; P++ {
				got, err := pathAtP(run, a, P)
				if err != nil {
					t.Fatalf("%s %s P=%d: %v", name, a.name, P, err)
				}
				if got.Length != ref.Length || !slices.Equal(got.Vertices, ref.Vertices) {
					t.Fatalf("%s %s P=%d: path of %d vertices, %d ns; dag in one process: %d vertices, %d ns",
						name, a.name, P, len(got.Vertices), got.Length, len(ref.Vertices), ref.Length)
				}
			}
		}
	}
}

// TestLongStretches: stretches of 2^31 ns and more (stored apart from the
// other weights, graph.Weights) on several ranks, in computation, in a
// call and before a rank's first call: at P = 1, 2 and 3 the parts' edges
// carry exactly those weights, and the path is the run. (The program and
// call edges of a part's ranks are made in parallel, their large weights
// joined afterwards.)
func TestLongStretches(t *testing.T) {
	const s = int64(1e9)
	var recs [][]trace.Record
	var want []int64 // the stretches of 2^31 ns or more: launch, computation, calls
	for r := 0; r < 4; r++ {
		launch := int64(r) * 3 * s // rank r starts 3r s late
		// Not MPI_Init: that is a barrier, which no rank would leave
		// before the last one started.
		first := call(trace.OpPcontrol, launch, launch+10)
		comp := call(trace.OpPcontrol, first.End+int64(2+r)*s, first.End+int64(2+r)*s+5) // 2+r s of computation
		inCall := call(trace.OpPcontrol, comp.End+1, comp.End+1+int64(3-r%2)*s+int64(r)) // a call of 2 or 3 s
		last := barrier(40*s, 40*s+10)
		recs = append(recs, []trace.Record{first, comp, inCall, last})
		for _, x := range []int64{launch, comp.Start - first.End, inCall.End - inCall.Start, last.Start - inCall.End} {
			if x >= 1<<31 {
				want = append(want, x)
			}
		}
	}
	slices.Sort(want)
	run := loadRecs(t, recs)
	for P := 1; P <= 3; P++ {
		parts := buildParts(t, run, P, graph.Build)
		var got []int64
		for _, g := range parts {
			for e := range g.InSrc {
				if w := g.InWeight.At(int32(e)); w >= 1<<31 {
					got = append(got, w)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("P=%d: the weights of 2^31 ns or more are %v, want %v", P, got, want)
		}
		if P == 1 {
			g := parts[0]
			checkEdges(t, g)
			pathAsLongAsRun(t, g)
		}
	}
}

// TestLongTransfer: a message edge of 2^31 ns or more (placed in the rows
// by ranges of vertices, after the calls' edges) keeps its weight at any
// P: the transfer from the send's start to the receive's end, 3 s.
func TestLongTransfer(t *testing.T) {
	const s = int64(1e9)
	send := call(trace.OpSend, 100, 110)
	send.Comm, send.Peer, send.Bytes = trace.CommWorld, 1, 1<<30
	recv := call(trace.OpRecv, 50, 100+3*s)
	recv.Comm, recv.Peer, recv.Bytes = trace.CommWorld, 0, 1<<30
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), send, barrier(10*s, 10*s+10)},
		{call(trace.OpInit, 0, 10), recv, barrier(10*s, 10*s+10)},
	}
	run := loadRecs(t, recs)
	for P := 1; P <= 2; P++ {
		var got []int64
		for _, g := range buildParts(t, run, P, graph.Build) {
			for e := range g.InSrc {
				if g.InKind[e] == graph.EdgeLateSender {
					got = append(got, g.InWeight.At(int32(e)))
				}
			}
		}
		if !slices.Equal(got, []int64{3 * s}) {
			t.Errorf("P=%d: the message edges weigh %v, want [%d]", P, got, 3*s)
		}
	}
}

// TestUnknownCommunicator: a message on a communicator that no log
// created (its creation was not recorded) cannot be matched: both ends
// are counted unmatched, and the rest of the run is analysed.
func TestUnknownCommunicator(t *testing.T) {
	send := call(trace.OpSend, 100, 110)
	send.Comm, send.Peer, send.Bytes = 77, 1, 8
	recv := call(trace.OpRecv, 100, 120)
	recv.Comm, recv.Peer, recv.Bytes = 77, 0, 8
	known := call(trace.OpSend, 200, 210)
	known.Comm, known.Peer, known.Bytes = trace.CommWorld, 1, 8
	knownRecv := call(trace.OpRecv, 200, 220)
	knownRecv.Comm, knownRecv.Peer, knownRecv.Bytes = trace.CommWorld, 0, 8
	recs := [][]trace.Record{
		{call(trace.OpInit, 0, 10), send, known, barrier(300, 310)},
		{call(trace.OpInit, 0, 10), recv, knownRecv, barrier(300, 310)},
	}
	run := loadRecs(t, recs)
	for P := 1; P <= 2; P++ {
		for _, g := range buildParts(t, run, P, graph.Build) {
			if g.Messages != 1 || g.Unmatched != 2 {
				t.Fatalf("P=%d: %d messages and %d unmatched ends, want 1 and 2", P, g.Messages, g.Unmatched)
			}
		}
	}
}

// TestUncompletedSends: a send no call completes (its request freed with
// MPI_Request_free, as LAMMPS's irregular exchanges do, or left pending at
// the end of the log) still takes its place in its key's message order,
// and a later send of the same key matches the receive after. Before, such
// sends were left out: the receive before the Barrier took the send after
// it, and the graph had a cycle. A freed receive cannot be placed (nothing
// says which message it took): it is counted in a note.
func TestUncompletedSends(t *testing.T) {
	req := func(r trace.Record, id uint32, flags trace.Flags) trace.Record {
		r.Req, r.Flags = id, r.Flags|flags
		return r
	}
	free := func(start, end int64, id uint32) trace.Record {
		return req(call(trace.OpRequestFree, start, end), id, 0)
	}
	start := func(start, end int64, id uint32) trace.Record {
		return req(call(trace.OpStart, start, end), id, 0)
	}
	// The receiver: one receive before the Barrier, one after.
	receiver := []trace.Record{call(trace.OpInit, 0, 10), msg(trace.OpRecv, 500, 600, 0), barrier(2000, 2010), msg(trace.OpRecv, 2900, 3020, 0)}
	for _, tc := range []struct {
		name   string
		sender []trace.Record // its first send is the one no call completes
	}{
		{"freed", []trace.Record{call(trace.OpInit, 0, 10), req(msg(trace.OpIsend, 100, 110, 1), 1, trace.FlagNewReq), free(111, 115, 1),
			barrier(2000, 2010), msg(trace.OpSend, 3000, 3010, 1)}},
		{"pending at the end", []trace.Record{call(trace.OpInit, 0, 10), req(msg(trace.OpIsend, 100, 110, 1), 1, trace.FlagNewReq),
			barrier(2000, 2010), msg(trace.OpSend, 3000, 3010, 1)}},
		{"persistent, freed while active", []trace.Record{call(trace.OpInit, 0, 10),
			req(msg(trace.OpSendInit, 50, 55, 1), 1, trace.FlagNewReq|trace.FlagPersistent), start(100, 110, 1), free(111, 115, 1),
			barrier(2000, 2010), msg(trace.OpSend, 3000, 3010, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLogs(t, dir, [][]trace.Record{tc.sender, receiver})
			g := mustBuild(t, dir)
			checkEdges(t, g)
			if g.Messages != 2 || g.Unmatched != 0 || g.ClockViolations != 0 {
				t.Fatalf("%d messages, %d unmatched, %d clock violations; want 2, 0, 0 (notes: %q)", g.Messages, g.Unmatched, g.ClockViolations, g.Notes)
			}
			first := int32(1) // the sender's call that posted the uncompleted send
			if tc.sender[1].Op == trace.OpSendInit {
				first = 2 // its MPI_Start
			}
			got := sendOf(g)
			recv1, recv2 := g.RankStart[1]+1, g.RankStart[1]+3
			if got[recv1] != first || got[recv2] != int32(len(tc.sender))-1 {
				t.Fatalf("receives matched to sends %d and %d, want %d and %d", got[recv1], got[recv2], first, len(tc.sender)-1)
			}
			if w := waitOf(g, recv2); w == nil || w.Kind != graph.LateSender || w.Ns != 100 {
				t.Fatalf("the second MPI_Recv's wait: %+v, want Late Sender of 100 ns", w)
			}
			if w := waitOf(g, first); w != nil {
				t.Fatalf("the uncompleted send waited: %+v", w)
			}
			path := pathAsLongAsRun(t, g)
			checkLastArriving(t, g, path)
		})
	}
	t.Run("freed receive", func(t *testing.T) {
		sender := []trace.Record{call(trace.OpInit, 0, 10), msg(trace.OpSend, 100, 110, 1), barrier(2000, 2010)}
		freedRecv := []trace.Record{call(trace.OpInit, 0, 10), req(msg(trace.OpIrecv, 50, 60, 0), 1, trace.FlagNewReq), free(61, 65, 1), barrier(2000, 2010)}
		dir := t.TempDir()
		writeLogs(t, dir, [][]trace.Record{sender, freedRecv})
		g := mustBuild(t, dir)
		if !slices.ContainsFunc(g.Notes, func(n string) bool { return strings.HasPrefix(n, "1 receive or collective requests were freed") }) {
			t.Fatalf("no note of the freed receive: %q", g.Notes)
		}
	})
}
