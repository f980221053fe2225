package cpath

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// orderer takes the vertices of one rank in a Schedule's rounds: take
// emits, in topological order, every vertex whose causes are all taken
// (its own vertices) or have arrived (other ranks' slots), frame by
// frame, with its frame; arrived says that a slot's value has; left is
// how many vertices it has not taken.
type orderer interface {
	take(emitters func(n int) []*emitter)
	arrived(slot int32)
	left() int
}

// emitter takes the vertices an orderer emits on one core: their segments
// in order, their distances (Schedule.from) and the sends they make.
type emitter struct {
	s        *Schedule
	ask      *asked
	segs     []Segment
	sends    []sendSlot
	sendRank []int32
}

// emit takes vertex v of frame k: its distance from its causes' (all
// taken), and its sends.
func (em *emitter) emit(v, k int32) {
	s := em.s
	g := s.g
	if n := len(em.segs); n > 0 && em.segs[n-1].Hi == v && em.segs[n-1].Frame == k {
		em.segs[n-1].Hi++
	} else {
		em.segs = append(em.segs, Segment{v, v + 1, k})
	}
	from := s.from
	lo, hi := g.InStart[v], g.InStart[v+1]
	d := int64(0) // a source's
	if lo < hi {
		d = Unreached
		entry := int32(-1)
		if k > 0 {
			entry = s.exit[k-1]
		}
		for e := lo; e < hi; e++ {
			x := int64(0)
			if i := s.Source(e, g.InSrc[e], entry); i >= 0 {
				x = from[i]
			}
			d = max(d, x+g.InWeight.At(e))
		}
	}
	from[v] = d
	if em.ask.marks.has(v) {
		for _, a := range em.ask.of(v) {
			em.sends = append(em.sends, sendSlot{v, a.Index})
			em.sendRank = append(em.sendRank, a.Rank)
		}
	}
}

// orderRounds orders the owned vertices in rounds, following the runs of
// streams; where a run's order cannot be followed (an edge that runs
// backwards along it, as between the threads of one rank, or a cycle) it
// orders them again by Kahn's algorithm, which takes any DAG and leaves
// out only what is on or after a cycle (Unordered).
func (s *Schedule) orderRounds(streams []int32) error {
	ask, err := s.tellOwners()
	if err = mpix.Agree(s.c, err); err != nil {
		return err
	}
	s.asked = ask
	ro, err := newRunOrder(s, streams)
	if err = mpix.Agree(s.c, err); err != nil {
		return err
	}
	if err := s.rounds(ro, ask); err != nil {
		return err
	}
	stuck, err := mpix.Any(s.c, ro.left() > 0)
	if err != nil || !stuck {
		return err
	}
	s.segs, s.chunks, s.send, s.sendStart = nil, nil, nil, nil
	ko := newKahnOrder(s)
	if err := mpix.Agree(s.c, ko.err); err != nil {
		return err
	}
	if err := s.rounds(ko, ask); err != nil {
		return err
	}
	if s.Unordered = ko.left(); s.Unordered > 0 {
		s.unordered = newEdgeSet(int(s.nv))
		for l := int32(0); l < s.nv; l++ {
			if ko.pending[l] > 0 {
				s.unordered.set(l)
			}
		}
	}
	return nil
}

// rounds runs o in rounds: each rank takes what it can, then ships the
// other ranks, for each vertex it took that they want (ask), its index
// among their wants and its distance, and hands o what arrived. It ends
// when a round ships nothing or every rank has taken all; every rank
// runs the same rounds. Each vertex's longest distance from a source, in
// its frame's terms, is taken as it is taken (s.from): its row was just
// read, and the sweep of the exact path needs no pass of its own.
func (s *Schedule) rounds(o orderer, ask *asked) error {
	s.segs = nil
	s.sendStart = []int32{0}
	s.from = make([]int64, int(s.nv)+s.Slots())
	from := s.from
	var sends []sendSlot
	var sendRank []int32
	for {
		first := len(s.segs)
		var ems []*emitter
		o.take(func(n int) []*emitter {
			ems = make([]*emitter, n)
			for i := range ems {
				ems[i] = &emitter{s: s, ask: ask}
			}
			return ems
		})
		// The pieces' vertices in their order: frame by frame.
		sends, sendRank = sends[:0], sendRank[:0]
		for _, em := range ems {
			s.segs = append(s.segs, em.segs...)
			sends = append(sends, em.sends...)
			sendRank = append(sendRank, em.sendRank...)
		}
		s.chunks = append(s.chunks, s.chunkBounds(first, len(s.segs)))
		// This round's sends, by destination, after a header: whether this
		// rank sent anything and whether it has vertices left.
		out := make([][]orderSend, s.size)
		for q := range out {
			out[q] = []orderSend{{}}
		}
		for q := int32(0); q < int32(s.size); q++ {
			for i, x := range sends {
				if sendRank[i] == q {
					s.send = append(s.send, x)
					out[q] = append(out[q], orderSend{Index: x.Index, D: from[x.Local]})
				}
			}
			s.sendStart = append(s.sendStart, int32(len(s.send)))
		}
		var head orderSend
		if len(sends) > 0 {
			head.Index |= 1 // sent
		}
		if o.left() > 0 {
			head.Index |= 2 // vertices left
		}
		for q := range out {
			out[q][0] = head
		}
		got, err := mpix.Ship(s.c, out)
		if err != nil {
			return err
		}
		anySent, anyLeft := false, false
		for q, b := range got {
			xs, err := mpix.FromBytes[orderSend](b)
			if err != nil || len(xs) < 1 {
				return fmt.Errorf("cpath: schedule: rank %d shipped a malformed round", q)
			}
			anySent, anyLeft = anySent || xs[0].Index&1 != 0, anyLeft || xs[0].Index&2 != 0
			for _, x := range xs[1:] {
				if x.Index < 0 || int(x.Index) >= len(s.want[q]) {
					return fmt.Errorf("cpath: schedule: rank %d shipped slot %d of %d", q, x.Index, len(s.want[q]))
				}
				k := s.slotBase[q] + x.Index
				from[s.nv+k] = x.D
				o.arrived(k)
			}
		}
		if !anySent || !anyLeft {
			s.Rounds = len(s.chunks)
			return nil
		}
	}
}

// orderSend is what an ordering round ships of a vertex another rank
// takes from: the index it has among that rank's wants and its distance
// (the first of a part is a header: Index's bits say whether the sender
// sent anything and has vertices left).
type orderSend struct {
	Index int32
	_     int32
	D     int64
}

// runOrder takes each frame's runs (the streams cut where the frame
// changes) in order, each as far as its next vertex's causes allow, and
// moves to another run of the frame where one waits: an event-driven
// walk along the runs, as the run itself went, that touches each row
// about once and reads the graph's arrays in their order. A run that
// waits for a vertex of another run waits on that run (runWait), which
// wakes it once it has taken the vertex. The frames are independent: a
// round's are taken on every core, a piece of consecutive frames each.
type runOrder struct {
	s               *Schedule
	start, cur, end []int32 // by run: its first vertex, its next, its end (local indices)
	frame           []int32 // by run: its frame
	scan            []int32 // by run: the edge of its next vertex to check next
	frameStart      []int32 // the runs of frame k are frameRuns[frameStart[k]:frameStart[k+1]]
	frameRuns       []int32
	// The runs waiting: for a vertex of run q in runWait[q], for the value
	// of slot k in slotWait[k] (a slot feeds one frame's vertices).
	runWait   [][]waiter
	slotWait  [][]int32
	arrivedAt edgeSet // by slot: its value has arrived
	runnable  []int32 // runs to resume in the next round
	started   bool
	taken     int
}

// waiter is run Run waiting for vertex V of another.
type waiter struct{ V, Run int32 }

func newRunOrder(s *Schedule, streams []int32) (*runOrder, error) {
	if streams == nil {
		streams = []int32{0, s.nv}
	}
	if len(streams) < 2 || streams[0] != 0 || streams[len(streams)-1] != s.nv || !slices.IsSorted(streams) {
		return nil, fmt.Errorf("cpath: schedule: streams %v do not cut [0,%d)", streams[:min(len(streams), 8)], s.nv)
	}
	o := &runOrder{s: s, arrivedAt: newEdgeSet(s.Slots())}
	var frame []int32 // by run
	for i := 0; i+1 < len(streams); i++ {
		for l := streams[i]; l < streams[i+1]; {
			k := s.FrameOf(l)
			m := l + 1
			for m < streams[i+1] && s.FrameOf(m) == k {
				m++
			}
			o.start, o.end, frame = append(o.start, l), append(o.end, m), append(frame, k)
			l = m
		}
	}
	o.cur, o.frame = slices.Clone(o.start), frame
	o.scan = make([]int32, len(o.cur))
	for r, l := range o.cur {
		o.scan[r] = s.g.InStart[l]
	}
	o.runWait = make([][]waiter, len(o.start))
	o.slotWait = make([][]int32, s.Slots())
	// The runs by frame (counting sort: runs are in stream order).
	o.frameStart = make([]int32, s.Frames()+1)
	for _, k := range frame {
		o.frameStart[k+1]++
	}
	for k := 1; k < len(o.frameStart); k++ {
		o.frameStart[k] += o.frameStart[k-1]
	}
	o.frameRuns = make([]int32, len(frame))
	at := slices.Clone(o.frameStart)
	for r, k := range frame {
		o.frameRuns[at[k]] = int32(r)
		at[k]++
	}
	return o, nil
}

func (o *runOrder) left() int { return int(o.s.nv) - o.taken }

func (o *runOrder) arrived(k int32) {
	o.arrivedAt.set(k)
	o.runnable = append(o.runnable, o.slotWait[k]...)
	o.slotWait[k] = nil
}

// runOf is the run of frame k that holds owned vertex l (a frame's runs
// are few, in stream order).
func (o *runOrder) runOf(k, l int32) int32 {
	runs := o.frameRuns[o.frameStart[k]:o.frameStart[k+1]]
	i := sort.Search(len(runs), func(i int) bool { return o.start[runs[i]] > l })
	return runs[i-1]
}

func (o *runOrder) take(emitters func(n int) []*emitter) {
	var work []int32
	if !o.started {
		o.started = true
		work = o.frameRuns // in frame order
	} else {
		work = o.runnable
		slices.SortFunc(work, func(a, b int32) int {
			return cmp.Or(cmp.Compare(o.frame[a], o.frame[b]), cmp.Compare(a, b))
		})
		work = slices.Compact(work)
		o.runnable = nil
	}
	// Pieces of consecutive frames, about four a core (one piece where
	// the graph is one frame: its runs wait on each other).
	n := 1
	if o.s.split != nil && len(work) > 0 {
		n = min(4*workers(), len(work))
	}
	cuts := []int{0}
	for i := 1; i < n; i++ {
		c := i * len(work) / n
		for c < len(work) && c > cuts[len(cuts)-1] && o.frame[work[c]] == o.frame[work[c-1]] {
			c++
		}
		if c > cuts[len(cuts)-1] && c < len(work) {
			cuts = append(cuts, c)
		}
	}
	cuts = append(cuts, len(work))
	ems := emitters(len(cuts) - 1)
	taken := make([]int, len(ems))
	par.Do(len(ems), func(i int) {
		// work is in frame order, and a run wakes only runs of its own
		// frame: each one with all it wakes at once keeps the piece frame
		// by frame.
		var stack []int32
		for _, r := range work[cuts[i]:cuts[i+1]] {
			if o.cur[r] == o.end[r] {
				continue
			}
			stack = append(stack[:0], r)
			for len(stack) > 0 {
				r := stack[len(stack)-1]
				stack = o.advance(r, stack[:len(stack)-1], ems[i], &taken[i])
			}
		}
	})
	for _, t := range taken {
		o.taken += t
	}
}

// taken reports whether owned vertex lu of frame k is taken: its run's
// next vertex is past it.
func (o *runOrder) isTaken(k, lu int32) (bool, int32) {
	q := o.runOf(k, lu)
	return o.cur[q] > lu, q
}

// advance takes run r's vertices until one waits for a cause not taken,
// waking (onto stack) the runs that waited for those it takes. The edges
// between owned vertices are taken to keep to their frames (graph.Splits
// makes them: the remote ones are checked by their owners, the rest by
// the Kahn order where the runs' is given up).
func (o *runOrder) advance(r int32, stack []int32, em *emitter, taken *int) []int32 {
	s := o.s
	g := s.g
	first, k := o.start[r], o.frame[r]
	entry := int32(-1)
	if k > 0 {
		entry = s.exit[k-1]
	}
	for l := o.cur[r]; l < o.end[r]; l++ {
		for e := o.scan[r]; e < g.InStart[l+1]; e++ {
			u := g.InSrc[e]
			if u == entry {
				continue
			}
			if lu := u - s.lo; uint32(lu) < uint32(s.nv) {
				if lu >= first && lu < l {
					continue // before l in its own run: taken
				}
				if done, q := o.isTaken(k, lu); !done {
					o.cur[r], o.scan[r] = l, e
					// A wait on a vertex ahead in its own run is for ever:
					// left to the fallback.
					if q != r {
						o.runWait[q] = append(o.runWait[q], waiter{lu, r})
					}
					return stack
				}
			} else if x := s.remoteSlot[s.remote.rank(e)]; !o.arrivedAt.has(x) {
				o.cur[r], o.scan[r] = l, e
				o.slotWait[x] = append(o.slotWait[x], r)
				return stack
			}
		}
		em.emit(l, k)
		*taken++
		o.cur[r], o.scan[r] = l+1, g.InStart[l+1]
		// Wake those waiting for l (or before it: taken too).
		if ws := o.runWait[r]; len(ws) > 0 {
			keep := ws[:0]
			for _, w := range ws {
				if w.V <= l {
					stack = append(stack, w.Run)
				} else {
					keep = append(keep, w)
				}
			}
			o.runWait[r] = keep
		}
	}
	o.cur[r] = o.end[r]
	return stack
}

// kahnOrder is Kahn's algorithm on the owned vertices: a vertex is taken
// once every cause but its frame's entry is, its own ones in this round
// or before, other ranks' before. Each round's vertices are taken frame
// by frame (its first vertices sorted by frame, each with all it makes
// ready at once), so that a round is a run of frames in order. It needs
// the owned edges reversed (a copy of them), which the run order does
// not.
type kahnOrder struct {
	s                  *Schedule
	pending            []int32 // by owned vertex: its causes not taken
	outStart, outDst   []int32 // the owned edges by source
	waitStart, waitDst []int32 // by slot: the owned vertices that wait for it
	seeds, stack       []int32
	taken              int
	err                error // an edge between frames not out of an entry
}

func newKahnOrder(s *Schedule) *kahnOrder {
	g := s.g
	nv := s.nv
	o := &kahnOrder{s: s, pending: make([]int32, nv)}
	outStart := make([]int32, nv+2)
	for l := int32(0); l < nv; l++ {
		entry := s.Entry(l)
		for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
			u := g.InSrc[e]
			if u == entry {
				continue
			}
			o.pending[l]++
			if lu := u - s.lo; uint32(lu) < uint32(nv) {
				outStart[lu+2]++
				if s.FrameOf(lu) != s.FrameOf(l) && o.err == nil {
					o.err = crossError(u, l+s.lo, s.FrameOf(lu), s.FrameOf(l))
				}
			}
		}
	}
	for l := int32(2); l < nv+2; l++ {
		outStart[l] += outStart[l-1]
	}
	outDst := make([]int32, outStart[nv+1])
	slots := s.Slots()
	waitStart := make([]int32, slots+2)
	for _, k := range s.remoteSlot {
		waitStart[k+2]++
	}
	for k := 2; k < slots+2; k++ {
		waitStart[k] += waitStart[k-1]
	}
	waitDst := make([]int32, waitStart[slots+1])
	r := int32(0) // rank among the remote edges
	for l := int32(0); l < nv; l++ {
		entry := s.Entry(l)
		for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
			u := g.InSrc[e]
			switch lu := u - s.lo; {
			case u == entry:
			case uint32(lu) < uint32(nv):
				outDst[outStart[lu+1]] = l
				outStart[lu+1]++
			default:
				k := s.remoteSlot[r]
				waitDst[waitStart[k+1]] = l
				waitStart[k+1]++
				r++
			}
		}
	}
	// outStart[l+1] and waitStart[k+1] now end the rows: [x[i], x[i+1]).
	o.outStart, o.outDst, o.waitStart, o.waitDst = outStart[:nv+1], outDst, waitStart[:slots+1], waitDst
	for l := int32(0); l < nv; l++ {
		if o.pending[l] == 0 {
			o.seeds = append(o.seeds, l)
		}
	}
	return o
}

func (o *kahnOrder) left() int { return int(o.s.nv) - o.taken }

func (o *kahnOrder) arrived(k int32) {
	for _, w := range o.waitDst[o.waitStart[k]:o.waitStart[k+1]] {
		if o.pending[w]--; o.pending[w] == 0 {
			o.seeds = append(o.seeds, w)
		}
	}
}

func (o *kahnOrder) take(emitters func(n int) []*emitter) {
	s := o.s
	em := emitters(1)[0]
	slices.SortStableFunc(o.seeds, func(a, b int32) int { return cmp.Compare(s.FrameOf(a), s.FrameOf(b)) })
	for _, x := range o.seeds {
		o.stack = append(o.stack[:0], x)
		for len(o.stack) > 0 {
			v := o.stack[len(o.stack)-1]
			o.stack = o.stack[:len(o.stack)-1]
			em.emit(v, s.FrameOf(v))
			o.taken++
			for _, w := range o.outDst[o.outStart[v]:o.outStart[v+1]] {
				if o.pending[w]--; o.pending[w] == 0 {
					o.stack = append(o.stack, w)
				}
			}
		}
	}
	o.seeds = o.seeds[:0]
}

// chunkBounds cuts segs[first:last], one round, into chunks at frame
// changes, for a round's work on several cores: about 4 chunks a core,
// none smaller than chunkMin vertices where the frames allow.
func (s *Schedule) chunkBounds(first, last int) []int32 {
	b := []int32{int32(first)}
	n := int32(0)
	for _, g := range s.segs[first:last] {
		n += g.Hi - g.Lo
	}
	if s.split == nil || n == 0 {
		return append(b, int32(last))
	}
	size := max(int32(chunkMin), n/int32(4*workers()))

	var at int32 // vertices in the chunk so far
	for i := first + 1; i < last; i++ {
		at += s.segs[i-1].Hi - s.segs[i-1].Lo
		if at >= size && s.segs[i].Frame != s.segs[i-1].Frame {
			b = append(b, int32(i))
			at = 0
		}
	}
	return append(b, int32(last))
}

// chunkMin is the fewest vertices of a chunk (a variable so that tests can
// cut small graphs into many).
var chunkMin = 1 << 12
