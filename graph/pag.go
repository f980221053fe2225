// Package graph reads a run's logs, puts every rank's events on one
// timeline, matches point-to-point messages and collective instances as MPI
// does, and builds the program activity graph (PAG) of SPEC §3 in flat
// arrays, distributed over the ranks of the analyzer's MPI job (one
// process is the job of one rank), together with the waits that shaped it.
//
// The PAG is Yang and Miller's, as the paper uses it: it keeps every
// happened-before dependency, not only the one a completion waited for.
// Each logged call c gives two vertices, S(c) (enter) and E(c) (leave);
// every collective instance that needs all its members (Barrier,
// Allreduce, …) a hub vertex, so that it costs O(members) edges; and the
// run a virtual start vertex. Edge weights are the time of real activity
// with waiting removed:
//
//   - launch: start vertex → S(first call of a thread), the thread's start delay;
//   - program: E(c) → S(next call of the thread), the computation between;
//   - call: S(c) → E(c), the call's time minus the time it waited;
//   - late sender: S(send) → E(completion of the receive), the transfer:
//     the completion minus the latest of the send's start, the start of
//     the call that completed the receive (the MPI_Recv, or the Wait of an
//     MPI_Irecv: what the receiver did before that call is its own), and
//     the start of that call's last-arriving cause (of the messages one
//     Waitall completes, only the last one's transfer ends at it);
//   - late receiver: S(receive) → E(completion of a send that waits for
//     its receiver), likewise;
//   - collective: S(root) → E(member) of a broadcast, S(member) → E(root)
//     of a reduction, likewise;
//   - hub: S(member) → hub (0) and hub → E(member) (the completion minus
//     the later of when the last member started and when the completing
//     call did), for collectives that need everyone.
//
// The critical path is the longest path from the start vertex to the
// run's last event (package cpath searches it). With consistent clocks every
// vertex's longest distance is its time since the run's start, so the path
// is the chain of last-arriving causes, waiting is never on it, and its
// length is the run time.
//
// Build reads each log once, its calls placed by the count in its trailer
// (a log without one, from a rank that died, is counted by reading it
// through first), matches messages at the receiver's owner and collectives at a
// coordinator, enforces the clock condition in rounds, and builds the
// edges into the owned vertices in compressed sparse rows, the form the
// algorithms take as they are.
package graph

import (
	"sort"

	"github.com/cpath/cpath/trace"
)

// EdgeKind says what an edge of the PAG stands for.
type EdgeKind uint8

const (
	EdgeNone         EdgeKind = iota
	EdgeProgram               // E(c_i) → S(c_i+1) on one thread: computation
	EdgeCall                  // S(c) → E(c): inside an MPI call, less what it waited
	EdgeLateSender            // S(send) → E(completion of its receive)
	EdgeLateReceiver          // S(receive) → E(completion of a send that waits for it)
	EdgeCollective            // S(root) → E(member) of a broadcast, S(member) → E(root) of a reduction
	EdgeLaunch                // start vertex → S(first call of a thread): the thread's start delay
	EdgeHubIn                 // S(member) → hub of a collective instance (weight 0)
	EdgeHubOut                // hub → E(member): from the last member's start to the member's completion
	// EdgeRMA is a general active target synchronisation (graph/pscw.go):
	// S(MPI_Win_post) → E(the origin's call that waited for it),
	// S(MPI_Win_complete) → E(the target's MPI_Win_wait or MPI_Win_test).
	EdgeRMA
	// EdgeHeldSend is a send held by its receiver's progress (a Late
	// Receiver by RuleProgress): S(the receiver's call that let it go) →
	// E(the send's completion). MPI's semantics did not make it wait: the
	// POP ideal run leaves it out. What they did make a send wait for, the
	// receive's post (a synchronous send, or a rendezvous whose receive
	// was posted late), is EdgeLateReceiver.
	EdgeHeldSend
	// NumEdgeKinds is the number of edge kinds.
	NumEdgeKinds = iota
)

var edgeNames = [NumEdgeKinds]string{"none", "program", "call", "late sender", "late receiver", "collective", "launch", "hub in", "hub out", "rma", "held send"}

func (k EdgeKind) String() string { return edgeNames[k] }

// WaitKind is a Scalasca wait-state pattern.
type WaitKind uint8

const (
	LateSender WaitKind = iota
	LateReceiver
	WaitAtBarrier
	WaitAtNxN
	LateBroadcast
	EarlyReduce
	WaitAtFence // MPI_Win_fence: waiting for the last member of the window's group (Scalasca's RMA Wait at Fence)
	// LatePost: an origin's MPI_Win_start (or, where the MPI returns from
	// it at once, the first RMA transfer or MPI_Win_complete that could
	// not proceed) waited for a target's MPI_Win_post (graph/pscw.go).
	LatePost
	// EarlyWait: a target's MPI_Win_wait (or the MPI_Win_test that ended
	// the exposure epoch) waited for an origin's MPI_Win_complete; its
	// Late Complete part is in PAG.LateComplete.
	EarlyWait
	NumWaitKinds
)

var waitNames = [...]string{"Late Sender", "Late Receiver", "Wait at Barrier", "Wait at N x N", "Late Broadcast", "Early Reduce", "Wait at Fence",
	"Late Post", "Early Wait"}

func (k WaitKind) String() string { return waitNames[k] }

// WaitRule says why a send waited for its receiver (a Late Receiver), or
// that a dependency is one the times must show.
type WaitRule uint8

const (
	RuleNone        WaitRule = iota
	RuleSynchronous          // a synchronous send (or a rendezvous: a standard send above the eager limit, posted late) completes only once its receive is posted
	RuleProgress             // the send completed as soon as the receiver entered MPI: it was held until then
	// RuleObserved: a member of a collective with counts per pair
	// (trace.Op.PairCounts) may not have needed this member, and a
	// collective file operation may not have synchronised, or only in
	// its posting call (see observedOnly): the dependency holds only
	// where the times show it (the member ended after the other
	// started), and the clocks are not corrected for it. (An
	// MPI_Alltoallv member that exchanged nothing with a late one had its
	// clock moved 3-7 ms on MPICH.)
	RuleObserved
	NumWaitRules
)

var ruleNames = [...]string{"", "synchronous", "progress", "observed"}

// imposed reports whether the clock correction makes a dependency of this
// rule hold; the others are read from the times.
func (r WaitRule) imposed() bool { return r != RuleProgress && r != RuleObserved }

func (r WaitRule) String() string { return ruleNames[r] }

// Wait is a call that waited for another rank: its last-arriving cause
// started after it.
type Wait struct {
	Call       int32 // the call that waited
	Cause      int32 // the call on another rank it waited for
	Ns         int64 // how long: from From to the cause's start (at most to the call's end)
	From       int64 // when the waiting began: the call's start, or the start of the unproductive polls that led to it
	Kind       WaitKind
	Rule       WaitRule // of a Late Receiver
	WrongOrder bool     // Late Sender while a message sent earlier to this rank was received later
	Comm       int32    // the communicator of what it waited on (a Wait call has none of its own), -1 if unknown
	// Partitioned: it waited in partitioned communication (MPI 4), for
	// an MPI_Pready* (Late Sender; Partition is the receive partition
	// whose MPI_Pready* it waited for) or for the receive's MPI_Start
	// (Late Receiver; Partition -1). See graph/partitioned.go.
	Partitioned bool
	Partition   int32
}

// Collective is one instance of a collective operation: its members' calls
// are CollPost[First:First+N] (the call that started it on each member) and
// CollDone[...] (the call that completed it: the same for blocking ones).
// The analysis's shares ship it as its memory: 24 bytes, no padding.
type Collective struct {
	Op trace.Op
	// NoData says that every member passed 0 bytes in a collective whose
	// order comes from its data (trace.Flow.MovesData): the instance
	// orders nothing, so it has no dependencies, edges, waits or
	// imbalance. (A 0-byte MPI_Bcast in HPCC, its root 7 ms late, made
	// Late Broadcast waits and moved the members' clocks by 7 ms.)
	NoData bool
	_      [2]byte
	Comm   int32
	Seq    uint32
	Root   int32 // world rank, -1 for unrooted
	First  int32
	N      int32
}

// CommInfo is a communicator of the run, shared by all ranks' tables.
type CommInfo struct {
	Name    string
	Members []int32 // world ranks in local rank order (one side's view for intercommunicators)
	// Inter says it is an intercommunicator (its log entry has a remote
	// group): whatever made it, Intercomm_create, a spawn, or a dup of one.
	Inter bool
	// Sources and Dests are, by local rank (as Members), that member's in-
	// and out-neighbours in the communicator's topology as world ranks,
	// from its own log (trace.Comm): nil without a topology, nil entries
	// for members whose log does not have it.
	Sources, Dests [][]int32 `json:",omitempty"`
}

// PAG is one analyzer rank's part of the run's program activity graph:
// the calls of the logged ranks [RankLo, RankHi), their vertices, this
// rank's hubs, and all the edges into them. Call numbers are global (rank
// by rank, in log order), so waits and collectives name calls of other
// parts directly; the call arrays hold the owned calls, at index c - CallLo.
// The global counts, the notes and the vertex layout are the same on every
// analyzer rank.
//
// Vertex ids are global and the same at any number of analyzer ranks:
// S(c) = 2c, E(c) = 2c+1, then the hubs (ordered by communicator and
// sequence number), then the start vertex. Analyzer rank p owns the
// contiguous range [Bounds[p], Bounds[p+1]): its calls' vertices; the
// last one also the hubs and the start vertex. Because the ids do not
// depend on how the graph is cut, neither do the searches' ties (broken
// by the smaller id): the path is the same at every P.
type PAG struct {
	Ranks     int
	RunID     string
	RankStart []int32 // global: rank r's calls are [RankStart[r], RankStart[r+1])
	// PartRanks[p] is the first logged rank analyzer rank p owns; len size+1.
	PartRanks      []int
	Part           int // this analyzer rank
	RankLo, RankHi int
	CallLo, CallHi int32

	Calls // the owned calls
	// CallsOnly marks a PAG that ReadCalls made: the calls and the run's
	// summary, with no graph (no edges, waits, messages or collectives).
	CallsOnly bool
	// prev is, in a CallsOnly PAG, each owned call's previous call on its
	// thread (global id, -1 for a thread's first): ThreadPrev.
	prev []int32
	// fileDone marks the owned Wait/Test calls that completed MPI-IO
	// requests (CompletesFileIO), by c - CallLo.
	fileDone bitset
	// waitUnknown marks the owned blocking Wait calls that completed no
	// request the logs hold (WaitsUnknown), by c - CallLo.
	waitUnknown bitset

	// Bounds[p] is the first vertex of analyzer rank p (len size+1).
	Bounds      []int32
	Hubs        int32   // hub vertices in the graph: [2·NumCalls(), 2·NumCalls()+Hubs)
	StartVertex int32   // the virtual start vertex, at the run's start (T0): the last vertex
	HubTime     []int64 // on the last analyzer rank, by hub: when the last member it waits for started

	// The edges into the owned vertices [Bounds[me], Bounds[me+1]), in
	// compressed sparse rows indexed by v - Bounds[me], sources global.
	InStart  []int32
	InSrc    []int32
	InWeight Weights
	InKind   []EdgeKind

	Waits []Wait // the owned calls', by Call
	// PartitionWaits is the partitioned Late Sender time of the owned
	// ranks' receives by receive partition (index = partition).
	PartitionWaits []PartitionWait
	// LateComplete is, for the owned calls whose wait is an Early Wait,
	// the part of it that Scalasca calls Late Complete (graph/pscw.go),
	// by call.
	LateComplete []CallNs
	// Epochs are the matched general active target epoch pairs (one
	// target's MPI_Win_post … MPI_Win_wait and one origin's
	// MPI_Win_start … MPI_Win_complete that includes it) whose origin is
	// an owned rank, in the origin's order; EpochPairs counts the run's.
	Epochs     []EpochPair
	EpochPairs int

	// The matched point-to-point messages into the owned ranks, in
	// matching order: the call that posted the send (any rank's), the
	// owned call that completed the receive, and the bytes the send
	// logged (count × type size).
	MsgSend, MsgRecv []int32
	MsgBytes         []uint64

	// The collective instances this rank coordinated (each instance has one
	// coordinator), with their members' calls and final times.
	Colls     []Collective
	CollPost  []int32
	CollDone  []int32
	PostStart []int64  // by member: when its post call started
	DoneEnd   []int64  // by member: when its completing call ended
	PostBytes []uint64 // by member: the bytes its post call logged (trace.Record.Bytes)
	Comms     []CommInfo

	// Syncs are the run's global synchronisation points (paper §4.4), in
	// time order: for each, the blocking call every logged rank made in
	// it, by rank, and its hub vertex (SyncHub). The same on every
	// analyzer rank. Build keeps every candidate; Splits drops those that
	// are no cut and sets Split, the split of each owned vertex: the
	// number of synchronisation points before it (nil until then).
	Syncs   [][]int32
	SyncHub []int32
	Split   []int32

	Messages, Unmatched, ClockViolations, Inconsistent int
	// GuessedPairs counts the messages between threads that called MPI
	// at once whose partner was a guess (graph/threadmatch.go, byMatch):
	// the times do not say which of two sends MPI queued first, or which
	// of two receives took which.
	GuessedPairs int
	// RMATraffic is the one-sided transfers (trace.Op.IsRMATransfer) of
	// the owned ranks, by (origin, target) world rank, ascending.
	RMATraffic []RMAPair
	// CoalescedPolls is how many more MPI calls the run made than the
	// graph has: the logger writes a run of unproductive polls (MPI_Test…,
	// MPI_Iprobe that found nothing) as one call, so the run made
	// NumCalls() + CoalescedPolls calls, as cpath info counts them.
	CoalescedPolls int64
	// ClockCorrections is how many dependencies (messages, collectives,
	// every kind) ran backwards on the synchronised clocks, a call ending
	// before something it needed started, and ClockShiftMax the largest
	// such gap in ns: the clock correction moved those calls later, and
	// with them what followed on their threads.
	ClockCorrections, ClockShiftMax int64
	Target                          int32 // the vertex with the latest time: where the critical path ends
	T0, T1                          int64 // earliest and latest event
	Exe                             []string
	LoadAddress                     []uint64
	// Modules are, by logged rank, the modules its log lists (those its
	// call sites fall in), for naming call sites (trace.ModuleOf,
	// trace/symbol).
	Modules [][]trace.Module
	Notes   []string
	// Unwrapped are the MPI calls the logs count but do not record
	// (trace.Header.Unwrapped), over the ranks.
	Unwrapped []UnwrappedCalls
}

// NumCalls is the number of calls in the whole run.
func (g *PAG) NumCalls() int { return int(g.RankStart[g.Ranks]) }

// NumVertices is the number of vertices in the whole graph.
func (g *PAG) NumVertices() int { return int(g.Bounds[len(g.Bounds)-1]) }

// Rank returns the logged rank that made call c (any call of the run).
func (g *PAG) Rank(c int32) int { return rankOf(g.RankStart, g.Ranks, c) }

// Owner returns the analyzer rank that owns call c.
func (g *PAG) Owner(c int32) int { return g.ownerOfRank(g.Rank(c)) }

// ownerOfRank is the analyzer rank whose block of logged ranks holds r:
// the first whose block ends after r (empty blocks end where they start).
func (g *PAG) ownerOfRank(r int) int {
	return sort.Search(len(g.PartRanks)-1, func(q int) bool { return g.PartRanks[q+1] > r })
}

// vertexOwner is the analyzer rank that owns vertex v.
func (g *PAG) vertexOwner(v int32) int {
	return sort.Search(len(g.Bounds)-1, func(q int) bool { return g.Bounds[q+1] > v })
}

// S returns the vertex id of call c's start (any call of the run).
func (g *PAG) S(c int32) int32 { return 2 * c }

// E returns the vertex id of call c's end.
func (g *PAG) E(c int32) int32 { return 2*c + 1 }

// Hub returns the vertex id of hub h.
func (g *PAG) Hub(h int32) int32 { return 2*int32(g.NumCalls()) + h }

// VertexKind is what a vertex stands for.
type VertexKind uint8

const (
	VertexStart VertexKind = iota // S(c): a call's start
	VertexEnd                     // E(c): a call's end
	VertexHub                     // a collective instance's hub
	VertexRun                     // the run's virtual start vertex
)

// Vertex says what vertex v (any of the graph) is: a call's start or end
// (call c), a hub, or the run's start vertex.
func (g *PAG) Vertex(v int32) (c int32, kind VertexKind) {
	switch {
	case v < 2*int32(g.NumCalls()):
		return v >> 1, VertexKind(v & 1)
	case v == g.StartVertex:
		return -1, VertexRun
	}
	return -1, VertexHub
}

// Streams cuts the owned vertices (local indices) into the runs along
// whose ids the edges go forward, but for few (between a rank's threads):
// each owned rank's calls, then the hubs (ordered by communicator and
// sequence), then the start vertex. An order of the graph that follows
// them reads its arrays in order (cpath.NewSchedule).
func (g *PAG) Streams() []int32 {
	var b []int32
	for r := g.RankLo; r <= g.RankHi; r++ {
		b = append(b, 2*(g.RankStart[r]-g.CallLo))
	}
	n := g.Bounds[g.Part+1] - g.Bounds[g.Part]
	if last := b[len(b)-1]; n > last {
		if n-1 > last {
			b = append(b, n-1) // the hubs
		}
		b = append(b, n) // the start vertex
	}
	return b
}

// local is v's index among the owned vertices.
func (g *PAG) local(v int32) int32 { return v - g.Bounds[g.Part] }

// Time returns the time of an owned vertex.
func (g *PAG) Time(v int32) int64 {
	c, kind := g.Vertex(v)
	switch kind {
	case VertexStart:
		return g.Start[c-g.CallLo]
	case VertexEnd:
		return g.End[c-g.CallLo]
	case VertexRun:
		return g.T0
	}
	return g.HubTime[v-g.Hub(0)]
}

// Times returns the time of every owned vertex, by local index: what the
// time-ordered searches (dijkstra, delta) take their order from.
func (g *PAG) Times() []int64 {
	lo := g.Bounds[g.Part]
	ts := make([]int64, g.Bounds[g.Part+1]-lo)
	for l := range ts {
		ts[l] = g.Time(lo + int32(l))
	}
	return ts
}

// WaitsUnknown reports whether owned call c (global number) is a blocking
// Wait call that completed no request the logs hold: one the logger did
// not see made (an unwrapped call's, such as a persistent collective's,
// or one made while logging was paused). What it waited for is not in the
// graph. A Wait given only MPI_REQUEST_NULL (trace.FlagNullRequests)
// waited for nothing, and is not one.
func (p *PAG) WaitsUnknown(c int32) bool {
	return c >= p.CallLo && c < p.CallHi && len(p.waitUnknown) > 0 && p.waitUnknown.has(int(c-p.CallLo))
}

// CompletesFileIO reports whether owned call c (global number) is a
// Wait/Test call that completed requests of MPI-IO operations (MPI_File_i…):
// the file operation's time is in it, so the critical path counts it as I/O.
func (p *PAG) CompletesFileIO(c int32) bool {
	return c >= p.CallLo && c < p.CallHi && len(p.fileDone) > 0 && p.fileDone.has(int(c-p.CallLo))
}

// Release lets go of everything the part holds per call and per message
// but the calls' operations (the calls' times, sites, communicators and
// bytes, the waits, the matched messages, collective members and epochs,
// the splits), for a caller that needs no more of p than its Summary, its
// edges (ReleaseEdges lets go of those) and the operations: the replay,
// once it has taken what it needs of the calls, before it copies the
// edges, so that the copy takes their pages rather than fresh ones.
func (p *PAG) Release() {
	p.Calls, p.fileDone, p.waitUnknown, p.HubTime = Calls{Op: p.Op}, nil, nil, nil
	p.Waits, p.PartitionWaits, p.LateComplete, p.Epochs = nil, nil, nil, nil
	p.MsgSend, p.MsgRecv, p.MsgBytes = nil, nil, nil
	p.CollPost, p.CollDone, p.PostStart, p.DoneEnd, p.PostBytes, p.Split = nil, nil, nil, nil, nil, nil
}

// ReleaseEdges lets go of the edges into the owned vertices, for a
// caller that has copied what it needs of them (the replay's rows, in
// its sweeps' order) and after which nothing reads them: the copy then
// takes their place rather than sits beside them.
func (p *PAG) ReleaseEdges() {
	p.InStart, p.InSrc, p.InWeight, p.InKind = nil, nil, Weights{}, nil
}

// RMAPair is the one-sided transfers from an origin rank to a target
// rank: how many, and the bytes their calls logged (Get's the origin
// receives, Put's and the accumulates' it sends).
type RMAPair struct {
	Origin, Target int32
	Count, Bytes   int64
}

// ThreadPrev is each owned call's previous call on its thread, by c -
// CallLo (a global id, -1 for a thread's first call): the sources of the
// program edges, read from the graph or, in a CallsOnly PAG, from the
// calls' threads.
func (p *PAG) ThreadPrev() []int32 {
	if p.CallsOnly {
		return p.prev
	}
	prev := make([]int32, p.CallHi-p.CallLo)
	for c := range prev {
		prev[c] = -1
		for e := p.InStart[2*c]; e < p.InStart[2*c+1]; e++ {
			if p.InKind[e] == EdgeProgram {
				prev[c] = p.InSrc[e] >> 1 // from E(prev)
			}
		}
	}
	return prev
}
