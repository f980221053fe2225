package analysis

import (
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/report"
)

// replayRun computes the POP factors and the what-if predictions over the
// parts: rank 0 gets them, with the exact path (and its calls) to choose
// the default scenarios from, and with a window the window's factors.
// whole is the path search's whole graph on rank 0, if it gathered one.
func replayRun(st *state, whole *cpath.Whole) (*replay.Result, error) {
	o := st.o
	if !o.replays() {
		return nil, nil
	}
	names := &report.Input{PAG: st.p}
	var function func(rank int, pc uint64) string
	if st.names != nil {
		names.Symbolize, function = st.names.Lookup, st.names.Function
	}
	hex := &report.Input{PAG: st.p}
	ro := replay.Options{Scenarios: o.Scenarios, NoDefaults: o.NoDefaults,
		Path: st.res.Path, PathCalls: st.calls, Name: names.Callsite, Function: function, Hex: hex.Callsite, Whole: whole,
		// Only the timeline reads more of the graph than its summary
		// after the replay.
		Release: o.Timeline == ""}
	if o.Window != nil {
		ro.Window = &st.win
	}
	return replay.Run(st.c, st.p, ro)
}
