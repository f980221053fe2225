package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
		writeLog(t, d, logSpec{rank: 3, cut: 40})
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
	}, "", 0, "", `(?s)critical path \(dag\).*Notes:.*rank-000002\.cplog: rank 2 ended by killed without flushing`},
	{"signalled rank", func(t *testing.T, d string) {
		writeRun(t, d, 4)
		writeLog(t, d, logSpec{rank: 1, status: trace.EndSignal, info: 15})
	}, "", 0, "", `rank 1 ended by signal`},
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
		code, out, errs := runCLI(t, "analyze", "--algo="+algo, "--json", "-", dir)
		if code != 0 || !strings.Contains(out, `"algo":"`+algo) || !strings.Contains(out, `"length_ns"`) {
			t.Fatalf("%s: %d %q %.200s", algo, code, errs, out)
		}
	}
}
