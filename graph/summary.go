package graph

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// The ranks' summaries cross the wire in mpix's framed form: each
// summary's note, then its communicators, modules (with the functions
// of a module without a file) and unwrapped calls and what its trace
// held that the model cannot take as lists, every element its strings
// and one fixed record, a communicator's rank lists after them. An empty
// list reads back as nil.

// commHead is a communicator's fixed part.
type commHead struct {
	Parent uint32
	Op     trace.Op
	_      [3]byte
}

// moduleSpan is a module's fixed part.
type moduleSpan struct{ Base, Start, End uint64 }

// funcPlace is the fixed part of a function of a module without a file
// (a foreign trace's regions: trace.Module.Funcs).
type funcPlace struct {
	Line   int64
	Offset uint64
}

// unwrappedCount is an unwrapped call's fixed part.
type unwrappedCount struct {
	Calls uint64
	Ns    int64
}

// shareSummaries tells every analyzer rank the summaries of every logged
// rank, from the owners' logs (rankLogs, this rank's): by logged rank.
func (p *PAG) shareSummaries(c mpix.Comm, run *Run, rankLogs []*rankData) ([]rankSummary, error) {
	mine := make([]rankSummary, len(rankLogs))
	for i, d := range rankLogs {
		s := &mine[i]
		s.Comms, s.Modules, s.Unwrapped, s.NotMapped = d.comms, d.hdr.Modules, d.hdr.Unwrapped, d.hdr.NotMapped
		switch {
		case d.cut != nil:
			s.Note = fmt.Sprintf("%s: rank %d's log is cut short (%v); analysed up to its last whole record, its call %d",
				filepath.Base(run.Files[p.RankLo+i]), p.RankLo+i, strings.TrimPrefix(d.cut.Error(), run.Files[p.RankLo+i]+": "), d.n)
		case d.trailer.Status != trace.EndFinalized:
			s.Note = fmt.Sprintf("%s: rank %d %s; analysed up to its last record",
				filepath.Base(run.Files[p.RankLo+i]), d.hdr.Rank, d.trailer.Ending())
		}
	}
	got, err := c.Allgatherv(encodeSummaries(mine))
	if err != nil {
		return nil, err
	}
	// Every rank reads the same messages: a bad one fails them all.
	sums := make([]rankSummary, p.Ranks)
	for part, b := range got {
		s, err := decodeSummaries(b)
		if lo, hi := p.PartRanks[part], p.PartRanks[part+1]; err == nil && len(s) != hi-lo {
			err = fmt.Errorf("graph: %d log summaries for %d ranks", len(s), hi-lo)
		}
		if err != nil {
			return nil, fmt.Errorf("%v (from analyzer rank %d)", err, part)
		}
		copy(sums[p.PartRanks[part]:], s)
	}
	return sums, nil
}

// encodeSummaries is the message of one analyzer rank's summaries.
func encodeSummaries(ss []rankSummary) []byte {
	e := mpix.NewEncoder(nil)
	mpix.PutList(e, ss, func(e *mpix.Encoder, s *rankSummary) {
		e.PutString(s.Note)
		mpix.PutList(e, s.Comms, putComm)
		mpix.PutList(e, s.Modules, func(e *mpix.Encoder, m *trace.Module) {
			e.PutString(m.Path)
			e.PutString(m.BuildID)
			mpix.PutRecord(e, moduleSpan{m.Base, m.Start, m.End})
			mpix.PutList(e, m.Funcs, func(e *mpix.Encoder, f *trace.Func) {
				e.PutString(f.Name)
				e.PutString(f.File)
				e.PutString(f.Module)
				mpix.PutRecord(e, funcPlace{int64(f.Line), f.Offset})
			})
		})
		mpix.PutList(e, s.Unwrapped, func(e *mpix.Encoder, u *trace.UnwrappedCall) {
			e.PutString(u.Name)
			mpix.PutRecord(e, unwrappedCount{u.Calls, u.Ns})
		})
		mpix.PutList(e, s.NotMapped, func(e *mpix.Encoder, n *trace.NotMapped) {
			e.PutString(n.What)
			mpix.PutRecord(e, n.Count)
		})
	})
	return e.Bytes()
}

func putComm(e *mpix.Encoder, cm *trace.Comm) {
	e.PutString(cm.Name)
	mpix.PutRecord(e, commHead{Parent: cm.Parent, Op: cm.Op})
	for _, l := range [][]int32{cm.Members, cm.Remote, cm.Sources, cm.Dests} {
		mpix.PutRecords(e, l)
	}
}

// decodeSummaries reads encodeSummaries' message back.
func decodeSummaries(b []byte) ([]rankSummary, error) {
	d := mpix.NewDecoder(b)
	ss := mpix.ReadList(d, func(d *mpix.Decoder, s *rankSummary) {
		s.Note = d.ReadString()
		s.Comms = mpix.ReadList(d, readComm)
		s.Modules = mpix.ReadList(d, func(d *mpix.Decoder, m *trace.Module) {
			m.Path, m.BuildID = d.ReadString(), d.ReadString()
			sp := mpix.ReadRecord[moduleSpan](d)
			m.Base, m.Start, m.End = sp.Base, sp.Start, sp.End
			m.Funcs = mpix.ReadList(d, func(d *mpix.Decoder, f *trace.Func) {
				f.Name, f.File, f.Module = d.ReadString(), d.ReadString(), d.ReadString()
				fp := mpix.ReadRecord[funcPlace](d)
				f.Line, f.Offset = int(fp.Line), fp.Offset
			})
		})
		s.Unwrapped = mpix.ReadList(d, func(d *mpix.Decoder, u *trace.UnwrappedCall) {
			u.Name = d.ReadString()
			uc := mpix.ReadRecord[unwrappedCount](d)
			u.Calls, u.Ns = uc.Calls, uc.Ns
		})
		s.NotMapped = mpix.ReadList(d, func(d *mpix.Decoder, n *trace.NotMapped) {
			n.What = d.ReadString()
			n.Count = mpix.ReadRecord[uint64](d)
		})
	})
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("graph: log summaries: %v", err)
	}
	return ss, nil
}

func readComm(d *mpix.Decoder, cm *trace.Comm) {
	cm.Name = d.ReadString()
	h := mpix.ReadRecord[commHead](d)
	cm.Parent, cm.Op = h.Parent, h.Op
	for _, l := range []*[]int32{&cm.Members, &cm.Remote, &cm.Sources, &cm.Dests} {
		*l = mpix.ReadRecords[int32](d)
	}
}
