//go:build mpi

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/analysis"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

func analyzeJSON(t *testing.T, args ...string) *report.Report {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"analyze", "--json", "-", "--json-segments"}, args...)...)
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
	limit := max(100_000, clockError(t, dir))
	if cp.DiffNs > limit || -cp.DiffNs > limit {
		t.Fatalf("critical path %d ns, run time %d ns: differs by %d ns (limit %d)", cp.LengthNs, ref.RuntimeNs, cp.DiffNs, limit)
	}
	// The clock correction moves calls by the clock error at most: more is
	// a dependency the run did not have (0-byte broadcasts in HPCC moved
	// calls by 12 ms).
	if ref.Run.ClockCorrectionMaxNs > limit {
		t.Fatalf("the clock correction moved calls %d times, by up to %d ns (limit %d)", ref.Run.ClockCorrections, ref.Run.ClockCorrectionMaxNs, limit)
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
	checkLAMMPSSites(t, dir, r)
	timelines(t, dir) // its timeline: valid, with the report's calls, messages and segments, the same at P = 2
}

// TestAnalyzeLAMMPSTiled analyses LAMMPS balancing its atoms with
// comm_style tiled (testdata/in.tiled, 3 ranks), whose irregular exchanges
// send with MPI_Isend and free the request at once: every message is
// matched and the path holds (checkPath). Before freed sends kept their
// place in the message order, a receive was paired with a later send of
// the same key and the analysis stopped on a cycle.
func TestAnalyzeLAMMPSTiled(t *testing.T) {
	lib := needMPI(t)
	lmp := mpitest.NeedTool(t, "lmp", "lammps")
	input, err := filepath.Abs(filepath.Join("testdata", "in.tiled"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, 3, lib, dir, t.TempDir(), lmp, "-in", input, "-log", "none", "-echo", "none")
	freed := 0
	for _, l := range mpitest.ReadLogs(t, dir, 3) {
		for _, rec := range l.Records {
			if rec.Op == trace.OpRequestFree {
				freed++
			}
		}
	}
	if freed == 0 {
		t.Fatal("LAMMPS freed no request: the input no longer exercises freed sends")
	}
	r := checkPath(t, dir)
	if r.Run.Messages == 0 || r.Run.Unmatched != 0 {
		t.Fatalf("LAMMPS tiled: %d messages, %d unmatched", r.Run.Messages, r.Run.Unmatched)
	}
	t.Logf("LAMMPS tiled: %d requests freed, run %d ns, path %d ns (diff %d), %d messages", freed, r.RuntimeNs,
		r.CriticalPath.LengthNs, r.CriticalPath.DiffNs, r.Run.Messages)
}

// TestAnalyzeIdioms analyses testdata/idioms.c, a program of MPI idioms
// that each once misled the analysis (intercommunicators, messages to
// self, polled MPI_Ibarrier, MPI_Probe with MPI_ANY_SOURCE, 0-element
// collectives, sub-communicators without a rank, neighbourhood
// collectives, MPI_Bsend with polled MPI_Testsome, polled MPI_Improbe and
// MPI_Mrecv, freed sends), at 3 ranks, under Open MPI and MPICH (built
// against each and recorded by its logger): every message is matched, and
// the path holds (checkPath). Before this session's fixes the analysis of
// its logs stopped on a cycle; under MPICH a Gatherv root's dependency on
// a member sending nothing moved its clock by 4 ms.
func TestAnalyzeIdioms(t *testing.T) {
	needMPI(t)
	for _, m := range []*mpitest.Impl{mpitest.OpenMPI, mpitest.MPICH} {
		t.Run(m.Name, func(t *testing.T) {
			lib := m.LoggerLib(t)
			prog := mpitest.Compile(t, t.TempDir(), m.CC(t), "idioms.c", "-Wall", "-O2")
			dir := filepath.Join(t.TempDir(), "logs")
			m.RunEnv(t, 3, nil, lib, dir, t.TempDir(), prog, "8")
			r := checkPath(t, dir)
			if r.Run.Messages == 0 || r.Run.Unmatched != 0 || len(r.Communicators) < 5 {
				t.Fatalf("idioms: %d messages, %d unmatched, %d communicators", r.Run.Messages, r.Run.Unmatched, len(r.Communicators))
			}
			t.Logf("idioms: run %d ns, path %d ns (diff %d), %d messages, %d clock corrections (up to %d ns)", r.RuntimeNs,
				r.CriticalPath.LengthNs, r.CriticalPath.DiffNs, r.Run.Messages, r.Run.ClockCorrections, r.Run.ClockCorrectionMaxNs)
		})
	}
}

// TestAnalyzeHPCC analyses Debian's HPC Challenge (hpcc, C: HPL, PTRANS,
// RandomAccess, FFT, STREAM, DGEMM and the ring latency and bandwidth
// tests) at 4 ranks on a 2 x 2 grid, recorded under the logger with a
// small problem (testdata/hpccinf.txt: N = 400, NB = 40): process grids
// from MPI_Comm_split, Sendrecv rings, Isend/Irecv/Waitall exchanges,
// RandomAccess's polling with MPI_Testany and MPI_Iprobe, HPL's probes
// before its receives, Bcast, Reduce and Allreduce. Every message is
// matched, and the path holds as for any run
// (checkPath): before poll runs were confined to the calls that complete
// what they polled for (graph.completesPolled, lateReceiverCause), its
// path fell short of the run by 0.2 ms.
func TestAnalyzeHPCC(t *testing.T) {
	lib := needMPI(t)
	hpcc := mpitest.NeedTool(t, "hpcc", "hpcc")
	work := t.TempDir()
	in, err := os.ReadFile(filepath.Join("testdata", "hpccinf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "hpccinf.txt"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "logs")
	mpitest.Run(t, 4, lib, dir, work, hpcc)
	if out, err := os.ReadFile(filepath.Join(work, "hpccoutf.txt")); err != nil || !strings.Contains(string(out), "End of HPL section.") {
		t.Fatalf("hpcc did not run its tests (%v):\n%s", err, out)
	}
	r := checkPath(t, dir)
	if r.Run.Messages < 1000 || r.Run.Unmatched != 0 || len(r.Calls) < 100 || len(r.Communicators) < 4 {
		t.Fatalf("HPCC: %d messages, %d unmatched, %d collective instances, %d communicators",
			r.Run.Messages, r.Run.Unmatched, len(r.Calls), len(r.Communicators))
	}
	for _, n := range r.Run.Skipped { // clock corrections on a loaded machine
		t.Logf("HPCC: %s", n)
	}
	t.Logf("HPCC: %d calls, run %d ns, path %d ns (diff %d), %d segments, %d messages, %d collective instances",
		r.Run.Calls, r.RuntimeNs, r.CriticalPath.LengthNs, r.CriticalPath.DiffNs, len(r.CriticalPath.Segments), r.Run.Messages, len(r.Calls))
}

// bareAddress is a call site shown as a number only.
var bareAddress = regexp.MustCompile(`(^|\s)0x[0-9a-f]+($|\s)`)

// checkLAMMPSSites: LAMMPS makes its MPI calls from liblammps.so, which
// Debian ships stripped to its exported symbols, at another address on
// every rank. Every call site on the path has a name, never a bare address:
// function+0xoff (or file:line, should its debug information be installed)
// with the function in the segment's function key, at least 90 % of them
// demangled LAMMPS functions (LAMMPS_NS::...); the rest are calls from the
// stripped lmp's main or hidden functions of the library (lmp+0xoff,
// liblammps.so.0+0xoff). The text report's computation rows show
// the same names, and an analysis as a job of two ranks names them alike.
func checkLAMMPSSites(t *testing.T, dir string, r *report.Report) {
	t.Helper()
	segs := r.CriticalPath.Segments
	fileLine := regexp.MustCompile(`^[^ ]+:[0-9]+$`)
	inLAMMPS := 0
	for i, s := range segs {
		switch {
		case s.Callsite == "" || bareAddress.MatchString(s.Callsite):
			t.Fatalf("segment %d (%s %s, rank %d): call site %q is not a name", i, s.Kind, s.Op, s.Rank, s.Callsite)
		case s.Function != "" && !strings.HasPrefix(s.Callsite, s.Function+"+0x") && !fileLine.MatchString(s.Callsite):
			t.Fatalf("segment %d: call site %q in function %q: want function+0xoff or file:line", i, s.Callsite, s.Function)
		case s.Function == "" && !strings.HasPrefix(s.Callsite, "lmp+0x") && !strings.HasPrefix(s.Callsite, "liblammps.so"):
			t.Fatalf("segment %d: call site %q, no function: want a module of LAMMPS and the offset", i, s.Callsite)
		}
		if strings.HasPrefix(s.Function, "LAMMPS_NS::") {
			inLAMMPS++
		}
	}
	if inLAMMPS*10 < len(segs)*9 {
		t.Errorf("%d of %d segments' call sites are in LAMMPS_NS functions, want at least 90%%", inLAMMPS, len(segs))
	}

	// The text report's computation rows.
	code, text, errs := runCLI(t, "--top", "1000", dir)
	if code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errs)
	}
	rows := computationRows(t, text)
	named := 0
	for _, row := range rows {
		switch {
		case bareAddress.MatchString(row):
			t.Errorf("computation row with a bare address: %q", row)
		case strings.Contains(row, "LAMMPS_NS::"):
			named++
		case !strings.Contains(row, " lmp+0x") && !strings.Contains(row, " liblammps.so"):
			t.Errorf("computation row %q names neither a LAMMPS function nor a LAMMPS module", row)
		}
	}
	// Distinct call sites, so fewer than the segments: finish.cpp's
	// hidden helpers' Allreduces are not exported and stay module+offset.
	if !strings.Contains(rows[0], "LAMMPS_NS::") || named*4 < len(rows)*3 {
		t.Errorf("%d of %d computation rows name a LAMMPS function, want the first and at least 75%%:\n%s",
			named, len(rows), strings.Join(rows, "\n"))
	}
	t.Logf("%d of %d segments and %d of %d computation rows in LAMMPS_NS functions; the first rows:\n%s",
		inLAMMPS, len(segs), named, len(rows), strings.Join(rows[:min(5, len(rows))], "\n"))

	// The same names when two analyzer ranks build the graph: each ships
	// its logs' modules. The condensed DOT drawing's nodes (rank, call
	// site) are named alike.
	var two strings.Builder
	var errs2 [2]error
	dot := filepath.Join(t.TempDir(), "pag.dot")
	mpixtest.Run(2, func(c mpix.Comm) {
		out := io.Discard
		if c.Rank() == 0 {
			out = &two
		}
		errs2[c.Rank()] = analysis.Run(c, analysis.Options{Dir: dir, Algo: "dag", Top: 1000, DOT: dot, Stdout: out})
	})
	if errs2[0] != nil || errs2[1] != nil {
		t.Fatal(errs2)
	}
	if got := computationRows(t, two.String()); !slices.Equal(got, rows) {
		t.Errorf("computation rows at P=2:\n%s\nat P=1:\n%s", strings.Join(got, "\n"), strings.Join(rows, "\n"))
	}
	src, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
	nodes := regexp.MustCompile(`label="rank [0-9]+\\n([^"]*)"`).FindAllStringSubmatch(string(src), -1)
	dotNamed := 0
	for _, n := range nodes {
		if bareAddress.MatchString(n[1]) {
			t.Errorf("DOT node %q: a bare address", n[0])
		}
		if strings.HasPrefix(n[1], "LAMMPS_NS::") {
			dotNamed++
		}
	}
	if len(nodes) == 0 || dotNamed*4 < len(nodes)*3 {
		t.Errorf("%d of %d DOT nodes name a LAMMPS function, want at least 75%%", dotNamed, len(nodes))
	}
	t.Logf("%d of %d DOT nodes name a LAMMPS function", dotNamed, len(nodes))
}

// computationRows returns the rows of the text report's table of
// computation on the critical path.
func computationRows(t *testing.T, text string) []string {
	t.Helper()
	_, table, ok := strings.Cut(text, "Computation on the critical path")
	if !ok {
		t.Fatalf("no computation table in the text report:\n%s", text)
	}
	lines := strings.Split(table, "\n")
	var rows []string
	for _, l := range lines[2:] { // the title's end and the header
		if strings.TrimSpace(l) == "" {
			break
		}
		rows = append(rows, strings.TrimSpace(l))
	}
	if len(rows) == 0 {
		t.Fatal("empty computation table")
	}
	return rows
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
		cmd := exec.CommandContext(ctx, mpitest.OpenMPI.Mpirun(t), append([]string{"--allow-run-as-root", "--oversubscribe", "-np", "2", bin}, args...)...)
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
	code, out, errs := mpirun("analyze", "--json", "-", "--json-segments", dir)
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
