package report

import "github.com/cpath/cpath/graph"

// Duration writes a time as the text report does: "1.234 s", "12.50 ms",
// "3.4 µs", "87 ns".
func Duration(v int64) string { return ns(v) }

// windowPath restricts the critical path to the window: the segments it
// holds, clipped to it, and by_rank and by_op summed over those. Shares
// are of the path's time inside the window; length_ns stays the whole
// path's.
func windowPath(cp *CriticalPath, w graph.Window) {
	cp.WindowNs = []int64{w.From, w.To}
	segs := cp.Segments[:0]
	var total int64
	byRank := make([]RankShare, len(cp.ByRank))
	byOp := map[string]*OpShare{}
	var ops []string // in first-seen order, so that the result does not depend on map order
	for _, s := range cp.Segments {
		if !w.Holds(s.StartNs, s.EndNs) {
			continue
		}
		s.StartNs, s.EndNs = w.Clip(s.StartNs, s.EndNs)
		segs = append(segs, s)
		ns := s.EndNs - s.StartNs
		total += ns
		b := &byRank[s.Rank]
		op := s.Op
		switch s.Kind {
		case "launch":
			b.LaunchNs += ns
			op = Launch
		case "compute":
			b.ComputeNs += ns
			op = Computation
		case "transfer":
			b.TransferNs += ns
		case "io":
			b.IONs += ns
		default:
			b.MPINs += ns
		}
		o := byOp[op]
		if o == nil {
			o = &OpShare{Op: op}
			byOp[op] = o
			ops = append(ops, op)
		}
		o.Ns += ns
		o.Count++
	}
	cp.Segments = segs
	for i := range byRank {
		b := &byRank[i]
		b.Rank = i
		if total > 0 {
			b.Share = float64(b.LaunchNs+b.ComputeNs+b.MPINs+b.IONs+b.TransferNs) / float64(total)
		}
	}
	cp.ByRank = byRank
	cp.ByOp = make([]OpShare, 0, len(ops))
	for _, op := range ops {
		o := *byOp[op]
		if total > 0 {
			o.Share = float64(o.Ns) / float64(total)
		}
		cp.ByOp = append(cp.ByOp, o)
	}
	sortByOp(cp.ByOp)
}
