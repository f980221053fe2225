package graph

import (
	"math"
	"sync/atomic"

	"github.com/cpath/cpath/trace"
)

// waitKindOf is the wait state a member of a collective of flow f is in
// while it waits for the members it needs (SPEC §3).
func waitKindOf(f trace.Flow) WaitKind {
	switch f {
	case trace.FlowBarrier:
		return WaitAtBarrier
	case trace.FlowFence:
		// Closes the epoch on every member of the window's group: a
		// barrier, whose waiting Scalasca calls Wait at Fence.
		return WaitAtFence
	case trace.FlowFromRoot:
		return LateBroadcast
	case trace.FlowToRoot:
		return EarlyReduce
	}
	// Everyone needs everyone, the members before it (Scan, Exscan) or
	// its in-neighbours: Wait at N x N, restricted to those it needs.
	return WaitAtNxN
}

// Synchronising reports whether every member of a collective op needs
// every other one to complete (Barrier, Allreduce, Allgather(v),
// Alltoall(v,w), Reduce_scatter(_block), their non-blocking forms and the
// communicator constructors): the operations the barrier formulas of the
// paper's §5.2 describe. Rooted ones (Bcast, Scatter(v), Reduce,
// Gather(v)) and prefix ones (Scan, Exscan) are not: a member waits only
// for the root or for the members before it.
func Synchronising(op trace.Op) bool {
	return (op.IsCollective() || op.IsWorldBarrier()) && op.Flow().Synchronising()
}

// ReducesToRoot reports whether a rooted collective op sends every
// member's data to the root (Reduce, Gather(v)), rather than the root's to
// every member (Bcast, Scatter(v)).
func ReducesToRoot(op trace.Op) bool { return op.Flow() == trace.FlowToRoot }

// InNeighbors finds the in-neighbours among the members of neighbourhood
// collective instances, from the topologies in the communicator table.
// It keeps scratch space between instances: one per goroutine.
type InNeighbors struct {
	ranks int
	comms []CommInfo
	pos   map[int32][]int32 // by communicator: each world rank's local rank
	at    []int32           // by world rank: member index + 1 in the current instance
	seen  []int32
}

// NewInNeighbors returns a finder over the run's communicator table
// (PAG.Comms) of a run of the given number of ranks.
func NewInNeighbors(ranks int, comms []CommInfo) *InNeighbors {
	return &InNeighbors{ranks: ranks, comms: comms, pos: map[int32][]int32{}}
}

// Each calls fn(i, j) for every member i of an instance on communicator
// comm whose members have world ranks rk, and every other member j that
// is an in-neighbour of i (once, however often the topology lists it;
// MPI_PROC_NULL slots and neighbours absent from the instance skipped).
func (nb *InNeighbors) Each(comm int32, rk []int32, fn func(i, j int)) {
	if comm < 0 || int(comm) >= len(nb.comms) || nb.comms[comm].Sources == nil {
		return
	}
	ci := &nb.comms[comm]
	pos := nb.pos[comm]
	if pos == nil {
		pos = make([]int32, nb.ranks)
		for i := range pos {
			pos[i] = -1
		}
		for l, w := range ci.Members {
			if w >= 0 && int(w) < nb.ranks {
				pos[w] = int32(l)
			}
		}
		nb.pos[comm] = pos
	}
	if nb.at == nil {
		nb.at = make([]int32, nb.ranks)
	}
	for i, r := range rk {
		if r >= 0 && int(r) < nb.ranks {
			nb.at[r] = int32(i + 1)
		}
	}
	nb.seen = append(nb.seen[:0], make([]int32, len(rk))...)
	for i, r := range rk {
		if r < 0 || int(r) >= nb.ranks || pos[r] < 0 {
			continue
		}
		for _, s := range ci.Sources[pos[r]] {
			if s < 0 || int(s) >= nb.ranks {
				continue
			}
			if j := int(nb.at[s]) - 1; j >= 0 && j != i && nb.seen[j] != int32(i+1) {
				nb.seen[j] = int32(i + 1)
				fn(i, j)
			}
		}
	}
	for _, r := range rk {
		if r >= 0 && int(r) < nb.ranks {
			nb.at[r] = 0
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
// PassesToRoot reports whether a member other than the root of a rooted
// collective (Bcast, Scatter(v), Reduce, Gather(v)), having logged bytes,
// exchanges data with the root: one that receives or sends 0 bytes (an
// MPI_Gatherv or MPI_Scatterv count of 0) neither needs the root nor is
// waited for by it (Open MPI and MPICH skip it; a member sending nothing
// to MPI_Gatherv's root had its root wait 4 ms for it on MPICH). Only the
// root may pass MPI_IN_PLACE, so a member's bytes are what it moved.
func PassesToRoot(bytes uint64) bool { return bytes > 0 }

type collDepper struct {
	ranks int
	comms []CommInfo
	rank  func(c int32) int
	pos   [][]int32 // by communicator: the local rank of each world rank (0 if not a member)
	rk    []int32
	out   []collDep
	nb    *InNeighbors
	cause []int // neighbourhood collectives: by member, its latest-starting in-neighbour
}

// deps returns instance c's dependencies; post are its members' calls
// (in call order), start when each started, bytes what each logged. The
// result is reused by the next call.
func (cd *collDepper) deps(c *Collective, post []int32, start []int64, bytes []uint64) []collDep {
	flow := c.Op.Flow()
	kind := waitKindOf(flow)
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
	case trace.FlowNeighbor:
		if cd.nb == nil {
			cd.nb = NewInNeighbors(cd.ranks, cd.comms)
		}
		cd.cause = append(cd.cause[:0], make([]int, len(post))...)
		for i := range cd.cause {
			cd.cause[i] = -1
		}
		cd.nb.Each(c.Comm, cd.rk, func(i, j int) {
			if k := cd.cause[i]; k < 0 || start[j] > start[k] {
				cd.cause[i] = j
			}
		})
		for i, j := range cd.cause {
			if j >= 0 {
				cd.out = append(cd.out, collDep{i, j, kind})
			}
		}
	case trace.FlowFromRoot:
		if rootIdx >= 0 {
			for i := range post {
				if i != rootIdx && PassesToRoot(bytes[i]) {
					cd.out = append(cd.out, collDep{i, rootIdx, kind})
				}
			}
		}
	case trace.FlowToRoot:
		if rootIdx >= 0 {
			if last := latest(func(i int) bool { return i != rootIdx && PassesToRoot(bytes[i]) }); last >= 0 {
				cd.out = append(cd.out, collDep{rootIdx, last, kind})
			}
		}
	case trace.FlowScan, trace.FlowExscan:
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
				return q < me || (flow == trace.FlowScan && q == me)
			})
			if cause >= 0 && cause != i {
				cd.out = append(cd.out, collDep{i, cause, kind})
			}
		}
	default: // everyone needs everyone: the latest to start
		last := latest(func(int) bool { return true })
		for i := range post {
			if i != last {
				cd.out = append(cd.out, collDep{i, last, kind})
			}
		}
	}
	return cd.out
}

type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }
func (s bitset) set(i int)   { s[i>>6] |= 1 << (i & 63) }

// setAtomic is set for bitsets written by several goroutines at once.
func (s bitset) setAtomic(i int) { atomic.OrUint64(&s[i>>6], 1<<(i&63)) }
func (s bitset) has(i int) bool  { return s[i>>6]&(1<<(i&63)) != 0 }

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
	g      *rankCalls
	next   []int32 // the next call of the same thread, for ranks pushed one by one
	fast   []bool  // by rank: one thread, in order
	floors []floor // by block of calls wholly inside one fast rank
	moved  []int64 // by block of calls: the last tick at which a call of it started later (-1: never)
	// touched are the blocks moved at the latest tick, in the order
	// they were first moved at it: the clock correction's next pass
	// checks the dependencies on their calls alone.
	touched []int32
	tick    int64 // of touched
}

// floor raises the calls of a block from offset off on to v (none: MinInt64).
type floor struct {
	v   int64
	off int32
}

func newShifter(g *rankCalls) *shifter {
	t := &shifter{g: g, fast: make([]bool, g.ranks)}
	nb := (len(g.Op) >> shiftBits) + 1
	t.floors = make([]floor, nb)
	t.moved = make([]int64, nb)
	for i := range t.floors {
		t.floors[i].v, t.moved[i] = math.MinInt64, -1
	}
	slow := false
	for r := 0; r < g.ranks; r++ {
		t.fast[r] = !g.multi[r] && g.ordered[r]
		slow = slow || !t.fast[r]
	}
	if slow {
		t.next = make([]int32, len(g.Op))
		w := g.walk()
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
	r := g.rank(c)
	if !t.fast[r] {
		for c, w := c, t.next[c]; w >= 0 && g.Start[w] < g.End[c]; c, w = w, t.next[w] {
			shift := g.End[c] - g.Start[w]
			g.Start[w] += shift
			if g.End[w] < g.Start[w] {
				g.End[w] = g.Start[w]
			}
			t.stamp(w>>shiftBits, tick)
			moved = true
		}
		return r, moved
	}
	const B = 1 << shiftBits
	lo, hi := g.rankStart[r], g.rankStart[r+1]
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
		t.stamp(blk, tick)
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

// stamp records that a call of block blk started later at tick.
func (t *shifter) stamp(blk int32, tick int64) {
	if tick != t.tick {
		t.touched, t.tick = t.touched[:0], tick
	}
	if t.moved[blk] != tick {
		t.moved[blk] = tick
		t.touched = append(t.touched, blk)
	}
}

// touchedAt returns the blocks moved at tick (none if no call moved then).
func (t *shifter) touchedAt(tick int64) []int32 {
	if t == nil || t.tick != tick {
		return nil
	}
	return t.touched
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
