package cpath

import (
	"fmt"
	"math"
	"runtime"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// workers is how many cores a rank's sweeps use.
func workers() int { return runtime.GOMAXPROCS(0) }

// Forward runs one sweep in the schedule's order. vals holds width values
// per owned vertex (by local index), then per slot (Owned()+slot): the
// values other ranks' vertices shipped in. solve computes the values of
// the owned vertices [lo, hi), in order, all of the frame whose entry is
// entry (-1: the first frame), reading their causes' values where Source
// says they are (an entry's is the frame's: 0); the chunks of a round run
// on several cores at once. After each round but the last, the values
// other ranks take are shipped into their slots. Every rank calls it
// together.
func (s *Schedule) Forward(vals []int64, width int, solve func(entry, lo, hi int32)) error {
	if width < 1 || len(vals) != (int(s.nv)+s.Slots())*width {
		return fmt.Errorf("cpath: sweep: %d values for %d vertices and %d slots of width %d", len(vals), s.nv, s.Slots(), width)
	}
	for r, ch := range s.chunks {
		par.Do(len(ch)-1, func(i int) {
			for _, g := range s.segs[ch[i]:ch[i+1]] {
				entry := int32(-1)
				if g.Frame > 0 {
					entry = s.exit[g.Frame-1]
				}
				solve(entry, g.Lo, g.Hi)
			}
		})
		if r == len(s.chunks)-1 {
			break
		}
		if err := s.ship(vals, width, r, nil); err != nil {
			return err
		}
	}
	return nil
}

// ship sends the values of round r's vertices that other ranks take,
// each record its index among the receiver's wants and its width values,
// and writes those received into their slots. vals is by owned vertex, or
// by position if pos gives the positions of the sends' vertices
// (Rows.sendPos).
func (s *Schedule) ship(vals []int64, width int, r int, pos []int32) error {
	rec := 1 + width
	out := make([][]int64, s.size)
	for q := range out {
		lo, hi := s.sendStart[r*s.size+q], s.sendStart[r*s.size+q+1]
		part := make([]int64, 0, int(hi-lo)*rec)
		for j := lo; j < hi; j++ {
			x := s.send[j]
			at := int(x.Local)
			if pos != nil {
				at = int(pos[j])
			}
			part = append(part, int64(x.Index))
			part = append(part, vals[at*width:(at+1)*width]...)
		}
		out[q] = part
	}
	got, err := mpix.Ship(s.c, out)
	if err != nil {
		return err
	}
	for q, b := range got {
		xs, err := mpix.FromBytes[int64](b)
		if err != nil || len(xs)%rec != 0 {
			return fmt.Errorf("cpath: sweep: rank %d shipped %d bytes, not whole values", q, len(b))
		}
		base := int(s.nv)
		if pos != nil {
			base = len(vals)/width - s.Slots() // the positions ordered
		}
		for j := 0; j < len(xs); j += rec {
			i := xs[j]
			if i < 0 || i >= int64(len(s.want[q])) {
				return fmt.Errorf("cpath: sweep: rank %d shipped slot %d of %d", q, i, len(s.want[q]))
			}
			at := (base + int(s.slotBase[q]) + int(i)) * width
			copy(vals[at:at+width], xs[j+1:j+rec])
		}
	}
	return nil
}

// ExitValues gives every rank each frame's exit's values after a sweep
// (width a frame, by frame): the owners of the exits ship them. A frame's
// values are in its own terms, so the longest distance to frame k's entry
// is the exits' before it composed: their sum, for a sweep of distances
// from the sources.
func (s *Schedule) ExitValues(vals []int64, width int) ([]int64, error) {
	pos := make([]int32, len(s.exit))
	for k, x := range s.exit {
		pos[k] = x - s.lo
		if uint32(pos[k]) >= uint32(s.nv) {
			pos[k] = -1
		}
	}
	return exitValues(s.c, len(s.exit), vals, width, pos)
}

// exitValues is ExitValues of frames exits, by the index in vals of each
// frame's exit (-1: another rank's).
func exitValues(c mpix.Comm, frames int, vals []int64, width int, pos []int32) ([]int64, error) {
	var mine []int64 // frame, values
	for k, at := range pos {
		if at >= 0 {
			mine = append(mine, int64(k))
			mine = append(mine, vals[int(at)*width:int(at+1)*width]...)
		}
	}
	all, err := c.Allgatherv(mpix.Bytes(mine))
	if err != nil {
		return nil, err
	}
	out := make([]int64, frames*width)
	seen := 0
	for q, b := range all {
		xs, err := mpix.FromBytes[int64](b)
		if err != nil || len(xs)%(1+width) != 0 {
			return nil, fmt.Errorf("cpath: sweep: rank %d shipped %d bytes of exits", q, len(b))
		}
		for j := 0; j < len(xs); j += 1 + width {
			k := xs[j]
			if k < 0 || int(k) >= frames {
				return nil, fmt.Errorf("cpath: sweep: rank %d shipped the exit of frame %d of %d", q, k, frames)
			}
			copy(out[int(k)*width:], xs[j+1:j+1+width])
			seen++
		}
	}
	if seen != frames {
		return nil, fmt.Errorf("cpath: sweep: %d exits shipped for %d frames", seen, frames)
	}
	return out, nil
}

// DAGPath is the exact critical path on the schedule: DAG's path, vertex
// for vertex, at any number of ranks, without gathering the graph. The
// order gave every vertex its longest distance from a source (in its
// frame's terms) as it took it; then, backwards from the target and every
// frame's exit (each on every path to the target), the edges on which
// those distances are tight mark the vertices on some longest path to the
// target, each keeping its smallest marked successor: Solver.DAGPath's
// way, whose path is DAG's. finish follows them from the smallest source
// so marked.
//
// Stats: Relaxations and Pops count the sweep's and the marking's work;
// Reached counts the vertices on some longest path to the target (not,
// as for the other algorithms, all that reach it: no search finds those).
func (s *Schedule) DAGPath() (*DistResult, error) {
	c, g := s.c, s.g
	// The work and the exchanges counted from the schedule's start: the
	// ordering is the sweep.
	bytes0, calls0 := s.bytes0, s.calls0
	if err := s.checkTarget(); err != nil {
		return nil, err
	}
	// The distances from the sources were taken as the vertices were
	// ordered (Schedule.rounds): one relaxation of every edge.
	from := s.from
	exits, err := s.ExitValues(from, 1)
	if err != nil {
		return nil, err
	}
	var length int64
	for _, x := range exits {
		length += x
	}
	ds := newDistSearchNoDist(c, g)
	ds.bytes0 = bytes0
	ds.st.Relaxations = int64(len(g.InSrc))
	ds.st.Pops = int64(int(s.nv) - s.Unordered)
	if err := s.markTight(ds, from); err != nil {
		return nil, err
	}
	ds.pathDist = length
	graph.Timings().Mark(c.Rank(), "mark-tight")
	_, calls1 := c.Stats()
	ds.st.Rounds = calls1 - calls0
	return ds.finish()
}

// Scratch hands over the exact path's distances (from the ordering), for
// a caller's sweeps to reuse as their scratch (its length is that of a
// sweep's values of width 1); the schedule no longer has them.
func (s *Schedule) Scratch() []int64 {
	b := s.from
	s.from = nil
	return b
}

// checkTarget fails on every rank if the target is on or after a cycle.
func (s *Schedule) checkTarget() error {
	bad := int64(0)
	if l := s.g.Target - s.lo; uint32(l) < uint32(s.nv) && !s.ordered(l) {
		bad = 1
	}
	bad, err := mpix.AllreduceOne(s.c, bad, mpix.Max)
	if err != nil {
		return err
	}
	if bad != 0 {
		v, err := s.CycleVertex()
		if err != nil {
			return err
		}
		return cycleError(v)
	}
	return nil
}

// markTight marks, from every owned exit, the vertices on some longest
// path to the target (from: the sweep's distances, in each frame's terms,
// with the slots' values), each with its smallest marked successor in
// ds.succ, in rounds: a tight edge from another rank's vertex is shipped
// to its owner.
func (s *Schedule) markTight(ds *distSearch, from []int64) error {
	g := s.g
	on := newEdgeSet(int(s.nv))
	ds.onPath = &on
	succ := ds.succ
	var stack []int32
	mark := func(l, v int32) {
		if !on.has(l) {
			on.set(l)
			succ[l] = v
			stack = append(stack, l)
		} else if v != NoVertex && (succ[l] == NoVertex || v < succ[l]) {
			succ[l] = v
		}
	}
	for _, x := range s.exit {
		if l := x - s.lo; uint32(l) < uint32(s.nv) {
			mark(l, NoVertex)
		}
	}
	for {
		for len(stack) > 0 {
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v, entry := l+s.lo, s.Entry(l)
			lo, hi := g.InStart[l], g.InStart[l+1]
			ds.st.Pops++
			ds.st.Relaxations += int64(hi - lo)
			for e := lo; e < hi; e++ {
				u := g.InSrc[e]
				x := int64(0)
				if i := s.Source(e, u, entry); i >= 0 {
					x = from[i]
				}
				if x+g.InWeight.At(e) != from[l] {
					continue
				}
				if lu := u - s.lo; uint32(lu) < uint32(s.nv) {
					mark(lu, v)
				} else {
					ds.send(u, 0, v, 0)
				}
			}
		}
		hd, err := ds.exchange(distNoTop)
		if err != nil {
			return err
		}
		if !hd.sent {
			return nil
		}
		for _, m := range ds.in {
			l := m.U - s.lo
			if uint32(l) >= uint32(s.nv) {
				return fmt.Errorf("cpath: sweep: a rank shipped vertex %d to rank %d, which does not own it", m.U, s.rank)
			}
			mark(l, m.V)
		}
	}
}

// newDistSearchNoDist is a distSearch for finish over marked vertices
// (onPath) rather than distances: Succ alone, and the exchange buffers.
func newDistSearchNoDist(c mpix.Comm, g *DistGraph) *distSearch {
	s := &distSearch{c: c, g: g, rank: c.Rank(), size: c.Size(), lo: g.Lo, hi: g.Hi, n: int32(g.N), cycleAt: -1, hdrSlots: 1}
	s.succ = make([]int32, g.Hi-g.Lo)
	for i := range s.succ {
		s.succ[i] = NoVertex
	}
	s.out = make([][]distMsg, s.size)
	for p := range s.out {
		s.out[p] = make([]distMsg, 1, 16)
	}
	s.hdrAux = make([]int64, s.size)
	return s
}

// ordered reports whether owned vertex l has a place in the order.
func (s *Schedule) ordered(l int32) bool { return s.unordered.words == nil || !s.unordered.has(l) }

// CycleVertex names, on every rank, a vertex the order left out: one on
// a cycle where a rank can follow the cycle on its own vertices, else the
// smallest left out. Every rank calls it together.
func (s *Schedule) CycleVertex() (int32, error) {
	g := s.g
	best, onCycle := int32(-1), false
	if s.Unordered > 0 {
		for l := int32(0); l < s.nv && best < 0; l++ {
			if !s.ordered(l) {
				best = l + s.lo
			}
		}
		// Walk back through owned vertices left out: a repeat is on a cycle.
		seen := map[int32]bool{}
		for v := best; v >= 0 && !onCycle; {
			if seen[v] {
				best, onCycle = v, true
				break
			}
			seen[v] = true
			l, next := v-s.lo, int32(-1)
			entry := s.Entry(l)
			for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
				if u := g.InSrc[e]; u != entry && uint32(u-s.lo) < uint32(s.nv) && !s.ordered(u-s.lo) {
					next = u
					break
				}
			}
			v = next
		}
	}
	// A vertex on a cycle first, then the smallest left out.
	x := []int64{math.MinInt64, math.MinInt64}
	if best >= 0 {
		k := 1
		if onCycle {
			k = 0
		}
		x[k] = -int64(best) // Max finds the smallest
	}
	if err := s.c.Allreduce(x, mpix.Max); err != nil {
		return 0, err
	}
	for _, y := range x {
		if y != math.MinInt64 {
			return int32(-y), nil
		}
	}
	return -1, nil
}

// SweepDAG is the exact critical path of g (cut into the splits of in,
// nil for none; streams as NewSchedule's) by a distributed sweep (Schedule.DAGPath), the schedule
// kept for more sweeps over the same graph (the replay's).
func SweepDAG(c mpix.Comm, g *DistGraph, in *SplitInput, streams []int32) (*DistResult, *Schedule, error) {
	s, err := NewSchedule(c, g, in, streams)
	if err != nil {
		return nil, nil, err
	}
	graph.Timings().Mark(c.Rank(), "schedule")
	res, err := s.DAGPath()
	return res, s, err
}
