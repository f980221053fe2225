package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline"
	"github.com/spf13/cobra"
)

// timelineOpts are the flags of the timeline and the time window.
type timelineOpts struct {
	timeline   string
	maxMB      float64
	from, to   string
	fromNs     int64 // parsed --from
	toNs       int64 // parsed --to
	windowUsed bool  // --from or --to given
}

func addTimelineFlags(cmd *cobra.Command, o *timelineOpts) {
	f := cmd.Flags()
	f.StringVar(&o.timeline, "timeline", "", "write the run as a Chrome/Perfetto trace (trace-event JSON) to `FILE`: open it in\n"+
		"ui.perfetto.dev or chrome://tracing (a process per rank, MPI calls, computation, waits,\n"+
		"message arrows, the critical path marked and on its own track)")
	f.Float64Var(&o.maxMB, "timeline-max-mb", 100, "keep the --timeline file under `MB` megabytes (10^6 bytes): for a larger run the\n"+
		"shortest calls and stretches of computation off the critical path are left out, and stderr and\n"+
		"the file say what; the critical path is always drawn whole. 0: no limit")
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

// check validates the flags before any log is read.
func (o *timelineOpts) check() error {
	var err error
	if o.fromNs, err = parseTime("from", o.from); err != nil {
		return err
	}
	if o.toNs, err = parseTime("to", o.to); err != nil {
		return err
	}
	o.windowUsed = o.from != "" || o.to != ""
	if o.to != "" && o.toNs <= o.fromNs {
		return fmt.Errorf("--from=%s --to=%s: the window is empty (--from must be before --to)", orZero(o.from), o.to)
	}
	if o.maxMB < 0 || o.maxMB != o.maxMB {
		return fmt.Errorf("--timeline-max-mb=%v: must be positive (or 0 for no limit)", o.maxMB)
	}
	if o.timeline == "-" {
		return fmt.Errorf("--timeline: needs a file name (the trace is too large for a terminal)")
	}
	return nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// window is the window the flags give, on the run of p (every analyzer
// rank knows its span): the whole run without them. A window that starts
// at or after the run's end is bad input.
func (o *timelineOpts) window(p *graph.PAG) (graph.Window, error) {
	run := p.T1 - p.T0
	w := graph.Window{From: o.fromNs, To: run}
	if o.to != "" {
		w.To = min(o.toNs, run)
	}
	if o.windowUsed && w.From >= run {
		return w, fmt.Errorf("--from=%s: outside the run, which lasts %s (%d ns)", o.from, report.Duration(run), run)
	}
	return w, nil
}

// writeTimeline writes the --timeline file, every rank its part; rank 0
// passes the report (for its critical path) and says on stderr what the
// size cap left out.
func writeTimeline(o *timelineOpts, c mpix.Comm, p *graph.PAG, rep *report.Report, win graph.Window) error {
	if o.timeline == "" {
		return nil
	}
	var f *os.File
	var err error
	var segs []report.Segment
	if c.Rank() == 0 {
		segs = rep.CriticalPath.Segments
		if f, err = os.Create(o.timeline); err != nil {
			err = fmt.Errorf("--timeline: %v", err)
		}
	}
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	opt := timeline.Options{Window: win, MaxBytes: int64(o.maxMB * 1e6)}
	sum, err := timeline.Write(c, p, segs, f, opt)
	if c.Rank() == 0 {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("--timeline: %v", err)
		}
	}
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	if c.Rank() == 0 && sum.Capped() {
		fmt.Fprintf(os.Stderr, "timeline %s: %s\n", o.timeline, sum.Note())
	}
	return nil
}
