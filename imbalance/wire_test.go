package imbalance

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// TestWireRecords holds every record a Result ships as its memory to its
// size, without pointers or hidden padding (graph.PartitionWait is
// graph's).
func TestWireRecords(t *testing.T) {
	waits := uintptr(2*int(graph.NumWaitKinds)+int(graph.NumWaitRules)+3) * 8
	mpixtest.CheckRecords(t, map[any]uintptr{
		Instance{}:  80,
		Process{}:   96,
		Waits{}:     waits,
		opWaits{}:   8 + waits,
		commWaits{}: 8 + waits,
	})
}

var encode, decode = mpixtest.Codec(func(e *mpix.Encoder, r *Result) { r.Put(e) }, ReadResult)

// TestResultRoundTrip: a result with every field set comes back whole (a
// field the encoding leaves out is one it loses), an empty one with its
// maps made, and a share as Analyze makes it as it was.
func TestResultRoundTrip(t *testing.T) {
	var full Result
	mpixtest.Fill(&full)
	mpixtest.RoundTrip(t, encode, decode, &full, &full)
	mpixtest.RoundTrip(t, encode, decode, &Result{}, &Result{ByOp: map[trace.Op]*Waits{}, ByComm: map[int32]*Waits{}})
	tc := instanceCases[0]
	share := Analyze(pagOf(&tc))
	mpixtest.RoundTrip(t, encode, decode, share, share)

	// Entries out of order, and waits not one per process, are errors.
	b := encode(&full)
	// The first opWaits: behind 2 instances, 2 processes and Program, Waits
	// and 2 ranks' waits, and 4 counts.
	at := 2*unsafe.Sizeof(Instance{}) + 3*unsafe.Sizeof(Process{}) + 3*unsafe.Sizeof(Waits{}) + 4*8
	n := unsafe.Sizeof(opWaits{})
	swapped := slices.Concat(b[:at], b[at+n:at+2*n], b[at:at+n], b[at+2*n:])
	if _, err := decode(swapped); err == nil || !strings.Contains(err.Error(), "by operation") {
		t.Errorf("entries by operation in descending order: %v", err)
	}
	if _, err := decode(encode(&Result{Processes: make([]Process, 2), ByRank: make([]Waits, 1)})); err == nil {
		t.Errorf("waits of 1 rank for 2 processes decoded")
	}
}

// FuzzResult: any bytes another rank sends as its result decode to an
// error or to a result that encodes back to the same; none panics.
func FuzzResult(f *testing.F) {
	var full Result
	mpixtest.Fill(&full)
	f.Add(encode(&full))
	tc := instanceCases[0]
	f.Add(encode(Analyze(pagOf(&tc))))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encode, decode) })
}
