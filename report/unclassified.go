package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// Unclassified says whether the time inside call ci is MPI time the
// analysis has no model for: a call of class other (MPI_Finalize,
// MPI_Abort, MPI_Pcontrol) but MPI_Init, which is a barrier over
// MPI_COMM_WORLD (trace.Op.IsWorldBarrier), and MPI_Buffer_detach, which
// waits for the receives of the buffered sends it delivers (graph), whose
// waiting no edge of the graph explains, or
// a blocking Wait that completed no request the logs hold (what it waited
// for, an unwrapped call's request or one made while logging was paused,
// is not in the graph).
func Unclassified(ci graph.CallInfo) bool {
	return ci.Op.Class() == trace.ClassOther && !ci.Op.IsWorldBarrier() && ci.Op != trace.OpBufferDetach || ci.WaitUnknown
}

// unclassified fills the path's unclassified time (its "mpi" segments
// inside calls that Unclassified) and bounds the computation on it that
// may be time in unwrapped calls (us), from the segments as the report
// gives them (clipped to a window, if any).
func unclassified(cp *CriticalPath, pc graph.CallTable, us []graph.UnwrappedCalls, ranks int) {
	byOp := map[string]*OpShare{}
	var ops []string // in first-seen order
	var total int64
	for i := range cp.Segments {
		s := &cp.Segments[i]
		ns := s.EndNs - s.StartNs
		total += ns
		if s.Kind != "mpi" || !Unclassified(pc.At(s.Vertex>>1)) {
			continue
		}
		cp.UnclassifiedNs += ns
		o := byOp[s.Op]
		if o == nil {
			o = &OpShare{Op: s.Op}
			byOp[s.Op] = o
			ops = append(ops, s.Op)
		}
		o.Ns += ns
		o.Count++
	}
	cp.UnclassifiedByOp = make([]OpShare, 0, len(ops))
	for _, op := range ops {
		o := *byOp[op]
		if total > 0 {
			o.Share = float64(o.Ns) / float64(total)
		}
		cp.UnclassifiedByOp = append(cp.UnclassifiedByOp, o)
	}
	sortByOp(cp.UnclassifiedByOp)
	// Where in a rank's computation its unwrapped calls were the logs do
	// not say: at most all of their time, at most all of the path's
	// computation on that rank.
	uw := graph.UnwrappedNsByRank(us, ranks)
	for _, b := range cp.ByRank {
		if b.Rank >= 0 && b.Rank < len(uw) {
			cp.UnwrappedBoundNs += min(b.ComputeNs, uw[b.Rank])
		}
	}
}

// writeUnclassified says how much of the path the analysis could not
// classify, if any.
func writeUnclassified(w io.Writer, cp *CriticalPath) {
	if cp.UnclassifiedNs <= 0 && cp.UnwrappedBoundNs <= 0 {
		return
	}
	var path int64
	for _, s := range cp.Segments {
		path += s.EndNs - s.StartNs
	}
	share := func(ns int64) string {
		if path <= 0 {
			return "-"
		}
		return pct(float64(ns) / float64(path))
	}
	fmt.Fprintf(w, "unclassified: %s of the path (%s) inside MPI calls the analysis has no model for", ns(cp.UnclassifiedNs), share(cp.UnclassifiedNs))
	var ops []string
	for i, o := range cp.UnclassifiedByOp {
		if i == 3 {
			ops = append(ops, fmt.Sprintf("%d more", len(cp.UnclassifiedByOp)-i))
			break
		}
		ops = append(ops, o.Op+" "+ns(o.Ns))
	}
	if len(ops) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(ops, ", "))
	}
	if cp.UnwrappedBoundNs > 0 {
		fmt.Fprintf(w, "; up to %s (%s) of its computation may be inside unwrapped MPI calls (see the notes)", ns(cp.UnwrappedBoundNs), share(cp.UnwrappedBoundNs))
	}
	fmt.Fprintln(w)
}
