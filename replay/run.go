// Package replay re-solves the run's longest path with changed weights,
// which is exact under the graph's model: every dependency the run had
// stays, and each vertex happens as soon as its last cause allows. It
// gives the POP efficiency factors (the run replayed on an ideal network:
// only useful computation weighs) for the whole run and for the phases
// MPI_Pcontrol marks, and answers what-if questions: the run time if a
// rank's computation were balanced, if the computation before a call
// site took half the time, if transfers were free.
//
// The solves run on rank 0 over the whole graph, gathered once (in place
// with one analyzer rank, or taken from dag's search), in a topological
// order found once (starting from dag's): each is one pass over the
// edges. The parts contribute what only they know: their
// ranks' useful computation, phases and call sites.
package replay

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// Options are what Run is asked. Everything but Scenarios and NoDefaults is
// read on rank 0 only.
type Options struct {
	Scenarios  []Scenario // the user's, checked by Parse
	NoDefaults bool       // leave out the default scenarios
	// Path is the run's exact critical path and PathCalls its calls:
	// the default scenarios halve its longest stretches of computation.
	Path      cpath.Path
	PathCalls graph.CallTable
	// Name is how the report names a call site of a rank (callsite
	// scenarios match it), Function the function it is in (nil or "":
	// unknown).
	Name     func(rank int, pc uint64) string
	Function func(rank int, pc uint64) string
	// Hex is the hexadecimal offset form of a call site ("0x4011d6").
	Hex func(rank int, pc uint64) string
	// Window, if set, is a stretch of the run whose POP factors are
	// wanted too (every rank passes the same).
	Window *graph.Window
	// Whole, on rank 0, is the whole graph if the path search gathered it
	// (cpath.DistResult.Whole): the replay takes it and the order the
	// search found rather than gather and search again.
	Whole *cpath.Whole
	// Release: nothing after the replay reads more of the PAG than its
	// Summary, so the replay lets go of the rest (PAG.Release) once it
	// has its own copy of the graph. Every rank passes the same.
	Release bool
}

// Fixes is how many of the critical path's longest stretches of
// computation (by call site) the default scenarios halve.
const Fixes = 3

// WhatIf is the answer to one scenario.
type WhatIf struct {
	Scenario    string
	Description string
	Default     bool  // one of the default set
	Fix         bool  // a default halving of a stretch of the critical path
	OnPathNs    int64 // Fix: the stretches' time on the critical path
	RuntimeNs   int64 // predicted: the longest path under the scenario's weights
	GainNs      int64 // the run as it was minus RuntimeNs
	// Where the new critical path runs: its time by rank and by
	// operation ("computation", "launch", an MPI call), the top ones.
	Ranks []RankNs
	Ops   []OpNs
}

// RankNs is a rank's time on a path.
type RankNs struct {
	Rank int
	Ns   int64
}

// OpNs is an operation's time on a path.
type OpNs struct {
	Op string
	Ns int64
}

// Result is the replays' answers, on rank 0.
type Result struct {
	BaselineNs int64 // the longest path as the run was
	POP        POP
	WhatIf     []WhatIf
}

// Mark is an MPI_Pcontrol call: a phase boundary.
type Mark struct {
	Call       int32
	Level      int32
	Start, End int64
}

// rankInfo is what a part knows of one of its ranks.
type rankInfo struct {
	Rank int
	// Useful program edges run into S(c) for Init < c <= Fin (global
	// call ids): after the end of MPI_Init, up to the start of
	// MPI_Finalize.
	Init, Fin int32
	From, To  int64 // the window on this rank, global ns
	Empty     bool  // no calls
	Finalized bool  // Fin is its MPI_Finalize
	Marks     []Mark
	Useful    []int64 // by phase
	PhaseFrom []int64
	PhaseTo   []int64
	Sites     []uint64    // its calls' distinct call sites
	Win       *windowInfo // with Options.Window
}

// share is a part's contribution, gathered on rank 0.
type share struct {
	Ranks []rankInfo
}

// site is a call site of a rank.
type site struct {
	Rank int32
	PC   uint64
}

// Run replays the run: every analyzer rank calls it with its part of the
// PAG; rank 0 gets the result (the others nil). Errors (an unknown rank or
// call site) are the same on every rank.
func Run(c mpix.Comm, p *graph.PAG, o Options) (*Result, error) {
	for _, s := range o.Scenarios {
		if (s.Kind == Balance || s.Kind == RankScale) && s.Rank >= p.Ranks {
			return nil, fmt.Errorf("--what-if %s: rank %d is not in the run (ranks 0-%d)", s.Text, s.Rank, p.Ranks-1)
		}
	}
	var from, to int64 // the window, global ns
	if o.Window != nil {
		from, to = p.T0+o.Window.From, p.T0+o.Window.To
	}
	mine := share{Ranks: rankInfos(p, o.Window != nil, from, to)}
	shares, err := mpix.GatherGob(c, mine)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	var infos []rankInfo
	var plan *plan
	if c.Rank() == 0 {
		for _, s := range shares {
			infos = append(infos, s.Ranks...)
		}
		slices.SortFunc(infos, func(a, b rankInfo) int { return cmp.Compare(a.Rank, b.Rank) })
		plan, err = makePlan(p, infos, &o)
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	// Every part marks its calls at the call sites of the callsite
	// scenarios.
	sets, err := broadcastSets(c, plan)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	siteBits := make([]bits, len(sets))
	par.Do(len(sets), func(i int) { siteBits[i] = markSites(p, sets[i]) })
	for i := range sets {
		if siteBits[i], err = gatherBits(c, p, siteBits[i]); err != nil {
			break
		}
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	if o.Window != nil {
		wr, err := gatherWindow(c, p, from, to)
		if err = mpix.Agree(c, err); err != nil {
			return nil, err
		}
		if plan != nil {
			plan.window = wr
			for _, ri := range plan.infos {
				wr.add(ri.Win)
			}
		}
	}
	graph.Timings().Mark(c.Rank(), "replay-plan")
	w, err := gatherWhole(c, p, o.Whole, o.Release)
	o.Whole = nil
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	if o.Release {
		// The solvers take the edges' pages. On the 16 M-call halo log
		// the release took one process's peak from 2570 MiB to
		// 1730-1760 MiB, that of building the graph.
		runtime.GC()
	}
	graph.Timings().Mark(c.Rank(), "replay-order")
	// Rank 0 solves with every core it has; the other ranks wait without
	// polling, so that they leave it the cores of a node they share.
	var res *Result
	if c.Rank() == 0 {
		res, err = plan.solve(w, siteBits, runtime.GOMAXPROCS(0))
	}
	if ierr := mpix.Idle(c); err == nil {
		err = ierr
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	return res, nil
}

// rankInfos is the part's ranks' windows, phases, useful computation and
// call sites, a rank on each core at a time.
func rankInfos(p *graph.PAG, windowed bool, from, to int64) []rankInfo {
	out := make([]rankInfo, p.RankHi-p.RankLo)
	par.Do(len(out), func(i int) { out[i] = rankInfoOf(p, p.RankLo+i, windowed, from, to) })
	return out
}

// rankInfoOf is rankInfos' of rank r.
func rankInfoOf(p *graph.PAG, r int, windowed bool, from, to int64) rankInfo {
	lo, hi := p.RankStart[r], p.RankStart[r+1]
	ri := rankInfo{Rank: r, Init: lo - 1, Fin: hi - 1, Empty: lo == hi}
	if windowed {
		ri.Win = &windowInfo{}
	}
	if ri.Empty {
		ri.Useful = []int64{0}
		ri.PhaseFrom, ri.PhaseTo = []int64{0}, []int64{0}
		return ri
	}
	l0 := lo - p.CallLo
	ri.From, ri.To = p.Start[l0], p.End[hi-1-p.CallLo]
	known := map[uint64]bool{}
	var seen [4096]uint64 // call sites seen, direct-mapped: a run has few
	for c := lo; c < hi; c++ {
		l := c - p.CallLo
		switch p.Op[l] {
		case trace.OpInit, trace.OpInitThread:
			if ri.Init < lo {
				ri.Init, ri.From = c, p.End[l]
			}
		case trace.OpFinalize:
			ri.Fin, ri.To, ri.Finalized = c, p.Start[l], true
		case trace.OpPcontrol:
			ri.Marks = append(ri.Marks, Mark{Call: c, Level: graph.PcontrolLevel(p.Bytes[l]), Start: p.Start[l], End: p.End[l]})
		}
		pc := p.Calls.CallSite(l)
		if h := (pc * 0x9E3779B97F4A7C15) >> 52; seen[h] != pc {
			seen[h] = pc
			known[pc] = true
		}
	}
	for pc := range known {
		ri.Sites = append(ri.Sites, pc)
	}
	slices.Sort(ri.Sites)
	// Only the marks inside the window count.
	ri.Marks = slices.DeleteFunc(ri.Marks, func(m Mark) bool { return m.Call <= ri.Init || m.Call > ri.Fin })
	k := len(ri.Marks)
	ri.Useful = make([]int64, k+1)
	ri.PhaseFrom, ri.PhaseTo = make([]int64, k+1), make([]int64, k+1)
	ri.PhaseFrom[0], ri.PhaseTo[k] = ri.From, ri.To
	for i, m := range ri.Marks {
		ri.PhaseTo[i], ri.PhaseFrom[i+1] = m.Start, m.End
	}
	// The useful computation: the program edges into the calls after
	// MPI_Init up to MPI_Finalize, each in the phase of the call it
	// starts after (and with a window, their parts inside it).
	winLo, winHi := max(from, ri.From), min(to, ri.To)
	for c := ri.Init + 1; c <= ri.Fin; c++ {
		v := 2 * (c - p.CallLo) // S(c)'s row
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if p.InKind[e] != graph.EdgeProgram {
				continue
			}
			if ri.Win != nil {
				if a := p.InSrc[e] >> 1; a >= p.CallLo && a < c {
					ri.Win.clip(a, c, p.End[a-p.CallLo], p.Start[c-p.CallLo], p.InWeight.At(e), from, to, winLo, winHi)
				}
			}
			ph := 0
			if k > 0 {
				a := p.InSrc[e] >> 1
				ph = sort.Search(k, func(i int) bool { return ri.Marks[i].Call > a })
			}
			ri.Useful[ph] += p.InWeight.At(e)
		}
	}
	return ri
}

// plan is what rank 0 decided to solve.
type plan struct {
	g         *graph.PAG
	infos     []rankInfo
	scenarios []Scenario
	defaults  []bool
	fixes     []int64 // by scenario: the stretches' time on the critical path (default callsite ones)
	setOf     []int   // by scenario: its call-site set, -1 for none
	sets      [][]site
	useful    []int64 // by rank, whole window
	phases    int
	// baselineNs is the exact critical path's length, the longest path
	// under the identity rule; -1 when none was given.
	baselineNs int64
	window     *windowRun // with Options.Window
}

// makePlan checks the scenarios against the run, adds the default ones and
// resolves call sites.
func makePlan(g *graph.PAG, infos []rankInfo, o *Options) (*plan, error) {
	pl := &plan{g: g, infos: infos, useful: make([]int64, g.Ranks), baselineNs: -1}
	if len(o.Path.Vertices) > 0 {
		pl.baselineNs = o.Path.Length
	}
	for _, ri := range infos {
		for _, u := range ri.Useful {
			pl.useful[ri.Rank] += u
		}
		pl.phases = max(pl.phases, len(ri.Useful))
	}
	var mean float64
	for _, u := range pl.useful {
		mean += float64(u)
	}
	mean /= float64(max(1, g.Ranks))
	add := func(s Scenario, def bool, onPath int64) {
		pl.scenarios = append(pl.scenarios, s)
		pl.defaults = append(pl.defaults, def)
		pl.fixes = append(pl.fixes, onPath)
	}
	for _, s := range o.Scenarios {
		add(s, false, 0)
	}
	if !o.NoDefaults {
		add(Scenario{Text: "transfers=0", Kind: Transfers}, true, 0)
		if heavy := slices.Index(pl.useful, slices.Max(pl.useful)); pl.useful[heavy] > 0 && float64(pl.useful[heavy]) > mean {
			add(Scenario{Text: fmt.Sprintf("balance:%d", heavy), Kind: Balance, Rank: heavy}, true, 0)
		}
		for _, f := range pathStretches(g, o) {
			add(Scenario{Text: "callsite:" + f.name + "=0.5", Kind: Callsite, Site: f.name, Factor: 0.5}, true, f.ns)
		}
	}
	// The call sites of the run, by name.
	names := map[string][]site{}
	hexes, functions := map[site]string{}, map[site]string{}
	var all []site
	for _, ri := range infos {
		for _, pc := range ri.Sites {
			if pc == 0 {
				continue
			}
			s := site{int32(ri.Rank), pc}
			all = append(all, s)
			n := o.Name(ri.Rank, pc)
			names[n] = append(names[n], s)
			hexes[s] = o.Hex(ri.Rank, pc)
			if o.Function != nil {
				functions[s] = o.Function(ri.Rank, pc)
			}
		}
	}
	for i := range pl.scenarios {
		s := &pl.scenarios[i]
		pl.setOf = append(pl.setOf, -1)
		switch s.Kind {
		case Balance:
			if pl.useful[s.Rank] == 0 {
				return nil, fmt.Errorf("--what-if %s: rank %d has no computation to balance", s.Text, s.Rank)
			}
			s.Factor = mean / float64(pl.useful[s.Rank])
		case Callsite:
			var set []site
			if ss, ok := names[s.Site]; ok {
				set = ss
			} else {
				for _, x := range all {
					if matchSite(s.Site, o.Name(int(x.Rank), x.PC), functions[x], hexes[x]) {
						set = append(set, x)
					}
				}
			}
			if len(set) == 0 {
				return nil, fmt.Errorf("--what-if %s: no call site %q in the run", s.Text, s.Site)
			}
			pl.setOf[i] = len(pl.sets)
			pl.sets = append(pl.sets, set)
		}
	}
	return pl, nil
}

// stretch is the computation on the critical path before the calls at a
// call site (by name, over all ranks).
type stretch struct {
	name string
	ns   int64
}

// pathStretches is the critical path's Fixes longest stretches of
// computation by the call site they end at; g is rank 0's part.
func pathStretches(g *graph.PAG, o *Options) []stretch {
	bySite := map[site]int64{}
	vs := o.Path.Vertices
	rank := 0
	var prev graph.CallInfo // of the call the last vertex belongs to (a path holds S and E of most)
	prevCall := int32(-1)
	for i := 1; i < len(vs); i++ {
		a, ka := g.Vertex(vs[i-1])
		b, kb := g.Vertex(vs[i])
		if ka != graph.VertexEnd || kb != graph.VertexStart {
			continue
		}
		if b < g.RankStart[rank] || b >= g.RankStart[rank+1] {
			rank = g.Rank(b)
		}
		if a < g.RankStart[rank] {
			continue // a transfer from another rank
		}
		if a != prevCall {
			prev = callInfo(g, o, a)
		}
		cb := callInfo(g, o, b)
		if cb.CallSite != 0 {
			bySite[site{int32(rank), cb.CallSite}] += cb.Start - prev.End
		}
		prev, prevCall = cb, b
	}
	by := map[string]int64{}
	for s, ns := range bySite {
		by[o.Name(int(s.Rank), s.PC)] += ns
	}
	var out []stretch
	for n, ns := range by {
		if ns > 0 {
			out = append(out, stretch{n, ns})
		}
	}
	slices.SortFunc(out, func(a, b stretch) int { return cmp.Or(cmp.Compare(b.ns, a.ns), strings.Compare(a.name, b.name)) })
	return out[:min(len(out), Fixes)]
}

// callInfo is call c of the path: from the part's arrays if it owns it
// (one analyzer rank owns all), else from the calls fetched.
func callInfo(p *graph.PAG, o *Options, c int32) graph.CallInfo {
	if c >= p.CallLo && c < p.CallHi {
		return p.CallInfo(c)
	}
	return o.PathCalls.At(c)
}

// broadcastSets sends rank 0's call-site sets to every rank.
func broadcastSets(c mpix.Comm, pl *plan) ([][]site, error) {
	var buf bytes.Buffer
	if c.Rank() == 0 {
		if err := gob.NewEncoder(&buf).Encode(pl.sets); err != nil {
			return nil, err
		}
	}
	all, err := c.Allgatherv(buf.Bytes())
	if err != nil {
		return nil, err
	}
	var sets [][]site
	if err := gob.NewDecoder(bytes.NewReader(all[0])).Decode(&sets); err != nil {
		return nil, fmt.Errorf("replay: call-site sets: %v", err)
	}
	return sets, nil
}

// markSites marks the part's calls at the call sites of set, by owned call.
func markSites(p *graph.PAG, set []site) bits {
	b := newBits(int(p.CallHi - p.CallLo))
	want := map[site]bool{}
	for _, s := range set {
		want[s] = true
	}
	type slot struct {
		pc  uint64
		hit bool
		ok  bool
	}
	for r := p.RankLo; r < p.RankHi; r++ {
		var cache [1024]slot // a run has few call sites: look each up once
		for c := p.RankStart[r]; c < p.RankStart[r+1]; c++ {
			l := c - p.CallLo
			pc := p.Calls.CallSite(l)
			h := &cache[(pc*0x9E3779B97F4A7C15)>>54]
			if !h.ok || h.pc != pc {
				*h = slot{pc, want[site{int32(r), pc}], true}
			}
			if h.hit {
				b.set(l)
			}
		}
	}
	return b
}

// gatherBits gathers the parts' bitsets over their calls into one over the
// run's calls, on rank 0.
func gatherBits(c mpix.Comm, p *graph.PAG, mine bits) (bits, error) {
	if c.Size() == 1 {
		return mine, nil
	}
	got, err := c.Gatherv(mpix.Bytes(mine))
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	all := newBits(p.NumCalls())
	for q, bs := range got {
		xs, err := mpix.FromBytes[uint64](bs)
		if err != nil {
			return nil, err
		}
		lo := int(p.RankStart[p.PartRanks[q]])
		hi := int(p.RankStart[p.PartRanks[q+1]])
		if len(xs) != (hi-lo+63)/64 {
			return nil, fmt.Errorf("replay: rank %d sent %d words for %d calls", q, len(xs), hi-lo)
		}
		all.orAt(xs, lo)
	}
	return all, nil
}

// gatherWhole gathers the whole graph, its edges' kinds and its calls'
// operations on rank 0 and finds its topological order there. The graph
// and the start of the order come from given if rank 0 has it (the path
// search's: nil on the other ranks). With release it lets go of the
// PAG's part (PAG.Release) as soon as it holds what it needs of it.
func gatherWhole(c mpix.Comm, p *graph.PAG, given *cpath.Whole, release bool) (*whole, error) {
	have := int64(0)
	if given != nil {
		have = 1
	}
	have, err := mpix.AllreduceOne(c, have, mpix.Max)
	if err != nil {
		return nil, err
	}
	var g *cpath.Graph
	var first []int32
	if have == 0 {
		me := p.Part
		dg := &cpath.DistGraph{N: p.NumVertices(), Bounds: p.Bounds, Lo: p.Bounds[me], Hi: p.Bounds[me+1],
			InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
		if g, err = cpath.Gather(c, dg); err != nil {
			return nil, err
		}
	} else if given != nil {
		g, first = given.Graph, given.First
	}
	kind, op := p.InKind, p.Op
	var kinds, ops [][]byte
	if c.Size() > 1 {
		if kinds, err = c.Gatherv(mpix.Bytes(p.InKind)); err != nil {
			return nil, err
		}
		if ops, err = c.Gatherv(mpix.Bytes(p.Op)); err != nil {
			return nil, err
		}
	}
	if release {
		// What the renumbering needs is in hand: the rest goes now, so
		// that the copy takes its pages, and the edges once copied.
		p.Release()
		runtime.GC()
	}
	if c.Size() > 1 {
		if c.Rank() != 0 {
			return nil, nil
		}
		if kind, err = mpix.Concat[graph.EdgeKind](kinds); err != nil {
			return nil, err
		}
		if op, err = mpix.Concat[trace.Op](ops); err != nil {
			return nil, err
		}
	}
	return newWhole(g, first, kind, op, p.RankStart, p.Ranks)
}
