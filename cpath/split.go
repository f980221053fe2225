package cpath

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
)

// SplitMode says how the global split (paper §4.4) solves its splits:
// the first word is the algorithm inside a split (seq: the sequential
// walk on the split gathered to one rank; par: the ranks walk it together
// in rounds), the second how the splits are taken (seq: one after another,
// each from where the later one left; par: all at once, each from every
// vertex a later split can be entered from, then stitched).
type SplitMode string

const (
	SeqSeq SplitMode = "seq-seq"
	ParSeq SplitMode = "par-seq"
	ParPar SplitMode = "par-par"
	SeqPar SplitMode = "seq-par"
)

// SplitModes lists the modes, the default first.
var SplitModes = []SplitMode{ParPar, SeqPar, ParSeq, SeqSeq}

// SplitInput is what the global split needs besides the graph: where the
// global synchronisation points cut each logged rank's calls.
type SplitInput struct {
	RankStart      []int32   // global call numbering by logged rank
	RankLo, RankHi int       // the logged ranks this analyzer rank owns (its vertices are theirs)
	Syncs          [][]int32 // by synchronisation point, in time order: each logged rank's call in it
}

// Split finds the critical path by cutting the graph at the global
// synchronisation points: split k holds each rank's calls after its call
// in sync point k-1, up to and including its call in sync point k. The
// path crosses from one split into an earlier one only along edges into a
// split, so each split can be solved on its own from the vertices such
// edges leave from, and the pieces stitched together from the target back.
//
// It needs the PAG's shape: at most one incoming edge per vertex (so the
// vertices that reach the target are the chain of predecessors from it);
// a graph with more is an error, as is an edge from a later split into an
// earlier one (the synchronisation points would not be global).
func Split(c mpix.Comm, g *DistGraph, in *SplitInput, mode SplitMode) (*DistResult, error) {
	b0, calls0 := c.Stats()
	s := &splitter{c: c, g: g}
	err := s.label(in)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	var res *DistResult
	switch mode {
	case ParPar, ParSeq:
		res, err = s.parallel(mode == ParSeq)
	case SeqPar, SeqSeq:
		res, err = s.sequential(mode == SeqSeq)
	default:
		err = fmt.Errorf("cpath: unknown split mode %q (seq-seq, par-seq, par-par, seq-par)", mode)
	}
	if err != nil {
		return nil, err
	}
	b1, calls1 := c.Stats()
	st := []int64{b1 - b0, s.pops, s.relax}
	if err := c.Allreduce(st, mpix.Sum); err != nil {
		return nil, err
	}
	res.Stats.BytesSent, res.Stats.Pops, res.Stats.Relaxations = st[0], st[1], st[2]
	res.Stats.Rounds = calls1 - calls0
	res.Stats.Splits = s.nsplits
	return res, nil
}

type splitter struct {
	c       mpix.Comm
	g       *DistGraph
	split   []int32 // by owned vertex
	nsplits int
	// starts: owned vertices that a later split is entered from (and the
	// target), where the pieces of the path begin.
	starts []int32
	pops   int64 // vertices walked
	relax  int64 // edges followed
}

// pred returns owned vertex v's one predecessor and the edge's weight.
func (s *splitter) pred(v int32) (int32, int64) {
	g := s.g
	l := v - g.Lo
	if e := g.InStart[l]; e < g.InStart[l+1] {
		return g.InSrc[e], g.InWeight[e]
	}
	return -1, 0
}

// label gives every owned vertex its split and finds the starts.
func (s *splitter) label(in *SplitInput) error {
	g, c := s.g, s.c
	s.nsplits = len(in.Syncs) + 1
	s.split = make([]int32, g.Hi-g.Lo)
	for r := in.RankLo; r < in.RankHi; r++ {
		k := int32(0)
		for call := in.RankStart[r]; call < in.RankStart[r+1]; call++ {
			for int(k) < len(in.Syncs) && in.Syncs[k][r] < call {
				k++
			}
			v := 2*call - g.Lo
			s.split[v], s.split[v+1] = k, k
		}
	}
	for l := range s.split {
		if g.InStart[l+1]-g.InStart[l] > 1 {
			return fmt.Errorf("cpath: split needs at most one incoming edge per vertex (vertex %d has %d)", int32(l)+g.Lo, g.InStart[l+1]-g.InStart[l])
		}
	}
	// The owner of an edge's destination knows both ends' splits only if
	// it owns the source too: ask the owners of remote sources for theirs.
	size := c.Size()
	ask := make([][]int32, size)
	for l := range s.split {
		if u, _ := s.pred(int32(l) + g.Lo); u >= 0 {
			q := g.Owner(u)
			ask[q] = append(ask[q], u, s.split[l])
		}
	}
	send := make([][]byte, size)
	for q := range ask {
		send[q] = mpix.Bytes(ask[q])
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	isStart := make(map[int32]bool)
	var bad error
	for _, bs := range got {
		xs, err := mpix.FromBytes[int32](bs)
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(xs); i += 2 {
			u, ks := xs[i], xs[i+1]
			ku := s.split[u-g.Lo]
			switch {
			case ku > ks && bad == nil:
				bad = fmt.Errorf("cpath: an edge leads from split %d back into split %d: the synchronisation points are not global", ku, ks)
			case ku < ks:
				isStart[u] = true
			}
		}
	}
	if g.Target >= g.Lo && g.Target < g.Hi {
		isStart[g.Target] = true
	}
	for v := range isStart {
		s.starts = append(s.starts, v)
	}
	slices.Sort(s.starts)
	return bad
}

// vstore is the vertices a rank walks: its own (par) or the splits
// shipped to it (seq), by local index.
type vstore interface {
	find(v int32) (int32, bool)
	pred(l int32) (int32, int64)
	split(l int32) int32
	size() int
}

// ownStore is a rank's own vertices.
type ownStore struct{ s *splitter }

func (o ownStore) find(v int32) (int32, bool) {
	g := o.s.g
	return v - g.Lo, v >= g.Lo && v < g.Hi
}
func (o ownStore) pred(l int32) (int32, int64) { return o.s.pred(l + o.s.g.Lo) }
func (o ownStore) split(l int32) int32         { return o.s.split[l] }
func (o ownStore) size() int                   { return len(o.s.split) }

// shipped is a vertex shipped to the rank that walks its split.
type shipped struct {
	V, Pred, Split int32
	_              int32
	W              int64
}

// mapStore holds shipped vertices.
type mapStore struct {
	idx map[int32]int32
	vs  []shipped
}

func (m *mapStore) find(v int32) (int32, bool)  { l, ok := m.idx[v]; return l, ok }
func (m *mapStore) pred(l int32) (int32, int64) { return m.vs[l].Pred, m.vs[l].W }
func (m *mapStore) split(l int32) int32         { return m.vs[l].Split }
func (m *mapStore) size() int                   { return len(m.vs) }

func newMapStore(vs []shipped) *mapStore {
	m := &mapStore{idx: make(map[int32]int32, len(vs)), vs: vs}
	for i, x := range vs {
		m.idx[x.V] = int32(i)
	}
	return m
}

// walk is the path from a start being followed back through its split.
type walk struct {
	ID     int32 // the start it began at
	V      int32 // the next vertex to take
	Step   int32 // vertices taken so far
	_      int32
	Length int64 // from the start to V
}

// outcome is what a walk became: it left its split at Exit (a vertex of an
// earlier split), began at a source (Exit -1, Root the source), or joined
// the walk Join at that walk's step JoinStep.
type outcome struct {
	ID, Exit, Root, Join int32
	JoinStep             int32
	_                    int32
	Length               int64 // to Exit, or to the vertex where it joined
	JoinAt               int64 // the joined walk's length there
}

// walker follows walks over a store, marking each vertex with the walk
// that took it first, so that no vertex is walked twice.
type walker struct {
	st    vstore
	by    []int32 // by local index: the walk that took it, -1 none
	step  []int32
	at    []int64
	outs  []outcome
	pops  int64
	relax int64
}

func newWalker(st vstore) *walker {
	w := &walker{st: st, by: make([]int32, st.size()), step: make([]int32, st.size()), at: make([]int64, st.size())}
	for i := range w.by {
		w.by[i] = -1
	}
	return w
}

// run follows x while its vertices are in the store and in one split; it
// returns the walk to hand over (its next vertex is elsewhere), if any.
func (w *walker) run(x walk) (walk, bool) {
	for {
		l, ok := w.st.find(x.V)
		if !ok {
			if _, whole := w.st.(*mapStore); whole {
				// The store holds whole splits: x left its split.
				w.outs = append(w.outs, outcome{ID: x.ID, Exit: x.V, Root: -1, Join: -1, Length: x.Length})
				return x, false
			}
			return x, true
		}
		if b := w.by[l]; b >= 0 {
			w.outs = append(w.outs, outcome{ID: x.ID, Exit: -1, Root: -1, Join: b, JoinStep: w.step[l], Length: x.Length, JoinAt: w.at[l]})
			return x, false
		}
		w.by[l], w.step[l], w.at[l] = x.ID, x.Step, x.Length
		w.pops++
		u, wt := w.st.pred(l)
		if u < 0 {
			w.outs = append(w.outs, outcome{ID: x.ID, Exit: -1, Root: x.V, Join: -1, Length: x.Length})
			return x, false
		}
		w.relax++
		k := w.st.split(l)
		x.V, x.Step, x.Length = u, x.Step+1, x.Length+wt
		if lu, ok := w.st.find(u); ok && w.st.split(lu) != k {
			w.outs = append(w.outs, outcome{ID: x.ID, Exit: u, Root: -1, Join: -1, Length: x.Length})
			return x, false
		}
	}
}

// handed is a walk handed to the owner of its next vertex, with the split
// it is in: the receiver ends it if the vertex is in another.
type handed struct {
	walk
	Split int32
	_     int32
}

// parallel walks the pieces with every rank taking part (par-par,
// par-seq): a walk follows predecessors on the rank that owns them and
// moves to the owner of the next one in the exchange of a round. With
// seqSplits the splits are walked one after another from the target's,
// each from where the later one left; otherwise all starts at once.
func (s *splitter) parallel(seqSplits bool) (*DistResult, error) {
	g, c := s.g, s.c
	size := c.Size()
	wk := newWalker(ownStore{s})
	var active []walk
	if !seqSplits {
		for _, v := range s.starts {
			active = append(active, walk{ID: v, V: v})
		}
	}
	next := g.Target // seqSplits: the start of the split to walk next
	for {
		if seqSplits {
			if next < 0 {
				break
			}
			if next >= g.Lo && next < g.Hi {
				active = append(active, walk{ID: next, V: next})
			}
		}
		for {
			out := make([][]handed, size)
			for _, x := range active {
				k := s.split[x.V-g.Lo]
				if h, ok := wk.run(x); ok {
					q := g.Owner(h.V)
					out[q] = append(out[q], handed{walk: h, Split: k})
				}
			}
			active = active[:0]
			busy := false
			for q := range out {
				busy = busy || len(out[q]) > 0
			}
			more, err := mpix.Any(c, busy)
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
			send := make([][]byte, size)
			for q := range out {
				send[q] = mpix.Bytes(out[q])
			}
			got, err := c.Alltoallv(send)
			if err != nil {
				return nil, err
			}
			for _, bs := range got {
				hs, err := mpix.FromBytes[handed](bs)
				if err != nil {
					return nil, err
				}
				for _, h := range hs {
					if s.split[h.V-g.Lo] != h.Split {
						wk.outs = append(wk.outs, outcome{ID: h.ID, Exit: h.V, Root: -1, Join: -1, Length: h.Length})
						continue
					}
					active = append(active, h.walk)
				}
			}
		}
		if !seqSplits {
			break
		}
		// Where the next split's walk begins: the exit of this one, known
		// to the rank that ended it (-1: a source, the path is complete).
		mine := int64(-2)
		for i := len(wk.outs) - 1; i >= 0; i-- {
			if o := wk.outs[i]; o.ID == next {
				mine = int64(o.Exit)
				break
			}
		}
		v, err := mpix.AllreduceOne(c, mine, mpix.Max)
		if err != nil {
			return nil, err
		}
		if v == -2 {
			return nil, fmt.Errorf("cpath: split: the walk from vertex %d was lost", next)
		}
		next = int32(v)
	}
	s.pops, s.relax = s.pops+wk.pops, s.relax+wk.relax
	return s.finish(wk)
}

// sequential solves each split on one rank (seq-par, seq-seq): the
// vertices of a split are shipped to the rank that walks it, which
// follows every start of the split there. With seqSplits rank 0 takes
// the splits one at a time, from the target's back, each from where the
// later one left; otherwise each rank takes a block of splits at once.
func (s *splitter) sequential(seqSplits bool) (*DistResult, error) {
	g, c := s.g, s.c
	size := c.Size()
	// Which rank walks split k: blocks of about equal numbers of vertices.
	counts := make([]int64, s.nsplits)
	for _, k := range s.split {
		counts[k]++
	}
	if err := c.Allreduce(counts, mpix.Sum); err != nil {
		return nil, err
	}
	walker := make([]int, s.nsplits)
	if !seqSplits {
		total := int64(0)
		for _, n := range counts {
			total += n
		}
		acc := int64(0)
		for k, n := range counts {
			walker[k] = int(min(int64(size-1), (acc+n/2)*int64(size)/max(total, 1)))
			acc += n
		}
	}
	isStart := make(map[int32]bool, len(s.starts))
	for _, v := range s.starts {
		isStart[v] = true
	}
	// The owned vertices by split (a counting sort), so that shipping one
	// split costs its vertices, not all of them.
	first := make([]int32, s.nsplits+1)
	for _, k := range s.split {
		first[k+1]++
	}
	for k := 1; k <= s.nsplits; k++ {
		first[k] += first[k-1]
	}
	bySplit := make([]int32, len(s.split))
	fill := slices.Clone(first[:s.nsplits])
	for l, k := range s.split {
		bySplit[fill[k]] = int32(l)
		fill[k]++
	}
	ship := func(lo, hi int32) (*mapStore, []int32, error) {
		out := make([][]shipped, size)
		var starts [][]int32 = make([][]int32, size)
		for _, l := range bySplit[first[lo]:first[hi]] {
			k := s.split[l]
			v := l + g.Lo
			u, w := s.pred(v)
			q := walker[k]
			out[q] = append(out[q], shipped{V: v, Pred: u, Split: k, W: w})
			if isStart[v] {
				starts[q] = append(starts[q], v)
			}
		}
		send := make([][]byte, size)
		for q := range out {
			send[q] = mpix.Bytes(out[q])
		}
		got, err := c.Alltoallv(send)
		if err != nil {
			return nil, nil, err
		}
		vs, err := mpix.Concat[shipped](got)
		if err != nil {
			return nil, nil, err
		}
		for q := range starts {
			send[q] = mpix.Bytes(starts[q])
		}
		got, err = c.Alltoallv(send)
		if err != nil {
			return nil, nil, err
		}
		st, err := mpix.Concat[int32](got)
		if err != nil {
			return nil, nil, err
		}
		slices.Sort(st)
		return newMapStore(vs), st, nil
	}
	var outs []outcome
	var marks []mark
	if !seqSplits {
		ms, starts, err := ship(0, int32(s.nsplits))
		if err != nil {
			return nil, err
		}
		wk := newWalker(ms)
		for _, v := range starts {
			wk.run(walk{ID: v, V: v})
		}
		s.pops, s.relax = s.pops+wk.pops, s.relax+wk.relax
		return s.finish(wk)
	}
	// seq-seq: the splits to rank 0 one at a time, last first.
	next := g.Target
	for k := int32(s.nsplits - 1); k >= 0 && next >= 0; k-- {
		ms, _, err := ship(k, k+1)
		if err != nil {
			return nil, err
		}
		exit := int64(-2)
		if c.Rank() == 0 {
			if _, ok := ms.find(next); ok {
				wk := newWalker(ms)
				wk.run(walk{ID: next, V: next})
				s.pops, s.relax = s.pops+wk.pops, s.relax+wk.relax
				o := wk.outs[len(wk.outs)-1]
				outs = append(outs, o)
				exit = int64(o.Exit)
				marks = append(marks, wk.marks()...)
			}
		}
		v, err := mpix.AllreduceOne(c, exit, mpix.Max)
		if err != nil {
			return nil, err
		}
		if v != -2 {
			next = int32(v)
		}
	}
	return s.stitchAndExpand(outs, marks)
}

// mark is a vertex a walk took: its step from the walk's start.
type mark struct{ V, Walk, Step int32 }

func (w *walker) marks() []mark {
	var ms []mark
	for l, b := range w.by {
		if b >= 0 {
			ms = append(ms, mark{w.vertex(int32(l)), b, w.step[l]})
		}
	}
	return ms
}

// vertex is the global id of local index l.
func (w *walker) vertex(l int32) int32 {
	switch st := w.st.(type) {
	case ownStore:
		return l + st.s.g.Lo
	case *mapStore:
		return st.vs[l].V
	}
	panic("cpath: unknown vertex store")
}

// seg is a stretch of the path: the vertices walk Walk took from step
// From on.
type seg struct{ Walk, From int32 }

// chainSegments follows the outcomes from the target's walk back to a
// source: the walks the path runs through, in order from the target, and
// the path's length.
func chainSegments(outs []outcome, target int32) ([]seg, int64, error) {
	byID := make(map[int32]outcome, len(outs))
	for _, o := range outs {
		byID[o.ID] = o
	}
	var segs []seg
	length := int64(0)
	w, from, base := target, int32(0), int64(0) // base: the path's length where it enters walk w, minus w's length there
	for {
		o, ok := byID[w]
		if !ok {
			return nil, 0, fmt.Errorf("cpath: split: no outcome for the walk from vertex %d", w)
		}
		if len(segs) > len(outs) {
			return nil, 0, fmt.Errorf("cpath: split: the walks form a cycle")
		}
		segs = append(segs, seg{w, from})
		if o.Join >= 0 {
			base += o.Length - o.JoinAt
			w, from = o.Join, o.JoinStep
			continue
		}
		length = base + o.Length
		if o.Exit < 0 {
			return segs, length, nil
		}
		base, w, from = length, o.Exit, 0
	}
}

// gather collects every rank's xs on rank 0 (nil elsewhere).
func gather[T any](c mpix.Comm, xs []T) ([]T, error) {
	send := make([][]byte, c.Size())
	send[0] = mpix.Bytes(xs)
	got, err := c.Alltoallv(send)
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	return mpix.Concat[T](got)
}

// finish stitches the walks' outcomes into the path on rank 0 and collects
// its vertices from the ranks that walked them.
func (s *splitter) finish(wk *walker) (*DistResult, error) {
	c := s.c
	outs, err := gather(c, wk.outs)
	if err != nil {
		return nil, err
	}
	var segs []seg
	res := &DistResult{}
	if c.Rank() == 0 {
		segs, res.Path.Length, err = chainSegments(outs, s.g.Target)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	all, err := c.Allgatherv(mpix.Bytes(segs))
	if err != nil {
		return nil, err
	}
	if segs, err = mpix.FromBytes[seg](all[0]); err != nil {
		return nil, err
	}
	type at struct{ idx, from int32 }
	bySeg := make(map[int32]at, len(segs))
	for i, sg := range segs {
		bySeg[sg.Walk] = at{int32(i), sg.From}
	}
	// Each vertex on the path, as (segment, step, vertex).
	type onPath struct{ Seg, Step, V int32 }
	var mine []onPath
	for l, b := range wk.by {
		if b < 0 {
			continue
		}
		if a, ok := bySeg[b]; ok && wk.step[l] >= a.from {
			mine = append(mine, onPath{a.idx, wk.step[l], wk.vertex(int32(l))})
		}
	}
	got, err := gather(c, mine)
	if err != nil || c.Rank() != 0 {
		return res, err
	}
	// In path order from the target: by segment, then step; reversed to
	// run from the source.
	slices.SortFunc(got, func(a, b onPath) int {
		if a.Seg != b.Seg {
			return cmp.Compare(a.Seg, b.Seg)
		}
		return cmp.Compare(a.Step, b.Step)
	})
	vs := make([]int32, len(got))
	for i, x := range got {
		vs[len(got)-1-i] = x.V
	}
	res.Path.Vertices = vs
	return res, nil
}

// stitchAndExpand is finish for seq-seq, where rank 0 walked every split
// itself: outs and marks are rank 0's.
func (s *splitter) stitchAndExpand(outs []outcome, marks []mark) (*DistResult, error) {
	res := &DistResult{}
	if s.c.Rank() != 0 {
		return res, nil
	}
	segs, length, err := chainSegments(outs, s.g.Target)
	if err != nil {
		return nil, err
	}
	res.Path.Length = length
	order := make(map[int32]int32, len(segs))
	for i, sg := range segs {
		order[sg.Walk] = int32(i)
	}
	slices.SortFunc(marks, func(a, b mark) int {
		if oa, ob := order[a.Walk], order[b.Walk]; oa != ob {
			return cmp.Compare(oa, ob)
		}
		return cmp.Compare(a.Step, b.Step)
	})
	vs := make([]int32, 0, len(marks))
	for i := len(marks) - 1; i >= 0; i-- {
		if _, ok := order[marks[i].Walk]; ok {
			vs = append(vs, marks[i].V)
		}
	}
	res.Path.Vertices = vs
	return res, nil
}
