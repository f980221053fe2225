package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cpath/cpath/analysis"
	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/report"

	"github.com/cpath/cpath/trace"
)

// badInput is a log directory SPEC §5 covers: analyze rejects it with one
// line matching err and a non-zero exit, or (code 0) analyses it and says
// what it skipped. Both the single process and the MPI job are held to it.
type badInput struct {
	name  string
	setup func(t *testing.T, dir string)
	arg   string // LOGDIR relative to dir; default dir itself
	code  int
	err   string // regexp for the one stderr line
	out   string // regexp stdout must match when code == 0
}

// logdir makes the directory of tc and returns the LOGDIR argument for it.
func (tc badInput) logdir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tc.setup(t, dir)
	if tc.arg != "" {
		return filepath.Join(filepath.Dir(dir), tc.arg)
	}
	return dir
}

var badInputs = []badInput{
	{"complete", func(t *testing.T, d string) { writeRun(t, d, 4) }, "", 0, "", `critical path \(dag\)`},
	{"truncated", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 3, cut: 48}) // into the clock chunk before the trailer
	}, "", 1, `rank-000003\.cplog: truncated: `, ""},
	{"corrupt middle", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		p := filepath.Join(d, "rank-000001.cplog")
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0xff
		os.WriteFile(p, b, 0o644)
	}, "", 1, `rank-000001\.cplog: corrupt: `, ""},
	{"foreign", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		os.WriteFile(filepath.Join(d, "rank-000002.cplog"), []byte("\x7fELF\x02\x01\x01\x00 not a log at all"), 0o644)
	}, "", 1, `rank-000002\.cplog: not a cpath log: starts with`, ""},
	{"other version", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 0, version: 9})
	}, "", 1, `rank-000000\.cplog: unsupported log format version: format version 9`, ""},
	{"empty file", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		os.WriteFile(filepath.Join(d, "rank-000003.cplog"), nil, 0o644)
	}, "", 1, `rank-000003\.cplog: empty file`, ""},
	{"missing rank", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		os.Remove(filepath.Join(d, "rank-000002.cplog"))
	}, "", 1, `no log for rank 2 of 4`, ""},
	{"two runs", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 1, runID: "run-43"})
	}, "", 1, `rank-000001\.cplog: run id "run-43", but rank-000000\.cplog has run id "run-42": logs of two runs are mixed`, ""},
	{"empty directory", func(t *testing.T, d string) {}, "", 1, `no cpath logs \(\*\.cplog\) in this directory`, ""},
	{"missing directory", func(t *testing.T, d string) {}, "nope/logs", 1, `nope/logs: no such directory`, ""},
	{"crashed rank", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 2, noClose: true})
	}, "", 0, "", `(?s)critical path \(dag\).*Notes:.*rank-000002\.cplog: rank 2 was killed before it could write a trailer`},
	{"signalled rank", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 1, status: trace.EndSignal, info: 15})
	}, "", 0, "", `rank 1 was killed by signal`},
}

// TestAnalyzeBadInput: every bad input of SPEC §5 gets one line naming the
// file and the problem, and a non-zero exit; an incomplete log from a
// crashed run is analysed and the report says what was skipped.
func TestAnalyzeBadInput(t *testing.T) {
	tests := badInputs
	for _, tc := range tests {
		for _, form := range [][]string{{"analyze"}, {}} {
			t.Run(tc.name+"/"+strings.Join(append(form, "LOGDIR"), " "), func(t *testing.T) {
				code, out, errs := runCLI(t, append(form, tc.logdir(t))...)
				if code != tc.code {
					t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errs)
				}
				if tc.code != 0 {
					if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "cpath: ") || strings.Contains(errs, "goroutine") {
						t.Fatalf("stderr must be one line \"cpath: …\": %q", errs)
					}
					if !regexp.MustCompile(tc.err).MatchString(errs) {
						t.Fatalf("stderr %q does not match %q", errs, tc.err)
					}
					return
				}
				if !regexp.MustCompile(tc.out).MatchString(out) {
					t.Fatalf("stdout does not match %q:\n%s", tc.out, out)
				}
			})
		}
	}
}

// TestAnalyzeFlags: a bad flag value is one clear line too.
func TestAnalyzeFlags(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2)
	code, _, errs := runCLI(t, "--algo=magic", dir)
	if code != 1 || errs != "cpath: --algo=magic: unknown algorithm (dag, dijkstra, delta, split, topo, topo-shuffle)\n" {
		t.Fatalf("%d %q", code, errs)
	}
	for _, bad := range [][]string{{"--split-mode=diagonal"}, {"--delta=-5"}} {
		code, _, errs := runCLI(t, append(bad, dir)...)
		if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, bad[0]) {
			t.Fatalf("%v: %d %q", bad, code, errs)
		}
	}
	// Every algorithm runs in one process too (a job of one rank).
	for _, algo := range []string{"dag", "dijkstra", "delta", "split", "topo", "topo-shuffle"} {
		code, out, errs := runCLI(t, "analyze", "--algo="+algo, "--json", "-", "--json-segments", dir)
		if code != 0 || !strings.Contains(out, `"algo":"`+algo) || !strings.Contains(out, `"length_ns"`) {
			t.Fatalf("%s: %d %q %.200s", algo, code, errs, out)
		}
	}
}

// TestLaunchedApart: copies of cpath that a launcher started but that did
// not join one MPI job (a cpath built without MPI under mpirun, or one
// started by another MPI's launcher) refuse to run, each with one line:
// every copy would analyse the whole run alone and write the same files.
// A launcher's single copy runs.
func TestLaunchedApart(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2)
	t.Setenv("OMPI_COMM_WORLD_SIZE", "") // as if started by a PMI launcher (MPICH's mpiexec, srun)
	t.Setenv("PMI_SIZE", "2")
	code, out, errs := runCLI(t, "--json", filepath.Join(t.TempDir(), "r.json"), dir)
	if code != 1 || out != "" || !regexp.MustCompile(`^cpath: started as 2 processes, but (this cpath was built without MPI|MPI joined them as 1): .*\n$`).MatchString(errs) {
		t.Fatalf("exit %d, stdout %.100q, stderr %q; want 1 and one line", code, out, errs)
	}
	t.Setenv("PMI_SIZE", "1")
	if code, out, errs := runCLI(t, dir); code != 0 || !strings.Contains(out, "critical path (dag)") {
		t.Fatalf("one copy: exit %d, stderr %q", code, errs)
	}
}

// TestMpirunOneCopy: a copy that mpirun started alone
// (OMPI_COMM_WORLD_SIZE=1) runs as cpath alone does, without starting MPI:
// twice in one process, which MPI, once finalized, could not.
func TestMpirunOneCopy(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2)
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	for i := 1; i <= 2; i++ {
		if code, out, errs := runCLI(t, dir); code != 0 || !strings.Contains(out, "critical path (dag)") {
			t.Fatalf("run %d: exit %d, stderr %q", i, code, errs)
		}
	}
}

// TestDOTRenders writes the PAG of a small run (every vertex, clustered by
// rank) and of a large one (condensed to ranks × call sites), each in one
// process and as a job of two in-process ranks, and has Graphviz render
// them: valid DOT with the critical path highlighted, the same drawing at
// either P.
func TestDOTRenders(t *testing.T) {
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not installed (Debian package graphviz; make deps installs it)")
	}
	for _, tc := range []struct {
		name  string
		calls int
		full  bool
	}{{"full", 40, true}, {"condensed", 400, false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: tc.calls, Pattern: gen.Imbalanced, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			var drawings [2]string
			for i, P := range []int{1, 2} {
				var b strings.Builder
				var errs [2]error
				mpixtest.Run(P, func(c mpix.Comm) {
					out := io.Discard
					if c.Rank() == 0 {
						out = &b
					}
					errs[c.Rank()] = analysis.Run(c, analysis.Options{Dir: dir, Algo: "dag", DOT: "-", Top: 5, Stdout: out})
				})
				if errs[0] != nil || errs[1] != nil {
					t.Fatal(errs)
				}
				drawings[i] = b.String()
			}
			src := drawings[0]
			if src != drawings[1] {
				t.Fatal("the drawing at P=2 differs from one process's")
			}
			if strings.Contains(src, "label=\"S MPI_") != tc.full {
				t.Fatalf("full drawing = %v, want %v", !tc.full, tc.full)
			}
			if !strings.Contains(src, "color=red") {
				t.Fatal("the critical path is not highlighted")
			}
			cmd := exec.Command(dotBin, "-Tsvg")
			cmd.Stdin = strings.NewReader(src)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("dot -Tsvg: %v", err)
			}
			if !strings.Contains(string(out), "<svg") {
				t.Fatal("dot -Tsvg wrote no SVG")
			}
		})
	}
}

// TestEveryDependencyCounted: the per-process table counts every edge of
// the full graph into the rank's vertices, so on a run with messages every
// rank has more edges than vertices (a pruned graph has at most one edge
// per vertex).
func TestEveryDependencyCounted(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: 500, Pattern: gen.Halo, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "analyze", "--json", "-", "--json-segments", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Run.Messages == 0 {
		t.Fatal("the run has no messages")
	}
	for _, p := range rep.Processes {
		if p.NumEdges <= p.NumNodes {
			t.Errorf("rank %d: %d edges for %d vertices", p.Rank, p.NumEdges, p.NumNodes)
		}
	}
	if rep.Totals.NumEdges <= rep.Totals.NumNodes {
		t.Errorf("totals: %d edges for %d vertices", rep.Totals.NumEdges, rep.Totals.NumNodes)
	}
}

// outputError is an output of the analysis (--matrix, --csv) that cannot
// be written: one line matching err and exit 1, from one process and from
// every rank of a job.
type outputError struct {
	name string
	args func(dir string) []string // dir holds a regular file named "file"
	err  string
}

var outputErrors = []outputError{
	{"matrix in a missing directory", func(d string) []string { return []string{"--matrix", filepath.Join(d, "no", "m.png")} },
		`^cpath: --matrix \S+/no/m\.png: no such file or directory$`},
	{"matrix under a file", func(d string) []string { return []string{"--matrix", filepath.Join(d, "file", "m.svg")} },
		`^cpath: --matrix \S+/file/m\.svg: not a directory$`},
	{"matrix of an unknown format", func(d string) []string { return []string{"--matrix", filepath.Join(d, "m.jpg")} },
		`^cpath: --matrix \S+/m\.jpg: unknown image format "\.jpg": want \.png or \.svg$`},
	{"matrix without an extension", func(d string) []string { return []string{"--matrix", filepath.Join(d, "m")} },
		`^cpath: --matrix \S+/m: no file extension: want \.png or \.svg$`},
	{"csv into a file", func(d string) []string { return []string{"--csv", filepath.Join(d, "file")} },
		`^cpath: --csv \S+/file: not a directory$`},
	{"csv under a file", func(d string) []string { return []string{"--csv", filepath.Join(d, "file", "csv")} },
		`^cpath: --csv \S+/file/csv: not a directory$`},
}

// outputDir is a directory for outputError's args, with a regular file
// "file" in it.
func outputDir(t *testing.T) string {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAnalyzeOutputErrors: an output that cannot be written is one line
// and exit 1, with nothing on stdout, in one process.
func TestAnalyzeOutputErrors(t *testing.T) {
	logs := t.TempDir()
	writeRun(t, logs, 3)
	for _, tc := range outputErrors {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append(append([]string{"analyze"}, tc.args(outputDir(t))...), logs)...)
			if code != 1 || strings.Count(errs, "\n") != 1 || !regexp.MustCompile(tc.err).MatchString(strings.TrimSuffix(errs, "\n")) {
				t.Fatalf("exit %d, stderr %q; want 1 and one line matching %q", code, errs, tc.err)
			}
			if out != "" {
				t.Fatalf("stdout on error: %.500s", out)
			}
		})
	}
}

// TestTrafficOutputs: --csv and --matrix write every table and the
// heatmap, the same from one process and from a job of two in-process
// ranks, and the CSV files hold the JSON report's communication matrix.
func TestTrafficOutputs(t *testing.T) {
	logs := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: logs, Ranks: 6, CallsPerRank: 300, Pattern: gen.Halo, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	var files [2]map[string]string
	for i, P := range []int{1, 2} {
		out := t.TempDir()
		errs := make([]error, P)
		mpixtest.Run(P, func(c mpix.Comm) {
			o := analysis.Options{Dir: logs, Algo: "dag", Top: 5, JSON: filepath.Join(out, "r.json"), CSV: filepath.Join(out, "csv"),
				Matrix: filepath.Join(out, "m.svg"), Stdout: io.Discard}
			errs[c.Rank()] = analysis.Run(c, o)
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		files[i] = map[string]string{}
		for _, name := range append(report.CSVFiles(), "m.svg") {
			p := filepath.Join(out, "csv", name)
			if name == "m.svg" {
				p = filepath.Join(out, name)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[i][name] = string(b)
		}
		var rep report.Report
		b, err := os.ReadFile(filepath.Join(out, "r.json"))
		if err != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("JSON report: %v", err)
		}
		var want strings.Builder
		want.WriteString("kind,src,dst,count,bytes\n")
		for _, k := range []struct {
			kind string
			ps   []report.Pair
		}{{"p2p", rep.CommMatrix.P2P}, {"collective", rep.CommMatrix.Collective}} {
			for _, p := range k.ps {
				fmt.Fprintf(&want, "%s,%d,%d,%d,%d\n", k.kind, p.Src, p.Dst, p.Count, p.Bytes)
			}
		}
		// The halo's 6 ranks each send to both neighbours; every 10th
		// iteration an Allreduce pairs everyone with everyone.
		if len(rep.CommMatrix.P2P) != 12 || len(rep.CommMatrix.Collective) != 30 {
			t.Errorf("%d point-to-point and %d collective pairs, want 12 and 30", len(rep.CommMatrix.P2P), len(rep.CommMatrix.Collective))
		}
		if got := files[i]["comm_matrix.csv"]; got != want.String() {
			t.Errorf("comm_matrix.csv\n%s\nwant\n%s", got, want.String())
		}
	}
	for name, s := range files[0] {
		if name == "processes.csv" {
			continue // graph_time: the analyzer's own time
		}
		if files[1][name] != s {
			t.Errorf("%s differs between one process and two", name)
		}
	}
}

// TestJSONStretches: the JSON report holds the critical path's stretches
// (its runs on one rank), not its segments, unless --json-segments asks
// for them; the stretches are the segments merged, and the default JSON a
// fraction of the full one's size on a path that enters many calls.
func TestJSONStretches(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: 2000, Pattern: gen.Halo, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var reps [2]report.Report
	var sizes [2]int
	for i, args := range [][]string{{"--json", "-"}, {"--json", "-", "--json-segments"}} {
		code, out, errs := runCLI(t, append(args, dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		sizes[i] = len(out)
		if err := json.Unmarshal([]byte(out), &reps[i]); err != nil {
			t.Fatal(err)
		}
		if i == 0 && strings.Contains(out, `"segments":[`) {
			t.Errorf("%v: the JSON lists the segments", args)
		}
	}
	def, full := &reps[0].CriticalPath, &reps[1].CriticalPath
	if len(def.Segments) != 0 || len(full.Segments) == 0 {
		t.Fatalf("segments: %d by default, %d with --json-segments; want 0 and the path's", len(def.Segments), len(full.Segments))
	}
	if want := report.Stretches(full.Segments); !reflect.DeepEqual(def.Stretches, want) || !reflect.DeepEqual(full.Stretches, want) {
		t.Errorf("stretches %+v (full: %+v), want the segments merged %+v", def.Stretches, full.Stretches, want)
	}
	var sum int64
	for _, s := range def.Stretches {
		sum += s.LaunchNs + s.ComputeNs + s.MPINs + s.IONs + s.TransferNs
	}
	if sum != def.LengthNs || len(def.Stretches) >= len(full.Segments) {
		t.Errorf("%d stretches of %d ns in all, for %d segments and a path of %d ns", len(def.Stretches), sum, len(full.Segments), def.LengthNs)
	}
	t.Logf("JSON %d bytes, %d with the segments", sizes[0], sizes[1])
	if 3*sizes[0] > sizes[1] {
		t.Errorf("the JSON is %d bytes, %d with the segments: want a third or less", sizes[0], sizes[1])
	}
}

// incompleteRun is a generated 4-rank halo run that lacks part of one
// rank's log, the exact analysis's error on it and the notes the
// heuristics, which need no graph, give of it.
type incompleteRun struct {
	name   string
	damage func(t *testing.T, log string) // rank 2's log
	err    string                         // in the exact analysis's one line
	notes  []string                       // regexps the heuristic's notes match
	onRank bool                           // the path may run on rank 2 before the damage
}

var incompleteRuns = []incompleteRun{
	{"cut short", func(t *testing.T, log string) {
		// A rank that died while writing its log: cut at 55 % of its bytes.
		st, err := os.Stat(log)
		if err == nil {
			err = os.Truncate(log, st.Size()*55/100)
		}
		if err != nil {
			t.Fatal(err)
		}
	}, "rank-000002.cplog: truncated: ", []string{
		`rank-000002\.cplog: rank 2's log is cut short \(truncated: .*\); analysed up to its last whole record, its call \d+`,
		`rank 2's calls end [0-9.]+ s into the run, [0-9.]+ s before its end`}, true},
	{"missing", func(t *testing.T, log string) {
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
	}, "no log for rank 2 of 4", []string{`no log for rank 2 of 4: the path runs on the other ranks`}, false},
}

// write writes the run into a new directory and returns it.
func (x incompleteRun) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: 40000, Pattern: gen.Halo, Seed: 5, Synchronised: true}); err != nil {
		t.Fatal(err)
	}
	x.damage(t, filepath.Join(dir, "rank-000002.cplog"))
	return dir
}

// check: the topological heuristics report a path over the whole run,
// on rank 2 only before what is missing, and say what is missing; the
// exact algorithms (and the heuristics asked to compare with one) keep
// refusing the run, with one line.
func (x incompleteRun) check(t *testing.T, dir string, cpath func(args ...string) (int, string, string)) {
	t.Helper()
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--algo=topo"}, true},
		{[]string{"--algo=topo-shuffle"}, true},
		{[]string{"--algo=dag"}, false},
		{[]string{"--algo=split"}, false},
		{[]string{"--algo=topo", "--compare-exact"}, false},
	} {
		code, out, errs := cpath(append([]string{"analyze", "--json", "-", "--json-segments"}, append(tc.args, dir)...)...)
		if !tc.ok {
			// (mpirun adds its own lines about the exit.)
			if lines := cpathLines(errs); code != 1 || len(lines) != 1 || !strings.Contains(lines[0], x.err) {
				t.Errorf("%s %v: exit %d, stderr %q; want 1 and one line saying %q", x.name, tc.args, code, errs, x.err)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%s %v: exit %d: %s", x.name, tc.args, code, errs)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		cp := &r.CriticalPath
		if !r.Run.NoGraph || cp.LengthNs != r.RuntimeNs || len(cp.Segments) == 0 {
			t.Errorf("%s %v: no_graph %v, path %d ns of the run's %d, %d segments", x.name, tc.args, r.Run.NoGraph, cp.LengthNs, r.RuntimeNs, len(cp.Segments))
		}
		notes := strings.Join(r.Run.Skipped, "\n")
		for _, want := range x.notes {
			if !regexp.MustCompile(want).MatchString(notes) {
				t.Errorf("%s %v: the notes do not say %q:\n%s", x.name, tc.args, want, notes)
			}
		}
		var last2 int64 // the path's last time on rank 2
		for _, s := range cp.Segments {
			if s.Rank == 2 {
				last2 = max(last2, s.EndNs)
			}
		}
		if x.onRank != (last2 > 0) || last2 >= r.RuntimeNs {
			t.Errorf("%s %v: the path is on rank 2 until %d ns of %d", x.name, tc.args, last2, r.RuntimeNs)
		}
	}
}

// TestIncompleteRun is incompleteRun.check in one process.
func TestIncompleteRun(t *testing.T) {
	for _, x := range incompleteRuns {
		t.Run(x.name, func(t *testing.T) {
			x.check(t, x.write(t), func(args ...string) (int, string, string) { return runCLI(t, args...) })
		})
	}
}

// cpathLines returns the lines of stderr that cpath printed (mpirun adds
// its own about the job's exit status).
func cpathLines(stderr string) []string {
	var ls []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "cpath: ") {
			ls = append(ls, l)
		}
	}
	return ls
}
