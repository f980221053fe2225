package analysis

import (
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/replay"
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
	if st.sched == nil && st.rows == nil {
		in, err := splitInput(c, p)
		if err != nil {
			return nil, err
		}
		ok := false
		if c.Size() > 1 && o.Frames {
			if st.rows, ok, err = cpath.FrameRows(c, distGraph(p), in, kinds(p)); err != nil {
				return nil, err
			}
			st.in.Analyzer.Frames = ok
		}
		if !ok {
			if st.sched, err = cpath.NewSchedule(c, distGraph(p), in, p.Streams()); err != nil {
				return nil, err
			}
		}
		graph.Timings().Mark(c.Rank(), "replay-order")
	}
	ro := replay.Options{Scenarios: o.Scenarios, NoDefaults: o.NoDefaults, Schedule: st.sched, Rows: st.rows,
		Path: st.res.Path, PathCalls: st.calls, Names: st.names,
		// Only the timeline reads more of the graph than its summary
		// after the replay.
		Release: o.Timeline == ""}
	if o.Window != nil {
		ro.Window = &st.win
	}
	return replay.Run(c, p, ro)
}
