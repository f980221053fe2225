// Package imbalance computes what the run loses to imbalance: the paper's
// per-call, per-process and program imbalance (§5.2) over collective
// instances, and Scalasca's wait states from the waits the PAG records,
// by rank, operation and communicator.
package imbalance

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// Instance is the imbalance of one collective instance. WaitBefore and
// WaitAfter are summed over its members.
type Instance struct {
	Coll       int32 // index in PAG.Colls
	WaitBefore int64 // Σ t_start_max - t_start[r]
	WaitAfter  int64 // Σ t_end[r] - t_end_min
	Execution  int64 // t_end_min - t_start_max, 0 when no member overlapped all others
	Imbalance  float64
	LastRank   int // the member that started last
}

// Process is a rank's row of the paper's per-process table.
type Process struct {
	Rank      int
	ProgramNs int64 // first event to last event of the rank
	ComputeNs int64 // Σ program edges: time outside MPI
	ExecNs    int64 // Σ execution of the collectives it took part in
	WaitNs    int64 // Σ its wait before + wait after
	Imbalance float64
	Calls     int
	Nodes     int
	Edges     int
}

// Waits are wait-state times in ns, indexed by graph.WaitKind, with
// WrongOrder the part of Late Sender on messages received in the wrong
// order.
type Waits struct {
	Ns         [graph.NumWaitKinds]int64
	WrongOrder int64
}

// Result is the imbalance analysis of a run.
type Result struct {
	Instances []Instance
	Processes []Process
	Program   Process // Rank -1: the totals row
	Waits     Waits
	ByRank    []Waits
	ByOp      map[trace.Op]*Waits
	ByComm    map[int32]*Waits // -1: no communicator known
}

// Analyze computes the imbalance and wait states of a PAG.
func Analyze(g *graph.PAG) *Result {
	res := &Result{Processes: make([]Process, g.Ranks), ByRank: make([]Waits, g.Ranks),
		ByOp: map[trace.Op]*Waits{}, ByComm: map[int32]*Waits{}}
	for r := range res.Processes {
		p := &res.Processes[r]
		p.Rank = r
		lo, hi := g.RankStart[r], g.RankStart[r+1]
		p.Calls = int(hi - lo)
		p.Nodes = 2 * p.Calls
		if hi > lo {
			first, last := g.Start[lo], g.End[lo]
			for c := lo; c < hi; c++ {
				first, last = min(first, g.Start[c]), max(last, g.End[c])
			}
			p.ProgramNs = last - first
			// The edges into the rank's vertices [2·lo, 2·hi).
			e0, e1 := g.InStart[2*lo], g.InStart[2*hi]
			p.Edges = int(e1 - e0)
			for e := e0; e < e1; e++ {
				if g.InKind[e] == graph.EdgeProgram {
					p.ComputeNs += g.InWeight[e]
				}
			}
		}
	}
	for k := range g.Colls {
		c := &g.Colls[k]
		post := g.CollPost[c.First : c.First+c.N]
		done := g.CollDone[c.First : c.First+c.N]
		startMax, endMin := int64(-1<<62), int64(1<<62)
		last := 0
		for i := range post {
			if s := g.Start[post[i]]; s > startMax {
				startMax, last = s, i
			}
			endMin = min(endMin, g.End[done[i]])
		}
		in := Instance{Coll: int32(k), Execution: max(0, endMin-startMax), LastRank: g.Rank(post[last])}
		for i := range post {
			r := g.Rank(post[i])
			wb := startMax - g.Start[post[i]]
			wa := max(0, g.End[done[i]]-endMin)
			in.WaitBefore += wb
			in.WaitAfter += wa
			p := &res.Processes[r]
			p.WaitNs += wb + wa
			p.ExecNs += in.Execution
		}
		if in.Execution > 0 {
			in.Imbalance = float64(in.WaitBefore+in.WaitAfter) / float64(in.Execution)
		}
		res.Instances = append(res.Instances, in)
	}
	tot := &res.Program
	tot.Rank = -1
	for r := range res.Processes {
		p := &res.Processes[r]
		if d := p.ExecNs + p.ComputeNs; d > 0 {
			p.Imbalance = float64(p.WaitNs) / float64(d)
		}
		tot.ProgramNs = max(tot.ProgramNs, p.ProgramNs)
		tot.ComputeNs += p.ComputeNs
		tot.ExecNs += p.ExecNs
		tot.WaitNs += p.WaitNs
		tot.Calls += p.Calls
		tot.Nodes += p.Nodes
		tot.Edges += p.Edges
	}
	if d := tot.ExecNs + tot.ComputeNs; d > 0 {
		tot.Imbalance = float64(tot.WaitNs) / float64(d)
	}

	// Per operation and communicator in arrays (communicator -1 first),
	// then in the maps for those that had waits.
	var byOp [256]*Waits
	byComm := make([]*Waits, len(g.Comms)+1)
	rank := 0
	for _, w := range g.Waits {
		comm := w.Comm
		if int(comm)+1 >= len(byComm) {
			byComm = append(byComm, make([]*Waits, int(comm)+2-len(byComm))...)
		}
		op := g.Op[w.Call]
		if byOp[op] == nil {
			byOp[op] = &Waits{}
			res.ByOp[op] = byOp[op]
		}
		if byComm[comm+1] == nil {
			byComm[comm+1] = &Waits{}
			res.ByComm[comm] = byComm[comm+1]
		}
		for w.Call >= g.RankStart[rank+1] || w.Call < g.RankStart[rank] { // Waits are by call
			if w.Call < g.RankStart[rank] {
				rank = 0
			} else {
				rank++
			}
		}
		for _, ws := range [...]*Waits{&res.Waits, &res.ByRank[rank], byOp[op], byComm[comm+1]} {
			ws.Ns[w.Kind] += w.Ns
			if w.WrongOrder {
				ws.WrongOrder += w.Ns
			}
		}
	}
	return res
}
