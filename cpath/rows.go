package cpath

import (
	"fmt"
	"runtime"
	"sort"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// Rows is a copy of a part's rows in its schedule's order, for the many
// sweeps of the replay: every array read front to back, one stream, where
// a sweep of the rows in place takes the streams' runs in turn and meets
// each run's rows in six arrays cold (on the 16 M-call halo log a sweep
// in place took about three times as long). The vertices are renumbered
// by position, each edge's source given as the position it has here
// (Src): below Len() for this rank's, Len()+slot for another rank's (the
// schedule's slots), -1 for the frame's entry, whose distance in the
// frame is 0.
type Rows struct {
	s      *Schedule // the rank's schedule the rows follow (nil for rows redistributed by frame: FrameRows)
	c      mpix.Comm
	exit   []int32 // by frame: its exit (global id)
	lo     int32   // the first owned vertex (Order's local indices are from it)
	vert   []int32 // by position: the vertex's global id, where Order is not a local index (FrameRows)
	slots  int
	Order  []int32 // by position: the owned vertex (local index), or its index among those received (FrameRows)
	Start  []int32 // by position: its edges are [Start[i], Start[i+1])
	Src    []int32 // by edge: the source's position (see Rows)
	Weight graph.Weights
	Label  []uint8 // by edge: the labels the copy was asked to keep (nil: none)

	runs     [][]frameRun  // by round: its runs of one frame, in order
	chunks   [][]int32     // by round: the bounds of its chunks of runs
	sendPos  []int32       // the schedule's sends' vertices, as positions
	exitPos  []int32       // by frame: its exit's position if this rank owns it, else -1
	askedPos [][]int32     // by rank q: the position of the vertex q asked for as its i-th
	frames   *frameShuffle // FrameRows': the routes the rows came by (TakeAt)
}

// frameRun is positions [Lo, Hi) of frame Frame.
type frameRun struct {
	Frame, Lo, Hi int32
}

// Redistributed reports whether the rows are whole frames shipped to
// this rank (FrameRows) rather than the rank's own part.
func (r *Rows) Redistributed() bool { return r.frames != nil }

// Len is the number of positions (the owned vertices ordered).
func (r *Rows) Len() int { return len(r.Order) }

// Exit is the position of frame k's exit, -1 if another rank owns it.
func (r *Rows) Exit(k int) int32 { return r.exitPos[k] }

// Frames is the number of frames.
func (r *Rows) Frames() int { return len(r.exitPos) }

// Rows copies the part's rows (g's) in the schedule's order, keeping
// labels[e] of each edge (nil: none). It needs every owned vertex
// ordered (Unordered 0). With drop, the copy takes the place of the
// graph's rows: the schedule lets go of its references to them and of
// what only its own sweeps and the exact path need, and drop is called
// for the caller to let go of its own (its memory then serves the
// sweeps); the schedule's own sweeps (Forward, DAGPath) no longer work.
func (s *Schedule) Rows(labels []uint8, drop func()) (*Rows, error) {
	if s.Unordered > 0 {
		return nil, fmt.Errorf("cpath: rows: %d vertices are on or after a cycle", s.Unordered)
	}
	g := s.g
	n := int(s.nv)
	r := &Rows{s: s, c: s.c, exit: s.exit, lo: s.lo, slots: s.Slots(), Order: make([]int32, 0, n)}
	at := make([]int32, n) // by owned vertex: its position
	r.order(at)
	// The rows, each range of positions on a core, an array at a time.
	r.Start = make([]int32, n+1)
	for i, l := range r.Order {
		r.Start[i+1] = r.Start[i] + g.InStart[l+1] - g.InStart[l]
	}
	m := r.Start[n]
	r.Src = make([]int32, m)
	r.Weight = graph.Weights{W: make([]int32, m), Big: g.InWeight.Big}
	if labels != nil {
		r.Label = make([]uint8, m)
	}
	parts := 4 * workers()
	b := par.Bounds(n, parts)
	par.Do(parts, func(k int) {
		for i := b[k]; i < b[k+1]; i++ {
			l := r.Order[i]
			entry := s.Entry(l)
			x := r.Start[i]
			for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
				switch u, lu := g.InSrc[e], g.InSrc[e]-s.lo; {
				case u == entry:
					r.Src[x] = -1
				case uint32(lu) < uint32(s.nv):
					r.Src[x] = at[lu]
				default:
					r.Src[x] = int32(n) + s.remoteSlot[s.remote.rank(e)]
				}
				r.Weight.W[x] = g.InWeight.W[e]
				if labels != nil {
					r.Label[x] = labels[e]
				}
				x++
			}
		}
	})
	r.sendPos = make([]int32, len(s.send))
	for i, x := range s.send {
		r.sendPos[i] = at[x.Local]
	}
	r.exitPos = make([]int32, len(s.exit))
	for k, x := range s.exit {
		r.exitPos[k] = -1
		if l := x - s.lo; uint32(l) < uint32(s.nv) {
			r.exitPos[k] = at[l]
		}
	}
	r.askedPos = make([][]int32, s.size)
	for q := range r.askedPos {
		r.askedPos[q] = make([]int32, 0)
	}
	for _, a := range s.asked.by {
		q := a.Rank
		for int32(len(r.askedPos[q])) <= a.Index {
			r.askedPos[q] = append(r.askedPos[q], -1)
		}
		r.askedPos[q][a.Index] = at[a.Local]
	}
	if drop != nil {
		s.g, s.segs, s.unordered, s.split = nil, nil, edgeSet{}, nil
		s.remote, s.remoteSlot, s.from = edgeSet{}, nil, nil
		drop()
		runtime.GC()
	}
	return r, nil
}

// order lays the positions out: the schedule's segments in order, each
// round's runs of one frame merged, cut into the schedule's chunks; at is
// by owned vertex its position.
func (r *Rows) order(at []int32) {
	s := r.s
	for _, ch := range s.chunks {
		var runs []frameRun
		bounds := []int32{0}
		for c := 0; c+1 < len(ch); c++ {
			for _, sg := range s.segs[ch[c]:ch[c+1]] {
				k := sg.Frame
				pos := int32(len(r.Order))
				if m := len(runs); m > int(bounds[len(bounds)-1]) && runs[m-1].Frame == k && runs[m-1].Hi == pos {
					runs[m-1].Hi += sg.Hi - sg.Lo
				} else {
					runs = append(runs, frameRun{k, pos, pos + sg.Hi - sg.Lo})
				}
				for l := sg.Lo; l < sg.Hi; l++ {
					at[l] = int32(len(r.Order))
					r.Order = append(r.Order, l)
				}
			}
			bounds = append(bounds, int32(len(runs)))
		}
		r.runs = append(r.runs, runs)
		r.chunks = append(r.chunks, bounds)
	}
}

// Forward is Schedule.Forward over the copy: vals holds width values per
// position, then per slot; solve computes positions [lo, hi), all of
// frame k, in order, reading each edge's source's value at Src (none for
// -1: 0, the entry's in the frame).
func (r *Rows) Forward(vals []int64, width int, solve func(k, lo, hi int32)) error {
	s := r.s
	if width < 1 || len(vals) != (r.Len()+r.slots)*width {
		return fmt.Errorf("cpath: sweep: %d values for %d vertices and %d slots of width %d", len(vals), r.Len(), r.slots, width)
	}
	for i, ch := range r.chunks {
		runs := r.runs[i]
		par.Do(len(ch)-1, func(c int) {
			for _, fr := range runs[ch[c]:ch[c+1]] {
				solve(fr.Frame, fr.Lo, fr.Hi)
			}
		})
		if i == len(r.chunks)-1 {
			break
		}
		if err := s.ship(vals, width, i, r.sendPos); err != nil {
			return err
		}
	}
	return nil
}

// ExitValues is Schedule.ExitValues over the copy.
func (r *Rows) ExitValues(vals []int64, width int) ([]int64, error) {
	return exitValues(r.c, len(r.exit), vals, width, r.exitPos)
}

// Slots is the number of other ranks' vertices whose values the sweeps
// take (values after the positions').
func (r *Rows) Slots() int { return r.slots }

// Asked is the position of the vertex rank q asked for as its i-th (the
// slot Rows.Src gives it on q, less q's slot base for this rank), -1 if
// none.
func (r *Rows) Asked(q int, i int32) int32 {
	if i < 0 || int(i) >= len(r.askedPos[q]) {
		return -1
	}
	return r.askedPos[q][i]
}

// SlotOwner is the rank whose vertex slot k holds, and its index among
// the vertices this rank asked of it.
func (r *Rows) SlotOwner(k int32) (q int, i int32) {
	s := r.s
	for q = 0; q+1 < len(s.slotBase) && s.slotBase[q+1] <= k; q++ {
	}
	return q, k - s.slotBase[q]
}

// EachRun calls f with every run of positions of one frame, in order.
func (r *Rows) EachRun(f func(k, lo, hi int32)) {
	for _, runs := range r.runs {
		for _, fr := range runs {
			f(fr.Frame, fr.Lo, fr.Hi)
		}
	}
}

// FrameAt is the frame of position i.
func (r *Rows) FrameAt(i int32) int32 {
	for _, runs := range r.runs {
		if len(runs) == 0 || runs[len(runs)-1].Hi <= i {
			continue
		}
		j := sort.Search(len(runs), func(j int) bool { return runs[j].Hi > i })
		return runs[j].Frame
	}
	return -1
}

// SlotVertex is the vertex (global id) slot k holds.
func (r *Rows) SlotVertex(k int32) int32 {
	q, i := r.SlotOwner(k)
	return r.s.want[q][i].V
}

// Vertex is the global id of the vertex at position i.
func (r *Rows) Vertex(i int32) int32 {
	if r.vert != nil {
		return r.vert[i]
	}
	return r.lo + r.Order[i]
}

// SourceVertex is the global id of edge e's source, for a vertex of frame
// k.
func (r *Rows) SourceVertex(e, k int32) int32 {
	switch x := r.Src[e]; {
	case x < 0:
		return r.exit[k-1]
	case int(x) < r.Len():
		return r.Vertex(x)
	default:
		return r.SlotVertex(x - int32(r.Len()))
	}
}
