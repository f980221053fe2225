package replay

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// sweeper solves the replay's rules on the graph as the analyzer's ranks
// hold it, each one sweep of the path search's schedule (cpath.Schedule)
// over the part's rows, copied in its order (cpath.Rows): no rank holds
// more of the graph than its part, and what crosses between them is the
// values of the vertices other ranks' edges start at, the frames' exits
// and the answers. Vertices are by position in the copy.
type sweeper struct {
	c     mpix.Comm
	p     *graph.PAG
	rows  *cpath.Rows
	n     int32   // positions
	calls int32   // the run's: vertex ids below 2·calls are the calls' S and E
	vals  []int64 // the sweeps' scratch, reused
	slots int
	// attrs is, by position, the attributes of its vertex's call (the
	// zero cattr for a hub or the start vertex): looked up once, in the
	// positions' order, rather than by vertex in every sweep, where the
	// schedule's rounds take the vertices far out of their order.
	attrs  []cattr
	ncalls int32
}

// attr is the attributes of the call of the vertex at position l.
func (w *sweeper) attr(l int32) cattr { return w.attrs[l] }

// setAttrs takes the owned calls' attributes (by c - CallLo) and lays
// them out by position: where the rows are another rank's vertices
// (FrameRows), each vertex's is shipped to it.
func (w *sweeper) setAttrs(attrs []cattr) error {
	of := func(l int32) cattr {
		if l < 2*w.ncalls {
			return attrs[l>>1]
		}
		return cattr{}
	}
	byOrder := []cattr(nil) // by the Order index of a received vertex
	if w.rows.Redistributed() {
		var err error
		if byOrder, err = cpath.TakeAt(w.rows, of); err != nil {
			return err
		}
	}
	w.attrs = make([]cattr, w.n)
	b := par.Bounds(w.n, 4*runtime.GOMAXPROCS(0))
	par.Do(len(b)-1, func(k int) {
		for l := b[k]; l < b[k+1]; l++ {
			i := w.rows.Order[l]
			if byOrder != nil {
				w.attrs[l] = byOrder[i]
			} else {
				w.attrs[l] = of(i)
			}
		}
	})
	return nil
}

// perVertex gives, by the rows' Order index, value(l) of each owned
// vertex (local index): shipped where the rows are redistributed.
func perVertex[T any](w *sweeper, value func(l int32) T) ([]T, error) {
	return cpath.TakeAt(w.rows, value)
}

// newSweeper sweeps the rows given (redistributed by frame: FrameRows),
// or copies the part's rows in the schedule's order; with release it lets
// go of the PAG's edges once the copy takes their place
// (PAG.ReleaseEdges).
func newSweeper(c mpix.Comm, p *graph.PAG, s *cpath.Schedule, rows *cpath.Rows, release bool) (*sweeper, error) {
	if rows != nil {
		if release {
			p.ReleaseEdges()
		}
		return &sweeper{c: c, p: p, rows: rows, n: int32(rows.Len()), calls: int32(p.NumCalls()), slots: rows.Slots(),
			ncalls: p.CallHi - p.CallLo}, nil
	}
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
	kinds, err := mpix.FromBytes[uint8](mpix.Bytes(p.InKind))
	if err != nil {
		return nil, err
	}
	var drop func()
	if release {
		drop = func() {
			p.ReleaseEdges()
			kinds = nil
		}
	}
	vals := s.Scratch() // the exact path's distances, done with
	rows, err = s.Rows(kinds, drop)
	if err != nil {
		return nil, err
	}
	return &sweeper{c: c, p: p, rows: rows, n: int32(rows.Len()), calls: int32(p.NumCalls()), slots: s.Slots(), vals: vals[:0],
		ncalls: p.CallHi - p.CallLo}, nil
}

// scratch is the sweeps' buffer for width values a position and slot.
func (w *sweeper) scratch(width int) []int64 {
	n := (int(w.n) + w.slots) * width
	if cap(w.vals) < n {
		w.vals = make([]int64, n)
	}
	return w.vals[:n]
}

// kind is edge e's kind.
func (w *sweeper) kind(e int32) graph.EdgeKind { return graph.EdgeKind(w.rows.Label[e]) }

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

// row sets the weigher for the edges into vertex v (a global id) of a
// call with attributes a.
func (wr *weigher) row(calls, v int32, a cattr) {
	wr.m, wr.mode = rowRule(wr.r, &wr.modes, wr.perCall, calls, v, a, &wr.tab)
}

// at is edge e's weight in the row set last.
func (wr *weigher) at(rows *cpath.Rows, e int32) int64 {
	switch wr.mode {
	case plainRow:
		return rows.Weight.At(e)
	case zeroRow:
		return 0
	}
	return scale(rows.Weight.At(e), wr.m[rows.Label[e]])
}

// drops reports whether edge e, in the row set last, is no dependency
// under the rule (rule.dropHeld).
func (wr *weigher) drops(rows *cpath.Rows, e int32) bool {
	return wr.mode == droppingRow && graph.EdgeKind(rows.Label[e]) == graph.EdgeHeldSend
}

// best is a frame's longest distance (in its terms) and the smallest
// vertex id that has it.
type best struct {
	d int64
	v int32
}

// solve is the longest path under r: its length and the vertex it ends
// at (the smallest id among the longest), the same on every rank, and
// the position of that vertex here (-1: another rank's). The distances
// (in their frames' terms) stay in the scratch for profile.
func (w *sweeper) solve(r *rule) (length int64, end, endPos int32, err error) {
	rows := w.rows
	vals := w.scratch(1)
	frames := make([]best, rows.Frames())
	at := make([]int32, rows.Frames()) // by frame: the position of its best
	for k := range frames {
		frames[k] = best{-1, -1}
	}
	err = rows.Forward(vals, 1, func(k, first, end int32) {
		wr := newWeigher(r)
		src, label := rows.Src, rows.Label
		fb := frames[k]
		fa := at[k]
		for l := first; l < end; l++ {
			lo, hi := rows.Start[l], rows.Start[l+1]
			d := int64(0) // a source's
			if lo < hi {
				wr.row(w.calls, rows.Vertex(l), w.attr(l))
				d = math.MinInt64
				// One loop a mode: the rule's choice made once a row.
				switch wr.mode {
				case plainRow:
					for e := lo; e < hi; e++ {
						x := int64(0)
						if i := src[e]; i >= 0 {
							x = vals[i]
						}
						d = max(d, x+rows.Weight.At(e))
					}
				case zeroRow:
					for e := lo; e < hi; e++ {
						x := int64(0)
						if i := src[e]; i >= 0 {
							x = vals[i]
						}
						d = max(d, x)
					}
				default: // scaledRow, droppingRow
					m, drop := wr.m, wr.mode == droppingRow
					for e := lo; e < hi; e++ {
						if drop && graph.EdgeKind(label[e]) == graph.EdgeHeldSend {
							continue
						}
						x := int64(0)
						if i := src[e]; i >= 0 {
							x = vals[i]
						}
						d = max(d, x+scale(rows.Weight.At(e), m[label[e]]))
					}
					if d == math.MinInt64 {
						d = 0 // its causes all left out: a source
					}
				}
			}
			vals[l] = d
			if v := rows.Vertex(l); d > fb.d || (d == fb.d && v < fb.v) {
				fb, fa = best{d, v}, l
			}
		}
		frames[k], at[k] = fb, fa
	})
	if err != nil {
		return 0, 0, 0, err
	}
	off, err := w.offsets(vals)
	if err != nil {
		return 0, 0, 0, err
	}
	length, end, endPos = -1, -1, -1
	for k, fb := range frames {
		if fb.v < 0 {
			continue
		}
		if d := off[k] + fb.d; d > length || (d == length && fb.v < end) {
			length, end, endPos = d, fb.v, at[k]
		}
	}
	length, gend, err := w.longest(length, end)
	if gend != end {
		endPos = -1
	}
	return length, gend, endPos, err
}

// offsets is, by frame, the longest distance to its entry: the sum of the
// exits' distances in their frames before it.
func (w *sweeper) offsets(vals []int64) ([]int64, error) {
	exits, err := w.rows.ExitValues(vals, 1)
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

// walk is a walk back along path Path of a profiles call: at position
// Pos of frame Frame.
type walk struct{ Pos, Frame, Path int32 }

// handoff is a walk handed to the owner of a vertex: the index that
// owner gave it among the vertices the sender asked of it.
type handoff struct{ Index, Frame, Path int32 }

// solvedPath is a solve's longest path, for profiles: the rule it was
// solved under, the vertex it ends at (at EndPos here, -1 elsewhere),
// and the solve's distances (the scratch's, or a copy).
type solvedPath struct {
	r           *rule
	end, endPos int32
	vals        []int64
}

// profiled is where one path runs: its top ranks and operations by time.
type profiled struct {
	ranks []RankNs
	ops   []OpNs
}

// profile is profiles of the last solve's path (under r, ending at end).
func (w *sweeper) profile(r *rule, end, endPos int32) ([]RankNs, []OpNs, error) {
	out, err := w.profiles([]solvedPath{{r, end, endPos, w.vals[:int(w.n)+w.slots]}})
	if err != nil {
		return nil, nil, err
	}
	return out[0].ranks, out[0].ops, nil
}

// profileBudget bounds the distances jobs.run keeps for one profiles
// call, by rank: the solves of several scenarios are profiled together
// where their copies fit in it.
const profileBudget = 64 << 20

// profiles is where each path runs: the top ranks and operations by
// time, the same on every rank. A path runs through every frame's exit
// before its end's frame, so each frame's piece is walked at once, back
// from its exit (or the end) to its entry, each rank on its own vertices,
// handing the walk to the owner of the cause it comes from; the edge
// taken into a vertex is the first of its row by source id that gives its
// distance, as a solve keeping its edges would keep. The paths' walks go
// in the same rounds: a path that crosses ranks often takes a round per
// crossing (on a 4-rank LAMMPS run at P = 2, 400 a path, and six paths
// walked one after another took 4 of the analysis's 5 s).
func (w *sweeper) profiles(paths []solvedPath) ([]profiled, error) {
	p, rows := w.p, w.rows
	ends := make([]int64, len(paths))
	for i := range paths {
		ends[i] = -1
		if paths[i].endPos >= 0 {
			ends[i] = int64(rows.FrameAt(paths[i].endPos))
		}
	}
	if err := w.c.Allreduce(ends, mpix.Max); err != nil {
		return nil, err
	}
	var walks []walk
	for i, ps := range paths {
		kEnd := int32(ends[i])
		if ps.endPos >= 0 {
			walks = append(walks, walk{ps.endPos, kEnd, int32(i)})
		}
		for k := int32(0); k < kEnd; k++ {
			if x := rows.Exit(int(k)); x >= 0 {
				walks = append(walks, walk{x, k, int32(i)})
			}
		}
	}
	width := p.Ranks + 258                    // by rank, then by operation: 256 computation, 257 launch
	byRank := make([]int64, len(paths)*width) // by path
	for {
		// The walks of a round on every core, each goroutine with its own
		// sums and hand-offs, added up after.
		parts := max(1, min(len(walks), 4*runtime.GOMAXPROCS(0)))
		sums := make([][]int64, parts)
		outs := make([][][]handoff, parts)
		bounds := par.Bounds(len(walks), parts)
		par.Do(parts, func(k int) {
			sums[k] = make([]int64, len(byRank))
			outs[k] = make([][]handoff, w.c.Size())
			for _, wk := range walks[bounds[k]:bounds[k+1]] {
				ps := &paths[wk.Path]
				w.walk(ps.r, wk, ps.vals, sums[k][int(wk.Path)*width:][:width], outs[k])
			}
		})
		out := make([][]handoff, w.c.Size())
		for k := range parts {
			for i, x := range sums[k] {
				byRank[i] += x
			}
			for q := range out {
				out[q] = append(out[q], outs[k][q]...)
			}
		}
		got, err := mpix.Ship(w.c, out)
		if err != nil {
			return nil, err
		}
		walks = walks[:0]
		for q, b := range got {
			hs, err := mpix.FromBytes[handoff](b)
			if err != nil {
				return nil, err
			}
			for _, h := range hs {
				x := rows.Asked(q, h.Index)
				if x < 0 {
					return nil, fmt.Errorf("replay: rank %d handed on a walk at its slot %d, which rank %d does not hold", q, h.Index, w.c.Rank())
				}
				if h.Path < 0 || int(h.Path) >= len(paths) {
					return nil, fmt.Errorf("replay: rank %d handed on a walk of path %d of %d", q, h.Path, len(paths))
				}
				walks = append(walks, walk{x, h.Frame, h.Path})
			}
		}
		more, err := mpix.Any(w.c, len(walks) > 0)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	if err := w.c.Allreduce(byRank, mpix.Sum); err != nil {
		return nil, err
	}
	out := make([]profiled, len(paths))
	for i := range out {
		b := byRank[i*width:][:width]
		out[i] = profiled{topRanks(b[:p.Ranks]), topOps(b[p.Ranks:])}
	}
	return out, nil
}

// walk follows walk wk back along the path the last solve (under r)
// found, adding each edge's time to its rank's and its operation's in
// byRank (ranks, then operations: 256 computation, 257 launch), until it
// reaches its frame's entry or a source, or another rank's vertex (then
// handed to that rank in out).
func (w *sweeper) walk(r *rule, wk walk, vals []int64, byRank []int64, out [][]handoff) {
	p, rows := w.p, w.rows
	byOp := byRank[p.Ranks:]
	wr := newWeigher(r)
	rank := 0
	for l := wk.Pos; ; {
		lo, hi := rows.Start[l], rows.Start[l+1]
		if lo == hi {
			return // a source
		}
		v := rows.Vertex(l)
		a := w.attr(l)
		wr.row(w.calls, v, a)
		// The tight edge from the smallest source id: the ids are looked
		// up only where a row has more than one tight edge.
		predE, predU, predW := int32(-1), int32(-1), int64(0)
		for e := lo; e < hi; e++ {
			x := int64(0)
			if i := rows.Src[e]; i >= 0 {
				x = vals[i]
			}
			if wr.drops(rows, e) {
				continue
			}
			we := wr.at(rows, e)
			if x+we != vals[l] {
				continue
			}
			if predE < 0 {
				predE, predW = e, we
				continue
			}
			if predU < 0 {
				predU = rows.SourceVertex(predE, wk.Frame)
			}
			if u := rows.SourceVertex(e, wk.Frame); u < predU {
				predE, predU, predW = e, u, we
			}
		}
		if predE < 0 {
			return // cannot happen: the distance came over some edge
		}
		if v < 2*w.calls && predW != 0 {
			c := v >> 1
			if c < p.RankStart[rank] || c >= p.RankStart[rank+1] {
				rank = p.Rank(c)
			}
			byRank[rank] += predW
			switch w.kind(predE) {
			case graph.EdgeProgram:
				byOp[256] += predW
			case graph.EdgeLaunch:
				byOp[257] += predW
			default:
				byOp[a.Op] += predW
			}
		}
		x := rows.Src[predE]
		if x < 0 {
			return // the frame's entry: its own frame's walk goes on
		}
		if x >= w.n {
			q, i := rows.SlotOwner(x - w.n)
			out[q] = append(out[q], handoff{i, wk.Frame, wk.Path})
			return
		}
		l = x
	}
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
