//go:build mpi

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

func analyzeJSON(t *testing.T, args ...string) *report.Report {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"analyze", "--json", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, code, errs)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("analyze %v: %v", args, err)
	}
	return &r
}

// checkPath checks what must hold of any critical path: the exact
// algorithms agree on it, its segments are contiguous from the run's
// start and add up to its length, and its length is the run time up to
// the difference it reports, which is clock error only: at most the
// larger of 0.1 ms and the error the logs' clock synchronisation reports.
func checkPath(t *testing.T, dir string) *report.Report {
	t.Helper()
	ref := analyzeJSON(t, "--algo=dag", dir)
	cp := ref.CriticalPath
	if len(cp.Segments) == 0 {
		t.Fatal("empty critical path")
	}
	var sum int64
	for i, s := range cp.Segments {
		if s.EndNs < s.StartNs {
			t.Fatalf("segment %d runs backwards: %+v", i, s)
		}
		if i > 0 && s.StartNs != cp.Segments[i-1].EndNs {
			t.Fatalf("segment %d starts at %d, the one before ends at %d", i, s.StartNs, cp.Segments[i-1].EndNs)
		}
		sum += s.EndNs - s.StartNs
	}
	if sum != cp.LengthNs || cp.LengthNs-ref.RuntimeNs != cp.DiffNs {
		t.Fatalf("segments sum to %d, length %d, run time %d, diff %d", sum, cp.LengthNs, ref.RuntimeNs, cp.DiffNs)
	}
	if last := cp.Segments[len(cp.Segments)-1]; last.EndNs != ref.RuntimeNs || cp.Segments[0].StartNs != 0 {
		t.Fatalf("the path runs from %d to %d, the run from 0 to %d", cp.Segments[0].StartNs, last.EndNs, ref.RuntimeNs)
	}
	if limit := max(100_000, clockError(t, dir)); cp.DiffNs > limit || -cp.DiffNs > limit {
		t.Fatalf("critical path %d ns, run time %d ns: differs by %d ns (limit %d)", cp.LengthNs, ref.RuntimeNs, cp.DiffNs, limit)
	}
	t.Logf("critical path %d ns, run time %d ns, difference %d ns", cp.LengthNs, ref.RuntimeNs, cp.DiffNs)
	for _, algo := range []string{"dijkstra", "delta", "split"} {
		got := analyzeJSON(t, "--algo="+algo, dir).CriticalPath
		if got.LengthNs != cp.LengthNs || !reflect.DeepEqual(got.Segments, cp.Segments) {
			t.Fatalf("%s: length %d, %d segments; dag: %d, %d segments", algo, got.LengthNs, len(got.Segments), cp.LengthNs, len(cp.Segments))
		}
	}
	return ref
}

// clockError is the largest error of the clock synchronisation the logs
// in dir report (at MPI_Init or MPI_Finalize, any rank).
func clockError(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.cplog"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no logs in %s", dir)
	}
	e := int64(0)
	for _, f := range files {
		l, err := trace.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		e = max(e, l.Header.Clock.Init.ErrNs)
		if fin := l.Header.Clock.Final; fin != nil {
			e = max(e, fin.ErrNs)
		}
	}
	return e
}

// TestAnalyzeLAMMPS analyses Debian's LAMMPS (in.lj, 2 ranks) recorded
// under the logger, and writes its timeline.
func TestAnalyzeLAMMPS(t *testing.T) {
	lib := needMPI(t)
	lmp := mpitest.NeedTool(t, "lmp", "lammps")
	input := filepath.Join(mpitest.RepoRoot(t), "logger", "e2e", "testdata", "in.lj")
	dir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, 2, lib, dir, t.TempDir(), lmp, "-in", input, "-log", "none", "-echo", "none")
	r := checkPath(t, dir)
	if r.Run.Messages == 0 || r.Run.Unmatched != 0 || len(r.Calls) == 0 {
		t.Fatalf("LAMMPS: %d messages, %d unmatched, %d collective calls", r.Run.Messages, r.Run.Unmatched, len(r.Calls))
	}
	t.Logf("LAMMPS: run %d ns, path %d ns (diff %d), %d segments, %d messages", r.RuntimeNs, r.CriticalPath.LengthNs,
		r.CriticalPath.DiffNs, len(r.CriticalPath.Segments), r.Run.Messages)
	timelines(t, dir) // its timeline: valid, with the report's calls, messages and segments, the same at P = 2
}

// TestAnalyzeUnderMPI runs the analyzer as an MPI job: the report is the
// single process's, and a bad log ends every rank at once with one message.
func TestAnalyzeUnderMPI(t *testing.T) {
	lib := needMPI(t)
	halo := buildHalo(t)
	dir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, 2, lib, dir, t.TempDir(), halo, "30", "2000")
	single := checkPath(t, dir)

	bin := mpitest.CPathBin(t)
	mpirun := func(args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "mpirun", append([]string{"--allow-run-as-root", "--oversubscribe", "-np", "2", bin}, args...)...)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("mpirun cpath %v hung", args)
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errs.String()
	}
	code, out, errs := mpirun("analyze", "--json", "-", dir)
	if code != 0 {
		t.Fatalf("mpirun cpath analyze: exit %d: %s", code, errs)
	}
	var multi report.Report
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatalf("mpirun cpath analyze printed %d bytes that are not one report: %v", len(out), err)
	}
	sameAnalysis(t, "mpirun -np 2", &multi, single)
	if a := multi.CriticalPath.Analyzer; a == nil || a.Ranks != 2 || a.BuildBytes == 0 {
		t.Fatalf("the MPI job's report says it ran on %+v, want 2 analyzer ranks that shipped the graph's edges", a)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	os.Mkdir(bad, 0o755)
	for _, f := range []string{"rank-000000.cplog", "rank-000001.cplog"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(bad, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(bad, "rank-000001.cplog"), []byte("garbage, not a log"), 0o644)
	start := time.Now()
	code, _, errs = mpirun("analyze", bad)
	if code == 0 || strings.Count(errs, "cpath: ") != 1 || !strings.Contains(errs, "rank-000001.cplog: not a cpath log") {
		t.Fatalf("bad log under mpirun: exit %d, stderr %q (want one cpath: line naming the file)", code, errs)
	}
	t.Logf("bad log: exit %d after %v", code, time.Since(start).Round(time.Millisecond))
}
