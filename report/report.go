// Package report turns an analysed run (the PAG from graph/, the critical
// path from cpath/, the metrics from imbalance/) into what people read: the
// text report, the JSON report whose keys SPEC §4 fixes, and the DOT graph.
package report

import "github.com/cpath/cpath/graph"

// Report is the analysis of one run. Its JSON keys are a stable interface
// (SPEC §4): add keys, never rename or remove them.
type Report struct {
	RuntimeNs    int64        `json:"runtime_ns"` // earliest first event to latest last event, global clock
	CriticalPath CriticalPath `json:"critical_path"`
	Processes    []Process    `json:"processes"`
	Totals       Totals       `json:"totals"`
	Calls        []Collective `json:"calls"`
	Waitstates   Waitstates   `json:"waitstates"`
	Run          RunInfo      `json:"run"`
	POP          *POP         `json:"pop"`     // null when the run was not replayed
	WhatIf       []WhatIf     `json:"what_if"` // the what-if scenarios, the default ones included

	// Who talks to whom (package traffic).
	CommMatrix    CommMatrix     `json:"comm_matrix"`
	Communicators []Communicator `json:"communicators"`
	MessageSizes  MessageSizes   `json:"message_sizes"`
	callers       *callerNames   // the callers the segments name (Segment.caller)
}

// RunInfo says what was analysed and what had to be skipped or corrected.
// NoGraphNote is what the report says of an analysis without the graph
// (RunInfo.NoGraph): what its path is, and what it leaves out.
const NoGraphNote = "no graph built (the paper's topological heuristic, §4.5): the path is from the calls' intervals on the logs' synchronised clocks, with no clock correction; wait states, the collectives, traffic and per-process tables, POP factors and what-if need the graph (--compare-exact builds it, with the exact path to compare)"

type RunInfo struct {
	LogDir string `json:"log_dir"`
	RunID  string `json:"run_id"`
	Ranks  int    `json:"ranks"`
	// Calls are the calls the analysis took, a run of unproductive polls
	// (MPI_Test…, MPI_Iprobe that found nothing) as one, as the logger
	// wrote it; CoalescedPolls the calls such runs stand for besides:
	// the run made Calls + CoalescedPolls MPI calls, cpath info's count.
	Calls          int   `json:"calls"`
	CoalescedPolls int64 `json:"coalesced_polls"`
	// CallPaths: the logs hold call paths (CPATH_CALLDEPTH), which
	// by_callsite looks through the program's MPI wrapper layer with.
	CallPaths bool `json:"call_paths"`
	// NoGraph says that the analysis built no graph (a topological
	// heuristic without --compare-exact): messages are not matched, and
	// the tables that need the graph are empty (NoGraphNote).
	NoGraph   bool `json:"no_graph,omitempty"`
	Messages  int  `json:"messages"`  // matched point-to-point messages
	Unmatched int  `json:"unmatched"` // sends or receives without a partner in the logs
	// GuessedPairs counts the messages between threads that called MPI at
	// once whose partner the logs do not decide (graph.PAG.GuessedPairs).
	GuessedPairs    int `json:"guessed_pairs,omitempty"`
	ClockViolations int `json:"clock_violations"` // receives that ended before their send started, corrected
	// ClockCorrections counts the dependencies that ran backwards on the
	// synchronised clocks (a call ended before something it needed
	// started: any kind, clock_violations' included), by at most
	// ClockCorrectionMaxNs. The analysis moved those calls later, and what
	// followed them: its times are then later than the logs'.
	ClockCorrections     int64    `json:"clock_corrections"`
	ClockCorrectionMaxNs int64    `json:"clock_correction_max_ns"`
	RMAEpochPairs        int      `json:"rma_epoch_pairs"`   // matched general active target epochs: (exposure, access) pairs of a target and an origin
	Skipped              []string `json:"skipped,omitempty"` // what an incomplete run could not analyse
	// UnwrappedCalls are the calls of MPI functions that block,
	// synchronise or communicate but that the logger does not record,
	// counted by the logger; empty when the run made none.
	UnwrappedCalls []graph.UnwrappedCalls `json:"unwrapped_calls"`
}

// CriticalPath is the longest path to the run's last event.
type CriticalPath struct {
	Algo     string `json:"algo"`
	LengthNs int64  `json:"length_ns"`
	// DiffNs is LengthNs - RuntimeNs: clock error only (the path starts at
	// the run's start, through the launch of the rank it runs on first).
	DiffNs int64 `json:"diff_ns"`
	// Stretches are the path's runs on one rank: its consecutive
	// segments on a rank, merged. The JSON holds them, and Segments only
	// when asked (WriteJSON's full): a segment is about 130 bytes, and a
	// path crosses ranks far less often than it enters a call.
	Stretches []PathStretch `json:"stretches"`
	Segments  []Segment     `json:"segments,omitempty"`
	ByRank    []RankShare   `json:"by_rank"`
	ByOp      []OpShare     `json:"by_op"`
	// ByCallsite is the path's computation by rank and the call that
	// ends it, longest first: which stretch of which rank's code bounds
	// the run.
	ByCallsite []CallsiteShare `json:"by_callsite"`
	// WindowNs is the window ([from, to], ns since the run's start) that
	// --from/--to restrict the segments and profiles to; absent for the
	// whole run.
	WindowNs []int64 `json:"window_ns,omitempty"`
	// Agreement is set for the topological heuristics (topo,
	// topo-shuffle): the share of the exact critical path's time that the
	// heuristic attributes to the same rank and the same segment (the same
	// computation between two calls, or the same MPI call).
	Agreement *float64 `json:"agreement,omitempty"`
	// Analyzer says how the path was found when the analyzer ran as an
	// MPI job or used a distributed algorithm.
	Analyzer *AnalyzerStats `json:"analyzer,omitempty"`
	// UnclassifiedNs is the path's time inside MPI calls the analysis has
	// no model for (report.Unclassified: MPI_Init, MPI_Finalize, …, and
	// blocking Waits that completed no request the logs hold), by
	// operation in UnclassifiedByOp.
	UnclassifiedNs   int64     `json:"unclassified_ns"`
	UnclassifiedByOp []OpShare `json:"unclassified_by_op"`
	// UnwrappedBoundNs bounds the path's computation that may be time in
	// MPI calls the logger counted but did not record (RunInfo's
	// unwrapped_calls): over ranks, the lesser of the path's computation
	// on the rank and the rank's time in those calls.
	UnwrappedBoundNs int64 `json:"unwrapped_bound_ns"`
}

// AnalyzerStats is the work of a distributed analysis.
type AnalyzerStats struct {
	Ranks      int   `json:"ranks"`       // analyzer ranks
	Rounds     int64 `json:"rounds"`      // the algorithm's exchange rounds
	BytesSent  int64 `json:"bytes_sent"`  // bytes shipped between analyzer ranks by the algorithm, all ranks
	RawBytes   int64 `json:"raw_bytes"`   // topo-shuffle --compress: the shuffled bytes before compression
	BuildBytes int64 `json:"build_bytes"` // bytes shipped to build the distributed graph, all ranks
	Splits     int   `json:"splits"`      // split: the parts the graph was cut into
	// Relaxations is the edges the algorithm examined, Edges the edges of
	// the graph: their ratio is the work per edge (1 for dag).
	Relaxations        int64   `json:"relaxations"`
	Edges              int64   `json:"edges"`
	RelaxationsPerEdge float64 `json:"relaxations_per_edge"`
	ExactAlgo          string  `json:"exact_algo,omitempty"` // the exact algorithm agreement was measured against
	// Frames is whether dag and the replay swept the rows redistributed
	// by frame (--frames) rather than each rank's part in rounds.
	Frames bool `json:"frames,omitempty"`
}

// Segment is a stretch of the critical path on one rank.
type Segment struct {
	Rank     int    `json:"rank"`
	Kind     string `json:"kind"` // "launch" (before a rank's first call), "compute" (between calls), "mpi" (inside a call), "io" (inside an MPI-IO call, or a Wait/Test completing file requests), "transfer" (to another rank)
	Op       string `json:"op"`   // the MPI call (compute: the call that ends the stretch)
	StartNs  int64  `json:"start_ns"`
	EndNs    int64  `json:"end_ns"`
	Callsite string `json:"callsite"` // "file.c:42" (DWARF), "function+0x1a" (ELF symbols), "libx.so+0x1234" (a module without either), "0x4011d6" (no module known)
	Function string `json:"function"` // the (demangled) function the call is made from, "" if unknown
	// Vertex is the PAG vertex the segment ends at: S(c) for the stretch
	// before call c (compute, launch), E(c) for what ends with c (mpi,
	// transfer). The timeline marks the slices of these vertices.
	Vertex int32 `json:"-"`
	// caller is 1 + the call's caller's index among Input.callers' (0:
	// none known).
	caller int32
}

// PathStretch is a run of the critical path on one rank: its consecutive
// segments there (Segments of them), from StartNs to EndNs, and their time
// by kind (Segment.Kind). Transfers count on the rank they arrive on.
type PathStretch struct {
	Rank       int   `json:"rank"`
	StartNs    int64 `json:"start_ns"`
	EndNs      int64 `json:"end_ns"`
	Segments   int   `json:"segments"`
	LaunchNs   int64 `json:"launch_ns"`
	ComputeNs  int64 `json:"compute_ns"`
	MPINs      int64 `json:"mpi_ns"`
	IONs       int64 `json:"io_ns"`
	TransferNs int64 `json:"transfer_ns"`
}

// Stretches merges the segments into the path's runs on one rank.
func Stretches(segs []Segment) []PathStretch {
	var out []PathStretch
	for i := range segs {
		s := &segs[i]
		if len(out) == 0 || out[len(out)-1].Rank != s.Rank {
			out = append(out, PathStretch{Rank: s.Rank, StartNs: s.StartNs})
		}
		x := &out[len(out)-1]
		x.EndNs, x.Segments = s.EndNs, x.Segments+1
		ns := s.EndNs - s.StartNs
		switch s.Kind {
		case "launch":
			x.LaunchNs += ns
		case "compute":
			x.ComputeNs += ns
		case "mpi":
			x.MPINs += ns
		case "io":
			x.IONs += ns
		case "transfer":
			x.TransferNs += ns
		}
	}
	return out
}

// RankShare is how much of the critical path runs on one rank.
type RankShare struct {
	Rank       int     `json:"rank"`
	LaunchNs   int64   `json:"launch_ns"` // before the rank's first call
	ComputeNs  int64   `json:"compute_ns"`
	MPINs      int64   `json:"mpi_ns"`
	TransferNs int64   `json:"transfer_ns"` // transfers that arrive on this rank
	Share      float64 `json:"share"`       // of LengthNs
	IONs       int64   `json:"io_ns"`       // inside MPI-IO calls (not in MPINs)
}

// OpShare is how much of the critical path one MPI operation (or
// "computation") accounts for.
type OpShare struct {
	Op    string  `json:"op"`
	Ns    int64   `json:"ns"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
}

// CallsiteShare is the critical path's computation on one rank before the
// calls at one call site: Stretches of them, Ns in all; Ops the MPI
// operations those calls made (one, unless the site calls through a
// pointer), sorted.
type CallsiteShare struct {
	Rank int `json:"rank"`
	// Callsite and Function are where the stretches end: the call of
	// MPI's, or where the call paths were recorded, the first call
	// outside the program's MPI wrapper layer, which went on through the
	// layer's functions Via (outermost first). DepthReached: every frame
	// recorded was in the layer, so Callsite is its outermost one.
	Callsite     string   `json:"callsite"`
	Function     string   `json:"function"`
	Via          []string `json:"via,omitempty"`
	DepthReached bool     `json:"depth_reached,omitempty"`
	Ops          []string `json:"ops"`
	Ns           int64    `json:"ns"`
	Stretches    int      `json:"stretches"`
	Share        float64  `json:"share"`
}

// Process is a row of the paper's per-process statistics table (§5.3).
type Process struct {
	Rank             int     `json:"rank"`
	ProgramTimeNs    int64   `json:"program_time_ns"`         // first to last event of the rank
	GraphTimeNs      int64   `json:"graph_time_ns"`           // analyzer time spent on this rank's part
	TotalTimeNs      int64   `json:"total_time_ns"`           // program + graph
	TotalExecutionNs int64   `json:"total_execution_time_ns"` // Σ execution of its collectives + computation
	TotalWaitNs      int64   `json:"total_wait_time_ns"`      // Σ wait before + after of its collectives
	Imbalance        float64 `json:"imbalance"`
	NumCalls         int     `json:"num_calls"`
	NumNodes         int     `json:"num_nodes"`
	NumEdges         int     `json:"num_edges"`
	// BoundedImbalance is waiting ÷ (waiting + execution) in [0, 1], the
	// waiting following each collective's data flow (imbalance.Process).
	BoundedImbalance float64 `json:"bounded_imbalance"`
}

// Totals is the last row of the per-process table: the program's figures.
type Totals struct {
	ProgramTimeNs    int64   `json:"program_time_ns"`
	GraphTimeNs      int64   `json:"graph_time_ns"`
	TotalTimeNs      int64   `json:"total_time_ns"`
	TotalExecutionNs int64   `json:"total_execution_time_ns"`
	TotalWaitNs      int64   `json:"total_wait_time_ns"`
	Imbalance        float64 `json:"imbalance"`
	NumCalls         int     `json:"num_calls"`
	NumNodes         int     `json:"num_nodes"`
	NumEdges         int     `json:"num_edges"`
	BoundedImbalance float64 `json:"bounded_imbalance"`
}

// Collective is one collective instance's imbalance (paper §5.2), summed
// over its members: wait_before = Σ (t_start_max - t_start[r]), wait_after
// = Σ (t_end[r] - t_end_min), execution = t_end_min - t_start_max.
type Collective struct {
	Op           string  `json:"op"`
	Comm         string  `json:"comm"`
	Seq          int     `json:"seq"`
	Members      int     `json:"members"`
	WaitBeforeNs int64   `json:"wait_before_ns"`
	WaitAfterNs  int64   `json:"wait_after_ns"`
	ExecutionNs  int64   `json:"execution_ns"`
	Imbalance    float64 `json:"imbalance"`
	LastRank     int     `json:"last_rank"` // the member that arrived last
	// Synchronising says whether the barrier formulas above describe the
	// operation (everyone needs everyone: graph.Synchronising);
	// BoundedImbalance is waiting ÷ (waiting + execution) in [0, 1], by
	// the barrier formulas where it synchronises, by its data flow (the
	// waits for the root, of the root, for the members before) where not.
	Synchronising    bool    `json:"synchronising"`
	BoundedImbalance float64 `json:"bounded_imbalance"`
}

// Waitstates are Scalasca's wait-state patterns, in ns, with breakdowns.
type Waitstates struct {
	WaitTimes
	ByRank []WaitBreakdown `json:"by_rank"`
	ByOp   []WaitBreakdown `json:"by_op"`
	ByComm []WaitBreakdown `json:"by_comm"`
	// ByPartition is partitioned communication's Late Sender by receive
	// partition index (docs/analysis.md); empty without partitioned
	// transfers.
	ByPartition []PartitionWaits `json:"by_partition"`
}

// PartitionWaits is the partitioned Late Sender time of one receive
// partition index over the matched partitioned transfers.
type PartitionWaits struct {
	Partition    int   `json:"partition"`
	Transfers    int64 `json:"transfers"`      // matched transfers whose receive has this partition
	Parrived     int64 `json:"parrived"`       // of those, completed by a successful MPI_Parrived (the others in the receive's Wait/Test)
	LateSenderNs int64 `json:"late_sender_ns"` // from the start of the completing call to the start of the last MPI_Pready* the partition needed
}

// WaitBreakdown is the wait-state time of one rank, operation or
// communicator (Key is "3", "MPI_Recv" or "S1.1").
type WaitBreakdown struct {
	Key string `json:"key"`
	WaitTimes
}

// WaitTimes are the time of each wait-state pattern, in ns.
type WaitTimes struct {
	LateSenderNs   int64 `json:"late_sender_ns"`
	LateReceiverNs int64 `json:"late_receiver_ns"`
	WrongOrderNs   int64 `json:"wrong_order_ns"` // the part of late_sender_ns where messages arrived in the wrong order
	// The parts of late_receiver_ns by the rule that decided them: a
	// synchronous send, or a rendezvous (a standard send above the run's
	// eager limit), waited for its receive to be posted; a send was held
	// until its receiver entered MPI (docs/analysis.md).
	LateReceiverSynchronousNs int64 `json:"late_receiver_synchronous_ns"`
	LateReceiverProgressNs    int64 `json:"late_receiver_progress_ns"`
	WaitAtBarrierNs           int64 `json:"wait_at_barrier_ns"`
	WaitAtNxNNs               int64 `json:"wait_at_nxn_ns"`
	LateBroadcastNs           int64 `json:"late_broadcast_ns"`
	EarlyReduceNs             int64 `json:"early_reduce_ns"`
	WaitAtFenceNs             int64 `json:"wait_at_fence_ns"` // in MPI_Win_fence, for the last member of the window's group
	// The parts of late_sender_ns and late_receiver_ns in partitioned
	// communication (MPI 4; the OTF2 partitioned paper's Late Sender and
	// Late Receiver): a receive's completion waited for the last
	// MPI_Pready* it needed; a send's completion for the receive's start.
	PartitionedLateSenderNs   int64 `json:"partitioned_late_sender_ns"`
	PartitionedLateReceiverNs int64 `json:"partitioned_late_receiver_ns"`
	// General active target synchronisation (Scalasca's RMA patterns,
	// docs/analysis.md): an origin waited for a target's MPI_Win_post (in
	// MPI_Win_start, a transfer or MPI_Win_complete); a target's
	// MPI_Win_wait/test waited for the origins' MPI_Win_complete, of which
	// late_complete_ns after their last transfer to it had ended.
	LatePostNs     int64 `json:"late_post_ns"`
	EarlyWaitNs    int64 `json:"early_wait_ns"`
	LateCompleteNs int64 `json:"late_complete_ns"` // the part of early_wait_ns after the origins' last transfer
	// RMAFlushNs is the time in MPI_Win_flush and its _all, _local and
	// _local_all forms: waiting for the window's one-sided operations to
	// complete (at their targets, or locally), for the network or the
	// target's progress, not the rank's own work.
	RMAFlushNs int64 `json:"rma_flush_ns"`
}

// CommMatrix is the run's communication matrix, sparse: the (source,
// destination) pairs of world ranks that exchanged data, ascending. A
// point-to-point pair counts matched messages and the bytes their sends
// logged; a collective pair counts the instances that moved data from
// source to destination and those bytes, by the attribution of docs/analysis.md.
type CommMatrix struct {
	P2P        []Pair `json:"p2p"`
	Collective []Pair `json:"collective"`
	OneSided   []Pair `json:"one_sided"` // by (origin, target): MPI_Put, MPI_Get, the accumulates…
}

// Pair is one cell of the communication matrix.
type Pair struct {
	Src   int   `json:"src"`
	Dst   int   `json:"dst"`
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Communicator is what the run did on one communicator, named as mpisee
// names them ("W0.0" is MPI_COMM_WORLD, "S2.1" the first communicator that
// world rank 2 led out of an MPI_Comm_split): its members (world ranks in
// its rank order; an intercommunicator's local group) and the calls made on
// it with their time, summed over the members.
type Communicator struct {
	Name    string  `json:"name"`
	Size    int     `json:"size"`
	Members []int32 `json:"members"`
	Calls   int64   `json:"calls"`
	TimeNs  int64   `json:"time_ns"`
}

// MessageSizes are histograms of message sizes in log2 buckets: point to
// point one per matched message, collective one per member call that
// moves data.
type MessageSizes struct {
	P2P        []SizeBucket `json:"p2p"`
	Collective []SizeBucket `json:"collective"`
}

// SizeBucket counts the sizes in [Lo, Hi] bytes: [0, 0], then [2^k, 2^(k+1)-1].
type SizeBucket struct {
	Lo    uint64 `json:"lo"`
	Hi    uint64 `json:"hi"`
	Count int64  `json:"count"`
}

// POP is the POP efficiency factors of the run and of its phases
// (package replay): useful computation is the time outside MPI from the
// end of MPI_Init to the start of MPI_Finalize; the ideal run time is the
// longest path with only it weighing (an ideal network).
type POP struct {
	POPFactors
	Phases []POPPhase `json:"phases"` // between consecutive MPI_Pcontrol calls; empty without them
	// Window is the factors of the --from/--to window (within the run's
	// POP window; computation across its edges counts with its part
	// inside); absent without one.
	Window *POPFactors `json:"window,omitempty"`
}

// POPFactors are the factors of the run or of a phase.
type POPFactors struct {
	LoadBalance             float64  `json:"load_balance"`             // avg(useful) / max(useful)
	CommunicationEfficiency float64  `json:"communication_efficiency"` // max(useful) / runtime = serialisation × transfer
	SerialisationEfficiency float64  `json:"serialisation_efficiency"` // max(useful) / ideal runtime
	TransferEfficiency      float64  `json:"transfer_efficiency"`      // ideal runtime / runtime
	ParallelEfficiency      float64  `json:"parallel_efficiency"`      // load balance × communication efficiency
	WindowNs                [2]int64 `json:"window_ns"`                // [from, to], ns since the run's start
	RuntimeNs               int64    `json:"runtime_ns"`               // to - from
	IdealRuntimeNs          int64    `json:"ideal_runtime_ns"`
	UsefulNs                []int64  `json:"useful_ns"`     // by rank
	AvgUsefulNs             float64  `json:"avg_useful_ns"` // over the units of work: ranks, or each thread of a rank of several
	MaxUsefulNs             int64    `json:"max_useful_ns"` // the busiest unit's
}

// POPPhase is one phase: phase 0 runs up to each rank's first
// MPI_Pcontrol, phase k from its k-th to the next.
type POPPhase struct {
	Phase int    `json:"phase"`
	Level *int32 `json:"level,omitempty"` // of the MPI_Pcontrol that opened it (none for phase 0); 0: logging paused
	POPFactors
}

// WhatIf is a what-if scenario's prediction: the longest path re-solved
// with its weights (package replay).
type WhatIf struct {
	Scenario    string  `json:"scenario"`
	Description string  `json:"description"`
	RuntimeNs   int64   `json:"runtime_ns"` // predicted run time
	GainNs      int64   `json:"gain_ns"`    // the longest path as the run was, minus runtime_ns
	Gain        float64 `json:"gain"`       // gain_ns as a share of the run as it was
	Default     bool    `json:"default"`    // one of the default scenarios
	// Fix marks a default scenario that halves the computation before a
	// call site, one of the critical path's longest (on_path_ns there).
	Fix       bool     `json:"fix"`
	OnPathNs  int64    `json:"on_path_ns"`
	PathRanks []RankNs `json:"path_ranks"` // where the new critical path runs: top ranks
	PathOps   []OpNs   `json:"path_ops"`   // and top operations ("computation", "launch", MPI calls)
}

// RankNs is a rank's time on a path.
type RankNs struct {
	Rank int   `json:"rank"`
	Ns   int64 `json:"ns"`
}

// OpNs is an operation's time on a path.
type OpNs struct {
	Op string `json:"op"`
	Ns int64  `json:"ns"`
}
