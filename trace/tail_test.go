package trace

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestTailCalls: a log that ends with its checked trailer gives its number
// of calls (records other than sub-records) from its last bytes alone; a
// log that does not end so (killed, cut, or with the zero tail a signal
// leaves) gives none, and must be counted by reading it.
func TestTailCalls(t *testing.T) {
	recs := haloRecords(30, 5)
	calls := 0
	for i := range recs {
		if !recs[i].Op.IsSub() {
			calls++
		}
	}
	if calls == len(recs) {
		t.Fatal("the test wants sub-records among the records")
	}
	done := writeLog(t, recs, &Trailer{Status: EndFinalized})
	huge := append([]byte(nil), done...) // a count no log of its size can hold
	binary.LittleEndian.PutUint64(huge[len(huge)-13:], uint64(len(huge)+1))
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"finalized", done, true},
		{"killed", writeLog(t, recs, nil), false},
		{"cut", done[:len(done)-1], false},
		{"zero tail", append(append([]byte(nil), done...), 0, 0, 0, 0), false},
		{"empty", nil, false},
		{"more calls than bytes", huge, false},
	} {
		n, ok := TailCalls(bytes.NewReader(tc.data), int64(len(tc.data)))
		if ok != tc.ok || ok && n != uint64(calls) {
			t.Errorf("%s: %d calls, ok %v; want ok %v (and %d calls)", tc.name, n, ok, tc.ok, calls)
		}
	}
	l, err := Read(bytes.NewReader(done), "done")
	if err != nil || l.Trailer.Calls != uint64(calls) || l.Trailer.Records != uint64(len(recs)) {
		t.Fatalf("err %v, trailer %+v; want %d calls of %d records", err, l.Trailer, calls, len(recs))
	}
}
