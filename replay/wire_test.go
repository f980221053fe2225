package replay

import (
	"testing"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// TestWireRecords holds every record the replay ships between analyzer
// ranks as its memory to its size, without pointers or hidden padding.
func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecords(t, map[any]uintptr{
		rankHead{}:     48,
		Mark{}:         24,
		site{}:         16,
		wireScenario{}: 24,
		handoff{}:      12,
	})
}

// The run filled rankInfos fit: Fill makes two of them.
const infoRanks = 2

var encodeInfos, decodeInfos = mpixtest.Codec(putRankInfos, func(d *mpix.Decoder) []rankInfo { return readRankInfos(d, infoRanks) })

// filledInfos are rankInfos with every exported field set, ranks of the
// run and a phase more than marks.
func filledInfos() []rankInfo {
	var ris []rankInfo
	mpixtest.Fill(&ris)
	for i := range ris {
		ris[i].Rank = i
		ris[i].Marks = ris[i].Marks[:1]
	}
	return ris
}

// TestRankInfosRoundTrip: rankInfos with every exported field set come
// back whole (win stays behind); ones that do not fit the run are errors.
func TestRankInfosRoundTrip(t *testing.T) {
	full := filledInfos()
	mpixtest.RoundTrip(t, encodeInfos, decodeInfos, full, full)
	empty := []rankInfo{{Rank: 1, Empty: true, Useful: []int64{0}, PhaseFrom: []int64{0}, PhaseTo: []int64{0}, win: &windowInfo{}}}
	want := []rankInfo{{Rank: 1, Empty: true, Useful: []int64{0}, PhaseFrom: []int64{0}, PhaseTo: []int64{0}}}
	mpixtest.RoundTrip(t, encodeInfos, decodeInfos, empty, want)
	mpixtest.RoundTrip(t, encodeInfos, decodeInfos, nil, nil)
	for what, spoil := range map[string]func(ris []rankInfo){
		"a rank out of the run":   func(ris []rankInfo) { ris[1].Rank = infoRanks },
		"as many phases as marks": func(ris []rankInfo) { ris[0].Marks = ris[0].Marks[:2] },
		"phase ends missing":      func(ris []rankInfo) { ris[1].PhaseTo = nil },
	} {
		ris := filledInfos()
		spoil(ris)
		if _, err := decodeInfos(encodeInfos(ris)); err == nil {
			t.Errorf("rankInfos with %s decoded", what)
		}
	}
}

// FuzzRankInfos: any bytes another rank sends as its ranks' infos decode
// to an error or to infos that encode back to the same; none panics.
func FuzzRankInfos(f *testing.F) {
	f.Add(encodeInfos(filledInfos()))
	f.Fuzz(func(t *testing.T, b []byte) { mpixtest.Redecode(t, b, encodeInfos, decodeInfos) })
}
