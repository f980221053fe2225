package main

import (
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/report"
)

// noWhatIf is the --what-if value that leaves out the default scenarios.
const noWhatIf = "none"

// parseWhatIf reads the --what-if scenarios: their syntax is checked
// before the job starts, the ranks and call sites they name against the
// run.
func parseWhatIf(list []string) (scenarios []replay.Scenario, noDefaults bool, err error) {
	for _, s := range list {
		if s == noWhatIf {
			noDefaults = true
			continue
		}
		x, err := replay.Parse(s)
		if err != nil {
			return nil, false, err
		}
		scenarios = append(scenarios, x)
	}
	return scenarios, noDefaults, nil
}

// replayRun computes the POP factors and the what-if predictions over the
// parts: rank 0 gets them, with the exact path (and its calls) to choose
// the default scenarios from.
func replayRun(c mpix.Comm, p *graph.PAG, o analyzeOpts, path cpath.Path, calls graph.CallTable) (*replay.Result, error) {
	scenarios, noDefaults, err := parseWhatIf(o.whatIf)
	if err != nil {
		return nil, err
	}
	names := &report.Input{PAG: p}
	if c.Rank() == 0 {
		names.Symbolize = report.NewSymbolizer(p).Lookup
	}
	hex := &report.Input{PAG: p}
	return replay.Run(c, p, replay.Options{Scenarios: scenarios, NoDefaults: noDefaults,
		Path: path, PathCalls: calls, Name: names.Callsite, Hex: hex.Callsite})
}
