package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cpath/cpath/analysis"
	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline/timelinetest"
)

// reportOf analyses dir in-process with args and returns the JSON report.
func reportOf(t *testing.T, dir string, args ...string) *report.Report {
	t.Helper()
	code, out, errs := runCLI(t, append(append([]string{"analyze", "--json", "-", "--json-segments"}, args...), dir)...)
	if code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, code, errs)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestTimelineBadInput: a window outside the run, a bad time, budget or
// output file is one line on stderr and exit 1, before or after the logs
// are read.
func TestTimelineBadInput(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2)
	run := reportOf(t, dir).RuntimeNs
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--from=-1s"}, `^cpath: --from=-1s: a time in the run cannot be negative$`},
		{[]string{"--to=-5"}, `^cpath: --to=-5: a time in the run cannot be negative$`},
		{[]string{"--from=soon"}, `^cpath: --from=soon: not a time \(a duration such as 1.5s, 200ms, 10us, or ns\)$`},
		{[]string{"--from=2ms", "--to=1ms"}, `^cpath: --from=2ms --to=1ms: the window is empty \(--from must be before --to\)$`},
		{[]string{"--from=1ms", "--to=1ms"}, `the window is empty`},
		{[]string{"--to=0"}, `^cpath: --from=0 --to=0: the window is empty`},
		{[]string{"--from=1h"}, `^cpath: --from=1h: outside the run, which lasts .* \(\d+ ns\)$`},
		{[]string{fmt.Sprintf("--from=%d", run)}, `^cpath: --from=\d+: outside the run`},
		{[]string{"--from=1h", "--to=2h", "--timeline", filepath.Join(t.TempDir(), "t.json")}, `outside the run`},
		{[]string{"--timeline-max-mb=-1", "--timeline", "t.json"}, `^cpath: --timeline-max-mb=-1: must be positive \(or 0 for no limit\)$`},
		{[]string{"--timeline", "-"}, `^cpath: --timeline: needs a file name`},
		{[]string{"--timeline", filepath.Join(t.TempDir(), "no", "such", "dir", "t.json")}, `^cpath: --timeline: open .*t\.json: no such file or directory$`},
		{[]string{"--timeline", "/dev/full"}, `^cpath: --timeline: write /dev/full: no space left on device$`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, append(tc.args, dir)...)
			if code != 1 || strings.Count(errs, "\n") != 1 || !regexp.MustCompile(tc.err).MatchString(strings.TrimSuffix(errs, "\n")) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line matching %q", code, errs, tc.err)
			}
			if out != "" {
				t.Fatalf("a report on stdout despite the error: %.300s", out)
			}
		})
	}
	// The whole run as a window is no window at all, but for its key.
	whole, win := reportOf(t, dir), reportOf(t, dir, "--from=0", fmt.Sprintf("--to=%d", run))
	if fmt.Sprint(win.CriticalPath.WindowNs) != fmt.Sprint([]int64{0, run}) || len(win.CriticalPath.Segments) != len(whole.CriticalPath.Segments) {
		t.Fatalf("window [0, %d]: %v, %d segments of %d", run, win.CriticalPath.WindowNs, len(win.CriticalPath.Segments), len(whole.CriticalPath.Segments))
	}
}

// TestWindowReport: --from/--to restrict the critical path's segments to
// the window (clipped to it) and sum by_rank and by_op over them, in the
// JSON and the text report; the other tables stay the whole run's.
func TestWindowReport(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: 2000, Pattern: gen.Imbalanced, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	whole := reportOf(t, dir)
	from, to := whole.RuntimeNs/4, whole.RuntimeNs/2
	args := []string{fmt.Sprintf("--from=%dns", from), fmt.Sprintf("--to=%d", to)}
	win := reportOf(t, dir, args...)
	cp := win.CriticalPath
	if fmt.Sprint(cp.WindowNs) != fmt.Sprint([]int64{from, to}) || cp.LengthNs != whole.CriticalPath.LengthNs {
		t.Fatalf("window_ns %v, length %d; want [%d %d], %d", cp.WindowNs, cp.LengthNs, from, to, whole.CriticalPath.LengthNs)
	}
	// The whole path's segments that overlap the window, cut to it.
	var want []report.Segment
	for _, s := range whole.CriticalPath.Segments {
		if s.EndNs > from && s.StartNs < to || s.StartNs == s.EndNs && s.StartNs >= from && s.StartNs <= to {
			s.StartNs, s.EndNs = max(s.StartNs, from), min(s.EndNs, to)
			want = append(want, s)
		}
	}
	if len(want) == 0 || len(want) == len(whole.CriticalPath.Segments) || fmt.Sprint(cp.Segments) != fmt.Sprint(want) {
		t.Fatalf("%d segments in the window, want %d of %d", len(cp.Segments), len(want), len(whole.CriticalPath.Segments))
	}
	var share float64
	var ns int64
	for _, b := range cp.ByRank {
		share += b.Share
		ns += b.LaunchNs + b.ComputeNs + b.MPINs + b.TransferNs
	}
	var opNs int64
	for _, o := range cp.ByOp {
		opNs += o.Ns
	}
	if ns != to-from || opNs != to-from || share < 0.999 || share > 1.001 {
		t.Fatalf("by_rank sums to %d ns (share %v), by_op to %d ns; the window is %d ns", ns, share, opNs, to-from)
	}
	if fmt.Sprint(win.Waitstates) != fmt.Sprint(whole.Waitstates) || fmt.Sprint(win.Processes) == "" || len(win.Calls) != len(whole.Calls) {
		t.Fatal("the window changed tables it does not restrict")
	}
	code, out, errs := runCLI(t, append(args, dir)...)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("window %s to %s (--from/--to): the critical path's tables cover its %d segments in it", report.Duration(from), report.Duration(to), len(want))) {
		t.Fatalf("exit %d (%s); the text report does not say its window:\n%s", code, errs, out)
	}
}

// TestTimelineJobs: the timeline the command writes is the same at one
// analyzer rank and at two (in-process), and draws what the report says,
// the critical path being the exact one or a heuristic's.
func TestTimelineJobs(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 5, CallsPerRank: 600, Pattern: gen.RandomP2P, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		algo  string
		exact bool
	}{{"dag", false}, {"topo-shuffle", false}, {"topo-shuffle", true}} {
		t.Run(fmt.Sprintf("%s/compare-exact=%v", tc.algo, tc.exact), func(t *testing.T) { checkTimelineJobs(t, dir, tc.algo, tc.exact) })
	}
}

func checkTimelineJobs(t *testing.T, dir, algo string, exact bool) {
	var files [2][]byte
	var rep report.Report
	for i, P := range []int{1, 2} {
		file := filepath.Join(t.TempDir(), "t.json")
		var b strings.Builder
		errs := make([]error, P)
		mpixtest.Run(P, func(c mpix.Comm) {
			out := io.Discard
			if c.Rank() == 0 {
				out = &b
			}
			errs[c.Rank()] = analysis.Run(c, analysis.Options{Dir: dir, Algo: algo, CompareExact: exact, JSON: "-", JSONSegments: true, Top: 5, Timeline: file, Stdout: out})
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if files[i], err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(b.String()), &rep); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("the timeline of two analyzer ranks differs from one's")
	}
	timelinetest.CheckRun(t, files[0], &rep)
}
