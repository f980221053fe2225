package cpath

import (
	"errors"
	"math"

	"github.com/cpath/cpath/internal/mpix"
)

// distDeltaPhases is the number of buckets DistDefaultDelta aims at.
const distDeltaPhases = 64

// DistDefaultDelta is the Δ ParallelDeltaStepping uses when given none, the
// same on every rank (one Allreduce): the larger of the mean positive edge
// weight (DefaultDelta's choice) and 1/64 of the sum of all weights, rounded
// up, at least 1.
//
// Why: a phase of distributed Δ-stepping costs at least two exchanges
// (collective calls over all ranks), whatever little work its bucket holds.
// No path is longer than the sum of all weights, and a search that moves
// monotonically along a path, as on the chain-like graphs we analyze,
// empties one bucket per Δ of path length, so this Δ bounds such a search
// to about 64 phases however many millions of vertices the chain has,
// while still ordering the work coarsely. The mean is the floor so that
// small graphs keep DefaultDelta's behaviour. Δ changes only the work,
// never the result.
func DistDefaultDelta(c mpix.Comm, g *DistGraph) (int64, error) {
	if c == nil {
		return 0, errors.New("cpath: nil communicator")
	}
	var sum float64
	var n int64
	if g != nil {
		for w := range g.InWeight.All() {
			if w > 0 {
				sum += float64(w)
				n++
			}
		}
	}
	// Saturate so that the sum over ranks cannot overflow.
	lim := float64(math.MaxInt64 / int64(max(1, c.Size())))
	x := []int64{int64(min(sum, lim)), n}
	if err := c.Allreduce(x, mpix.Sum); err != nil {
		return 0, err
	}
	if x[1] == 0 {
		return 1, nil
	}
	tot := float64(x[0])
	d := math.Max(math.Ceil(tot/float64(x[1])), math.Ceil(tot/distDeltaPhases))
	if d >= math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return max(1, int64(d)), nil
}

// ParallelDeltaStepping is Δ-stepping (the paper's §4.2, Meyer and
// Sanders) distributed as ParallelDijkstra is, exact. It must be called on
// every rank of c together, with the same delta; delta <= 0 means
// DistDefaultDelta. The Path is complete on rank 0.
//
// Tentative distances (negated: the largest Dist first) fall into buckets
// of width delta, and the current bucket is global: the one holding the
// largest Dist pending on any rank. A phase empties it: each rank
// processes its share of the bucket, relaxing light edges (weight <= delta)
// whose source it owns at once and batching the cross-rank ones, which are
// exchanged with one Alltoallv; received offers that land in the bucket
// are processed, and this repeats until no rank shipped anything. Heavy
// edges are then relaxed once from the vertices the bucket held, in one
// more Alltoallv, whose header slots also carry each rank's largest pending
// Dist: that exchange doubles as the Allreduce that picks the next bucket,
// so a phase costs (light rounds + 1) collective calls.
//
// As in DeltaStepping, a vertex whose Dist increases is queued again and
// Succ follows the tie-break, so the result equals DAG's; cycles and
// malformed graphs are reported on all ranks as in ParallelDijkstra.
//
// With vertex times (g.Time on every rank that owns vertices), the buckets
// are of vertex times instead, delta ns wide, latest first (delta <= 0:
// DistDefaultTimeDelta); see distTimed.delta.
func ParallelDeltaStepping(c mpix.Comm, g *DistGraph, delta int64) (*DistResult, error) {
	timed, err := checkDistTimed(c, g, delta, true)
	if err != nil {
		return nil, err
	}
	if timed {
		if delta <= 0 {
			if delta, err = DistDefaultTimeDelta(c, g); err != nil {
				return nil, err
			}
		}
		s := newDistTimed(c, g)
		if err := s.delta(delta); err != nil {
			return nil, err
		}
		return s.finish()
	}
	if delta <= 0 {
		if delta, err = DistDefaultDelta(c, g); err != nil {
			return nil, err
		}
	}
	s := &deltaSearch{distSearch: newDistSearch(c, g), delta: delta}
	s.boundWork()
	for w := range g.InWeight.All() {
		if w > delta {
			s.heavyHere = true
			break
		}
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	s.st.Relaxations = s.st.Light + s.st.Heavy
	return s.finish()
}

// deltaSearch is ParallelDeltaStepping's state on one rank.
type deltaSearch struct {
	*distSearch
	delta     int64
	heavyHere bool    // whether this rank has heavy edges: if not, it needs no done list
	q         queue   // the entries past the current bucket
	cur       []entry // the current bucket's
	done      []entry // the vertices that left the bucket, for their heavy edges
}

// run empties the buckets, the largest Dist first, until no rank has one.
func (s *deltaSearch) run() error {
	g, lo := s.g, s.lo
	if s.owns(g.Target) {
		s.dist[g.Target-lo] = 0
		s.q.push(entry{0, g.Target, 0})
		s.st.Pushes++
		s.st.MaxQueue = 1
	}
	top := int64(0) // the target's Dist: every rank knows the first bucket
	for top != distNoTop {
		blo := top - top%s.delta // the bucket is [blo, blo+delta)
		if blo > top {
			blo -= s.delta
		}
		for len(s.q) > 0 && s.q[0].d >= blo {
			if e := s.q.pop(); s.dist[e.v-lo] == e.d {
				s.cur = append(s.cur, e)
			} else {
				s.st.Stale++
			}
		}
		s.st.Phases++
		if err := s.lightEdges(blo); err != nil {
			return err
		}
		var err error
		if top, err = s.nextBucket(s.heavyEdges()); err != nil {
			return err
		}
	}
	return nil
}

// push queues an entry that improved a Dist: in the current bucket
// [blo, blo+delta), or past it.
func (s *deltaSearch) push(e entry, blo int64) {
	s.st.Pushes++
	if e.d-blo < s.delta {
		s.cur = append(s.cur, e)
	} else {
		s.q.push(e)
	}
	s.queued(len(s.q) + len(s.cur))
}

// lightEdges relaxes the light edges (weight <= delta) out of the
// current bucket, the owned sources at once and the others' batched and
// exchanged, until the bucket is empty on every rank.
func (s *deltaSearch) lightEdges(blo int64) error {
	g, lo, dist := s.g, s.lo, s.dist
	for {
		for k := 0; k < len(s.cur) && s.cycleAt < 0; k++ {
			e := s.cur[k]
			v, d := e.v, e.d
			i := v - lo
			if dist[i] != d {
				s.st.Stale++
				continue
			}
			s.st.Pops++
			if s.heavyHere {
				s.done = append(s.done, e)
			}
			h := e.h + 1
			for j, end := g.InStart[i], g.InStart[i+1]; j < end; j++ {
				w := g.InWeight.At(j)
				if w > s.delta {
					continue
				}
				s.st.Light++
				u := g.InSrc[j]
				c := d + w
				if !s.owns(u) {
					s.send(u, c, v, h)
					continue
				}
				if s.relax(u, c, v, h) {
					s.push(entry{c, u, h}, blo)
				} else if s.cycleAt >= 0 {
					break
				}
			}
		}
		s.st.MaxQueue = max(s.st.MaxQueue, len(s.q)+len(s.cur)+len(s.done))
		s.cur = s.cur[:0]
		hd, err := s.exchange(distNoTop)
		if err != nil {
			return err
		}
		if !hd.sent {
			return nil
		}
		for _, m := range s.in {
			if s.relax(m.U, m.C, m.V, m.H) {
				s.push(entry{m.C, m.U, m.H}, blo)
			}
		}
	}
}

// heavyEdges relaxes the heavy edges out of the vertices that left the
// bucket with their Dist unchanged since, once each: they lead past the
// bucket (c > d+delta >= blo+delta), so they go to the queue. It returns
// the largest Dist offered to another rank.
func (s *deltaSearch) heavyEdges() (sentTop int64) {
	g, lo, dist := s.g, s.lo, s.dist
	sentTop = distNoTop
	for _, e := range s.done {
		v, d := e.v, e.d
		i := v - lo
		if dist[i] != d {
			continue
		}
		h := e.h + 1
		for j, end := g.InStart[i], g.InStart[i+1]; j < end; j++ {
			w := g.InWeight.At(j)
			if w <= s.delta {
				continue
			}
			s.st.Heavy++
			u := g.InSrc[j]
			c := d + w
			if !s.owns(u) {
				s.send(u, c, v, h)
				sentTop = max(sentTop, c)
				continue
			}
			if s.relax(u, c, v, h) {
				s.st.Pushes++
				s.q.push(entry{c, u, h})
				s.queued(len(s.q))
			} else if s.cycleAt >= 0 {
				break
			}
		}
	}
	s.done = s.done[:0]
	return sentTop
}

// nextBucket exchanges the heavy edges' offers and agrees on the next
// bucket: each rank votes the largest Dist it has pending or has just
// offered another rank (an offer that turns out not to improve only
// costs an empty phase). distNoTop: none is left.
func (s *deltaSearch) nextBucket(sentTop int64) (int64, error) {
	lo, dist := s.lo, s.dist
	for len(s.q) > 0 && dist[s.q[0].v-lo] != s.q[0].d {
		s.q.pop()
		s.st.Stale++
	}
	myTop := sentTop
	if len(s.q) > 0 {
		myTop = max(myTop, s.q[0].d)
	}
	hd, err := s.exchange(myTop)
	if err != nil {
		return 0, err
	}
	for _, m := range s.in {
		if s.relax(m.U, m.C, m.V, m.H) {
			s.st.Pushes++
			s.q.push(entry{m.C, m.U, m.H})
			s.queued(len(s.q))
		}
	}
	s.st.MaxQueue = max(s.st.MaxQueue, len(s.q))
	return hd.top, nil
}

// distBucketVertices is the number of vertices DistDefaultTimeDelta aims
// at per bucket, on average, and distTimeBuckets the fewest buckets.
const (
	distBucketVertices = 256
	distTimeBuckets    = 64
)

// DistDefaultTimeDelta is the Δ ParallelDeltaStepping uses on a graph with
// vertex times when given none, the same on every rank (one Allreduce):
// the span of the vertex times (latest minus earliest) over the number of
// buckets, N/256 but at least 64, rounded up, at least 1.
//
// Why: within a bucket the ranks do not wait for each other, so the work
// per edge grows with the times the dependencies cross between ranks
// within one bucket, i.e. with the bucket's share of the run, and a
// phase costs at least one exchange however little its bucket holds. On
// graphs shaped like the full PAG (cpathtest.FullPAGTime, 200k vertices,
// 16 processes) span/64 made 7-13 relaxations per edge at 2-4 ranks,
// span/N*256 1.5-1.9 in a quarter of ParallelDijkstra's rounds; small
// graphs keep at least 64 buckets. Δ changes only the work, never the
// result.
func DistDefaultTimeDelta(c mpix.Comm, g *DistGraph) (int64, error) {
	if c == nil {
		return 0, errors.New("cpath: nil communicator")
	}
	x := []int64{math.MinInt64, math.MinInt64} // the latest time, minus the earliest
	if g != nil {
		for _, t := range g.Time {
			x[0] = max(x[0], t)
			x[1] = max(x[1], -max(t, -math.MaxInt64))
		}
	}
	if err := c.Allreduce(x, mpix.Max); err != nil {
		return 0, err
	}
	if x[0] == math.MinInt64 {
		return 1, nil
	}
	n := 0
	if g != nil {
		n = g.N
	}
	span := float64(x[0]) + float64(x[1])
	d := math.Ceil(span / float64(max(distTimeBuckets, n/distBucketVertices)))
	if d >= math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return max(1, int64(d)), nil
}

// delta is ParallelDeltaStepping on a graph with vertex times: the
// buckets hold the queued vertices by time, [k·delta, (k+1)·delta), the
// latest first, and the current one is global: the one holding the
// latest vertex queued on any rank. A phase empties it: each rank takes
// its vertices in the bucket latest first, each with the Dist it has then,
// relaxing all its incoming edges, the local ones at once and the
// cross-rank ones batched for one Alltoallv; received offers that queue a
// vertex in the bucket (or a later one: inconsistent times) are taken in
// the next round, until a round in which nobody ships anything. That
// exchange's headers carry every rank's top, exact since nothing was
// shipped: they pick the next bucket, so a phase costs (rounds) collective
// calls and no more. Within a bucket the ranks do not wait for each other:
// an offer from another rank can increase the Dist of a vertex already
// taken, which is then queued again (label-correcting, so the result is
// exact whatever the times); the wider the bucket, the more rounds and
// work within it, the fewer phases. On consistent clocks no edge leads
// from a bucket into a later one, so every vertex of a finished bucket is
// final.
func (s *distTimed) delta(delta int64) error {
	hd, err := s.exchangeTimed() // every rank learns the first bucket
	if err != nil {
		return err
	}
	light := int64(0)
	for hd.queued() {
		blo := bucketLow(hd.top, delta)
		s.st.Phases++
		for {
			for len(s.q) > 0 && s.q[0].t >= blo && s.cycleAt < 0 {
				light += s.process(delta)
			}
			if hd, err = s.exchangeTimed(); err != nil {
				return err
			}
			s.frontier(hd) // only resets the round's bounds
			if !hd.sent {
				break
			}
		}
	}
	s.st.Light, s.st.Heavy = light, s.st.Relaxations-light
	return nil
}
