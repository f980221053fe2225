package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/traffic"
)

// Computation is the name by_op uses for time outside MPI, Launch for the
// time before a rank's first call.
const (
	Computation = "computation"
	Launch      = "launch"
	launchOp    = 256 // Launch's slot among the operations
)

// Input is everything a report is made of.
type Input struct {
	Dir       string
	PAG       *graph.PAG
	Path      cpath.Path
	Algo      string
	Imbalance *imbalance.Result
	Traffic   *traffic.Result // nil: no communication matrix
	GraphTime time.Duration   // time spent loading and building, apportioned to ranks by calls
	// Names names the call sites (nil: by hexadecimal offsets).
	Names *Symbolizer
	// PathCalls gives the times, operations and call sites of the path's
	// calls: PAG holds only the run's summary (the calls stay with the
	// analyzer ranks that own them).
	PathCalls graph.CallTable
	// Agreement is a heuristic algorithm's agreement with the exact path
	// (share of the path's time attributed to the same rank and segment),
	// negative if not measured.
	Agreement float64
	Analyzer  *AnalyzerStats // nil: one process, whole graph
	// Heuristic, if set, is the path a topological heuristic found, used
	// instead of Path: stretches of computation before a call ('c') and
	// MPI calls ('m'), in time order.
	Heuristic []HeuristicSegment
	// Replay is the POP factors and what-if predictions (nil: none).
	Replay *replay.Result
	// Window, if set, restricts the critical path's segments and profiles
	// to a stretch of the run.
	Window *graph.Window
	// Sites are the logged ranks' call sites with their call paths, by
	// rank (nil: none), and Wrappers the program's MPI wrapper layer to
	// look through in them: the table of the path's computation by call
	// site names the first caller outside it.
	Sites    []graph.SiteTable
	Wrappers Wrappers
	callers  *callerNames
}

// HeuristicSegment is a stretch of a heuristic path (cpath.TopoSegment).
type HeuristicSegment struct {
	Rank       int
	Kind       byte // 'c': computation before Call; 'm': inside Call
	Call       int32
	Start, End int64
}

// Build assembles the report.
func Build(in *Input) *Report {
	g := in.PAG
	r := &Report{RuntimeNs: g.T1 - g.T0}
	calls := int(g.RankStart[g.Ranks])
	r.Run = RunInfo{LogDir: in.Dir, RunID: g.RunID, Ranks: g.Ranks, Calls: calls, CoalescedPolls: g.CoalescedPolls, Messages: g.Messages,
		Unmatched: g.Unmatched, ClockViolations: g.ClockViolations, ClockCorrections: g.ClockCorrections, ClockCorrectionMaxNs: g.ClockShiftMax, RMAEpochPairs: g.EpochPairs, Skipped: g.Notes}
	if r.Run.Skipped == nil {
		r.Run.Skipped = []string{}
	}
	in.callers = newCallerNames(in)
	r.CriticalPath = criticalPath(in)
	if in.Window != nil {
		windowPath(&r.CriticalPath, *in.Window)
	}
	length := r.CriticalPath.LengthNs
	if in.Window != nil { // shares of the path's time inside the window, as windowPath's
		length = 0
		for _, s := range r.CriticalPath.Segments {
			length += s.EndNs - s.StartNs
		}
	}
	r.CriticalPath.ByCallsite = byCallsite(r.CriticalPath.Segments, length, in.callers)
	r.CriticalPath.Stretches = Stretches(r.CriticalPath.Segments)
	unclassified(&r.CriticalPath, in.PathCalls, g.Unwrapped, g.Ranks)
	if r.Run.UnwrappedCalls = g.Unwrapped; r.Run.UnwrappedCalls == nil {
		r.Run.UnwrappedCalls = []graph.UnwrappedCalls{}
	}
	r.CriticalPath.DiffNs = r.CriticalPath.LengthNs - r.RuntimeNs
	if in.Agreement >= 0 && in.Analyzer != nil && in.Analyzer.ExactAlgo != "" {
		a := in.Agreement
		r.CriticalPath.Agreement = &a
	}
	r.CriticalPath.Analyzer = in.Analyzer
	im := in.Imbalance
	total := int64(in.GraphTime)
	for _, p := range im.Processes {
		gt := int64(0)
		if calls > 0 {
			gt = total * int64(p.Calls) / int64(calls)
		}
		r.Processes = append(r.Processes, Process{Rank: p.Rank, ProgramTimeNs: p.ProgramNs, GraphTimeNs: gt,
			TotalTimeNs: p.ProgramNs + gt, TotalExecutionNs: p.ExecNs + p.ComputeNs, TotalWaitNs: p.WaitNs,
			Imbalance: p.Imbalance, NumCalls: p.Calls, NumNodes: p.Nodes, NumEdges: p.Edges, BoundedImbalance: p.Bounded})
	}
	t := im.Program
	r.Totals = Totals{ProgramTimeNs: t.ProgramNs, GraphTimeNs: total, TotalTimeNs: t.ProgramNs + total,
		TotalExecutionNs: t.ExecNs + t.ComputeNs, TotalWaitNs: t.WaitNs, Imbalance: t.Imbalance,
		NumCalls: t.Calls, NumNodes: t.Nodes, NumEdges: t.Edges, BoundedImbalance: t.Bounded}
	r.Calls = make([]Collective, 0, len(im.Instances))
	for _, x := range im.Instances {
		c := &g.Colls[x.Coll]
		r.Calls = append(r.Calls, Collective{Op: c.Op.String(), Comm: g.Comms[c.Comm].Name, Seq: int(c.Seq),
			Members: int(c.N), WaitBeforeNs: x.WaitBefore, WaitAfterNs: x.WaitAfter, ExecutionNs: x.Execution,
			Imbalance: x.Imbalance, LastRank: x.LastRank, Synchronising: x.Synchronising, BoundedImbalance: x.Bounded})
	}
	r.Waitstates = waitstates(g, im)
	if in.Replay != nil {
		r.POP, r.WhatIf = replayed(in.Replay)
	}
	addTraffic(r, g, in.Traffic)
	return r
}

// replayed is the replay's answers as the report gives them.
func replayed(x *replay.Result) (*POP, []WhatIf) {
	factors := func(f *replay.Factors) POPFactors {
		return POPFactors{LoadBalance: f.LoadBalance, CommunicationEfficiency: f.CommunicationEfficiency,
			SerialisationEfficiency: f.SerialisationEfficiency, TransferEfficiency: f.TransferEfficiency,
			ParallelEfficiency: f.ParallelEfficiency, WindowNs: [2]int64{f.From, f.To}, RuntimeNs: f.RuntimeNs,
			IdealRuntimeNs: f.IdealRuntimeNs, UsefulNs: f.UsefulNs, AvgUsefulNs: f.AvgUsefulNs, MaxUsefulNs: f.MaxUsefulNs}
	}
	pop := &POP{POPFactors: factors(&x.POP.Factors), Phases: []POPPhase{}}
	for i := range x.POP.Phases {
		ph := &x.POP.Phases[i]
		pop.Phases = append(pop.Phases, POPPhase{Phase: ph.Index, Level: ph.Level, POPFactors: factors(&ph.Factors)})
	}
	if x.POP.Window != nil {
		f := factors(x.POP.Window)
		pop.Window = &f
	}
	ws := []WhatIf{}
	for _, w := range x.WhatIf {
		wi := WhatIf{Scenario: w.Scenario, Description: w.Description, RuntimeNs: w.RuntimeNs, GainNs: w.GainNs,
			Default: w.Default, Fix: w.Fix, OnPathNs: w.OnPathNs, PathRanks: []RankNs{}, PathOps: []OpNs{}}
		if x.BaselineNs > 0 {
			wi.Gain = float64(w.GainNs) / float64(x.BaselineNs)
		}
		for _, r := range w.Ranks {
			wi.PathRanks = append(wi.PathRanks, RankNs{r.Rank, r.Ns})
		}
		for _, o := range w.Ops {
			wi.PathOps = append(wi.PathOps, OpNs{o.Op, o.Ns})
		}
		ws = append(ws, wi)
	}
	return pop, ws
}

func breakdown(key string, w *imbalance.Waits) WaitBreakdown {
	return WaitBreakdown{Key: key, WaitTimes: WaitTimes{LateSenderNs: w.Ns[graph.LateSender], LateReceiverNs: w.Ns[graph.LateReceiver],
		WrongOrderNs: w.WrongOrder, LateReceiverSynchronousNs: w.LateReceiverBy[graph.RuleSynchronous],
		LateReceiverProgressNs: w.LateReceiverBy[graph.RuleProgress], WaitAtBarrierNs: w.Ns[graph.WaitAtBarrier], WaitAtNxNNs: w.Ns[graph.WaitAtNxN],
		LateBroadcastNs: w.Ns[graph.LateBroadcast], EarlyReduceNs: w.Ns[graph.EarlyReduce], WaitAtFenceNs: w.Ns[graph.WaitAtFence],
		PartitionedLateSenderNs: w.Partitioned[graph.LateSender], PartitionedLateReceiverNs: w.Partitioned[graph.LateReceiver],
		LatePostNs: w.Ns[graph.LatePost], EarlyWaitNs: w.Ns[graph.EarlyWait], LateCompleteNs: w.LateComplete}}
}

func waitstates(g *graph.PAG, im *imbalance.Result) Waitstates {
	t := breakdown("", &im.Waits)
	ws := Waitstates{WaitTimes: t.WaitTimes, ByRank: []WaitBreakdown{}, ByOp: []WaitBreakdown{}, ByComm: []WaitBreakdown{},
		ByPartition: []PartitionWaits{}}
	for _, w := range im.Partitions {
		ws.ByPartition = append(ws.ByPartition, PartitionWaits{Partition: int(w.Partition), Transfers: w.Transfers,
			Parrived: w.Parrived, LateSenderNs: w.LateSenderNs})
	}
	for rank := range im.ByRank {
		ws.ByRank = append(ws.ByRank, breakdown(strconv.Itoa(rank), &im.ByRank[rank]))
	}
	ops := make([]trace.Op, 0, len(im.ByOp))
	for op := range im.ByOp {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		ws.ByOp = append(ws.ByOp, breakdown(op.String(), im.ByOp[op]))
	}
	comms := make([]int32, 0, len(im.ByComm))
	for c := range im.ByComm {
		comms = append(comms, c)
	}
	slices.Sort(comms)
	for _, c := range comms {
		name := "(none)"
		if c >= 0 {
			name = g.Comms[c].Name
		}
		ws.ByComm = append(ws.ByComm, breakdown(name, im.ByComm[c]))
	}
	return ws
}

// criticalPath turns the path's vertices into segments and profiles.
func criticalPath(in *Input) CriticalPath {
	g := in.PAG
	pc := in.PathCalls
	cp := CriticalPath{Algo: in.Algo, LengthNs: in.Path.Length, Segments: make([]Segment, 0, max(0, len(in.Path.Vertices)-1))}
	byRank := make([]RankShare, g.Ranks)
	for i := range byRank {
		byRank[i].Rank = i
	}
	type opAcc struct {
		ns    int64
		count int
	}
	byOp := map[string]*opAcc{}
	var opAccs [257]*opAcc // by operation; computation is opAccs[0] (OpInvalid), launch opAccs[256]
	acc := func(op int, ns int64) {
		a := opAccs[op]
		if a == nil {
			name := Computation
			switch op {
			case launchOp:
				name = Launch
			case int(trace.OpInvalid):
			default:
				name = trace.Op(op).String()
			}
			if a = byOp[name]; a == nil {
				a = &opAcc{}
				byOp[name] = a
			}
			opAccs[op] = a
		}
		a.ns += ns
		a.count++
	}
	// The path stays on a rank for long stretches: look ranks up from the
	// last one.
	rank := 0
	rankOf := func(c int32) int {
		if c < g.RankStart[rank] || c >= g.RankStart[rank+1] {
			rank = g.Rank(c)
		}
		return rank
	}
	// A run has few call sites: name each once.
	sites := map[[2]uint64]siteName{}
	name := func(seg *Segment, ci *graph.CallInfo) {
		k := [2]uint64{uint64(seg.Rank), ci.CallSite}
		n, ok := sites[k]
		if !ok {
			n.site, n.function = in.site(seg.Rank, ci.CallSite)
			sites[k] = n
		}
		seg.Callsite, seg.Function = n.site, n.function
		seg.caller = in.callers.of(seg.Rank, ci.Site) + 1
	}
	for _, h := range in.Heuristic {
		ci := pc.At(h.Call)
		op := ci.Op
		seg := Segment{Rank: h.Rank, Op: op.String(), StartNs: h.Start - g.T0, EndNs: h.End - g.T0}
		name(&seg, &ci)
		seg.Vertex = 2 * h.Call
		if h.Kind != 'c' {
			seg.Vertex++ // E(Call)
		}
		ns := h.End - h.Start
		if h.Kind == 'c' {
			seg.Kind = "compute"
			byRank[h.Rank].ComputeNs += ns
			acc(int(trace.OpInvalid), ns)
		} else if op.IsIO() || ci.FileIO {
			seg.Kind = "io"
			byRank[h.Rank].IONs += ns
			acc(int(op), ns)
		} else {
			seg.Kind = "mpi"
			byRank[h.Rank].MPINs += ns
			acc(int(op), ns)
		}
		cp.Segments = append(cp.Segments, seg)
	}
	// The path's vertices but its hubs: a hub joins the start of the
	// last member to arrive with each member's end, so the stretch
	// across it is one.
	type pv struct {
		call int32
		kind graph.VertexKind
	}
	vs := make([]pv, 0, len(in.Path.Vertices))
	for _, v := range in.Path.Vertices {
		if c, kind := g.Vertex(v); kind != graph.VertexHub {
			vs = append(vs, pv{c, kind})
		}
	}
	time := func(x pv, info *graph.CallInfo) int64 {
		switch x.kind {
		case graph.VertexStart:
			return info.Start
		case graph.VertexEnd:
			return info.End
		}
		return g.T0
	}
	// Each vertex's call looked up once: u's is the previous v's.
	var infoU, infoV graph.CallInfo
	if len(vs) > 0 {
		infoV = pc.At(vs[0].call)
	}
	for i := 1; i < len(vs); i++ {
		u, v := vs[i-1], vs[i]
		infoU, infoV = infoV, pc.At(v.call)
		rv := rankOf(v.call)
		op := infoV.Op
		tu, tv := time(u, &infoU), time(v, &infoV)
		seg := Segment{Rank: rv, Op: op.String(), StartNs: tu - g.T0, EndNs: tv - g.T0, Vertex: 2*v.call + int32(v.kind)}
		name(&seg, &infoV)
		ns := tv - tu
		switch {
		case u.kind == graph.VertexRun: // the run's start → the thread's first call
			seg.Kind = "launch"
			byRank[rv].LaunchNs += ns
			acc(launchOp, ns)
		case rankOf(u.call) != rv && (op.IsIO() || infoV.FileIO):
			// A collective file operation after its last member arrived:
			// the member's I/O (its part, or the part it waits for), not
			// a message's transfer.
			seg.Kind = "io"
			byRank[rv].IONs += ns
			acc(int(op), ns)
		case rankOf(u.call) != rv && op.IsWorldBarrier():
			// MPI_Init after its last rank arrived: MPI's start-up, not a
			// message's transfer.
			seg.Kind = "mpi"
			byRank[rv].MPINs += ns
			acc(int(op), ns)
		case rankOf(u.call) != rv:
			seg.Kind = "transfer"
			byRank[rv].TransferNs += ns
			acc(int(op), ns)
		case u.kind == graph.VertexEnd: // E(c) → S(next): between calls
			seg.Kind = "compute"
			byRank[rv].ComputeNs += ns
			acc(int(trace.OpInvalid), ns)
		case op.IsIO() || infoV.FileIO:
			seg.Kind = "io" // MPI-IO, or a completion of file requests
			byRank[rv].IONs += ns
			acc(int(op), ns)
		default:
			seg.Kind = "mpi"
			byRank[rv].MPINs += ns
			acc(int(op), ns)
		}
		cp.Segments = append(cp.Segments, seg)
	}
	for i := range byRank {
		b := &byRank[i]
		if cp.LengthNs > 0 {
			b.Share = float64(b.LaunchNs+b.ComputeNs+b.MPINs+b.IONs+b.TransferNs) / float64(cp.LengthNs)
		}
	}
	cp.ByRank = byRank
	for op, a := range byOp {
		s := OpShare{Op: op, Ns: a.ns, Count: a.count}
		if cp.LengthNs > 0 {
			s.Share = float64(a.ns) / float64(cp.LengthNs)
		}
		cp.ByOp = append(cp.ByOp, s)
	}
	sortByOp(cp.ByOp)
	if cp.ByOp == nil {
		cp.ByOp = []OpShare{}
	}
	return cp
}

// byCallsite sums the path's computation by rank and the place each
// stretch ends at: the call's caller outside the program's MPI wrapper
// layer where the call paths name one, else the call's site; longest
// first.
func byCallsite(segs []Segment, length int64, callers *callerNames) []CallsiteShare {
	type place struct {
		rank               int
		callsite, function string
	}
	at := map[place]int{}
	out := []CallsiteShare{}
	for i := range segs {
		s := &segs[i]
		if s.Kind != "compute" {
			continue
		}
		row := CallsiteShare{Rank: s.Rank, Callsite: s.Callsite, Function: s.Function}
		if s.caller > 0 {
			c := &callers.list[s.caller-1]
			row.Callsite, row.Function, row.Via, row.DepthReached = c.site, c.function, c.via, c.depth
		}
		k := place{s.Rank, row.Callsite, row.Function}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, row)
		}
		c := &out[j]
		c.Ns += s.EndNs - s.StartNs
		c.Stretches++
		if !slices.Contains(c.Ops, s.Op) {
			c.Ops = append(c.Ops, s.Op)
		}
	}
	for i := range out {
		slices.Sort(out[i].Ops)
		if length > 0 {
			out[i].Share = float64(out[i].Ns) / float64(length)
		}
	}
	slices.SortFunc(out, func(a, b CallsiteShare) int {
		if a.Ns != b.Ns {
			return cmp.Compare(b.Ns, a.Ns)
		}
		if a.Rank != b.Rank {
			return cmp.Compare(a.Rank, b.Rank)
		}
		return strings.Compare(a.Callsite+a.Function, b.Callsite+b.Function)
	})
	return out
}

// sortByOp orders by_op by time, longest first, then by name.
func sortByOp(ops []OpShare) {
	slices.SortFunc(ops, func(a, b OpShare) int {
		if a.Ns != b.Ns {
			if a.Ns > b.Ns {
				return -1
			}
			return 1
		}
		if a.Op < b.Op {
			return -1
		}
		return 1
	})
}
