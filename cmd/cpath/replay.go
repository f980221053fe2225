package main

import (
	"errors"
	"slices"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/report"
)

// The --what-if values that leave out the default scenarios, and the
// replay altogether (the POP factors too).
const (
	noWhatIf = "none"
	noReplay = "off"
	offAlone = "--what-if off turns the replay off: it takes no other scenario"
)

// parseWhatIf reads the --what-if scenarios: their syntax is checked
// before the job starts, the ranks and call sites they name against the
// run.
func parseWhatIf(list []string) (scenarios []replay.Scenario, noDefaults bool, err error) {
	for _, s := range list {
		if s == noWhatIf || s == noReplay {
			noDefaults = true
			continue
		}
		x, err := replay.Parse(s)
		if err != nil {
			return nil, false, err
		}
		scenarios = append(scenarios, x)
	}
	if slices.Contains(list, noReplay) && len(scenarios) > 0 {
		return nil, false, errors.New(offAlone)
	}
	return scenarios, noDefaults, nil
}

// replays reports whether the analysis replays the run (not --what-if=off).
func (o analyzeOpts) replays() bool { return !slices.Contains(o.whatIf, noReplay) }

// replayRun computes the POP factors and the what-if predictions over the
// parts: rank 0 gets them, with the exact path (and its calls) to choose
// the default scenarios from, and with --from/--to the window's factors.
// whole is the path search's whole graph on rank 0, if it gathered one.
func replayRun(c mpix.Comm, p *graph.PAG, o analyzeOpts, win graph.Window, path cpath.Path, calls graph.CallTable, whole *cpath.Whole) (*replay.Result, error) {
	scenarios, noDefaults, err := parseWhatIf(o.whatIf)
	if err != nil || !o.replays() {
		return nil, err
	}
	names := &report.Input{PAG: p}
	var function func(rank int, pc uint64) string
	if c.Rank() == 0 {
		sym := report.NewSymbolizer(p)
		names.Symbolize, function = sym.Lookup, sym.Function
	}
	hex := &report.Input{PAG: p}
	ro := replay.Options{Scenarios: scenarios, NoDefaults: noDefaults,
		Path: path, PathCalls: calls, Name: names.Callsite, Function: function, Hex: hex.Callsite, Whole: whole,
		// Only the timeline reads more of the graph than its summary
		// after the replay.
		Release: o.timeline == ""}
	if o.windowUsed {
		ro.Window = &graph.Window{From: win.From, To: win.To}
	}
	return replay.Run(c, p, ro)
}
