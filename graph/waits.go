package graph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cpath/cpath/trace"
)

// dep says that call done cannot complete before call cause has started:
// the receive of a message needs its send, a synchronous send its receive,
// a collective member the member (or root) it needs data from.
type dep struct {
	done, cause int32
	kind        WaitKind
	msg         int32 // index of the message, -1 for collectives
}

// collKind classifies a collective by its data flow (SPEC §3).
func collKind(op trace.Op) (kind WaitKind, flow byte) {
	switch op {
	case trace.OpBarrier, trace.OpIbarrier:
		return WaitAtBarrier, 'N'
	case trace.OpBcast, trace.OpIbcast, trace.OpScatter, trace.OpIscatter, trace.OpScatterv, trace.OpIscatterv:
		return LateBroadcast, 'B'
	case trace.OpReduce, trace.OpIreduce, trace.OpGather, trace.OpIgather, trace.OpGatherv, trace.OpIgatherv:
		return EarlyReduce, 'R'
	case trace.OpScan, trace.OpIscan:
		return WaitAtNxN, 'S'
	case trace.OpExscan, trace.OpIexscan:
		return WaitAtNxN, 'E'
	}
	// Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block), their
	// I-forms, and communicator constructors: everyone needs everyone.
	return WaitAtNxN, 'N'
}

func (g *PAG) dependencies(msgs []msgPair) []dep {
	deps := make([]dep, 0, len(msgs)+len(g.CollPost))
	for k, m := range msgs {
		deps = append(deps, dep{m.recv.done, m.send.post, LateSender, int32(k)})
		if m.send.sync {
			deps = append(deps, dep{m.send.done, m.recv.post, LateReceiver, int32(k)})
		}
	}
	for _, c := range g.Colls {
		post := g.CollPost[c.First : c.First+c.N]
		done := g.CollDone[c.First : c.First+c.N]
		kind, flow := collKind(c.Op)
		latest := func(keep func(i int) bool) int {
			best := -1
			for i := range post {
				if keep(i) && (best < 0 || g.Start[post[i]] > g.Start[post[best]]) {
					best = i
				}
			}
			return best
		}
		rootIdx := -1
		for i := range post {
			if int32(g.Rank(post[i])) == c.Root {
				rootIdx = i
			}
		}
		switch flow {
		case 'N':
			last := latest(func(int) bool { return true })
			for i := range post {
				if i != last {
					deps = append(deps, dep{done[i], post[last], kind, -1})
				}
			}
		case 'B':
			if rootIdx >= 0 {
				for i := range post {
					if i != rootIdx {
						deps = append(deps, dep{done[i], post[rootIdx], kind, -1})
					}
				}
			}
		case 'R':
			if rootIdx >= 0 {
				if last := latest(func(i int) bool { return i != rootIdx }); last >= 0 {
					deps = append(deps, dep{done[rootIdx], post[last], kind, -1})
				}
			}
		case 'S', 'E':
			// Members in the communicator's rank order: each needs the ranks
			// before it (and itself, for Scan).
			order := g.Comms[c.Comm].Members
			pos := make(map[int32]int, len(order))
			for i, w := range order {
				pos[w] = i
			}
			for i := range post {
				me := pos[int32(g.Rank(post[i]))]
				cause := latest(func(j int) bool {
					p := pos[int32(g.Rank(post[j]))]
					return p < me || (flow == 'S' && p == me)
				})
				if cause >= 0 && cause != i {
					deps = append(deps, dep{done[i], post[cause], kind, -1})
				}
			}
		}
	}
	return deps
}

// correctClocks enforces the clock condition: no call completes before
// what it needed has started. A violation (clock error larger than the
// message latency) is corrected by moving the completion forward, and the
// rest of its thread with it as far as needed to keep its order; the
// corrections are repeated until none is needed, since moving one event can
// uncover another.
func (g *PAG) correctClocks(deps []dep) []dep {
	N := len(g.Op)
	next := make([]int32, N)
	for i := range next {
		next[i] = -1
	}
	for c := int32(0); c < int32(N); c++ {
		if p := g.Prev[c]; p >= 0 {
			next[p] = c
		}
	}
	for pass := 0; pass < 50; pass++ {
		changed := false
		for _, d := range deps {
			need := g.Start[d.cause]
			if g.End[d.done] >= need {
				continue
			}
			if pass == 0 && d.msg >= 0 && d.kind == LateSender {
				g.ClockViolations++
			}
			changed = true
			g.End[d.done] = need
			for c, w := d.done, next[d.done]; w >= 0 && g.Start[w] < g.End[c]; c, w = w, next[w] {
				shift := g.End[c] - g.Start[w]
				g.Start[w] += shift
				if g.End[w] < g.Start[w] {
					g.End[w] = g.Start[w]
				}
			}
		}
		if !changed {
			break
		}
	}
	// Dependencies that still cannot hold are contradictions, not clock
	// error: a matching the logs do not support (a cycle of waits). They
	// are dropped, and counted, rather than let into the graph.
	kept := deps[:0]
	bad := 0
	for _, d := range deps {
		if g.End[d.done] < g.Start[d.cause] {
			bad++
			continue
		}
		kept = append(kept, d)
	}
	if bad > 0 {
		g.Inconsistent = bad
		g.Notes = append(g.Notes, fmt.Sprintf("%d dependencies contradict the logs' order (inconsistent matching); left out of the graph", bad))
	}
	if g.ClockViolations > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d receives ended before their send started (clock error above the message latency); corrected", g.ClockViolations))
	}
	return kept
}

// waitsAndEdges decides for every completion whether it waited and for
// what, and sets each vertex's one incoming edge.
func (g *PAG) waitsAndEdges(deps []dep, msgs []msgPair) {
	N := int32(len(g.Op))
	g.Pred = make([]int32, 2*N)
	g.PredW = make([]int64, 2*N)
	g.PredKind = make([]EdgeKind, 2*N)
	wrong := g.wrongOrder(msgs)

	// The remote cause of each completion: the latest-starting of what it
	// needed, if that started after the completion call did.
	slices.SortFunc(deps, func(a, b dep) int {
		if a.done != b.done {
			return cmp.Compare(a.done, b.done)
		}
		if x, y := g.Start[a.cause], g.Start[b.cause]; x != y {
			return -cmp.Compare(x, y)
		}
		return cmp.Compare(a.cause, b.cause)
	})
	for i := 0; i < len(deps); {
		d := deps[i]
		for i < len(deps) && deps[i].done == d.done {
			i++
		}
		if g.Start[d.cause] <= g.Start[d.done] {
			continue // it was all there when the call began: no wait
		}
		w := Wait{Call: d.done, Cause: d.cause, Kind: d.kind, Ns: min(g.Start[d.cause], g.End[d.done]) - g.Start[d.done]}
		if d.kind == LateSender && d.msg >= 0 {
			w.WrongOrder = wrong[d.msg]
		}
		g.Waits = append(g.Waits, w)
	}

	g.T0, g.T1 = g.Start[0], g.End[0]
	g.Target = 1
	for c := int32(0); c < N; c++ {
		s, e := 2*c, 2*c+1
		if p := g.Prev[c]; p >= 0 {
			g.Pred[s], g.PredW[s], g.PredKind[s] = 2*p+1, max(0, g.Start[c]-g.End[p]), EdgeProgram
		} else {
			g.Pred[s] = -1
		}
		g.Pred[e], g.PredW[e], g.PredKind[e] = s, max(0, g.End[c]-g.Start[c]), EdgeCall
		g.T0, g.T1 = min(g.T0, g.Start[c]), max(g.T1, g.End[c])
		if g.End[c] > g.End[g.Target>>1] {
			g.Target = e
		}
	}
	for _, w := range g.Waits {
		e := 2*w.Call + 1
		kind := EdgeCollective
		switch w.Kind {
		case LateSender:
			kind = EdgeLateSender
		case LateReceiver:
			kind = EdgeLateReceiver
		}
		g.Pred[e], g.PredW[e], g.PredKind[e] = 2*w.Cause, max(0, g.End[w.Call]-g.Start[w.Cause]), kind
	}
}

// wrongOrder marks the messages whose receiver got them before a message
// sent to it earlier: a Late Sender on such a message is "wrong order".
func (g *PAG) wrongOrder(msgs []msgPair) []bool {
	wrong := make([]bool, len(msgs))
	idx := make([]int32, len(msgs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		ma, mb := msgs[a], msgs[b]
		if ma.recv.dst != mb.recv.dst {
			return cmp.Compare(ma.recv.dst, mb.recv.dst)
		}
		return cmp.Compare(g.Start[ma.send.post], g.Start[mb.send.post])
	})
	for i := 0; i < len(idx); {
		dst := msgs[idx[i]].recv.dst
		latest := int64(-1 << 62)
		for ; i < len(idx) && msgs[idx[i]].recv.dst == dst; i++ {
			m := msgs[idx[i]]
			t := g.End[m.recv.done]
			if latest > t {
				wrong[idx[i]] = true
			}
			latest = max(latest, t)
		}
	}
	return wrong
}
