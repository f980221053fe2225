package graph_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// expected counts what the logs of a generated run say the analysis must
// find: per source, destination and tag, as many messages as the fewer of
// sends and receives (bench/gen makes them match but where a rank stopped
// before its partner), and every collective call is one member of an
// instance.
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

// TestGenerated analyses generated runs of every pattern: all messages and
// collective instances are found, and the critical path is as long as the
// run.
func TestGenerated(t *testing.T) {
	for _, p := range gen.Patterns {
		for _, procs := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/procs=%d", p, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				dir := t.TempDir()
				const ranks = 5
				if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: 3000, Pattern: p, Seed: 3}); err != nil {
					t.Fatal(err)
				}
				g := mustBuild(t, dir)
				msgs, unmatched, colls := expected(t, dir, ranks)
				if g.Messages != msgs || g.Unmatched != unmatched {
					t.Errorf("%d messages, %d unmatched; want %d, %d", g.Messages, g.Unmatched, msgs, unmatched)
				}
				if len(g.Colls) != colls {
					t.Errorf("%d collective instances, want %d", len(g.Colls), colls)
				}
				for _, c := range g.Colls {
					if c.N != ranks {
						t.Fatalf("collective %v seq %d has %d members, want %d", c.Op, c.Seq, c.N, ranks)
					}
				}
				res, err := cpath.DAG(cpath.FromPAG(g), g.Target)
				if err != nil {
					t.Fatal(err)
				}
				if res.Path.Length != g.T1-g.T0 {
					t.Errorf("critical path %d ns, run time %d ns", res.Path.Length, g.T1-g.T0)
				}
				checkEdges(t, g)
			})
		}
	}
}

// checkEdges checks the PAG's shape: one edge into every E(c), one into
// S(c) from the end of the previous call of its thread unless it is the
// first, and the weights are the time differences.
func checkEdges(t *testing.T, g *graph.PAG) {
	t.Helper()
	if len(g.InStart) != g.NumVertices()+1 || int(g.InStart[g.NumVertices()]) != len(g.InSrc) {
		t.Fatalf("CSR of %d vertices has %d row starts and %d edges", g.NumVertices(), len(g.InStart), len(g.InSrc))
	}
	last := map[[2]int]int32{}
	for c := int32(0); c < int32(g.NumCalls()); c++ {
		key := [2]int{g.Rank(c), int(g.Thread[c])}
		p, ok := last[key]
		if !ok {
			p = -1
		}
		last[key] = c
		if got := g.Prev(c); got != p {
			t.Fatalf("Prev(%d) = %d, want %d", c, got, p)
		}
		src, w, kind := g.Pred(2 * c)
		if p < 0 && src != -1 || p >= 0 && (src != 2*p+1 || kind != graph.EdgeProgram || w != max(0, g.Start[c]-g.End[p])) {
			t.Fatalf("edge into S(%d): %d %d %v", c, src, w, kind)
		}
		src, w, kind = g.Pred(2*c + 1)
		if src < 0 || w != max(0, g.Time(2*c+1)-g.Time(src)) || (kind == graph.EdgeCall) != (src == 2*c) {
			t.Fatalf("edge into E(%d): %d %d %v", c, src, w, kind)
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
		!slices.Equal(a.InWeight, b.InWeight) || !slices.Equal(a.Waits, b.Waits) || a.Messages != b.Messages {
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
			_, err = graph.Build(run)
			var te *trace.Error
			if !errors.As(err, &te) || te.File != p || !errors.Is(err, tc.kind) {
				t.Fatalf("Build: %v, want a %v error for %s", err, tc.kind, p)
			}
		})
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
		g, err := graph.Build(run)
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
	if c := g.RankStart[1] + 5; g.Prev(c) != c-3 {
		t.Fatalf("Prev(%d) = %d, want %d", c, g.Prev(c), c-3)
	}
}

// mustBuild loads and builds the run in dir, failing the test on error.
func mustBuild(t *testing.T, dir string) *graph.PAG {
	t.Helper()
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(run)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
