package cpath

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
)

// SplitMode says how the global split (paper §4.4) solves its splits:
// the first word is the algorithm inside a split (seq: the sequential
// reference, Solver.DAG, on the split shipped whole to one rank; par: the
// ranks sweep it together in rounds, see splitter.search), the
// second how the splits are taken (seq: one after another from the last;
// par: all at once, then stitched).
type SplitMode string

const (
	SeqSeq SplitMode = "seq-seq"
	ParSeq SplitMode = "par-seq"
	ParPar SplitMode = "par-par"
	SeqPar SplitMode = "seq-par"
)

// SplitModes lists the modes, the default first.
var SplitModes = []SplitMode{ParPar, SeqPar, ParSeq, SeqSeq}

// SplitInput is where the global synchronisation points cut the graph
// into splits 0..K-1, in time order (K = len(Exit)).
//
// The builder guarantees: every edge u->v has Split(u) == Split(v),
// except edges out of Exit[k] (k < K-1), which go into split k+1 (the
// cross edges). Exit[k] is in split k, and Exit[K-1] is the target. So
// every path from a vertex of split k to the target leaves the split
// through Exit[k] (the hub vertex of synchronisation point k), and with
// the cross edges removed the splits are disconnected.
//
// Split checks what it can cheaply (lengths, ranges, the exits, every
// edge against the rule above: one exchange of 8 bytes per edge whose
// source another rank owns) and returns an error on every rank if any
// check fails on any rank.
type SplitInput struct {
	// Split, by owned vertex (len Hi-Lo): its split, 0..len(Exit)-1, in
	// time order.
	Split []int32
	// Exit, by split: the global vertex every path from the split to the
	// Target leaves through (the hub vertex of sync point k for split k;
	// the Target for the last split). The same on every rank.
	Exit []int32
}

// Split finds the critical path by cutting the graph at the global
// synchronisation points: each split is solved on its own, backwards from
// its exit, and the pieces are stitched together. It is exact: Dist, Succ
// and the path equal DAG's on the same graph, vertex for vertex.
//
// Why it is exact: for u in split k, Dist(u) = L_k(u) + Dist(Exit[k]),
// where L_k(u) is the longest distance from u to Exit[k] inside split k;
// and Dist(Exit[k]) = D_k + Dist(Exit[k+1]), where D_k is the longest
// distance from Exit[k] through a cross edge into split k+1 to Exit[k+1]
// (Dist(Exit[K-1]) = 0). The searches inside the splits give L and D; a
// constant per split changes no argmax, so the Succ they find (smallest id
// among equals) is the global one, and the Dists are stitched by adding
// each split's offset Dist(Exit[k]), a suffix sum of the K-1 values D_k
// that every rank gets in one Allreduce. The exit vertex has two roles:
// it starts the search of its own split (L = 0) and is the source of the
// cross edges into the next one, which give its D and its Succ. An edge
// from Exit[k] back into split k that the search of split k reaches
// closes a cycle and is reported as one.
//
// Stats: Relaxations and Pops are the searches' (for seq modes DAG's on
// each split: each edge into an ancestor once; for par modes two passes:
// twice), Rounds the collective calls before the path extraction, Splits
// K, Edges the edges of the graph.
func Split(c mpix.Comm, g *DistGraph, in *SplitInput, mode SplitMode) (*DistResult, error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, err
	}
	_, calls0 := c.Stats()
	ds := newDistSearch(c, g)
	sp := &splitter{c: c, g: g, ds: ds}
	if err := sp.check(in, mode); err != nil {
		return nil, err
	}
	var err error
	switch mode {
	case ParPar:
		err = sp.parallel(false)
	case ParSeq:
		err = sp.parallel(true)
	case SeqPar:
		err = sp.sequential(false)
	case SeqSeq:
		err = sp.sequential(true)
	}
	if err != nil {
		return nil, err
	}
	if err := sp.stitch(); err != nil {
		return nil, err
	}
	_, calls1 := c.Stats()
	ds.st.Rounds = calls1 - calls0
	res, err := ds.finish()
	if err != nil {
		return nil, err
	}
	res.Stats.Splits = sp.k
	return res, nil
}

// splitter is one rank's state in Split. The searches keep L_k (the
// distance to the split's exit) in ds.dist and the Succ in ds.succ, by
// owned vertex; stitch turns them into the global ones.
type splitter struct {
	c     mpix.Comm
	g     *DistGraph
	ds    *distSearch
	k     int     // splits
	split []int32 // by owned vertex
	exit  []int32 // by split
	// By split k < K-1, on the rank that owns Exit[k] (Unreached
	// elsewhere): D_k and the Succ of Exit[k], from the cross edges.
	bdist []int64
	bsucc []int32
	// The par modes' search, by owned vertex: its out-edges into
	// ancestors not yet relaxed (-1: not an ancestor, -2: processed).
	pending []int32
}

// isExit reports whether owned vertex u is the exit of a split other than
// the last, and which.
func (sp *splitter) isExit(u int32) (int32, bool) {
	k := sp.split[u-sp.g.Lo]
	return k, int(k) < sp.k-1 && sp.exit[k] == u
}

// offer offers the exit of split k D_k = c through v, with the tie-break.
func (sp *splitter) offer(k int32, c int64, v int32) {
	if c > sp.bdist[k] {
		sp.bdist[k], sp.bsucc[k] = c, v
		sp.ds.st.Updates++
	} else if c == sp.bdist[k] && v < sp.bsucc[k] {
		sp.bsucc[k] = v
	}
}

// check checks in on every rank and makes them agree: first what each rank
// can check alone, then whether they hold the same exits, then the edges
// whose source another rank owns, by asking its owner for its split.
func (sp *splitter) check(in *SplitInput, mode SplitMode) error {
	c, g := sp.c, sp.g
	err := sp.checkLocal(in, mode)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	h := uint64(14695981039346656037)
	for _, x := range sp.exit {
		h = (h ^ uint64(uint32(x))) * 1099511628211
	}
	x := []int64{int64(h >> 2), -int64(h >> 2), int64(sp.k), -int64(sp.k)}
	if err := c.Allreduce(x, mpix.Max); err != nil {
		return err
	}
	if x[0] != -x[1] || x[2] != -x[3] {
		return errors.New("cpath: split: the ranks disagree on the exits of the splits")
	}
	// Ask the owners of remote sources for their splits: (u, split of v).
	size := c.Size()
	ask := make([][]int32, size)
	for l, k := range sp.split {
		v := int32(l) + g.Lo
		for j := g.InStart[l]; j < g.InStart[l+1]; j++ {
			u := g.InSrc[j]
			if k > 0 && u == sp.exit[k-1] {
				continue // a cross edge; Exit[k-1]'s owner checks its split
			}
			if sp.ds.owns(u) {
				if ku := sp.split[u-g.Lo]; ku != k && err == nil {
					err = crossError(u, v, ku, k)
				}
				continue
			}
			q := g.Owner(u)
			ask[q] = append(ask[q], u, k, v)
		}
	}
	send := make([][]byte, size)
	for q := range ask {
		send[q] = mpix.Bytes(ask[q])
	}
	got, xerr := c.Alltoallv(send)
	if xerr != nil {
		return xerr
	}
	for _, b := range got {
		xs, ferr := mpix.FromBytes[int32](b)
		if ferr != nil || len(xs)%3 != 0 {
			if err == nil {
				err = errors.New("cpath: split: a rank shipped a malformed edge check")
			}
			continue
		}
		for i := 0; i+2 < len(xs) && err == nil; i += 3 {
			u, k, v := xs[i], xs[i+1], xs[i+2]
			if !sp.ds.owns(u) {
				err = errors.New("cpath: split: a rank shipped an edge check for a vertex it does not own")
			} else if ku := sp.split[u-g.Lo]; ku != k {
				err = crossError(u, v, ku, k)
			}
		}
	}
	return mpix.Agree(c, err)
}

func crossError(u, v, ku, kv int32) error {
	return fmt.Errorf("cpath: split: edge %d->%d leads from split %d into split %d, not out of the exit of split %d into the next",
		u, v, ku, kv, ku)
}

// checkLocal checks this rank's share of in.
func (sp *splitter) checkLocal(in *SplitInput, mode SplitMode) error {
	g := sp.g
	switch mode {
	case ParPar, ParSeq, SeqPar, SeqSeq:
	default:
		return fmt.Errorf("cpath: unknown split mode %q (seq-seq, par-seq, par-par, seq-par)", mode)
	}
	if in == nil {
		return errors.New("cpath: split: no split input")
	}
	sp.split, sp.exit, sp.k = in.Split, in.Exit, len(in.Exit)
	if sp.k == 0 {
		return errors.New("cpath: split: no splits (Exit is empty)")
	}
	if len(in.Split) != int(g.Hi-g.Lo) {
		return fmt.Errorf("cpath: split: %d splits given for %d owned vertices", len(in.Split), g.Hi-g.Lo)
	}
	for l, k := range in.Split {
		if k < 0 || int(k) >= sp.k {
			return fmt.Errorf("cpath: split: vertex %d in split %d of %d", int32(l)+g.Lo, k, sp.k)
		}
	}
	for k, x := range in.Exit {
		if x < 0 || int(x) >= g.N {
			return fmt.Errorf("cpath: split: the exit of split %d is vertex %d, out of range", k, x)
		}
		if sp.ds.owns(x) && int(in.Split[x-g.Lo]) != k {
			return fmt.Errorf("cpath: split: the exit of split %d, vertex %d, is in split %d", k, x, in.Split[x-g.Lo])
		}
	}
	if in.Exit[sp.k-1] != g.Target {
		return fmt.Errorf("cpath: split: the exit of the last split is vertex %d, not the target %d", in.Exit[sp.k-1], g.Target)
	}
	sp.bdist = make([]int64, sp.k-1)
	sp.bsucc = make([]int32, sp.k-1)
	for k := range sp.bdist {
		sp.bdist[k], sp.bsucc[k] = Unreached, NoVertex
	}
	return nil
}

// parallel searches the splits with every rank taking part (par-par,
// par-seq), from the exits, relaxing edges inside a split and turning
// cross edges into offers to the boundary slot of the previous split's
// exit. With seqSplits the splits are searched one after another from the
// last, each from its own exit; otherwise all at once, from every exit.
func (sp *splitter) parallel(seqSplits bool) error {
	g := sp.g
	nv := int(g.Hi - g.Lo)
	sp.pending = make([]int32, nv)
	for i := range sp.pending {
		sp.pending[i] = -1
	}
	if !seqSplits {
		var seeds []int32
		for _, x := range sp.exit {
			if sp.ds.owns(x) {
				seeds = append(seeds, x)
			}
		}
		return sp.search(seeds)
	}
	for k := sp.k - 1; k >= 0; k-- {
		var seeds []int32
		if x := sp.exit[k]; x >= g.Lo && x < g.Hi {
			seeds = append(seeds, x)
		}
		if err := sp.search(seeds); err != nil {
			return err
		}
	}
	return nil
}

// roundBudget is how many vertices search takes from its stack in one
// round before it exchanges what it has. Without a budget, the ranks
// fall into step: the splits' exits (but the last one's) are hubs, and
// the hubs are the last rank's vertices, so every split's work starts
// there and then crosses between the ranks in the same rounds, and each
// rank waits through the rounds in which the other works (on the 16
// M-call halo log at 2 ranks, about 105 ms of work and 105 ms of waiting
// a round, alternately). A rank that ships part of its work early lets
// the other start on it while it goes on with the rest.
func (sp *splitter) roundBudget() int {
	if sp.c.Size() == 1 {
		return math.MaxInt // nobody to share the work with
	}
	// Between 1/32 and 1/1024 of the owned vertices a round gave the same
	// times there (5.5-5.9 s for the whole analysis, against 6.4 s
	// without a budget); 1/8 was too coarse to fall out of step.
	return max(splitRoundMin, int(sp.g.Hi-sp.g.Lo)/64)
}

// splitRoundMin is the least budget of a round (a variable so that the
// tests can cut small graphs' work into many rounds).
var splitRoundMin = 1 << 14

// search solves the splits of seeds (owned exits, L = 0) in two passes
// over their ancestors, each relaxing every edge into an ancestor once:
//
//  1. Ancestors: a search backwards from the seeds marks the vertices that
//     reach them and counts, for each, its out-edges into ancestors (inside
//     its split): pending[u] is that count, -1 for a vertex not (yet)
//     found.
//  2. Sweep: a vertex is processed once no out-edge is pending, when its
//     Dist is final (a topological order, as DAG's, distributed): it
//     relaxes its in-edges, each offer counting one pending edge of its
//     source down, locally or batched for the source's owner.
//
// A rank takes at most roundBudget vertices a round. Both passes end
// when a round ships nothing and no rank held work back. The work is
// bounded: two relaxations per edge into an ancestor (a label-correcting
// search, in any order, processes a vertex again each time a later offer
// improves it, which on graphs with many in-edges per vertex crossing
// ranks grows with the size of the splits). The rounds are the number of
// times the longest chain of dependencies crosses between ranks, or more
// where a rank's work exceeds its budget. A vertex left with
// pending edges after the sweep is on or before a cycle.
func (sp *splitter) search(seeds []int32) error {
	s, g := sp.ds, sp.g
	lo := s.lo
	pending := sp.pending
	inStart, inSrc, inWeight := g.InStart, g.InSrc, g.InWeight
	// Pass 1.
	var stack []int32
	found, processed := 0, 0 // ancestors: found in pass 1, processed in pass 2
	for _, x := range seeds {
		pending[x-lo] = 0
		stack = append(stack, x)
	}
	mark := func(u int32) {
		i := u - lo
		if pending[i] < 0 {
			pending[i] = 0
			stack = append(stack, u)
		}
		pending[i]++
	}
	budget := sp.roundBudget()
	for {
		for n := 0; n < budget && len(stack) > 0 && s.cycleAt < 0; n++ {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			found++
			i := v - lo
			s.st.Pops++
			k := sp.split[i]
			a, b := inStart[i], inStart[i+1]
			s.st.Relaxations += int64(b - a)
			for j := a; j < b; j++ {
				u := inSrc[j]
				if k > 0 && u == sp.exit[k-1] {
					continue // a cross edge: the exit has its own pass
				}
				if u == sp.exit[k] {
					// v reaches the exit of its split and the exit
					// leads to v.
					if s.cycleAt < 0 || u < s.cycleAt {
						s.cycleAt = u
					}
					break
				}
				if s.owns(u) {
					mark(u)
				} else {
					s.send(u, 0, v, 0)
				}
			}
			s.st.MaxQueue = max(s.st.MaxQueue, len(stack))
		}
		s.holding = len(stack) > 0 && s.cycleAt < 0
		hd, err := s.exchange(distNoTop)
		if err != nil {
			return err
		}
		if !hd.sent && !hd.held {
			break
		}
		for _, m := range s.in {
			mark(m.U)
		}
	}
	// Pass 2.
	dist := s.dist
	ready := stack[:0]
	for _, x := range seeds {
		dist[x-lo] = 0
		if pending[x-lo] == 0 {
			ready = append(ready, x)
		}
	}
	done := func(u int32) {
		if pending[u-lo]--; pending[u-lo] == 0 {
			ready = append(ready, u)
		}
	}
	for {
		for n := 0; n < budget && len(ready) > 0; n++ {
			v := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			i := v - lo
			pending[i] = -2 // processed
			processed++
			d := dist[i]
			s.st.Pops++
			k := sp.split[i]
			a, b := inStart[i], inStart[i+1]
			s.st.Relaxations += int64(b - a)
			for j := a; j < b; j++ {
				u := inSrc[j]
				c := d + inWeight.At(j)
				switch {
				case k > 0 && u == sp.exit[k-1]:
					if s.owns(u) {
						sp.offer(k-1, c, v)
					} else {
						s.send(u, c, v, 0)
					}
				case !s.owns(u):
					s.send(u, c, v, 0)
				default:
					s.relax(u, c, v, 0)
					done(u)
				}
			}
			s.st.MaxQueue = max(s.st.MaxQueue, len(ready))
		}
		s.holding = len(ready) > 0
		hd, err := s.exchange(distNoTop)
		if err != nil {
			return err
		}
		if !hd.sent && !hd.held {
			break
		}
		for _, m := range s.in {
			if k, ok := sp.isExit(m.U); ok {
				sp.offer(k, m.C, m.V) // the senders sent no other offers to an exit
				continue
			}
			s.relax(m.U, m.C, m.V, 0)
			done(m.U)
		}
	}
	// Every ancestor must have been processed; one that was not waits,
	// directly or not, on itself. Such a vertex still counts pending
	// edges (an earlier search's, in seqSplits, would have failed it), and
	// the lowest is named.
	stuck := NoVertex
	if processed != found {
		for i, p := range pending {
			if p >= 0 {
				stuck = lo + int32(i)
				break
			}
		}
	}
	x, err := mpix.AllreduceOne(sp.c, int64(stuck), mpix.Max)
	if err != nil {
		return err
	}
	if x >= 0 {
		return fmt.Errorf("cpath: the graph has a cycle: vertex %d waits on itself", x)
	}
	return nil
}

// stitch adds each split's offset to the Dists of its vertices and gives
// the exits their Succ from the cross edges, so that ds holds the global
// Dist and Succ.
func (sp *splitter) stitch() error {
	s, lo := sp.ds, sp.g.Lo
	D := slices.Clone(sp.bdist)
	if err := sp.c.Allreduce(D, mpix.Max); err != nil {
		return err
	}
	off := make([]int64, sp.k)
	for k := sp.k - 2; k >= 0; k-- {
		off[k] = Unreached
		if D[k] != Unreached && off[k+1] != Unreached {
			off[k] = D[k] + off[k+1]
		}
	}
	for i, d := range s.dist {
		if d == Unreached {
			continue
		}
		v := lo + int32(i)
		k, isExit := sp.isExit(v)
		switch {
		case off[k] == Unreached:
			s.dist[i], s.succ[i] = Unreached, NoVertex
		case isExit:
			s.dist[i], s.succ[i] = off[k], sp.bsucc[k]
		default:
			s.dist[i] = d + off[k]
		}
	}
	return nil
}

// shipVertex is an owned vertex shipped to the rank that solves its split,
// with its in-degree; its in-edges follow as shipEdges.
type shipVertex struct{ V, K, Deg, _ int32 }

type shipEdge struct {
	U int32
	_ int32
	W int64
}

// solved is a vertex's L and Succ sent back to its owner; Boundary: the
// D_k and the Succ of exit V from the cross edges instead.
type solved struct {
	V, Succ  int32
	Dist     int64
	Boundary int32
	_        int32
}

// sequential solves each split with DAG on one rank (seq-par, seq-seq): the
// split's vertices and in-edges are shipped to that rank, which solves it
// and sends each reached vertex's L and Succ back to its owner. With
// seqSplits rank 0 takes the splits one at a time from the last, each with
// Gatherv; otherwise the splits are spread over the ranks in blocks of
// about equal numbers of vertices and shipped in one exchange.
func (sp *splitter) sequential(seqSplits bool) error {
	solver := make([]int, sp.k)
	if !seqSplits && sp.c.Size() > 1 {
		if err := sp.spreadSolvers(solver); err != nil {
			return err
		}
	}
	pk := sp.newSplitPacker(solver)
	results, err := sp.solveSplits(pk, seqSplits)
	if err != nil {
		return err
	}
	return sp.returnResults(results)
}

// spreadSolvers gives the splits to the ranks in blocks of about equal
// numbers of vertices: solver[k] is split k's.
func (sp *splitter) spreadSolvers(solver []int) error {
	size := sp.c.Size()
	counts := make([]int64, sp.k)
	for _, k := range sp.split {
		counts[k]++
	}
	if err := sp.c.Allreduce(counts, mpix.Sum); err != nil {
		return err
	}
	total := int64(0)
	for _, n := range counts {
		total += n
	}
	acc := int64(0)
	for k, n := range counts {
		solver[k] = int(min(int64(size-1), (acc+n/2)*int64(size)/max(total, 1)))
		acc += n
	}
	return nil
}

// splitPacker encodes splits for their solvers.
type splitPacker struct {
	sp      *splitter
	solver  []int   // by split, the rank that solves it
	first   []int32 // split k's owned vertices are bySplit[first[k]:first[k+1]]
	bySplit []int32 // the owned vertices by split
}

// newSplitPacker sorts the owned vertices by split (a stable counting
// sort), so that shipping one split costs its vertices, not all of them.
func (sp *splitter) newSplitPacker(solver []int) *splitPacker {
	pk := &splitPacker{sp: sp, solver: solver, first: make([]int32, sp.k+1), bySplit: make([]int32, len(sp.split))}
	for _, k := range sp.split {
		pk.first[k+1]++
	}
	for k := 1; k <= sp.k; k++ {
		pk.first[k] += pk.first[k-1]
	}
	fill := slices.Clone(pk.first[:sp.k])
	for l, k := range sp.split {
		pk.bySplit[fill[k]] = int32(l)
		fill[k]++
	}
	return pk
}

// pack encodes the splits [k0, k1) for their solvers, each solver's
// vertices (and edges) one after another in one array, nv[q] (ne[q]) of
// them for solver q. Counted first and allocated once: grown by append,
// the 16 M-call log's edges took 11 s of copies, most of it the collector
// waiting for the copies to end (seq-par).
func (pk *splitPacker) pack(k0, k1 int) (vs []shipVertex, es []shipEdge, nv, ne []int) {
	sp, g := pk.sp, pk.sp.g
	size := sp.c.Size()
	nv, ne = make([]int, size), make([]int, size)
	owned := pk.bySplit[pk.first[k0]:pk.first[k1]]
	for _, l := range owned {
		q := pk.solver[sp.split[l]]
		nv[q]++
		ne[q] += int(g.InStart[l+1] - g.InStart[l])
	}
	atV, atE := make([]int, size), make([]int, size)
	for q := 1; q < size; q++ {
		atV[q], atE[q] = atV[q-1]+nv[q-1], atE[q-1]+ne[q-1]
	}
	vs, es = make([]shipVertex, atV[size-1]+nv[size-1]), make([]shipEdge, atE[size-1]+ne[size-1])
	for _, l := range owned {
		k := sp.split[l]
		q := pk.solver[k]
		a, b := g.InStart[l], g.InStart[l+1]
		vs[atV[q]] = shipVertex{V: l + g.Lo, K: k, Deg: b - a}
		atV[q]++
		for j := a; j < b; j++ {
			es[atE[q]] = shipEdge{U: g.InSrc[j], W: g.InWeight.At(j)}
			atE[q]++
		}
	}
	return vs, es, nv, ne
}

// solveSplits ships the splits to their solvers and solves those that
// come here. What this rank solved, for the owners: at most a result a
// vertex it solves and one a split (its boundary), made room for once
// before the solves (grown by append, the 16 M-call log's results were
// copies of up to 770 MB that kept the collector waiting).
func (sp *splitter) solveSplits(pk *splitPacker, seqSplits bool) ([]solved, error) {
	c := sp.c
	var results []solved
	var serr error // the first failure of this rank's solves
	solve := func(vs []shipVertex, es []shipEdge) {
		if serr == nil {
			results, serr = sp.solveShipped(vs, es, results)
		}
	}
	if !seqSplits {
		vs, es, nv, ne := pk.pack(0, sp.k)
		allV, _, err := mpix.ShipFlat(c, vs, nv)
		if err != nil {
			return nil, err
		}
		allE, _, err := mpix.ShipFlat(c, es, ne)
		if err != nil {
			return nil, err
		}
		results = make([]solved, 0, len(allV)+sp.k)
		solve(allV, allE)
		return results, mpix.Agree(c, serr)
	}
	if c.Rank() == 0 { // the solver of every split
		results = make([]solved, 0, sp.g.N+sp.k)
	}
	for k := sp.k - 1; k >= 0; k-- {
		vs, es, _, _ := pk.pack(k, k+1) // every split's solver is rank 0
		gotV, _, err := mpix.GatherWhole(c, mpix.Bytes(vs))
		if err != nil {
			return nil, err
		}
		gotE, _, err := mpix.GatherWhole(c, mpix.Bytes(es))
		if err != nil {
			return nil, err
		}
		if c.Rank() == 0 && serr == nil {
			allV, err := mpix.FromBytes[shipVertex](gotV)
			if err != nil {
				return nil, err
			}
			allE, err := mpix.FromBytes[shipEdge](gotE)
			if err != nil {
				return nil, err
			}
			solve(allV, allE)
		}
	}
	return results, mpix.Agree(c, serr)
}

// returnResults sends the solvers' results to the owners of their
// vertices, in one array by owner (results itself where they come so
// already: one rank), and keeps those that come here.
func (sp *splitter) returnResults(results []solved) error {
	c, g := sp.c, sp.g
	size := c.Size()
	nout := make([]int, size)
	inOrder, last := true, 0
	for i := range results {
		q := g.Owner(results[i].V)
		nout[q]++
		inOrder, last = inOrder && q >= last, q
	}
	out := results
	if !inOrder {
		at := make([]int, size)
		for q := 1; q < size; q++ {
			at[q] = at[q-1] + nout[q-1]
		}
		out = make([]solved, len(results))
		for i := range results {
			q := g.Owner(results[i].V)
			out[at[q]] = results[i]
			at[q]++
		}
	}
	rs, _, err := mpix.ShipFlat(c, out, nout)
	if err != nil {
		return err
	}
	s := sp.ds
	for _, r := range rs {
		if !s.owns(r.V) {
			return errors.New("cpath: split: a rank sent a result for a vertex this one does not own")
		}
		if r.Boundary != 0 {
			k, ok := sp.isExit(r.V)
			if !ok {
				return errors.New("cpath: split: a rank sent a boundary result for a vertex that is no exit")
			}
			sp.bdist[k], sp.bsucc[k] = r.Dist, r.Succ
			continue
		}
		s.dist[r.V-s.lo], s.succ[r.V-s.lo] = r.Dist, r.Succ
	}
	return nil
}

// solveShipped solves each split among the shipped vertices (grouped by
// split, ascending ids within each: the order they were packed and
// concatenated in, rank by rank) with DAG, and appends the results.
func (sp *splitter) solveShipped(vs []shipVertex, es []shipEdge, results []solved) ([]solved, error) {
	estart := make([]int32, len(vs)+1)
	for i, x := range vs {
		estart[i+1] = estart[i] + x.Deg
	}
	if int(estart[len(vs)]) != len(es) {
		return results, errors.New("cpath: split: the shipped vertices and edges do not match")
	}
	// Group the vertices by split, stably: ascending ids within each.
	idx := make([]int32, len(vs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return int(vs[a].K) - int(vs[b].K) })
	var solver Solver
	for a := 0; a < len(idx); {
		k := vs[idx[a]].K
		b := a
		for b < len(idx) && vs[idx[b]].K == k {
			b++
		}
		var err error
		if results, err = sp.solveOne(k, vs, es, estart, idx[a:b], &solver, results); err != nil {
			return results, err
		}
		a = b
	}
	return results, nil
}

// solveOne solves split k, whose vertices are vs[ids] (ascending ids), as
// a Graph: local ids in the order of the global ones (so that the
// tie-break is the same), plus, for k > 0, the previous split's exit as
// one more vertex, the source of the cross edges.
func (sp *splitter) solveOne(k int32, vs []shipVertex, es []shipEdge, estart, ids []int32, solver *Solver, results []solved) ([]solved, error) {
	n := len(ids)
	verts := make([]int32, n)
	for i, x := range ids {
		verts[i] = vs[x].V
	}
	local := func(u int32) int32 {
		j := sort.Search(n, func(j int) bool { return verts[j] >= u })
		if j < n && verts[j] == u {
			return int32(j)
		}
		return -1
	}
	nl := n
	boundary := NoVertex
	if k > 0 {
		boundary = sp.exit[k-1]
		nl++
	}
	g := &Graph{N: nl, InStart: make([]int32, nl+1)}
	for i, x := range ids {
		for j := estart[x]; j < estart[x+1]; j++ {
			e := es[j]
			u := local(e.U)
			if u < 0 {
				if e.U != boundary {
					return results, crossError(e.U, verts[i], -1, k)
				}
				u = int32(n)
			}
			g.InSrc = append(g.InSrc, u)
			g.InWeight.Append(e.W)
		}
		g.InStart[i+1] = int32(len(g.InSrc))
	}
	g.InStart[nl] = int32(len(g.InSrc))
	target := local(sp.exit[k])
	if target < 0 {
		return results, fmt.Errorf("cpath: split: the exit of split %d, vertex %d, was not shipped with it", k, sp.exit[k])
	}
	r, err := solver.DAG(g, target)
	if err != nil {
		// DAG names a local vertex: name the split instead.
		return results, fmt.Errorf("cpath: the graph has a cycle in split %d (%v)", k, err)
	}
	st := &sp.ds.st
	st.Relaxations += r.Stats.Relaxations
	st.Pops += r.Stats.Pops
	st.Updates += r.Stats.Updates
	for i := 0; i < n; i++ {
		if r.Dist[i] == Unreached {
			continue
		}
		succ := NoVertex
		if s := r.Succ[i]; s >= 0 {
			succ = verts[s]
		}
		results = append(results, solved{V: verts[i], Succ: succ, Dist: r.Dist[i]})
	}
	if k > 0 && r.Dist[n] != Unreached {
		results = append(results, solved{V: boundary, Succ: verts[r.Succ[n]], Dist: r.Dist[n], Boundary: 1})
	}
	return results, nil
}
