// Package imbalance computes what the run loses to imbalance: the paper's
// per-call, per-process and program imbalance (§5.2) over collective
// instances, and Scalasca's wait states from the waits the PAG records,
// by rank, operation and communicator.
//
// The paper's imbalance, waiting ÷ execution, is unbounded (an instance
// where no member overlapped all others has no execution and shows 0), and
// its barrier formulas charge every member of a rooted operation with
// waiting for the last one to arrive, which a Bcast's root never does.
// Alongside it, each instance and process gets a bounded share,
// waiting ÷ (waiting + execution) in [0, 1], whose waiting follows the
// operation's data flow: the barrier formulas for the operations where
// everyone needs everyone (graph.Synchronising), the wait for the root
// (Bcast, Scatter), of the root for the last member (Reduce, Gather), or
// for the members before (Scan, Exscan) otherwise.
package imbalance

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// Instance is the imbalance of one collective instance. WaitBefore and
// WaitAfter are summed over its members. Results ship it as its memory
// (wire.go): 80 bytes, no padding.
type Instance struct {
	Coll       int32 // index in PAG.Colls
	_          int32
	WaitBefore int64 // Σ t_start_max - t_start[r]
	WaitAfter  int64 // Σ t_end[r] - t_end_min
	Execution  int64 // t_end_min - t_start_max, 0 when no member overlapped all others
	Imbalance  float64
	LastRank   int // the member that started last

	// The bounded share: Waiting ÷ (Waiting + Executing), 1 when only
	// waiting. Synchronising instances: Waiting = WaitBefore + WaitAfter,
	// Executing = Execution × members (each member's time in the
	// collective, less its waits). Others: Waiting is Σ each member's wait
	// for its data-flow causes (at most its time in the call), Executing
	// the rest of the members' time in the call.
	Synchronising bool
	_             [7]byte
	Waiting       int64
	Executing     int64
	Bounded       float64
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

	// The bounded share: BoundedWaitNs ÷ (BoundedWaitNs + BoundedExecNs),
	// over the rank's collective instances as Instance counts them, plus
	// its computation (ComputeNs) as execution.
	BoundedWaitNs int64
	BoundedExecNs int64
	Bounded       float64
}

// Bounded is waiting ÷ (waiting + execution): 0 with neither, 1 with only
// waiting.
func Bounded(waiting, execution int64) float64 {
	if waiting <= 0 {
		return 0
	}
	return float64(waiting) / float64(waiting+max(0, execution))
}

// Waits are wait-state times in ns, indexed by graph.WaitKind, with
// WrongOrder the part of Late Sender on messages received in the wrong
// order and LateReceiverBy Late Receiver by the rule that decided it.
type Waits struct {
	Ns             [graph.NumWaitKinds]int64
	WrongOrder     int64
	LateReceiverBy [graph.NumWaitRules]int64
	// Partitioned is the part of Ns in partitioned communication (MPI 4):
	// Late Sender for an MPI_Pready*, Late Receiver for a receive's start.
	Partitioned [graph.NumWaitKinds]int64
	// LateComplete is the part of Ns[graph.EarlyWait] that Scalasca calls
	// Late Complete (graph.PAG.LateComplete).
	LateComplete int64
	// RMAFlush is the time in MPI_Win_flush and its forms (trace.Op's
	// IsRMAFlush): waiting for the window's one-sided operations to
	// complete, at their targets or locally, which the logs hold no
	// partner event of.
	RMAFlush int64
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
	// Partitions is the partitioned Late Sender time by receive
	// partition (graph.PAG.PartitionWaits, summed over the parts).
	Partitions []graph.PartitionWait
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
	var order []int32
	pos := map[int32][]int32{} // by communicator: each world rank's local rank, for Scan and Exscan
	var nb *graph.InNeighbors  // neighbourhood collectives
	var wr []int32
	var latestIn []int64
	for k := range p.Colls {
		c := &p.Colls[k]
		if c.NoData {
			continue // it ordered nothing: no waiting to measure
		}
		rk = rk[:0]
		for m := c.First; m < c.First+c.N; m++ {
			rk = append(rk, p.Rank(p.CollPost[m]))
		}
		order = order[:0]
		if c.Op.Flow().Prefix() {
			lr := pos[c.Comm]
			if lr == nil {
				lr = make([]int32, p.Ranks)
				for i, w := range p.Comms[c.Comm].Members {
					if int(w) < len(lr) {
						lr[w] = int32(i)
					}
				}
				pos[c.Comm] = lr
			}
			for _, r := range rk {
				order = append(order, lr[r])
			}
		}
		m := member{c.Op, c.Root, p.PostStart[c.First : c.First+c.N], p.DoneEnd[c.First : c.First+c.N], rk, order, nil}
		if c.Op.IsNeighbor() {
			if nb == nil {
				nb = graph.NewInNeighbors(p.Ranks, p.Comms)
			}
			wr = wr[:0]
			for _, r := range rk {
				wr = append(wr, int32(r))
			}
			latestIn = latestIn[:0]
			for range rk {
				latestIn = append(latestIn, -1<<62)
			}
			nb.Each(c.Comm, wr, func(i, j int) { latestIn[i] = max(latestIn[i], m.postStart[j]) })
			m.latestIn = latestIn
		}
		res.addInstance(int32(k), m)
	}
	res.addWaits(p.Waits, p.LateComplete, p.Op, p.CallLo, p.RankStart)
	res.addFlushes(p)
	res.addPartitions(p.PartitionWaits)
	return res
}

// addFlushes adds the time of the owned calls of MPI_Win_flush and its
// forms (Waits.RMAFlush), per rank, operation and communicator.
func (res *Result) addFlushes(p *graph.PAG) {
	for r := p.RankLo; r < p.RankHi; r++ {
		for l := p.RankStart[r] - p.CallLo; l < p.RankStart[r+1]-p.CallLo; l++ {
			o := p.Op[l]
			if !o.IsRMAFlush() {
				continue
			}
			ns := p.End[l] - p.Start[l]
			if res.ByOp[o] == nil {
				res.ByOp[o] = &Waits{}
			}
			bc := res.ByComm[p.Comm[l]]
			if bc == nil {
				bc = &Waits{}
				res.ByComm[p.Comm[l]] = bc
			}
			for _, ws := range [...]*Waits{&res.Waits, &res.ByRank[r], res.ByOp[o], bc} {
				ws.RMAFlush += ns
			}
		}
	}
}

// addPartitions sums partition waits into res.Partitions, by partition.
func (res *Result) addPartitions(ps []graph.PartitionWait) {
	for len(res.Partitions) < len(ps) {
		res.Partitions = append(res.Partitions, graph.PartitionWait{Partition: int32(len(res.Partitions))})
	}
	for j, w := range ps {
		a := &res.Partitions[j]
		a.Transfers += w.Transfers
		a.Parrived += w.Parrived
		a.LateSenderNs += w.LateSenderNs
	}
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
			a.BoundedWaitNs += b.BoundedWaitNs
			a.BoundedExecNs += b.BoundedExecNs
			res.ByRank[r].add(&s.ByRank[r])
		}
		for _, in := range s.Instances {
			in.Coll += offsets[i]
			res.Instances = append(res.Instances, in)
		}
		res.Waits.add(&s.Waits)
		res.addPartitions(s.Partitions)
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
	for k := range w.Partitioned {
		w.Partitioned[k] += o.Partitioned[k]
	}
	for r := range w.LateReceiverBy {
		w.LateReceiverBy[r] += o.LateReceiverBy[r]
	}
	w.LateComplete += o.LateComplete
	w.RMAFlush += o.RMAFlush
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
func (res *Result) addCalls(r int, lo, hi int32, start, end []int64, inStart []int32, inWeight graph.Weights, inKind []graph.EdgeKind) {
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
			p.ComputeNs += inWeight.At(e)
		}
	}
}

// member is what addInstance takes of a collective instance: its
// operation and root (world rank, -1 for none), and by member its post
// call's start, completing call's end, world rank and, for Scan and
// Exscan, its rank in the communicator (empty otherwise).
type member struct {
	op        trace.Op
	root      int32
	postStart []int64
	doneEnd   []int64
	rank      []int
	local     []int32
	latestIn  []int64 // neighbourhood collectives: the latest start among each member's in-neighbours
}

// addInstance adds collective instance k: the paper's figures, by the
// barrier formulas, and the bounded share, by the operation's data flow.
func (res *Result) addInstance(k int32, m member) {
	postStart, doneEnd, rank := m.postStart, m.doneEnd, m.rank
	startMax, endMin := int64(-1<<62), int64(1<<62)
	last := 0
	for i := range postStart {
		if s := postStart[i]; s > startMax {
			startMax, last = s, i
		}
		endMin = min(endMin, doneEnd[i])
	}
	in := Instance{Coll: k, Execution: max(0, endMin-startMax), LastRank: rank[last], Synchronising: graph.Synchronising(m.op)}
	for i := range postStart {
		wb := startMax - postStart[i]
		wa := max(0, doneEnd[i]-endMin)
		in.WaitBefore += wb
		in.WaitAfter += wa
		p := &res.Processes[rank[i]]
		p.WaitNs += wb + wa
		p.ExecNs += in.Execution
		if in.Synchronising {
			p.BoundedWaitNs += wb + wa
			p.BoundedExecNs += in.Execution
			continue
		}
		w := flowWait(&m, i)
		in.Waiting += w
		in.Executing += doneEnd[i] - postStart[i] - w
		p.BoundedWaitNs += w
		p.BoundedExecNs += doneEnd[i] - postStart[i] - w
	}
	if in.Execution > 0 {
		in.Imbalance = float64(in.WaitBefore+in.WaitAfter) / float64(in.Execution)
	}
	if in.Synchronising {
		in.Waiting = in.WaitBefore + in.WaitAfter
		in.Executing = in.Execution * int64(len(postStart))
	}
	in.Bounded = Bounded(in.Waiting, in.Executing)
	res.Instances = append(res.Instances, in)
}

// flowWait is how long member i of a non-synchronising instance waited
// for its data-flow causes: from its start to the latest start among them,
// at most its time in the call. A Bcast's or Scatter's members wait for the
// root, a Reduce's or Gather's root for the last member, a Scan's member
// for those up to it, an Exscan's for those before it, a neighbourhood
// collective's for its in-neighbours.
func flowWait(m *member, i int) int64 {
	latest := int64(-1 << 62)
	switch {
	case m.op.IsNeighbor():
		latest = m.latestIn[i]
	case m.op.Flow().Prefix():
		excl := m.op.Flow() == trace.FlowExscan
		for j := range m.postStart {
			if m.local[j] < m.local[i] || (!excl && j == i) {
				latest = max(latest, m.postStart[j])
			}
		}
	default:
		rooted := m.root >= 0
		isRoot := rooted && int32(m.rank[i]) == m.root
		toRoot := graph.ReducesToRoot(m.op)
		for j := range m.postStart {
			jRoot := rooted && int32(m.rank[j]) == m.root
			if (toRoot && isRoot && !jRoot) || (!toRoot && !isRoot && jRoot) {
				latest = max(latest, m.postStart[j])
			}
		}
	}
	return min(max(0, latest-m.postStart[i]), max(0, m.doneEnd[i]-m.postStart[i]))
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
		p.Bounded = Bounded(p.BoundedWaitNs, p.BoundedExecNs+p.ComputeNs)
		tot.ProgramNs = max(tot.ProgramNs, p.ProgramNs)
		tot.ComputeNs += p.ComputeNs
		tot.ExecNs += p.ExecNs
		tot.WaitNs += p.WaitNs
		tot.Calls += p.Calls
		tot.Nodes += p.Nodes
		tot.Edges += p.Edges
		tot.BoundedWaitNs += p.BoundedWaitNs
		tot.BoundedExecNs += p.BoundedExecNs
	}
	if d := tot.ExecNs + tot.ComputeNs; d > 0 {
		tot.Imbalance = float64(tot.WaitNs) / float64(d)
	}
	tot.Bounded = Bounded(tot.BoundedWaitNs, tot.BoundedExecNs+tot.ComputeNs)
}

// addWaits adds the wait states of waits, whose calls are at op[call-base],
// per rank, operation and communicator; lateComplete (by call, as waits)
// the Late Complete parts of their Early Waits.
func (res *Result) addWaits(waits []graph.Wait, lateComplete []graph.CallNs, op []trace.Op, base int32, rankStart []int32) {
	var byOp [256]*Waits
	rank := 0
	for _, w := range waits {
		var lc int64
		for len(lateComplete) > 0 && lateComplete[0].Call <= w.Call {
			if lateComplete[0].Call == w.Call {
				lc = lateComplete[0].Ns
			}
			lateComplete = lateComplete[1:]
		}
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
			if w.Partitioned {
				ws.Partitioned[w.Kind] += w.Ns
			}
			ws.LateComplete += lc
		}
	}
}
