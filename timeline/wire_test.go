package timeline

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record the timeline's ranks ship to each
// other as their memory to its size, without pointers or hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		side{}:      8,
		sendFlow{}:  16,
		batchHead{}: 8,
	})
}

// TestReadBatch: a batch gives its text, the end of a rank's stream none,
// and a message too short for its head is an error, not a panic.
func TestReadBatch(t *testing.T) {
	for _, tc := range []struct {
		m    []byte
		more bool
		text string
		bad  bool
	}{
		{append([]byte{1, 0, 0, 0, 0, 0, 0, 0}, `{"ph":"X"}`...), true, `{"ph":"X"}`, false},
		{[]byte{1, 0, 0, 0, 0, 0, 0, 0}, true, "", false},
		{make([]byte, 8), false, "", false},
		{[]byte{1}, false, "", true},
		{nil, false, "", true},
	} {
		more, text, err := readBatch(tc.m)
		if (err != nil) != tc.bad || err == nil && (more != tc.more || string(text) != tc.text) {
			t.Errorf("%q: %v %q %v", tc.m, more, text, err)
		}
	}
}
