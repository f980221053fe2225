package cpath

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record the distributed algorithms ship
// between analyzer ranks as its memory to its size, without pointers or
// hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		distMsg{}:       24,
		crossDst{}:      16,
		finishEntries{}: 24,
		finishVerdict{}: 24,
		distTally{}:     14 * 8,
		shipVertex{}:    16,
		shipEdge{}:      16,
		solved{}:        24,
		topoEdge{}:      topoEdgeSize,
		topoEnds{}:      topoEndsSize,
		topoPart{}:      16,
	})
}
