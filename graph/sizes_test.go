package graph

import (
	"testing"
	"unsafe"
)

// TestRecordSizes holds the build's per-call and per-message records to
// the sizes their comments give: there are millions of each, and the
// build's memory peaks while they live (a field added, or one moved so
// that padding grows, shows here first).
func TestRecordSizes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, want uintptr
	}{
		{"dep", unsafe.Sizeof(dep{}), 24},
		{"partMsg", unsafe.Sizeof(partMsg{}), 40},
		{"msgEnd", unsafe.Sizeof(msgEnd{}), 24},
		{"recvEnd", unsafe.Sizeof(recvEnd{}), 8},
	} {
		if tc.size != tc.want {
			t.Errorf("%s is %d bytes, want %d", tc.name, tc.size, tc.want)
		}
	}
}
