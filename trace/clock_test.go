package trace

import (
	"math"
	"testing"
)

// TestClockLine checks the clock model against hand-computed lines: the
// least-drift line through both sync points' error intervals.
func TestClockLine(t *testing.T) {
	sp := func(local, off, err int64) SyncPoint { return SyncPoint{LocalNs: local, OffsetNs: off, ErrNs: err} }
	for _, tc := range []struct {
		name        string
		init        SyncPoint
		final       *SyncPoint
		at          []int64 // local times
		want        []int64 // offsets at those times
		wantDriftPP float64 // ppm
	}{
		{name: "init only", init: sp(100, 500, 20), at: []int64{0, 1e9}, want: []int64{500, 500}},
		{name: "final at the init's time", init: sp(100, 500, 20), final: &SyncPoint{LocalNs: 100, OffsetNs: 900}, at: []int64{0}, want: []int64{500}},
		{
			// Exact points: the line through them, 10 µs over 1 s.
			name: "exact drift", init: sp(0, 0, 0), final: &SyncPoint{LocalNs: 1e9, OffsetNs: 10_000},
			at: []int64{0, 5e8, 1e9, 2e9}, want: []int64{0, 5_000, 10_000, 20_000}, wantDriftPP: 10,
		},
		{
			// The run measured in heldsend under load: init +1.95 ms ±2.05 ms,
			// final +16 ns ±216 ns. The midpoint line drifted −2195 ppm; the
			// intervals overlap, so no drift, at the precise point's offset.
			name: "init under load", init: sp(1e9, 1_950_000, 2_050_000), final: &SyncPoint{LocalNs: 1.9e9, OffsetNs: 16, ErrNs: 216},
			at: []int64{1e9, 1.5e9, 1.9e9}, want: []int64{16, 16, 16},
		},
		{
			// Overlapping intervals of equal error: their mean, 15.
			name: "overlap, equal errors", init: sp(0, 10, 10), final: &SyncPoint{LocalNs: 1e9, OffsetNs: 20, ErrNs: 10},
			at: []int64{0, 1e9}, want: []int64{15, 15},
		},
		{
			// Intervals [850, 1050] and [999, 1001]: the weighted mean,
			// (950/100² + 1000/1²) / (1/100² + 1/1²) ≈ 999.995, rounds to 1000.
			name: "overlap, precise final", init: sp(0, 1000-50, 100), final: &SyncPoint{LocalNs: 1e9, OffsetNs: 1000, ErrNs: 1},
			at: []int64{0}, want: []int64{1000},
		},
		{
			// Disjoint intervals [0, 200] and [1200, 1400]: the line joins
			// 200 and 1200, 1 ppm over 1 s.
			name: "disjoint, rising", init: sp(0, 100, 100), final: &SyncPoint{LocalNs: 1e9, OffsetNs: 1300, ErrNs: 100},
			at: []int64{0, 5e8, 1e9}, want: []int64{200, 700, 1200}, wantDriftPP: 1,
		},
		{
			name: "disjoint, falling", init: sp(0, 1300, 100), final: &SyncPoint{LocalNs: 1e9, OffsetNs: 100, ErrNs: 100},
			at: []int64{0, 1e9}, want: []int64{1200, 200}, wantDriftPP: -1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Clock{Init: tc.init, Final: tc.final}
			for k, at := range tc.at {
				if got := c.Offset(at); got != tc.want[k] {
					t.Errorf("Offset(%d) = %d, want %d", at, got, tc.want[k])
				}
				if got := c.Global(at); got != at+tc.want[k] {
					t.Errorf("Global(%d) = %d, want %d", at, got, at+tc.want[k])
				}
			}
			if d := c.Line().Slope * 1e6; math.Abs(d-tc.wantDriftPP) > 1e-9 {
				t.Errorf("drift %.6f ppm, want %.6f", d, tc.wantDriftPP)
			}
			// Whatever the model, it stays within each point's error.
			points := []SyncPoint{c.Init}
			if tc.final != nil && tc.final.LocalNs != tc.init.LocalNs {
				points = append(points, *tc.final)
			}
			for _, p := range points {
				if d := c.Offset(p.LocalNs) - p.OffsetNs; d > p.ErrNs || d < -p.ErrNs {
					t.Errorf("offset at %d is %d from the measured %d, beyond its error %d", p.LocalNs, d, p.OffsetNs, p.ErrNs)
				}
			}
		})
	}
}
