package timeline

import (
	"bytes"
	"flag"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline/timelinetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestCounting: the counting encoder adds up exactly the bytes the
// writing one appends, for every kind of event and value (the budget
// relies on it).
func TestCounting(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []int64{0, 1, 9, 10, 99, 100, 999, 1000, 1001, 123456789, -1, -999, -1000, -1001, math.MaxInt64, math.MinInt64}
	for p := int64(1); p < math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, -p, 10*p-1)
	}
	for i := 0; i < 200; i++ {
		vals = append(vals, rng.Int63n(1<<uint(rng.Intn(62)+1))*int64(1-2*rng.Intn(2)))
	}
	strs := []string{"", "MPI_Send", `q"uote\`, "é ü", "\x01ctl", "<&>", "\xff bad utf-8"}
	events := []func(e *enc, v int64, s string){
		func(e *enc, v int64, _ string) { e.int(v) },
		func(e *enc, _ int64, s string) { e.str(s) },
		func(e *enc, v int64, s string) {
			e.slice(sliceHead("mpi", quote(s)), track{v, v}.bytes(), v, v)
			a := args{e: e}
			a.key(keyBytes)
			e.int(v)
			a.end()
		},
		func(e *enc, v int64, _ string) { e.flow(flowStart, track{v, -v}.bytes(), v, v) },
		func(e *enc, v int64, _ string) { e.flow(flowEnd, track{v, v}.bytes(), -v, v) },
		func(e *enc, v int64, s string) { e.processMeta(v%2 == 0, v, s, v) },
		func(e *enc, v int64, s string) { e.threadMeta(track{v, v}, s) },
	}
	for _, v := range vals {
		if l := len(appendUs(nil, v)); l != usLen(v) {
			t.Fatalf("usLen(%d) = %d, appendUs wrote %q", v, usLen(v), appendUs(nil, v))
		}
		if tk := (track{v, -v}); tk.len() != len(tk.bytes()) {
			t.Fatalf("track %v: len %d, bytes %q", tk, tk.len(), tk.bytes())
		}
	}
	for k, ev := range events {
		for _, v := range vals {
			for _, s := range strs {
				w, c := &enc{}, &enc{counting: true}
				ev(w, v, s)
				ev(c, v, s)
				if c.n != int64(len(w.b)) || w.n != c.n {
					t.Fatalf("event %d (%d, %q): counted %d, wrote %d (%q)", k, v, s, c.n, len(w.b), w.b)
				}
			}
		}
	}
}

// TestBuckets: buckets grow with the duration, and bucketLow is the
// first duration of each.
func TestBuckets(t *testing.T) {
	prev := 0
	for d := int64(0); d < 5000; d++ {
		b := bucket(d)
		if b < prev || b >= numBuckets {
			t.Fatalf("bucket(%d) = %d after %d", d, b, prev)
		}
		if b > prev && bucketLow(b) != d {
			t.Fatalf("bucketLow(%d) = %d, want %d", b, bucketLow(b), d)
		}
		prev = b
	}
	if b := bucket(math.MaxInt64); b >= numBuckets {
		t.Fatalf("bucket(max) = %d", b)
	}
}

// analysed is a run analysed as cpath analyze does, up to the report,
// on an in-process job of P ranks, and its timeline.
type analysed struct {
	file []byte
	sum  *Summary
	rep  *report.Report
}

func analyse(t *testing.T, dir string, P int, window *graph.Window, maxBytes int64) analysed {
	t.Helper()
	var out analysed
	errs := make([]error, P)
	mpixtest.Run(P, func(c mpix.Comm) {
		errs[c.Rank()] = func() error {
			run, err := graph.Load(dir)
			if err != nil {
				return err
			}
			p, err := graph.Build(c, run)
			if err != nil {
				return err
			}
			g := &cpath.DistGraph{N: p.NumVertices(), Bounds: p.Bounds, Lo: p.Bounds[p.Part], Hi: p.Bounds[p.Part+1],
				InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
			res, err := cpath.DistDAG(c, g)
			if err != nil {
				return err
			}
			var want []int32
			for _, v := range res.Path.Vertices {
				if x, kind := p.Vertex(v); kind <= graph.VertexEnd {
					want = append(want, x)
				}
			}
			calls, err := p.FetchCalls(c, want)
			if err != nil {
				return err
			}
			type share struct {
				Imbalance *imbalance.Result
				Colls     []graph.Collective
			}
			mine := imbalance.Analyze(p)
			put := func(e *mpix.Encoder) { mine.Put(e); mpix.PutRecords(e, p.Colls) }
			read := func(d *mpix.Decoder) share {
				return share{imbalance.ReadResult(d), mpix.ReadRecords[graph.Collective](d)}
			}
			shares, err := mpix.Gather(c, put, read)
			if err != nil {
				return err
			}
			win := graph.Window{From: 0, To: p.T1 - p.T0}
			if window != nil {
				win = *window
			}
			var segs []report.Segment
			var buf bytes.Buffer
			if c.Rank() == 0 {
				var colls []graph.Collective
				var parts []*imbalance.Result
				var offs []int32
				for _, s := range shares {
					parts = append(parts, s.Imbalance)
					offs = append(offs, int32(len(colls)))
					colls = append(colls, s.Colls...)
				}
				in := &report.Input{Dir: dir, Algo: "dag", PAG: p.Summary(colls), Path: res.Path, PathCalls: calls,
					Imbalance: imbalance.Merge(parts, offs), Agreement: -1, Window: window}
				out.rep = report.Build(in)
				segs = out.rep.CriticalPath.Segments
			}
			sum, err := Write(c, p, segs, &buf, Options{Window: win, MaxBytes: maxBytes})
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				out.file, out.sum = buf.Bytes(), sum
			}
			return nil
		}()
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d of %d: %v", r, P, err)
		}
	}
	return out
}

func genRun(t *testing.T, ranks, calls int, pattern gen.Pattern) string {
	t.Helper()
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: calls, Pattern: pattern, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGolden: the timeline of a small imbalanced run is the golden file
// (go test ./timeline -update rewrites it), at one analyzer rank and at
// three.
func TestGolden(t *testing.T) {
	dir := genRun(t, 3, 12, gen.Imbalanced)
	golden := filepath.Join("testdata", "imbalanced.json")
	one := analyse(t, dir, 1, nil, 0)
	if *update {
		if err := os.WriteFile(golden, one.file, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.file, want) {
		t.Fatalf("the timeline differs from %s (go test ./timeline -update rewrites it after a deliberate change):\n%s", golden, one.file)
	}
	if three := analyse(t, dir, 3, nil, 0); !bytes.Equal(three.file, one.file) {
		t.Fatal("the timeline of three analyzer ranks differs from one's")
	}
	timelinetest.Parse(t, one.file)
}

// TestContents: at one analyzer rank and at two, a timeline without cap
// or window draws every call, stretch, wait and message of the run and
// marks exactly the critical path's segments; the two files are the
// same.
func TestContents(t *testing.T) {
	for _, pattern := range []gen.Pattern{gen.Halo, gen.Imbalanced, gen.Collectives, gen.RandomP2P} {
		t.Run(string(pattern), func(t *testing.T) {
			dir := genRun(t, 4, 300, pattern)
			one, two := analyse(t, dir, 1, nil, 0), analyse(t, dir, 2, nil, 0)
			if !bytes.Equal(one.file, two.file) {
				t.Fatal("the timeline of two analyzer ranks differs from one's")
			}
			timelinetest.CheckRun(t, one.file, one.rep)
			if one.sum.Capped() {
				t.Fatalf("uncapped timeline says it is capped: %+v", one.sum)
			}
		})
	}
}

// TestWindow: a window keeps what overlaps it, clipped, and marks the
// segments the report keeps for it.
func TestWindow(t *testing.T) {
	dir := genRun(t, 4, 400, gen.Imbalanced)
	whole := analyse(t, dir, 1, nil, 0)
	run := whole.rep.RuntimeNs
	w := graph.Window{From: run / 3, To: run / 2}
	one, two := analyse(t, dir, 1, &w, 0), analyse(t, dir, 2, &w, 0)
	if !bytes.Equal(one.file, two.file) {
		t.Fatal("the windowed timeline of two analyzer ranks differs from one's")
	}
	tr := timelinetest.Parse(t, one.file)
	segs := one.rep.CriticalPath.Segments
	if len(segs) == 0 || len(segs) >= len(whole.rep.CriticalPath.Segments) || len(tr.Critical) != len(segs) {
		t.Fatalf("window %v: %d segments (whole run %d), %d critical slices", w, len(segs), len(whole.rep.CriticalPath.Segments), len(tr.Critical))
	}
	timelinetest.CheckTrack(t, tr, segs)
	for _, e := range append(append(tr.MPI, tr.Compute...), tr.Wait...) {
		if timelinetest.NS(e.Ts) < w.From || timelinetest.NS(e.Ts+e.Dur) > w.To {
			t.Fatalf("%+v outside the window %v", e, w)
		}
	}
	// What the window holds of the whole run's slices, by start: the
	// windowed file has exactly those.
	var want int
	for _, e := range timelinetest.Parse(t, whole.file).MPI {
		if w.Holds(timelinetest.NS(e.Ts), timelinetest.NS(e.Ts+e.Dur)) {
			want++
		}
	}
	if len(tr.MPI) != want || timelinetest.Num(t, tr.Meta, "calls") != int64(want) {
		t.Fatalf("%d mpi slices in the window, want %d", len(tr.MPI), want)
	}
	var sum int64
	for _, s := range segs {
		sum += s.EndNs - s.StartNs
	}
	if sum != w.To-w.From {
		t.Fatalf("the windowed segments cover %d ns of the %d-ns window", sum, w.To-w.From)
	}
}

// TestCap: with a budget the critical path fits in, the file fits,
// leaves out the shortest calls and says so, and still draws the whole
// critical path, with the arrows between drawn calls; with one its slices
// on the ranks' tracks do not fit in, the file fits, draws the path's own
// track and the longest of those slices, and says so; with one smaller
// than the file with nothing drawn, it says that the file is larger.
func TestCap(t *testing.T) {
	dir := genRun(t, 4, 3000, gen.Imbalanced)
	whole := analyse(t, dir, 1, nil, 0)
	for _, tc := range []struct {
		budget int64
		fits   bool
	}{{int64(len(whole.file)) / 2, true}, {int64(len(whole.file)) / 3, true}, {int64(len(whole.file)) / 10, true},
		{int64(len(whole.file)) / 30, true}, {1000, false}} {
		one, two := analyse(t, dir, 1, nil, tc.budget), analyse(t, dir, 2, nil, tc.budget)
		if !bytes.Equal(one.file, two.file) {
			t.Fatal("the capped timeline of two analyzer ranks differs from one's")
		}
		s := one.sum
		if (int64(len(one.file)) <= tc.budget) != tc.fits || s.OverBudget == tc.fits || s.Bytes != int64(len(one.file)) {
			t.Fatalf("budget %d: wrote %d bytes (summary %+v), want it to fit: %v", tc.budget, len(one.file), s, tc.fits)
		}
		tr := timelinetest.Parse(t, one.file)
		segs := one.rep.CriticalPath.Segments
		if !s.Capped() || s.CallsDrawn >= s.Calls || int64(len(tr.MPI)) != s.CallsDrawn || int64(len(tr.Starts)) != s.MessagesDrawn ||
			int64(len(tr.Critical)) != s.SegmentsDrawn || s.Segments != int64(len(segs)) || (s.MinCriticalNs == 0) != (s.SegmentsDrawn == s.Segments) {
			t.Fatalf("budget %d: summary %+v; %d mpi slices, %d arrows, %d critical of %d segments", tc.budget, s, len(tr.MPI), len(tr.Starts),
				len(tr.Critical), len(segs))
		}
		note, _ := tr.Meta["left_out"].(string)
		want := "the critical path is complete"
		switch {
		case !tc.fits:
			want = "with nothing drawn the file needs more than"
		case s.MinCriticalNs > 0:
			want = "(its own track shows it whole)"
			if !s.Track {
				t.Fatalf("budget %d: the critical path's slices thinned, its own track not drawn", tc.budget)
			}
		}
		if !strings.HasPrefix(note, "left out") || !strings.Contains(note, want) {
			t.Fatalf("budget %d: the file says %q", tc.budget, note)
		}
		for _, e := range append(tr.MPI, tr.Compute...) {
			if e.Args["critical"] != true && timelinetest.NS(e.Dur) < s.MinNs {
				t.Fatalf("drawn off the path though shorter than %d ns: %+v", s.MinNs, e)
			}
			if e.Args["critical"] == true && timelinetest.NS(e.Dur) < s.MinCriticalNs {
				t.Fatalf("drawn on the path though shorter than %d ns: %+v", s.MinCriticalNs, e)
			}
		}
		t.Logf("budget %d: %d bytes; %s", tc.budget, len(one.file), s.Note())
	}
}

// BenchmarkWalk measures the two passes over a part's calls: counting the
// bytes (budget) and writing the events (a file without cap).
func BenchmarkWalk(b *testing.B) {
	dir := b.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 16, CallsPerRank: 20000, Pattern: gen.Halo, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	run, err := graph.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	c := &mpix.Single{}
	p, err := graph.Build(c, run)
	if err != nil {
		b.Fatal(err)
	}
	w := newWriter(p, Options{Window: graph.Window{To: p.T1 - p.T0}})
	for _, step := range []func() error{func() error { return w.critical(c, nil) }, func() error { return w.numberFlows(c) },
		func() error { return w.askSenders(c) }, func() error { return w.budget(c, nil) }, func() error { return w.tellSenders(c) }} {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("count", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w.walk(&enc{counting: true}, &counts{}, p.RankLo, p.RankHi, nil)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.NumCalls()), "ns/call")
	})
	b.Run("write", func(b *testing.B) {
		e := &enc{b: make([]byte, 0, batchBytes+64<<10)}
		for i := 0; i < b.N; i++ {
			w.walk(e, nil, p.RankLo, p.RankHi, func() { e.b = e.b[:0] })
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.NumCalls()), "ns/call")
	})
	b.Run("ask", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w.askSenders(c)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(w.recv)), "ns/message")
	})
}
