package replay

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// The window (Options.Window, the report's --from/--to) is a stretch of
// the run whose POP factors are wanted as well as the run's and the
// phases'. Its useful computation is each rank's time outside MPI inside
// both the window and the rank's own MPI_Init to MPI_Finalize; its ideal
// run is the longest path of that computation among the events inside
// the window. A stretch of computation that crosses the window's edge
// counts with its part inside, in both.

// windowInfo is what a part knows of one of its ranks in the window.
type windowInfo struct {
	Useful int64
	// Entries are the stretches of computation into S(Call) inside the
	// window from E of a call before it, exits those from E(Call) inside
	// it to S of a call after it: their parts inside the window.
	Entries, Exits []clipped
	// Span is the part inside of a stretch over the whole window.
	Span int64
}

// clipped is a stretch of computation's part inside the window.
type clipped struct {
	Call int32
	Ns   int64
}

// windowBits marks which of the part's calls start (in) and end (out)
// inside the window [from, to] (global ns).
func windowBits(p *graph.PAG, from, to int64) (starts, ends bits) {
	n := int(p.CallHi - p.CallLo)
	starts, ends = newBits(n), newBits(n)
	for l := int32(0); int(l) < n; l++ {
		if s := p.Start[l]; s >= from && s <= to {
			starts.set(l)
		}
		if e := p.End[l]; e >= from && e <= to {
			ends.set(l)
		}
	}
	return starts, ends
}

// clip adds the program edge of weight wt from E(a) at tE into S(c) at tS
// to the rank's window info: the window [from, to] (global ns), the
// rank's own [lo, hi] within it.
func (wi *windowInfo) clip(a, c int32, tE, tS, wt, from, to, lo, hi int64) {
	in := min(tS, hi) - max(tE, lo)
	if in <= 0 {
		return
	}
	in = min(in, wt)
	wi.Useful += in
	srcIn, dstIn := tE >= from && tE <= to, tS >= from && tS <= to
	switch {
	case !srcIn && dstIn:
		wi.Entries = append(wi.Entries, clipped{c, in})
	case srcIn && !dstIn:
		wi.Exits = append(wi.Exits, clipped{a, in})
	case !srcIn && !dstIn:
		wi.Span = max(wi.Span, in)
	}
}

// windowRun is what rank 0 solves the window with.
type windowRun struct {
	from, to       int64 // global ns
	starts, ends   bits  // by call: S, E inside the window
	entry, exit    bits  // by call: S(c) has an entry, E(c) an exit
	entries, exits map[int32]int64
	span           int64
}

// solveWindow is the ideal run inside the window: the longest path under
// rule r (the POP ideal) over the vertices inside it, starting afresh at
// the window's start (with the part inside of the stretches entering it)
// and ending at its end (with the part inside of those leaving it). A hub
// is inside with its first member.
func (s *solver) solveWindow(r *rule, wr *windowRun) int64 {
	w := s.whole
	start, src, weight, kind, order, dist := w.start, w.src, w.weight, w.kind, w.order, s.dist
	modes := r.modes()
	in := make([]bool, w.n) // by position
	longest := wr.span
	for i, v := range order {
		lo, hi := start[i], start[i+1]
		c := int32(-1)
		switch {
		case v < 2*w.calls:
			c = v >> 1
			if v&1 == 0 {
				in[i] = wr.starts.get(c)
			} else {
				in[i] = wr.ends.get(c)
			}
		case lo < hi && kind[lo] == graph.EdgeHubIn:
			in[i] = in[src[lo]]
		}
		if !in[i] {
			dist[i] = 0
			continue
		}
		tab := r.mul
		m, _ := w.row(r, &modes, v, &tab)
		var best int64
		if c >= 0 && v&1 == 0 && wr.entry.get(c) {
			best = wr.entries[c]
		}
		for e := lo; e < hi; e++ {
			if u := src[e]; in[u] {
				if d := dist[u] + scale(weight.At(e), m[kind[e]]); d > best {
					best = d
				}
			}
		}
		dist[i] = best
		longest = max(longest, best)
		if c >= 0 && v&1 == 1 && wr.exit.get(c) {
			longest = max(longest, best+wr.exits[c])
		}
	}
	return longest
}

// gatherWindow marks the calls inside the window [from, to] (global ns),
// gathered on rank 0 (nil on the others).
func gatherWindow(c mpix.Comm, p *graph.PAG, from, to int64) (*windowRun, error) {
	starts, ends := windowBits(p, from, to)
	starts, err := gatherBits(c, p, starts)
	if err != nil {
		return nil, err
	}
	if ends, err = gatherBits(c, p, ends); err != nil || c.Rank() != 0 {
		return nil, err
	}
	n := p.NumCalls()
	return &windowRun{from: from, to: to, starts: starts, ends: ends, entry: newBits(n), exit: newBits(n),
		entries: map[int32]int64{}, exits: map[int32]int64{}}, nil
}

// add takes in a rank's stretches across the window's edges.
func (wr *windowRun) add(wi *windowInfo) {
	if wi == nil {
		return
	}
	for _, x := range wi.Entries {
		wr.entry.set(x.Call)
		wr.entries[x.Call] = max(wr.entries[x.Call], x.Ns)
	}
	for _, x := range wi.Exits {
		wr.exit.set(x.Call)
		wr.exits[x.Call] = max(wr.exits[x.Call], x.Ns)
	}
	wr.span = max(wr.span, wi.Span)
}
