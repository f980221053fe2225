// Package replay re-solves the run's longest path with changed weights,
// which is exact under the graph's model: every dependency the run had
// stays, and each vertex happens as soon as its last cause allows. It
// gives the POP efficiency factors (the run replayed on an ideal network:
// only useful computation weighs) for the whole run and for the phases
// MPI_Pcontrol marks, and answers what-if questions: the run time if a
// rank's computation were balanced, if the computation before a call
// site took half the time, if transfers were free.
//
// Every solve is one sweep over the graph as the analyzer's ranks hold
// it, in the topological order the path search found (cpath.Schedule),
// each rank over its own part's rows: no rank gathers the graph. Rank 0
// plans the scenarios from what every rank tells it of its ranks (their
// useful computation, phases and call sites) and makes the Result from
// the answers, which the solves give every rank.
package replay

import (
	"cmp"
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

// Options are what Run is asked. Everything but Scenarios, NoDefaults,
// Window and Schedule is read on rank 0 only.
type Options struct {
	Scenarios  []Scenario // the user's, checked by Parse
	NoDefaults bool       // leave out the default scenarios
	// Path is the run's exact critical path and PathCalls its calls:
	// the default scenarios halve its longest stretches of computation.
	Path      cpath.Path
	PathCalls graph.CallTable
	// Names names the call sites as the report does: callsite scenarios
	// match them.
	Names Names
	// Window, if set, is a stretch of the run whose POP factors are
	// wanted too (every rank passes the same).
	Window *graph.Window
	// Rows are the graph's rows redistributed by frame (cpath.FrameRows,
	// the path search's), or nil: Schedule is then the part's order of the
	// graph (the path search's, or one made for the replay). The same kind
	// on every rank.
	Rows     *cpath.Rows
	Schedule *cpath.Schedule
	// Release: nothing after the replay reads more of the PAG than its
	// Summary, so the replay lets go of the rest (PAG.Release, then
	// PAG.ReleaseEdges) as soon as it has what it needs of it, the edges
	// once it has its copy of them. Every rank passes the same.
	Release bool
}

// Names is how the report names a rank's call sites (report.Symbolizer):
// Callsite the name (callsite scenarios match it), Function the function
// it is in ("": unknown), Hex its hexadecimal offset ("0x4011d6").
type Names interface {
	Callsite(rank int, pc uint64) string
	Function(rank int, pc uint64) string
	Hex(rank int, pc uint64) string
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
	Sites     []uint64 // its calls' distinct call sites
	WinUseful int64    // with Options.Window: its useful computation inside it
	// ThreadUseful is, for a rank of several threads, each thread's
	// useful computation by phase (Useful sums them), and
	// WinThreadUseful each thread's inside the window: POP's units of
	// work are then the threads (nil for a rank of one).
	ThreadUseful    [][]int64
	WinThreadUseful []int64
	win             *windowInfo
}

// units appends the rank's units of POP work in phase ph (wholeRun, or
// inWindow): its threads' useful computation if it has several, else its
// own (POP's hybrid model, whose units are the threads). A thread's
// computation is a chain of the graph, so that none exceeds the ideal
// run; the threads' sum may.
func (ri *rankInfo) units(out []int64, ph int) []int64 {
	if ri.ThreadUseful == nil {
		return append(out, usefulIn(ri.Useful, ri.WinUseful, ph))
	}
	for t, tu := range ri.ThreadUseful {
		out = append(out, usefulIn(tu, ri.WinThreadUseful[t], ph))
	}
	return out
}

// The phases of units besides the phases' own indices.
const (
	wholeRun = -1 // every phase
	inWindow = -2 // the --from/--to window
)

// usefulIn is the useful computation of phase ph (or wholeRun, or
// inWindow: win) of byPhase; 0 for a phase the rank has not.
func usefulIn(byPhase []int64, win int64, ph int) int64 {
	switch {
	case ph == inWindow:
		return win
	case ph == wholeRun:
		var u int64
		for _, x := range byPhase {
			u += x
		}
		return u
	case ph < len(byPhase):
		return byPhase[ph]
	}
	return 0
}

// site is a call site of a rank.
type site struct {
	Rank int32
	_    int32
	PC   uint64
}

// Run replays the run: every analyzer rank calls it with its part of the
// PAG and of the schedule; rank 0 gets the result (the others nil).
// Errors (an unknown rank or call site) are the same on every rank.
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
	mine := rankInfos(p, o.Window != nil, from, to)
	shares, err := mpix.Gather(c, func(e *mpix.Encoder) { putRankInfos(e, mine) },
		func(d *mpix.Decoder) []rankInfo { return readRankInfos(d, p.Ranks) })
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	var pl *plan
	if c.Rank() == 0 {
		var infos []rankInfo
		for _, s := range shares {
			infos = append(infos, s...)
		}
		slices.SortFunc(infos, func(a, b rankInfo) int { return cmp.Compare(a.Rank, b.Rank) })
		if pl, err = makePlan(p, infos, &o); err == nil && o.Window != nil {
			pl.window = &graph.Window{From: from, To: to}
		}
	}
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	told, err := broadcastPlan(c, pl)
	if err != nil {
		return nil, err
	}
	phases := 0
	for _, ri := range mine {
		phases = max(phases, len(ri.Useful))
	}
	x, err := mpix.AllreduceOne(c, int64(phases), mpix.Max)
	if err != nil {
		return nil, err
	}
	graph.Timings().Mark(c.Rank(), "replay-plan")
	// What the solves need of the calls, before they go.
	j, err := newJobs(p, mine, told.sets, o.Window != nil, from, to)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	var wr *windowRun
	if o.Window != nil {
		wr = newWindowRun(from, to, mine)
	}
	if o.Release {
		p.Release()
		runtime.GC()
	}
	w, err := newSweeper(c, p, o.Schedule, o.Rows, o.Release)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	j.w = w
	if err := w.setAttrs(j.attrs); err != nil {
		return nil, err
	}
	graph.Timings().Mark(c.Rank(), "replay-rows")
	out, err := j.run(told, int(x), wr)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	return pl.result(out), nil
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
		ri.win = &windowInfo{}
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
	// The threads, by id: each its useful computation (a rank has few).
	threads := map[uint16]int{}
	for c := ri.Init + 1; c <= ri.Fin; c++ {
		if _, ok := threads[p.Thread[c-p.CallLo]]; !ok {
			threads[p.Thread[c-p.CallLo]] = len(threads)
		}
	}
	if len(threads) > 1 {
		ri.ThreadUseful = make([][]int64, len(threads))
		for t := range ri.ThreadUseful {
			ri.ThreadUseful[t] = make([]int64, k+1)
		}
		ri.WinThreadUseful = make([]int64, len(threads))
	}
	for c := ri.Init + 1; c <= ri.Fin; c++ {
		v := 2 * (c - p.CallLo) // S(c)'s row
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if p.InKind[e] != graph.EdgeProgram {
				continue
			}
			var in int64
			if ri.win != nil {
				if a := p.InSrc[e] >> 1; a >= p.CallLo && a < c {
					in = ri.win.clip(a, c, p.End[a-p.CallLo], p.Start[c-p.CallLo], p.InWeight.At(e), from, to, winLo, winHi)
				}
			}
			ph := 0
			if k > 0 {
				a := p.InSrc[e] >> 1
				ph = sort.Search(k, func(i int) bool { return ri.Marks[i].Call > a })
			}
			ri.Useful[ph] += p.InWeight.At(e)
			if ri.ThreadUseful != nil {
				t := threads[p.Thread[c-p.CallLo]]
				ri.ThreadUseful[t][ph] += p.InWeight.At(e)
				ri.WinThreadUseful[t] += in
			}
		}
	}
	if ri.win != nil {
		ri.WinUseful = ri.win.Useful
	}
	return ri
}

// plan is what rank 0 decided to solve, and what every rank is told of it
// (broadcastPlan): the scenarios and call-site sets, and whether the
// baseline is to be solved.
type plan struct {
	g         *graph.PAG
	infos     []rankInfo // rank 0: every rank's, by rank
	scenarios []planned
	sets      [][]site
	useful    []int64 // rank 0: by rank, whole window
	phases    int
	// baselineNs is the exact critical path's length, the longest path
	// under the identity rule; -1 when none was given.
	baselineNs int64
	window     *graph.Window // rank 0, with Options.Window: its [from, to] in global ns
}

// planned is a scenario as planned: with its factor (Balance's, from the
// ranks' mean), its call-site set (-1 for none), whether it is a default
// one and, for the default fixes, the stretches' time on the critical
// path.
type planned struct {
	Scenario
	Set      int
	Default  bool
	OnPathNs int64
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
		pl.scenarios = append(pl.scenarios, planned{Scenario: s, Set: -1, Default: def, OnPathNs: onPath})
	}
	for _, s := range o.Scenarios {
		add(s, false, 0)
	}
	if !o.NoDefaults {
		add(Scenario{Text: "transfers=0", Kind: Transfers}, true, 0)
		add(Scenario{Text: "mpi=0", Kind: MPITime}, true, 0)
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
			s := site{Rank: int32(ri.Rank), PC: pc}
			all = append(all, s)
			n := o.Names.Callsite(ri.Rank, pc)
			names[n] = append(names[n], s)
			hexes[s] = o.Names.Hex(ri.Rank, pc)
			functions[s] = o.Names.Function(ri.Rank, pc)
		}
	}
	for i := range pl.scenarios {
		s := &pl.scenarios[i]
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
					if matchSite(s.Site, o.Names.Callsite(int(x.Rank), x.PC), functions[x], hexes[x]) {
						set = append(set, x)
					}
				}
			}
			if len(set) == 0 {
				return nil, fmt.Errorf("--what-if %s: no call site %q in the run", s.Text, s.Site)
			}
			s.Set = len(pl.sets)
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
			bySite[site{Rank: int32(rank), PC: cb.CallSite}] += cb.Start - prev.End
		}
		prev, prevCall = cb, b
	}
	by := map[string]int64{}
	for s, ns := range bySite {
		by[o.Names.Callsite(int(s.Rank), s.PC)] += ns
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

// broadcastPlan tells every rank rank 0's plan: the scenarios (kind,
// rank, factor, call-site set), the sets, and whether the baseline is
// known. The other ranks' plans hold only those.
func broadcastPlan(c mpix.Comm, pl *plan) (*plan, error) {
	var scen []wireScenario
	var sizes []int64
	var sites []site
	if c.Rank() == 0 {
		sizes = append(sizes, pl.baselineNs)
		for _, s := range pl.scenarios {
			scen = append(scen, wireScenario{Kind: int32(s.Kind), Rank: int32(s.Rank), Set: int32(s.Set), Factor: s.Factor})
		}
		for _, set := range pl.sets {
			sizes = append(sizes, int64(len(set)))
			sites = append(sites, set...)
		}
	}
	scens, err := c.Allgatherv(mpix.Bytes(scen))
	if err != nil {
		return nil, err
	}
	sizess, err := c.Allgatherv(mpix.Bytes(sizes))
	if err != nil {
		return nil, err
	}
	sitess, err := c.Allgatherv(mpix.Bytes(sites))
	if err != nil {
		return nil, err
	}
	if c.Rank() == 0 {
		return pl, nil
	}
	ws, err1 := mpix.FromBytes[wireScenario](scens[0])
	ns, err2 := mpix.FromBytes[int64](sizess[0])
	ss, err3 := mpix.FromBytes[site](sitess[0])
	if err1 != nil || err2 != nil || err3 != nil || len(ns) == 0 {
		return nil, fmt.Errorf("replay: rank 0 shipped a malformed plan")
	}
	told := &plan{baselineNs: ns[0]}
	for _, s := range ws {
		told.scenarios = append(told.scenarios, planned{Scenario: Scenario{Kind: ScenarioKind(s.Kind), Rank: int(s.Rank), Factor: s.Factor}, Set: int(s.Set)})
	}
	for _, n := range ns[1:] {
		if n < 0 || n > int64(len(ss)) {
			return nil, fmt.Errorf("replay: rank 0 shipped a malformed plan")
		}
		told.sets = append(told.sets, ss[:n:n])
		ss = ss[n:]
	}
	for _, s := range told.scenarios {
		if s.Set >= len(told.sets) || (s.Kind == Callsite) != (s.Set >= 0) {
			return nil, fmt.Errorf("replay: rank 0 shipped a malformed plan")
		}
	}
	return told, nil
}

// wireScenario is a planned scenario as the other ranks are told it.
type wireScenario struct {
	Kind, Rank, Set, _ int32
	Factor             float64
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
				*h = slot{pc, want[site{Rank: int32(r), PC: pc}], true}
			}
			if h.hit {
				b.set(l)
			}
		}
	}
	return b
}
