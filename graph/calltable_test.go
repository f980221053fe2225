package graph

import "testing"

// TestCallTable: a call's info is found by its rank among the calls held,
// across word boundaries, and calls not held (or not in the run) give the
// zero CallInfo and false.
func TestCallTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ids  []int32
	}{
		{"empty", 100, nil},
		{"first and last", 130, []int32{0, 129}},
		{"word edges", 300, []int32{62, 63, 64, 65, 127, 128, 191, 192, 255, 256}},
		{"dense", 200, func() (ids []int32) {
			for c := int32(0); c < 200; c += 3 {
				ids = append(ids, c)
			}
			return ids
		}()},
	} {
		infos := make([]CallInfo, len(tc.ids))
		held := map[int32]CallInfo{}
		for i, c := range tc.ids {
			infos[i] = CallInfo{Start: int64(c) * 10, End: int64(c)*10 + 7, CallSite: uint64(c) + 0x1000}
			held[c] = infos[i]
		}
		tab := newCallTable(tc.n, tc.ids, infos)
		if tab.Len() != len(tc.ids) {
			t.Errorf("%s: Len %d, want %d", tc.name, tab.Len(), len(tc.ids))
		}
		for c := int32(-2); c < int32(tc.n)+70; c++ {
			got, ok := tab.Get(c)
			want, wantOK := held[c]
			if ok != wantOK || got != want || tab.At(c) != want {
				t.Fatalf("%s: call %d: %+v %v, want %+v %v", tc.name, c, got, ok, want, wantOK)
			}
		}
	}
}

// TestSortedDistinct: the calls asked for come out sorted and each once,
// whether few (sorted) or many (marked in a bitset), across word edges.
func TestSortedDistinct(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		calls []int32
		want  []int32
	}{
		{"none", 1000, nil, []int32{}},
		{"few, repeated", 10000, []int32{700, 3, 700, 64, 3}, []int32{3, 64, 700}},
		{"many, repeated", 200, []int32{199, 63, 64, 0, 63, 128, 127, 199, 5}, []int32{0, 5, 63, 64, 127, 128, 199}},
	} {
		got := sortedDistinct(tc.calls, tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}
