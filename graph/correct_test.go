package graph

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/cpath/cpath/trace"
)

// refCorrect is the clock correction as first written: full passes over
// the dependencies, each violation pushing the rest of its thread call by
// call. correctClocks must give the same times, violation count and
// dropped dependencies.
func refCorrect(start, end []int64, prev []int32, deps []dep, isMsgLS []bool) (violations int, bad []bool) {
	next := make([]int32, len(start))
	for i := range next {
		next[i] = -1
	}
	for c, p := range prev {
		if p >= 0 {
			next[p] = int32(c)
		}
	}
	for i, d := range deps {
		if isMsgLS[i] && end[d.done] < start[d.cause] {
			violations++
		}
	}
	for pass := 0; pass < 50; pass++ {
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
	return violations, bad
}

// prevs gives each call's previous call on its thread, from Thread.
func prevs(g *PAG) []int32 {
	prev := make([]int32, len(g.Op))
	for r := 0; r < g.Ranks; r++ {
		last := map[uint16]int32{}
		for c := g.RankStart[r]; c < g.RankStart[r+1]; c++ {
			p, ok := last[g.Thread[c]]
			if !ok {
				p = -1
			}
			prev[c], last[g.Thread[c]] = p, c
		}
	}
	return prev
}

// ordered says of each rank whether its calls are in time order, none
// overlapping.
func ordered(g *PAG) []bool {
	ok := make([]bool, g.Ranks)
	for r := range ok {
		ok[r] = true
		for c := g.RankStart[r]; c < g.RankStart[r+1]; c++ {
			if g.End[c] < g.Start[c] || c > g.RankStart[r] && g.Start[c] < g.End[c-1] {
				ok[r] = false
			}
		}
	}
	return ok
}

// randomBuilder makes a run of P ranks with n calls each and random
// messages and collective dependencies between them; threads are in order
// unless messy, in which case some ranks have two threads and calls that
// overlap.
func randomBuilder(rng *rand.Rand, P, n int, messy bool) *builder {
	N := P * n
	g := &PAG{Ranks: P, RankStart: make([]int32, P+1), Start: make([]int64, N), End: make([]int64, N),
		Op: make([]trace.Op, N), Thread: make([]uint16, N)}
	multi := make([]bool, P)
	for r := 0; r < P; r++ {
		g.RankStart[r+1] = int32((r + 1) * n)
		t := rng.Int63n(1000)
		threads := 1
		if messy && r%2 == 1 {
			threads = 2
			multi[r] = true
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
	b := &builder{g: g, multi: multi, ordered: ordered(g)}
	call := func(r int) int32 { return int32(r*n + rng.Intn(n)) }
	for k := 0; k < N/3; k++ {
		src, dst := rng.Intn(P), rng.Intn(P)
		if src == dst {
			continue
		}
		sp, rp := call(src), call(dst)
		m := msgPair{sendPost: sp, sendDone: sp, recvPost: rp, recvDone: rp, sync: rng.Intn(4) == 0}
		if rng.Intn(2) == 0 && sp+3 < g.RankStart[src+1] {
			m.sendDone = sp + int32(rng.Intn(3))
		}
		b.msgs = append(b.msgs, m)
	}
	// Messages in runs of one source and destination, as match makes them:
	// the k-th send with the k-th receive, both in posting order.
	slices.SortStableFunc(b.msgs, func(x, y msgPair) int {
		if a, b := int(x.sendPost)/n, int(y.sendPost)/n; a != b {
			return a - b
		}
		return int(x.recvPost)/n - int(y.recvPost)/n
	})
	for i := 0; i < len(b.msgs); {
		j := i
		src, dst := int(b.msgs[i].sendPost)/n, int(b.msgs[i].recvPost)/n
		run := msgRun{src: int32(src), dst: int32(dst), lo: int32(i)}
		for ; j < len(b.msgs) && int(b.msgs[j].sendPost)/n == src && int(b.msgs[j].recvPost)/n == dst; j++ {
			run.sync = run.sync || b.msgs[j].sync
		}
		ms := b.msgs[i:j]
		sends, recvs := slices.Clone(ms), slices.Clone(ms)
		slices.SortStableFunc(sends, func(x, y msgPair) int { return int(x.sendPost - y.sendPost) })
		slices.SortStableFunc(recvs, func(x, y msgPair) int { return int(x.recvPost - y.recvPost) })
		for k := range ms {
			ms[k].sendPost, ms[k].sendDone, ms[k].sync = sends[k].sendPost, sends[k].sendDone, sends[k].sync
			ms[k].recvPost, ms[k].recvDone = recvs[k].recvPost, recvs[k].recvDone
		}
		run.hi = int32(j)
		b.runs = append(b.runs, run)
		i = j
	}
	for k := 0; k < N/10; k++ {
		b.coll = append(b.coll, dep{call(rng.Intn(P)), call(rng.Intn(P)), WaitAtNxN})
	}
	return b
}

func TestCorrectClocksMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		P, n := 2+rng.Intn(4), 1+rng.Intn(1200)
		b := randomBuilder(rng, P, n, iter%3 == 2)
		g := b.g
		var deps []dep
		var isLS []bool
		for i := 0; i < b.ndeps(); i++ {
			if done, cause, ok := b.dep(i); ok {
				deps = append(deps, dep{done, cause, 0})
				isLS = append(isLS, i < 2*len(b.msgs) && i&1 == 0)
			}
		}
		start, end := slices.Clone(g.Start), slices.Clone(g.End)
		viol, bad := refCorrect(start, end, prevs(g), deps, isLS)
		b.correctClocks()
		if !slices.Equal(start, g.Start) || !slices.Equal(end, g.End) {
			for c := range start {
				if start[c] != g.Start[c] || end[c] != g.End[c] {
					t.Fatalf("iter %d (P=%d n=%d): call %d: [%d,%d], want [%d,%d]", iter, P, n, c, g.Start[c], g.End[c], start[c], end[c])
				}
			}
		}
		if viol != g.ClockViolations {
			t.Fatalf("iter %d: %d clock violations, want %d", iter, g.ClockViolations, viol)
		}
		nbad, j := 0, 0
		for i := 0; i < b.ndeps(); i++ {
			if _, _, ok := b.dep(i); !ok {
				continue
			}
			got := b.dropped != nil && b.dropped.has(i)
			if got != bad[j] {
				t.Fatalf("iter %d: dependency %d dropped %v, want %v", iter, i, got, bad[j])
			}
			if bad[j] {
				nbad++
			}
			j++
		}
		if nbad != g.Inconsistent {
			t.Fatalf("iter %d: %d inconsistent, want %d", iter, g.Inconsistent, nbad)
		}
	}
}

// TestCorrectClocksPassLimit: a chain of dependencies each uncovered by
// the correction of the next needs a pass per link; past 50 passes the
// remaining violations are dropped as contradictions, as the reference does.
// Link j waits on rank j for a call of rank j+1 that follows the call
// link j+1 completes; only the last link is violated to begin with.
func TestCorrectClocksPassLimit(t *testing.T) {
	for _, K := range []int{10, 49, 50, 51, 60, 200} {
		for _, twoThreads := range []bool{false, true} {
			P := K + 1
			n := 3
			N := P * n
			g := &PAG{Ranks: P, RankStart: make([]int32, P+1), Start: make([]int64, N), End: make([]int64, N),
				Op: make([]trace.Op, N), Thread: make([]uint16, N)}
			multi := make([]bool, P)
			for r := 0; r < P; r++ {
				g.RankStart[r+1] = int32((r + 1) * n)
				c := int32(r * n)
				g.Start[c], g.End[c] = 0, 20
				g.Start[c+1], g.End[c+1] = 20, 25
				g.Start[c+2], g.End[c+2] = 30, 35
				if twoThreads && r%2 == 1 {
					g.Thread[c+2], multi[r] = 1, true
				}
			}
			g.Start[N-2], g.End[N-2] = 1e9, 1e9 // a late cause for the last link
			b := &builder{g: g, multi: multi, ordered: ordered(g)}
			prev := prevs(g)
			for j := 0; j < K; j++ {
				b.coll = append(b.coll, dep{int32(j * n), int32((j+1)*n + 1), WaitAtNxN})
			}
			isLS := make([]bool, len(b.coll))
			start, end := slices.Clone(g.Start), slices.Clone(g.End)
			_, bad := refCorrect(start, end, prev, b.coll, isLS)
			b.correctClocks()
			if !slices.Equal(start, g.Start) || !slices.Equal(end, g.End) {
				t.Fatalf("K=%d two threads %v: times differ from the reference", K, twoThreads)
			}
			nbad := 0
			for i := range bad {
				if got := b.dropped != nil && b.dropped.has(i); got != bad[i] {
					t.Fatalf("K=%d: dependency %d dropped %v, want %v", K, i, got, bad[i])
				}
				if bad[i] {
					nbad++
				}
			}
			if nbad != g.Inconsistent || (K > 50) != (nbad > 0) {
				t.Fatalf("K=%d: %d inconsistent, reference %d", K, g.Inconsistent, nbad)
			}
		}
	}
}
