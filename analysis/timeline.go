package analysis

import (
	"fmt"
	"os"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline"
)

// writeTimeline writes the timeline file, every rank its part; rank 0
// passes the report (for its critical path) and says on stderr what the
// size cap left out.
func writeTimeline(c mpix.Comm, p *graph.PAG, o *Options, rep *report.Report, win graph.Window) error {
	var f *os.File
	var err error
	var segs []report.Segment
	opt := timeline.Options{Window: win, MaxBytes: o.TimelineMaxBytes}
	if c.Rank() == 0 {
		segs, opt.EndsAt = rep.CriticalPath.Segments, rep.EndsAt
		if f, err = os.Create(o.Timeline); err != nil {
			err = fmt.Errorf("--timeline: %v", err)
		}
	}
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
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
		fmt.Fprintf(os.Stderr, "timeline %s: %s\n", o.Timeline, sum.Note())
	}
	return nil
}
