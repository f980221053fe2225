package cpath

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
)

// topoRun builds a run of single-threaded ranks, each given as its calls'
// times s0, e0, s1, e1, ...
func topoRun(ranks ...[]int64) *TopoCalls {
	in := &TopoCalls{Ranks: len(ranks), RankStart: []int32{0}, RankHi: len(ranks)}
	for _, ts := range ranks {
		first := int32(len(in.Start))
		for i := 0; i+1 < len(ts); i += 2 {
			prev := int32(-1)
			if id := int32(len(in.Start)); id > first {
				prev = id - 1
			}
			in.Start, in.End, in.Prev = append(in.Start, ts[i]), append(in.End, ts[i+1]), append(in.Prev, prev)
		}
		in.RankStart = append(in.RankStart, int32(len(in.Start)))
	}
	return in
}

// topoOpts are all the variants; they must agree.
var topoOpts = []TopoOptions{{}, {Compress: true}, {Shuffle: true}, {Shuffle: true, Compress: true}}

func topoSingle(t *testing.T, in *TopoCalls, opt TopoOptions) *TopoResult {
	t.Helper()
	r, err := Topo(&mpix.Single{}, in, opt)
	if err != nil {
		t.Fatalf("%+v: %v", opt, err)
	}
	return r
}

func topoFmt(segs []TopoSegment) string {
	var b strings.Builder
	for _, s := range segs {
		fmt.Fprintf(&b, "r%d:%c%d[%d,%d] ", s.Rank, s.Kind, s.Call, s.Start, s.End)
	}
	return strings.TrimSpace(b.String())
}

// topoCheckTiling checks that segments tile [T0, T1] of the run, in order,
// without gaps, overlaps or empty pieces, and that Length is T1 - T0.
func topoCheckTiling(t *testing.T, in *TopoCalls, r *TopoResult) {
	t.Helper()
	if len(in.Start) == 0 {
		if len(r.Segments) != 0 || r.Length != 0 {
			t.Fatalf("no calls, but %d segments, length %d", len(r.Segments), r.Length)
		}
		return
	}
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range in.Start {
		t0, t1 = min(t0, in.Start[i]), max(t1, in.End[i], in.Start[i])
	}
	if r.Length != t1-t0 {
		t.Fatalf("length %d, run time %d", r.Length, t1-t0)
	}
	at := t0
	for i, s := range r.Segments {
		if s.Start != at || s.End <= s.Start {
			t.Fatalf("segment %d %s does not continue at %d: %s", i, topoFmt(r.Segments[i:i+1]), at, topoFmt(r.Segments))
		}
		if s.Kind != 'c' && s.Kind != 'm' || s.Call < 0 || int(s.Call) >= len(in.Start) || s.Rank != in.rankOf(s.Call) {
			t.Fatalf("segment %d: bad attribution %+v", i, s)
		}
		at = s.End
	}
	if at != t1 {
		t.Fatalf("segments end at %d, the run at %d", at, t1)
	}
}

func TestTopoHandMade(t *testing.T) {
	tests := []struct {
		name string
		in   *TopoCalls
		want string
	}{
		{
			// Edges (1,5) c1 and (2,4) c4 overlap: c1 is longer. (6,10) c2
			// and (7,11) c5 tie at 4: the smaller id. The first call is c0
			// (c3 also starts at 0, larger id), the last c2 (c5 also ends at
			// 12).
			"two groups, tie by id",
			topoRun([]int64{0, 1, 5, 6, 10, 12}, []int64{0, 2, 4, 7, 11, 12}),
			"r0:m0[0,1] r0:c1[1,5] r0:m1[5,6] r0:c2[6,10] r0:m2[10,12]",
		},
		{
			// The chosen edge of the second group is on rank 1, after call
			// 4 [3,7]: 4 covers the gap from the first group's end (5) on.
			"switch rank",
			topoRun([]int64{0, 1, 5, 6, 8, 14}, []int64{0, 2, 3, 7, 12, 13}),
			"r0:m0[0,1] r0:c1[1,5] r1:m4[5,7] r1:c5[7,12] r0:m2[12,14]",
		},
		{
			// Group (1,8) c1, (5,10) c3 chooses c1; the next chosen edge,
			// c4 (11,15), follows call 3 [10,11], which starts after c1
			// ends (8): [8,10] goes to call 1, the call the path entered.
			// The run ends with c1 and c4 at 20: c1, the smaller id.
			"uncovered gap goes to the call entered",
			topoRun([]int64{0, 1, 8, 20}, []int64{0, 5, 10, 11, 15, 20}),
			"r0:m0[0,1] r0:c1[1,8] r0:m1[8,10] r1:m3[10,11] r1:c4[11,15] r0:m1[15,20]",
		},
		{
			// Touching edges (1,5) and (5,9) do not overlap: two groups.
			"touching edges are two groups",
			topoRun([]int64{0, 1, 5, 6}, []int64{0, 5, 9, 10}),
			"r0:m0[0,1] r0:c1[1,5] r1:m2[5,5] r1:c3[5,9] r1:m3[9,10]",
		},
		{
			"no program edge",
			topoRun([]int64{2, 5}, []int64{0, 3}),
			"r1:m1[0,2] r0:m0[2,5]",
		},
		{
			"one call",
			topoRun([]int64{3, 7}),
			"r0:m0[3,7]",
		},
		{
			// Clock error: (6,5) runs backwards and is no edge; a call that
			// ends before it starts lasts 0.
			"negative lengths",
			topoRun([]int64{0, 6, 5, 4, 9, 10}),
			"r0:m0[0,5] r0:m1[5,5] r0:c2[5,9] r0:m2[9,10]",
		},
		{"no calls", topoRun(nil, nil), ""},
		{"no ranks", topoRun(), ""},
	}
	// Zero-length segments never appear: fix the expectations that name
	// one for readability.
	for i := range tests {
		var keep []string
		for _, f := range strings.Fields(tests[i].want) {
			var r, c int
			var k byte
			var s, e int64
			if _, err := fmt.Sscanf(f, "r%d:%c%d[%d,%d]", &r, &k, &c, &s, &e); err != nil {
				t.Fatal(err)
			}
			if e > s {
				keep = append(keep, f)
			}
		}
		tests[i].want = strings.Join(keep, " ")
	}
	for _, tc := range tests {
		for _, opt := range topoOpts {
			r := topoSingle(t, tc.in, opt)
			if got := topoFmt(r.Segments); got != tc.want {
				t.Errorf("%s %+v:\n got %s\nwant %s", tc.name, opt, got, tc.want)
			}
			topoCheckTiling(t, tc.in, r)
		}
	}
}

func TestTopoThreadsAndEmptyRanks(t *testing.T) {
	// Rank 0 has two threads: c0 [0,1] → c2 [10,11] and c1 [0,2] → c3
	// [3,12]. Rank 1 has no calls, rank 2 one.
	in := &TopoCalls{
		Ranks: 3, RankStart: []int32{0, 4, 4, 5}, RankHi: 3,
		Start: []int64{0, 0, 10, 3, 5},
		End:   []int64{1, 2, 11, 12, 6},
		Prev:  []int32{-1, -1, 0, 1, -1},
	}
	want := "r0:m0[0,1] r0:c2[1,10] r0:m3[10,12]"
	for _, opt := range topoOpts {
		r := topoSingle(t, in, opt)
		if got := topoFmt(r.Segments); got != want {
			t.Errorf("%+v:\n got %s\nwant %s", opt, got, want)
		}
		topoCheckTiling(t, in, r)
	}
}

// topoGraph builds a Graph from edges (u, v, weight = time(v) - time(u)).
func topoGraph(n int, time func(int32) int64, es [][2]int32) *Graph {
	g := &Graph{N: n, InStart: make([]int32, n+1)}
	slices.SortStableFunc(es, func(a, b [2]int32) int { return int(a[1] - b[1]) })
	for _, e := range es {
		g.InStart[e[1]+1]++
	}
	for v := 0; v < n; v++ {
		g.InStart[v+1] += g.InStart[v]
	}
	for _, e := range es {
		g.InSrc = append(g.InSrc, e[0])
		g.InWeight.Append(time(e[1]) - time(e[0]))
	}
	return g
}

func TestTopoAgainstExact(t *testing.T) {
	// A ping-pong: rank 0 computes, sends (c1) to rank 1's receive c4, which
	// waits; rank 1 computes and sends (c5) to rank 0's receive c2, which
	// waits. The exact path: S(0) E(0) S(1) →(wait) E(4) S(5) →(wait) E(2).
	path := []int32{0, 1, 2, 9, 10, 5}
	tests := []struct {
		name  string
		in    *TopoCalls
		agree float64
	}{
		// Rank 0's computation after the send (6,8) is shorter than rank 1's
		// (7,12): topo follows the exact path.
		{"exact", topoRun([]int64{0, 1, 5, 6, 8, 14}, []int64{0, 2, 3, 7, 12, 13}), 1},
		// Rank 0's (60,115) is now longer than rank 1's (70,120), so topo
		// stays on rank 0: it gets [0,50] (calls 0 and 1's edge) and
		// [120,140] (call 2 from the exact wait on) right, and [50,120]
		// (call 4's wait, call 5's edge) wrong: 70 of 140.
		{"inexact", topoRun([]int64{0, 10, 50, 60, 115, 140}, []int64{0, 20, 30, 70, 120, 130}), 0.5},
	}
	for _, tc := range tests {
		in := tc.in
		time := func(v int32) int64 {
			if v%2 == 0 {
				return in.Start[v/2]
			}
			return in.End[v/2]
		}
		// The graph by the PAG's rules: program edges, call edges of the
		// calls that did not wait (c2, c4 did), wait edges from the cause.
		var es [][2]int32
		for c := int32(0); c < 6; c++ {
			if c != 2 && c != 4 {
				es = append(es, [2]int32{2 * c, 2*c + 1})
			}
			if p := in.Prev[c]; p >= 0 {
				es = append(es, [2]int32{2*p + 1, 2 * c})
			}
		}
		es = append(es, [2]int32{2 * 1, 2*4 + 1}, [2]int32{2 * 5, 2*2 + 1})
		g := topoGraph(12, time, es)
		ref, err := DAG(g, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ref.Path.Vertices, path) {
			t.Fatalf("%s: DAG path %v, want %v", tc.name, ref.Path.Vertices, path)
		}
		exact := PathSegments(ref.Path, callVertex(time), in.rankOf)
		var sum int64
		for _, s := range exact {
			sum += s.End - s.Start
		}
		if sum != ref.Path.Length {
			t.Fatalf("%s: path segments sum to %d, length %d", tc.name, sum, ref.Path.Length)
		}
		for _, opt := range topoOpts {
			r := topoSingle(t, in, opt)
			if r.Length != ref.Path.Length {
				t.Errorf("%s: length %d, exact %d", tc.name, r.Length, ref.Path.Length)
			}
			if a := Agreement(exact, r.Segments); a != tc.agree {
				t.Errorf("%s %+v: agreement %v, want %v\nexact %s\n topo %s", tc.name, opt, a, tc.agree, topoFmt(exact), topoFmt(r.Segments))
			}
		}
	}
	// The exact run's segments, spelled out.
	in := tests[0].in
	got := topoFmt(PathSegments(Path{Vertices: path}, callVertex(func(v int32) int64 {
		if v%2 == 0 {
			return in.Start[v/2]
		}
		return in.End[v/2]
	}), in.rankOf))
	if want := "r0:m0[0,1] r0:c1[1,5] r1:m4[5,7] r1:c5[7,12] r0:m2[12,14]"; got != want {
		t.Errorf("PathSegments: %s, want %s", got, want)
	}
}

func TestTopoAgreement(t *testing.T) {
	seg := func(r int32, k byte, c int32, s, e int64) TopoSegment {
		return TopoSegment{Rank: r, Kind: k, Call: c, Start: s, End: e}
	}
	a := []TopoSegment{seg(0, 'm', 0, 0, 10), seg(0, 'c', 1, 10, 30)}
	tests := []struct {
		name        string
		exact, heur []TopoSegment
		want        float64
	}{
		{"identical", a, a, 1},
		{"both empty", nil, nil, 1},
		{"exact of no time", []TopoSegment{seg(0, 'm', 0, 5, 5)}, a, 1},
		{"no heuristic", a, nil, 0},
		{"other rank", a, []TopoSegment{seg(1, 'm', 0, 0, 10), seg(1, 'c', 1, 10, 30)}, 0},
		{"other kind", a, []TopoSegment{seg(0, 'c', 0, 0, 10), seg(0, 'm', 1, 10, 30)}, 0},
		{"shifted boundary", a, []TopoSegment{seg(0, 'm', 0, 0, 15), seg(0, 'c', 1, 15, 30)}, 25.0 / 30},
		{"split differently", a, []TopoSegment{seg(0, 'm', 0, 0, 4), seg(0, 'm', 0, 4, 10), seg(2, 'c', 9, 10, 20), seg(0, 'c', 1, 20, 30)}, 20.0 / 30},
		{"unsorted heuristic", a, []TopoSegment{seg(0, 'c', 1, 10, 30), seg(0, 'm', 0, 0, 10)}, 1},
		{"heuristic wider", a, []TopoSegment{seg(0, 'm', 0, -100, 10), seg(0, 'c', 1, 10, 300)}, 1},
		{"backwards exact segment ignored", []TopoSegment{seg(0, 'm', 0, 0, 10), seg(0, 'm', 5, 12, 11)}, a, 1},
	}
	for _, tc := range tests {
		if got := Agreement(tc.exact, tc.heur); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTopoBadInput(t *testing.T) {
	ok := func() *TopoCalls { return topoRun([]int64{0, 1, 2, 3}, []int64{0, 1}) }
	tests := []struct {
		name string
		mod  func(*TopoCalls)
		msg  string
	}{
		{"RankStart short", func(in *TopoCalls) { in.RankStart = in.RankStart[:2] }, "RankStart"},
		{"RankStart decreasing", func(in *TopoCalls) { in.RankStart[1] = 4 }, "decreases"},
		{"owned ranks outside", func(in *TopoCalls) { in.RankHi = 3 }, "owned ranks"},
		{"times missing", func(in *TopoCalls) { in.End = in.End[:2] }, "Start/End/Prev"},
		{"Prev on another rank", func(in *TopoCalls) { in.Prev[2] = 1 }, "Prev"},
		{"Prev itself", func(in *TopoCalls) { in.Prev[1] = 1 }, "Prev"},
	}
	for _, tc := range tests {
		in := ok()
		tc.mod(in)
		for _, opt := range topoOpts {
			if _, err := Topo(&mpix.Single{}, in, opt); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s %+v: error %v, want one about %q", tc.name, opt, err, tc.msg)
			}
		}
	}
}

// topoGen is cpathtest.TopoRun's run as TopoCalls.
func topoGen(seed int64, ranks, calls int) *TopoCalls {
	in := &TopoCalls{Ranks: ranks, RankHi: ranks}
	in.RankStart, in.Start, in.End, in.Prev = cpathtest.TopoRun(seed, ranks, calls)
	return in
}

// topoShare is analyzer rank p's share of a full run when the logged ranks
// are cut at cuts (len P+1).
func topoShare(full *TopoCalls, cuts []int, p int) *TopoCalls {
	lo, hi := cuts[p], cuts[p+1]
	a, b := full.RankStart[lo], full.RankStart[hi]
	return &TopoCalls{Ranks: full.Ranks, RankStart: full.RankStart, RankLo: lo, RankHi: hi,
		Start: full.Start[a:b], End: full.End[a:b], Prev: full.Prev[a:b]}
}

// topoFakeRun runs Topo on P fake ranks with the given cuts.
func topoFakeRun(full *TopoCalls, cuts []int, opt TopoOptions) ([]*TopoResult, error) {
	P := len(cuts) - 1
	res := make([]*TopoResult, P)
	errs := make([]error, P)
	cpathtest.Run(P, func(c mpix.Comm) { res[c.Rank()], errs[c.Rank()] = Topo(c, topoShare(full, cuts, c.Rank()), opt) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// topoBrute is the chosen program edges by the definition, quadratically:
// components of the overlap relation, the longest edge of each (smallest
// call among equals), in start order.
func topoBrute(in *TopoCalls) []int32 {
	type ed struct {
		s, e int64
		c    int32
	}
	var es []ed
	for c := range in.Start {
		if p := in.Prev[c]; p >= 0 {
			s := max(in.End[p], in.Start[p])
			if in.Start[c] > s {
				es = append(es, ed{s, in.Start[c], int32(c)})
			}
		}
	}
	comp := make([]int, len(es))
	for i := range comp {
		comp[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if comp[i] != i {
			comp[i] = find(comp[i])
		}
		return comp[i]
	}
	for i := range es {
		for j := range es {
			if es[i].s < es[j].e && es[j].s < es[i].e {
				comp[find(i)] = find(j)
			}
		}
	}
	best := map[int]int{}
	first := map[int]int64{}
	for i, e := range es {
		k := find(i)
		if b, ok := best[k]; !ok || e.e-e.s > es[b].e-es[b].s || e.e-e.s == es[b].e-es[b].s && e.c < es[b].c {
			best[k] = i
		}
		if f, ok := first[k]; !ok || e.s < f {
			first[k] = e.s
		}
	}
	var ks []int
	for k := range best {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return first[ks[i]] < first[ks[j]] })
	var out []int32
	for _, k := range ks {
		out = append(out, es[best[k]].c)
	}
	return out
}

func TestTopoGeneratedRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, size := range []struct{ ranks, calls int }{{1, 30}, {3, 40}, {5, 120}, {8, 300}} {
		for seed := int64(1); seed <= 4; seed++ {
			full := topoGen(seed, size.ranks, size.calls)
			ref := topoSingle(t, full, TopoOptions{})
			topoCheckTiling(t, full, ref)
			if size.ranks*size.calls <= 1000 {
				var got []int32
				for _, s := range ref.Segments {
					if s.Kind == 'c' {
						got = append(got, s.Call)
					}
				}
				if want := topoBrute(full); !slices.Equal(got, want) {
					t.Fatalf("%d×%d seed %d: chosen edges %v, by definition %v", size.ranks, size.calls, seed, got, want)
				}
			}
			for P := 1; P <= 5; P++ {
				cuts := cpathtest.Cuts(size.ranks, P, rng)
				for _, opt := range topoOpts {
					res, err := topoFakeRun(full, cuts, opt)
					if err != nil {
						t.Fatalf("%d×%d seed %d P=%d cuts %v %+v: %v", size.ranks, size.calls, seed, P, cuts, opt, err)
					}
					if !reflect.DeepEqual(res[0].Segments, ref.Segments) {
						t.Fatalf("%d×%d seed %d P=%d cuts %v %+v: segments differ from topo on one rank\n got %s\nwant %s",
							size.ranks, size.calls, seed, P, cuts, opt, topoFmt(res[0].Segments), topoFmt(ref.Segments))
					}
					for p, r := range res {
						if p > 0 && r.Segments != nil {
							t.Fatalf("rank %d has segments", p)
						}
						if r.Length != ref.Length || r.Stats != res[0].Stats {
							t.Fatalf("rank %d: length %d stats %+v, rank 0: %d %+v", p, r.Length, r.Stats, ref.Length, res[0].Stats)
						}
					}
					want := int64(2)
					if opt.Shuffle {
						want = 4
					}
					if res[0].Stats.Rounds != want {
						t.Fatalf("%+v: %d rounds, want %d", opt, res[0].Stats.Rounds, want)
					}
				}
			}
		}
	}
}

func TestTopoCompressionShrinks(t *testing.T) {
	full := topoGen(3, 8, 3000)
	cuts := []int{0, 3, 4, 8}
	var sent [2]DistStats
	for i, compress := range []bool{false, true} {
		res, err := topoFakeRun(full, cuts, TopoOptions{Shuffle: true, Compress: compress})
		if err != nil {
			t.Fatal(err)
		}
		sent[i] = res[0].Stats
	}
	if sent[0].RawBytes != 0 || sent[1].RawBytes != sent[0].BytesSent || sent[1].BytesSent >= sent[0].BytesSent {
		t.Fatalf("uncompressed %+v, compressed %+v: want raw bytes equal to the uncompressed and fewer sent", sent[0], sent[1])
	}
	t.Logf("shuffle: %d bytes, %d compressed (%.2f)", sent[0].BytesSent, sent[1].BytesSent, float64(sent[1].BytesSent)/float64(sent[0].BytesSent))
}

func TestTopoEncode(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var es []topoEdge
	for i := 0; i < 300; i++ {
		s := rng.Int63n(1 << 40)
		es = append(es, topoEdge{S: s, E: s + rng.Int63n(1000), PrevStart: s - rng.Int63n(50), CallEnd: s + 2000 - rng.Int63n(5000),
			Call: rng.Int31(), Prev: rng.Int31(), Rank: rng.Int31n(5) - 2, Flags: rng.Int31n(4)})
	}
	es = append(es, topoEdge{S: math.MinInt64, E: math.MaxInt64, Call: math.MinInt32, Prev: math.MaxInt32, Rank: math.MinInt32})
	hdr := []byte("12345")
	for _, tc := range []struct {
		hdr []byte
		es  []topoEdge
	}{{nil, nil}, {hdr, nil}, {nil, es[:1]}, {hdr, es}, {nil, make([]topoEdge, 100)}} {
		for _, c := range []bool{false, true} {
			b := topoEncode(tc.hdr, tc.es, c)
			h, got, err := topoDecode(b, len(tc.hdr))
			if err != nil || !bytes.Equal(h, tc.hdr) || !reflect.DeepEqual(got, tc.es) && len(got)+len(tc.es) > 0 {
				t.Errorf("%d header bytes, %d edges, compress=%v: %q, %d edges, %v", len(tc.hdr), len(tc.es), c, h, len(got), err)
			}
		}
	}
	if b := topoEncode(nil, make([]topoEdge, 100), true); b[0] != 1 || len(b) > 100 {
		t.Errorf("100 zero edges compress to %d bytes (mode %d)", len(b), b[0])
	}
	for _, b := range [][]byte{{1, 2}, {7, 48, 0, 0, 0, 0, 0, 0, 0}, {1, 48, 0, 0, 0, 0, 0, 0, 0, 9}, {0, 47, 0, 0, 0, 0, 0, 0, 0}} {
		if _, _, err := topoDecode(b, 0); err == nil {
			t.Errorf("%v decoded", b)
		}
	}
}

// FuzzTopoDecode: any bytes a rank receives in a topo exchange decode to
// an error or to a part that encodes back to the same header and edges,
// plain and compressed; none panics or allocates past what it holds.
func FuzzTopoDecode(f *testing.F) {
	es := []topoEdge{{S: 5, E: 9, PrevStart: 1, CallEnd: 12, Call: 3, Prev: 2, Rank: 1, Flags: 2},
		{S: 1 << 40, E: 1<<40 + 7, Call: 9, Prev: 3, Rank: 0}}
	for _, c := range []bool{false, true} {
		f.Add(topoEncode([]byte("12345"), es, c), 5)
		f.Add(topoEncode(nil, make([]topoEdge, 40), c), 0)
	}
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0}, 0)
	f.Fuzz(func(t *testing.T, b []byte, hdrSize int) {
		if hdrSize < 0 || hdrSize > 64 {
			return
		}
		hdr, got, err := topoDecode(b, hdrSize)
		if err != nil || len(b) == 0 {
			return
		}
		if len(hdr) != hdrSize {
			t.Fatalf("%d header bytes, want %d", len(hdr), hdrSize)
		}
		for _, c := range []bool{false, true} {
			h2, again, err := topoDecode(topoEncode(hdr, got, c), hdrSize)
			if err != nil || !bytes.Equal(h2, hdr) || !reflect.DeepEqual(again, got) && len(again)+len(got) > 0 {
				t.Fatalf("compress=%v: %d edges came back as %d (%v)", c, len(got), len(again), err)
			}
		}
	})
}

// callVertex describes the vertices of these tests' graphs, S(c) = 2c and
// E(c) = 2c+1, to PathSegments.
func callVertex(time func(v int32) int64) func(v int32) (int32, bool, int64, bool) {
	return func(v int32) (int32, bool, int64, bool) { return v / 2, v%2 == 0, time(v), true }
}
