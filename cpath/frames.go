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
	graph.Timings().Mark(c.Rank(), "frame-ship")
	r, err = f.rows()
	graph.Timings().Mark(c.Rank(), "frame-rows")
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
// frame and its number of edges (which follow in the edges' arrays).
type frameVertex struct {
	V, Frame, Deg int32
}

// frameShuffle is FrameRows' state.
type frameShuffle struct {
	lab    *Schedule
	owner  []int32 // by frame: its rank
	labels []uint8
	// Where the owned vertices go: the run of owned vertices
	// [routeLo[i], routeLo[i+1]) to rank routeTo[i].
	routeLo []int32
	routeTo []int32
	// What came from the other ranks, by sender: the vertices (each
	// sender's in the order of their ids) and their edges' sources,
	// weights (a large one as -1-i for the i-th of big), labels.
	in                  []frameVertex
	inCount             []int
	inSrc, inW          []int32
	inLabel             []uint8
	inBig               []int64
	inBigCount, inEdge  []int
	inEdgeOff, inBigOff []int // where each sender's edges and large weights start
	// The rank's frames' vertices in the order of their ids (merged from
	// the senders' and the rank's own): their ids and frames, and where
	// their rows are: kept[m] >= 0 for an owned vertex (its local index:
	// its row in the graph), else -1-(the index of its first edge in the
	// received arrays).
	ids, frame []int32
	row        []int32
	deg        []int32
	// arrival is, by sender, the index each of its vertices has here; the
	// rank's own by local index where they stay (mine, -1 elsewhere).
	arrival [][]int32
	mine    []int32
}

// ship sends every owned vertex whose frame another rank holds, with its
// edges, to that rank; those of the rank's own frames stay where they are.
func (f *frameShuffle) ship() error {
	s := f.lab
	g := s.g
	size, me := s.size, int32(s.rank)
	nv := int(s.nv)
	for l := 0; l < nv; l++ {
		q := f.owner[s.split[l]]
		if n := len(f.routeTo); n == 0 || f.routeTo[n-1] != q {
			f.routeLo, f.routeTo = append(f.routeLo, int32(l)), append(f.routeTo, q)
		}
	}
	f.routeLo = append(f.routeLo, int32(nv))
	vcount, ecount, bcount := make([]int, size), make([]int, size), make([]int, size)
	for i, q := range f.routeTo {
		if q == me {
			continue
		}
		lo, hi := f.routeLo[i], f.routeLo[i+1]
		vcount[q] += int(hi - lo)
		ecount[q] += int(g.InStart[hi] - g.InStart[lo])
		for e := g.InStart[lo]; e < g.InStart[hi]; e++ {
			if g.InWeight.W[e] < 0 {
				bcount[q]++
			}
		}
	}
	voff, eoff, boff := mpix.Offsets(vcount), mpix.Offsets(ecount), mpix.Offsets(bcount)
	bstart := slices.Clone(boff)
	vs := make([]frameVertex, voff[size-1]+vcount[size-1])
	src := make([]int32, eoff[size-1]+ecount[size-1])
	w := make([]int32, len(src))
	var lab []uint8
	if f.labels != nil {
		lab = make([]uint8, len(src))
	}
	big := make([]int64, boff[size-1]+bcount[size-1])
	for i, q := range f.routeTo {
		if q == me {
			continue
		}
		for l := f.routeLo[i]; l < f.routeLo[i+1]; l++ {
			lo, hi := g.InStart[l], g.InStart[l+1]
			vs[voff[q]] = frameVertex{V: l + s.lo, Frame: s.split[l], Deg: hi - lo}
			voff[q]++
			for e := lo; e < hi; e++ {
				x := eoff[q]
				src[x] = g.InSrc[e]
				if wt := g.InWeight.W[e]; wt >= 0 {
					w[x] = wt
				} else {
					big[boff[q]] = g.InWeight.At(e)
					w[x] = -1 - int32(boff[q]-bstart[q])
					boff[q]++
				}
				if lab != nil {
					lab[x] = f.labels[e]
				}
				eoff[q]++
			}
		}
	}
	var err error
	if f.in, f.inCount, err = mpix.ShipFlat(s.c, vs, vcount); err != nil {
		return err
	}
	if f.inSrc, f.inEdge, err = mpix.ShipFlat(s.c, src, ecount); err != nil {
		return err
	}
	if f.inW, _, err = mpix.ShipFlat(s.c, w, ecount); err != nil {
		return err
	}
	if lab != nil {
		if f.inLabel, _, err = mpix.ShipFlat(s.c, lab, ecount); err != nil {
			return err
		}
	}
	if f.inBig, f.inBigCount, err = mpix.ShipFlat(s.c, big, bcount); err != nil {
		return err
	}
	f.inEdgeOff, f.inBigOff = mpix.Offsets(f.inEdge), mpix.Offsets(f.inBigCount)
	return f.merge()
}

// merge takes the rank's frames' vertices in the order of their ids: the
// senders' come in that order, and so do the rank's own.
func (f *frameShuffle) merge() error {
	s := f.lab
	g := s.g
	size, me := s.size, s.rank
	voff := mpix.Offsets(f.inCount)
	// Each sender's edges start where those of the senders before end.
	eStart := mpix.Offsets(f.inEdge)
	for q := 0; q < size; q++ {
		d := 0
		for _, v := range f.in[voff[q] : voff[q]+f.inCount[q]] {
			if v.Deg < 0 {
				return fmt.Errorf("cpath: frame rows: rank %d shipped a vertex of %d edges", q, v.Deg)
			}
			d += int(v.Deg)
		}
		if d != f.inEdge[q] {
			return fmt.Errorf("cpath: frame rows: rank %d shipped %d edges for rows of %d", q, f.inEdge[q], d)
		}
	}
	// The rank's own that stay, in order.
	var keep []int32
	for i, q := range f.routeTo {
		if int(q) == me {
			for l := f.routeLo[i]; l < f.routeLo[i+1]; l++ {
				keep = append(keep, l)
			}
		}
	}
	n := len(f.in) + len(keep)
	f.ids, f.frame, f.row, f.deg = make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	f.arrival = make([][]int32, size)
	f.mine = make([]int32, s.nv)
	for l := range f.mine {
		f.mine[l] = -1
	}
	at := make([]int, size) // by sender: its next vertex
	eat := slices.Clone(eStart)
	k := 0 // the next kept
	for len(f.ids) < n {
		q, v := -1, int32(0)
		for p := 0; p < size; p++ {
			if at[p] < f.inCount[p] {
				if x := f.in[voff[p]+at[p]].V; q < 0 || x < v {
					q, v = p, x
				}
			}
		}
		if k < len(keep) && (q < 0 || keep[k]+s.lo < v) {
			l := keep[k]
			f.mine[l] = int32(len(f.ids))
			f.ids, f.frame = append(f.ids, l+s.lo), append(f.frame, s.split[l])
			f.row, f.deg = append(f.row, l), append(f.deg, g.InStart[l+1]-g.InStart[l])
			k++
			continue
		}
		x := f.in[voff[q]+at[q]]
		if m := len(f.ids); m > 0 && x.V <= f.ids[m-1] {
			return fmt.Errorf("cpath: frame rows: vertex %d shipped out of order or twice", x.V)
		}
		f.arrival[q] = append(f.arrival[q], int32(len(f.ids)))
		f.ids, f.frame = append(f.ids, x.V), append(f.frame, x.Frame)
		f.row, f.deg = append(f.row, -1-int32(eat[q])), append(f.deg, x.Deg)
		at[q]++
		eat[q] += int(x.Deg)
	}
	f.in = nil
	return nil
}

// edges is where the rank's vertex m's edges are: its row in the graph
// (local, true) or in the received arrays.
func (f *frameShuffle) edges(m int32) (lo, hi int32, local bool) {
	if l := f.row[m]; l >= 0 {
		g := f.lab.g
		return g.InStart[l], g.InStart[l+1], true
	}
	x := -1 - f.row[m]
	return x, x + f.deg[m], false
}

// bigIndex is where the large weight a weight w (< 0) names is in the
// rows' large weights: the graph's first, then each sender's; e is the
// edge's index among the received (for a received edge).
func (f *frameShuffle) bigIndex(w int32, e int32, local bool) int32 {
	i := -1 - w
	if local {
		return i
	}
	q := sort.Search(len(f.inEdge), func(q int) bool { return f.inEdgeOff[q]+f.inEdge[q] > int(e) })
	return int32(len(f.lab.g.InWeight.Big)+f.inBigOff[q]) + i
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

// rows orders each of the rank's frames (depth first over its edges:
// each vertex after its causes) and copies the rows in that order.
func (f *frameShuffle) rows() (*Rows, error) {
	s := f.lab
	n := len(f.ids)
	idx := newIDRuns(f.ids)
	// The sources as indices here (-1: the frame's entry), the rows' starts.
	edgeLo := make([]int32, n+1)
	for m := 0; m < n; m++ {
		edgeLo[m+1] = edgeLo[m] + f.deg[m]
	}
	src := make([]int32, edgeLo[n])
	g := s.g
	bads := make([]error, workers())
	par.Do(workers(), func(part int) {
		b := par.Bounds(n, workers())
		for m := b[part]; m < b[part+1]; m++ {
			k, x := f.frame[m], edgeLo[m]
			entry := int32(-1)
			if k > 0 {
				entry = s.exit[k-1]
			}
			lo, hi, local := f.edges(int32(m))
			srcs := f.inSrc
			if local {
				srcs = g.InSrc
			}
			for e := lo; e < hi; e, x = e+1, x+1 {
				u := srcs[e]
				if u == entry {
					src[x] = -1
					continue
				}
				v := idx.index(u)
				if v < 0 || f.frame[v] != k {
					if bads[part] == nil {
						bads[part] = fmt.Errorf("cpath: frame rows: edge %d->%d leads from outside vertex %d's split %d, not out of its entry", u, f.ids[m], f.ids[m], k)
					}
					v = -1
				}
				src[x] = v
			}
		}
	})
	for _, err := range bads {
		if err != nil {
			return nil, err
		}
	}
	// Each frame ordered on its own, on every core.
	byFrame := f.byFrame()
	order := make([]int32, n)
	state := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	cyclic := make([]bool, len(byFrame.frames))
	par.Do(len(byFrame.frames), func(i int) {
		out := order[byFrame.start[i]:byFrame.start[i]:byFrame.start[i+1]]
		if !topoFrame(byFrame.of(i), edgeLo, src, state, &out) {
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
		r.Start[i+1] = r.Start[i] + f.deg[m]
	}
	r.Src = make([]int32, len(src))
	r.Weight = graph.Weights{W: make([]int32, len(src)), Big: append(slices.Clone(g.InWeight.Big), f.inBig...)}
	if f.labels != nil {
		r.Label = make([]uint8, len(src))
	}
	par.Do(workers(), func(part int) {
		b := par.Bounds(n, workers())
		for i := b[part]; i < b[part+1]; i++ {
			m := order[i]
			x, y := r.Start[i], edgeLo[m]
			lo, hi, local := f.edges(m)
			ws, labels := f.inW, f.inLabel
			if local {
				ws, labels = g.InWeight.W, f.labels
			}
			for e := lo; e < hi; e, x, y = e+1, x+1, y+1 {
				if v := src[y]; v >= 0 {
					r.Src[x] = pos[v]
				} else {
					r.Src[x] = -1
				}
				if w := ws[e]; w >= 0 {
					r.Weight.W[x] = w
				} else {
					r.Weight.W[x] = -1 - f.bigIndex(w, e, local)
				}
				if r.Label != nil {
					r.Label[x] = labels[e]
				}
			}
		}
	})
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
	// What the rows were made of: only the routes stay, for TakeAt.
	f.inSrc, f.inW, f.inLabel, f.inBig, f.row, f.deg, f.frame = nil, nil, nil, nil, nil, nil, nil
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
	size, me := f.lab.size, f.lab.rank
	out := make([]T, len(f.ids))
	counts := make([]int, size)
	for i, q := range f.routeTo {
		if int(q) != me {
			counts[q] += int(f.routeLo[i+1] - f.routeLo[i])
		}
	}
	off := mpix.Offsets(counts)
	flat := make([]T, off[size-1]+counts[size-1])
	for i, q := range f.routeTo {
		for l := f.routeLo[i]; l < f.routeLo[i+1]; l++ {
			if int(q) == me {
				out[f.mine[l]] = value(l)
				continue
			}
			flat[off[q]] = value(l)
			off[q]++
		}
	}
	got, gotCounts, err := mpix.ShipFlat(f.lab.c, flat, counts)
	if err != nil {
		return nil, err
	}
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
