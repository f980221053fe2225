package graph

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// TestWireRecords holds every record the build ships between analyzer
// ranks as its memory to its size, without pointers or hidden padding,
// and those the analysis's shares ship (Collective, PartitionWait).
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
		funcPlace{}:      16,
		hubCount{}:       16,
		hubTime{}:        16,
		syncHead{}:       24,
		Collective{}:     24,
		PartitionWait{}:  32,
	})
}

// TestSummariesRoundTrip: summaries with every field set (one the
// encoding leaves out, added to trace.Comm say, is one the round trip
// loses) come back whole.
func TestSummariesRoundTrip(t *testing.T) {
	var full []rankSummary
	mpixtest.Fill(&full)
	// Empty lists read back as nil.
	sparse := []rankSummary{{}, {Comms: []trace.Comm{{Name: "W0.0", Members: []int32{}}}, Modules: []trace.Module{}}}
	want := []rankSummary{{}, {Comms: []trace.Comm{{Name: "W0.0"}}}}
	for _, tc := range []struct{ in, want []rankSummary }{{full, full}, {sparse, want}, {nil, nil}} {
		mpixtest.RoundTrip(t, encodeSummaries, decodeSummaries, tc.in, tc.want)
	}
}

// FuzzSummaries: any bytes another rank sends as summaries decode to an
// error or to summaries that encode back to the same; none panics.
func FuzzSummaries(f *testing.F) {
	var full []rankSummary
	mpixtest.Fill(&full)
	f.Add(encodeSummaries(full))
	f.Add(encodeSummaries([]rankSummary{{Note: "rank 1 was killed"}}))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encodeSummaries, decodeSummaries) })
}
