package graph

import (
	"fmt"

	"github.com/cpath/cpath/internal/mpix"
)

// SiteTable is one logged rank's call sites with their call paths, as
// CallInfo.Site numbers them: what the report needs to name the caller
// behind a program's MPI wrapper layer. A run has few sites (tens to
// thousands a rank), so rank 0 may hold every rank's.
type SiteTable struct {
	Sites      []uint64 // return addresses of the MPI calls
	FrameStart []uint32 // site k's call path is Frames[FrameStart[k]:FrameStart[k+1]]
	Frames     []uint64 // return addresses above the sites, innermost first
}

// Len is the number of sites.
func (t *SiteTable) Len() int { return len(t.Sites) }

// Path is site k's call path (nil for none).
func (t *SiteTable) Path(k uint32) []uint64 {
	if int(k)+1 >= len(t.FrameStart) {
		return nil
	}
	return t.Frames[t.FrameStart[k]:t.FrameStart[k+1]]
}

// valid says whether the table's offsets fit its sites and frames.
func (t *SiteTable) valid() bool {
	n := len(t.FrameStart)
	if n == 0 {
		return len(t.Frames) == 0
	}
	if n != len(t.Sites)+1 || t.FrameStart[0] != 0 || int(t.FrameStart[n-1]) != len(t.Frames) {
		return false
	}
	for k := 1; k < n; k++ {
		if t.FrameStart[k] < t.FrameStart[k-1] {
			return false
		}
	}
	return true
}

// Chain is site k and its call path: the return addresses from the
// MPI call's outwards.
func (t *SiteTable) Chain(k uint32) []uint64 { return append([]uint64{t.Sites[k]}, t.Path(k)...) }

// ownedSites is owned rank i's SiteTable, its frames rebased to 0.
func (p *PAG) ownedSites(i int) SiteTable {
	if i+1 >= len(p.RankSites) {
		return SiteTable{}
	}
	lo, hi := p.RankSites[i], p.RankSites[i+1]
	t := SiteTable{Sites: p.Sites[lo:hi]}
	if int(hi) < len(p.FrameStart) {
		f0 := p.FrameStart[lo]
		t.Frames = p.Frames[f0:p.FrameStart[hi]]
		t.FrameStart = make([]uint32, hi-lo+1)
		for k := range t.FrameStart {
			t.FrameStart[k] = p.FrameStart[lo+uint32(k)] - f0
		}
	}
	return t
}

// GatherSites gathers every logged rank's SiteTable on rank 0 of c, by
// rank; the other ranks get nil. Every rank of c takes part.
func (p *PAG) GatherSites(c mpix.Comm) ([]SiteTable, error) {
	e := mpix.NewEncoder(nil)
	for i := 0; i < p.RankHi-p.RankLo; i++ {
		t := p.ownedSites(i)
		mpix.PutRecords(e, t.Sites)
		mpix.PutRecords(e, t.FrameStart)
		mpix.PutRecords(e, t.Frames)
	}
	got, err := c.Gatherv(e.Bytes())
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	out := make([]SiteTable, 0, p.Ranks)
	for q, b := range got {
		d := mpix.NewDecoder(b)
		for r := p.PartRanks[q]; r < p.PartRanks[q+1]; r++ {
			t := SiteTable{Sites: mpix.ReadRecords[uint64](d), FrameStart: mpix.ReadRecords[uint32](d), Frames: mpix.ReadRecords[uint64](d)}
			if d.Err() == nil && !t.valid() {
				d.Fail("rank %d's call paths: %d offsets for %d sites and %d frames, or out of order", r, len(t.FrameStart), len(t.Sites), len(t.Frames))
			}
			out = append(out, t)
		}
		if err := d.Done(); err != nil {
			return nil, fmt.Errorf("graph: analyzer rank %d's call sites: %v", q, err)
		}
	}
	return out, nil
}
