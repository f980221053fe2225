package graph

import (
	"sort"

	"github.com/cpath/cpath/trace"
)

// Calls holds logged calls as a struct of arrays. Times are global ns,
// after clock correction.
type Calls struct {
	Op     []trace.Op
	Thread []uint16
	Start  []int64
	End    []int64
	// Site is each call's call site, as an index in Sites: a run has few
	// call sites, and 4 bytes a call are 64 MB less on 16 M calls than
	// the addresses themselves.
	Site  []uint32
	Sites []uint64
	// FrameStart and Frames hold each site's call path: the return
	// addresses above it that the logger walked (CPATH_CALLDEPTH),
	// innermost first, Frames[FrameStart[k]:FrameStart[k+1]] for site k
	// (FrameStart nil: none recorded). Calls from one return address by
	// two call paths are two sites.
	FrameStart []uint32
	Frames     []uint64
	// RankSites is, by owned rank, its first site in Sites, and one past
	// the last.
	RankSites []uint32
	Comm      []int32  // index in the run's communicator table, -1 for none
	Bytes     []uint64 // bytes moved; for MPI_Pcontrol, its level (PcontrolLevel)
}

// CallSite is call i's call site (i an index into these calls).
func (c *Calls) CallSite(i int32) uint64 { return c.Sites[c.Site[i]] }

// PcontrolBytes is how Calls.Bytes holds an MPI_Pcontrol's level: the call
// moves no data, and its level marks a phase of the run.
func PcontrolBytes(level int32) uint64 { return uint64(uint32(level)) }

// PcontrolLevel is the level of an MPI_Pcontrol call from its Calls.Bytes.
func PcontrolLevel(bytes uint64) int32 { return int32(uint32(bytes)) }

func makeCalls(n int) Calls {
	return Calls{Op: make([]trace.Op, n), Thread: make([]uint16, n), Start: make([]int64, n), End: make([]int64, n),
		Site: make([]uint32, n), Comm: make([]int32, n), Bytes: make([]uint64, n)}
}

// rankCalls is the calls of the logged ranks one analyzer rank owns,
// numbered from 0: what the extractor fills and the clock correction
// moves.
type rankCalls struct {
	Calls
	ranks     int
	rankStart []int32 // owned rank i's calls are [rankStart[i], rankStart[i+1])
	multi     []bool  // by owned rank: more than one thread
	ordered   []bool  // by owned rank: its calls are in time order, none overlapping (as read)
	// unproductive marks the records of polls that completed nothing
	// (MPI_Test… or MPI_Iprobe, coalesced by the logger).
	unproductive bitset
	// fileDone marks the Wait/Test calls that completed MPI-IO requests.
	fileDone bitset
	// waitUnknown marks the blocking Wait calls that completed no request
	// the log holds (PAG.WaitsUnknown).
	waitUnknown bitset
}

// rank is the owned rank (0-based) that made call c.
func (g *rankCalls) rank(c int32) int { return rankOf(g.rankStart, g.ranks, c) }

// rankOf is the rank whose calls [rankStart[r], rankStart[r+1]) hold c.
func rankOf(rankStart []int32, ranks int, c int32) int {
	return sort.Search(ranks, func(r int) bool { return rankStart[r+1] > c })
}

// threadWalk gives the calls' previous calls on their threads (-1 for
// the first), for calls taken in increasing order.
type threadWalk struct {
	g    *rankCalls
	rank int
	last []int32 // by thread, on a rank with more than one
	used []uint16
}

func (g *rankCalls) walk() *threadWalk { return &threadWalk{g: g} }

func (w *threadWalk) prev(c int32) int32 {
	rs := w.g.rankStart
	if c >= rs[w.rank+1] {
		for c >= rs[w.rank+1] {
			w.rank++
		}
		for _, t := range w.used {
			w.last[t] = -1
		}
		w.used = w.used[:0]
	}
	if !w.g.multi[w.rank] {
		if c == rs[w.rank] {
			return -1
		}
		return c - 1
	}
	t := w.g.Thread[c]
	for int(t) >= len(w.last) {
		w.last = append(w.last, -1)
	}
	p := w.last[t]
	if p < 0 {
		w.used = append(w.used, t)
	}
	w.last[t] = c
	return p
}
