package graph

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/cpath/cpath/internal/mpix"
)

// refCorrect is the clock correction as first written: full passes over
// the dependencies (at most passes of them), each violation pushing the
// rest of its thread call by call. correctClocks must give the same times
// and dropped dependencies.
func refCorrect(start, end []int64, prev []int32, deps []dep, passes int) (bad []bool) {
	next := make([]int32, len(start))
	for i := range next {
		next[i] = -1
	}
	for c, p := range prev {
		if p >= 0 {
			next[p] = int32(c)
		}
	}
	for pass := 0; pass < passes; pass++ {
		changed := false
		for _, d := range deps {
			need := start[d.cause]
			if end[d.done] >= need {
				continue
			}
			changed = true
			end[d.done] = need
			for c, w := d.done, next[d.done]; w >= 0 && start[w] < end[c]; c, w = w, next[w] {
				start[w] += end[c] - start[w]
				if end[w] < start[w] {
					end[w] = start[w]
				}
			}
		}
		if !changed {
			break
		}
	}
	bad = make([]bool, len(deps))
	for i, d := range deps {
		bad[i] = end[d.done] < start[d.cause]
	}
	return bad
}

// onePass is how many passes correctClocks makes over the dependencies in
// a job of one rank before it gives up: rounds of passes.
const onePass = 50 * 50

// prevs gives each call's previous call on its thread, from Thread.
func prevs(g *rankCalls) []int32 {
	prev := make([]int32, len(g.Op))
	w := g.walk()
	for c := range prev {
		prev[c] = w.prev(int32(c))
	}
	return prev
}

// ordered says of each rank whether its calls are in time order, none
// overlapping.
func ordered(g *rankCalls) []bool {
	ok := make([]bool, g.ranks)
	for r := range ok {
		ok[r] = true
		for c := g.rankStart[r]; c < g.rankStart[r+1]; c++ {
			if g.End[c] < g.Start[c] || c > g.rankStart[r] && g.Start[c] < g.End[c-1] {
				ok[r] = false
			}
		}
	}
	return ok
}

// oneRankBuilder is a builder of a job of one analyzer rank that owns the
// P logged ranks of g, with the dependencies deps.
func oneRankBuilder(g *rankCalls, deps []dep) *builder {
	N := int32(len(g.Op))
	g.ordered = ordered(g)
	p := &PAG{Ranks: g.ranks, RankStart: g.rankStart, PartRanks: []int{0, g.ranks}, RankHi: g.ranks, CallHi: N, Calls: g.Calls}
	return &builder{p: p, c: &mpix.Single{}, lg: g, deps: deps}
}

// randomCalls makes a run of P ranks with n calls each; threads are in
// order unless messy, in which case some ranks have two threads and calls
// that overlap.
func randomCalls(rng *rand.Rand, P, n int, messy bool) *rankCalls {
	N := P * n
	g := &rankCalls{ranks: P, rankStart: make([]int32, P+1), Calls: makeCalls(N), multi: make([]bool, P)}
	for r := 0; r < P; r++ {
		g.rankStart[r+1] = int32((r + 1) * n)
		t := rng.Int63n(1000)
		threads := 1
		if messy && r%2 == 1 {
			threads = 2
			g.multi[r] = true
		}
		for i := 0; i < n; i++ {
			c := int32(r*n + i)
			t += rng.Int63n(50)
			if messy && rng.Intn(10) == 0 {
				t -= rng.Int63n(30)
			}
			g.Start[c] = t
			t += rng.Int63n(20)
			g.End[c] = t
			g.Thread[c] = uint16(rng.Intn(threads))
		}
	}
	return g
}

// TestCorrectClocksMatchesReference: on random runs with random
// dependencies between ranks, the clock correction gives the reference's
// times and drops the same dependencies.
func TestCorrectClocksMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		P, n := 2+rng.Intn(4), 1+rng.Intn(1200)
		g := randomCalls(rng, P, n, iter%3 == 2)
		call := func(r int) int32 { return int32(r*n + rng.Intn(n)) }
		var deps []dep
		for k := 0; k < P*n/2; k++ {
			a, b := rng.Intn(P), rng.Intn(P)
			if a != b {
				deps = append(deps, dep{done: call(a), cause: call(b), kind: WaitKind(rng.Intn(int(NumWaitKinds)))})
			}
		}
		start, end := slices.Clone(g.Start), slices.Clone(g.End)
		bad := refCorrect(start, end, prevs(g), deps, onePass)
		b := oneRankBuilder(g, deps)
		if err := b.correctClocks(); err != nil {
			t.Fatal(err)
		}
		for c := range start {
			if start[c] != g.Start[c] || end[c] != g.End[c] {
				t.Fatalf("iter %d (P=%d n=%d): call %d: [%d,%d], want [%d,%d]", iter, P, n, c, g.Start[c], g.End[c], start[c], end[c])
			}
		}
		nbad := 0
		for i := range deps {
			if b.deps[i].dropped != bad[i] {
				t.Fatalf("iter %d: dependency %d dropped %v, want %v", iter, i, b.deps[i].dropped, bad[i])
			}
			if bad[i] {
				nbad++
			}
		}
		if nbad != b.p.Inconsistent {
			t.Fatalf("iter %d: %d inconsistent, want %d", iter, b.p.Inconsistent, nbad)
		}
	}
}

// TestCorrectClocksChain: a chain of dependencies each uncovered by the
// correction of the next needs a pass per link; the correction follows
// it to the end as the reference does. Link j waits on rank j for a call
// of rank j+1 that follows the call link j+1 completes; only the last
// link is violated to begin with.
func TestCorrectClocksChain(t *testing.T) {
	for _, K := range []int{10, 49, 50, 51, 60, 200} {
		for _, twoThreads := range []bool{false, true} {
			P := K + 1
			n := 3
			g := &rankCalls{ranks: P, rankStart: make([]int32, P+1), Calls: makeCalls(P * n), multi: make([]bool, P)}
			for r := 0; r < P; r++ {
				g.rankStart[r+1] = int32((r + 1) * n)
				c := int32(r * n)
				g.Start[c], g.End[c] = 0, 20
				g.Start[c+1], g.End[c+1] = 20, 25
				g.Start[c+2], g.End[c+2] = 30, 35
				if twoThreads && r%2 == 1 {
					g.Thread[c+2], g.multi[r] = 1, true
				}
			}
			g.Start[P*n-2], g.End[P*n-2] = 1e9, 1e9 // a late cause for the last link
			var deps []dep
			for j := 0; j < K; j++ {
				deps = append(deps, dep{done: int32(j * n), cause: int32((j+1)*n + 1), kind: WaitAtNxN})
			}
			start, end := slices.Clone(g.Start), slices.Clone(g.End)
			bad := refCorrect(start, end, prevs(g), deps, onePass)
			b := oneRankBuilder(g, deps)
			if err := b.correctClocks(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(start, g.Start) || !slices.Equal(end, g.End) {
				t.Fatalf("K=%d two threads %v: times differ from the reference", K, twoThreads)
			}
			for i := range bad {
				if b.deps[i].dropped != bad[i] || bad[i] {
					t.Fatalf("K=%d: dependency %d dropped %v, reference %v", K, i, b.deps[i].dropped, bad[i])
				}
			}
			if g.End[0] != 1e9 {
				t.Fatalf("K=%d: the chain was not followed to its first link (%d)", K, g.End[0])
			}
		}
	}
}
