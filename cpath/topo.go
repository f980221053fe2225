package cpath

// The topological interval heuristics of the paper's §4.5, `topo` and
// `topo-shuffle`. They build no graph: every program edge (the computation
// between two consecutive calls of a thread) and every MPI call is an
// interval of time, and the critical path is taken to run through the
// longest of each group of overlapping program edges, joined by MPI calls.
// They are linear (after a local sort), need no cross-rank edges and cannot
// loop, but are not exact: Agreement measures how far they are from the
// exact path.
//
// Definitions (shared by both, so that they give the same segments):
//
//   - Intervals. A call c with a previous call p on its thread gives the
//     program edge (End(p), Start(c)). Only edges of positive length take
//     part: zero-length edges carry no time, and a negative one is clock
//     error. An MPI call that ends before it starts is taken to last 0.
//     Each edge record also carries the calls at both of its ends
//     (Start(p), End(c)), so the MPI intervals travel inside it.
//   - Groups. Two edges overlap when their open intervals intersect. A
//     group is a connected component of overlapping edges: in start order,
//     an edge joins the current group when it starts before the group's
//     latest end. The longest edge of a group is on the path; among equals
//     the smallest call id.
//   - topo. Each analyzer rank sorts its edges by start (then call id);
//     rank 0 gathers them, merges the sorted arrays (a k-way merge) and
//     groups in one sweep.
//   - Connection. Let T0 be the earliest Start of any call (call f, the
//     smallest id among equals) and T1 the latest End (call l, likewise).
//     Between the end tA of a chosen edge A (at Start(b), b the call after
//     A, on A's rank) and the start tB of the next chosen edge B (at End(a),
//     a the call before B, on B's rank), the MPI call a covers
//     [max(tA, Start(a)), tB]; whatever it leaves, [tA, Start(a)], is given
//     to b, the call the path entered at tA. The run's start acts as an edge
//     ending at T0 entering f, its end as an edge starting at T1 after l.
//     So the segments tile [T0, T1] without overlap and Length = T1 - T0.
//     Zero-length pieces are dropped and equal neighbours merged.
//   - Periods (topo-shuffle). Analyzer rank q owns [lo_q, hi_q), cut at
//     P-1 splitters, weighted quantiles of a sample of the edge starts of
//     every rank, so that each owns about as many edge starts. An edge goes
//     to every rank whose (non-empty) period it overlaps. A rank merges and
//     groups what it received and sends rank 0 the longest edge of each
//     group. A group with no edge crossing lo_q or hi_q is complete, so
//     decided there; only the first and the last group can cross, and they
//     are flagged: rank 0 stitches each with the neighbouring period's
//     part, which holds the same crossing edges, and keeps the longer
//     edge. So every group is decided over all its edges, exactly as topo
//     decides it, whatever the number of ranks.
//   - Compression. With Compress, the edge arrays exchanged (topo's
//     gather, topo-shuffle's shuffle) are delta-coded, byte-transposed and
//     LZ4-compressed; RawBytes counts them at their plain size.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
)

// TopoCalls is one analyzer rank's share of the calls: the logged ranks
// [RankLo, RankHi). The heuristics need only each call's times and its
// predecessor on its thread, not the graph.
type TopoCalls struct {
	Ranks          int     // logged ranks in the run
	RankStart      []int32 // global call numbering: rank r's calls are [RankStart[r], RankStart[r+1]); len Ranks+1, same on every analyzer rank
	RankLo, RankHi int     // the logged ranks this analyzer rank owns (contiguous; may be empty)
	Start, End     []int64 // times (ns, global clock) of calls RankStart[RankLo] .. RankStart[RankHi]-1
	Prev           []int32 // global id of the previous call of the same thread, -1 for a thread's first call
}

// TopoOptions selects the variant: Shuffle distributes the grouping over
// the analyzer ranks by periods of time instead of doing it all on rank 0;
// Compress LZ4-compresses the interval arrays exchanged (paper Table 2).
type TopoOptions struct{ Shuffle, Compress bool }

// TopoSegment is a stretch of the critical path attributed to one rank: a
// program edge (Kind 'c': computation before call Call) or an MPI call
// (Kind 'm': inside call Call). It is the common form in which a heuristic
// path and an exact one can be compared.
type TopoSegment struct {
	Rank  int32
	Kind  byte
	Call  int32
	Start int64
	End   int64
}

// TopoResult is the heuristic path: Segments on rank 0 only, in time
// order; Length (the run time, which the segments tile) and Stats on every
// rank.
type TopoResult struct {
	Segments []TopoSegment
	Length   int64
	Stats    DistStats
}

// topoEdge is a program edge with the calls at its ends: the unit the
// heuristics ship, group and connect. 48 bytes, no padding, so that
// mpix.Bytes can ship arrays of it.
type topoEdge struct {
	S, E      int64 // the edge: End(Prev), Start(Call)
	PrevStart int64 // Start(Prev)
	CallEnd   int64 // End(Call)
	Call      int32 // the call after the edge
	Prev      int32 // the call before it
	Rank      int32 // their logged rank
	Flags     int32 // group summaries sent to rank 0: topoCrossL, topoCrossR
}

const (
	topoCrossL = 1 // the group has an edge starting before the period
	topoCrossR = 2 // the group has an edge ending after the period
)

// topoBefore is the order of intervals: by start, then call id.
func topoBefore(a, b *topoEdge) bool { return a.S < b.S || (a.S == b.S && a.Call < b.Call) }

// topoBetter reports whether a is preferred to b as a group's edge on the
// path: longer, or as long with a smaller call id.
func topoBetter(a, b *topoEdge) bool {
	la, lb := a.E-a.S, b.E-b.S
	return la > lb || (la == lb && a.Call < b.Call)
}

// topoEnds is what rank 0 needs of the run's ends from each analyzer rank:
// its earliest call (by Start, then id) and latest (by End, then id). It
// heads each rank's part to rank 0, as its memory.
type topoEnds struct {
	F, FStart       int64 // F = -1 when the rank has no calls
	L, LStart, LEnd int64
}

const topoEndsSize = 5 * 8

// merge keeps the better of two candidates for both ends.
func (x *topoEnds) merge(y topoEnds) {
	if y.F < 0 {
		return
	}
	if x.F < 0 {
		*x = y
		return
	}
	if y.FStart < x.FStart || (y.FStart == x.FStart && y.F < x.F) {
		x.F, x.FStart = y.F, y.FStart
	}
	if y.LEnd > x.LEnd || (y.LEnd == x.LEnd && y.L < x.L) {
		x.L, x.LStart, x.LEnd = y.L, y.LStart, y.LEnd
	}
}

// topoLocal is one analyzer rank's prepared input: its program edges of
// positive length as runs sorted by topoBefore, one per owned logged
// rank, held as call ids (4 bytes an edge; the 48-byte records are made
// only to be shipped or as they are grouped).
type topoLocal struct {
	runs  []edgeRun
	n     int // edges in all runs
	ends  topoEnds
	calls *TopoCalls
}

// edgeRun is a run of edges sorted by topoBefore: records (es), or the
// call ids after the edges of one logged rank (ids, read through calls).
type edgeRun struct {
	es   []topoEdge
	ids  []int32
	rank int32
}

func (r *edgeRun) len() int { return len(r.es) + len(r.ids) }

// at is the run's edge i.
func (l *topoLocal) at(r *edgeRun, i int) topoEdge {
	if r.es != nil {
		return r.es[i]
	}
	return l.calls.edge(r.ids[i], r.rank)
}

// base is the global id of the first call in.Start holds.
func (in *TopoCalls) base() int32 {
	if in.Ranks == 0 {
		return 0
	}
	return in.RankStart[in.RankLo]
}

// end is call i's end (i an index into Start), an end before the start
// taken as the start.
func (in *TopoCalls) end(i int32) int64 { return max(in.End[i], in.Start[i]) }

// edge is the program edge before call id of logged rank r.
func (in *TopoCalls) edge(id, r int32) topoEdge {
	base := in.base()
	i := id - base
	p := in.Prev[i]
	return topoEdge{S: in.end(p - base), E: in.Start[i], PrevStart: in.Start[p-base], CallEnd: in.end(i), Call: id, Prev: p, Rank: r}
}

// prepare checks the input and finds the local edges.
func (in *TopoCalls) prepare() (*topoLocal, error) {
	if in.Ranks < 0 || len(in.RankStart) != in.Ranks+1 {
		return nil, fmt.Errorf("topo: RankStart has %d entries for %d ranks, want Ranks+1", len(in.RankStart), in.Ranks)
	}
	if in.Ranks > 0 && in.RankStart[0] != 0 {
		return nil, fmt.Errorf("topo: RankStart[0] = %d, want 0", in.RankStart[0])
	}
	for r := 0; r < in.Ranks; r++ {
		if in.RankStart[r+1] < in.RankStart[r] {
			return nil, fmt.Errorf("topo: RankStart decreases at rank %d", r)
		}
	}
	if in.RankLo < 0 || in.RankLo > in.RankHi || in.RankHi > in.Ranks {
		return nil, fmt.Errorf("topo: owned ranks [%d, %d) not within [0, %d]", in.RankLo, in.RankHi, in.Ranks)
	}
	base, n := in.base(), 0
	if in.Ranks > 0 {
		n = int(in.RankStart[in.RankHi] - base)
	}
	if len(in.Start) != n || len(in.End) != n || len(in.Prev) != n {
		return nil, fmt.Errorf("topo: %d/%d/%d Start/End/Prev entries for the %d calls of ranks [%d, %d)", len(in.Start), len(in.End), len(in.Prev), n, in.RankLo, in.RankHi)
	}
	loc := &topoLocal{ends: topoEnds{F: -1}, calls: in}
	ids := make([]int32, 0, n) // every run's, one after another
	for r := in.RankLo; r < in.RankHi; r++ {
		lo, hi := in.RankStart[r], in.RankStart[r+1]
		first := len(ids)
		sorted := true
		last := topoEdge{S: math.MinInt64}
		for id := lo; id < hi; id++ {
			i := id - base
			s, e := in.Start[i], in.end(i)
			loc.ends.merge(topoEnds{F: int64(id), FStart: s, L: int64(id), LStart: s, LEnd: e})
			p := in.Prev[i]
			if p == -1 {
				continue
			}
			if p < lo || p >= hi || p == id {
				return nil, fmt.Errorf("topo: call %d of rank %d has Prev %d, not another call of that rank", id, r, p)
			}
			if ps := in.end(p - base); s > ps {
				ids = append(ids, id)
				// A thread's calls follow each other: its run is sorted
				// unless threads interleave or the clocks run back.
				x := topoEdge{S: ps, Call: id}
				sorted = sorted && !topoBefore(&x, &last)
				last = x
			}
		}
		run := edgeRun{ids: ids[first:len(ids):len(ids)], rank: int32(r)}
		if !sorted {
			slices.SortFunc(run.ids, func(a, b int32) int {
				x, y := topoEdge{S: in.end(in.Prev[a-base] - base), Call: a}, topoEdge{S: in.end(in.Prev[b-base] - base), Call: b}
				if topoBefore(&x, &y) {
					return -1
				}
				if topoBefore(&y, &x) {
					return 1
				}
				return 0
			})
		}
		if run.len() > 0 {
			loc.runs = append(loc.runs, run)
		}
	}
	loc.n = len(ids)
	return loc, nil
}

// topoGrouper groups edges given in topoBefore order and keeps the chosen
// edge of each group, in start order, flagged with the period boundaries
// [lo, hi) it crosses.
type topoGrouper struct {
	lo, hi int64
	out    []topoEdge
	best   topoEdge
	maxEnd int64
	open   bool
}

func (g *topoGrouper) add(e *topoEdge) {
	if g.open && e.S < g.maxEnd {
		g.maxEnd = max(g.maxEnd, e.E)
		flags := g.best.Flags
		if topoBetter(e, &g.best) {
			g.best = *e
		}
		g.best.Flags = flags
	} else {
		g.flush()
		g.best, g.maxEnd, g.open = *e, e.E, true
		g.best.Flags = 0
	}
	if e.S < g.lo {
		g.best.Flags |= topoCrossL
	}
	if e.E > g.hi {
		g.best.Flags |= topoCrossR
	}
}

func (g *topoGrouper) flush() {
	if g.open {
		g.out = append(g.out, g.best)
		g.open = false
	}
}

// done returns the chosen edges.
func (g *topoGrouper) done() []topoEdge {
	g.flush()
	return g.out
}

// merge hands fn the edges of runs in topoBefore order (a k-way merge
// with a binary heap of cursors over the runs, each sorted).
func (l *topoLocal) merge(runs []edgeRun, fn func(e *topoEdge)) {
	type cursor struct {
		run  *edgeRun
		i    int
		head topoEdge
	}
	var h []cursor
	for k := range runs {
		if runs[k].len() > 0 {
			h = append(h, cursor{run: &runs[k], head: l.at(&runs[k], 0)})
		}
	}
	if len(h) == 1 {
		r := h[0].run
		if r.es != nil {
			for i := range r.es {
				fn(&r.es[i])
			}
			return
		}
		for i := range r.ids {
			e := l.at(r, i)
			fn(&e)
		}
		return
	}
	less := func(i, j int) bool { return topoBefore(&h[i].head, &h[j].head) }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(c+1, c) {
				c++
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		x := &h[0]
		fn(&x.head)
		if x.i++; x.i < x.run.len() {
			x.head = l.at(x.run, x.i)
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
}

// records is the local edges as records, in topoBefore order: what is
// shipped.
func (l *topoLocal) records() []topoEdge {
	out := make([]topoEdge, 0, l.n)
	l.merge(l.runs, func(e *topoEdge) { out = append(out, *e) })
	return out
}

// topoSegs builds the segments, merging equal neighbours and dropping
// empty pieces.
type topoSegs struct{ segs []TopoSegment }

func (s *topoSegs) add(rank int32, kind byte, call int32, start, end int64) {
	if end <= start {
		return
	}
	if n := len(s.segs); n > 0 {
		last := &s.segs[n-1]
		if last.Rank == rank && last.Kind == kind && last.Call == call && last.End == start {
			last.End = end
			return
		}
	}
	s.segs = append(s.segs, TopoSegment{Rank: rank, Kind: kind, Call: call, Start: start, End: end})
}

// topoConnect joins the chosen edges (in time order) into segments tiling
// [ends.FStart, ends.LEnd], as the comment at the top of this file defines.
func topoConnect(chosen []topoEdge, ends topoEnds, rankOf func(int32) int32) []TopoSegment {
	// A chosen edge gives its computation and at most two MPI segments
	// before it, fewer where neighbours merge: sized for two, so that a
	// long path grows once at most rather than copying at every doubling.
	s := topoSegs{segs: make([]TopoSegment, 0, 2*len(chosen)+2)}
	f, l := int32(ends.F), int32(ends.L)
	ta, b, rb := ends.FStart, f, rankOf(f)
	gap := func(tb, aStart int64, a, ra int32) {
		m := min(max(aStart, ta), tb)
		s.add(rb, 'm', b, ta, m)
		s.add(ra, 'm', a, m, tb)
	}
	for i := range chosen {
		e := &chosen[i]
		gap(e.S, e.PrevStart, e.Prev, e.Rank)
		s.add(e.Rank, 'c', e.Call, e.S, e.E)
		ta, b, rb = e.E, e.Call, e.Rank
	}
	gap(ends.LEnd, ends.LStart, l, rankOf(l))
	return s.segs
}

// rankOf returns the logged rank of a global call id.
func (in *TopoCalls) rankOf(call int32) int32 {
	return int32(sort.Search(in.Ranks, func(r int) bool { return in.RankStart[r+1] > call }))
}

// Topo runs topo (opt.Shuffle false) or topo-shuffle on the job c. Every
// rank of c must call it with its share; a failure anywhere is returned on
// every rank.
func Topo(c mpix.Comm, in *TopoCalls, opt TopoOptions) (*TopoResult, error) {
	b0, _ := c.Stats()
	tc := &topoComm{c: c}
	loc, lerr := in.prepare()
	if loc == nil {
		loc = &topoLocal{ends: topoEnds{F: -1}}
	}
	// One agreement round: whether any rank's input is bad, and the run's
	// ends, which every rank reports as Length.
	agree := []int64{0, math.MinInt64, math.MinInt64}
	if lerr != nil {
		agree[0] = 1
	}
	if loc.ends.F >= 0 {
		agree[1], agree[2] = -loc.ends.FStart, loc.ends.LEnd
	}
	tc.rounds++
	if err := c.Allreduce(agree, mpix.Max); err != nil {
		return nil, err
	}
	if agree[0] != 0 {
		if lerr == nil {
			lerr = errors.New("topo: invalid input on another analyzer rank")
		}
		return nil, lerr
	}
	res := &TopoResult{}
	if agree[2] != math.MinInt64 {
		res.Length = agree[2] + agree[1]
	}

	// To rank 0: this rank's ends, then its edges (topo) or the chosen
	// edges of its groups (shuffle).
	hdr, es := make([][]byte, c.Size()), make([][]topoEdge, c.Size())
	hdr[0] = mpix.Bytes([]topoEnds{loc.ends})
	var ferr error // a local failure, shared in the last round
	var rh [][]byte
	var re [][]topoEdge
	var xerr, err error
	switch {
	case opt.Shuffle:
		if es[0], ferr, err = topoShuffle(tc, loc, opt.Compress); err != nil {
			return nil, err
		}
		rh, re, xerr, err = tc.exchange(hdr, es, topoEndsSize, false)
	case c.Rank() == 0 || opt.Compress:
		// Rank 0 reads its own edges through its calls.
		if c.Rank() != 0 {
			es[0] = loc.records()
		}
		rh, re, xerr, err = tc.exchange(hdr, es, topoEndsSize, opt.Compress)
	default:
		send := make([][]byte, c.Size())
		var view []topoEdge
		send[0], view = topoPlainPart(hdr[0], loc.n)
		view = view[:0]
		loc.merge(loc.runs, func(e *topoEdge) { view = append(view, *e) }) // within its capacity: in place
		rh, re, xerr, err = tc.exchangeEncoded(send, nil, nil, topoEndsSize)
	}
	if err != nil {
		return nil, err
	}
	if ferr == nil {
		ferr = xerr
	}
	if c.Rank() == 0 && ferr == nil {
		res.Segments, ferr = topoFinish(loc, rh, re, opt.Shuffle)
	}

	b1, _ := c.Stats()
	st := []int64{b1 - b0, 0}
	if opt.Compress {
		st[1] = b1 - b0 + tc.raw
	}
	bad := int64(0)
	if ferr != nil {
		bad = 1
	}
	st = append(st, bad)
	if err := c.Allreduce(st, mpix.Sum); err != nil {
		return nil, err
	}
	if st[2] != 0 {
		if ferr == nil {
			ferr = errors.New("topo: failed on another analyzer rank")
		}
		return nil, ferr
	}
	res.Stats.Rounds = tc.rounds
	res.Stats.BytesSent, res.Stats.RawBytes = st[0], st[1]
	return res, nil
}

// topoFinish is rank 0's part: merge and group (topo) or stitch the
// groups that cross period boundaries (shuffle), then connect.
func topoFinish(loc *topoLocal, hdr [][]byte, parts [][]topoEdge, shuffle bool) ([]TopoSegment, error) {
	ends := topoEnds{F: -1}
	for _, b := range hdr {
		e, err := topoParseEnds(b)
		if err != nil {
			return nil, err
		}
		ends.merge(e)
	}
	if ends.F < 0 {
		return nil, nil // no calls at all
	}
	var chosen []topoEdge
	if !shuffle {
		// Rank 0's own edges through its calls, the others' as shipped.
		runs := slices.Clone(loc.runs)
		for _, es := range parts[1:] {
			runs = append(runs, edgeRun{es: es})
		}
		g := &topoGrouper{lo: math.MinInt64, hi: math.MaxInt64}
		loc.merge(runs, g.add)
		chosen = g.done()
	} else {
		n := 0
		for _, gs := range parts {
			n += len(gs)
		}
		chosen = make([]topoEdge, 0, n)
		var pending *topoEdge // a group crossing the boundary after the last period seen
		for p, gs := range parts {
			for k := range gs {
				g := gs[k]
				if k == 0 && pending != nil {
					if g.Flags&topoCrossL == 0 {
						return nil, fmt.Errorf("topo: rank %d does not continue the group crossing into its period", p)
					}
					if topoBetter(pending, &g) {
						g = *pending
						g.Flags = gs[k].Flags
					}
					pending = nil
				} else if g.Flags&topoCrossL != 0 {
					return nil, fmt.Errorf("topo: rank %d continues a group no earlier rank left open", p)
				}
				if g.Flags&topoCrossR != 0 {
					if k != len(gs)-1 {
						return nil, fmt.Errorf("topo: rank %d: a group crossing its period's end is not its last", p)
					}
					pending = &g
					continue
				}
				chosen = append(chosen, g)
			}
		}
		if pending != nil {
			return nil, errors.New("topo: a group crosses the end of the last period")
		}
	}
	return topoConnect(chosen, ends, loc.calls.rankOf), nil
}

// topoSamples is how many edge starts each rank contributes to choose the
// period splitters.
const topoSamples = 256

// topoShuffle does topo-shuffle's exchanges and local grouping and returns
// the chosen edges of this rank's groups (complete, or crossing a period
// boundary and flagged) for rank 0. ferr is a local failure that must not
// break the collective sequence; err is an MPI one.
func topoShuffle(tc *topoComm, loc *topoLocal, compress bool) (chosen []topoEdge, ferr, err error) {
	c := tc.c
	P, me := c.Size(), c.Rank()
	// Splitters: every rank sends its edge count and evenly spaced starts;
	// each sample stands for count/samples edges.
	n := loc.n
	k := min(n, topoSamples)
	smp := make([]int64, 0, k)
	i := 0
	loc.merge(loc.runs, func(e *topoEdge) {
		if j := len(smp); j < k && i == (2*j+1)*n/(2*k) {
			smp = append(smp, e.S)
		}
		i++
	})
	e := mpix.NewEncoder(nil)
	mpix.PutRecord(e, int64(n))
	mpix.PutRecords(e, smp)
	tc.rounds++
	all, err := c.Allgatherv(e.Bytes())
	if err != nil {
		return nil, nil, err
	}
	split, ferr := topoSplitters(all, P)
	if ferr != nil {
		// Take part in the shuffle all the same, with nothing: every rank
		// makes the same collective calls.
		_, _, _, err := tc.exchange(make([][]byte, P), make([][]topoEdge, P), 0, compress)
		return nil, ferr, err
	}
	lo := func(q int) int64 {
		if q == 0 {
			return math.MinInt64
		}
		return split[q-1]
	}
	hi := func(q int) int64 {
		if q == P-1 {
			return math.MaxInt64
		}
		return split[q]
	}
	// Each edge goes to the owner of every non-empty period it overlaps,
	// [lo, hi) meeting (S, E); each part stays sorted. The rank's own
	// part it reads through its calls.
	overlaps := func(e *topoEdge, q int) bool { return lo(q) < hi(q) && hi(q) > e.S && lo(q) < e.E }
	periods := func(fn func(e *topoEdge, q int)) {
		loc.merge(loc.runs, func(e *topoEdge) {
			q := sort.Search(P, func(q int) bool { return hi(q) > e.S })
			for ; q < P && lo(q) < e.E; q++ {
				if q != me && lo(q) < hi(q) {
					fn(e, q)
				}
			}
		})
	}
	// Counted, then put in their messages in place (or, to be
	// compressed, in arrays of their own).
	counts := make([]int, P)
	periods(func(_ *topoEdge, q int) { counts[q]++ })
	send, parts := make([][]byte, P), make([][]topoEdge, P)
	for q := range send {
		if q != me && compress {
			parts[q] = make([]topoEdge, 0, counts[q])
		} else if q != me {
			send[q], parts[q] = topoPlainPart(nil, counts[q])
			parts[q] = parts[q][:0]
		}
	}
	periods(func(e *topoEdge, q int) { parts[q] = append(parts[q], *e) })
	for q := range send {
		if q != me && compress {
			send[q] = topoEncode(nil, parts[q], true)
			tc.raw += int64(topoPlainSize(0, len(parts[q])) - len(send[q]))
		}
	}
	clear(parts)
	_, parts, ferr, err = tc.exchangeEncoded(send, nil, nil, 0)
	if err != nil || ferr != nil {
		return nil, ferr, err
	}
	runs := slices.Clone(loc.runs)
	for q, es := range parts {
		if q != me {
			runs = append(runs, edgeRun{es: es})
		}
	}
	g := &topoGrouper{lo: lo(me), hi: hi(me)}
	loc.merge(runs, func(e *topoEdge) {
		if overlaps(e, me) {
			g.add(e)
		}
	})
	return g.done(), nil, nil
}

// topoSplitters picks P-1 period boundaries from the gathered samples
// (each message: the rank's edge count, then its samples): the weighted
// quantiles i/P of the edge starts. Every rank computes the same from the
// same messages, and fails alike on a bad one.
func topoSplitters(all [][]byte, P int) ([]int64, error) {
	type sample struct {
		v int64
		w float64
	}
	var ss []sample
	total := 0.0
	for p, b := range all {
		d := mpix.NewDecoder(b)
		n := mpix.ReadRecord[int64](d)
		xs := mpix.ReadRecords[int64](d)
		if err := d.Done(); err != nil {
			return nil, fmt.Errorf("topo: rank %d's samples: %v", p, err)
		}
		if len(xs) == 0 {
			continue
		}
		w := float64(n) / float64(len(xs))
		for _, v := range xs {
			ss = append(ss, sample{v, w})
		}
		total += float64(n)
	}
	slices.SortStableFunc(ss, func(a, b sample) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	split := make([]int64, P-1)
	cum, j := 0.0, 0
	for i := range split {
		target := total * float64(i+1) / float64(P)
		for j < len(ss) && cum+ss[j].w <= target {
			cum += ss[j].w
			j++
		}
		switch {
		case j < len(ss):
			split[i] = ss[j].v
		case len(ss) > 0:
			split[i] = ss[len(ss)-1].v + 1
		}
	}
	return split, nil
}

// PathSegments turns an exact path into segments, for comparison with the
// heuristics. vertex says what a path vertex is: the call it belongs to,
// whether it is the call's start, and its time; ok is false for a vertex
// of no call (a collective's hub, passed over; the run's start, which
// begins the path and so no segment). Each stretch u→v between call
// vertices is attributed by v: v = S(b) gives 'c' (the computation before
// b), v = E(b) gives 'm' (inside b, or arriving from another rank), Call
// b, Rank rank(b), Start time(u), End time(v).
func PathSegments(p Path, vertex func(v int32) (call int32, start bool, t int64, ok bool), rank func(call int32) int32) []TopoSegment {
	var out []TopoSegment
	prevT, have := int64(0), false
	for _, v := range p.Vertices {
		b, start, t, ok := vertex(v)
		if !ok {
			continue
		}
		if have {
			kind := byte('m')
			if start {
				kind = 'c'
			}
			out = append(out, TopoSegment{Rank: rank(b), Kind: kind, Call: b, Start: prevT, End: t})
		}
		prevT, have = t, true
	}
	return out
}

// Agreement is the share of the exact path's time during which the
// heuristic attributes the instant to the same rank and the same segment
// (same Kind and Call): 1 means identical. The heuristic's segments must
// not overlap (Topo's tile); segments running backwards count as empty. A
// path of no time agrees fully.
func Agreement(exact, heuristic []TopoSegment) float64 {
	h := slices.Clone(heuristic)
	slices.SortFunc(h, func(a, b TopoSegment) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	var total, same float64
	for _, x := range exact {
		if x.End <= x.Start {
			continue
		}
		total += float64(x.End - x.Start)
		// The heuristic segments that may intersect x: from the first
		// ending after x's start (they are sorted and disjoint, so their
		// ends ascend too).
		i := sort.Search(len(h), func(i int) bool { return h[i].End > x.Start })
		for ; i < len(h) && h[i].Start < x.End; i++ {
			y := &h[i]
			if y.Rank == x.Rank && y.Kind == x.Kind && y.Call == x.Call {
				if d := min(x.End, y.End) - max(x.Start, y.Start); d > 0 {
					same += float64(d)
				}
			}
		}
	}
	if total == 0 {
		return 1
	}
	return min(same/total, 1)
}
