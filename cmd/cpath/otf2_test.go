package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/report"
)

var update = flag.Bool("update", false, "rewrite the golden files of the OTF2 tests")

// scorepDir holds the Score-P traces of the Pipit project's test data
// (MIT licence: LICENSE.pipit beside them).
const scorepDir = "../../otf2/testdata/scorep"

// needTool returns tool's path, skipping the test (naming the Debian
// package) when it is not installed.
func needTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not found: install the Debian package %s (make deps) to run this test", tool, pkg)
	}
	return p
}

// python3 is Debian's Python with python3-otf2 (not a Python on PATH
// without Debian's packages), or the test is skipped naming the package.
func python3(t *testing.T) string {
	t.Helper()
	p := "/usr/bin/python3"
	if err := exec.Command(p, "-c", "import otf2").Run(); err != nil {
		t.Skipf("%s cannot import otf2: install the Debian package python3-otf2 (make deps) to run this test", p)
	}
	return p
}

// oracleResult is what otf2oracle.py computes from an archive's events.
type oracleResult struct {
	Messages  int              `json:"messages"`
	Bytes     uint64           `json:"bytes"`
	Calls     int              `json:"calls"`
	RuntimeNs int64            `json:"runtime_ns"`
	Ops       map[string]int   `json:"ops"`
	ByRank    []map[string]int `json:"by_rank"`
	Waits     map[string]int64 `json:"-"`
}

func runOracle(t *testing.T, anchor string) *oracleResult {
	t.Helper()
	out, err := exec.Command(python3(t), filepath.Join("testdata", "otf2oracle.py"), anchor).Output()
	if err != nil {
		t.Fatalf("otf2oracle.py %s: %v", anchor, err)
	}
	var o oracleResult
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatal(err)
	}
	var all map[string]any
	json.Unmarshal(out, &all)
	o.Waits = map[string]int64{}
	for k, v := range all {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, "_ns") && k != "runtime_ns" {
			o.Waits[k] = int64(f)
		}
	}
	return &o
}

var (
	sendLine   = regexp.MustCompile(`(?m)^MPI_I?SEND\s.*Length: (\d+)`)
	recvLine   = regexp.MustCompile(`(?m)^MPI_I?RECV\s`)
	metricLine = regexp.MustCompile(`(?m)^METRIC\s`)
)

// printed is what otf2-print shows of an archive's messages.
type printed struct {
	sends, recvs, metrics int
	bytes                 uint64
}

func otf2Print(t *testing.T, anchor string) printed {
	t.Helper()
	cmd := exec.Command(needTool(t, "otf2-print", "otf2-tools"), anchor)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("otf2-print %s: %v\n%s", anchor, err, errs.String())
	}
	var p printed
	for _, m := range sendLine.FindAllStringSubmatch(out.String(), -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		p.sends++
		p.bytes += n
	}
	p.recvs = len(recvLine.FindAllString(out.String(), -1))
	p.metrics = len(metricLine.FindAllString(out.String(), -1))
	return p
}

// waitTol is how far cpath's wait states and run time may be from the
// oracle's: cpath keeps a rank's clock offsets in whole ns (the timer
// counts ticks of 0.48 ns), so its line through them drifts from OTF2's
// by a few ns over the run.
const waitTol = 50

func near(a, b int64) bool { return a-b <= waitTol && b-a <= waitTol }

// checkArchive holds cpath's report of an archive to the oracle and to
// otf2-print: the critical path as long as the run, the messages and
// their bytes, and every wait state, in all and by rank.
func checkArchive(t *testing.T, arg, anchor string) *report.Report {
	t.Helper()
	o := runOracle(t, anchor)
	pr := otf2Print(t, anchor)
	code, out, errs := runCLI(t, "--json", "-", "--json-segments", arg)
	if code != 0 {
		t.Fatalf("cpath --json - %s: exit %d: %s", arg, code, errs)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	cp := rep.CriticalPath
	if cp.LengthNs != rep.RuntimeNs || cp.DiffNs != 0 {
		t.Errorf("critical path %d ns, run time %d ns (difference %d): want equal", cp.LengthNs, rep.RuntimeNs, cp.DiffNs)
	}
	if !near(rep.RuntimeNs, o.RuntimeNs) {
		t.Errorf("run time %d ns, the events say %d", rep.RuntimeNs, o.RuntimeNs)
	}
	bytes := uint64(0)
	for _, c := range rep.CommMatrix.P2P {
		bytes += uint64(c.Bytes)
	}
	if rep.Run.Messages != pr.sends || pr.sends != pr.recvs || rep.Run.Messages != o.Messages {
		t.Errorf("messages: cpath %d, otf2-print %d sends and %d receives, oracle %d", rep.Run.Messages, pr.sends, pr.recvs, o.Messages)
	}
	if bytes != pr.bytes || bytes != o.Bytes {
		t.Errorf("bytes sent point to point: cpath %d, otf2-print %d, oracle %d", bytes, pr.bytes, o.Bytes)
	}
	if rep.Run.Calls != o.Calls {
		t.Errorf("calls: cpath %d, oracle %d", rep.Run.Calls, o.Calls)
	}
	var ws map[string]any
	b, _ := json.Marshal(rep.Waitstates)
	json.Unmarshal(b, &ws)
	for k, want := range o.Waits {
		got := int64(ws[k].(float64))
		if !near(got, want) {
			t.Errorf("%s: cpath %d, oracle %d", k, got, want)
		}
	}
	byRank, _ := ws["by_rank"].([]any)
	if len(byRank) != len(o.ByRank) {
		t.Fatalf("wait states of %d ranks, the oracle has %d", len(byRank), len(o.ByRank))
	}
	for r, wr := range o.ByRank {
		got := byRank[r].(map[string]any)
		for k, want := range wr {
			if g, _ := got[k].(float64); !near(int64(g), int64(want)) {
				t.Errorf("rank %d %s: cpath %d, oracle %d", r, k, int64(g), want)
			}
		}
	}
	return &rep
}

// TestOtf2ScoreP analyses the Score-P traces (their directory and their
// anchor file) and holds the report to the events.
func TestOtf2ScoreP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		metrics int // PAPI counters' Metric events, which cpath does not take
	}{{"ping-pong-otf2", 0}, {"ping-pong-otf2-papi", 84}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(scorepDir, tc.name)
			anchor := filepath.Join(dir, "traces.otf2")
			rep := checkArchive(t, dir, anchor)
			if rep.Run.Messages != 16 {
				t.Errorf("%d messages, want the ping-pong's 16", rep.Run.Messages)
			}
			if pr := otf2Print(t, anchor); pr.metrics != tc.metrics {
				t.Errorf("otf2-print shows %d Metric events, want %d", pr.metrics, tc.metrics)
			}
			notes := strings.Join(rep.Run.Skipped, "\n")
			want := "ProgramEnd events ×2"
			if tc.metrics > 0 {
				want = "Metric events ×84, ProgramEnd events ×2"
			}
			if !strings.Contains(notes, "not analysed (the trace's content cpath has no meaning for): "+want) ||
				!strings.Contains(notes, "MPI_Comm_rank ×2 on ranks 0-1") {
				t.Errorf("the report's notes do not list what cpath did not take (%s; MPI_Comm_rank, MPI_Comm_size):\n%s", want, notes)
			}
			// The computation on the path is named by its region.
			named := false
			for _, s := range rep.CriticalPath.Segments {
				named = named || s.Kind == "compute" && s.Callsite == "int main(int, char**)"
			}
			if !named {
				t.Errorf("no stretch of computation on the path is named after its region, int main(int, char**)")
			}
			code, out, errs := runCLI(t, "info", anchor)
			if code != 0 {
				t.Fatalf("cpath info %s: exit %d: %s", anchor, code, errs)
			}
			golden(t, filepath.Join("testdata", "otf2", tc.name+".info"), out)
		})
	}
}

// golden compares got with the golden file (rewritten with -update).
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestOtf2Foreign analyses an archive another tool would write (python3-
// otf2, no cpath attributes): nonblocking point-to-point whose receives
// name their communicator only at completion, and rooted and
// synchronising collectives.
func TestOtf2Foreign(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "halo")
	if out, err := exec.Command(python3(t), filepath.Join("testdata", "otf2gen.py"), "halo", dir).CombinedOutput(); err != nil {
		t.Fatalf("otf2gen.py halo: %v\n%s", err, out)
	}
	rep := checkArchive(t, dir, filepath.Join(dir, "traces.otf2"))
	w := rep.Waitstates
	if w.LateSenderNs == 0 || w.WaitAtNxNNs == 0 || w.LateBroadcastNs == 0 || w.WaitAtBarrierNs == 0 {
		t.Errorf("the design's wait states are not all there: %+v", w)
	}
	if len(rep.Calls) != 3*4+1 {
		t.Errorf("%d collective instances, want Init and 4 rounds of Allreduce, Bcast and Barrier", len(rep.Calls))
	}
}

// otf2Bad is an archive cpath must refuse in one line.
type otf2Bad struct {
	name  string
	setup func(t *testing.T, dir string) string // makes the archive in dir, returns the argument
	err   string                                // regexp for the line
}

// copyArchive copies a Score-P trace into dir.
func copyArchive(t *testing.T, name, dir string) string {
	t.Helper()
	src := filepath.Join(scorepDir, name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func generated(kind string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		if out, err := exec.Command(python3(t), filepath.Join("testdata", "otf2gen.py"), kind, dir).CombinedOutput(); err != nil {
			t.Fatalf("otf2gen.py %s: %v\n%s", kind, err, out)
		}
		return dir
	}
}

var otf2Bads = []otf2Bad{
	{"missing anchor", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		os.Remove(filepath.Join(d, "traces.otf2"))
		return d
	}, `traces\.otf2: no OTF2 anchor file`},
	{"no such anchor", func(t *testing.T, d string) string { return filepath.Join(d, "nope.otf2") }, `nope\.otf2: no OTF2 anchor file`},
	{"truncated event file", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		os.Truncate(filepath.Join(d, "traces", "1.evt"), 500)
		return d
	}, `traces/1\.evt: bad OTF2 archive: truncated or corrupt: the 60 events of location 1 \(rank 1\) cannot all be read`},
	{"event file cut at its end", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		p := filepath.Join(d, "traces", "0.evt")
		st, _ := os.Stat(p)
		os.Truncate(p, st.Size()-40)
		return d
	}, `traces/0\.evt: bad OTF2 archive: truncated or corrupt: the 60 events of location 0 \(rank 0\) cannot all be read`},
	{"missing event file", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		os.Remove(filepath.Join(d, "traces", "0.evt"))
		return d
	}, `traces/0\.evt: bad OTF2 archive: missing: the event file of location 0 \(rank 0\)`},
	{"truncated definitions", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		os.Truncate(filepath.Join(d, "traces.def"), 3000)
		return d
	}, `traces\.otf2: bad OTF2 archive: cannot read its definitions`},
	{"other version", func(t *testing.T, d string) string {
		copyArchive(t, "ping-pong-otf2", d)
		p := filepath.Join(d, "traces.otf2")
		b, _ := os.ReadFile(p)
		b[8] = 9 // the major version
		os.WriteFile(p, b, 0o644)
		return d
	}, `traces\.otf2: bad OTF2 archive: cannot read its definitions \(.*The trace version conflicts with current reader version`},
	{"not an archive", func(t *testing.T, d string) string {
		os.WriteFile(filepath.Join(d, "traces.otf2"), []byte("not an OTF2 anchor\n"), 0o644)
		return d
	}, `traces\.otf2: bad OTF2 archive: cannot read its definitions`},
	{"no MPI", generated("nompi"), `traces\.otf2: bad OTF2 archive: no MPI ranks in its definitions .*not a trace of an MPI program`},
	{"no MPI calls", generated("nocalls"), `traces\.otf2: bad OTF2 archive: no MPI regions in its definitions: the trace records no MPI calls`},
}

// TestOtf2BadInput: a bad archive is one line and exit status 1, for
// the analysis and cpath info alike.
func TestOtf2BadInput(t *testing.T) {
	for _, tc := range otf2Bads {
		for _, cmd := range [][]string{{}, {"info"}} {
			t.Run(tc.name+"/"+strings.Join(append(cmd, "ARCHIVE"), " "), func(t *testing.T) {
				arg := tc.setup(t, t.TempDir())
				code, _, errs := runCLI(t, append(cmd, arg)...)
				if code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "cpath: ") {
					t.Fatalf("exit %d, stderr %q: want 1 and one line", code, errs)
				}
				if !regexp.MustCompile(tc.err).MatchString(errs) {
					t.Fatalf("stderr %q does not match %q", errs, tc.err)
				}
			})
		}
	}
}

// TestOtf2Export: cpath export writes an archive that cpath reads back to
// the same report (cpath's own logs and a Score-P archive alike), and
// refuses in one line what it cannot do.
func TestOtf2Export(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	os.Mkdir(logs, 0o755)
	writeRun(t, logs, 4)
	for _, in := range []string{logs, filepath.Join(scorepDir, "ping-pong-otf2")} {
		out := filepath.Join(t.TempDir(), "otf2")
		code, stdout, errs := runCLI(t, "export", "--otf2", out, in)
		if code != 0 || !strings.HasPrefix(stdout, "wrote "+filepath.Join(out, "traces.otf2")+": ") {
			t.Fatalf("cpath export --otf2 %s %s: exit %d, stdout %q, stderr %q", out, in, code, stdout, errs)
		}
		_, want, _ := runCLI(t, "--json", "-", "--json-segments", in)
		_, got, _ := runCLI(t, "--json", "-", "--json-segments", out)
		a, b := decodeJSON(t, want), decodeJSON(t, got)
		for _, k := range []string{"critical_path", "waitstates", "pop", "calls", "comm_matrix", "message_sizes"} {
			if ja, jb := marshal(a[k]), marshal(b[k]); ja != jb {
				t.Errorf("%s: %s differs after the export:\n%.400s\n%.400s", in, k, ja, jb)
			}
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"export", logs}, `^cpath: export: want --otf2 OUTDIR`},
		{[]string{"export", "--otf2", dir}, `^cpath: export: want --otf2 OUTDIR LOGDIR`},
		{[]string{"export", "--otf2", dir, filepath.Join(dir, "nope")}, `nope: no such directory`},
		{[]string{"export", "--otf2", filepath.Join(scorepDir, "ping-pong-otf2"), logs}, `traces\.otf2: already there: export into a directory without an archive`},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 1 || strings.Count(errs, "\n") != 1 || !regexp.MustCompile(tc.err).MatchString(errs) {
			t.Errorf("cpath %s: exit %d, stderr %q: want 1 and one line matching %q", strings.Join(tc.args, " "), code, errs, tc.err)
		}
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON report: %v\n%.500s", err, s)
	}
	return m
}

func marshal(v any) string {
	if m, ok := v.(map[string]any); ok {
		delete(m, "analyzer") // how the analysis went (rounds, bytes), not what it found
	}
	b, _ := json.Marshal(v)
	return string(b)
}
