package replay

import (
	"fmt"
	"slices"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// jobs are what every rank solves, in the same order: the scenarios the
// plan holds, each under its rule, whose per-call parts read the owned
// calls' attributes (cattr).
type jobs struct {
	p     *graph.PAG
	w     *sweeper
	infos []rankInfo // the part's ranks'
	attrs []cattr    // by owned call (c - CallLo)
}

// newJobs takes what the rules need of the part's calls (their
// operations, the POP window, the call-site sets, the --from/--to window
// [from, to] in global ns if win): the solves (run) then need nothing
// more of them. The sweeper is set before run.
func newJobs(p *graph.PAG, infos []rankInfo, sets [][]site, win bool, from, to int64) (*jobs, error) {
	if len(sets) > maxSiteSets {
		return nil, fmt.Errorf("--what-if: %d call-site scenarios, at most %d at once", len(sets), maxSiteSets)
	}
	n := int(p.CallHi - p.CallLo)
	j := &jobs{p: p, infos: infos, attrs: make([]cattr, n)}
	for l := range j.attrs {
		j.attrs[l].Op = p.Op[l]
		if win {
			if x := p.Start[l]; x >= from && x <= to {
				j.attrs[l].Flags |= attrStartIn
			}
			if x := p.End[l]; x >= from && x <= to {
				j.attrs[l].Flags |= attrEndIn
			}
		}
	}
	for _, ri := range infos {
		if ri.Empty {
			continue
		}
		for c := p.RankStart[ri.Rank]; c <= ri.Init; c++ {
			j.attrs[c-p.CallLo].Flags |= attrOutside | attrFixed
		}
		for c := ri.Fin + 1; c < p.RankStart[ri.Rank+1]; c++ {
			j.attrs[c-p.CallLo].Flags |= attrOutside | attrFixed
		}
		if ri.Finalized {
			j.attrs[ri.Fin-p.CallLo].Flags |= attrFixed
		}
	}
	for i, set := range sets {
		at := markSites(p, set)
		for l := range j.attrs {
			if at.get(int32(l)) {
				j.attrs[l].Sites |= 1 << i
			}
		}
	}
	return j, nil
}

// ideal is the rule of the POP ideal run.
func (j *jobs) ideal() *rule { return usefulOnly() }

// ruleOf is the rule of scenario s.
func (j *jobs) ruleOf(s *planned) *rule {
	p := j.p
	r := identity()
	switch s.Kind {
	case Balance, RankScale:
		r.rankLo, r.rankHi, r.rankMul = 2*p.RankStart[s.Rank], 2*p.RankStart[s.Rank+1], s.Factor
		if s.Kind == Balance {
			// Only its useful computation: that is what the mean is of.
			r.outsideRule = true
		}
	case Callsite:
		r.siteSet, r.siteMul = 1<<s.Set, s.Factor
	case Transfers:
		for _, k := range transferKinds {
			r.mul[k] = s.Factor
		}
		r.fixedRule = true // MPI_Init and MPI_Finalize stay
	case MPITime:
		r.mul[graph.EdgeCall] = s.Factor
		r.fixedRule = true
	}
	return r
}

// solved is what every rank learns of the solves; rank 0 makes the
// Result of it.
type solved struct {
	idealNs, baselineNs, windowNs int64
	phases                        []int64 // by phase: the ideal run's longest path inside it
	whatIf                        []solvedWhatIf
}

type solvedWhatIf struct {
	runtimeNs int64
	ranks     []RankNs
	ops       []OpNs
}

// run solves the plan: the ideal run, the baseline if no exact path was
// given, the phases', the window's and every scenario's.
func (j *jobs) run(pl *plan, phases int, wr *windowRun) (*solved, error) {
	w := j.w
	out := &solved{baselineNs: pl.baselineNs}
	var err error
	ideal := j.ideal()
	if out.idealNs, _, _, err = w.solve(ideal); err != nil {
		return nil, err
	}
	graph.Timings().Mark(w.c.Rank(), "replay-ideal")
	if out.baselineNs < 0 {
		// No exact path given: the run as it was is one more solve.
		if out.baselineNs, _, _, err = w.solve(identity()); err != nil {
			return nil, err
		}
	}
	if phases > 1 {
		if out.phases, err = j.solvePhases(ideal, phases); err != nil {
			return nil, err
		}
	}
	if wr != nil {
		if out.windowNs, err = w.solveWindow(ideal, wr); err != nil {
			return nil, err
		}
	}
	// The scenarios' paths are profiled a batch at once (profiles), the
	// distances of all but a batch's last solve copied out of the
	// scratch: as many as fit in profileBudget.
	batch := max(1, profileBudget/(8*(int(w.n)+w.slots)))
	for lo := 0; lo < len(pl.scenarios); lo += batch {
		hi := min(len(pl.scenarios), lo+batch)
		paths := make([]solvedPath, 0, hi-lo)
		var lengths []int64
		for i := lo; i < hi; i++ {
			r := j.ruleOf(&pl.scenarios[i])
			length, end, endPos, err := w.solve(r)
			if err != nil {
				return nil, err
			}
			vals := w.vals[:int(w.n)+w.slots]
			if i < hi-1 {
				vals = slices.Clone(vals)
			}
			paths = append(paths, solvedPath{r, end, endPos, vals})
			lengths = append(lengths, length)
			graph.Timings().Mark(w.c.Rank(), "replay-solve")
		}
		profs, err := w.profiles(paths)
		if err != nil {
			return nil, err
		}
		graph.Timings().Mark(w.c.Rank(), "replay-walk")
		for k, pr := range profs {
			out.whatIf = append(out.whatIf, solvedWhatIf{lengths[k], pr.ranks, pr.ops})
		}
	}
	return out, nil
}

// solvePhases is the POP ideal run of each phase: the longest path of
// useful computation that stays within one phase (an edge between
// vertices of different phases starts the path afresh), by phase. A
// call's S is in the phase of the call (the phase a rank's MPI_Pcontrol
// calls open), its E too but for a mark's, which opens the next; a hub
// takes the phase of its first member, the start vertex none. The same
// on every rank.
func (j *jobs) solvePhases(r *rule, phases int) ([]int64, error) {
	w := j.w
	p := j.p
	callPhase := make([]int32, p.CallHi-p.CallLo) // of S(c); E(c)'s is one more if c is a mark
	marks := newBits(len(callPhase))
	for _, ri := range j.infos {
		if ri.Empty {
			continue
		}
		ph, next := int32(0), 0
		for c := p.RankStart[ri.Rank]; c < p.RankStart[ri.Rank+1]; c++ {
			callPhase[c-p.CallLo] = ph
			if next < len(ri.Marks) && ri.Marks[next].Call == c {
				marks.set(c - p.CallLo)
				next++
				ph++
			}
		}
	}
	byVertex, err := perVertex(w, func(l int32) int64 {
		if l >= 2*w.ncalls {
			return -1
		}
		c := l >> 1
		ph := int64(callPhase[c])
		if l&1 == 1 && marks.get(c) {
			ph++
		}
		return ph
	})
	if err != nil {
		return nil, err
	}
	phase, exitPhase, err := w.attribute(func(pos int32) int64 { return byVertex[w.rows.Order[pos]] }, -1)
	if err != nil {
		return nil, err
	}
	vals, err := w.restartSweep(r, func(k, l, e, i int32) bool {
		if i < 0 {
			return exitPhase[k-1] == phase[l]
		}
		return phase[i] == phase[l]
	}, func(int32) int64 { return 0 })
	if err != nil {
		return nil, err
	}
	off, err := w.compose(vals)
	if err != nil {
		return nil, err
	}
	longest := make([]int64, phases)
	w.eachFrame(func(k, l int32) {
		if pv := phase[l]; pv >= 0 && int(pv) < phases {
			longest[pv] = max(longest[pv], join(off[k], vals[2*l], vals[2*l+1]))
		}
	})
	return longest, w.c.Allreduce(longest, mpix.Max)
}

// result makes rank 0's Result of the solves.
func (pl *plan) result(out *solved) *Result {
	g := pl.g
	res := &Result{BaselineNs: out.baselineNs}
	from, to := int64(1<<62), int64(-1<<62)
	for _, ri := range pl.infos {
		if !ri.Empty {
			from, to = min(from, ri.From), max(to, ri.To)
		}
	}
	if from > to {
		from, to = g.T0, g.T0
	}
	res.POP.Factors = factors(pl.useful, pl.units(wholeRun), from-g.T0, to-g.T0, out.idealNs)
	if pl.phases > 1 {
		res.POP.Phases = pl.phaseFactors(out.phases)
	}
	if pl.window != nil {
		useful := make([]int64, g.Ranks)
		for _, ri := range pl.infos {
			useful[ri.Rank] = ri.WinUseful
		}
		wFrom, wTo := max(pl.window.From, from), min(pl.window.To, to)
		if wFrom > wTo {
			wFrom, wTo = pl.window.From, pl.window.From // the window holds none of the POP window: nothing to measure
		}
		f := factors(useful, pl.units(inWindow), wFrom-g.T0, wTo-g.T0, out.windowNs)
		res.POP.Window = &f
	}
	res.WhatIf = make([]WhatIf, len(pl.scenarios))
	for i, s := range pl.scenarios {
		wi := &res.WhatIf[i]
		*wi = WhatIf{Scenario: s.Text, Description: s.describe(), Default: s.Default}
		if s.Kind == Callsite && s.Default {
			wi.Fix, wi.OnPathNs = true, s.OnPathNs
		}
		x := out.whatIf[i]
		wi.RuntimeNs, wi.Ranks, wi.Ops = x.runtimeNs, x.ranks, x.ops
		wi.GainNs = res.BaselineNs - wi.RuntimeNs
	}
	return res
}

// phaseFactors is the POP factors of each phase, from each phase's ideal
// run.
func (pl *plan) phaseFactors(longest []int64) []Phase {
	g := pl.g
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
		for k := range ri.Useful {
			useful[k][ri.Rank] = ri.Useful[k]
			from[k], to[k] = min(from[k], ri.PhaseFrom[k]), max(to[k], ri.PhaseTo[k])
			if k > 0 && levels[k] == nil {
				l := ri.Marks[k-1].Level
				levels[k] = &l
			}
		}
	}
	out := make([]Phase, pl.phases)
	for k := range out {
		if from[k] > to[k] {
			from[k], to[k] = g.T0, g.T0
		}
		out[k] = Phase{Index: k, Level: levels[k], Factors: factors(useful[k], pl.units(k), from[k]-g.T0, to[k]-g.T0, longest[k])}
	}
	return out
}

// units is the run's units of POP work in phase ph (rankInfo.units).
func (pl *plan) units(ph int) []int64 {
	var out []int64
	for i := range pl.infos {
		out = pl.infos[i].units(out, ph)
	}
	return out
}

var _ = graph.EdgeProgram
