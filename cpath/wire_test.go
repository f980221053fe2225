package cpath

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record the distributed algorithms ship
// between analyzer ranks as its memory to its size, without pointers or
// hidden padding.
func TestWireRecords(t *testing.T) {
	for _, r := range []struct {
		name string
		v    any
		size uintptr
	}{
		{"distMsg", distMsg{}, 24},
		{"crossDst", crossDst{}, 16},
		{"finishEntries", finishEntries{}, 24},
		{"finishVerdict", finishVerdict{}, 24},
		{"distTally", distTally{}, 14 * 8},
		{"shipVertex", shipVertex{}, 16},
		{"shipEdge", shipEdge{}, 16},
		{"solved", solved{}, 24},
		{"topoEdge", topoEdge{}, topoEdgeSize},
		{"topoEnds", topoEnds{}, topoEndsSize},
		{"topoPart", topoPart{}, 16},
	} {
		mpixtest.CheckRecord(t, r.name, r.v, r.size)
	}
}
