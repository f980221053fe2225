// Package graph reads a run's logs, puts every rank's events on one
// timeline, matches point-to-point messages and collective instances as MPI
// does, and builds the program activity graph (PAG) of SPEC §3 in flat
// arrays, together with the waits that shaped it.
//
// Each logged call c gives two vertices, S(c) = 2c (enter) and E(c) = 2c+1
// (leave). Every vertex has at most one incoming edge, because the critical
// path never waits (paper §2): S(c) is entered from the previous call of its
// thread (a program edge: computation); E(c) from S(c) (a call edge) unless
// the call waited, in which case it is entered from the start of what it
// waited for on another rank (the remote cause: the matching send of a late
// sender, the receive of a late receiver, the last member to arrive at a
// collective, the root of a broadcast). Edge weights are time differences,
// so the longest path to the run's last event walks back through the causes
// of every wait and its length is the run time, up to clock error. The
// edges are kept in compressed sparse rows by destination, the form the
// critical-path algorithms (package cpath) take as they are.
//
// Load checks a run's logs from their headers; Build streams each rank's
// records chunk by chunk (ranks in parallel up to GOMAXPROCS) and keeps
// only the calls and what matching needs, so memory grows with the calls,
// not with the records, and no phase sorts the calls or messages.
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
	EdgeCall                  // S(c) → E(c): inside an MPI call that did not wait
	EdgeLateSender            // S(send) → E(completion of the receive that waited for it)
	EdgeLateReceiver          // S(receive) → E(completion of a send that waited for it)
	EdgeCollective            // S(cause) → E(member) of a collective
)

var edgeNames = [...]string{"none", "program", "call", "late sender", "late receiver", "collective"}

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
	NumWaitKinds
)

var waitNames = [...]string{"Late Sender", "Late Receiver", "Wait at Barrier", "Wait at N x N", "Late Broadcast", "Early Reduce"}

func (k WaitKind) String() string { return waitNames[k] }

// Wait is a call that waited for another rank.
type Wait struct {
	Call       int32 // the call that waited
	Cause      int32 // the call on another rank it waited for
	Ns         int64 // how long: from the call's start to the cause's start (at most to the call's end)
	Kind       WaitKind
	WrongOrder bool  // Late Sender while a message sent earlier to this rank was received later
	Comm       int32 // the communicator of what it waited on (a Wait call has none of its own), -1 if unknown
}

// Collective is one instance of a collective operation: its members' calls
// are CollPost[First:First+N] (the call that started it on each member) and
// CollDone[...] (the call that completed it: the same for blocking ones).
type Collective struct {
	Op    trace.Op
	Comm  int32
	Seq   uint32
	Root  int32 // world rank, -1 for unrooted
	First int32
	N     int32
}

// CommInfo is a communicator of the run, shared by all ranks' tables.
type CommInfo struct {
	Name    string
	Members []int32 // world ranks in local rank order (one side's view for intercommunicators)
}

// PAG is the program activity graph of a run with its calls, messages,
// collectives and waits. Calls are numbered by rank, then in log order.
type PAG struct {
	Ranks     int
	RunID     string
	RankStart []int32 // rank r's calls are [RankStart[r], RankStart[r+1])

	// Calls, struct of arrays. Times are global ns, after clock correction.
	Op       []trace.Op
	Thread   []uint16
	Start    []int64
	End      []int64
	CallSite []uint64
	Comm     []int32 // index in Comms, -1 for none
	Bytes    []uint64

	// The edges in compressed sparse rows indexed by destination vertex
	// (2c: S(c), 2c+1: E(c)), the form cpath.Graph takes without copying:
	// the edges into v are InSrc[InStart[v]:InStart[v+1]], with weights
	// InWeight and kinds InKind. Every vertex has at most one incoming edge
	// (Pred returns it); the first vertex of each thread has none.
	InStart  []int32 // len 2·NumCalls()+1
	InSrc    []int32
	InWeight []int64
	InKind   []EdgeKind

	Waits    []Wait // by Call, ascending
	Colls    []Collective
	CollPost []int32
	CollDone []int32
	Comms    []CommInfo

	Messages        int      // matched point-to-point messages
	Unmatched       int      // sends and receives left without a partner
	ClockViolations int      // receives that ended before their send started (corrected)
	Inconsistent    int      // dependencies no clock correction could satisfy (dropped)
	Target          int32    // the vertex with the latest time: where the critical path ends
	T0, T1          int64    // earliest and latest event
	Exe             []string // per rank, for symbolising call sites
	LoadAddress     []uint64
	Notes           []string
}

// NumCalls is the number of logged calls.
func (g *PAG) NumCalls() int { return len(g.Op) }

// NumVertices is the number of vertices, 2·NumCalls().
func (g *PAG) NumVertices() int { return 2 * len(g.Op) }

// Pred returns the one incoming edge of vertex v: its source, weight and
// kind, or src -1 (and EdgeNone) for a vertex without one.
func (g *PAG) Pred(v int32) (src int32, w int64, kind EdgeKind) {
	if e := g.InStart[v]; e < g.InStart[v+1] {
		return g.InSrc[e], g.InWeight[e], g.InKind[e]
	}
	return -1, 0, EdgeNone
}

// Prev returns the previous call of the same thread as call c, -1 for the
// first.
func (g *PAG) Prev(c int32) int32 {
	if e := g.InStart[2*c]; e < g.InStart[2*c+1] {
		return g.InSrc[e] >> 1
	}
	return -1
}

// Rank returns the rank that made call c.
func (g *PAG) Rank(c int32) int { return rankOf(g.RankStart, g.Ranks, c) }

// rankOf is the rank whose calls [rankStart[r], rankStart[r+1]) hold c.
func rankOf(rankStart []int32, ranks int, c int32) int {
	return sort.Search(ranks, func(r int) bool { return rankStart[r+1] > c })
}

// Time returns the time of vertex v.
func (g *PAG) Time(v int32) int64 {
	if v&1 == 0 {
		return g.Start[v>>1]
	}
	return g.End[v>>1]
}
