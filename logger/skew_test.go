package main

import (
	"math"
	"testing"
)

// FuzzParseSkew: the test-only CPATH_TEST_CLOCK_SKEW parser never panics,
// and what it accepts scales with the rank (rank 0 is never skewed).
func FuzzParseSkew(f *testing.F) {
	for _, s := range []string{"", "1000", "-300000:0", "0:50", "5: 2.5", "x", ":", "1:y", "9223372036854775807:1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s0, err := parseSkew(v, 0, 5)
		if err != nil {
			return
		}
		if s0.OffsetNs != 0 || s0.DriftPPM != 0 {
			t.Fatalf("%q: rank 0 skewed: %+v", v, s0)
		}
		s3, err := parseSkew(v, 3, 5)
		if err != nil {
			t.Fatalf("%q: accepted for rank 0, not rank 3: %v", v, err)
		}
		s1, _ := parseSkew(v, 1, 5)
		if s3.OffsetNs != 3*s1.OffsetNs || (!math.IsNaN(s1.DriftPPM) && !math.IsInf(s1.DriftPPM, 0) && math.Abs(s3.DriftPPM-3*s1.DriftPPM) > 1e-9*math.Abs(s3.DriftPPM)) {
			t.Fatalf("%q: rank 1 %+v, rank 3 %+v", v, s1, s3)
		}
	})
}

// TestParseCallDepth: CPATH_CALLDEPTH takes 0 to 8 frames; anything else
// is refused (the logger then records no call paths and says so).
func TestParseCallDepth(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		ok   bool
	}{
		{"", 0, true}, {"0", 0, true}, {"4", 4, true}, {" 8 ", 8, true},
		{"9", 0, false}, {"-1", 0, false}, {"x", 0, false}, {"2.5", 0, false},
	} {
		d, err := parseCallDepth(tc.v)
		if d != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseCallDepth(%q) = %d, %v; want %d, ok %v", tc.v, d, err, tc.want, tc.ok)
		}
	}
}
