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
// order and LateReceiverBy Late Receiver by the rule that decided it.
type Waits struct {
	Ns             [graph.NumWaitKinds]int64
	WrongOrder     int64
	LateReceiverBy [graph.NumWaitRules]int64
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

// Analyze computes one analyzer rank's share of the analysis of the PAG:
// its ranks' processes, its coordinated collective instances (their Coll
// indices are into p.Colls) and its calls' waits. Merge the shares of all
// ranks with Merge (one process: a share of one).
func Analyze(p *graph.PAG) *Result {
	res := newResult(p.Ranks)
	for r := p.RankLo; r < p.RankHi; r++ {
		res.addCalls(r, p.RankStart[r]-p.CallLo, p.RankStart[r+1]-p.CallLo, p.Start, p.End, p.InStart, p.InWeight, p.InKind)
	}
	var rk []int
	for k := range p.Colls {
		c := &p.Colls[k]
		rk = rk[:0]
		for m := c.First; m < c.First+c.N; m++ {
			rk = append(rk, p.Rank(p.CollPost[m]))
		}
		res.addInstance(int32(k), p.PostStart[c.First:c.First+c.N], p.DoneEnd[c.First:c.First+c.N], rk)
	}
	res.addWaits(p.Waits, p.Op, p.CallLo, p.RankStart)
	return res
}

// Merge sums the shares of the analyzer ranks (AnalyzePart) into the
// analysis of the run. Instances are renumbered in the order of shares;
// offsets[i] is what share i's Coll indices are shifted by.
func Merge(shares []*Result, offsets []int32) *Result {
	res := newResult(len(shares[0].Processes))
	for i, s := range shares {
		for r := range s.Processes {
			a, b := &res.Processes[r], &s.Processes[r]
			a.ProgramNs += b.ProgramNs
			a.ComputeNs += b.ComputeNs
			a.ExecNs += b.ExecNs
			a.WaitNs += b.WaitNs
			a.Calls += b.Calls
			a.Nodes += b.Nodes
			a.Edges += b.Edges
			res.ByRank[r].add(&s.ByRank[r])
		}
		for _, in := range s.Instances {
			in.Coll += offsets[i]
			res.Instances = append(res.Instances, in)
		}
		res.Waits.add(&s.Waits)
		for op, w := range s.ByOp {
			if res.ByOp[op] == nil {
				res.ByOp[op] = &Waits{}
			}
			res.ByOp[op].add(w)
		}
		for c, w := range s.ByComm {
			if res.ByComm[c] == nil {
				res.ByComm[c] = &Waits{}
			}
			res.ByComm[c].add(w)
		}
	}
	res.finish()
	return res
}

func (w *Waits) add(o *Waits) {
	for k := range w.Ns {
		w.Ns[k] += o.Ns[k]
	}
	w.WrongOrder += o.WrongOrder
	for r := range w.LateReceiverBy {
		w.LateReceiverBy[r] += o.LateReceiverBy[r]
	}
}

func newResult(ranks int) *Result {
	res := &Result{Processes: make([]Process, ranks), ByRank: make([]Waits, ranks),
		ByOp: map[trace.Op]*Waits{}, ByComm: map[int32]*Waits{}}
	for r := range res.Processes {
		res.Processes[r].Rank = r
	}
	return res
}

// addCalls fills rank r's row from its calls [lo, hi) (indices into the
// arrays given: a PAG's, or a part's with local numbers) and the edges
// into their vertices.
func (res *Result) addCalls(r int, lo, hi int32, start, end []int64, inStart []int32, inWeight []int64, inKind []graph.EdgeKind) {
	p := &res.Processes[r]
	p.Calls = int(hi - lo)
	p.Nodes = 2 * p.Calls
	if hi <= lo {
		return
	}
	first, last := start[lo], end[lo]
	for c := lo; c < hi; c++ {
		first, last = min(first, start[c]), max(last, end[c])
	}
	p.ProgramNs = last - first
	// The edges into the rank's vertices [2·lo, 2·hi).
	e0, e1 := inStart[2*lo], inStart[2*hi]
	p.Edges = int(e1 - e0)
	for e := e0; e < e1; e++ {
		if inKind[e] == graph.EdgeProgram {
			p.ComputeNs += inWeight[e]
		}
	}
}

// addInstance adds collective instance k from its members' post starts,
// completion ends and ranks.
func (res *Result) addInstance(k int32, postStart, doneEnd []int64, rank []int) {
	startMax, endMin := int64(-1<<62), int64(1<<62)
	last := 0
	for i := range postStart {
		if s := postStart[i]; s > startMax {
			startMax, last = s, i
		}
		endMin = min(endMin, doneEnd[i])
	}
	in := Instance{Coll: k, Execution: max(0, endMin-startMax), LastRank: rank[last]}
	for i := range postStart {
		wb := startMax - postStart[i]
		wa := max(0, doneEnd[i]-endMin)
		in.WaitBefore += wb
		in.WaitAfter += wa
		p := &res.Processes[rank[i]]
		p.WaitNs += wb + wa
		p.ExecNs += in.Execution
	}
	if in.Execution > 0 {
		in.Imbalance = float64(in.WaitBefore+in.WaitAfter) / float64(in.Execution)
	}
	res.Instances = append(res.Instances, in)
}

// finish computes the ratios and the totals row.
func (res *Result) finish() {
	tot := &res.Program
	*tot = Process{Rank: -1}
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
}

// addWaits adds the wait states of waits, whose calls are at op[call-base],
// per rank, operation and communicator.
func (res *Result) addWaits(waits []graph.Wait, op []trace.Op, base int32, rankStart []int32) {
	var byOp [256]*Waits
	rank := 0
	for _, w := range waits {
		o := op[w.Call-base]
		if byOp[o] == nil {
			if byOp[o] = res.ByOp[o]; byOp[o] == nil {
				byOp[o] = &Waits{}
				res.ByOp[o] = byOp[o]
			}
		}
		bc := res.ByComm[w.Comm]
		if bc == nil {
			bc = &Waits{}
			res.ByComm[w.Comm] = bc
		}
		for w.Call >= rankStart[rank+1] || w.Call < rankStart[rank] { // Waits are by call
			if w.Call < rankStart[rank] {
				rank = 0
			} else {
				rank++
			}
		}
		for _, ws := range [...]*Waits{&res.Waits, &res.ByRank[rank], byOp[o], bc} {
			ws.Ns[w.Kind] += w.Ns
			if w.WrongOrder {
				ws.WrongOrder += w.Ns
			}
			if w.Kind == graph.LateReceiver {
				ws.LateReceiverBy[w.Rule] += w.Ns
			}
		}
	}
}
