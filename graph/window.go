package graph

// Window is a stretch of the run, [From, To] in ns since its start: what
// --from/--to restrict the critical path's tables, the POP factors of the
// window and the timeline to. One type for all of them, so that a stretch
// is kept or clipped by one rule everywhere.
type Window struct{ From, To int64 }

// Holds says whether the window keeps a stretch [s, e] (ns since the run's
// start): one that overlaps it for a positive time, or an instant (s == e)
// inside it, ends included. Everything windowed (the report's segments,
// the timeline's slices) is kept by this one rule.
func (w Window) Holds(s, e int64) bool {
	if s == e {
		return s >= w.From && s <= w.To
	}
	return max(s, w.From) < min(e, w.To)
}

// Clip returns [s, e] cut to the window.
func (w Window) Clip(s, e int64) (int64, int64) {
	s, e = max(s, w.From), min(e, w.To)
	return s, max(s, e)
}
