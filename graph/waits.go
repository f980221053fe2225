package graph

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/cpath/cpath/trace"
)

// dep says that call done cannot complete before call cause has started:
// the receive of a message needs its send, a synchronous send its receive,
// a collective member the member (or root) it needs data from.
//
// The dependencies are numbered, in the order the clock correction takes
// them: 2k is message k's (the receive needs the send: Late Sender), 2k+1
// its synchronous send's (Late Receiver; none for other sends), then the
// collectives' (builder.coll) from 2·len(msgs) on. Only the collectives'
// are stored; the messages' are read from msgs.
type dep struct {
	done, cause int32
	kind        WaitKind
}

func (b *builder) ndeps() int { return 2*len(b.msgs) + len(b.coll) }

// dep returns dependency i; ok is false for the Late Receiver slot of a
// send that does not wait for its receiver.
func (b *builder) dep(i int) (done, cause int32, ok bool) {
	if k := i >> 1; k < len(b.msgs) {
		m := &b.msgs[k]
		if i&1 == 0 {
			return m.recvDone, m.sendPost, true
		}
		return m.sendDone, m.recvPost, m.sync
	}
	d := &b.coll[i-2*len(b.msgs)]
	return d.done, d.cause, true
}

// collKind classifies a collective by its data flow (SPEC §3).
func collKind(op trace.Op) (kind WaitKind, flow byte) {
	switch op {
	case trace.OpBarrier, trace.OpIbarrier:
		return WaitAtBarrier, 'N'
	case trace.OpBcast, trace.OpIbcast, trace.OpScatter, trace.OpIscatter, trace.OpScatterv, trace.OpIscatterv:
		return LateBroadcast, 'B'
	case trace.OpReduce, trace.OpIreduce, trace.OpGather, trace.OpIgather, trace.OpGatherv, trace.OpIgatherv:
		return EarlyReduce, 'R'
	case trace.OpScan, trace.OpIscan:
		return WaitAtNxN, 'S'
	case trace.OpExscan, trace.OpIexscan:
		return WaitAtNxN, 'E'
	}
	// Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block), their
	// I-forms, and communicator constructors: everyone needs everyone.
	return WaitAtNxN, 'N'
}

// dependencies lists the collectives' dependencies (the messages' are
// implicit in msgs).
func (b *builder) dependencies() {
	g := b.g
	n := 0
	for _, c := range g.Colls {
		n += int(c.N)
	}
	b.coll = make([]dep, 0, n)
	cd := collDepper{ranks: g.Ranks, comms: g.Comms, rank: g.Rank}
	var start []int64
	for k := range g.Colls {
		c := &g.Colls[k]
		post := g.CollPost[c.First : c.First+c.N]
		done := g.CollDone[c.First : c.First+c.N]
		start = start[:0]
		for _, x := range post {
			start = append(start, g.Start[x])
		}
		for _, d := range cd.deps(c, post, start) {
			b.coll = append(b.coll, dep{done[d.member], post[d.cause], d.kind})
		}
	}
}

// collDep says that member `member` of a collective instance could not
// complete before member `cause` started (indices among its members).
type collDep struct {
	member, cause int
	kind          WaitKind
}

// collDepper finds the dependencies of collective instances by their data
// flow (SPEC §3), from when each member started.
type collDepper struct {
	ranks int
	comms []CommInfo
	rank  func(c int32) int
	pos   [][]int32 // by communicator: the local rank of each world rank (0 if not a member)
	rk    []int32
	out   []collDep
}

// deps returns instance c's dependencies; post are its members' calls
// (in call order), start when each started. The result is reused by the
// next call.
func (cd *collDepper) deps(c *Collective, post []int32, start []int64) []collDep {
	kind, flow := collKind(c.Op)
	latest := func(keep func(i int) bool) int {
		best := -1
		for i := range post {
			if keep(i) && (best < 0 || start[i] > start[best]) {
				best = i
			}
		}
		return best
	}
	cd.out = cd.out[:0]
	cd.rk = cd.rk[:0]
	rootIdx := -1
	for i := range post {
		r := int32(cd.rank(post[i]))
		cd.rk = append(cd.rk, r)
		if r == c.Root {
			rootIdx = i
		}
	}
	switch flow {
	case 'N':
		last := latest(func(int) bool { return true })
		for i := range post {
			if i != last {
				cd.out = append(cd.out, collDep{i, last, kind})
			}
		}
	case 'B':
		if rootIdx >= 0 {
			for i := range post {
				if i != rootIdx {
					cd.out = append(cd.out, collDep{i, rootIdx, kind})
				}
			}
		}
	case 'R':
		if rootIdx >= 0 {
			if last := latest(func(i int) bool { return i != rootIdx }); last >= 0 {
				cd.out = append(cd.out, collDep{rootIdx, last, kind})
			}
		}
	case 'S', 'E':
		// Members in the communicator's rank order: each needs the ranks
		// before it (and itself, for Scan).
		if cd.pos == nil {
			cd.pos = make([][]int32, len(cd.comms))
		}
		if cd.pos[c.Comm] == nil {
			p := make([]int32, cd.ranks)
			for i, w := range cd.comms[c.Comm].Members {
				if w >= 0 && int(w) < cd.ranks {
					p[w] = int32(i)
				}
			}
			cd.pos[c.Comm] = p
		}
		p := cd.pos[c.Comm]
		for i := range post {
			me := p[cd.rk[i]]
			cause := latest(func(j int) bool {
				q := p[cd.rk[j]]
				return q < me || (flow == 'S' && q == me)
			})
			if cause >= 0 && cause != i {
				cd.out = append(cd.out, collDep{i, cause, kind})
			}
		}
	}
	return cd.out
}

type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (s bitset) set(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s bitset) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }

// correctClocks enforces the clock condition: no call completes before
// what it needed has started. A violation (clock error larger than the
// message latency) is corrected by moving the completion forward, and the
// rest of its thread with it as far as needed to keep its order; the
// corrections are repeated, in passes over the dependencies in order, until
// none is needed (at most 50 passes), since moving one event can uncover
// another.
func (b *builder) correctClocks() {
	g := b.g
	var t *shifter
	changed := false
	nd := int64(b.ndeps())
	// A dependency can only become violated when its cause starts later:
	// passes after the first skip the messages of a key if no call of the
	// rank of their causes has moved since they were last checked, and a
	// dependency if no call of the block of its cause has. raised[r] is
	// when rank r last moved, in checks (pass·nd + dependency); the shifter
	// keeps when each block did.
	raised := make([]int64, g.Ranks)
	runChecked := make([]int64, len(b.runs))
	collChecked := make([]int64, len(b.coll))
	check := func(i int, done, cause int32, tick int64) {
		need := t.start(cause)
		if t.end(done) >= need {
			return
		}
		changed = true
		if r, moved := t.raise(done, need, tick); moved {
			raised[r] = tick
		}
	}
	// The violations are the receives that, as logged, end before their
	// send started, whatever the order the corrections take them in.
	for k := range b.msgs {
		if m := &b.msgs[k]; g.End[m.recvDone] < g.Start[m.sendPost] {
			g.ClockViolations++
		}
	}
	for pass := int64(0); pass < 50; pass++ {
		changed = false
		for ri := range b.runs {
			run := &b.runs[ri]
			tick := pass*nd + 2*int64(run.lo)
			since := runChecked[ri]
			if pass > 0 && raised[run.src] < since && (!run.sync || raised[run.dst] < since) {
				runChecked[ri] = tick
				continue
			}
			runChecked[ri] = tick
			for k := run.lo; k < run.hi; k++ {
				m := &b.msgs[k]
				if pass > 0 && t.moved[m.sendPost>>shiftBits] < since && (!m.sync || t.moved[m.recvPost>>shiftBits] < since) {
					continue
				}
				if t == nil {
					// Until the first correction, times are read directly.
					if g.End[m.recvDone] >= g.Start[m.sendPost] && (!m.sync || g.End[m.sendDone] >= g.Start[m.recvPost]) {
						continue
					}
					t = newShifter(b)
				}
				check(2*int(k), m.recvDone, m.sendPost, pass*nd+2*int64(k))
				if m.sync {
					check(2*int(k)+1, m.sendDone, m.recvPost, pass*nd+2*int64(k)+1)
				}
			}
		}
		for j := range b.coll {
			d := &b.coll[j]
			i := 2*len(b.msgs) + j
			tick := pass*nd + int64(i)
			if pass > 0 && t.moved[d.cause>>shiftBits] < collChecked[j] {
				collChecked[j] = tick
				continue
			}
			collChecked[j] = tick
			if t == nil {
				if g.End[d.done] >= g.Start[d.cause] {
					continue
				}
				t = newShifter(b)
			}
			check(i, d.done, d.cause, tick)
		}
		if !changed {
			break
		}
	}
	// Dependencies that still cannot hold are contradictions, not clock
	// error: a matching the logs do not support (a cycle of waits). They
	// are dropped, and counted, rather than let into the graph.
	bad := 0
	if t != nil {
		t.flush()
		for i := 0; i < int(nd); i++ {
			if done, cause, ok := b.dep(i); ok && g.End[done] < g.Start[cause] {
				if b.dropped == nil {
					b.dropped = newBitset(int(nd))
				}
				b.dropped.set(i)
				bad++
			}
		}
	}
	if bad > 0 {
		g.Inconsistent = bad
		g.Notes = append(g.Notes, fmt.Sprintf("%d dependencies contradict the logs' order (inconsistent matching); left out of the graph", bad))
	}
	if g.ClockViolations > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d receives ended before their send started (clock error above the message latency); corrected", g.ClockViolations))
	}
}

// shiftBits sets the size of the blocks of calls a shifter raises at once.
const shiftBits = 5

// shifter moves calls forward in time for the clock correction: raise(c, v)
// makes call c end no earlier than v and pushes the calls after it on its
// thread as far as needed to keep their order: each starts no earlier than
// the previous one ends, and ends no earlier than it starts.
//
// On a rank whose calls are one thread already in order (each starts no
// earlier than the previous one ended: the usual case) the times of the
// calls after c only grow along the rank, so pushing from c with v is
// giving every later call the floor v: its start and end become max(time,
// v), which leaves alone those that already start at v or later. Floors
// are kept by block of calls (from an offset in the block on), so a push
// costs the blocks it reaches, not the calls; flush applies them. Other
// ranks' calls are pushed one by one along their threads.
type shifter struct {
	g      *PAG
	next   []int32 // the next call of the same thread, for ranks pushed one by one
	fast   []bool  // by rank: one thread, in order
	floors []floor // by block of calls wholly inside one fast rank
	moved  []int64 // by block of calls: when a call of it last started later (-1: never)
}

// floor raises the calls of a block from offset off on to v (none: MinInt64).
type floor struct {
	v   int64
	off int32
}

func newShifter(b *builder) *shifter {
	g := b.g
	t := &shifter{g: g, fast: make([]bool, g.Ranks)}
	nb := (len(g.Op) >> shiftBits) + 1
	t.floors = make([]floor, nb)
	t.moved = make([]int64, nb)
	for i := range t.floors {
		t.floors[i].v, t.moved[i] = math.MinInt64, -1
	}
	slow := false
	for r := 0; r < g.Ranks; r++ {
		t.fast[r] = !b.multi[r] && b.ordered[r]
		slow = slow || !t.fast[r]
	}
	if slow {
		t.next = make([]int32, len(g.Op))
		w := b.walk()
		for c := range t.next {
			t.next[c] = -1
			if p := w.prev(int32(c)); p >= 0 {
				t.next[p] = int32(c)
			}
		}
	}
	return t
}

// floorAt is the floor of call c.
func (t *shifter) floorAt(c int32) int64 {
	if f := &t.floors[c>>shiftBits]; c&(1<<shiftBits-1) >= f.off {
		return f.v
	}
	return math.MinInt64
}

func (t *shifter) start(c int32) int64 { return max(t.g.Start[c], t.floorAt(c)) }

func (t *shifter) end(c int32) int64 { return max(t.g.End[c], t.floorAt(c)) }

// raise makes call c end at v (later than it does) and pushes its thread,
// at tick. It returns c's rank and whether any call of it starts later now.
func (t *shifter) raise(c int32, v int64, tick int64) (rank int, moved bool) {
	g := t.g
	g.End[c] = v // its floor, if any, is below v
	r := g.Rank(c)
	if !t.fast[r] {
		for c, w := c, t.next[c]; w >= 0 && g.Start[w] < g.End[c]; c, w = w, t.next[w] {
			shift := g.End[c] - g.Start[w]
			g.Start[w] += shift
			if g.End[w] < g.Start[w] {
				g.End[w] = g.Start[w]
			}
			t.moved[w>>shiftBits] = tick
			moved = true
		}
		return r, moved
	}
	const B = 1 << shiftBits
	lo, hi := g.RankStart[r], g.RankStart[r+1]
	w := c + 1
	if w >= hi || t.start(w) >= v {
		return r, false
	}
	for w < hi {
		blk := w >> shiftBits
		bs, be := blk<<shiftBits, blk<<shiftBits+B
		if w != c+1 && t.start(w) >= v {
			break
		}
		t.moved[blk] = tick
		if bs < lo || be > hi {
			// The block is shared with another rank: call by call.
			for ; w < min(be, hi); w++ {
				if t.start(w) >= v {
					return r, true
				}
				g.Start[w], g.End[w] = v, max(g.End[w], v)
			}
			continue
		}
		t.setFloor(blk, w-bs, v)
		w = be
	}
	return r, true
}

// setFloor raises the calls of block blk from offset off on to v, where
// the call at off starts before v.
func (t *shifter) setFloor(blk, off int32, v int64) {
	f := &t.floors[blk]
	switch {
	case f.v == math.MinInt64 || off <= f.off && v >= f.v:
		*f = floor{v, off} // the new floor covers the old one
	case off > f.off && v >= f.v:
		t.lift(blk, f.off, off, f.v) // the old floor keeps the calls before off
		*f = floor{v, off}
	case off < f.off && v < f.v:
		t.lift(blk, off, f.off, v) // the new one only lifts the calls before the old
	}
}

// lift raises the calls of block blk at offsets [from, to) to v.
func (t *shifter) lift(blk, from, to int32, v int64) {
	g := t.g
	for c := blk<<shiftBits + from; c < blk<<shiftBits+to; c++ {
		if g.Start[c] >= v {
			break // the calls after it start later still
		}
		g.Start[c], g.End[c] = v, max(g.End[c], v)
	}
}

// apply applies block blk's floor to its calls.
func (t *shifter) apply(blk int32) {
	f := &t.floors[blk]
	if f.v == math.MinInt64 {
		return
	}
	end := min(1<<shiftBits, int32(len(t.g.Op))-blk<<shiftBits)
	t.lift(blk, f.off, end, f.v)
	f.v = math.MinInt64
}

// flush applies the floors to the times.
func (t *shifter) flush() {
	for blk := range t.floors {
		t.apply(int32(blk))
	}
	t.floors = nil
}

// waitsAndEdges decides for every completion whether it waited and for
// what: the latest-starting of what it needed (the smaller call, then the
// earlier dependency among equals), if that started after the completion
// call did. Then it sets each vertex's one incoming edge, in compressed
// sparse rows (nE edges: every E(c), and S(c) of every call after the first
// of its thread), and finds the run's first and last events.
func (b *builder) waitsAndEdges(nE int) {
	g := b.g
	N := int32(len(g.Op))
	start, end := g.Start, g.End
	msgs, coll, dropped := b.msgs, b.coll, b.dropped
	nm := int32(2 * len(msgs))
	// best[c] is the dependency call c waited for, -1 for none. It lives
	// in the tail of the edge sources: the edges of calls up to c never
	// reach best[c+1] (at most N - firsts of them go into S vertices).
	inSrc := make([]int32, nE)
	best := inSrc[nE-int(N):]
	for i := range best {
		best[i] = -1
	}
	causeOf := func(i int32) int32 {
		if i < nm {
			if m := &msgs[i>>1]; i&1 == 0 {
				return m.sendPost
			} else {
				return m.recvPost
			}
		}
		return coll[i-nm].cause
	}
	nw, lateSenders := 0, false
	consider := func(i, done, cause int32) {
		s := start[cause]
		if s <= start[done] || (dropped != nil && dropped.has(int(i))) {
			return
		}
		if j := best[done]; j >= 0 {
			c := causeOf(j)
			if t := start[c]; s < t || (s == t && cause >= c) {
				return
			}
		} else {
			nw++
		}
		best[done] = i
		lateSenders = lateSenders || i < nm && i&1 == 0
	}
	for k := range msgs {
		m := &msgs[k]
		consider(int32(2*k), m.recvDone, m.sendPost)
		if m.sync {
			consider(int32(2*k+1), m.sendDone, m.recvPost)
		}
	}
	for j := range coll {
		consider(nm+int32(j), coll[j].done, coll[j].cause)
	}
	var wrong bitset
	if lateSenders {
		wrong = b.wrongOrder()
	}

	waits := make([]Wait, 0, nw)
	walk := b.walk()
	inStart := make([]int32, 2*N+1)
	inWeight := make([]int64, nE)
	inKind := make([]EdgeKind, nE)
	t0, t1 := start[0], end[0]
	target, targetEnd := int32(1), end[0]
	e := int32(0)
	rank, rankLo, rankHi := -1, int32(0), int32(0)
	for c := int32(0); c < N; c++ {
		s, en, bc := start[c], end[c], best[c]
		inStart[2*c] = e
		for c >= rankHi {
			rank++
			rankLo, rankHi = g.RankStart[rank], g.RankStart[rank+1]
		}
		p := c - 1 // one thread: the call before, if the rank's
		if b.multi[rank] {
			p = walk.prev(c)
		} else if c == rankLo {
			p = -1
		}
		if p >= 0 {
			inSrc[e], inWeight[e], inKind[e] = 2*p+1, max(0, s-end[p]), EdgeProgram
			e++
		}
		inStart[2*c+1] = e
		if i := bc; i >= 0 {
			cause := causeOf(i)
			w := Wait{Call: c, Cause: cause, Ns: min(start[cause], en) - s, Comm: g.Comm[c]}
			if w.Comm < 0 {
				w.Comm = g.Comm[cause] // a Wait/Test call: the communicator of what it completed
			}
			kind := EdgeCollective
			switch {
			case i >= nm:
				w.Kind = coll[i-nm].kind
			case i&1 == 0:
				w.Kind, kind = LateSender, EdgeLateSender
				w.WrongOrder = wrong.has(int(i >> 1))
			default:
				w.Kind, kind = LateReceiver, EdgeLateReceiver
			}
			waits = append(waits, w)
			inSrc[e], inWeight[e], inKind[e] = 2*cause, max(0, en-start[cause]), kind
		} else {
			inSrc[e], inWeight[e], inKind[e] = 2*c, max(0, en-s), EdgeCall
		}
		e++
		t0, t1 = min(t0, s), max(t1, en)
		if en > targetEnd {
			target, targetEnd = 2*c+1, en
		}
	}
	inStart[2*N] = e
	g.Waits = waits
	g.InStart, g.InSrc, g.InWeight, g.InKind = inStart, inSrc, inWeight, inKind
	g.T0, g.T1, g.Target = t0, t1, target
	b.msgs, b.runs, b.coll, b.dropped = nil, nil, nil, nil
}

// wrongOrder marks the messages whose receiver got them before a message
// sent to it earlier (whose send started strictly earlier): a Late Sender
// on such a message is "wrong order".
func (b *builder) wrongOrder() bitset {
	g := b.g
	wrong := newBitset(len(b.msgs))
	runs := slices.Clone(b.runs)
	slices.SortStableFunc(runs, func(x, y msgRun) int { return cmp.Compare(x.dst, y.dst) })
	type sent struct {
		t    int64 // when the send started
		m    int32
		last int32 // head of a run: its end
	}
	var heads []sent
	var order []sent
	for i := 0; i < len(runs); {
		j := i
		for j < len(runs) && runs[j].dst == runs[i].dst {
			j++
		}
		// Merge the runs of this destination by send start (then message).
		// A run is in posting order, which is almost always start order too:
		// the merged order is sorted unless a run was not.
		heads, order = heads[:0], order[:0]
		for _, r := range runs[i:j] {
			heads = append(heads, sent{g.Start[b.msgs[r.lo].sendPost], r.lo, r.hi})
		}
		sorted := true
		for len(heads) > 0 {
			k := 0
			for h := 1; h < len(heads); h++ {
				if heads[h].t < heads[k].t || (heads[h].t == heads[k].t && heads[h].m < heads[k].m) {
					k = h
				}
			}
			hd := &heads[k]
			sorted = sorted && (len(order) == 0 || order[len(order)-1].t <= hd.t)
			order = append(order, sent{hd.t, hd.m, 0})
			if hd.m++; hd.m < hd.last {
				hd.t = g.Start[b.msgs[hd.m].sendPost]
			} else {
				heads[k] = heads[len(heads)-1]
				heads = heads[:len(heads)-1]
			}
		}
		if !sorted {
			slices.SortFunc(order, func(x, y sent) int {
				if c := cmp.Compare(x.t, y.t); c != 0 {
					return c
				}
				return cmp.Compare(x.m, y.m)
			})
		}
		// Messages whose sends started at the same time were not sent one
		// before the other: each is compared with those sent strictly
		// earlier.
		latest := int64(-1 << 62)
		for k := 0; k < len(order); {
			t0 := order[k].t
			l := k
			groupLatest := latest
			for ; l < len(order) && order[l].t == t0; l++ {
				m := order[l].m
				t := g.End[b.msgs[m].recvDone]
				if latest > t {
					wrong.set(int(m))
				}
				groupLatest = max(groupLatest, t)
			}
			latest = groupLatest
			k = l
		}
		i = j
	}
	return wrong
}
