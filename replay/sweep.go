package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// sweeper solves the replay's rules on the graph as the analyzer's ranks
// hold it, each one sweep of the path search's schedule (cpath.Schedule)
// over the parts' own rows: no rank holds more of the graph than its part,
// and what crosses between them is the values of the vertices other
// ranks' edges start at, the frames' exits and the answers.
type sweeper struct {
	c     mpix.Comm
	p     *graph.PAG
	s     *cpath.Schedule
	lo    int32 // the first owned vertex
	nv    int32
	calls int32   // the run's: vertex ids below 2·calls are the calls' S and E
	vals  []int64 // the sweeps' scratch, reused
}

func newSweeper(c mpix.Comm, p *graph.PAG, s *cpath.Schedule) (*sweeper, error) {
	if s.Owned() != int(p.Bounds[p.Part+1]-p.Bounds[p.Part]) {
		return nil, fmt.Errorf("replay: the schedule orders %d vertices, the part holds %d", s.Owned(), p.Bounds[p.Part+1]-p.Bounds[p.Part])
	}
	left, err := mpix.AllreduceOne(c, int64(s.Unordered), mpix.Sum)
	if err != nil {
		return nil, err
	}
	if left > 0 {
		v, err := s.CycleVertex()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("replay: the graph has a cycle through vertex %d", v)
	}
	return &sweeper{c: c, p: p, s: s, lo: p.Bounds[p.Part], nv: int32(s.Owned()), calls: int32(p.NumCalls())}, nil
}

// scratch is the sweeps' buffer for width values a vertex and slot.
func (w *sweeper) scratch(width int) []int64 {
	n := (int(w.nv) + w.s.Slots()) * width
	if cap(w.vals) < n {
		w.vals = make([]int64, n)
	}
	return w.vals[:n]
}

// weigher gives the weights of the edges into one vertex under a rule:
// a goroutine's copy of the rule's factors, which perCall rules change
// row by row.
type weigher struct {
	r       *rule
	modes   rowModes
	perCall bool
	tab     [numKinds]float64
	m       *[numKinds]float64
	mode    int
}

func newWeigher(r *rule) weigher {
	return weigher{r: r, modes: r.modes(), perCall: r.perCall(), tab: r.mul}
}

// row sets the weigher for the edges into vertex v.
func (wr *weigher) row(calls, v int32) {
	wr.m, wr.mode = rowRule(wr.r, &wr.modes, wr.perCall, calls, v, &wr.tab)
}

// at is edge e's weight in the row set last.
func (wr *weigher) at(g *graph.PAG, e int32) int64 {
	switch wr.mode {
	case plainRow:
		return g.InWeight.At(e)
	case zeroRow:
		return 0
	}
	return scale(g.InWeight.At(e), wr.m[g.InKind[e]])
}

// solve is the longest path under r: its length and the vertex it ends
// at (the smallest id among the longest), the same on every rank. The
// distances (in their frames' terms) stay in the scratch for profile.
func (w *sweeper) solve(r *rule) (length int64, end int32, err error) {
	p, s := w.p, w.s
	vals := w.scratch(1)
	err = s.Forward(vals, 1, func(chunk []int32) {
		wr := newWeigher(r)
		for _, l := range chunk {
			lo, hi := p.InStart[l], p.InStart[l+1]
			if lo == hi {
				vals[l] = 0
				continue
			}
			wr.row(w.calls, l+w.lo)
			entry := s.Entry(l)
			best := int64(math.MinInt64)
			for e := lo; e < hi; e++ {
				x := int64(0)
				if i := s.Source(e, p.InSrc[e], entry); i >= 0 {
					x = vals[i]
				}
				best = max(best, x+wr.at(p, e))
			}
			vals[l] = best
		}
	})
	if err != nil {
		return 0, 0, err
	}
	off, err := w.offsets(vals)
	if err != nil {
		return 0, 0, err
	}
	length, end = -1, -1
	for l := int32(0); l < w.nv; l++ {
		if d := off[s.FrameOf(l)] + vals[l]; d > length {
			length, end = d, l+w.lo
		}
	}
	return w.longest(length, end)
}

// offsets is, by frame, the longest distance to its entry: the sum of the
// exits' distances in their frames before it.
func (w *sweeper) offsets(vals []int64) ([]int64, error) {
	exits, err := w.s.ExitValues(vals, 1)
	if err != nil {
		return nil, err
	}
	off := make([]int64, len(exits))
	for k := 1; k < len(off); k++ {
		off[k] = off[k-1] + exits[k-1]
	}
	return off, nil
}

// longest is the largest of the ranks' lengths, with the smallest vertex
// among those that have it.
func (w *sweeper) longest(length int64, end int32) (int64, int32, error) {
	x := []int64{length}
	if err := w.c.Allreduce(x, mpix.Max); err != nil {
		return 0, 0, err
	}
	y := []int64{math.MaxInt64}
	if length == x[0] {
		y[0] = int64(end)
	}
	if err := w.c.Allreduce(y, mpix.Min); err != nil {
		return 0, 0, err
	}
	return x[0], int32(y[0]), nil
}

// profile is where the longest path the last solve (under r) found,
// ending at vertex end, runs: the top ranks and operations by time, the
// same on every rank. The path runs through every frame's exit before
// end's frame, so each frame's piece is walked at once, back from its
// exit (or end) to its entry, each rank on its own vertices, handing the
// walk to the owner of the cause it comes from; the edge taken into a
// vertex is the first of its row by source id that gives its distance,
// as a solve keeping its edges would keep.
func (w *sweeper) profile(r *rule, end int32) ([]RankNs, []OpNs, error) {
	p, s := w.p, w.s
	vals := w.vals[:(int(w.nv) + s.Slots())]
	kEnd := int32(-1)
	if l := end - w.lo; uint32(l) < uint32(w.nv) {
		kEnd = s.FrameOf(l)
	}
	kx, err := mpix.AllreduceOne(w.c, int64(kEnd), mpix.Max)
	if err != nil {
		return nil, nil, err
	}
	var walks []int32 // owned vertices to walk back from
	if l := end - w.lo; uint32(l) < uint32(w.nv) {
		walks = append(walks, l)
	}
	for k := 0; k < int(kx); k++ {
		if l := s.Exit(k) - w.lo; uint32(l) < uint32(w.nv) {
			walks = append(walks, l)
		}
	}
	byRank := make([]int64, p.Ranks+258) // by rank, then by operation: 256 computation, 257 launch
	byOp := byRank[p.Ranks:]
	wr := newWeigher(r)
	rank := 0
	for {
		out := make([][]int32, w.c.Size())
		for _, l := range walks {
			for {
				v := l + w.lo
				lo, hi := p.InStart[l], p.InStart[l+1]
				if lo == hi {
					break // a source
				}
				wr.row(w.calls, v)
				entry := s.Entry(l)
				pred, predAt, predE, predW := int32(-1), int32(-1), int32(-1), int64(0)
				for e := lo; e < hi; e++ {
					u := p.InSrc[e]
					x := int64(0)
					i := s.Source(e, u, entry)
					if i >= 0 {
						x = vals[i]
					}
					if we := wr.at(p, e); x+we == vals[l] && (pred < 0 || u < pred) {
						pred, predAt, predE, predW = u, i, e, we
					}
				}
				if pred < 0 {
					break // cannot happen: the distance came over some edge
				}
				if v < 2*w.calls && predW != 0 {
					c := v >> 1
					if c < p.RankStart[rank] || c >= p.RankStart[rank+1] {
						rank = p.Rank(c)
					}
					byRank[rank] += predW
					switch p.InKind[predE] {
					case graph.EdgeProgram:
						byOp[256] += predW
					case graph.EdgeLaunch:
						byOp[257] += predW
					default:
						byOp[p.Op[c-p.CallLo]] += predW
					}
				}
				if predAt < 0 {
					break // the frame's entry: its own frame's walk goes on
				}
				if predAt >= w.nv {
					q := sort.Search(len(p.Bounds)-1, func(q int) bool { return p.Bounds[q+1] > pred })
					out[q] = append(out[q], pred)
					break
				}
				l = predAt
			}
		}
		got, err := mpix.Ship(w.c, out)
		if err != nil {
			return nil, nil, err
		}
		walks = walks[:0]
		for _, b := range got {
			vs, err := mpix.FromBytes[int32](b)
			if err != nil {
				return nil, nil, err
			}
			for _, v := range vs {
				if l := v - w.lo; uint32(l) < uint32(w.nv) {
					walks = append(walks, l)
				} else {
					return nil, nil, fmt.Errorf("replay: a rank handed the walk vertex %d, which rank %d does not own", v, w.c.Rank())
				}
			}
		}
		more, err := mpix.Any(w.c, len(walks) > 0)
		if err != nil {
			return nil, nil, err
		}
		if !more {
			break
		}
	}
	if err := w.c.Allreduce(byRank, mpix.Sum); err != nil {
		return nil, nil, err
	}
	return topRanks(byRank[:p.Ranks]), topOps(byOp), nil
}

// topRanks is the three ranks with the most time, most first.
func topRanks(byRank []int64) []RankNs {
	var ranks []RankNs
	for r, ns := range byRank {
		if ns > 0 {
			ranks = append(ranks, RankNs{r, ns})
		}
	}
	slices.SortFunc(ranks, func(a, b RankNs) int { return cmp.Or(cmp.Compare(b.Ns, a.Ns), cmp.Compare(a.Rank, b.Rank)) })
	return ranks[:min(len(ranks), 3)]
}

// topOps is the three operations with the most time, most first.
func topOps(byOp []int64) []OpNs {
	var ops []OpNs
	for o, ns := range byOp {
		if ns == 0 {
			continue
		}
		name := "computation"
		switch {
		case o == 257:
			name = "launch"
		case o < 256:
			name = trace.Op(o).String()
		}
		ops = append(ops, OpNs{name, ns})
	}
	slices.SortFunc(ops, func(a, b OpNs) int { return cmp.Or(cmp.Compare(b.Ns, a.Ns), strings.Compare(a.Op, b.Op)) })
	return ops[:min(len(ops), 3)]
}
