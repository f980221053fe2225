package graph

import (
	"sort"

	"github.com/cpath/cpath/internal/mpix"
)

// splitter labels the owned vertices with their splits (PAG.Splits).
type splitter struct {
	p         *PAG
	syncOfHub map[int32]int32 // synchronisation points by hub vertex
}

// splits gives every owned vertex its split: split k holds each rank's
// calls after its call in synchronisation point k-1 and up to it in point
// k, with the hub of point k; the end of a rank's call in point k opens
// split k+1. A point is a cut only if every path across it runs through
// its hub: a message sent before it and received after it, or a member
// that kept its own call edge, makes it no cut (it is dropped, and the
// splits around it merge).
//
// Only the global split algorithm (and topo's exact comparison) needs the
// labels, so Build leaves them to be made on demand, sparing the other
// searches a vertex array and a pass over the edges. Every analyzer rank
// of c calls it together: the points dropped are agreed on.
func (p *PAG) Splits(c mpix.Comm) error {
	b := &splitter{p: p}
	for {
		bad := make([]int64, len(p.Syncs))
		p.Split = b.label()
		if len(p.Syncs) == 0 {
			return nil // one split: nothing to check (every rank has the same syncs)
		}
		lo, hi := p.Bounds[p.Part], p.Bounds[p.Part+1]
		for l := int32(0); l+1 < int32(len(p.InStart)); l++ {
			sv := p.Split[l]
			for e := p.InStart[l]; e < p.InStart[l+1]; e++ {
				u := p.InSrc[e]
				var su int32
				if u >= lo && u < hi {
					su = p.Split[u-lo] // owned: labelled
					if p.InKind[e] == EdgeHubOut && !b.isSyncHub(u) {
						su = sv // another collective's hub: its members' split
					}
				} else {
					su = b.splitOf(u, sv)
				}
				switch {
				case su == sv:
				case su == sv-1 && u == p.SyncHub[su] && p.InKind[e] == EdgeHubOut:
				default:
					for j := min(su, sv); j < max(su, sv) && int(j) < len(bad); j++ {
						bad[j] = 1
					}
				}
			}
		}
		if err := c.Allreduce(bad, mpix.Max); err != nil {
			return err
		}
		keep := 0
		for j := range p.Syncs {
			if bad[j] == 0 {
				p.Syncs[keep], p.SyncHub[keep] = p.Syncs[j], p.SyncHub[j]
				keep++
			}
		}
		if keep == len(p.Syncs) {
			return nil
		}
		// Dropping a point leaves the others' crossings as they were, but
		// the labels change: label again and check once more.
		p.Syncs, p.SyncHub = p.Syncs[:keep], p.SyncHub[:keep]
	}
}

func (b *splitter) isSyncHub(v int32) bool { _, ok := b.syncOfHub[v]; return ok }

// callSplit is the split of call c's start on rank r: the number of
// synchronisation points whose call on r comes before c.
func (b *splitter) callSplit(c int32, r int) int32 {
	syncs := b.p.Syncs
	return int32(sort.Search(len(syncs), func(j int) bool { return syncs[j][r] >= c }))
}

// splitOf is the split of vertex u; a hub that is not a synchronisation
// point's is taken to be in split def (its members' split is the one of
// the completion it leads to).
func (b *splitter) splitOf(u int32, def int32) int32 {
	p := b.p
	c, kind := p.Vertex(u)
	switch kind {
	case VertexRun:
		return 0
	case VertexHub:
		if j, ok := b.syncOfHub[u]; ok {
			return j
		}
		return def
	}
	r := p.Rank(c)
	k := b.callSplit(c, r)
	if kind == VertexEnd && int(k) < len(p.Syncs) && p.Syncs[k][r] == c {
		k++
	}
	return k
}

// label computes the split of every owned vertex.
func (b *splitter) label() []int32 {
	p := b.p
	n := p.CallHi - p.CallLo
	split := make([]int32, len(p.InStart)-1)
	for i := 0; i < p.RankHi-p.RankLo; i++ {
		r := p.RankLo + i
		k := int32(0)
		for cl := p.RankStart[r] - p.CallLo; cl < p.RankStart[r+1]-p.CallLo; cl++ {
			c := cl + p.CallLo
			for int(k) < len(p.Syncs) && p.Syncs[k][r] < c {
				k++
			}
			split[2*cl], split[2*cl+1] = k, k
			if int(k) < len(p.Syncs) && p.Syncs[k][r] == c {
				split[2*cl+1] = k + 1
			}
		}
	}
	b.syncOfHub = make(map[int32]int32, len(p.SyncHub))
	for j, h := range p.SyncHub {
		b.syncOfHub[h] = int32(j)
	}
	for l := 2 * n; l < int32(len(split)); l++ {
		v := p.Bounds[p.Part] + l
		if j, ok := b.syncOfHub[v]; ok {
			split[l] = j
			continue
		}
		if v == p.StartVertex {
			split[l] = 0
			continue
		}
		// Another hub: in its members' split, that of its first in-edge's
		// source (a member's start, or the previous hub of a chain).
		split[l] = 0
		if e := p.InStart[l]; e < p.InStart[l+1] {
			split[l] = b.splitOf(p.InSrc[e], 0)
		}
	}
	return split
}
