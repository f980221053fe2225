package analysis

import (
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// The run a filled share fits: Fill makes every array two long.
const shareRanks, shareComms = 2, 2

var encodeShare, decodeShare = mpixtest.Codec(func(e *mpix.Encoder, s share) { s.put(e) },
	func(d *mpix.Decoder) share { return readShare(d, shareRanks, shareComms) })

// filledShare is a share with every field set, its indices (instances,
// communicators, ranks) in the run's range.
func filledShare() share {
	var s share
	mpixtest.Fill(&s)
	for i := range s.Imbalance.Instances {
		s.Imbalance.Instances[i].Coll = int32(i)
	}
	for i := range s.Colls {
		s.Colls[i].Comm = int32(i)
	}
	s.Imbalance.ByComm = map[int32]*imbalance.Waits{-1: &s.Imbalance.Waits, 1: &s.Imbalance.ByRank[0]}
	for _, m := range []*[]int32{&s.Traffic.P2P.Src, &s.Traffic.P2P.Dst, &s.Traffic.Coll.Src, &s.Traffic.Coll.Dst} {
		*m = []int32{0, 1}
	}
	return s
}

// TestShareRoundTrip: a share with every field set comes back whole; one
// that does not fit the run is an error.
func TestShareRoundTrip(t *testing.T) {
	full := filledShare()
	mpixtest.RoundTrip(t, encodeShare, decodeShare, full, full)
	for what, spoil := range map[string]func(s *share){
		"a process more": func(s *share) {
			s.Imbalance.Processes, s.Imbalance.ByRank = make([]imbalance.Process, 3), make([]imbalance.Waits, 3)
		},
		"a communicator fewer":            func(s *share) { s.Traffic.Comms = s.Traffic.Comms[:1] },
		"an instance of no collective":    func(s *share) { s.Imbalance.Instances[1].Coll = 2 },
		"a collective on no communicator": func(s *share) { s.Colls[0].Comm = -1 },
		"waits on no communicator":        func(s *share) { s.Imbalance.ByComm[2] = &imbalance.Waits{} },
		"traffic from no rank":            func(s *share) { s.Traffic.Coll.Src[1] = 2 },
	} {
		s := filledShare()
		spoil(&s)
		if _, err := decodeShare(encodeShare(s)); err == nil {
			t.Errorf("a share with %s decoded", what)
		}
	}
}

// FuzzShare: any bytes another rank sends as its share decode to an error
// or to a share that encodes back to the same; none panics.
func FuzzShare(f *testing.F) {
	f.Add(encodeShare(filledShare()))
	f.Add(encodeShare(share{Imbalance: &imbalance.Result{Processes: make([]imbalance.Process, 2), ByRank: make([]imbalance.Waits, 2)},
		Colls: []graph.Collective{{Comm: 1}}, Traffic: filledShare().Traffic}))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encodeShare, decodeShare) })
}
