package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cpath/cpath/graph"
	"github.com/spf13/cobra"
)

// timelineOpts are the flags of the timeline and the time window.
type timelineOpts struct {
	timeline string
	maxMB    float64
	from, to string
}

func addTimelineFlags(cmd *cobra.Command, o *timelineOpts) {
	f := cmd.Flags()
	f.StringVar(&o.timeline, "timeline", "", "write the run as a Chrome/Perfetto trace (trace-event JSON) to `FILE`: open it in\n"+
		"ui.perfetto.dev or chrome://tracing (a process per rank, MPI calls, computation, waits,\n"+
		"message arrows, the critical path marked and on its own track)")
	f.Float64Var(&o.maxMB, "timeline-max-mb", 100, "keep the --timeline file under `MB` megabytes (10^6 bytes): for a larger run the\n"+
		"shortest calls and stretches of computation off the critical path are left out, and stderr and\n"+
		"the file say what; the critical path is always drawn whole (where its slices alone do not fit,\n"+
		"the shortest go, and its own track shows it). 0: no limit")
	f.StringVar(&o.from, "from", "", "restrict the timeline and the critical path's tables (text and JSON) to the run from this\n"+
		"`TIME` on, and give the POP factors of that window too: a duration since the run's start\n"+
		"(1.5s, 200ms, 10us) or ns")
	f.StringVar(&o.to, "to", "", "restrict them to the run up to this `TIME` (as --from; default: the run's end)")
}

// parseTime reads a --from/--to value: a Go duration or a number of ns.
func parseTime(flag, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return 0, fmt.Errorf("--%s=%s: not a time (a duration such as 1.5s, 200ms, 10us, or ns)", flag, v)
		}
		ns = int64(d)
	}
	if ns < 0 {
		return 0, fmt.Errorf("--%s=%s: a time in the run cannot be negative", flag, v)
	}
	return ns, nil
}

// check validates the flags before any log is read, and returns the
// window they ask (nil for none).
func (o *timelineOpts) check() (*graph.Window, error) {
	from, err := parseTime("from", o.from)
	if err != nil {
		return nil, err
	}
	to, err := parseTime("to", o.to)
	if err != nil {
		return nil, err
	}
	if o.to != "" && to <= from {
		return nil, fmt.Errorf("--from=%s --to=%s: the window is empty (--from must be before --to)", orZero(o.from), o.to)
	}
	if o.maxMB < 0 || o.maxMB != o.maxMB {
		return nil, fmt.Errorf("--timeline-max-mb=%v: must be positive (or 0 for no limit)", o.maxMB)
	}
	if o.from == "" && o.to == "" {
		return nil, nil
	}
	return &graph.Window{From: from, To: to}, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
