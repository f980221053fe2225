package main

import (
	"math"
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
