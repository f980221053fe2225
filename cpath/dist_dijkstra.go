package cpath

import "github.com/cpath/cpath/internal/mpix"

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
// Stats.Rounds counts the search's exchanges; extracting the path (see
// finish) takes three more, whatever its length.
func ParallelDijkstra(c mpix.Comm, g *DistGraph) (*DistResult, error) {
	if err := checkDist(c, g, 0); err != nil {
		return nil, err
	}
	s := newDistSearch(c, g)
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
				c := d + inWeight[j]
				if !s.owns(u) {
					s.send(u, c, v, h)
					continue
				}
				if s.relax(u, c, v, h) {
					s.st.Pushes++
					switch ne := (entry{c, u, h}); {
					case !haveNext:
						next, haveNext = ne, true
					case above(ne, next):
						q.push(next)
						next = ne
					default:
						q.push(ne)
					}
				} else if s.cycleAt >= 0 {
					break
				}
			}
			if haveNext && len(q) > 0 && above(q[0], next) {
				q.push(next)
				haveNext = false
			}
			s.st.MaxQueue = max(s.st.MaxQueue, len(q))
		}
		hd, err := s.exchange(distNoTop)
		if err != nil {
			return nil, err
		}
		if hd.cycle >= 0 {
			return nil, distCycleError(hd.cycle)
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
	}
	return s.finish()
}
