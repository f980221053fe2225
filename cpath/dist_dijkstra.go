package cpath

import (
	"math"

	"github.com/cpath/cpath/internal/mpix"
)

// ParallelDijkstra is the paper's §4.3, exact: every rank keeps a priority
// queue of its own vertices (largest tentative Dist first) and searches
// backwards from the target over the incoming edges it stores. It must be
// called on every rank of c together; the Path is complete on rank 0.
//
// Why it is fast on the graphs we analyze: a round does not stop after one
// vertex. Each rank empties its queue, relaxing at once every edge whose
// source it owns and only batching the cross-rank ones, which all ranks
// then exchange in one Alltoallv (the round's only collective call: its
// header slots say whether anyone shipped anything, i.e. whether another
// round is needed). The rounds therefore grow with the number of times the
// search crosses between ranks, not with the length of the path, which on
// PAGs (long per-process chains) is what matters.
//
// It is label-correcting, like Dijkstra: a vertex whose Dist increases is
// processed again, and a Succ is improved by the tie-break (smallest id
// among equal) whenever an equal offer arrives, so the Dist, Succ and path
// are those of DAG. A positive cycle among the ancestors of the target is
// found when a walk of more edges than vertices improves a Dist, and all
// ranks return the error together, as they do for a malformed graph.
//
// With vertex times (g.Time on every rank that owns vertices), the
// priority is the time instead, as the paper has it: "start the search
// from the vertex with the largest timestamp", and a rank waits for the
// others where a dependency crosses ranks; see distTimed.dijkstra. On a
// PAG with consistent clocks every vertex is then taken once, with its
// final Dist: one relaxation per edge on cpathtest.FullPAGTime graphs,
// where the largest-Dist order (which takes the vertices farthest from the
// target first) made 10^2 to 10^4. Without times it stays as above.
//
// Stats.Rounds counts the search's exchanges (with times, two more to set
// up the lookahead); extracting the path (see finish) takes three more,
// whatever its length.
func ParallelDijkstra(c mpix.Comm, g *DistGraph) (*DistResult, error) {
	timed, err := checkDistTimed(c, g, 0, true)
	if err != nil {
		return nil, err
	}
	if timed {
		s := newDistTimed(c, g)
		if err := s.dijkstra(); err != nil {
			return nil, err
		}
		return s.finish()
	}
	s := newDistSearch(c, g)
	s.boundWork()
	var q queue
	if s.owns(g.Target) {
		s.dist[g.Target-s.lo] = 0
		q.push(entry{0, g.Target, 0})
		s.st.Pushes++
		s.st.MaxQueue = 1
	}
	dist := s.dist
	lo := s.lo
	inStart, inSrc, inWeight := g.InStart, g.InSrc, g.InWeight
	for {
		// Empty the queue. The vertex to process next is often one just
		// updated (on a chain, always): it is held in next rather than
		// pushed and popped at once, and processed only when it would also
		// be the heap's top, so that the order is exactly the heap's.
		var next entry
		haveNext := false
		for s.cycleAt < 0 {
			var e entry
			if haveNext {
				e, haveNext = next, false
			} else if len(q) > 0 {
				e = q.pop()
			} else {
				break
			}
			v, d := e.v, e.d
			i := v - lo
			if dist[i] != d {
				s.st.Stale++
				continue
			}
			s.st.Pops++
			a, b := inStart[i], inStart[i+1]
			s.st.Relaxations += int64(b - a)
			h := e.h + 1
			for j := a; j < b; j++ {
				u := inSrc[j]
				c := d + inWeight.At(j)
				if !s.owns(u) {
					s.send(u, c, v, h)
					continue
				}
				if s.relax(u, c, v, h) {
					s.st.Pushes++
					switch ne := (entry{c, u, h}); {
					case !haveNext:
						next, haveNext = ne, true
					case ne.above(next):
						q.push(next)
						next = ne
					default:
						q.push(ne)
					}
				} else if s.cycleAt >= 0 {
					break
				}
			}
			if haveNext && len(q) > 0 && q[0].above(next) {
				q.push(next)
				haveNext = false
			}
			s.st.MaxQueue = max(s.st.MaxQueue, len(q))
			s.queued(len(q))
		}
		hd, err := s.exchange(distNoTop)
		if err != nil {
			return nil, err
		}
		if !hd.sent {
			break // nobody shipped anything, and every queue was emptied
		}
		for _, m := range s.in {
			if s.relax(m.U, m.C, m.V, m.H) {
				q.push(entry{m.C, m.U, m.H})
				s.st.Pushes++
			}
		}
		s.st.MaxQueue = max(s.st.MaxQueue, len(q))
		s.queued(len(q))
	}
	return s.finish()
}

// dijkstra is ParallelDijkstra on a graph with vertex times. Each rank
// takes its queued vertices latest first (the larger id first among equal
// times), each with the Dist it has then, relaxing its incoming edges: the
// local ones at once, the cross-rank ones batched for the round's one
// Alltoallv. On consistent clocks (Time[u] <= Time[v] on every edge u->v)
// a vertex taken after every later vertex is final, which in one process
// makes it about one relaxation per edge.
//
// Across ranks, a rank goes on only while its top vertex u cannot be
// changed any more by the others: the headers of each exchange give every
// rank the frontier, the latest time another rank may still have queued
// (see frontier), and u is taken if the earliest time of another rank's
// vertex that can change Dist[u] (its lookahead, see lookahead) is later
// than the frontier, or if u itself is later than the frontier (then it is
// the job's latest queued vertex, so some rank always goes on). So a round
// advances every rank to about the others' frontier minus the lookahead,
// and on consistent clocks every vertex is taken once, final, but for
// ties of time across ranks; the rounds grow with the times the critical
// dependencies cross between ranks, as DistDAG's do.
//
// None of this is needed for exactness: a vertex whose Dist increases
// after it was taken is queued again (label-correcting), so whatever the
// times the result is DAG's; inconsistent times only cost more work.
// distMaxHeld bounds the vertices ParallelDijkstra's timed search holds
// back in one round to take later ones that may go on (a variable for
// the tests).
var distMaxHeld = 4096

func (s *distTimed) dijkstra() error {
	rt, err := s.lookahead()
	if err != nil {
		return err
	}
	ft, fid := int64(distNoTop), int32(-1) // nobody else has anything queued yet
	var held []tentry
	for {
		for len(s.q) > 0 && s.cycleAt < 0 {
			// What this rank offers another in this round may be queued
			// there as late as the offering vertex: the frontier rises.
			if s.sentTop != distNoTop && (tentry{s.sentTop, math.MaxInt32}).above(tentry{ft, fid}) {
				ft, fid = s.sentTop, math.MaxInt32
			}
			t, id := s.top()
			if rt[id-s.lo] <= ft && !(tentry{t, id}).above(tentry{ft, fid}) {
				// Held back until the next round; the vertices after it
				// may go on: on consistent clocks, one that depends on it
				// through owned vertices has its lookahead (the minimum
				// over them), and one that depends on it through another
				// rank's vertex w has Time[w] <= Time[id] <= the frontier,
				// so its lookahead holds it back too.
				if len(held) >= distMaxHeld {
					break
				}
				held = append(held, s.q.pop())
				continue
			}
			s.process(-1)
		}
		for _, e := range held {
			s.q.push(e) // still flagged as queued
		}
		held = held[:0]
		hd, err := s.exchangeTimed()
		if err != nil {
			return err
		}
		if !hd.sent && !hd.queued() {
			return nil // nothing shipped, every queue empty
		}
		ft, fid = s.frontier(hd)
	}
}
