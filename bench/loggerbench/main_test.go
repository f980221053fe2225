package main

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMedianCI(t *testing.T) {
	for _, tc := range []struct {
		x              []float64
		lo, hi, level  float64
		wantLevelAbove float64
	}{
		{[]float64{3, 1, 2}, 1, 3, 0.75, 0.7},                        // n=3: the whole range, 75%
		{[]float64{5, 1, 4, 2, 3}, 1, 5, 0.9375, 0.9},                // n=5: the whole range, 93.75%
		{[]float64{9, 1, 8, 2, 7, 3, 6, 4, 5}, 2, 8, 0.9609375, 0.9}, // n=9: 2nd to 8th
	} {
		lo, hi, level := medianCI(tc.x, 0.9)
		if lo != tc.lo || hi != tc.hi || math.Abs(level-tc.level) > 1e-9 || level < tc.wantLevelAbove {
			t.Errorf("medianCI(%v) = %v, %v, %v; want %v, %v, %v", tc.x, lo, hi, level, tc.lo, tc.hi, tc.level)
		}
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}

func lines(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func TestParse(t *testing.T) {
	h, err := parseHalo(&runResult{lines: lines(`
halo 0 100 512 0.2 1.5 1.2 0.05 1.8 0.000390 96125.5
mem 0 10908 10764
halo 1 100 512 0.3 1.5 1.1 0.04 1.9 0.000395 96125.5
mem 1 11016 10924
`)})
	if err != nil {
		t.Fatal(err)
	}
	if h.ranks != 2 || h.calls != 512 || h.init != 0.3 || h.total != 1.9 || h.iterMedian != 0.000395 ||
		h.mem[1][1] != 10924 || math.Abs(h.computeMean-1.15) > 1e-12 {
		t.Errorf("parseHalo: %+v", h)
	}
	if _, err := parseHalo(&runResult{lines: lines("halo 0 1 5 0 0 0 0 0 0 1\nhalo 1 1 5 0 0 0 0 0 0 2\n")}); err == nil {
		t.Error("parseHalo: ranks disagreeing on the checksum not reported")
	}
	b, calls, mem, err := parseTight(&runResult{lines: lines(`
tight 0 test 0 1000 8.5
tight 1 wait 0 1000 3.0
calls 0 7002
mem 0 100 200
`)})
	if err != nil || len(b) != 2 || b[1].kind != "wait" || b[1].ns != 3 || calls[0] != 7002 || mem[0][1] != 200 {
		t.Errorf("parseTight: %v %v %v %v", b, calls, mem, err)
	}
}

// TestMPIArgs: each MPI's launcher is told the job, the environment and
// where each rank's output goes in its own options, and the rank files
// come back in rank order.
func TestMPIArgs(t *testing.T) {
	ompi, mpich := mpiImpls[0], mpiImpls[1]
	for _, tc := range []struct {
		m             *mpiImpl
		over, unbound bool
		job, env, out string
		files         []string // created under the output directory
		wantRanks     []int
	}{
		{ompi, false, false, "--allow-run-as-root -np 2", "-x A=b=c", "--output-filename D",
			[]string{"1/rank.10/stdout", "1/rank.2/stdout", "1/rank.0/stdout"}, []int{0, 2, 10}},
		{ompi, true, true, "--allow-run-as-root --oversubscribe -np 2 --bind-to none", "-x A=b=c", "--output-filename D", nil, nil},
		{mpich, true, true, "-np 2", "-genv A b=c", "-outfile-pattern D/rank.%r.stdout",
			[]string{"rank.1.stdout", "rank.0.stdout", "other"}, []int{0, 1}},
	} {
		dir := t.TempDir()
		if got := strings.Join(tc.m.jobArgs(2, tc.over, tc.unbound), " "); got != tc.job {
			t.Errorf("%s: job %q, want %q", tc.m.Key, got, tc.job)
		}
		if got := strings.Join(tc.m.env("A=b=c"), " "); got != tc.env {
			t.Errorf("%s: env %q, want %q", tc.m.Key, got, tc.env)
		}
		if got := strings.ReplaceAll(strings.Join(tc.m.outputArgs(dir), " "), dir, "D"); got != tc.out {
			t.Errorf("%s: output %q, want %q", tc.m.Key, got, tc.out)
		}
		for _, f := range tc.files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var ranks []int
		for _, f := range tc.m.rankFiles(dir) {
			ranks = append(ranks, rankOfFile(f))
		}
		if !reflect.DeepEqual(ranks, tc.wantRanks) {
			t.Errorf("%s: rank files of ranks %v, want %v", tc.m.Key, ranks, tc.wantRanks)
		}
	}
}
