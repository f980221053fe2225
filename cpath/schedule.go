package cpath

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
)

// Schedule is a topological order of a graph distributed over the ranks
// of a job, in rounds: in round r each rank takes its vertices of round r,
// in order, whose causes are all its own vertices taken before or other
// ranks' vertices of earlier rounds; between rounds the ranks ship each
// other the values of the vertices another rank's edges start at. A sweep
// over the graph (Forward: each vertex's value from its causes', the
// longest path's and the replay's recurrence) then runs without a search
// and without waiting inside a round, on every rank at once, pipelined
// over the ranks in topological order; no rank holds more than its own
// part of the graph.
//
// The graph is taken cut into its splits (paper §4.4, SplitInput): with
// the cross edges out of each split's exit set aside, the splits are
// independent graphs. A sweep takes every split in the frame of its
// entry, the exit of the split before (or, in the first split, of the
// sources): the entry's value is 0 there, known to every rank without
// waiting for it. So the rounds are the times the longest chain of
// dependencies crosses between ranks within one split, not within the
// whole run (on a halo exchange with an MPI_Allreduce every ten
// iterations, tens of rounds however long the run), and the splits of a
// round are independent work for a rank's cores. One exchange of each
// split's exit value in the frame of its own split gives every rank the
// frames' offsets (Offsets), the longest distance to each entry.
//
// A split other than the first that holds a source (a vertex without
// causes) besides its entry is not a frame of its entry (the source does
// not follow it): it is merged with the split before, as a point no path
// crosses is dropped.
type Schedule struct {
	c          mpix.Comm
	g          *DistGraph
	rank, size int
	lo, nv     int32 // the owned vertices [lo, lo+nv)

	// split is each owned vertex's frame (nil: one frame, the whole
	// graph), exit each frame's exit (global ids; the last is the
	// target). The same on every rank.
	split []int32
	exit  []int32

	// segs is the owned vertices in the order of the sweep, as runs of
	// consecutive ones (a run of a stream taken at once: its rows are
	// read in their order), each of one frame, grouped by frame within a
	// round; chunks[r] bounds round r's chunks of segs, frame-aligned, for
	// a round's work on several cores.
	segs   []Segment
	chunks [][]int32

	// remote marks the edges whose source another rank owns (its entry
	// aside); remoteSlot is each one's slot, by its rank among them.
	// Slots [slotBase[q], slotBase[q+1]) hold rank q's vertices, in the
	// order of want[q] (ascending ids).
	remote     edgeSet
	remoteSlot []int32
	slotBase   []int32
	want       [][]wanted

	// send is what this rank ships after each round: the owned vertices
	// of that round other ranks take values from, with the index each
	// has in that rank's want; sendStart[r*size+q] bounds round r's for
	// rank q.
	send      []sendSlot
	sendStart []int32
	asked     *asked // what the other ranks want of this one's vertices

	// from is, by owned vertex and slot, its longest distance from a
	// source in its frame's terms, taken as the vertex was ordered
	// (rounds): the exact path's sweep (DAGPath).
	from []int64

	// Unordered is the number of owned vertices no round could take:
	// vertices on a cycle or after one; unordered marks them (nil words
	// if none).
	Unordered int
	unordered edgeSet
	// Stats of the construction.
	Rounds         int
	bytes0, calls0 int64 // the Comm's counts when it began
}

// Segment is a run of consecutive owned vertices [Lo, Hi) (local
// indices) of frame Frame, in a sweep's order.
type Segment struct{ Lo, Hi, Frame int32 }

// sendSlot is an owned vertex whose value rank q needs: its local index
// and its index among q's wants from this rank.
type sendSlot struct {
	Local, Index int32
}

// Frames is the number of frames.
func (s *Schedule) Frames() int { return len(s.exit) }

// Exit is the exit of frame k (global id).
func (s *Schedule) Exit(k int) int32 { return s.exit[k] }

// FrameOf is the frame of owned vertex l (a local index).
func (s *Schedule) FrameOf(l int32) int32 {
	if s.split == nil {
		return 0
	}
	return s.split[l]
}

// Entry is the entry of owned vertex l's frame: the exit of the frame
// before, -1 in the first.
func (s *Schedule) Entry(l int32) int32 {
	if s.split == nil {
		return -1
	}
	if k := s.split[l]; k > 0 {
		return s.exit[k-1]
	}
	return -1
}

// Slots is the number of remote vertices whose values this rank takes.
func (s *Schedule) Slots() int { return int(s.slotBase[len(s.slotBase)-1]) }

// Owned is the number of owned vertices (local indices 0..Owned()-1).
func (s *Schedule) Owned() int { return int(s.nv) }

// Source is where the value of edge e's source u is, for a vertex of
// the frame whose entry is entry: an owned vertex's local index, Owned()
// plus a slot for another rank's, or -1 for the entry (0 in the frame).
func (s *Schedule) Source(e, u, entry int32) int32 {
	switch {
	case u == entry:
		return -1
	case uint32(u-s.lo) < uint32(s.nv):
		return u - s.lo
	}
	return s.nv + s.remoteSlot[s.remote.rank(e)]
}

// edgeSet is a set of edge indices with rank queries: a bit per edge and
// the count of set bits before each word.
type edgeSet struct {
	words  []uint64
	before []int32
}

func newEdgeSet(n int) edgeSet {
	return edgeSet{words: make([]uint64, (n+63)/64), before: make([]int32, (n+63)/64+1)}
}

func (x *edgeSet) set(e int32)      { x.words[e>>6] |= 1 << (e & 63) }
func (x *edgeSet) has(e int32) bool { return x.words[e>>6]>>(e&63)&1 != 0 }
func (x *edgeSet) clear(e int32)    { x.words[e>>6] &^= 1 << (e & 63) }

// index counts the set bits before each word, once all are set.
func (x *edgeSet) index() {
	n := int32(0)
	for i, w := range x.words {
		x.before[i] = n
		n += int32(bits.OnesCount64(w))
	}
	x.before[len(x.words)] = n
}

// rank is the number of set edges before e.
func (x *edgeSet) rank(e int32) int32 {
	return x.before[e>>6] + int32(bits.OnesCount64(x.words[e>>6]&(1<<(e&63)-1)))
}

// NewSchedule orders g, cut into the splits of in (nil: one frame), on
// every rank of c together. streams cuts the owned vertices into runs
// (local indices: [streams[i], streams[i+1])) along whose ids most edges
// run forward, as a rank's calls' vertices in a PAG (nil: one run); the
// order follows them where it can, which is what makes it cheap. Vertices on or after a cycle are left out
// (Unordered); errors (malformed input) are returned on every rank.
func NewSchedule(c mpix.Comm, g *DistGraph, in *SplitInput, streams []int32) (*Schedule, error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, err
	}
	s := &Schedule{c: c, g: g, rank: c.Rank(), size: c.Size(), lo: g.Lo, nv: g.Hi - g.Lo}
	s.bytes0, s.calls0 = c.Stats()
	err := s.frames(in)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	if err := s.mergeSources(); err != nil {
		return nil, err
	}
	if c.Size() > 1 {
		err = s.slots()
	} else {
		s.slotBase, s.want = []int32{0, 0}, [][]wanted{nil}
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	if err := s.orderRounds(streams); err != nil {
		return nil, err
	}
	return s, nil
}

// frames takes the splits of in, checked as Split checks them.
func (s *Schedule) frames(in *SplitInput) error {
	g := s.g
	if in == nil {
		s.exit = []int32{g.Target}
		return nil
	}
	if len(in.Exit) == 0 || in.Exit[len(in.Exit)-1] != g.Target {
		return errors.New("cpath: schedule: the last split's exit is not the target")
	}
	if len(in.Split) != int(s.nv) {
		return fmt.Errorf("cpath: schedule: %d splits given for %d owned vertices", len(in.Split), s.nv)
	}
	k := int32(len(in.Exit))
	for l, x := range in.Split {
		if x < 0 || x >= k {
			return fmt.Errorf("cpath: schedule: vertex %d in split %d of %d", int32(l)+g.Lo, x, k)
		}
	}
	for j, x := range in.Exit {
		if x < 0 || int(x) >= g.N {
			return fmt.Errorf("cpath: schedule: the exit of split %d is vertex %d, out of range", j, x)
		}
		if l := x - s.lo; uint32(l) < uint32(s.nv) && in.Split[l] != int32(j) {
			return fmt.Errorf("cpath: schedule: the exit of split %d, vertex %d, is in split %d", j, x, in.Split[l])
		}
	}
	s.split, s.exit = in.Split, in.Exit
	return nil
}

// mergeSources merges each frame but the first that holds a vertex
// without causes into the frame before it (every rank agrees on which).
func (s *Schedule) mergeSources() error {
	if s.split == nil || len(s.exit) == 1 {
		return nil
	}
	k := len(s.exit)
	g := s.g
	count := make([]int64, k) // by frame: 1 if some rank holds a source in it
	for l, kv := range s.split {
		if kv > 0 && g.InStart[l] == g.InStart[l+1] {
			count[kv] = 1
		}
	}
	if err := s.c.Allreduce(count, mpix.Max); err != nil {
		return err
	}
	if !slices.Contains(count, 1) {
		return nil
	}
	// Frame k keeps its own number less the merges at or before it.
	to := make([]int32, k)
	var exits []int32
	n := int32(0)
	for j := 0; j < k; j++ {
		if j > 0 && count[j] != 0 {
			n++ // j joins j-1: its exit replaces that one's
			exits[len(exits)-1] = s.exit[j]
		} else {
			exits = append(exits, s.exit[j])
		}
		to[j] = int32(j) - n
	}
	split := make([]int32, len(s.split))
	for l, kv := range s.split {
		split[l] = to[kv]
	}
	s.split, s.exit = split, exits
	return nil
}

// slots finds the other ranks' vertices this rank's edges start at and
// gives each a slot. That every edge stays in its frame but those out of
// the frame's entry is checked by the owners of the sources: of the
// remote ones in tellOwners, of the others as the order takes them.
func (s *Schedule) slots() error {
	g := s.g
	s.remote = newEdgeSet(len(g.InSrc))
	var ws []wanted
	for l := int32(0); l < s.nv; l++ {
		for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
			if u := g.InSrc[e]; uint32(u-s.lo) >= uint32(s.nv) && u != s.Entry(l) {
				s.remote.set(e)
				ws = append(ws, wanted{u, s.FrameOf(l)})
			}
		}
	}
	s.remote.index()
	slices.SortFunc(ws, func(a, b wanted) int { return cmp.Or(cmp.Compare(a.V, b.V), cmp.Compare(a.Frame, b.Frame)) })
	ws = slices.Compact(ws)
	for i := 1; i < len(ws); i++ {
		if ws[i].V == ws[i-1].V {
			return fmt.Errorf("cpath: schedule: edges from vertex %d lead into frames %d and %d", ws[i].V, ws[i-1].Frame, ws[i].Frame)
		}
	}
	// By owner: the owners' ranges are in rank order, and so is ws.
	s.want = make([][]wanted, s.size)
	s.slotBase = make([]int32, s.size+1)
	for i := 0; i < len(ws); {
		q := g.Owner(ws[i].V)
		j := i
		for j < len(ws) && ws[j].V < g.Bounds[q+1] {
			j++
		}
		s.want[q] = ws[i:j:j]
		i = j
	}
	for q := range s.want {
		s.slotBase[q+1] = s.slotBase[q] + int32(len(s.want[q]))
	}
	s.remoteSlot = make([]int32, 0, s.remote.before[len(s.remote.words)])
	for l := int32(0); l < s.nv; l++ {
		for e := g.InStart[l]; e < g.InStart[l+1]; e++ {
			if s.remote.has(e) {
				u := g.InSrc[e]
				q := g.Owner(u)
				i, _ := slices.BinarySearchFunc(s.want[q], u, func(w wanted, u int32) int { return cmp.Compare(w.V, u) })
				s.remoteSlot = append(s.remoteSlot, s.slotBase[q]+int32(i))
			}
		}
	}
	return nil
}

// wanted is another rank's vertex this rank takes a value from, and the
// frame of the vertices it feeds (which must be its own).
type wanted struct {
	V, Frame int32
}

// asked is what the other ranks want of this one's vertices: by owned
// vertex (local index, ascending), each asking rank and the index it
// gave the vertex.
type asked struct {
	marks edgeSet // over the owned vertices
	by    []askedBy
}

type askedBy struct {
	Local, Rank, Index int32
}

// of is who asked for owned vertex l.
func (a *asked) of(l int32) []askedBy {
	if !a.marks.has(l) {
		return nil
	}
	i := sort.Search(len(a.by), func(i int) bool { return a.by[i].Local >= l })
	j := i
	for j < len(a.by) && a.by[j].Local == l {
		j++
	}
	return a.by[i:j]
}

// tellOwners ships each rank the vertices this one wants of it, and
// returns what the others want of this one.
func (s *Schedule) tellOwners() (*asked, error) {
	got, err := mpix.Ship(s.c, s.want)
	if err != nil {
		return nil, err
	}
	a := &asked{marks: newEdgeSet(int(s.nv))}
	for q, b := range got {
		ws, err := mpix.FromBytes[wanted](b)
		if err != nil {
			return nil, err
		}
		for i, w := range ws {
			l := w.V - s.lo
			if uint32(l) >= uint32(s.nv) {
				return nil, fmt.Errorf("cpath: schedule: rank %d wants vertex %d, which rank %d does not own", q, w.V, s.rank)
			}
			if k := s.FrameOf(l); k != w.Frame {
				return nil, fmt.Errorf("cpath: schedule: vertex %d, in split %d, has an edge into split %d on rank %d, not out of the exit of its split", w.V, k, w.Frame, q)
			}
			a.by = append(a.by, askedBy{l, int32(q), int32(i)})
			a.marks.set(l)
		}
	}
	slices.SortFunc(a.by, func(x, y askedBy) int { return cmp.Or(cmp.Compare(x.Local, y.Local), cmp.Compare(x.Rank, y.Rank)) })
	return a, nil
}
