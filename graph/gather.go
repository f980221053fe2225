package graph

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// CallInfo is what other ranks may ask of a call: its times, operation and
// call site.
type CallInfo struct {
	Start, End int64
	CallSite   uint64
	Op         trace.Op
	FileIO     bool // a Wait/Test call that completed MPI-IO requests (PAG.CompletesFileIO)
	// WaitUnknown: a blocking Wait that completed no request the logs
	// hold (PAG.WaitsUnknown).
	WaitUnknown bool
}

// CallTable holds the CallInfo of the calls a rank asked for.
type CallTable map[int32]CallInfo

// Op returns call c's operation.
func (t CallTable) Op(c int32) trace.Op { return t[c].Op }

// CallSite returns call c's call site.
func (t CallTable) CallSite(c int32) uint64 { return t[c].CallSite }

// FetchCalls gets the CallInfo of calls (any rank's) from their owners.
// Every rank of c takes part, each with the calls it wants (possibly none).
func (p *PAG) FetchCalls(c mpix.Comm, calls []int32) (CallTable, error) {
	size := c.Size()
	ask := make([][]int32, size)
	for _, x := range calls {
		if x < 0 || x >= p.RankStart[p.Ranks] {
			return nil, fmt.Errorf("graph: call %d is not in the run", x)
		}
		q := p.Owner(x)
		ask[q] = append(ask[q], x)
	}
	send := make([][]byte, size)
	for q := range ask {
		slices.Sort(ask[q])
		ask[q] = slices.Compact(ask[q])
		send[q] = mpix.Bytes(ask[q])
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	for q, bs := range got {
		ids, err := mpix.FromBytes[int32](bs)
		if err != nil {
			return nil, err
		}
		infos := make([]CallInfo, len(ids))
		for k, x := range ids {
			if x < p.CallLo || x >= p.CallHi {
				return nil, fmt.Errorf("graph: asked for call %d, which rank %d does not own", x, c.Rank())
			}
			l := x - p.CallLo
			infos[k] = CallInfo{p.Start[l], p.End[l], p.CallSite[l], p.Op[l], p.CompletesFileIO(x), p.WaitsUnknown(x)}
		}
		send[q] = mpix.Bytes(infos)
	}
	got, err = c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	t := make(CallTable, len(calls))
	answers, err := mpix.Answers[CallInfo](got, func(q int) int { return len(ask[q]) }, "call exchange")
	if err != nil {
		return nil, err
	}
	for q, infos := range answers {
		for k, x := range ask[q] {
			t[x] = infos[k]
		}
	}
	return t, nil
}

// GatherGob gathers every rank's v on rank 0 (gob-encoded), which gets
// them by rank; the others get nil.
func GatherGob[T any](c mpix.Comm, v T) ([]T, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	send := make([][]byte, c.Size())
	send[0] = buf.Bytes()
	got, err := c.Alltoallv(send)
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	out := make([]T, len(got))
	for q, bs := range got {
		if err := gob.NewDecoder(bytes.NewReader(bs)).Decode(&out[q]); err != nil {
			return nil, fmt.Errorf("graph: gather: %v", err)
		}
	}
	return out, nil
}

// Summary is a PAG holding only what a report needs of the whole run: its
// counts, communicators, vertex layout, collective instances (colls, in
// the order the imbalance analysis numbers them), the ranks' modules and
// notes, without calls or edges.
func (p *PAG) Summary(colls []Collective) *PAG {
	return &PAG{Ranks: p.Ranks, RunID: p.RunID, RankStart: p.RankStart, PartRanks: p.PartRanks, Part: -1,
		Bounds: p.Bounds, Hubs: p.Hubs, StartVertex: p.StartVertex, Comms: p.Comms, Colls: colls,
		Syncs: p.Syncs, SyncHub: p.SyncHub,
		Messages: p.Messages, Unmatched: p.Unmatched, ClockViolations: p.ClockViolations, Inconsistent: p.Inconsistent, EpochPairs: p.EpochPairs,
		Target: p.Target, T0: p.T0, T1: p.T1, Exe: p.Exe, LoadAddress: p.LoadAddress,
		Modules: p.Modules, Notes: p.Notes, Unwrapped: p.Unwrapped}
}
