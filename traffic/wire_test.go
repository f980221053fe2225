package traffic

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record a Result ships as its memory to its
// size, without pointers or hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		Comm{}:      16,
		Histogram{}: 65 * 8,
	})
}

var encode, decode = mpixtest.Codec(func(e *mpix.Encoder, r *Result) { r.Put(e) }, ReadResult)

// TestResultRoundTrip: a result with every field set comes back whole (a
// field the encoding leaves out is one it loses), an empty one as it was;
// a matrix whose arrays differ in length is an error.
func TestResultRoundTrip(t *testing.T) {
	var full Result
	mpixtest.Fill(&full)
	mpixtest.RoundTrip(t, encode, decode, &full, &full)
	mpixtest.RoundTrip(t, encode, decode, &Result{}, &Result{})
	bad := full
	bad.Coll.Bytes = bad.Coll.Bytes[:1]
	if _, err := decode(encode(&bad)); err == nil {
		t.Errorf("a matrix of 2 pairs and 1 byte sum decoded")
	}
}

// FuzzResult: any bytes another rank sends as its traffic decode to an
// error or to a result that encodes back to the same; none panics.
func FuzzResult(f *testing.F) {
	var full Result
	mpixtest.Fill(&full)
	f.Add(encode(&full))
	f.Add(encode(&Result{}))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encode, decode) })
}
