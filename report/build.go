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
		Unmatched: g.Unmatched, GuessedPairs: g.GuessedPairs, ClockViolations: g.ClockViolations, ClockCorrections: g.ClockCorrections, ClockCorrectionMaxNs: g.ClockShiftMax, RMAEpochPairs: g.EpochPairs, Skipped: g.Notes}
	r.Run.NoGraph = g.CallsOnly
	if r.Run.Skipped == nil {
		r.Run.Skipped = []string{}
	}
	in.callers = newCallerNames(in)
	r.callers, r.Run.CallPaths = in.callers, hasFrames(in.Sites)
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
	if in.Imbalance != nil {
		addImbalance(r, in, calls)
	} else {
		r.Processes, r.Calls = []Process{}, []Collective{}
		r.Waitstates = waitstates(g, &imbalance.Result{})
	}
	if in.Replay != nil {
		r.POP, r.WhatIf = replayed(in.Replay)
	}
	addTraffic(r, g, in.Traffic)
	return r
}

// addImbalance adds the per-process and collectives tables and the wait
// states: with the load-and-build time apportioned to ranks by calls.
func addImbalance(r *Report, in *Input, calls int) {
	g, im := in.PAG, in.Imbalance
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
		LatePostNs: w.Ns[graph.LatePost], EarlyWaitNs: w.Ns[graph.EarlyWait], LateCompleteNs: w.LateComplete, RMAFlushNs: w.RMAFlush}}
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
		row := endRow(s, callers)
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
