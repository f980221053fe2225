package graph

import (
	"math"
	"slices"
	"testing"
)

// TestWeights: every weight reads back as stored, those outside
// [0, 2^31) through Big; slices share it, and joining two sets of weights
// renumbers the second's large ones.
func TestWeights(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []int64
		big  int // how many go to Big
	}{
		{"empty", nil, 0},
		{"small", []int64{0, 1, 7, 1 << 20}, 0},
		{"edge of int32", []int64{math.MaxInt32, math.MaxInt32 + 1, 0}, 1},
		{"long stretches", []int64{5e9, 3, 1 << 40, math.MaxInt64, 2}, 3},
		{"negative", []int64{-1, 4, math.MinInt64}, 2},
	} {
		w := WeightsOf(tc.xs)
		if w.Len() != len(tc.xs) || len(w.Big) != tc.big {
			t.Errorf("%s: %d weights, %d large; want %d, %d", tc.name, w.Len(), len(w.Big), len(tc.xs), tc.big)
		}
		if got := w.Int64s(); !slices.Equal(got, tc.xs) && len(tc.xs) > 0 {
			t.Errorf("%s: read back %v, want %v", tc.name, got, tc.xs)
		}
		m := MakeWeights(len(tc.xs))
		for j := len(tc.xs) - 1; j >= 0; j-- {
			m.Set(int32(j), tc.xs[j])
		}
		for j := range tc.xs {
			if m.At(int32(j)) != tc.xs[j] {
				t.Errorf("%s: Set then At(%d) = %d, want %d", tc.name, j, m.At(int32(j)), tc.xs[j])
			}
		}
		if len(tc.xs) >= 2 {
			s := w.Slice(1, int32(len(tc.xs)))
			if got := s.Int64s(); !slices.Equal(got, tc.xs[1:]) {
				t.Errorf("%s: slice read back %v, want %v", tc.name, got, tc.xs[1:])
			}
		}
	}
}
