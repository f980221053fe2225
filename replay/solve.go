package replay

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// solve runs the solves on rank 0, workers at once.
func (pl *plan) solve(w *whole, siteBits []bits, workers int) (*Result, error) {
	g := pl.g
	res := &Result{}

	// The POP window and the useful computation outside it.
	notUseful := newBits(int(w.calls))
	fixed := newBits(int(w.calls)) // notUseful and the MPI_Finalize calls
	from, to := int64(1<<62), int64(-1<<62)
	for _, ri := range pl.infos {
		if ri.Empty {
			continue
		}
		from, to = min(from, ri.From), max(to, ri.To)
		for c := g.RankStart[ri.Rank]; c <= ri.Init; c++ {
			notUseful.set(c)
			fixed.set(c)
		}
		for c := ri.Fin + 1; c < g.RankStart[ri.Rank+1]; c++ {
			notUseful.set(c)
			fixed.set(c)
		}
		if ri.Finalized {
			fixed.set(ri.Fin)
		}
	}
	if from > to {
		from, to = g.T0, g.T0
	}
	ideal := usefulOnly(notUseful)
	var idealNs int64
	jobs := []func(*solver){
		func(s *solver) { idealNs, _ = s.solve(ideal) },
	}
	if res.BaselineNs = pl.baselineNs; res.BaselineNs < 0 {
		// No exact path given: the run as it was is one more solve.
		jobs = append(jobs, func(s *solver) { res.BaselineNs, _ = s.solve(identity()) })
	}
	if pl.phases > 1 {
		jobs = append(jobs, func(s *solver) { res.POP.Phases = pl.solvePhases(s, ideal) })
	}
	var windowNs int64
	if pl.window != nil {
		jobs = append(jobs, func(s *solver) { windowNs = s.solveWindow(ideal, pl.window) })
	}
	res.WhatIf = make([]WhatIf, len(pl.scenarios))
	for i, s := range pl.scenarios {
		r := identity()
		switch s.Kind {
		case Balance, RankScale:
			r.rankLo, r.rankHi, r.rankMul = 2*g.RankStart[s.Rank], 2*g.RankStart[s.Rank+1], s.Factor
			if s.Kind == Balance {
				// Only its useful computation: that is what the mean is of.
				r.notUseful = notUseful
			}
		case Callsite:
			r.sites, r.siteMul = siteBits[pl.setOf[i]], s.Factor
		case Transfers:
			for _, k := range transferKinds {
				r.mul[k] = s.Factor
			}
			r.fixed = fixed // MPI_Init and MPI_Finalize stay
		}
		wi := &res.WhatIf[i]
		*wi = WhatIf{Scenario: s.Text, Description: s.describe(), Default: pl.defaults[i]}
		if s.Kind == Callsite && pl.defaults[i] {
			wi.Fix, wi.OnPathNs = true, pl.fixes[i]
		}
		jobs = append(jobs, func(s *solver) {
			var end int32
			wi.RuntimeNs, end = s.solve(r)
			wi.Ranks, wi.Ops = s.profile(end)
		})
	}
	// As many solves at once as there are workers and the scratch budget
	// holds.
	w.parallel(max(1, min(workers, maxScratch/(scratchPerVertex*w.n))), jobs)
	res.POP.Factors = factors(pl.useful, from-g.T0, to-g.T0, idealNs)
	if wr := pl.window; wr != nil {
		useful := make([]int64, g.Ranks)
		for _, ri := range pl.infos {
			if ri.Win != nil {
				useful[ri.Rank] = ri.Win.Useful
			}
		}
		wFrom, wTo := max(wr.from, from), min(wr.to, to)
		if wFrom > wTo {
			wFrom, wTo = wr.from, wr.from // the window holds none of the POP window: nothing to measure
		}
		f := factors(useful, wFrom-g.T0, wTo-g.T0, windowNs)
		res.POP.Window = &f
	}
	for i := range res.WhatIf {
		res.WhatIf[i].GainNs = res.BaselineNs - res.WhatIf[i].RuntimeNs
	}
	return res, nil
}

// maxScratch bounds the scratch of the solves run at once
// (scratchPerVertex bytes per vertex each): big graphs are solved one rule
// at a time.
const (
	maxScratch       = 4 << 30
	scratchPerVertex = 8
)

// solvePhases is the POP factors of each phase.
func (pl *plan) solvePhases(s *solver, ideal *rule) []Phase {
	g, w := pl.g, s.whole
	callPhase := make([]int32, g.NumCalls()) // of S(c); E(c)'s is one more if c is a mark
	marks := newBits(g.NumCalls())
	levels := make([]*int32, pl.phases)
	from := make([]int64, pl.phases)
	to := make([]int64, pl.phases)
	for k := range from {
		from[k], to[k] = 1<<62, -1<<62
	}
	useful := make([][]int64, pl.phases)
	for k := range useful {
		useful[k] = make([]int64, g.Ranks)
	}
	for _, ri := range pl.infos {
		if ri.Empty {
			continue
		}
		ph, next := int32(0), 0
		for c := g.RankStart[ri.Rank]; c < g.RankStart[ri.Rank+1]; c++ {
			callPhase[c] = ph
			if next < len(ri.Marks) && ri.Marks[next].Call == c {
				marks.set(c)
				next++
				ph++
			}
		}
		for k := range ri.Useful {
			useful[k][ri.Rank] = ri.Useful[k]
			from[k], to[k] = min(from[k], ri.PhaseFrom[k]), max(to[k], ri.PhaseTo[k])
			if k > 0 && levels[k] == nil {
				l := ri.Marks[k-1].Level
				levels[k] = &l
			}
		}
	}
	phase := make([]int32, w.n)
	for i, v := range w.order {
		if v < 2*w.calls {
			c := v >> 1
			phase[i] = callPhase[c]
			if v&1 == 1 && marks.get(c) {
				phase[i]++
			}
		}
	}
	longest := s.solvePhases(ideal, phase, pl.phases)
	out := make([]Phase, pl.phases)
	for k := range out {
		if from[k] > to[k] {
			from[k], to[k] = g.T0, g.T0
		}
		out[k] = Phase{Index: k, Level: levels[k], Factors: factors(useful[k], from[k]-g.T0, to[k]-g.T0, longest[k])}
	}
	return out
}

// profile is where the longest path the last solve found, ending at
// position end, runs: the top ranks and operations by time.
func (s *solver) profile(end int32) ([]RankNs, []OpNs) {
	w := s.whole
	byRank := make([]int64, w.ranks)
	var byOp [258]int64 // by operation; 256 computation, 257 launch
	rank := 0
	s.walk(end, func(v int32, k graph.EdgeKind, ns int64) {
		if v >= 2*w.calls || ns == 0 {
			return // a hub: its edges in weigh nothing
		}
		c := v >> 1
		if c < w.rankStart[rank] || c >= w.rankStart[rank+1] {
			rank = w.rankOf(c)
		}
		byRank[rank] += ns
		switch k {
		case graph.EdgeProgram:
			byOp[256] += ns
		case graph.EdgeLaunch:
			byOp[257] += ns
		default:
			byOp[w.op[c]] += ns
		}
	})
	var ranks []RankNs
	for r, ns := range byRank {
		if ns > 0 {
			ranks = append(ranks, RankNs{r, ns})
		}
	}
	slices.SortFunc(ranks, func(a, b RankNs) int { return cmp.Or(cmp.Compare(b.Ns, a.Ns), cmp.Compare(a.Rank, b.Rank)) })
	var ops []OpNs
	for o, ns := range byOp {
		if ns == 0 {
			continue
		}
		name := "computation"
		switch {
		case o == 257:
			name = "launch"
		case o < 256:
			name = trace.Op(o).String()
		}
		ops = append(ops, OpNs{name, ns})
	}
	slices.SortFunc(ops, func(a, b OpNs) int { return cmp.Or(cmp.Compare(b.Ns, a.Ns), strings.Compare(a.Op, b.Op)) })
	return ranks[:min(len(ranks), 3)], ops[:min(len(ops), 3)]
}
