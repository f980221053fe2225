package analysis

import (
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/report"
)

// replayRun computes the POP factors and the what-if predictions over the
// parts: rank 0 gets them, with the exact path (and its calls) to choose
// the default scenarios from, and with a window the window's factors. It
// sweeps the schedule of the path search (dag's), or one made for it.
func replayRun(st *state) (*replay.Result, error) {
	o, c, p := st.o, st.c, st.p
	if !o.replays() {
		return nil, nil
	}
	if st.sched == nil {
		in, err := splitInput(c, p)
		if err != nil {
			return nil, err
		}
		if st.sched, err = cpath.NewSchedule(c, distGraph(p), in, p.Streams()); err != nil {
			return nil, err
		}
		graph.Timings().Mark(c.Rank(), "replay-order")
	}
	names := &report.Input{PAG: p}
	var function func(rank int, pc uint64) string
	if st.names != nil {
		names.Symbolize, function = st.names.Lookup, st.names.Function
	}
	hex := &report.Input{PAG: p}
	ro := replay.Options{Scenarios: o.Scenarios, NoDefaults: o.NoDefaults, Schedule: st.sched,
		Path: st.res.Path, PathCalls: st.calls, Name: names.Callsite, Function: function, Hex: hex.Callsite}
	if o.Window != nil {
		ro.Window = &st.win
	}
	return replay.Run(c, p, ro)
}
