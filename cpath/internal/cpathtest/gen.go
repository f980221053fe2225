package cpathtest

import (
	"math/rand"
	"sort"

	"github.com/cpath/cpath/graph"
)

// Edge is an edge u -> v of weight w.
type Edge struct {
	U, V int32
	W    int64
}

// CSR gives the compressed sparse rows by destination of n vertices and
// edges es, in the form cpath.Graph takes.
func CSR(n int, es []Edge) (inStart, inSrc []int32, inWeight graph.Weights) {
	inStart, inSrc, inWeight = make([]int32, n+1), make([]int32, len(es)), graph.MakeWeights(len(es))
	for _, e := range es {
		inStart[e.V+1]++
	}
	for v := 0; v < n; v++ {
		inStart[v+1] += inStart[v]
	}
	next := append([]int32(nil), inStart[:n]...)
	for _, e := range es {
		inSrc[next[e.V]] = e.U
		inWeight.Set(next[e.V], e.W)
		next[e.V]++
	}
	return inStart, inSrc, inWeight
}

// RandomDAG: edges go from lower to higher rank in a random order of the
// vertices (the identity half the time), so ids are not a topological
// order in general; weights come from a small set to force ties.
func RandomDAG(rng *rand.Rand, n int) ([]Edge, int32) {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	if rng.Intn(2) == 0 {
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	var weight func() int64
	switch rng.Intn(5) {
	case 0:
		weight = func() int64 { return int64(rng.Intn(3)) } // mostly ties and zeros
	case 1:
		weight = func() int64 { return []int64{0, 1, 2, 3, 5, 8, 100}[rng.Intn(7)] }
	case 2:
		weight = func() int64 { return rng.Int63n(1_000_000) }
	case 3:
		// Weights of 2^31 ns and more are stored apart (graph.Weights):
		// gathering and exchanging shares must renumber them.
		weight = func() int64 { return []int64{0, 1, 3e9, 5e9, 1 << 40}[rng.Intn(5)] }
	default:
		weight = func() int64 { return 7 }
	}
	var es []Edge
	if n > 1 {
		m := rng.Intn(3*n + 1)
		for k := 0; k < m; k++ {
			i, j := rng.Intn(n), rng.Intn(n)
			if rng.Intn(3) == 0 && i+1 < n { // short hops make long paths
				j = i + 1 + rng.Intn(min(3, n-i-1))
			}
			if i == j {
				continue
			}
			if i > j {
				i, j = j, i
			}
			es = append(es, Edge{perm[i], perm[j], weight()})
		}
	}
	target := perm[rng.Intn(n)]
	if rng.Intn(2) == 0 { // the last vertex in topological order has the most ancestors
		target = perm[n-1]
	}
	return es, target
}

// Chain is 0 -> 1 -> ... -> n-1 with weights in [0,1000), and for 1% of
// the vertices a skip edge from up to 50 vertices back. If exact, the skip
// edges' weights equal the chain's between their ends, as time differences
// do in a PAG, and the label-correcting searches never correct; otherwise
// they are equal, larger or smaller at random (a skip edge lighter than
// the chain makes the largest-Dist-first order process the rest of the
// chain twice: keep n small).
func Chain(rng *rand.Rand, n int, exact bool) []Edge {
	es := make([]Edge, 0, n+n/50)
	var sum []int64 // prefix sums of the chain, to make ties
	sum = append(sum, 0)
	for v := 1; v < n; v++ {
		w := rng.Int63n(1000)
		es = append(es, Edge{int32(v - 1), int32(v), w})
		sum = append(sum, sum[v-1]+w)
		if v >= 2 && rng.Intn(100) == 0 {
			u := max(0, v-2-rng.Intn(49))
			w := sum[v] - sum[u] // a tie with the chain
			switch k := rng.Intn(3); {
			case exact:
			case k == 0:
				w += 1 + rng.Int63n(100)
			case k == 1:
				w = max(0, w-1-rng.Int63n(100))
			}
			es = append(es, Edge{int32(u), int32(v), w})
		}
	}
	return es
}

// PAGLike is shaped like graph/'s PAG: procs threads of calls, numbered by
// process, S(c) = 2c, E(c) = 2c+1, a call edge S->E and a program edge
// E(c)->S(c+1), and for 90% of the calls a communication edge from the
// start of the latest earlier call of another process. Weights are time
// differences, with up to ±clockErr on communication edges; the target is
// the last event.
func PAGLike(rng *rand.Rand, calls, procs int, clockErr int64) (n int, es []Edge, target int32) {
	per := max(1, calls/procs)
	n = 2 * per * procs
	start := make([]int64, per*procs)
	end := make([]int64, per*procs)
	for r := 0; r < procs; r++ {
		t := rng.Int63n(1000)
		for i := 0; i < per; i++ {
			c := r*per + i
			t += rng.Int63n(2000)
			start[c] = t
			t += 1 + rng.Int63n(1000)
			if rng.Intn(100) == 0 {
				t += 50_000
			}
			end[c] = t
		}
	}
	target = 1
	for r := 0; r < procs; r++ {
		for i := 0; i < per; i++ {
			c := r*per + i
			s, e := int32(2*c), int32(2*c+1)
			es = append(es, Edge{s, e, end[c] - start[c]})
			if i > 0 {
				es = append(es, Edge{e - 2, s, start[c] - end[c-1]})
			}
			if end[c] > end[target/2] {
				target = e
			}
			if procs == 1 || rng.Intn(10) == 0 {
				continue
			}
			o := rng.Intn(procs - 1)
			if o >= r {
				o++
			}
			row := start[o*per : (o+1)*per]
			j := sort.Search(per, func(j int) bool { return row[j] >= end[c] }) - 1
			if j < 0 {
				continue
			}
			w := end[c] - row[j]
			if clockErr > 0 {
				w = max(0, w+rng.Int63n(2*clockErr+1)-clockErr)
			}
			es = append(es, Edge{int32(2 * (o*per + j)), e, w})
		}
	}
	return n, es, target
}

// TopoRun makes a deterministic run of steps: in each, every thread of
// every rank (rank 0 has three, rank 2 none when there are more than 3
// ranks) computes and calls MPI for random lengths (some zero, rare clock
// error, long waits); at random steps (one in six) all calls end
// together, as in a barrier.
func TopoRun(seed int64, ranks, calls int) (rankStart []int32, start, end []int64, prev []int32) {
	rng := rand.New(rand.NewSource(seed))
	type call struct {
		s, e   int64
		thread int
	}
	threads := func(r int) int {
		switch {
		case r == 0:
			return 3
		case r == 2 && ranks > 3:
			return 0
		}
		return 1
	}
	per := make([][]call, ranks)
	clock := make([][]int64, ranks)
	for r := range clock {
		clock[r] = make([]int64, threads(r))
		for k := range clock[r] {
			clock[r][k] = rng.Int63n(100)
		}
	}
	for step := 0; step < calls; step++ {
		barrier := rng.Intn(6) == 0
		at := make([]int, ranks) // where this step's calls start in per[r]
		var latest int64
		for r := 0; r < ranks; r++ {
			at[r] = len(per[r])
			for k := range clock[r] {
				comp := rng.Int63n(1000)
				switch rng.Intn(20) {
				case 0:
					comp = 0
				case 1:
					comp = -rng.Int63n(5) // clock error
				}
				s := clock[r][k] + comp
				e := s + rng.Int63n(300)
				switch rng.Intn(10) {
				case 0:
					e = s
				case 1:
					e += rng.Int63n(3000) // a long wait
				}
				per[r] = append(per[r], call{s, e, k})
				latest = max(latest, s)
			}
		}
		for r := 0; r < ranks; r++ {
			for i := at[r]; i < len(per[r]); i++ {
				c := &per[r][i]
				if barrier {
					c.e = latest + rng.Int63n(3)
				}
				clock[r][c.thread] = c.e
			}
		}
	}
	rankStart = []int32{0}
	for r := 0; r < ranks; r++ {
		cs := per[r]
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].s < cs[j].s })
		last := make([]int32, len(clock[r]))
		for k := range last {
			last[k] = -1
		}
		for _, c := range cs {
			id := int32(len(start))
			start, end, prev = append(start, c.s), append(end, c.e), append(prev, last[c.thread])
			last[c.thread] = id
		}
		rankStart = append(rankStart, int32(len(start)))
	}
	return rankStart, start, end, prev
}

// Cuts splits ranks logged ranks unevenly over P analyzer ranks (the
// first takes most, some may take none).
func Cuts(ranks, P int, rng *rand.Rand) []int {
	cuts := make([]int, P+1)
	for p := 1; p < P; p++ {
		cuts[p] = rng.Intn(ranks + 1)
	}
	cuts[P] = ranks
	sort.Ints(cuts)
	return cuts
}

// SplitDAG is a graph shaped like the full PAG cut at global
// synchronisation points, with what Split needs to know about it: k
// splits, about n vertices in all (each split's vertices at random ids,
// so every vertex range holds some of every split), vertex 0 the virtual
// start (in split 0, no in-edges, out-edges to several vertices of split
// 0). Inside a split the vertices are in a random topological order; each
// has 1-3 in-edges from recent vertices in that order (sometimes any
// earlier one), one in twenty is a hub with 5-20 in-edges; the split's
// exit sits in the later half of the order, and the vertices after it
// cannot reach it (dead ends: some have in-edges from the exit itself).
// The exit of split j-1 leads into split j through 1-4 cross edges, one
// of them into the first vertex of its order. Weights come from a small
// set (ties) or, for wide, a large range. The target is the last exit.
func SplitDAG(rng *rand.Rand, n, k int, wide bool) (es []Edge, split, exit []int32, target int32) {
	n = max(n, 2*k+1)
	split = make([]int32, n)
	// Ids: 0 is the start; the others get splits by a random permutation,
	// the first 2k of it giving each split at least two vertices.
	perm := rng.Perm(n - 1)
	for i, p := range perm {
		s := i % k
		if i >= 2*k {
			s = rng.Intn(k)
		}
		split[p+1] = int32(s)
	}
	order := make([][]int32, k) // by split, a topological order
	order[0] = append(order[0], 0)
	for i := range perm {
		v := int32(perm[i] + 1)
		order[split[v]] = append(order[split[v]], v)
	}
	for s := range order {
		o := order[s]
		start := 0
		if s == 0 {
			start = 1 // the start vertex stays first
		}
		rng.Shuffle(len(o)-start, func(i, j int) { o[start+i], o[start+j] = o[start+j], o[start+i] })
	}
	weight := func() int64 { return []int64{0, 1, 2, 3, 5, 8}[rng.Intn(6)] }
	if wide {
		weight = func() int64 { return rng.Int63n(1_000_000) }
	}
	exit = make([]int32, k)
	for s, o := range order {
		m := len(o)
		at := m - 1 - rng.Intn(max(1, m/4)) // the exit's position
		if m > 1 && at < 1 {
			at = 1
		}
		exit[s] = o[at]
		for i := 1; i < m; i++ {
			deg := 1 + rng.Intn(3)
			if rng.Intn(20) == 0 {
				deg = 5 + rng.Intn(16)
			}
			for d := 0; d < deg; d++ {
				j := i - 1 - rng.Intn(min(i, 8))
				if rng.Intn(5) == 0 {
					j = rng.Intn(i)
				}
				es = append(es, Edge{o[j], o[i], weight()})
			}
			if i > at && rng.Intn(3) == 0 {
				es = append(es, Edge{o[at], o[i], weight()}) // the exit into a dead end
			}
		}
		if s == 0 {
			for d := rng.Intn(4); d > 0 && m > 1; d-- {
				es = append(es, Edge{0, o[1+rng.Intn(m-1)], weight()}) // launch edges
			}
		} else {
			into := []int32{o[0]}
			for d := rng.Intn(4); d > 0; d-- {
				into = append(into, o[rng.Intn(max(1, at))])
			}
			for _, v := range into {
				es = append(es, Edge{exit[s-1], v, weight()})
			}
		}
	}
	rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	return es, split, exit, exit[k-1]
}

// FullPAG is shaped like the full PAG of a run of procs processes, steps
// calls each, in lockstep: vertex 0 is the virtual start with a launch
// edge to each process's first call; call i of process r has S = 1 +
// 2(r*steps+i) and E = S+1, a program edge from the previous call's E
// (the computation) and, for a point-to-point call, a call edge S->E
// (its own time, waiting removed) and 1-3 communication edges from the S
// of calls of other processes at the same or the previous step (a
// receive or a wait for several requests; weight: the completion minus
// the later start). Every every-th step is a global collective, routed
// through a hub vertex (ids after the calls): S -> hub (0) for each
// member and hub -> E (the completion minus the last start); those hubs
// are the exits of the splits. Weights are time differences (no clock
// error), as in a PAG. The target, the last split's exit, is the E of
// the call that ends last after the last collective.
func FullPAG(rng *rand.Rand, procs, steps, every int) (es []Edge, split, exit []int32, target int32) {
	es, split, exit, target, _ = FullPAGTime(rng, procs, steps, every)
	return es, split, exit, target
}

// FullPAGTime is FullPAG (the same graph from the same rng) with each
// vertex's time, as graph/ gives them: 0 for the start vertex, a call's
// start and end for S and E, the last member's start for a hub. They are
// consistent with the weights: every edge u->v has Time[u] <= Time[v] and
// a weight of at most Time[v]-Time[u] (equal but for call and
// communication edges, whose waiting is removed).
func FullPAGTime(rng *rand.Rand, procs, steps, every int) (es []Edge, split, exit []int32, target int32, time []int64) {
	procs, steps, every = max(1, procs), max(2, steps), max(1, every)
	ncoll := (steps - 1) / every // collectives at steps every-1, 2every-1, ... before the last
	n := 1 + 2*procs*steps + ncoll
	split = make([]int32, n)
	exit = make([]int32, 0, ncoll+1)
	S := func(r, i int) int32 { return int32(1 + 2*(r*steps+i)) }
	st := make([][]int64, procs) // start times by process, step
	en := make([][]int64, procs)
	for r := range st {
		st[r], en[r] = make([]int64, steps), make([]int64, steps)
	}
	k := int32(0)
	var hubTime []int64
	last := make([]int64, procs) // each process's clock
	first := make([]int, procs)  // each process's first step of the current split
	for i := 0; i < steps; i++ {
		for r := 0; r < procs; r++ {
			comp := rng.Int63n(1000)
			if rng.Intn(50) == 0 {
				comp += 20_000 // imbalance
			}
			st[r][i] = last[r] + comp
			if i == 0 {
				es = append(es, Edge{0, S(r, 0), st[r][0]})
			} else {
				es = append(es, Edge{S(r, i-1) + 1, S(r, i), comp})
			}
			split[S(r, i)], split[S(r, i)+1] = k, k
		}
		if i%every == every-1 && int(k) < ncoll {
			hub := int32(1 + 2*procs*steps + int(k))
			split[hub] = k
			latest := int64(0)
			for r := 0; r < procs; r++ {
				latest = max(latest, st[r][i])
				es = append(es, Edge{S(r, i), hub, 0})
			}
			hubTime = append(hubTime, latest)
			k++
			for r := 0; r < procs; r++ {
				en[r][i] = latest + 1 + rng.Int63n(50)
				es = append(es, Edge{hub, S(r, i) + 1, en[r][i] - latest})
				split[S(r, i)+1] = k
				last[r], first[r] = en[r][i], i+1
			}
			exit = append(exit, hub)
			continue
		}
		for r := 0; r < procs; r++ {
			own := 1 + rng.Int63n(200)
			end := st[r][i] + own
			type from struct {
				u int32
				s int64
			}
			var fs []from
			for d := rng.Intn(4); d > 0 && procs > 1; d-- { // 0-3 partners
				o := rng.Intn(procs - 1)
				if o >= r {
					o++
				}
				j := i
				if i > first[r] && i > 0 && rng.Intn(2) == 0 {
					j = i - 1 // a recent call of the same split
				}
				s := st[o][j] + rng.Int63n(100)
				fs = append(fs, from{S(o, j), st[o][j]})
				end = max(end, s+1+rng.Int63n(300))
			}
			en[r][i] = end
			es = append(es, Edge{S(r, i), S(r, i) + 1, min(own, end-st[r][i])})
			for _, f := range fs {
				es = append(es, Edge{f.u, S(r, i) + 1, end - max(st[r][i], f.s)})
			}
			last[r] = end
		}
	}
	best := 0
	for r := 1; r < procs; r++ {
		if en[r][steps-1] > en[best][steps-1] {
			best = r
		}
	}
	target = S(best, steps-1) + 1
	exit = append(exit, target)
	time = make([]int64, n)
	for r := 0; r < procs; r++ {
		for i := 0; i < steps; i++ {
			time[S(r, i)], time[S(r, i)+1] = st[r][i], en[r][i]
		}
	}
	copy(time[1+2*procs*steps:], hubTime)
	return es, split, exit, target, time
}
