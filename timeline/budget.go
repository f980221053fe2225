package timeline

// The size budget: durations bucketed by quarter octaves, the counting
// pass that sums what each bucket would write over the ranks, and the
// choice of the shortest buckets to leave out so that the file stays
// under its limit.

import (
	"math"
	"math/bits"
	"runtime"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/report"
)

// Durations are bucketed by quarter octaves: what the budget keeps or
// leaves out is a whole number of buckets, from the shortest up.
const numBuckets = 256

func bucket(d int64) int {
	if d <= 0 {
		return 0
	}
	k := bits.Len64(uint64(d)) - 1 // the top bit
	var sub uint64
	if k >= 2 {
		sub = uint64(d) >> (k - 2) & 3
	} else {
		sub = uint64(d) << (2 - k) & 3
	}
	return 1 + 4*k + int(sub)
}

// bucketLow is the shortest duration in bucket b or above.
func bucketLow(b int) int64 {
	lo, hi := int64(0), int64(math.MaxInt64)
	for lo < hi {
		m := lo + (hi-lo)/2
		if bucket(m) >= b {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// counts is what the counting pass finds, summed over the ranks.
type counts struct {
	bytes, calls, stretches [numBuckets]int64 // off the path, by bucket of duration (bytes: arrows too)
	// The critical path's slices on the ranks' tracks (bytes: and the
	// arrows between them), likewise.
	critBytes, critCallsAt, critStretchesAt [numBuckets]int64
	fixed                                   int64 // what is always drawn: metadata
	track                                   int64 // the critical path's own track
	critCalls, critStretches                int64
}

func (k *counts) flat() []int64 {
	x := make([]int64, 0, 6*numBuckets+4)
	for _, a := range k.arrays() {
		x = append(x, a[:]...)
	}
	return append(x, k.fixed, k.track, k.critCalls, k.critStretches)
}

func (k *counts) unflat(x []int64) {
	n := numBuckets
	as := k.arrays()
	for i, a := range as {
		copy(a[:], x[i*n:(i+1)*n])
	}
	m := len(as) * n
	k.fixed, k.track, k.critCalls, k.critStretches = x[m], x[m+1], x[m+2], x[m+3]
}

// arrays are the counts by bucket.
func (k *counts) arrays() []*[numBuckets]int64 {
	return []*[numBuckets]int64{&k.bytes, &k.calls, &k.stretches, &k.critBytes, &k.critCallsAt, &k.critStretchesAt}
}

// budget counts the bytes of everything the window holds, by bucket of
// duration, and picks the shortest duration drawn so that the file fits:
// the same on every rank.
func (w *writer) budget(c mpix.Comm, segs []report.Segment) error {
	k := &counts{}
	e := &enc{counting: true}
	if c.Rank() == 0 {
		w.writeTrack(e, segs)
		k.track = e.n
		e.n = 0
	}
	w.countParts(k)
	x := k.flat()
	if err := mpix.Agree(c, c.Allreduce(x, mpix.Sum)); err != nil {
		return err
	}
	k.unflat(x)

	fixed := k.fixed + headerBytes + 2*int64(len(quote(w.p.RunID)))
	budget := w.opt.MaxBytes
	var crit, rest int64
	for b := range numBuckets {
		crit += k.critBytes[b]
		rest += k.bytes[b]
	}
	// The path's slices on the ranks' tracks first, then its own track;
	// where both do not fit, its own track, which shows it whole, and the
	// longest of its slices on the ranks' tracks that fit; where not even
	// its track fits, the longest of its slices that fit.
	w.track = budget == 0 || fixed+crit+k.track <= budget || fixed+k.track <= budget
	if w.track {
		fixed += k.track
	}
	if budget > 0 {
		for w.minBucket < numBuckets && fixed+crit+rest > budget {
			rest -= k.bytes[w.minBucket]
			w.minBucket++
		}
		for w.minCrit < numBuckets && fixed+crit+rest > budget {
			crit -= k.critBytes[w.minCrit]
			w.minCrit++
		}
	}
	s := &w.sum
	s.Track, s.OverBudget = w.track, budget > 0 && fixed+crit+rest > budget
	s.Calls, s.Stretches = k.critCalls, k.critStretches
	s.CallsDrawn, s.StretchesDrawn = k.critCalls, k.critStretches
	for b := range w.minCrit {
		s.CriticalCallsLeftOut += k.critCallsAt[b]
		s.CriticalStretchesLeftOut += k.critStretchesAt[b]
	}
	s.CallsDrawn -= s.CriticalCallsLeftOut
	s.StretchesDrawn -= s.CriticalStretchesLeftOut
	s.Segments = k.critCalls + k.critStretches
	s.SegmentsDrawn = s.CallsDrawn + s.StretchesDrawn // so far: the critical ones
	switch {
	case w.minCrit == numBuckets:
		s.MinCriticalNs = math.MaxInt64
	case w.minCrit > 0:
		s.MinCriticalNs = bucketLow(w.minCrit)
	}
	for b := range numBuckets {
		s.Calls += k.calls[b]
		s.Stretches += k.stretches[b]
		if b >= w.minBucket {
			s.CallsDrawn += k.calls[b]
			s.StretchesDrawn += k.stretches[b]
		}
	}
	switch {
	case w.minBucket == numBuckets:
		s.MinNs = math.MaxInt64
	case w.minBucket > 0:
		s.MinNs = bucketLow(w.minBucket)
	}
	return nil
}

// countParts counts this part's events (walk), its ranks cut into as
// many groups of about equal calls as there are processors, counted at
// once, into k.
func (w *writer) countParts(k *counts) {
	p := w.p
	g := max(1, min(runtime.GOMAXPROCS(0), p.RankHi-p.RankLo))
	cuts := []int{p.RankLo}
	calls := int64(p.CallHi - p.CallLo)
	for r := p.RankLo + 1; r < p.RankHi && len(cuts) < g; r++ {
		if int64(p.RankStart[r]-p.CallLo)*int64(g) >= calls*int64(len(cuts)) {
			cuts = append(cuts, r)
		}
	}
	cuts = append(cuts, p.RankHi)
	ks := make([]counts, len(cuts)-1)
	par.Do(len(ks), func(i int) { w.walk(&enc{counting: true}, &ks[i], cuts[i], cuts[i+1], nil) })
	for i := range ks {
		k.add(&ks[i])
	}
}

func (k *counts) add(o *counts) {
	as, os := k.arrays(), o.arrays()
	for i := range as {
		for b := range numBuckets {
			as[i][b] += os[i][b]
		}
	}
	k.fixed += o.fixed
	k.track += o.track
	k.critCalls += o.critCalls
	k.critStretches += o.critStretches
}
