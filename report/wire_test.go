package report

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record the drawing ships as its memory to
// its size, without pointers or hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		dotNode{}: 24,
		dotEdge{}: 72,
	})
}

var encodeDOT, decodeDOT = mpixtest.Codec(PutDOTEdges, ReadDOTEdges)

// TestDOTEdgesRoundTrip: edges with every field set come back whole (a
// field the encoding leaves out is one it loses), with labels shared and
// empty; a label index out of range is an error.
func TestDOTEdgesRoundTrip(t *testing.T) {
	var full []DOTEdge
	mpixtest.Fill(&full)
	hub := DOTNode{Rank: -1, Vertex: -1, Label: "hub"}
	shared := []DOTEdge{{From: hub, To: DOTNode{Rank: 2, Site: 0x4011d6, Vertex: -1}, Ns: 5, N: 1, OnPath: true}, {From: hub, To: hub, Ns: -1}}
	for _, es := range [][]DOTEdge{full, shared, nil} {
		mpixtest.RoundTrip(t, encodeDOT, decodeDOT, es, es)
	}
	e := mpix.NewEncoder(nil)
	mpix.PutList(e, []string{"hub"}, func(e *mpix.Encoder, s *string) { e.PutString(*s) })
	mpix.PutRecords(e, []dotEdge{{To: dotNode{Label: 1}}})
	if _, err := decodeDOT(e.Bytes()); err == nil {
		t.Errorf("a node labelled 1 of 1 decoded")
	}
}

// FuzzDOTEdges: any bytes another rank sends as its drawing decode to an
// error or to edges that encode back to the same; none panics.
func FuzzDOTEdges(f *testing.F) {
	var full []DOTEdge
	mpixtest.Fill(&full)
	f.Add(encodeDOT(full))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encodeDOT, decodeDOT) })
}
