package cpath

// The time-ordered searches' common state (distTimed): the vertices
// queued by their times, latest first, and the rounds' exchanges with a
// lookahead; ParallelDijkstra's and ParallelDeltaStepping's loops over it
// are in dist_dijkstra.go and dist_delta.go.

import (
	"fmt"
	"math"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
)

// distTimed is one rank's state in a time-ordered search (ParallelDijkstra
// and ParallelDeltaStepping on a graph with vertex times): its owned
// vertices are queued under their times, latest first, each at most once
// at a time, and processed with the Dist they have when taken.
type distTimed struct {
	*distSearch
	tm      []int64 // owned vertices' times
	q       tqueue
	queued  []bool  // by owned vertex: in q
	hops    []int32 // by owned vertex: edges of the walk that gave its Dist (the cycle bound)
	sentMax []int64 // by destination rank: the latest time it was offered a relaxation at this round (see exchangeTimed)
	sentTop int64   // the largest of sentMax
	srcTime []int64 // ParallelDijkstra, by edge: a cross-rank edge's source's time (nil: not known)
}

func newDistTimed(c mpix.Comm, g *DistGraph) *distTimed {
	s := &distTimed{distSearch: newDistSearchSlots(c, g, 2), tm: g.Time}
	nv := int(g.Hi - g.Lo)
	s.queued = make([]bool, nv)
	s.hops = make([]int32, nv)
	s.sentMax = make([]int64, s.size)
	for p := range s.sentMax {
		s.sentMax[p] = distNoTop
	}
	s.sentTop = distNoTop
	if s.owns(g.Target) {
		i := g.Target - s.lo
		s.dist[i] = 0
		s.queue(g.Target)
	}
	return s
}

// queue puts an owned vertex in the queue unless it is there.
func (s *distTimed) queue(u int32) {
	i := u - s.lo
	if !s.queued[i] {
		s.queued[i] = true
		s.q.push(tentry{s.tm[i], u})
		s.st.Pushes++
		s.st.MaxQueue = max(s.st.MaxQueue, len(s.q))
	}
}

// offer relaxes the edge u->v for an owned u and queues u if its Dist
// increased.
func (s *distTimed) offer(u int32, c int64, v int32, h int32) {
	if s.relax(u, c, v, h) {
		s.hops[u-s.lo] = h
		s.queue(u)
	}
}

// process takes the top vertex and relaxes its incoming edges: the local
// ones at once, the cross-rank ones batched for the exchange. It returns
// the number of edges relaxed with weight <= light.
func (s *distTimed) process(light int64) int64 {
	e := s.q.pop()
	v := e.v
	i := v - s.lo
	s.queued[i] = false
	s.st.Pops++
	g := s.g
	a, b := g.InStart[i], g.InStart[i+1]
	s.st.Relaxations += int64(b - a)
	d, h := s.dist[i], s.hops[i]+1
	nl := int64(0)
	for j := a; j < b; j++ {
		u := g.InSrc[j]
		w := g.InWeight.At(j)
		if w <= light {
			nl++
		}
		if !s.owns(u) {
			s.send(u, d+w, v, h)
			p := g.Owner(u)
			bt := e.t // on consistent clocks, Time[u] <= Time[v]
			if s.srcTime != nil {
				bt = s.srcTime[j]
			}
			s.sentMax[p] = max(s.sentMax[p], bt)
			s.sentTop = max(s.sentTop, bt)
			continue
		}
		s.offer(u, d+w, v, h)
		if s.cycleAt >= 0 {
			break
		}
	}
	return nl
}

// top is the time and vertex at the top of the queue (distNoTop, -1 if
// it is empty).
func (s *distTimed) top() (int64, int32) {
	if len(s.q) == 0 {
		return distNoTop, -1
	}
	return s.q[0].t, s.q[0].v
}

// exchangeTimed ships the round's relaxations with this rank's top in the
// header, and, in each destination's header, the latest time this rank
// offered a relaxation at to a third rank: the time of the offered vertex
// u where lookahead learnt it (ParallelDijkstra), else that of the
// offering vertex v, which bounds it on consistent clocks (the edge u->v
// gives Time[u] <= Time[v]). It applies the received offers and returns
// the header; frontier then tells what the other ranks may still do.
func (s *distTimed) exchangeTimed() (distHeader, error) {
	t, id := s.top()
	s.hdrID = id
	for p := range s.hdrAux {
		x := int64(distNoTop)
		for q, m := range s.sentMax {
			if q != p {
				x = max(x, m)
			}
		}
		s.hdrAux[p] = x
	}
	hd, err := s.exchange(t)
	if err != nil {
		return hd, err
	}
	for _, m := range s.in {
		s.offer(m.U, m.C, m.V, m.H)
	}
	return hd, nil
}

// frontier is, after an exchange, the latest time at which another rank
// may have a vertex queued (its top, or the bound of what it was offered
// in the exchange), and the vertex if it is a queued one (MaxInt32 for a
// bound): on a graph with consistent clocks, every vertex of another rank
// later than that is final, and so are the offers it made.
func (s *distTimed) frontier(hd distHeader) (int64, int32) {
	ft, fid := int64(distNoTop), int32(-1)
	for p := range hd.tops {
		if p == s.rank {
			continue
		}
		if t, id := hd.tops[p], hd.topIDs[p]; id >= 0 && (fid < 0 || (tentry{t, id}).above(tentry{ft, fid})) {
			ft, fid = t, id
		}
		if t := hd.aux[p]; t != distNoTop && (fid < 0 || (tentry{t, math.MaxInt32}).above(tentry{ft, fid})) {
			ft, fid = t, math.MaxInt32
		}
		if t := s.sentMax[p]; t != distNoTop && (fid < 0 || (tentry{t, math.MaxInt32}).above(tentry{ft, fid})) {
			ft, fid = t, math.MaxInt32
		}
	}
	for p := range s.sentMax {
		s.sentMax[p] = distNoTop
	}
	s.sentTop = distNoTop
	return ft, fid
}

// crossDst is a cross-rank edge u->w as lookahead asks u's owner about
// it: w's time.
type crossDst struct {
	T int64 // Time[w]
	U int32
	_ int32
}

// lookahead gives each owned vertex u the earliest time of a vertex of
// another rank that can change Dist[u] directly: the destination w of a
// cross-rank edge x->w from u or from an owned vertex x that u reaches
// through owned vertices (MaxInt64 if none). One exchange tells each rank
// the times of the cross-rank edges' destinations, by source, and a
// second one answers with the sources' times (srcTime); the owned part
// follows in one pass latest first, which on consistent clocks is a
// topological order (otherwise the bound is only rougher, and the search
// does more work, never a wrong one).
func (s *distTimed) lookahead() ([]int64, error) {
	g := s.g
	nv := int(s.hi - s.lo)
	asks := make([][]crossDst, s.size)
	for i := 0; i < nv; i++ {
		for j := g.InStart[i]; j < g.InStart[i+1]; j++ {
			if u := g.InSrc[j]; !s.owns(u) {
				p := g.Owner(u)
				asks[p] = append(asks[p], crossDst{T: s.tm[i], U: u})
			}
		}
	}
	recv, err := mpix.Ship(s.c, asks)
	if err != nil {
		return nil, err
	}
	s.st.Rounds++
	rt := make([]int64, nv)
	for i := range rt {
		rt[i] = math.MaxInt64
	}
	reply := make([][]int64, s.size)
	for p, b := range recv {
		xs, err := mpix.FromBytes[crossDst](b)
		if err != nil {
			return nil, fmt.Errorf("cpath: rank %d shipped %d bytes, not whole edges", p, len(b))
		}
		reply[p] = make([]int64, len(xs))
		for k, x := range xs {
			t := int64(distNoTop)
			if u := x.U; s.owns(u) {
				rt[u-s.lo] = min(rt[u-s.lo], x.T)
				t = s.tm[u-s.lo]
			}
			reply[p][k] = t
		}
	}
	// The answers: the sources' times, by which an offer bounds the time
	// it may queue at its destination (see exchangeTimed).
	if recv, err = mpix.Ship(s.c, reply); err != nil {
		return nil, err
	}
	s.st.Rounds++
	s.srcTime = make([]int64, len(g.InSrc))
	at := make([]int, s.size)
	ans, err := mpix.Split[int64](recv)
	if err != nil {
		return nil, err
	}
	for i := 0; i < nv; i++ {
		for j := g.InStart[i]; j < g.InStart[i+1]; j++ {
			if u := g.InSrc[j]; !s.owns(u) {
				p := g.Owner(u)
				if at[p] >= len(ans[p]) {
					return nil, fmt.Errorf("cpath: rank %d answered %d source times, too few", p, len(ans[p]))
				}
				s.srcTime[j] = ans[p][at[p]]
				at[p]++
			}
		}
	}
	cross := false
	for _, t := range rt {
		if t != math.MaxInt64 {
			cross = true
			break
		}
	}
	if !cross {
		return rt, nil // no edge leads to another rank (one rank, say): nothing to wait for
	}
	order := make([]int32, nv)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if a == b {
			return 0
		}
		if (tentry{s.tm[a], a}).above(tentry{s.tm[b], b}) {
			return -1
		}
		return 1
	})
	for _, i := range order {
		for j := g.InStart[i]; j < g.InStart[i+1]; j++ {
			if u := g.InSrc[j]; s.owns(u) {
				rt[u-s.lo] = min(rt[u-s.lo], rt[i])
			}
		}
	}
	return rt, nil
}
