package graph

import (
	"slices"
	"testing"
)

// TestByMatch: the receives of one key on a rank whose threads called
// MPI at once, in the order they matched the key's sends; and the
// synchronous sends of threads posted at once, in the order the key's
// receives matched them (the same rule, sides swapped: byMatch(recvs,
// sends, …)).
func TestByMatch(t *testing.T) {
	type end struct{ start, end int64 }
	for _, tc := range []struct {
		name     string
		sends    []int64 // starts, in posting order
		recvs    []end   // in posting order
		want     []int32 // the receive of each send
		postEnds []int64 // when each receive's post call ended; nil: at its end (blocking)
		guesses  int
	}{
		{"posted together: the completions say which got which", []int64{100, 200, 300},
			[]end{{0, 350}, {1, 150}, {2, 250}}, []int32{1, 2, 0}, nil, 0},
		{"posted apart: MPI's order, though a late Wait completed the first", []int64{100, 200},
			[]end{{0, 1000}, {50, 250}}, []int32{0, 1}, []int64{10, 60}, 0},
		{"posted together, no completion says which: a guess", []int64{100, 200},
			[]end{{0, 300}, {1, 310}}, []int32{0, 1}, nil, 1},
		{"three posted together, none done before the next send: two guesses", []int64{100, 200, 300},
			[]end{{0, 400}, {1, 410}, {2, 420}}, []int32{0, 1, 2}, nil, 2},
		{"a receive that completed before the next send started had this one", []int64{100, 300},
			[]end{{0, 400}, {1, 150}}, []int32{1, 0}, nil, 0},
		{"posted after the send started: the first posted after", []int64{100, 200},
			[]end{{150, 160}, {170, 250}}, []int32{0, 1}, nil, 0},
		{"more receives than sends", []int64{100},
			[]end{{0, 500}, {1, 120}, {2, 130}}, []int32{1}, nil, 0},
		{"more sends than receives", []int64{100, 200, 300},
			[]end{{0, 150}, {1, 250}}, []int32{0, 1}, nil, 0},
		// Sides swapped: "sends" are the receives' posts, "recvs" the
		// synchronous sends, each completing once matched.
		{"synchronous sends posted together: their completions say which receive took which", []int64{100, 200, 300},
			[]end{{0, 310}, {1, 110}, {2, 205}}, []int32{1, 2, 0}, nil, 0},
		{"synchronous sends posted apart, a late Wait completing the first: MPI's order", []int64{100, 200},
			[]end{{0, 1000}, {50, 210}}, []int32{0, 1}, []int64{10, 60}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sends, recvs := make([]int32, len(tc.sends)), make([]int32, len(tc.recvs))
			for i := range sends {
				sends[i] = int32(i)
			}
			for i := range recvs {
				recvs[i] = int32(i)
			}
			postEnd := func(e int32) int64 {
				if tc.postEnds != nil {
					return tc.postEnds[e]
				}
				return tc.recvs[e].end
			}
			got, guesses := byMatch(sends, recvs, func(e int32) int64 { return tc.sends[e] },
				func(e int32) int64 { return tc.recvs[e].start }, func(e int32) int64 { return tc.recvs[e].end }, postEnd)
			if !slices.Equal(got, tc.want) || guesses != tc.guesses {
				t.Errorf("got %v with %d guesses, want %v with %d", got, guesses, tc.want, tc.guesses)
			}
		})
	}
}
