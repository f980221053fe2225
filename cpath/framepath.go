package cpath

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// FrameDAG is the exact critical path of g (cut into the splits of in) on
// its rows redistributed by frame (FrameRows): DAG's path, vertex for
// vertex, as Schedule.DAGPath finds it, but each rank sweeping and marking
// whole frames of its own, and the path's pieces, one a frame, gathered on
// rank 0. ok is false where FrameRows is not (the caller then takes
// SweepDAG); the rows are kept for more sweeps (the replay's).
func FrameDAG(c mpix.Comm, g *DistGraph, in *SplitInput, labels []uint8) (*DistResult, *Rows, bool, error) {
	bytes0, calls0 := c.Stats()
	r, ok, err := FrameRows(c, g, in, labels)
	if err != nil || !ok {
		return nil, nil, ok, err
	}
	res, err := r.dagPath(g.Target, int64(len(g.InSrc)), bytes0, calls0)
	return res, r, true, err
}

// dagPath is FrameDAG's path on the rows: one sweep of the distances from
// the sources, the marking of the vertices on a longest path to the
// target (from every frame's exit, back along the tight edges, each
// keeping its smallest marked successor), and the pieces from each
// frame's entry (frame 0: its smallest marked source) to its exit.
func (r *Rows) dagPath(target int32, edges, bytes0, calls0 int64) (*DistResult, error) {
	c := r.c
	n := int32(r.Len())
	from := make([]int64, n)
	err := r.Forward(from, 1, func(k, first, end int32) {
		for l := first; l < end; l++ {
			lo, hi := r.Start[l], r.Start[l+1]
			d := int64(0) // a source's
			if lo < hi {
				d = Unreached
				for e := lo; e < hi; e++ {
					x := int64(0)
					if i := r.Src[e]; i >= 0 {
						x = from[i]
					}
					d = max(d, x+r.Weight.At(e))
				}
			}
			from[l] = d
		}
	})
	if err != nil {
		return nil, err
	}
	exits, err := r.ExitValues(from, 1)
	if err != nil {
		return nil, err
	}
	var length int64
	for _, x := range exits {
		length += x
	}
	graph.Timings().Mark(c.Rank(), "frame-sweep")
	pieces, marked, relax, err := r.markFrames(from, target)
	if err != nil {
		return nil, err
	}
	// The pieces on rank 0, in frame order.
	all, err := mpix.Gather(c, func(e *mpix.Encoder) {
		mpix.PutList(e, pieces, func(e *mpix.Encoder, x *framePiece) {
			mpix.PutRecord(e, x.Frame)
			mpix.PutRecords(e, x.Vertices)
		})
	}, func(d *mpix.Decoder) []framePiece {
		return mpix.ReadList(d, func(d *mpix.Decoder, x *framePiece) {
			x.Frame = mpix.ReadRecord[int32](d)
			x.Vertices = mpix.ReadRecords[int32](d)
		})
	})
	var path Path
	if err == nil && c.Rank() == 0 {
		path, err = joinPieces(all, r.Frames(), length)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	b1, calls1 := c.Stats()
	x := []int64{marked, int64(n) + marked, relax, edges, b1 - bytes0}
	if err := c.Allreduce(x, mpix.Sum); err != nil {
		return nil, err
	}
	res := &DistResult{Path: path}
	res.Stats.Reached, res.Stats.Pops, res.Stats.Relaxations, res.Stats.Edges, res.Stats.BytesSent = int(x[0]), x[1], x[2], x[3], x[4]
	res.Stats.Rounds = calls1 - calls0
	return res, nil
}

// framePiece is the path's piece in one frame: from its entry's successor
// (or the first frame's source) to its exit.
type framePiece struct {
	Frame    int32
	Vertices []int32
}

// markFrames marks, in each of the rank's frames (on every core), the
// vertices on a longest path to its exit, each with its smallest marked
// successor, and returns each frame's piece of the path, the vertices
// marked and the edges relaxed.
func (r *Rows) markFrames(from []int64, target int32) ([]framePiece, int64, int64, error) {
	runs := r.runs[0]
	n := r.Len()
	succ := make([]int32, n)
	marked := make([]bool, n)
	pieces := make([]framePiece, len(runs))
	var count, relax atomic.Int64
	errs := make([]error, len(runs))
	par.Do(len(runs), func(i int) {
		fr := runs[i]
		exit := r.exitPos[fr.Frame]
		if exit < 0 {
			errs[i] = fmt.Errorf("cpath: frame rows: frame %d's exit is not with its frame", fr.Frame)
			return
		}
		entrySucc := int32(-1) // the entry's smallest marked successor
		stack := []int32{exit}
		marked[exit], succ[exit] = true, NoVertex
		var nm, nr int64 = 1, 0
		for len(stack) > 0 {
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			lo, hi := r.Start[l], r.Start[l+1]
			nr += int64(hi - lo)
			for e := lo; e < hi; e++ {
				u := r.Src[e]
				x := int64(0)
				if u >= 0 {
					x = from[u]
				}
				if x+r.Weight.At(e) != from[l] {
					continue
				}
				switch {
				case u < 0:
					if entrySucc < 0 || r.vert[l] < r.vert[entrySucc] {
						entrySucc = l
					}
				case !marked[u]:
					marked[u], succ[u] = true, l
					stack = append(stack, u)
					nm++
				case r.vert[l] < r.vert[succ[u]]:
					succ[u] = l
				}
			}
		}
		count.Add(nm)
		relax.Add(nr)
		// The piece: from the entry's successor, or in the first frame
		// from the smallest marked source.
		start := entrySucc
		if fr.Frame == 0 {
			start = -1
			for l := fr.Lo; l < fr.Hi; l++ {
				if marked[l] && r.Start[l] == r.Start[l+1] && (start < 0 || r.vert[l] < r.vert[start]) {
					start = l
				}
			}
		}
		if start < 0 {
			errs[i] = fmt.Errorf("cpath: no source reaches target %d: the graph has a cycle", target)
			return
		}
		p := framePiece{Frame: fr.Frame}
		for l := start; ; l = succ[l] {
			p.Vertices = append(p.Vertices, r.vert[l])
			if l == exit {
				break
			}
			if len(p.Vertices) > int(fr.Hi-fr.Lo) || succ[l] < 0 {
				errs[i] = fmt.Errorf("cpath: Succ chain stops at %d before the exit of frame %d", r.vert[l], fr.Frame)
				return
			}
		}
		pieces[i] = p
	})
	for _, err := range errs {
		if err != nil {
			return nil, 0, 0, err
		}
	}
	return pieces, count.Load(), relax.Load(), nil
}

// joinPieces is the path from the ranks' pieces: every frame's, in frame
// order.
func joinPieces(all [][]framePiece, frames int, length int64) (Path, error) {
	var ps []framePiece
	for _, x := range all {
		ps = append(ps, x...)
	}
	slices.SortFunc(ps, func(a, b framePiece) int { return int(a.Frame) - int(b.Frame) })
	if len(ps) != frames {
		return Path{}, fmt.Errorf("cpath: frame rows: %d pieces of the path for %d frames", len(ps), frames)
	}
	p := Path{Length: length}
	for k, x := range ps {
		if int(x.Frame) != k {
			return Path{}, fmt.Errorf("cpath: frame rows: no piece of the path in frame %d", k)
		}
		p.Vertices = append(p.Vertices, x.Vertices...)
	}
	return p, nil
}
