package graph

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// CallInfo is what other ranks may ask of a call: its times, operation and
// call site. It crosses the wire as its memory: 32 bytes, its padding
// explicit.
type CallInfo struct {
	Start, End int64
	CallSite   uint64
	Op         trace.Op
	FileIO     bool // a Wait/Test call that completed MPI-IO requests (PAG.CompletesFileIO)
	// WaitUnknown: a blocking Wait that completed no request the logs
	// hold (PAG.WaitsUnknown).
	WaitUnknown bool
	_           [1]byte
	// Site is the call's site among its rank's (SiteTable), which names
	// its call path too.
	Site uint32
}

// CallTable holds the CallInfo of the calls a rank asked for. A critical
// path names about a million calls on a 16 M-call run: a map of them took
// 250 MB, where a sparseIndex of the run's calls and the infos in call
// order take a tenth of that.
type CallTable struct {
	index sparseIndex
	infos []CallInfo // in call order
}

// newCallTable makes the table of the sorted, distinct calls ids, with
// their infos, among a run of n calls.
func newCallTable(n int, ids []int32, infos []CallInfo) CallTable {
	return CallTable{index: newSparseIndex(n, ids), infos: infos}
}

// Get returns call c's CallInfo, and whether the table holds it.
func (t CallTable) Get(c int32) (CallInfo, bool) {
	if k := t.index.at(c); k >= 0 {
		return t.infos[k], true
	}
	return CallInfo{}, false
}

// At returns call c's CallInfo, the zero CallInfo for a call not in the
// table.
func (t CallTable) At(c int32) CallInfo { ci, _ := t.Get(c); return ci }

// Len is the number of calls in the table.
func (t CallTable) Len() int { return len(t.infos) }

// Op returns call c's operation.
func (t CallTable) Op(c int32) trace.Op { return t.At(c).Op }

// CallSite returns call c's call site.
func (t CallTable) CallSite(c int32) uint64 { return t.At(c).CallSite }

// CallInfo is owned call c's CallInfo (c a global call number).
func (p *PAG) CallInfo(c int32) CallInfo {
	l := c - p.CallLo
	ci := CallInfo{Start: p.Start[l], End: p.End[l], CallSite: p.Calls.CallSite(l), Op: p.Op[l], FileIO: p.CompletesFileIO(c),
		WaitUnknown: p.WaitsUnknown(c), Site: p.Site[l]}
	if i := p.Rank(c) - p.RankLo; i >= 0 && i < len(p.RankSites) {
		ci.Site -= p.RankSites[i]
	}
	return ci
}

// FetchCalls gets the CallInfo of calls (any rank's) from their owners.
// Every rank of c takes part, each with the calls it wants (possibly none).
func (p *PAG) FetchCalls(c mpix.Comm, calls []int32) (CallTable, error) {
	size := c.Size()
	for _, x := range calls {
		if x < 0 || x >= p.RankStart[p.Ranks] {
			return CallTable{}, fmt.Errorf("graph: call %d is not in the run", x)
		}
	}
	// The calls in order, each once, split at the owners' first calls.
	sorted := sortedDistinct(calls, int(p.RankStart[p.Ranks]))
	ask := make([][]int32, size)
	send := make([][]byte, size)
	for q := range ask {
		lo, hi := p.RankStart[p.PartRanks[q]], p.RankStart[p.PartRanks[q+1]]
		i, _ := slices.BinarySearch(sorted, lo)
		j, _ := slices.BinarySearch(sorted, hi)
		ask[q] = sorted[i:j:j]
		send[q] = mpix.Bytes(ask[q])
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return CallTable{}, err
	}
	for q, bs := range got {
		ids, err := mpix.FromBytes[int32](bs)
		if err != nil {
			return CallTable{}, err
		}
		infos := make([]CallInfo, len(ids))
		for k, x := range ids {
			if x < p.CallLo || x >= p.CallHi {
				return CallTable{}, fmt.Errorf("graph: asked for call %d, which rank %d does not own", x, c.Rank())
			}
			infos[k] = p.CallInfo(x)
		}
		send[q] = mpix.Bytes(infos)
	}
	got, err = c.Alltoallv(send)
	if err != nil {
		return CallTable{}, err
	}
	answers, err := mpix.Answers[CallInfo](got, func(q int) int { return len(ask[q]) }, "call exchange")
	if err != nil {
		return CallTable{}, err
	}
	if len(answers) == 1 { // one analyzer rank: its answer is the table, without a copy
		return newCallTable(int(p.RankStart[p.Ranks]), ask[0], answers[0]), nil
	}
	// The owners' blocks of calls are in call order, and so is each
	// owner's answer.
	var ids []int32
	var infos []CallInfo
	for q, a := range answers {
		if len(ask[q]) > 0 && len(ids) > 0 && ask[q][0] <= ids[len(ids)-1] {
			return CallTable{}, fmt.Errorf("graph: call exchange: the owners' calls are out of order")
		}
		ids = append(ids, ask[q]...)
		infos = append(infos, a...)
	}
	return newCallTable(int(p.RankStart[p.Ranks]), ids, infos), nil
}

// Summary is a PAG holding only what a report needs of the whole run: its
// counts, communicators, vertex layout, collective instances (colls, in
// the order the imbalance analysis numbers them), the ranks' modules and
// notes, without calls or edges.
func (p *PAG) Summary(colls []Collective) *PAG {
	return &PAG{Ranks: p.Ranks, RunID: p.RunID, RankStart: p.RankStart, PartRanks: p.PartRanks, Part: -1,
		Bounds: p.Bounds, Hubs: p.Hubs, StartVertex: p.StartVertex, Comms: p.Comms, Colls: colls,
		Syncs: p.Syncs, SyncHub: p.SyncHub,
		Messages: p.Messages, CoalescedPolls: p.CoalescedPolls, Unmatched: p.Unmatched, ClockViolations: p.ClockViolations, ClockCorrections: p.ClockCorrections, ClockShiftMax: p.ClockShiftMax, Inconsistent: p.Inconsistent, EpochPairs: p.EpochPairs,
		Target: p.Target, T0: p.T0, T1: p.T1, Exe: p.Exe, LoadAddress: p.LoadAddress,
		Modules: p.Modules, Notes: p.Notes, Unwrapped: p.Unwrapped, CallsOnly: p.CallsOnly}
}

// sortedDistinct returns calls (all below n) sorted, each once. Many calls
// (a critical path's: millions) are sorted by a bit per call of the run,
// which took the report's gather of a 2.5 M-segment path from 0.15 s to
// ~0.07 s; a few, by sorting them.
func sortedDistinct(calls []int32, n int) []int32 {
	if len(calls) < n/64 {
		out := slices.Clone(calls)
		slices.Sort(out)
		return slices.Compact(out)
	}
	marked := newBitset(n)
	for _, x := range calls {
		marked.set(int(x))
	}
	out := make([]int32, 0, len(calls))
	for w, word := range marked {
		for word != 0 {
			out = append(out, int32(w<<6+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return out
}
