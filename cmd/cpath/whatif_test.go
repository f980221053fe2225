package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cpath/cpath/report"
)

// badWhatIfs are --what-if scenarios the analyzer must reject with one
// line and a non-zero exit: bad syntax before the job starts, what the
// run does not have once it is read.
var badWhatIfs = []struct {
	name     string
	scenario string
	err      string
}{
	{"syntax", "faster", `^cpath: --what-if "faster": unknown scenario \(want balance:RANK, `},
	{"bad factor", "rank:1=-2", `^cpath: --what-if "rank:1=-2": FACTOR is not a non-negative number`},
	{"rank out of range", "balance:4", `^cpath: --what-if balance:4: rank 4 is not in the run \(ranks 0-3\)$`},
	{"unknown call site", "callsite:halo.c:12=0.5", `^cpath: --what-if callsite:halo.c:12=0.5: no call site "halo.c:12" in the run$`},
}

func TestWhatIfBadInput(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 4)
	for _, tc := range badWhatIfs {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "--what-if", tc.scenario, dir)
			if code != 1 || strings.Count(errs, "\n") != 1 || out != "" {
				t.Fatalf("exit %d, stderr %q, stdout %.200q; want 1, one line, nothing", code, errs, out)
			}
			if !regexp.MustCompile(tc.err).MatchString(strings.TrimSuffix(errs, "\n")) {
				t.Fatalf("stderr %q does not match %q", errs, tc.err)
			}
		})
	}
}

// whatIfArgs are scenarios the synthetic halo run (writeRun) answers.
var whatIfArgs = []string{"--what-if", "rank:0=2", "--what-if", "transfers=0.5", "--what-if", "balance:3"}

// TestWhatIf: the scenarios asked come first, then the default ones; each
// has its prediction; the text report shows the sections.
func TestWhatIf(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 4)
	code, out, errs := runCLI(t, append(append([]string{"--json", "-", "--json-segments"}, whatIfArgs...), dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.POP == nil || len(rep.POP.UsefulNs) != 4 {
		t.Fatalf("pop: %+v", rep.POP)
	}
	var got []string
	for _, w := range rep.WhatIf {
		got = append(got, w.Scenario)
		if w.RuntimeNs+w.GainNs != rep.CriticalPath.LengthNs {
			t.Errorf("%s: runtime %d + gain %d is not the run's longest path %d", w.Scenario, w.RuntimeNs, w.GainNs, rep.CriticalPath.LengthNs)
		}
	}
	// The defaults: transfers free, MPI's own time free, the heaviest rank balanced (the ranks'
	// clocks differ by a few µs, so their computation does), and no
	// stretches to halve (the calls have no call sites).
	heavy := 0
	for r, u := range rep.POP.UsefulNs {
		if u > rep.POP.UsefulNs[heavy] {
			heavy = r
		}
	}
	want := []string{"rank:0=2", "transfers=0.5", "balance:3", "transfers=0", "mpi=0", fmt.Sprintf("balance:%d", heavy)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("what_if scenarios %q, want %q", got, want)
	}
	if w := rep.WhatIf[0]; w.GainNs >= 0 {
		t.Errorf("rank:0=2 (rank 0 computing twice as long) gains %d, want a loss", w.GainNs)
	}
	code, out, _ = runCLI(t, append(whatIfArgs, dir)...)
	for _, want := range []string{"\nPOP efficiency factors", "\nWhat-if (the longest path re-solved", "\nrank:0=2 ", "\nbalance:3 "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
	// --what-if off: no replay at all; no other scenario with it.
	_, out, _ = runCLI(t, "--json", "-", "--json-segments", "--what-if", "off", dir)
	rep = report.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.POP != nil || rep.WhatIf != nil {
		t.Errorf("--what-if off: %v, pop %+v, what_if %+v; want neither", err, rep.POP, rep.WhatIf)
	}
	code, _, errs = runCLI(t, "--what-if", "off", "--what-if", "balance:1", dir)
	if code != 1 || errs != "cpath: --what-if off turns the replay off: it takes no other scenario\n" {
		t.Errorf("--what-if off --what-if balance:1: exit %d, %q", code, errs)
	}
	// --what-if none: only what was asked.
	_, out, _ = runCLI(t, "--json", "-", "--json-segments", "--what-if", "none", "--what-if", "balance:1", dir)
	rep = report.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.WhatIf) != 1 || rep.WhatIf[0].Scenario != "balance:1" {
		t.Errorf("--what-if none --what-if balance:1: %v %+v", err, rep.WhatIf)
	}
}
