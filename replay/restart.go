package replay

import (
	"math"
	"sync/atomic"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// The POP ideal runs of the phases and of a window take paths that start
// afresh inside the graph: where an edge crosses from one phase into
// another, or into the window from outside it. So a vertex's distance is
// not its frame entry's plus one of its own (as solve's are): the sweep
// keeps two for each vertex, the longest path from its frame's entry
// (in the frame's terms, none: none) and the longest started afresh
// inside its frame, and the frames' entries' distances follow from their
// exits' pairs, frame by frame (compose).

// none is a distance that no path has.
const none = math.MinInt64 / 4

// attribute gives every position, and every slot, a value that the
// calls' vertices have of their own (own, given the position) and a hub
// inherits from its first member, the cause with the
// smallest id, if that edge is a hub's in-edge (else, and for the start
// vertex, it has outside). A hub's first member may be a frame's entry,
// whose value the first sweep learns: the second has it. exits is, by
// frame, its exit's value (frame k's entry's is exits[k-1]).
func (w *sweeper) attribute(own func(l int32) int64, outside int64) (vals, exits []int64, err error) {
	rows := w.rows
	vals = make([]int64, int(w.n)+w.slots)
	const unknown = math.MinInt64
	known := make([]int64, rows.Frames()) // the exits' values as far as known
	for k := range known {
		known[k] = unknown
	}
	lo := rows.Vertex(0) - rows.Order[0] // the first owned vertex
	for pass := 0; pass < 2; pass++ {
		var inherited atomic.Bool // a hub took an entry's value
		err := rows.Forward(vals, 1, func(k, first, end int32) {
			for l := first; l < end; l++ {
				if v := rows.Order[l] + lo; v < 2*w.calls {
					vals[l] = own(l)
					continue
				}
				vals[l] = outside
				e := w.firstCause(l, k)
				if e < 0 || w.kind(e) != graph.EdgeHubIn {
					continue
				}
				if i := rows.Src[e]; i >= 0 {
					vals[l] = vals[i]
				} else if k > 0 {
					vals[l] = known[k-1]
					inherited.Store(true)
				}
			}
		})
		if err != nil {
			return nil, nil, err
		}
		exits, err := rows.ExitValues(vals, 1)
		if err != nil {
			return nil, nil, err
		}
		again, err := mpix.Any(w.c, inherited.Load())
		if err != nil || !again || pass == 1 {
			return vals, exits, err
		}
		// An exit whose first member is its own frame's entry takes that
		// entry's, frame by frame; then once more with the entries known.
		copy(known, exits)
		for k := 1; k < len(known); k++ {
			if known[k] == unknown {
				known[k] = known[k-1]
			}
		}
	}
	return vals, known, nil
}

// firstCause is the edge into position l (of frame k) from its cause with
// the smallest id (the first of them in the row), -1 if it has none.
func (w *sweeper) firstCause(l, k int32) int32 {
	rows := w.rows
	first, firstU := int32(-1), int32(0)
	for e := rows.Start[l]; e < rows.Start[l+1]; e++ {
		if u := rows.SourceVertex(e, k); first < 0 || u < firstU {
			first, firstU = e, u
		}
	}
	return first
}

// pairs is a restarting sweep's distances: by position and slot, the
// longest from the frame's entry (vals[2i]) and the longest started
// afresh (vals[2i+1]).
type pairs []int64

// restartSweep runs one sweep of pairs: cross reports whether the edge e
// from the value at index i (Rows.Src's) into position l of frame k may
// be taken (i < 0: from the frame's entry), start is each position's
// distance afresh before its edges (none: the vertex is outside the
// solve).
func (w *sweeper) restartSweep(r *rule, cross func(k, l, e, i int32) bool, start func(l int32) int64) (pairs, error) {
	rows := w.rows
	vals := pairs(w.scratch(2))
	err := rows.Forward(vals, 2, func(k, first, end int32) {
		wr := newWeigher(r)
		for l := first; l < end; l++ {
			a, b := int64(none), start(l)
			if b == none {
				vals[2*l], vals[2*l+1] = none, none
				continue
			}
			wr.row(w.calls, rows.Vertex(l), w.attr(l))
			for e := rows.Start[l]; e < rows.Start[l+1]; e++ {
				i := rows.Src[e]
				if !cross(k, l, e, i) || wr.drops(rows, e) {
					continue
				}
				we := wr.at(rows, e)
				if i < 0 {
					a = max(a, we)
					continue
				}
				if x := vals[2*i]; x != none {
					a = max(a, x+we)
				}
				if x := vals[2*i+1]; x != none {
					b = max(b, x+we)
				}
			}
			vals[2*l], vals[2*l+1] = a, b
		}
	})
	return vals, err
}

// compose is, by frame, the distance of its entry: the exit of the frame
// before, whose pair composes with the distance of that frame's entry
// (the first frame has none).
func (w *sweeper) compose(vals pairs) ([]int64, error) {
	exits, err := w.rows.ExitValues(vals, 2)
	if err != nil {
		return nil, err
	}
	k := len(exits) / 2
	off := make([]int64, k)
	off[0] = none
	for j := 1; j < k; j++ {
		off[j] = join(off[j-1], exits[2*(j-1)], exits[2*(j-1)+1])
	}
	return off, nil
}

// join is a vertex's distance: the longer of its entry's (off) plus its
// own from the entry (a), and its own afresh (b).
func join(off, a, b int64) int64 {
	if off != none && a != none {
		return max(off+a, b)
	}
	return b
}

// eachFrame calls f with every position and its frame, in order.
func (w *sweeper) eachFrame(f func(k, l int32)) {
	w.rows.EachRun(func(k, lo, hi int32) {
		for l := lo; l < hi; l++ {
			f(k, l)
		}
	})
}
