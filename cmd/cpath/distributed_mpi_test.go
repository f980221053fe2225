//go:build mpi

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
)

// mpiCPath runs the cpath command (built with the mpi tag) as an MPI job of
// np ranks and returns its exit status, stdout and stderr.
func mpiCPath(t *testing.T, np int, args ...string) (int, string, string) {
	t.Helper()
	mpirun := mpitest.OpenMPI.Mpirun(t)
	mpiBin := mpitest.CPathBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np), mpiBin}, args...)...)
	// Oversubscribed ranks must not spin while they wait.
	cmd.Env = append(os.Environ(), "OMPI_MCA_mpi_yield_when_idle=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d cpath %v hung", np, args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errs.String()
}

func mpiReport(t *testing.T, np int, args ...string) *report.Report {
	t.Helper()
	code, out, errs := mpiCPath(t, np, append([]string{"analyze", "--json", "-", "--json-segments"}, args...)...)
	if code != 0 {
		t.Fatalf("mpirun -np %d cpath %v: exit %d: %s", np, args, code, errs)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mpirun -np %d cpath %v: %v", np, args, err)
	}
	return &r
}

// sameAnalysis compares what an exact distributed analysis must share
// with the sequential reference's report: the path, the per-process table
// (but the time the analysis itself took), the collective instances, the
// wait states and the run's counts.
func sameAnalysis(t *testing.T, what string, got, want *report.Report) {
	t.Helper()
	strip := func(ps []report.Process) []report.Process {
		out := make([]report.Process, len(ps))
		for i, p := range ps {
			p.GraphTimeNs, p.TotalTimeNs = 0, 0
			out[i] = p
		}
		return out
	}
	g, w := got.CriticalPath, want.CriticalPath
	switch {
	case g.LengthNs != w.LengthNs || !reflect.DeepEqual(g.Segments, w.Segments):
		t.Errorf("%s: path %d ns in %d segments, dag %d ns in %d", what, g.LengthNs, len(g.Segments), w.LengthNs, len(w.Segments))
	case !reflect.DeepEqual(g.ByRank, w.ByRank) || !reflect.DeepEqual(g.ByOp, w.ByOp):
		t.Errorf("%s: path profile differs", what)
	case !reflect.DeepEqual(strip(got.Processes), strip(want.Processes)):
		t.Errorf("%s: per-process table differs", what)
	case !reflect.DeepEqual(got.Calls, want.Calls):
		t.Errorf("%s: collective instances differ (%d, dag %d)", what, len(got.Calls), len(want.Calls))
	case !reflect.DeepEqual(got.Waitstates, want.Waitstates):
		t.Errorf("%s: wait states differ", what)
	case !reflect.DeepEqual(got.Run, want.Run) || got.RuntimeNs != want.RuntimeNs:
		t.Errorf("%s: run summary differs: %+v, dag %+v", what, got.Run, want.Run)
	case !reflect.DeepEqual(got.POP, want.POP):
		t.Errorf("%s: POP factors differ: %+v, dag %+v", what, got.POP, want.POP)
	case !reflect.DeepEqual(got.WhatIf, want.WhatIf):
		t.Errorf("%s: what-if predictions differ: %+v, dag %+v", what, got.WhatIf, want.WhatIf)
	case !reflect.DeepEqual(got.CommMatrix, want.CommMatrix) || !reflect.DeepEqual(got.Communicators, want.Communicators) ||
		!reflect.DeepEqual(got.MessageSizes, want.MessageSizes):
		t.Errorf("%s: traffic tables differ", what)
	}
}

// sameText compares two text reports but for what the analysis itself
// took: the analyzer line, and the per-process table's graph_time and
// total_time columns (the second and third of numbers after the rank:
// program, graph, total).
func sameText(t *testing.T, what, got, want string) {
	t.Helper()
	norm := func(s string) []string {
		var out []string
		inProcs := false
		for _, l := range strings.Split(s, "\n") {
			f := strings.Fields(l)
			switch {
			case strings.HasPrefix(l, "analyzer:"):
				continue
			case len(f) > 0 && f[0] == "rank" && strings.Contains(l, "graph_time"):
				inProcs = true
			case inProcs && len(f) >= 4:
				f = append(f[:2], f[4:]...) // rank, program_time, [graph_time, total_time], ...
			case inProcs:
				inProcs = false
			}
			out = append(out, strings.Join(f, " "))
		}
		return out
	}
	g, w := norm(got), norm(want)
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s: text line %d: %q, one process's %q", what, i+1, gl, wl)
			return
		}
	}
}

// TestSameReportEveryP: the default report (dag, the replay's POP factors
// and what-if predictions) of recorded and generated runs is the same at
// every number of analyzer ranks, text and JSON, but for what the
// analysis itself took.
func TestSameReportEveryP(t *testing.T) {
	lib := needMPI(t)
	halo := buildHalo(t)
	rec := filepath.Join(t.TempDir(), "halo")
	mpitest.Run(t, 4, lib, rec, t.TempDir(), halo, "30", "2000")
	dirs := map[string]string{"recorded halo": rec}
	for _, pat := range []gen.Pattern{gen.Halo, gen.Collectives} {
		d := t.TempDir()
		if err := gen.Write(gen.Spec{Dir: d, Ranks: 8, CallsPerRank: 3000, Pattern: pat, Seed: 4, Synchronised: pat == gen.Halo}); err != nil {
			t.Fatal(err)
		}
		dirs[string(pat)] = d
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			code, text1, errs := runCLI(t, dir)
			if code != 0 {
				t.Fatalf("one process: exit %d: %s", code, errs)
			}
			json1 := analyzeJSON(t, dir)
			framed := false
			for np := 1; np <= 4; np++ {
				// With --frames, dag and the replay sweep the rows
				// redistributed by frame instead of in rounds.
				for _, flags := range [][]string{nil, {"--frames"}} {
					if np == 1 && flags != nil {
						continue
					}
					what := strings.TrimSpace(fmt.Sprintf("np=%d %s", np, strings.Join(flags, " ")))
					code, text, errs := mpiCPath(t, np, append(flags, dir)...)
					if code != 0 {
						t.Fatalf("%s: exit %d: %s", what, code, errs)
					}
					sameText(t, what, text, text1)
					r := mpiReport(t, np, append(flags, dir)...)
					sameAnalysis(t, what, r, json1)
					if flags == nil && r.CriticalPath.Analyzer.Frames {
						t.Errorf("%s: swept by frame without --frames", what)
					}
					framed = framed || r.CriticalPath.Analyzer.Frames
				}
			}
			// The generated halo's frames are many and even: --frames
			// must have been taken there, or its path went untested.
			if name == string(gen.Halo) && !framed {
				t.Errorf("--frames never swept by frame")
			}
		})
	}
}

// exactAlgos are the exact distributed algorithms with their flags.
var exactAlgos = [][]string{
	{"--algo=dag"}, {"--algo=dag", "--frames"}, {"--algo=dijkstra"}, {"--algo=delta"}, // dijkstra and delta by time
	{"--algo=split", "--split-mode=par-par"}, {"--algo=split", "--split-mode=seq-par"},
	{"--algo=split", "--split-mode=par-seq"}, {"--algo=split", "--split-mode=seq-seq"},
}

// checkDistributed runs every exact algorithm on 1 to maxP analyzer ranks
// and checks it against the sequential dag reference, then the
// topological heuristics, and returns their agreement with the exact path.
func checkDistributed(t *testing.T, dir string, nps []int, algos [][]string) map[string]float64 {
	t.Helper()
	ref := analyzeJSON(t, "--algo=dag", dir)
	maxP := nps[len(nps)-1]
	for _, np := range nps {
		for _, a := range algos {
			got := mpiReport(t, np, append(a, dir)...)
			sameAnalysis(t, fmt.Sprintf("np=%d %s", np, strings.Join(a, " ")), got, ref)
		}
	}
	agreement := map[string]float64{}
	// With --compare-exact on the graph's corrected times, and without
	// the graph on the logs' own: each the same path at every P and in
	// both variants, and the two the same where no call was moved.
	segs := map[bool][]report.Segment{}
	for _, exact := range []bool{true, false} {
		for _, a := range [][]string{{"--algo=topo"}, {"--algo=topo-shuffle"}, {"--algo=topo-shuffle", "--compress"}} {
			if exact {
				a = append(a, "--compare-exact")
			}
			for _, np := range []int{1, maxP} {
				r := mpiReport(t, np, append(a, dir)...)
				cp := r.CriticalPath
				if exact != (cp.Agreement != nil) || r.Run.NoGraph == exact {
					t.Fatalf("np=%d %v: agreement %v, no_graph %v", np, a, cp.Agreement, r.Run.NoGraph)
				}
				if exact && (*cp.Agreement < 0 || *cp.Agreement > 1) {
					t.Fatalf("np=%d %v: agreement %v", np, a, *cp.Agreement)
				}
				if cp.LengthNs != r.RuntimeNs {
					t.Errorf("np=%d %v: heuristic path %d ns, run %d ns", np, a, cp.LengthNs, r.RuntimeNs)
				}
				if !exact && (len(r.Processes) != 0 || r.POP != nil || r.Waitstates.LateSenderNs != 0) {
					t.Errorf("np=%d %v: tables that need the graph, without it", np, a)
				}
				if segs[exact] == nil {
					segs[exact] = cp.Segments
				} else if !reflect.DeepEqual(segs[exact], cp.Segments) {
					t.Errorf("np=%d %v: the heuristic path differs from topo's on one rank", np, a)
				}
				if exact {
					agreement[strings.TrimPrefix(a[0], "--algo=")] = *cp.Agreement
				}
			}
		}
	}
	if ref.Run.ClockCorrections == 0 && !reflect.DeepEqual(segs[true], segs[false]) {
		t.Errorf("no call moved by the clock correction, but the heuristic's path without the graph differs from its path on it")
	}
	return agreement
}

// TestDistributedGenerated: generated runs of 16 ranks, every pattern with
// each rank's timeline on its own (the clock correction moves most calls),
// and the halo synchronised too (causal: its sends are held by their
// receivers, Late Receiver dependencies shipped between analyzer ranks).
func TestDistributedGenerated(t *testing.T) {
	for _, pat := range gen.Patterns {
		for _, synced := range []bool{false, true} {
			if synced && pat != gen.Halo {
				continue
			}
			name := string(pat)
			if synced {
				name += "/synchronised"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				if err := gen.Write(gen.Spec{Dir: dir, Ranks: 16, CallsPerRank: 2000, Pattern: pat, Seed: 9, Synchronised: synced}); err != nil {
					t.Fatal(err)
				}
				algos := exactAlgos
				if pat != gen.Halo {
					algos = exactAlgos[:4] // every mode on halo; the main ones on the rest
				}
				a := checkDistributed(t, dir, []int{1, 2, 3, 4}, algos)
				t.Logf("%s: agreement topo %.3f, topo-shuffle %.3f", name, a["topo"], a["topo-shuffle"])
			})
		}
	}
}

// TestDistributedRecorded: runs recorded under the logger, the bundled
// example and LAMMPS on 4 ranks.
func TestDistributedRecorded(t *testing.T) {
	lib := needMPI(t)
	halo := buildHalo(t)
	dir := filepath.Join(t.TempDir(), "halo")
	mpitest.Run(t, 4, lib, dir, t.TempDir(), halo, "30", "2000")
	a := checkDistributed(t, dir, []int{1, 2, 3, 4}, exactAlgos)
	t.Logf("halo example: agreement topo %.3f, topo-shuffle %.3f", a["topo"], a["topo-shuffle"])

	lmp := mpitest.NeedTool(t, "lmp", "lammps")
	input := filepath.Join(mpitest.RepoRoot(t), "logger", "e2e", "testdata", "in.lj")
	dir = filepath.Join(t.TempDir(), "lammps")
	mpitest.Run(t, 4, lib, dir, t.TempDir(), lmp, "-in", input, "-log", "none", "-echo", "none")
	a = checkDistributed(t, dir, []int{1, 2, 3, 4}, exactAlgos[:4])
	t.Logf("LAMMPS: agreement topo %.3f, topo-shuffle %.3f", a["topo"], a["topo-shuffle"])
}

// TestDistributed64 records the bundled example on 64 ranks (oversubscribed:
// a short run) and analyses it on 1, 2 and 4 analyzer ranks.
func TestDistributed64(t *testing.T) {
	lib := needMPI(t)
	halo := buildHalo(t)
	dir := filepath.Join(t.TempDir(), "halo64")
	mpitest.RunEnv(t, 64, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, lib, dir, t.TempDir(), halo, "10", "200")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.cplog")); len(files) != 64 {
		t.Fatalf("%d logs, want 64", len(files))
	}
	a := checkDistributed(t, dir, []int{1, 2, 4}, exactAlgos[:4])
	t.Logf("64 ranks: agreement topo %.3f, topo-shuffle %.3f", a["topo"], a["topo-shuffle"])
}

// TestDistributedFailure: an error met by one analyzer rank (a log damaged
// in the middle, which only its owner reads; a bad flag) ends the whole
// job quickly with one message.
func TestDistributedFailure(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 8, CallsPerRank: 3000, Pattern: gen.Halo, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "rank-000006.cplog")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+64; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--algo=dijkstra", dir}, "rank-000006.cplog"},
		{[]string{"--algo=split", "--split-mode=sideways", dir}, "--split-mode=sideways"},
		{[]string{"--algo=nonesuch", dir}, "--algo=nonesuch"},
	} {
		start := time.Now()
		code, _, errs := mpiCPath(t, 4, c.args...)
		if code == 0 || strings.Count(errs, "cpath: ") != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q: want one cpath: line naming %s", c.args, code, errs, c.want)
		}
		t.Logf("%v: exit %d after %v: %s", c.args, code, time.Since(start).Round(time.Millisecond), strings.TrimSpace(errs))
	}
}

// TestDistanceOrder: dijkstra and delta by distance label, as the paper
// describes them, give dag's path at 1 to 3 analyzer ranks, on a log small
// enough for their re-relaxations (about 200 and 125 per edge here; 22 000
// per edge for dijkstra on a 16-rank, 32 k-call one).
func TestDistanceOrder(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: 300, Pattern: gen.Halo, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	checkDistributed(t, dir, []int{1, 2, 3}, [][]string{{"--algo=dijkstra", "--order=distance"}, {"--algo=delta", "--order=distance"}})
}

// TestIncompleteRunMPI is incompleteRun.check as a job of 2 and 3
// analyzer ranks: the damaged log's owner reads what there is of it as
// one process does, and the other ranks go on with it.
func TestIncompleteRunMPI(t *testing.T) {
	for _, x := range incompleteRuns {
		t.Run(x.name, func(t *testing.T) {
			dir := x.write(t)
			for _, np := range []int{2, 3} {
				x.check(t, dir, func(args ...string) (int, string, string) { return mpiCPath(t, np, args...) })
			}
		})
	}
}
