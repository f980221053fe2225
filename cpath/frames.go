package cpath

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// FrameRows is g's rows redistributed by frame: each rank gets whole
// frames, consecutive ones holding about as many vertices each, their
// rows copied in a topological order of each frame. The frames being
// independent but for their entries (whose distance in a frame is 0),
// every sweep over them is then one pass on each rank at once, with
// nothing to wait for between ranks (no rounds, no slots), and every
// piece of a path in one frame is on one rank. What it costs is one
// exchange of the rows that change ranks (on P ranks, about (P-1)/P of
// them). A job whose ranks hold their logged ranks' parts (the graph's
// layout) sweeps in rounds instead, as many as the crossings between
// ranks within a frame (Schedule): on a halo exchange with an
// MPI_Allreduce every ten iterations, some twenty a sweep, each taking
// every frame a little further, so that every round meets each frame's
// rows cold.
//
// ok is false, on every rank, where the frames cannot be shared out so
// (fewer than the ranks, or none small enough to balance them within
// frameImbalance): the caller orders its part in rounds (NewSchedule).
// A cycle within a frame is not ok either: the schedule leaves what is on
// or after it out. labels as Schedule.Rows'.
func FrameRows(c mpix.Comm, g *DistGraph, in *SplitInput, labels []uint8) (r *Rows, ok bool, err error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, false, err
	}
	lab := &Schedule{c: c, g: g, rank: c.Rank(), size: c.Size(), lo: g.Lo, nv: g.Hi - g.Lo}
	err = lab.frames(in)
	if err = mpix.Agree(c, err); err != nil {
		return nil, false, err
	}
	if err := lab.mergeSources(); err != nil {
		return nil, false, err
	}
	owner, ok, err := shareFrames(c, lab)
	if err != nil || !ok {
		return nil, false, err
	}
	f := &frameShuffle{lab: lab, owner: owner, labels: labels}
	if err := f.ship(); err != nil {
		return nil, false, err
	}
	r, err = f.rows()
	cyclic, aerr := mpix.Any(c, err == errFrameCycle)
	if aerr != nil {
		return nil, false, aerr
	}
	if cyclic {
		return nil, false, nil
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// frameImbalance is how much more than its share of the vertices a rank
// may get when the frames are shared out.
const frameImbalance = 1.25

// shareFrames gives each rank consecutive frames holding about the same
// number of vertices: owner[k] is frame k's rank. ok is false where that
// cannot keep within frameImbalance.
func shareFrames(c mpix.Comm, lab *Schedule) (owner []int32, ok bool, err error) {
	k := len(lab.exit)
	size := c.Size()
	if lab.split == nil || k < size {
		return nil, false, nil
	}
	counts := make([]int64, k)
	for _, x := range lab.split {
		counts[x]++
	}
	if err := c.Allreduce(counts, mpix.Sum); err != nil {
		return nil, false, err
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	owner = make([]int32, k)
	load := make([]int64, size)
	q, acc := int32(0), int64(0)
	for j, n := range counts {
		// Move on once this rank has its share, if what is left can still
		// go round the ranks after it.
		if q < int32(size)-1 && acc > 0 && acc+n/2 > total*int64(q+1)/int64(size) && k-j >= size-int(q)-1 {
			q++
		}
		owner[j] = q
		load[q] += n
		acc += n
	}
	share := float64(total) / float64(size)
	for _, n := range load {
		if float64(n) > frameImbalance*share {
			return nil, false, nil
		}
	}
	return owner, true, nil
}

// errFrameCycle is a cycle met in a frame's order.
var errFrameCycle = fmt.Errorf("cpath: frame rows: a cycle within a frame")

// frameVertex is a vertex shipped to its frame's rank: its global id, its
// frame and its number of edges (which follow in the edges' array).
type frameVertex struct {
	V, Frame, Deg, _ int32
}

// frameEdge is an edge shipped with its vertex: its source (global id),
// label and weight.
type frameEdge struct {
	Src   int32
	Label uint8
	_     [3]byte
	W     int64
}

// frameShuffle is FrameRows' state.
type frameShuffle struct {
	lab    *Schedule
	owner  []int32 // by frame: its rank
	labels []uint8
	// By rank, where the owned vertices go: the run of owned vertices
	// [routeLo[i], routeLo[i+1]) to rank routeTo[i].
	routeLo []int32
	routeTo []int32
	// Received, in the order of the vertices' ids (merged from the
	// senders' parts): their ids, frames and edges.
	ids, frame []int32
	edgeLo     []int32 // by received vertex: its edges are edges[edgeLo[m]:edgeLo[m+1]]
	edges      []frameEdge
	arrival    [][]int32 // by sender: the received index of its i-th vertex
}

// ship sends every owned vertex and its edges to its frame's rank.
func (f *frameShuffle) ship() error {
	s := f.lab
	g := s.g
	size := s.size
	nv := int(s.nv)
	// The routes: runs of owned vertices with one destination.
	for l := 0; l < nv; l++ {
		q := f.owner[s.split[l]]
		if n := len(f.routeTo); n == 0 || f.routeTo[n-1] != q {
			f.routeLo, f.routeTo = append(f.routeLo, int32(l)), append(f.routeTo, q)
		}
	}
	f.routeLo = append(f.routeLo, int32(nv))
	vcount, ecount := make([]int, size), make([]int, size)
	for i, q := range f.routeTo {
		lo, hi := f.routeLo[i], f.routeLo[i+1]
		vcount[q] += int(hi - lo)
		ecount[q] += int(g.InStart[hi] - g.InStart[lo])
	}
	voff, eoff := offsetsOf(vcount), offsetsOf(ecount)
	vs := make([]frameVertex, nv)
	es := make([]frameEdge, len(g.InSrc))
	for i, q := range f.routeTo {
		for l := f.routeLo[i]; l < f.routeLo[i+1]; l++ {
			lo, hi := g.InStart[l], g.InStart[l+1]
			vs[voff[q]] = frameVertex{V: l + s.lo, Frame: s.split[l], Deg: hi - lo}
			voff[q]++
			for e := lo; e < hi; e++ {
				x := frameEdge{Src: g.InSrc[e], W: g.InWeight.At(e)}
				if f.labels != nil {
					x.Label = f.labels[e]
				}
				es[eoff[q]] = x
				eoff[q]++
			}
		}
	}
	rv, rvCounts, err := mpix.ShipFlat(s.c, vs, vcount)
	if err != nil {
		return err
	}
	vs = nil
	re, _, err := mpix.ShipFlat(s.c, es, ecount)
	if err != nil {
		return err
	}
	es = nil
	return f.merge(rv, rvCounts, re)
}

// offsetsOf is where each part starts when parts of counts are laid out
// one after another.
func offsetsOf(counts []int) []int {
	off := make([]int, len(counts))
	at := 0
	for q, n := range counts {
		off[q] = at
		at += n
	}
	return off
}

// merge takes the received vertices in the order of their ids: each
// sender's are in that order, so that merging the senders' parts sorts
// them all.
func (f *frameShuffle) merge(rv []frameVertex, counts []int, re []frameEdge) error {
	size := len(counts)
	n := len(rv)
	voff := offsetsOf(counts)
	// Each sender's edges start where the edges of the senders before end.
	eStart := make([]int, size+1)
	for q := 0; q < size; q++ {
		var d int
		for _, v := range rv[voff[q] : voff[q]+counts[q]] {
			if v.Deg < 0 {
				return fmt.Errorf("cpath: frame rows: rank %d shipped a vertex of %d edges", q, v.Deg)
			}
			d += int(v.Deg)
		}
		eStart[q+1] = eStart[q] + d
	}
	if eStart[size] != len(re) {
		return fmt.Errorf("cpath: frame rows: %d edges shipped for rows of %d", len(re), eStart[size])
	}
	f.ids, f.frame = make([]int32, 0, n), make([]int32, 0, n)
	f.edgeLo = make([]int32, 0, n+1)
	f.edges = make([]frameEdge, 0, len(re))
	f.arrival = make([][]int32, size)
	at := make([]int, size) // by sender: its next vertex
	eat := slices.Clone(eStart[:size])
	f.edgeLo = append(f.edgeLo, 0)
	for len(f.ids) < n {
		q := -1
		for p := 0; p < size; p++ {
			if at[p] < counts[p] && (q < 0 || rv[voff[p]+at[p]].V < rv[voff[q]+at[q]].V) {
				q = p
			}
		}
		v := rv[voff[q]+at[q]]
		if m := len(f.ids); m > 0 && v.V <= f.ids[m-1] {
			return fmt.Errorf("cpath: frame rows: vertex %d shipped out of order or twice", v.V)
		}
		f.arrival[q] = append(f.arrival[q], int32(len(f.ids)))
		f.ids, f.frame = append(f.ids, v.V), append(f.frame, v.Frame)
		f.edges = append(f.edges, re[eat[q]:eat[q]+int(v.Deg)]...)
		f.edgeLo = append(f.edgeLo, int32(len(f.edges)))
		at[q]++
		eat[q] += int(v.Deg)
	}
	return nil
}

// idRuns indexes sorted ids by their runs of consecutive values: a rank's
// frames hold each logged rank's calls as one run, so that the runs are
// few and a source's index is found among them.
type idRuns struct {
	first, at, n []int32 // by run: its first id, its first index, its length
}

func newIDRuns(ids []int32) idRuns {
	var x idRuns
	for m, v := range ids {
		if k := len(x.first); k > 0 && x.first[k-1]+x.n[k-1] == v {
			x.n[k-1]++
			continue
		}
		x.first, x.at, x.n = append(x.first, v), append(x.at, int32(m)), append(x.n, 1)
	}
	return x
}

// index is id v's index, -1 if not there.
func (x *idRuns) index(v int32) int32 {
	j := sort.Search(len(x.first), func(j int) bool { return x.first[j] > v }) - 1
	if j < 0 || v-x.first[j] >= x.n[j] {
		return -1
	}
	return x.at[j] + v - x.first[j]
}

// rows orders each frame received (depth first over its edges: each
// vertex after its causes) and copies the rows in that order.
func (f *frameShuffle) rows() (*Rows, error) {
	s := f.lab
	n := len(f.ids)
	idx := newIDRuns(f.ids)
	// The sources as received indices (-1: the frame's entry).
	src := make([]int32, len(f.edges))
	var bad error
	for m := 0; m < n && bad == nil; m++ {
		k := f.frame[m]
		for e := f.edgeLo[m]; e < f.edgeLo[m+1]; e++ {
			u := f.edges[e].Src
			if k > 0 && u == s.exit[k-1] {
				src[e] = -1
				continue
			}
			x := idx.index(u)
			if x < 0 || f.frame[x] != k {
				bad = fmt.Errorf("cpath: frame rows: edge %d->%d leads from outside vertex %d's split %d, not out of its entry", u, f.ids[m], f.ids[m], k)
				break
			}
			src[e] = x
		}
	}
	if bad != nil {
		return nil, bad
	}
	// The received vertices by frame (in id order within each).
	byFrame := f.byFrame()
	// Each frame ordered on its own, on every core.
	order := make([]int32, n)
	state := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	cyclic := make([]bool, len(byFrame.frames))
	par.Do(len(byFrame.frames), func(i int) {
		ms := byFrame.of(i)
		out := order[byFrame.start[i]:byFrame.start[i]:byFrame.start[i+1]]
		if !topoFrame(ms, f.edgeLo, src, state, &out) {
			cyclic[i] = true
		}
	})
	if slices.Contains(cyclic, true) {
		return nil, errFrameCycle
	}
	r := &Rows{c: s.c, exit: s.exit, Order: order, vert: make([]int32, n)}
	pos := make([]int32, n)
	for i, m := range order {
		pos[m] = int32(i)
		r.vert[i] = f.ids[m]
	}
	r.Start = make([]int32, n+1)
	for i, m := range order {
		r.Start[i+1] = r.Start[i] + f.edgeLo[m+1] - f.edgeLo[m]
	}
	r.Src = make([]int32, len(src))
	w := make([]int64, len(src))
	if f.labels != nil {
		r.Label = make([]uint8, len(src))
	}
	par.Do(workers(), func(part int) {
		b := par.Bounds(n, workers())
		for i := b[part]; i < b[part+1]; i++ {
			m := order[i]
			x := r.Start[i]
			for e := f.edgeLo[m]; e < f.edgeLo[m+1]; e++ {
				if u := src[e]; u >= 0 {
					r.Src[x] = pos[u]
				} else {
					r.Src[x] = -1
				}
				w[x] = f.edges[e].W
				if r.Label != nil {
					r.Label[x] = f.edges[e].Label
				}
				x++
			}
		}
	})
	r.Weight = graph.WeightsOf(w)
	// One round: a run per frame, in chunks of frames.
	var runs []frameRun
	for i, k := range byFrame.frames {
		runs = append(runs, frameRun{k, byFrame.start[i], byFrame.start[i+1]})
	}
	r.runs = [][]frameRun{runs}
	bounds := []int32{0}
	size := max(int32(chunkMin), int32(n)/int32(4*workers()))
	var acc int32
	for i, fr := range runs {
		acc += fr.Hi - fr.Lo
		if acc >= size && i+1 < len(runs) {
			bounds = append(bounds, int32(i+1))
			acc = 0
		}
	}
	r.chunks = [][]int32{append(bounds, int32(len(runs)))}
	r.exitPos = make([]int32, len(s.exit))
	for k, x := range s.exit {
		r.exitPos[k] = -1
		if m := idx.index(x); m >= 0 {
			r.exitPos[k] = pos[m]
		}
	}
	r.frames = f
	f.edges, f.edgeLo = nil, nil
	return r, nil
}

// frameMembers is the received vertices grouped by frame: frames[i]'s
// are members[start[i]:start[i+1]], in id order.
type frameMembers struct {
	frames  []int32
	start   []int32
	members []int32
}

func (x *frameMembers) of(i int) []int32 { return x.members[x.start[i]:x.start[i+1]] }

// byFrame groups the received vertices by frame (a counting sort: the
// frames a rank holds are consecutive).
func (f *frameShuffle) byFrame() frameMembers {
	var x frameMembers
	if len(f.frame) == 0 {
		return x
	}
	lo, hi := slices.Min(f.frame), slices.Max(f.frame)
	counts := make([]int32, hi-lo+2)
	for _, k := range f.frame {
		counts[k-lo+1]++
	}
	for k := lo; k <= hi; k++ {
		if counts[k-lo+1] > 0 {
			x.frames = append(x.frames, k)
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	x.members = make([]int32, len(f.frame))
	at := slices.Clone(counts)
	for m, k := range f.frame {
		x.members[at[k-lo]] = int32(m)
		at[k-lo]++
	}
	for _, k := range x.frames {
		x.start = append(x.start, counts[k-lo])
	}
	x.start = append(x.start, counts[hi-lo+1])
	return x
}

// topoFrame appends the members of one frame to out in a topological
// order (depth first over their in-edges, each vertex after its causes
// in the frame; the entry's edges are left aside), and reports whether
// the frame is acyclic.
func topoFrame(members []int32, edgeLo, src []int32, state []uint8, out *[]int32) bool {
	type item struct{ m, e int32 }
	var stack []item
	for _, root := range members {
		if state[root] != 0 {
			continue
		}
		state[root] = 1
		stack = append(stack[:0], item{root, edgeLo[root]})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.e < edgeLo[top.m+1] {
				u := src[top.e]
				top.e++
				if u < 0 {
					continue
				}
				switch state[u] {
				case 0:
					state[u] = 1
					stack = append(stack, item{u, edgeLo[u]})
				case 1:
					return false
				}
				continue
			}
			state[top.m] = 2
			*out = append(*out, top.m)
			stack = stack[:len(stack)-1]
		}
	}
	return true
}

// TakeAt gives, by Order's index, value(l) of each owned vertex l (local
// index): in place for rows of the rank's own part, shipped to the frame's
// rank by the routes the rows came by for FrameRows'. Every rank calls it
// together.
func TakeAt[T any](r *Rows, value func(l int32) T) ([]T, error) {
	f := r.frames
	if f == nil {
		out := make([]T, r.s.nv)
		for l := range out {
			out[l] = value(int32(l))
		}
		return out, nil
	}
	size := f.lab.size
	counts := make([]int, size)
	for i, q := range f.routeTo {
		counts[q] += int(f.routeLo[i+1] - f.routeLo[i])
	}
	off := offsetsOf(counts)
	flat := make([]T, f.routeLo[len(f.routeLo)-1])
	for i, q := range f.routeTo {
		for l := f.routeLo[i]; l < f.routeLo[i+1]; l++ {
			flat[off[q]] = value(l)
			off[q]++
		}
	}
	got, gotCounts, err := mpix.ShipFlat(f.lab.c, flat, counts)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(f.ids))
	at := 0
	for q, k := range gotCounts {
		if k != len(f.arrival[q]) {
			return nil, fmt.Errorf("cpath: frame rows: rank %d shipped %d values for %d vertices", q, k, len(f.arrival[q]))
		}
		for i, m := range f.arrival[q] {
			out[m] = got[at+i]
		}
		at += k
	}
	return out, nil
}
