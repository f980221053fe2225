package replay

import "github.com/cpath/cpath/internal/mpix"

// A part's rankInfos cross ranks (gathered on rank 0 for the plan) in
// mpix's framed form: a list of them, each a head record and its arrays;
// win, the part's own, stays behind.

// rankHead is a rankInfo's fixed part on the wire.
type rankHead struct {
	Rank             int64
	Init, Fin        int32
	From, To         int64
	WinUseful        int64
	Empty, Finalized bool
	_                [6]byte
}

// putRankInfos puts ris in e's message.
func putRankInfos(e *mpix.Encoder, ris []rankInfo) {
	mpix.PutList(e, ris, func(e *mpix.Encoder, ri *rankInfo) {
		mpix.PutRecord(e, rankHead{Rank: int64(ri.Rank), Init: ri.Init, Fin: ri.Fin, From: ri.From, To: ri.To,
			WinUseful: ri.WinUseful, Empty: ri.Empty, Finalized: ri.Finalized})
		mpix.PutRecords(e, ri.Marks)
		mpix.PutRecords(e, ri.Useful)
		mpix.PutRecords(e, ri.PhaseFrom)
		mpix.PutRecords(e, ri.PhaseTo)
		mpix.PutRecords(e, ri.Sites)
		mpix.PutList(e, ri.ThreadUseful, func(e *mpix.Encoder, tu *[]int64) { mpix.PutRecords(e, *tu) })
		mpix.PutRecords(e, ri.WinThreadUseful)
	})
}

// readRankInfos reads back what putRankInfos put, of a run of ranks
// ranks. Errors are d's: a rank out of the run, or phases that are not
// one more than the marks, is one.
func readRankInfos(d *mpix.Decoder, ranks int) []rankInfo {
	return mpix.ReadList(d, func(d *mpix.Decoder, ri *rankInfo) {
		h := mpix.ReadRecord[rankHead](d)
		*ri = rankInfo{Rank: int(h.Rank), Init: h.Init, Fin: h.Fin, From: h.From, To: h.To, WinUseful: h.WinUseful,
			Empty: h.Empty, Finalized: h.Finalized,
			Marks: mpix.ReadRecords[Mark](d), Useful: mpix.ReadRecords[int64](d),
			PhaseFrom: mpix.ReadRecords[int64](d), PhaseTo: mpix.ReadRecords[int64](d), Sites: mpix.ReadRecords[uint64](d),
			ThreadUseful:    mpix.ReadList(d, func(d *mpix.Decoder, tu *[]int64) { *tu = mpix.ReadRecords[int64](d) }),
			WinThreadUseful: mpix.ReadRecords[int64](d)}
		if d.Err() != nil {
			return
		}
		if len(ri.WinThreadUseful) != len(ri.ThreadUseful) {
			d.Fail("replay: rank %d's %d threads and %d in the window", h.Rank, len(ri.ThreadUseful), len(ri.WinThreadUseful))
		}
		for _, tu := range ri.ThreadUseful {
			if len(tu) != len(ri.Marks)+1 {
				d.Fail("replay: rank %d's %d marks and a thread's %d phases", h.Rank, len(ri.Marks), len(tu))
			}
		}
		if h.Rank < 0 || h.Rank >= int64(ranks) {
			d.Fail("replay: rank %d of %d", h.Rank, ranks)
		}
		if n := len(ri.Marks) + 1; len(ri.Useful) != n || len(ri.PhaseFrom) != n || len(ri.PhaseTo) != n {
			d.Fail("replay: rank %d's %d marks and %d, %d and %d phases", h.Rank, len(ri.Marks), len(ri.Useful), len(ri.PhaseFrom), len(ri.PhaseTo))
		}
	})
}
