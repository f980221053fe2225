package graph

import (
	"reflect"
	"testing"

	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// TestWireRecords holds every record the build ships between analyzer
// ranks as its memory to its size, without pointers or hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		wireEnd{}:        56,
		wireDep{}:        24,
		wireColl{}:       48,
		wireEdge{}:       24,
		wireReady{}:      24,
		wirePSCW{}:       40,
		CallInfo{}:       32,
		commHead{}:       8,
		moduleSpan{}:     24,
		unwrappedCount{}: 16,
		hubCount{}:       16,
		hubTime{}:        16,
		syncHead{}:       24,
	})
}

// fill sets every field reachable from v to a value other than its zero,
// slices to two elements, so that a field the summaries' encoding leaves
// out (one added to trace.Comm, say) is one the round trip loses.
func fill(v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('a'+*seed%26)))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(*seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*seed))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(v.Index(i), seed)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), seed)
		}
	default:
		panic("fill: " + v.Kind().String())
	}
}

func TestSummariesRoundTrip(t *testing.T) {
	seed := 0
	var full []rankSummary
	fill(reflect.ValueOf(&full).Elem(), &seed)
	// Empty lists read back as nil, as they did by gob.
	sparse := []rankSummary{{}, {Comms: []trace.Comm{{Name: "W0.0", Members: []int32{}}}, Modules: []trace.Module{}}}
	want := []rankSummary{{}, {Comms: []trace.Comm{{Name: "W0.0"}}}}
	for _, tc := range []struct{ in, want []rankSummary }{{full, full}, {sparse, want}, {nil, nil}} {
		got, err := decodeSummaries(encodeSummaries(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v came back as %+v (%v)", tc.in, got, err)
		}
	}
	b := encodeSummaries(full)
	for _, n := range []int{0, 8, len(b) / 2, len(b) - 8} {
		if _, err := decodeSummaries(b[:n]); err == nil {
			t.Errorf("the summaries cut to %d of %d bytes decoded", n, len(b))
		}
	}
}

// FuzzSummaries: any bytes another rank sends as summaries decode to an
// error or to summaries that encode back to the same; none panics.
func FuzzSummaries(f *testing.F) {
	seed := 0
	var full []rankSummary
	fill(reflect.ValueOf(&full).Elem(), &seed)
	f.Add(encodeSummaries(full))
	f.Add(encodeSummaries([]rankSummary{{Note: "rank 1 was killed"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := decodeSummaries(b)
		if err != nil {
			return
		}
		again, err := decodeSummaries(encodeSummaries(ss))
		if err != nil || !reflect.DeepEqual(again, ss) {
			t.Fatalf("%+v came back as %+v (%v)", ss, again, err)
		}
	})
}
