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

// attribute gives every owned vertex, and every slot, a value that the
// calls' vertices have of their own (own) and a hub inherits from its
// first member, the cause with the smallest id, if that edge is a hub's
// in-edge (else, and for the start vertex, it has outside). A hub's first
// member may be a frame's entry, whose value the first sweep learns:
// the second has it. by frame, the entries' values.
func (w *sweeper) attribute(own func(l int32) int64, outside int64) (vals, entry []int64, err error) {
	p, s := w.p, w.s
	vals = make([]int64, int(w.nv)+s.Slots())
	const unknown = math.MinInt64
	entry = make([]int64, s.Frames())
	for k := range entry {
		entry[k] = unknown
	}
	for pass := 0; pass < 2; pass++ {
		var inherited atomic.Bool // a hub took an entry's value
		err := s.Forward(vals, 1, func(chunk []int32) {
			for _, l := range chunk {
				if v := l + w.lo; v < 2*w.calls {
					vals[l] = own(l)
					continue
				}
				vals[l] = outside
				e := firstCause(p, l)
				if e < 0 || p.InKind[e] != graph.EdgeHubIn {
					continue
				}
				if i := s.Source(e, p.InSrc[e], s.Entry(l)); i >= 0 {
					vals[l] = vals[i]
				} else if k := s.FrameOf(l); k > 0 {
					vals[l] = entry[k-1]
					inherited.Store(true)
				}
			}
		})
		if err != nil {
			return nil, nil, err
		}
		exits, err := s.ExitValues(vals, 1)
		if err != nil {
			return nil, nil, err
		}
		again, err := mpix.Any(w.c, inherited.Load())
		if err != nil || !again || pass == 1 {
			return vals, exits, err
		}
		// An exit whose first member is its own frame's entry takes that
		// entry's, frame by frame; then once more with the entries known.
		copy(entry, exits)
		for k := 1; k < len(entry); k++ {
			if entry[k] == unknown {
				entry[k] = entry[k-1]
			}
		}
	}
	return vals, entry, nil
}

// firstCause is the edge into owned vertex l from its cause with the
// smallest id (the first of them in the row), -1 if it has none.
func firstCause(p *graph.PAG, l int32) int32 {
	first := int32(-1)
	for e := p.InStart[l]; e < p.InStart[l+1]; e++ {
		if first < 0 || p.InSrc[e] < p.InSrc[first] {
			first = e
		}
	}
	return first
}

// pairs is a restarting sweep's distances: by vertex and slot, the
// longest from the frame's entry (vals[2i]) and the longest started
// afresh (vals[2i+1]).
type pairs []int64

// restartSweep runs one sweep of pairs: cross reports whether the edge e
// from the value at index i (Source's) into l may be taken (i < 0: from
// the frame's entry), start is each vertex's distance afresh before its
// edges (none: the vertex is outside the solve).
func (w *sweeper) restartSweep(r *rule, cross func(l, e, i int32) bool, start func(l int32) int64) (pairs, error) {
	p, s := w.p, w.s
	vals := pairs(w.scratch(2))
	err := s.Forward(vals, 2, func(chunk []int32) {
		wr := newWeigher(r)
		for _, l := range chunk {
			a, b := int64(none), start(l)
			if b == none {
				vals[2*l], vals[2*l+1] = none, none
				continue
			}
			wr.row(w.calls, l+w.lo)
			entry := s.Entry(l)
			for e := p.InStart[l]; e < p.InStart[l+1]; e++ {
				i := s.Source(e, p.InSrc[e], entry)
				if !cross(l, e, i) {
					continue
				}
				we := wr.at(p, e)
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
	exits, err := w.s.ExitValues(vals, 2)
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

// longestMax is the largest of the ranks' xs, element by element.
func longestMax(c mpix.Comm, xs []int64) error { return c.Allreduce(xs, mpix.Max) }
