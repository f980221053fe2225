package cpath

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/cpath/cpath/internal/mpix"
)

// This file holds what ParallelDijkstra and ParallelDeltaStepping share:
// the entry check every rank agrees on, the per-rank search state with its
// batched cross-rank relaxations, and the extraction of the canonical path.

// distMsg is one cross-rank relaxation: the edge U->V (U owned by the
// receiver) offers Dist[U] = C through a walk of H edges. Slot 0 of every
// part of an exchange is a header instead (see exchange).
type distMsg struct {
	C int64
	U int32
	V int32
	H int32
	_ int32
}

// distNoTop is a header's top when the sender has nothing pending.
const distNoTop = math.MinInt64

// distSearch is one rank's state in a distributed label-correcting search.
type distSearch struct {
	c          mpix.Comm
	g          *DistGraph
	rank, size int
	lo, hi     int32 // owned range
	n          int32 // vertices in the whole graph: a walk of n edges repeats a vertex
	dist       []int64
	succ       []int32
	out        [][]distMsg // per destination rank; [0] is the header
	in         []distMsg   // received relaxations of the last exchange
	cycleAt    int32       // a vertex reached by a walk of n edges, or -1
	// workCap bounds the queue of a label-correcting search (the
	// distance-ordered ones), where a vertex is queued again each time its
	// distance grows: on real logs the queue's stale entries can outgrow
	// any machine. 0: no bound. overWork: this rank's queue reached it, and
	// it stopped updating; the next exchange ends the search on every rank
	// with workError.
	workCap  int64
	overWork bool
	hdrSlots int     // header slots at the start of every part: 1, or 2 for the time-ordered searches
	hdrID    int32   // the time-ordered searches: the vertex at this rank's top, for the header
	hdrAux   []int64 // the time-ordered searches: a value for each destination's header
	holding  bool    // this rank held work back for a later round: the next exchange says so
	st       DistStats
	reached  int64
	bytes0   int64
	// onPath, if set, stands for dist in finish: the vertices on some
	// longest path to the target (DistDAG's), all at pathDist.
	onPath   *edgeSet
	pathDist int64
}

// reachedAt is owned vertex i's Dist and whether it reaches the target.
func (s *distSearch) reachedAt(i int) (int64, bool) {
	if s.onPath != nil {
		return s.pathDist, s.onPath.has(int32(i))
	}
	d := s.dist[i]
	return d, d != Unreached
}

// nextReached is the first owned vertex after i (-1: from the start)
// that reaches the target, or -1 past the last: over marked vertices
// (onPath) a word of 64 at a time, since the path's are few.
func (s *distSearch) nextReached(i int) int {
	nv := int(s.hi - s.lo)
	i++
	if s.onPath == nil {
		for ; i < nv; i++ {
			if s.dist[i] != Unreached {
				return i
			}
		}
		return -1
	}
	words := s.onPath.words
	for w := i >> 6; w < len(words); w++ {
		x := words[w]
		if w == i>>6 {
			x &^= 1<<(uint(i)&63) - 1
		}
		if x != 0 {
			if j := w<<6 + bits.TrailingZeros64(x); j < nv {
				return j
			}
			return -1
		}
	}
	return -1
}

// checkLocal checks this rank's share in O(its vertices and edges): the
// algorithms index by what the graph says, so a malformed share would
// panic on one rank and leave the others waiting in a collective.
func (g *DistGraph) checkLocal(rank, size int) error {
	if g == nil {
		return errors.New("cpath: nil graph")
	}
	if g.N < 0 || g.N > math.MaxInt32 {
		return fmt.Errorf("cpath: graph has N=%d", g.N)
	}
	if len(g.Bounds) != size+1 {
		return fmt.Errorf("cpath: %d vertex ranges for %d ranks", len(g.Bounds)-1, size)
	}
	if g.Bounds[0] != 0 || int(g.Bounds[size]) != g.N {
		return fmt.Errorf("cpath: vertex ranges span [%d,%d), want [0,%d)", g.Bounds[0], g.Bounds[size], g.N)
	}
	for p := 0; p < size; p++ {
		if g.Bounds[p+1] < g.Bounds[p] {
			return fmt.Errorf("cpath: vertex range bounds decrease at rank %d", p)
		}
	}
	if g.Lo != g.Bounds[rank] || g.Hi != g.Bounds[rank+1] {
		return fmt.Errorf("cpath: rank %d holds [%d,%d) but the bounds give it [%d,%d)", rank, g.Lo, g.Hi, g.Bounds[rank], g.Bounds[rank+1])
	}
	nv := int(g.Hi - g.Lo)
	if len(g.InStart) != nv+1 {
		return fmt.Errorf("cpath: %d row starts for %d vertices", len(g.InStart), nv)
	}
	if err := checkRows(g.InStart, g.InSrc, &g.InWeight, int(g.Lo), g.N); err != nil {
		return err
	}
	if g.Target < 0 || int(g.Target) >= g.N {
		return fmt.Errorf("cpath: target %d out of range [0,%d)", g.Target, g.N)
	}
	return nil
}

// checkDist is the entry check of the distributed algorithms: each rank
// checks its share, then one Allreduce tells all of them whether any share
// is malformed and whether they agree on N, the target, the vertex ranges
// and delta. Either every rank goes on or every rank returns an error.
func checkDist(c mpix.Comm, g *DistGraph, delta int64) error {
	_, err := checkDistTimed(c, g, delta, false)
	return err
}

// checkDistTimed is checkDist that, if useTime, also checks the vertex
// times and tells whether the search can use them: every rank that owns
// vertices has len(Time) = Hi-Lo (a rank without vertices may have none).
// Ranks some of which have times and some not fail together.
func checkDistTimed(c mpix.Comm, g *DistGraph, delta int64, useTime bool) (bool, error) {
	if c == nil {
		return false, errors.New("cpath: nil communicator")
	}
	rank, size := c.Rank(), c.Size()
	err := g.checkLocal(rank, size)
	if err == nil && useTime && g.Time != nil && len(g.Time) != int(g.Hi-g.Lo) {
		err = fmt.Errorf("cpath: rank %d has %d vertex times for %d vertices", rank, len(g.Time), g.Hi-g.Lo)
	}
	x := make([]int64, 11)
	if err != nil {
		x[0] = 1
	} else {
		if useTime && g.Hi > g.Lo {
			if g.Time != nil {
				x[9] = 1
			} else {
				x[10] = 1
			}
		}
		h := uint64(14695981039346656037)
		for _, b := range g.Bounds {
			h = (h ^ uint64(uint32(b))) * 1099511628211
		}
		bh := int64(h >> 2) // leaves room for its negation
		x[1], x[2] = int64(g.N), -int64(g.N)
		x[3], x[4] = int64(g.Target), -int64(g.Target)
		x[5], x[6] = delta, -delta
		x[7], x[8] = bh, -bh
	}
	if err := c.Allreduce(x, mpix.Max); err != nil {
		return false, err
	}
	if x[0] != 0 {
		msg := []byte(nil)
		if err != nil {
			msg = []byte(err.Error())
		}
		all, cerr := c.Allgatherv(msg)
		if cerr != nil {
			return false, cerr
		}
		for p, m := range all {
			if len(m) > 0 {
				return false, fmt.Errorf("%s (rank %d)", m, p)
			}
		}
		return false, errors.New("cpath: a rank's graph is malformed")
	}
	var what []string
	if x[1] != -x[2] {
		what = append(what, "N")
	}
	if x[3] != -x[4] {
		what = append(what, "the target")
	}
	if x[5] != -x[6] {
		what = append(what, "delta")
	}
	if x[7] != -x[8] {
		what = append(what, "the vertex ranges")
	}
	if x[9] != 0 && x[10] != 0 {
		what = append(what, "whether the vertices have times")
	}
	if len(what) > 0 {
		return false, fmt.Errorf("cpath: the ranks disagree on %s", strings.Join(what, ", "))
	}
	return x[9] != 0, nil
}

func newDistSearch(c mpix.Comm, g *DistGraph) *distSearch {
	return newDistSearchSlots(c, g, 1)
}

// newDistSearchSlots is newDistSearch with hs header slots per part.
func newDistSearchSlots(c mpix.Comm, g *DistGraph, hs int) *distSearch {
	s := &distSearch{c: c, g: g, rank: c.Rank(), size: c.Size(), lo: g.Lo, hi: g.Hi, n: int32(g.N), cycleAt: -1, hdrSlots: hs}
	s.bytes0, _ = c.Stats()
	nv := int(g.Hi - g.Lo)
	s.dist = make([]int64, nv)
	s.succ = make([]int32, nv)
	for i := range s.dist {
		s.dist[i], s.succ[i] = Unreached, NoVertex
	}
	s.out = make([][]distMsg, s.size)
	for p := range s.out {
		s.out[p] = make([]distMsg, hs, 16)
	}
	s.hdrAux = make([]int64, s.size)
	return s
}

// owns reports whether v is in this rank's range.
func (s *distSearch) owns(v int32) bool { return uint32(v-s.lo) < uint32(s.hi-s.lo) }

// found records that a walk of h edges gives some vertex a larger Dist: on
// a DAG every walk is a path, of fewer than n edges, so h >= n proves a
// cycle among the ancestors of the target. This is what bounds the work on
// a graph with a positive cycle, where Dist would grow forever; zero-weight
// cycles end by themselves and show up as Succ loops in the path.
func (s *distSearch) found(u int32, h int32) bool {
	if s.overWork || s.workCap > 0 && s.st.Updates >= maxUpdates {
		s.overWork = true
		return false
	}
	if h >= s.n {
		if s.cycleAt < 0 || u < s.cycleAt {
			s.cycleAt = u
		}
		return false
	}
	return true
}

// send batches the relaxation of the cross-rank edge u->v for u's owner.
func (s *distSearch) send(u int32, c int64, v int32, h int32) {
	p := s.g.Owner(u)
	s.out[p] = append(s.out[p], distMsg{C: c, U: u, V: v, H: h})
}

// distHeader is what every rank learns of every other in each exchange.
type distHeader struct {
	sent bool  // some rank shipped relaxations
	held bool  // some rank held work back for a later round (distSearch.holding)
	top  int64 // the largest top any rank reported (distNoTop if none)
	// With a two-slot header (the time-ordered searches), by sender rank:
	tops   []int64 // its top (distNoTop if none)
	topIDs []int32 // the vertex at its top
	aux    []int64 // what it sent this rank in hdrAux
}

// queued reports whether any rank has a vertex queued, from a two-slot
// header (the top's vertex; the top's time may be anything).
func (hd distHeader) queued() bool {
	for _, id := range hd.topIDs {
		if id >= 0 {
			return true
		}
	}
	return false
}

// distChunkBytes caps the bytes one rank ships in one collective call of
// an exchange, all destinations together, well under MPI's 2 GiB limit
// (counts are C ints): a larger exchange goes in several calls. A
// variable so that the tests can make it small.
var distChunkBytes = 1 << 30

// exchange ships the batched relaxations and leaves the received ones in
// s.in. Every part starts with a header (one slot, two in the time-ordered
// searches) carrying whether the sender shipped anything, its top (the
// Δ-stepping bucket vote, the time-ordered searches' frontier) and its
// cycle finding: so the exchange itself tells every rank whether the
// round was the last and whether to give up, and no other collective is
// needed per round. It is one Alltoallv unless a rank has more than
// distChunkBytes to ship: then the relaxations go in chunks, one
// Alltoallv each, whose headers say whether more is coming (every rank
// sees every header, so all make the same number of calls), rather than
// one call failing over MPI's limit. A cycle any rank found is the error
// on every rank.
func (s *distSearch) exchange(top int64) (distHeader, error) {
	const sz = int(unsafe.Sizeof(distMsg{}))
	hs := s.hdrSlots
	sent := false
	for p := range s.out {
		if p != s.rank && len(s.out[p]) > hs {
			sent = true
		}
	}
	limit := max(1, distChunkBytes/sz/s.size-hs) // relaxations per part per call
	res := distHeader{top: distNoTop}
	cycle := int32(-1) // the smallest vertex any rank found on a walk of n edges
	overWork := false  // a rank reached its workCap
	if hs > 1 {
		res.tops, res.topIDs, res.aux = make([]int64, s.size), make([]int32, s.size), make([]int64, s.size)
	}
	s.in = s.in[:0]
	parts := make([][]byte, s.size)
	var h [2]distMsg
	s.st.Rounds++
	for off := 0; ; off += limit {
		more := false
		for p := range s.out {
			k := max(0, min(limit, len(s.out[p])-hs-off))
			if len(s.out[p])-hs-off > k {
				more = true
			}
		}
		flags := int32(0)
		if sent {
			flags |= 1
		}
		if more {
			flags |= 2
		}
		if s.holding {
			flags |= 4
		}
		if s.overWork {
			flags |= 8
		}
		for p := range s.out {
			k := max(0, min(limit, len(s.out[p])-hs-off))
			start := min(off, len(s.out[p])-hs) // the chunk's header slots: already shipped relaxations
			part := s.out[p][start : start+hs+k]
			part[0] = distMsg{C: top, U: flags, V: s.cycleAt, H: s.hdrID}
			if hs > 1 {
				part[1] = distMsg{C: s.hdrAux[p]}
			}
			parts[p] = mpix.Bytes(part)
		}
		recv, err := s.c.Alltoallv(parts)
		if err != nil {
			return distHeader{}, err
		}
		again := false
		for p, b := range recv {
			if len(b) < hs*sz || len(b)%sz != 0 {
				return distHeader{}, fmt.Errorf("cpath: rank %d shipped %d bytes, not whole relaxations", p, len(b))
			}
			// Copy now: the send buffers are reused, and with one rank the
			// received part is the sent one.
			copy(mpix.Bytes(h[:hs]), b[:hs*sz])
			k := len(b)/sz - hs
			i0 := len(s.in)
			s.in = slices.Grow(s.in, k)[:i0+k]
			copy(mpix.Bytes(s.in[i0:]), b[hs*sz:])
			res.sent = res.sent || h[0].U&1 != 0
			again = again || h[0].U&2 != 0
			res.held = res.held || h[0].U&4 != 0
			overWork = overWork || h[0].U&8 != 0
			res.top = max(res.top, h[0].C)
			if v := h[0].V; v >= 0 && (cycle < 0 || v < cycle) {
				cycle = v
			}
			if hs > 1 {
				res.tops[p], res.topIDs[p], res.aux[p] = h[0].C, h[0].H, h[1].C
			}
		}
		if !again {
			break
		}
	}
	for p := range s.out {
		s.out[p] = s.out[p][:hs]
	}
	if cycle >= 0 {
		return res, distCycleError(cycle)
	}
	if overWork {
		return res, workError
	}
	return res, nil
}

// workCapPerVertex is how many entries the queue of a label-correcting
// search may hold per vertex of a rank's part (and at least minWorkCap,
// at most maxWorkCap: 16 bytes each) before it stops with workError. On
// the test graphs it holds up to 150 per vertex of a few thousand.
const maxWorkCap = 1 << 27

// maxUpdates bounds the distance updates of a label-correcting search on
// a rank: its time where the queue stays short (Dijkstra's, on the
// 198 k-call LAMMPS log, ran for over 5 minutes). On the test graphs
// they make up to 35 M.
const maxUpdates = 1 << 30

// The bound's terms are variables for the tests, which bound small
// graphs.
var (
	workCapPerVertex int64 = 64
	minWorkCap       int64 = 1 << 22
)

// boundWork sets s.workCap for a label-correcting search over the part's
// vertices.
func (s *distSearch) boundWork() {
	s.workCap = min(maxWorkCap, max(minWorkCap, workCapPerVertex*int64(s.hi-s.lo)))
}

// queued notes that the search's queue holds n entries: at its bound, the
// search stops updating (found) and ends at the next exchange, as it does
// after maxUpdates.
func (s *distSearch) queued(n int) {
	if s.workCap > 0 && int64(n) >= s.workCap {
		s.overWork = true
	}
}

// workError ends a label-correcting search that reached its bounds.
var workError = fmt.Errorf("cpath: --order distance: the search by distance label gave up on a rank whose queue of tentative distances "+
	"outgrew %d entries per vertex, or which made %d distance updates (a vertex is queued again each time its distance grows, and "+
	"on this graph that would not end soon); --order time, the default, finds the same path with about one relaxation per edge",
	workCapPerVertex, maxUpdates)

// relax offers Dist[u] = c via v to an owned u, with the sequential
// algorithms' tie-break; it reports whether Dist[u] increased (so that u
// must be processed again).
func (s *distSearch) relax(u int32, c int64, v int32, h int32) bool {
	i := u - s.lo
	if c > s.dist[i] {
		if !s.found(u, h) {
			return false
		}
		s.dist[i], s.succ[i] = c, v
		s.st.Updates++
		return true
	} else if c == s.dist[i] && v < s.succ[i] {
		s.succ[i] = v
	}
	return false
}

func distCycleError(v int32) error {
	return fmt.Errorf("cpath: the graph has a cycle: a walk of more edges than vertices reaches vertex %d", v)
}

// finish extracts the canonical path and sums the statistics: it ends
// every distributed exact algorithm. Rather than gathering every reached
// vertex on rank 0 (the paper's hash table), it ships only what the path
// needs, in three exchanges whatever the path's length or the number of
// times it crosses ranks:
//
//  1. Each rank walks Succ locally from each candidate entry point, a
//     reached vertex with an incoming edge from another rank (the only
//     places where the path can enter the rank) or its best source, to
//     where Succ leaves the rank, and ships rank 0 the pairs (entry, next
//     vertex off the rank) and its best source: 8 bytes per entry point.
//  2. Rank 0 picks the canonical source, chains the pairs into the path's
//     entry points and tells each rank its own, with a status that makes
//     all ranks fail together if the chain is broken or loops.
//  3. Each rank ships the vertices of its segments; rank 0 joins them.
func (s *distSearch) finish() (*DistResult, error) {
	g := s.g
	nv := int(s.hi - s.lo)
	// Step 1.
	bestSrc, bestDist := NoVertex, Unreached
	for i := s.nextReached(-1); i >= 0; i = s.nextReached(i) {
		d, _ := s.reachedAt(i)
		s.reached++
		if g.InStart[i] == g.InStart[i+1] && (bestSrc == NoVertex || d > bestDist) {
			bestSrc, bestDist = s.lo+int32(i), d
		}
	}
	// Each walk from an entry point stops where Succ leaves the rank, at
	// the target, or at a vertex an earlier walk visited, whose end it
	// shares: every owned vertex is walked at most once. walkOf holds the
	// walk (from 1) that visited each vertex, allocated on first use.
	var walkOf []int32
	walkEnd := []int32{0}
	var pairs []int32 // entry, next
	localCycle, broken := int32(-1), int32(-1)
	exitOf := func(x int32) int32 {
		if walkOf == nil {
			walkOf = make([]int32, nv)
		}
		id := int32(len(walkEnd))
		var res int32
		for v := x; ; {
			i := v - s.lo
			if w := walkOf[i]; w == id { // a Succ loop: a zero-weight cycle
				localCycle, res = v, toTarget
				break
			} else if w != 0 {
				res = walkEnd[w]
				break
			}
			walkOf[i] = id
			w := s.succ[i]
			if v == g.Target {
				res = toTarget
				break
			}
			if w == NoVertex {
				broken, res = v, toTarget
				break
			}
			if !s.owns(w) {
				res = w
				break
			}
			v = w
		}
		walkEnd = append(walkEnd, res)
		return res
	}
	for i := s.nextReached(-1); i >= 0; i = s.nextReached(i) {
		v := s.lo + int32(i)
		entry := v == bestSrc
		if !entry {
			for j := g.InStart[i]; j < g.InStart[i+1]; j++ {
				if !s.owns(g.InSrc[j]) {
					entry = true
					break
				}
			}
		}
		if entry {
			pairs = append(pairs, v, exitOf(v))
		}
	}
	e := mpix.NewEncoder(nil)
	mpix.PutRecord(e, finishEntries{BestDist: bestDist, BestSrc: bestSrc, Cycle: localCycle, Broken: broken})
	mpix.PutRecords(e, pairs)
	parts := make([][]byte, s.size)
	parts[0] = e.Bytes()
	recv, err := s.c.Alltoallv(parts)
	if err != nil {
		return nil, err
	}
	// Step 2.
	var owners []int // rank 0: the owner of each entry point, in path order
	clear(parts)
	if s.rank == 0 {
		var verdict finishVerdict
		var entries []int32
		verdict, entries, owners = s.chain(recv)
		theirs := make([][]int32, s.size)
		for i, x := range entries {
			theirs[owners[i]] = append(theirs[owners[i]], x)
		}
		for p := range parts {
			e := mpix.NewEncoder(nil)
			mpix.PutRecord(e, verdict)
			mpix.PutRecords(e, theirs[p])
			parts[p] = e.Bytes()
		}
	}
	recv, err = s.c.Alltoallv(parts)
	if err != nil {
		return nil, err
	}
	d := mpix.NewDecoder(recv[0])
	v := mpix.ReadRecord[finishVerdict](d)
	entries := mpix.ReadRecords[int32](d)
	if d.Done() != nil {
		v = finishVerdict{Status: statusBroken, At: -1} // cannot happen: rank 0 always sends a verdict
	}
	switch v.Status {
	case statusOK:
	case statusNoSource:
		return nil, fmt.Errorf("cpath: no source reaches target %d: the graph has a cycle", g.Target)
	case statusCycle:
		return nil, cycleError(int32(v.At))
	default:
		return nil, fmt.Errorf("cpath: Succ chain stops at %d before target %d", v.At, g.Target)
	}
	// Step 3.
	clear(parts)
	parts[0] = s.segments(entries)
	recv, err = s.c.Alltoallv(parts)
	if err != nil {
		return nil, err
	}
	res := &DistResult{}
	var lerr error
	if s.rank == 0 {
		var verts []int32
		verts, lerr = joinSegments(recv, owners)
		res.Path = Path{Vertices: verts, Length: v.Length}
	}
	if err := s.sumStats(res, lerr != nil); err != nil {
		return nil, err
	}
	if lerr != nil {
		return nil, lerr
	}
	return res, nil
}

// toTarget is the next vertex of an entry pair whose walk reached the
// target.
const toTarget = -1

// finish's statuses: how rank 0 found the chain of entry points.
const (
	statusOK = iota
	statusNoSource
	statusCycle
	statusBroken
)

// finishEntries is what each rank tells rank 0 in finish's step 1, ahead
// of its pairs (entry point, the vertex off the rank its Succ walk
// reaches or toTarget).
type finishEntries struct {
	BestDist int64 // Unreached if it reached no source
	BestSrc  int32 // its best source, NoVertex if none
	Cycle    int32 // a vertex on a Succ loop of its walks, or -1
	Broken   int32 // a vertex whose Succ stops short of the target, or -1
	_        int32
}

// finishVerdict is rank 0's answer in step 2, ahead of the rank's entry
// points in path order.
type finishVerdict struct {
	Status int64 // statusOK, ...
	At     int64 // the vertex the status names, or -1
	Length int64 // the path's length
}

// chain is rank 0's step 2 of finish: it picks the canonical source from
// every rank's report and chains the entry pairs into the path's entry
// points, giving each one's owner.
func (s *distSearch) chain(recv [][]byte) (v finishVerdict, entries []int32, owners []int) {
	g := s.g
	v = finishVerdict{Status: statusOK, At: -1}
	src, srcDist := NoVertex, Unreached
	rankPairs := make([][]int32, s.size)
	for p, b := range recv {
		d := mpix.NewDecoder(b)
		h := mpix.ReadRecord[finishEntries](d)
		rankPairs[p] = mpix.ReadRecords[int32](d)
		if d.Done() != nil || len(rankPairs[p])%2 != 0 {
			v.Status, v.At = statusBroken, -1 // cannot happen: the ranks run the same code
			continue
		}
		if h.BestSrc != NoVertex && (src == NoVertex || h.BestDist > srcDist || (h.BestDist == srcDist && h.BestSrc < src)) {
			src, srcDist = h.BestSrc, h.BestDist
		}
		if h.Cycle >= 0 && v.Status == statusOK {
			v.Status, v.At = statusCycle, int64(h.Cycle)
		}
		if h.Broken >= 0 && v.Status == statusOK {
			v.Status, v.At = statusBroken, int64(h.Broken)
		}
	}
	v.Length = srcDist
	if v.Status == statusOK && src == NoVertex {
		v.Status = statusNoSource
	}
	if v.Status != statusOK {
		return v, nil, nil
	}
	total := 0
	for _, ps := range rankPairs {
		total += len(ps) / 2
	}
	for x := src; ; {
		p := g.Owner(x)
		ps := rankPairs[p]
		k := sort.Search(len(ps)/2, func(k int) bool { return ps[2*k] >= x })
		if k == len(ps)/2 || ps[2*k] != x {
			return finishVerdict{Status: statusBroken, At: int64(x), Length: srcDist}, nil, nil
		}
		if len(entries) >= total {
			return finishVerdict{Status: statusCycle, At: int64(x), Length: srcDist}, nil, nil
		}
		entries = append(entries, x)
		owners = append(owners, p)
		if x = ps[2*k+1]; x == toTarget {
			return v, entries, owners
		}
	}
}

// segments is a rank's step 3 of finish: the message of its segments of
// the path, one from each of its entry points, in path order.
func (s *distSearch) segments(entries []int32) []byte {
	e := mpix.NewEncoder(nil)
	var seg []int32
	for _, x := range entries {
		seg = seg[:0]
		for u := x; ; {
			seg = append(seg, u)
			w := s.succ[u-s.lo]
			if u == s.g.Target || !s.owns(w) {
				break
			}
			u = w
		}
		mpix.PutRecords(e, seg)
	}
	return e.Bytes()
}

// joinSegments is rank 0's step 3 of finish: the path's vertices, the
// segments each rank shipped taken in path order (owners).
func joinSegments(recv [][]byte, owners []int) ([]int32, error) {
	ds := make([]*mpix.Decoder, len(recv))
	for p, b := range recv {
		ds[p] = mpix.NewDecoder(b)
	}
	total := 0
	for _, b := range recv {
		total += len(b) / 4 // at most: the counts are among them
	}
	verts := make([]int32, 0, total)
	for _, p := range owners {
		sp := mpix.ReadRecords[int32](ds[p])
		if len(sp) == 0 {
			return nil, fmt.Errorf("cpath: rank %d shipped a short path segment (%v)", p, ds[p].Err())
		}
		verts = append(verts, sp...)
	}
	for p, d := range ds {
		if err := d.Done(); err != nil {
			return nil, fmt.Errorf("cpath: rank %d's path segments: %v", p, err)
		}
	}
	return verts, nil
}

// sumStats fills res.Stats from every rank's counters, one Allgatherv:
// counts summed, Rounds, Phases and MaxQueue the largest. BytesSent covers
// the search and the path extraction, not this last gather. failed rides
// along so that a rank's late failure reaches all of them.
func (s *distSearch) sumStats(res *DistResult, failed bool) error {
	bytes, _ := s.c.Stats()
	st := &s.st
	x := distTally{Reached: s.reached, Relaxations: st.Relaxations, Updates: st.Updates, Pushes: st.Pushes, Pops: st.Pops,
		Stale: st.Stale, Phases: st.Phases, Light: st.Light, Heavy: st.Heavy, MaxQueue: int64(st.MaxQueue), Rounds: st.Rounds,
		Bytes: bytes - s.bytes0, Edges: int64(len(s.g.InSrc))}
	if failed {
		x.Failed = 1
	}
	all, err := s.c.Allgatherv(mpix.Bytes([]distTally{x}))
	if err != nil {
		return err
	}
	var sum DistStats
	for p, b := range all {
		ys, err := mpix.FromBytes[distTally](b)
		if err != nil || len(ys) != 1 {
			return fmt.Errorf("cpath: rank %d shipped %d bytes of statistics", p, len(b))
		}
		y := &ys[0]
		sum.Reached += int(y.Reached)
		sum.Relaxations += y.Relaxations
		sum.Updates += y.Updates
		sum.Pushes += y.Pushes
		sum.Pops += y.Pops
		sum.Stale += y.Stale
		sum.Phases = max(sum.Phases, y.Phases)
		sum.Light += y.Light
		sum.Heavy += y.Heavy
		sum.MaxQueue = max(sum.MaxQueue, int(y.MaxQueue))
		sum.Rounds = max(sum.Rounds, y.Rounds)
		sum.BytesSent += y.Bytes
		sum.Edges += y.Edges
		if y.Failed != 0 && s.rank != 0 {
			return fmt.Errorf("cpath: rank %d could not assemble the critical path", p)
		}
	}
	res.Stats = sum
	return nil
}

// distTally is one rank's counters, as sumStats ships them.
type distTally struct {
	Reached, Relaxations, Updates, Pushes, Pops, Stale, Phases int64
	Light, Heavy, MaxQueue, Rounds                             int64
	Bytes                                                      int64 // sent by the search and the path extraction
	Failed                                                     int64 // 1: rank 0 could not assemble the path
	Edges                                                      int64
}
